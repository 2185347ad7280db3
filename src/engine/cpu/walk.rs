//! The CPU walk: the next row that is not certainly correct, searched for
//! on all cores at once, then decided exactly.
//!
//! Between two mistakes every row is correct under the same weights, so the
//! search for the next mistake is a parallel scan in row order that stops
//! at the first row the certificate ([`crate::engine::certify::Bound`]) cannot call
//! correct. That row is decided by the certificate or, when uncertain, by
//! the reference dot, and a mistake's update is applied to the walker's copy
//! of the weights with the reference arithmetic. Unlike passes over windows,
//! nothing goes stale when the weights move: each scan uses the weights of
//! its moment. The loop replays every decision and compares the weights
//! (see [`crate::engine::Walker`]).

use super::lookahead::{self, Lookahead, LookaheadCounts};
use crate::data::{Dataset, Features};
use crate::engine::certify::{Bound, RowFacts, Settled};
use crate::engine::reference;
use crate::engine::{
    BatchLimits, EngineError, WalkBatch, WalkDecision, WalkStart, WalkStats, WalkStop,
};
use crate::float::Real;

/// Rows per batch that a search stops at (mistakes, and rows the
/// certificate could not call correct), and rows per batch at most: the
/// loop replays, reports and polls for stop requests between batches.
const DECISIONS: usize = 256;
const BATCH_ROWS: usize = 1 << 20;
/// Rows scanned per search at least, and at most.
const MIN_WINDOW: usize = 1024;
const MAX_WINDOW: usize = 1 << 20;
/// Under a deadline, rows a search scans at most before one was timed; and
/// the rows beyond which every search is timed.
const UNTIMED_WINDOW: usize = 16 * MIN_WINDOW;
const TIMED_SEARCH: usize = 4 * CLAIM_ROWS;

/// A walk over one dataset.
pub struct CpuWalk<F: Real> {
    weights: Vec<F>,
    /// The margin τ while a walk runs; `None` once it stopped or was
    /// cancelled.
    walking: Option<F>,
    /// The certificate (with τ), computed when a search first needs it: a
    /// pass over every weight, which the walk on sparse rows never makes.
    bound: Option<Bound<F>>,
    position: usize,
    end: usize,
    updates_left: u64,
    /// Rows per search, from the recent gap between decisions.
    window: usize,
    /// Seconds a search has taken per row scanned, lately (0 until one was
    /// timed): under a deadline, a search scans what fits before it.
    search_row_seconds: f64,
    stats: WalkStats,
    /// The walk on sparse rows (see [`crate::engine::cpu::lookahead`]).
    lookahead: Lookahead<F>,
}

impl<F: Real> Default for CpuWalk<F> {
    fn default() -> Self {
        CpuWalk {
            weights: Vec::new(),
            walking: None,
            bound: None,
            position: 0,
            end: 0,
            updates_left: 0,
            window: MIN_WINDOW,
            search_row_seconds: 0.0,
            stats: WalkStats::default(),
            lookahead: Lookahead::default(),
        }
    }
}

impl<F: Real> CpuWalk<F> {
    pub fn begin(&mut self, start: &WalkStart<'_, F>) {
        if start.resync || self.weights.len() != start.weights.len() {
            self.weights.clear();
            self.weights.extend_from_slice(start.weights);
        }
        self.walking = Some(start.tau);
        self.bound = None;
        self.position = start.position;
        self.end = start.end;
        self.updates_left = start.max_updates.max(1);
    }

    pub fn cancel(&mut self) {
        self.walking = None;
    }

    pub fn stats(&self) -> WalkStats {
        self.stats.clone()
    }

    /// Rows the sparse walk decided with a helper's sum, and rows it summed.
    pub fn lookahead_counts(&self) -> LookaheadCounts {
        self.lookahead.counts
    }

