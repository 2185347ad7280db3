//! Margin kernels for the fast CPU engine: s^ = w·x and t^ = Σ|w_k x_k| in
//! eight independent lanes, an order the compiler can vectorise.
//!
//! The order differs from the reference on purpose: decisions are certified
//! with [`crate::certify::Bound`], which holds for any order.

use crate::data::Row;
use crate::float::Real;

const LANES: usize = 8;

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
    let mut s = [F::ZERO; LANES];
    let mut t = [F::ZERO; LANES];
    let mut wc = w.chunks_exact(LANES);
    let mut xc = x.chunks_exact(LANES);
    for (wl, xl) in (&mut wc).zip(&mut xc) {
        for l in 0..LANES {
            let p = wl[l] * xl[l];
            s[l] = s[l] + p;
            t[l] = t[l] + p.abs();
        }
    }
    let (mut s0, mut t0) = (F::ZERO, F::ZERO);
    for (&a, &b) in wc.remainder().iter().zip(xc.remainder()) {
        let p = a * b;
        s0 = s0 + p;
        t0 = t0 + p.abs();
    }
    for l in 0..LANES {
        s0 = s0 + s[l];
        t0 = t0 + t[l];
    }
    (s0, t0)
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
