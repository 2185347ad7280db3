//! Certified decisions: when a margin computed in *any* order settles the
//! reference's decision.
//!
//! # The bound
//! Notation: the row has `m` terms (stored features plus the bias), exact dot
//! s* = Σ w_k x_k, exact absolute sum T* = Σ |w_k x_k|, unit roundoff `u`
//! (2^-24 for f32, 2^-53 for f64), smallest normal `λ` (2^-126, 2^-1022),
//! γ_m = m·u / (1 - m·u). We require m·u <= 1/16, hence γ_m <= (16/15)·m·u;
//! rows with more terms are never certified.
//!
//! **Reference** (host, IEEE-754 round-to-nearest, gradual underflow, the
//! sequential order of [`crate::engine::reference::dot`]): each product is
//! w_k x_k (1+δ) + η with |δ| <= u and |η| <= λu (the underflow error), each
//! add is (a+b)(1+ε) with no absolute error. Hence (Higham, *Accuracy and
//! Stability of Numerical Algorithms*, §3.1, extended by the η terms):
//!
//!   |s_ref - s*| <= γ_m T* + (16/15)·m·λu.
//!
//! **Device.** WGSL promises less than IEEE: "correctly rounded" there means
//! either neighbour of the exact result (faithful rounding), subnormal inputs
//! and results may be flushed to zero, and a driver may fuse a·b + c or
//! re-associate a sum. So the model is: any summation order and
//! association, any mix of fused and separate operations, and each of the at
//! most 2m operations returns z(1+δ) + η with |δ| <= 2u and |η| <= λ (a
//! faithfully rounded or flushed result is off by less than one ulp of its
//! binade, or less than λ below it). With u' = 2u, m·u' <= 1/8, so
//! γ'_m = m·u'/(1 - m·u') <= (16/7)·m·u <= 1/7, and the η of the at most 2m
//! operations, each amplified by later roundings by at most 1 + γ'_m <= 8/7,
//! total at most (16/7)·m·λ.
//!
//! A *flushed input* drops its whole term. Rows with a subnormal feature are
//! never settled by a device ([`needs_host`]: the loop decides them itself,
//! whatever the device returned), and for subnormal weights the dropped terms
//! total at most F = λ·Σ_k |x_k| <= λ·L1max, which the host passes as `flush`
//! whenever w has a subnormal entry. With T' the absolute sum over the kept
//! terms (T' <= T* <= T' + F):
//!
//!   |ŝ - s*| <= γ'_m T' + (16/7)·m·λ + F,
//!   |t̂ - T'| <= γ'_m T' + (16/7)·m·λ       (t̂ = device's Σ |w_k x_k|),
//!
//! so T' <= (7/6)·(t̂ + (16/7)·m·λ), and
//!
//!   |ŝ - s_ref| <= (γ'_m + γ_m) T' + (1 + γ_m) F + (16/7 + 16u/15)·m·λ
//!              <= (352/105)(7/6)·m·u·t̂ + (352/105)(7/6)(16/7)(1/16)·m·λ
//!                 + (16/15)·F + 2.29·m·λ
//!              <= 3.92·m·u·t̂ + 2.85·m·λ + (16/15)·F.
//!
//! (For the m of ordinary rows, m·u is tiny and the factor is 3: 2 from the
//! device, 1 from the reference. 3.92 is the worst case at m·u = 1/16.)
//!
//! **Evaluating the bound on the device** as E = (m·REL)·t̂ + (m·ABS + FLUSH)
//! with REL = 5u, ABS = 5λ, FLUSH = 1.21·λ·L1max (rounded up): five
//! faithfully rounded operations lose at most a factor (1 - 2u)^3 on each
//! term's path, and only the product (m·REL)·t̂ can be small enough to be
//! flushed (m·ABS >= 5λ is normal), losing less than λ. So
//! E >= (1-2u)^3·5·m·u·t̂ + (1-2u)^3·(5·m·λ + FLUSH) - λ, which exceeds the
//! bound above term by term: 5(1-2u)^3 > 3.92; 5(1-2u)^3·m - 1 > 2.85·m for
//! every m >= 1; 1.21(1-2u)^3 > 16/15. The slack is over 27% at the worst
//! m and 66% for ordinary rows.
//!
//! **Decision**: if y·ŝ > E then y·s_ref >= y·ŝ - E > 0: the reference also
//! finds the row correct (and if y·ŝ < -E, a mistake). Otherwise the row is
//! *uncertain* and the host computes the reference dot itself.
//!
//! **No infinities, by construction.** A driver may compile float
//! comparisons as if NaN and infinity did not exist, so no device-side test
//! of finiteness is trusted. Instead the loop hands an engine only weights
//! with ||w||·max_i ||x~_i|| <= [`safe_product`] (about MAX·2^-40), checked
//! on the host in f64 ([`engine_safe`]); otherwise it decides rows itself.
//! By Cauchy-Schwarz every partial sum of products, of absolute products and
//! every quantity derived from them is then at most 1.2·T' <= 1.2·||w||·||x||,
//! far below overflow, so nothing on the device can become infinite or NaN
//! (the inputs are finite: data is validated, and the host refuses weights
//! that overflow). The kernels keep their finiteness and `t <= MAX/4` tests
//! only as a second line. Rows with ||x~|| >= sqrt(MAX) are never settled by a
//! device either ([`needs_host`]), which keeps every division within the
//! range WGSL specifies its accuracy for.
//!
//! # Drift: certifying under weights that have moved
//! The host keeps updating w after a pass was computed. For weights
//! w' = w + Δ (Δ exact, whatever rounding produced w'), with
//! s*(w') = s*(w) + Δ·x and T*(w') <= T*(w) + ||Δ||·||x|| (Cauchy-Schwarz),
//!
//!   y·s_ref(w') >= y·s*(w') - γ_m T*(w') - (16/15)mλu
//!              >= y·ŝ - E - (1 + γ_m)·||Δ||·||x||,
//!
//! because E bounds |ŝ - s*(w)| + γ_m T*(w) + (16/15)mλu (the derivation
//! above bounds exactly that sum). So a kernel returns the *normalised slack*
//! r = (y·ŝ - E)/N when y·ŝ > E, r = (y·ŝ + E)/N when y·ŝ < -E, else 0, with
//! N >= ||x~|| (see [`row_norms`]), and the row is settled under any w' with
//! ||w' - w|| <= δ when |r| > [`DRIFT_FACTOR`]·δ + [`DRIFT_FLOOR`]:
//! correct if r > 0, a mistake if r < 0. Computing r takes a subtraction and
//! a division (WGSL: within 2.5 ulp for divisors in [2^-126, 2^126], which
//! N in [MIN_NORM, sqrt(MAX)] is) and, in f64 kernels, a conversion to f32
//! towards zero: together a relative error below 10u plus an underflow below
//! λ/MIN_NORM. DRIFT_FACTOR = 1.1 covers 1 + γ_m <= 16/15 and the relative
//! error; DRIFT_FLOOR = 1e-20 covers the underflow, given N >= [`MIN_NORM`]
//! (rows with a smaller norm get r = 0).
//!
//! # Whole numbers: no rounding at all
//! Where every weight and every value of a row is a whole number, each
//! product is a whole number, and so is every partial sum, in any order.
//! A whole number of magnitude below 2^p (p = 24 for f32, 53 for f64) is
//! exactly representable, so while the exact T* = Σ |w_k x_k| (the bias
//! term included) is below 2^p no product and no partial sum of any order
//! rounds: a margin computed in any order *is* the reference's, and
//! scikit-learn's too ([`crate::engine::reference::scikit_margin`], which
//! adds the same whole numbers in f64). Both start from +0, and a sum
//! from +0 never becomes -0 under round-to-nearest, so even a zero margin
//! has the reference's bits. The test uses the computed t̂, not T*:
//! rounding is monotone, so a computed sum of non-negative terms below 2^p
//! means no exact partial sum reached 2^p ([`whole_sum_is_exact`]). The
//! classic update w~ += y·x~ of a row of whole numbers keeps whole weights
//! whole (a float of magnitude 2^p or more is a whole number anyway).

