//! `perceptron split`: a reproducible train/test split of a data file.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::args::{DataArgs, PrecisionArg};
use crate::data::write::{OutputFormat, write_raw};
use crate::data::{self, Format, RawData};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::text::count;
use crate::train::shuffle;

const EXAMPLES: &str = "\
Examples:
  perceptron split data.csv -o train.csv --test test.csv                 80/20, seed 0
  perceptron split big.svm --test-fraction 0.1 --seed 7 -o tr.svm --test te.svm
  perceptron split data.csv -o train.pbin --test test.pbin               binary outputs
  perceptron split data.csv -o train.csv --test test.csv --stratify      every label 80/20

Rows keep their file order within each part. The output format follows
each output's extension (.csv, .svm, .pbin); values are written exactly. A
CSV part keeps the input's header, label column and delimiter, so a model
trained on the input reads it as it reads the input. `-` writes a part to
standard output (CSV for dense data, LIBSVM for sparse); the summary then
goes to stderr.

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP).";

/// Split a data file into a training part and a held-out test part.
///
/// The test rows are chosen by the same seeded permutation as `train
/// --shuffle` (SplitMix64 + Fisher-Yates), so a split is reproducible
/// everywhere: the first `test-fraction` of the permutation is the test set
/// (with --stratify, the first of each label value's rows in it).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct SplitArgs {
    /// The data file to split (CSV, LIBSVM, .pbin; .gz for text; `-` reads
    /// standard input).
    pub data: PathBuf,

    /// Where to write the training rows.
    #[arg(short, long, value_name = "TRAIN")]
    pub output: PathBuf,

    /// Where to write the test rows.
    #[arg(long, value_name = "TEST")]
    pub test: PathBuf,

    /// The fraction of rows held out for testing (0 < F < 1).
    #[arg(long, default_value_t = 0.2, value_name = "F")]
    pub test_fraction: f64,

    /// Seed of the permutation that picks the test rows.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,

    /// Hold out the same share of every label value: class c gives about
    /// F·(its rows), each class's test rows being its first in the seeded
    /// permutation (the total is still round(F·rows)).
    #[arg(long)]
    pub stratify: bool,

    /// Precision the values are read in (and written to .pbin outputs).
    #[arg(long, value_enum, default_value = "f32")]
    pub precision: PrecisionArg,

    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub data_args: DataArgs,
}

/// One part of a split.
#[derive(Serialize, Debug)]
pub struct SplitPart {
    pub output: String,
    pub format: OutputFormat,
    pub rows: usize,
    pub bytes: u64,
}

/// What `split` did.
#[derive(Serialize, Debug)]
pub struct SplitReport {
    pub data: String,
    pub format: Format,
    pub rows: usize,
    pub features: usize,
    pub seed: u64,
    pub test_fraction: f64,
    pub train: SplitPart,
    pub test: SplitPart,
}

pub fn run(args: &SplitArgs) -> Result<i32> {
    match Precision::from(args.precision) {
        Precision::F32 => run_in::<f32>(args),
        Precision::F64 => run_in::<f64>(args),
    }
}

/// The rows `rows` (in increasing order) of `raw`.
fn subset<F: Real>(raw: &RawData<F>, rows: &[usize]) -> RawData<F> {
    RawData {
        features: raw.features.permuted(rows),
        class_ids: rows.iter().map(|&i| raw.class_ids[i]).collect(),
        table: raw.table.clone(),
        format: raw.format,
        csv: raw.csv.clone(),
    }
}

fn run_in<F: Real>(args: &SplitArgs) -> Result<i32> {
    if !(args.test_fraction > 0.0 && args.test_fraction < 1.0) {
        return Err(Error::Usage(format!(
            "--test-fraction must be between 0 and 1, got {}",
            args.test_fraction
        )));
    }
    for path in [&args.output, &args.test] {
        if !crate::output::is_stdout(path) {
            OutputFormat::from_path(path)?;
        }
    }
    crate::output::check_destination(&args.output)?;
    crate::output::check_destination(&args.test)?;
    crate::output::check_not_an_input(&args.output, &[&args.data])?;
    crate::output::check_not_an_input(&args.test, &[&args.data, &args.output])?;
    if args.output == args.test
        || crate::output::is_stdout(&args.output) && crate::output::is_stdout(&args.test)
    {
        return Err(Error::Usage(
            "-o and --test name the same file; the two halves need two files".into(),
        ));
    }
    let opts = args.data_args.load_options(None);
    let raw = data::load_raw::<F>(&args.data, &opts)?;
    super::args::warn_csv_options(&opts, raw.format, &args.data);
    let sparse = raw.features.is_sparse();
    let (train_format, test_format) = (
        OutputFormat::of_output(&args.output, sparse)?,
        OutputFormat::of_output(&args.test, sparse)?,
    );
    let rows = raw.features.rows();
    let tests = ((rows as f64) * args.test_fraction).round() as usize;
    if tests == 0 || tests == rows {
        return Err(Error::Usage(format!(
            "{} has {}: a test fraction of {} leaves one part empty",
            data::source::name(&args.data).display(),
            crate::text::count(rows, "row"),
            args.test_fraction
        )));
    }
    let is_test = if args.stratify {
        let classes = raw.table.classes().len();
        crate::train::folds::holdout(&raw.class_ids, classes, args.test_fraction, args.seed)
    } else {
        let order = shuffle::permutation(rows, args.seed);
        let mut is_test = vec![false; rows];
        for &i in &order[..tests] {
            is_test[i] = true;
        }
        is_test
    };
    let test_rows: Vec<usize> = (0..rows).filter(|&i| is_test[i]).collect();
    let train_rows: Vec<usize> = (0..rows).filter(|&i| !is_test[i]).collect();
    let train_bytes = write_raw(&args.output, &subset(&raw, &train_rows), train_format)?;
    let test_bytes = write_raw(&args.test, &subset(&raw, &test_rows), test_format)?;
    let report = SplitReport {
        data: data::source::name(&args.data).display().to_string(),
        format: raw.format,
        rows,
        features: raw.features.cols(),
        seed: args.seed,
        test_fraction: args.test_fraction,
        train: SplitPart {
            output: crate::output::shown(&args.output),
            format: train_format,
            rows: train_rows.len(),
            bytes: train_bytes,
        },
        test: SplitPart {
            output: crate::output::shown(&args.test),
            format: test_format,
            rows: test_rows.len(),
            bytes: test_bytes,
        },
    };
    let text = if args.json {
        serde_json::to_string(&report).map_err(|e| Error::Usage(e.to_string()))? + "\n"
    } else {
        render(&report)
    };
    let taken = crate::output::is_stdout(&args.output) || crate::output::is_stdout(&args.test);
    super::stdout::print_summary(&text, taken)?;
    Ok(exit::SUCCESS)
}

/// The human-readable summary.
fn render(r: &SplitReport) -> String {
    let mut s = String::new();
    let mut line = |k: &str, v: String| s.push_str(&format!("{k:<10}  {v}\n"));
    line(
        "data",
        format!(
            "{} ({}, {} x {})",
            r.data,
            r.format.name(),
            count(r.rows, "row"),
            count(r.features, "feature")
        ),
    );
    line(
        "split",
        format!(
            "seed {}, test fraction {}",
            r.seed,
            crate::text::fmt_g(r.test_fraction)
        ),
    );
    for (name, part) in [("train", &r.train), ("test", &r.test)] {
        line(
            name,
            format!(
                "{}: {} ({}, {})",
                part.output,
                count(part.rows, "row"),
                part.format.name(),
                crate::text::bytes(part.bytes)
            ),
        );
    }
    s
}
