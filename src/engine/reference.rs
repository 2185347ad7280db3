//! The reference semantics: the definition every backend reproduces bit for bit.
//!
//! - The bias is a constant feature 1 placed last: x~ = [x, 1], w~ = [w, b].
//! - s = w~·x~ is summed in index order from 0, one multiply then one add per
//!   stored term (never fused, never reassociated), the bias term last.
//!   Sparse rows sum their stored entries in increasing index order; since w~
//!   is always finite (see [`apply_update`]) and s is never -0, skipping exact
//!   zeros gives the same bits.
//! - Row i is a mistake iff y_i·s <= 0 (exactly zero is a mistake).
//! - On a mistake every stored coordinate gets w~_k <- w~_k + y_i·x~_ik
//!   (with class weights, w~_k <- w~_k + fl(c·x~_ik)·y_i: see
//!   [`apply_weighted_update`]).
//! - A fitted model predicts +1 iff s > 0 ([`predicted_sign`]); with several
//!   heads (one-vs-rest) the class is the head with the highest score, ties
//!   to the lowest index ([`argmax`]).
//!
//! Rust never contracts `a * b + c` into a fused multiply-add, so the code
//! below is the arithmetic it reads as.

use crate::data::Row;
use crate::float::Real;

/// s = w~·x~ in the reference order. `w` has `cols + 1` entries when `bias`.
#[inline]
pub fn dot<F: Real>(w: &[F], row: Row<'_, F>, bias: bool) -> F {
    let mut s = F::ZERO;
    match row {
        Row::Dense(x) => {
            for (wk, &xk) in w.iter().zip(x) {
                s = s + *wk * xk;
            }
        }
        Row::Sparse(idx, val) => {
            for (&k, &xk) in idx.iter().zip(val) {
                s = s + w[k as usize] * xk;
            }
        }
    }
    if bias {
        // The bias feature is exactly 1, so its product is w~_last itself.
        s = s + w[w.len() - 1];
    }
    s
}

/// p = w·x + b as scikit-learn's SGD computes it for the loss it reports
/// (`WeightVector.dot(x) + intercept`): each product in the training
/// precision, the products summed in f64 in index order, the sum rounded
/// to the training precision, then the bias added in f64. In f64 this is
/// [`dot`] bit for bit; in f32 the sum is kept in f64, so it can differ
/// from [`dot`] in its last bits. Used only for the loss the mean-loss
/// stopping rule judges, never to decide a mistake.
pub fn scikit_margin<F: Real>(w: &[F], row: Row<'_, F>, bias: bool) -> f64 {
    let mut s = 0.0f64;
    match row {
        Row::Dense(x) => {
            for (wk, &xk) in w.iter().zip(x) {
                s += (*wk * xk).to_f64();
            }
        }
        Row::Sparse(idx, val) => {
            for (&k, &xk) in idx.iter().zip(val) {
                s += (w[k as usize] * xk).to_f64();
            }
        }
    }
    let s = F::from_f64(s).to_f64();
    if bias { s + w[w.len() - 1].to_f64() } else { s }
}

/// scikit-learn's hinge loss with threshold 0 (the perceptron's): with
/// z = p·y, 0 - z when z <= 0, else 0.
#[inline]
pub fn hinge_loss(y: i8, p: f64) -> f64 {
    let z = p * y as f64;
    if z <= 0.0 { 0.0 - z } else { 0.0 }
}

/// The mistake rule: y·s <= 0. With y = ±1 the product is exact, so this is
/// the sign test written the way the definition reads.
#[inline]
pub fn is_mistake<F: Real>(y: i8, s: F) -> bool {
    is_mistake_within(y, s, F::ZERO)
}

/// The rule of `--margin τ`: y·s <= τ (an exact comparison).
#[inline]
pub fn is_mistake_within<F: Real>(y: i8, s: F, tau: F) -> bool {
    let ys = if y > 0 { s } else { -s };
    // A NaN margin is not <= τ and therefore not a mistake; it can only arise
    // from an overflowed product, which the training loop reports instead.
    ys <= tau
}

/// The class a score predicts: +1 when s > 0, otherwise -1 (s = 0 goes to
/// the negative class, as in scikit-learn, and so does a NaN score).
#[inline]
pub fn predicted_sign<F: Real>(s: F) -> i8 {
    if s > F::ZERO { 1 } else { -1 }
}

/// The index of the highest score; the first one wins a tie, and a NaN
/// score never wins over a number.
pub fn argmax<F: Real>(scores: &[F]) -> usize {
    let mut best = 0;
    for (k, s) in scores.iter().enumerate() {
        let best_is_nan = scores[best].to_f64().is_nan();
        if *s > scores[best] || (best_is_nan && !s.to_f64().is_nan()) {
            best = k;
        }
    }
    best
}

/// A weight became infinite: the data's scale overflows this precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow {
    /// 0-based coordinate of w~ (the bias is the last one).
    pub coordinate: usize,
}

