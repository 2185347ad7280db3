//! Twin of shaders/lanes.wgsl: a row's lanes, their partial sums and the
//! tree that joins them, shared by every row-dot block.

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
pub(super) fn with_bias<F: Real>(
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
pub(super) fn lanes_then_reduce<F: Real>(
    lanes: usize,
    n: usize,
    term: impl Fn(usize) -> F,
) -> (F, F) {
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
