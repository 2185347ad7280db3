//! `perceptron split`: a reproducible train/test split of a data file.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::args::{DataArgs, PrecisionArg};
use crate::data::IndexBase;
use crate::data::exact::{self, Exact};
use crate::data::write::{OutputFormat, write_raw_based};
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

/// The rows `rows` (in increasing order) of `raw`.
fn subset<F: Real>(raw: &RawData<F>, rows: &[usize]) -> RawData<F> {
    RawData {
        features: raw.features.permuted(rows),
        class_ids: rows.iter().map(|&i| raw.class_ids[i]).collect(),
        table: raw.table.clone(),
        format: raw.format,
        csv: raw.csv.clone(),
        libsvm: raw.libsvm.clone(),
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
    let is_test = pick_test_rows(args, &raw, tests);
    let test_rows: Vec<usize> = (0..rows).filter(|&i| is_test[i]).collect();
    let train_rows: Vec<usize> = (0..rows).filter(|&i| !is_test[i]).collect();
    let parts = Parts {
        args,
        raw: &raw,
        is_test: &is_test,
    };
    if train_format == OutputFormat::Libsvm || test_format == OutputFormat::Libsvm {
        note_zero_based(args, &raw);
    }
    // Both parts or neither: an old test part beside a new training part
    // could share rows.
    let batch = crate::output::Batch::begin();
    let train_bytes = parts.write(&args.output, train_format, &train_rows, false)?;
    let test_bytes = parts.write(&args.test, test_format, &test_rows, true)?;
    batch.commit()?;
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

/// Which rows go to the test part (`tests` of them): each class's share
/// with --stratify, else the first of the seeded permutation.
fn pick_test_rows<F: Real>(args: &SplitArgs, raw: &RawData<F>, tests: usize) -> Vec<bool> {
    let rows = raw.features.rows();
    if args.stratify {
        let classes = raw.table.classes().len();
        crate::train::folds::holdout(&raw.class_ids, classes, args.test_fraction, args.seed)
    } else {
        let order = shuffle::permutation(rows, args.seed);
        let mut is_test = vec![false; rows];
        for &i in &order[..tests] {
            is_test[i] = true;
        }
        is_test
    }
}

/// The data being split and which rows are the test part's, for writing
/// either part.
struct Parts<'a, F> {
    args: &'a SplitArgs,
    raw: &'a RawData<F>,
    is_test: &'a [bool],
}

impl<F: Real> Parts<'_, F> {
    /// Writes the part of `rows` (the test part's when `test`) to `path`:
    /// the input's own lines when in its text format, else the values.
    /// Returns the bytes written.
    fn write(
        &self,
        path: &std::path::Path,
        format: OutputFormat,
        rows: &[usize],
        test: bool,
    ) -> Result<u64> {
        let (args, raw) = (self.args, self.raw);
        let same_text = matches!(
            (raw.format, format),
            (Format::Csv, OutputFormat::Csv) | (Format::Libsvm, OutputFormat::Libsvm)
        );
        if same_text && !data::source::is_stdin(&args.data) {
            let header = raw.csv.as_ref().and_then(|c| c.header_line);
            let copied = copy_lines(
                &args.data,
                header,
                raw.features.rows(),
                self.is_test,
                test,
                path,
            )?;
            if let Some(bytes) = copied {
                return Ok(bytes);
            }
        }
        // Text LIBSVM counts as the input did (the halves are its rows).
        let base = raw.libsvm.as_ref().map_or(IndexBase::One, |l| l.base);
        write_raw_based(path, &subset(raw, rows), format, base)
    }
}

/// Says on stderr that the LIBSVM parts of zero-based input count from 0.
fn note_zero_based<F: Real>(args: &SplitArgs, raw: &RawData<F>) {
    if let Some(info) = raw.libsvm.as_ref().filter(|l| l.base == IndexBase::Zero) {
        // A half may lack the index 0 that told the whole apart.
        eprintln!(
            "perceptron: note: {} is read {}; its LIBSVM halves count from 0 too: read \
             them with --zero-based (a half may hold no index 0 to tell)",
            data::source::name(&args.data).display(),
            info.describe()
        );
    }
}

/// Writes to `out` the data lines of `input` (a CSV or LIBSVM file, plain
/// or gzip) whose row `i` has `is_test[i] == test`, as they are: the CSV
/// header (line `header`, 1-based) first, comments and blank lines left
/// out. `None` when the file's data lines are not the `rows` rows read
/// (then nothing is written, and the caller writes the values).
fn copy_lines(
    input: &std::path::Path,
    header: Option<u64>,
    rows: usize,
    is_test: &[bool],
    test: bool,
    out: &std::path::Path,
) -> Result<Option<u64>> {
    use std::io::BufRead;
    let source = data::source::open(input)?;
    let mut reader: Box<dyn BufRead> = match source.content {
        data::source::Content::Mapped(map) => Box::new(std::io::Cursor::new(map)),
        data::source::Content::Reader(r) => r,
    };
    let name = data::source::name(input).to_path_buf();
    // The data lines, in order: count them first, so that nothing is
    // written unless they are the rows read.
    let mut lines: Vec<u8> = Vec::new();
    let mut kept_header: Vec<u8> = Vec::new();
    let (mut no, mut row) = (0u64, 0usize);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(&name, "cannot read data file", e))?;
        if n == 0 {
            break;
        }
        no += 1;
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        if Some(no) == header {
            kept_header.extend_from_slice(&line);
            continue;
        }
        if crate::data::csv::is_skipped(&String::from_utf8_lossy(&line)) {
            continue;
        }
        if row >= rows {
            return Ok(None);
        }
        if is_test[row] == test {
            lines.extend_from_slice(&line);
        }
        row += 1;
    }
    if row != rows {
        return Ok(None);
    }
    let bytes = (kept_header.len() + lines.len()) as u64;
    crate::output::check_space(out, bytes)?;
    crate::output::write_atomic(out, |w| {
        w.write_all(&kept_header)?;
        w.write_all(&lines)
    })?;
    Ok(Some(bytes))
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
