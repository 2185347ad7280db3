//! Dataset statistics shown by `info` and used by the convergence report.

use crate::float::Real;

use super::matrix::{Features, Row};

/// max_i ||x_i||^2 (in f64), without the bias feature, one row at a time
/// (rows in parallel: a maximum does not depend on the order). Dense rows
/// go four at a time through [`summary`] instead.
fn largest_by_rows<F: Real>(features: &Features<F>) -> f64 {
    use rayon::prelude::*;
    (0..features.rows())
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| features.row(i).norm_sq_f64())
        .reduce(|| 0.0f64, f64::max)
}

/// Dense rows whose squared norms are summed side by side.
const ROWS_TOGETHER: usize = 4;

/// The largest squared norm of the dense rows in `rows` (`cols` values
/// each). Each row's sum is taken value by value in its own order, as
/// [`Row::norm_sq_f64`](super::matrix::Row::norm_sq_f64) takes it, so the
/// bits are the same; but four rows' chains of additions run side by side,
/// where one row's additions would each wait for the one before.
fn largest_in_rows<F: Real>(rows: &[F], cols: usize) -> f64 {
    let mut largest = 0.0f64;
    let mut groups = rows.chunks_exact(cols * ROWS_TOGETHER);
    for group in &mut groups {
        let mut sums = [0.0f64; ROWS_TOGETHER];
        for j in 0..cols {
            for (k, s) in sums.iter_mut().enumerate() {
                let v = group[k * cols + j].to_f64();
                *s += v * v;
            }
        }
        for s in sums {
            largest = largest.max(s);
        }
    }
    for row in groups.remainder().chunks(cols) {
        largest = largest.max(Row::Dense(row).norm_sq_f64());
    }
    largest
}

/// The radius from a largest squared norm ([`Summary::largest_norm_sq`],
/// [`super::RowFacts::largest_norm_sq`]): the same bits as taking the
/// maximum over rows of ||x_i||^2 + 1, because rounding is monotone, so
/// the largest rounded sum is the rounded sum of the largest.
pub fn radius_from(largest_norm_sq: f64, bias: bool) -> f64 {
    let extra = if bias { 1.0 } else { 0.0 };
    (largest_norm_sq + extra).sqrt()
}

/// What `info` reports of the values, from one pass on all cores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary<F> {
    /// Stored values that are not zero.
    pub nonzeros: usize,
    /// max_i ||x_i||^2 (in f64), without the bias feature: one pass serves
    /// the radius with and without it ([`radius_from`]). Each row's sum is
    /// taken in its order, as [`Row::norm_sq_f64`] takes it.
    pub largest_norm_sq: f64,
    /// (min, max) over every feature value, implicit zeros included (None
    /// for no values at all). Among equal values (0 and -0) the first in
    /// the data is the one reported, as a loop over the values would.
    pub range: Option<(F, F)>,
}

/// Values per task of [`summary`]: a dense task's rows are read a second
/// time while they are still in the core's cache.
const VALUES_PER_TASK: usize = 1 << 16;

/// The [`Summary`] of `features`. Dense rows are read once from memory:
/// each task sums its rows' squares, then takes the range and the count of
/// its values from the cache.
pub fn summary<F: Real>(features: &Features<F>) -> Summary<F> {
    use rayon::prelude::*;
    let mut summary = match features {
        Features::Dense(m) if m.cols > 0 => {
            let group = m.cols * ROWS_TOGETHER;
            let per_task = group * (VALUES_PER_TASK / group).max(1);
            m.values
                .par_chunks(per_task)
                .map(|rows| Summary {
                    largest_norm_sq: largest_in_rows(rows, m.cols),
                    ..of_values(rows)
                })
                .reduce(Summary::empty, Summary::then)
        }
        _ => {
            let stored: &[F] = match features {
                Features::Dense(m) => &m.values,
                Features::Sparse(m) => &m.values,
            };
            let (values, largest_norm_sq) = rayon::join(
                || {
                    stored
                        .par_chunks(VALUES_PER_TASK)
                        .map(of_values)
                        .reduce(Summary::empty, Summary::then)
                },
                || largest_by_rows(features),
            );
            Summary {
                largest_norm_sq,
                ..values
            }
        }
    };
    if let Features::Sparse(m) = features
        && m.values.len() < m.rows().saturating_mul(m.cols)
    {
        summary.range = join_ranges(summary.range, Some((F::ZERO, F::ZERO)));
    }
    summary
}

impl<F: Real> Summary<F> {
    fn empty() -> Self {
        Summary {
            nonzeros: 0,
            largest_norm_sq: 0.0,
            range: None,
        }
    }

    /// This summary's values followed by `later`'s.
    fn then(self, later: Self) -> Self {
        Summary {
            nonzeros: self.nonzeros + later.nonzeros,
            largest_norm_sq: self.largest_norm_sq.max(later.largest_norm_sq),
            range: join_ranges(self.range, later.range),
        }
    }
}

