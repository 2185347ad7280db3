//! `train --distributed exact|mix`: the same command on several processes,
//! launched by `mpirun` or `srun` (see [`crate::distributed`]).
//!
//! Every rank reads its block of DATA and trains; rank 0 alone writes the
//! model, the checkpoints and the report, and prints. A failure on any rank
//! is agreed on by all (so none waits forever): rank 0 prints it, naming
//! the rank, and every rank exits with its status; nothing is written. A
//! build without the `mpi` feature answers `--distributed` with how to get
//! one.

use std::path::Path;

use super::args::{DistributedArg, TrainArgs};
use crate::error::{Error, Result};
use crate::float::Real;

/// How to get a perceptron that trains on several processes.
const BUILD_HINT: &str = "--distributed needs a perceptron built with MPI: install Open MPI \
    (on Debian or Ubuntu: apt-get install openmpi-bin libopenmpi-dev libclang-dev), build with \
    `cargo build --release --features mpi`, and launch it with `mpirun -np K perceptron train \
    DATA --distributed exact` (or srun)";

/// Runs `train --distributed`.
#[cfg(not(feature = "mpi"))]
pub fn run<F: Real>(
    _args: &TrainArgs,
    _resume: Option<(&Path, &str)>,
    _mode: DistributedArg,
) -> Result<i32> {
    Err(Error::Usage(format!(
        "this perceptron was built without MPI. {BUILD_HINT}"
    )))
}

/// Runs `train --distributed` on the MPI job this process belongs to (a
/// job of one rank when started without a launcher).
#[cfg(feature = "mpi")]
pub fn run<F: Real>(
    args: &TrainArgs,
    resume: Option<(&Path, &str)>,
    mode: DistributedArg,
) -> Result<i32> {
    use crate::distributed::{Counted, Transport};
    let Some(mpi) = crate::distributed::mpi::Mpi::start() else {
        return Err(Error::System(format!(
            "MPI could not be started in this process. {BUILD_HINT}"
        )));
    };
    let net = Counted::new(&mpi);
    let describe = |e: &Error| {
        (
            crate::cli::errors::status(e),
            crate::cli::errors::message(e),
        )
    };
    let interrupted = crate::cli::interrupt::flag();
    let stop = move || interrupted.load(std::sync::atomic::Ordering::SeqCst);
    Ok(
        match on_ranks::train::<F>(&net, args, resume, mode, &describe, &stop) {
            Ok(code) => code,
            Err(failure) => {
                if net.rank() == 0 {
                    eprintln!("perceptron: error: {failure}");
                }
                failure.status
            }
        },
    )
}

// Without MPI the unit tests run it on ranks that are threads.
#[cfg(any(feature = "mpi", test))]
mod on_ranks {
    use super::*;

    use std::path::PathBuf;

    use crate::cli::progress::TrainProgress;
    use crate::cli::train::args::MixArg;
    use crate::cli::train::report::{self, DistributedReport, ReportLabels, Sources, TrainReport};
    use crate::data;
    use crate::distributed::agree::{Agreed, Describe, agree};
    use crate::distributed::block::RankBlock;
    use crate::distributed::load::{self, Block};
    use crate::distributed::rank::{self, Checkpoints, RankFit};
    use crate::distributed::{Counted, Mixing, Mode, Reduce, Transport, mix};
    use crate::error::exit;
    use crate::model::DataLayout;
    use crate::model::DistributedInfo;
    use crate::run::Run;
    use crate::train::checkpoint;
    use crate::train::{Fit, Observer, State, Stop, Variant};

