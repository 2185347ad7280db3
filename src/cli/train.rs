//! `perceptron train`: fit a model, save it, and report what the theory says.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::checkpoint::{self, RunIdentity, RunSettings};
use crate::model::AnyModel;
use crate::train::Observer;
use crate::train::Variant;

use clap::Args;
use serde::Serialize;

use super::args::{BackendArgs, DataArgs, PrecisionArg, default_model_path};
use super::progress::TrainProgress;
use crate::data::{self, CsvInfo, Dataset};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::model::{DataLayout, Model, TrainingInfo};
use crate::text::count;
use crate::train::{self, MarginEngine, State, Stop, TrainParams};

const EXAMPLES: &str = "\
Examples:
  perceptron train                          train on the bundled digits (3 vs 5) data
  perceptron train data/iris_setosa.csv -o iris.json
  perceptron train data/heart_scale.svm --max-epochs 50
  perceptron train letters.csv --label-column class --positive A
  perceptron train big.svm.gz --precision f64 --shuffle --seed 7 --json
  perceptron train data/digits_3v5.csv --plot pictures/
  perceptron train big.svm --resume model.checkpoint.json   continue an interrupted run

Ctrl-C, SIGTERM or SIGHUP stops at the next safe point and saves the exact
training state (see --checkpoint); a second one stops at once.

Exit status: 0 converged; 3 stopped at --max-epochs without converging (the
last model is still saved); 1 error; 2 bad command line; 130 interrupted
(the state was saved for --resume).";

/// Train a perceptron on a CSV, LIBSVM or binary file (or the bundled digits data).
///
/// Runs Rosenblatt's classic algorithm exactly: w = 0, rows in file order,
/// w <- w + y x on every mistake (y·w·x <= 0), until an epoch makes no
/// mistake or --max-epochs is reached. Every backend gives the bit-identical
/// model of the textbook sequential loop.
#[derive(Args, Clone, Debug)]
#[command(after_help = EXAMPLES)]
#[command(group(clap::ArgGroup::new("checkpointing").args(["checkpoint", "resume"]).multiple(true)))]
pub struct TrainArgs {
    /// Data file (CSV or LIBSVM, optionally .gz, or binary .pbin). Omit it to train on the
    /// bundled UCI digits 3-vs-5 dataset.
    pub data: Option<PathBuf>,

    /// Where to save the model (JSON). Written atomically: an existing file is
    /// only replaced by a complete new model.
    #[arg(short, long, value_name = "MODEL")]
    pub output: Option<PathBuf>,

    /// Stop after this many epochs if the data has not been separated.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub max_epochs: usize,

    /// Arithmetic precision. f64 equals scikit-learn's Perceptron bit for bit.
    #[arg(long, value_enum, default_value = "f32")]
    pub precision: PrecisionArg,

    /// Train without the bias (the hyperplane passes through the origin).
    #[arg(long)]
    pub no_bias: bool,

    /// The label value to treat as +1; all others are -1 (one-vs-rest).
    /// Needed when the file has more than two label values.
    #[arg(long, value_name = "LABEL", allow_hyphen_values = true)]
    pub positive: Option<String>,

    /// Return the averaged perceptron: the mean of the weights after every
    /// row visit. Generalises better than the last iterate when the data is
    /// not separable.
    #[arg(long, conflicts_with = "pocket")]
    pub average: bool,

    /// Return the pocket weights (Gallant's pocket with ratchet): those with
    /// the fewest training mistakes seen so far, counted over all rows. For
    /// non-separable data, when the best training accuracy matters.
    #[arg(long)]
    pub pocket: bool,

    /// Update when y·w·x <= TAU instead of 0, pushing rows at least TAU past
    /// the boundary (a margin perceptron).
    #[arg(long, value_name = "TAU", allow_negative_numbers = true)]
    pub margin: Option<crate::train::Margin>,

