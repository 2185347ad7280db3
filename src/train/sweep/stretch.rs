//! One stretch of the walk: from the current row to the loop's end, in the
//! mode the chooser picks, until the end, a stop request or an engine
//! failure (which the caller answers with the fallback).

use std::time::Instant;

use crate::engine::MarginEngine;
use crate::engine::certify;
use crate::float::Real;
use crate::train::placement::OtherRows;
use crate::train::state::Observer;
use crate::train::sweep::chooser::{self, Mode};
use crate::train::sweep::{InFlight, Loop, LoopResult};

/// Rows between mistakes below which the walk ahead gets no trial (see
/// [`Loop::mistakes_dense`]): in the sparse case on the dev VM it ran at
/// 0.4-0.55x the textbook loop with a mistake every 3-5 rows, 0.7-0.9x
/// every 9, and from 1x every 23.
const AHEAD_GAP: u64 = 8;

/// The modes a stretch may offer the chooser beyond the host's own: the
/// walk ahead, and the engine's walk or passes (either side of a pair).
struct Offered {
    ahead: bool,
    engine_ok: bool,
}

/// How a stretch ended.
pub(super) enum StretchEnd {
    Done,
    Interrupted,
}

impl<F: Real> Loop<'_, F> {
    /// Walks from the current row to [`Loop::end`], or to a stop request
    /// or an engine failure.
    pub(super) fn run_stretch(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        observer: &mut dyn Observer<F>,
    ) -> LoopResult<StretchEnd> {
        let Offered { ahead, engine_ok } = self.prepare_stretch(engine);
        while self.state.position < self.end {
            if observer.should_stop() {
                self.end_walk(engine)?;
                return Ok(StretchEnd::Interrupted);
            }
            if let Some(notice) = engine.take_notice() {
                observer.on_warning(&notice);
            }
            let pos = self.state.position;
            let t0 = Instant::now();
            if !engine.certifies() {
                // The textbook loop: every margin by the reference dot.
                let end = pos + self.window(engine, pos);
                self.walk_host(engine, peers, end)?;
                self.chooser
                    .measured_textbook(t0.elapsed().as_secs_f64(), end - pos);
                observer.on_progress(self.state.epoch, self.state.position, self.end);
                continue;
            }
            self.chooser
                .ahead_available(ahead && !self.mistakes_dense());
            // A pair's device starting beside the cores is offered once it
            // has arrived (see `crate::engine::pair`), and soon tried.
            let ready = engine.device_ready();
            if ready && !self.device_was_ready {
                self.chooser.device_arrived();
            }
            self.device_was_ready = ready;
            self.chooser.engine_available(engine_ok && ready);
            let (mode, stretch) = self.chooser.next();
            if !mode.engine() {
                self.walk_host_mode(engine, peers, mode, stretch, ahead)?;
                observer.on_progress(self.state.epoch, self.state.position, self.end);
                continue;
            }
            self.serve_from(engine, mode)?;
            if self.walks(engine) {
                self.walk_device_timed(engine, peers, observer, mode, stretch, t0)?;
            } else if self.inflight.is_empty() && !self.weights_safe() {
                // Weights this large could overflow on a device: the host
                // decides every row until they are handed out again.
                let end = (pos + self.work_cap).min(self.end);
                self.walk_host(engine, peers, end)?;
            } else {
                let pass = self.collect_pass(engine, pos)?;
                self.walk(engine, peers, &pass)?;
                self.chooser
                    .measured(mode, t0.elapsed().as_secs_f64(), self.state.position - pos);
            }
            observer.on_progress(self.state.epoch, self.state.position, self.end);
        }
        // Passes for rows beyond the stretch cannot exist: windows stop at
        // its end.
        Ok(StretchEnd::Done)
    }

    /// Readies the stretch: the host's bound for certified margins, and
    /// the modes the chooser may pick.
    fn prepare_stretch(&mut self, engine: &mut dyn MarginEngine<F>) -> Offered {
        if self.host_bound.is_none() && engine.certifies() {
            // Fresh at each epoch (a subnormal weight's flush term is sticky
            // until then) and after weights came from elsewhere.
            self.host_bound = Some(
                certify::Bound::for_weights(&self.state.weights, self.facts.l1_max)
                    .with_margin(self.tau),
            );
        }
        // Whether the walk ahead may get trials is told before each piece
        // (see `run_stretch`): it also depends on the mistakes so far.
        let ahead = self.may_walk_ahead();
        // Where the walk ahead can walk, an engine whose walk is the walk
        // ahead on a copy of the weights gets no trial: neither that walk
        // nor its passes over windows (where its walk cannot go: under
        // scikit-learn's sparse update), whose certified margins each
        // update's drift soon spoils; forced on 500,000 sparse rows with a
        // mistake every 3 to 600 rows, they took 14-118 s an epoch where
        // the walk ahead took 0.1-0.4 s.
        let redundant = ahead && engine.walks_like_the_host_ahead();
        // An engine reads rows in `data`'s order: a loop with an order of
        // its own walks them on the host.
        let engine_ok = !redundant && self.order.is_none();
        self.chooser
            .cores_available(engine.has_cores_beside() && engine_ok);
        Offered { ahead, engine_ok }
    }

    /// Has the side of a pair that `mode` walks with serve ([`Mode::Cores`]:
    /// the CPU engine beside the device's; see [`crate::engine::pair`]).
    /// The other side's walk and passes in flight are dropped first: they
    /// are of its own weights and in its own queue.
    fn serve_from(&mut self, engine: &mut dyn MarginEngine<F>, mode: Mode) -> LoopResult<()> {
        // Until a pair's device is ready (as this piece found it), its
        // cores serve in its place (a forced `--passes` mode may ask for
        // the device before it is).
        let cores = mode == Mode::Cores || !self.device_was_ready;
        // After a fallback the engine is no pair, while the chooser may
        // still be walking `cores`: that engine serves both modes as it is.
        if engine.has_cores_beside() && engine.serves_cores() != cores {
            self.end_walk(engine)?;
            self.drain_inflight(engine)?;
            engine.serve_cores(cores);
            // The side taking over last saw weights from before the other
            // side's walk: it uploads the loop's.
            self.walker_version = None;
        }
        Ok(())
    }

    /// Whether mistakes come fewer than [`AHEAD_GAP`] rows apart: in this
    /// epoch once a few hundred rows are walked (the chooser's first
    /// trials start after its first measurement), else in the epoch
    /// before (at the start of a run, not known: not dense). There each
    /// update moves the mistaken row's weights from a helper's cache to
    /// the walk's, as many transfers as the dot it saved, and the walk
    /// ahead cannot beat the textbook loop; its trials would only cost
    /// (2-5 ms an epoch in the sparse case's first two epochs, where it
    /// runs at half the loop's speed).
    fn mistakes_dense(&self) -> bool {
        let (rows, mistakes) = match self.state.position {
            p if p >= chooser::MIN_MEASURE_ROWS => (p, self.state.mistakes_in_epoch),
            _ => match self.state.mistakes_per_epoch.last() {
                Some(&m) => (self.rows, m),
                None => return false,
            },
        };
        mistakes.saturating_mul(AHEAD_GAP) > rows as u64
    }

    /// One stretch of a host mode the chooser picked, timed for it.
    fn walk_host_mode(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        mode: Mode,
        stretch: usize,
        ahead: bool,
    ) -> LoopResult<()> {
        let pos = self.state.position;
        // The host alone: with its fast certified margins, with the
        // reference dot for every row (the textbook loop), or with
        // the other cores summing sparse rows ahead.
        self.end_walk(engine)?;
        // Draining the engine's walk is the engine's cost, not the
        // host's: the host's stretch is timed from here.
        let t0 = Instant::now();
        let end = (pos + stretch.min(self.work_cap)).min(self.end);
        let bound = match mode {
            Mode::Reference => self.host_bound.take(),
            _ => None,
        };
        let walked = if mode == Mode::Ahead && ahead {
            let warming = self.chooser.warming();
            // A trial's walk stops at its budget (see Chooser::measured);
            // its warm-up is not measured, and has none.
            let deadline = self.chooser.trial_deadline(t0).filter(|_| !warming);
            self.walk_ahead(engine, peers, end, warming, deadline)
        } else {
            self.walk_host(engine, peers, end)
        };
        if bound.is_some() {
            self.host_bound = bound;
        }
        walked?;
        let walked_rows = self.state.position - pos;
        self.chooser
            .measured(mode, t0.elapsed().as_secs_f64(), walked_rows);
        Ok(())
    }

    /// One stretch of the engine's own walk in `mode` (the device's, or
    /// the CPU engine's beside it), timed from `t0`.
    fn walk_device_timed(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        observer: &mut dyn Observer<F>,
        mode: Mode,
        stretch: usize,
        t0: Instant,
    ) -> LoopResult<()> {
        let pos = self.state.position;
        // A trial's walk stops at its budget (see Chooser::measured).
        let deadline = self.chooser.trial_deadline(t0);
        self.walk_device(engine, peers, observer, stretch, deadline)?;
        self.chooser
            .measured(mode, t0.elapsed().as_secs_f64(), self.state.position - pos);
        Ok(())
    }

    /// The engine's margins for the pass that starts at `pos`, submitting
    /// it if none is in flight.
    fn collect_pass(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        pos: usize,
    ) -> LoopResult<InFlight<F>> {
        // Collect the pass that starts here, dropping any stale one.
        let pass = loop {
            if self.inflight.is_empty() {
                self.submit(engine, pos)?;
            }
            let Some(front) = self.inflight.pop_front() else {
                continue;
            };
            self.slack
                .resize((front.end - front.start) * self.heads, 0.0);
            engine.collect(&mut self.slack)?;
            if front.start == pos {
                break front;
            }
        };
        Ok(pass)
    }
}
