//! Per-row facts of a dataset that the engines and the training loop need:
//! norm bounds, the largest L1 norm, and the rows no engine may settle.

use crate::float::Real;

use super::byte_rows::ByteRows;
use super::matrix::Features;

/// Largest number of terms per row (stored features plus the bias) for
/// which the certification bound holds (m·u <= 1/16, see [`crate::engine::certify`]);
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
    /// row's order: the same bits as [`super::stats::Summary::largest_norm_sq`], so
    /// the report's radius needs no pass of its own.
    pub largest_norm_sq: f64,
    /// Sorted rows no engine may settle ([`crate::engine::certify::needs_host`]), and the same as
    /// a bitset (bit i of word i/64).
    pub host_only: Vec<usize>,
    host_only_bits: Vec<u64>,
}

impl RowFacts {
    pub fn compute<F: Real>(features: &Features<F>, bias: bool) -> Self {
        Self::joined(features.rows(), |rows| Part::of(features, bias, rows))
    }

    /// [`RowFacts::compute`] for the rows of `features` kept as `bytes`
    /// ([`ByteRows`]), from the bytes: the same facts, bit for bit, reading
    /// an eighth of the memory (a quarter in f32). Each row's sums of
    /// squares and of values are whole numbers far below 2^53 (at most
    /// 65,025 a value), which f64 adds exactly in any order, so the sums
    /// in integers, converted once, are the f64 sums of the row's order;
    /// and no byte is subnormal.
    pub fn of_bytes<F: Real>(bytes: &ByteRows, bias: bool) -> Self {
        Self::joined(bytes.rows(), |rows| Part::of_bytes::<F>(bytes, bias, rows))
    }

