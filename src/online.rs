//! Online, mistake-driven learning: for each example of a stream, predict,
//! then learn (`perceptron online`).
//!
//! For an example x with label y, with the definitions of [`crate::engine::reference`]:
//!
//! 1. s = w~·x~ by [`reference::dot`] (bias last, as in training); the
//!    prediction is +1 iff s > 0 ([`reference::predicted_sign`], as `predict` does);
//! 2. the example is a *mistake* iff y·s <= τ
//!    ([`reference::is_mistake_within`], τ = `--margin`, 0 by default), and
//!    then w~ <- w~ + y·x~ ([`reference::apply_update`]).
//!
//! These are the training loop's own functions, so one online pass over a
//! file gives bit for bit the weights and mistakes of one epoch of
//! `perceptron train --backend reference --max-epochs 1` on it. A mistake
//! (an update) is not always a wrong prediction: s = 0 predicts -1, which is
//! right for y = -1, yet is a mistake; with τ > 0 a right prediction with a
//! small margin is a mistake too. Both counts are kept.
//!
//! The weights grow on demand: a LIBSVM stream may reveal a new feature index
//! at any row, and the weights of features not seen before start at 0 (also
//! beyond an initial model's features). The vector is grown geometrically,
//! with zeros that no dot product reads, so growth costs O(1) per feature
//! amortised; memory stays O(features), never O(examples).
//!
//! The convergence theorem holds for the online run as for training: if every
//! ||x~|| <= D and some unit vector u has y·u·x~ >= gamma > 0 on every example,
//! a run from w~ = 0 with τ = 0 makes at most (D/gamma)^2 mistakes, however
//! long the stream (Novikoff 1962; with τ the bound is (D^2 + 2τ)/gamma^2).

use crate::data::Row;
use crate::engine::reference;
use crate::float::Real;

/// A prediction made before learning from its example.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction<F> {
    /// s = w~·x~ in the reference arithmetic.
    pub score: F,
    /// +1 when s > 0, otherwise -1.
    pub label: i8,
}

/// Why an example could not be learned from.
#[derive(Clone, Debug, PartialEq)]
pub enum StepError {
    /// The row needs more weights than the learner may grow to.
    TooManyFeatures { wanted: usize, max: usize },
    /// The weights could not be grown.
    OutOfMemory { wanted: usize },
    /// s is infinite or NaN: the products overflow.
    NonFiniteScore {
        score: String,
        precision: &'static str,
    },
    /// A weight became infinite: `None` is the bias, `Some(k)` the 1-based feature.
    Overflow {
        feature: Option<usize>,
        precision: &'static str,
    },
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepError::TooManyFeatures { wanted, max } => write!(
                f,
                "the example needs {wanted} weights, more than the limit of {max} (--max-features)"
            ),
            StepError::OutOfMemory { wanted } => {
                write!(f, "cannot allocate {wanted} weights: out of memory")
            }
            StepError::NonFiniteScore { score, precision } => write!(
                f,
                "the margin w·x is {score}: the features are too large for {precision} (products overflow); {}",
                crate::float::overflow_remedy(precision)
            ),
            StepError::Overflow { feature, precision } => {
                match feature {
                    Some(k) => write!(f, "weight {k} overflowed to infinity")?,
                    None => write!(f, "the bias overflowed to infinity")?,
                }
                write!(
                    f,
                    ": the features are too large for {precision}; {}",
                    crate::float::overflow_remedy(precision)
                )
            }
        }
    }
}

/// The state of an online run: the weights and what the stream did so far.
#[derive(Clone, Debug)]
pub struct Learner<F> {
    /// The feature weights, padded with zeros to the capacity, then the bias
    /// when there is one: the layout [`reference::dot`] wants (bias last).
    /// Rows only reach the first `features` entries, so the padding is never
    /// read and stays zero.
    w: Vec<F>,
    features: usize,
    bias: bool,
    tau: F,
    max_features: usize,
    examples: u64,
    mistakes: u64,
    wrong: u64,
    radius_sq: f64,
}

impl<F: Real> Learner<F> {
    /// w~ = 0 with no features yet; `tau` is the mistake threshold τ.
    pub fn new(bias: bool, tau: F) -> Self {
        Self::from_weights(Vec::new(), bias.then_some(F::ZERO), tau)
    }

    /// Starts from feature weights `w` and the bias (`None`: no bias).
    pub fn from_weights(w: Vec<F>, bias: Option<F>, tau: F) -> Self {
        let features = w.len();
        let mut w = w;
        if let Some(b) = bias {
            w.push(b);
        }
        Learner {
            w,
            features,
            bias: bias.is_some(),
            tau,
            max_features: usize::MAX,
            examples: 0,
            mistakes: 0,
            wrong: 0,
            radius_sq: 0.0,
        }
    }

    /// Refuses to grow beyond `max` features.
    pub fn with_max_features(mut self, max: usize) -> Self {
        self.max_features = max.max(self.features);
        self
    }

    pub fn has_bias(&self) -> bool {
        self.bias
    }

    /// Features the weights cover (the most any example needed so far, or
    /// the initial model's).
    pub fn features(&self) -> usize {
        self.features
    }

