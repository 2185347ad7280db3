//! CPU twins of the walk kernels, line for line, and an engine that walks
//! with them, so the loop's walk mode is tested where no adapter exists.
//!
//! shaders/walk_common.wgsl <-> `slack_of`, `scanned`, `settle`, `walk_open`,
//!                              `step_search`, `refresh` (`block_row`,
//!                              `fresh_slack`, `step_refreshed`),
//!                              `step_decided`, `step_close`,
//!                              `update_coordinate` (its structs:
//!                              [`WalkParams`], [`WalkState`],
//!                              [`BatchParams`] in layout.rs)
//! shaders/walk_dense.wgsl  <-> [`scan_dense`], [`step_dense`]
//! shaders/walk_sparse.wgsl <-> [`scan_sparse`], [`step_sparse`]
//!
//! The device's search checks many slacks in parallel and keeps the first
//! row not settled correct with atomicMin; the twin checks them in order
//! and stops at that row, which is the same row.

use super::layout::{BatchParams, NONE, WalkParams, WalkState};
use super::twin::{RowDot, dense_row_dot, row_dot_sparse};
use super::walk_plan::{BatchDone, BatchPlan, DEFAULT_WASTE, MAX_WINDOW};
use crate::data::{Dataset, Features};
use crate::engine::certify::Bound;
use crate::engine::{
    BatchLimits, EngineError, EngineStats, MarginEngine, Pass, WalkBatch, WalkDecision, WalkStart,
    WalkStop, Walker,
};
use crate::float::Real;

pub const STOP_LIMIT: u32 = 1;
pub const STOP_SUBNORMAL: u32 = 3;
pub const STOP_SAFETY: u32 = 4;
pub const ENTRY_MISTAKE: u32 = 1;
pub const ENTRY_SPECULATIVE: u32 = 2;
pub const ENTRY_SUBNORMAL: u32 = 4;

/// The label bits then the host-only bits of `rows` rows, as the kernels
/// read them (`positive`, `host_only`).
pub fn walk_bits(labels: &[i8], host_only: &[usize], rows: std::ops::Range<usize>) -> Vec<u32> {
    let words = rows.len().div_ceil(32);
    let mut bits = super::layout::label_bits(labels, rows.clone());
    bits.resize((2 * words).max(1), 0);
    let from = host_only.partition_point(|&r| r < rows.start);
    for &r in host_only[from..].iter().take_while(|&&r| r < rows.end) {
        let j = r - rows.start;
        bits[words + j / 32] |= 1 << (j % 32);
    }
    bits
}

/// A batch's entries: the header word (the count), then (row, flags) pairs;
/// and `stride` values per entry.
#[derive(Clone, Debug, Default)]
pub struct Entries<F> {
    pub rows: Vec<u32>,
    pub values: Vec<F>,
}

impl<F: Real> Entries<F> {
    pub fn new(capacity: usize, stride: usize) -> Self {
        Entries {
            rows: vec![0; 1 + 2 * capacity],
            values: vec![F::ZERO; capacity * stride],
        }
    }
}

fn positive(bits: &[u32], row: u32) -> bool {
    (bits[(row / 32) as usize] >> (row % 32)) & 1 == 1
}

fn host_only<F>(params: &WalkParams<F>, bits: &[u32], row: u32) -> bool {
    let words = params.rows.div_ceil(32);
    (bits[(words + row / 32) as usize] >> (row % 32)) & 1 == 1
}

/// What the walk kernels bind, but the rows: the chunk's parameters, the
/// batch's, the label and host-only bits, the norm bounds, and the buffers
/// they write.
pub struct Bindings<F> {
    pub params: WalkParams<F>,
    pub batch: BatchParams,
    pub bits: Vec<u32>,
    pub norms: Vec<f32>,
    pub weights: Vec<F>,
    pub state: WalkState,
    pub entries: Entries<F>,
    /// Each scanned row's slack and the drift when it was computed.
    pub slack: Vec<[f32; 2]>,
}