use crate::data::{Features, Row};
use crate::float::Real;

pub use crate::data::facts::{RowFacts, max_terms};

/// The constants a kernel (or its CPU twin) needs for one pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound<F> {
    /// Multiplies m·t̂: 5u.
    pub rel: F,
    /// Multiplies m: 5λ.
    pub abs: F,
    /// Added once: 1.1·λ·L1max when w has a subnormal entry, else 0.
    pub flush: F,
    /// The margin threshold τ of `--margin` (0 for the classic rule): a row
    /// is a mistake iff y·s <= τ.
    pub tau: F,
}

impl<F: Real> Bound<F> {
    /// The bound for weights `w` on data whose rows have L1 norm at most `l1_max`.
    pub fn for_weights(w: &[F], l1_max: f64) -> Self {
        Self::new(w.iter().any(|v| v.is_subnormal()), l1_max)
    }

    /// The bound when the weights do (or do not) hold a subnormal entry.
    pub fn new(w_has_subnormal: bool, l1_max: f64) -> Self {
        let flush = if w_has_subnormal {
            // 10% over the 1.1 the derivation needs, to cover the f64
            // arithmetic and the conversion; L1max is floored at 1 so the
            // value stays a normal number.
            round_up::<F>(1.21 * F::MIN_NORMAL * l1_max.max(1.0))
        } else {
            F::ZERO
        };
        Bound {
            rel: round_up::<F>(5.0 * F::UNIT_ROUNDOFF),
            abs: round_up::<F>(5.0 * F::MIN_NORMAL),
            flush,
            tau: F::ZERO,
        }
    }

