//! Dataset statistics shown by `info` and used by the convergence report.

use crate::float::Real;

use super::matrix::Features;

/// The radius D = max_i ||x~_i||, with the bias feature 1 included when `bias`
/// (rows in parallel: a maximum does not depend on the order).
pub fn radius<F: Real>(features: &Features<F>, bias: bool) -> f64 {
    use rayon::prelude::*;
    let extra = if bias { 1.0 } else { 0.0 };
    (0..features.rows())
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| features.row(i).norm_sq_f64() + extra)
        .reduce(|| 0.0f64, f64::max)
        .sqrt()
}
