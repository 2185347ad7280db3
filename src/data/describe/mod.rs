//! What a data file holds, before training on it (`perceptron info`): its
//! shape, storage, label values, how training would map them to -1/+1, the
//! radius of the convergence theorem, the range of the values, and whether
//! training in the chosen precision would overflow.
//!
//! The file is read exactly as training reads it (same parser, same
//! options). The [`Description`] is the one record of it that front ends
//! print: as JSON (serde; its fields are the JSON's) or as text
//! (`text.rs`); a front end may say the label rule's refusal in its own
//! words (the CLI names its flags).

use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};

use super::labels::{self, LabelRuleError};
use super::options::{Format, IndexBase, LoadOptions};
use super::raw::{CsvInfo, LibsvmInfo, RawData};
use super::{bundled, csv, source, stats};
use crate::error::{Error, Result};
use crate::float::{Precision, Real};

mod text;

/// One distinct label value.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct LabelCount {
    pub label: String,
    pub rows: u64,
    /// The line where the value first appears.
    pub first_line: u64,
}

/// How training would map the labels to -1/+1.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Mapping {
    pub positive_label: String,
    /// `None` in one-vs-rest (every value other than the positive label is
    /// -1).
    pub negative_label: Option<String>,
    pub positive_rows: u64,
    pub negative_rows: u64,
}

/// Everything known of a data file before training on it: `perceptron
/// info`'s report, its fields and their order the JSON's.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Description {
    /// The file as named in messages (`<stdin>`, or the bundled dataset's
    /// name when none was given).
    #[serde(serialize_with = "as_displayed")]
    pub data: PathBuf,
    pub format: Format,
    /// The line of the CSV header that was skipped, if any.
    pub header_line: Option<u64>,
    /// CSV: the columns left out (ignored columns), as named.
    pub ignored_columns: Vec<String>,
    /// LIBSVM: how feature indices were counted.
    pub index_base: Option<IndexBase>,
    /// LIBSVM: why, in words (`zero-based: index 0 appears on line 3 of
    /// a.svm`).
    pub index_base_why: Option<String>,
    pub rows: usize,
    /// Feature columns (the bias excluded). For LIBSVM, the largest index.
    pub features: usize,
    /// Feature values that are not zero.
    pub nonzeros: usize,
    /// nonzeros / (rows * features); 0 for no cells.
    pub density: f64,
    /// Whether the features are stored sparse (CSR), as the file's format
    /// stores them, rather than dense (JSON: `storage`, `sparse` or
    /// `dense`).
    #[serde(rename = "storage", serialize_with = "storage_name")]
    pub sparse: bool,
    pub precision: Precision,
    /// Bytes the feature storage occupies in memory.
    pub storage_bytes: usize,
    /// Bytes the same features would take in the other layout.
    pub other_layout_bytes: usize,
    /// Every distinct label value, in order of first appearance.
    pub labels: Vec<LabelCount>,
    /// How training would map them: the mapping, or why it could not
    /// without being told the positive label (JSON: the mapping, or null).
    #[serde(serialize_with = "mapping_or_null")]
    pub mapping: std::result::Result<Mapping, LabelRuleError>,
    /// That refusal in words: the library's, which a front end may replace
    /// with its own (the CLI names its flags).
    pub mapping_error: Option<String>,
    /// D = max ||x~|| with the bias feature 1 appended, as training uses it.
    pub radius_with_bias: f64,
    /// D = max ||x|| over the features alone (training without the bias).
    pub radius_without_bias: f64,
    /// The smallest and largest feature value (implicit zeros of sparse rows
    /// included), as read in `precision`, as their shortest decimals.
    pub min_value: Option<f64>,
    pub max_value: Option<f64>,
    /// What would go wrong in training: squared norms beyond the
    /// precision's range, whose products overflow.
    pub warnings: Vec<String>,
}

