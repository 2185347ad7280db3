//! Plane geometry for the pictures: view ranges, lines clipped to a view,
//! the margin band, and the projection of many features onto two axes.
//!
//! Everything here is for drawing, in f64; no training decision uses it.

use crate::data::Features;
use crate::float::Real;

/// A closed interval of one axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub lo: f64,
    pub hi: f64,
}

impl Span {
    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }

    pub fn mid(&self) -> f64 {
        0.5 * (self.lo + self.hi)
    }

    /// The smallest span holding every value (and `extra` ones), widened by
    /// `pad` of its width on each side; never empty.
    pub fn covering(values: impl IntoIterator<Item = f64>, pad: f64) -> Span {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        if !lo.is_finite() {
            return Span { lo: -1.0, hi: 1.0 };
        }
        // Beyond REACH the padded axis, or its width, would overflow to
        // infinity, and an axis without finite ends has no ticks (the
        // drawing library looks for them forever): values further out are
        // drawn at the edge.
        let (lo, hi) = (lo.clamp(-REACH, REACH), hi.clamp(-REACH, REACH));
        let w = hi - lo;
        let w = if w > 0.0 { w } else { lo.abs().max(1.0) * 0.5 };
        Span {
            lo: (lo - pad * w).max(-2.0 * REACH),
            hi: (hi + pad * w).min(2.0 * REACH),
        }
    }

    /// The span widened about its middle to `width` (never narrowed), to
    /// at most the widest finite axis.
    pub fn widened_to(&self, width: f64) -> Span {
        let width = width.min(4.0 * REACH);
        if width <= self.width() {
            return *self;
        }
        let m = self.mid();
        Span {
            lo: m - 0.5 * width,
            hi: m + 0.5 * width,
        }
    }
}

/// The largest magnitude an axis shows data at: every span lies within
/// twice this, so its width (at most four times it) and the ticks'
/// arithmetic stay finite.
pub const REACH: f64 = f64::MAX / 64.0;

/// Widens one of the two spans so that one unit is the same number of pixels
/// on both axes (`pixels` = plotting area width and height): angles and the
/// normal vector then look as they are.
pub fn equal_aspect(x: Span, y: Span, pixels: (u32, u32)) -> (Span, Span) {
    let (pw, ph) = (pixels.0.max(1) as f64, pixels.1.max(1) as f64);
    let per_pixel = (x.width() / pw).max(y.width() / ph);
    (x.widened_to(per_pixel * pw), y.widened_to(per_pixel * ph))
}

/// The line a·x + b·y + c = 0 in plot coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    pub a: f64,
    pub b: f64,
    pub c: f64,
}

impl Line {
    pub fn value(&self, p: (f64, f64)) -> f64 {
        self.a * p.0 + self.b * p.1 + self.c
    }

    pub fn normal_length(&self) -> f64 {
        self.a.hypot(self.b)
    }

    /// The same direction shifted so that a·x + b·y + c = `level`.
    pub fn at_level(&self, level: f64) -> Line {
        Line {
            c: self.c - level,
            ..*self
        }
    }

    /// The point of the line closest to `p`, or None for a degenerate line.
    pub fn foot(&self, p: (f64, f64)) -> Option<(f64, f64)> {
        let n2 = self.a * self.a + self.b * self.b;
        if n2 == 0.0 || !n2.is_finite() {
            return None;
        }
        let t = self.value(p) / n2;
        Some((p.0 - t * self.a, p.1 - t * self.b))
    }

