//! `perceptron train`: fit a model, save it, and report what the theory says.
//!
//! The command maps its options to [`TrainParams`](crate::train::TrainParams)
//! ([`args`]), checks them, loads the data, and leaves the rest to the
//! library: a [`Run`] prepares the data and the start, fits and makes the
//! model; this command writes the model and the pictures, and prints the
//! run's [`report`] (text or JSON).

pub mod args;
pub mod distributed;
pub mod extras;
pub mod resume;
mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::args::default_model_path;
use super::progress::TrainProgress;
use crate::data::{self, CsvInfo, Dataset, LibsvmInfo};
use crate::error::{Error, Result, exit};
use crate::float::{Precision, Real};
use crate::run::report::{self, ReportInputs, TrainReport};
use crate::run::{FingerprintWhen, Init, Run, RunInputs};
use crate::train::checkpoint;
use crate::train::{Observer, RunDescription, RunSettings, State, Stop, Trainer};

pub use args::{DistributedArg, MixArg, TrainArgs};
use write::{Writing, Written};

/// Runs `train` with the options `given` explicitly (the rest are defaults,
/// which a resumed run replaces with its checkpoint's).
pub fn run(args: &TrainArgs, given: &resume::ExplicitOptions) -> Result<i32> {
    check_schedule(args)?;
    if args.shuffle && args.seed.is_none() && args.distributed.is_some() {
        return Err(Error::Usage(
            "--shuffle in a distributed run needs --seed S: every process must visit the rows \
             in the same order"
                .into(),
        ));
    }
    let drawn;
    let args = match args.shuffle && args.seed.is_none() && args.resume.is_none() {
        true => {
            drawn = with_drawn_seed(args);
            &drawn
        }
        false => args,
    };
    let adopted;
    let mut text = None;
    let mut cap = None;
    let args = match &args.resume {
        Some(path) => {
            let t = text.insert(checkpoint::read(path)?);
            let identity = checkpoint::identity_of(path, t)?;
            adopted = resume::adopt(args, given, &identity, path);
            cap = resume::cap_to_say(given, &identity);
            &adopted
        }
        None => args,
    };
    let resume = args.resume.as_deref().zip(text.as_deref());
    match Precision::from(args.training.precision) {
        Precision::F32 => run_in::<f32>(args, resume, cap),
        Precision::F64 => run_in::<f64>(args, resume, cap),
    }
}

/// `args` with a seed drawn for `--shuffle` given without `--seed`, said on
/// standard error (the model records it, so the run can be repeated).
/// The rules of scikit-learn's schedule (`--shuffle-every-epoch`,
/// `--tol-on mean-loss`) that only the command line can break.
fn check_schedule(args: &TrainArgs) -> Result<()> {
    let every = args.shuffle_every_epoch;
    if every && let Some(s) = args.seed.filter(|&s| s > u32::MAX as u64) {
        return Err(Error::Usage(format!(
            "--shuffle-every-epoch --seed {s}: scikit-learn's random_state is between 0 and \
             2^32 - 1 ({})",
            u32::MAX
        )));
    }
    if every && args.distributed.is_some() {
        return Err(Error::Usage(
            "--shuffle-every-epoch is not available with --distributed: every process would \
             need every row; train in one process, or use --shuffle --seed S"
                .into(),
        ));
    }
    let mean_loss = args.extras.tol_on == Some(extras::TolOnArg::MeanLoss);
    let checkpointing = args.checkpoint.is_some() || args.resume.is_some();
    if args.multiclass.scheme.is_some() && (every || mean_loss) && checkpointing {
        return Err(Error::Usage(
            "--checkpoint and --resume are not available for one-vs-rest training with \
             --shuffle-every-epoch or --tol-on mean-loss (each class trains alone, one after \
             another); train without them, or without --multiclass"
                .into(),
        ));
    }
    Ok(())
}

fn with_drawn_seed(args: &TrainArgs) -> TrainArgs {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    // Seeds a user can type back: below 2^32.
    let seed = h.finish() % (1 << 32);
    eprintln!(
        "perceptron: note: --shuffle without --seed: drew the seed {seed} (the model records it; \
         --seed {seed} repeats this run)"
    );
    let mut args = args.clone();
    args.seed = Some(seed);
    args
}

/// The training data, and the layout of a CSV file or the index base of
/// LIBSVM data (for the report and the model file).
fn load<F: Real>(args: &TrainArgs) -> Result<(Dataset<F>, Option<CsvInfo>, Option<LibsvmInfo>)> {
    let opts = args.data_args.load_options(args.training.positive.clone());
    let (raw, path) = data::shards::load_given::<F>(&args.data, &opts)?;
    super::args::warn_csv_options(&opts, raw.format, &path);
    let csv = raw.csv.clone();
    let libsvm = raw.libsvm.clone();
    let data = if args.multiclass.scheme.is_some() {
        Dataset::from_raw_classes(raw, &path)?
    } else {
        Dataset::from_raw(raw, &path, opts.positive.as_deref())?
    };
    Ok((data, csv, libsvm))
}

