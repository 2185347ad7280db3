//! `perceptron train`'s options, and the training parameters they stand for.

use std::path::PathBuf;

use crate::train::scikit::EveryEpoch;
use clap::Args;

use super::extras::ExtraArgs;
use crate::cli::args::{BackendArgs, DataArgs, PassesArg};
use crate::cli::training_args::{MulticlassFlag, RuleFlags, TrainingFlags};
use crate::train::TrainParams;

const EXAMPLES: &str = "\
Examples:
  perceptron train                          train on the bundled digits (3 vs 5) data
  perceptron train data/iris_setosa.csv -o iris.json
  perceptron train data/heart_scale.svm --max-epochs 50
  perceptron train letters.csv --label-column class --positive A
  perceptron train big.svm.gz --precision f64 --shuffle --seed 7 --json
  perceptron train data/digits_3v5.csv --plot pictures/
  perceptron train data/breast_cancer.csv --scale standard   scale features first
  perceptron train data/breast_cancer.csv --class-weight balanced
  perceptron train data/breast_cancer.csv --class-weight=-1=2,1=1   weight class -1 twice
  perceptron train big.svm --resume model.checkpoint.json   continue an interrupted run
  perceptron train 'parts/*.svm' -o m.json  several files (shards) as one dataset
  mpirun -np 4 perceptron train big.pbin --distributed exact -o m.json   on 4 processes

Ctrl-C, SIGTERM or SIGHUP stops at the next safe point and saves the exact
training state (see --checkpoint); a second one stops at once.

