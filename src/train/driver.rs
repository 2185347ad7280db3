//! The one training loop, generic over how margins are obtained.
//!
//! The host owns the weights and applies every update in dataset order with
//! the reference arithmetic. An engine only says which rows it cannot certify
//! correct; the loop resolves those rows itself.
//!
//! To need few engine round trips whatever the mistake rate, the loop
//! *speculates*: after a pass over a window, it resolves all the window's
//! flagged rows in order, updating `w` as it goes, although rows between
//! them were certified under the *old* weights. The next pass then both
//! **verifies** those rows under the exact piecewise weights they would have
//! seen (one segment per update, sent as patches) and **speculates** on the
//! next window under the newest weights. If a verified row turns out not to
//! be certain, the loop rolls back to it through an exact undo log and goes on
//! from there. Either way every decision committed is the reference's.

use crate::data::{Dataset, Row};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::reference;
use crate::train::engine::{EngineError, MarginEngine, Pass, Segment};

/// Exact training state between two rows: enough to resume bit for bit.
#[derive(Clone, Debug, PartialEq)]
pub struct State<F> {
    /// w~ in force at `position` of `epoch` (bias last).
    pub weights: Vec<F>,
    /// 0-based epoch in progress.
    pub epoch: usize,
    /// Next row (in training order) of that epoch.
    pub position: usize,
    /// Mistakes of the completed epochs.
    pub mistakes_per_epoch: Vec<u64>,
    /// Mistakes so far in the epoch in progress.
    pub mistakes_in_epoch: u64,
}

impl<F: Real> State<F> {
    pub fn initial(dim: usize) -> Self {
        State {
            weights: vec![F::ZERO; dim],
            epoch: 0,
            position: 0,
            mistakes_per_epoch: Vec::new(),
            mistakes_in_epoch: 0,
        }
    }
}

/// Why training stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// An epoch made no mistake.
    Converged,
    /// `max_epochs` epochs ran, each with a mistake.
    MaxEpochs,
    /// The observer asked to stop (Ctrl-C); the state is exact.
    Interrupted,
}

/// Counters of the loop itself.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LoopStats {
    /// Engine passes requested.
    pub passes: u64,
    /// Reference dot products computed on the host.
    pub host_dots: u64,
    /// Rows committed without a host dot (certified by the engine).
    pub certified_rows: u64,
    /// Verifications that failed and rolled speculation back.
    pub rollbacks: u64,
    /// Engines given up after a device failure.
    pub fallbacks: u64,
}

/// What the loop reports while it runs, and how it is told to stop.
pub trait Observer {
    fn on_progress(&mut self, _epoch: usize, _position: usize, _rows: usize) {}
    fn on_epoch_end(&mut self, _epoch: usize, _mistakes: u64) {}
    fn on_warning(&mut self, _message: &str) {}
    /// Polled between passes; `true` stops at the next safe point.
    fn should_stop(&mut self) -> bool {
        false
    }
}

/// An observer that ignores everything.
pub struct Silent;
impl Observer for Silent {}

/// The result of the loop.
#[derive(Clone, Debug)]
pub struct Outcome<F> {
    pub state: State<F>,
    pub stop: Stop,
    /// Names of the engines used, in order (more than one after a fallback).
    pub engines: Vec<String>,
    pub stats: LoopStats,
    pub engine_stats: crate::train::engine::EngineStats,
}

/// Supplies a replacement engine after a device failure.
pub type Fallback<'a, F> = &'a mut dyn FnMut() -> Box<dyn MarginEngine<F> + 'a>;

