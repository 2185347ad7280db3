//! Twin of shaders/margins_sparse.wgsl: the certified slacks of a pass
//! over CSR rows, one virtual row per (row, head) pair.

use super::common::MarginBindings;
use super::common::write_slack;
use super::row_dot_sparse::row_dot_sparse;
use crate::data::CsrMatrix;
use crate::float::Real;

/// margins_sparse.wgsl `margins_sparse`: as [`super::margins_dense`], over
/// each row's stored entries.
pub fn margins_sparse<F: Real>(k: &MarginBindings<'_, F>, x: &CsrMatrix<F>, slack: &mut [f32]) {
    let virtual_rows = k.pass.len() * k.pass.heads;
    for (vr, slot) in slack.iter_mut().enumerate().take(virtual_rows) {
        let head = vr % k.pass.heads;
        let row = k.pass.start + vr / k.pass.heads;
        let wbase = head * k.stride;
        let (begin, end) = (x.row_ptr[row], x.row_ptr[row + 1]);
        let (idx, val) = (&x.indices[begin..end], &x.values[begin..end]);
        let w = &k.pass.weights[wbase..wbase + k.stride];
        let d = row_dot_sparse(k.lanes, w, idx, val, x.cols, k.bias);
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