/// Calls `f` with each coordinate an update of `row` touches, in the order
/// the walks record them: the stored columns in index order, then the bias
/// (the last of `dim` weights) when `bias`.
#[inline]
pub fn for_each_touched<F: Real>(
    row: Row<'_, F>,
    bias: bool,
    dim: usize,
    mut f: impl FnMut(usize),
) {
    row.for_each(|k, _| f(k));
    if bias {
        f(dim - 1);
    }
}

/// Whether the update of `row` left a subnormal value in a touched weight.
pub fn touched_subnormal<F: Real>(w: &[F], row: Row<'_, F>, bias: bool) -> bool {
    let mut sub = false;
    for_each_touched(row, bias, w.len(), |k| sub |= w[k].is_subnormal());
    sub
}

/// w~ <- w~ + y·x~, one add per stored coordinate. Refuses (leaving `w`
/// partially updated, which the caller discards) if a weight overflows,
/// because a model with an infinite weight classifies nothing.
#[inline]
pub fn apply_update<F: Real>(
    w: &mut [F],
    row: Row<'_, F>,
    y: i8,
    bias: bool,
) -> Result<(), Overflow> {
    let mut finite = true;
    match row {
        Row::Dense(x) => {
            for (wk, &xk) in w.iter_mut().zip(x) {
                *wk = if y > 0 { *wk + xk } else { *wk - xk };
                finite &= wk.is_finite();
            }
        }
        Row::Sparse(idx, val) => {
            for (&k, &xk) in idx.iter().zip(val) {
                let wk = &mut w[k as usize];
                *wk = if y > 0 { *wk + xk } else { *wk - xk };
                finite &= wk.is_finite();
            }
        }
    }
    if bias {
        let last = w.len() - 1;
        w[last] = if y > 0 {
            w[last] + F::ONE
        } else {
            w[last] - F::ONE
        };
        finite &= w[last].is_finite();
    }
    if finite {
        Ok(())
    } else {
        let coordinate = w.iter().position(|v| !v.is_finite()).unwrap_or(0);
        Err(Overflow { coordinate })
    }
}

/// The class-weighted update (`--class-weight`): w~ <- w~ + c·y·x~ with
/// the weight c of the row's class, each coordinate as
/// w_k <- fl(w_k + fl(c·x_k)) for y = +1 and fl(w_k - fl(c·x_k)) for
/// y = -1, the bias as fl(b ± c): one multiply, then one add, never fused.
/// With c = 1 every product is exact, so this is [`apply_update`] bit for
/// bit. (scikit-learn's `Perceptron(class_weight=...)` makes this very
/// update: w_k += (c·y)·x_k, intercept += c·y.) Refuses overflow as
/// [`apply_update`] does.
#[inline]
pub fn apply_weighted_update<F: Real>(
    w: &mut [F],
    row: Row<'_, F>,
    y: i8,
    c: F,
    bias: bool,
) -> Result<(), Overflow> {
    apply_stepped_update(w, row, y, c, bias.then_some(c))
}

/// w_k <- fl(w_k ± fl(c·x_k)) over the row, and the bias (last) by
/// `bias_step` when there is one: the one weighted update behind
/// [`apply_weighted_update`] (bias step c) and [`apply_decayed_update`]
/// (bias step fl(c·decay)).
#[inline]
fn apply_stepped_update<F: Real>(
    w: &mut [F],
    row: Row<'_, F>,
    y: i8,
    c: F,
    bias_step: Option<F>,
) -> Result<(), Overflow> {
    if c == F::ZERO {
        // A row of weight 0 changes nothing (scikit-learn skips its update,
        // so a -0.0 weight stays -0.0).
        return Ok(());
    }
    let mut finite = true;
    match row {
        Row::Dense(x) => {
            for (wk, &xk) in w.iter_mut().zip(x) {
                let cx = c * xk;
                *wk = if y > 0 { *wk + cx } else { *wk - cx };
                finite &= wk.is_finite();
            }
        }
        Row::Sparse(idx, val) => {
            for (&k, &xk) in idx.iter().zip(val) {
                let wk = &mut w[k as usize];
                let cx = c * xk;
                *wk = if y > 0 { *wk + cx } else { *wk - cx };
                finite &= wk.is_finite();
            }
        }
    }
    if let Some(step) = bias_step {
        let last = w.len() - 1;
        w[last] = if y > 0 {
            w[last] + step
        } else {
            w[last] - step
        };
        finite &= w[last].is_finite();
    }
    if finite {
        Ok(())
    } else {
        let coordinate = w.iter().position(|v| !v.is_finite()).unwrap_or(0);
        Err(Overflow { coordinate })
    }
}