    /// The bound for the rule y·s <= τ. The test then compares
    /// fl(y·ŝ - τ) with E, and on a device that subtraction rounds
    /// faithfully: fl(a - τ) is within (a - τ)·2u + λ of a - τ, so E grows by
    /// a factor 1.001 (far above 1 + 8u) and by 2.2λ, which keeps every
    /// settled decision the reference's. With τ = 0 the subtraction is exact
    /// and nothing changes.
    pub fn with_margin(mut self, tau: F) -> Self {
        if tau != F::ZERO {
            self.rel = round_up::<F>(self.rel.to_f64() * 1.001);
            self.flush = round_up::<F>(self.flush.to_f64() + 2.2 * F::MIN_NORMAL);
            self.tau = tau;
        }
        self
    }

    /// E for a row of `m` terms whose absolute products sum to `t`, evaluated
    /// exactly as the kernels do.
    #[inline]
    pub fn of(&self, m: F, t: F) -> F {
        (m * self.rel) * t + (m * self.abs + self.flush)
    }

    /// The certification test: true only if the reference surely finds the
    /// row correct (y·s > 0).
    #[inline]
    pub fn settles_correct(&self, y: i8, s: F, t: F, m: F) -> bool {
        let e = self.of(m, t);
        let ys = (if y > 0 { s } else { -s }) - self.tau;
        s.is_finite() && e.is_finite() && ys > e
    }
}

/// Whether a margin of whole numbers computed in any order, whose computed
/// absolute sum is `t`, is exact (see the module documentation): t̂ < 2^p.
#[inline]
pub fn whole_sum_is_exact<F: Real>(t: F) -> bool {
    t.to_f64() < 1.0 / F::UNIT_ROUNDOFF
}

/// Whether every weight is a whole number (finite, no fraction).
pub fn all_whole<F: Real>(weights: &[F]) -> bool {
    weights.iter().all(|w| {
        let w = w.to_f64();
        w.is_finite() && w.fract() == 0.0
    })
}

/// The largest ||w||·max_i ||x~_i|| for which an engine may be used: far
/// enough below overflow that no partial sum, absolute sum, bound or slack
/// a device computes can become infinite (see the module documentation).
pub fn safe_product<F: Real>() -> f64 {
    F::MAX_VALUE * 2f64.powi(-40)
}

/// Whether weights `w` may be handed to an engine for data whose rows have
/// norm at most `max_norm`: ||w||·max_norm <= [`safe_product`], computed in
/// f64 with room for its own rounding.
pub fn engine_safe<F: Real>(w: &[F], max_norm: f64) -> bool {
    let sq: f64 = w.iter().map(|v| v.to_f64() * v.to_f64()).sum();
    let norm = (sq * (1.0 + (w.len() as f64 + 4.0) * 2f64.powi(-50))).sqrt() * (1.0 + 1e-12);
    norm.is_finite() && norm * max_norm <= safe_product::<F>()
}

/// The updates a run from `weights` may make before ||w||·max||x|| could
/// pass [`safe_product`]. Each update adds at most max||x|| to
/// ||w|| exactly; twice that per update leaves room for the rounding of
/// the adds and of this estimate of ||w||.
pub fn safe_updates<F: Real>(weights: &[F], max_norm: f64) -> u64 {
    safe_updates_for_norm::<F>(weights_norm(weights), max_norm)
}

/// An upper bound of ||w|| (summed in f64, rounded up slightly).
pub fn weights_norm<F: Real>(weights: &[F]) -> f64 {
    weights
        .iter()
        .map(|v| v.to_f64() * v.to_f64())
        .sum::<f64>()
        .sqrt()
        * (1.0 + 1e-9)
}