/// Runs epochs from `state` until convergence, `max_epochs`, or a stop request.
pub fn run<'a, F: Real>(
    data: &Dataset<F>,
    bias: bool,
    max_epochs: usize,
    state: State<F>,
    mut engine: Box<dyn MarginEngine<F> + 'a>,
    fallback: Fallback<'a, F>,
    observer: &mut dyn Observer,
) -> Result<Outcome<F>> {
    let dim = data.cols() + bias as usize;
    if state.weights.len() != dim {
        return Err(Error::Usage(format!(
            "initial weights have {} entries but the data needs {dim}",
            state.weights.len()
        )));
    }
    let mut lp = Loop::new(data, bias, state);
    let mut engines = vec![engine.name()];
    let mut engine_stats = crate::train::engine::EngineStats::default();
    let stop = loop {
        if lp.state.mistakes_per_epoch.len() >= max_epochs {
            break Stop::MaxEpochs;
        }
        match lp.run_epoch(engine.as_mut(), observer)? {
            EpochEnd::Done => {
                let m = lp.finish_epoch();
                observer.on_epoch_end(lp.state.epoch - 1, m);
                if m == 0 {
                    break Stop::Converged;
                }
            }
            EpochEnd::Interrupted => break Stop::Interrupted,
            EpochEnd::EngineFailed(e) => {
                let old = engine.name();
                accumulate(&mut engine_stats, &engine.stats());
                engine = fallback();
                lp.stats.fallbacks += 1;
                engines.push(engine.name());
                observer.on_warning(&format!(
                    "{old} failed: {e}; continuing on {} from epoch {}, row {} (no work lost, the result is unchanged)",
                    engine.name(),
                    lp.state.epoch + 1,
                    lp.state.position
                ));
            }
        }
    };
    accumulate(&mut engine_stats, &engine.stats());
    Ok(Outcome {
        state: lp.state,
        stop,
        engines,
        stats: lp.stats,
        engine_stats,
    })
}

fn accumulate(
    total: &mut crate::train::engine::EngineStats,
    s: &crate::train::engine::EngineStats,
) {
    total.passes += s.passes;
    total.rows_evaluated += s.rows_evaluated;
    total.rows_flagged += s.rows_flagged;
    total.seconds += s.seconds;
}

enum EpochEnd {
    Done,
    Interrupted,
    EngineFailed(EngineError),
}

/// Coordinates written since some point, for building patches.
#[derive(Default)]
struct Touched {
    all: bool,
    coords: Vec<u32>,
}

impl Touched {
    fn clear(&mut self) {
        self.all = false;
        self.coords.clear();
    }

    fn is_empty(&self) -> bool {
        !self.all && self.coords.is_empty()
    }

    fn add_row<F: Real>(&mut self, row: Row<'_, F>, bias: bool, dim: usize) {
        if self.all {
            return;
        }
        match row {
            Row::Dense(_) => self.all = true,
            Row::Sparse(idx, _) => {
                self.coords.extend_from_slice(idx);
                if bias {
                    self.coords.push((dim - 1) as u32);
                }
                if self.coords.len() > dim {
                    self.all = true;
                    self.coords.clear();
                }
            }
        }
    }
}

/// Old values of the coordinates one speculative update overwrote.
struct Undo<F> {
    position: usize,
    /// `None`: the whole vector was saved (dense rows).
    coords: Option<Vec<u32>>,
    values: Vec<F>,
}

/// Speculation awaiting verification.
struct Speculation<F> {
    /// First unverified position; everything before it is committed.
    start: usize,
    /// Weights in force at `start` (exact).
    base: Vec<F>,
    /// End (exclusive) of the window whose flagged rows were resolved.
    end: usize,
    /// Flagged rows in `start..end` resolved on the host: (position, mistake).
    resolved: Vec<(usize, bool)>,
    undo: Vec<Undo<F>>,
}

struct Loop<'d, F> {
    data: &'d Dataset<F>,
    bias: bool,
    dim: usize,
    rows: usize,
    state: State<F>,
    /// Rows an engine must never settle (sorted), see `certify::needs_host`.
    host_only: Vec<usize>,
    spec: Option<Speculation<F>>,
    segments: Vec<Segment>,
    patch_coords: Vec<u32>,
    patch_values: Vec<F>,
    touched: Touched,
    flags: Vec<u32>,
    /// Recent fraction of flagged rows in speculative windows.
    flag_rate: f64,
    /// Shrinks the window after failed verifications.
    window_scale: f64,
    stats: LoopStats,
}

