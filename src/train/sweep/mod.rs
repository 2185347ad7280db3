//! The training loop's one home: [`Loop`], its working state and the
//! decisions it commits (the exact weights, the engine passes in flight
//! and the drift since each, the update of a mistake with every variant's
//! bookkeeping), and one file per job around it:
//!
//! - [`epoch`]: epochs until convergence, the cap or a stop, with the
//!   fallback after a device failure;
//! - [`stepper`]: the same loop driven a stretch of rows at a time, for
//!   callers that hold part of an epoch's rows (a distributed rank);
//! - [`stretch`]: one stretch of rows in the mode the chooser picks;
//! - [`chooser`]: who walks the rows (the host, the reference dot, the
//!   engine), by measured time per row;
//! - [`walks`]: the walks themselves (the host's, ahead, the engine's);
//! - [`scan`]: the certified scan, which decides nothing;
//! - [`drift`]: how far the weights moved since a pass.
//!
//! A device failure inside the loop is [`Halt::Engine`]; every other
//! failure is [`Halt::Run`], the run's own [`Error`].

pub mod chooser;
mod drift;
pub(super) mod epoch;
mod scan;
pub mod stepper;
mod stretch;
mod walks;
mod whole;

use std::collections::VecDeque;

use crate::data::matrix::{PLACE_LEAD, ROW_LEAD};
use crate::data::{Dataset, Row};
use crate::engine::certify::{self, Settled};
use crate::engine::cpu::lookahead::Lookahead;
use crate::engine::reference;
use crate::engine::{EngineError, MarginEngine, Pass};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::placement::{OtherRows, Placement};
use crate::train::state::{LoopStats, State};
use crate::train::sweep::chooser::{Chooser, EpochModes};
use crate::train::sweep::drift::{Drift, ScanWindow};
use crate::train::variant;

/// Why a step of the loop ended before its work was done.
#[derive(Debug)]
enum Halt {
    /// The engine failed: the caller replaces it with the fallback, which
    /// goes on from the row the loop had reached (nothing past it was
    /// committed).
    Engine(EngineError),
    /// The run failed: an overflow, a peer's error, a bad input.
    Run(Error),
}

impl From<Error> for Halt {
    fn from(e: Error) -> Self {
        Halt::Run(e)
    }
}

impl From<EngineError> for Halt {
    fn from(e: EngineError) -> Self {
        Halt::Engine(e)
    }
}

/// What a step of the loop returns.
type LoopResult<T> = std::result::Result<T, Halt>;

/// A pass submitted and not yet collected, with the weights it used.
struct InFlight<F> {
    start: usize,
    end: usize,
    weights: Vec<F>,
}

