//! Twin of shaders/row_dot_dense4.wgsl: one dense row's dot product with
//! the row read as vectors of four.

use super::lanes::{RowDot, reduce_lanes, with_bias};
use crate::float::Real;

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