/// walk_common.wgsl `slack_of` (the arithmetic of slack.wgsl lives in
/// [`Bound::slack`]).
fn slack_of<F: Real>(b: &Bindings<F>, plus: bool, nrm: f32, d: RowDot<F>) -> f32 {
    let y = if plus { 1 } else { -1 };
    let norm = F::from_f64(nrm as f64);
    b.params
        .bound()
        .slack(y, d.s, d.t, F::from_f64(d.terms as f64), norm)
}

/// walk_common.wgsl `HOST_ONLY` and `scanned`.
const HOST_ONLY: f32 = -1.0;

fn scanned<F: Real>(b: &Bindings<F>, row: u32, d: RowDot<F>) -> [f32; 2] {
    if host_only(&b.params, &b.bits, row) {
        return [0.0, HOST_ONLY];
    }
    let plus = positive(&b.bits, row);
    [slack_of(b, plus, b.norms[row as usize], d), 0.0]
}

/// walk_common.wgsl `is_finite_f32`.
fn is_finite_f32(v: f32) -> bool {
    v.is_finite()
}

/// walk_common.wgsl `drift_threshold`.
pub fn drift_threshold(delta: f32) -> f32 {
    delta * 1.1001 + 1e-19
}

/// walk_common.wgsl `settle`: the slack `rs[0]` computed at drift `rs[1]`,
/// under the drift `delta` now.
fn settle(rs: [f32; 2], delta: f32) -> u32 {
    if rs[1] < 0.0 || !is_finite_f32(delta) {
        return 2;
    }
    let thr = drift_threshold((delta - rs[1]) * ROUND_UP);
    if rs[0] > thr {
        return 0;
    }
    if rs[0] < -thr {
        return 1;
    }
    2
}

/// walk_common.wgsl `ROUND_UP` (1 + 2^-20) and `UPDATE_ROUNDING` (2^-22).
const ROUND_UP: f32 = 1.0 + 1.0 / 1_048_576.0;
const UPDATE_ROUNDING: f32 = 1.0 / 4_194_304.0;
/// walk_common.wgsl `SEARCH_PER`, `BLOCK`, `BLOCK_LANES` and `WG`.
const SEARCH_PER: u32 = 16;
const BLOCK: u32 = 16;
const BLOCK_LANES: u32 = 16;
const WG: u32 = 256;

/// walk_common.wgsl `Step`: the step's scalars.
#[derive(Clone, Copy, Debug, Default)]
struct Step {
    go: bool,
    p: u32,
    end: u32,
    cur: u32,
    row: u32,
    verdict: u32,
    fresh: bool,
    wasted: u32,
    n: u32,
    delta: f32,
    wnorm: f32,
}

/// walk_common.wgsl `walk_open`.
fn walk_open<F>(b: &Bindings<F>) -> Step {
    let st = &b.state;
    let n = b.entries.rows[0];
    Step {
        go: st.stop == 0 && n < b.batch.capacity && st.p < st.limit,
        p: st.p,
        end: (st.p + b.batch.window.min(st.limit.saturating_sub(st.p))).min(st.limit),
        cur: st.p,
        row: NONE,
        verdict: 2,
        fresh: false,
        wasted: 0,
        n,
        delta: 0.0,
        wnorm: st.wnorm,
    }
}

/// walk_common.wgsl `step_search`: the workgroup's interleaved search is
/// the first row not settled correct, which this finds in order.
fn step_search<F>(b: &mut Bindings<F>, step: &mut Step) {
    loop {
        if step.cur >= step.end {
            step.go = false;
            return;
        }
        let last = (step.cur + WG * SEARCH_PER).min(step.end);
        b.state.searches += 1;
        let first = (step.cur..last).find(|&row| {
            let rs = b.slack[(row - step.p) as usize];
            settle(rs, step.delta) != 0
        });
        match first {
            None => {
                step.row = NONE;
                step.cur = last;
            }
            Some(row) => {
                step.row = row;
                let rs = b.slack[(row - step.p) as usize];
                step.verdict = settle(rs, step.delta);
                step.fresh = rs[1] == step.delta || rs[1] < 0.0;
                return;
            }
        }
    }
}

