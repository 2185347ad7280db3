//! CPU twins of the WGSL kernels, line for line: same lane striding, same
//! tree reduction, same slack. They run where no adapter exists, so CI checks
//! the kernels' logic, and GPU tests compare the device against them.
//!
//! shaders/row_dot_dense.wgsl  <->  [`row_dot_dense`]
//! shaders/row_dot_dense4.wgsl <->  [`row_dot_dense4`] ([`dense_row_dot`]
//!                                  chooses as the host does)
//! shaders/row_dot_sparse.wgsl <->  [`row_dot_sparse`]
//! shaders/margins_*.wgsl      <->  [`TwinEngine::slacks`]
//! shaders/lanes.wgsl          <->  [`reduce_lanes`], [`RowDot`]
//! shaders/common.wgsl         <->  [`write_slack`]
//!
//! The row-dot twins serve the walk's scan too (src/engine/gpu/walk_twin.rs), as
//! the WGSL row-dot blocks serve both kernels.

use crate::data::{Dataset, Features, Row};
use crate::engine::certify::{self, Bound};
use crate::engine::{Completed, EngineError, EngineStats, MarginEngine, Pass};
use crate::float::Real;

/// lanes.wgsl `reduce_lanes`, for one row's group of lanes.
pub fn reduce_lanes<F: Real>(part_s: &mut [F], part_t: &mut [F]) {
    let mut off = part_s.len() / 2;
    loop {
        if off == 0 {
            break;
        }
        for lane in 0..off {
            part_s[lane] = part_s[lane] + part_s[lane + off];
            part_t[lane] = part_t[lane] + part_t[lane + off];
        }
        off /= 2;
    }
}

/// common.wgsl `write_slack` (the arithmetic lives in [`Bound::slack`]).
pub fn write_slack<F: Real>(
    bound: &Bound<F>,
    positive: bool,
    s: F,
    t: F,
    m: u32,
    norm: f32,
) -> f32 {
    bound.slack(
        if positive { 1 } else { -1 },
        s,
        t,
        F::from_f64(m as f64),
        F::from_f64(norm as f64),
    )
}

/// lanes.wgsl `RowDot`: a row's ŝ and t̂, the bias added last, and its
/// terms m (stored entries plus the bias).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowDot<F> {
    pub s: F,
    pub t: F,
    pub terms: u32,
}

/// The end of every row-dot block: the bias (weight `cols`) added last to
/// lane 0's sums, and the row's terms.
fn with_bias<F: Real>(
    s: F,
    t: F,
    stored: usize,
    weights: &[F],
    cols: usize,
    bias: bool,
) -> RowDot<F> {
    let (mut s, mut t) = (s, t);
    if bias {
        let b = weights[cols];
        s = s + b;
        t = t + b.abs();
    }
    RowDot {
        s,
        t,
        terms: stored as u32 + bias as u32,
    }
}

/// The lanes' partial sums over the entries `lane, lane + LANES, ...`,
/// then their tree: the first two steps of the row-dot blocks.
fn lanes_then_reduce<F: Real>(lanes: usize, n: usize, term: impl Fn(usize) -> F) -> (F, F) {
    let mut part_s = vec![F::ZERO; lanes];
    let mut part_t = vec![F::ZERO; lanes];
    for lane in 0..lanes {
        let mut s = F::ZERO;
        let mut t = F::ZERO;
        let mut k = lane;
        while k < n {
            let p = term(k);
            s = s + p;
            t = t + p.abs();
            k += lanes;
        }
        part_s[lane] = s;
        part_t[lane] = t;
    }
    reduce_lanes(&mut part_s, &mut part_t);
    (part_s[0], part_t[0])
}

/// row_dot_dense.wgsl `row_dot_dense` for one live row (lane 0's result):
/// `weights` start at the row's head's first weight (the kernel's `wbase`).
pub fn row_dot_dense<F: Real>(lanes: u32, weights: &[F], x: &[F], bias: bool) -> RowDot<F> {
    let cols = x.len();
    let (s, t) = lanes_then_reduce(lanes as usize, cols, |k| weights[k] * x[k]);
    with_bias(s, t, cols, weights, cols, bias)
}

/// row_dot_dense4.wgsl `row_dot_dense` for one live row (lane 0's result),
/// the rows read as vectors of four: each lane's four sums, then together,
/// then the lanes' tree, then the bias.
pub fn row_dot_dense4<F: Real>(lanes: u32, weights: &[F], x: &[F], bias: bool) -> RowDot<F> {
    let cols = x.len();
    let lanes = lanes as usize;
    let vectors = cols / 4;
    let mut part_s = vec![F::ZERO; lanes];
    let mut part_t = vec![F::ZERO; lanes];
    for lane in 0..lanes {
        let mut s4 = [F::ZERO; 4];
        let mut t4 = [F::ZERO; 4];
        let mut j = lane;
        while j < vectors {
            for c in 0..4 {
                let p = weights[4 * j + c] * x[4 * j + c];
                s4[c] = s4[c] + p;
                t4[c] = t4[c] + p.abs();
            }
            j += lanes;
        }
        part_s[lane] = (s4[0] + s4[1]) + (s4[2] + s4[3]);
        part_t[lane] = (t4[0] + t4[1]) + (t4[2] + t4[3]);
    }
    reduce_lanes(&mut part_s, &mut part_t);
    let (s, t) = (part_s[0], part_t[0]);
    with_bias(s, t, cols, weights, cols, bias)
}

