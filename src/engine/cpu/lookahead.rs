//! The CPU walk on sparse rows: the other cores sum the rows just ahead of
//! the walk, and the walk keeps a row's sum unless an update since touched
//! one of the row's features.
//!
//! On sparse rows an update changes the weights of the mistaken row's own
//! features and the bias, nothing else. A row's sum of products w_k·x_k
//! (the reference dot before its bias term), computed under earlier
//! weights, is therefore still the reference's sum, bit for bit, if no
//! update since touched any of the row's features: the same products added
//! in the same order. The row's dot is that sum plus the current bias, the
//! one add [`crate::engine::reference::dot`] ends with.
//!
//! So helper cores claim chunks of rows just ahead of the walk, note how
//! many updates they had seen, and sum each row. The walk, on the calling
//! core, decides the rows in order: it takes a finished chunk's sums after
//! checking each row's features against a bitmap of the features updated
//! since; it sums a row itself when the check fails; and when it catches up
//! with the helpers it claims the next chunk itself, or helps sum the rows
//! ahead while a helper finishes its chunk. Every decision is the
//! reference's, made in row order. The weights are shared through atomic
//! cells ([`Real::Cell`]): one writer, many readers, no data race.
//!
//! This pays where the time between mistakes is long enough to share: a
//! sum costs about a dot, and a kept sum costs a look at the row's indices.
//! Dense rows never gain (every update touches every feature), so the walk
//! is only used on sparse data.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize};

use super::helpers::Helpers;
use crate::data::CsrMatrix;
use crate::data::matrix::{PLACE_LEAD, ROW_LEAD};
use crate::engine::reference;
use crate::engine::{WalkDecision, WalkStop};
use crate::float::Real;

/// Rows a chunk holds: what one claim sums.
const CHUNK: usize = 64;
/// Chunks ahead of the walk each helper may claim at most: enough to keep
/// the helpers busy while the walk takes kept sums. When mistakes are a few
/// rows apart, updates land between most sums and their rows that far
/// ahead, and the walk sums those rows again: the lead then shrinks, down
/// to one chunk, and grows back as the sums are kept ([`Lead`]).
const LEAD_CHUNKS: usize = 8;
/// Chunks the walk decides between two looks at how many of the helpers'
/// sums it had to reject.
const LEAD_REVIEW: usize = 8;
/// Rows one batch covers at most (the size of the sums' buffers).
pub const BATCH_ROWS: usize = 1 << 16;
/// Updates one batch makes at most: the loop counts a batch's updates after
/// it, and a short list of them stays in cache.
const BATCH_UPDATES: usize = 1 << 12;
/// How sparse `union` must be for the walk to look in its summary first:
/// fewer marked features than one in this many of its words.
const SUMMARY_SPARSE: usize = 64;
/// Spins the walk waits for a helper's chunk (helping sum the rows ahead
/// meanwhile) before it sums the chunk's rows itself: a helper the system
/// descheduled never holds the walk up for long.
const PATIENCE: u32 = 1 << 12;

/// What one batch did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LookaheadCounts {
    /// Rows decided with a helper's sum, and rows the walk summed itself.
    pub kept: u64,
    pub summed: u64,
}

/// Where a batch stopped.
pub struct Walked {
    pub position: usize,
    pub stop: WalkStop,
    /// Whether an update left a touched weight subnormal (a certificate
    /// made afterwards needs its flush term).
    pub subnormal: bool,
    /// Whether a helper's sums arrived in time for any chunk (a helper that
    /// slept may take a millisecond to wake).
    pub helped: bool,
}

/// The walk's buffers, kept between batches.
pub struct Lookahead<F: Real> {
    sums: Vec<F::Cell>,
    done: Vec<AtomicU8>,
    seen: Vec<AtomicU64>,
    recent: Recent,
    pub counts: LookaheadCounts,
    /// Whether the walk claims the next chunk itself when it catches up
    /// (off in tests, so that every row's sum comes from a claim made
    /// ahead and the kept sums are checked on every run).
    walk_claims: bool,
    /// The helper threads, started at the first batch.
    helpers: Option<Helpers>,
    /// How far ahead the helpers may sum, carried from batch to batch.
    lead: Lead,
}

/// How many chunks ahead of the walk each helper may claim, reviewed every
/// [`LEAD_REVIEW`] chunks by the share of the helpers' sums the walk had to
/// reject (an update since touched the row): above a quarter the lead
/// halves, below a sixteenth it doubles, within 1..=[`LEAD_CHUNKS`].
#[derive(Clone, Copy, Debug)]
struct Lead {
    chunks: usize,
    kept: u64,
    rejected: u64,
}

impl Default for Lead {
    fn default() -> Self {
        Lead {
            chunks: LEAD_CHUNKS,
            kept: 0,
            rejected: 0,
        }
    }
}

impl Lead {
    /// Rows past the walk's chunk that `helpers` helpers may claim.
    fn rows(&self, helpers: usize) -> usize {
        self.chunks * CHUNK * helpers.max(1)
    }

    /// Adjusts the lead by the sums kept and rejected since the last review.
    fn review(&mut self) {
        let looked = self.kept + self.rejected;
        if looked == 0 {
            return;
        }
        if self.rejected * 4 > looked {
            self.chunks = (self.chunks / 2).max(1);
        } else if self.rejected * 16 < looked {
            self.chunks = (self.chunks * 2).min(LEAD_CHUNKS);
        }
        self.kept = 0;
        self.rejected = 0;
    }
}

