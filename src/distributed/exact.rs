//! Exact mode: the textbook model across ranks, bit for bit the one a
//! single process trains, whatever the number of ranks.
//!
//! The result depends only on the sequence of reference decisions and
//! updates in visit order. So every rank keeps a replica of the exact state
//! (weights, counters, the variants' bookkeeping), and the run advances in
//! steps that all ranks take together:
//!
//! 1. **Certified scan.** Each rank certifies its own rows from the current
//!    position on under the current weights ([`Stepper::first_uncertain`]:
//!    engine passes, valid under drift, so a window is computed once and
//!    rescanned after each update). An all-reduce (min) of the positions
//!    finds the first row of the epoch that is not certainly correct, and
//!    its owner. The rows before it are correct for every rank
//!    ([`Stepper::pass_correct`]).
//! 2. **Walk.** The owner walks from that row with the one loop
//!    ([`Stepper::advance`]: all its cores, or its GPU), in chunks, while
//!    chunks still hold mistakes and its rows follow one another in the
//!    visit order; the other ranks wait. It then broadcasts the exact new
//!    values of what its updates changed ([`Delta`]), which the others
//!    write over their replicas, and where it stopped.
//!
//! When mistakes are dense a walk covers a whole block (one message per
//! block per epoch); when they are sparse (late epochs, the final clean
//! epoch, which is a full pass) the scan certifies every block at once. A
//! pocket evaluation counts every rank's rows (an all-reduce of exact
//! counts). Only integers, row positions, exact weight values and whole
//! vectors cross between ranks: nothing MPI's reduction order could change.
//! With `--shuffle` the visit order is the single-process permutation over
//! the blocks, so consecutive visits hop between ranks and walks are short:
//! exact, but slower.

use std::time::Instant;

use crate::data::Dataset;
use crate::engine::MarginEngine;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::{
    CheckedParams, Epoch, Fallback, Observer, OtherRows, Outcome, Placement, State, Stepper, Swept,
    drive,
};

use super::agree::{Agreed, DescribeFailure, Failure, agree, broken, spread};
use super::sync::{Delta, PeerPocket};
use super::transport::{MeteredTransport, Reduce, Traffic, Transport, sum};
use super::wire::{Reader, Writer};

const EVAL: u8 = 0;
const DONE: u8 = 1;
const FAILED: u8 = 2;

/// An exact run's result on one rank (the state is every rank's).
pub struct Exact<F> {
    pub outcome: Outcome<F>,
    /// What this rank sent and received in each epoch completed.
    pub traffic: Vec<Traffic>,
    pub steps: Steps,
}

/// How the run advanced, counted on every rank alike.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Steps {
    /// Certified scans (each one all-reduce of a position).
    pub scans: u64,
    /// Walks, and the rows they walked.
    pub walks: u64,
    pub rows_walked: u64,
    /// Pocket evaluations over every rank's rows.
    pub evaluations: u64,
}

/// The owner's walk stops once a chunk this long held no mistake: walking
/// on costs about what a scan costs (a ski-rental rule on measured costs).
struct Pace {
    scan_seconds: f64,
    row_seconds: f64,
}

impl Pace {
    fn chunk(&self) -> usize {
        (2.0 * self.scan_seconds / self.row_seconds.max(1e-12)).clamp(256.0, (1 << 22) as f64)
            as usize
    }

    fn measured(mean: &mut f64, sample: f64) {
        *mean = 0.75 * *mean + 0.25 * sample;
    }
}

/// Trains this rank's `block` (its rows in visit order, at the epoch's
/// positions `part`) with the other ranks of `net`, from `start` (the
/// whole run's state, the same on every rank; its position is the epoch's).
/// `observer` reports progress and epoch ends (rank 0 writes checkpoints
/// there) and is asked at each epoch's end whether to stop.
#[allow(clippy::too_many_arguments)]
pub fn train<'e, F: Real>(
    net: &MeteredTransport<'_>,
    block: &Dataset<F>,
    placement: Placement,
    params: &CheckedParams,
    start: State<F>,
    engine: Box<dyn MarginEngine<F> + 'e>,
    fallback: Fallback<'_, 'e, F>,
    observer: &mut dyn Observer<F>,
    describe: DescribeFailure<'_>,
) -> Agreed<Exact<F>> {
    let t: &dyn Transport = net;
    // The same parameters on every rank: the same answer, without a message.
    if let Err(e) = super::check_params(params, super::Mode::Exact) {
        return Err(super::agree::everywhere(t, &e, describe));
    }
    let held = block.rows();
    let p = start.position;
    let mut local = start;
    local.position = placement.first_at_or_after(p, held);
    let made = Stepper::new(block, params, local, placement.clone(), engine, fallback);
    let mut st = agree(t, made, describe)?;
    st.log_updates();
    let mut run = Run {
        t,
        placement: &placement,
        describe,
        mirror: PeerPocket::default(),
        steps: Steps::default(),
        pace: Pace {
            scan_seconds: 50e-6,
            row_seconds: 100e-9,
        },
    };
    let started = {
        let mut failed = None;
        let r = st.start(
            &mut Collective {
                t,
                describe,
                failed: &mut failed,
                evaluations: &mut run.steps.evaluations,
            },
            &mut Walking(observer),
        );
        run.settle(r, failed)
    };
    started?;
    let mut epochs = Epochs {
        net,
        run,
        observer,
        p,
        traffic: Vec::new(),
        last: net.traffic(),
    };
    let (stop, epoch_seconds) = drive(&mut st, params.max_epochs, None, &mut epochs)?;
    let Epochs {
        run, traffic, p, ..
    } = epochs;
    let mut outcome = st.finish(stop, epoch_seconds);
    outcome.state.position = p;
    Ok(Exact {
        outcome,
        traffic,
        steps: run.steps,
    })
}