    /// Start from this model's weights instead of zero (a warm start). Its
    /// features, bias and labels must match the data.
    #[arg(long, value_name = "MODEL")]
    pub init: Option<PathBuf>,

    /// Train one perceptron per label value (one-vs-rest), all in the same
    /// passes over the data; `predict` then returns the class that scores
    /// highest (ties go to the class seen first in the training data).
    #[arg(long, value_enum, value_name = "SCHEME", conflicts_with_all = ["positive", "pocket"])]
    pub multiclass: Option<MulticlassArg>,

    /// Visit rows in a fixed pseudo-random order (needs --seed).
    #[arg(long, requires = "seed")]
    pub shuffle: bool,

    /// Seed of the --shuffle order; the same seed gives the same model.
    #[arg(long, value_name = "S", requires = "shuffle")]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub backend: BackendArgs,

    /// Whether training may walk on the CPU alone when that is measured to
    /// be faster than the engine (`adaptive`), must use the engine (`always`:
    /// its walk where it has one, GPU or CPU, else passes over windows), or must use
    /// passes over windows (`windows`, to compare them with the walk).
    /// Never changes the model.
    #[arg(long, value_enum, default_value = "adaptive")]
    pub passes: crate::train::PassPolicy,

    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    /// Save the exact training state to FILE (atomically) every
    /// --checkpoint-every epochs and on Ctrl-C, so a long run can resume.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,

    /// Epochs between checkpoints.
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        requires = "checkpointing"
    )]
    pub checkpoint_every: usize,

    /// Continue an interrupted run from its checkpoint FILE, with the same
    /// data. Every option the checkpoint records and you leave out is taken
    /// from it (--precision, --no-bias, --max-epochs, --shuffle --seed,
    /// --average, --pocket, --margin, --positive, --multiclass, --init, -o,
    /// and periodic checkpoints, which go on to FILE), so `train DATA
    /// --resume FILE` alone continues the run; an option given with another
    /// value is refused, saying what differs. The result is bit-identical to
    /// an uninterrupted run.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,

    /// Also draw the learning curve and the margins on the training data,
    /// as DIR/curve.svg and DIR/margins.svg (see `perceptron plot`). DIR is
    /// created if needed. Binary models only.
    #[arg(long, value_name = "DIR", conflicts_with = "multiclass")]
    pub plot: Option<PathBuf>,

    #[command(flatten)]
    pub data_args: DataArgs,
}

/// The run summary, printed as text or JSON.
#[derive(Serialize, Debug)]
pub struct TrainReport {
    pub data: String,
    pub format: String,
    /// The line of the CSV header that was skipped, if any.
    pub header_line: Option<u64>,
    pub rows: usize,
    pub features: usize,
    pub sparse: bool,
    pub precision: Precision,
    pub bias: bool,
    pub positive_label: String,
    pub negative_label: String,
    pub positive_rows: usize,
    pub negative_rows: usize,
    pub backend: Vec<String>,
    /// How `auto` chose, when it matters.
    pub backend_note: Option<String>,
    pub variant: Variant,
    pub margin_threshold: Option<String>,
    /// Started from `--init` (the theorem's bound then does not apply).
    pub warm_start: bool,
    pub pocket: Option<crate::train::PocketReport>,
    pub seed: Option<u64>,
    pub epochs: usize,
    pub max_epochs: usize,
    pub converged: bool,
    pub stop: Stop,
    pub mistakes_per_epoch: Vec<u64>,
    pub total_mistakes: u64,
    pub training_accuracy: f64,
    pub radius: f64,
    pub margin: Option<f64>,
    pub mistake_bound: Option<f64>,
    pub bound_holds: Option<bool>,
    pub model: String,
    pub seconds: f64,
    pub seconds_per_epoch: f64,
    /// Wall time of each epoch of this run.
    pub epoch_seconds: Vec<f64>,
    /// Peak resident memory of the whole run, where the system reports it.
    pub peak_memory_bytes: Option<u64>,
    pub loop_stats: train::LoopStats,
    pub engine_stats: train::EngineStats,
    pub warnings: Vec<String>,
    /// Pictures written by --plot.
    pub plots: Vec<String>,
}