    /// Everything one rank does; `Ok` is the exit status. `stop` tells
    /// whether this rank was asked to stop (a signal): the ranks agree on
    /// it at each safe point, so a request to any rank stops them all.
    pub fn train<F: Real>(
        net: &Counted<'_>,
        args: &TrainArgs,
        resume: Option<(&Path, &str)>,
        mode: DistributedArg,
        describe: Describe<'_>,
        stop: &dyn Fn() -> bool,
    ) -> Agreed<i32> {
        let t: &dyn Transport = net;
        let (mode, mixing) = agree(t, settings(args, mode), describe)?;
        let params = agree(t, args.params().check().map_err(Error::from), describe)?;
        agree(t, crate::distributed::check_params(&params, mode), describe)?;
        let output = args
            .output
            .clone()
            .unwrap_or_else(crate::cli::args::default_model_path);
        let paths = agree(t, checked_paths(args, &output), describe)?;
        let opts = args.data_args.load_options(args.training.positive.clone());
        let multiclass = args.multiclass.scheme.is_some();
        let Block {
            data,
            csv,
            libsvm,
            whole,
        } = load::load::<F>(t, &paths, &opts, multiclass, describe)?;
        // The --init model is read before the run's one collective step.
        let init = agree(t, super::super::init_model(args), describe)?;
        let block = RankBlock {
            t,
            whole: &whole,
            multiclass,
            mixing,
        };
        let inputs = super::super::run_inputs(args, params, data, init.as_ref(), resume);
        let prepared = Run::prepare_block(inputs, &block).and_then(|run| {
            if resume.is_some() {
                crate::cli::train::resume::refuse_unadopted_output(args)?;
            }
            Ok(run)
        });
        let mut run = agree(t, prepared, describe)?;
        let checkpoint_path = super::super::checkpoint_path(args, &output);
        let mut observer = RankObserver {
            progress: (t.rank() == 0)
                .then(|| TrainProgress::new(!args.json, whole.rows, args.training.max_epochs)),
            stop,
            kill_in_epoch: kill_hook(t.rank()),
        };
        let checkpoints = args.checkpoint.as_ref().map(|_| Checkpoints {
            path: &checkpoint_path,
            every: args.checkpoint_every,
        });
        let ranked = rank::fit(
            net,
            &mut run,
            &block,
            mode,
            &mut observer,
            checkpoints,
            describe,
        )?;
        if let Some(p) = observer.progress.as_mut() {
            p.finish();
        }
        let warnings = observer
            .progress
            .as_mut()
            .map(TrainProgress::take_warnings)
            .unwrap_or_default();
        let record = ranked.mix_record(&block);
        let report_extra = distributed_report(&ranked, mixing, t.size());
        let fit = ranked.fit;

        // A stop request is honoured at the loop's end, after the model is
        // staged and before it replaces the old one (as in one process):
        // the trained state is saved and nothing is replaced.
        let stopped = |run: &mut Run<F>, while_writing: bool| -> Agreed<i32> {
            run.take_block_fingerprint(&block);
            let saved = if t.rank() == 0 {
                checkpoint::save_mix(
                    &checkpoint_path,
                    &run.description,
                    &fit.state,
                    record.as_ref(),
                )
            } else {
                Ok(())
            };
            agree(t, saved, describe)?;
            if t.rank() == 0 {
                let message = super::super::interrupted_message(
                    fit.state.epoch,
                    fit.state.position,
                    &checkpoint_path,
                    args.resume.as_deref(),
                );
                eprintln!(
                    "perceptron: {}",
                    super::super::write::stopped_message(message, while_writing, &output)
                );
            }
            Ok(exit::INTERRUPTED)
        };
        if fit.stop == Stop::Interrupted {
            return stopped(&mut run, false);
        }
        if asked_to_stop(t, stop) {
            return stopped(&mut run, true);
        }

        // Rank 0 writes the model (staged until the commit below) and
        // makes the report.
        let batch = (t.rank() == 0).then(crate::output::Batch::begin);
        let written = if t.rank() == 0 {
            model_and_report(
                args,
                &run,
                &fit,
                csv.as_ref(),
                libsvm.as_ref(),
                &whole,
                &output,
                report_extra,
                warnings,
            )
        } else {
            Ok(None)
        };
        let report = agree(t, written, describe)?;
        // On standard output the model is out once saved: the run goes on
        // to its end from there.
        if !crate::output::is_stdout(&output) && asked_to_stop(t, stop) {
            drop(batch);
            return stopped(&mut run, true);
        }
        agree(
            t,
            batch.map_or(Ok(()), crate::output::Batch::commit),
            describe,
        )?;
        // Running every epoch is how the averaged and pocket variants end;
        // only the classic rule promises an epoch without mistakes.
        let success = fit.converged() || matches!(fit.variant, Variant::Averaged | Variant::Pocket);
        if let Some(report) = report {
            let printed = if args.json {
                serde_json::to_string(&report)
                    .map_err(|e| Error::Train(e.to_string()))
                    .map(|text| text + "\n")
            } else {
                Ok(report::render(&report))
            }
            .and_then(|text| {
                crate::cli::stdout::print_summary(&text, crate::output::is_stdout(&output))
            });
            if let Err(e) = printed {
                eprintln!(
                    "perceptron: {} {}",
                    crate::cli::errors::error_tag(),
                    crate::cli::errors::message(&e)
                );
            }
            if !success {
                eprintln!("perceptron: {}", report.not_converged());
            }
        }
        Ok(if success || !args.require_convergence {
            exit::SUCCESS
        } else {
            exit::NOT_CONVERGED
        })
    }