/// `resume`: the checkpoint resumed from and its text.
fn run_in<F: Real>(
    args: &TrainArgs,
    resume: Option<(&Path, &str)>,
    cap_from_checkpoint: Option<usize>,
) -> Result<i32> {
    let started = std::time::Instant::now();
    if let Some(mode) = args.distributed {
        return distributed::run::<F>(args, resume, mode);
    }
    let params = args.params().check()?;
    params.check_precision(F::PRECISION)?;
    let output = check_destinations(args)?;
    let (data, csv, libsvm) = load::<F>(args)?;
    let reading_seconds = started.elapsed().as_secs_f64();
    let mut run = prepare(args, params, data, resume)?;
    if let Some(cap) = cap_from_checkpoint {
        eprintln!(
            "perceptron: note: the run stops after at most {}, as the checkpoint says; pass \
             --max-epochs to change that",
            crate::text::count(cap, "epoch")
        );
    }
    let mut observer = TrainObserver::new(args, &run);
    let stop = observer.interrupted.clone();
    let fit = run.fit(&mut observer);
    observer.progress.finish();
    let fit = fit?;
    let warnings = observer.progress.take_warnings();
    let mut writing = Writing {
        args,
        run: &mut run,
        fit: &fit,
        output: &output,
        checkpoint: checkpoint_path(args, &output),
        stop,
    };
    let (model, plots) = match writing.write(csv.as_ref(), libsvm.as_ref())? {
        Written::Saved(model, plots) => (model, plots),
        Written::Stopped(status) => return Ok(status),
    };
    let sources = ReportInputs {
        run: &run.description,
        fit: &fit,
        model: &model,
        data: &run.data,
        csv: csv.as_ref(),
        libsvm: libsvm.as_ref(),
        output: &output,
        requested: args.backend.resolve().0,
    };
    let plots = plots.iter().map(|p| p.display().to_string()).collect();
    let mut report = TrainReport::new(sources, warnings, plots);
    report.reading_seconds = reading_seconds;
    report.run_seconds = started.elapsed().as_secs_f64();
    print_report(args, &report, &output)
}

/// Where the model goes (checked not to be an input), after the checks of
/// every other output: the checkpoint and the pictures' folder.
fn check_destinations(args: &TrainArgs) -> Result<PathBuf> {
    let output = args.output.clone().unwrap_or_else(default_model_path);
    crate::output::check_destination(&output)?;
    if let Some(c) = &args.checkpoint {
        crate::output::check_not_stdout(c, "--checkpoint")?;
    }
    check_outputs(args, &output)?;
    if args.checkpoint_every == 0 {
        return Err(Error::Usage(
            "--checkpoint-every must be at least 1 (epochs between checkpoints)".into(),
        ));
    }
    #[cfg(feature = "plot")]
    if let Some(dir) = &args.plot {
        let mut inputs: Vec<&Path> = args.data.iter().map(PathBuf::as_path).collect();
        inputs.extend(args.init.as_deref());
        inputs.extend(args.resume.as_deref());
        crate::plot::training::prepare_dir(dir, &inputs)?;
    }
    Ok(output)
}

/// The library's run, from the command's options: the `--init` model, the
/// checkpoint resumed from, and when the data's fingerprint is needed.
fn prepare<F: Real>(
    args: &TrainArgs,
    params: crate::train::CheckedParams,
    data: Dataset<F>,
    resume: Option<(&Path, &str)>,
) -> Result<Run<F>> {
    let init = init_model(args)?;
    let run = Run::prepare(run_inputs(args, params, data, init.as_ref(), resume))?;
    if resume.is_some() {
        resume::refuse_unadopted_output(args)?;
    }
    Ok(run)
}

/// The `--init` model: its path, its content's fingerprint and the model.
pub(super) type InitModel<'a> = (&'a Path, String, crate::model::AnyModel);

/// The `--init` model, read, when there is one.
pub(super) fn init_model(args: &TrainArgs) -> Result<Option<InitModel<'_>>> {
    match &args.init {
        Some(p) => {
            let (fingerprint, model) = crate::run::read_init_model(p)?;
            Ok(Some((p.as_path(), fingerprint, model)))
        }
        None => Ok(None),
    }
}

