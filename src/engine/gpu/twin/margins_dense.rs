//! Twin of shaders/margins_dense.wgsl: the certified slacks of a pass over
//! dense rows, one virtual row per (row, head) pair.

use super::common::MarginBindings;
use super::common::write_slack;
use super::dense_row_dot;
use crate::data::DenseMatrix;
use crate::float::Real;

/// margins_dense.wgsl `margins_dense`: lane 0 of each live virtual row
/// writes its slack (the twin runs the lanes of a row in
/// [`dense_row_dot`], so it needs no grid stride or barrier).
pub fn margins_dense<F: Real>(k: &MarginBindings<'_, F>, x: &DenseMatrix<F>, slack: &mut [f32]) {
    let virtual_rows = k.pass.len() * k.pass.heads;
    for (vr, slot) in slack.iter_mut().enumerate().take(virtual_rows) {
        let head = vr % k.pass.heads;
        let row = k.pass.start + vr / k.pass.heads;
        let wbase = head * k.stride;
        let w = &k.pass.weights[wbase..wbase + k.stride];
        let d = dense_row_dot(
            k.lanes,
            w,
            &x.values[row * x.cols..(row + 1) * x.cols],
            k.bias,
        );
        *slot = write_slack(
            k.bound,
            k.positive(row, head),
            d.s,
            d.t,
            d.terms,
            k.norms[row],
        );
    }
}
