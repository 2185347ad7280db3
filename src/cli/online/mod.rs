//! `perceptron online`: learn from a stream, one example at a time.

use crate::text::Quoted;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use clap::Args;

use super::args::{PrecisionArg, TextDataArgs};
use crate::data::stream::{RowStream, StreamRow, StreamSource};
use crate::data::{LabelMap, LoadOptions, MAX_FEATURE_INDEX};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::model::{self, AnyModel, Model};
use crate::online::{Learner, OnlineState};
use crate::train::Margin;

mod learn;
mod report;

use learn::Run;
pub use report::OnlineReport;
use report::render;

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

    /// Update when y·w·x <= TAU instead of 0 (a margin perceptron).
    #[arg(long, value_name = "TAU", allow_negative_numbers = true)]
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
    if args.max_features == 0 || args.max_features > MAX_FEATURE_INDEX {
        return Err(Error::Usage(format!(
            "--max-features must be between 1 and {MAX_FEATURE_INDEX}"
        )));
    }
    let source = StreamSource::from_arg(&args.data);
    if args.report_bound && source == StreamSource::Stdin {
        return Err(Error::Usage(
            "--report-bound reads the data a second time, which standard input cannot do; \
             give a file"
                .into(),
        ));
    }
    let init = args.init.as_deref().map(model::load).transpose()?;
    if let (Some(path), Some(s)) = (&args.init, init.as_ref().and_then(|m| m.scaling())) {
        // A stream's statistics are unknown up front, and a standard-scaled
        // sparse stream would be dense: online learning reads rows as they are.
        return Err(Error::Usage(format!(
            "--init {} reads features scaled by `train --scale {}`; online learning reads \
             the rows as they come and does not scale them (start from an unscaled model)",
            path.display(),
            s.kind.name()
        )));
    }
    let precision = match (args.precision, &init) {
        (Some(p), _) => Precision::from(p),
        (None, Some(m)) => m.precision(),
        (None, None) => Precision::F32,
    };
    match precision {
        Precision::F32 => run_in::<f32>(args, source, init),
        Precision::F64 => run_in::<f64>(args, source, init),
    }
}

/// How the labels of a stream map to ±1; see the command's help.
enum LabelRule {
    /// The `--init` model's map.
    Model(LabelMap),
    /// `--positive L`: L is +1, anything else -1.
    Positive(LabelMap),
    /// -1, +1, 0 or 1.
    Numeric,
}

impl LabelRule {
    fn map(&self) -> LabelMap {
        match self {
            LabelRule::Model(m) | LabelRule::Positive(m) => m.clone(),
            LabelRule::Numeric => LabelMap {
                positive: "1".into(),
                negative: Some("-1".into()),
            },
        }
    }

    fn sign(&self, text: &str) -> Option<i8> {
        match self {
            LabelRule::Model(m) | LabelRule::Positive(m) => m.sign_of(text),
            LabelRule::Numeric => {
                let v = text.parse::<f64>().ok()?;
                if v == 1.0 {
                    Some(1)
                } else if v == 0.0 || v == -1.0 {
                    Some(-1)
                } else {
                    None
                }
            }
        }
    }

    /// The error for a label [`LabelRule::sign`] refused.
    fn refuse(&self, path: &Path, row: &StreamRow<'_, impl Real>, init: Option<&Path>) -> Error {
        let label = crate::data::message::quote(row.label);
        let message = match self {
            LabelRule::Model(m) => format!(
                "label {label} is not one of the --init model's labels (+1 = {}, -1 = {}){}",
                Quoted(&m.positive),
                Quoted(m.negative_text()),
                init.map(|p| format!(" in {}", p.display()))
                    .unwrap_or_default()
            ),
            _ => format!(
                "label {label} is not -1, +1, 0 or 1; for other labels name the +1 class with \
                 --positive LABEL (every other label is then -1), or start from a model with \
                 --init"
            ),
        };
        Error::parse(path, row.line, Some(row.label_column), message)
    }
}