impl<F: Real> Default for Lookahead<F> {
    fn default() -> Self {
        Lookahead {
            sums: Vec::new(),
            done: Vec::new(),
            seen: Vec::new(),
            recent: Recent::default(),
            counts: LookaheadCounts::default(),
            walk_claims: true,
            helpers: None,
            lead: Lead::default(),
        }
    }
}

/// The features touched by the updates a helper's sum may not have seen,
/// as a bitmap (one bit a feature, small enough to stay in cache), kept in
/// two generations so that old updates are forgotten without counting.
///
/// `union` holds the features of every update since `older_start`; `newer`
/// those of the updates since `newer_start`, with their rows. A sum that saw
/// `seen >= older_start` updates is checked against `union`: a superset of
/// the updates it missed, so a row it clears is truly untouched, and a row
/// it flags is only summed again. Once a sum has seen every update of the
/// older generation, that generation is dropped ([`Recent::advance`]):
/// its features leave `union` unless the newer one touched them too, and
/// the newer one becomes the older. An update's features are marked and
/// cleared a bounded number of times, all in bitmaps that stay in the
/// core's cache (a count per feature, the earlier design, made every update
/// a read-modify-write in an array 16 times larger, as costly as a sum when
/// mistakes are a few rows apart).
#[derive(Default)]
struct Recent {
    union: Vec<u64>,
    /// One bit per word of `union`: set while the word has a bit set. The
    /// walk looks here first: 10^6 features take 2 KB here, which stays in
    /// the core's first-level cache, against 125 KB in `union`, which the
    /// weights' gathers keep pushing out; most of a row's features then
    /// cost one cached read instead of a trip to the second level or
    /// beyond.
    summary: Vec<u64>,
    newer: Vec<u64>,
    /// The rows of the older and the newer generation's updates.
    older_rows: Vec<usize>,
    newer_rows: Vec<usize>,
    /// The first update (of the batch) of each generation.
    older_start: u64,
    newer_start: u64,
    /// The features both generations' updates have, counted with repeats:
    /// how full `union` is at most.
    marked: usize,
}

#[inline]
fn bit(map: &[u64], k: u32) -> bool {
    (map[k as usize >> 6] >> (k & 63)) & 1 != 0
}

#[inline]
fn set(map: &mut [u64], k: u32) {
    map[k as usize >> 6] |= 1 << (k & 63);
}

#[inline]
fn unset(map: &mut [u64], k: u32) {
    map[k as usize >> 6] &= !(1 << (k & 63));
}

impl Recent {
    fn reset(&mut self, cols: usize) {
        let words = cols.div_ceil(64);
        if self.union.len() != words {
            self.union = vec![0; words];
            self.summary = vec![0; words.div_ceil(64)];
            self.newer = vec![0; words];
        }
        self.older_rows.clear();
        self.newer_rows.clear();
        self.marked = 0;
        self.older_start = 0;
        self.newer_start = 0;
    }

    /// Adds the update of `row`, whose features are `idx`.
    fn mark(&mut self, row: usize, idx: &[u32]) {
        for &k in idx {
            set(&mut self.union, k);
            set(&mut self.summary, k >> 6);
            set(&mut self.newer, k);
        }
        self.newer_rows.push(row);
        self.marked += idx.len();
    }

    /// Whether an update the bitmap holds touched one of `idx`.
    fn touches(&self, idx: &[u32]) -> bool {
        // The summary pays while few of its bits are set: its test is then
        // almost always false, a branch the core predicts. Once a row's
        // features would often find set bits there, the branch
        // mispredicts on most rows, and `union` alone is cheaper.
        if self.marked * SUMMARY_SPARSE < self.union.len() {
            idx.iter()
                .any(|&k| bit(&self.summary, k >> 6) && bit(&self.union, k))
        } else {
            idx.iter().any(|&k| bit(&self.union, k))
        }
    }

    /// Whether a sum that saw `seen` updates can be checked here (the
    /// updates it missed are all held).
    fn covers(&self, seen: u64) -> bool {
        seen >= self.older_start
    }

    /// A sum saw `seen` updates, and later sums see at least as many: once
    /// that includes every update of the older generation, drop it, and
    /// start a new one at `made`, the updates so far.
    fn advance<F: Real>(&mut self, m: &CsrMatrix<F>, seen: u64, made: u64) {
        if seen < self.newer_start || made == self.newer_start {
            return;
        }
        for &row in &self.older_rows {
            let idx = row_indices(m, row);
            self.marked -= idx.len();
            for &k in idx {
                if !bit(&self.newer, k) {
                    forget(&mut self.union, &mut self.summary, k);
                }
            }
        }
        for &row in &self.newer_rows {
            for &k in row_indices(m, row) {
                unset(&mut self.newer, k);
            }
        }
        self.older_rows.clear();
        std::mem::swap(&mut self.older_rows, &mut self.newer_rows);
        self.older_start = self.newer_start;
        self.newer_start = made;
    }