    /// The part of the line inside the view, or None when it misses it.
    pub fn clip(&self, x: Span, y: Span) -> Option<((f64, f64), (f64, f64))> {
        let corners = [(x.lo, y.lo), (x.hi, y.lo), (x.hi, y.hi), (x.lo, y.hi)];
        let mut hits: Vec<(f64, f64)> = Vec::with_capacity(4);
        for k in 0..4 {
            let (p, q) = (corners[k], corners[(k + 1) % 4]);
            let (vp, vq) = (self.value(p), self.value(q));
            if vp == 0.0 {
                hits.push(p);
            }
            if (vp < 0.0 && vq > 0.0) || (vp > 0.0 && vq < 0.0) {
                let t = vp / (vp - vq);
                hits.push((p.0 + t * (q.0 - p.0), p.1 + t * (q.1 - p.1)));
            }
        }
        // The two hits farthest apart (a line through a corner hits it twice).
        let mut best: Option<((f64, f64), (f64, f64))> = None;
        let mut best_d = -1.0;
        for i in 0..hits.len() {
            for j in i + 1..hits.len() {
                let d = (hits[i].0 - hits[j].0).hypot(hits[i].1 - hits[j].1);
                if d > best_d {
                    best_d = d;
                    best = Some((hits[i], hits[j]));
                }
            }
        }
        best.filter(|_| best_d > 0.0)
    }
}

/// The part of the view where `lo <= line.value(p) <= hi`, as a polygon
/// (empty when the band misses the view).
pub fn band(line: &Line, lo: f64, hi: f64, x: Span, y: Span) -> Vec<(f64, f64)> {
    let mut poly = vec![(x.lo, y.lo), (x.hi, y.lo), (x.hi, y.hi), (x.lo, y.hi)];
    // Keep value >= lo, then -value >= -hi.
    poly = clip_half_plane(&poly, |p| line.value(p) - lo);
    clip_half_plane(&poly, |p| hi - line.value(p))
}

/// Sutherland-Hodgman: the part of a convex polygon where f >= 0 (f affine).
fn clip_half_plane(poly: &[(f64, f64)], f: impl Fn((f64, f64)) -> f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(poly.len() + 2);
    for k in 0..poly.len() {
        let (p, q) = (poly[k], poly[(k + 1) % poly.len()]);
        let (fp, fq) = (f(p), f(q));
        if fp >= 0.0 {
            out.push(p);
        }
        if (fp >= 0.0) != (fq >= 0.0) {
            let t = fp / (fp - fq);
            out.push((p.0 + t * (q.0 - p.0), p.1 + t * (q.1 - p.1)));
        }
    }
    out
}