/// Lanes of [`of_values`]: each keeps its own count and range, so the
/// loop runs as vector instructions.
const LANES: usize = 8;

/// The count and range of `values` (no squares). Each lane keeps the first
/// of equal values it sees, which only matters for 0 and -0: when the
/// range ends at zero, the first zero of the data is the one a loop over
/// the values reports, so that one is looked up.
fn of_values<F: Real>(values: &[F]) -> Summary<F> {
    let Some(&first) = values.first() else {
        return Summary::empty();
    };
    let mut counts = [0usize; LANES];
    let mut lows = [first; LANES];
    let mut highs = [first; LANES];
    let mut groups = values.chunks_exact(LANES);
    for group in &mut groups {
        for k in 0..LANES {
            let v = group[k];
            counts[k] += usize::from(v != F::ZERO);
            lows[k] = if v < lows[k] { v } else { lows[k] };
            highs[k] = if v > highs[k] { v } else { highs[k] };
        }
    }
    let mut nonzeros: usize = counts.iter().sum();
    let mut range = (first, first);
    for k in 0..LANES {
        range = wider(range, (lows[k], highs[k]));
    }
    for &v in groups.remainder() {
        nonzeros += usize::from(v != F::ZERO);
        range = wider(range, (v, v));
    }
    if range.0 == F::ZERO || range.1 == F::ZERO {
        let zero = values.iter().copied().find(|&v| v == F::ZERO);
        if let Some(zero) = zero {
            if range.0 == F::ZERO {
                range.0 = zero;
            }
            if range.1 == F::ZERO {
                range.1 = zero;
            }
        }
    }
    Summary {
        nonzeros,
        largest_norm_sq: 0.0,
        range: Some(range),
    }
}

fn join_ranges<F: Real>(a: Option<(F, F)>, b: Option<(F, F)>) -> Option<(F, F)> {
    match (a, b) {
        (Some(a), Some(b)) => Some(wider(a, b)),
        (a, b) => a.or(b),
    }
}

