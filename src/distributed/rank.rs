//! One rank's training: a run prepared on the rank's block
//! ([`Run::prepare_block`]) trained with the other ranks in exact or mix
//! mode, on the run's backend (a GPU taking the adapter of its rank on the
//! machine) with the CPU engine as the fallback, into the fit of the whole.

use std::path::Path;
use std::time::Instant;

use crate::engine::backend;
use crate::engine::{MarginEngine, ReferenceEngine};
use crate::error::Result;
use crate::float::Real;
use crate::run::Run;
use crate::train::checkpoint::{self, MixRecord};
use crate::train::{Fit, Observer, State};

use super::Mode;
use super::agree::{Agreed, DescribeFailure, agree};
use super::block::RankBlock;
use super::exact::{self, Steps};
use super::mix;
use super::transport::{MeteredTransport, Traffic, Transport};

/// A rank's fit, and how the ranks got there.
pub struct RankFit<F> {
    /// The whole run's fit (the same on every rank).
    pub fit: Fit<F>,
    pub mode: Mode,
    /// What this rank sent and received in each epoch of this run.
    pub traffic: Vec<Traffic>,
    /// Exact mode: the steps the run took.
    pub steps: Option<Steps>,
    /// Mix mode: each rank's mistakes per epoch, a resumed run's earlier
    /// epochs included.
    pub rank_mistakes: Option<Vec<Vec<u64>>>,
}

impl<F> RankFit<F> {
    /// The mix record a checkpoint of this fit carries (mix mode only).
    pub fn mix_record(&self, block: &RankBlock<'_>) -> Option<MixRecord> {
        mix_record(block, self.rank_mistakes.as_deref()?)
    }
}

/// Periodic checkpoints, which rank 0 saves at the end of every `every`-th
/// epoch.
#[derive(Clone, Copy)]
pub struct Checkpoints<'a> {
    pub path: &'a Path,
    pub every: usize,
}

/// Trains `run`, prepared on this rank's `block`, with the other ranks of
/// `net` in `mode` (`block.mixing` says how mix mode mixes). `observer`
/// gets progress, warnings and epoch ends, and is asked at each epoch's end
/// whether to stop (the ranks agree: a request to one stops all).
pub fn fit<F: Real>(
    net: &MeteredTransport<'_>,
    run: &mut Run<F>,
    block: &RankBlock<'_>,
    mode: Mode,
    observer: &mut dyn Observer<F>,
    checkpoints: Option<Checkpoints<'_>>,
    describe: DescribeFailure<'_>,
) -> Agreed<RankFit<F>> {
    let t: &dyn Transport = net;
    let start = agree(t, run.take_start(), describe)?;
    let history = run.resumed_mix.take().map(|r| r.rank_mistakes);
    let run = &*run;
    let params = run.trainer.params();
    let data = &run.data;
    let (engine, note) = agree(t, engine_for(run, start.epoch, t), describe)?;
    let bias = params.bias;
    let mut fallback = || backend::cpu_engine(data, bias);
    let periodic = |epoch: usize| checkpoints.and_then(|c| c.due(t.rank(), epoch));
    let t0 = Instant::now();
    let (outcome, traffic, steps, rank_mistakes) = match mode {
        Mode::Exact => {
            let mut observer = EpochCheckpoints {
                inner: observer,
                save: &|s: &State<F>| match periodic(s.epoch) {
                    Some(path) => checkpoint::save(path, &run.description, s),
                    None => Ok(()),
                },
            };
            let r = exact::train(
                net,
                data,
                run.placement.clone(),
                params,
                start,
                engine,
                &mut fallback,
                &mut observer,
                describe,
            )?;
            (r.outcome, r.traffic, Some(r.steps), None)
        }
        Mode::Mix => {
            let mut save = |s: &State<F>, ranks: &[Vec<u64>]| -> Result<()> {
                match periodic(s.epoch) {
                    Some(path) => {
                        let record = mix_record(block, ranks);
                        checkpoint::save_mix(path, &run.description, s, record.as_ref())
                    }
                    None => Ok(()),
                }
            };
            let r = mix::train(
                net,
                data,
                params,
                start,
                history.unwrap_or_default(),
                block.mixing.unwrap_or_default(),
                engine,
                &mut fallback,
                observer,
                &mut save,
                describe,
            )?;
            (r.outcome, r.traffic, None, Some(r.rank_mistakes))
        }
    };
    let mut fit = whole_fit(t, run, block, outcome, t0.elapsed().as_secs_f64());
    fit.backend_note = note;
    Ok(RankFit {
        fit,
        mode,
        traffic,
        steps,
        rank_mistakes,
    })
}