struct Loop<'d, F: Real> {
    data: &'d Dataset<F>,
    /// The order the rows are visited in, when it is not `data`'s own:
    /// position `i` of the walk is row `order[i]` of `data` (a permutation
    /// of its rows, see [`super::stepper::Stepper::visit_in`]). Only the
    /// host's walks follow it: an engine's passes and walks read `data`'s
    /// rows in place, so a loop with an order never hands rows to one.
    order: Option<&'d [usize]>,
    bias: bool,
    /// Weights per head (features plus the bias).
    dim: usize,
    /// Perceptrons trained together (one-vs-rest classes; 1 for binary).
    heads: usize,
    rows: usize,
    /// Where the walks stop: the end of the epoch, or of the stretch a
    /// caller asked for ([`super::stepper::Stepper::advance`]).
    end: usize,
    /// Where these rows sit in the epoch (all of it, in one process).
    placement: Placement,
    state: State<F>,
    /// The rows' norms and which rows must never be settled by slack
    /// (`certify::needs_host`).
    facts: std::sync::Arc<certify::RowFacts>,
    inflight: VecDeque<InFlight<F>>,
    slack: Vec<f32>,
    /// One drift bound per head.
    drift: Vec<Drift>,
    /// Scratch: touched weights before an update.
    before: Vec<F>,
    /// The bound for the host's fast margins (None: reference dots only).
    host_bound: Option<crate::engine::certify::Bound<F>>,
    /// The margin threshold τ of the mistake rule.
    tau: F,
    /// MarginBindings of the passes that count a pocket candidate's mistakes.
    eval_slack: Vec<f32>,
    /// Recent fraction of rows that were mistakes.
    mistake_rate: f64,
    /// The class weights of the updates (`None`: every update is y·x~).
    class_weights: Option<crate::train::class_weight::Resolved<F>>,
    /// Each held row's own weight (scikit-learn's `sample_weight`), which
    /// multiplies its class weight in an update.
    row_weights: Option<Vec<F>>,
    /// The intercept's step per unit of the weights' step (scikit-learn's
    /// on sparse input; `None`: 1, the textbook update).
    intercept_decay: Option<F>,
    /// Upper limit on the window, from how far recent windows got.
    window_cap: usize,
    /// Rows per window such that a window is about 2^26 multiply-adds, so
    /// stop requests are noticed promptly.
    work_cap: usize,
    chooser: Chooser,
    /// How each finished epoch's rows were walked.
    epoch_modes: Vec<EpochModes>,
    stats: LoopStats,
    /// Whether to use an engine's walk when it has one.
    walk_enabled: bool,
    /// Whether the engine's own side could serve at the last piece (false
    /// while a pair's device starts beside the cores).
    device_was_ready: bool,
    /// A walk is in flight (begun, not yet stopped or cancelled).
    walk_active: bool,
    /// Counts every update of the weights, whoever decided it.
    weights_version: u64,
    /// The version the walker's copy of the weights is known to equal
    /// (verified bit for bit, or uploaded); `None` if unknown.
    walker_version: Option<u64>,
    /// Updates made so far, and an upper bound of ||w~|| with the weights'
    /// version and the updates at which it was computed (see
    /// `Loop::safe_updates`).
    updates_made: u64,
    norm_bound: Option<(f64, u64, u64)>,
    /// When kept: every update since it was last drained, as (row, head).
    update_log: Option<Vec<(usize, usize)>>,
    /// Whether updates add their row's hinge loss to the epoch's (the
    /// mean-loss stopping rule, [`crate::train::early_stop::Judge`]).
    tracks_loss: bool,
    /// The certified scan's window ([`super::scan`]) and its next length.
    scan: Option<ScanWindow<F>>,
    scan_len: usize,
    /// The host's walk on sparse rows, with the other cores summing the
    /// rows ahead ([`super::walks`]), and its decisions of one batch.
    ahead: Lookahead<F>,
    ahead_decisions: Vec<crate::engine::WalkDecision>,
    /// Scratch: the walk ahead's margins of its mistakes, for the loss.
    ahead_margins: Vec<F>,
    /// The rows one byte a value, where they are bytes
    /// ([`crate::data::byte_rows`]): the host's margins read them instead
    /// of the stored rows, where a run on the CPU made them
    /// ([`crate::train::epochs`]).
    bytes: Option<std::sync::Arc<crate::data::byte_rows::ByteRows>>,
    /// The last row the reference arithmetic read from the bytes, widened
    /// back into the precision (see [`Loop::widened`]).
    widened: Widened<F>,
    /// Whether the weights are whole numbers ([`whole`]), and the exact
    /// margin of the mistake about to be updated, where the host has it.
    whole: whole::WholeWeights,
    known: Option<whole::KnownMargin<F>>,
}

/// A row widened from its bytes: which row (of `data`), and its values.
struct Widened<F> {
    row: Option<usize>,
    values: Vec<F>,
}

impl<F> Default for Widened<F> {
    fn default() -> Self {
        Widened {
            row: None,
            values: Vec::new(),
        }
    }
}