    /// A safe point: whether any rank was asked to stop (every rank asks
    /// at the same point).
    fn asked_to_stop(t: &dyn Transport, stop: &dyn Fn() -> bool) -> bool {
        super::super::test_hooks::pause_before_writing();
        let mut asked = [stop() as u64];
        t.all_reduce(Reduce::Max, &mut asked);
        asked[0] == 1
    }

    /// The mode and mixing the flags ask for, refusing what they exclude.
    fn settings(args: &TrainArgs, mode: DistributedArg) -> Result<(Mode, Option<Mixing>)> {
        let mixing = args.mix.map(|m| match m {
            MixArg::Uniform => Mixing::Uniform,
            MixArg::Errors => Mixing::Errors,
        });
        match mode {
            DistributedArg::Exact if mixing.is_some() => Err(Error::Usage(
                "--mix applies to --distributed mix; --distributed exact mixes nothing".into(),
            )),
            DistributedArg::Exact => Ok((Mode::Exact, None)),
            DistributedArg::Mix => Ok((Mode::Mix, Some(mixing.unwrap_or_default()))),
        }
    }

    /// DATA as files, and outputs that overwrite none of them.
    fn checked_paths(args: &TrainArgs, output: &Path) -> Result<Vec<PathBuf>> {
        #[cfg(feature = "plot")]
        if args.plot.is_some() {
            return Err(Error::Usage(
                "--plot draws from the whole dataset in one process; train without \
                 --distributed, or draw afterwards with `perceptron plot`"
                    .into(),
            ));
        }
        if args.checkpoint_every == 0 {
            return Err(Error::Usage(
                "--checkpoint-every must be at least 1 (epochs between checkpoints)".into(),
            ));
        }
        if let Some(c) = &args.checkpoint {
            crate::output::check_not_stdout(c, "--checkpoint")?;
        }
        let paths = data::shards::expand(&args.data)?;
        if paths.iter().any(|p| data::source::is_stdin(p)) {
            return Err(Error::Usage(
                "--distributed reads DATA from files every process can open; `-` (standard \
                 input) reaches one process only: save it to a file first"
                    .into(),
            ));
        }
        if paths.is_empty() {
            return Err(Error::Usage(
                "--distributed needs DATA: one or more files every process can read (a \
                 shared filesystem)"
                    .into(),
            ));
        }
        crate::output::check_destination(output)?;
        super::super::check_outputs(args, output)?;
        Ok(paths)
    }

    /// What the report says of the ranks: the mode, the mixing, each
    /// rank's mistakes (mix mode) or the steps (exact mode), the traffic.
    fn distributed_report<F>(
        ranked: &RankFit<F>,
        mixing: Option<Mixing>,
        ranks: usize,
    ) -> DistributedReport {
        DistributedReport {
            mode: ranked.mode.name().into(),
            ranks,
            mixing: mixing.map(|m| m.name().into()),
            rank_mistakes: ranked.rank_mistakes.clone(),
            weighted_mistakes: ranked
                .rank_mistakes
                .as_ref()
                .zip(mixing)
                .map(|(k, m)| mix::weighted_mistakes(k, m)),
            mix_bound_holds: None,
            steps: ranked.steps.clone(),
            traffic: ranked.traffic.clone(),
        }
    }

