//! Per-row facts of a dataset that the engines and the training loop need:
//! norm bounds, the largest L1 norm, and the rows no engine may settle.

use crate::float::Real;

use super::matrix::Features;

/// Largest number of terms per row (stored features plus the bias) for
/// which the certification bound holds (m·u <= 1/16, see [`crate::certify`]);
/// rows with more terms are host-only.
pub fn max_terms<F: Real>() -> usize {
    (1.0 / (16.0 * F::UNIT_ROUNDOFF)) as usize
}

/// What the engines and the loop need to know about every row, computed in
/// one parallel pass (see [`crate::data::Dataset::facts`], which caches it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowFacts {
    /// Upper bounds of ||x~_i|| (the bias feature included), in f32.
    pub norms: Vec<f32>,
    /// Upper bound of max_i Σ_k |x~_ik|.
    pub l1_max: f64,
    /// Upper bound of max_i ||x~_i||, in f64 (`norms` may round it to f32
    /// infinity for f64 data).
    pub max_norm: f64,
    /// Sorted rows no engine may settle ([`crate::certify::needs_host`]), and the same as
    /// a bitset (bit i of word i/64).
    pub host_only: Vec<usize>,
    host_only_bits: Vec<u64>,
}

impl RowFacts {
    pub fn compute<F: Real>(features: &Features<F>, bias: bool) -> Self {
        use rayon::prelude::*;
        let rows = features.rows();
        let per_row: Vec<(f32, f64, bool, f64)> = (0..rows)
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
                let huge = up >= F::MAX_VALUE.sqrt();
                (norm, l1 * (1.0 + 1e-12), sub || many || huge, up)
            })
            .collect();
        let host_only: Vec<usize> = per_row
            .iter()
            .enumerate()
            .filter(|(_, r)| r.2)
            .map(|(i, _)| i)
            .collect();
        let mut host_only_bits = vec![0u64; rows.div_ceil(64)];
        for &i in &host_only {
            host_only_bits[i / 64] |= 1 << (i % 64);
        }
        RowFacts {
            norms: per_row.iter().map(|r| r.0).collect(),
            l1_max: per_row.iter().map(|r| r.1).fold(0.0, f64::max),
            max_norm: per_row.iter().map(|r| r.3).fold(0.0, f64::max),
            host_only,
            host_only_bits,
        }
    }

    /// Whether row `i` is one no engine may settle: one bit test, for the
    /// loops that ask of every row.
    #[inline]
    pub fn is_host_only(&self, i: usize) -> bool {
        self.host_only_bits
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
}