impl<'d, F: Real> Loop<'d, F> {
    fn new(
        data: &'d Dataset<F>,
        bias: bool,
        heads: usize,
        state: State<F>,
        placement: Placement,
    ) -> Self {
        let rows = data.rows();
        let facts = data.facts(bias);
        Loop {
            data,
            order: None,
            bias,
            dim: data.cols() + bias as usize,
            heads,
            rows,
            end: rows,
            placement,
            state,
            facts,
            inflight: VecDeque::new(),
            slack: Vec::new(),
            drift: (0..heads)
                .map(|_| Drift {
                    sq: 0.0,
                    err: 0.0,
                    threshold: certify::threshold(0.0),
                })
                .collect(),
            before: Vec::new(),
            host_bound: None,
            tau: F::ZERO,
            eval_slack: Vec::new(),
            mistake_rate: 0.05,
            class_weights: None,
            row_weights: None,
            intercept_decay: None,
            window_cap: usize::MAX,
            work_cap: {
                let terms =
                    data.features.storage_bytes() / std::mem::size_of::<F>().max(1) / rows.max(1);
                ((1usize << 26) / (terms + 1)).max(1)
            },
            chooser: Chooser::new(rows),
            epoch_modes: Vec::new(),
            stats: LoopStats::default(),
            walk_enabled: true,
            device_was_ready: true,
            walk_active: false,
            weights_version: 0,
            walker_version: None,
            updates_made: 0,
            norm_bound: None,
            update_log: None,
            tracks_loss: false,
            scan: None,
            scan_len: 0,
            ahead: Lookahead::default(),
            ahead_decisions: Vec::new(),
            ahead_margins: Vec::new(),
            bytes: data.built_byte_rows(),
            widened: Widened::default(),
            whole: whole::WholeWeights::default(),
            known: None,
        }
    }

    fn finish_epoch(&mut self) -> u64 {
        let m = self.state.mistakes_in_epoch;
        self.state.mistakes_per_epoch.push(m);
        if self.heads > 1 {
            let per_head =
                std::mem::replace(&mut self.state.head_mistakes_in_epoch, vec![0; self.heads]);
            self.state.head_mistakes_per_epoch.push(per_head);
        }
        self.state.epoch += 1;
        self.state.position = 0;
        self.state.mistakes_in_epoch = 0;
        self.epoch_modes.push(self.chooser.take_epoch());
        let before = self.state.mistakes_per_epoch.iter().rev().nth(1).copied();
        self.chooser.epoch_ended(m, before);
        m
    }

    /// Whether the current weights may go to an engine: small enough that
    /// nothing an engine computes can overflow ([`certify::engine_safe`]).
    fn weights_safe(&self) -> bool {
        certify::engine_safe(&self.state.weights, self.facts.max_norm)
    }

    fn window(&self, engine: &dyn MarginEngine<F>, from: usize) -> usize {
        let w = engine
            .preferred_window(self.mistake_rate)
            .min(self.window_cap)
            .min(self.work_cap)
            .max(1)
            .min(engine.max_pass().max(1));
        w.min(self.end - from)
    }

    fn submit(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        start: usize,
    ) -> std::result::Result<(), EngineError> {
        let end = start + self.window(engine, start);
        let weights = self.state.weights.clone();
        engine.submit(&Pass {
            start,
            end,
            weights: &weights,
            tau: self.tau,
            heads: self.heads,
        })?;
        self.stats.passes += 1;
        self.inflight.push_back(InFlight {
            start,
            end,
            weights,
        });
        Ok(())
    }

    /// Applies the decision for row `i`: the update on a mistake (keeping
    /// the drift relative to `pass_weights`), and each variant's bookkeeping.
    /// A pocket evaluation counts over the whole data through `peers`.
    fn commit(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        i: usize,
        h: usize,
        mistake: bool,
        pass_weights: Option<&[F]>,
    ) -> LoopResult<()> {
        if mistake {
            self.update(i, h, pass_weights)?;
            self.accumulate_average(i, h)?;
            if let Some(p) = &mut self.state.pocket {
                p.on_mistake();
            }
            return Ok(());
        }
        let Some(p) = &mut self.state.pocket else {
            return Ok(());
        };
        if p.due_within(1).is_none() {
            p.current_run += 1;
            return Ok(());
        }
        // Nothing is changed before the count: after an engine failure the
        // row is committed again, on the next engine.
        let mistakes = self.total_mistakes(engine, peers)?;
        let (epoch, weights) = (self.state.epoch, &self.state.weights);
        if let Some(p) = &mut self.state.pocket {
            p.current_run += 1;
            p.evaluated(weights, mistakes, epoch);
        }
        Ok(())
    }

    /// `rows` rows that follow, decided elsewhere, are certainly correct
    /// under the current weights (for every head): the pocket's run grows by
    /// them, with the evaluation that falls due among them.
    fn commit_correct(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        rows: u64,
    ) -> LoopResult<()> {
        let Some(p) = &mut self.state.pocket else {
            return Ok(());
        };
        let Some(k) = p.due_within(rows) else {
            p.current_run += rows;
            return Ok(());
        };
        let mistakes = self.total_mistakes(engine, peers)?;
        let (epoch, weights) = (self.state.epoch, &self.state.weights);
        if let Some(p) = &mut self.state.pocket {
            p.current_run += k;
            p.evaluated(weights, mistakes, epoch);
            p.current_run += rows - k;
        }
        Ok(())
    }

