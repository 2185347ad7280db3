//! What the perceptron convergence theorem says about a finished run.
//!
//! If ||x~_i|| <= D for every row and a unit vector u separates the data with
//! margin gamma = min_i y_i u·x~_i > 0, the perceptron makes at most
//! (D/gamma)^2 mistakes (Novikoff 1962). The learned w~, normalised, is such a
//! u once training converged, so a converged run can check M <= (D/gamma)^2.
//! These figures are reports, computed in f64; decisions never use them.

use rayon::prelude::*;

use crate::data::Dataset;
use crate::engine::reference;
use crate::float::Real;

/// Relative allowance for the f64 rounding of the reported bound.
pub const BOUND_SLACK: f64 = 1e-9;

/// The theorem's quantities for a model on its training data.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Theory {
    /// D = max_i ||x~_i|| (bias feature included).
    pub radius: f64,
    /// gamma = min_i y_i w~·x~_i / ||w~||, when every row is classified
    /// correctly (otherwise w~ separates nothing and there is no bound).
    pub margin: Option<f64>,
    /// (D / gamma)^2.
    pub mistake_bound: Option<f64>,
    /// Rows the model predicts correctly (s > 0 predicts +1, else -1).
    pub correct: usize,
    pub rows: usize,
}

impl Theory {
    pub fn accuracy(&self) -> f64 {
        if self.rows == 0 {
            0.0
        } else {
            self.correct as f64 / self.rows as f64
        }
    }

    /// The bound for the rule y·s <= τ (`--margin`): Novikoff's argument
    /// with ||w||² growing by at most D² + 2τ per update gives
    /// M <= (D² + 2τ)/gamma² (no bound when D² + 2τ <= 0).
    pub fn with_margin(mut self, tau: f64) -> Self {
        if tau != 0.0 {
            let grow = self.radius * self.radius + 2.0 * tau;
            self.mistake_bound = self.margin.filter(|_| grow > 0.0).map(|g| grow / (g * g));
        }
        self
    }

    /// The bound for class-weighted updates w~ <- w~ + c·y·x~ with c in
    /// [c_min, c_max] (see [`crate::train::class_weight`]):
    /// M <= (c_max·D² + 2τ)/(c_min·γ²), which is (c_max/c_min)·(D/γ)² for
    /// τ = 0 (no bound when c_max·D² + 2τ <= 0).
    pub fn with_class_weights(mut self, tau: f64, c_min: f64, c_max: f64) -> Self {
        let grow = c_max * self.radius * self.radius + 2.0 * tau;
        self.mistake_bound = self
            .margin
            .filter(|_| grow > 0.0)
            .map(|g| grow / (c_min * g * g));
        self
    }

    /// Whether `mistakes` respects the bound (None without a bound).
    ///
    /// D, gamma and the bound are computed in f64 and carry its rounding, so
    /// the comparison allows [`BOUND_SLACK`] relative: when the learned w~ is
    /// the sum of the mistaken rows, M can equal (D/gamma)^2 exactly (one
    /// mistake on a single row, say), and the computed bound may come out a
    /// few ulps below the integer it stands for.
    pub fn bound_holds(&self, mistakes: u64) -> Option<bool> {
        self.mistake_bound
            .map(|b| mistakes as f64 <= b * (1.0 + BOUND_SLACK))
    }
}

/// Computes D, gamma, the bound and the training accuracy of `w` (bias last
/// when `bias`).
pub fn analyse<F: Real>(data: &Dataset<F>, w: &[F], bias: bool) -> Theory {
    analyse_head(data, w, bias, 0, 1)
}

/// [`analyse`] for head `head` of `heads` one-vs-rest perceptrons (labels
/// from [`Dataset::label_for`]).
pub fn analyse_head<F: Real>(
    data: &Dataset<F>,
    w: &[F],
    bias: bool,
    head: usize,
    heads: usize,
) -> Theory {
    tally_head(data, w, bias, head, heads).theory(w)
}

/// What the theorem's figures are made of, over some rows: combined over
/// the parts of a dataset held apart (the largest radius, the smallest
/// margin, the sums of the counts), it gives the whole's [`Theory`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tally {
    /// max ||x~_i||.
    pub radius: f64,
    /// min y_i w~·x~_i, in f64 (infinity over no rows), when every row is
    /// right; after a wrong row it is not computed further (no margin is
    /// reported then, here or combined with other parts).
    pub min_margin: f64,
    pub correct: usize,
    pub rows: usize,
}

