//! `perceptron online`: learn from a stream, one example at a time.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use super::args::{PrecisionArg, TextDataArgs};
use crate::data::stream::{RowStream, StreamRow, StreamSource};
use crate::data::{Format, LabelMap, MAX_FEATURE_INDEX};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::model::{self, AnyModel, DataLayout, Model, TrainingInfo};
use crate::online::{Learner, MarginTally, OnlineInfo, OnlineState, StepError};
use crate::train::{Margin, Variant};

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
    /// the end).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub report_every: u64,

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
                "label {label} is not one of the --init model's labels (+1 = \"{}\", -1 = \"{}\"){}",
                m.positive,
                m.negative_text(),
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
    let (learner, rule) = starting_point::<F>(args, init, tau)?;
    let init_features = learner.features();
    // Cannot truncate: max_features <= MAX_FEATURE_INDEX < 2^31.
    let max_features = usize::try_from(args.max_features).unwrap_or(usize::MAX);
    let learner = learner.with_max_features(max_features);
    let stop = super::interrupt::flag();
    let opts = args.data_args.load_options(None);
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
        stream,
        learner,
        rule,
        init_features,
        stop,
        started: Instant::now(),
        snapshots: 0,
        bound: None,
    };
    let state = if let Some(path) = &args.predictions_to {
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
    };
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
            Ok(exit::INTERRUPTED)
        }
        _ => Ok(exit::SUCCESS),
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
            "--init {} has +1 = \"{}\", not \"{p}\"; leave out --positive to use the model's labels",
            path.display(),
            labels.positive
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

/// What the second pass found.
struct Bound {
    tally: MarginTally,
    margin: Option<f64>,
}

/// An online run in progress.
struct Run<'a, F> {
    args: &'a OnlineArgs,
    source: StreamSource<'a>,
    stream: RowStream<'a, F>,
    learner: Learner<F>,
    rule: LabelRule,
    init_features: usize,
    stop: Arc<AtomicBool>,
    started: Instant,
    snapshots: u64,
    bound: Option<Bound>,
}