    /// Leaves both bitmaps all clear for the next batch.
    fn clear<F: Real>(&mut self, m: &CsrMatrix<F>) {
        for &row in self.older_rows.iter().chain(&self.newer_rows) {
            for &k in row_indices(m, row) {
                forget(&mut self.union, &mut self.summary, k);
                unset(&mut self.newer, k);
            }
        }
        self.older_rows.clear();
        self.newer_rows.clear();
        self.marked = 0;
    }
}

/// Takes feature `k` out of `union`, and its word out of `summary` once
/// the word is clear.
#[inline]
fn forget(union: &mut [u64], summary: &mut [u64], k: u32) {
    unset(union, k);
    if union[k as usize >> 6] == 0 {
        unset(summary, k >> 6);
    }
}

fn row_indices<F>(m: &CsrMatrix<F>, row: usize) -> &[u32] {
    &m.indices[m.row_ptr[row]..m.row_ptr[row + 1]]
}

fn row_values<F>(m: &CsrMatrix<F>, row: usize) -> &[F] {
    &m.values[m.row_ptr[row]..m.row_ptr[row + 1]]
}

/// Σ w_k·x_k over the row's stored entries in order, from 0: the reference
/// dot without its bias term ([`reference::dot`], sparse rows).
#[inline]
fn sum<F: Real>(w: &[F::Cell], idx: &[u32], val: &[F]) -> F {
    let mut s = F::ZERO;
    for (&k, &xk) in idx.iter().zip(val) {
        s = s + F::load(&w[k as usize]) * xk;
    }
    s
}

/// w~ <- w~ + y·x~ with the reference's arithmetic
/// ([`reference::apply_update`], sparse rows), the bias moving by
/// `bias_step` (1, or scikit-learn's sparse decay:
/// [`reference::apply_decayed_update`] with weight 1; `None`: no bias),
/// made only if every new weight is finite: an overflow leaves the weights
/// as they were, for the loop's own update to report. Returns (made, a new
/// weight is subnormal).
fn update<F: Real>(
    w: &[F::Cell],
    idx: &[u32],
    val: &[F],
    y: i8,
    bias_step: Option<F>,
) -> (bool, bool) {
    let step = |wk: F, xk: F| if y > 0 { wk + xk } else { wk - xk };
    let bias = bias_step.map(|b| (&w[w.len() - 1], b));
    // First the check (the row's weights are in cache for the second pass).
    let finite = idx
        .iter()
        .zip(val)
        .all(|(&k, &xk)| step(F::load(&w[k as usize]), xk).is_finite())
        && bias.is_none_or(|(c, b)| step(F::load(c), b).is_finite());
    if !finite {
        return (false, false);
    }
    let mut subnormal = false;
    for (&k, &xk) in idx.iter().zip(val) {
        let cell = &w[k as usize];
        let wk = step(F::load(cell), xk);
        F::store(cell, wk);
        subnormal |= wk.is_subnormal();
    }
    if let Some((cell, b)) = bias {
        let b = step(F::load(cell), b);
        F::store(cell, b);
        subnormal |= b.is_subnormal();
    }
    (true, subnormal)
}

/// What the helpers and the walk share during one batch.
struct Shared<'a, F: Real> {
    m: &'a CsrMatrix<F>,
    w: &'a [F::Cell],
    /// The row at each position, when the walk is not in row order.
    order: Option<&'a [usize]>,
    from: usize,
    to: usize,
    /// The first row no one has claimed yet (chunks start at `from`).
    frontier: Padded<AtomicUsize>,
    /// The first row of the chunk the walk is deciding.
    at: Padded<AtomicUsize>,
    /// Rows past the chunk at `at` that may be claimed (set by the walk,
    /// see [`Lead`]).
    lead: Padded<AtomicUsize>,
    /// Updates the walk has made this batch (stored after their weights).
    updates: Padded<AtomicU64>,
    quit: AtomicBool,
    sums: &'a [F::Cell],
    /// Per chunk: its sums are written (1), and the updates its helper had
    /// seen before summing.
    done: &'a [AtomicU8],
    seen: &'a [AtomicU64],
}

/// A value alone on its cache line (two lines, for the adjacent-line
/// prefetcher): the walk and the helpers write different ones often.
#[repr(align(128))]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

enum Help {
    Summed,
    TooFarAhead,
    Finished,
}