    /// The facts of `rows` rows from each part's.
    fn joined(rows: usize, part: impl Fn(std::ops::Range<usize>) -> Part + Sync) -> Self {
        use rayon::prelude::*;
        // Rows in chunks, each summarised on its own and the summaries joined
        // in order: maxima and lists of rows do not depend on the split.
        let parts: Vec<Part> = (0..rows.div_ceil(ROWS_PER_PART))
            .into_par_iter()
            .map(|p| {
                let first = p * ROWS_PER_PART;
                part(first..rows.min(first + ROWS_PER_PART))
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

    /// The facts of the rows reordered so that new row `p` is old row
    /// `order[p]` (a permutation): each row's facts move with it, and the
    /// maxima are those of the same rows.
    pub fn permuted(&self, order: &[usize]) -> Self {
        let mut facts = RowFacts {
            norms: order.iter().map(|&i| self.norms[i]).collect(),
            l1_max: self.l1_max,
            max_norm: self.max_norm,
            largest_norm_sq: self.largest_norm_sq,
            host_only: Vec::new(),
            host_only_bits: vec![0; order.len().div_ceil(64)],
        };
        if !self.host_only.is_empty() {
            for (p, &i) in order.iter().enumerate() {
                if self.is_host_only(i) {
                    facts.host_only.push(p);
                    facts.host_only_bits[p / 64] |= 1 << (p % 64);
                }
            }
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
        let values = |i: usize| features.row(i).values();
        let mut i = rows.start;
        // Two rows side by side: each row's additions wait for the one
        // before, so one row at a time leaves the core mostly waiting.
        while i + 1 < rows.end {
            let [a, b] = Sums::of_two(values(i), values(i + 1), bias);
            part.push::<F>(i, a, bias);
            part.push::<F>(i + 1, b, bias);
            i += 2;
        }
        if i < rows.end {
            part.push::<F>(i, Sums::of_two(values(i), &[], bias)[0], bias);
        }
        part
    }

    /// [`Part::of`] for rows kept as bytes (see [`RowFacts::of_bytes`]).
    fn of_bytes<F: Real>(bytes: &ByteRows, bias: bool, rows: std::ops::Range<usize>) -> Self {
        let mut part = Part {
            norms: Vec::with_capacity(rows.len()),
            ..Part::default()
        };
        for i in rows {
            let x = bytes.row(i);
            let (mut sum, mut squares) = (0u64, 0u64);
            for &b in x {
                sum += u64::from(b);
                squares += u64::from(b) * u64::from(b);
            }
            let sums = Sums {
                sq: squares as f64,
                l1: (sum + u64::from(bias)) as f64,
                sub: false,
                stored: x.len(),
            };
            part.push::<F>(i, sums, bias);
        }
        part
    }

    fn push<F: Real>(&mut self, i: usize, sums: Sums, bias: bool) {
        let one = bias as u8 as f64;
        let sq = sums.sq + one;
        // f64 accumulation of n non-negative terms loses at most about
        // n·2^-53 relative; 8(n + 4)·2^-53 covers it and the products here.
        let slack = 1.0 + (sums.stored as f64 + 4.0) * 2f64.powi(-50);
        let up = (sq * slack).sqrt();
        let norm = up as f32;
        let norm = if (norm as f64) < up {
            f32::from_bits(norm.to_bits() + 1)
        } else {
            norm
        };
        let many = sums.stored + bias as usize > max_terms::<F>();
        let huge = up >= F::MAX_VALUE.sqrt();
        self.norms.push(norm);
        // (A fixed 1 + 1e-12 fell short of the sum's error on rows of more
        // than about 9,000 terms.)
        self.l1_max = self.l1_max.max(sums.l1 * slack);
        self.max_norm = self.max_norm.max(up);
        self.largest_norm_sq = self.largest_norm_sq.max(sums.sq);
        if sums.sub || many || huge {
            self.host_only.push(i);
        }
    }
}

/// One row's sums, each in the row's order.
#[derive(Clone, Copy)]
struct Sums {
    /// The squares from 0, as `Row::norm_sq_f64` sums them (the radius's
    /// bits); the bias's 1 comes after.
    sq: f64,
    /// The absolute values, after the bias's 1.
    l1: f64,
    /// Whether a value is subnormal in the data's precision.
    sub: bool,
    stored: usize,
}

impl Sums {
    #[inline]
    fn add<F: Real>(&mut self, v: F) {
        let v = v.to_f64();
        self.sq += v * v;
        self.l1 += v.abs();
        self.sub |= v != 0.0 && v.abs() < F::MIN_NORMAL;
    }

    /// The sums of rows `a` and `b`, their values taken in turns.
    #[inline]
    fn of_two<F: Real>(a: &[F], b: &[F], bias: bool) -> [Sums; 2] {
        let start = |len| Sums {
            sq: 0.0,
            l1: bias as u8 as f64,
            sub: false,
            stored: len,
        };
        let (mut x, mut y) = (start(a.len()), start(b.len()));
        let both = a.len().min(b.len());
        for (&u, &v) in a[..both].iter().zip(&b[..both]) {
            x.add(u);
            y.add(v);
        }
        a[both..].iter().for_each(|&u| x.add(u));
        b[both..].iter().for_each(|&v| y.add(v));
        [x, y]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts made from the bytes of rows of whole numbers are those of
    /// the stored values, bit for bit, in both precisions, with and
    /// without the bias, on rows long enough for the f64 sums to round if
    /// they could.
    #[test]
    fn facts_of_bytes_are_the_stored_rows_facts() {
        fn check<F: Real>(cols: usize) {
            let rows = 9000;
            let values: Vec<F> = (0..rows * cols)
                .map(|k| {
                    F::from_f64(((k * 7919 + k / 13) % 256) as f64 * ((k % 3 != 0) as u8 as f64))
                })
                .collect();
            let features = Features::Dense(crate::data::matrix::DenseMatrix {
                rows,
                cols,
                values: values.into(),
            });
            let bytes = ByteRows::of(&features).expect("bytes");
            for bias in [false, true] {
                let (want, got) = (
                    RowFacts::compute(&features, bias),
                    RowFacts::of_bytes::<F>(&bytes, bias),
                );
                assert_eq!(got, want, "{} cols={cols} bias={bias}", F::PRECISION);
                assert_eq!(got.l1_max.to_bits(), want.l1_max.to_bits());
                assert_eq!(got.max_norm.to_bits(), want.max_norm.to_bits());
                assert_eq!(
                    got.largest_norm_sq.to_bits(),
                    want.largest_norm_sq.to_bits()
                );
            }
        }
        for cols in [1, 7, 784, 5000] {
            check::<f64>(cols);
            check::<f32>(cols);
        }
    }
    use crate::data::matrix::{CsrMatrix, DenseMatrix, Row};

    /// The largest L1 norm is an upper bound however many terms a row has:
    /// 100,000 values of 2^-53 after the bias's 1 each round away in f64
    /// (1 + 2^-53 is a tie, to even), so the computed sum is 1 while the
    /// norm is 1 + 100,000·2^-53, above 1 + 1e-12.
    #[test]
    fn the_largest_l1_norm_bounds_long_rows_whose_sum_rounds_away() {
        let n = 100_000u32;
        let tiny = 2f32.powi(-53);
        let features = Features::Sparse(CsrMatrix {
            cols: n as usize,
            row_ptr: vec![0, n as usize].into(),
            indices: (0..n).collect::<Vec<_>>().into(),
            values: vec![tiny; n as usize].into(),
        });
        let facts = RowFacts::compute(&features, true);
        let exact = 1.0 + f64::from(n) * f64::from(tiny);
        // The exact norm rounded up to the next f64: the bound must reach it.
        let exact_up = f64::from_bits(exact.to_bits() + 1);
        assert!(facts.l1_max >= exact_up, "{} < {exact_up}", facts.l1_max);
        assert!(facts.l1_max < 1.0 + 1e-9, "{}", facts.l1_max);
    }

    /// Two rows side by side give each row's own sums, bit for bit, for
    /// every pair of lengths.
    #[test]
    fn two_rows_side_by_side_give_each_rows_own_sums() {
        // A large first value and small ones after it: the sums' bits
        // depend on their order.
        let values: Vec<f32> = (0..40)
            .map(|i| {
                if i % 13 == 0 {
                    1e4
                } else {
                    0.1 + i as f32 * 0.37
                }
            })
            .collect();
        let alone = |v: &[f32]| {
            let mut l1 = 1.0f64;
            v.iter().for_each(|&x| l1 += (x as f64).abs());
            (Row::Dense(v).norm_sq_f64().to_bits(), l1.to_bits())
        };
        for n in 0..20 {
            for m in 0..20 {
                let (a, b) = (&values[..n], &values[20 - m..20]);
                let [x, y] = Sums::of_two(a, b, true);
                assert_eq!((x.sq.to_bits(), x.l1.to_bits()), alone(a), "{n} {m}");
                assert_eq!((y.sq.to_bits(), y.l1.to_bits()), alone(b), "{n} {m}");
                assert_eq!((x.stored, y.stored), (n, m));
            }
        }
    }

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
                values: values.clone().into(),
            });
            // Rows of every length, so that two rows side by side end apart.
            let lengths: Vec<usize> = (0..rows).map(|i| (i * 5 + 3) % cols + 1).collect();
            let mut row_ptr = vec![0usize];
            let (mut indices, mut ragged) = (Vec::new(), Vec::new());
            for (i, &n) in lengths.iter().enumerate() {
                indices.extend((0..n as u32).map(|k| k % cols as u32));
                ragged.extend_from_slice(&values[i * cols..i * cols + n]);
                row_ptr.push(indices.len());
            }
            let ragged = Features::Sparse(CsrMatrix {
                cols,
                row_ptr: row_ptr.into(),
                indices: indices.into(),
                values: ragged.into(),
            });
            for f in [dense, sparse, ragged] {
                let want = crate::data::stats::summary(&f).largest_norm_sq;
                for bias in [false, true] {
                    let facts = RowFacts::compute(&f, bias);
                    assert_eq!(facts.largest_norm_sq.to_bits(), want.to_bits(), "{rows}");
                    assert_eq!(facts.norms.len(), rows);
                    assert!(facts.max_norm >= crate::data::stats::radius_from(want, bias));
                }
            }
        }
    }

    #[test]
    fn permuted_facts_are_the_facts_of_the_permuted_rows() {
        // Rows of every kind, host-only ones among them (a value so large
        // its products may overflow is one no engine may settle).
        let (rows, cols) = (150usize, 3usize);
        let values: Vec<f32> = (0..rows * cols)
            .map(|i| match (i / cols) % 37 {
                5 => 3e38,
                r => 0.5 + (r * cols + i % cols) as f32 * 0.25,
            })
            .collect();
        let features = Features::Dense(DenseMatrix {
            rows,
            cols,
            values: values.into(),
        });
        let order: Vec<usize> = (0..rows).map(|p| (p * 7 + 3) % rows).collect();
        for bias in [false, true] {
            let facts = RowFacts::compute(&features, bias);
            assert!(!facts.host_only.is_empty(), "the test needs host-only rows");
            let moved = facts.permuted(&order);
            assert_eq!(moved, RowFacts::compute(&features.permuted(&order), bias));
        }
    }
}
