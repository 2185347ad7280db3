//! Twin of shaders/row_dot_dense.wgsl: one dense row's dot product, its
//! entries strided over the row's lanes.

use super::lanes::{RowDot, lanes_then_reduce, with_bias};
use crate::float::Real;

/// row_dot_dense.wgsl `row_dot_dense` for one live row (lane 0's result):
/// `weights` start at the row's head's first weight (the kernel's `wbase`).
pub fn row_dot_dense<F: Real>(lanes: u32, weights: &[F], x: &[F], bias: bool) -> RowDot<F> {
    let cols = x.len();
    let (s, t) = lanes_then_reduce(lanes as usize, cols, |k| weights[k] * x[k]);
    with_bias(s, t, cols, weights, cols, bias)
}