impl<F: Real> Shared<'_, F> {
    /// The row of the matrix at position `p` of the walk.
    #[inline(always)]
    fn row(&self, p: usize) -> usize {
        match self.order {
            Some(order) => order[p],
            None => p,
        }
    }

    /// Starts loading the rows of the positions after `p`: the next one in
    /// row order (the hardware's prefetcher follows the stream); in a
    /// shuffled order each row is a fresh trip to memory, so the rows
    /// [`ROW_LEAD`] positions ahead, and where the row [`PLACE_LEAD`] ahead
    /// lies, as the loop's own walk asks for them.
    #[inline(always)]
    fn prefetch_after(&self, p: usize) {
        let Some(order) = self.order else {
            self.m.prefetch_row(p + 1);
            return;
        };
        if let Some(&r) = order.get(p + PLACE_LEAD) {
            self.m.prefetch_row_place(r);
        }
        if let Some(&r) = order.get(p + ROW_LEAD) {
            self.m.prefetch_row(r);
        }
    }

    /// Claims the next chunk, if it is not too far ahead, and sums its rows.
    fn help_once(&self) -> Help {
        let f = self.frontier.load(Relaxed);
        if f >= self.to {
            return Help::Finished;
        }
        // Past the walk's own chunk: a lead of one chunk still lets a helper
        // sum the next one while the walk decides this one.
        if f >= self.at.load(Relaxed) + CHUNK + self.lead.load(Relaxed) {
            return Help::TooFarAhead;
        }
        let end = (f + CHUNK).min(self.to);
        if self
            .frontier
            .compare_exchange(f, end, Relaxed, Relaxed)
            .is_err()
        {
            return Help::Summed;
        }
        // Every update counted here has its weights visible from now on;
        // later ones may or may not be, and the walk checks the row's
        // features against them.
        let seen = self.updates.load(Acquire);
        for p in f..end {
            self.prefetch_after(p);
            let row = self.row(p);
            let (a, b) = (self.m.row_ptr[row], self.m.row_ptr[row + 1]);
            let s = sum(self.w, &self.m.indices[a..b], &self.m.values[a..b]);
            F::store(&self.sums[p - self.from], s);
        }
        let c = (f - self.from) / CHUNK;
        self.seen[c].store(seen, Relaxed);
        self.done[c].store(1, Release);
        Help::Summed
    }

    /// A helper core's part: sum chunks until the batch ends.
    fn help(&self) {
        let mut idle = 0u32;
        while !self.quit.load(Relaxed) {
            match self.help_once() {
                Help::Summed => idle = 0,
                Help::Finished => return,
                Help::TooFarAhead => {
                    idle += 1;
                    if idle.is_multiple_of(256) {
                        std::thread::yield_now();
                    } else {
                        std::hint::spin_loop();
                    }
                }
            }
        }
    }

    /// The updates a helper had seen before summing chunk `c`, once its
    /// sums are written; `None` if the walk sums the chunk itself (it
    /// claimed it, or the helper took too long).
    fn wait_for(&self, c: usize, own: bool) -> Option<u64> {
        if own {
            return None;
        }
        let mut spins = 0;
        while self.done[c].load(Acquire) == 0 {
            if spins >= PATIENCE {
                return None;
            }
            if !matches!(self.help_once(), Help::Summed) {
                std::hint::spin_loop();
                spins += 1;
            }
        }
        Some(self.seen[c].load(Relaxed))
    }
}

/// Limits and outputs of one batch.
pub struct Batch<'o, F> {
    pub from: usize,
    pub to: usize,
    pub tau: F,
    pub helpers: usize,
    /// When the batch ends at the latest (checked once a chunk).
    pub deadline: Option<std::time::Instant>,
    /// Mistakes after which the batch ends (the loop replays between).
    pub max_mistakes: usize,
    pub updates_left: &'o mut u64,
    pub decisions: &'o mut Vec<WalkDecision>,
    /// Where each update's new weights are copied, for a caller that
    /// replays the walk and compares ([`crate::engine::Walker`]); `None`
    /// when the weights walked are the caller's own.
    pub values: Option<&'o mut Vec<F>>,
    /// The bias's step in an update: 1 for the textbook update, or
    /// scikit-learn's decay on sparse input.
    pub bias_step: F,
    /// Where each mistake's dot (its reference margin, before its update)
    /// is pushed, in order, for a loop that sums the mistakes' losses;
    /// `None` when no one needs them.
    pub margins: Option<&'o mut Vec<F>>,
    /// The row at each position (`from..to` are positions, and so are the
    /// decisions' rows), for a walk in a shuffled order; `None`: row order.
    pub order: Option<&'o [usize]>,
}

impl<F: Real> Lookahead<F> {
    /// Decides rows `from..to` (at most [`BATCH_ROWS`]) in order under
    /// `weights`, updating them; `None` if the weights cannot be shared as
    /// cells (the caller walks another way).
    pub fn walk(
        &mut self,
        m: &CsrMatrix<F>,
        labels: &[i8],
        bias: bool,
        weights: &mut [F],
        batch: Batch<'_, F>,
    ) -> Option<Walked> {
        let (from, to) = (batch.from, batch.to.min(batch.from + BATCH_ROWS));
        let chunks = (to - from).div_ceil(CHUNK);
        if self.sums.len() < to - from {
            self.sums.resize_with(to - from, || F::cell(F::ZERO));
        }
        if self.done.len() < chunks {
            self.done.resize_with(chunks, Default::default);
            self.seen.resize_with(chunks, Default::default);
        }
        for d in &self.done[..chunks] {
            d.store(0, Relaxed);
        }
        let w = F::as_cells(weights)?;
        if self
            .helpers
            .as_ref()
            .is_none_or(|h| h.len() != batch.helpers)
        {
            self.helpers = Some(Helpers::new(batch.helpers));
        }
        let Lookahead {
            sums,
            done,
            seen,
            recent,
            counts,
            walk_claims,
            helpers,
            lead,
        } = self;
        let helpers = helpers.as_ref()?;
        recent.reset(m.cols);
        let shared = Shared {
            m,
            w,
            order: batch.order,
            from,
            to,
            frontier: Padded(AtomicUsize::new(from)),
            at: Padded(AtomicUsize::new(from)),
            lead: Padded(AtomicUsize::new(lead.rows(helpers.len()))),
            updates: Padded(AtomicU64::new(0)),
            quit: AtomicBool::new(false),
            sums,
            done,
            seen,
        };
        let work = || shared.help();
        let walked = helpers.run(&work, || {
            let walk = Walk {
                recent,
                counts,
                lead,
                helpers: helpers.len(),
                claims: *walk_claims,
                made: 0,
                subnormal: false,
                helped: false,
            };
            let walked = decide_rows(&shared, labels, bias, walk, batch);
            shared.quit.store(true, Relaxed);
            walked
        });
        recent.clear(m);
        Some(walked)
    }
}