    /// Training mistakes of the current weights over the whole data: these
    /// rows' count, completed by `peers`.
    fn total_mistakes(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
    ) -> LoopResult<u64> {
        let held = self.count_mistakes(engine)?;
        Ok(peers.total_mistakes(&self.state.weights, held)?)
    }

    /// Training mistakes (y·s <= 0) of the current weights over every row,
    /// certified by engine passes where the engine certifies. Passes in
    /// flight are dropped first (the walk resubmits).
    fn count_mistakes(&mut self, engine: &mut dyn MarginEngine<F>) -> LoopResult<u64> {
        self.drain_inflight(engine)?;
        self.stats.pocket_evaluations += 1;
        let data = self.data;
        let w = &self.state.weights;
        let use_engine = engine.certifies() && certify::engine_safe(w, self.facts.max_norm);
        let host = engine
            .certifies()
            .then(|| certify::Bound::for_weights(w, self.facts.l1_max));
        let mut mistakes = 0u64;
        let mut start = 0;
        while start < self.rows {
            let end = (start
                + engine
                    .max_pass()
                    .min(self.work_cap.saturating_mul(4))
                    .max(1))
            .min(self.rows);
            self.eval_slack.clear();
            self.eval_slack.resize(end - start, 0.0);
            if use_engine {
                self.stats.passes += 1;
                engine.submit(&Pass {
                    start,
                    end,
                    weights: w,
                    tau: F::ZERO,
                    heads: 1,
                })?;
                engine.collect(&mut self.eval_slack)?;
            }
            for i in start..end {
                let y = data.labels[i];
                let slack = self.eval_slack[i - start];
                let (verdict, _) = crate::engine::decide::settle_row(
                    &self.facts,
                    host.as_ref(),
                    slack,
                    w,
                    data,
                    i,
                    self.bias,
                    y,
                );
                mistakes += match verdict {
                    Settled::Correct => 0,
                    Settled::Mistake => 1,
                    Settled::Unknown => {
                        self.stats.host_dots += 1;
                        let s = reference::dot(w, data.features.row(i), self.bias);
                        if !s.is_finite() {
                            return Err(Halt::Run(Error::Train(format!(
                                "{}: row {}: the margin w·x is {s} while counting a pocket candidate's mistakes: the features are too large for {}",
                                data.source.display(),
                                self.placement.position(i) + 1,
                                F::PRECISION
                            ))));
                        }
                        reference::is_mistake(y, s) as u64
                    }
                };
            }
            start = end;
        }
        Ok(mistakes)
    }

    /// The reference decision for row `i` under the current weights:
    /// first from a fast (8-lane) margin with its certificate when the
    /// engine certifies at all, else from the reference dot itself.
    fn host_decides(&mut self, i: usize, h: usize) -> Result<bool> {
        let dim = self.dim;
        let r = self.row_at(i);
        let y = self.data.label_for(h, self.heads, r);
        let whole = self.margins_whole();
        if let Some(bound) = &self.host_bound {
            let forced = self.facts.is_host_only(r);
            if !forced {
                let w = &self.state.weights[h * dim..(h + 1) * dim];
                let (verdict, margin) = self.host_verdict(bound, w, r, y, whole);
                self.stats.host_exact += margin.is_some() as u64;
                match verdict {
                    Settled::Correct => {
                        self.stats.host_certified += 1;
                        return Ok(false);
                    }
                    Settled::Mistake => {
                        self.stats.host_certified += 1;
                        self.keep_margin(i, h, margin);
                        return Ok(true);
                    }
                    Settled::Unknown => {}
                }
            }
        }
        self.stats.host_dots += 1;
        let widened = self.widened(r);
        let row = match &widened {
            Some(x) => Row::Dense(&x.values),
            None => self.data.features.row(r),
        };
        let s = reference::dot(&self.state.weights[h * dim..(h + 1) * dim], row, self.bias);
        self.give_back(widened);
        if !s.is_finite() {
            return Err(Error::Train(format!(
                "{}: epoch {}, row {}: the margin w·x is {s}: the features are too large for {} (products overflow); {}",
                self.data.source.display(),
                self.state.epoch + 1,
                self.placement.position(i) + 1,
                F::PRECISION,
                crate::float::overflow_remedy(F::PRECISION.name())
            )));
        }
        Ok(reference::is_mistake_within(y, s, self.tau))
    }

