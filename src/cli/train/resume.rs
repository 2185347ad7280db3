//! `train --resume`: the options a resumed run takes from its checkpoint.
//! Every option the checkpoint records and the user did not give is
//! adopted, so `train DATA --resume FILE` alone continues the interrupted
//! run; an option given with another value is left as given, and the
//! checkpoint's identity check then refuses it, saying what differs.

use std::collections::BTreeSet;
use std::path::Path;

use clap::ArgMatches;
use clap::parser::ValueSource;

use super::args::TrainArgs;
use crate::cli::args::PrecisionArg;
use crate::cli::training_args::MulticlassArg;
use crate::error::{Error, Result};
use crate::float::Precision;
use crate::train::RunDescription;
use crate::train::Variant;

/// The options the user gave, on the command line or through the
/// environment, as opposed to those left at their defaults. Ids are the
/// argument ids clap derives from the field names (`max_epochs`).
#[derive(Clone, Debug, Default)]
pub struct ExplicitOptions(BTreeSet<String>);

impl ExplicitOptions {
    pub fn from_matches(m: &ArgMatches) -> Self {
        ExplicitOptions(
            m.ids()
                .filter(|id| {
                    matches!(
                        m.value_source(id.as_str()),
                        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
                    )
                })
                .map(|id| id.as_str().to_owned())
                .collect(),
        )
    }

    fn has(&self, id: &str) -> bool {
        self.0.contains(id)
    }

    fn any(&self, ids: &[&str]) -> bool {
        ids.iter().any(|id| self.has(id))
    }
}

/// `args` with every option the user did not give taken from the
/// checkpoint `path` made by the run `id`. A model path the checkpoint may
/// not name (see `adoptable`) is left in `unadopted_output`, for
/// [`refuse_unadopted_output`] once the checkpoint's identity is checked.
pub fn adopt(
    args: &TrainArgs,
    given: &ExplicitOptions,
    id: &RunDescription,
    path: &Path,
) -> TrainArgs {
    let mut a = args.clone();
    adopt_training(&mut a, given, id);
    adopt_rule(&mut a, given, id);
    adopt_early_stop(&mut a, given, id);
    adopt_data(&mut a, given, id);
    adopt_paths(&mut a, given, id, path);
    a
}

/// The cap on epochs a resumed run takes from its checkpoint, when it is
/// not the default: a checkpoint is data a user may have received, and its
/// cap may be one no run ends, so the run says it (once the checkpoint is
/// known good).
pub fn cap_to_say(given: &ExplicitOptions, id: &RunDescription) -> Option<usize> {
    (!given.has("max_epochs") && id.max_epochs != crate::cli::training_args::DEFAULT_MAX_EPOCHS)
        .then_some(id.max_epochs)
}

/// The precision, the bias, the epochs and the order of the rows.
fn adopt_training(a: &mut TrainArgs, given: &ExplicitOptions, id: &RunDescription) {
    if !given.has("precision") {
        a.training.precision = match id.precision {
            Precision::F32 => PrecisionArg::F32,
            Precision::F64 => PrecisionArg::F64,
        };
    }
    if !given.has("no_bias") {
        a.training.bias.no_bias = !id.bias;
    }
    if !given.has("max_epochs") {
        a.training.max_epochs = id.max_epochs;
    }
    if !given.any(&["shuffle", "shuffle_every_epoch", "seed"]) {
        a.shuffle = id.seed.is_some();
        a.seed = id.seed;
        if let Some(crate::train::scikit::EveryEpoch::RandomState(s)) = &id.shuffle_every_epoch {
            a.shuffle_every_epoch = true;
            a.seed = Some(*s as u64);
        }
    }
}

/// One-vs-rest, the variant (averaged or pocket) and the margin of the
/// update rule; after the order, and before the labels (which depend on
/// one-vs-rest).
fn adopt_rule(a: &mut TrainArgs, given: &ExplicitOptions, id: &RunDescription) {
    // --positive and --pocket exclude one-vs-rest: given, they keep the
    // run binary, and a one-vs-rest checkpoint is then refused.
    if !given.any(&["multiclass", "positive", "pocket"]) && id.multiclass {
        a.multiclass.scheme = Some(MulticlassArg::Ovr);
    }
    if !given.any(&["average", "pocket"]) {
        a.rule.average = id.variant == Variant::Averaged;
        a.rule.pocket = id.variant == Variant::Pocket && a.multiclass.scheme.is_none();
    }
    if !given.has("margin") {
        a.rule.margin = id.margin.clone();
    }
}

/// The early-stopping rule, with the held-out rows' seed when the order's
/// adoption left none.
fn adopt_early_stop(a: &mut TrainArgs, given: &ExplicitOptions, id: &RunDescription) {
    if !given.any(&["tol", "n_iter_no_change", "validation_fraction", "tol_on"])
        && let Some(e) = &id.early_stop
    {
        a.extras.tol = Some(e.tol);
        a.extras.tol_on = Some(match e.judge {
            crate::train::early_stop::Judge::Mistakes => super::extras::TolOnArg::Mistakes,
            crate::train::early_stop::Judge::MeanLoss => super::extras::TolOnArg::MeanLoss,
        });
        a.extras.n_iter_no_change = Some(e.n_iter_no_change);
        a.extras.validation_fraction = e.validation.map(|v| v.fraction);
        // The held-out rows' seed is --seed, as the shuffle's.
        if !given.has("seed")
            && let Some(v) = e.validation
        {
            a.seed = a.seed.or(Some(v.seed));
        }
    }
}