fn run_in<F: Real>(
    args: &OnlineArgs,
    source: StreamSource<'_>,
    init: Option<AnyModel>,
) -> Result<i32> {
    let tau = args.margin.as_ref().map_or(F::ZERO, |m| m.value::<F>());
    let opts = stream_options(args, init.as_ref());
    let (learner, rule) = starting_point::<F>(args, init, tau)?;
    let init_features = learner.features();
    // Cannot truncate: max_features <= MAX_FEATURE_INDEX < 2^31.
    let max_features = usize::try_from(args.max_features).unwrap_or(usize::MAX);
    let learner = learner.with_max_features(max_features);
    let stop = super::interrupt::flag();
    let stream = match RowStream::<F>::open(source, &opts, args.max_features, Some(stop.clone())) {
        Ok(s) => s,
        Err(_) if stop.load(Ordering::Relaxed) => {
            eprintln!("perceptron: interrupted before the first example; nothing was saved");
            return Ok(exit::INTERRUPTED);
        }
        Err(e) => return Err(e),
    };
    super::args::warn_csv_options(&opts, stream.format(), &args.data);
    let mut run = Run {
        args,
        source,
        opts: opts.clone(),
        stream,
        learner,
        rule,
        init_features,
        stop,
        started: Instant::now(),
        snapshots: 0,
        bound: None,
    };
    let state = learn_into_predictions(&mut run)?;
    if state == OnlineState::Ended && run.learner.examples() == 0 {
        return Err(Error::data(
            run.stream.path(),
            "no data rows: the input ended before the first example",
        ));
    }
    if args.report_bound && state == OnlineState::Ended {
        run.bound = run.second_pass()?;
    }
    let state = if run.stop.load(Ordering::Relaxed) {
        OnlineState::Interrupted
    } else {
        state
    };
    save_and_report(&mut run, state)?;
    Ok(exit_status(&run, state))
}

/// How the stream is read: the data options, with the LIBSVM index base
/// of the `--init` model's data when not given.
fn stream_options(args: &OnlineArgs, init: Option<&AnyModel>) -> LoadOptions {
    let mut opts = args.data_args.load_options(None);
    // LIBSVM indices count as the --init model's data did, unless told.
    if let (None, Some(path), Some(base)) = (
        opts.index_base,
        &args.init,
        init.and_then(|m| m.training().data_layout.as_ref())
            .and_then(|l| l.libsvm_base()),
    ) {
        opts.index_base = Some(base);
        opts.index_base_from = Some(path.clone());
    }
    opts
}