/// walk_common.wgsl `block_row`, `fresh_slack` and `step_refreshed`, with
/// the layout's `block_dot_*` as `dot(row, lane)`: fresh slacks for the
/// first BLOCK rows of q .. q + WG that need one, each row's BLOCK_LANES
/// partial sums added in order, the bias last.
fn refresh<F: Real>(
    b: &mut Bindings<F>,
    step: &mut Step,
    q: u32,
    dot: impl Fn(&[F], u32, u32) -> RowDot<F>,
) {
    let block: Vec<u32> = (q..(q + WG).min(step.end))
        .filter(|&row| {
            let rs = b.slack[(row - step.p) as usize];
            rs[1] >= 0.0 && settle(rs, step.delta) != 0
        })
        .take(BLOCK as usize)
        .collect();
    let mut waste = 0;
    for row in block {
        let (mut s, mut t, mut terms) = (F::ZERO, F::ZERO, 0);
        for lane in 0..BLOCK_LANES {
            let d = dot(&b.weights, row, lane);
            s = s + d.s;
            t = t + d.t;
            terms = d.terms;
        }
        if b.params.bias != 0 {
            let w = b.weights[b.params.cols as usize];
            s = s + w;
            t = t + w.abs();
        }
        let d = RowDot {
            s,
            t,
            terms: terms + b.params.bias,
        };
        let plus = positive(&b.bits, row);
        let rs = [slack_of(b, plus, b.norms[row as usize], d), step.delta];
        b.slack[(row - step.p) as usize] = rs;
        waste += (settle(rs, step.delta) == 0) as u32;
    }
    b.state.dots += 1;
    step.wasted += waste;
    // Row q is the block's first: the slack just computed (wg_rs).
    let verdict = settle(b.slack[(q - step.p) as usize], step.delta);
    step.verdict = verdict;
    if step.wasted > b.batch.waste {
        step.go = false;
    } else if verdict == 0 {
        step.cur = q + 1;
        if step.cur >= step.end {
            step.go = false;
        }
    }
}

/// The speculative decision: products rounded on their own, summed in order
/// from 0 (as the step does through workgroup memory), then the bias last
/// and the comparison (walk_common.wgsl `reference_decision`).
fn reference_decision<F: Real>(
    params: &WalkParams<F>,
    weights: &[F],
    products: impl Iterator<Item = F>,
    plus: bool,
) -> bool {
    let mut s = F::ZERO;
    for p in products {
        s = s + p;
    }
    if params.bias != 0 {
        s = s + weights[params.cols as usize];
    }
    let ys = if plus { s } else { -s };
    ys <= params.tau
}

/// walk_common.wgsl `record`.
fn record<F>(entries: &mut Entries<F>, n: u32, q: u32, flags: u32) {
    entries.rows[1 + 2 * n as usize] = q;
    entries.rows[2 + 2 * n as usize] = flags;
    entries.rows[0] = n + 1;
}

/// walk_common.wgsl `update_coordinate`; returns the subnormal flag.
fn update_coordinate<F: Real>(
    b: &mut Bindings<F>,
    k: usize,
    v: F,
    plus: bool,
    entry: usize,
) -> bool {
    let old = b.weights[k];
    let updated = if plus { old + v } else { old - v };
    let signed_v = if plus { v } else { -v };
    let flag = old.is_subnormal()
        || v.is_subnormal()
        || updated.is_subnormal()
        || (updated == F::ZERO && old != -signed_v);
    b.weights[k] = updated;
    b.entries.values[entry] = updated;
    flag
}

