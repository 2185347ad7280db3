//! `perceptron cv`: stratified k-fold cross-validation of the training
//! options, folds in parallel, with the mean and spread of accuracy and F1.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::args::{BackendArgs, DataArgs};
use super::train::extras::ExtraArgs;
use super::training_args::{MulticlassFlag, RuleFlags, TrainingFlags};
use crate::data::{self, Dataset};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::model::evaluation::OvrConfusion;
use crate::text::count;
use crate::text::summary_line as line;
use crate::train::TrainParams;
use crate::train::cv::{CvParams, CvReport};

const EXAMPLES: &str = "\
Examples:
  perceptron cv data/breast_cancer.csv --folds 5 --scale standard
  perceptron cv data/heart_scale.svm --folds 10 --seed 3 --average --json
  perceptron cv data/digits.csv --folds 5 --multiclass ovr --max-epochs 20

Each fold's model is trained on the other folds' rows exactly as `train`
would train it on a file of those rows (in file order; --shuffle shuffles
them with --seed), and scored on its own rows. A fold that reaches
--max-epochs without converging is reported as such and is not an error.

Exit status: 0 success; 1 error; 2 bad command line.";

/// Cross-validate the training options with stratified k folds.
///
/// The rows are dealt into K folds of nearly equal size, each with about the
/// data's share of every label (stratified), by the seeded permutation of
/// `train --shuffle` (see src/train/folds.rs). The folds are trained in
/// parallel. Reports each fold's accuracy and F1 (of the +1 class; macro F1
/// for one-vs-rest) and their mean and standard deviation over the folds.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct CvArgs {
    /// Data file (CSV or LIBSVM, optionally .gz, or binary .pbin).
    pub data: PathBuf,

    /// Number of folds K (at least 2, at most the rows).
    #[arg(long, default_value_t = 5, value_name = "K")]
    pub folds: usize,

    /// Seed of the permutation that deals the folds (and of --shuffle and
    /// of the rows --validation-fraction holds out).
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,

    /// Print the results as one JSON object on stdout, with every fold's
    /// figures and confusion matrix.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub training: TrainingFlags,

    #[command(flatten)]
    pub rule: RuleFlags,

    #[command(flatten)]
    pub multiclass: MulticlassFlag,

    /// Visit each fold's training rows in the order --seed fixes.
    #[arg(long)]
    pub shuffle: bool,

    /// Where each fold is trained (every backend gives the same models).
    /// The folds run in parallel; the default is the CPU engine.
    #[command(flatten)]
    pub backend: BackendArgs,

    #[command(flatten)]
    pub extras: ExtraArgs,

    #[command(flatten)]
    pub data_args: DataArgs,
}

impl CvArgs {
    fn params(&self) -> TrainParams {
        TrainParams {
            max_epochs: self.training.max_epochs,
            bias: !self.training.bias.no_bias,
            shuffle_seed: self.shuffle.then_some(self.seed),
            variant: self.rule.variant(),
            margin: self.rule.margin.clone(),
            multiclass: self.multiclass.scheme.is_some(),
            ..self.extras.apply(TrainParams::default(), Some(self.seed))
        }
    }
}

pub fn run(args: &CvArgs) -> Result<i32> {
    match Precision::from(args.training.precision) {
        Precision::F32 => run_in::<f32>(args),
        Precision::F64 => run_in::<f64>(args),
    }
}

fn run_in<F: Real>(args: &CvArgs) -> Result<i32> {
    let params = args.params().check()?;
    let opts = args.data_args.load_options(args.training.positive.clone());
    let raw = data::load_raw::<F>(&args.data, &opts)?;
    let data = if args.multiclass.scheme.is_some() {
        Dataset::from_raw_classes(raw, &args.data)?
    } else {
        Dataset::from_raw(raw, &args.data, opts.positive.as_deref())?
    };
    let (backend, gpu) = args.backend.resolve();
    let cv = CvParams {
        folds: args.folds,
        seed: args.seed,
        backend,
        gpu,
    };
    let report = CvReport::run(&data, &args.data, &params, &cv)?;
    if args.json {
        let text = serde_json::to_string(&json(&report, backend))
            .map_err(|e| Error::Train(e.to_string()))?;
        super::stdout::print_line(&text)?;
    } else {
        super::stdout::print(&render(&report))?;
    }
    Ok(exit::SUCCESS)
}