/// What the walk keeps for itself during a batch.
struct Walk<'a> {
    recent: &'a mut Recent,
    counts: &'a mut LookaheadCounts,
    lead: &'a mut Lead,
    helpers: usize,
    /// Whether the walk claims the next chunk itself when it catches up.
    claims: bool,
    /// Updates made so far in the batch (every one a mistake).
    made: u64,
    subnormal: bool,
    helped: bool,
}

impl Walk<'_> {
    /// Gets chunk `r..end` ready: the lead reviewed, the chunk claimed or
    /// its helper's sums awaited. Returns the updates the helper had seen
    /// if its sums can be checked against the bitmap, else `None` (the
    /// walk sums every row of the chunk itself).
    fn start_chunk<F: Real>(
        &mut self,
        shared: &Shared<'_, F>,
        r: usize,
        end: usize,
    ) -> Option<u64> {
        let c = (r - shared.from) / CHUNK;
        if c % LEAD_REVIEW == LEAD_REVIEW - 1 {
            self.lead.review();
            shared.lead.store(self.lead.rows(self.helpers), Relaxed);
        }
        shared.at.store(r, Relaxed);
        let own = self.claims
            && shared
                .frontier
                .compare_exchange(r, end, Relaxed, Relaxed)
                .is_ok();
        // A helper's sums serve if no update since touched the row; the
        // bitmap holds the updates from the ones the helper saw on.
        let summed_ahead = shared.wait_for(c, own);
        self.helped |= summed_ahead.is_some();
        let kept = summed_ahead.filter(|&seen| self.recent.covers(seen));
        if let Some(seen) = kept {
            self.recent.advance(shared.m, seen, self.made);
        } else if summed_ahead.is_some() {
            self.lead.rejected += (end - r) as u64;
        }
        kept
    }

    /// The sum of products of row `row`, at position `p`: its helper's, if
    /// the helper saw every update that touched the row (`kept`: the
    /// updates it saw), else summed here.
    #[inline(always)]
    fn row_sum<F: Real>(
        &mut self,
        shared: &Shared<'_, F>,
        (p, row): (usize, usize),
        kept: Option<u64>,
    ) -> F {
        let (idx, val) = (row_indices(shared.m, row), row_values(shared.m, row));
        match kept {
            Some(seen) if self.made == seen || !self.recent.touches(idx) => {
                self.counts.kept += 1;
                self.lead.kept += 1;
                F::load(&shared.sums[p - shared.from])
            }
            Some(_) => {
                self.counts.summed += 1;
                self.lead.rejected += 1;
                sum(shared.w, idx, val)
            }
            None => {
                self.counts.summed += 1;
                sum(shared.w, idx, val)
            }
        }
    }

    /// Updates the weights for a mistake at row `row`, position `p`
    /// (label `y`), and records it; returns where the batch stops, if it
    /// does here.
    fn update<F: Real>(
        &mut self,
        shared: &Shared<'_, F>,
        (p, row): (usize, usize),
        y: i8,
        bias: bool,
        batch: &mut Batch<'_, F>,
    ) -> Option<WalkStop> {
        let (m, w) = (shared.m, shared.w);
        let (idx, val) = (row_indices(m, row), row_values(m, row));
        let (finite, sub) = update(w, idx, val, y, bias.then_some(batch.bias_step));
        self.subnormal |= sub;
        let mut values_at = None;
        if let (true, Some(values)) = (finite, batch.values.as_deref_mut()) {
            values_at = Some(values.len());
            values.extend(idx.iter().map(|&k| F::load(&w[k as usize])));
            if bias {
                values.push(F::load(&w[w.len() - 1]));
            }
        }
        batch.decisions.push(WalkDecision {
            row: p,
            mistake: true,
            speculative: false,
            values_at,
        });
        if !finite {
            // Overflow, the weights left as they were: the loop's own
            // update reports it.
            return Some(WalkStop::Resync);
        }
        self.made += 1;
        shared.updates.store(self.made, Release);
        self.recent.mark(row, idx);
        *batch.updates_left -= 1;
        if *batch.updates_left == 0 {
            Some(WalkStop::Updates)
        } else if self.made as usize >= batch.max_mistakes.min(BATCH_UPDATES) {
            Some(WalkStop::Running)
        } else {
            None
        }
    }

    fn stopped(&self, position: usize, stop: WalkStop) -> Walked {
        Walked {
            position,
            stop,
            subnormal: self.subnormal,
            helped: self.helped,
        }
    }
}

