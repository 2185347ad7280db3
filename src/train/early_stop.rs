//! Early stopping for data the loop cannot separate (`--tol T
//! --n-iter-no-change K`, `--validation-fraction F`, and scikit-learn's
//! `early_stopping=True` through the Python estimator).
//!
//! # The rule
//! After each epoch e the run has a *score* s_e, higher is better:
//!
//! - with a validation part: the accuracy of the weights the variant would
//!   return at that moment (the last iterate, the average, or the pocket)
//!   on the held-out rows, where a binary model predicts +1 iff w~·x~ > 0
//!   and a one-vs-rest model the highest-scoring class (ties to the
//!   first), both with the reference arithmetic. Unweighted it is
//!   correct/rows; with the held-out rows' own weights
//!   ([`crate::train::TrainParams::validation_weight`]) it is the weight of
//!   the rows predicted right over the weight of them all, each sum taken as
//!   NumPy takes it ([`weighted_accuracy`]);
//! - otherwise: s_e = -m_e/n, minus the epoch's training mistakes (updates)
//!   per row, or minus the mean hinge loss ([`Judge`]).
//!
//! Starting from best = -∞ and count = 0, each epoch does, in f64:
//! `if s_e < best + T { count += 1 } else { count = 0 }`, then
//! `if s_e > best { best = s_e }`, and the run stops when count reaches K.
//! So it stops after K epochs in a row none of which beat the best score
//! before it by T or more. An epoch without a mistake still ends the run
//! first (it converged).
//!
//! This is scikit-learn's rule (`SGDClassifier`/`Perceptron` with
//! `tol`, `n_iter_no_change` and `early_stopping`, in that order in
//! `_plain_sgd` of `sklearn/linear_model/_sgd_fast.pyx.tp`), applied to
//! quantities this loop knows exactly: scikit-learn judges the epoch's mean
//! training loss, sum of max(0, -y·s)/n ([`Judge::MeanLoss`]), and both
//! judge the held-out accuracy the same way.
//!
//! # Which weights a run judged on held-out rows returns
//! [`Keep::Best`] (the command line's `--validation-fraction`): the
//! variant's weights after the epoch with the highest held-out accuracy
//! (the earliest of equals), which scikit-learn does not do.
//! [`Keep::Last`] (scikit-learn's `early_stopping=True`, and the Python
//! estimator's): the weights of the last epoch run, as scikit-learn
//! returns them. Everything is decided on the host from counts and the
//! rows' weights, so the stop is the same on every backend.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::Dataset;
use crate::engine::reference;
use crate::error::ParamError;
use crate::float::{Precision, Real};

/// When to stop early.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EarlyStop {
    /// The improvement T an epoch needs to count as one.
    pub tol: f64,
    /// Epochs K in a row without improvement that stop the run.
    pub n_iter_no_change: usize,
    /// Judge epochs on held-out rows instead of the training mistakes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
    /// What a training epoch is judged on without a validation part.
    #[serde(default, skip_serializing_if = "Judge::is_mistakes")]
    pub judge: Judge,
    /// Which weights a run judged on a validation part returns.
    #[serde(default, skip_serializing_if = "Keep::is_best")]
    pub keep: Keep,
}

/// Which weights a run judged on a validation part returns (see the
/// module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Keep {
    /// The weights after the epoch with the highest held-out accuracy (the
    /// earliest of equals): the command line's `--validation-fraction`.
    #[default]
    Best,
    /// The weights after the last epoch run: scikit-learn's
    /// `early_stopping=True`.
    Last,
}

impl Keep {
    fn is_best(&self) -> bool {
        *self == Keep::Best
    }
}

/// What the rule judges a training epoch on (without a validation part).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judge {
    /// s_e = -m_e/n: the epoch's mistakes per row (known exactly from counts).
    #[default]
    Mistakes,
    /// s_e = -(sum of max(0, -y·p))/n, scikit-learn's mean hinge loss with
    /// threshold 0, p = w·x + b at each row's visit computed as scikit-learn
    /// computes it ([`crate::engine::reference::scikit_margin`]), summed in f64 in
    /// visiting order. Rows that are not mistakes add nothing, so only the
    /// mistakes' margins are computed.
    MeanLoss,
}

impl Judge {
    fn is_mistakes(&self) -> bool {
        *self == Judge::Mistakes
    }
}

/// The held-out part: a stratified fraction of the rows, chosen by the
/// seeded permutation ([`crate::train::folds::holdout`]) on the command
/// line. When a caller gives the held-out rows itself
/// ([`crate::train::TrainParams::held_out`], scikit-learn's split), the
/// fraction is the one they were drawn with and `seed` is not used.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Validation {
    pub fraction: f64,
    pub seed: u64,
}