Early stopping, for data the loop cannot separate:
  perceptron train data/heart_scale.svm --tol 0.001 --n-iter-no-change 5
  perceptron train data/breast_cancer.csv --shuffle-every-epoch --tol-on mean-loss --seed 0
      (scikit-learn's Perceptron(random_state=0) with its defaults, bit for bit)
  perceptron train data/breast_cancer.csv --scale standard --validation-fraction 0.2
      (keeps the weights of the epoch with the best accuracy on the held-out 20%)

Exit status: 0 the model was written: converged, stopped by early
stopping, or stopped at --max-epochs (then a `not converged` note on
stderr); 3 only with --require-convergence, when the classic rule stopped at
--max-epochs without an epoch free of mistakes (the model is still saved, or
the best epoch's with --validation-fraction); 1 error; 2 bad command line;
130 interrupted (the state was saved for --resume).";

/// Train a perceptron on a CSV, LIBSVM, binary or NumPy .npy file (or the bundled digits data).
///
/// Runs Rosenblatt's classic algorithm exactly: w = 0, rows in file order,
/// w <- w + y x on every mistake (y·w·x <= 0), until an epoch makes no
/// mistake or --max-epochs is reached. Every backend gives the bit-identical
/// model of the textbook sequential loop.
#[derive(Args, Clone, Debug)]
#[command(after_help = EXAMPLES)]
#[command(group(clap::ArgGroup::new("checkpointing").args(["checkpoint", "resume"]).multiple(true)))]
#[command(group(clap::ArgGroup::new("seeded").args(["shuffle", "shuffle_every_epoch", "validation_fraction"]).multiple(true)))]
pub struct TrainArgs {
    /// Data file (CSV or LIBSVM, optionally .gz, binary .pbin, or .npy; `-`
    /// reads standard input). Several files, or a quoted pattern such as
    /// 'parts/*.svm' (matched in sorted order), are one dataset: their rows
    /// in the order given (shards). Omit it to train on the bundled UCI
    /// digits 3-vs-5 dataset.
    #[arg(value_name = "DATA")]
    pub data: Vec<PathBuf>,

    /// Where to save the model (JSON) [default: model.json, in the current
    /// directory]. Written atomically: an existing file is only replaced by
    /// a complete new model, and a read-only one is refused. `-` writes it
    /// to standard output (the summary then goes to stderr).
    #[arg(short, long, value_name = "MODEL")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub training: TrainingFlags,

    #[command(flatten)]
    pub rule: RuleFlags,

    /// Start from this model's weights instead of zero (a warm start). Its
    /// features, bias and labels must match the data.
    #[arg(long, value_name = "MODEL")]
    pub init: Option<PathBuf>,

    #[command(flatten)]
    pub multiclass: MulticlassFlag,

    /// Visit rows in a fixed pseudo-random order (the order of --seed S;
    /// without it a seed is drawn, said, and recorded in the model).
    #[arg(long)]
    pub shuffle: bool,

    /// Reshuffle the rows before every epoch as scikit-learn's Perceptron
    /// does, --seed S being its random_state (default 0, as there). With
    /// `--tol-on mean-loss --precision f64` this is scikit-learn's
    /// `Perceptron(random_state=S)` bit for bit on dense rows (its defaults:
    /// --tol 1e-3 --n-iter-no-change 5 --max-epochs 1000), and with
    /// `--intercept-decay 0.01` on an SVMlight file, which it reads as
    /// sparse; each one-vs-rest class then trains alone.
    #[arg(long, conflicts_with = "shuffle")]
    pub shuffle_every_epoch: bool,

    /// Seed of the --shuffle order (scikit-learn's random_state with
    /// --shuffle-every-epoch, and the seed of the rows --validation-fraction
    /// holds out); the same seed gives the same model.
    #[arg(long, value_name = "S", requires = "seeded")]
    pub seed: Option<u64>,

    #[command(flatten)]
    pub backend: BackendArgs,

    /// Whether training may walk on the CPU alone when that is measured to
    /// be faster than the engine (`adaptive`), must use the engine (`always`:
    /// its walk where it has one, GPU or CPU, else passes over windows), or must use
    /// passes over windows (`windows`, to compare them with the walk);
    /// `host`, `reference` and `ahead` force one of the host's own walks,
    /// for measuring. Never changes the model.
    #[arg(long, value_enum, default_value = "adaptive")]
    pub passes: PassesArg,

    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    /// Exit with status 3 when the classic rule stops at --max-epochs
    /// without an epoch free of mistakes. By default such a run ends with
    /// status 0 and a "not converged" note on stderr, as LIBLINEAR, VW and
    /// scikit-learn end at their iteration caps, so `train ... && eval ...`
    /// and `set -e` scripts go on.
    #[arg(long)]
    pub require_convergence: bool,

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
    /// --average, --pocket, --margin, --scale, --class-weight,
    /// --intercept-decay, --tol, --n-iter-no-change, --validation-fraction,
    /// --positive, --multiclass, --init, -o,
    /// and periodic checkpoints, which go on to FILE), so `train DATA
    /// --resume FILE` alone continues the run; an option given with another
    /// value is refused, saying what differs. The model path (-o) is taken
    /// only where it is model.json or the one FILE's name goes with (X.json
    /// for X.checkpoint.json): a checkpoint may come from someone else, so
    /// any other path needs -o. The result is bit-identical to an
    /// uninterrupted run.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,

    /// Also draw the learning curve and the margins on the training data,
    /// as DIR/curve.svg and DIR/margins.svg (see `perceptron plot`); a
    /// one-vs-rest run (--multiclass) draws its curve only, the margins
    /// being one perceptron's. DIR is created if needed.
    #[cfg(feature = "plot")]
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,

    /// Train on several processes, launched by `mpirun` or `srun` (needs a
    /// build with `--features mpi`): `exact` gives the single-process model
    /// bit for bit for any number of processes; `mix` is iterative
    /// parameter mixing, a different algorithm that scales almost linearly
    /// (classic, --margin and --multiclass only). Rank 0 writes the model,
    /// checkpoints and report. --scale, --class-weight, --intercept-decay
    /// and early stopping need one process and are refused.
    #[arg(long, value_enum, value_name = "MODE")]
    pub distributed: Option<DistributedArg>,

    /// How --distributed mix mixes the processes' weights after each epoch:
    /// `uniform` (each 1/K) or `errors` (by each one's share of the epoch's
    /// mistakes).
    #[arg(long, value_enum, value_name = "HOW", requires = "distributed")]
    pub mix: Option<MixArg>,

    #[command(flatten)]
    pub extras: ExtraArgs,

    #[command(flatten)]
    pub data_args: DataArgs,

    /// The model path a `--resume` checkpoint names and may not write
    /// without `-o` (see `resume::adopt`): refused once the checkpoint's
    /// identity is checked, so a run that differs hears that first.
    #[arg(skip)]
    pub unadopted_output: Option<PathBuf>,
}

/// `--distributed` modes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DistributedArg {
    /// The single-process model, bit for bit.
    Exact,
    /// Iterative parameter mixing.
    Mix,
}

/// `--mix` schemes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MixArg {
    /// Each process's weights count 1/K.
    Uniform,
    /// Each process's weights count by its share of the epoch's mistakes.
    Errors,
}

impl TrainArgs {
    /// The shuffle seed, when rows are shuffled.
    pub fn seed(&self) -> Option<u64> {
        if self.shuffle { self.seed } else { None }
    }

    /// The training parameters these options stand for (not yet checked).
    pub fn params(&self) -> TrainParams {
        TrainParams {
            max_epochs: self.training.max_epochs,
            bias: !self.training.bias.no_bias,
            shuffle_seed: self.seed(),
            // `run` refuses a seed beyond u32 with --shuffle-every-epoch.
            shuffle_every_epoch: self
                .shuffle_every_epoch
                .then(|| EveryEpoch::RandomState(self.seed.unwrap_or(0) as u32)),
            passes: self.passes.into(),
            variant: self.rule.variant(),
            margin: self.rule.margin.clone(),
            multiclass: self.multiclass.scheme.is_some(),
            ..self.extras.apply(TrainParams::default(), self.seed)
        }
    }
}