/// [`safe_updates`] from an upper bound of ||w||.
pub fn safe_updates_for_norm<F: Real>(norm: f64, max_norm: f64) -> u64 {
    if max_norm == 0.0 && norm.is_finite() {
        // All-zero rows cannot grow the weights.
        return u32::MAX as u64;
    }
    let step = 2.0 * max_norm;
    let room = safe_product::<F>() / max_norm - norm;
    if room.is_nan() || room <= 0.0 {
        0
    } else {
        (room / step).min(u32::MAX as f64) as u64
    }
}

/// An upper bound of ||w|| after `updates` updates from weights whose norm
/// was at most `norm`: each adds at most `max_norm` exactly, and its
/// rounding at most a factor 1 + u.
pub fn norm_after_updates<F: Real>(norm: f64, updates: u64, max_norm: f64) -> f64 {
    let k = updates as f64;
    (norm + k * max_norm) * (k * F::UNIT_ROUNDOFF).exp() * (1.0 + 1e-9)
}

/// Multiplies the drift δ = ||w' - w|| in the settle test.
pub const DRIFT_FACTOR: f64 = 1.1;
/// Added to the settle threshold, for underflow in computing r.
pub const DRIFT_FLOOR: f64 = 1e-20;
/// Rows whose norm bound is below this are never settled by slack.
pub const MIN_NORM: f64 = 1e-10;

/// What the slack test says about a row under weights that drifted by δ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    Correct,
    Mistake,
    Unknown,
}

/// The threshold |r| must exceed after a drift of `delta`.
#[inline]
pub fn threshold(delta: f64) -> f64 {
    DRIFT_FACTOR * delta + DRIFT_FLOOR
}

/// Applies the slack test with a precomputed [`threshold`].
#[inline]
pub fn settle(r: f32, threshold: f64) -> Settled {
    let r = r as f64;
    if r > threshold {
        Settled::Correct
    } else if r < -threshold {
        Settled::Mistake
    } else {
        Settled::Unknown
    }
}

impl<F: Real> Bound<F> {
    /// The normalised slack of a row, computed exactly as the kernels do:
    /// (y·s - E)/N, (y·s + E)/N or 0 in `F`, then converted to f32 without
    /// growing in magnitude; see the module documentation.
    #[inline]
    pub fn slack(&self, y: i8, s: F, t: F, m: F, norm: F) -> f32 {
        let e = self.of(m, t);
        let ys = (if y > 0 { s } else { -s }) - self.tau;
        let usable = s.is_finite()
            && e.is_finite()
            && t.to_f64() <= F::MAX_VALUE / 4.0
            && norm.to_f64() >= MIN_NORM;
        if !usable {
            return 0.0;
        }
        let r = if ys > e {
            (ys - e) / norm
        } else if ys < -e {
            (ys + e) / norm
        } else {
            return 0.0;
        };
        to_f32_toward_zero(r.to_f64())
    }
}

impl<F: Real> Bound<F> {
    /// The decision a margin computed in any order certifies under the very
    /// weights it was computed with (no drift): `Correct` if y·s > E,
    /// `Mistake` if y·s < -E, else `Unknown`.
    #[inline]
    pub fn decide(&self, y: i8, s: F, t: F, m: F) -> Settled {
        let e = self.of(m, t);
        let ys = (if y > 0 { s } else { -s }) - self.tau;
        if !(s.is_finite() && e.is_finite() && t.to_f64() <= F::MAX_VALUE / 4.0) {
            Settled::Unknown
        } else if ys > e {
            Settled::Correct
        } else if ys < -e {
            Settled::Mistake
        } else {
            Settled::Unknown
        }
    }
}

/// Converts to f32 without increasing the magnitude (±f32::MAX at most).
#[inline]
pub fn to_f32_toward_zero(v: f64) -> f32 {
    let v = v.clamp(-(f32::MAX as f64), f32::MAX as f64);
    let r = v as f32;
    if (r as f64).abs() > v.abs() {
        // One ulp towards zero; r is finite or ±inf from a huge v.
        f32::from_bits(r.to_bits() - 1)
    } else {
        r
    }
}

/// Upper bounds of ||x~_i|| (the bias feature included), one per row, in f32.
pub fn row_norms<F: Real>(features: &Features<F>, bias: bool) -> Vec<f32> {
    RowFacts::compute(features, bias).norms
}

