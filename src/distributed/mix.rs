//! Mix mode: iterative parameter mixing (McDonald, Hall & Mann,
//! "Distributed training strategies for the structured perceptron", NAACL
//! 2010). A different algorithm from the textbook loop, which scales almost
//! linearly with the ranks.
//!
//! An epoch: every rank runs one epoch of the classic loop (the margin rule
//! and one-vs-rest heads included) over its own block, starting from the
//! mixed weights; then the ranks' weights are mixed, w = Σ_i μ_i·w_i, with
//! μ_i = 1/K (uniform) or μ_i = k_i/Σ_j k_j, rank i's share of the epoch's
//! mistakes (`--mix errors`, per head). The run stops after an epoch in
//! which no rank made a mistake, or at the epoch cap.
//!
//! **The arithmetic of the mix is fixed**, so the result is the same bits
//! from run to run whatever MPI does: each rank forms μ_i·w_i,k in f64, the
//! products are summed in f64 over a fixed binary tree of the ranks (at
//! level l, rank r with r mod 2^(l+1) = 0 adds rank r + 2^l's partial sum to
//! its own, in that order), and rank 0 rounds the sum to the training
//! precision and broadcasts it. A head no rank updated in the epoch keeps
//! its weights (every rank holds the same ones).
//!
//! **The bound.** For separable data with margin γ and radius D, the paper
//! (Theorem 3) shows Σ_n Σ_i μ_i,n·k_i,n <= (D/γ)² for the mixing weights of
//! every epoch n, when training starts from zero (for uniform mixing: the
//! mistakes of all ranks, divided by K; for error mixing, Σ_i k_i²/Σ_j k_j
//! per epoch). A converged run reports that sum with the final model's γ.

use crate::data::Dataset;
use crate::engine::MarginEngine;
use crate::float::Real;
use crate::train::{
    AllRowsHere, CheckedParams, Epoch, Fallback, Observer, Outcome, Placement, State, Stepper,
    Swept, drive,
};

use super::Mixing;
use super::agree::{Agreed, DescribeFailure, Failure, agree, broken};
use super::transport::{MeteredTransport, Traffic, Transport, all_gather_many};
use super::wire::{Reader, Writer};

/// A mix run's result on one rank (the state is every rank's).
pub struct Mix<F> {
    pub outcome: Outcome<F>,
    /// Per epoch (a resumed run's earlier epochs included), each rank's
    /// mistakes.
    pub rank_mistakes: Vec<Vec<u64>>,
    /// What this rank sent and received in each epoch of this run.
    pub traffic: Vec<Traffic>,
}

impl<F> Mix<F> {
    /// Σ_n Σ_i μ_i,n·k_i,n, the paper's bounded quantity, over the epochs.
    pub fn weighted_mistakes(&self, mixing: Mixing) -> f64 {
        weighted_mistakes(&self.rank_mistakes, mixing)
    }
}

/// Σ_n Σ_i μ_i,n·k_i,n over epochs of per-rank mistakes `k`.
pub fn weighted_mistakes(rank_mistakes: &[Vec<u64>], mixing: Mixing) -> f64 {
    rank_mistakes
        .iter()
        .map(|k| {
            let total: u64 = k.iter().sum();
            match mixing {
                Mixing::Uniform => total as f64 / k.len().max(1) as f64,
                Mixing::Errors if total == 0 => 0.0,
                Mixing::Errors => {
                    k.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>() / total as f64
                }
            }
        })
        .sum()
}

/// Called after each epoch with the mixed state and each rank's mistakes
/// in every epoch so far.
pub type EpochEnd<'a, F> = &'a mut dyn FnMut(&State<F>, &[Vec<u64>]) -> crate::error::Result<()>;

/// Trains with iterative parameter mixing: `block` is this rank's rows (in
/// its visit order), `start` the mixed state at an epoch's start (the same
/// on every rank), `history` the earlier epochs' per-rank mistakes of a
/// resumed run. Only the classic variant, the margin rule and one-vs-rest.
/// `observer` gets progress and warnings and is asked at each epoch's end
/// whether to stop; `on_epoch` gets the mixed state and the per-rank
/// mistakes so far after each epoch (rank 0 writes checkpoints there).
#[allow(clippy::too_many_arguments)]
pub fn train<'e, F: Real>(
    net: &MeteredTransport<'_>,
    block: &Dataset<F>,
    params: &CheckedParams,
    start: State<F>,
    history: Vec<Vec<u64>>,
    mixing: Mixing,
    engine: Box<dyn MarginEngine<F> + 'e>,
    fallback: Fallback<'_, 'e, F>,
    observer: &mut dyn Observer<F>,
    on_epoch: EpochEnd<'_, F>,
    describe: DescribeFailure<'_>,
) -> Agreed<Mix<F>> {
    let t: &dyn Transport = net;
    // The same parameters on every rank: the same answer, without a message.
    if let Err(e) = super::check_params(params, super::Mode::Mix) {
        return Err(super::agree::everywhere(t, &e, describe));
    }
    let held = block.rows();
    let heads = params.heads(block.classes.len());
    let mut start = start;
    start.position = 0;
    let made = Stepper::new(
        block,
        params,
        start,
        Placement::whole(held),
        engine,
        fallback,
    );
    let mut st = agree(t, made, describe)?;
    let mut epochs = Epochs {
        net,
        describe,
        heads,
        mixing,
        observer,
        on_epoch,
        rank_mistakes: history,
        traffic: Vec::new(),
        last: net.traffic(),
    };
    let (stop, epoch_seconds) = drive(&mut st, params.max_epochs, None, &mut epochs)?;
    let Epochs {
        rank_mistakes,
        traffic,
        ..
    } = epochs;
    Ok(Mix {
        outcome: st.finish(stop, epoch_seconds),
        rank_mistakes,
        traffic,
    })
}