    /// The counts every update adds to, whoever applied its arithmetic
    /// (this loop, or the host's walk on sparse rows on these weights).
    fn count_update(&mut self, i: usize, h: usize) {
        self.state.mistakes_in_epoch += 1;
        self.weights_version += 1;
        self.updates_made += 1;
        if let Some(log) = &mut self.update_log {
            log.push((i, h));
        }
        if self.heads > 1 {
            self.state.head_mistakes_in_epoch[h] += 1;
        }
    }

    /// Adds head `h`'s update at row `i` to the averaged weights, if kept
    /// (its count c is the row's place in the whole run).
    fn accumulate_average(&mut self, i: usize, h: usize) -> Result<()> {
        if self.state.average.is_none() {
            return Ok(());
        }
        let dim = self.dim;
        let r = self.row_at(i);
        let y = self.data.label_for(h, self.heads, r);
        let weight = self.update_weight(i, h, y);
        let Some(u) = &mut self.state.average else {
            return Ok(());
        };
        let c = self.state.epoch as u64 * self.placement.epoch_rows as u64
            + self.placement.position(i) as u64
            + 1;
        variant::accumulate_weighted(
            &mut u[h * dim..(h + 1) * dim],
            self.data.features.row(r),
            y,
            c,
            weight,
            self.bias,
            self.intercept_decay,
        )
    }

    /// Applies head `h`'s update for a mistake at row `i`, keeping its
    /// drift bound relative to `pass_weights` (that head's slice) current.
    fn update(&mut self, i: usize, h: usize, pass_weights: Option<&[F]>) -> Result<()> {
        let margin = self.known_margin(i, h);
        self.count_update(i, h);
        let r = self.row_at(i);
        let widened = self.widened(r);
        let row = match &widened {
            Some(x) => Row::Dense(&x.values),
            None => self.data.features.row(r),
        };
        let updated = self.update_with(i, h, row, pass_weights, margin);
        self.give_back(widened);
        updated
    }

    /// [`Loop::update`] of row `i`, whose values are `row`, and whose
    /// margin before the update is `margin` where the host knows it exactly.
    fn update_with(
        &mut self,
        i: usize,
        h: usize,
        row: Row<'_, F>,
        pass_weights: Option<&[F]>,
        margin: Option<F>,
    ) -> Result<()> {
        let data = self.data;
        let r = self.row_at(i);
        let dim = self.dim;
        let tracks_scan = self.scan_tracks();
        // Whole weights stay whole, and a whole number is never subnormal.
        let whole = self.margins_whole();
        let weight = self.update_weight(i, h, data.label_for(h, self.heads, r));
        let w = &mut self.state.weights[h * dim..(h + 1) * dim];
        if pass_weights.is_some() || tracks_scan {
            // The touched coordinates' values before the update.
            self.before.clear();
            reference::for_each_touched(row, self.bias, dim, |k| self.before.push(w[k]));
        }
        let y = data.label_for(h, self.heads, r);
        if self.tracks_loss
            && let Some(early) = &mut self.state.early
        {
            // Rows that are not mistakes have y·p > 0 and no loss.
            // An exact margin is scikit-learn's too (see `whole`).
            let p = match margin {
                Some(s) => s.to_f64(),
                None => reference::scikit_margin(w, row, self.bias),
            };
            early.loss_in_epoch += reference::hinge_loss(y, p);
        }
        let updated = match (weight, self.intercept_decay) {
            (None, None) => reference::apply_update(w, row, y, self.bias),
            (Some(c), None) => reference::apply_weighted_update(w, row, y, c, self.bias),
            (c, Some(d)) => reference::apply_decayed_update(w, row, y, c.unwrap_or(F::ONE), d),
        };
        if let Err(o) = updated {
            return Err(Error::Train(format!(
                "{}: epoch {}, row {}: weight {} overflowed to infinity: the features are too large for {}; {}",
                data.source.display(),
                self.state.epoch + 1,
                self.placement.position(i) + 1,
                o.coordinate + 1,
                F::PRECISION,
                crate::float::overflow_remedy(F::PRECISION.name())
            )));
        }
        let subnormal = !whole && reference::touched_subnormal(w, row, self.bias);
        if let Some(base) = pass_weights {
            self.record_drift(row, h, base);
        }
        if tracks_scan {
            self.scan_follow_update(row, h);
        }
        if subnormal {
            self.flush_subnormals();
        }
        Ok(())
    }