/// walk_common.wgsl `step_decided`.
fn step_decided<F>(
    b: &mut Bindings<F>,
    step: &mut Step,
    q: u32,
    flags: u32,
    mistake: bool,
    subnormal: bool,
) {
    step.cur = q + 1;
    let flags = if subnormal {
        flags | ENTRY_SUBNORMAL
    } else {
        flags
    };
    record(&mut b.entries, step.n, q, flags);
    step.n += 1;
    if mistake {
        b.state.updates_left -= 1;
        let nq = b.norms[q as usize];
        step.wnorm = (step.wnorm + nq) * ROUND_UP;
        step.delta = (step.delta + nq + step.wnorm * UPDATE_ROUNDING) * ROUND_UP;
    }
    if subnormal {
        b.state.stop = STOP_SUBNORMAL;
        b.state.stop_row = q + 1;
        step.go = false;
    } else if b.state.updates_left == 0 {
        b.state.stop = STOP_SAFETY;
        b.state.stop_row = q + 1;
        step.go = false;
    } else if step.n >= b.batch.capacity || step.cur >= step.end {
        step.go = false;
    }
}

/// walk_common.wgsl `step_close`.
fn step_close<F>(b: &mut Bindings<F>, step: &Step) {
    let st = &mut b.state;
    st.p = step.cur;
    st.iterations += 1;
    st.wnorm = step.wnorm;
    if st.stop == 0 && step.cur >= st.limit {
        st.stop = STOP_LIMIT;
        st.stop_row = st.limit;
    }
}

/// walk_dense.wgsl `walk_scan_dense` (`x` holds the chunk's rows).
pub fn scan_dense<F: Real>(b: &mut Bindings<F>, lanes: u32, x: &[F]) {
    let w = walk_open(b);
    if !w.go {
        return;
    }
    let cols = b.params.cols as usize;
    for row in w.p..w.end {
        let xr = &x[row as usize * cols..(row as usize + 1) * cols];
        let d = dense_row_dot(lanes, &b.weights, xr, b.params.bias != 0);
        b.slack[(row - w.p) as usize] = scanned(b, row, d);
    }
}

/// walk_sparse.wgsl `walk_scan_sparse` (chunk-local CSR arrays).
pub fn scan_sparse<F: Real>(b: &mut Bindings<F>, lanes: u32, csr: (&[usize], &[u32], &[F])) {
    let w = walk_open(b);
    if !w.go {
        return;
    }
    let (row_ptr, col_index, values) = csr;
    for row in w.p..w.end {
        let (begin, end) = (row_ptr[row as usize], row_ptr[row as usize + 1]);
        let d = row_dot_sparse(
            lanes,
            &b.weights,
            &col_index[begin..end],
            &values[begin..end],
            b.params.cols as usize,
            b.params.bias != 0,
        );
        b.slack[(row - w.p) as usize] = scanned(b, row, d);
    }
}

/// walk_dense.wgsl `block_dot_dense`: lane `lane`'s share of row `row`.
fn block_dot_dense<F: Real>(weights: &[F], x: &[F], cols: usize, row: u32, lane: u32) -> RowDot<F> {
    let (mut s, mut t) = (F::ZERO, F::ZERO);
    let xbase = row as usize * cols;
    let mut k = lane as usize;
    while k < cols {
        let p = weights[k] * x[xbase + k];
        s = s + p;
        t = t + p.abs();
        k += BLOCK_LANES as usize;
    }
    RowDot {
        s,
        t,
        terms: cols as u32,
    }
}

