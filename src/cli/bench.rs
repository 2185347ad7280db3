//! `perceptron bench`: every backend on the same data, checked identical, timed.

use std::path::PathBuf;

use clap::Args;

use super::args::{DataArgs, GpuArgs, PassesArg, PrecisionArg};
use crate::bench;
use crate::data::{self, Dataset};
use crate::engine::backend::Backend;
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::train::TrainParams;

const EXAMPLES: &str = "\
Examples:
  perceptron bench                                   the bundled digits data
  perceptron gen --rows 1000000 --features 256 -o big.pbin
  perceptron bench big.pbin --max-epochs 20          reference, cpu and gpu
  perceptron bench big.pbin --backends cpu,gpu --passes always --json

The reference backend always runs first: it is the baseline every other
model is compared with, bit for bit. Without a GPU adapter the gpu backend
is skipped with a note.

Exit status: 0 success (every model identical); 1 error, or a backend's
model differs from the reference; 2 bad command line; 130 interrupted
(Ctrl-C, SIGTERM or SIGHUP).";

/// Train the same data with each backend, check the models are
/// bit-identical, and report times, throughput and hardware ceilings.
///
/// Measures alongside: the host's memory-read bandwidth (all threads), and
/// for the GPU the device's own buffer-copy bandwidth and one full margin
/// pass as a percentage of it.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct BenchArgs {
    /// Data file (CSV, LIBSVM or .pbin; `-` reads standard input); omit for
    /// the bundled digits data.
    pub data: Option<PathBuf>,

    /// Epochs at most for every backend.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_epochs: usize,

    #[arg(long, value_enum, default_value = "f32")]
    pub precision: PrecisionArg,

    /// Backends to compare with the reference (which always runs).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "cpu,gpu")]
    pub backends: Vec<Which>,

    /// `adaptive` lets the loop walk on the host when that is faster;
    /// `always` measures the engines themselves (their walks where they
    /// have one, GPU or CPU); `windows` measures passes over windows instead
    /// of the walk; `host`, `reference` and `ahead` measure one of the
    /// host's own walks (`ahead`: sparse rows, the other cores summing the
    /// rows ahead).
    #[arg(long, value_enum, default_value = "adaptive")]
    pub passes: PassesArg,

    /// Train without the bias.
    #[arg(long)]
    pub no_bias: bool,

    /// The label to treat as +1 (one-vs-rest).
    #[arg(long, value_name = "LABEL", allow_hyphen_values = true)]
    pub positive: Option<String>,

    /// The GPU adapter and memory of the gpu backend (the backends
    /// themselves are chosen with --backends).
    #[command(flatten)]
    pub gpu: GpuArgs,

    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub data_args: DataArgs,
}

super::args::choice! {
    /// A backend `bench` compares with the reference.
    Which => crate::engine::backend::Backend {
        Reference,
        Cpu,
        Gpu,
    }
}

pub fn run(args: &BenchArgs) -> Result<i32> {
    match Precision::from(args.precision) {
        Precision::F32 => run_in::<f32>(args),
        Precision::F64 => run_in::<f64>(args),
    }
}

fn run_in<F: Real>(args: &BenchArgs) -> Result<i32> {
    let params = TrainParams {
        max_epochs: args.max_epochs,
        bias: !args.no_bias,
        shuffle_seed: None,
        passes: args.passes.into(),
        ..Default::default()
    }
    .check()?;
    let opts = args.data_args.load_options(args.positive.clone());
    // No DATA: piped standard input, else the bundled demo.
    let data: Dataset<F> = match args.data.clone().or_else(data::source::omitted_data) {
        Some(p) => data::load(&p, &opts).map_err(|e| match args.data {
            None => data::source::explain_omitted(e),
            Some(_) => e,
        })?,
        None => data::bundled::digits_3v5(&opts)?,
    };
    super::args::warn_csv_options(&opts, data.format, &data.source);
    let gpu = args.gpu.options(true);
    let mut which: Vec<Backend> = args.backends.iter().map(|&w| w.into()).collect();
    let mut notes = Vec::new();
    if which.contains(&Backend::Gpu) {
        let mut probe = gpu.clone();
        probe.adapter.allow_software = true;
        if let Err(e) = crate::engine::gpu::probe(&probe.adapter) {
            which.retain(|w| *w != Backend::Gpu);
            notes.push(format!("gpu skipped: {e}"));
        }
    }
    let name = data.source.display().to_string();
    let report = bench::run(&data, &params, &which, &gpu, &name)?;
    if args.json {
        let mut v = serde_json::to_value(&report).map_err(|e| Error::Usage(e.to_string()))?;
        v["notes"] = serde_json::json!(notes);
        super::stdout::print_line(&v.to_string())?;
    } else {
        let mut text = bench::render(&report);
        for n in &notes {
            text.push_str(&format!("note: {n}\n"));
        }
        super::stdout::print(&text)?;
    }
    if report.all_identical {
        Ok(exit::SUCCESS)
    } else {
        eprintln!(
            "perceptron: error: a backend's model differs from the reference: this is a bug, please report it"
        );
        Ok(exit::ERROR)
    }
}