    /// The feature weights.
    pub fn weights(&self) -> &[F] {
        &self.w[..self.features]
    }

    /// The bias (0 without one).
    pub fn bias(&self) -> F {
        if self.bias {
            self.w[self.w.len() - 1]
        } else {
            F::ZERO
        }
    }

    /// w~ = [w, b] (just w without a bias).
    pub fn augmented(&self) -> Vec<F> {
        let mut w = self.weights().to_vec();
        if self.bias {
            w.push(self.bias());
        }
        w
    }

    /// Examples learned from so far.
    pub fn examples(&self) -> u64 {
        self.examples
    }

    /// Mistakes (updates) so far: examples with y·s <= τ.
    pub fn mistakes(&self) -> u64 {
        self.mistakes
    }

    /// Predictions (made before learning) that were wrong so far.
    pub fn wrong_predictions(&self) -> u64 {
        self.wrong
    }

    /// D = max ||x~|| over the examples so far (the bias feature included),
    /// computed in f64 as training's report does.
    pub fn radius(&self) -> f64 {
        self.radius_sq.sqrt()
    }

    /// Makes room for rows needing `features` weights (new weights are 0).
    pub fn grow(&mut self, features: usize) -> Result<(), StepError> {
        if features <= self.features {
            return Ok(());
        }
        if features > self.max_features {
            return Err(StepError::TooManyFeatures {
                wanted: features,
                max: self.max_features,
            });
        }
        let capacity = self.w.len() - self.bias as usize;
        if features > capacity {
            let new = features
                .max(capacity.saturating_mul(2))
                .min(self.max_features);
            let b = if self.bias { self.w.pop() } else { None };
            let extra = new + self.bias as usize - self.w.len();
            self.w
                .try_reserve_exact(extra)
                .map_err(|_| StepError::OutOfMemory { wanted: new })?;
            self.w.resize(new, F::ZERO);
            self.w.extend(b);
        }
        self.features = features;
        Ok(())
    }

    /// Predicts the label of `row`, which needs `features` weights (the
    /// weights grow first if needed). Learn from the same row next.
    pub fn predict(
        &mut self,
        row: Row<'_, F>,
        features: usize,
    ) -> Result<Prediction<F>, StepError> {
        self.grow(features)?;
        let score = reference::dot(&self.w, row, self.bias);
        if !score.is_finite() {
            return Err(StepError::NonFiniteScore {
                score: score.to_string(),
                precision: F::PRECISION.name(),
            });
        }
        Ok(Prediction {
            score,
            label: reference::predicted_sign(score),
        })
    }

    /// Learns from `row` with label `y` (±1), given the prediction
    /// [`Learner::predict`] made for it: updates on a mistake, which it
    /// returns. On an error the weights are unusable.
    pub fn learn(&mut self, p: Prediction<F>, y: i8, row: Row<'_, F>) -> Result<bool, StepError> {
        self.examples += 1;
        self.wrong += (p.label != y) as u64;
        self.radius_sq = self
            .radius_sq
            .max(row.norm_sq_f64() + if self.bias { 1.0 } else { 0.0 });
        let mistake = reference::is_mistake_within(y, p.score, self.tau);
        if mistake {
            self.mistakes += 1;
            reference::apply_update(&mut self.w, row, y, self.bias).map_err(|o| {
                let bias_at = self.w.len() - 1;
                StepError::Overflow {
                    feature: (!(self.bias && o.coordinate == bias_at)).then_some(o.coordinate + 1),
                    precision: F::PRECISION.name(),
                }
            })?;
        }
        Ok(mistake)
    }

    /// [`Learner::predict`] then [`Learner::learn`].
    pub fn step(
        &mut self,
        row: Row<'_, F>,
        features: usize,
        y: i8,
    ) -> Result<(Prediction<F>, bool), StepError> {
        let p = self.predict(row, features)?;
        let mistake = self.learn(p, y, row)?;
        Ok((p, mistake))
    }
}

/// The margin of fixed weights over examples seen one at a time, as the
/// convergence report of training computes it (in f64; never a decision).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MarginTally {
    min_margin: Option<f64>,
    correct: u64,
    rows: u64,
}

impl MarginTally {
    /// Adds an example; `w` is w~ (bias last when `bias`) and covers the row.
    pub fn observe<F: Real>(&mut self, w: &[F], row: Row<'_, F>, y: i8, bias: bool) {
        self.rows += 1;
        if reference::predicted_sign(reference::dot(w, row, bias)) == y {
            self.correct += 1;
        }
        let mut s = 0.0f64;
        row.for_each(|k, v| s += w[k].to_f64() * v.to_f64());
        if bias {
            s += w[w.len() - 1].to_f64();
        }
        let m = y as f64 * s;
        self.min_margin = Some(self.min_margin.map_or(m, |old| old.min(m)));
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Examples the weights predict correctly.
    pub fn correct(&self) -> u64 {
        self.correct
    }

    /// gamma = min y w~·x~ / ||w~|| when `w` classifies every example
    /// correctly with a positive margin, else `None`.
    pub fn margin<F: Real>(&self, w: &[F]) -> Option<f64> {
        let norm = w
            .iter()
            .map(|v| v.to_f64() * v.to_f64())
            .sum::<f64>()
            .sqrt();
        let min = self.min_margin?;
        (self.correct == self.rows && self.rows > 0 && norm > 0.0 && min > 0.0).then(|| min / norm)
    }
}

/// How an online run made a model; saved in its `training` section.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OnlineInfo {
    /// Examples learned from (also `training.rows`).
    pub examples: u64,
    /// Predictions, each made before learning from its example, that were
    /// wrong. `training.total_mistakes` counts updates (y·s <= τ) instead.
    pub wrong_predictions: u64,
    /// Features the stream revealed beyond the `--init` model's, if any.
    pub features_added: usize,
    pub state: OnlineState,
}