impl Tally {
    /// The figures of weights `w` over the rows tallied.
    pub fn theory<F: Real>(&self, w: &[F]) -> Theory {
        let norm = w
            .iter()
            .map(|v| v.to_f64() * v.to_f64())
            .sum::<f64>()
            .sqrt();
        let rows = self.rows;
        let separates = self.correct == rows && rows > 0 && norm > 0.0 && self.min_margin > 0.0;
        let margin = separates.then(|| self.min_margin / norm);
        Theory {
            radius: self.radius,
            margin,
            mistake_bound: margin.map(|g| (self.radius / g).powi(2)),
            correct: self.correct,
            rows,
        }
    }
}

/// The [`Tally`] of head `head` of `heads` over `data`'s rows.
pub fn tally_head<F: Real>(
    data: &Dataset<F>,
    w: &[F],
    bias: bool,
    head: usize,
    heads: usize,
) -> Tally {
    let rows = data.rows();
    let radius = data.radius(bias);
    // Predictions decided exactly but fast: a certified 8-lane margin, and
    // the reference dot only where that is not certain. Rows are judged in
    // parallel: a count and a minimum do not depend on the order.
    let bound = crate::engine::certify::Bound::for_weights(w, data.facts(bias).l1_max);
    // Rows a run on the CPU kept as bytes are read as such (the margins
    // only: a separable fit's smallest margin reads the stored rows).
    let bytes = data.built_byte_rows();
    let judge = |(correct, all_right, min_margin): (usize, bool, f64), i: usize| {
        let row = data.features.row(i);
        let y = data.label_for(head, heads, i);
        // Accuracy judges predictions, as `eval` does: s > 0 predicts +1,
        // anything else -1 (so a -1 row scoring exactly 0 is right here,
        // though the training rule counts it a mistake).
        let (s, t) = match &bytes {
            Some(b) => crate::engine::cpu::byte_rows::margin(w, b.row(i), bias),
            None => crate::engine::cpu::margin(w, row, bias),
        };
        let m = F::from_f64((row.stored() + bias as usize) as f64);
        let predicted = match bound.decide(1, s, t, m) {
            crate::engine::certify::Settled::Correct => 1,
            crate::engine::certify::Settled::Mistake => -1,
            crate::engine::certify::Settled::Unknown => {
                crate::engine::reference::predicted_sign(reference::dot(w, row, bias))
            }
        };
        let right = predicted == y;
        // The margin counts only if every row is right: after a wrong row
        // it is not needed.
        let min_margin = if all_right && right {
            min_margin.min(y as f64 * margin_f64(w, row, bias))
        } else {
            min_margin
        };
        (correct + right as usize, all_right && right, min_margin)
    };
    let (correct, _, min_margin) = (0..rows)
        .into_par_iter()
        .with_min_len(4096)
        .fold(|| (0, true, f64::INFINITY), judge)
        .reduce(
            || (0, true, f64::INFINITY),
            |a, b| (a.0 + b.0, a.1 && b.1, a.2.min(b.2)),
        );
    Tally {
        radius,
        min_margin,
        correct,
        rows,
    }
}