/// scikit-learn's update on sparse input, whose intercept moves by
/// `decay` times the weights' step (its `SPARSE_INTERCEPT_DECAY`, 0.01):
/// the features as [`apply_weighted_update`] updates them with weight c,
/// then b <- fl(b ± fl(c·decay)), as scikit-learn makes it
/// (`intercept += update * intercept_decay` with update = c·y). With c = 1
/// the features' update is [`apply_update`]'s bit for bit. `w` ends with
/// the bias. Refuses overflow as [`apply_update`] does.
#[inline]
pub fn apply_decayed_update<F: Real>(
    w: &mut [F],
    row: Row<'_, F>,
    y: i8,
    c: F,
    decay: F,
) -> Result<(), Overflow> {
    // With c = 0 scikit-learn skips both adds, as the weighted update does.
    apply_stepped_update(w, row, y, c, Some(c * decay))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decayed_update_moves_the_intercept_by_the_decayed_step_only() {
        // scikit-learn's sparse path: w += y·x, intercept += y·0.01, which
        // after three updates is not 3·0.01 in f64 (0.01 is not exact).
        let mut w = [0.0f64, 0.0, 0.0];
        let x = [0.5, -2.0];
        for _ in 0..3 {
            apply_decayed_update(&mut w, Row::Dense(&x), 1, 1.0, 0.01).unwrap();
        }
        let mut b = 0.0f64;
        for _ in 0..3 {
            b += 1.0 * 0.01;
        }
        assert_eq!(w, [1.5, -6.0, b]);
        // Weighted: the features as the weighted update, the intercept by c·0.01.
        let mut a = [1.0f64, 1.0, 1.0];
        let mut v = [1.0f64, 1.0, 1.0];
        apply_decayed_update(&mut a, Row::Sparse(&[1], &[0.3]), -1, 0.7, 0.01).unwrap();
        apply_weighted_update(&mut v[..2], Row::Sparse(&[1], &[0.3]), -1, 0.7, false).unwrap();
        assert_eq!(&a[..2], &v[..2]);
        assert_eq!(a[2], 1.0 - 0.7 * 0.01);
        // A row of weight 0 changes nothing, -0 included.
        let mut z = [-0.0f64, -0.0];
        apply_decayed_update(&mut z, Row::Dense(&[1.0]), 1, 0.0, 0.01).unwrap();
        assert!(z.iter().all(|v| v.to_bits() == (-0.0f64).to_bits()));
    }

    #[test]
    fn dot_sums_in_index_order_with_bias_last() {
        // 1e8 + 1 - 1e8 in f32: sequential order loses the 1, which a
        // reassociated sum would keep. The reference must lose it.
        let w = [1.0f32, 1.0, -1.0, 0.5];
        let x = [1e8f32, 1.0, 1e8];
        assert_eq!(dot(&w, Row::Dense(&x), true), 0.5);
        assert_eq!(dot(&w[..3], Row::Dense(&x), false), 0.0);
    }

    #[test]
    fn dense_and_sparse_rows_give_the_same_bits() {
        let w = [0.1f32, -0.7, 0.3, 2.0];
        let dense = [0.0f32, 3.0, 0.0];
        let idx = [1u32];
        let val = [3.0f32];
        assert_eq!(
            dot(&w, Row::Dense(&dense), true).to_bits(),
            dot(&w, Row::Sparse(&idx, &val), true).to_bits()
        );
    }

    #[test]
    fn zero_margin_is_a_mistake_for_both_labels() {
        assert!(is_mistake(1, 0.0f32));
        assert!(is_mistake(-1, 0.0f32));
        assert!(is_mistake(1, -0.0f64));
        assert!(!is_mistake(1, 1e-45f32));
        assert!(is_mistake(-1, 1e-45f32));
    }

    #[test]
    fn update_adds_signed_row_and_bias() {
        let mut w = [0.5f64, 0.0, 0.0];
        apply_update(&mut w, Row::Dense(&[1.0, 2.0]), -1, true).unwrap();
        assert_eq!(w, [-0.5, -2.0, -1.0]);
    }

    #[test]
    fn a_weighted_update_rounds_the_product_then_the_sum() {
        let x = [0.1f32, 3.0];
        let mut w = [1.0f32, -2.0, 0.25];
        apply_weighted_update(&mut w, Row::Dense(&x), -1, 0.3f32, true).unwrap();
        assert_eq!(w, [1.0 - 0.3f32 * 0.1, -2.0 - 0.3f32 * 3.0, 0.25 - 0.3]);
        // c = 1 is the classic update, bit for bit.
        let (mut a, mut b) = ([0.7f64, 1e-300, 5.0], [0.7f64, 1e-300, 5.0]);
        let x = [1.0 / 3.0, -1e-300];
        apply_update(&mut a, Row::Dense(&x), 1, true).unwrap();
        apply_weighted_update(&mut b, Row::Dense(&x), 1, 1.0, true).unwrap();
        assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits));
        let e = apply_weighted_update(&mut [0.0f32, 0.0], Row::Dense(&[1e30]), 1, 1e10, true);
        assert_eq!(e, Err(Overflow { coordinate: 0 }));
    }

    #[test]
    fn update_refuses_overflow() {
        let mut w = [f32::MAX, 0.0];
        let e = apply_update(&mut w, Row::Dense(&[f32::MAX]), 1, true).unwrap_err();
        assert_eq!(e.coordinate, 0);
    }
}
