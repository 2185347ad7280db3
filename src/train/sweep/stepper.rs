//! The one loop, driven a stretch of rows at a time: for callers that hold
//! only part of an epoch's rows (one rank of a distributed run), or that
//! interleave the walk with work of their own.
//!
//! A [`Stepper`] owns the loop's working state (the exact [`State`], the
//! engine, the passes in flight, the chooser's measurements) between calls.
//! [`Stepper::advance`] walks the rows it holds from one index to another
//! with the reference semantics, exactly as [`crate::train::fit`] does over a whole
//! epoch (`epoch::run` is built on it). The rows it holds sit in
//! the epoch as a [`Placement`] says, which fixes the averaged variant's visit
//! counter and the row numbers in messages; quantities over the whole
//! training set (the pocket's mistake count) come through [`OtherRows`].
//!
//! The exact result depends only on the sequence of reference decisions
//! and updates, so a caller may also move the state itself between calls
//! ([`Stepper::adopt`], [`Stepper::adopt_weights`]), tell it that rows
//! decided elsewhere were correct ([`Stepper::pass_correct`]), and ask
//! which of its rows is the first not certainly correct under the current
//! weights ([`Stepper::first_uncertain`]) without deciding anything.

use crate::data::Dataset;
use crate::engine::{EngineError, EngineStats, MarginEngine};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::params::{CheckedParams, PassPolicy};
use crate::train::placement::{OtherRows, Placement, Positions};
use crate::train::state::{Fallback, Observer, Outcome, State, Stop};
use crate::train::sweep::chooser::Mode;
use crate::train::sweep::stretch::StretchEnd;
use crate::train::sweep::{Halt, Loop};
use crate::train::variant::{Pocket, Variant};

/// Where [`Stepper::advance`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advanced {
    /// The row asked for.
    End,
    /// A row boundary before it, because the observer asked to stop.
    Interrupted,
}

/// The one loop over the rows of `data`, driven a stretch at a time.
pub struct Stepper<'d, 'e, 'f, F: Real> {
    lp: Loop<'d, F>,
    engine: Box<dyn MarginEngine<F> + 'e>,
    fallback: Fallback<'f, 'e, F>,
    engines: Vec<String>,
    engine_stats: EngineStats,
    variant: Variant,
}

impl<'d, 'e, 'f, F: Real> Stepper<'d, 'e, 'f, F> {
    /// A loop over `data` (in visit order) from `state`, whose `position` is
    /// an index into `data`'s rows; `part` says where they sit in the epoch.
    pub fn new(
        data: &'d Dataset<F>,
        params: &CheckedParams,
        state: State<F>,
        placement: Placement,
        engine: Box<dyn MarginEngine<F> + 'e>,
        fallback: Fallback<'f, 'e, F>,
    ) -> Result<Self> {
        let bias = params.bias;
        let heads = if params.multiclass {
            data.classes.len()
        } else {
            1
        };
        if params.multiclass && (data.class_ids.len() != data.rows() || heads < 2) {
            return Err(Error::Usage(format!(
                "one-vs-rest training needs at least two classes, with a class for every row (found {heads})"
            )));
        }
        let dim = data.cols() + bias as usize;
        if state.weights.len() != dim * heads {
            return Err(Error::Usage(format!(
                "initial weights have {} entries but the data needs {}",
                state.weights.len(),
                dim * heads
            )));
        }
        if let Positions::Listed(list) = &placement.positions
            && list.len() != data.rows()
        {
            return Err(Error::Usage(format!(
                "{} visit positions for {} rows",
                list.len(),
                data.rows()
            )));
        }
        let mut state = state;
        if heads > 1 && state.head_mistakes_in_epoch.len() != heads {
            state.head_mistakes_in_epoch = vec![0; heads];
        }
        let mut lp = Loop::new(data, bias, heads, state, placement);
        lp.chooser.forced = match params.passes {
            PassPolicy::Adaptive => None,
            PassPolicy::Always | PassPolicy::Windows => Some(Mode::Engine),
            PassPolicy::Host => Some(Mode::Host),
            PassPolicy::Reference => Some(Mode::Reference),
            PassPolicy::Ahead => Some(Mode::Ahead),
        };
        lp.walk_enabled = params.passes != PassPolicy::Windows;
        lp.tau = params.margin.as_ref().map_or(F::ZERO, |m| m.value());
        lp.tracks_loss = params.early_stop.as_ref().is_some_and(|e| {
            e.validation.is_none() && e.judge == crate::train::early_stop::Judge::MeanLoss
        });
        lp.class_weights = params
            .class_weight
            .as_ref()
            .map(|w| w.resolve(data, heads))
            .transpose()?;
        if let Some(w) = &params.sample_weight {
            if w.len() != data.rows() {
                return Err(Error::Usage(format!(
                    "sample_weight has {} values for {} rows",
                    w.len(),
                    data.rows()
                )));
            }
            lp.row_weights = Some(w.iter().map(|&v| F::from_f64(v)).collect());
        }
        params.check_precision(F::PRECISION)?;
        if let Some(d) = params.intercept_decay {
            lp.intercept_decay = Some(F::from_f64(d));
        }
        if params.variant == Variant::Averaged && lp.state.average.is_none() {
            lp.state.average = Some(vec![F::ZERO; dim * heads]);
        }
        Ok(Stepper {
            engines: vec![engine.name()],
            lp,
            engine,
            fallback,
            engine_stats: EngineStats::default(),
            variant: params.variant,
        })
    }

