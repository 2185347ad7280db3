//! Dataset statistics shown by `info` and used by the convergence report.

use crate::float::Real;

use super::matrix::{Features, Row};

/// The radius D = max_i ||x~_i||, with the bias feature 1 included when `bias`
/// (rows in parallel: a maximum does not depend on the order).
pub fn radius<F: Real>(features: &Features<F>, bias: bool) -> f64 {
    radius_from(largest_norm_sq(features), bias)
}

/// max_i ||x_i||^2 (in f64), without the bias feature: one pass serves
/// the radius with and without it ([`radius_from`]).
pub fn largest_norm_sq<F: Real>(features: &Features<F>) -> f64 {
    use rayon::prelude::*;
    if let Features::Dense(m) = features
        && m.cols > 0
    {
        return m
            .values
            .par_chunks(m.cols * ROWS_TOGETHER)
            .with_min_len(1024 / ROWS_TOGETHER)
            .map(|rows| largest_in_rows(rows, m.cols))
            .reduce(|| 0.0f64, f64::max);
    }
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

/// The radius from [`largest_norm_sq`]: the same bits as taking the
/// maximum over rows of ||x_i||^2 + 1, because rounding is monotone, so
/// the largest rounded sum is the rounded sum of the largest.
pub fn radius_from(largest_norm_sq: f64, bias: bool) -> f64 {
    let extra = if bias { 1.0 } else { 0.0 };
    (largest_norm_sq + extra).sqrt()
}

/// (min, max) over every feature value, implicit zeros included (None for
/// no values at all). Chunks in parallel, joined in order: among equal
/// values (0 and -0) the first in the data is the one reported, as a loop
/// over the values would.
pub fn value_range<F: Real>(features: &Features<F>) -> Option<(F, F)> {
    use rayon::prelude::*;
    let (stored, all): (&[F], usize) = match features {
        Features::Dense(m) => (&m.values, m.values.len()),
        Features::Sparse(m) => (&m.values, m.rows().saturating_mul(m.cols)),
    };
    let join = |a: Option<(F, F)>, b: Option<(F, F)>| match (a, b) {
        (Some(a), Some(b)) => Some(wider(a, b)),
        (a, b) => a.or(b),
    };
    let mut range = stored
        .par_chunks(1 << 16)
        .map(|chunk| {
            let (&first, rest) = chunk.split_first()?;
            Some(rest.iter().fold((first, first), |r, &v| wider(r, (v, v))))
        })
        .reduce(|| None, join);
    if stored.len() < all {
        range = join(range, Some((F::ZERO, F::ZERO)));
    }
    range
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
