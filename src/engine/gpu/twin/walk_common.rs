//! Twin of shaders/walk_common.wgsl: what both walk kernels share, the
//! bindings, the step's scalars, and the search, refresh, decision and
//! update steps, line for line (their structs [`WalkParams`],
//! [`WalkState`] and [`BatchParams`] live in `layout.rs`).
//!
//! The device's search checks many slacks in parallel and keeps the first
//! row not settled correct with atomicMin; the twin checks them in order
//! and stops at that row, which is the same row.

use super::lanes::RowDot;
use crate::engine::gpu::layout::{BatchParams, NONE, WalkParams, WalkState};
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
    let mut bits = crate::engine::gpu::layout::label_bits(labels, rows.clone());
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

pub(super) fn positive(bits: &[u32], row: u32) -> bool {
    (bits[(row / 32) as usize] >> (row % 32)) & 1 == 1
}

pub(super) fn host_only<F>(params: &WalkParams<F>, bits: &[u32], row: u32) -> bool {
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
/// [`Bound::slack`](crate::engine::certify::Bound::slack)).
pub(super) fn slack_of<F: Real>(b: &Bindings<F>, plus: bool, nrm: f32, d: RowDot<F>) -> f32 {
    let y = if plus { 1 } else { -1 };
    let norm = F::from_f64(nrm as f64);
    b.params
        .bound()
        .slack(y, d.s, d.t, F::from_f64(d.terms as f64), norm)
}

/// walk_common.wgsl `HOST_ONLY` and `scanned`.
pub(super) const HOST_ONLY: f32 = -1.0;

pub(super) fn scanned<F: Real>(b: &Bindings<F>, row: u32, d: RowDot<F>) -> [f32; 2] {
    if host_only(&b.params, &b.bits, row) {
        return [0.0, HOST_ONLY];
    }
    let plus = positive(&b.bits, row);
    [slack_of(b, plus, b.norms[row as usize], d), 0.0]
}

/// walk_common.wgsl `is_finite_f32`.
pub(super) fn is_finite_f32(v: f32) -> bool {
    v.is_finite()
}

/// walk_common.wgsl `drift_threshold`.
pub fn drift_threshold(delta: f32) -> f32 {
    delta * 1.1001 + 1e-19
}

/// walk_common.wgsl `settle`: the slack `rs[0]` computed at drift `rs[1]`,
/// under the drift `delta` now.
pub(super) fn settle(rs: [f32; 2], delta: f32) -> u32 {
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
pub(super) const ROUND_UP: f32 = 1.0 + 1.0 / 1_048_576.0;
pub(super) const UPDATE_ROUNDING: f32 = 1.0 / 4_194_304.0;
/// walk_common.wgsl `SEARCH_PER`, `BLOCK`, `BLOCK_LANES` and `WG`.
pub(super) const SEARCH_PER: u32 = 16;
pub(super) const BLOCK: u32 = 16;
pub(super) const BLOCK_LANES: u32 = 16;
pub(super) const WG: u32 = 256;

/// walk_common.wgsl `Step`: the step's scalars.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Step {
    pub(super) go: bool,
    pub(super) p: u32,
    pub(super) end: u32,
    pub(super) cur: u32,
    pub(super) row: u32,
    pub(super) verdict: u32,
    pub(super) fresh: bool,
    pub(super) wasted: u32,
    pub(super) n: u32,
    pub(super) delta: f32,
    pub(super) wnorm: f32,
}

/// walk_common.wgsl `walk_open`.
pub(super) fn walk_open<F>(b: &Bindings<F>) -> Step {
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
pub(super) fn step_search<F>(b: &mut Bindings<F>, step: &mut Step) {
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
pub(super) fn refresh<F: Real>(
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
pub(super) fn reference_decision<F: Real>(
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
pub(super) fn record<F>(entries: &mut Entries<F>, n: u32, q: u32, flags: u32) {
    entries.rows[1 + 2 * n as usize] = q;
    entries.rows[2 + 2 * n as usize] = flags;
    entries.rows[0] = n + 1;
}

/// walk_common.wgsl `update_coordinate`; returns the subnormal flag.
pub(super) fn update_coordinate<F: Real>(
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
pub(super) fn step_decided<F>(
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
pub(super) fn step_close<F>(b: &mut Bindings<F>, step: &Step) {
    let st = &mut b.state;
    st.p = step.cur;
    st.iterations += 1;
    st.wnorm = step.wnorm;
    if st.stop == 0 && step.cur >= st.limit {
        st.stop = STOP_LIMIT;
        st.stop_row = st.limit;
    }
}
