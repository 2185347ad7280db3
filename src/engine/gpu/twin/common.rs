//! Twin of shaders/common.wgsl: a row's sums turned into its normalised
//! slack, the one number every margin kernel writes.

use crate::engine::certify::Bound;
use crate::float::Real;

/// common.wgsl `write_slack` (the arithmetic lives in [`Bound::slack`]).
pub fn write_slack<F: Real>(
    bound: &Bound<F>,
    positive: bool,
    s: F,
    t: F,
    m: u32,
    norm: f32,
) -> f32 {
    bound.slack(
        if positive { 1 } else { -1 },
        s,
        t,
        F::from_f64(m as f64),
        F::from_f64(norm as f64),
    )
}