    /// Visits the rows in `order` instead of `data`'s own: position `i` of
    /// each walk is row `order[i]` (a permutation of the rows). This is
    /// what a copy of the rows in that order would give, bit for bit,
    /// without the copy (scikit-learn's schedule reorders every epoch).
    /// The engine is then never asked to walk or settle rows (its passes
    /// are of rows in `data`'s order); counts over all the rows still use
    /// it. Refused with a policy that forces the engine's passes.
    pub fn visit_in(&mut self, order: &'d [usize]) -> Result<()> {
        let rows = self.lp.rows;
        if self.lp.chooser.forced == Some(Mode::Engine) {
            return Err(Error::Usage(
                "a visit order of its own walks the rows on the host: it cannot be \
                 combined with a pass policy that forces the engine"
                    .into(),
            ));
        }
        let mut seen = vec![false; rows];
        for &r in order {
            if r >= rows || std::mem::replace(&mut seen[r], true) {
                return Err(Error::Usage(format!(
                    "a visit order must list each of the {rows} rows once (row {r} is {})",
                    if r >= rows {
                        "not a row"
                    } else {
                        "listed twice"
                    }
                )));
            }
        }
        if order.len() != rows {
            return Err(Error::Usage(format!(
                "a visit order lists {} of the {rows} rows",
                order.len()
            )));
        }
        self.lp.order = Some(order);
        Ok(())
    }

    /// Before the first row: the pocket variant evaluates the initial
    /// weights, which are the first pocket (unless resumed with one).
    pub fn start(
        &mut self,
        peers: &mut dyn OtherRows<F>,
        observer: &mut dyn Observer<F>,
    ) -> Result<()> {
        if self.variant != Variant::Pocket || self.lp.state.pocket.is_some() {
            return Ok(());
        }
        let mistakes = loop {
            match self.lp.total_mistakes(self.engine.as_mut(), peers) {
                Ok(m) => break m,
                Err(Halt::Run(e)) => return Err(e),
                Err(Halt::Engine(e)) => {
                    let old = self.replace_engine();
                    observer.on_warning(&format!(
                        "{old} failed: {e}; continuing on {}",
                        self.engine.name()
                    ));
                }
            }
        };
        self.lp.state.pocket = Some(Pocket::initial(self.lp.state.weights.clone(), mistakes));
        Ok(())
    }

    /// Walks held rows from the current one ([`State::position`]) to row
    /// `to` (at most the number held), committing every decision with the
    /// reference semantics; stops early, at a row boundary, when the
    /// observer asks to. A failed engine is replaced by the fallback from
    /// the row where it failed.
    pub fn advance(
        &mut self,
        to: usize,
        peers: &mut dyn OtherRows<F>,
        observer: &mut dyn Observer<F>,
    ) -> Result<Advanced> {
        let to = to.min(self.lp.rows);
        if to < self.lp.end {
            // A walk or passes begun for a longer stretch would run past it.
            if let Err(e) = self.forget_ahead() {
                self.fall_back(e, observer);
            }
        }
        self.lp.end = to;
        let version = self.lp.weights_version;
        let reached = loop {
            match self.lp.run_stretch(self.engine.as_mut(), peers, observer) {
                Ok(StretchEnd::Done) => break Advanced::End,
                Ok(StretchEnd::Interrupted) => break Advanced::Interrupted,
                Err(Halt::Engine(e)) => self.fall_back(e, observer),
                Err(Halt::Run(e)) => return Err(e),
            }
        };
        if self.lp.weights_version != version && !self.lp.scan_tracks() {
            self.lp.scan_stale();
        }
        Ok(reached)
    }

