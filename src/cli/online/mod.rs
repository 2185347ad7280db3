//! `perceptron online`: learn from a stream, one example at a time.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use super::args::{PrecisionArg, TextDataArgs};
use crate::data::stream::StreamSource;
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::online::OnlineState;
use crate::run::online::{OnlineParams, OnlineRun, OnlineStart, OnlineSummary};
use crate::train::Margin;

mod observer;

use observer::{OnlineOutputs, Sink};

/// The default of `--max-features`: 2^26 weights, 256 MiB in f32.
pub const DEFAULT_MAX_FEATURES: u64 = 1 << 26;

const EXAMPLES: &str = "\
Examples:
  perceptron online data/heart_scale.svm -o m.json      one pass over a file
  producer | perceptron online --format csv --predictions > predicted.txt
  tail -f events.svm | perceptron online --init m.json --snapshot m.json --snapshot-every 1000
  zcat big.svm.gz | perceptron online -o m.json         gzip on stdin is recognised too
  perceptron online data/iris_setosa.csv --report-bound  reads the file twice for gamma

Labels: with --init, the model's labels (a label it does not know is an
error); otherwise with --positive L, L is +1 and every other label -1
(predicted as `rest`); otherwise every label must be -1, +1, 0 or 1 (0 and
-1 are the -1 class; predictions print 1 and -1).

Ctrl-C stops after the current example (at once if the input is idle),
saves the model (-o) and the snapshot, and exits with 130; a second Ctrl-C
exits at once without saving.

Exit status: 0 the input ended (or the reader of --predictions went away);
1 error; 2 bad command line; 130 interrupted by Ctrl-C, after saving the
model and the snapshot.";

/// Learn online from a stream: for each example, predict, then learn.
///
/// Reads CSV or LIBSVM examples one at a time from a file or standard input
/// and runs the perceptron as a mistake-driven online learner: for each
/// example x with label y it computes s = w·x + b with the training
/// arithmetic, predicts +1 if s > 0 (else -1), then updates w <- w + y x,
/// b <- b + y if y·s <= TAU (0 by default). Memory is O(features), however
/// long the stream; LIBSVM features not seen before start at weight 0.
///
/// Over a file this is exactly one epoch of `perceptron train --backend
/// reference --max-epochs 1`, bit for bit. The cumulative mistakes are
/// reported on stderr as it goes. Starting from w = 0 on a stream that some
/// unit vector separates with margin gamma, they never exceed (D/gamma)^2,
/// D = max ||(x, 1)||, however long the stream.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct OnlineArgs {
    /// A CSV or LIBSVM file (optionally .gz), or `-` for standard input
    /// (the default). With stdin, the format comes from --format or the
    /// first data line.
    #[arg(value_name = "DATA|-", default_value = "-")]
    pub data: PathBuf,

    /// Save the final model here (JSON, atomically; `-`: standard output)
    /// when the input ends, on Ctrl-C, or when the reader of --predictions
    /// goes away. Without it (and without --snapshot) no model is saved.
    #[arg(short, long, value_name = "MODEL")]
    pub output: Option<PathBuf>,

    /// Start from this model instead of w = 0: its weights, bias setting,
    /// precision (unless --precision is given) and labels. Features beyond
    /// the model's start at weight 0.
    #[arg(long, value_name = "MODEL")]
    pub init: Option<PathBuf>,

    /// Write each prediction to stdout, one label per line in the original
    /// label text, before learning from its example. Flushed line by line
    /// unless stdout is a regular file, so it can feed a pipeline.
    #[arg(long)]
    pub predictions: bool,

    /// Write the predictions to FILE instead of stdout (atomically, when the
    /// run ends; `-` is stdout, at the end). Implies --predictions.
    #[arg(long, value_name = "FILE")]
    pub predictions_to: Option<PathBuf>,

    /// Save the current model here (JSON, atomically) every --snapshot-every
    /// examples and at the end, so a long stream can be followed or resumed
    /// (with --init).
    #[arg(long, value_name = "MODEL")]
    pub snapshot: Option<PathBuf>,

    /// Examples between snapshots (0: only at the end).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10_000,
        requires = "snapshot"
    )]
    pub snapshot_every: u64,

    /// Examples between progress lines on stderr (0: only the summary at
    /// the end). Default: 10000 when stderr is a terminal, else none (a log
    /// file gets them only when asked).
    #[arg(long, value_name = "N")]
    pub report_every: Option<u64>,

    /// After the input ends, read the file a second time to compute the
    /// final weights' margin gamma over every example, and check the
    /// convergence theorem's bound. Needs a file, not standard input.
    #[arg(long)]
    pub report_bound: bool,

    /// Arithmetic precision (default: f32, or the --init model's).
    #[arg(long, value_enum)]
    pub precision: Option<PrecisionArg>,

    /// Learn without the bias (the hyperplane passes through the origin).
    #[arg(long)]
    pub no_bias: bool,

    /// Update when y·w·x <= TAU instead of 0 (a margin perceptron; TAU >=
    /// 0).
    #[arg(
        long,
        value_name = "TAU",
        allow_negative_numbers = true,
        value_parser = crate::cli::args::parse_margin
    )]
    pub margin: Option<Margin>,

    /// The label value that is +1; every other value is -1. Needed for labels
    /// other than -1, +1, 0 and 1 (without --init).
    #[arg(long, value_name = "LABEL", allow_hyphen_values = true)]
    pub positive: Option<String>,

    /// Refuse examples needing more than N weights (a LIBSVM index above N,
    /// or more than N CSV feature columns): the weights grow to the largest
    /// index seen, and one wild index should not claim gigabytes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_FEATURES)]
    pub max_features: u64,

    /// No progress lines and no summary (errors are still printed; --json
    /// still prints its summary).
    #[arg(long)]
    pub quiet: bool,

    /// Print the final summary as one JSON object (with `total_mistakes`),
    /// on stdout unless the predictions or a model go there (then on
    /// stderr).
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub data_args: TextDataArgs,
}