impl<F: Real> Run<'_, F> {
    /// Reads the stream to its end (or a stop), predicting into `sink` then
    /// learning from each example. `sink_name` is for write errors.
    fn learn(
        &mut self,
        mut sink: Option<&mut dyn Write>,
        flush_each: bool,
        sink_name: &Path,
    ) -> Result<OnlineState> {
        let path = self.stream.path();
        let labels = self.rule.map();
        let init = self.args.init.as_deref();
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(OnlineState::Interrupted);
            }
            let row = match self.stream.next_row() {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(OnlineState::Ended),
                Err(_) if self.stop.load(Ordering::Relaxed) => {
                    return Ok(OnlineState::Interrupted);
                }
                Err(e) => return Err(e),
            };
            let Some(y) = self.rule.sign(row.label) else {
                return Err(self.rule.refuse(path, &row, init));
            };
            let at = |e: StepError| Error::Train(format!("{}:{}: {e}", path.display(), row.line));
            let p = self.learner.predict(row.row, row.features).map_err(at)?;
            let mut closed = false;
            if let Some(out) = sink.as_mut() {
                let written = writeln!(out, "{}", labels.text_of(p.label))
                    .and_then(|()| if flush_each { out.flush() } else { Ok(()) });
                match written {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => closed = true,
                    Err(e) => return Err(Error::io(sink_name, "cannot write predictions", e)),
                }
            }
            self.learner.learn(p, y, row.row).map_err(at)?;
            if closed {
                return Ok(OnlineState::Closed);
            }
            let n = self.learner.examples();
            if self.args.report_every > 0
                && n.is_multiple_of(self.args.report_every)
                && !self.args.quiet
            {
                eprintln!("{}", self.progress_line());
            }
            if let Some(snap) = &self.args.snapshot
                && self.args.snapshot_every > 0
                && n.is_multiple_of(self.args.snapshot_every)
            {
                self.model(OnlineState::Running).save(snap)?;
                self.snapshots += 1;
            }
        }
    }

    /// Reads the file again and measures the final weights on every example.
    fn second_pass(&mut self) -> Result<Option<Bound>> {
        let opts = self.args.data_args.load_options(None);
        let mut stream = RowStream::<F>::open(
            self.source,
            &opts,
            self.args.max_features,
            Some(self.stop.clone()),
        )?;
        let w = self.learner.augmented();
        let bias = self.learner.has_bias();
        let mut tally = MarginTally::default();
        let changed = |what: String| {
            Error::data(
                stream_path(self.source),
                format!("changed during the run: {what}; --report-bound needs the same data twice"),
            )
        };
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let row = match stream.next_row() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(_) if self.stop.load(Ordering::Relaxed) => return Ok(None),
                Err(e) => return Err(e),
            };
            let Some(y) = self.rule.sign(row.label) else {
                return Err(self.rule.refuse(
                    stream_path(self.source),
                    &row,
                    self.args.init.as_deref(),
                ));
            };
            if row.features > self.learner.features() {
                return Err(changed(format!(
                    "line {} needs {} features, the first pass saw {}",
                    row.line,
                    row.features,
                    self.learner.features()
                )));
            }
            tally.observe(&w, row.row, y, bias);
        }
        if tally.rows() != self.learner.examples() {
            return Err(changed(format!(
                "it now holds {} examples, not {}",
                tally.rows(),
                self.learner.examples()
            )));
        }
        let margin = tally.margin(&w);
        Ok(Some(Bound { tally, margin }))
    }

    /// The bound the theorem gives for this run, when it applies:
    /// (D^2 + 2τ)/gamma^2, which is (D/gamma)^2 for τ = 0.
    fn mistake_bound(&self) -> Option<f64> {
        let gamma = self.bound.as_ref()?.margin?;
        if self.args.init.is_some() {
            return None;
        }
        let d = self.learner.radius();
        let tau = self.tau_f64();
        Some(((d * d + 2.0 * tau) / (gamma * gamma)).max(0.0))
    }

    fn tau_f64(&self) -> f64 {
        self.args
            .margin
            .as_ref()
            .map_or(0.0, |m| m.value::<F>().to_f64())
    }

    fn prequential_accuracy(&self) -> f64 {
        let n = self.learner.examples();
        if n == 0 {
            0.0
        } else {
            (n - self.learner.wrong_predictions()) as f64 / n as f64
        }
    }

    /// The model as it stands.
    fn model(&self, state: OnlineState) -> Model<F> {
        let l = &self.learner;
        let done = state != OnlineState::Running;
        let mut weights = l.weights().to_vec();
        if l.has_bias() {
            weights.push(l.bias());
        }
        let training = TrainingInfo {
            epochs: 1,
            max_epochs: 1,
            mistakes_per_epoch: vec![l.mistakes()],
            total_mistakes: l.mistakes(),
            converged: state == OnlineState::Ended && l.mistakes() == 0,
            radius: l.radius(),
            margin: if done {
                self.bound.as_ref().and_then(|b| b.margin)
            } else {
                None
            },
            mistake_bound: if done { self.mistake_bound() } else { None },
            backend: "online".into(),
            seed: None,
            data: stream_path(self.source).display().to_string(),
            rows: usize::try_from(l.examples()).unwrap_or(usize::MAX),
            training_accuracy: self.prequential_accuracy(),
            seconds: self.started.elapsed().as_secs_f64(),
            variant: Variant::Classic,
            margin_threshold: self.args.margin.clone(),
            init: self.args.init.as_ref().map(|p| p.display().to_string()),
            pocket_epoch: None,
            pocket_training_accuracy: None,
            online: Some(OnlineInfo {
                examples: l.examples(),
                wrong_predictions: l.wrong_predictions(),
                features_added: l.features().saturating_sub(self.init_features),
                state,
            }),
            data_layout: Some(DataLayout::of(
                self.stream.format(),
                self.stream.csv_info().as_ref(),
                self.args.data_args.csv.label_column.as_ref(),
            )),
            class_weights: None,
            early_stopping: None,
        };
        Model::binary(weights, l.has_bias(), self.rule.map(), training)
    }

    fn progress_line(&self) -> String {
        let l = &self.learner;
        let n = l.examples().max(1) as f64;
        format!(
            "online: {}, {} ({:.2}%), {} ({:.2}%), D = {}",
            crate::text::count(l.examples(), "example"),
            crate::text::count(l.mistakes(), "mistake"),
            100.0 * l.mistakes() as f64 / n,
            crate::text::count(l.wrong_predictions(), "wrong prediction"),
            100.0 * l.wrong_predictions() as f64 / n,
            crate::text::fmt_g(l.radius())
        )
    }

    /// The report at the end.
    fn report(&self, state: OnlineState) -> OnlineReport {
        let l = &self.learner;
        let a = self.args;
        let map = self.rule.map();
        let bound = self.bound.as_ref();
        let mistake_bound = self.mistake_bound();
        OnlineReport {
            data: stream_path(self.source).display().to_string(),
            format: self.stream.format(),
            precision: F::PRECISION,
            bias: l.has_bias(),
            positive_label: map.positive.clone(),
            negative_label: map.negative_text().to_owned(),
            label_rule: match self.rule {
                LabelRule::Model(_) => "model",
                LabelRule::Positive(_) => "positive",
                LabelRule::Numeric => "numeric",
            },
            init: a.init.as_ref().map(|p| p.display().to_string()),
            init_features: self.init_features,
            state,
            examples: l.examples(),
            features: l.features(),
            features_added: l.features().saturating_sub(self.init_features),
            margin_threshold: a.margin.as_ref().map(|m| m.text().to_owned()),
            total_mistakes: l.mistakes(),
            wrong_predictions: l.wrong_predictions(),
            prediction_accuracy: self.prequential_accuracy(),
            radius: l.radius(),
            report_bound: a.report_bound,
            second_pass_rows: bound.map(|b| b.tally.rows()),
            second_pass_correct: bound.map(|b| b.tally.correct()),
            margin: bound.and_then(|b| b.margin),
            mistake_bound,
            bound_holds: mistake_bound
                .map(|b| l.mistakes() as f64 <= b * (1.0 + crate::train::theory::BOUND_SLACK)),
            model: a.output.as_deref().map(crate::output::shown),
            snapshot: a.snapshot.as_deref().map(crate::output::shown),
            snapshots: self.snapshots,
            seconds: self.started.elapsed().as_secs_f64(),
            peak_memory_bytes: crate::memory::peak_rss_bytes(),
        }
    }
}