impl Default for EarlyStop {
    /// scikit-learn's defaults: T = 1e-3, K = 5, no validation part.
    fn default() -> Self {
        EarlyStop {
            tol: 1e-3,
            n_iter_no_change: 5,
            validation: None,
            judge: Judge::Mistakes,
            keep: Keep::Best,
        }
    }
}

impl EarlyStop {
    pub fn check(&self) -> Result<(), ParamError> {
        if !(self.tol.is_finite() && self.tol >= 0.0) {
            return Err(ParamError::Tol(self.tol.to_string()));
        }
        if self.n_iter_no_change == 0 {
            return Err(ParamError::NIterNoChange(0));
        }
        if let Some(v) = &self.validation
            && !(v.fraction > 0.0 && v.fraction < 1.0)
        {
            return Err(ParamError::ValidationFraction(v.fraction.to_string()));
        }
        Ok(())
    }

    /// How many epochs in a row have not improved, after the epochs with
    /// `scores` (higher is better; see the module documentation).
    pub fn without_improvement(&self, scores: &[f64]) -> usize {
        let (mut best, mut count) = (f64::NEG_INFINITY, 0);
        for &s in scores {
            if s < best + self.tol {
                count += 1;
            } else {
                count = 0;
            }
            if s > best {
                best = s;
            }
        }
        count
    }

    /// Whether the epochs with `scores` stop the run.
    pub fn stops(&self, scores: &[f64]) -> bool {
        self.without_improvement(scores) >= self.n_iter_no_change
    }
}

/// The early-stopping part of a run's exact state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EarlyState<F> {
    /// The score of each completed epoch (see the module documentation).
    pub scores: Vec<f64>,
    /// With a validation part: the 0-based epoch of the best held-out
    /// accuracy so far and the weights it kept.
    pub best: Option<(usize, Vec<F>)>,
    /// With [`Judge::MeanLoss`]: the hinge loss summed so far in the epoch
    /// in progress (part of the exact state, so a resumed run judges alike).
    pub loss_in_epoch: f64,
}

/// Held-out rows whose class `weights` (`heads` perceptrons, head after
/// head) predict right, decided with the reference arithmetic.
pub fn correct<F: Real>(held: &Dataset<F>, weights: &[F], bias: bool, heads: usize) -> u64 {
    (0..held.rows())
        .into_par_iter()
        .map(|i| is_right(held, i, weights, bias, heads) as u64)
        .sum()
}

/// Whether `weights` predict held-out row `i`'s class (see [`correct`]).
fn is_right<F: Real>(held: &Dataset<F>, i: usize, weights: &[F], bias: bool, heads: usize) -> bool {
    let dim = held.cols() + bias as usize;
    let row = held.features.row(i);
    if heads == 1 {
        let s = reference::dot(&weights[..dim], row, bias);
        reference::predicted_sign(s) == held.labels[i]
    } else {
        let scores: Vec<F> = (0..heads)
            .map(|h| reference::dot(&weights[h * dim..(h + 1) * dim], row, bias))
            .collect();
        reference::argmax(&scores) == held.class_ids[i] as usize
    }
}

/// The held-out accuracy of `weights` (see the module documentation):
/// correct/rows, or with `row_weights` (one per held-out row, in its
/// order) [`weighted_accuracy`].
pub fn accuracy<F: Real>(
    held: &Dataset<F>,
    weights: &[F],
    bias: bool,
    heads: usize,
    row_weights: Option<&[f64]>,
) -> f64 {
    match row_weights {
        None => correct(held, weights, bias, heads) as f64 / held.rows().max(1) as f64,
        Some(w) => {
            let right: Vec<bool> = (0..held.rows())
                .into_par_iter()
                .map(|i| is_right(held, i, weights, bias, heads))
                .collect();
            weighted_accuracy(&right, w, F::PRECISION == Precision::F32)
        }
    }
}