/// Reads the data to describe: `data`, or when none is given piped standard
/// input, else the bundled digits (3 vs 5) dataset. Returns it with the
/// name messages give it.
pub fn read<F: Real>(data: Option<&Path>, opts: &LoadOptions) -> Result<(RawData<F>, PathBuf)> {
    match data.map(Path::to_path_buf).or_else(source::omitted_data) {
        Some(path) => Ok((
            super::load_raw(&path, opts).map_err(|e| match data {
                None => source::explain_omitted(e),
                Some(_) => e,
            })?,
            source::name(&path).to_path_buf(),
        )),
        None => {
            let path = Path::new(bundled::NAME);
            let raw = csv::parse(bundled::DIGITS_3V5_CSV.as_bytes(), path, opts)?;
            Ok((raw, path.to_path_buf()))
        }
    }
}

/// Describes `raw`, read from `path`; `positive` is the label training
/// would be told is +1 (every other value -1). A `positive` label that is
/// not in the data is an error; any other reason training would refuse
/// the labels is part of the description.
pub fn describe<F: Real>(
    raw: &RawData<F>,
    path: &Path,
    positive: Option<&str>,
) -> Result<Description> {
    let f = &raw.features;
    let (rows, cols) = (f.rows(), f.cols());
    let summary = stats::summary(f);
    let nonzeros = summary.nonzeros;
    let cells = rows as f64 * cols as f64;
    let size = std::mem::size_of::<F>();
    let other_layout_bytes = if f.is_sparse() {
        rows.saturating_mul(cols).saturating_mul(size)
    } else {
        nonzeros * (size + 4) + (rows + 1) * 8
    };
    let mapping = label_mapping(raw, path, positive)?;
    let mm = summary.range;
    let largest_norm_sq = summary.largest_norm_sq;
    let radius_with_bias = stats::radius_from(largest_norm_sq, true);
    Ok(Description {
        data: path.to_path_buf(),
        format: raw.format,
        header_line: raw.csv.as_ref().and_then(|c| c.header_line),
        ignored_columns: raw
            .csv
            .as_ref()
            .map(CsvInfo::ignored_names)
            .unwrap_or_default(),
        index_base: raw.libsvm.as_ref().map(|l| l.base),
        index_base_why: raw.libsvm.as_ref().map(LibsvmInfo::describe),
        rows,
        features: cols,
        nonzeros,
        density: if cells > 0.0 {
            nonzeros as f64 / cells
        } else {
            0.0
        },
        sparse: f.is_sparse(),
        precision: F::PRECISION,
        storage_bytes: f.storage_bytes(),
        other_layout_bytes,
        labels: label_counts(raw),
        mapping_error: mapping.as_ref().err().map(ToString::to_string),
        mapping,
        radius_with_bias,
        radius_without_bias: stats::radius_from(largest_norm_sq, false),
        min_value: mm.map(|(lo, _)| shortest(lo)),
        max_value: mm.map(|(_, hi)| shortest(hi)),
        warnings: overflow_warning::<F>(radius_with_bias)
            .into_iter()
            .collect(),
    })
}

/// A path as messages show it (lossily, where it is not UTF-8).
fn as_displayed<S: Serializer>(path: &Path, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(&path.display())
}

/// The storage's name: `sparse` or `dense`.
fn storage_name<S: Serializer>(sparse: &bool, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(if *sparse { "sparse" } else { "dense" })
}

/// The mapping, or null where training would refuse the labels.
fn mapping_or_null<S: Serializer>(
    mapping: &std::result::Result<Mapping, LabelRuleError>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    mapping.as_ref().ok().serialize(s)
}

/// Every distinct label value with its rows, in order of first appearance.
fn label_counts<F: Real>(raw: &RawData<F>) -> Vec<LabelCount> {
    raw.table
        .classes()
        .iter()
        .map(|c| LabelCount {
            label: c.text.clone(),
            rows: c.count,
            first_line: c.first_line,
        })
        .collect()
}

/// The number as the shortest decimal of its own precision, widened to f64
/// (so an f32 0.7 reports as 0.7, not 0.699999988079071).
fn shortest<F: Real>(v: F) -> f64 {
    v.to_string().parse().unwrap_or_else(|_| v.to_f64())
}

