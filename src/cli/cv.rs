//! `perceptron cv`: stratified k-fold cross-validation of the training
//! options, folds in parallel, with the mean and spread of accuracy and F1.

use std::path::PathBuf;

use clap::Args;

use super::args::{BackendArgs, DataArgs};
use super::train::extras::ExtraArgs;
use super::training_args::{MulticlassFlag, RuleFlags, TrainingFlags};
use crate::data::{self, Dataset};
use crate::error::{Result, exit};
use crate::float::{Precision, Real};
use crate::run::cv::CvReport;
use crate::train::TrainParams;
use crate::train::cv::CvParams;

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
    params.check_precision(F::PRECISION)?;
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
    let progress = super::progress::FoldsProgress::new(!args.json);
    let report = CvReport::run(&data, &args.data, &params, &cv, &progress);
    progress.finish();
    let report = report?;
    super::stdout::print(&super::stdout::summary(args.json, &report, || {
        report.render()
    })?)?;
    Ok(exit::SUCCESS)
}