    /// `rows` rows that follow the current one, decided elsewhere, are
    /// certainly correct under the current weights for every head (the
    /// position is the caller's to move): the pocket variant's run grows by
    /// them, with the evaluation that falls due among them.
    pub fn pass_correct(
        &mut self,
        rows: u64,
        peers: &mut dyn OtherRows<F>,
        observer: &mut dyn Observer<F>,
    ) -> Result<()> {
        loop {
            match self.lp.commit_correct(self.engine.as_mut(), peers, rows) {
                Ok(()) => return Ok(()),
                Err(Halt::Engine(e)) => self.fall_back(e, observer),
                Err(Halt::Run(e)) => return Err(e),
            }
        }
    }

    /// The first held row in `from..to` that is not certainly correct for
    /// every head under the current weights (`to` if none): certified by
    /// engine passes, deciding nothing. Rows are certain only by their
    /// certificates, so a row returned may still be correct.
    pub fn first_uncertain(
        &mut self,
        from: usize,
        to: usize,
        observer: &mut dyn Observer<F>,
    ) -> Result<usize> {
        let to = to.min(self.lp.rows);
        loop {
            match self.lp.first_uncertain(self.engine.as_mut(), from, to) {
                Ok(i) => return Ok(i),
                Err(e) => self.fall_back(e, observer),
            }
        }
    }

    /// Training mistakes (y·s <= 0) of the current weights over the rows
    /// held, certified where the engine certifies.
    pub fn held_mistakes(&mut self, observer: &mut dyn Observer<F>) -> Result<u64> {
        loop {
            match self.lp.count_mistakes(self.engine.as_mut()) {
                Ok(m) => return Ok(m),
                Err(Halt::Engine(e)) => self.fall_back(e, observer),
                Err(Halt::Run(e)) => return Err(e),
            }
        }
    }

    /// Ends the epoch: its mistakes are recorded (and returned) and the
    /// next starts at row 0.
    pub fn finish_epoch(&mut self) -> u64 {
        self.lp.host_bound = None;
        self.lp.finish_epoch()
    }

    /// Records the early-stopping score of the epoch just finished with
    /// `mistakes`, the validation part's rows weighted by
    /// `validation_weight` when given (see [`crate::train::early_stop`]).
    pub(super) fn score_epoch(
        &mut self,
        rule: &crate::train::early_stop::EarlyStop,
        validation: Option<&Dataset<F>>,
        validation_weight: Option<&[f64]>,
        mistakes: u64,
    ) {
        self.lp
            .score_epoch(rule, validation, validation_weight, mistakes);
    }

    /// The exact state; its `position` is an index into the rows held.
    pub fn state(&self) -> &State<F> {
        &self.lp.state
    }

    /// Moves to held row `i` (decisions before it are the caller's).
    pub fn set_position(&mut self, i: usize) -> Result<()> {
        if i != self.lp.state.position {
            self.forget_ahead()
                .map_err(|e| Error::Train(e.to_string()))?;
            self.lp.state.position = i.min(self.lp.rows);
        }
        Ok(())
    }

    /// Changes the state from outside (weights or counters decided
    /// elsewhere): whatever the loop knew about the weights is dropped.
    pub fn adopt(&mut self, change: impl FnOnce(&mut State<F>)) -> Result<()> {
        self.forget_ahead()
            .map_err(|e| Error::Train(e.to_string()))?;
        change(&mut self.lp.state);
        self.lp.weights_changed();
        self.lp.scan_stale();
        Ok(())
    }