impl<'d, F: Real> Loop<'d, F> {
    fn new(data: &'d Dataset<F>, bias: bool, state: State<F>) -> Self {
        Loop {
            data,
            bias,
            dim: data.cols() + bias as usize,
            rows: data.rows(),
            state,
            host_only: crate::certify::host_only_rows(&data.features, bias),
            spec: None,
            segments: Vec::new(),
            patch_coords: Vec::new(),
            patch_values: Vec::new(),
            touched: Touched::default(),
            flags: Vec::new(),
            flag_rate: 0.01,
            window_scale: 1.0,
            stats: LoopStats::default(),
        }
    }

    fn finish_epoch(&mut self) -> u64 {
        let m = self.state.mistakes_in_epoch;
        self.state.mistakes_per_epoch.push(m);
        self.state.epoch += 1;
        self.state.position = 0;
        self.state.mistakes_in_epoch = 0;
        m
    }

    fn run_epoch(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        observer: &mut dyn Observer,
    ) -> Result<EpochEnd> {
        loop {
            if self.spec.is_none() && self.state.position >= self.rows {
                return Ok(EpochEnd::Done);
            }
            if observer.should_stop() {
                self.abandon_speculation();
                return Ok(EpochEnd::Interrupted);
            }
            let (start, zone_start) = match &self.spec {
                Some(s) => (s.start, s.end),
                None => (self.state.position, self.state.position),
            };
            let window =
                (engine.preferred_window(self.flag_rate) as f64 * self.window_scale) as usize;
            let remaining = self.rows - zone_start;
            let room = engine.max_pass().saturating_sub(zone_start - start);
            let zone_end = zone_start + window.max(1).min(remaining).min(room);
            if let Err(e) = self.evaluate(engine, start, zone_end) {
                self.abandon_speculation();
                return Ok(EpochEnd::EngineFailed(e));
            }
            if self.spec.is_some() && !self.verify(start)? {
                // Rolled back: the speculative window's flags are stale.
                observer.on_progress(self.state.epoch, self.state.position, self.rows);
                continue;
            }
            if zone_end > zone_start {
                let flagged =
                    self.resolve_zone(start, zone_start, zone_end, engine.max_segments())?;
                let rate = flagged as f64 / (zone_end - zone_start) as f64;
                self.flag_rate = 0.5 * self.flag_rate + 0.5 * rate;
            }
            observer.on_progress(self.state.epoch, self.state.position, self.rows);
        }
    }

    /// Fills `self.flags` for positions `start..end`: the engine's flags plus
    /// the host-only rows.
    fn evaluate(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        start: usize,
        end: usize,
    ) -> std::result::Result<(), EngineError> {
        let words = (end - start).div_ceil(32);
        self.flags.clear();
        self.flags.resize(words, 0);
        if !engine.certifies() {
            self.flags.fill(u32::MAX);
            return Ok(());
        }
        // The last segment must carry the newest weights into the new window.
        if let Some(s) = &self.spec {
            let from = s.end;
            if !self.touched.is_empty() && from < end {
                self.push_segment(from);
            }
        }
        let base: &[F] = match &self.spec {
            Some(s) => &s.base,
            None => &self.state.weights,
        };
        let pass = Pass {
            start,
            end,
            base,
            segments: &self.segments,
            patch_coords: &self.patch_coords,
            patch_values: &self.patch_values,
        };
        self.stats.passes += 1;
        engine.evaluate(&pass, &mut self.flags)?;
        let first = self.host_only.partition_point(|&p| p < start);
        for &p in &self.host_only[first..] {
            if p >= end {
                break;
            }
            let off = p - start;
            self.flags[off / 32] |= 1 << (off % 32);
        }
        Ok(())
    }

    /// Positions `lo..hi` (relative to `start`) whose flag is set, in order.
    fn flagged(&self, start: usize, lo: usize, hi: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let (a, b) = (lo - start, hi - start);
        let mut word = a / 32;
        while word * 32 < b {
            let mut bits = self.flags[word];
            if word == a / 32 {
                bits &= u32::MAX << (a % 32);
            }
            while bits != 0 {
                let off = word * 32 + bits.trailing_zeros() as usize;
                if off >= b {
                    break;
                }
                out.push(start + off);
                bits &= bits - 1;
            }
            word += 1;
        }
        out
    }

