//! Synthetic linearly separable data with a planted margin, for benchmarks
//! and tests (`perceptron gen`).
//!
//! # What is guaranteed
//!
//! Every row i has a planted label y_i in {-1, +1} with
//! `y_i * u·x~_i >= gamma` and `||x~_i|| <= R`, where u is a planted unit
//! vector, x~ = [x, 1] (just x with `bias = false`), gamma the margin and R
//! the radius. Both hold for the values *as stored* (after rounding to the
//! output precision), evaluated in f64 in any summation order: the generator
//! aims a little inside both bounds and re-checks every row after rounding.
//! The perceptron convergence theorem then bounds the mistakes of training
//! (with the same bias setting) by (R/gamma)^2.
//! With label noise P, each label is flipped with probability P *after*
//! planting; the data is then (almost surely) no longer separable.
//!
//! # The algorithm (the stream is part of the spec)
//!
//! Only IEEE-754 operations that are correctly rounded everywhere (+ - * / and
//! sqrt, in f64) are used, never library functions such as `ln` or `sin`, and
//! the generator is [`SplitMix64`], so the same options and seed give the same
//! bytes on every platform and in every version of this tool. Rows are
//! generated in parallel, each from its own stream, which does not change the
//! output. Below, `unit()` is `(next_u64() >> 11) * 2^-53`, uniform in [0, 1),
//! and D~ = D + 1 with the bias (D without).
//!
//! 1. **u**: raw_k = 2 * unit() - 1 from output k (0-based) of SplitMix64
//!    seeded with S, for k = 0..D~, except that the bias coordinate's raw_D
//!    is multiplied by 1/4; u = raw / ||raw|| (the norm summed in index
//!    order). The bias component b = u_D is the last one (0 without the
//!    bias). Each coordinate is uniform before normalising, so u is a random
//!    direction, though not exactly uniform on the sphere; the narrower bias
//!    keeps the planted hyperplane near the centre of the data, so both
//!    classes are common.
//! 2. **Row i** uses SplitMix64 seeded with output i of SplitMix64 seeded with
//!    `S ^ 0x5851f42d4c957f2d`. Its first draw decides the label noise:
//!    flip = unit() < P (drawn even when P = 0, so changing P flips labels but
//!    keeps every point). Then, until the row is accepted:
//!    - sparse: K distinct indices by Floyd's algorithm (for j = D-K .. D-1:
//!      t = below(j + 1); take t, or j if t was taken), sorted; dense: all D;
//!    - a direction v_j = 2 * unit() - 1 in index order, then a length
//!      rho = r * sqrt(unit()), and x = v * rho / ||v|| (so ||x||^2 is
//!      uniform in [0, r^2]), where r = sqrt(R^2 - 1) with the bias (R
//!      without) is the radius left for the features;
//!    - y = sign(w·x + b) (+1 for 0), where w is u restricted to the row's
//!      indices: the point's side of the planted hyperplane;
//!    - **push**: write x = a ŵ + p with ŵ = w/||w||, p ⊥ ŵ. If y*a is below
//!      a_min = (gamma' - y b)/||w||, set a = y a_min (the point moves along
//!      ŵ onto the margin); otherwise clamp |a| <= r'. If ||x||^2 > r'^2,
//!      **scale** p down to make it r'^2. Here gamma' and r' are gamma and r
//!      moved inward by a relative 4u + 16(K+2)2^-53 + 1e-12 (u the unit
//!      roundoff of the output precision) so that rounding cannot break the
//!      bounds;
//!    - round to the output precision and check both bounds in f64 with that
//!      slack; if a_min > r' (no room for the margin with these indices) or
//!      the check fails, draw again (at most 1000 times, then stop with an
//!      error saying the margin is too large for the radius).
//!
//!    The label written is y, or -y when flip.
//!
//! Points start in the ball of radius r; those too close to the hyperplane
//! are pushed onto the margin, so the data's margin is gamma (up to the
//! slack) whenever some point needed pushing, and its radius close to R
//! once there are a few hundred rows.
//!
//! # Defaults
//!
//! R = sqrt(2) with the bias (features in the unit ball), 1 without; gamma =
//! r * sqrt(K / D~) / 10: a tenth of what a typical row can reach (a row's
//! reach along u is about r * ||w|| ~ r * sqrt(K / D~)), so generation never
//! struggles; that is 0.1 for dense data with the default radius.

use crate::data::{MAX_FEATURE_INDEX, RawData};
use crate::error::{Error, Result};
use crate::train::shuffle::SplitMix64;

mod rows;
mod run;
mod text;
mod write;

pub use run::{GenParams, GenReport, GenRun};

