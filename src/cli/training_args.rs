//! The training flags several commands share (`train`, `cv`, `plot bias`,
//! `plot trace`), each declared once here with one help text, and
//! flattened into every command that takes it.
//!
//! The groups are split where the commands differ, so that each command
//! keeps its own set of flags in its own order: [`TrainingFlags`] is taken
//! by every command that trains (its bias flag is a type parameter, because
//! `plot bias` trains both ways and has none); [`RuleFlags`] and
//! [`MulticlassFlag`] by `train` and `cv` only, which put `--init` between
//! them in `train`. `--shuffle` and `--seed` are not here: their defaults
//! and what they require differ from command to command.

use clap::Args;

use crate::cli::args::{PrecisionArg, parse_margin};
use crate::train::{Margin, Variant};

/// `--max-epochs` when not given.
pub const DEFAULT_MAX_EPOCHS: usize = 1000;

/// When a training run stops, its arithmetic, its bias and its +1 class.
///
/// `B` is the bias flag: [`BiasFlag`] (`--no-bias`) where the command
/// trains one way, [`BothWays`] (no flag) where it trains with and without.
#[derive(Args, Clone, Debug)]
pub struct TrainingFlags<B: Args = BiasFlag> {
    /// Stop after this many epochs if the data has not been separated.
    #[arg(long, default_value_t = DEFAULT_MAX_EPOCHS, value_name = "N")]
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

/// Which perceptron: the weights returned (last, averaged or pocket) and
/// the update condition (a margin).
#[derive(Args, Clone, Debug)]
pub struct RuleFlags {
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
    /// the boundary (a margin perceptron; TAU >= 0).
    #[arg(long, value_name = "TAU", allow_negative_numbers = true, value_parser = parse_margin)]
    pub margin: Option<Margin>,
}

impl RuleFlags {
    /// The variant the flags ask for.
    pub fn variant(&self) -> Variant {
        if self.average {
            Variant::Averaged
        } else if self.pocket {
            Variant::Pocket
        } else {
            Variant::Classic
        }
    }
}

/// `--multiclass`: one perceptron per label value.
#[derive(Args, Clone, Debug)]
pub struct MulticlassFlag {
    /// Train one perceptron per label value (one-vs-rest), all in the same
    /// passes over the data; `predict` then returns the class that scores
    /// highest. The model lists the classes as scikit-learn does (numbers by
    /// value, otherwise text in byte order), and a tie goes to the class
    /// listed first (models from older builds list them in the order first
    /// seen, and keep it).
    #[arg(
        id = "multiclass",
        long = "multiclass",
        value_enum,
        value_name = "SCHEME",
        conflicts_with_all = ["positive", "pocket"]
    )]
    pub scheme: Option<MulticlassArg>,
}

/// Multiclass schemes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MulticlassArg {
    /// One binary perceptron per class against all the others.
    Ovr,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The long flags of `perceptron PATH...`, in the order `--help` lists
    /// them.
    fn flags(path: &[&str]) -> Vec<String> {
        let mut cmd = crate::cli::Cli::command();
        cmd.build();
        let mut cmd = &cmd;
        for name in path {
            cmd = cmd.find_subcommand(name).unwrap();
        }
        let mut args: Vec<_> = cmd
            .get_arguments()
            .filter(|a| a.get_long().is_some())
            .collect();
        args.sort_by_key(|a| a.get_display_order());
        args.iter()
            .map(|a| a.get_long().unwrap().to_owned())
            .collect()
    }

    /// Flattened, the shared flags keep each command's set and order.
    #[test]
    fn each_command_takes_its_training_flags_in_its_order() {
        let run = |path: &[&str]| {
            let all = flags(path);
            let at = all.iter().position(|f| f == "max-epochs").unwrap();
            all[at..].to_vec()
        };
        let starts = |path: &[&str], expected: &[&str]| {
            assert_eq!(&run(path)[..expected.len()], expected, "{path:?}");
        };
        let rule = ["average", "pocket", "margin"];
        let training = ["max-epochs", "precision", "no-bias", "positive"];
        let train = [&training[..], &rule, &["init", "multiclass", "shuffle"]].concat();
        starts(&["train"], &train);
        let cv = [&training[..], &rule, &["multiclass", "shuffle"]].concat();
        starts(&["cv"], &cv);
        starts(
            &["plot", "trace"],
            &[&training[..], &["shuffle", "seed"]].concat(),
        );
        // `plot bias` trains both ways: no --no-bias.
        starts(
            &["plot", "bias"],
            &["max-epochs", "precision", "positive", "output"],
        );
        assert!(!flags(&["plot", "bias"]).contains(&"no-bias".to_owned()));
    }
}