/// Runs `train` with the options `given` explicitly (the rest are defaults,
/// which a resumed run replaces with its checkpoint's).
pub fn run(args: &TrainArgs, given: &super::resume::Given) -> Result<i32> {
    let adopted;
    let mut text = None;
    let args = match &args.resume {
        Some(path) => {
            let t = text.insert(checkpoint::read(path)?);
            let identity = checkpoint::identity_of(path, t)?;
            adopted = super::resume::adopt(args, given, &identity, path);
            &adopted
        }
        None => args,
    };
    let resume = args.resume.as_deref().zip(text.as_deref());
    match Precision::from(args.precision) {
        Precision::F32 => run_in::<f32>(args, resume),
        Precision::F64 => run_in::<f64>(args, resume),
    }
}

/// The training data, and the layout of a CSV file (for the report and the
/// model file).
fn load<F: Real>(args: &TrainArgs) -> Result<(Dataset<F>, Option<CsvInfo>)> {
    let opts = args.data_args.load_options(args.positive.clone());
    let (raw, path) = match &args.data {
        Some(path) => (data::load_raw::<F>(path, &opts)?, path.clone()),
        None => data::bundled::raw_digits_3v5::<F>(&opts)?,
    };
    let csv = raw.csv.clone();
    let data = if args.multiclass.is_some() {
        Dataset::from_raw_classes(raw, &path)?
    } else {
        Dataset::from_raw(raw, &path, opts.positive.as_deref())?
    };
    let classes = if args.multiclass.is_some() {
        data.classes.len()
    } else {
        1
    };
    crate::memory::check_weights_fit(&data.source, data.cols() + 1, classes)?;
    Ok((data, csv))
}

