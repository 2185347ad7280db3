//! The certified scan: the first row that is not certainly correct under
//! the current weights, found by engine passes and deciding nothing.
//!
//! A window's slacks stay valid while the weights move, up to the drift
//! threshold (see [`crate::engine::certify`]), so a window is computed once and
//! rescanned after each update made elsewhere ([`Loop::scan_weight_change`]
//! keeps its drift bound current one weight at a time). A row that drift
//! alone left uncertain gets a fresh pass before it is reported.

use crate::engine::certify::{self, Settled};
use crate::engine::{EngineError, MarginEngine, Pass};
use crate::float::Real;
use crate::train::sweep::Loop;
use crate::train::sweep::drift::{Drift, ScanWindow};

/// The smallest window a scan computes, and the first.
const MIN_SCAN: usize = 64;
const FIRST_SCAN: usize = 4096;

impl<F: Real> Loop<'_, F> {
    /// The first row in `from..to` not certainly correct for every head
    /// under the current weights; `to` if every one is.
    pub(super) fn first_uncertain(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        from: usize,
        to: usize,
    ) -> Result<usize, EngineError> {
        if from >= to {
            return Ok(to);
        }
        // Engine passes are of rows in `data`'s order, not the loop's own.
        if !engine.certifies() || !self.weights_safe() || self.order.is_some() {
            return Ok(from);
        }
        let mut i = from;
        while i < to {
            let covered = self
                .scan
                .as_ref()
                .is_some_and(|w| w.start <= i && i < w.end);
            if !covered {
                self.scan_pass(engine, i, to)?;
            }
            self.scan_current();
            let Some(w) = &self.scan else {
                return Ok(i);
            };
            let stop = w.end.min(to);
            let mut refresh = None;
            'rows: for p in i..stop {
                if self.facts.is_host_only(p) {
                    return Ok(p);
                }
                for h in 0..self.heads {
                    let r = w.slack[(p - w.start) * self.heads + h];
                    match certify::settle(r, w.drift[h].threshold) {
                        Settled::Correct => {}
                        Settled::Mistake => return Ok(p),
                        Settled::Unknown if w.moved => {
                            refresh = Some(p);
                            break 'rows;
                        }
                        Settled::Unknown => return Ok(p),
                    }
                }
            }
            match refresh {
                Some(p) => {
                    // Drift spoiled the window this far in: windows about
                    // twice as long are what the updates leave valid.
                    let used = p - w.start;
                    self.scan_len = (2 * used).max(MIN_SCAN);
                    self.scan_pass(engine, p, to)?;
                    i = p;
                }
                None => {
                    if stop == w.end {
                        // A whole window was clean: look further next time.
                        self.scan_len = self.scan_len.saturating_mul(2);
                    }
                    i = stop;
                }
            }
        }
        Ok(to)
    }

    /// A fresh window from row `start` (before `to`) under the current
    /// weights.
    fn scan_pass(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        start: usize,
        to: usize,
    ) -> Result<(), EngineError> {
        self.drain_inflight(engine)?;
        if self.scan_len == 0 {
            self.scan_len = FIRST_SCAN;
        }
        // A pass costs about one step per weight besides its rows' terms:
        // windows shorter than that would be mostly overhead.
        let terms =
            self.data.features.storage_bytes() / std::mem::size_of::<F>().max(1) / self.rows.max(1);
        let floor = (self.state.weights.len() / (terms * self.heads + 1)).max(MIN_SCAN);
        let len = self
            .scan_len
            .max(floor)
            .min(engine.max_pass().max(1))
            .min(self.work_cap.saturating_mul(4).max(MIN_SCAN));
        let end = (start + len).min(to);
        let mut w = self.scan.take().unwrap_or_else(|| ScanWindow {
            start,
            end,
            weights: Vec::new(),
            slack: Vec::new(),
            drift: Vec::new(),
            moved: false,
            stale: false,
            followed: 0,
        });
        w.start = start;
        w.end = end;
        w.weights.clone_from(&self.state.weights);
        w.slack.clear();
        w.slack.resize((end - start) * self.heads, 0.0);
        engine.submit(&Pass {
            start,
            end,
            weights: &w.weights,
            tau: self.tau,
            heads: self.heads,
        })?;
        self.stats.passes += 1;
        engine.collect(&mut w.slack)?;
        w.drift = (0..self.heads)
            .map(|_| Drift {
                sq: 0.0,
                err: 0.0,
                threshold: certify::threshold(0.0),
            })
            .collect();
        w.moved = false;
        w.stale = false;
        w.followed = 0;
        self.scan = Some(w);
        Ok(())
    }

    /// Brings the window's drift bound up to date with the weights.
    fn scan_current(&mut self) {
        let dim = self.dim;
        if let Some(w) = &mut self.scan
            && w.stale
        {
            for (h, d) in w.drift.iter_mut().enumerate() {
                d.start(
                    &self.state.weights[h * dim..(h + 1) * dim],
                    &w.weights[h * dim..(h + 1) * dim],
                );
            }
            w.stale = false;
        }
    }

    /// Weight `k` is about to become `new`: the window's drift follows.
    pub(super) fn scan_weight_change(&mut self, k: usize, new: F) {
        let dim = self.dim;
        if let Some(w) = &mut self.scan {
            w.moved = true;
            w.followed += 1;
            if w.followed > self.state.weights.len() {
                w.stale = true;
            }
            if !w.stale {
                let base = w.weights[k].to_f64();
                w.drift[k / dim].change(self.state.weights[k].to_f64() - base, new.to_f64() - base);
            }
        }
    }

    /// Whether the window's drift is kept current one weight at a time.
    pub(super) fn scan_tracks(&self) -> bool {
        self.scan.as_ref().is_some_and(|w| !w.stale)
    }

    /// The update of row `row` for head `h` just moved the weights it
    /// touched from `self.before`: the window's drift follows.
    pub(super) fn scan_follow_update(&mut self, row: crate::data::Row<'_, F>, h: usize) {
        let dim = self.dim;
        let (weights, before) = (&self.state.weights, &self.before);
        let Some(w) = &mut self.scan else { return };
        w.moved = true;
        w.followed += row.stored() + self.bias as usize;
        if w.followed > weights.len() {
            w.stale = true;
            return;
        }
        let drift = &mut w.drift[h];
        let base = &w.weights[h * dim..(h + 1) * dim];
        let now = &weights[h * dim..(h + 1) * dim];
        let mut j = 0;
        crate::engine::reference::for_each_touched(row, self.bias, dim, |k| {
            let b = base[k].to_f64();
            drift.change(before[j].to_f64() - b, now[k].to_f64() - b);
            j += 1;
        });
        drift.refresh();
    }

    /// Recomputes the thresholds after [`Loop::scan_weight_change`]s.
    pub(super) fn scan_refresh(&mut self) {
        if let Some(w) = &mut self.scan {
            for d in &mut w.drift {
                d.refresh();
            }
        }
    }

    /// The weights changed in ways not reported one by one.
    pub(super) fn scan_stale(&mut self) {
        if let Some(w) = &mut self.scan {
            w.moved = true;
            w.stale = true;
        }
    }

    /// Drops the window (its engine is gone).
    pub(super) fn scan_forget(&mut self) {
        self.scan = None;
    }

    /// Collects and drops every pass in flight (the engine returns them in
    /// order, so none can be skipped).
    pub(super) fn drain_inflight(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
    ) -> Result<(), EngineError> {
        while let Some(stale) = self.inflight.pop_front() {
            self.eval_slack
                .resize((stale.end - stale.start) * self.heads, 0.0);
            engine.collect(&mut self.eval_slack)?;
        }
        Ok(())
    }

    /// The weights changed from outside the loop: the walker must upload
    /// them, and the host's bound is computed afresh.
    pub(super) fn weights_changed(&mut self) {
        self.weights_version += 1;
        self.host_bound = None;
    }

    /// Weights set from outside to `values`: the walker must upload them;
    /// the host's bound stays valid unless one of them is subnormal (then
    /// it gets the flush term, as after an update).
    pub(super) fn weights_set(&mut self, values: impl Iterator<Item = F>) {
        self.weights_version += 1;
        let (mut subnormal, mut whole) = (false, true);
        for v in values {
            subnormal |= v.is_subnormal();
            whole &= certify::all_whole(&[v]);
        }
        self.whole
            .set(whole, self.weights_version, self.updates_made);
        if let Some(b) = &mut self.host_bound
            && subnormal
            && b.flush == F::ZERO
        {
            *b = certify::Bound::new(true, self.facts.l1_max).with_margin(self.tau);
        }
    }
}