/// The dense row-dot block the device runs for rows of `x.len()` columns:
/// [`row_dot_dense4`] where they are read as vectors
/// ([`super::shaders::reads_vectors`]), else [`row_dot_dense`].
pub fn dense_row_dot<F: Real>(lanes: u32, weights: &[F], x: &[F], bias: bool) -> RowDot<F> {
    if super::shaders::reads_vectors(x.len()) {
        row_dot_dense4(lanes, weights, x, bias)
    } else {
        row_dot_dense(lanes, weights, x, bias)
    }
}

/// row_dot_sparse.wgsl `row_dot_sparse` for one live row (lane 0's
/// result); `cols` locates the bias.
pub fn row_dot_sparse<F: Real>(
    lanes: u32,
    weights: &[F],
    idx: &[u32],
    val: &[F],
    cols: usize,
    bias: bool,
) -> RowDot<F> {
    let stored = idx.len();
    let (s, t) = lanes_then_reduce(lanes as usize, stored, |e| {
        weights[idx[e] as usize] * val[e]
    });
    with_bias(s, t, stored, weights, cols, bias)
}

/// The GPU engine's pass computed by the twins on the CPU.
pub struct TwinEngine<'d, F: Real> {
    data: &'d Dataset<F>,
    bias: bool,
    lanes: u32,
    l1_max: f64,
    /// Row norms (and the rest of the data's facts), shared with the loop.
    norms: std::sync::Arc<certify::RowFacts>,
    done: Completed,
    stats: EngineStats,
}

impl<'d, F: Real> TwinEngine<'d, F> {
    /// `lanes` as the GPU would pick it unless given.
    pub fn new(data: &'d Dataset<F>, bias: bool, lanes: Option<u32>) -> Self {
        let terms = match &data.features {
            Features::Dense(m) => m.cols,
            Features::Sparse(m) => m.values.len() / m.rows().max(1),
        };
        TwinEngine {
            data,
            bias,
            lanes: lanes.unwrap_or_else(|| super::shaders::lanes_for(terms)),
            l1_max: data.facts(bias).l1_max,
            norms: data.facts(bias),
            done: Completed::default(),
            stats: EngineStats::default(),
        }
    }

    /// The slacks of one pass, as the kernels compute them.
    pub fn slacks(&self, pass: &Pass<'_, F>, out: &mut [f32]) {
        let bound = Bound::<F>::for_weights(pass.weights, self.l1_max).with_margin(pass.tau);
        let cols = self.data.cols();
        let heads = pass.heads;
        let stride = cols + self.bias as usize;
        // As in the kernels: one virtual row per (row, head) pair.
        for (vr, slot) in out.iter_mut().enumerate().take(pass.slots()) {
            let p = pass.start + vr / heads;
            let head = vr % heads;
            let w = &pass.weights[head * stride..(head + 1) * stride];
            let d = match self.data.features.row(p) {
                Row::Dense(x) => dense_row_dot(self.lanes, w, x, self.bias),
                Row::Sparse(idx, val) => row_dot_sparse(self.lanes, w, idx, val, cols, self.bias),
            };
            let positive = self.data.label_for(head, heads, p) > 0;
            *slot = write_slack(&bound, positive, d.s, d.t, d.terms, self.norms.norms[p]);
        }
    }
}

impl<F: Real> MarginEngine<F> for TwinEngine<'_, F> {
    fn name(&self) -> String {
        format!("gpu twin (lanes {})", self.lanes)
    }

    fn preferred_window(&self, mistake_rate: f64) -> usize {
        ((64.0 / mistake_rate.max(1e-9)) as usize).clamp(64, 1 << 16)
    }

    fn submit(&mut self, pass: &Pass<'_, F>) -> Result<(), EngineError> {
        let mut out = self.done.buffer(pass.slots());
        self.slacks(pass, &mut out);
        self.stats.passes += 1;
        self.stats.rows_evaluated += pass.len() as u64;
        self.stats.rows_uncertain += out.iter().filter(|r| **r == 0.0).count() as u64;
        self.done.push(out);
        Ok(())
    }

    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        self.done.pop_into(slack)
    }

    fn stats(&self) -> EngineStats {
        self.stats.clone()
    }
}