pub fn run(args: &OnlineArgs) -> Result<i32> {
    for path in [&args.output, &args.snapshot, &args.predictions_to]
        .into_iter()
        .flatten()
    {
        crate::output::check_destination(path)?;
        crate::output::check_not_an_input(path, &[&args.data])?;
    }
    // The model and its snapshot may be one file (both hold the model);
    // the predictions may be neither.
    if let Some(p) = &args.predictions_to {
        for (what, model) in [
            ("the model", &args.output),
            ("the snapshot", &args.snapshot),
        ] {
            if let Some(m) = model {
                crate::output::check_distinct_outputs(&[(what, m), ("the predictions", p)])?;
            }
        }
    }
    let params = OnlineParams {
        bias: !args.no_bias,
        margin: args.margin.clone(),
        positive: args.positive.clone(),
        max_features: args.max_features,
        snapshot_every: args.snapshot.as_ref().map(|_| args.snapshot_every),
        report_bound: args.report_bound,
        precision: args.precision.map(Precision::from),
    };
    let source = StreamSource::from_arg(&args.data);
    params.check(source)?;
    let start = OnlineStart::load(&params, args.init.as_deref())?;
    match start.precision() {
        Precision::F32 => run_in::<f32>(args, params, start, source),
        Precision::F64 => run_in::<f64>(args, params, start, source),
    }
}

/// The run in precision `F`: the stream through the learner, then the
/// model saved and the summary printed.
fn run_in<F: Real>(
    args: &OnlineArgs,
    params: OnlineParams,
    start: OnlineStart,
    source: StreamSource<'_>,
) -> Result<i32> {
    let opts = args.data_args.load_options(None);
    let Some(mut run) = OnlineRun::<F>::open(params, start, source, opts, super::interrupt::flag)?
    else {
        eprintln!("perceptron: interrupted before the first example; nothing was saved");
        return Ok(exit::INTERRUPTED);
    };
    super::args::warn_csv_options(run.load_options(), run.format(), &args.data);
    let state = learn_into_predictions(args, &mut run)?;
    let state = run.end(state)?;
    let model = run.finish(state, &mut OnlineOutputs::new(args, None))?;
    if let Some(path) = &args.output {
        model.save(path)?;
    }
    let mut summary = run.summary(state);
    summary.model = args.output.as_deref().map(crate::output::shown);
    summary.snapshot = args.snapshot.as_deref().map(crate::output::shown);
    if args.json || !args.quiet {
        print_summary(args, &summary)?;
    }
    Ok(exit_status(args, &summary))
}

/// Runs the stream through the learner, its predictions going to
/// --predictions-to (atomically), to stdout, or nowhere.
fn learn_into_predictions<F: Real>(
    args: &OnlineArgs,
    run: &mut OnlineRun<'_, F>,
) -> Result<OnlineState> {
    Ok(if let Some(path) = &args.predictions_to {
        let mut failure = None;
        let mut state = None;
        let written = crate::output::write_atomic(path, |out| {
            let sink = Sink {
                out,
                flush_each: false,
                name: path,
            };
            match run.learn(&mut OnlineOutputs::new(args, Some(sink))) {
                Ok(s) => {
                    state = Some(s);
                    Ok(())
                }
                Err(e) => {
                    failure = Some(e);
                    Err(io::Error::other("the run failed"))
                }
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        written?;
        state.unwrap_or(OnlineState::Ended)
    } else if args.predictions {
        crate::output::check_stdout_open()?;
        let stdout = io::stdout();
        let flush_each = !crate::output::stdout_is_regular_file();
        let mut w = BufWriter::new(stdout.lock());
        let sink = Sink {
            out: &mut w,
            flush_each,
            name: Path::new("<stdout>"),
        };
        let state = run.learn(&mut OnlineOutputs::new(args, Some(sink)))?;
        match w.flush() {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                return Err(Error::io(Path::new("<stdout>"), "cannot write output", e));
            }
            _ => {}
        }
        state
    } else {
        run.learn(&mut OnlineOutputs::new(args, None))?
    })
}

/// Prints the summary, text or JSON, where the outputs leave room for it.
fn print_summary(args: &OnlineArgs, summary: &OnlineSummary) -> Result<()> {
    let text = super::stdout::summary(args.json, summary, || summary.render())?;
    let taken = args.predictions
        || super::stdout::any_stdout([
            args.output.as_deref(),
            args.snapshot.as_deref(),
            args.predictions_to.as_deref(),
        ]);
    super::stdout::print_summary(&text, taken)
}

/// The exit status, saying on stderr what an interrupted run saved.
fn exit_status(args: &OnlineArgs, summary: &OnlineSummary) -> i32 {
    match summary.state {
        OnlineState::Interrupted => {
            let saved: Vec<String> = [&args.output, &args.snapshot]
                .into_iter()
                .flatten()
                .map(|p| p.display().to_string())
                .collect();
            eprintln!(
                "perceptron: interrupted after {}; {}",
                crate::text::count(summary.examples, "example"),
                if saved.is_empty() {
                    "the model was not saved (no -o or --snapshot)".to_owned()
                } else {
                    format!("the model was saved to {}", saved.join(" and "))
                }
            );
            exit::INTERRUPTED
        }
        _ => exit::SUCCESS,
    }
}