/// How the rows are weighted, scaled and labelled, the bias's step, and
/// the warm start.
fn adopt_data(a: &mut TrainArgs, given: &ExplicitOptions, id: &RunDescription) {
    if !given.has("class_weight") {
        a.extras.class_weight = id.class_weight.clone();
    }
    if !given.has("intercept_decay") {
        a.extras.intercept_decay = id.intercept_decay;
    }
    if !given.has("scale") {
        a.extras.scale = id.scale.map(|k| match k {
            crate::data::ScaleKind::Standard => super::extras::ScaleArg::Standard,
            crate::data::ScaleKind::MaxAbs => super::extras::ScaleArg::MaxAbs,
        });
    }
    if !given.has("positive") && !id.multiclass && a.multiclass.scheme.is_none() {
        // The +1 class as the interrupted run decided it: the same map for
        // two labels, and the one-vs-rest class for more.
        a.training.positive = Some(id.labels.positive.clone());
    }
    if !given.has("init") && id.init.is_some() {
        a.init = id.settings.init.clone();
    }
}

/// Where the model and the checkpoints go (`path`: the checkpoint).
fn adopt_paths(a: &mut TrainArgs, given: &ExplicitOptions, id: &RunDescription, path: &Path) {
    if !given.has("output")
        && a.output.is_none()
        && let Some(stored) = &id.settings.output
    {
        if adoptable(stored, path) {
            a.output = Some(stored.clone());
        } else {
            a.unadopted_output = Some(stored.clone());
        }
    }
    // The checkpoint file itself is where the resumed run goes on saving.
    if !given.has("checkpoint")
        && let Some(every) = id.settings.checkpoint_every
    {
        a.checkpoint = Some(path.to_path_buf());
        if !given.has("checkpoint_every") {
            a.checkpoint_every = every;
        }
    }
}

/// Whether a resumed run may write its model where the checkpoint
/// `checkpoint` says (`stored`) without `-o`. A checkpoint is a file a user
/// may have been sent, so its path is obeyed only where it names the file
/// the run would write anyway: the default model file, or the model the
/// checkpoint's own name pairs with (`DIR/X.json` for
/// `DIR/X.checkpoint.json`, the name `train -o DIR/X.json` gives its
/// checkpoint). Any other path (an unrelated file, a `..` path into
/// directories that may not exist) needs `-o`.
fn adoptable(stored: &Path, checkpoint: &Path) -> bool {
    stored == super::super::args::default_model_path()
        || same_file_name_in_same_dir(&stored.with_extension("checkpoint.json"), checkpoint)
}

/// The refusal of a model path the checkpoint `args.resume` named and may
/// not write without `-o`, if there is one.
pub fn refuse_unadopted_output(args: &TrainArgs) -> Result<()> {
    let (Some(stored), Some(checkpoint)) = (&args.unadopted_output, &args.resume) else {
        return Ok(());
    };
    Err(Error::Usage(format!(
        "{}: the checkpoint names {} as the model's path, which is neither {} nor the model \
         its own name goes with; a checkpoint's paths are not obeyed on their own: to write the \
         model there, add `-o {}` (or give another -o)",
        checkpoint.display(),
        stored.display(),
        super::super::args::default_model_path().display(),
        stored.display()
    )))
}

