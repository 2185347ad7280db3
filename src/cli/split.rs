//! `perceptron split`: a reproducible train/test split of a data file.

use std::path::PathBuf;

use clap::Args;

use super::args::{DataArgs, PrecisionArg};
use crate::data::exact::{self, Exact};
use crate::data::split::{PartTarget, SplitParams, SplitParts, SplitReport};
use crate::data::write::OutputFormat;
use crate::data::{self, RawData};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::train::folds;

const EXAMPLES: &str = "\
Examples:
  perceptron split data.csv -o train.csv --test test.csv                 80/20, seed 0
  perceptron split big.svm --test-fraction 0.1 --seed 7 -o tr.svm --test te.svm
  perceptron split data.csv -o train.pbin --test test.pbin               binary outputs
  perceptron split data.csv -o train.csv --test test.csv --stratify      every label 80/20

Rows keep their file order within each part. The output format follows
each output's extension (.csv, .svm, .pbin). A part in the input's own
text format holds the input's lines as they are (the header first,
comments and blank lines left out); any other part holds every value
exactly (f32 where every value is exactly an f32, else f64) unless a
--precision is asked for. A CSV part keeps the input's header, label
column and delimiter, so a model trained on the input reads it as it
reads the input. `-` writes a part to
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
    #[arg(long, value_enum)]
    pub precision: Option<PrecisionArg>,

    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub data_args: DataArgs,
}

pub fn run(args: &SplitArgs) -> Result<i32> {
    check(args)?;
    let opts = args.data_args.load_options(None);
    match args.precision.map(Precision::from) {
        Some(Precision::F32) => split(args, data::load_raw::<f32>(&args.data, &opts)?),
        Some(Precision::F64) => split(args, data::load_raw::<f64>(&args.data, &opts)?),
        None => match exact::load_exact(&args.data, &opts)? {
            Exact::F32(raw) => split(args, raw),
            Exact::F64(raw, _) => split(args, raw),
        },
    }
}

/// The command line's checks, before anything is read.
fn check(args: &SplitArgs) -> Result<()> {
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
    Ok(())
}

fn split<F: Real>(args: &SplitArgs, raw: RawData<F>) -> Result<i32> {
    let opts = args.data_args.load_options(None);
    super::args::warn_csv_options(&opts, raw.format, &args.data);
    let sparse = raw.features.is_sparse();
    let train = PartTarget {
        path: &args.output,
        format: OutputFormat::of_output(&args.output, sparse)?,
    };
    let test = PartTarget {
        path: &args.test,
        format: OutputFormat::of_output(&args.test, sparse)?,
    };
    let params = SplitParams {
        test_fraction: args.test_fraction,
        seed: args.seed,
        stratify: args.stratify,
    };
    let rows = raw.features.rows();
    let tests = params.test_count(rows, &args.data)?;
    let classes = raw.table.classes().len();
    let is_test = folds::test_rows(rows, &raw.class_ids, classes, &params, tests);
    let parts = SplitParts::new(&raw, &args.data, is_test);
    if train.format == OutputFormat::Libsvm || test.format == OutputFormat::Libsvm {
        note_zero_based(&args.data, &parts);
    }
    let report = SplitReport::new(&parts, &params, parts.write(train, test)?);
    let text = super::stdout::summary(args.json, &report, || report.render())?;
    let taken = crate::output::is_stdout(&args.output) || crate::output::is_stdout(&args.test);
    super::stdout::print_summary(&text, taken)?;
    Ok(exit::SUCCESS)
}

/// Says on stderr that the LIBSVM parts of zero-based input count from 0.
fn note_zero_based<F: Real>(data: &std::path::Path, parts: &SplitParts<F>) {
    if let Some(info) = parts.zero_based() {
        // A half may lack the index 0 that told the whole apart.
        eprintln!(
            "perceptron: note: {} is read {}; its LIBSVM halves count from 0 too: read \
             them with --zero-based (a half may hold no index 0 to tell)",
            data::source::name(data).display(),
            info.describe()
        );
    }
}
