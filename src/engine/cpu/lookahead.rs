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

use std::collections::VecDeque;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize};

use super::helpers::Helpers;
use crate::data::CsrMatrix;
use crate::engine::reference;
use crate::engine::{WalkDecision, WalkStop};
use crate::float::Real;

/// Rows a chunk holds: what one claim sums.
const CHUNK: usize = 64;
/// Chunks ahead of the walk each helper may claim: enough to keep the
/// helpers busy while the walk takes kept sums, few enough that updates
/// seldom land between a sum and its row.
const LEAD_CHUNKS: usize = 8;
/// Rows one batch covers at most (the size of the sums' buffers).
pub const BATCH_ROWS: usize = 1 << 16;
/// Updates one batch makes at most: the record of recent updates counts
/// up to `u16::MAX` per feature.
const BATCH_UPDATES: usize = 1 << 12;
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
        }
    }
}

/// The features touched by the updates a helper's sum may not have seen,
/// as a bitmap (one bit a feature, small enough to stay in cache) with a
/// count per feature of the updates that touched it, and the rows of
/// those updates, oldest first.
#[derive(Default)]
struct Recent {
    touched: Vec<u64>,
    counts: Vec<u16>,
    rows: VecDeque<usize>,
    /// Updates of the batch before the first of `rows`.
    base: u64,
}

impl Recent {
    fn reset(&mut self, cols: usize) {
        if self.counts.len() != cols {
            self.touched = vec![0; cols.div_ceil(64)];
            self.counts = vec![0; cols];
        }
        self.rows.clear();
        self.base = 0;
    }

    /// Adds the update of a row with features `idx` (at most `u16::MAX`
    /// updates are held: a batch ends after [`BATCH_UPDATES`]).
    fn mark(&mut self, idx: &[u32]) {
        for &k in idx {
            self.counts[k as usize] += 1;
            self.touched[k as usize >> 6] |= 1 << (k & 63);
        }
    }

    fn unmark(&mut self, idx: &[u32]) {
        for &k in idx {
            let c = &mut self.counts[k as usize];
            *c -= 1;
            if *c == 0 {
                self.touched[k as usize >> 6] &= !(1 << (k & 63));
            }
        }
    }

    fn touches(&self, idx: &[u32]) -> bool {
        idx.iter()
            .any(|&k| (self.touched[k as usize >> 6] >> (k & 63)) & 1 != 0)
    }

    /// Forgets the updates before update `seen` (a sum that saw them needs
    /// no check against them).
    fn forget_before<F: Real>(&mut self, m: &CsrMatrix<F>, seen: u64) {
        while self.base < seen {
            let Some(row) = self.rows.pop_front() else {
                break;
            };
            self.unmark(row_indices(m, row));
            self.base += 1;
        }
    }

