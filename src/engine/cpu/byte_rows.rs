//! The host's certified margin of a row kept as bytes
//! ([`crate::data::byte_rows`]): each byte widened to the training
//! precision first, which is exact, so the products are those of the
//! stored row and the bound is the same. With AVX2 the lanes are
//! [`super::simd`]'s, so the sums too; elsewhere the portable lanes, an
//! order of their own (the bound holds for any order).

use crate::engine::certify::{self, Bound, Settled};
use crate::float::{Precision, Real};

/// The host's certified decision of a row labelled `y` whose values are
/// `x` (as bytes): [`super::decide`] for the same row.
#[inline]
pub fn decide<F: Real>(bound: &Bound<F>, w: &[F], x: &[u8], bias: bool, y: i8) -> Settled {
    let (s, t) = margin(w, x, bias);
    settle(bound, (s, t), x.len(), bias, y)
}

/// The certified decision from a byte row's (s^, t^), `len` its bytes.
#[inline]
pub fn settle<F: Real>(bound: &Bound<F>, (s, t): (F, F), len: usize, bias: bool, y: i8) -> Settled {
    bound.decide(y, s, t, F::from_f64((len + bias as usize) as f64))
}

/// s^ of a row's (s^, t^) ([`margin`]) under weights that are all whole
/// numbers (the caller's promise), when it is exact: then it is the
/// reference's own margin, bit for bit ([`certify::whole_sum_is_exact`]).
/// `None` when the row's absolute sum reaches 2^p.
#[inline]
pub fn exact_of<F: Real>((s, t): (F, F)) -> Option<F> {
    certify::whole_sum_is_exact(t).then_some(s)
}

/// (s^, t^) of a row kept as bytes, the bias term included when `bias`:
/// [`super::margin`] for the same row.
#[inline]
pub fn margin<F: Real>(w: &[F], x: &[u8], bias: bool) -> (F, F) {
    let (mut s, mut t) = dot_and_abs(&w[..x.len()], x);
    if bias {
        let b = w[w.len() - 1];
        s = s + b;
        t = t + b.abs();
    }
    (s, t)
}

/// Σ w_k·x_k and Σ |w_k·x_k| in any order (for certified margins only).
#[inline]
pub fn dot_and_abs<F: Real>(w: &[F], x: &[u8]) -> (F, F) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // Same-size casts of `Real`'s two types: `PRECISION` says which.
        match F::PRECISION {
            Precision::F64 => {
                if let Ok(w) = bytemuck::try_cast_slice::<F, f64>(w) {
                    // SAFETY: the processor has AVX2, checked just above.
                    let (s, t) = unsafe { avx2::f64s(w, x) };
                    return (bytemuck::cast(s), bytemuck::cast(t));
                }
            }
            Precision::F32 => {
                if let Ok(w) = bytemuck::try_cast_slice::<F, f32>(w) {
                    // SAFETY: as above.
                    let (s, t) = unsafe { avx2::f32s(w, x) };
                    return (bytemuck::cast(s), bytemuck::cast(t));
                }
            }
        }
    }
    portable(w, x)
}

/// Eight independent lanes, then their sum: any target.
#[inline]
pub fn portable<F: Real>(w: &[F], x: &[u8]) -> (F, F) {
    const LANES: usize = 8;
    let mut s = [F::ZERO; LANES];
    let mut t = [F::ZERO; LANES];
    let (wc, wr) = w.as_chunks::<LANES>();
    let (xc, xr) = x.as_chunks::<LANES>();
    for (wl, xl) in wc.iter().zip(xc) {
        for l in 0..LANES {
            let p = wl[l] * F::from_f64(xl[l] as f64);
            s[l] = s[l] + p;
            t[l] = t[l] + p.abs();
        }
    }
    let (mut s0, mut t0) = (F::ZERO, F::ZERO);
    for (&a, &b) in wr.iter().zip(xr) {
        let p = a * F::from_f64(b as f64);
        s0 = s0 + p;
        t0 = t0 + p.abs();
    }
    for l in 0..LANES {
        s0 = s0 + s[l];
        t0 = t0 + t[l];
    }
    (s0, t0)
}