/// The summary of an online run, printed as text or JSON.
#[derive(Serialize, Debug)]
pub struct OnlineReport {
    pub data: String,
    pub format: Format,
    pub precision: Precision,
    pub bias: bool,
    pub positive_label: String,
    pub negative_label: String,
    /// How labels map to -1/+1: `model` (the --init model's), `positive`
    /// (--positive) or `numeric` (-1, +1, 0, 1).
    pub label_rule: &'static str,
    pub init: Option<String>,
    /// Features of the starting weights (0 from w = 0).
    pub init_features: usize,
    pub state: OnlineState,
    pub examples: u64,
    pub features: usize,
    pub features_added: usize,
    pub margin_threshold: Option<String>,
    /// Updates (y w~.x~ <= tau), M of the theorem.
    pub total_mistakes: u64,
    /// Predictions, each made before learning from its example, that were
    /// wrong.
    pub wrong_predictions: u64,
    pub prediction_accuracy: f64,
    /// D = max ||x~|| over the examples seen.
    pub radius: f64,
    /// Whether a second pass was asked for (--report-bound).
    pub report_bound: bool,
    /// The second pass's examples and the right predictions of the final
    /// weights among them (absent when it did not run).
    pub second_pass_rows: Option<u64>,
    pub second_pass_correct: Option<u64>,
    /// gamma of the final weights over every example (second pass).
    pub margin: Option<f64>,
    pub mistake_bound: Option<f64>,
    pub bound_holds: Option<bool>,
    pub model: Option<String>,
    pub snapshot: Option<String>,
    pub snapshots: u64,
    pub seconds: f64,
    pub peak_memory_bytes: Option<u64>,
}