/// walk_sparse.wgsl `block_dot_sparse`: lane `lane`'s share of row `row`.
fn block_dot_sparse<F: Real>(
    weights: &[F],
    csr: (&[usize], &[u32], &[F]),
    row: u32,
    lane: u32,
) -> RowDot<F> {
    let (row_ptr, col_index, values) = csr;
    let (begin, end) = (row_ptr[row as usize], row_ptr[row as usize + 1]);
    let (mut s, mut t) = (F::ZERO, F::ZERO);
    let mut e = begin + lane as usize;
    while e < end {
        let p = weights[col_index[e] as usize] * values[e];
        s = s + p;
        t = t + p.abs();
        e += BLOCK_LANES as usize;
    }
    RowDot {
        s,
        t,
        terms: (end - begin) as u32,
    }
}

/// walk_dense.wgsl `walk_step_dense`.
pub fn step_dense<F: Real>(b: &mut Bindings<F>, x: &[F]) {
    let mut s = walk_open(b);
    if !s.go {
        return;
    }
    let cols = b.params.cols as usize;
    loop {
        step_search(b, &mut s);
        if !s.go {
            break;
        }
        let q = s.row;
        if s.verdict == 2 && !s.fresh {
            refresh(b, &mut s, q, |w, row, lane| {
                block_dot_dense(w, x, cols, row, lane)
            });
            if !s.go {
                break;
            }
            if s.verdict == 0 {
                continue;
            }
        }
        let xbase = q as usize * cols;
        let plus = positive(&b.bits, q);
        let mut mistake = s.verdict == 1;
        let mut flags = ENTRY_MISTAKE;
        if s.verdict == 2 {
            flags = ENTRY_SPECULATIVE;
            let products = (0..cols).map(|k| b.weights[k] * x[xbase + k]);
            mistake = reference_decision(&b.params, &b.weights, products, plus);
            if mistake {
                flags |= ENTRY_MISTAKE;
            }
        }
        let mut subnormal = false;
        if mistake {
            let base = (s.n * b.params.stride) as usize;
            for k in 0..cols {
                subnormal |= update_coordinate(b, k, x[xbase + k], plus, base + k);
            }
            if b.params.bias != 0 {
                subnormal |= update_coordinate(b, cols, F::ONE, plus, base + cols);
            }
        }
        step_decided(b, &mut s, q, flags, mistake, subnormal);
        if !s.go {
            break;
        }
    }
    step_close(b, &s);
}

/// walk_sparse.wgsl `walk_step_sparse`.
pub fn step_sparse<F: Real>(b: &mut Bindings<F>, csr: (&[usize], &[u32], &[F])) {
    let mut s = walk_open(b);
    if !s.go {
        return;
    }
    let (row_ptr, col_index, values) = csr;
    loop {
        step_search(b, &mut s);
        if !s.go {
            break;
        }
        let q = s.row;
        if s.verdict == 2 && !s.fresh {
            refresh(b, &mut s, q, |w, row, lane| {
                block_dot_sparse(w, csr, row, lane)
            });
            if !s.go {
                break;
            }
            if s.verdict == 0 {
                continue;
            }
        }
        let (begin, end) = (row_ptr[q as usize], row_ptr[q as usize + 1]);
        let plus = positive(&b.bits, q);
        let mut mistake = s.verdict == 1;
        let mut flags = ENTRY_MISTAKE;
        if s.verdict == 2 {
            flags = ENTRY_SPECULATIVE;
            let products = (begin..end).map(|e| b.weights[col_index[e] as usize] * values[e]);
            mistake = reference_decision(&b.params, &b.weights, products, plus);
            if mistake {
                flags |= ENTRY_MISTAKE;
            }
        }
        let mut subnormal = false;
        if mistake {
            let out = (s.n * b.params.stride) as usize;
            for e in begin..end {
                let k = col_index[e] as usize;
                subnormal |= update_coordinate(b, k, values[e], plus, out + (e - begin));
            }
            if b.params.bias != 0 {
                let cols = b.params.cols as usize;
                subnormal |= update_coordinate(b, cols, F::ONE, plus, out + (end - begin));
            }
        }
        step_decided(b, &mut s, q, flags, mistake, subnormal);
        if !s.go {
            break;
        }
    }
    step_close(b, &s);
}

