//! Certified decisions: when a margin computed in *any* order settles the
//! reference's decision.
//!
//! # The bound
//! Notation: the row has `m` terms (stored features plus the bias), exact dot
//! s* = Σ w_k x_k, exact absolute sum T* = Σ |w_k x_k|, unit roundoff `u`
//! (2^-24 for f32, 2^-53 for f64), smallest normal `λ` (2^-126, 2^-1022),
//! γ_m = m·u / (1 - m·u). We require m·u <= 1/16, hence γ_m <= (16/15)·m·u
//! and 1/(1 - γ_m) <= 15/14; rows with more terms are never certified.
//!
//! **Reference** (host, IEEE-754 round-to-nearest, gradual underflow, the
//! sequential order of [`crate::reference::dot`]): each product is
//! w_k x_k (1+δ) + η with |δ| <= u and |η| <= λu (the underflow error), each
//! add is (a+b)(1+ε) with no absolute error. Hence (Higham, *Accuracy and
//! Stability of Numerical Algorithms*, §3.1, extended by the η terms):
//!
//!   |s_ref - s*| <= γ_m T* + (16/15)·m·λu.
//!
//! **Device** (any summation order and association, any mix of fused
//! multiply-add and separate operations, subnormal inputs and results flushed
//! to zero or not): each of the at most 2m operations returns z(1+δ) + η with
//! |δ| <= u and |η| <= λ (a flushed result loses less than λ). A *flushed
//! input* drops its whole term; the host never sends rows with subnormal
//! features to the device (they are resolved on the host, see
//! [`needs_host`]), and for subnormal weights the dropped terms total at most
//! F = λ·Σ_k |x_k| <= λ·L1max, which the host passes as `flush` whenever w
//! has a subnormal entry. With T' the absolute sum over the kept terms
//! (T' <= T* <= T' + F):
//!
//!   |ŝ - s*| <= γ_m T' + (32/15)·m·λ + F,
//!   |t̂ - T'| <= γ_m T' + (32/15)·m·λ       (t̂ = device's Σ |w_k x_k|),
//!
//! so T' <= (t̂ + (32/15)mλ)/(1 - γ_m) and
//!
//!   |ŝ - s_ref| <= 2γ_m T' + (1+γ_m)F + (32/15 + 16u/15)·m·λ
//!              <= (32/14)·m·u·t̂ + 2.51·m·λ + (16/15)·F
//!
//! using γ_m/(1-γ_m) <= (16/14)·m·u and m·u <= 1/16.
//!
//! **Evaluating the bound on the device** as E = (m·REL)·t̂ + (m·ABS + FLUSH)
//! with REL = 3u, ABS = 4λ, FLUSH = 1.1·λ·L1max: four roundings lose at most
//! a factor (1-u)^3 and one flushed product (< λ), so
//! E >= 3(1-u)^3·m·u·t̂ + 4(1-u)^3·m·λ - λ + 1.1(1-u)^3·F, which exceeds the
//! bound above term by term (3(1-u)^3 > 32/14; 4(1-u)^3·m - 1 > 2.51·m for
//! m >= 1; 1.1(1-u)^3 > 16/15). The slack is about 30%.
//!
//! **Decision**: if ŝ and E are finite and y·ŝ > E then y·s_ref >= y·ŝ - E > 0:
//! the reference also finds the row correct (and if y·ŝ < -E, a mistake).
//! Otherwise the row is *uncertain* and the host computes the reference dot
//! itself. A NaN or infinity anywhere fails the test, so non-finite
//! arithmetic can only leave a row uncertain, never settle it. Rows with
//! t̂ > MAX/4 are left uncertain too, so a settled row's reference sum can
//! never overflow (its partial sums are bounded by T* <= 1.07·t̂ + tiny).
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
//! correct if r > 0, a mistake if r < 0. DRIFT_FACTOR = 1.1 covers
//! 1 + γ_m <= 16/15 and the few roundings in computing r (each at most a
//! factor 1 + u) and its conversion to f32; DRIFT_FLOOR = 1e-20 covers the
//! absolute underflow terms, given N >= [`MIN_NORM`] (rows with a smaller
//! norm get r = 0).

