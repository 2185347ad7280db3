//! Drawing the rows: each row from its own stream, blocks of rows in
//! parallel, so the output does not depend on the threads.

use rayon::prelude::*;

use super::{Density, EPS, Generator, MAX_ATTEMPTS, ROW_SALT, RowLabels, output, unit};
use crate::data::matrix::prefetch;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::shuffle::SplitMix64;

/// Per-thread scratch space.
#[derive(Default)]
pub(super) struct Workspace {
    x: Vec<f64>,
    w: Vec<f64>,
    idx: Vec<u32>,
    set: std::collections::HashSet<u32>,
}

/// The bounds a row is placed within, with the slack for rounding.
struct Bounds {
    /// The relative slack.
    delta: f64,
    /// R^2, the bound on ||x~||^2.
    r2: f64,
    /// The bias coordinate's share of ||x~||^2: 1 with the bias, else 0.
    bias_sq: f64,
    /// The features' squared radius, less the slack.
    rt2: f64,
    /// The margin, plus the slack.
    gamma_t: f64,
}

/// A block of generated rows.
#[derive(Default)]
pub(super) struct Block<F> {
    pub(super) values: Vec<F>,
    pub(super) indices: Vec<u32>,
    pub(super) labels: Vec<RowLabels>,
}

impl Generator {
    pub(super) fn row_rng(&self, i: u64) -> SplitMix64 {
        SplitMix64::new(output(self.opts.seed ^ ROW_SALT, i))
    }

    /// Generates row `i` into `values` (K of them) and, when sparse,
    /// `indices` (K, increasing). Returns its labels and the number of draws
    /// it took.
    pub(super) fn row<F: Real>(
        &self,
        i: u64,
        ws: &mut Workspace,
        indices: &mut [u32],
        values: &mut [F],
    ) -> Result<(RowLabels, u32)> {
        let k = self.k;
        let sparse = matches!(self.opts.density, Density::Sparse { .. });
        let mut rng = self.row_rng(i);
        let flip = unit(&mut rng) < self.opts.noise;
        let lim = self.bounds::<F>();
        ws.x.resize(k, 0.0);
        ws.w.resize(k, 0.0);

        for attempt in 1..=MAX_ATTEMPTS {
            let v2 = self.draw_direction(&mut rng, ws, indices, sparse, attempt);
            // The squared norm is uniform in [0, r^2].
            let rho = self.feature_radius * unit(&mut rng).sqrt();
            if lim.rt2 <= 0.0 || v2 == 0.0 {
                continue;
            }
            let scale = rho / v2.sqrt();
            for x in ws.x.iter_mut() {
                *x *= scale;
            }
            let Some(y) = self.place(ws, &lim) else {
                continue;
            };
            if self.round_and_check(values, ws, &lim, y) {
                let label = if flip { -y } else { y };
                return Ok((RowLabels { planted: y, label }, attempt));
            }
        }
        Err(self.unplaceable(i))
    }

    /// The bounds a row of precision F is placed within, tightened by the
    /// slack that keeps rounding from breaking them.
    #[inline]
    fn bounds<F: Real>(&self) -> Bounds {
        let k = self.k;
        // The relative slack that keeps rounding from breaking the bounds.
        let delta = 4.0 * F::UNIT_ROUNDOFF + 16.0 * (k as f64 + 2.0) * EPS + 1e-12;
        let r2 = self.radius * self.radius;
        let bias_sq = if self.opts.bias { 1.0 } else { 0.0 };
        let rt2 = r2 * (1.0 - delta) - bias_sq;
        let gamma_t = self.margin + self.radius * delta;
        Bounds {
            delta,
            r2,
            bias_sq,
            rt2,
            gamma_t,
        }
    }

