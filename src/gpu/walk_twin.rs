//! CPU twins of the walk kernels, line for line, and an engine that walks
//! with them, so the loop's walk mode is tested where no adapter exists.
//!
//! shaders/walk_common.wgsl <-> [`certify()`], [`advance`],
//!                              `update_coordinate` (its structs:
//!                              [`WalkParams`], [`WalkState`] in layout.rs)
//! shaders/walk_dense.wgsl  <-> [`scan_dense`], [`step_dense`]
//! shaders/walk_sparse.wgsl <-> [`scan_sparse`], [`step_sparse`]
//!
//! The device runs the scan's rows in parallel and keeps the smallest code
//! with atomicMin; the twin visits them in order and keeps the first, which
//! is the same row.

use super::layout::{NONE, WalkParams, WalkState};
use super::twin::{row_dot_dense, row_dot_sparse};
use crate::certify::{self, Bound};
use crate::data::{Dataset, Features};
use crate::engine::{
    EngineError, EngineStats, MarginEngine, Pass, WalkBatch, WalkDecision, WalkStart, WalkStop,
    Walker,
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

/// walk_common.wgsl `certify`: 0 certainly correct, 1 certainly a mistake,
/// 2 uncertain. The kernel spells out [`Bound::decide`], which this calls.
pub fn certify<F: Real>(params: &WalkParams<F>, bits: &[u32], row: u32, s: F, t: F, m: u32) -> u32 {
    if host_only(params, bits, row) {
        return 2;
    }
    let y = if positive(bits, row) { 1 } else { -1 };
    match params.bound().decide(y, s, t, F::from_f64(m as f64)) {
        certify::Settled::Correct => 0,
        certify::Settled::Mistake => 1,
        certify::Settled::Unknown => 2,
    }
}

/// walk_common.wgsl `record`.
fn record<F>(entries: &mut Entries<F>, n: u32, q: u32, flags: u32) {
    entries.rows[1 + 2 * n as usize] = q;
    entries.rows[2 + 2 * n as usize] = flags;
    entries.rows[0] = n + 1;
}

/// walk_common.wgsl `advance`.
pub fn advance(state: &mut WalkState, q: u32, subnormal: bool) {
    state.p = q + 1;
    state.iterations += 1;
    state.found = NONE;
    if subnormal {
        state.stop = STOP_SUBNORMAL;
        state.stop_row = q + 1;
    } else if state.updates_left == 0 {
        state.stop = STOP_SAFETY;
        state.stop_row = q + 1;
    } else if q + 1 >= state.limit {
        state.stop = STOP_LIMIT;
        state.stop_row = state.limit;
    }
}

/// walk_common.wgsl `update_coordinate`; returns the subnormal flag.
fn update_coordinate<F: Real>(
    weights: &mut [F],
    values: &mut [F],
    k: usize,
    v: F,
    plus: bool,
    entry: usize,
) -> bool {
    let old = weights[k];
    let updated = if plus { old + v } else { old - v };
    let signed_v = if plus { v } else { -v };
    let flag = old.is_subnormal()
        || v.is_subnormal()
        || updated.is_subnormal()
        || (updated == F::ZERO && old != -signed_v);
    weights[k] = updated;
    values[entry] = updated;
    flag
}

/// walk_dense.wgsl `walk_scan_dense` (`x` holds the chunk's rows).
pub fn scan_dense<F: Real>(
    params: &WalkParams<F>,
    lanes: u32,
    x: &[F],
    bits: &[u32],
    weights: &[F],
    state: &mut WalkState,
) {
    if state.stop != 0 {
        return;
    }
    let cols = params.cols as usize;
    for row in state.p..state.limit {
        let xr = &x[row as usize * cols..(row as usize + 1) * cols];
        let d = row_dot_dense(lanes, weights, xr, params.bias != 0);
        let verdict = certify(params, bits, row, d.s, d.t, d.terms);
        if verdict != 0 {
            state.found = state.found.min(2 * row + (verdict == 2) as u32);
            // The device's later rows can only raise the minimum.
            return;
        }
    }
}

/// walk_sparse.wgsl `walk_scan_sparse` (chunk-local CSR arrays).
pub fn scan_sparse<F: Real>(
    params: &WalkParams<F>,
    lanes: u32,
    csr: (&[usize], &[u32], &[F]),
    bits: &[u32],
    weights: &[F],
    state: &mut WalkState,
) {
    if state.stop != 0 {
        return;
    }
    let (row_ptr, col_index, values) = csr;
    for row in state.p..state.limit {
        let (begin, end) = (row_ptr[row as usize], row_ptr[row as usize + 1]);
        let d = row_dot_sparse(
            lanes,
            weights,
            &col_index[begin..end],
            &values[begin..end],
            params.cols as usize,
            params.bias != 0,
        );
        let verdict = certify(params, bits, row, d.s, d.t, d.terms);
        if verdict != 0 {
            state.found = state.found.min(2 * row + (verdict == 2) as u32);
            return;
        }
    }
}

/// walk_common.wgsl `step_head`, the start of `walk_step_*` shared by both
/// layouts: `None` when the step is over (stopped, or nothing found), else
/// (q, found).
fn step_head(state: &mut WalkState) -> Option<(u32, u32)> {
    if state.stop != 0 {
        return None;
    }
    let found = state.found;
    if found == NONE {
        state.iterations += 1;
        state.p = state.limit;
        state.stop = STOP_LIMIT;
        state.stop_row = state.limit;
        return None;
    }
    Some((found >> 1, found))
}

/// walk_common.wgsl `step_tail`, the end of `walk_step_*`: count the
/// update, record, advance.
fn step_tail<F>(
    state: &mut WalkState,
    entries: &mut Entries<F>,
    n: u32,
    q: u32,
    mut flags: u32,
    mistake: bool,
    subnormal: bool,
) {
    if subnormal {
        flags |= ENTRY_SUBNORMAL;
    }
    if mistake {
        state.updates_left -= 1;
    }
    record(entries, n, q, flags);
    advance(state, q, subnormal);
}

/// The speculative decision: products rounded on their own, summed in order
/// from 0 (as `walk_step_*` does through workgroup memory), then the bias
/// last and the comparison (walk_common.wgsl `reference_decision`).
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

/// walk_dense.wgsl `walk_step_dense`.
pub fn step_dense<F: Real>(
    params: &WalkParams<F>,
    x: &[F],
    bits: &[u32],
    weights: &mut [F],
    state: &mut WalkState,
    entries: &mut Entries<F>,
) {
    let Some((q, found)) = step_head(state) else {
        return;
    };
    let plus = positive(bits, q);
    let cols = params.cols as usize;
    let xbase = q as usize * cols;
    let mut mistake = true;
    let mut flags = ENTRY_MISTAKE;
    if found & 1 == 1 {
        flags = ENTRY_SPECULATIVE;
        let products = (0..cols).map(|k| weights[k] * x[xbase + k]);
        mistake = reference_decision(params, weights, products, plus);
        if mistake {
            flags |= ENTRY_MISTAKE;
        }
    }
    let n = entries.rows[0];
    let mut subnormal = false;
    if mistake {
        let base = n as usize * params.stride as usize;
        for k in 0..cols {
            subnormal |= update_coordinate(
                weights,
                &mut entries.values,
                k,
                x[xbase + k],
                plus,
                base + k,
            );
        }
        if params.bias != 0 {
            subnormal |= update_coordinate(
                weights,
                &mut entries.values,
                cols,
                F::ONE,
                plus,
                base + cols,
            );
        }
    }
    step_tail(state, entries, n, q, flags, mistake, subnormal);
}

/// walk_sparse.wgsl `walk_step_sparse`.
pub fn step_sparse<F: Real>(
    params: &WalkParams<F>,
    csr: (&[usize], &[u32], &[F]),
    bits: &[u32],
    weights: &mut [F],
    state: &mut WalkState,
    entries: &mut Entries<F>,
) {
    let Some((q, found)) = step_head(state) else {
        return;
    };
    let (row_ptr, col_index, values) = csr;
    let plus = positive(bits, q);
    let (begin, end) = (row_ptr[q as usize], row_ptr[q as usize + 1]);
    let mut mistake = true;
    let mut flags = ENTRY_MISTAKE;
    if found & 1 == 1 {
        flags = ENTRY_SPECULATIVE;
        let products = (begin..end).map(|e| weights[col_index[e] as usize] * values[e]);
        mistake = reference_decision(params, weights, products, plus);
        if mistake {
            flags |= ENTRY_MISTAKE;
        }
    }
    let n = entries.rows[0];
    let mut subnormal = false;
    if mistake {
        let out = n as usize * params.stride as usize;
        for e in begin..end {
            let k = col_index[e] as usize;
            subnormal |= update_coordinate(
                weights,
                &mut entries.values,
                k,
                values[e],
                plus,
                out + (e - begin),
            );
        }
        if params.bias != 0 {
            let at = out + (end - begin);
            subnormal |= update_coordinate(
                weights,
                &mut entries.values,
                params.cols as usize,
                F::ONE,
                plus,
                at,
            );
        }
    }
    step_tail(state, entries, n, q, flags, mistake, subnormal);
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
/// the whole dataset as one chunk, `iterations` per batch. Margin passes
/// (for the pocket variant) come from the margin kernels' twins.
pub struct TwinWalkEngine<'d, F: Real> {
    passes: super::twin::TwinEngine<'d, F>,
    data: &'d Dataset<F>,
    bias: bool,
    lanes: u32,
    iterations: usize,
    stride: usize,
    bits: Vec<u32>,
    weights: Vec<F>,
    params: Option<WalkParams<F>>,
    state: WalkState,
    epoch_end: usize,
}

impl<'d, F: Real> TwinWalkEngine<'d, F> {
    pub fn new(data: &'d Dataset<F>, bias: bool, lanes: u32, iterations: usize) -> Self {
        let facts = data.facts(bias);
        TwinWalkEngine {
            passes: super::twin::TwinEngine::new(data, bias, Some(lanes)),
            data,
            bias,
            lanes,
            iterations: iterations.max(1),
            stride: entry_stride(&data.features, bias),
            bits: walk_bits(&data.labels, &facts.host_only, 0..data.rows()),
            weights: Vec::new(),
            params: None,
            state: WalkState::default(),
            epoch_end: data.rows(),
        }
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
        if start.resync || self.weights.len() != start.weights.len() {
            self.weights = start.weights.to_vec();
        }
        let facts = self.data.facts(self.bias);
        let bound = Bound::<F>::for_weights(&self.weights, facts.l1_max).with_margin(start.tau);
        self.params = Some(WalkParams::new(
            &bound,
            self.data.cols(),
            self.bias,
            self.data.rows(),
            self.stride,
        ));
        self.epoch_end = start.end;
        self.state = WalkState::start(start.position, start.end, start.max_updates);
        Ok(())
    }

    fn next(&mut self) -> Result<WalkBatch<F>, EngineError> {
        let params = self
            .params
            .ok_or_else(|| EngineError("walk without begin".into()))?;
        let start = self.state.p as usize;
        let mut entries = Entries::new(self.iterations, self.stride);
        for _ in 0..self.iterations {
            match &self.data.features {
                Features::Dense(m) => {
                    scan_dense(
                        &params,
                        self.lanes,
                        &m.values,
                        &self.bits,
                        &self.weights,
                        &mut self.state,
                    );
                    step_dense(
                        &params,
                        &m.values,
                        &self.bits,
                        &mut self.weights,
                        &mut self.state,
                        &mut entries,
                    );
                }
                Features::Sparse(m) => {
                    let csr = (&m.row_ptr[..], &m.indices[..], &m.values[..]);
                    scan_sparse(
                        &params,
                        self.lanes,
                        csr,
                        &self.bits,
                        &self.weights,
                        &mut self.state,
                    );
                    step_sparse(
                        &params,
                        csr,
                        &self.bits,
                        &mut self.weights,
                        &mut self.state,
                        &mut entries,
                    );
                }
            }
        }
        to_batch(&self.state, entries, self.stride, 0, start, self.epoch_end)
    }

    fn cancel(&mut self) -> Result<(), EngineError> {
        self.params = None;
        Ok(())
    }
}