/// `resume`: the checkpoint resumed from and its text.
fn run_in<F: Real>(args: &TrainArgs, resume: Option<(&std::path::Path, &str)>) -> Result<i32> {
    if args.max_epochs == 0 {
        return Err(Error::Usage("--max-epochs must be at least 1".into()));
    }
    let output = args.output.clone().unwrap_or_else(default_model_path);
    crate::output::check_destination(&output)?;
    if let Some(data) = &args.data {
        crate::output::check_not_an_input(&output, &[data])?;
        if let Some(c) = &args.checkpoint {
            crate::output::check_not_an_input(c, &[data, &output])?;
        }
    }
    if args.checkpoint_every == 0 {
        return Err(Error::Usage(
            "--checkpoint-every must be at least 1 (epochs between checkpoints)".into(),
        ));
    }
    if let Some(dir) = &args.plot {
        super::plot::prepare_dir(dir)?;
    }
    let (mut data, csv) = load::<F>(args)?;
    let seed = if args.shuffle { args.seed } else { None };
    // The data's fingerprint is for checkpoints only. It is taken of the
    // rows in file order, so before a shuffle; without checkpointing or a
    // shuffle it waits until a Ctrl-C needs it.
    let fingerprint_now = args.checkpoint.is_some() || args.resume.is_some() || seed.is_some();
    let mut identity = RunIdentity {
        precision: F::PRECISION,
        bias: !args.no_bias,
        max_epochs: args.max_epochs,
        seed,
        labels: data.label_map.clone(),
        rows: data.rows(),
        features: data.cols(),
        fingerprint: if fingerprint_now {
            crate::data::fingerprint::fingerprint(&data)
        } else {
            String::new()
        },
        variant: variant_of(args),
        margin: args.margin.clone(),
        init: match &args.init {
            Some(p) => Some(init_fingerprint(p)?),
            None => None,
        },
        multiclass: args.multiclass.is_some(),
        heads: heads_of(args, &data),
        settings: RunSettings {
            output: args.output.clone(),
            init: args.init.clone(),
            checkpoint_every: args.checkpoint.as_ref().map(|_| args.checkpoint_every),
        },
    };
    let start = match resume {
        Some((path, text)) => checkpoint::parse::<F>(path, text, &identity)?,
        None => State::starting_from(initial_weights::<F>(args, &data)?),
    };
    if let Some(s) = seed {
        data = data.permuted(&train::shuffle::permutation(data.rows(), s));
    }
    let params = TrainParams {
        max_epochs: args.max_epochs,
        bias: !args.no_bias,
        shuffle_seed: seed,
        passes: args.passes,
        variant: variant_of(args),
        margin: args.margin.clone(),
        multiclass: args.multiclass.is_some(),
    };
    let (backend, gpu_options) = args.backend.resolve();
    let chosen = crate::backend::choose(backend, &gpu_options, &data, params.bias)?;
    let engine = chosen.engine;
    let chosen_note = chosen.note;
    let data_ref = &data;
    let mut fallback = || -> Box<dyn MarginEngine<F>> {
        Box::new(crate::cpu::CpuEngine::new(data_ref, params.bias))
    };
    // A resumed run saves where it resumed from unless told otherwise, so
    // that the same command continues it again.
    let checkpoint_path = args
        .checkpoint
        .clone()
        .or_else(|| args.resume.clone())
        .unwrap_or_else(|| output.with_extension("checkpoint.json"));
    let mut observer = TrainObserver {
        progress: TrainProgress::new(!args.json, data.rows(), args.max_epochs),
        checkpoint: args
            .checkpoint
            .as_ref()
            .map(|p| (p.clone(), args.checkpoint_every.max(1))),
        identity: &identity,
        interrupted: super::interrupt::flag(),
    };
    let fit = train::fit(&data, &params, start, engine, &mut fallback, &mut observer);
    observer.progress.finish();
    let fit = fit?;
    if fit.stop == Stop::Interrupted {
        if identity.fingerprint.is_empty() {
            // Not shuffled: the rows are still in file order.
            identity.fingerprint = crate::data::fingerprint::fingerprint(&data);
        }
        checkpoint::save(&checkpoint_path, &identity, &fit.state)?;
        eprintln!(
            "perceptron: {}",
            interrupted_message(
                fit.state.epoch,
                fit.state.position,
                &checkpoint_path,
                args.resume.as_deref()
            )
        );
        return Ok(exit::INTERRUPTED);
    }
    if args.multiclass.is_some() {
        let warnings = observer.progress.take_warnings();
        let run = super::train_ovr::Run {
            args,
            data: &data,
            fit: &fit,
            output: &output,
            seed,
            backend_note: chosen_note,
            csv: csv.as_ref(),
        };
        return run.finish(warnings);
    }
    let progress = &mut observer.progress;

    let model = Model {
        weights: fit.feature_weights().to_vec(),
        bias: fit.intercept(),
        has_bias: params.bias,
        labels: data.label_map.clone(),
        training: TrainingInfo {
            epochs: fit.epochs(),
            max_epochs: params.max_epochs,
            mistakes_per_epoch: fit.mistakes_per_epoch.clone(),
            total_mistakes: fit.total_mistakes(),
            converged: fit.converged(),
            radius: fit.theory.radius,
            margin: fit.theory.margin,
            mistake_bound: fit.theory.mistake_bound.filter(|_| args.init.is_none()),
            backend: fit.engines.join(", then "),
            seed,
            data: data.source.display().to_string(),
            rows: data.rows(),
            training_accuracy: fit.theory.accuracy(),
            seconds: fit.seconds,
            variant: fit.variant,
            margin_threshold: args.margin.clone(),
            init: args.init.as_ref().map(|p| p.display().to_string()),
            pocket_epoch: fit.pocket.as_ref().map(|p| p.epoch),
            pocket_training_accuracy: fit.pocket.as_ref().map(|p| p.training_accuracy),
            online: None,
            data_layout: Some(DataLayout::of(
                data.format,
                csv.as_ref(),
                args.data_args.label_column.as_ref(),
            )),
        },
    };
    model.save(&output)?;
    let plots = match &args.plot {
        Some(dir) => super::plot::training_pictures(dir, &model, &output, &data)?,
        None => Vec::new(),
    };

    let positive_rows = data.labels.iter().filter(|&&y| y > 0).count();
    let report = TrainReport {
        data: data.source.display().to_string(),
        format: data.format.name().into(),
        header_line: csv.as_ref().and_then(|c| c.header_line),
        rows: data.rows(),
        features: data.cols(),
        sparse: data.features.is_sparse(),
        precision: F::PRECISION,
        bias: params.bias,
        positive_label: data.label_map.positive.clone(),
        negative_label: data.label_map.negative_text().to_owned(),
        positive_rows,
        negative_rows: data.rows() - positive_rows,
        backend: fit.engines.clone(),
        backend_note: chosen_note,
        variant: fit.variant,
        margin_threshold: args.margin.as_ref().map(|m| m.text().to_owned()),
        warm_start: args.init.is_some(),
        pocket: fit.pocket.clone(),
        seed,
        epochs: fit.epochs(),
        max_epochs: params.max_epochs,
        converged: fit.converged(),
        stop: fit.stop,
        mistakes_per_epoch: fit.mistakes_per_epoch.clone(),
        total_mistakes: fit.total_mistakes(),
        training_accuracy: fit.theory.accuracy(),
        radius: fit.theory.radius,
        margin: fit.theory.margin,
        mistake_bound: fit.theory.mistake_bound.filter(|_| args.init.is_none()),
        bound_holds: fit
            .theory
            .bound_holds(fit.total_mistakes())
            .filter(|_| args.init.is_none()),
        model: output.display().to_string(),
        seconds: fit.seconds,
        seconds_per_epoch: fit.seconds / fit.epochs().max(1) as f64,
        epoch_seconds: fit.epoch_seconds.clone(),
        peak_memory_bytes: crate::memory::peak_rss_bytes(),
        loop_stats: fit.loop_stats.clone(),
        engine_stats: fit.engine_stats.clone(),
        warnings: progress.take_warnings(),
        plots: plots.iter().map(|p| p.display().to_string()).collect(),
    };
    if args.json {
        let text = serde_json::to_string(&report).map_err(|e| Error::Train(e.to_string()))?;
        super::stdout::print_line(&text)?;
    } else {
        super::stdout::print(&render(&report))?;
    }
    // Also with --json: stdout holds only the JSON object, and exit code 3
    // alone is easy to miss in a script's log.
    if !report.converged {
        eprintln!(
            "perceptron: not converged: the data was not separated within {} (the last epoch made {}); the last model was saved to {}. It may not be linearly separable; try more --max-epochs, or check the labels.",
            count(report.epochs, "epoch"),
            count(
                report.mistakes_per_epoch.last().copied().unwrap_or(0),
                "mistake"
            ),
            report.model
        );
    }
    Ok(if report.converged {
        exit::SUCCESS
    } else {
        exit::NOT_CONVERGED
    })
}