/// The range of `earlier` widened by `later`: on ties the earlier value
/// stays (0 and -0 are equal).
#[inline]
fn wider<F: Real>(earlier: (F, F), later: (F, F)) -> (F, F) {
    let (lo, hi) = earlier;
    let (l, h) = later;
    (if l < lo { l } else { lo }, if h > hi { h } else { hi })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::matrix::{CsrMatrix, DenseMatrix};

    fn value_range(f: &Features<f32>) -> Option<(f32, f32)> {
        summary(f).range
    }

    fn largest_norm_sq(f: &Features<f32>) -> f64 {
        summary(f).largest_norm_sq
    }

    fn radius(f: &Features<f32>, bias: bool) -> f64 {
        radius_from(largest_norm_sq(f), bias)
    }

    /// The range a loop over the values gives, zeros' signs included.
    fn in_order(values: &[f32], implicit_zero: bool) -> Option<(u32, u32)> {
        let mut it = values.iter().copied();
        let mut mm = it.next().map(|v| (v, v));
        for v in it {
            if let Some((lo, hi)) = &mut mm {
                if v < *lo {
                    *lo = v;
                }
                if v > *hi {
                    *hi = v;
                }
            }
        }
        if implicit_zero {
            let (lo, hi) = mm.unwrap_or((0.0, 0.0));
            mm = Some((
                if 0.0 < lo { 0.0 } else { lo },
                if 0.0 > hi { 0.0 } else { hi },
            ));
        }
        mm.map(|(lo, hi)| (lo.to_bits(), hi.to_bits()))
    }

    #[test]
    fn the_value_range_is_the_first_extreme_in_the_data_across_chunks() {
        let bits = |r: Option<(f32, f32)>| r.map(|(lo, hi)| (lo.to_bits(), hi.to_bits()));
        // 0 in the first chunks, -0 after: the first one seen is reported.
        let mut values = vec![0.0f32; 100_000];
        values.extend(vec![-0.0f32; 100_000]);
        let dense = |values: Vec<f32>| {
            Features::Dense(DenseMatrix {
                rows: values.len() / 4,
                cols: 4,
                values: values.into(),
            })
        };
        assert_eq!(
            bits(value_range(&dense(values.clone()))),
            in_order(&values, false)
        );
        values.reverse();
        assert_eq!(
            bits(value_range(&dense(values.clone()))),
            in_order(&values, false)
        );
        values[150_001] = -3.5;
        values[7] = 2.25;
        values[199_999] = 9.0;
        assert_eq!(
            bits(value_range(&dense(values.clone()))),
            Some(((-3.5f32).to_bits(), 9f32.to_bits()))
        );
        assert_eq!(value_range(&dense(Vec::new())), None);
        // Sparse: implicit zeros count when a row leaves some out.
        let sparse = |values: Vec<f32>, cols: usize| {
            let n = values.len();
            Features::Sparse(CsrMatrix {
                cols,
                row_ptr: vec![0, n].into(),
                indices: (0..n as u32).collect::<Vec<_>>().into(),
                values: values.into(),
            })
        };
        for (values, cols) in [
            (vec![1.5f32, 2.0], 3),
            (vec![-1.0, -0.0], 2),
            (vec![-1.0, -2.0], 3),
            (vec![], 3),
        ] {
            assert_eq!(
                bits(value_range(&sparse(values.clone(), cols))),
                in_order(&values, values.len() < cols),
                "{values:?}"
            );
        }
    }

    /// Dense rows summed four at a time give each row's own sum: the same
    /// largest squared norm, bit for bit, as the rows one by one, for every
    /// count of rows left over.
    #[test]
    fn rows_summed_side_by_side_give_each_rows_own_sum() {
        for rows in [1usize, 3, 4, 5, 7, 8, 1031, 4099] {
            for cols in [1usize, 3, 17] {
                // A large first value and small ones after it: the sum's
                // bits depend on its order.
                let values: Vec<f32> = (0..rows * cols)
                    .map(|i| match i % cols {
                        0 => 1e8,
                        j => 1.0 + ((i / cols + j) % 5) as f32,
                    })
                    .collect();
                let f = Features::Dense(DenseMatrix {
                    rows,
                    cols,
                    values: values.into(),
                });
                let one_by_one = (0..rows)
                    .map(|i| f.row(i).norm_sq_f64())
                    .fold(0.0f64, f64::max);
                assert_eq!(
                    largest_norm_sq(&f).to_bits(),
                    one_by_one.to_bits(),
                    "{rows} x {cols}"
                );
            }
        }
    }

    /// The one pass gives what the separate loops give: the count of
    /// non-zeros, the largest squared norm's bits and the range with the
    /// first of equal zeros, across the tasks' edges.
    #[test]
    fn the_summary_is_the_separate_loops() {
        for (rows, cols) in [
            (1usize, 1usize),
            (3, 784),
            (90, 784),
            (200, 333),
            (5000, 17),
        ] {
            let values: Vec<f32> = (0..rows * cols)
                .map(|i| match (i * 7919) % 11 {
                    0 => -0.0,
                    1 | 2 => 0.0,
                    3 => 1e6,
                    k => k as f32 * 0.37 - 2.0,
                })
                .collect();
            let f = Features::Dense(DenseMatrix {
                rows,
                cols,
                values: values.clone().into(),
            });
            let got = summary(&f);
            assert_eq!(got.nonzeros, f.nonzeros(), "{rows} x {cols}");
            let one_by_one = (0..rows)
                .map(|i| f.row(i).norm_sq_f64())
                .fold(0.0f64, f64::max);
            assert_eq!(got.largest_norm_sq.to_bits(), one_by_one.to_bits());
            let bits = got.range.map(|(lo, hi)| (lo.to_bits(), hi.to_bits()));
            assert_eq!(bits, in_order(&values, false), "{rows} x {cols}");
        }
        // Ranges that end at zero, with 0 and -0 in every lane and the
        // first zero in each position of a lane group.
        for start in 0..2 * LANES {
            for sign in [1.0f32, -1.0] {
                let values: Vec<f32> = (0..1000)
                    .map(|i| match i {
                        i if i < start => sign * (1 + i % 3) as f32,
                        i if i == start => 0.0,
                        i if i % 5 == 0 => 0.0,
                        i if i % 3 == 0 => -0.0,
                        i => sign * (i % 7) as f32,
                    })
                    .collect();
                let got = summary(&Features::Dense(DenseMatrix {
                    rows: 1,
                    cols: values.len(),
                    values: values.clone().into(),
                }));
                let bits = got.range.map(|(lo, hi)| (lo.to_bits(), hi.to_bits()));
                assert_eq!(bits, in_order(&values, false), "{start} {sign}");
                let got = summary(&Features::Dense(DenseMatrix {
                    rows: 1,
                    cols: values.len(),
                    values: values.iter().map(|v| -v).collect::<Vec<_>>().into(),
                }));
                let negated: Vec<f32> = values.iter().map(|v| -v).collect();
                let bits = got.range.map(|(lo, hi)| (lo.to_bits(), hi.to_bits()));
                assert_eq!(bits, in_order(&negated, false), "{start} {sign} negated");
            }
        }
    }

    #[test]
    fn one_pass_gives_both_radii() {
        let f = Features::Dense(DenseMatrix {
            rows: 3,
            cols: 2,
            values: vec![3.0f32, 4.0, 0.1, 0.2, -1e-3, 7.0].into(),
        });
        let by_row = |extra: f64| {
            (0..3)
                .map(|i| f.row(i).norm_sq_f64() + extra)
                .fold(0.0f64, f64::max)
                .sqrt()
        };
        assert_eq!(radius(&f, true).to_bits(), by_row(1.0).to_bits());
        assert_eq!(radius(&f, false).to_bits(), by_row(0.0).to_bits());
        assert!(radius(&f, true) > radius(&f, false));
    }
}
