//! The walks over a stretch of rows: replaying an engine's own walk,
//! settling a window by an engine pass's slacks, or the host deciding
//! every row itself.

use std::time::Instant;

use crate::engine::certify::{self, Settled};
use crate::engine::cpu::lookahead::Batch;
use crate::engine::reference;
use crate::engine::{BatchLimits, EngineError, MarginEngine, WalkBatch, WalkStart, WalkStop};
use crate::float::Real;
use crate::train::placement::OtherRows;
use crate::train::state::Observer;
use crate::train::sweep::chooser;
use crate::train::sweep::{Halt, InFlight, Loop, LoopResult};

/// Abandon a window once this many rows in it fell back to a dot product
/// because of drift, and they are more than a tenth of the rows walked.
const BREAK_AFTER: u64 = 32;

/// The smallest window the loop asks for after an early break.
const MIN_WINDOW: usize = 64;

/// Rows the walk ahead's warm-up piece goes on for at most, waiting for a
/// helper to wake (see [`Loop::walk_ahead`]).
const WARM_LIMIT: usize = 64 * chooser::WARM_ROWS;

impl<F: Real> Loop<'_, F> {
    /// Whether this run walks with the engine's walker: one head, no pocket
    /// (whose evaluations need passes), unit updates only (walkers apply
    /// y·x~ to their copy of the weights, and
    /// [`certify::safe_updates`] counts updates of at most max||x~||), and
    /// an engine that has one.
    pub(super) fn walks(&self, engine: &mut dyn MarginEngine<F>) -> bool {
        self.walk_enabled
            && self.order.is_none()
            && self.heads == 1
            && self.state.pocket.is_none()
            && self.unit_updates()
            && engine.walker().is_some()
    }

    /// Cancels a walk in flight, if any: its decisions past the loop's
    /// position are dropped, and the walker's weights need a resync.
    pub(super) fn end_walk(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
    ) -> std::result::Result<(), EngineError> {
        if self.walk_active {
            // The walker may have gone on past the loop's position.
            self.walk_active = false;
            self.walker_version = None;
            if let Some(w) = engine.walker() {
                w.cancel()?;
            }
        }
        Ok(())
    }

    /// Replays the engine's walk for a stretch of rows (about `stretch`
    /// rows, or to a stop): every listed decision is applied with the
    /// reference arithmetic, the weights each update produced are compared
    /// with the walker's bit for bit, speculative decisions are re-decided,
    /// and unlisted rows are certainly correct.
    pub(super) fn walk_device(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        observer: &mut dyn Observer<F>,
        stretch: usize,
        deadline: Option<Instant>,
    ) -> LoopResult<()> {
        let max_updates = self.safe_updates();
        if max_updates == 0 {
            // Weights this large could overflow on a device.
            self.end_walk(engine)?;
            let end = (self.state.position + self.work_cap).min(self.end);
            return self.walk_host(engine, peers, end);
        }
        if !self.walk_active {
            self.begin_device_walk(engine, max_updates)?;
        }
        // The chooser's stretch (the walk goes on between stretches), and
        // never more than about 2^26 multiply-adds, for stop requests.
        let stretch = self.work_cap.min(stretch);
        let target = (self.state.position + stretch).min(self.end);
        // A walker must move: a batch may end where it started, but not
        // many in a row.
        let mut stalled = 0;
        while self.walk_active && self.state.position < target {
            let Some(walker) = engine.walker() else {
                return Err(Halt::Engine(EngineError("the engine has no walker".into())));
            };
            // A trial's time budget cuts the walk. A walker that keeps the
            // deadline itself walks as far as the budget allows, past the
            // trial's rows: the trial then measures the walk at the windows
            // it would use (held to a trial's 4,096 rows, the CPU search on
            // an H100's 16 cores measured its fork and join, not its speed,
            // and lost every trial on dense 4M x 256, where it is 8x the
            // host's walk). Another is cut between batches, a quarter of
            // what the trial measures.
            let horizon = match deadline {
                Some(_) if walker.keeps_deadlines() => self.end,
                Some(_) => (self.state.position + (self.chooser.measure() / 4).max(1)).min(target),
                None => target,
            };
            let batch = walker.next(BatchLimits { horizon, deadline })?;
            stalled = if batch.end == batch.start && batch.stop == WalkStop::Running {
                stalled + 1
            } else {
                0
            };
            self.check_device_batch(&batch, stalled)?;
            if !self.commit_device_batch(engine, peers, observer, &batch)? {
                return Ok(());
            }
            self.stats.certified_correct += (batch.end - self.state.position) as u64;
            self.state.position = batch.end;
            match batch.stop {
                WalkStop::Running => {}
                WalkStop::End | WalkStop::Updates => self.walk_active = false,
                WalkStop::Resync => {
                    self.walk_active = false;
                    self.walker_version = None;
                }
            }
            if observer.should_stop() || deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
        }
        Ok(())
    }

    /// Starts the engine's walk at the loop's row, with the weights
    /// uploaded again unless the walker's copy is known to equal them.
    fn begin_device_walk(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        max_updates: u64,
    ) -> LoopResult<()> {
        let start = WalkStart {
            position: self.state.position,
            end: self.end,
            weights: &self.state.weights,
            resync: self.walker_version != Some(self.weights_version),
            tau: self.tau,
            max_updates,
        };
        let Some(walker) = engine.walker() else {
            return Err(Halt::Engine(EngineError("the engine has no walker".into())));
        };
        walker.begin(&start)?;
        self.walk_active = true;
        self.walker_version = Some(self.weights_version);
        Ok(())
    }

    /// A device batch that stalled too long, or whose rows or decisions do
    /// not follow the loop's row, is the engine's failure.
    fn check_device_batch(&self, batch: &WalkBatch<F>, stalled: u32) -> LoopResult<()> {
        if stalled > 64 {
            return Err(Halt::Engine(EngineError(format!(
                "the walk made no progress at row {} in {stalled} batches",
                self.state.position
            ))));
        }
        if batch.start != self.state.position || batch.end < batch.start || batch.end > self.end {
            return Err(Halt::Engine(EngineError(format!(
                "the walk returned rows {}..{} while the loop is at row {}",
                batch.start, batch.end, self.state.position
            ))));
        }
        let mut at = self.state.position;
        for d in &batch.decisions {
            let i = d.row;
            if i < at || i >= batch.end || (!d.speculative && !d.mistake) {
                return Err(Halt::Engine(EngineError(format!(
                    "the walk returned an invalid decision for row {i} (loop at row {at})"
                ))));
            }
            at = i + 1;
        }
        Ok(())
    }

    /// Commits a device batch's decisions in row order (a speculative one
    /// decided again on the host). Returns `false` when the walk ended on
    /// the way: the host decided a row otherwise, or the device's update
    /// of a weight differs from the loop's.
    fn commit_device_batch(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        observer: &mut dyn Observer<F>,
        batch: &WalkBatch<F>,
    ) -> LoopResult<bool> {
        for d in &batch.decisions {
            let i = d.row;
            self.stats.certified_correct += (i - self.state.position) as u64;
            self.state.position = i;
            let (mistake, rollback) = if d.speculative {
                self.stats.walk_speculative += 1;
                let host = self.host_decides(i, 0)?;
                (host, host != d.mistake)
            } else {
                self.stats.certified_mistakes += 1;
                (true, false)
            };
            self.commit(engine, peers, i, 0, mistake, None)?;
            self.state.position = i + 1;
            if rollback {
                // The device's reference dot came out otherwise (a fused
                // multiply-add can do that): the host's decision stands,
                // and the walk after it is void.
                self.stats.walk_rollbacks += 1;
                self.end_walk(engine)?;
                return Ok(false);
            }
            if !mistake {
                continue;
            }
            let Some(at) = d.values_at else {
                self.walker_version = None;
                continue;
            };
            // The walker applied this very update to weights equal to the
            // loop's (verified so far).
            self.walker_version = self.walker_version.map(|_| self.weights_version);
            if let Some(k) = self.differing_weight(i, &batch.values, at) {
                observer.on_warning(&format!(
                    "the device's update of weight {} at epoch {}, row {} differs from IEEE round-to-nearest; its walk is off for the rest of this run (the result is unaffected)",
                    k + 1,
                    self.state.epoch + 1,
                    i + 1
                ));
                self.walk_enabled = false;
                self.end_walk(engine)?;
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The first coordinate (0-based, the bias last) whose weight after the
    /// update of row `i` differs from the walker's value, if any.
    pub(super) fn differing_weight(&self, i: usize, values: &[F], at: usize) -> Option<usize> {
        let w = &self.state.weights;
        let mut j = at;
        let mut differs = None;
        reference::for_each_touched(self.data.features.row(i), self.bias, self.dim, |k| {
            if differs.is_none()
                && values.get(j).map(|v| v.to_f64().to_bits()) != Some(w[k].to_f64().to_bits())
            {
                differs = Some(k);
            }
            j += 1;
        });
        differs
    }

    /// Walks the rows of `pass` from the current position, settling by slack
    /// where the drift allows. Submits the next window halfway through.
    pub(super) fn walk(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        pass: &InFlight<F>,
    ) -> LoopResult<()> {
        let dim = self.dim;
        self.start_drift(pass);
        let mut drift_fallbacks = 0u64;
        let half = pass.start + (pass.end - pass.start) / 2;
        let mut i = pass.start;
        let mut mistakes = 0u64;
        let mut next_considered = false;
        while i < pass.end {
            if !next_considered && self.inflight.is_empty() && i >= half && pass.end < self.end {
                next_considered = true;
                if self.weights_safe() {
                    self.submit(engine, pass.end)?;
                }
            }
            if self.heads == 1 && self.state.pocket.is_none() {
                // The common case, rows settled correct, in a tight loop:
                // the same test as below, nothing to do for such a row.
                // Stops at the halfway mark so the next pass goes out then.
                let stop = if i < half { half } else { pass.end };
                let skipped = self.skip_settled_correct(i, stop, pass.start);
                if skipped > 0 {
                    self.stats.certified_correct += skipped as u64;
                    i += skipped;
                    self.state.position = i;
                    continue;
                }
            }
            let forced = self.facts.is_host_only(i);
            for h in 0..self.heads {
                let r = self.slack[(i - pass.start) * self.heads + h];
                let verdict = if forced {
                    Settled::Unknown
                } else {
                    certify::settle(r, self.drift[h].threshold)
                };
                let mistake = match verdict {
                    Settled::Correct => {
                        self.stats.certified_correct += 1;
                        false
                    }
                    Settled::Mistake => {
                        self.stats.certified_mistakes += 1;
                        true
                    }
                    Settled::Unknown => {
                        if r != 0.0 && !forced {
                            self.stats.drift_fallbacks += 1;
                            drift_fallbacks += 1;
                        }
                        self.host_decides(i, h)?
                    }
                };
                mistakes += mistake as u64;
                let base = &pass.weights[h * dim..(h + 1) * dim];
                self.commit(engine, peers, i, h, mistake, Some(base))?;
            }
            i += 1;
            self.state.position = i;
            let walked = (i - pass.start) as u64;
            if self.drift_overran(drift_fallbacks, walked, i < pass.end) {
                break;
            }
        }
        self.walk_ended(pass, i, mistakes);
        Ok(())
    }

    /// Each head's drift starts from the weights `pass` computed its
    /// slacks with.
    fn start_drift(&mut self, pass: &InFlight<F>) {
        let dim = self.dim;
        for (h, d) in self.drift.iter_mut().enumerate() {
            d.start(
                &self.state.weights[h * dim..(h + 1) * dim],
                &pass.weights[h * dim..(h + 1) * dim],
            );
        }
    }

    /// Whether the walk of a pass stops early, with rows left: the drift
    /// left at least [`BREAK_AFTER`] decisions, over a tenth of those of
    /// the `walked` rows, to the host.
    #[inline]
    fn drift_overran(&mut self, drift_fallbacks: u64, walked: u64, rows_left: bool) -> bool {
        if drift_fallbacks >= BREAK_AFTER
            && drift_fallbacks * 10 > walked * self.heads as u64
            && rows_left
        {
            // Windows this long are all drift allows: ask for about
            // that much next time.
            self.stats.early_breaks += 1;
            self.window_cap = (2 * walked as usize).max(MIN_WINDOW);
            return true;
        }
        false
    }

    /// The walk of `pass` ended at row `i` with `mistakes`: a pass walked
    /// to its end asks for longer windows, and the mistake rate follows.
    fn walk_ended(&mut self, pass: &InFlight<F>, i: usize, mistakes: u64) {
        if i == pass.end {
            self.window_cap = self.window_cap.saturating_mul(2);
        }

        let walked = ((i - pass.start) * self.heads).max(1) as f64;
        self.mistake_rate = 0.5 * self.mistake_rate + 0.5 * (mistakes as f64 / walked);
    }

    /// How many rows from `i` (before `stop`) are settled correct by their
    /// slack under the current drift of a single head: exactly the rows the
    /// per-row test would settle correct, host-only rows excluded.
    pub(super) fn skip_settled_correct(&self, i: usize, stop: usize, pass_start: usize) -> usize {
        let threshold = self.drift[0].threshold;
        let slack = &self.slack[i - pass_start..stop - pass_start];
        let mut n = 0;
        while n < slack.len() {
            let p = i + n;
            // The one settle test (a NaN slack settles nothing).
            if self.facts.is_host_only(p)
                || certify::settle(slack[n], threshold) != Settled::Correct
            {
                break;
            }
            n += 1;
        }
        n
    }

    /// Whether the host can walk with the other cores summing the rows
    /// ahead ([`crate::engine::cpu::lookahead`], [`Loop::walk_ahead`]): on sparse
    /// rows, with cores to help, and for runs whose updates need nothing but
    /// the row, its margin and the count: one head, updates of weight 1 (no
    /// class or row weights; the bias's step may be scikit-learn's decay),
    /// no pocket, and nothing else that reads the weights just before an
    /// update (the certified scan's drift). The stopping rule's loss needs
    /// each mistake's margin as scikit-learn computes it, which in f64 is
    /// the reference dot the walk decides by (the same products summed in
    /// the same order, the bias last), and in f32 is not (scikit-learn sums
    /// float32 products in float64).
    pub(super) fn may_walk_ahead(&self) -> bool {
        let loss_from_dots = F::PRECISION == crate::float::Precision::F64;
        self.data.features.is_sparse()
            && self.heads == 1
            && self.state.pocket.is_none()
            && self.class_weights.is_none()
            && self.row_weights.is_none()
            && (!self.sums_loss() || loss_from_dots)
            && !self.scan_tracks()
            && rayon::current_num_threads() > 1
    }

    /// Whether this epoch sums its mistakes' losses (scikit-learn's rule).
    fn sums_loss(&self) -> bool {
        self.tracks_loss && self.state.early.is_some()
    }

    /// Walks rows up to `end` with the other cores summing the rows ahead,
    /// on the loop's own weights: the walk makes every decision the
    /// reference's way, in the loop's order, and applies each update once, with
    /// the reference's arithmetic; the loop then counts the batch's updates
    /// in order. A row the walk cannot finish (a dot or an update that
    /// overflows, the weights left as they were) is decided again row by
    /// row, whose update reports it.
    ///
    /// `warming`: this is the mode's unmeasured first piece after a switch,
    /// which goes on past `end` (to [`WARM_LIMIT`] rows) until a helper's
    /// sums arrive: a helper that slept can take a millisecond to wake,
    /// longer than a trial's rows, which would then measure the walk alone.
    pub(super) fn walk_ahead(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        end: usize,
        warming: bool,
        deadline: Option<Instant>,
    ) -> LoopResult<()> {
        let start = self.state.position;
        let mut end = end;
        let mut helped = false;
        loop {
            self.walk_ahead_to(engine, peers, end, deadline, &mut helped)?;
            if !warming || helped || end >= self.end || end - start >= WARM_LIMIT {
                return Ok(());
            }
            end = (end + chooser::WARM_ROWS).min(self.end);
        }
    }

    fn walk_ahead_to(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        end: usize,
        deadline: Option<Instant>,
        helped: &mut bool,
    ) -> LoopResult<()> {
        let data = self.data;
        let crate::data::Features::Sparse(m) = &data.features else {
            return self.walk_host(engine, peers, end);
        };
        let helpers = rayon::current_num_threads() - 1;
        let sums_loss = self.sums_loss();
        while self.state.position < end {
            let before = self.ahead.counts;
            let mut updates_left = u64::MAX;
            self.ahead_decisions.clear();
            let mut margins = std::mem::take(&mut self.ahead_margins);
            margins.clear();
            let walked = self.ahead.walk(
                m,
                &data.labels,
                self.bias,
                &mut self.state.weights,
                Batch {
                    from: self.state.position,
                    to: end,
                    tau: self.tau,
                    helpers,
                    deadline,
                    max_mistakes: usize::MAX,
                    updates_left: &mut updates_left,
                    decisions: &mut self.ahead_decisions,
                    values: None,
                    bias_step: self.intercept_decay.unwrap_or(F::ONE),
                    margins: sums_loss.then_some(&mut margins),
                    order: self.order,
                },
            );
            let Some(walked) = walked else {
                // The weights cannot be shared between threads here.
                return self.walk_host(engine, peers, end);
            };
            *helped |= walked.helped;
            let counts = self.ahead.counts;
            self.stats.ahead_kept += counts.kept - before.kept;
            self.stats.ahead_summed += counts.summed - before.summed;
            let again = (walked.stop == WalkStop::Resync)
                .then(|| self.ahead_decisions.last().map(|d| d.row))
                .flatten();
            self.count_walked_ahead(again.is_some(), &margins, sums_loss)?;
            self.ahead_margins = margins;
            if walked.subnormal {
                self.flush_subnormals();
            }
            match again {
                Some(row) => {
                    self.state.position = row;
                    self.walk_host(engine, peers, row + 1)?;
                }
                None => self.state.position = walked.position,
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
        }
        Ok(())
    }

    /// Counts the updates of a batch of the walk ahead, in order (each of
    /// its decisions is a mistake, whose margin the walk pushed when
    /// `sums_loss`), but the last when it is to be `redone` row by row.
    fn count_walked_ahead(
        &mut self,
        redone: bool,
        margins: &[F],
        sums_loss: bool,
    ) -> LoopResult<()> {
        let decisions = std::mem::take(&mut self.ahead_decisions);
        for (j, d) in decisions[..decisions.len() - redone as usize]
            .iter()
            .enumerate()
        {
            let y = self.data.labels[self.row_at(d.row)];
            if sums_loss && let Some(early) = &mut self.state.early {
                early.loss_in_epoch += reference::hinge_loss(y, margins[j].to_f64());
            }
            self.count_update(d.row, 0);
            self.accumulate_average(d.row, 0)?;
        }
        self.ahead_decisions = decisions;
        Ok(())
    }

    /// Walks rows up to `end` deciding every row on the host.
    pub(super) fn walk_host(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        peers: &mut dyn OtherRows<F>,
        end: usize,
    ) -> LoopResult<()> {
        let mut i = self.state.position;
        while i < end {
            if self.heads == 1 && self.state.pocket.is_none() && self.host_bound.is_some() {
                // The common case in a tight loop: rows the host's fast
                // margin settles (a correct row needs nothing more, a
                // certain mistake only its update), as host_decides would.
                let whole = self.margins_whole();
                let run = self.host_settled(i, end, whole);
                self.stats.host_certified += run.correct as u64;
                self.stats.host_exact += run.exact;
                i += run.correct;
                self.state.position = i;
                match run.next {
                    None => break,
                    Some(Settled::Mistake) => {
                        self.stats.host_certified += 1;
                        self.stats.host_exact += run.margin.is_some() as u64;
                        self.keep_margin(i, 0, run.margin);
                        self.commit(engine, peers, i, 0, true, None)?;
                        i += 1;
                        self.state.position = i;
                        continue;
                    }
                    // Uncertain: the row-by-row path.
                    Some(_) => {}
                }
            }
            self.prefetch_at(i + 1);
            for h in 0..self.heads {
                let mistake = self.host_decides(i, h)?;
                self.commit(engine, peers, i, h, mistake, None)?;
            }
            i += 1;
            self.state.position = i;
        }
        Ok(())
    }

    /// How many rows of the single head from `i` (before `end`) the host's
    /// fast margin settles correct, and the verdict on the row after them
    /// (`None` at `end`): a certain mistake (with its exact margin where
    /// the margins are `whole`: [`Loop::margins_whole`]), or `Unknown` for a
    /// row it cannot settle or must not (a host-only row, or no fast margin
    /// at all), which the caller decides with [`Loop::host_decides`].
    fn host_settled(&self, i: usize, end: usize, whole: bool) -> HostRun<F> {
        let mut run = HostRun {
            correct: 0,
            exact: 0,
            next: None,
            margin: None,
        };
        let Some(bound) = &self.host_bound else {
            run.next = (i < end).then_some(Settled::Unknown);
            return run;
        };
        let data = self.data;
        let w = &self.state.weights[..self.dim];
        for p in i..end {
            self.prefetch_at(p + 1);
            let r = self.row_at(p);
            if self.facts.is_host_only(r) {
                run.next = Some(Settled::Unknown);
                return run;
            }
            let y = data.labels[r];
            let (verdict, margin) = self.host_verdict(bound, w, r, y, whole);
            if verdict != Settled::Correct {
                (run.next, run.margin) = (Some(verdict), margin);
                return run;
            }
            run.correct += 1;
            run.exact += margin.is_some() as u64;
        }
        run
    }

    /// [`certify::safe_updates`] for the loop's weights, from a bound of
    /// their norm kept across updates: each update adds at most
    /// max||x~|| to it. The weights are summed afresh (a pass over all of
    /// them, a millisecond on 10^6 features: more than a chooser's trial
    /// of the engine) only when they changed otherwise, or when the bound
    /// would allow no update.
    fn safe_updates(&mut self) -> u64 {
        let max_norm = self.facts.max_norm;
        if let Some((norm, version, updates)) = self.norm_bound {
            let since = self.updates_made - updates;
            // Valid while every change of the weights since was an update.
            if self.weights_version - version == since {
                let bound = certify::norm_after_updates::<F>(norm, since, max_norm);
                let safe = certify::safe_updates_for_norm::<F>(bound, max_norm);
                if safe > 0 {
                    return safe;
                }
            }
        }
        let norm = certify::weights_norm(&self.state.weights);
        self.norm_bound = Some((norm, self.weights_version, self.updates_made));
        certify::safe_updates_for_norm::<F>(norm, max_norm)
    }
}

/// What [`Loop::host_settled`] found from its first row: how many rows it
/// settled correct (`exact` of them from exact margins), and the verdict
/// on the row after them (`None` at the end), with that row's exact margin
/// where it has one.
struct HostRun<F> {
    correct: usize,
    exact: u64,
    next: Option<Settled>,
    margin: Option<F>,
}
