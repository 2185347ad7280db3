//! Twin of shaders/row_dot_sparse.wgsl: one CSR row's dot product over its
//! stored entries, strided over the row's lanes.

use super::lanes::{RowDot, lanes_then_reduce, with_bias};
use crate::float::Real;

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
