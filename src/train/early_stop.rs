//! Early stopping for data the loop cannot separate (`--tol T
//! --n-iter-no-change K`, `--validation-fraction F`).
//!
//! # The rule
//! After each epoch e the run has a *score* s_e, higher is better:
//!
//! - with a validation part (`--validation-fraction F`): the accuracy of the
//!   weights the variant would return at that moment (the last iterate, the
//!   average, or the pocket) on the held-out rows, correct/rows, where a
//!   binary model predicts +1 iff w~·x~ > 0 and a one-vs-rest model the
//!   highest-scoring class (ties to the first), both with the reference
//!   arithmetic;
//! - otherwise: s_e = -m_e/n, minus the epoch's training mistakes (updates)
//!   per row.
//!
//! Starting from best = -∞ and count = 0, each epoch does, in f64:
//! `if s_e < best + T { count += 1 } else { count = 0 }`, then
//! `if s_e > best { best = s_e }`, and the run stops when count reaches K.
//! So it stops after K epochs in a row none of which beat the best score
//! before it by T or more. An epoch without a mistake still ends the run
//! first (it converged).
//!
//! This is scikit-learn's rule (`SGDClassifier`/`Perceptron` with
//! `tol`, `n_iter_no_change` and `early_stopping`), applied to quantities
//! this loop knows exactly: scikit-learn judges the epoch's mean training
//! loss, sum of max(0, -y·s)/n, where this judges the mistake rate, and
//! both judge the held-out accuracy the same way. A run with a validation
//! part also *keeps the best epoch's weights*: the model is the variant's
//! weights after the epoch with the highest held-out accuracy (the earliest
//! of equals), which scikit-learn does not do (it returns the last).
//! Everything is decided on the host from integer counts, so the stop is
//! the same on every backend.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::Dataset;
use crate::engine::reference;
use crate::error::ParamError;
use crate::float::Real;

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
/// seeded permutation ([`crate::train::folds::holdout`]).
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
    let dim = held.cols() + bias as usize;
    (0..held.rows())
        .into_par_iter()
        .map(|i| {
            let row = held.features.row(i);
            let right = if heads == 1 {
                let s = reference::dot(&weights[..dim], row, bias);
                reference::predicted_sign(s) == held.labels[i]
            } else {
                let scores: Vec<F> = (0..heads)
                    .map(|h| reference::dot(&weights[h * dim..(h + 1) * dim], row, bias))
                    .collect();
                reference::argmax(&scores) == held.class_ids[i] as usize
            };
            right as u64
        })
        .sum()
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
    /// The 1-based epoch whose weights the model is (validation only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_epoch: Option<usize>,
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
