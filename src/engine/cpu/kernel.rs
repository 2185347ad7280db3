//! Margin kernels for the fast CPU engine: s^ = w·x and t^ = Σ|w_k x_k| in
//! eight independent lanes, an order the compiler can vectorise.
//!
//! The order differs from the reference on purpose: decisions are certified
//! with [`crate::engine::certify::Bound`], which holds for any order.

use crate::data::Row;
use crate::engine::certify::{Bound, Settled};
use crate::float::Real;

/// The host's certified decision of a row labelled `y`: its fast margin,
/// judged by `bound` over the row's stored terms (and the bias).
#[inline]
pub fn decide<F: Real>(bound: &Bound<F>, w: &[F], row: Row<'_, F>, bias: bool, y: i8) -> Settled {
    let (s, t) = margin(w, row, bias);
    bound.decide(y, s, t, F::from_f64((row.stored() + bias as usize) as f64))
}

/// Returns (s^, t^) for one row, the bias term included when `bias`.
#[inline]
pub fn margin<F: Real>(w: &[F], row: Row<'_, F>, bias: bool) -> (F, F) {
    let (mut s, mut t) = match row {
        Row::Dense(x) => dense(&w[..x.len()], x),
        Row::Sparse(idx, val) => sparse(w, idx, val),
    };
    if bias {
        let b = w[w.len() - 1];
        s = s + b;
        t = t + b.abs();
    }
    (s, t)
}

#[inline]
fn dense<F: Real>(w: &[F], x: &[F]) -> (F, F) {
    super::simd::dot_and_abs(w, x)
}

#[inline]
fn sparse<F: Real>(w: &[F], idx: &[u32], val: &[F]) -> (F, F) {
    let (mut s, mut t) = (F::ZERO, F::ZERO);
    for (&k, &v) in idx.iter().zip(val) {
        let p = w[k as usize] * v;
        s = s + p;
        t = t + p.abs();
    }
    (s, t)
}