/// [`super::simd`]'s AVX2 sums, each load of values a load of bytes
/// widened to 32-bit integers and converted (exactly) to the precision.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn f64s(w: &[f64], x: &[u8]) -> (f64, f64) {
        let n = w.len().min(x.len());
        let blocks = n / 8;
        let mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fff_ffff_ffff_ffff));
        let (mut s0, mut s1, mut t0, mut t1) = (
            _mm256_setzero_pd(),
            _mm256_setzero_pd(),
            _mm256_setzero_pd(),
            _mm256_setzero_pd(),
        );
        for b in 0..blocks {
            let i = b * 8;
            // SAFETY: the 8 bytes at i and the doubles at i and i + 4 with
            // i + 8 <= n lie inside both slices.
            let (p0, p1) = unsafe {
                let bytes = _mm_loadl_epi64(x.as_ptr().add(i).cast());
                let lo = _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(bytes));
                let hi = _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_srli_si128::<4>(bytes)));
                (
                    _mm256_mul_pd(_mm256_loadu_pd(w.as_ptr().add(i)), lo),
                    _mm256_mul_pd(_mm256_loadu_pd(w.as_ptr().add(i + 4)), hi),
                )
            };
            s0 = _mm256_add_pd(s0, p0);
            s1 = _mm256_add_pd(s1, p1);
            t0 = _mm256_add_pd(t0, _mm256_and_pd(p0, mask));
            t1 = _mm256_add_pd(t1, _mm256_and_pd(p1, mask));
        }
        let mut s = [0f64; 4];
        let mut t = [0f64; 4];
        // SAFETY: each store writes 4 doubles into a 4-double array.
        unsafe {
            _mm256_storeu_pd(s.as_mut_ptr(), _mm256_add_pd(s0, s1));
            _mm256_storeu_pd(t.as_mut_ptr(), _mm256_add_pd(t0, t1));
        }
        let (mut ss, mut ts) = ((s[0] + s[1]) + (s[2] + s[3]), (t[0] + t[1]) + (t[2] + t[3]));
        for i in blocks * 8..n {
            let p = w[i] * x[i] as f64;
            ss += p;
            ts += p.abs();
        }
        (ss, ts)
    }

    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn f32s(w: &[f32], x: &[u8]) -> (f32, f32) {
        let n = w.len().min(x.len());
        let blocks = n / 16;
        let mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
        let (mut s0, mut s1, mut t0, mut t1) = (
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
            _mm256_setzero_ps(),
        );
        for b in 0..blocks {
            let i = b * 16;
            // SAFETY: the 16 bytes at i and the floats at i and i + 8 with
            // i + 16 <= n lie inside both slices.
            let (p0, p1) = unsafe {
                let bytes = _mm_loadu_si128(x.as_ptr().add(i).cast());
                let lo = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
                let hi = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128::<8>(bytes)));
                (
                    _mm256_mul_ps(_mm256_loadu_ps(w.as_ptr().add(i)), lo),
                    _mm256_mul_ps(_mm256_loadu_ps(w.as_ptr().add(i + 8)), hi),
                )
            };
            s0 = _mm256_add_ps(s0, p0);
            s1 = _mm256_add_ps(s1, p1);
            t0 = _mm256_add_ps(t0, _mm256_and_ps(p0, mask));
            t1 = _mm256_add_ps(t1, _mm256_and_ps(p1, mask));
        }
        let mut s = [0f32; 8];
        let mut t = [0f32; 8];
        // SAFETY: each store writes 8 floats into an 8-float array.
        unsafe {
            _mm256_storeu_ps(s.as_mut_ptr(), _mm256_add_ps(s0, s1));
            _mm256_storeu_ps(t.as_mut_ptr(), _mm256_add_ps(t0, t1));
        }
        let (mut ss, mut ts) = (
            (s[0] + s[1]) + (s[2] + s[3]) + ((s[4] + s[5]) + (s[6] + s[7])),
            (t[0] + t[1]) + (t[2] + t[3]) + ((t[4] + t[5]) + (t[6] + t[7])),
        );
        for i in blocks * 16..n {
            let p = w[i] * x[i] as f32;
            ss += p;
            ts += p.abs();
        }
        (ss, ts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Row;
    use crate::engine::certify::Bound;

    /// Under whole weights a row's margin from the lanes, while its
    /// absolute sum is below 2^p, is the reference's dot and scikit-learn's
    /// margin, bit for bit; at 2^p it is refused, even where the sum's one
    /// rounding would leave the lanes' result equal.
    #[test]
    fn whole_margins_are_the_reference_dots_below_2_to_the_p() {
        fn whole_margin<F: Real>(w: &[F], x: &[u8], bias: bool) -> Option<F> {
            exact_of(margin(w, x, bias))
        }
        fn check<F: Real>(limit: f64) {
            let (mut exact, mut refused) = (0, 0);
            let mut state = 7u64;
            let mut next = move |m: u64| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(99);
                (state >> 33) % m
            };
            for n in [1usize, 7, 8, 9, 16, 17, 100, 784] {
                for magnitude in [10.0, 1e4, limit / 2e5, limit / 1e4, limit / 10.0] {
                    let m = magnitude as u64;
                    let w: Vec<F> = (0..=n)
                        .map(|_| F::from_f64(next(2 * m + 1) as f64 - m as f64))
                        .collect();
                    let x: Vec<u8> = (0..n).map(|_| next(256) as u8).collect();
                    let xf: Vec<F> = x.iter().map(|&b| F::from_f64(b as f64)).collect();
                    for bias in [false, true] {
                        let w = &w[..n + bias as usize];
                        let Some(s) = whole_margin(w, &x, bias) else {
                            refused += 1;
                            continue;
                        };
                        exact += 1;
                        let row = Row::Dense(&xf);
                        let want = crate::engine::reference::dot(w, row, bias);
                        assert_eq!(s.to_f64().to_bits(), want.to_f64().to_bits(), "n={n}");
                        let scikit = crate::engine::reference::scikit_margin(w, row, bias);
                        assert_eq!(s.to_f64().to_bits(), scikit.to_bits(), "n={n}");
                    }
                }
            }
            assert!(
                exact > 20 && refused > 5,
                "{exact} exact, {refused} refused"
            );
            // 2^p + 1 rounds to 2^p: not exact, so refused.
            let w = [F::from_f64(limit), F::ONE];
            assert_eq!(whole_margin(&w, &[1, 1], false), None);
            assert_eq!(whole_margin(&w[..1], &[1], true), None);
            let w = [F::from_f64(limit - 2.0), F::ONE];
            assert_eq!(
                whole_margin(&w, &[1, 1], false),
                Some(F::from_f64(limit - 1.0))
            );
        }
        check::<f64>(2f64.powi(53));
        check::<f32>(2f64.powi(24));
    }

    /// The sums over bytes are the stored rows' sums: the same lanes add
    /// the same products in the same order, so the bits agree with
    /// [`crate::engine::cpu::simd`]'s (the AVX2 kernels where the processor
    /// has them, the portable lanes everywhere), in both precisions, at
    /// every length around the blocks' sizes.
    #[test]
    fn byte_sums_are_the_stored_rows_sums() {
        for n in [0usize, 1, 3, 7, 8, 9, 15, 16, 17, 31, 100, 784] {
            let x: Vec<u8> = (0..n).map(|k| (k * 53 % 256) as u8).collect();
            let w64: Vec<f64> = (0..n)
                .map(|k| ((k * 37 % 101) as f64 - 50.0) * 0.013)
                .collect();
            let x64: Vec<f64> = x.iter().map(|&b| b as f64).collect();
            #[cfg(target_arch = "x86_64")]
            let avx2 = std::is_x86_feature_detected!("avx2");
            #[cfg(not(target_arch = "x86_64"))]
            let avx2 = false;
            let simd = crate::engine::cpu::simd::dot_and_abs(&w64, &x64);
            let lanes = crate::engine::cpu::simd::portable(&w64, &x64);
            let mut pairs = vec![(portable(&w64, &x), lanes)];
            if avx2 {
                pairs.push((dot_and_abs(&w64, &x), simd));
            }
            for (got, want) in pairs {
                assert_eq!(got.0.to_bits(), want.0.to_bits(), "f64 n={n}");
                assert_eq!(got.1.to_bits(), want.1.to_bits(), "f64 n={n}");
            }
            let w32: Vec<f32> = w64.iter().map(|&v| v as f32).collect();
            let x32: Vec<f32> = x.iter().map(|&b| b as f32).collect();
            let simd = crate::engine::cpu::simd::dot_and_abs(&w32, &x32);
            let lanes = crate::engine::cpu::simd::portable(&w32, &x32);
            let mut pairs = vec![(portable(&w32, &x), lanes)];
            if avx2 {
                pairs.push((dot_and_abs(&w32, &x), simd));
            }
            for (got, want) in pairs {
                assert_eq!(got.0.to_bits(), want.0.to_bits(), "f32 n={n}");
                assert_eq!(got.1.to_bits(), want.1.to_bits(), "f32 n={n}");
            }
            // And the decision is the stored row's, with and without bias.
            let mut wb = w64.clone();
            wb.push(0.25);
            let bound = Bound::<f64>::for_weights(&wb, 255.0 * n as f64 + 1.0);
            for y in [-1i8, 1] {
                assert_eq!(
                    decide(&bound, &wb, &x, true, y),
                    crate::engine::cpu::decide(&bound, &wb, Row::Dense(&x64), true, y)
                );
                assert_eq!(
                    decide(&bound, &w64, &x, false, y),
                    crate::engine::cpu::decide(&bound, &w64, Row::Dense(&x64), false, y)
                );
            }
        }
    }
}