/// Exact mode's epochs for [`drive`]: steps to the epoch's end, then the
/// epoch's end reported and a stop request agreed on by every rank.
struct Epochs<'a, 'n, 'o, F> {
    net: &'a MeteredTransport<'n>,
    run: Run<'a>,
    observer: &'o mut dyn Observer<F>,
    /// The position in the epoch.
    p: usize,
    /// What this rank sent and received in each epoch completed.
    traffic: Vec<Traffic>,
    last: Traffic,
}

impl<F: Real> Epoch<F> for Epochs<'_, '_, '_, F> {
    type Error = Failure;

    fn sweep(&mut self, st: &mut Stepper<'_, '_, '_, F>) -> Agreed<Swept> {
        let n = self.run.placement.epoch_rows;
        while self.p < n {
            self.p = self.run.step(st, self.p, self.observer)?;
            self.observer.on_progress(st.state().epoch, self.p, n);
        }
        Ok(Swept::End)
    }

    fn ended(&mut self, st: &mut Stepper<'_, '_, '_, F>, _mistakes: u64) -> Agreed<bool> {
        let t = self.run.t;
        self.p = 0;
        agree(t, self.observer.on_epoch_end(st.state()), self.run.describe)?;
        self.traffic.push(self.net.since(&mut self.last));
        Ok(super::transport::any(t, self.observer.should_stop()))
    }
}

/// The protocol's state on one rank.
struct Run<'a> {
    t: &'a dyn Transport,
    placement: &'a Placement,
    describe: DescribeFailure<'a>,
    mirror: PeerPocket,
    steps: Steps,
    pace: Pace,
}