/// The report as `--json` writes it, in the words `train --json` and `eval
/// --json` use: each fold's confusion matrix with its labels, and its
/// backend as asked for and the engines that ran.
#[derive(Serialize)]
struct CvJson<'a> {
    data: &'a str,
    format: crate::data::Format,
    rows: usize,
    features: usize,
    precision: Precision,
    kind: &'static str,
    f1_of: &'a str,
    classes: &'a [String],
    folds: usize,
    seed: u64,
    per_fold: Vec<FoldJson>,
    accuracy: crate::train::cv::Spread,
    f1: Option<crate::train::cv::Spread>,
    f1_undefined: usize,
    seconds: f64,
}

/// One fold in [`CvJson`].
#[derive(Serialize)]
struct FoldJson {
    fold: usize,
    train_rows: usize,
    test_rows: usize,
    epochs: usize,
    stop: crate::train::Stop,
    training_mistakes: u64,
    correct: u64,
    accuracy: f64,
    f1: Option<f64>,
    confusion: OvrConfusion,
    backend: crate::run::report::BackendReport,
}

fn json(r: &CvReport, requested: crate::engine::backend::Backend) -> CvJson<'_> {
    use crate::run::report::{BackendReport, EngineReport};
    let requested = match requested {
        crate::engine::backend::Backend::Reference => "reference",
        crate::engine::backend::Backend::Cpu => "cpu",
        crate::engine::backend::Backend::Gpu => "gpu",
        crate::engine::backend::Backend::Auto => "auto",
    };
    let sm = &r.summary;
    CvJson {
        data: &r.data,
        format: r.format,
        rows: r.rows,
        features: r.features,
        precision: r.precision,
        kind: r.kind,
        f1_of: &r.f1_of,
        classes: &r.classes,
        folds: r.folds,
        seed: r.seed,
        per_fold: sm
            .folds
            .iter()
            .map(|f| FoldJson {
                fold: f.fold,
                train_rows: f.train_rows,
                test_rows: f.test_rows,
                epochs: f.epochs,
                stop: f.stop,
                training_mistakes: f.training_mistakes,
                correct: f.correct,
                accuracy: f.accuracy,
                f1: f.f1,
                confusion: OvrConfusion::of_fold(&f.confusion, &r.classes),
                backend: BackendReport {
                    requested,
                    engines: f.backend.iter().map(|n| EngineReport::of_name(n)).collect(),
                    note: None,
                },
            })
            .collect(),
        accuracy: sm.accuracy,
        f1: sm.f1,
        f1_undefined: sm.f1_undefined,
        seconds: r.seconds,
    }
}

fn render(r: &CvReport) -> String {
    let mut s = String::new();
    line(
        &mut s,
        "data",
        format!(
            "{} ({}, {} x {}, {}, {})",
            r.data,
            r.format.name(),
            count(r.rows, "row"),
            count(r.features, "feature"),
            r.precision,
            r.kind
        ),
    );
    line(
        &mut s,
        "folds",
        format!(
            "{} (stratified by label, seed {}), trained in parallel",
            r.folds, r.seed
        ),
    );
    let sm = &r.summary;
    line(
        &mut s,
        "accuracy",
        format!(
            "{:.2}% mean, {:.2}% standard deviation",
            100.0 * sm.accuracy.mean,
            100.0 * sm.accuracy.std
        ),
    );
    let undefined = if sm.f1_undefined > 0 {
        format!(
            " (over {} of {}: undefined in the others)",
            sm.folds.len() - sm.f1_undefined,
            count(sm.folds.len(), "fold")
        )
    } else {
        String::new()
    };
    line(
        &mut s,
        "F1",
        match &sm.f1 {
            Some(f) => format!(
                "{:.4} mean, {:.4} standard deviation ({}){undefined}",
                f.mean, f.std, r.f1_of
            ),
            None => format!("undefined in every fold ({})", r.f1_of),
        },
    );
    s.push_str(&format!(
        "\n  {:>4}  {:>6}  {:>6}  {:>7}  {:>14}  {:>9}  {:>7}\n",
        "fold", "train", "test", "epochs", "stopped", "accuracy", "F1"
    ));
    for f in &sm.folds {
        let stop = match f.stop {
            crate::train::Stop::Converged => "converged",
            crate::train::Stop::MaxEpochs => "max epochs",
            crate::train::Stop::EarlyStopped => "early stop",
            crate::train::Stop::Interrupted => "interrupted",
        };
        s.push_str(&format!(
            "  {:>4}  {:>6}  {:>6}  {:>7}  {:>14}  {:>8.2}%  {:>7}\n",
            f.fold,
            f.train_rows,
            f.test_rows,
            f.epochs,
            stop,
            100.0 * f.accuracy,
            f.f1.map_or("-".to_owned(), |v| format!("{v:.4}")),
        ));
    }
    s.push('\n');
    line(&mut s, "time", format!("{:.3} s", r.seconds));
    s
}