/// What an interrupted run tells the user: where the state is and how to
/// continue. A run that was itself resumed already has `--resume`.
fn interrupted_message(
    epoch: usize,
    position: usize,
    saved: &std::path::Path,
    resumed_from: Option<&std::path::Path>,
) -> String {
    let how = match resumed_from {
        None => format!("the same command plus `--resume {}`", saved.display()),
        Some(r) if r == saved => "the same command (its --resume reads the new state)".to_owned(),
        Some(r) => format!(
            "the same command with `--resume {}` in place of `--resume {}`",
            saved.display(),
            r.display()
        ),
    };
    format!(
        "interrupted at epoch {}, row {position}: the exact training state is saved in {}; \
         continue with {how}",
        epoch + 1,
        saved.display()
    )
}

/// ", header on line N" when a header line was skipped.
pub(crate) fn header_note(line: Option<u64>) -> String {
    line.map(|n| format!(", header on line {n}"))
        .unwrap_or_default()
}

/// Abbreviates a long list: the first 10 and the last 5 values.
pub fn abbreviate(values: &[u64]) -> String {
    let show = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(" ");
    if values.len() <= 16 {
        show(values)
    } else {
        format!(
            "{} ... ({} more) ... {}",
            show(&values[..10]),
            values.len() - 15,
            show(&values[values.len() - 5..])
        )
    }
}

