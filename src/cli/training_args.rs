//! The training flags several commands share (`train`, `cv`, `plot bias`,
//! `plot trace`), each declared once here with one help text, and
//! flattened into every command that takes it.
//!
//! [`TrainingFlags`] is taken by every command that trains; its bias flag
//! is a type parameter, because `plot bias` trains both ways and has none,
//! so each command keeps its own set of flags in its own order. `--shuffle`
//! and `--seed` are not here: their defaults and what they require differ
//! from command to command.

use clap::Args;

use crate::cli::args::PrecisionArg;

/// When a training run stops, its arithmetic, its bias and its +1 class.
///
/// `B` is the bias flag: [`BiasFlag`] (`--no-bias`) where the command
/// trains one way, [`BothWays`] (no flag) where it trains with and without.
#[derive(Args, Clone, Debug)]
pub struct TrainingFlags<B: Args = BiasFlag> {
    /// Stop after this many epochs if the data has not been separated.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub max_epochs: usize,

    /// Arithmetic precision. f64 equals scikit-learn's Perceptron bit for bit.
    #[arg(long, value_enum, default_value = "f32")]
    pub precision: PrecisionArg,

    #[command(flatten)]
    pub bias: B,

    /// The label value to treat as +1; all others are -1 (one-vs-rest).
    /// Needed when the file has more than two label values.
    #[arg(long, value_name = "LABEL", allow_hyphen_values = true)]
    pub positive: Option<String>,
}

/// `--no-bias`, for a command that trains either with the bias or without.
#[derive(Args, Clone, Copy, Debug)]
pub struct BiasFlag {
    /// Train without the bias (the hyperplane passes through the origin).
    #[arg(long)]
    pub no_bias: bool,
}

/// No bias flag: the command trains both without the bias and with it.
#[derive(Args, Clone, Copy, Debug)]
pub struct BothWays {}