/// How training would map the labels to -1/+1 (with the rows of each
/// side), or why it would refuse them. A `positive` label that is not in
/// the data is an error here too.
fn label_mapping<F: Real>(
    raw: &RawData<F>,
    path: &Path,
    positive: Option<&str>,
) -> Result<std::result::Result<Mapping, LabelRuleError>> {
    let classes = raw.table.classes();
    let rows = raw.features.rows();
    match labels::decide(&raw.table, positive) {
        Ok((map, signs)) => {
            let positive_rows: u64 = classes
                .iter()
                .zip(&signs)
                .filter(|(_, s)| **s > 0)
                .map(|(c, _)| c.count)
                .sum();
            Ok(Ok(Mapping {
                positive_label: map.positive,
                negative_label: map.negative,
                positive_rows,
                negative_rows: rows as u64 - positive_rows,
            }))
        }
        // Asking for a label that is not there is a mistake to report.
        Err(rule @ LabelRuleError::UnknownPositive { .. }) => Err(Error::Labels {
            path: path.to_path_buf(),
            rule,
        }),
        Err(e) => Ok(Err(e)),
    }
}

/// The warning for data whose squared radius is beyond precision F's
/// range: training in F would overflow.
fn overflow_warning<F: Real>(radius_with_bias: f64) -> Option<String> {
    let squared = radius_with_bias * radius_with_bias;
    (squared.is_nan() || squared > F::MAX_VALUE).then(|| {
        format!(
            "the largest squared norm ||x~||^2 is {}, beyond {}'s largest number ({}): \
             training in {} will overflow (w.x reaches about ||x||^2 after one update); \
             rescale the features{}",
            crate::text::fmt_g(squared),
            F::PRECISION,
            crate::text::fmt_g(F::MAX_VALUE),
            F::PRECISION,
            if F::PRECISION == Precision::F32 {
                ", or train with --precision f64"
            } else {
                ""
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_of(text: &str, opts: &LoadOptions) -> RawData<f32> {
        csv::parse(text.as_bytes(), Path::new("t.csv"), opts).unwrap()
    }

    #[test]
    fn counts_labels_and_maps_two_classes() {
        let raw = raw_of("1,0.5,0\n-1,0,2\n1,3,4\n", &LoadOptions::default());
        let d = describe(&raw, Path::new("t.csv"), None).unwrap();
        assert_eq!((d.rows, d.features, d.nonzeros), (3, 2, 4));
        assert_eq!(d.labels.len(), 2);
        let m = d.mapping.unwrap();
        assert_eq!((m.positive_rows, m.negative_rows), (2, 1));
        assert_eq!(d.radius_without_bias, 5.0);
        assert_eq!((d.min_value, d.max_value), (Some(0.0), Some(4.0)));
        assert!(d.warnings.is_empty());
    }

    #[test]
    fn an_unknown_positive_label_is_an_error_other_refusals_are_described() {
        let raw = raw_of("a,1\nb,2\nc,3\n", &LoadOptions::default());
        let p = Path::new("t.csv");
        assert!(describe(&raw, p, Some("z")).is_err());
        assert!(describe(&raw, p, None).unwrap().mapping.is_err());
        let m = describe(&raw, p, Some("b")).unwrap().mapping.unwrap();
        assert_eq!((m.positive_rows, m.negative_rows), (1, 2));
    }

    #[test]
    fn the_json_names_the_storage_and_words_a_refusal() {
        let raw = raw_of("a,1\nb,2\nc,3\n", &LoadOptions::default());
        let d = describe(&raw, Path::new("t.csv"), None).unwrap();
        let json = serde_json::to_string(&d).unwrap();
        assert!(json.starts_with(r#"{"data":"t.csv","format":"csv","header_line":null,"#));
        assert!(json.contains(r#""density":1.0,"storage":"dense","precision":"f32","#));
        assert!(json.contains(r#""mapping":null,"mapping_error":"more than two label values"#));
        let mut body = String::new();
        d.render_body(&mut body);
        assert!(body.starts_with("shape       3 rows x 1 feature;"));
        assert_eq!(d.render(), format!("data        t.csv (CSV)\n{body}"));
        assert!(body.contains("\nclasses     train would refuse: more than two label values"));
    }

    #[test]
    fn squared_norms_beyond_f32_warn() {
        let raw = raw_of("1,1e30\n-1,1\n", &LoadOptions::default());
        let d = describe(&raw, Path::new("t.csv"), None).unwrap();
        assert_eq!(d.warnings.len(), 1);
        assert!(d.warnings[0].contains("--precision f64"));
    }
}