/// Six significant figures, in scientific notation outside [1e-3, 1e7).
pub(crate) fn fmt_g(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return v.to_string();
    }
    if v.abs() >= 1e7 || v.abs() < 1e-3 {
        return format!("{v:.5e}");
    }
    let decimals = (5 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// The human-readable summary.
pub fn render(r: &TrainReport) -> String {
    let mut s = String::new();
    let line = |s: &mut String, k: &str, v: String| s.push_str(&format!("{k:<10}  {v}\n"));
    line(
        &mut s,
        "data",
        format!(
            "{} ({}{}, {} x {}, {}, {}{})",
            r.data,
            r.format,
            header_note(r.header_line),
            count(r.rows, "row"),
            count(r.features, "feature"),
            if r.sparse { "sparse" } else { "dense" },
            r.precision,
            if r.bias { ", with bias" } else { ", no bias" }
        ),
    );
    line(
        &mut s,
        "labels",
        format!(
            "+1 = \"{}\" ({}), -1 = \"{}\" ({})",
            r.positive_label,
            count(r.positive_rows, "row"),
            r.negative_label,
            count(r.negative_rows, "row")
        ),
    );
    let order = r
        .seed
        .map(|s| format!(", shuffled with seed {s}"))
        .unwrap_or_default();
    let note = r
        .backend_note
        .as_ref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    line(
        &mut s,
        "backend",
        format!("{}{order}{note}", r.backend.join(", then ")),
    );
    let rule = r
        .margin_threshold
        .as_ref()
        .map(|t| format!(", updating when y w~.x~ <= {t}"))
        .unwrap_or_default();
    match (r.variant, &r.pocket) {
        (Variant::Averaged, _) => line(
            &mut s,
            "variant",
            format!("averaged: the model is the mean of the weights after every row visit{rule}"),
        ),
        (Variant::Pocket, Some(p)) => line(
            &mut s,
            "variant",
            format!(
                "pocket: the model is the weights pocketed in epoch {} with {} ({:.2}% accuracy; {} evaluated){rule}",
                p.epoch + 1,
                count(p.mistakes, "training mistake"),
                100.0 * p.training_accuracy,
                count(p.evaluations, "candidate")
            ),
        ),
        _ if !rule.is_empty() => line(&mut s, "variant", format!("classic{rule}")),
        _ => {}
    }
    let verdict = if r.converged {
        "converged (the last epoch made no mistake)".to_owned()
    } else if r.stop == Stop::Interrupted {
        "interrupted".to_owned()
    } else {
        format!(
            "NOT converged: the data was not separated within {} (the last epoch made {})",
            count(r.epochs, "epoch"),
            count(r.mistakes_per_epoch.last().copied().unwrap_or(0), "mistake")
        )
    };
    line(
        &mut s,
        "epochs",
        format!("{} of at most {}: {verdict}", r.epochs, r.max_epochs),
    );
    line(
        &mut s,
        "mistakes",
        format!(
            "M = {} in total; per epoch: {}",
            r.total_mistakes,
            abbreviate(&r.mistakes_per_epoch)
        ),
    );
    let correct = (r.training_accuracy * r.rows as f64).round() as usize;
    line(
        &mut s,
        "accuracy",
        format!(
            "{:.2}% on the training data ({correct} of {})",
            100.0 * r.training_accuracy,
            count(r.rows, "row")
        ),
    );
    line(
        &mut s,
        "radius",
        format!("D = max ||x~|| = {}", fmt_g(r.radius)),
    );
    match (r.margin, r.mistake_bound) {
        (Some(g), _) if r.warm_start => {
            line(
                &mut s,
                "margin",
                format!("gamma = min y w~.x~ / ||w~|| = {}", fmt_g(g)),
            );
            line(
                &mut s,
                "bound",
                "none: training started from --init, and the theorem counts mistakes from w = 0"
                    .into(),
            );
        }
        (Some(g), Some(b)) => {
            line(
                &mut s,
                "margin",
                format!("gamma = min y w~.x~ / ||w~|| = {}", fmt_g(g)),
            );
            let holds = if r.bound_holds == Some(true) {
                "the convergence theorem's bound holds"
            } else {
                "EXCEEDED (only possible through rounding)"
            };
            let formula = match &r.margin_threshold {
                Some(t) => format!("(D^2 + 2*{t})/gamma^2"),
                None => "(D/gamma)^2".to_owned(),
            };
            line(
                &mut s,
                "bound",
                format!(
                    "{formula} = {}, and M = {} <= {}: {holds}",
                    fmt_g(b),
                    r.total_mistakes,
                    fmt_g(b)
                ),
            );
        }
        _ => line(
            &mut s,
            "margin",
            "none: the model does not separate the training data, so the theorem gives no bound"
                .into(),
        ),
    }
    line(&mut s, "model", r.model.clone());
    if !r.plots.is_empty() {
        line(&mut s, "pictures", r.plots.join(", "));
    }
    line(
        &mut s,
        "time",
        format!(
            "{:.3} s ({:.3} ms per epoch)",
            r.seconds,
            1e3 * r.seconds_per_epoch
        ),
    );
    line(
        &mut s,
        "memory",
        crate::memory::describe(r.peak_memory_bytes),
    );
    s
}

/// Progress, periodic checkpoints and Ctrl-C, for the training loop.
struct TrainObserver<'a> {
    progress: TrainProgress,
    checkpoint: Option<(PathBuf, usize)>,
    identity: &'a RunIdentity,
    interrupted: Arc<AtomicBool>,
}