    /// Leaves the bitmap and the counts all clear for the next batch.
    fn clear<F: Real>(&mut self, m: &CsrMatrix<F>) {
        while let Some(row) = self.rows.pop_front() {
            self.unmark(row_indices(m, row));
        }
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
/// ([`reference::apply_update`], sparse rows), made only if every new
/// weight is finite: an overflow leaves the weights as they were, for the
/// loop's own update to report. Returns (made, a new weight is subnormal).
fn update<F: Real>(w: &[F::Cell], idx: &[u32], val: &[F], y: i8, bias: bool) -> (bool, bool) {
    let step = |wk: F, xk: F| if y > 0 { wk + xk } else { wk - xk };
    let bias_cell = bias.then(|| &w[w.len() - 1]);
    // First the check (the row's weights are in cache for the second pass).
    let finite = idx
        .iter()
        .zip(val)
        .all(|(&k, &xk)| step(F::load(&w[k as usize]), xk).is_finite())
        && bias_cell.is_none_or(|c| step(F::load(c), F::ONE).is_finite());
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
    if let Some(cell) = bias_cell {
        let b = step(F::load(cell), F::ONE);
        F::store(cell, b);
        subnormal |= b.is_subnormal();
    }
    (true, subnormal)
}

/// What the helpers and the walk share during one batch.
struct Shared<'a, F: Real> {
    m: &'a CsrMatrix<F>,
    w: &'a [F::Cell],
    from: usize,
    to: usize,
    /// The first row no one has claimed yet (chunks start at `from`).
    frontier: Padded<AtomicUsize>,
    /// The first row of the chunk the walk is deciding.
    at: Padded<AtomicUsize>,
    /// Rows past `at` that may be claimed.
    lead: usize,
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
    /// Claims the next chunk, if it is not too far ahead, and sums its rows.
    fn help_once(&self) -> Help {
        let f = self.frontier.load(Relaxed);
        if f >= self.to {
            return Help::Finished;
        }
        if f >= self.at.load(Relaxed) + self.lead {
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
        for row in f..end {
            self.m.prefetch_row(row + 1);
            let (a, b) = (self.m.row_ptr[row], self.m.row_ptr[row + 1]);
            let s = sum(self.w, &self.m.indices[a..b], &self.m.values[a..b]);
            F::store(&self.sums[row - self.from], s);
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
        } = self;
        let helpers = helpers.as_ref()?;
        recent.reset(m.cols);
        let shared = Shared {
            m,
            w,
            from,
            to,
            frontier: Padded(AtomicUsize::new(from)),
            at: Padded(AtomicUsize::new(from)),
            lead: LEAD_CHUNKS * CHUNK * helpers.len().max(1),
            updates: Padded(AtomicU64::new(0)),
            quit: AtomicBool::new(false),
            sums,
            done,
            seen,
        };
        let work = || shared.help();
        let walked = helpers.run(&work, || {
            let walked = decide_rows(&shared, labels, bias, recent, counts, *walk_claims, batch);
            shared.quit.store(true, Relaxed);
            walked
        });
        recent.clear(m);
        Some(walked)
    }
}

/// The walk's part: every row of the batch decided in order.
fn decide_rows<F: Real>(
    shared: &Shared<'_, F>,
    labels: &[i8],
    bias: bool,
    recent: &mut Recent,
    counts: &mut LookaheadCounts,
    walk_claims: bool,
    mut batch: Batch<'_, F>,
) -> Walked {
    let (m, w) = (shared.m, shared.w);
    let mut made = 0u64;
    let mut mistakes = 0;
    let mut subnormal = false;
    let mut helped = false;
    let mut r = shared.from;
    while r < shared.to {
        if r > shared.from
            && batch
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
        {
            break;
        }
        let end = (r + CHUNK).min(shared.to);
        let c = (r - shared.from) / CHUNK;
        shared.at.store(r, Relaxed);
        let own = walk_claims
            && shared
                .frontier
                .compare_exchange(r, end, Relaxed, Relaxed)
                .is_ok();
        // A helper's sums serve if no update since touched the row; the
        // bitmap holds the updates from the ones the helper saw on.
        let summed_ahead = shared.wait_for(c, own);
        helped |= summed_ahead.is_some();
        let kept = summed_ahead.filter(|&seen| seen >= recent.base);
        if let Some(seen) = kept {
            recent.forget_before(m, seen);
        }
        for (row, &y) in labels.iter().enumerate().take(end).skip(r) {
            m.prefetch_row(row + 1);
            let (idx, val) = (row_indices(m, row), row_values(m, row));
            let s = match kept {
                Some(seen) if made == seen || !recent.touches(idx) => {
                    counts.kept += 1;
                    F::load(&shared.sums[row - shared.from])
                }
                _ => {
                    counts.summed += 1;
                    sum(w, idx, val)
                }
            };
            let s = if bias {
                s + F::load(&w[w.len() - 1])
            } else {
                s
            };
            if !s.is_finite() {
                // The features overflow this precision: listed for the
                // loop, whose own decision reports it.
                batch.decisions.push(WalkDecision {
                    row,
                    mistake: false,
                    speculative: true,
                    values_at: None,
                });
                return Walked {
                    position: row + 1,
                    stop: WalkStop::Resync,
                    subnormal,
                    helped,
                };
            }
            if !reference::is_mistake_within(y, s, batch.tau) {
                continue;
            }
            let (finite, sub) = update(w, idx, val, y, bias);
            subnormal |= sub;
            let mut values_at = None;
            if let (true, Some(values)) = (finite, batch.values.as_deref_mut()) {
                values_at = Some(values.len());
                values.extend(idx.iter().map(|&k| F::load(&w[k as usize])));
                if bias {
                    values.push(F::load(&w[w.len() - 1]));
                }
            }
            batch.decisions.push(WalkDecision {
                row,
                mistake: true,
                speculative: false,
                values_at,
            });
            if !finite {
                // Overflow, the weights left as they were: the loop's own
                // update reports it.
                return Walked {
                    position: row + 1,
                    stop: WalkStop::Resync,
                    subnormal,
                    helped,
                };
            }
            made += 1;
            shared.updates.store(made, Release);
            recent.rows.push_back(row);
            recent.mark(idx);
            mistakes += 1;
            *batch.updates_left -= 1;
            let stop = if *batch.updates_left == 0 {
                WalkStop::Updates
            } else if mistakes >= batch.max_mistakes.min(BATCH_UPDATES) {
                WalkStop::Running
            } else {
                continue;
            };
            return Walked {
                position: row + 1,
                stop,
                subnormal,
                helped,
            };
        }
        r = end;
    }
    Walked {
        position: r,
        stop: WalkStop::Running,
        subnormal,
        helped,
    }
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

    /// The textbook loop: every row's reference dot, in order.
    fn textbook<F: Real>(
        m: &CsrMatrix<F>,
        labels: &[i8],
        bias: bool,
        tau: F,
        epochs: usize,
    ) -> (Vec<F>, Vec<usize>) {
        let mut w = vec![F::ZERO; m.cols + bias as usize];
        let mut mistakes = vec![];
        for _ in 0..epochs {
            for (i, &y) in labels.iter().enumerate() {
                let row = crate::data::Row::Sparse(row_indices(m, i), row_values(m, i));
                if reference::is_mistake_within(y, reference::dot(&w, row, bias), tau) {
                    reference::apply_update(&mut w, row, y, bias).unwrap();
                    mistakes.push(i);
                }
            }
        }
        (w, mistakes)
    }

    /// The same epochs through the lookahead walk, in batches of random
    /// lengths that end after a random number of mistakes.
    fn walked<F: Real>(
        walk: &mut Lookahead<F>,
        rng: &mut Rng,
        (m, labels): (&CsrMatrix<F>, &[i8]),
        (bias, tau): (bool, F),
        epochs: usize,
        helpers: usize,
    ) -> (Vec<F>, Vec<usize>) {
        let mut w = vec![F::ZERO; m.cols + bias as usize];
        let mut mistakes = vec![];
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
        (w, mistakes)
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
            let cols = 1 + rng.below(400);
            let nnz = 1 + rng.below(20);
            let (m, labels) = data::<F>(rng, rows, cols, nnz);
            let bias = rng.below(4) != 0;
            let tau = F::from_f64([0.0, 0.0, 0.25][rng.below(3)]);
            let epochs = 1 + rng.below(6);
            let expected = textbook(&m, &labels, bias, tau, epochs);
            for (helpers, claims) in [(0, true), (1, false), (3, false), (3, true)] {
                let mut walk = Lookahead {
                    walk_claims: claims,
                    ..Default::default()
                };
                let got = pool.install(|| {
                    walked(&mut walk, rng, (&m, &labels), (bias, tau), epochs, helpers)
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
                *kept += walk.counts.kept;
                *summed += walk.counts.summed;
                assert!(
                    walk.recent.touched.iter().all(|&b| b == 0),
                    "the bitmap is left clear"
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

    /// The bitmap holds exactly the features of the updates not yet
    /// forgotten, shared features included.
    #[test]
    fn forgetting_an_update_keeps_the_features_of_later_ones() {
        let m = CsrMatrix::<f32> {
            cols: 130,
            row_ptr: vec![0, 2, 4, 5].into(),
            indices: vec![1, 64, 64, 129, 7].into(),
            values: vec![1.0; 5].into(),
        };
        let mut recent = Recent::default();
        recent.reset(m.cols);
        for row in 0..3 {
            recent.rows.push_back(row);
            recent.mark(row_indices(&m, row));
        }
        assert!(recent.touches(&[1]) && recent.touches(&[129]) && recent.touches(&[7]));
        recent.forget_before(&m, 1);
        assert!(!recent.touches(&[1]), "row 0's own feature is forgotten");
        assert!(recent.touches(&[64]), "row 1 still touches 64");
        assert!(recent.touches(&[0, 129]) && !recent.touches(&[0, 2, 63, 65, 128]));
        recent.forget_before(&m, 1);
        assert_eq!(recent.base, 1, "forgetting is idempotent");
        recent.forget_before(&m, 3);
        assert!(!recent.touches(&[1, 7, 64, 129]));
        assert_eq!(recent.base, 3);
    }

    /// A batch ends after [`BATCH_UPDATES`] updates whatever the caller's
    /// limit: the record of recent updates counts at most `u16::MAX` per
    /// feature, and here every row is a mistake on the same feature.
    #[test]
    fn a_batch_ends_before_its_record_of_updates_overflows() {
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
        let expected = textbook(&m, &labels[..CHUNK], true, 0.0, 1);
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
                },
            )
            .unwrap();
        assert_eq!((done.position, done.stop), (CHUNK, WalkStop::Running));
        let rows: Vec<usize> = decisions.iter().map(|d| d.row).collect();
        assert_eq!(rows, expected.1);
        assert_eq!(bits(&w), bits(&expected.0));
    }
}