/// SplitMix64's increment: state k of a stream seeded with S is S + k * GOLDEN.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;
/// Separates the row seeds' stream from u's.
const ROW_SALT: u64 = 0x5851_f42d_4c95_7f2d;
/// 2^-53, the unit roundoff of f64.
const EPS: f64 = 1.0 / 9_007_199_254_740_992.0;
/// Draws per row before giving up.
pub const MAX_ATTEMPTS: u32 = 1000;
/// u is kept in memory up to this many coordinates, and recomputed from its
/// stream beyond (the same values either way).
const MATERIALISE_U: u64 = 1 << 22;

/// Dense rows store every feature; sparse rows `nnz` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Density {
    Dense,
    Sparse { nnz: u64 },
}

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct GenOptions {
    pub rows: u64,
    /// D: the number of features (the bias excluded).
    pub features: u64,
    pub density: Density,
    /// gamma; `None` for the default (see the module documentation).
    pub margin: Option<f64>,
    /// R, the bound on ||x~||; `None` for the default.
    pub radius: Option<f64>,
    /// Probability of flipping each label after planting.
    pub noise: f64,
    pub seed: u64,
    /// Plant u in the augmented space x~ = [x, 1].
    pub bias: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            rows: 1000,
            features: 10,
            density: Density::Dense,
            margin: None,
            radius: None,
            noise: 0.0,
            seed: 0,
            bias: true,
        }
    }
}

/// A row's labels: the planted one and the one written (flipped by noise).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RowLabels {
    pub planted: i8,
    pub label: i8,
}

/// The text of a label in every output format.
pub fn label_text(y: i8) -> &'static str {
    if y > 0 { "+1" } else { "-1" }
}

/// A configured generator: the planted vector and the row streams.
#[derive(Clone, Debug)]
pub struct Generator {
    opts: GenOptions,
    /// Stored values per row (K; D when dense).
    k: usize,
    margin: f64,
    radius: f64,
    /// r: the radius left for the features.
    feature_radius: f64,
    /// 1 / ||raw||.
    inv_norm: f64,
    u: Option<Vec<f64>>,
    /// The bias component of u (0 without the bias).
    b: f64,
}

fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * EPS
}

/// Output k (0-based) of SplitMix64 seeded with `seed`.
fn output(seed: u64, k: u64) -> u64 {
    SplitMix64::new(seed.wrapping_add(k.wrapping_mul(GOLDEN))).next_u64()
}

/// K, the values per row, once the shape and the noise are checked.
fn values_per_row(opts: &GenOptions) -> Result<u64> {
    let usage = |m: String| Err(Error::Usage(m));
    if opts.rows == 0 {
        return usage("--rows must be at least 1".into());
    }
    if opts.features == 0 || opts.features > MAX_FEATURE_INDEX {
        return usage(format!(
            "--features must be between 1 and {MAX_FEATURE_INDEX}"
        ));
    }
    let k = match opts.density {
        Density::Dense => opts.features,
        Density::Sparse { nnz } if nnz == 0 || nnz > opts.features => {
            return usage(format!(
                "--nnz must be between 1 and --features ({}), not {nnz}",
                opts.features
            ));
        }
        Density::Sparse { nnz } => nnz,
    };
    if opts.rows.checked_mul(k).is_none() || usize::try_from(k).is_err() {
        return usage("--rows times the values per row is too large".into());
    }
    if !(0.0..=1.0).contains(&opts.noise) {
        return usage(format!(
            "--noise is a probability between 0 and 1, not {}",
            opts.noise
        ));
    }
    Ok(k)
}

/// R: the one asked for or the default, which the bias's coordinate 1
/// must leave room inside.
fn radius_of(opts: &GenOptions) -> Result<f64> {
    let radius = opts
        .radius
        .unwrap_or(if opts.bias { 2f64.sqrt() } else { 1.0 });
    if !radius.is_finite() || radius <= 0.0 {
        return Err(Error::Usage(format!(
            "--radius must be a positive number, not {radius}"
        )));
    }
    if opts.bias && radius <= 1.0 {
        return Err(Error::Usage(format!(
            "--radius {radius} is too small: with the bias, x~ = [x, 1] has norm at least \
             1, so the radius must exceed 1 (or use --no-bias)"
        )));
    }
    Ok(radius)
}

/// The margin must be positive and inside the radius.
fn check_margin(margin: f64, radius: f64) -> Result<()> {
    if !margin.is_finite() || margin <= 0.0 {
        return Err(Error::Usage(format!(
            "--planted-margin must be a positive number, not {margin}"
        )));
    }
    if margin >= radius {
        return Err(Error::Usage(format!(
            "--planted-margin {margin} must be smaller than --radius {radius}: no point can be \
             farther than the radius from the hyperplane"
        )));
    }
    Ok(())
}