use crate::data::{Features, Row};
use crate::float::Real;

/// Largest number of terms per row for which the bound above holds.
pub fn max_terms<F: Real>() -> usize {
    (1.0 / (16.0 * F::UNIT_ROUNDOFF)) as usize
}

/// The constants a kernel (or its CPU twin) needs for one pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound<F> {
    /// Multiplies m·t̂: 3u.
    pub rel: F,
    /// Multiplies m: 4λ.
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
            rel: round_up::<F>(3.0 * F::UNIT_ROUNDOFF),
            abs: round_up::<F>(4.0 * F::MIN_NORMAL),
            flush,
            tau: F::ZERO,
        }
    }

    /// The bound for the rule y·s <= τ. The test then compares
    /// fl(y·ŝ - τ) with E, and that subtraction rounds: fl(a - τ) is at most
    /// (a - τ)(1 + u) + λ, so E grows by a factor 1.001 (far above 1 + 4u)
    /// and by 2.2λ, which keeps every settled decision the reference's. With
    /// τ = 0 the subtraction is exact and nothing changes.
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

/// What the engines and the loop need to know about every row, computed in
/// one parallel pass (see [`crate::data::Dataset::facts`], which caches it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowFacts {
    /// Upper bounds of ||x~_i|| (the bias feature included), in f32.
    pub norms: Vec<f32>,
    /// Upper bound of max_i Σ_k |x~_ik|.
    pub l1_max: f64,
    /// Sorted rows no engine may settle ([`needs_host`]).
    pub host_only: Vec<usize>,
}

impl RowFacts {
    pub fn compute<F: Real>(features: &Features<F>, bias: bool) -> Self {
        use rayon::prelude::*;
        let rows = features.rows();
        let per_row: Vec<(f32, f64, bool)> = (0..rows)
            .into_par_iter()
            .with_min_len(1024)
            .map(|i| {
                let row = features.row(i);
                let (mut sq, mut l1, mut sub) = (bias as u8 as f64, bias as u8 as f64, false);
                row.for_each(|_, v| {
                    let v = v.to_f64();
                    sq += v * v;
                    l1 += v.abs();
                    sub |= v != 0.0 && v.abs() < F::MIN_NORMAL;
                });
                // f64 accumulation over n terms loses at most n·2^-53 relative.
                let up = (sq * (1.0 + (row.stored() as f64 + 4.0) * 2f64.powi(-50))).sqrt();
                let norm = up as f32;
                let norm = if (norm as f64) < up {
                    f32::from_bits(norm.to_bits() + 1)
                } else {
                    norm
                };
                let many = row.stored() + bias as usize > max_terms::<F>();
                (norm, l1 * (1.0 + 1e-12), sub || many)
            })
            .collect();
        RowFacts {
            norms: per_row.iter().map(|r| r.0).collect(),
            l1_max: per_row.iter().map(|r| r.1).fold(0.0, f64::max),
            host_only: per_row
                .iter()
                .enumerate()
                .filter(|(_, r)| r.2)
                .map(|(i, _)| i)
                .collect(),
        }
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
/// it, dropping its whole term) or more terms than [`max_terms`].
pub fn needs_host<F: Real>(row: Row<'_, F>, bias: bool) -> bool {
    if row.stored() + bias as usize > max_terms::<F>() {
        return true;
    }
    let mut sub = false;
    row.for_each(|_, v| sub |= v.is_subnormal());
    sub
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
    use crate::reference;

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
    fn limits_follow_the_precision() {
        assert_eq!(max_terms::<f32>(), 1 << 20);
        assert!(needs_host(Row::Dense(&[1.0f32, 1e-40]), true));
        assert!(!needs_host(Row::Dense(&[1.0f32, 0.0]), true));
    }
}