/// scikit-learn's weighted accuracy, `np.average(right, weights=w)`, bit
/// for bit: the f64 products right_i·w_i summed by NumPy's pairwise sum
/// ([`numpy_sum`]), over the weights summed likewise. `weights_f32`: the
/// weights are float32 values (scikit-learn casts `sample_weight` to the
/// data's dtype), which NumPy casts to f64 in buffers of 8192 and sums
/// buffer after buffer.
pub fn weighted_accuracy(right: &[bool], weights: &[f64], weights_f32: bool) -> f64 {
    let taken: Vec<f64> = right
        .iter()
        .zip(weights)
        .map(|(&r, &w)| if r { w } else { 0.0 })
        .collect();
    let total = if weights_f32 {
        weights
            .chunks(NUMPY_BUFFER)
            .fold(0.0, |sum, chunk| sum + numpy_sum(chunk))
    } else {
        numpy_sum(weights)
    };
    numpy_sum(&taken) / total
}

/// NumPy's buffer of a cast, in elements (`NPY_BUFSIZE`).
const NUMPY_BUFFER: usize = 8192;

/// `np.add.reduce` of a contiguous f64 array, as NumPy sums it
/// (`pairwise_sum` in `numpy/_core/src/umath/loops_utils.h.src`): under 8
/// values one by one; up to 128 in eight running sums combined as
/// ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest one by one; beyond,
/// the two halves (the first a multiple of 8 long) summed alike and added.
/// The reduction starts from 0, which adds nothing.
pub fn numpy_sum(a: &[f64]) -> f64 {
    const BLOCK: usize = 128;
    let n = a.len();
    if n < 8 {
        // NumPy starts from -0.0, so a sum of -0.0 stays -0.0.
        a.iter().fold(-0.0, |s, &v| s + v)
    } else if n <= BLOCK {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let whole = n - n % 8;
        for block in a[8..whole].chunks_exact(8) {
            for (rk, v) in r.iter_mut().zip(block) {
                *rk += v;
            }
        }
        let mut s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for v in &a[whole..] {
            s += v;
        }
        s
    } else {
        let half = n / 2;
        let half = half - half % 8;
        numpy_sum(&a[..half]) + numpy_sum(&a[half..])
    }
}

/// What early stopping did, for the model file and the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EarlyStopReport {
    pub tol: f64,
    pub n_iter_no_change: usize,
    /// The held-out part, when epochs were judged on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_fraction: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_rows: Option<usize>,
    /// Per epoch: the held-out accuracy, or (without a validation part) the
    /// training mistakes per row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validation_accuracy: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mistake_rate: Vec<f64>,
    /// Per epoch, with `--tol-on mean-loss`: the mean hinge loss.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mean_loss: Vec<f64>,
    /// The 1-based epoch whose weights the model is (validation with
    /// [`Keep::Best`] only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_epoch: Option<usize>,
    /// Which weights the run returned, when judged on a validation part.
    #[serde(default, skip_serializing_if = "Keep::is_best")]
    pub keep: Keep,
    /// Whether the rule stopped the run.
    pub stopped: bool,
}