impl<'a> Checkpoints<'a> {
    /// Where the checkpoint of the end of `epoch` goes, if this rank saves
    /// one then (rank 0, every `every`-th epoch).
    fn due(self, rank: usize, epoch: usize) -> Option<&'a Path> {
        (rank == 0 && epoch.is_multiple_of(self.every.max(1))).then_some(self.path)
    }
}

/// The fit of the whole run from a rank's outcome: the theorem's figures
/// are of every rank's rows (a collective step).
fn whole_fit<F: Real>(
    t: &dyn Transport,
    run: &Run<F>,
    block: &RankBlock<'_>,
    outcome: crate::train::Outcome<F>,
    seconds: f64,
) -> Fit<F> {
    let params = run.trainer.params();
    let (data, bias) = (&run.data, params.bias);
    let heads = params.heads(data.classes.len());
    Fit::from_outcome(outcome, params, block.whole.rows, None, seconds, |w| {
        super::theory::analyse(t, data, w, bias, heads)
    })
}

/// A mix-mode checkpoint's record of the ranks, the mixing and each rank's
/// mistakes so far.
fn mix_record(block: &RankBlock<'_>, rank_mistakes: &[Vec<u64>]) -> Option<MixRecord> {
    block.mixing.map(|m| MixRecord {
        ranks: block.t.size(),
        mixing: m.name().into(),
        rank_mistakes: rank_mistakes.to_vec(),
    })
}

/// This rank's engine: the run's backend, a GPU taking the adapter of its
/// rank on the machine (modulo the adapters); none for an empty block.
/// The run starts in (0-based) epoch `from` (later when resumed).
#[allow(clippy::type_complexity)]
fn engine_for<'d, F: Real>(
    run: &'d Run<F>,
    from: usize,
    t: &dyn Transport,
) -> Result<(Box<dyn MarginEngine<F> + 'd>, Option<String>)> {
    if run.data.rows() == 0 {
        return Ok((Box::new(ReferenceEngine), None));
    }
    let (backend, gpu) = run.trainer.engine_options();
    let mut gpu = gpu.clone();
    gpu.spread = Some(t.local_rank());
    let params = run.trainer.params();
    let passes = params.passes_left(&run.data, from);
    let chosen = backend::choose_to_train(backend, &gpu, &run.data, params.bias, passes)?;
    Ok((chosen.engine, chosen.note))
}

/// Rank 0 saves periodic checkpoints at exact mode's epoch ends.
struct EpochCheckpoints<'a, 'o, F> {
    inner: &'o mut dyn Observer<F>,
    save: &'a dyn Fn(&State<F>) -> Result<()>,
}

impl<F: Real> Observer<F> for EpochCheckpoints<'_, '_, F> {
    fn on_progress(&mut self, epoch: usize, position: usize, rows: usize) {
        self.inner.on_progress(epoch, position, rows);
    }

    fn on_epoch_end(&mut self, state: &State<F>) -> Result<()> {
        self.inner.on_epoch_end(state)?;
        (self.save)(state)
    }

    fn on_warning(&mut self, message: &str) {
        self.inner.on_warning(message);
    }

    fn should_stop(&mut self) -> bool {
        self.inner.should_stop()
    }
}
