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
    /// max_i ||x_i||^2 without the bias feature, summed in f64 in each
    /// row's order: the same bits as [`super::stats::largest_norm_sq`], so
    /// the report's radius needs no pass of its own.
    pub largest_norm_sq: f64,
    /// Sorted rows no engine may settle ([`crate::certify::needs_host`]), and the same as
    /// a bitset (bit i of word i/64).
    pub host_only: Vec<usize>,
    host_only_bits: Vec<u64>,
}

impl RowFacts {
    pub fn compute<F: Real>(features: &Features<F>, bias: bool) -> Self {
        use rayon::prelude::*;
        let rows = features.rows();
        // Rows in chunks, each summarised on its own and the summaries joined
        // in order: maxima and lists of rows do not depend on the split.
        let parts: Vec<Part> = (0..rows.div_ceil(ROWS_PER_PART))
            .into_par_iter()
            .map(|p| {
                let first = p * ROWS_PER_PART;
                Part::of(features, bias, first..rows.min(first + ROWS_PER_PART))
            })
            .collect();
        let mut facts = RowFacts {
            norms: Vec::with_capacity(rows),
            host_only_bits: vec![0u64; rows.div_ceil(64)],
            ..RowFacts::default()
        };
        for part in parts {
            facts.norms.extend_from_slice(&part.norms);
            facts.l1_max = facts.l1_max.max(part.l1_max);
            facts.max_norm = facts.max_norm.max(part.max_norm);
            facts.largest_norm_sq = facts.largest_norm_sq.max(part.largest_norm_sq);
            facts.host_only.extend_from_slice(&part.host_only);
        }
        for &i in &facts.host_only {
            facts.host_only_bits[i / 64] |= 1 << (i % 64);
        }
        facts
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

/// Rows summarised per task.
const ROWS_PER_PART: usize = 4096;

/// The facts of a run of consecutive rows.
#[derive(Default)]
struct Part {
    norms: Vec<f32>,
    l1_max: f64,
    max_norm: f64,
    largest_norm_sq: f64,
    host_only: Vec<usize>,
}

impl Part {
    fn of<F: Real>(features: &Features<F>, bias: bool, rows: std::ops::Range<usize>) -> Self {
        let mut part = Part {
            norms: Vec::with_capacity(rows.len()),
            ..Part::default()
        };
        let one = bias as u8 as f64;
        for i in rows {
            let row = features.row(i);
            // The squares from 0 in the row's order, as `Row::norm_sq_f64`
            // sums them (the radius's bits); the bias's 1 comes after.
            let (mut row_sq, mut l1, mut sub) = (0.0f64, one, false);
            row.for_each(|_, v| {
                let v = v.to_f64();
                row_sq += v * v;
                l1 += v.abs();
                sub |= v != 0.0 && v.abs() < F::MIN_NORMAL;
            });
            let sq = row_sq + one;
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
            part.norms.push(norm);
            part.l1_max = part.l1_max.max(l1 * (1.0 + 1e-12));
            part.max_norm = part.max_norm.max(up);
            part.largest_norm_sq = part.largest_norm_sq.max(row_sq);
            if sub || many || huge {
                part.host_only.push(i);
            }
        }
        part
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::matrix::{CsrMatrix, DenseMatrix};

    /// The facts' largest squared norm is the statistics pass's, bit for
    /// bit, on dense and sparse rows whose sums depend on their order, for
    /// row counts across the parts' edge; so is the radius the report takes
    /// from it.
    #[test]
    fn the_largest_norm_is_the_statistics_pass_bit_for_bit() {
        for rows in [1usize, 5, ROWS_PER_PART - 1, ROWS_PER_PART + 3] {
            let cols = 7;
            // A large first value and small ones after it.
            let values: Vec<f32> = (0..rows * cols)
                .map(|i| match i % cols {
                    0 => 1e4 + (i / cols % 13) as f32 * 0.5,
                    j => 1.0 + ((i / cols + j) % 5) as f32 * 0.3,
                })
                .collect();
            let dense = Features::Dense(DenseMatrix {
                rows,
                cols,
                values: values.clone().into(),
            });
            let sparse = Features::Sparse(CsrMatrix {
                cols,
                row_ptr: (0..=rows).map(|i| i * cols).collect::<Vec<_>>().into(),
                indices: (0..rows * cols)
                    .map(|i| (i % cols) as u32)
                    .collect::<Vec<_>>()
                    .into(),
                values: values.into(),
            });
            for f in [dense, sparse] {
                let want = crate::data::stats::largest_norm_sq(&f);
                for bias in [false, true] {
                    let facts = RowFacts::compute(&f, bias);
                    assert_eq!(facts.largest_norm_sq.to_bits(), want.to_bits(), "{rows}");
                    assert_eq!(facts.norms.len(), rows);
                    assert!(facts.max_norm >= crate::data::stats::radius(&f, bias));
                }
            }
        }
    }
}