/// Runs the stream through the learner, its predictions going to
/// --predictions-to (atomically), to stdout, or nowhere.
fn learn_into_predictions<F: Real>(run: &mut Run<'_, F>) -> Result<OnlineState> {
    let args = run.args;
    Ok(if let Some(path) = &args.predictions_to {
        let mut failure = None;
        let mut state = None;
        let written =
            crate::output::write_atomic(path, |w| match run.learn(Some(w), false, path) {
                Ok(s) => {
                    state = Some(s);
                    Ok(())
                }
                Err(e) => {
                    failure = Some(e);
                    Err(io::Error::other("the run failed"))
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
        let flush_each = !stdout_is_regular_file();
        let mut w = BufWriter::new(stdout.lock());
        let state = run.learn(Some(&mut w), flush_each, Path::new("<stdout>"))?;
        match w.flush() {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                return Err(Error::io(Path::new("<stdout>"), "cannot write output", e));
            }
            _ => {}
        }
        state
    } else {
        run.learn(None, false, Path::new("<stdout>"))?
    })
}

/// Saves the model (snapshot, then -o) and prints the summary, text or
/// JSON, where the outputs leave room for it.
fn save_and_report<F: Real>(run: &mut Run<'_, F>, state: OnlineState) -> Result<()> {
    let args = run.args;
    let model = run.model(state);
    if let Some(path) = &args.snapshot {
        model.save(path)?;
        run.snapshots += 1;
    }
    if let Some(path) = &args.output {
        model.save(path)?;
    }
    if args.json || !args.quiet {
        let report = run.report(state);
        let text = if args.json {
            serde_json::to_string(&report).map_err(|e| Error::Usage(e.to_string()))? + "\n"
        } else {
            render(&report)
        };
        let taken = args.predictions
            || super::stdout::any_stdout([
                args.output.as_deref(),
                args.snapshot.as_deref(),
                args.predictions_to.as_deref(),
            ]);
        super::stdout::print_summary(&text, taken)?;
    }
    Ok(())
}

/// The exit status, saying on stderr what an interrupted run saved.
fn exit_status<F: Real>(run: &Run<'_, F>, state: OnlineState) -> i32 {
    let args = run.args;
    match state {
        OnlineState::Interrupted => {
            let saved: Vec<String> = [&args.output, &args.snapshot]
                .into_iter()
                .flatten()
                .map(|p| p.display().to_string())
                .collect();
            eprintln!(
                "perceptron: interrupted after {}; {}",
                crate::text::count(run.learner.examples(), "example"),
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

/// The learner to start from and the label rule.
fn starting_point<F: Real>(
    args: &OnlineArgs,
    init: Option<AnyModel>,
    tau: F,
) -> Result<(Learner<F>, LabelRule)> {
    let Some(model) = init else {
        let rule = match &args.positive {
            Some(p) => LabelRule::Positive(LabelMap {
                positive: p.clone(),
                negative: None,
            }),
            None => LabelRule::Numeric,
        };
        return Ok((Learner::new(!args.no_bias, tau), rule));
    };
    let path = args.init.as_deref().unwrap_or(Path::new("--init"));
    if model.heads() > 1 {
        return Err(Error::Usage(format!(
            "--init {} is a one-vs-rest (multiclass) model; online learning trains binary models",
            path.display()
        )));
    }
    let (weights, bias, has_bias, labels): (Vec<F>, F, bool, LabelMap) = match model {
        // Widening f32 to f64 is exact.
        AnyModel::F32(m) => binary_start(&m),
        AnyModel::F64(_) if F::PRECISION == Precision::F32 => {
            return Err(Error::Usage(format!(
                "--init {} is an f64 model; leave out --precision f32 to continue from it exactly",
                path.display()
            )));
        }
        AnyModel::F64(m) => binary_start(&m),
    };
    if args.no_bias && has_bias {
        return Err(Error::Usage(format!(
            "--init {} was trained with a bias; leave out --no-bias to continue from it",
            path.display()
        )));
    }
    if let Some(p) = &args.positive
        && labels.sign_of(p) != Some(1)
    {
        return Err(Error::Usage(format!(
            "--init {} has +1 = {}, not {}; leave out --positive to use the model's labels",
            path.display(),
            Quoted(&labels.positive),
            Quoted(p)
        )));
    }
    Ok((
        Learner::from_weights(weights, has_bias.then_some(bias), tau),
        LabelRule::Model(labels),
    ))
}

/// A binary model's feature weights and bias in precision `F` (at least
/// as wide: exact), whether it has a bias, and its labels.
fn binary_start<M: Real, F: Real>(m: &Model<M>) -> (Vec<F>, F, bool, LabelMap) {
    let widen = |v: M| F::from_f64(v.to_f64());
    (
        m.weights(0).iter().map(|&v| widen(v)).collect(),
        widen(m.bias(0)),
        m.has_bias(),
        m.labels().cloned().unwrap_or(LabelMap {
            positive: "+1".into(),
            negative: Some("-1".into()),
        }),
    )
}

/// The name of a source in reports and model files.
fn stream_path<'p>(source: StreamSource<'p>) -> &'p Path {
    source.name()
}

/// Whether stdout is a regular file (where per-line flushing only costs).
#[cfg(unix)]
fn stdout_is_regular_file() -> bool {
    use std::os::fd::AsFd;
    io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.is_file())
}

#[cfg(not(unix))]
fn stdout_is_regular_file() -> bool {
    false
}