    /// Checks the speculation against this pass's flags. Returns `true` when
    /// every unresolved row verified (and commits the window), `false` after
    /// rolling back to the first row that did not.
    fn verify(&mut self, start: usize) -> Result<bool> {
        let Some(spec) = self.spec.take() else {
            return Ok(true);
        };
        let flagged = self.flagged(start, spec.start, spec.end);
        let mut resolved = spec.resolved.iter().peekable();
        let mut failure = None;
        for p in flagged {
            while resolved.next_if(|(q, _)| *q < p).is_some() {}
            if resolved.peek().is_some_and(|(q, _)| *q == p) {
                continue; // the host already resolved this row
            }
            failure = Some(p);
            break;
        }
        let end = failure.unwrap_or(spec.end);
        for &(p, mistake) in &spec.resolved {
            if p < end {
                self.state.mistakes_in_epoch += mistake as u64;
            }
        }
        let verified_rows =
            end - spec.start - spec.resolved.iter().filter(|(p, _)| *p < end).count();
        self.stats.certified_rows += verified_rows as u64;
        self.clear_segments();
        match failure {
            None => {
                self.window_scale = (self.window_scale * 1.25).min(1.0);
                self.state.position = spec.end;
                Ok(true)
            }
            Some(f) => {
                self.stats.rollbacks += 1;
                self.window_scale = (self.window_scale * 0.5).max(1.0 / 1024.0);
                for u in spec.undo.into_iter().rev() {
                    if u.position < f {
                        break;
                    }
                    self.restore(u);
                }
                self.state.position = f;
                let mistake = self.resolve_row(f, false)?.unwrap_or(false);
                self.state.mistakes_in_epoch += mistake as u64;
                self.state.position = f + 1;
                Ok(false)
            }
        }
    }

    /// Resolves the flagged rows of `zone_start..zone_end` in order (the pass
    /// started at `start`). Returns how many rows were flagged.
    fn resolve_zone(
        &mut self,
        start: usize,
        zone_start: usize,
        zone_end: usize,
        max_segments: usize,
    ) -> Result<usize> {
        debug_assert!(self.spec.is_none() && self.state.position == zone_start);
        let flagged = self.flagged(start, zone_start, zone_end);
        let count = flagged.len();
        let mut next = zone_start;
        let mut updated = false;
        let mut end = zone_end;
        // A new segment must leave room for the final one `evaluate` adds.
        let full = |lp: &Self| lp.needs_segment() && lp.segments.len() + 2 > max_segments;
        for c in flagged {
            if c > next && updated {
                if full(self) {
                    end = next;
                    break;
                }
                self.mark_unverified_from(next);
            }
            if self.spec.is_none() {
                self.stats.certified_rows += (c - self.state.position) as u64;
                self.state.position = c;
            }
            let speculative = self.spec.is_some();
            match self.resolve_row(c, speculative)? {
                Some(mistake) => {
                    updated |= mistake;
                    match &mut self.spec {
                        Some(s) => s.resolved.push((c, mistake)),
                        None => {
                            self.state.mistakes_in_epoch += mistake as u64;
                            self.state.position = c + 1;
                        }
                    }
                }
                None => {
                    // Overflow under speculative weights: decide it once the
                    // weights before it are verified.
                    end = c;
                    break;
                }
            }
            next = c + 1;
        }
        if next < end && updated {
            if full(self) {
                end = next;
            } else {
                self.mark_unverified_from(next);
            }
        }
        match &mut self.spec {
            Some(s) => s.end = end,
            None => {
                self.stats.certified_rows += (end - self.state.position) as u64;
                self.state.position = end;
            }
        }
        Ok(count)
    }

    /// Whether marking rows unverified now would add a segment.
    fn needs_segment(&self) -> bool {
        self.spec.is_some() && !self.touched.is_empty()
    }

