//! CPU twins of the WGSL kernels, line for line: same lane striding, same
//! tree reduction, same certification test. They run where no adapter
//! exists, so CI checks the kernels' logic, and GPU tests compare the device
//! against them.
//!
//! shaders/margins_dense.wgsl  <->  [`dense_row`]
//! shaders/margins_sparse.wgsl <->  [`sparse_row`]
//! shaders/common.wgsl         <->  [`segment_of`], [`reduce_lanes`], [`flag_unless_settled`]

use crate::certify::Bound;
use crate::float::Real;

/// What a kernel reads from its `Params` uniform.
#[derive(Clone, Copy, Debug)]
pub struct Params<'a> {
    pub cols: u32,
    pub bias: u32,
    pub w_stride: u32,
    /// Pass-relative starts of the segments after the base.
    pub seg_from: &'a [u32],
    pub lanes: u32,
}

/// common.wgsl `segment_of`.
pub fn segment_of(params: &Params<'_>, q: u32) -> u32 {
    let mut lo = 0u32;
    let mut hi = params.seg_from.len() as u32;
    loop {
        if lo >= hi {
            break;
        }
        let mid = (lo + hi) / 2;
        if params.seg_from[mid as usize] <= q {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// common.wgsl `reduce_lanes`, for one row's group of lanes.
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

/// common.wgsl `flag_unless_settled`: true when the row is flagged.
pub fn flag_unless_settled<F: Real>(bound: &Bound<F>, positive: bool, s: F, t: F, m: u32) -> bool {
    !bound.settles_correct(if positive { 1 } else { -1 }, s, t, F::from_f64(m as f64))
}

/// margins_dense.wgsl for one row: returns (s^, t^).
pub fn dense_row<F: Real>(params: &Params<'_>, weights: &[F], x: &[F], q: u32) -> (F, F) {
    let lanes = params.lanes as usize;
    let wbase = (segment_of(params, q) * params.w_stride) as usize;
    let mut part_s = vec![F::ZERO; lanes];
    let mut part_t = vec![F::ZERO; lanes];
    for lane in 0..lanes {
        let mut s = F::ZERO;
        let mut t = F::ZERO;
        let mut k = lane;
        while k < params.cols as usize {
            let p = weights[wbase + k] * x[k];
            s = s + p;
            t = t + p.abs();
            k += lanes;
        }
        part_s[lane] = s;
        part_t[lane] = t;
    }
    reduce_lanes(&mut part_s, &mut part_t);
    let (mut s_row, mut t_row) = (part_s[0], part_t[0]);
    if params.bias != 0 {
        let b = weights[wbase + params.cols as usize];
        s_row = s_row + b;
        t_row = t_row + b.abs();
    }
    (s_row, t_row)
}

/// margins_sparse.wgsl for one row: returns (s^, t^).
pub fn sparse_row<F: Real>(
    params: &Params<'_>,
    weights: &[F],
    idx: &[u32],
    val: &[F],
    q: u32,
) -> (F, F) {
    let lanes = params.lanes as usize;
    let wbase = (segment_of(params, q) * params.w_stride) as usize;
    let mut part_s = vec![F::ZERO; lanes];
    let mut part_t = vec![F::ZERO; lanes];
    for lane in 0..lanes {
        let mut s = F::ZERO;
        let mut t = F::ZERO;
        let mut e = lane;
        while e < idx.len() {
            let p = weights[wbase + idx[e] as usize] * val[e];
            s = s + p;
            t = t + p.abs();
            e += lanes;
        }
        part_s[lane] = s;
        part_t[lane] = t;
    }
    reduce_lanes(&mut part_s, &mut part_t);
    let (mut s_row, mut t_row) = (part_s[0], part_t[0]);
    if params.bias != 0 {
        let b = weights[wbase + params.cols as usize];
        s_row = s_row + b;
        t_row = t_row + b.abs();
    }
    (s_row, t_row)
}

/// The GPU engine's pass, computed by the twins on the CPU: the same pass
/// preparation, chunk-free, one row at a time.
pub struct TwinEngine<'d, F: Real> {
    data: &'d crate::data::Dataset<F>,
    bias: bool,
    lanes: u32,
    l1_max: f64,
    max_segments: usize,
    prepared: super::engine::PreparedPass<F>,
    scratch: Vec<F>,
    stats: crate::train::EngineStats,
}

impl<'d, F: Real> TwinEngine<'d, F> {
    /// `lanes` as the GPU would pick it unless given.
    pub fn new(
        data: &'d crate::data::Dataset<F>,
        bias: bool,
        lanes: Option<u32>,
        max_segments: usize,
    ) -> Self {
        let terms = match &data.features {
            crate::data::Features::Dense(m) => m.cols,
            crate::data::Features::Sparse(m) => m.values.len() / m.rows().max(1),
        };
        TwinEngine {
            data,
            bias,
            lanes: lanes.unwrap_or_else(|| super::shaders::lanes_for(terms)),
            l1_max: crate::certify::l1_max(&data.features, bias),
            max_segments,
            prepared: super::engine::PreparedPass {
                slots: Vec::new(),
                seg_from: Vec::new(),
                bound: Bound::new(false, 0.0),
            },
            scratch: Vec::new(),
            stats: Default::default(),
        }
    }

    /// Flags of one pass, as the kernels would set them.
    pub fn flags(&mut self, pass: &crate::train::engine::Pass<'_, F>, flags: &mut [u32]) {
        super::engine::prepare(pass, self.l1_max, &mut self.scratch, &mut self.prepared);
        let prep = &self.prepared;
        let params = Params {
            cols: self.data.cols() as u32,
            bias: self.bias as u32,
            w_stride: (self.data.cols() + self.bias as usize) as u32,
            seg_from: &prep.seg_from,
            lanes: self.lanes,
        };
        for p in pass.start..pass.end {
            let q = (p - pass.start) as u32;
            let (s, t, stored) = match self.data.features.row(p) {
                crate::data::Row::Dense(x) => {
                    let (s, t) = dense_row(&params, &prep.slots, x, q);
                    (s, t, x.len())
                }
                crate::data::Row::Sparse(idx, val) => {
                    let (s, t) = sparse_row(&params, &prep.slots, idx, val, q);
                    (s, t, idx.len())
                }
            };
            let m = stored as u32 + params.bias;
            if flag_unless_settled(&prep.bound, self.data.labels[p] > 0, s, t, m) {
                flags[q as usize / 32] |= 1 << (q % 32);
            }
        }
    }
}

impl<F: Real> crate::train::MarginEngine<F> for TwinEngine<'_, F> {
    fn name(&self) -> String {
        format!("gpu twin (lanes {})", self.lanes)
    }

    fn preferred_window(&self, flag_rate: f64) -> usize {
        ((256.0 / flag_rate.max(1e-9)) as usize).clamp(64, 1 << 16)
    }

    fn max_segments(&self) -> usize {
        self.max_segments
    }

    fn evaluate(
        &mut self,
        pass: &crate::train::engine::Pass<'_, F>,
        flags: &mut [u32],
    ) -> Result<(), crate::train::engine::EngineError> {
        self.flags(pass, flags);
        self.stats.passes += 1;
        self.stats.rows_evaluated += pass.len() as u64;
        self.stats.rows_flagged += flags.iter().map(|w| w.count_ones() as u64).sum::<u64>();
        Ok(())
    }

    fn stats(&self) -> crate::train::EngineStats {
        self.stats.clone()
    }
}
