//! Twin of shaders/common.wgsl: a row's sums turned into its normalised
//! slack, the one number every margin kernel writes.

use crate::data::Dataset;
use crate::engine::Pass;
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

/// What the margin kernels bind for one pass: the pass (rows, weights,
/// heads), the bound, the row norms and the labels.
pub struct MarginBindings<'a, F: Real> {
    pub pass: &'a Pass<'a, F>,
    pub bound: &'a Bound<F>,
    pub data: &'a Dataset<F>,
    pub norms: &'a [f32],
    pub lanes: u32,
    pub bias: bool,
    /// Weights per head: the columns plus the bias.
    pub stride: usize,
}

impl<F: Real> MarginBindings<'_, F> {
    /// The kernels' label bit for (row, head): one-vs-rest's +1 is the
    /// head's own class.
    pub fn positive(&self, row: usize, head: usize) -> bool {
        self.data.label_for(head, self.pass.heads, row) > 0
    }
}