    /// One draw of a row's direction: its indices (sparse), the planted
    /// weights at them into `ws.w`, and a point of the cube into `ws.x`.
    /// Returns ||x||^2.
    #[inline]
    fn draw_direction(
        &self,
        rng: &mut SplitMix64,
        ws: &mut Workspace,
        indices: &mut [u32],
        sparse: bool,
        attempt: u32,
    ) -> f64 {
        if sparse {
            self.draw_indices(rng, ws);
            indices.copy_from_slice(&ws.idx);
            // u's coordinates are scattered over up to 32 MB (mostly
            // cache misses): asked for now, read after x is drawn.
            if let Some(u) = &self.u {
                for &j in &ws.idx {
                    prefetch(u.as_ptr().wrapping_add(j as usize).cast(), 8);
                }
            }
        } else if attempt == 1 {
            for (j, w) in ws.w.iter_mut().enumerate() {
                *w = self.planted(j as u64);
            }
        }
        let mut v2 = 0.0;
        for x in ws.x.iter_mut() {
            *x = 2.0 * unit(rng) - 1.0;
            v2 += *x * *x;
        }
        if sparse {
            for (w, &j) in ws.w.iter_mut().zip(&ws.idx) {
                *w = self.planted(j as u64);
            }
        }
        v2
    }

    /// Moves the scaled point `ws.x` onto the margin when it is too close
    /// to the hyperplane, and inside the radius. Returns its planted label,
    /// or None when this draw cannot be placed (redraw).
    #[inline]
    fn place(&self, ws: &mut Workspace, lim: &Bounds) -> Option<i8> {
        let rt2 = lim.rt2;
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
            return None;
        }
        let wn = wn2.sqrt();
        let a = dot / wn;
        let a_min = (lim.gamma_t - yf * self.b) / wn;
        if a_min > rt {
            return None;
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
        Some(y)
    }

    /// Round, then check the stored values with half the slack: whether
    /// the row `values` keeps the margin (label `y`) and the radius.
    #[inline]
    fn round_and_check<F: Real>(
        &self,
        values: &mut [F],
        ws: &Workspace,
        lim: &Bounds,
        y: i8,
    ) -> bool {
        let (x, w) = (&ws.x, &ws.w);
        let mut m = self.b;
        let mut q = lim.bias_sq;
        for ((v, &xj), &wj) in values.iter_mut().zip(x.iter()).zip(w) {
            *v = F::from_f64(xj);
            let s = v.to_f64();
            m += wj * s;
            q += s * s;
        }
        let yf = y as f64;
        yf * m >= self.margin + self.radius * lim.delta / 2.0
            && q <= lim.r2 * (1.0 - lim.delta / 2.0)
    }

    /// The error for row `i` when no draw could be placed.
    #[cold]
    fn unplaceable(&self, i: u64) -> Error {
        let k = self.k;
        let d = self.opts.features;
        Error::Usage(format!(
            "row {} could not be placed with margin {} within radius {} in {MAX_ATTEMPTS} \
             draws: lower --planted-margin or raise --radius (a typical row reaches about {:.3e} with \
             {k} of {d} features)",
            i + 1,
            self.margin,
            self.radius,
            self.feature_radius * (k as f64 / (d + self.opts.bias as u64) as f64).sqrt()
        ))
    }

    /// K distinct indices in 0..D, sorted, into `ws.idx` (Floyd's algorithm).
    fn draw_indices(&self, rng: &mut SplitMix64, ws: &mut Workspace) {
        let d = self.opts.features;
        let k = self.k as u64;
        ws.idx.clear();
        // Each j exceeds every index taken so far, so taking j appends it.
        if k <= 256 {
            // When the k draws t are distinct, Floyd takes every one of
            // them (no j is taken, so no later t can meet one): sorting the
            // draws gives the sample. That is the common case when k^2 is
            // well below D, and it costs a sort rather than k insertions.
            let mut ahead = rng.clone();
            ws.idx.extend((d - k..d).map(|j| ahead.below(j + 1) as u32));
            ws.idx.sort_unstable();
            if ws.idx.windows(2).all(|w| w[0] != w[1]) {
                *rng = ahead;
                return;
            }
            ws.idx.clear();
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
    pub(super) fn block_rows(&self) -> usize {
        ((1usize << 20) / self.k.max(1)).clamp(1, 1 << 16)
    }

    /// Generates rows `start .. start + n` into the buffers (resized here),
    /// in parallel; returns the number of redraws.
    pub(super) fn block<F: Real>(&self, start: u64, n: usize, buf: &mut Block<F>) -> Result<u64> {
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
}