    /// Walks up to `DECISIONS` mistakes or to the end of the epoch, within
    /// `limits`: the horizon, and the deadline (the walk on sparse rows
    /// inside its stretches, the search between its searches, each sized
    /// to fit the time left).
    pub fn next_batch(
        &mut self,
        data: &Dataset<F>,
        bias: bool,
        limits: BatchLimits,
    ) -> Result<WalkBatch<F>, EngineError> {
        let Some(tau) = self.walking else {
            return Err(EngineError("the walk stopped: begin it again".into()));
        };
        let facts = data.facts(bias);
        let start = self.position;
        let mut decisions = Vec::new();
        let mut values = Vec::new();
        let mut stop = WalkStop::Running;
        let batch_end = (self.position + BATCH_ROWS)
            .min(self.end)
            .min(limits.horizon.max(self.position + 1));
        if let Some(walked) = self.walk_sparse(data, bias, tau, batch_end, limits.deadline) {
            let (decisions, values, stop) = walked;
            return Ok(self.finish(start, decisions, values, stop));
        }
        let mut bound = match self.bound {
            Some(b) => b,
            None => Bound::for_weights(&self.weights, facts.l1_max).with_margin(tau),
        };
        self.bound = Some(bound);
        let mut stops = 0;
        while stops < DECISIONS && self.position < batch_end {
            // A trial's budget: spent, the batch ends (after one search at
            // least, so the walk moves).
            let left = limits
                .deadline
                .map(|d| d.saturating_duration_since(std::time::Instant::now()));
            if left.is_some_and(|l| l.is_zero()) && self.position > start {
                break;
            }
            let Some(q) = self.search(data, bias, &facts, &bound, batch_end, left) else {
                continue;
            };
            stops += 1;
            self.position = q + 1;
            if let Some(s) = self.decide_exactly(
                data,
                bias,
                facts.l1_max,
                q,
                &mut bound,
                &mut decisions,
                &mut values,
            ) {
                stop = s;
                break;
            }
        }
        Ok(self.finish(start, decisions, values, stop))
    }

    /// On sparse rows with cores to help, the batch walked with the other
    /// cores summing the rows ahead instead of searching with certificates
    /// (a certificate costs about what the short dot it saves does):
    /// its decisions, the updated weights' values and where it stopped;
    /// `None` where that walk does not apply.
    fn walk_sparse(
        &mut self,
        data: &Dataset<F>,
        bias: bool,
        tau: F,
        batch_end: usize,
        deadline: Option<std::time::Instant>,
    ) -> Option<(Vec<WalkDecision>, Vec<F>, WalkStop)> {
        let helpers = rayon::current_num_threads().saturating_sub(1);
        let (Features::Sparse(m), true) = (&data.features, helpers > 0) else {
            return None;
        };
        let (mut decisions, mut values) = (Vec::new(), Vec::new());
        let walked = self.lookahead.walk(
            m,
            &data.labels,
            bias,
            &mut self.weights,
            lookahead::Batch {
                from: self.position,
                to: batch_end,
                tau,
                helpers,
                deadline,
                max_mistakes: DECISIONS,
                updates_left: &mut self.updates_left,
                decisions: &mut decisions,
                values: Some(&mut values),
                // The engine's walker makes the textbook update only
                // (`Loop::walks`).
                bias_step: F::ONE,
                margins: None,
                order: None,
            },
        )?;
        self.position = walked.position;
        Some((decisions, values, walked.stop))
    }

    /// Searches from the walk's row, in parallel, for the first row that
    /// the certificate does not settle correct, within the window (and the
    /// time `left`, under a deadline). `None` when every row of the window
    /// was settled correct: the walk moves past it, and the window grows.
    fn search(
        &mut self,
        data: &Dataset<F>,
        bias: bool,
        facts: &RowFacts,
        bound: &Bound<F>,
        batch_end: usize,
        left: Option<std::time::Duration>,
    ) -> Option<usize> {
        if facts.is_host_only(self.position) {
            // No search can settle it: straight to the reference dot, so a
            // run of such rows costs no parallel searches.
            return Some(self.position);
        }
        let mut hi = (self.position + self.window).min(batch_end);
        if let Some(left) = left {
            // Under a deadline, what a search scans fits the time left at
            // the recent speed (a trial's budget is about a millisecond: a
            // search over the window a long stretch grew could take ten),
            // or a first guess.
            let fits = if self.search_row_seconds > 0.0 {
                (left.as_secs_f64() / self.search_row_seconds) as usize
            } else {
                UNTIMED_WINDOW
            };
            hi = hi.min(self.position.saturating_add(fits.max(MIN_WINDOW)));
        }
        // Long searches are timed (a short one costs less than its clock
        // would add).
        let timed =
            (left.is_some() || hi - self.position > TIMED_SEARCH).then(std::time::Instant::now);
        let w = &self.weights;
        let certain_correct = |i: usize| {
            if facts.is_host_only(i) {
                return false;
            }
            data.features.prefetch_row(i + 1);
            super::decide(bound, w, data.features.row(i), bias, data.labels[i]) == Settled::Correct
        };
        let found = first_in_order(self.position, hi, |i| !certain_correct(i));
        self.stats.iterations += 1;
        if let Some(t0) = timed {
            let scanned = found.map_or(hi, |q| q + 1) - self.position;
            let per_row = t0.elapsed().as_secs_f64() / scanned.max(1) as f64;
            self.search_row_seconds = if self.search_row_seconds > 0.0 {
                0.5 * (self.search_row_seconds + per_row)
            } else {
                per_row
            };
        }
        let Some(q) = found else {
            self.position = hi;
            self.window = (2 * self.window).min(MAX_WINDOW);
            return None;
        };
        let gap = q + 1 - self.position;
        self.window = (2 * gap).clamp(MIN_WINDOW, MAX_WINDOW);
        Some(q)
    }