/// What the library's run starts from, in the command's words (one process
/// or one rank alike).
pub(super) fn run_inputs<'a, F: Real>(
    args: &TrainArgs,
    params: crate::train::CheckedParams,
    data: Dataset<F>,
    init: Option<&'a InitModel<'a>>,
    resume: Option<(&'a Path, &'a str)>,
) -> RunInputs<'a, F> {
    let (backend, gpu) = args.backend.resolve();
    RunInputs {
        trainer: Trainer::new(params).with_backend(backend).with_gpu(gpu),
        data,
        settings: RunSettings {
            output: args.output.clone(),
            init: args.init.clone(),
            checkpoint_every: args.checkpoint.as_ref().map(|_| args.checkpoint_every),
        },
        init: match init {
            Some((path, fingerprint, model)) => Init::Model {
                path,
                model,
                fingerprint: fingerprint.clone(),
            },
            None => Init::Zero,
        },
        resume,
        // The data's fingerprint is for checkpoints only: without
        // checkpointing it waits until a Ctrl-C needs it.
        fingerprint: match args.checkpoint.is_some() || args.resume.is_some() {
            true => FingerprintWhen::Now,
            false => FingerprintWhen::BeforeReplacing,
        },
    }
}

/// Where a stop request saves the run: `--checkpoint`, else where it
/// resumed from (so that the same command continues it again), else beside
/// the model.
pub(super) fn checkpoint_path(args: &TrainArgs, output: &Path) -> PathBuf {
    args.checkpoint
        .clone()
        .or_else(|| args.resume.clone())
        .unwrap_or_else(|| {
            if crate::output::is_stdout(output) {
                default_model_path()
            } else {
                output.to_path_buf()
            }
            .with_extension("checkpoint.json")
        })
}

/// Prints the report (text or `--json`) and gives the exit status.
fn print_report(args: &TrainArgs, report: &TrainReport, output: &Path) -> Result<i32> {
    let text = super::stdout::summary(args.json, report, || report::render(report))?;
    super::stdout::print_summary(&text, crate::output::is_stdout(output))?;
    // Running every epoch is how the averaged and pocket variants end:
    // their model is the mean, or the best, over all of them. Only the
    // classic rule promises an epoch without mistakes.
    // A run the early-stopping rule ended did what was asked too.
    if report.converged || report.runs_every_epoch() || report.stop == Stop::EarlyStopped {
        return Ok(exit::SUCCESS);
    }
    // Also with --json: stdout holds only the JSON object. The model was
    // written; the cap is an error only for those who ask it to be.
    eprintln!("perceptron: {}", report.not_converged());
    Ok(if args.require_convergence {
        exit::NOT_CONVERGED
    } else {
        exit::SUCCESS
    })
}

/// The run's outputs checked against its data and one another
/// ([`crate::run::check_outputs`]).
pub(crate) fn check_outputs(args: &TrainArgs, output: &Path) -> Result<()> {
    #[cfg(feature = "plot")]
    let pictures = args.plot.as_deref();
    #[cfg(not(feature = "plot"))]
    let pictures = None;
    crate::run::check_outputs(&args.data, output, args.checkpoint.as_deref(), pictures)
}

/// What an interrupted run tells the user: where the state is and how to
/// continue. A run that was itself resumed already has `--resume`.
pub(crate) fn interrupted_message(
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

/// Progress, periodic checkpoints and Ctrl-C, for the training loop.
struct TrainObserver {
    progress: TrainProgress,
    checkpoint: Option<(PathBuf, usize)>,
    run: RunDescription,
    interrupted: Arc<AtomicBool>,
}

impl TrainObserver {
    /// Progress on a terminal (not with `--json`), periodic checkpoints
    /// when asked, and the stop requests of signals.
    fn new<F: Real>(args: &TrainArgs, run: &Run<F>) -> Self {
        TrainObserver {
            progress: TrainProgress::new(!args.json, run.data.rows(), args.training.max_epochs),
            checkpoint: args
                .checkpoint
                .as_ref()
                .map(|p| (p.clone(), args.checkpoint_every.max(1))),
            run: run.description.clone(),
            interrupted: super::interrupt::flag(),
        }
    }
}

impl<F: Real> Observer<F> for TrainObserver {
    fn on_progress(&mut self, epoch: usize, position: usize, rows: usize) {
        Observer::<F>::on_progress(&mut self.progress, epoch, position, rows);
    }

    fn on_epoch_end(&mut self, state: &State<F>) -> Result<()> {
        self.progress.on_epoch_end(state)?;
        match &self.checkpoint {
            Some((path, every)) if state.epoch.is_multiple_of(*every) => {
                checkpoint::save(path, &self.run, state)
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

/// Hooks for the tests of what a signal does at each moment: a test cannot
/// otherwise hit the few milliseconds between the loop's end and the
/// model's replacement.
mod test_hooks {
    /// Sleeps `PERCEPTRON_TEST_PAUSE_BEFORE_WRITING` milliseconds at each
    /// safe point of the writing, when set.
    pub(super) fn pause_before_writing() {
        let ms = std::env::var("PERCEPTRON_TEST_PAUSE_BEFORE_WRITING")
            .ok()
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(ms) = ms {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
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