impl<F: Real> Observer<F> for TrainObserver<'_> {
    fn on_progress(&mut self, epoch: usize, position: usize, rows: usize) {
        Observer::<F>::on_progress(&mut self.progress, epoch, position, rows);
    }

    fn on_epoch_end(&mut self, state: &State<F>) -> Result<()> {
        self.progress.on_epoch_end(state)?;
        match &self.checkpoint {
            Some((path, every)) if state.epoch.is_multiple_of(*every) => {
                checkpoint::save(path, self.identity, state)
            }
            _ => Ok(()),
        }
    }

    fn on_warning(&mut self, message: &str) {
        Observer::<F>::on_warning(&mut self.progress, message);
    }

    fn should_stop(&mut self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }
}

fn variant_of(args: &TrainArgs) -> Variant {
    if args.average {
        Variant::Averaged
    } else if args.pocket {
        Variant::Pocket
    } else {
        Variant::Classic
    }
}

/// Identifies an `--init` model's content, for checkpoints.
fn init_fingerprint(path: &std::path::Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, "cannot read --init model", e))?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    Ok(format!("{h:016x}"))
}

/// Zero, or the `--init` model's weights after checking they fit the data.
fn initial_weights<F: Real>(args: &TrainArgs, data: &Dataset<F>) -> Result<Vec<F>> {
    let bias = !args.no_bias;
    let heads = heads_of(args, data);
    let dim = data.cols() + bias as usize;
    let Some(path) = &args.init else {
        return Ok(vec![F::ZERO; dim * heads]);
    };
    let exact_f64 = |kind: &str| {
        Error::Usage(format!(
            "--init {} is an f64 {kind}model; train with --precision f64 to start from it exactly",
            path.display()
        ))
    };
    let widen32 = |w: Vec<f32>| {
        w.into_iter()
            .map(|v| F::from_f64(v as f64))
            .collect::<Vec<F>>()
    };
    let widen64 = |w: Vec<f64>| w.into_iter().map(F::from_f64).collect::<Vec<F>>();
    // (weights, has_bias, feature count, what the labels must be)
    let (weights, has_bias, count, labels_match) = match crate::model::load(path)? {
        AnyModel::F32(m) if heads == 1 => (
            widen32(m.augmented_weights()),
            m.has_bias,
            m.feature_count(),
            m.labels == data.label_map,
        ),
        AnyModel::F64(m) if heads == 1 => {
            if F::PRECISION == Precision::F32 {
                return Err(exact_f64(""));
            }
            (
                widen64(m.augmented_weights()),
                m.has_bias,
                m.feature_count(),
                m.labels == data.label_map,
            )
        }
        AnyModel::OvrF32(m) if heads > 1 => {
            let same = class_texts(data) == m.classes;
            let w = (0..m.classes.len()).flat_map(|k| m.augmented(k)).collect();
            (widen32(w), m.has_bias, m.feature_count(), same)
        }
        AnyModel::OvrF64(m) if heads > 1 => {
            if F::PRECISION == Precision::F32 {
                return Err(exact_f64("one-vs-rest "));
            }
            let same = class_texts(data) == m.classes;
            let w = (0..m.classes.len()).flat_map(|k| m.augmented(k)).collect();
            (widen64(w), m.has_bias, m.feature_count(), same)
        }
        _ => {
            return Err(Error::Usage(format!(
                "--init {} is {} model but this run trains {}",
                path.display(),
                if heads > 1 {
                    "a binary"
                } else {
                    "a one-vs-rest"
                },
                if heads > 1 {
                    "one-vs-rest (--multiclass)"
                } else {
                    "a binary model"
                }
            )));
        }
    };
    if count != data.cols() {
        return Err(Error::Usage(format!(
            "--init {} has {count} features but the data has {}",
            path.display(),
            data.cols()
        )));
    }
    if has_bias != bias {
        return Err(Error::Usage(format!(
            "--init {} was trained {} the bias; pass {} to match",
            path.display(),
            if has_bias { "with" } else { "without" },
            if has_bias {
                "no --no-bias"
            } else {
                "--no-bias"
            }
        )));
    }
    if !labels_match {
        return Err(Error::Usage(format!(
            "--init {} maps the labels differently from this data (check --positive, or the classes and their order)",
            path.display()
        )));
    }
    Ok(weights)
}

