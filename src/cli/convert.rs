//! `perceptron convert`: rewrite a data file in another format, typically the
//! binary `.pbin` format that loads without parsing.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::args::{DataArgs, LayoutArg, PrecisionArg};
use crate::data::binary::Layout;
use crate::data::convert::Conversion;
use crate::data::exact::{self, Exact};
use crate::data::write::OutputFormat;
use crate::data::{self, IndexBase, LibsvmInfo, LoadOptions};
use crate::error::{Result, exit};
use crate::float::{Precision, Real};

const EXAMPLES: &str = "\
Examples:
  perceptron convert big.svm big.pbin               LIBSVM to binary (CSR; every value exact)
  perceptron convert data.csv data.pbin --precision f64
  perceptron convert data.csv.gz data.svm           CSV to LIBSVM text
  perceptron convert big.svm big.pbin --layout dense
  perceptron train big.pbin                         train from the binary copy

The binary format stores the values already parsed, so loading it runs at
disk or page-cache speed; its layout is documented in the source
(src/data/binary/mod.rs) for writing it from other tools.

Exit status: 0 success; 1 error; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP: the partial output is removed).";

/// Convert a data file to the binary .pbin format, CSV or LIBSVM.
///
/// Reads CSV or LIBSVM (optionally .gz) or binary; writes binary (.pbin),
/// CSV (.csv) or LIBSVM (.svm, .libsvm), by OUT's extension; LIBSVM output
/// counts features from 1 (the standard), or from 0 with --zero-based. The
/// label values are kept as they are (no -1/+1 mapping), so any label
/// column converts. CSV input becomes a dense binary file, LIBSVM input a
/// sparse (CSR) one, unless --layout says otherwise. No value changes
/// unless a --precision is asked for: f32 is kept where every value is
/// exactly an f32, else f64. With --precision, values are parsed directly
/// in it, so an f32 binary file holds exactly what f32 training of the text
/// would use. OUT is written atomically: an
/// existing file is replaced only by a complete new one. Ctrl-C or SIGTERM
/// stops at once, removing the partial output (exit status 130).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct ConvertArgs {
    /// The data file to read (`-`: standard input).
    #[arg(value_name = "IN")]
    pub input: PathBuf,

    /// The file to write; the extension picks the format: .pbin (binary),
    /// .csv, or .svm/.libsvm/.svmlight (LIBSVM). `-` writes text to
    /// standard output: CSV for dense data, LIBSVM for sparse (the summary
    /// then goes to stderr). A CSV output of CSV input keeps its header,
    /// label column and delimiter.
    #[arg(value_name = "OUT")]
    pub output: PathBuf,

    /// Precision of the stored values. Without it every value is kept
    /// exactly: f32 where every value is exactly an f32, else f64 (the
    /// summary names the first value that needs it). Given, text values
    /// are parsed directly in it (rounded once); a binary f64 input read as
    /// f32 is rounded to nearest, which is not always the same as parsing
    /// its original text.
    #[arg(long, value_enum)]
    pub precision: Option<PrecisionArg>,

    /// Storage layout: `dense` (every value) or `csr` (only stored entries;
    /// converting dense data drops its exact zeros). Default: the input's
    /// (dense for CSV, CSR for LIBSVM).
    #[arg(long, value_enum)]
    pub layout: Option<LayoutArg>,

    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub data_args: DataArgs,
}

pub fn run(args: &ConvertArgs) -> Result<i32> {
    let to_stdout = crate::output::is_stdout(&args.output);
    if !to_stdout {
        // Checked before the input is read; standard output's format
        // depends on the data's layout.
        OutputFormat::from_path(&args.output)?;
    }
    crate::output::check_destination(&args.output)?;
    crate::output::check_not_an_input(&args.output, &[&args.input])?;
    let t0 = Instant::now();
    let opts = args.data_args.load_options(None);
    let asked = |p: Precision| format!("--precision {p}");
    match args.precision.map(Precision::from) {
        Some(p @ Precision::F32) => write_in(
            args,
            data::load_raw::<f32>(&args.input, &opts)?,
            t0,
            asked(p),
        ),
        Some(p @ Precision::F64) => write_in(
            args,
            data::load_raw::<f64>(&args.input, &opts)?,
            t0,
            asked(p),
        ),
        None => match exact::load_exact(&args.input, &opts)? {
            Exact::F32(raw) => write_in(args, raw, t0, "every value exactly an f32".into()),
            Exact::F64(raw, at) => write_in(args, raw, t0, format!("{at} needs f64")),
        },
    }
}

fn write_in<F: Real>(
    args: &ConvertArgs,
    raw: data::RawData<F>,
    t0: Instant,
    precision_reason: String,
) -> Result<i32> {
    let to_stdout = crate::output::is_stdout(&args.output);
    let opts = LoadOptions {
        // Also how LIBSVM output counts: not ignored for other input.
        index_base: None,
        ..args.data_args.load_options(None)
    };
    super::args::warn_csv_options(&opts, raw.format, &args.input);
    let read_seconds = t0.elapsed().as_secs_f64();
    let layout = args.layout.map(Layout::from);
    let base = args.data_args.libsvm.index_base();
    let plan = Conversion::plan(raw, &args.input, &args.output, layout, base)?;
    if let Some(info) = plan.index_base_change() {
        note_index_base(args, info, plan.index_base);
    }
    let done = plan.write(&args.output, precision_reason, read_seconds)?;
    let text = super::stdout::summary(args.json, &done, || done.render() + "\n")?;
    super::stdout::print_summary(&text, to_stdout)?;
    Ok(exit::SUCCESS)
}

/// Says on stderr that LIBSVM output counts its indices from another base
/// (`base`) than the input was read in (`input`).
fn note_index_base(args: &ConvertArgs, input: &LibsvmInfo, base: IndexBase) {
    eprintln!(
        "perceptron: note: {} is read {}; {} counts features {} (pass --{} to keep the \
         input's)",
        data::source::name(&args.input).display(),
        input.describe(),
        crate::output::shown(&args.output),
        match base {
            IndexBase::One => "from 1, the LIBSVM standard",
            IndexBase::Zero => "from 0",
        },
        input.base.words()
    );
}