    /// Row `q`'s exact decision, the reference dot as the loop's, with the
    /// update of a mistake (its new values kept for the loop to compare);
    /// returns where the batch stops, if it does here.
    #[allow(clippy::too_many_arguments)]
    fn decide_exactly(
        &mut self,
        data: &Dataset<F>,
        bias: bool,
        l1_max: f64,
        q: usize,
        bound: &mut Bound<F>,
        decisions: &mut Vec<WalkDecision>,
        values: &mut Vec<F>,
    ) -> Option<WalkStop> {
        let row = data.features.row(q);
        let y = data.labels[q];
        let s = reference::dot(&self.weights, row, bias);
        if !s.is_finite() {
            // The features overflow this precision: listed for the loop,
            // whose own decision reports it.
            decisions.push(WalkDecision {
                row: q,
                mistake: false,
                speculative: true,
                values_at: None,
            });
            return Some(WalkStop::Resync);
        }
        if !reference::is_mistake_within(y, s, bound.tau) {
            // Exactly decided correct: not listed, like every row the
            // certificate calls correct.
            return None;
        }
        let at = values.len();
        let updated = reference::apply_update(&mut self.weights, row, y, bias).is_ok();
        let w = &self.weights;
        reference::for_each_touched(row, bias, w.len(), |k| values.push(w[k]));
        let subnormal = reference::touched_subnormal(w, row, bias);
        decisions.push(WalkDecision {
            row: q,
            mistake: true,
            speculative: false,
            values_at: updated.then_some(at),
        });
        if !updated {
            // Overflow: the loop's own update reports it.
            return Some(WalkStop::Resync);
        }
        if subnormal && bound.flush == F::ZERO {
            *bound = Bound::new(true, l1_max).with_margin(bound.tau);
            self.bound = Some(*bound);
        }
        self.updates_left -= 1;
        (self.updates_left == 0).then_some(WalkStop::Updates)
    }

    fn finish(
        &mut self,
        start: usize,
        decisions: Vec<WalkDecision>,
        values: Vec<F>,
        mut stop: WalkStop,
    ) -> WalkBatch<F> {
        if stop == WalkStop::Running && self.position >= self.end {
            stop = WalkStop::End;
        }
        if stop != WalkStop::Running {
            self.walking = None;
        }
        self.stats.batches += 1;
        WalkBatch {
            start,
            end: self.position,
            decisions,
            values,
            stop,
        }
    }
}

/// Rows a task of [`first_in_order`] claims at a time.
const CLAIM_ROWS: usize = 256;