/// Whether `a` and `b` name the same file: equal names in one directory
/// (compared once resolved, where they exist).
fn same_file_name_in_same_dir(a: &Path, b: &Path) -> bool {
    let dir = |p: &Path| {
        let d = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        d.canonicalize().unwrap_or_else(|_| d.to_path_buf())
    };
    a.file_name() == b.file_name() && dir(a) == dir(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::LabelMap;
    use crate::train::RunSettings;
    use clap::{CommandFactory, FromArgMatches};

    fn identity() -> RunDescription {
        RunDescription {
            precision: Precision::F64,
            bias: false,
            max_epochs: 7,
            seed: Some(3),
            shuffle_every_epoch: None,
            labels: LabelMap {
                positive: "b".into(),
                negative: None,
            },
            rows: 10,
            features: 2,
            fingerprint: "f".into(),
            variant: Variant::Averaged,
            margin: Some("0.5".parse().unwrap()),
            init: Some("abc".into()),
            multiclass: false,
            heads: 1,
            scale: None,
            class_weight: None,
            early_stop: None,
            intercept_decay: None,
            settings: RunSettings {
                output: Some("m.json".into()),
                init: Some("start.json".into()),
                checkpoint_every: Some(2),
            },
        }
    }

    fn parse(line: &[&str]) -> (TrainArgs, ExplicitOptions) {
        let m = crate::cli::Cli::command()
            .try_get_matches_from(line)
            .unwrap();
        let (_, sub) = m.subcommand().unwrap();
        let cli = crate::cli::Cli::from_arg_matches(&m).unwrap();
        let crate::cli::Command::Train(a) = cli.command else {
            unreachable!()
        };
        (a, ExplicitOptions::from_matches(sub))
    }

    /// `train d.csv --resume CK EXTRA...` with what the checkpoint of `id`
    /// at CK adopts.
    fn resumed(ck: &str, extra: &[&str], id: &RunDescription) -> TrainArgs {
        let mut argv = vec!["perceptron", "train", "d.csv", "--resume", ck];
        argv.extend_from_slice(extra);
        let (args, given) = parse(&argv);
        adopt(&args, &given, id, Path::new(ck))
    }

    #[test]
    fn what_was_not_given_comes_from_the_checkpoint() {
        let id = identity();
        let a = resumed("m.checkpoint.json", &[], &id);
        assert_eq!(a.training.precision, PrecisionArg::F64);
        assert!(a.training.bias.no_bias && a.shuffle && a.rule.average && !a.rule.pocket);
        assert_eq!((a.training.max_epochs, a.seed), (7, Some(3)));
        assert_eq!(a.rule.margin, id.margin);
        assert_eq!(a.training.positive.as_deref(), Some("b"));
        assert_eq!(a.init.as_deref(), Some(Path::new("start.json")));
        assert_eq!(a.output.as_deref(), Some(Path::new("m.json")));
        assert_eq!(
            a.checkpoint.as_deref(),
            Some(Path::new("m.checkpoint.json"))
        );
        assert_eq!(a.checkpoint_every, 2);
        assert!(a.multiclass.scheme.is_none());
    }

    #[test]
    fn what_was_given_stays_as_given() {
        let a = resumed(
            "ck.json",
            &[
                "--max-epochs",
                "1000",
                "--precision",
                "f32",
                "--pocket",
                "-o",
                "other.json",
                "--checkpoint",
                "new.json",
            ],
            &identity(),
        );
        // Equal to the defaults, but given: the identity check will refuse.
        assert_eq!(
            (a.training.max_epochs, a.training.precision),
            (1000, PrecisionArg::F32)
        );
        assert!(a.rule.pocket && !a.rule.average);
        assert_eq!(a.output.as_deref(), Some(Path::new("other.json")));
        assert_eq!(a.checkpoint.as_deref(), Some(Path::new("new.json")));
        assert_eq!(a.checkpoint_every, 1);
    }

    #[test]
    fn one_vs_rest_is_adopted_unless_the_run_is_made_binary() {
        let mut id = identity();
        id.multiclass = true;
        id.variant = Variant::Classic;
        let a = resumed("m.checkpoint.json", &[], &id);
        assert_eq!(a.multiclass.scheme, Some(MulticlassArg::Ovr));
        assert!(a.training.positive.is_none());
        let a = resumed("m.checkpoint.json", &["--positive", "b"], &id);
        assert!(a.multiclass.scheme.is_none());
        // Without periodic checkpoints recorded, none are made.
        id.settings.checkpoint_every = None;
        let a = resumed("m.checkpoint.json", &["--positive", "b"], &id);
        assert!(a.checkpoint.is_none());
    }

    /// A checkpoint's model path is obeyed only where it names the file the
    /// run would write anyway: the default model, or the model the
    /// checkpoint's own name goes with. Any other needs `-o`.
    #[test]
    fn a_checkpoints_model_path_is_obeyed_only_where_it_is_the_runs_own() {
        let stored = |output: &str, ck: &str| {
            let mut id = identity();
            id.settings.output = Some(output.into());
            let a = resumed(ck, &[], &id);
            refuse_unadopted_output(&a).map(|()| a.output)
        };
        let ok = |output: &str, ck: &str| stored(output, ck).unwrap().unwrap();
        assert_eq!(ok("model.json", "ck.json"), Path::new("model.json"));
        assert_eq!(ok("m.json", "m.checkpoint.json"), Path::new("m.json"));
        assert_eq!(
            ok("runs/m.json", "runs/m.checkpoint.json"),
            Path::new("runs/m.json")
        );
        assert_eq!(ok("./m.json", "m.checkpoint.json"), Path::new("./m.json"));
        for (output, ck) in [
            ("m.json", "ck.json"),
            ("../../etc/x.json", "ck.json"),
            ("../../m.json", "m.checkpoint.json"),
            ("other/m.json", "m.checkpoint.json"),
        ] {
            let e = stored(output, ck).unwrap_err().to_string();
            assert!(
                e.contains(&format!("add `-o {output}`")),
                "{output}, {ck}: {e}"
            );
        }
        // Given -o, the stored path is not consulted.
        let mut id = identity();
        id.settings.output = Some("../../etc/x.json".into());
        let a = resumed("ck.json", &["-o", "y.json"], &id);
        assert_eq!(a.output.as_deref(), Some(Path::new("y.json")));
    }
}