/// The human-readable summary.
fn render(r: &OnlineReport) -> String {
    let fmt_g = crate::text::fmt_g;
    let mut s = String::new();
    let mut line = |k: &str, v: String| s.push_str(&format!("{k:<11} {v}\n"));
    line(
        "data",
        format!(
            "{} ({}, {}, {})",
            r.data,
            r.format.name(),
            r.precision,
            if r.bias { "with bias" } else { "no bias" }
        ),
    );
    let how = match r.label_rule {
        "model" => " (the --init model's)",
        "positive" => " (--positive: every other label is -1)",
        _ => " (numeric labels: 1 is +1; 0 and -1 are -1)",
    };
    line(
        "labels",
        format!(
            "+1 = \"{}\", -1 = \"{}\"{how}",
            r.positive_label, r.negative_label
        ),
    );
    line(
        "start",
        match &r.init {
            Some(p) => format!("the weights of {p} ({} features)", r.init_features),
            None => "w~ = 0".into(),
        },
    );
    let why = match r.state {
        OnlineState::Ended => "the input ended",
        OnlineState::Interrupted => "interrupted",
        OnlineState::Closed => "the reader of the predictions went away",
        OnlineState::Running => "running",
    };
    line("examples", format!("{} ({why})", r.examples));
    line(
        "features",
        format!("{} ({} beyond the start)", r.features, r.features_added),
    );
    let n = r.examples.max(1) as f64;
    let rule = format!(
        "y w~.x~ <= {}",
        r.margin_threshold.as_deref().unwrap_or("0")
    );
    line(
        "mistakes",
        format!(
            "M = {} ({:.2}% of examples): updates, where {rule}",
            r.total_mistakes,
            100.0 * r.total_mistakes as f64 / n
        ),
    );
    line(
        "predictions",
        format!(
            "{} of {} right ({:.2}%), each made before learning from its example",
            r.examples - r.wrong_predictions,
            r.examples,
            100.0 * r.prediction_accuracy
        ),
    );
    line(
        "radius",
        format!(
            "D = max ||x~|| = {} over the examples seen",
            fmt_g(r.radius)
        ),
    );
    if r.report_bound {
        match (r.second_pass_rows, r.margin) {
            (None, _) => line(
                "margin",
                "not computed: the run stopped before the end of the input".into(),
            ),
            (Some(_), Some(g)) => {
                line(
                    "margin",
                    format!(
                        "gamma = min y w~.x~ / ||w~|| = {} for the final weights over all {} examples (second pass)",
                        fmt_g(g),
                        r.examples
                    ),
                );
                let text = match r.mistake_bound {
                    None => "none: the run started from --init, and the theorem bounds runs \
                             that start from w~ = 0"
                        .to_owned(),
                    Some(b) => {
                        let name = if r.margin_threshold.is_none() {
                            "(D/gamma)^2"
                        } else {
                            "(D^2 + 2 tau)/gamma^2"
                        };
                        let verdict = if r.bound_holds == Some(true) {
                            "the convergence theorem's bound holds"
                        } else {
                            "EXCEEDED (only possible through rounding)"
                        };
                        format!(
                            "{name} = {}, and M = {} <= {}: {verdict}",
                            fmt_g(b),
                            r.total_mistakes,
                            fmt_g(b)
                        )
                    }
                };
                line("bound", text);
            }
            (Some(rows), None) => line(
                "margin",
                format!(
                    "none: the final weights do not separate the examples ({} of {rows} \
                     predicted right, or one on the boundary), so the theorem gives no bound",
                    r.second_pass_correct.unwrap_or(0),
                ),
            ),
        }
    }
    line(
        "model",
        r.model
            .clone()
            .unwrap_or_else(|| "not saved (no -o)".into()),
    );
    if let Some(p) = &r.snapshot {
        line("snapshot", format!("{p} (written {} times)", r.snapshots));
    }
    line("time", format!("{:.3} s", r.seconds));
    line("memory", crate::memory::describe(r.peak_memory_bytes));
    s
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