/// 1 / ||u||, of the seed's raw planted vector in `dims` dimensions.
fn planted_inverse_norm(opts: &GenOptions, dims: u64, bias_at: Option<u64>) -> Result<f64> {
    let mut sum = 0.0;
    for j in 0..dims {
        let v = raw_u(opts.seed, j, bias_at);
        sum += v * v;
    }
    if sum == 0.0 {
        // Only conceivable for one dimension and an unlucky seed.
        return Err(Error::Usage(format!(
            "seed {} draws a zero planted vector; choose another --seed",
            opts.seed
        )));
    }
    Ok(1.0 / sum.sqrt())
}

/// Raw coordinate k of u; `bias_at` is the bias coordinate's index (D), whose
/// draw is scaled by [`BIAS_SCALE`].
fn raw_u(seed: u64, k: u64, bias_at: Option<u64>) -> f64 {
    let v = 2.0 * ((output(seed, k) >> 11) as f64 * EPS) - 1.0;
    if bias_at == Some(k) {
        v * BIAS_SCALE
    } else {
        v
    }
}

/// The bias coordinate's raw draw is narrowed by this factor, so that the
/// planted hyperplane passes near the centre of the data and both classes
/// are common.
const BIAS_SCALE: f64 = 0.25;

impl Generator {
    /// Checks the options and draws u.
    pub fn new(opts: GenOptions) -> Result<Self> {
        let k = values_per_row(&opts)?;
        let radius = radius_of(&opts)?;
        let feature_radius = if opts.bias {
            (radius * radius - 1.0).sqrt()
        } else {
            radius
        };
        let dims = opts.features + opts.bias as u64;
        let margin = opts
            .margin
            .unwrap_or(feature_radius * (k as f64 / dims as f64).sqrt() / 10.0);
        check_margin(margin, radius)?;
        let bias_at = opts.bias.then_some(opts.features);
        let inv_norm = planted_inverse_norm(&opts, dims, bias_at)?;
        let u = (dims <= MATERIALISE_U).then(|| {
            (0..dims)
                .map(|j| raw_u(opts.seed, j, bias_at) * inv_norm)
                .collect::<Vec<f64>>()
        });
        let mut g = Generator {
            k: k as usize,
            margin,
            radius,
            feature_radius,
            inv_norm,
            u,
            b: 0.0,
            opts,
        };
        if g.opts.bias {
            g.b = g.planted(g.opts.features);
        }
        Ok(g)
    }

    pub fn options(&self) -> &GenOptions {
        &self.opts
    }

    /// gamma.
    pub fn margin(&self) -> f64 {
        self.margin
    }

    /// R.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// Stored values per row.
    pub fn values_per_row(&self) -> usize {
        self.k
    }

    /// Coordinate `j` of u (the bias component is j = D).
    #[inline]
    pub fn planted(&self, j: u64) -> f64 {
        match &self.u {
            Some(u) => u[j as usize],
            None => {
                let bias_at = self.opts.bias.then_some(self.opts.features);
                raw_u(self.opts.seed, j, bias_at) * self.inv_norm
            }
        }
    }

    /// u as a vector: D feature coordinates, then the bias component when
    /// `bias`.
    pub fn planted_vector(&self) -> Vec<f64> {
        let dims = self.opts.features + self.opts.bias as u64;
        (0..dims).map(|j| self.planted(j)).collect()
    }
}

/// An in-memory dataset from [`Generator::generate`].
#[derive(Clone, Debug)]
pub struct Generated<F> {
    /// The data as a binary file of it would load.
    pub raw: RawData<F>,
    /// Planted and written label per row.
    pub labels: Vec<RowLabels>,
    /// Rows drawn again (in total) to meet the bounds.
    pub redraws: u64,
}

/// What [`Generator::write`] wrote.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct GenSummary {
    pub rows: u64,
    /// Features per row (the bias excluded); `features` in JSON, as in
    /// every report.
    #[serde(rename = "features")]
    pub cols: u64,
    /// Stored values (rows x features when dense); `stored_values` in JSON.
    #[serde(rename = "stored_values")]
    pub nnz: u64,
    /// Stored values that are not zero, as `info` counts them.
    pub nonzeros: u64,
    pub bytes: u64,
    /// Rows labelled +1 (after noise); `positive_rows` in JSON.
    #[serde(rename = "positive_rows")]
    pub positive: u64,
    /// Labels flipped by noise.
    pub flipped: u64,
    /// Rows drawn again (in total) to meet the bounds.
    pub redraws: u64,
    pub seconds: f64,
}

#[cfg(test)]
mod tests;