/// Where the run was when the model was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnlineState {
    /// A periodic snapshot of a run still going.
    Running,
    /// The input ended.
    Ended,
    /// Stopped by Ctrl-C.
    Interrupted,
    /// Stopped because the reader of the predictions went away.
    Closed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicts_before_learning_and_counts_mistakes_and_wrong_predictions() {
        let mut l = Learner::<f64>::new(true, 0.0);
        // s = 0: predicts -1, right for y = -1, but a mistake (y·s <= 0).
        let (p, m) = l.step(Row::Dense(&[1.0, 2.0]), 2, -1).unwrap();
        assert_eq!((p.score, p.label, m), (0.0, -1, true));
        assert_eq!(l.augmented(), [-1.0, -2.0, -1.0]);
        // s = -1 - 2·0 - 1 = -2 for x = [1, 0]: predicts -1, wrong for +1.
        let (p, m) = l.step(Row::Sparse(&[0], &[1.0]), 1, 1).unwrap();
        assert_eq!((p.score, p.label, m), (-2.0, -1, true));
        assert_eq!(l.augmented(), [0.0, -2.0, 0.0]);
        assert_eq!(
            (l.examples(), l.mistakes(), l.wrong_predictions()),
            (2, 2, 1)
        );
        assert_eq!(l.radius(), 6f64.sqrt());
    }

    #[test]
    fn weights_grow_on_demand_with_zeros_and_the_bias_kept_last() {
        let mut l = Learner::<f32>::from_weights(vec![1.0], Some(0.5), 0.0).with_max_features(100);
        l.step(Row::Sparse(&[4], &[2.0]), 5, 1).unwrap(); // s = 0.5 > 0: no update
        assert_eq!(l.augmented(), [1.0, 0.0, 0.0, 0.0, 0.0, 0.5]);
        l.step(Row::Sparse(&[2, 9], &[1.0, 3.0]), 10, -1).unwrap();
        assert_eq!(l.features(), 10);
        assert_eq!(l.weights()[2], -1.0);
        assert_eq!(l.weights()[9], -3.0);
        assert_eq!(l.bias(), -0.5);
        assert_eq!(
            l.grow(101),
            Err(StepError::TooManyFeatures {
                wanted: 101,
                max: 100
            })
        );
        // Without a bias nothing is appended.
        let mut l = Learner::<f64>::new(false, 0.0);
        l.step(Row::Dense(&[1.0, 1.0, 1.0]), 3, 1).unwrap();
        assert_eq!(l.augmented(), [1.0, 1.0, 1.0]);
    }

    #[test]
    fn overflowing_scores_and_weights_are_errors_that_say_so() {
        let mut l = Learner::<f32>::from_weights(vec![f32::MAX], Some(0.0), 0.0);
        let e = l.step(Row::Dense(&[2.0]), 1, -1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the margin w·x is inf: the features are too large for f32 (products overflow); \
             rescale them or use f64 precision"
        );
        // In f64 there is no wider precision to suggest.
        let mut l = Learner::<f64>::from_weights(vec![f64::MAX], Some(0.0), 0.0);
        let e = l.step(Row::Dense(&[2.0]), 1, -1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the margin w·x is inf: the features are too large for f64 (products overflow); \
             rescale them (they overflow f64 too)"
        );
        // An update that overflows reports the coordinate (finite scores make
        // this all but impossible, so the message is checked directly).
        let e = StepError::Overflow {
            feature: Some(3),
            precision: "f32",
        };
        assert!(e.to_string().starts_with("weight 3 overflowed to infinity"));
    }

    #[test]
    fn the_margin_tally_matches_the_training_report() {
        let w = [1.0f64, -1.0, 0.5];
        let mut t = MarginTally::default();
        t.observe(&w, Row::Dense(&[2.0, 0.0]), 1, true); // s = 2.5
        t.observe(&w, Row::Dense(&[0.0, 1.0]), -1, true); // s = -0.5
        let norm = (1.0f64 + 1.0 + 0.25).sqrt();
        assert_eq!(t.margin(&w), Some(0.5 / norm));
        t.observe(&w, Row::Dense(&[0.0, 0.5]), -1, true); // s = 0: predicts -1, margin 0
        assert_eq!((t.rows(), t.correct()), (3, 3));
        assert_eq!(t.margin(&w), None);
    }
}