/// Mix mode's epochs for [`drive`]: an epoch of this rank's block from the
/// mixed weights, then the mix; the epoch's end reported and a stop
/// request agreed on by every rank.
struct Epochs<'a, 'n, 'o, 'p, F> {
    net: &'a MeteredTransport<'n>,
    describe: DescribeFailure<'a>,
    heads: usize,
    mixing: Mixing,
    observer: &'o mut dyn Observer<F>,
    on_epoch: EpochEnd<'p, F>,
    /// Per epoch, each rank's mistakes.
    rank_mistakes: Vec<Vec<u64>>,
    /// What this rank sent and received in each epoch of this run.
    traffic: Vec<Traffic>,
    last: Traffic,
}

impl<F: Real> Epoch<F> for Epochs<'_, '_, '_, '_, F> {
    type Error = Failure;

    fn sweep(&mut self, st: &mut Stepper<'_, '_, '_, F>) -> Agreed<Swept> {
        let (t, describe, heads) = (self.net as &dyn Transport, self.describe, self.heads);
        let held = st.data().rows();
        let walked = st
            .set_position(0)
            .and_then(|_| st.advance(held, &mut AllRowsHere, &mut Quiet(&mut *self.observer)));
        agree(t, walked, describe)?;
        let mine = st.state();
        let mut counts = vec![mine.mistakes_in_epoch];
        if heads > 1 {
            counts.extend_from_slice(&mine.head_mistakes_in_epoch);
        }
        let all = all_gather_many(t, &counts);
        let per_rank: Vec<u64> = all.iter().map(|c| c[0]).collect();
        let total: u64 = per_rank.iter().sum();
        let dim = st.dim();
        let mut mixed = st.state().weights.clone();
        for h in 0..heads {
            // Head h's mistakes on each rank.
            let k: Vec<u64> = all
                .iter()
                .map(|c| c[if heads > 1 { 1 + h } else { 0 }])
                .collect();
            let head_total: u64 = k.iter().sum();
            if head_total == 0 {
                continue;
            }
            let mu = match self.mixing {
                Mixing::Uniform => 1.0 / t.size() as f64,
                Mixing::Errors => k[t.rank()] as f64 / head_total as f64,
            };
            let range = h * dim..(h + 1) * dim;
            let part = mix_head(t, &st.state().weights[range.clone()], mu);
            mixed[range].copy_from_slice(&part);
        }
        let head_totals: Vec<u64> = if heads > 1 {
            (0..heads)
                .map(|h| all.iter().map(|c| c[1 + h]).sum())
                .collect()
        } else {
            Vec::new()
        };
        let adopted = st.adopt(|s| {
            s.weights = mixed;
            s.mistakes_in_epoch = total;
            if heads > 1 {
                s.head_mistakes_in_epoch = head_totals;
            }
        });
        agree(t, adopted, describe)?;
        self.rank_mistakes.push(per_rank);
        Ok(Swept::End)
    }

    fn ended(&mut self, st: &mut Stepper<'_, '_, '_, F>, _mistakes: u64) -> Agreed<bool> {
        let t: &dyn Transport = self.net;
        let saved = (self.on_epoch)(st.state(), &self.rank_mistakes);
        agree(t, saved, self.describe)?;
        self.observer
            .on_progress(st.state().epoch, 0, st.data().rows());
        self.traffic.push(self.net.since(&mut self.last));
        Ok(super::transport::any(t, self.observer.should_stop()))
    }
}

/// Σ_i μ_i·w_i over the ranks (`mu` and `w` this rank's), summed in f64 over
/// the fixed tree, rounded to `F` by rank 0 and broadcast: the same bits on
/// every rank, whatever the transport.
pub fn mix_head<F: Real>(t: &dyn Transport, w: &[F], mu: f64) -> Vec<F> {
    let (k, me) = (t.size(), t.rank());
    let mut acc: Vec<f64> = w.iter().map(|v| mu * v.to_f64()).collect();
    let mut step = 1;
    while step < k {
        if me % (2 * step) == 0 {
            if me + step < k {
                let bytes = t.receive(me + step);
                let mut r = Reader::new(&bytes);
                let theirs: Vec<f64> = r.reals().unwrap_or_else(|e| broken(t, &e));
                for (a, b) in acc.iter_mut().zip(&theirs) {
                    *a += *b;
                }
            }
        } else if me % (2 * step) == step {
            let mut wr = Writer::default();
            wr.reals(&acc);
            t.send(me - step, &wr.finish());
            break;
        }
        step *= 2;
    }
    let mut out = Writer::default();
    if me == 0 {
        let rounded: Vec<F> = acc.iter().map(|&v| F::from_f64(v)).collect();
        out.reals(&rounded);
    }
    let mut bytes = out.finish();
    t.broadcast(0, &mut bytes);
    Reader::new(&bytes)
        .reals()
        .unwrap_or_else(|e| broken(t, &e))
}

/// The observer an epoch reports to: warnings pass; stops wait for the
/// epoch's end.
struct Quiet<'o, F>(&'o mut dyn Observer<F>);

impl<F> Observer<F> for Quiet<'_, F> {
    fn on_warning(&mut self, message: &str) {
        self.0.on_warning(message);
    }
}
