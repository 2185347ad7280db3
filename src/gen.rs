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

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;

use crate::data::binary::{Layout, Writer};
use crate::data::csv::{csv_line, shortest_csv_line};
use crate::data::libsvm::{libsvm_line, shortest_libsvm_line};
use crate::data::write::{OutputFormat, check_line, check_shortest_line};
use crate::data::{
    CsrMatrix, DenseMatrix, Features, Format, LabelTable, MAX_FEATURE_INDEX, RawData, Row,
};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::output::{write_atomic, write_atomic_seekable};
use crate::train::shuffle::SplitMix64;

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

/// Per-thread scratch space.
#[derive(Default)]
struct Workspace {
    x: Vec<f64>,
    w: Vec<f64>,
    idx: Vec<u32>,
    set: std::collections::HashSet<u32>,
}

fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * EPS
}

/// Output k (0-based) of SplitMix64 seeded with `seed`.
fn output(seed: u64, k: u64) -> u64 {
    SplitMix64::new(seed.wrapping_add(k.wrapping_mul(GOLDEN))).next_u64()
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
        let radius = opts
            .radius
            .unwrap_or(if opts.bias { 2f64.sqrt() } else { 1.0 });
        if !radius.is_finite() || radius <= 0.0 {
            return usage(format!("--radius must be a positive number, not {radius}"));
        }
        if opts.bias && radius <= 1.0 {
            return usage(format!(
                "--radius {radius} is too small: with the bias, x~ = [x, 1] has norm at least \
                 1, so the radius must exceed 1 (or use --no-bias)"
            ));
        }
        let feature_radius = if opts.bias {
            (radius * radius - 1.0).sqrt()
        } else {
            radius
        };
        let dims = opts.features + opts.bias as u64;
        let margin = opts
            .margin
            .unwrap_or(feature_radius * (k as f64 / dims as f64).sqrt() / 10.0);
        if !margin.is_finite() || margin <= 0.0 {
            return usage(format!(
                "--planted-margin must be a positive number, not {margin}"
            ));
        }
        if margin >= radius {
            return usage(format!(
                "--planted-margin {margin} must be smaller than --radius {radius}: no point can be \
                 farther than the radius from the hyperplane"
            ));
        }
        let mut sum = 0.0;
        let bias_at = opts.bias.then_some(opts.features);
        for j in 0..dims {
            let v = raw_u(opts.seed, j, bias_at);
            sum += v * v;
        }
        if sum == 0.0 {
            // Only conceivable for one dimension and an unlucky seed.
            return usage(format!(
                "seed {} draws a zero planted vector; choose another --seed",
                opts.seed
            ));
        }
        let inv_norm = 1.0 / sum.sqrt();
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

    fn row_rng(&self, i: u64) -> SplitMix64 {
        SplitMix64::new(output(self.opts.seed ^ ROW_SALT, i))
    }

    /// Generates row `i` into `values` (K of them) and, when sparse,
    /// `indices` (K, increasing). Returns its labels and the number of draws
    /// it took.
    fn row<F: Real>(
        &self,
        i: u64,
        ws: &mut Workspace,
        indices: &mut [u32],
        values: &mut [F],
    ) -> Result<(RowLabels, u32)> {
        let k = self.k;
        let d = self.opts.features;
        let sparse = matches!(self.opts.density, Density::Sparse { .. });
        let mut rng = self.row_rng(i);
        let flip = unit(&mut rng) < self.opts.noise;

        // The relative slack that keeps rounding from breaking the bounds.
        let delta = 4.0 * F::UNIT_ROUNDOFF + 16.0 * (k as f64 + 2.0) * EPS + 1e-12;
        let r2 = self.radius * self.radius;
        let bias_sq = if self.opts.bias { 1.0 } else { 0.0 };
        let rt2 = r2 * (1.0 - delta) - bias_sq;
        let gamma_t = self.margin + self.radius * delta;
        ws.x.resize(k, 0.0);
        ws.w.resize(k, 0.0);

        for attempt in 1..=MAX_ATTEMPTS {
            if sparse {
                self.draw_indices(&mut rng, ws);
                indices.copy_from_slice(&ws.idx);
                for (w, &j) in ws.w.iter_mut().zip(&ws.idx) {
                    *w = self.planted(j as u64);
                }
            } else if attempt == 1 {
                for (j, w) in ws.w.iter_mut().enumerate() {
                    *w = self.planted(j as u64);
                }
            }
            let mut v2 = 0.0;
            for x in ws.x.iter_mut() {
                *x = 2.0 * unit(&mut rng) - 1.0;
                v2 += *x * *x;
            }
            // The squared norm is uniform in [0, r^2].
            let rho = self.feature_radius * unit(&mut rng).sqrt();
            if rt2 <= 0.0 || v2 == 0.0 {
                continue;
            }
            let scale = rho / v2.sqrt();
            for x in ws.x.iter_mut() {
                *x *= scale;
            }
            let rt = rt2.sqrt();
            let (x, w) = (&mut ws.x, &ws.w);
            let mut dot = 0.0;
            let mut wn2 = 0.0;
            for (&xj, &wj) in x.iter().zip(w) {
                dot += wj * xj;
                wn2 += wj * wj;
            }
            let y: i8 = if dot + self.b >= 0.0 { 1 } else { -1 };
            let yf = y as f64;
            if wn2 == 0.0 {
                continue;
            }
            let wn = wn2.sqrt();
            let a = dot / wn;
            let a_min = (gamma_t - yf * self.b) / wn;
            if a_min > rt {
                continue;
            }
            let target = if yf * a < a_min {
                yf * a_min
            } else {
                a.clamp(-rt, rt)
            };
            let mut perp2 = 0.0;
            for (&xj, &wj) in x.iter().zip(w) {
                let p = xj - a * (wj / wn);
                perp2 += p * p;
            }
            let budget = (rt2 - target * target).max(0.0);
            let shrink = if target * target + perp2 > rt2 && perp2 > 0.0 {
                (budget / perp2).sqrt().min(1.0)
            } else {
                1.0
            };
            if target != a || shrink != 1.0 {
                for (xj, &wj) in x.iter_mut().zip(w) {
                    let along = wj / wn;
                    *xj = target * along + (*xj - a * along) * shrink;
                }
            }
            // Round, then check the stored values with half the slack.
            let mut m = self.b;
            let mut q = bias_sq;
            for ((v, &xj), &wj) in values.iter_mut().zip(x.iter()).zip(w) {
                *v = F::from_f64(xj);
                let s = v.to_f64();
                m += wj * s;
                q += s * s;
            }
            if yf * m >= self.margin + self.radius * delta / 2.0 && q <= r2 * (1.0 - delta / 2.0) {
                let label = if flip { -y } else { y };
                return Ok((RowLabels { planted: y, label }, attempt));
            }
        }
        Err(Error::Usage(format!(
            "row {} could not be placed with margin {} within radius {} in {MAX_ATTEMPTS} \
             draws: lower --planted-margin or raise --radius (a typical row reaches about {:.3e} with \
             {k} of {d} features)",
            i + 1,
            self.margin,
            self.radius,
            self.feature_radius * (k as f64 / (d + self.opts.bias as u64) as f64).sqrt()
        )))
    }

    /// K distinct indices in 0..D, sorted, into `ws.idx` (Floyd's algorithm).
    fn draw_indices(&self, rng: &mut SplitMix64, ws: &mut Workspace) {
        let d = self.opts.features;
        let k = self.k as u64;
        ws.idx.clear();
        // Each j exceeds every index taken so far, so taking j appends it.
        if k <= 256 {
            // Kept sorted as it grows: a binary search tells whether t was
            // taken and where it goes.
            for j in d - k..d {
                let t = rng.below(j + 1) as u32;
                match ws.idx.binary_search(&t) {
                    Ok(_) => ws.idx.push(j as u32),
                    Err(at) => ws.idx.insert(at, t),
                }
            }
        } else {
            ws.set.clear();
            for j in d - k..d {
                let t = rng.below(j + 1) as u32;
                let pick = if ws.set.insert(t) {
                    t
                } else {
                    ws.set.insert(j as u32);
                    j as u32
                };
                ws.idx.push(pick);
            }
            ws.idx.sort_unstable();
        }
    }

    /// Rows per block: about a million values, so memory stays bounded.
    fn block_rows(&self) -> usize {
        ((1usize << 20) / self.k.max(1)).clamp(1, 1 << 16)
    }

    /// Generates rows `start .. start + n` into the buffers (resized here),
    /// in parallel; returns the number of redraws.
    fn block<F: Real>(&self, start: u64, n: usize, buf: &mut Block<F>) -> Result<u64> {
        let k = self.k;
        buf.values.resize(n * k, F::ZERO);
        buf.labels.resize(n, RowLabels::default());
        let redraws = std::sync::atomic::AtomicU64::new(0);
        let count = |(labels, attempts): (RowLabels, u32), out: &mut RowLabels| {
            *out = labels;
            redraws.fetch_add(
                u64::from(attempts - 1),
                std::sync::atomic::Ordering::Relaxed,
            );
        };
        if matches!(self.opts.density, Density::Sparse { .. }) {
            buf.indices.resize(n * k, 0);
            buf.values
                .par_chunks_mut(k)
                .zip(buf.indices.par_chunks_mut(k))
                .zip(buf.labels.par_iter_mut())
                .enumerate()
                .try_for_each_init(Workspace::default, |ws, (j, ((v, ix), l))| {
                    self.row(start + j as u64, ws, ix, v).map(|r| count(r, l))
                })?;
        } else {
            buf.indices.clear();
            buf.values
                .par_chunks_mut(k)
                .zip(buf.labels.par_iter_mut())
                .enumerate()
                .try_for_each_init(Workspace::default, |ws, (j, (v, l))| {
                    self.row(start + j as u64, ws, &mut [], v)
                        .map(|r| count(r, l))
                })?;
        }
        Ok(redraws.into_inner())
    }

    /// Generates the whole dataset in memory, with the planted labels.
    pub fn generate<F: Real>(&self) -> Result<Generated<F>> {
        let rows = usize::try_from(self.opts.rows)
            .map_err(|_| Error::Usage("too many rows for memory".into()))?;
        let mut buf = Block::default();
        let mut values = Vec::new();
        let mut indices = Vec::new();
        let mut labels = Vec::with_capacity(rows);
        let mut redraws = 0;
        let step = self.block_rows();
        for start in (0..rows).step_by(step) {
            let n = step.min(rows - start);
            redraws += self.block::<F>(start as u64, n, &mut buf)?;
            values.extend_from_slice(&buf.values);
            indices.extend_from_slice(&buf.indices);
            labels.extend_from_slice(&buf.labels);
        }
        let cols = self.opts.features as usize;
        let features = match self.opts.density {
            Density::Dense => Features::Dense(DenseMatrix {
                rows,
                cols,
                values: values.into(),
            }),
            Density::Sparse { .. } => Features::Sparse(CsrMatrix {
                cols,
                row_ptr: (0..=rows).map(|i| i * self.k).collect(),
                indices: indices.into(),
                values: values.into(),
            }),
        };
        let first = labels[0].label;
        let class_ids: Vec<u32> = labels.iter().map(|l| (l.label != first) as u32).collect();
        let others = class_ids.iter().filter(|&&c| c == 1).count() as u64;
        let mut texts = vec![label_text(first).to_owned()];
        let mut counts = vec![rows as u64 - others];
        if others > 0 {
            texts.push(label_text(-first).to_owned());
            counts.push(others);
        }
        let table = LabelTable::from_parts(texts, &counts)
            .map_err(|_| Error::Usage("internal error: duplicate labels".into()))?;
        Ok(Generated {
            raw: RawData {
                features,
                class_ids,
                table,
                format: Format::Binary,
                csv: None,
            },
            labels,
            redraws,
        })
    }

    /// Streams the dataset to `path` (atomically: a temporary file renamed
    /// at the end) in `format`, a block of rows at a time.
    pub fn write<F: Real>(&self, path: &Path, format: OutputFormat) -> Result<GenSummary> {
        self.check_fits::<F>(path, format)?;
        let t0 = Instant::now();
        let mut failure: Option<Error> = None;
        let mut summary = GenSummary {
            rows: self.opts.rows,
            cols: self.opts.features,
            nnz: self.opts.rows * self.k as u64,
            ..Default::default()
        };
        let result = match format {
            OutputFormat::Binary => write_atomic_seekable(path, |w| {
                self.stream_binary::<F>(w, &mut summary)
                    .map_err(|e| stash(e, &mut failure))
            }),
            OutputFormat::Csv | OutputFormat::Libsvm => write_atomic(path, |w| {
                self.stream_text::<F>(path, w, format == OutputFormat::Csv, &mut summary)
                    .map_err(|e| stash(e, &mut failure))
            }),
        };
        if let Some(e) = failure {
            return Err(e);
        }
        result?;
        summary.seconds = t0.elapsed().as_secs_f64();
        Ok(summary)
    }

    /// Refuses, before anything is allocated or written, output whose lines
    /// this tool could not read back and blocks of rows that do not fit in
    /// the memory available (one row of 2*10^9 features is 8 GB in f32, and
    /// its scratch space twice that in f64).
    fn check_fits<F: Real>(&self, path: &Path, format: OutputFormat) -> Result<()> {
        let cols = self.opts.features as usize;
        let k = self.k;
        // Labels are `+1` or `-1`.
        match format {
            OutputFormat::Csv => check_shortest_line(
                path,
                format,
                shortest_csv_line(2, cols),
                &format!("{cols} features, each written"),
            )?,
            OutputFormat::Libsvm => check_shortest_line(
                path,
                format,
                shortest_libsvm_line(2, k),
                &format!("{k} values per row"),
            )?,
            OutputFormat::Binary => {}
        }
        let needed = self.block_bytes::<F>(format);
        crate::memory::check(needed).map_err(|s| {
            Error::data(
                path,
                format!(
                    "generating rows of {} (a block of rows and the generator's scratch \
                     space) {s}; use fewer --features{}",
                    crate::text::count(cols, "feature"),
                    if matches!(self.opts.density, Density::Dense) {
                        " or --density sparse"
                    } else {
                        " or a smaller --nnz"
                    }
                ),
            )
        })
    }

    /// What writing holds at once: a block of values (and indices), each
    /// busy thread's f64 scratch of the row (x and w), the planted vector
    /// when kept, and for text the block's lines.
    fn block_bytes<F: Real>(&self, format: OutputFormat) -> u64 {
        let k = self.k as u64;
        let rows = self.block_rows() as u64;
        let sparse = matches!(self.opts.density, Density::Sparse { .. });
        let per_value = std::mem::size_of::<F>() as u64 + if sparse { 4 } else { 0 };
        let threads = (rayon::current_num_threads() as u64).min(rows);
        let dims = self.opts.features + self.opts.bias as u64;
        let planted = if dims <= MATERIALISE_U { dims * 8 } else { 0 };
        // The longest text of a value in the shortest form: `-1.2345678e-12`
        // in f32, 24 characters in f64.
        let chars = if F::PRECISION == crate::float::Precision::F32 {
            16
        } else {
            26
        };
        let line = match format {
            OutputFormat::Binary => 0,
            OutputFormat::Csv => (self.opts.features * 2).saturating_add(k * chars),
            OutputFormat::Libsvm => k.saturating_mul(chars + 12),
        };
        rows.saturating_mul(k.saturating_mul(per_value).saturating_add(line))
            .saturating_add(threads.saturating_mul(k.saturating_mul(16)))
            .saturating_add(planted)
    }

    fn blocks<F: Real>(
        &self,
        summary: &mut GenSummary,
        mut each: impl FnMut(u64, &Block<F>) -> Result<()>,
    ) -> Result<()> {
        let mut buf = Block::default();
        let step = self.block_rows() as u64;
        let mut start = 0;
        while start < self.opts.rows {
            let n = step.min(self.opts.rows - start);
            summary.redraws += self.block::<F>(start, n as usize, &mut buf)?;
            summary.nonzeros += buf.values.iter().filter(|&&v| v != F::ZERO).count() as u64;
            for l in &buf.labels {
                if l.label > 0 {
                    summary.positive += 1;
                }
                if l.label != l.planted {
                    summary.flipped += 1;
                }
            }
            each(start, &buf)?;
            start += n;
        }
        Ok(())
    }

    fn stream_binary<F: Real>(
        &self,
        w: &mut dyn crate::output::WriteSeek,
        summary: &mut GenSummary,
    ) -> Result<()> {
        let layout = match self.opts.density {
            Density::Dense => Layout::Dense,
            Density::Sparse { .. } => Layout::Csr,
        };
        let io = |e: std::io::Error| Error::Io {
            path: Default::default(),
            action: "cannot write output",
            source: e,
        };
        let mut out = Writer::new(
            w,
            layout,
            F::PRECISION,
            summary.rows,
            summary.cols,
            summary.nnz,
        )
        .map_err(io)?;
        let mut first: Option<i8> = None;
        let mut other = false;
        let mut ids = Vec::new();
        let k = self.k as u64;
        self.blocks::<F>(summary, |start, buf| {
            let f = *first.get_or_insert(buf.labels[0].label);
            ids.clear();
            ids.extend(buf.labels.iter().map(|l| (l.label != f) as u32));
            other |= ids.contains(&1);
            out.class_ids(&ids).map_err(io)?;
            out.values(&buf.values).map_err(io)?;
            if layout == Layout::Csr {
                out.indices(&buf.indices).map_err(io)?;
                let n = buf.labels.len() as u64;
                out.row_ends((start + 1..=start + n).map(|i| i * k))
                    .map_err(io)?;
            }
            Ok(())
        })?;
        let f = first.unwrap_or(1);
        let mut labels = vec![label_text(f)];
        if other {
            labels.push(label_text(-f));
        }
        let (_, bytes) = out.finish(&labels).map_err(io)?;
        summary.bytes = bytes;
        Ok(())
    }

    fn stream_text<F: Real>(
        &self,
        path: &Path,
        w: &mut dyn Write,
        csv: bool,
        summary: &mut GenSummary,
    ) -> Result<()> {
        const LINES: usize = 256;
        let cols = self.opts.features as usize;
        let k = self.k;
        let mut bytes = 0u64;
        self.blocks::<F>(summary, |start, buf| {
            let n = buf.labels.len();
            let chunks: Vec<Vec<u8>> = (0..n.div_ceil(LINES))
                .into_par_iter()
                .map(|c| {
                    let mut text = Vec::new();
                    for j in c * LINES..((c + 1) * LINES).min(n) {
                        let v = &buf.values[j * k..(j + 1) * k];
                        let row = if buf.indices.is_empty() {
                            Row::Dense(v)
                        } else {
                            Row::Sparse(&buf.indices[j * k..(j + 1) * k], v)
                        };
                        let label = label_text(buf.labels[j].label);
                        let len = if csv {
                            csv_line(&mut text, label, row, cols)
                        } else {
                            libsvm_line(&mut text, label, row)
                        };
                        check_line(path, start + j as u64 + 1, len)?;
                    }
                    Ok(text)
                })
                .collect::<Result<_>>()?;
            for c in &chunks {
                w.write_all(c).map_err(|e| Error::Io {
                    path: Default::default(),
                    action: "cannot write output",
                    source: e,
                })?;
                bytes += c.len() as u64;
            }
            Ok(())
        })?;
        summary.bytes = bytes;
        Ok(())
    }
}

/// Keeps the real error for after the atomic write is abandoned.
fn stash(e: Error, slot: &mut Option<Error>) -> std::io::Error {
    let io = match &e {
        Error::Io { source, .. } => std::io::Error::new(source.kind(), source.to_string()),
        _ => std::io::Error::other(e.to_string()),
    };
    if !matches!(e, Error::Io { .. }) {
        *slot = Some(e);
    }
    io
}

/// A block of generated rows.
#[derive(Default)]
struct Block<F> {
    values: Vec<F>,
    indices: Vec<u32>,
    labels: Vec<RowLabels>,
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