/// w~·x~ accumulated in f64 (a report figure): four independent sums over
/// dense rows, so it is not bound by one long chain of additions.
fn margin_f64<F: Real>(w: &[F], row: crate::data::Row<'_, F>, bias: bool) -> f64 {
    let mut s = match row {
        crate::data::Row::Dense(x) => {
            let mut acc = [0.0f64; 4];
            let (wc, wr) = w[..x.len()].as_chunks::<4>();
            let (xc, xr) = x.as_chunks::<4>();
            for (a, b) in wc.iter().zip(xc) {
                for l in 0..4 {
                    acc[l] += a[l].to_f64() * b[l].to_f64();
                }
            }
            let tail: f64 = wr
                .iter()
                .zip(xr)
                .map(|(a, b)| a.to_f64() * b.to_f64())
                .sum();
            (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
        }
        crate::data::Row::Sparse(idx, val) => idx
            .iter()
            .zip(val)
            .map(|(&k, v)| w[k as usize].to_f64() * v.to_f64())
            .sum(),
    };
    if bias {
        s += w[w.len() - 1].to_f64();
    }
    s
}

/// One-vs-rest as a whole: rows whose highest-scoring class is their own
/// (ties to the lowest class index, as [`crate::engine::reference::argmax`]), with the
/// radius; per-class figures come from [`analyse_head`].
pub fn analyse_ovr<F: Real>(data: &Dataset<F>, w: &[F], bias: bool, heads: usize) -> Theory {
    let t = tally_ovr(data, w, bias, heads);
    Theory {
        radius: t.radius,
        margin: None,
        mistake_bound: None,
        correct: t.correct,
        rows: t.rows,
    }
}

/// [`analyse_ovr`]'s counts over `data`'s rows (no margin: infinity).
pub fn tally_ovr<F: Real>(data: &Dataset<F>, w: &[F], bias: bool, heads: usize) -> Tally {
    let dim = data.cols() + bias as usize;
    let correct = (0..data.rows())
        .into_par_iter()
        .with_min_len(256)
        .map_init(
            || Vec::with_capacity(heads),
            |scores, i| {
                let row = data.features.row(i);
                scores.clear();
                scores.extend(
                    (0..heads).map(|h| reference::dot(&w[h * dim..(h + 1) * dim], row, bias)),
                );
                usize::from(crate::engine::reference::argmax(scores) == data.class_ids[i] as usize)
            },
        )
        .sum();
    Tally {
        radius: data.radius(bias),
        min_margin: f64::INFINITY,
        correct,
        rows: data.rows(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DenseMatrix, Features, LabelMap};

    fn one_row(x: Vec<f64>, y: i8) -> Dataset<f64> {
        Dataset {
            features: Features::Dense(DenseMatrix {
                rows: 1,
                cols: x.len(),
                values: x.into(),
            }),
            labels: vec![y],
            label_map: LabelMap {
                positive: "1".into(),
                negative: Some("-1".into()),
            },
            classes: vec![],
            class_ids: vec![],
            source: "t".into(),
            format: crate::data::Format::Csv,
            facts: Default::default(),
        }
    }

    #[test]
    fn a_tight_bound_holds_despite_rounding() {
        // One row, one mistake: w~ = y x~, so gamma = ||x~|| = D and the bound
        // is exactly 1 = M. In f64 it comes out just below 1.
        let data = one_row(vec![0.0, -1.875, 0.875, -1.25], -1);
        let w = [0.0, 1.875, -0.875, 1.25, -1.0];
        let t = analyse(&data, &w, true);
        let b = t.mistake_bound.unwrap();
        assert!(b < 1.0 && b > 1.0 - 1e-12, "{b}");
        assert_eq!(t.bound_holds(1), Some(true));
        assert_eq!(t.bound_holds(2), Some(false));
    }

    #[test]
    fn class_weights_scale_the_bound_by_their_ratio() {
        let t = Theory {
            radius: 3.0,
            margin: Some(0.5),
            mistake_bound: Some(36.0),
            correct: 1,
            rows: 1,
        };
        assert_eq!(
            t.clone().with_class_weights(0.0, 0.5, 2.0).mistake_bound,
            Some(2.0 * 9.0 / (0.5 * 0.25))
        );
        assert_eq!(
            t.clone().with_class_weights(1.0, 1.0, 1.0).mistake_bound,
            t.clone().with_margin(1.0).mistake_bound
        );
        assert_eq!(t.with_class_weights(-10.0, 1.0, 1.0).mistake_bound, None);
    }

    #[test]
    fn the_margin_rule_has_its_own_bound() {
        let t = Theory {
            radius: 3.0,
            margin: Some(0.5),
            mistake_bound: Some(36.0),
            correct: 1,
            rows: 1,
        };
        assert_eq!(t.clone().with_margin(0.0).mistake_bound, Some(36.0));
        assert_eq!(
            t.clone().with_margin(2.0).mistake_bound,
            Some((9.0 + 4.0) / 0.25)
        );
        assert_eq!(
            t.with_margin(-5.0).mistake_bound,
            None,
            "D^2 + 2 tau <= 0 gives no bound"
        );
    }
}