/// Upper bound of ||a - b||_2, computed in f64.
pub fn distance_up<F: Real>(a: &[F], b: &[F]) -> f64 {
    let sq: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| {
            let d = x.to_f64() - y.to_f64();
            d * d
        })
        .sum();
    (sq * (1.0 + (a.len() as f64 + 4.0) * 2f64.powi(-50))).sqrt() * (1.0 + 2f64.powi(-50))
}

/// Converts to `F`, rounding towards +infinity.
fn round_up<F: Real>(v: f64) -> F {
    let r = F::from_f64(v);
    if r.to_f64() >= v {
        r
    } else {
        // One ulp up: scale by (1 + 2u) which moves at least one ulp for
        // normal numbers; the values here are normal.
        F::from_f64(r.to_f64() * (1.0 + 2.0 * F::UNIT_ROUNDOFF))
    }
}

/// Rows a device must never settle: a subnormal feature (a device may flush
/// it, dropping its whole term), more terms than [`max_terms`], or a norm of
/// sqrt(MAX) or more (see the module documentation). The same rule as
/// [`RowFacts::host_only`].
pub fn needs_host<F: Real>(row: Row<'_, F>, bias: bool) -> bool {
    if row.stored() + bias as usize > max_terms::<F>() {
        return true;
    }
    let (mut sub, mut sq) = (false, bias as u8 as f64);
    row.for_each(|_, v| {
        sub |= v.is_subnormal();
        sq += v.to_f64() * v.to_f64();
    });
    sub || sq.sqrt() * (1.0 + 1e-9) >= F::MAX_VALUE.sqrt()
}

/// The sorted positions of all rows that [`needs_host`].
pub fn host_only_rows<F: Real>(features: &Features<F>, bias: bool) -> Vec<usize> {
    RowFacts::compute(features, bias).host_only
}