    /// Rows from `p` on were certified under weights that have since changed.
    fn mark_unverified_from(&mut self, p: usize) {
        match &self.spec {
            None => {
                self.spec = Some(Speculation {
                    start: p,
                    base: self.state.weights.clone(),
                    end: p,
                    resolved: Vec::new(),
                    undo: Vec::new(),
                });
                self.state.position = p;
                self.touched.clear();
            }
            Some(_) => {
                if !self.touched.is_empty() {
                    self.push_segment(p);
                }
            }
        }
    }

    /// Records that the current weights are in force from `from`.
    fn push_segment(&mut self, from: usize) {
        let begin = self.patch_coords.len();
        if self.touched.all {
            self.patch_coords.extend(0..self.dim as u32);
            self.patch_values.extend_from_slice(&self.state.weights);
        } else {
            self.touched.coords.sort_unstable();
            self.touched.coords.dedup();
            for &k in &self.touched.coords {
                self.patch_coords.push(k);
                self.patch_values.push(self.state.weights[k as usize]);
            }
        }
        self.segments.push(Segment {
            from,
            patch: begin..self.patch_coords.len(),
        });
        self.touched.clear();
    }

    fn clear_segments(&mut self) {
        self.segments.clear();
        self.patch_coords.clear();
        self.patch_values.clear();
        self.touched.clear();
    }

    /// Computes the reference margin of row `p` under the current weights and
    /// applies the update on a mistake. Returns `None` (leaving `w` intact)
    /// when `speculative` and the margin or an update is not finite; without
    /// speculation that is an error.
    fn resolve_row(&mut self, p: usize, speculative: bool) -> Result<Option<bool>> {
        let data = self.data;
        let row = data.features.row(p);
        let y = data.labels[p];
        self.stats.host_dots += 1;
        let s = reference::dot(&self.state.weights, row, self.bias);
        if !s.is_finite() {
            if speculative {
                return Ok(None);
            }
            return Err(Error::Train(format!(
                "epoch {}, row {}: the margin w·x is {s}: the features are too large for {} (products overflow); rescale them or use --precision f64",
                self.state.epoch + 1,
                p + 1,
                F::PRECISION
            )));
        }
        if !reference::is_mistake(y, s) {
            return Ok(Some(false));
        }
        let saved = self.spec.as_ref().map(|_| self.save(row));
        if let Err(o) = reference::apply_update(&mut self.state.weights, row, y, self.bias) {
            if let Some(u) = saved {
                self.restore(Undo { position: p, ..u });
            }
            if speculative {
                return Ok(None);
            }
            return Err(Error::Train(format!(
                "epoch {}, row {}: weight {} overflowed to infinity: the features are too large for {}; rescale them or use --precision f64",
                self.state.epoch + 1,
                p + 1,
                o.coordinate + 1,
                F::PRECISION
            )));
        }
        if let (Some(spec), Some(u)) = (&mut self.spec, saved) {
            spec.undo.push(Undo { position: p, ..u });
        }
        self.touched.add_row(row, self.bias, self.dim);
        Ok(Some(true))
    }

    fn save(&self, row: Row<'_, F>) -> Undo<F> {
        match row {
            Row::Dense(_) => Undo {
                position: 0,
                coords: None,
                values: self.state.weights.clone(),
            },
            Row::Sparse(idx, _) => {
                let mut coords = idx.to_vec();
                if self.bias {
                    coords.push((self.dim - 1) as u32);
                }
                let values = coords
                    .iter()
                    .map(|&k| self.state.weights[k as usize])
                    .collect();
                Undo {
                    position: 0,
                    coords: Some(coords),
                    values,
                }
            }
        }
    }

    fn restore(&mut self, u: Undo<F>) {
        match u.coords {
            None => self.state.weights.copy_from_slice(&u.values),
            Some(coords) => {
                for (k, v) in coords.into_iter().zip(u.values) {
                    self.state.weights[k as usize] = v;
                }
            }
        }
    }

    /// Drops any speculation, restoring the exact weights at its start.
    fn abandon_speculation(&mut self) {
        if let Some(spec) = self.spec.take() {
            self.state.weights.copy_from_slice(&spec.base);
            self.state.position = spec.start;
        }
        self.clear_segments();
    }
}
