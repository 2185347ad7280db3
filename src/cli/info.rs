//! `perceptron info`: what a data file holds, before training on it.

use crate::text::Quoted;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::args::{DataArgs, PrecisionArg};
use super::stdout::write_stdout;
use crate::data::describe::{self, Description, LabelCount, Mapping};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::text::count;

const EXAMPLES: &str = "\
Examples:
  perceptron info                               describe the bundled digits (3 vs 5) data
  perceptron info data/heart_scale.svm          format, shape, labels, radius
  perceptron info letters.csv --positive A      how `train --positive A` would label it
  perceptron info big.svm.gz --precision f64 --json

Exit status: 0 success; 1 error (the file cannot be read); 2 bad command line;
130 interrupted (Ctrl-C, SIGTERM or SIGHUP).";

/// Describe a data file: format, shape, sparsity, labels and radius.
///
/// Reads the file exactly as `perceptron train` would (same parser, same
/// options) and reports: the format, rows and feature columns, the non-zeros
/// and density, the storage (dense or sparse) and its size in memory, every
/// distinct label value with its row count, how `train` would map the labels
/// to -1/+1 (or why it could not), the radius D = max ||x~|| that the
/// convergence theorem uses, with and without the bias feature 1, and the
/// smallest and largest feature values. Any number of label values is fine
/// here; only `train` needs exactly two classes (or --positive).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct InfoArgs {
    /// Data file (CSV or LIBSVM, optionally .gz, or binary .pbin; `-` reads
    /// standard input). Omit it to describe the bundled UCI digits 3-vs-5
    /// dataset.
    #[arg(value_name = "DATA")]
    pub data: Option<PathBuf>,

    /// Print the description as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    /// Show the labels as `train --positive LABEL` would map them: LABEL is
    /// +1 and every other value -1. An error if LABEL is not in the file.
    #[arg(long, value_name = "LABEL", allow_hyphen_values = true)]
    pub positive: Option<String>,

    /// The precision to read the values in (as `train --precision`); it
    /// decides the bytes in memory and which values are out of range.
    #[arg(long, value_enum, default_value = "f32")]
    pub precision: PrecisionArg,

    #[command(flatten)]
    pub data_args: DataArgs,
}

/// Everything `info` reports.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct InfoReport {
    pub data: String,
    pub format: crate::data::Format,
    /// The line of the CSV header that was skipped, if any.
    pub header_line: Option<u64>,
    /// CSV: the columns left out (`--ignore-columns`), as named.
    pub ignored_columns: Vec<String>,
    /// LIBSVM: how feature indices were counted (`zero` or `one`).
    pub index_base: Option<crate::data::IndexBase>,
    /// LIBSVM: why, in words (`zero-based: index 0 appears on line 3 of
    /// a.svm`).
    pub index_base_why: Option<String>,
    pub rows: usize,
    /// Feature columns (the bias excluded). For LIBSVM, the largest index.
    pub features: usize,
    /// Feature values that are not zero.
    pub nonzeros: usize,
    /// nonzeros / (rows * features).
    pub density: f64,
    /// `dense` or `sparse` (CSR), as the file's format stores it.
    pub storage: String,
    pub precision: Precision,
    /// Bytes the feature storage occupies in memory.
    pub storage_bytes: usize,
    /// Bytes the same features would take in the other layout.
    pub other_layout_bytes: usize,
    /// Every distinct label value, in order of first appearance.
    pub labels: Vec<LabelCount>,
    /// How `train` would map them, or `None` (see `mapping_error`).
    pub mapping: Option<Mapping>,
    /// Why `train` could not map the labels without more options.
    pub mapping_error: Option<String>,
    /// D = max ||x~|| with the bias feature 1 appended, as `train` uses it.
    pub radius_with_bias: f64,
    /// D = max ||x|| over the features alone (`train --no-bias`).
    pub radius_without_bias: f64,
    /// The smallest and largest feature value (implicit zeros of sparse rows
    /// included), as read in `precision`.
    pub min_value: Option<f64>,
    pub max_value: Option<f64>,
    /// What would go wrong in training: squared norms beyond the
    /// precision's range, whose products overflow.
    pub warnings: Vec<String>,
}

pub fn run(args: &InfoArgs) -> Result<i32> {
    let report = match Precision::from(args.precision) {
        Precision::F32 => info_report::<f32>(args)?,
        Precision::F64 => info_report::<f64>(args)?,
    };
    let text = if args.json {
        let mut t = serde_json::to_string(&report).map_err(|e| Error::Train(e.to_string()))?;
        t.push('\n');
        t
    } else {
        render(&report)
    };
    write_stdout(|out| out.write_all(text.as_bytes()))?;
    Ok(exit::SUCCESS)
}