/// Values per entry: the longest row's stored terms plus the bias.
pub fn entry_stride<F: Real>(features: &Features<F>, bias: bool) -> usize {
    let longest = match features {
        Features::Dense(m) => m.cols,
        Features::Sparse(m) => m.row_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0),
    };
    longest + bias as usize
}

/// Turns a finished batch's state and entries into the loop's terms, with
/// rows offset by `offset` (the chunk's first row) and the batch starting
/// at `start`.
pub fn to_batch<F: Real>(
    state: &WalkState,
    entries: Entries<F>,
    stride: usize,
    offset: usize,
    start: usize,
    epoch_end: usize,
) -> Result<WalkBatch<F>, EngineError> {
    let n = entries.rows[0] as usize;
    if 1 + 2 * n > entries.rows.len() || n * stride > entries.values.len() {
        // More entries than the batch could hold: a broken device.
        return Err(EngineError(format!(
            "the walk reported {n} decisions, more than its batch holds ({})",
            (entries.rows.len() - 1) / 2
        )));
    }
    let mut decisions = Vec::with_capacity(n);
    for j in 0..n {
        let row = entries.rows[1 + 2 * j] as usize + offset;
        let flags = entries.rows[2 + 2 * j];
        let mistake = flags & ENTRY_MISTAKE != 0;
        decisions.push(WalkDecision {
            row,
            mistake,
            speculative: flags & ENTRY_SPECULATIVE != 0,
            values_at: (mistake && flags & ENTRY_SUBNORMAL == 0).then_some(j * stride),
        });
    }
    let end = if state.stop == 0 {
        state.p as usize + offset
    } else {
        state.stop_row as usize + offset
    };
    let stop = match state.stop {
        0 => WalkStop::Running,
        STOP_LIMIT if end >= epoch_end => WalkStop::End,
        STOP_LIMIT => WalkStop::Running,
        STOP_SUBNORMAL => WalkStop::Resync,
        _ => WalkStop::Updates,
    };
    Ok(WalkBatch {
        start,
        end,
        decisions,
        values: {
            let mut values = entries.values;
            values.truncate(n * stride);
            values
        },
        stop,
    })
}

/// An engine that walks with the twins: the GPU walk's logic on the CPU,
/// the whole dataset as one chunk, batches of at most `capacity` entries
/// sized by the device's [`BatchPlan`] (windows of at most `max_window`
/// rows). Margin passes (for the pocket variant) come from the margin
/// kernels' twins.
pub struct TwinWalkEngine<'d, F: Real> {
    passes: super::twin::TwinEngine<'d, F>,
    data: &'d Dataset<F>,
    bias: bool,
    lanes: u32,
    stride: usize,
    l1_max: f64,
    plan: BatchPlan,
    bindings: Bindings<F>,
    started: bool,
    epoch_end: usize,
}

impl<'d, F: Real> TwinWalkEngine<'d, F> {
    /// A twin walk recording at most `capacity` entries a batch, with
    /// windows of up to 4,096 rows (so small test sets see many steps).
    pub fn new(data: &'d Dataset<F>, bias: bool, lanes: u32, capacity: usize) -> Self {
        Self::with_window(data, bias, lanes, capacity, 4096, DEFAULT_WASTE)
    }