    /// Sets weights `(k, value)` (indices into [`State::weights`]) decided
    /// elsewhere, keeping the certified scan's drift bound current without a
    /// pass over every weight.
    pub fn adopt_weights(&mut self, changes: &[(usize, F)]) -> Result<()> {
        self.forget_ahead()
            .map_err(|e| Error::Train(e.to_string()))?;
        for &(k, v) in changes {
            if k >= self.lp.state.weights.len() {
                return Err(Error::Train(format!(
                    "weight {} of {} changed",
                    k + 1,
                    self.lp.state.weights.len()
                )));
            }
            self.lp.scan_weight_change(k, v);
            self.lp.state.weights[k] = v;
        }
        self.lp.scan_refresh();
        self.lp.weights_set(changes.iter().map(|&(_, v)| v));
        Ok(())
    }

    /// Changes the state's bookkeeping from outside (the counters, the
    /// average's accumulator, the pocket): everything but the weights,
    /// which [`Stepper::adopt_weights`] and [`Stepper::adopt`] change.
    pub fn adopt_bookkeeping(&mut self, change: impl FnOnce(&mut State<F>)) {
        change(&mut self.lp.state);
    }

    /// Starts keeping every update's (row, head), for [`Stepper::take_updates`].
    pub fn log_updates(&mut self) {
        self.lp.update_log.get_or_insert_with(Vec::new);
    }

    /// The updates since the last call, as (held row, head), in order.
    pub fn take_updates(&mut self) -> Vec<(usize, usize)> {
        self.lp
            .update_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Weights per head (features plus the bias).
    pub fn dim(&self) -> usize {
        self.lp.dim
    }

    /// The rows held, in visit order unless [`Stepper::visit_in`] gave
    /// an order of its own.
    pub fn data(&self) -> &'d Dataset<F> {
        self.lp.data
    }

    /// The result so far, as [`crate::train::fit`]'s loop returns it.
    pub fn finish(mut self, stop: Stop, epoch_seconds: Vec<f64>) -> Outcome<F> {
        self.engine_stats.add(&self.engine.stats());
        // The last engine as it ended: a pair whose device never started
        // is the CPU engine alone (see `crate::engine::pair`).
        if let Some(last) = self.engines.last_mut() {
            *last = self.engine.name();
        }
        Outcome {
            class_weights: self.lp.class_weights,
            state: self.lp.state,
            stop,
            engines: self.engines,
            stats: self.lp.stats,
            engine_stats: self.engine_stats,
            epoch_seconds,
            epoch_modes: std::mem::take(&mut self.lp.epoch_modes),
            chooser: self.lp.chooser.into_memory(),
        }
    }

    /// Starts the chooser from what an earlier run over the same rows
    /// measured (its [`Outcome::chooser`]), instead of pricing every mode
    /// afresh: for callers that run epoch by epoch.
    pub fn recall(&mut self, memory: crate::train::ChooserMemory) {
        self.lp.chooser.recall(memory);
    }

    /// Drops what is ahead of the current row: a walk in flight and passes
    /// not yet collected.
    fn forget_ahead(&mut self) -> std::result::Result<(), EngineError> {
        self.lp.end_walk(self.engine.as_mut())?;
        self.lp.drain_inflight(self.engine.as_mut())
    }

    /// Replaces the engine by the fallback after it failed with `e`.
    fn fall_back(&mut self, e: EngineError, observer: &mut dyn Observer<F>) {
        let old = self.replace_engine();
        let at = self.lp.placement.position(self.lp.state.position);
        observer.on_warning(&format!(
            "{old} failed: {e}; continuing on {} from epoch {}, row {} (no work lost, the result is unchanged)",
            self.engine.name(),
            self.lp.state.epoch + 1,
            at + 1
        ));
    }

    /// Swaps in the fallback engine; returns the old one's name.
    fn replace_engine(&mut self) -> String {
        let old = self.engine.name();
        self.engine_stats.add(&self.engine.stats());
        self.engine = (self.fallback)();
        self.lp.inflight.clear();
        self.lp.walk_active = false;
        self.lp.walker_version = None;
        self.lp.host_bound = None;
        self.lp.scan_forget();
        self.lp.chooser.engine_replaced();
        self.lp.stats.fallbacks += 1;
        self.engines.push(self.engine.name());
        old
    }
}

#[cfg(test)]
mod tests;