/// Reads the file, warns of options its format ignores, and describes it.
pub fn info_report<F: Real>(args: &InfoArgs) -> Result<InfoReport> {
    let opts = args.data_args.load_options(None);
    let (raw, path) = describe::read::<F>(args.data.as_deref(), &opts)?;
    super::args::warn_csv_options(&opts, raw.format, &path);
    let d = describe::describe(&raw, &path, args.positive.as_deref())?;
    Ok(InfoReport::from(d))
}

impl From<Description> for InfoReport {
    /// Field by field; the label rule's error in the CLI's words.
    fn from(d: Description) -> Self {
        let (mapping, mapping_error) = match d.mapping {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(super::errors::label_rule(&e))),
        };
        InfoReport {
            data: d.data.display().to_string(),
            format: d.format,
            header_line: d.header_line,
            ignored_columns: d.ignored_columns,
            index_base: d.index_base,
            index_base_why: d.index_base_why,
            rows: d.rows,
            features: d.features,
            nonzeros: d.nonzeros,
            density: d.density,
            storage: if d.sparse { "sparse" } else { "dense" }.into(),
            precision: d.precision,
            storage_bytes: d.storage_bytes,
            other_layout_bytes: d.other_layout_bytes,
            labels: d.labels,
            mapping,
            mapping_error,
            radius_with_bias: d.radius_with_bias,
            radius_without_bias: d.radius_without_bias,
            min_value: d.min_value,
            max_value: d.max_value,
            warnings: d.warnings,
        }
    }
}

/// A value exactly as read (its shortest decimal), in scientific notation
/// where fmt_g uses it too, so that 1e30 does not print 31 digits.
fn exact(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e7 || v.abs() < 1e-3) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// One `key  value` line of the description, the keys in a column of ten.
fn line(s: &mut String, k: &str, v: String) {
    s.push_str(&format!("{k:<10}  {v}\n"));
}

/// The human-readable description.
pub fn render(r: &InfoReport) -> String {
    let mut s = String::new();
    line(
        &mut s,
        "data",
        format!(
            "{} ({}{})",
            r.data,
            r.format.name(),
            crate::data::notes::header_note(r.header_line)
                + &crate::data::notes::ignored_note(&r.ignored_columns)
        ),
    );
    crate::data::notes::indices_line(&mut s, r.index_base_why.as_deref());
    line(
        &mut s,
        "shape",
        format!(
            "{} x {}; {} (density {:.2}%)",
            count(r.rows, "row"),
            count(r.features, "feature"),
            count(r.nonzeros, "non-zero"),
            100.0 * r.density
        ),
    );
    line(&mut s, "storage", storage_text(r));
    let values: Vec<String> = r
        .labels
        .iter()
        .map(|l| format!("{} ({})", Quoted(&l.label), count(l.rows, "row")))
        .collect();
    line(
        &mut s,
        "labels",
        format!("{} distinct: {}", r.labels.len(), values.join(", ")),
    );
    classes_line(&mut s, r);
    line(
        &mut s,
        "radius",
        format!(
            "D = max ||x~|| = {} with the bias feature 1 appended; max ||x|| = {} without it",
            crate::text::fmt_g(r.radius_with_bias),
            crate::text::fmt_g(r.radius_without_bias)
        ),
    );
    if let (Some(lo), Some(hi)) = (r.min_value, r.max_value) {
        let (lo, hi) = (exact(lo), exact(hi));
        line(
            &mut s,
            "values",
            if r.storage == "sparse" {
                format!("min {lo}, max {hi} (implicit zeros of sparse rows included)")
            } else {
                format!("min {lo}, max {hi}")
            },
        );
    }
    for w in &r.warnings {
        line(&mut s, "warning", w.clone());
    }
    s
}

/// The `storage` line's text: the layout and its size, beside what the
/// other layout would take.
fn storage_text(r: &InfoReport) -> String {
    let (this, other) = if r.storage == "sparse" {
        ("sparse (CSR)", "dense")
    } else {
        ("dense", "sparse (CSR)")
    };
    format!(
        "{this} {}, {} in memory ({other} would take {})",
        r.precision,
        crate::text::bytes(r.storage_bytes as u64),
        crate::text::bytes(r.other_layout_bytes as u64)
    )
}

/// The `classes` line: how `train` would map the labels, or why it would
/// refuse them (none when neither is known).
fn classes_line(s: &mut String, r: &InfoReport) {
    match (&r.mapping, &r.mapping_error) {
        (Some(m), _) => line(
            s,
            "classes",
            format!(
                "+1 = {} ({}), -1 = {} ({})",
                Quoted(&m.positive_label),
                count(m.positive_rows, "row"),
                match &m.negative_label {
                    Some(n) => Quoted(n).to_string(),
                    None => "the rest".to_owned(),
                },
                count(m.negative_rows, "row")
            ),
        ),
        (None, Some(e)) => line(s, "classes", format!("train would refuse: {e}")),
        (None, None) => {}
    }
}