    /// Row `r` widened from its bytes, where the rows are kept as bytes
    /// (`None` otherwise: the stored row is read): the scratch is lent out,
    /// holding row `r`, and goes back with [`Loop::give_back`]. A row is
    /// widened once for the dot and the update that follows it.
    fn widened(&mut self, r: usize) -> Option<Widened<F>> {
        let bytes = self.bytes.as_ref()?;
        let mut scratch = std::mem::take(&mut self.widened);
        if scratch.row != Some(r) {
            bytes.widen_into(r, &mut scratch.values);
            scratch.row = Some(r);
        }
        Some(scratch)
    }

    fn give_back(&mut self, widened: Option<Widened<F>>) {
        if let Some(w) = widened {
            self.widened = w;
        }
    }

    /// An update left a weight subnormal: the host's fast margin adds the
    /// flush term (sticky until the next epoch).
    fn flush_subnormals(&mut self) {
        if let Some(b) = &mut self.host_bound
            && b.flush == F::ZERO
        {
            *b = certify::Bound::new(true, self.facts.l1_max).with_margin(self.tau);
        }
    }

    /// The weight c of head `h`'s update on row `i` (label `y`): its class
    /// weight times the row's own weight, one product in the training
    /// precision as scikit-learn makes it (`class_weight * sample_weight`);
    /// `None` for the classic update.
    #[inline]
    fn update_weight(&self, i: usize, h: usize, y: i8) -> Option<F> {
        let class = self.class_weights.as_ref().map(|c| c.of(h, y));
        match (&self.row_weights, class) {
            (None, c) => c,
            (Some(r), c) => Some(c.unwrap_or(F::ONE) * r[self.row_at(i)]),
        }
    }

    /// Whether every update is the textbook one, w~ <- w~ + y·x~: no class
    /// or row weights and no intercept decay. Engines' walkers and the
    /// walk ahead apply only those, and only those keep whole weights whole.
    pub(super) fn unit_updates(&self) -> bool {
        self.class_weights.is_none() && self.row_weights.is_none() && self.intercept_decay.is_none()
    }

    /// The row of `data` that position `i` of the walk visits.
    #[inline]
    fn row_at(&self, i: usize) -> usize {
        match self.order {
            Some(order) => order[i],
            None => i,
        }
    }

    /// Starts loading the row that position `i` visits (nothing past the
    /// last position): its bytes where the host's margins read those. In
    /// a shuffled order each row is a fresh trip to memory (the hardware's
    /// prefetcher cannot guess the next), so the rows are asked for
    /// [`ROW_LEAD`] positions ahead, and where a sparse row lies
    /// [`PLACE_LEAD`] ahead, so that the first request need not wait for
    /// the second: a walk of the positions in turn keeps several rows on
    /// their way while it decides one.
    #[inline]
    fn prefetch_at(&self, i: usize) {
        let Some(order) = self.order else {
            self.prefetch_row(i);
            return;
        };
        if let Some(&r) = order.get(i + PLACE_LEAD) {
            self.data.features.prefetch_row_place(r);
        }
        if let Some(&r) = order.get(i + ROW_LEAD) {
            self.prefetch_row(r);
        }
    }

    #[inline]
    fn prefetch_row(&self, r: usize) {
        match &self.bytes {
            Some(b) => b.prefetch_row(r),
            None => self.data.features.prefetch_row(r),
        }
    }

    fn record_drift(&mut self, row: Row<'_, F>, h: usize, base: &[F]) {
        let dim = self.dim;
        let w = &self.state.weights[h * dim..(h + 1) * dim];
        let before = &self.before;
        let drift = &mut self.drift[h];
        let mut j = 0;
        reference::for_each_touched(row, self.bias, dim, |k| {
            let b = base[k].to_f64();
            drift.change(before[j].to_f64() - b, w[k].to_f64() - b);
            j += 1;
        });
        drift.refresh();
    }
}