/// The walk's part: every row of the batch decided in order, a chunk at a
/// time.
fn decide_rows<F: Real>(
    shared: &Shared<'_, F>,
    labels: &[i8],
    bias: bool,
    mut walk: Walk<'_>,
    mut batch: Batch<'_, F>,
) -> Walked {
    let w = shared.w;
    let mut r = shared.from;
    while r < shared.to {
        let past_deadline = || {
            batch
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
        };
        if r > shared.from && past_deadline() {
            break;
        }
        let end = (r + CHUNK).min(shared.to);
        let kept = walk.start_chunk(shared, r, end);
        for p in r..end {
            shared.prefetch_after(p);
            let row = shared.row(p);
            let y = labels[row];
            let s = walk.row_sum(shared, (p, row), kept);
            let s = if bias {
                s + F::load(&w[w.len() - 1])
            } else {
                s
            };
            if !s.is_finite() {
                // The features overflow this precision: listed for the
                // loop, whose own decision reports it.
                batch.decisions.push(WalkDecision {
                    row: p,
                    mistake: false,
                    speculative: true,
                    values_at: None,
                });
                return walk.stopped(p + 1, WalkStop::Resync);
            }
            if !reference::is_mistake_within(y, s, batch.tau) {
                continue;
            }
            if let Some(margins) = batch.margins.as_deref_mut() {
                margins.push(s);
            }
            if let Some(stop) = walk.update(shared, (p, row), y, bias, &mut batch) {
                return walk.stopped(p + 1, stop);
            }
        }
        r = end;
    }
    walk.stopped(r, WalkStop::Running)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Sparse rows of up to `nnz` entries (some empty), a few features
    /// shared by many rows (so updates often touch rows just ahead), and
    /// labels from a random plane with some flipped.
    fn data<F: Real>(
        rng: &mut Rng,
        rows: usize,
        cols: usize,
        nnz: usize,
    ) -> (CsrMatrix<F>, Vec<i8>) {
        let plane: Vec<f64> = (0..cols).map(|_| rng.unit() - 0.5).collect();
        let (mut row_ptr, mut indices, mut values, mut labels) = (vec![0], vec![], vec![], vec![]);
        for _ in 0..rows {
            let mut idx: Vec<u32> = (0..rng.below(nnz + 1))
                .map(|_| {
                    let hot = rng.below(4) == 0;
                    (if hot {
                        rng.below(3.min(cols))
                    } else {
                        rng.below(cols)
                    }) as u32
                })
                .collect();
            idx.sort_unstable();
            idx.dedup();
            let mut s = 0.0;
            for &k in &idx {
                let v = F::from_f64(rng.unit() * 2.0 - 0.7);
                s += plane[k as usize] * v.to_f64();
                indices.push(k);
                values.push(v);
            }
            row_ptr.push(indices.len());
            let flip = rng.below(50) == 0;
            labels.push(if (s > 0.0) != flip { 1 } else { -1 });
        }
        let m = CsrMatrix {
            cols,
            row_ptr: row_ptr.into(),
            indices: indices.into(),
            values: values.into(),
        };
        (m, labels)
    }

    /// The weights, the positions of the mistakes, and their margins.
    type Walked<F> = (Vec<F>, Vec<usize>, Vec<F>);

    /// The rows, their labels, and the order they are visited in (`None`:
    /// row order).
    type Rows<'a, F> = (&'a CsrMatrix<F>, &'a [i8], Option<&'a [usize]>);

    /// The textbook loop: every row's reference dot, in order; the bias
    /// moving by `step` (1, or a decay: [`reference::apply_decayed_update`]).
    fn textbook<F: Real>(
        (m, labels, order): Rows<'_, F>,
        (bias, tau, step): (bool, F, F),
        epochs: usize,
    ) -> Walked<F> {
        let mut w = vec![F::ZERO; m.cols + bias as usize];
        let (mut mistakes, mut margins) = (vec![], vec![]);
        for _ in 0..epochs {
            for p in 0..labels.len() {
                let i = order.map_or(p, |o| o[p]);
                let y = labels[i];
                let row = crate::data::Row::Sparse(row_indices(m, i), row_values(m, i));
                let s = reference::dot(&w, row, bias);
                if reference::is_mistake_within(y, s, tau) {
                    match (bias, step == F::ONE) {
                        (true, false) => {
                            reference::apply_decayed_update(&mut w, row, y, F::ONE, step).unwrap()
                        }
                        _ => reference::apply_update(&mut w, row, y, bias).unwrap(),
                    }
                    mistakes.push(p);
                    margins.push(s);
                }
            }
        }
        (w, mistakes, margins)
    }

    /// The same epochs through the lookahead walk, in batches of random
    /// lengths that end after a random number of mistakes.
    fn walked<F: Real>(
        walk: &mut Lookahead<F>,
        rng: &mut Rng,
        (m, labels, order): Rows<'_, F>,
        (bias, tau, step): (bool, F, F),
        epochs: usize,
        helpers: usize,
    ) -> Walked<F> {
        let mut w = vec![F::ZERO; m.cols + bias as usize];
        let (mut mistakes, mut margins) = (vec![], vec![]);
        for _ in 0..epochs {
            let mut at = 0;
            while at < labels.len() {
                let to = (at + 1 + rng.below(3 * CHUNK + 2000)).min(labels.len());
                let (mut decisions, mut values, mut left) = (vec![], vec![], u64::MAX);
                let batch = Batch {
                    from: at,
                    to,
                    tau,
                    helpers,
                    deadline: None,
                    max_mistakes: 1 + rng.below(40),
                    updates_left: &mut left,
                    decisions: &mut decisions,
                    values: Some(&mut values),
                    bias_step: step,
                    margins: Some(&mut margins),
                    order,
                };
                let done = walk.walk(m, labels, bias, &mut w, batch).expect("cells");
                assert_eq!(done.stop, WalkStop::Running);
                assert!(done.position > at && done.position <= to);
                for d in &decisions {
                    assert!(d.mistake && !d.speculative && d.row < done.position);
                    mistakes.push(d.row);
                }
                at = done.position;
            }
        }
        (w, mistakes, margins)
    }

    fn bits<F: Real>(w: &[F]) -> Vec<u64> {
        w.iter().map(|x| x.to_f64().to_bits()).collect()
    }

    /// Every mistake and every weight bit is the textbook loop's, with
    /// helpers and without, whether or not the walk claims chunks itself,
    /// in f32 and f64, with and without the bias and the margin τ; and the
    /// helpers' sums were really used, kept and also rejected.
    #[test]
    fn the_walk_makes_the_textbook_loops_mistakes() {
        fn case<F: Real>(
            rng: &mut Rng,
            pool: &rayon::ThreadPool,
            kept: &mut u64,
            summed: &mut u64,
        ) {
            let rows = 1 + rng.below(3000);
            // Now and then enough features for the bitmap's summary to be
            // looked at (see [`Recent::touches`]).
            let cols = if rng.below(3) == 0 {
                100_000 + rng.below(100_000)
            } else {
                1 + rng.below(400)
            };
            let nnz = 1 + rng.below(20);
            let (m, labels) = data::<F>(rng, rows, cols, nnz);
            let bias = rng.below(4) != 0;
            let tau = F::from_f64([0.0, 0.0, 0.25][rng.below(3)]);
            // scikit-learn's sparse decay now and then.
            let step = F::from_f64([1.0, 1.0, 0.01][rng.below(3)]);
            let epochs = 1 + rng.below(6);
            // A shuffled order now and then (decisions are positions).
            let mut order: Vec<usize> = (0..rows).collect();
            for k in (1..rows).rev() {
                order.swap(k, rng.below(k + 1));
            }
            let order = (rng.below(2) == 0).then_some(&order[..]);
            let expected = textbook((&m, &labels, order), (bias, tau, step), epochs);
            for (helpers, claims) in [(0, true), (1, false), (3, false), (3, true)] {
                let mut walk = Lookahead {
                    walk_claims: claims,
                    ..Default::default()
                };
                let got = pool.install(|| {
                    walked(
                        &mut walk,
                        rng,
                        (&m, &labels, order),
                        (bias, tau, step),
                        epochs,
                        helpers,
                    )
                });
                assert_eq!(
                    got.1, expected.1,
                    "mistakes, {helpers} helpers, claims {claims}"
                );
                assert_eq!(
                    bits(&got.0),
                    bits(&expected.0),
                    "weights, {helpers} helpers"
                );
                assert_eq!(
                    bits(&got.2),
                    bits(&expected.2),
                    "margins, {helpers} helpers"
                );
                *kept += walk.counts.kept;
                *summed += walk.counts.summed;
                assert!(
                    walk.recent.union.iter().all(|&b| b == 0)
                        && walk.recent.newer.iter().all(|&b| b == 0)
                        && walk.recent.summary.iter().all(|&b| b == 0),
                    "the bitmaps are left clear"
                );
            }
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let mut rng = Rng(0x5eed_1a2b_3c4d);
        let (mut kept, mut summed) = (0, 0);
        for _ in 0..30 {
            case::<f32>(&mut rng, &pool, &mut kept, &mut summed);
            case::<f64>(&mut rng, &pool, &mut kept, &mut summed);
        }
        assert!(
            kept > 100_000 && summed > 10_000,
            "kept {kept}, summed {summed}"
        );
    }

    /// The bitmap holds the features of every update a sum may have
    /// missed: dropping the older generation keeps the features the newer
    /// one shares with it, and a sum that saw too few updates is not
    /// checked at all.
    #[test]
    fn dropping_old_updates_keeps_the_features_of_later_ones() {
        let m = CsrMatrix::<f32> {
            cols: 130,
            row_ptr: vec![0, 2, 4, 5].into(),
            indices: vec![1, 64, 64, 129, 7].into(),
            values: vec![1.0; 5].into(),
        };
        let mut recent = Recent::default();
        recent.reset(m.cols);
        // Update 0; a sum that saw none of it drops nothing, and the newer
        // generation (update 0) becomes the older one.
        recent.mark(0, row_indices(&m, 0));
        recent.advance(&m, 0, 1);
        assert!(recent.covers(0) && recent.touches(&[1]) && recent.touches(&[64]));
        // Updates 1 and 2; a sum that saw none still drops nothing.
        recent.mark(1, row_indices(&m, 1));
        recent.mark(2, row_indices(&m, 2));
        recent.advance(&m, 0, 3);
        assert!(recent.covers(0));
        assert!(recent.touches(&[1]) && recent.touches(&[129]) && recent.touches(&[7]));
        assert!(!recent.touches(&[0, 2, 63, 65, 128]));
        // A sum that saw update 0: it is dropped, its feature 64 stays
        // (update 1 shares it), and a sum that saw nothing can no longer
        // be checked.
        recent.advance(&m, 1, 3);
        summary_matches(&recent);
        assert!(!recent.touches(&[1]), "update 0's own feature is dropped");
        assert!(recent.touches(&[64]) && recent.touches(&[129]) && recent.touches(&[7]));
        assert!(!recent.covers(0) && recent.covers(1));
        // Nothing new since the last generation began: nothing dropped.
        recent.advance(&m, 3, 3);
        assert!(recent.touches(&[129]) && recent.covers(1));
        summary_matches(&recent);
        recent.clear(&m);
        assert!(
            recent
                .union
                .iter()
                .chain(&recent.newer)
                .chain(&recent.summary)
                .all(|&b| b == 0)
        );
    }

    /// A row is found touched, or not, alike whether the summary is looked
    /// at first (few features marked) or not (many).
    #[test]
    fn the_summary_finds_what_the_bitmap_holds() {
        let cols = 1 << 20;
        let many: Vec<u32> = (0..(cols / 64 / SUMMARY_SPARSE) as u32 + 1)
            .map(|i| 1000 + 2 * i)
            .collect();
        let mut row_ptr = vec![0, 2];
        row_ptr.push(2 + many.len());
        let mut indices = vec![5, 70_000];
        indices.extend(&many);
        let m = CsrMatrix::<f32> {
            cols,
            row_ptr: row_ptr.into(),
            values: vec![1.0; indices.len()].into(),
            indices: indices.into(),
        };
        let mut recent = Recent::default();
        recent.reset(m.cols);
        recent.mark(0, row_indices(&m, 0));
        let sparse = recent.marked * SUMMARY_SPARSE < recent.union.len();
        let check = |recent: &Recent| {
            assert!(recent.touches(&[70_000]) && recent.touches(&[1, 5]));
            assert!(!recent.touches(&[4, 6, 64, 69_999, 70_001, 70_050]));
            summary_matches(recent);
        };
        check(&recent);
        recent.mark(1, row_indices(&m, 1));
        assert!(sparse && recent.marked * SUMMARY_SPARSE >= recent.union.len());
        check(&recent);
        assert!(recent.touches(&[1000]) && !recent.touches(&[1001]));
        recent.clear(&m);
        assert!(recent.summary.iter().all(|&b| b == 0));
    }

    /// The summary has a word's bit set exactly while the word has one.
    fn summary_matches(recent: &Recent) {
        for (i, &word) in recent.union.iter().enumerate() {
            assert_eq!(bit(&recent.summary, i as u32), word != 0, "word {i}");
        }
    }

    /// A batch ends after [`BATCH_UPDATES`] updates whatever the caller's
    /// limit; here every row is a mistake on the same feature.
    #[test]
    fn a_batch_ends_after_its_update_limit() {
        let rows = BATCH_ROWS;
        let m = CsrMatrix::<f32> {
            cols: 1,
            row_ptr: (0..=rows).collect::<Vec<_>>().into(),
            indices: vec![0; rows].into(),
            values: vec![1.0; rows].into(),
        };
        // +1, -1, +1, ...: with no bias each row undoes the last update, so
        // every row is a mistake.
        let labels: Vec<i8> = (0..rows).map(|i| if i % 2 == 0 { 1 } else { -1 }).collect();
        let mut w = vec![0.0f32];
        let (mut decisions, mut left) = (vec![], u64::MAX);
        let done = Lookahead::default()
            .walk(
                &m,
                &labels,
                false,
                &mut w,
                Batch {
                    from: 0,
                    to: rows,
                    tau: 0.0,
                    helpers: 1,
                    deadline: None,
                    max_mistakes: usize::MAX,
                    updates_left: &mut left,
                    decisions: &mut decisions,
                    values: None,
                    bias_step: 1.0,
                    margins: None,
                    order: None,
                },
            )
            .unwrap();
        assert_eq!(decisions.len(), BATCH_UPDATES);
        assert_eq!(
            (done.position, done.stop),
            (BATCH_UPDATES, WalkStop::Running)
        );
        assert_eq!(w, [0.0]);
    }

    /// A deadline already past ends the batch after its first chunk, at a
    /// chunk's edge, with that chunk decided as the textbook loop does.
    #[test]
    fn a_past_deadline_ends_the_batch_after_one_chunk() {
        let mut rng = Rng(77);
        let (m, labels) = data::<f64>(&mut rng, 5000, 50, 8);
        let expected = textbook((&m, &labels[..CHUNK], None), (true, 0.0, 1.0), 1);
        let mut w = vec![0.0; m.cols + 1];
        let (mut decisions, mut values, mut left) = (vec![], vec![], u64::MAX);
        let done = Lookahead::default()
            .walk(
                &m,
                &labels,
                true,
                &mut w,
                Batch {
                    from: 0,
                    to: 5000,
                    tau: 0.0,
                    helpers: 1,
                    deadline: Some(std::time::Instant::now()),
                    max_mistakes: usize::MAX,
                    updates_left: &mut left,
                    decisions: &mut decisions,
                    values: Some(&mut values),
                    bias_step: 1.0,
                    margins: None,
                    order: None,
                },
            )
            .unwrap();
        assert_eq!((done.position, done.stop), (CHUNK, WalkStop::Running));
        let rows: Vec<usize> = decisions.iter().map(|d| d.row).collect();
        assert_eq!(rows, expected.1);
        assert_eq!(bits(&w), bits(&expected.0));
    }
}