/// Upper bound of max_i Σ_k |x_ik| (the bias term included).
pub fn l1_max<F: Real>(features: &Features<F>, bias: bool) -> f64 {
    RowFacts::compute(features, bias).l1_max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_updates_keep_the_product_under_the_limit() {
        let limit = safe_product::<f32>();
        let max_norm = 1e10;
        let n = safe_updates(&[0.0f32; 4], max_norm);
        assert!(n > 0 && n < u32::MAX as u64);
        // Even n updates of twice the row norm stay under the limit.
        assert!((n as f64) * 2.0 * max_norm * max_norm <= limit);
        // Weights already at the limit leave no room; zero rows leave all.
        let big = [(limit / max_norm) as f32, 0.0];
        assert_eq!(safe_updates(&big, max_norm), 0);
        assert_eq!(safe_updates(&[1.0f32, 2.0], 0.0), u32::MAX as u64);
        assert_eq!(safe_updates(&[1.0f32], f64::INFINITY), 0);
        // Tiny rows: as many as the loop can count, not none.
        assert_eq!(safe_updates(&[0.0f64; 2], 1e-300), u32::MAX as u64);
    }
    use crate::engine::reference;

    /// The worst a device can do within the model: sum in reverse pairwise
    /// order with fused operations and flushing. Used to check the bound
    /// holds with room to spare on adversarial rows.
    fn device_like(w: &[f32], x: &[f32]) -> (f32, f32) {
        let flush = |v: f32| if v.is_subnormal() { 0.0 } else { v };
        let terms: Vec<(f32, f32)> = w
            .iter()
            .zip(x)
            .map(|(&a, &b)| (flush(a), flush(b)))
            .collect();
        let mut s = 0.0f32;
        let mut t = 0.0f32;
        for &(a, b) in terms.iter().rev() {
            s = flush(a.mul_add(b, s));
            t = flush(a.abs().mul_add(b.abs(), t));
        }
        (s, t)
    }

    #[test]
    fn bound_covers_cancellation_of_huge_and_tiny_terms() {
        let mut rng = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        for trial in 0..2000 {
            let d = 1 + trial % 67;
            let mut w: Vec<f32> = (0..d).map(|_| next() * 1e6).collect();
            let mut x: Vec<f32> = (0..d).map(|_| next()).collect();
            // Force near-cancellation: make the last term undo the sum.
            let partial: f64 = w[..d - 1]
                .iter()
                .zip(&x)
                .map(|(a, b)| *a as f64 * *b as f64)
                .sum();
            x[d - 1] = 1.0;
            w[d - 1] = (-partial) as f32;
            let s_ref = reference::dot(&w, Row::Dense(&x), false);
            let (s_dev, t_dev) = device_like(&w, &x);
            let b = Bound::<f32>::for_weights(&w, 1e9);
            let e = b.of(d as f32, t_dev);
            assert!(
                ((s_dev as f64) - (s_ref as f64)).abs() <= e as f64,
                "trial {trial}: |{s_dev} - {s_ref}| > {e}"
            );
            for y in [-1i8, 1] {
                if b.settles_correct(y, s_dev, t_dev, d as f32) {
                    assert!(
                        !reference::is_mistake(y, s_ref),
                        "trial {trial} settled wrongly"
                    );
                }
            }
        }
    }

    #[test]
    fn non_finite_never_settles() {
        let b = Bound::<f32>::for_weights(&[1.0], 1.0);
        assert!(!b.settles_correct(1, f32::INFINITY, 1.0, 2.0));
        assert!(!b.settles_correct(1, f32::NAN, 1.0, 2.0));
        assert!(!b.settles_correct(1, 1.0, f32::INFINITY, 2.0));
        assert!(b.settles_correct(1, 1.0, 1.0, 2.0));
        assert!(!b.settles_correct(-1, 1.0, 1.0, 2.0));
    }

    #[test]
    fn subnormal_weights_add_the_flush_term() {
        let b = Bound::<f32>::for_weights(&[1e-40, 1.0], 100.0);
        assert!(b.flush as f64 >= 1.1 * f32::MIN_POSITIVE as f64 * 100.0);
        assert_eq!(Bound::<f32>::for_weights(&[1.0], 100.0).flush, 0.0);
    }

    #[test]
    fn engines_get_only_weights_that_cannot_overflow() {
        // ||w|| * max ||x|| against MAX * 2^-40 (about 3.1e26 in f32).
        assert!(engine_safe(&[3.0f32, 4.0], 1e25));
        assert!(!engine_safe(&[3.0f32, 4.0], 1e26));
        assert!(!engine_safe(&[f32::MAX, 1.0], 1.0));
        assert!(engine_safe(&[1e100f64], 1e100));
        assert!(!engine_safe(&[1e200f64], 1e200));
    }

    #[test]
    fn rows_with_huge_norms_are_never_settled_by_a_device() {
        // sqrt(f32::MAX) is about 1.8e19.
        assert!(!needs_host(Row::Dense(&[1e19f32, 0.0]), true));
        assert!(needs_host(Row::Dense(&[2e19f32, 0.0]), true));
        let facts = RowFacts::compute(
            &Features::Dense(crate::data::DenseMatrix {
                rows: 3,
                cols: 1,
                values: vec![1.0f32, 3e19, 1e-40].into(),
            }),
            false,
        );
        assert_eq!(facts.host_only, vec![1, 2]);
        assert!(facts.max_norm >= 3e19);
    }

    #[test]
    fn limits_follow_the_precision() {
        assert_eq!(max_terms::<f32>(), 1 << 20);
        assert!(needs_host(Row::Dense(&[1.0f32, 1e-40]), true));
        assert!(!needs_host(Row::Dense(&[1.0f32, 0.0]), true));
    }

    /// The norm bound kept across updates is never below the norm the
    /// updates really reach, in f32 where rounding matters most, with rows
    /// as long as the bound allows and weights far from zero.
    #[test]
    fn the_norm_bound_after_updates_holds() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for case in 0..50 {
            let dim = 1 + case * 7;
            let mut w: Vec<f32> = (0..dim)
                .map(|_| (next() * 2.0 - 1.0) as f32 * 1e3)
                .collect();
            let rows: Vec<Vec<f32>> = (0..20)
                .map(|_| {
                    (0..dim)
                        .map(|_| (next() * 2.0 - 1.0) as f32 * 7.0)
                        .collect()
                })
                .collect();
            let max_norm = rows.iter().map(|r| weights_norm(r)).fold(0.0, f64::max);
            let start = weights_norm(&w);
            for k in 1..=200u64 {
                let row = &rows[(next() * 20.0) as usize % 20];
                let y = if next() < 0.5 { 1 } else { -1 };
                crate::engine::reference::apply_update(&mut w, Row::Dense(row), y, false).unwrap();
                let bound = norm_after_updates::<f32>(start, k, max_norm);
                assert!(weights_norm(&w) <= bound, "case {case}, update {k}");
            }
        }
    }
}