/// The unit vector of `v`, or None for a zero or non-finite one.
pub fn unit(v: &[f64]) -> Option<Vec<f64>> {
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    (n > 0.0 && n.is_finite()).then(|| v.iter().map(|x| x / n).collect())
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `features`' rows times `v` (v has `cols` entries), in f64.
pub fn row_dots<F: Real>(features: &Features<F>, v: &[f64]) -> Vec<f64> {
    (0..features.rows())
        .map(|i| {
            let mut s = 0.0;
            features.row(i).for_each(|k, x| s += v[k] * x.to_f64());
            s
        })
        .collect()
}

/// The first principal direction of the rows after removing their
/// component along `away` (a unit vector, or none): the direction, orthogonal
/// to `away`, along which the centred data varies most. Power iteration in
/// f64 from a fixed start, so the picture is reproducible; the sign is
/// chosen so that the largest component is positive. None when the data has
/// no variance left.
/// Vectors have `dim` entries (at least the data's columns).
pub fn principal_direction<F: Real>(
    features: &Features<F>,
    dim: usize,
    away: Option<&[f64]>,
) -> Option<Vec<f64>> {
    let (n, d) = (features.rows(), dim.max(features.cols()));
    if n == 0 || d == 0 {
        return None;
    }
    let mut mean = vec![0.0; d];
    for i in 0..n {
        features.row(i).for_each(|k, x| mean[k] += x.to_f64());
    }
    mean.iter_mut().for_each(|m| *m /= n as f64);
    let deflate = |v: &mut Vec<f64>| {
        if let Some(u) = away {
            let t = dot(v, u);
            v.iter_mut().zip(u).for_each(|(x, ui)| *x -= t * ui);
        }
    };
    // A fixed, generic start: not orthogonal to any axis-aligned direction.
    let mut v: Vec<f64> = (0..d)
        .map(|k| 1.0 + ((k as f64 + 1.0) * 0.618_033_988_75).fract())
        .collect();
    deflate(&mut v);
    let mut v = unit(&v)?;
    let mut lambda = 0.0;
    for _ in 0..1000 {
        // next = P C P v with C the covariance of the rows.
        let proj = row_dots(features, &v);
        let mean_dot = dot(&mean, &v);
        let mut next = vec![0.0; d];
        let mut weight_sum = 0.0;
        for (i, p) in proj.iter().enumerate() {
            let t = p - mean_dot;
            weight_sum += t;
            features.row(i).for_each(|k, x| next[k] += t * x.to_f64());
        }
        next.iter_mut()
            .zip(&mean)
            .for_each(|(x, m)| *x = (*x - weight_sum * m) / n as f64);
        deflate(&mut next);
        let norm = next.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm <= 1e-300 || !norm.is_finite() {
            return None;
        }
        next.iter_mut().for_each(|x| *x /= norm);
        let change = next
            .iter()
            .zip(&v)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        v = next;
        let converged = change < 1e-12 || (norm - lambda).abs() <= 1e-13 * norm;
        lambda = norm;
        if converged {
            break;
        }
    }
    let big = v
        .iter()
        .copied()
        .fold(0.0f64, |m, x| if x.abs() > m.abs() { x } else { m });
    if big < 0.0 {
        v.iter_mut().for_each(|x| *x = -*x);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DenseMatrix;

    #[test]
    fn clipping_a_line_to_the_view() {
        let (x, y) = (Span { lo: 0.0, hi: 4.0 }, Span { lo: 0.0, hi: 2.0 });
        // x - y = 0 crosses from (0,0) to (2,2).
        let l = Line {
            a: 1.0,
            b: -1.0,
            c: 0.0,
        };
        let (p, q) = l.clip(x, y).unwrap();
        let mut ends = [p, q];
        ends.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(ends, [(0.0, 0.0), (2.0, 2.0)]);
        // x = 10 misses the view.
        let miss = Line {
            a: 1.0,
            b: 0.0,
            c: -10.0,
        };
        assert!(miss.clip(x, y).is_none());
        assert!(l.foot((2.0, 0.0)).unwrap() == (1.0, 1.0));
    }

    #[test]
    fn the_band_is_the_strip_inside_the_view() {
        let (x, y) = (Span { lo: -1.0, hi: 1.0 }, Span { lo: -1.0, hi: 1.0 });
        let l = Line {
            a: 1.0,
            b: 0.0,
            c: 0.0,
        };
        let poly = band(&l, -0.5, 0.5, x, y);
        let area: f64 = (0..poly.len())
            .map(|k| {
                let (p, q) = (poly[k], poly[(k + 1) % poly.len()]);
                p.0 * q.1 - q.0 * p.1
            })
            .sum::<f64>()
            .abs()
            / 2.0;
        assert!((area - 2.0).abs() < 1e-12, "{area}");
        assert!(band(&l, 3.0, 4.0, x, y).is_empty());
    }

    #[test]
    fn equal_aspect_widens_the_short_side() {
        let (x, y) = equal_aspect(
            Span { lo: 0.0, hi: 1.0 },
            Span { lo: 0.0, hi: 1.0 },
            (200, 100),
        );
        assert_eq!((x.width(), y.width()), (2.0, 1.0));
        assert_eq!(x.mid(), 0.5);
    }

    #[test]
    fn principal_direction_orthogonal_to_a_given_one() {
        // Points spread along (1,1,0) mostly, then along z.
        let mut values = Vec::new();
        for i in 0..20 {
            let t = i as f64 - 10.0;
            values.extend([t, t, 0.1 * (i % 3) as f64]);
        }
        let f = Features::Dense(DenseMatrix {
            rows: 20,
            cols: 3,
            values: values.into(),
        });
        let v = principal_direction(&f, 3, None).unwrap();
        let s = 0.5f64.sqrt();
        assert!((v[0] - s).abs() < 1e-3 && (v[1] - s).abs() < 1e-3, "{v:?}");
        let away = [s, s, 0.0];
        let v = principal_direction(&f, 3, Some(&away)).unwrap();
        assert!(dot(&v, &away).abs() < 1e-9, "{v:?}");
        assert!((v[2].abs() - 1.0).abs() < 1e-9, "{v:?}");
    }
}
