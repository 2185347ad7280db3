//! One rank's `train --distributed`: the flags translated, the block read,
//! the run prepared ([`Run::prepare_block`]) and trained
//! ([`rank::fit`]) with the other ranks, and the outputs written on rank 0
//! ([`Writing`]).

use super::*;

use std::path::PathBuf;

use crate::cli::progress::TrainProgress;
use crate::cli::train::args::MixArg;
use crate::data;
use crate::distributed::agree::{Agreed, DescribeFailure, agree};
use crate::distributed::block::RankBlock;
use crate::distributed::load::{self, Block};
use crate::distributed::rank::{self, Checkpoints};
use crate::distributed::report::DistributedReport;
use crate::distributed::{MeteredTransport, Mixing, Mode, Transport};
use crate::run::Run;
use crate::train::{CheckedParams, Observer, State};

use super::write::{Writing, Written, print_report};

/// Everything one rank does; `Ok` is the exit status. `stop` tells
/// whether this rank was asked to stop (a signal): the ranks agree on
/// it at each safe point, so a request to any rank stops them all.
pub fn train<F: Real>(
    net: &MeteredTransport<'_>,
    args: &TrainArgs,
    resume: Option<(&Path, &str)>,
    mode: DistributedArg,
    describe: DescribeFailure<'_>,
    stop: &dyn Fn() -> bool,
) -> Agreed<i32> {
    let t: &dyn Transport = net;
    let (mode, mixing) = agree(t, settings(args, mode), describe)?;
    let (params, output, paths) = agree(t, checked(args, mode), describe)?;
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
    let warnings = observer.finish();
    let record = ranked.mix_record(&block);
    let report_extra = DistributedReport::of_ranks(&ranked, mixing, t.size());
    let fit = ranked.fit;

    let mut writing = Writing {
        t,
        args,
        run: &mut run,
        block: &block,
        fit: &fit,
        record,
        output: &output,
        checkpoint: checkpoint_path,
        stop,
        describe,
    };
    let report = match writing.write(csv.as_ref(), libsvm.as_ref(), report_extra, warnings)? {
        Written::Saved(report) => report,
        Written::Stopped(status) => return Ok(status),
    };
    Ok(print_report(args, report.as_deref(), &fit, &output))
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

/// The training parameters (checked, and accepted by `mode`), the model's
/// path, and DATA as files.
fn checked(args: &TrainArgs, mode: Mode) -> Result<(CheckedParams, PathBuf, Vec<PathBuf>)> {
    let params = args.params().check()?;
    crate::distributed::check_params(&params, mode)?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(crate::cli::args::default_model_path);
    let paths = checked_paths(args, &output)?;
    Ok((params, output, paths))
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

impl RankObserver<'_> {
    /// Ends the progress line (rank 0) and gives the warnings it kept.
    fn finish(&mut self) -> Vec<String> {
        let Some(p) = self.progress.as_mut() else {
            return Vec::new();
        };
        p.finish();
        p.take_warnings()
    }
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