/// The class label texts of one-vs-rest data, in head order.
pub(super) fn class_texts<F: Real>(data: &Dataset<F>) -> Vec<String> {
    data.classes.iter().map(|c| c.text.clone()).collect()
}

/// Multiclass schemes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MulticlassArg {
    /// One binary perceptron per class against all the others.
    Ovr,
}

/// Perceptrons trained together: the classes in one-vs-rest, else 1.
fn heads_of<F: Real>(args: &TrainArgs, data: &Dataset<F>) -> usize {
    if args.multiclass.is_some() {
        data.classes.len()
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_interrupted_message_adds_resume_only_when_missing() {
        let fresh = interrupted_message(2, 40, Path::new("m.checkpoint.json"), None);
        assert_eq!(
            fresh,
            "interrupted at epoch 3, row 40: the exact training state is saved in \
             m.checkpoint.json; continue with the same command plus `--resume m.checkpoint.json`"
        );
        let again = interrupted_message(2, 40, Path::new("ck.json"), Some(Path::new("ck.json")));
        assert!(
            again.ends_with("continue with the same command (its --resume reads the new state)"),
            "{again}"
        );
        assert!(!again.contains("plus"), "{again}");
        let moved = interrupted_message(0, 0, Path::new("new.json"), Some(Path::new("ck.json")));
        assert!(
            moved.ends_with(
                "continue with the same command with `--resume new.json` in place of `--resume ck.json`"
            ),
            "{moved}"
        );
    }
}