/// The first row of `lo..hi` for which `stops` holds, searched on all cores.
/// The cores claim blocks of rows in row order, and none claims a block
/// past a row found already: past the answer, each core has scanned at
/// most the block it holds. (A split into halves, as rayon's `find_first`
/// does, lets the core on the far half scan rows that the near half's stop
/// makes useless: on rows 4M x 256 with a mistake every 200,000 rows that
/// was most of the second core's work.)
///
/// The first block is scanned on the calling thread before any other core
/// is woken: waking one and joining it costs about as much as scanning a
/// block, and when mistakes are a few rows apart most searches end there
/// (sparse 500k x 10^6, 179,168 mistakes in the first epoch: 4.6 s for
/// that epoch's searches with the fork first, against 0.2 s on one thread).
fn first_in_order(lo: usize, hi: usize, stops: impl Fn(usize) -> bool + Sync) -> Option<usize> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let first = (lo + CLAIM_ROWS).min(hi);
    if let Some(i) = (lo..first).find(|&i| stops(i)) {
        return Some(i);
    }
    let lo = first;
    let next = AtomicUsize::new(lo);
    let found = AtomicUsize::new(usize::MAX);
    let task = || {
        loop {
            let start = next.fetch_add(CLAIM_ROWS, Relaxed);
            if start >= hi || start >= found.load(Relaxed) {
                break;
            }
            if let Some(i) = (start..(start + CLAIM_ROWS).min(hi)).find(|&i| stops(i)) {
                found.fetch_min(i, Relaxed);
                break;
            }
        }
    };
    let tasks = rayon::current_num_threads().min((hi - lo).div_ceil(CLAIM_ROWS));
    if tasks <= 1 {
        task();
    } else {
        rayon::scope(|s| {
            for _ in 1..tasks {
                s.spawn(|_| task());
            }
            task();
        });
    }
    let i = found.into_inner();
    (i != usize::MAX).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DenseMatrix, Features};

    /// A walk over all `rows` from `weights`, at most 10 updates.
    fn whole_walk(rows: usize, weights: &[f32]) -> WalkStart<'_, f32> {
        WalkStart {
            position: 0,
            end: rows,
            weights,
            resync: true,
            tau: 0.0,
            max_updates: 10,
        }
    }

    /// The parallel search finds what a sequential one finds: the first
    /// stop, at block edges and inside blocks, several stops in one block
    /// or in blocks claimed by different cores, and none at all.
    #[test]
    fn first_in_order_finds_the_first_stop() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let cases: &[(usize, usize, &[usize])] = &[
            (0, 0, &[]),
            (0, 1, &[0]),
            (0, 10_000, &[]),
            (0, 10_000, &[9_999]),
            (5, 10_000, &[3, 4_000, 256, 8_000]),
            (0, 10_000, &[255, 256, 511, 512]),
            (300, 2_000, &[1_999, 1_024, 1_023]),
            (0, 100_000, &[99_000, 50_000, 70_000]),
        ];
        pool.install(|| {
            for &(lo, hi, stops) in cases {
                let expected = (lo..hi).find(|i| stops.contains(i));
                for _ in 0..20 {
                    let found = first_in_order(lo, hi, |i| stops.contains(&i));
                    assert_eq!(found, expected, "{lo}..{hi} stops {stops:?}");
                }
            }
        });
    }

    /// Rows with a subnormal feature are host-only: each one is a stop, so
    /// batches stay short, and none of them costs a parallel search.
    #[test]
    fn host_only_rows_are_decided_without_searches_in_short_batches() {
        let rows = 3000;
        let values: Vec<f32> = (0..rows).flat_map(|_| [1.0, 1e-40]).collect();
        let data = crate::engine::decide::as_positive(Features::Dense(DenseMatrix {
            rows,
            cols: 2,
            values: values.into(),
        }));
        assert_eq!(data.facts(true).host_only.len(), rows);
        let mut walk = CpuWalk::default();
        walk.begin(&whole_walk(rows, &[0.0f32; 3]));
        let (mut at, mut mistakes) = (0, Vec::new());
        loop {
            let batch = walk.next_batch(&data, true, BatchLimits::NONE).unwrap();
            assert_eq!(batch.start, at);
            assert!(
                batch.end - batch.start <= DECISIONS,
                "{}..{}",
                batch.start,
                batch.end
            );
            mistakes.extend(batch.decisions.iter().filter(|d| d.mistake).map(|d| d.row));
            at = batch.end;
            if batch.stop != WalkStop::Running {
                assert_eq!(batch.stop, WalkStop::End);
                break;
            }
        }
        assert_eq!(at, rows);
        // Only the first row is a mistake under zero weights.
        assert_eq!(mistakes, [0]);
        assert_eq!(walk.stats().iterations, 0);
        assert_eq!(walk.weights, [1.0, 1e-40, 1.0]);
    }

    /// A trial's deadline ends a batch on dense rows after the search that
    /// passes it, and that first search is sized to a first guess: the
    /// batch covers far fewer rows than the walk would without one (on an
    /// H100 the loop cut such trials into 1,024-row batches instead, each
    /// waking 16 cores, and the engine lost every trial on dense 4M x 256).
    #[test]
    fn a_deadline_ends_a_batch_on_dense_rows_after_one_search() {
        let rows = 200_000;
        // Every row correct under weights (1, 0, 0): the searches never stop.
        let values: Vec<f32> = (0..rows).flat_map(|i| [1.0, (i % 7) as f32, 0.5]).collect();
        let data = crate::engine::decide::as_positive(Features::Dense(DenseMatrix {
            rows,
            cols: 3,
            values: values.into(),
        }));
        let weights = [1.0f32, 0.0, 0.0, 0.0];
        let start = whole_walk(rows, &weights);
        let walked = |deadline: Option<std::time::Instant>| {
            let mut walk = CpuWalk::default();
            walk.begin(&start);
            walk.window = MAX_WINDOW;
            let limits = BatchLimits {
                horizon: usize::MAX,
                deadline,
            };
            let batch = walk.next_batch(&data, true, limits).unwrap();
            assert!(batch.decisions.is_empty());
            batch.end - batch.start
        };
        assert_eq!(walked(None), rows);
        let past = std::time::Instant::now();
        assert_eq!(walked(Some(past)), UNTIMED_WINDOW);
    }
}