    /// The same with windows of at most `max_window` rows and `waste`.
    pub fn with_window(
        data: &'d Dataset<F>,
        bias: bool,
        lanes: u32,
        capacity: usize,
        max_window: usize,
        waste: u32,
    ) -> Self {
        let facts = data.facts(bias);
        let stride = entry_stride(&data.features, bias);
        let max_window = max_window.clamp(1, MAX_WINDOW);
        TwinWalkEngine {
            passes: super::twin::TwinEngine::new(data, bias, Some(lanes)),
            data,
            bias,
            lanes,
            stride,
            l1_max: facts.l1_max,
            plan: BatchPlan::new(capacity, max_window, waste),
            bindings: Bindings {
                params: WalkParams::new(
                    &Bound::new(false, 1.0),
                    data.cols(),
                    bias,
                    data.rows(),
                    stride,
                ),
                batch: BatchParams::default(),
                bits: walk_bits(&data.labels, &facts.host_only, 0..data.rows()),
                norms: facts.norms.clone(),
                weights: Vec::new(),
                state: WalkState::default(),
                entries: Entries::default(),
                slack: vec![[0.0; 2]; max_window],
            },
            started: false,
            epoch_end: data.rows(),
        }
    }

    /// Steps, fresh dots and searches so far.
    pub fn counters(&self) -> (u32, u32, u32) {
        let s = &self.bindings.state;
        (s.iterations, s.dots, s.searches)
    }
}

impl<F: Real> MarginEngine<F> for TwinWalkEngine<'_, F> {
    fn name(&self) -> String {
        format!("gpu walk twin (lanes {})", self.lanes)
    }
    fn preferred_window(&self, mistake_rate: f64) -> usize {
        self.passes.preferred_window(mistake_rate)
    }
    fn submit(&mut self, pass: &Pass<'_, F>) -> Result<(), EngineError> {
        self.passes.submit(pass)
    }
    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        self.passes.collect(slack)
    }
    fn stats(&self) -> EngineStats {
        self.passes.stats()
    }
    fn walker(&mut self) -> Option<&mut dyn Walker<F>> {
        Some(self)
    }
}

impl<F: Real> Walker<F> for TwinWalkEngine<'_, F> {
    fn begin(&mut self, start: &WalkStart<'_, F>) -> Result<(), EngineError> {
        let b = &mut self.bindings;
        if start.resync || b.weights.len() != start.weights.len() {
            b.weights = start.weights.to_vec();
        }
        let bound = Bound::<F>::for_weights(&b.weights, self.l1_max).with_margin(start.tau);
        b.params = WalkParams::new(
            &bound,
            self.data.cols(),
            self.bias,
            self.data.rows(),
            self.stride,
        );
        self.epoch_end = start.end;
        let wnorm = super::layout::norm_bound(&b.weights);
        b.state = WalkState::start(start.position, start.end, start.max_updates, wnorm);
        self.plan.restart();
        self.started = true;
        Ok(())
    }

    fn next(&mut self, _limits: BatchLimits) -> Result<WalkBatch<F>, EngineError> {
        if !self.started {
            return Err(EngineError("walk without begin".into()));
        }
        let b = &mut self.bindings;
        let start = b.state.p as usize;
        let (batch, iterations) = self
            .plan
            .next(b.state.limit.saturating_sub(b.state.p) as usize);
        b.batch = batch;
        b.entries = Entries::new(batch.capacity as usize, self.stride);
        let steps_before = b.state.iterations;
        for _ in 0..iterations {
            match &self.data.features {
                Features::Dense(m) => {
                    scan_dense(b, self.lanes, &m.values);
                    step_dense(b, &m.values);
                }
                Features::Sparse(m) => {
                    let csr = (&m.row_ptr[..], &m.indices[..], &m.values[..]);
                    scan_sparse(b, self.lanes, csr);
                    step_sparse(b, csr);
                }
            }
        }
        let decisions = b.entries.rows[0] as usize;
        self.plan.observe(BatchDone {
            rows: b.state.p as usize - start,
            decisions,
            steps: (b.state.iterations - steps_before) as usize,
            full: decisions >= batch.capacity as usize,
        });
        let entries = std::mem::take(&mut b.entries);
        to_batch(&b.state, entries, self.stride, 0, start, self.epoch_end)
    }

    fn cancel(&mut self) -> Result<(), EngineError> {
        self.started = false;
        Ok(())
    }
}