    /// Rank 0: the model (saved, or staged in an open batch) and the
    /// report.
    #[allow(clippy::too_many_arguments)]
    fn model_and_report<F: Real>(
        args: &TrainArgs,
        run: &Run<F>,
        fit: &Fit<F>,
        csv: Option<&crate::data::CsvInfo>,
        libsvm: Option<&crate::data::LibsvmInfo>,
        whole: &load::Whole,
        output: &Path,
        extra: DistributedReport,
        warnings: Vec<String>,
    ) -> Result<Option<TrainReport>> {
        let data = &run.data;
        let layout = DataLayout::of(
            data.format,
            csv,
            libsvm,
            args.data_args.csv.label_column.as_ref(),
        );
        let mut model = run.model(fit, Some(layout))?;
        model.training.rows = whole.rows;
        model.training.data = whole.source.clone();
        model.training.distributed = Some(DistributedInfo {
            mode: extra.mode.clone(),
            ranks: extra.ranks,
            mixing: extra.mixing.clone(),
        });
        model.save(output)?;
        let sources = Sources {
            run: &run.description,
            fit,
            model: &model,
            data,
            csv,
            libsvm,
            output,
            requested: args.backend.resolve().0,
        };
        let mut report = TrainReport::new(sources, warnings, Vec::new());
        report.data = whole.source.clone();
        report.rows = whole.rows;
        if let ReportLabels::Binary {
            positive_label,
            positive_rows,
            negative_rows,
            ..
        } = &mut report.labels
        {
            // The classes' counts are the whole dataset's.
            *positive_rows = data
                .classes
                .iter()
                .filter(|c| crate::data::labels::same_label(&c.text, positive_label))
                .map(|c| c.count as usize)
                .sum::<usize>();
            *negative_rows = whole.rows - *positive_rows;
        }
        let mut extra = extra;
        if extra.mode == "mix" {
            // The single-process theorem bounds M; mixing bounds the
            // mixing-weighted mistakes instead.
            extra.mix_bound_holds = report
                .mistake_bound
                .zip(extra.weighted_mistakes)
                .map(|(b, w)| w <= b * (1.0 + crate::train::theory::BOUND_SLACK));
            report.bound_holds = None;
        }
        report.distributed = Some(extra);
        Ok(Some(report))
    }

    /// The test hook `PERCEPTRON_DISTRIBUTED_KILL=RANK:EPOCH`: that rank
    /// kills itself (SIGKILL, as the out-of-memory killer would) during that
    /// epoch (1-based), for the tests of a job losing a rank.
    const KILL_ENV: &str = "PERCEPTRON_DISTRIBUTED_KILL";

    fn kill_hook(rank: usize) -> Option<usize> {
        let v = std::env::var(KILL_ENV).ok()?;
        let (r, e) = v.trim().split_once(':')?;
        (r.parse::<usize>().ok()? == rank).then_some(e.parse().ok()?)
    }

    fn die() -> ! {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: sends a signal to this very process; no memory is involved.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        std::process::abort()
    }

    /// Progress and warnings on rank 0; stop requests from any rank (the
    /// run stops at the next epoch's end on every rank).
    struct RankObserver<'s> {
        progress: Option<TrainProgress>,
        stop: &'s dyn Fn() -> bool,
        kill_in_epoch: Option<usize>,
    }

    impl<F: Real> Observer<F> for RankObserver<'_> {
        fn on_progress(&mut self, epoch: usize, position: usize, rows: usize) {
            if self.kill_in_epoch == Some(epoch + 1) {
                die();
            }
            if let Some(p) = &mut self.progress {
                Observer::<F>::on_progress(p, epoch, position, rows);
            }
        }

        fn on_epoch_end(&mut self, state: &State<F>) -> Result<()> {
            match &mut self.progress {
                Some(p) => p.on_epoch_end(state),
                None => Ok(()),
            }
        }

        fn on_warning(&mut self, message: &str) {
            if let Some(p) = &mut self.progress {
                Observer::<F>::on_warning(p, message);
            }
        }

        fn should_stop(&mut self) -> bool {
            (self.stop)()
        }
    }
}

#[cfg(test)]
mod tests;