impl Run<'_> {
    /// One step from position `p`: a scan, the rows before what it found
    /// passed as correct, and the owner's walk from there; returns the
    /// position after it.
    fn step<F: Real>(
        &mut self,
        st: &mut Stepper<'_, '_, '_, F>,
        p: usize,
        observer: &mut dyn Observer<F>,
    ) -> Agreed<usize> {
        let (t, k, me) = (self.t, self.t.size() as u64, self.t.rank() as u64);
        let held = st.data().rows();
        let n = self.placement.epoch_rows;
        let t0 = Instant::now();
        let from = self.placement.first_at_or_after(p, held);
        let found = st.first_uncertain(from, held, &mut Walking(observer));
        let (candidate, own_error) = match found {
            Ok(j) if j < held => (self.placement.position(j) as u64 * k + me, None),
            Ok(_) => (u64::MAX, None),
            Err(e) => (u64::MAX, Some(e)),
        };
        let mut v = [candidate, if own_error.is_some() { me } else { u64::MAX }];
        t.all_reduce(Reduce::Min, &mut v);
        self.steps.scans += 1;
        if v[1] != u64::MAX {
            return Err(spread(t, v[1] as usize, own_error.as_ref(), self.describe));
        }
        let (q, owner) = if v[0] == u64::MAX {
            (n, usize::MAX)
        } else {
            ((v[0] / k) as usize, (v[0] % k) as usize)
        };
        if q > p {
            let mut failed = None;
            let r = st.pass_correct(
                (q - p) as u64,
                &mut Collective {
                    t,
                    describe: self.describe,
                    failed: &mut failed,
                    evaluations: &mut self.steps.evaluations,
                },
                &mut Walking(observer),
            );
            self.settle(r, failed)?;
        }
        Pace::measured(&mut self.pace.scan_seconds, t0.elapsed().as_secs_f64());
        if q == n {
            return Ok(n);
        }
        self.steps.walks += 1;
        let next = if owner as u64 == me {
            self.walk(st, q, observer)?
        } else {
            self.serve(st, owner, observer)?
        };
        self.steps.rows_walked += (next - q) as u64;
        Ok(next)
    }

    /// This rank walks from position `q`, which it holds, then sends what
    /// changed; returns the position after the walk.
    fn walk<F: Real>(
        &mut self,
        st: &mut Stepper<'_, '_, '_, F>,
        q: usize,
        observer: &mut dyn Observer<F>,
    ) -> Agreed<usize> {
        let t = self.t;
        let held = st.data().rows();
        let i0 = self.placement.first_at_or_after(q, held);
        let end = i0 + self.placement.consecutive_from(i0, held);
        let mut failed = None;
        let walked = (|| -> Result<usize> {
            st.set_position(i0)?;
            let mut at = i0;
            loop {
                let to = (at + self.pace.chunk()).min(end);
                let before = st.state().mistakes_in_epoch;
                let t0 = Instant::now();
                let mut peers = Serving {
                    t,
                    describe: self.describe,
                    failed: &mut failed,
                    evaluations: &mut self.steps.evaluations,
                };
                st.advance(to, &mut peers, &mut Walking(observer))?;
                let rows = (to - at) as f64;
                Pace::measured(
                    &mut self.pace.row_seconds,
                    t0.elapsed().as_secs_f64() / rows.max(1.0),
                );
                at = to;
                if at == end || st.state().mistakes_in_epoch == before {
                    return Ok(at);
                }
            }
        })();
        let at = match walked {
            Ok(at) => at,
            Err(e) => {
                if let Some(f) = failed {
                    // The others learned it during a pocket evaluation.
                    return Err(f);
                }
                t.broadcast(t.rank(), &mut vec![FAILED]);
                return Err(spread(t, t.rank(), Some(&e), self.describe));
            }
        };
        let next = self.placement.position(at - 1) + 1;
        let mut w = Writer::default();
        w.u8(DONE);
        Delta::take(st, &mut self.mirror).write(&mut w);
        w.u64(next as u64);
        t.broadcast(t.rank(), &mut w.finish());
        Ok(next)
    }

    /// Another rank walks: this one answers its pocket evaluations and
    /// takes what changed; returns the position after the walk.
    fn serve<F: Real>(
        &mut self,
        st: &mut Stepper<'_, '_, '_, F>,
        owner: usize,
        observer: &mut dyn Observer<F>,
    ) -> Agreed<usize> {
        let t = self.t;
        loop {
            let mut msg = Vec::new();
            t.broadcast(owner, &mut msg);
            let mut r = Reader::new(&msg);
            match r.u8().unwrap_or(FAILED) {
                EVAL => {
                    let weights = r.reals::<F>().unwrap_or_else(|e| broken(t, &e));
                    let held = st
                        .adopt(|s| s.weights = weights)
                        .and_then(|_| st.held_mistakes(&mut Walking(observer)));
                    let held = agree(t, held, self.describe)?;
                    sum(t, held);
                    self.steps.evaluations += 1;
                }
                DONE => {
                    let delta = Delta::<F>::read(&mut r).unwrap_or_else(|e| broken(t, &e));
                    let next = r.usize().unwrap_or_else(|e| broken(t, &e));
                    let applied = delta.apply(st, &mut self.mirror);
                    applied.unwrap_or_else(|e| broken(t, &e));
                    return Ok(next);
                }
                _ => return Err(spread(t, owner, None, self.describe)),
            }
        }
    }

    /// The end of a collective call (a scan's pass of correct rows, the
    /// first pocket evaluation) on this rank: a failure the ranks agreed on
    /// inside it, or this rank's own error from before its collective part
    /// (which the others are waiting to agree on).
    fn settle(&self, r: Result<()>, failed: Option<Failure>) -> Agreed<()> {
        if let Some(f) = failed {
            return Err(f);
        }
        match r {
            Ok(()) => Ok(()),
            Err(e) => agree(self.t, Err(e), self.describe),
        }
    }
}

/// The whole data's pocket count when every rank counts at once.
struct Collective<'a> {
    t: &'a dyn Transport,
    describe: DescribeFailure<'a>,
    failed: &'a mut Option<Failure>,
    evaluations: &'a mut u64,
}

impl<F> OtherRows<F> for Collective<'_> {
    fn total_mistakes(&mut self, _weights: &[F], held: u64) -> Result<u64> {
        match agree(self.t, Ok(held), self.describe) {
            Ok(held) => {
                *self.evaluations += 1;
                Ok(sum(self.t, held))
            }
            Err(f) => {
                let e = Error::Train(f.to_string());
                *self.failed = Some(f);
                Err(e)
            }
        }
    }
}

/// The whole data's pocket count from the rank that walks: it sends the
/// weights to count, then every rank counts.
struct Serving<'a> {
    t: &'a dyn Transport,
    describe: DescribeFailure<'a>,
    failed: &'a mut Option<Failure>,
    evaluations: &'a mut u64,
}

impl<F: Real> OtherRows<F> for Serving<'_> {
    fn total_mistakes(&mut self, weights: &[F], held: u64) -> Result<u64> {
        let mut w = Writer::default();
        w.u8(EVAL).reals(weights);
        self.t.broadcast(self.t.rank(), &mut w.finish());
        Collective {
            t: self.t,
            describe: self.describe,
            failed: self.failed,
            evaluations: self.evaluations,
        }
        .total_mistakes(weights, held)
    }
}

/// The observer a walk reports to: warnings pass, progress is the run's
/// (by position), and stops wait for the epoch's end.
struct Walking<'o, F>(&'o mut dyn Observer<F>);

impl<F> Observer<F> for Walking<'_, F> {
    fn on_warning(&mut self, message: &str) {
        self.0.on_warning(message);
    }
}

#[cfg(test)]
pub(crate) mod tests;