impl EarlyStopReport {
    /// The report of `rule` after a run with `state`, `validation_rows`
    /// held out.
    pub fn of<F>(
        rule: &EarlyStop,
        state: &EarlyState<F>,
        validation_rows: Option<usize>,
        stopped: bool,
    ) -> Self {
        let judged_held_out = rule.validation.is_some();
        let on_loss = !judged_held_out && rule.judge == Judge::MeanLoss;
        let negated = || state.scores.iter().map(|s| -s).collect();
        EarlyStopReport {
            tol: rule.tol,
            n_iter_no_change: rule.n_iter_no_change,
            validation_fraction: rule.validation.map(|v| v.fraction),
            validation_rows,
            validation_accuracy: if judged_held_out {
                state.scores.clone()
            } else {
                Vec::new()
            },
            mistake_rate: if judged_held_out || on_loss {
                Vec::new()
            } else {
                negated()
            },
            mean_loss: if on_loss { negated() } else { Vec::new() },
            best_epoch: state.best.as_ref().map(|(e, _)| e + 1),
            keep: if judged_held_out {
                rule.keep
            } else {
                Keep::Best
            },
            stopped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_is_scikit_learns_on_our_scores() {
        let rule = EarlyStop {
            tol: 0.01,
            n_iter_no_change: 2,
            validation: None,
            judge: Judge::Mistakes,
            keep: Keep::Best,
        };
        // 0.5 sets best; 0.505 < 0.51: no improvement (best becomes 0.505);
        // 0.52 >= 0.515: improvement; 0.52, 0.521 both < 0.53: stop.
        let scores = [0.5, 0.505, 0.52, 0.52, 0.521];
        let counts: Vec<usize> = (1..=5)
            .map(|e| rule.without_improvement(&scores[..e]))
            .collect();
        assert_eq!(counts, [0, 1, 0, 1, 2]);
        assert!(!rule.stops(&scores[..4]) && rule.stops(&scores));
        assert!(!rule.stops(&[]));
    }

    /// Bits of f64 values written as C99 hex floats (what Python's
    /// `float.hex` prints).
    fn hex(text: &str) -> f64 {
        let (mantissa, exp) = text.split_once('p').unwrap();
        let (whole, frac) = mantissa.trim_start_matches("0x").split_once('.').unwrap();
        let digits = u64::from_str_radix(&format!("{whole}{frac}"), 16).unwrap();
        digits as f64 * 2f64.powi(exp.parse::<i32>().unwrap() - 4 * frac.len() as i32)
    }

    #[test]
    fn numpys_sum_is_pairwise() {
        // np.add.reduce(a) for a_i = (0.1 i + 1/(i+1)) 10^(i mod 5 - 2)
        // (NumPy 2.4); a sum one by one differs from every one but the
        // first.
        let a = |n: usize| -> Vec<f64> {
            (0..n)
                .map(|i| (i as f64 * 0.1 + 1.0 / (i + 1) as f64) * 10f64.powi((i % 5) as i32 - 2))
                .collect()
        };
        for (n, want) in [
            (5, "0x1.0869d0369d037p+6"),
            (37, "0x1.7e05e3934b2e0p+10"),
            (128, "0x1.16da8f2f01787p+14"),
            (300, "0x1.8aa5f48d27b40p+16"),
            (1000, "0x1.100ce22f293aap+20"),
        ] {
            let a = a(n);
            assert_eq!(numpy_sum(&a).to_bits(), hex(want).to_bits(), "{n} values");
            let one_by_one = a.iter().fold(0.0, |s, v| s + v);
            assert_eq!(n == 5, one_by_one == numpy_sum(&a), "{n} values");
        }
        assert_eq!(numpy_sum(&[]), 0.0);
    }

    #[test]
    fn the_weighted_accuracy_is_numpys_average() {
        // np.average(right, weights=w) with right_i = i mod 3 != 0 and
        // w_i = ((7919 i mod 1000) + 1)^2 / 7 over 20,000 rows, w in
        // float64 and in float32 (NumPy 2.4): the float32 weights' sum is
        // taken in buffers of 8192 (one pairwise sum of all of them gives
        // ...e04p-1), the float64 one at once (one by one gives ...3a9p-1).
        let n = 20_000;
        let right: Vec<bool> = (0..n).map(|i| i % 3 != 0).collect();
        let w: Vec<f64> = (0..n)
            .map(|i| (((i * 7919) % 1000 + 1) as f64).powi(2) / 7.0)
            .collect();
        let w32: Vec<f64> = w.iter().map(|&v| v as f32 as f64).collect();
        assert_eq!(
            weighted_accuracy(&right, &w, false).to_bits(),
            hex("0x1.55555165873a1p-1").to_bits()
        );
        assert_eq!(
            weighted_accuracy(&right, &w32, true).to_bits(),
            hex("0x1.5555516574e03p-1").to_bits()
        );
        // Weights of 1 count the rows right.
        assert_eq!(
            weighted_accuracy(&right, &vec![1.0; n], true),
            13_333.0 / 20_000.0
        );
    }

    #[test]
    fn keeping_the_best_epoch_is_the_default_and_not_written() {
        let rule = EarlyStop::default();
        assert_eq!(rule.keep, Keep::Best);
        let text = serde_json::to_string(&rule).unwrap();
        assert!(!text.contains("keep"), "{text}");
        let last = EarlyStop {
            keep: Keep::Last,
            ..rule
        };
        let text = serde_json::to_string(&last).unwrap();
        assert!(text.contains(r#""keep":"last""#), "{text}");
        assert_eq!(serde_json::from_str::<EarlyStop>(&text).unwrap(), last);
    }

    #[test]
    fn rules_are_checked() {
        let bad = |e: EarlyStop| e.check().unwrap_err();
        assert_eq!(
            bad(EarlyStop {
                tol: -1.0,
                ..EarlyStop::default()
            }),
            ParamError::Tol("-1".into())
        );
        assert_eq!(
            bad(EarlyStop {
                n_iter_no_change: 0,
                ..EarlyStop::default()
            }),
            ParamError::NIterNoChange(0)
        );
        assert_eq!(
            bad(EarlyStop {
                validation: Some(Validation {
                    fraction: 1.0,
                    seed: 0
                }),
                ..EarlyStop::default()
            }),
            ParamError::ValidationFraction("1".into())
        );
        assert_eq!(EarlyStop::default().check(), Ok(()));
    }
}
