//! What to train, and the one place where it is checked: [`TrainParams`]
//! → [`TrainParams::check`] → [`CheckedParams`], which every trainer takes.

use serde::{Deserialize, Serialize};

use crate::data::{Dataset, ScaleKind, Scaling};
use crate::error::ParamError;
use crate::float::{Precision, Real};
use crate::train::class_weight::ClassWeights;
use crate::train::early_stop::EarlyStop;
use crate::train::scikit::order::EveryEpoch;
use crate::train::variant::{Margin, Variant};

/// What to train. The defaults are the classic algorithm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainParams {
    /// Stop after this many epochs even if the last one made mistakes.
    pub max_epochs: usize,
    /// Append the constant feature 1 (the bias) to every row.
    pub bias: bool,
    /// Visit the rows in the order fixed by this seed instead of file order.
    pub shuffle_seed: Option<u64>,
    /// Reshuffle the rows before every epoch, as scikit-learn's Perceptron
    /// does ([`crate::train::scikit`]); not with `shuffle_seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle_every_epoch: Option<EveryEpoch>,
    /// When the loop may skip engine passes in favour of the host's own
    /// certified margins. Never changes the result, only the speed.
    pub passes: PassPolicy,
    /// Which weights training returns (classic, averaged, pocket).
    pub variant: Variant,
    /// Update when y·s <= τ instead of 0.
    pub margin: Option<Margin>,
    /// Train one perceptron per class (one-vs-rest) in the same pass over
    /// the data: head h learns "class h" against the rest.
    pub multiclass: bool,
    /// Scale the features before training ([`crate::data::scaling`]); the
    /// statistics come from the training rows, in file order, and are saved
    /// in the model. The loop then trains on the scaled rows.
    #[serde(default)]
    pub scale: Option<ScaleKind>,
    /// Weight each update by its row's class
    /// ([`crate::train::class_weight`]): w~ <- w~ + c_y·y·x~.
    #[serde(default)]
    pub class_weight: Option<ClassWeights>,
    /// Stop when epochs stop improving ([`crate::train::early_stop`]); with
    /// a validation part, the model is the best epoch's weights or the
    /// last's, as its `keep` says.
    #[serde(default)]
    pub early_stop: Option<EarlyStop>,
    /// Move the bias by d·y (times the update's weight) on a mistake,
    /// the features by y·x as ever: scikit-learn's update on sparse input,
    /// where d is 0.01 (its `SPARSE_INTERCEPT_DECAY`). `None` is the
    /// textbook update (d = 1). Finite and > 0, with the bias, in f64 only
    /// (scikit-learn keeps the intercept in float64 beside float32 weights,
    /// which this package's f32 weights, bias among them, cannot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intercept_decay: Option<f64>,
    /// Each row's own weight in its updates, in the data's row order
    /// (scikit-learn's `sample_weight`): w~ <- w~ + (c_y·s_i)·y·x~, a
    /// row of weight 0 never updating. Finite and >= 0. Data, not a
    /// setting, so never written to a file; a run with it has no mistake
    /// bound.
    #[serde(skip)]
    pub sample_weight: Option<std::sync::Arc<[f64]>>,
    /// Rows of the data held out of training for early stopping's
    /// validation part (scikit-learn's validation mask, `early_stopping=
    /// True`): indices into the data, ascending. They keep their places in
    /// the order of every epoch, which skips them, as scikit-learn's loop
    /// skips them; the validation part is these rows, weighted by their
    /// `sample_weight` when given. Run by the scikit-learn schedule
    /// ([`crate::train::scikit`]), with or without an early-stopping rule;
    /// not with a validation part the caller passes
    /// ([`crate::train::Trainer::fit_validated`]). Data, not a setting.
    #[serde(skip)]
    pub held_out: Option<std::sync::Arc<[usize]>>,
    /// The weight of each row of the validation part in its accuracy, in
    /// its row order (scikit-learn's `sample_weight` of its validation
    /// rows; [`crate::train::early_stop::weighted_accuracy`]). The
    /// scikit-learn schedule sets it from `sample_weight` for `held_out`;
    /// a caller of [`crate::train::Trainer::fit_validated`] may give it
    /// for its own validation part. Finite and >= 0. Data, not a setting.
    #[serde(skip)]
    pub validation_weight: Option<std::sync::Arc<[f64]>>,
}

impl Default for TrainParams {
    fn default() -> Self {
        TrainParams {
            max_epochs: 1000,
            bias: true,
            shuffle_seed: None,
            shuffle_every_epoch: None,
            passes: PassPolicy::Adaptive,
            variant: Variant::Classic,
            margin: None,
            multiclass: false,
            scale: None,
            class_weight: None,
            early_stop: None,
            intercept_decay: None,
            sample_weight: None,
            held_out: None,
            validation_weight: None,
        }
    }
}

impl TrainParams {
    /// Checks every rule that does not depend on the data; the first one
    /// broken is the error.
    pub fn check(mut self) -> Result<CheckedParams, ParamError> {
        // A decay of 1 is the textbook update: one way to say it, so that
        // the walks that make only that update stay open, the bound is
        // reported, and a model or checkpoint records nothing.
        if self.intercept_decay == Some(1.0) {
            self.intercept_decay = None;
        }
        if self.max_epochs == 0 {
            return Err(ParamError::MaxEpochs(self.max_epochs));
        }
        if self.multiclass && self.variant == Variant::Pocket {
            return Err(ParamError::PocketWithMulticlass);
        }
        if self.shuffle_seed.is_some() && self.shuffle_every_epoch.is_some() {
            return Err(ParamError::TwoShuffles);
        }
        if let Some(w) = &self.sample_weight
            && let Some((row, v)) = w
                .iter()
                .enumerate()
                .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
        {
            return Err(ParamError::SampleWeight {
                row,
                value: v.to_string(),
            });
        }
        if let Some(rows) = &self.held_out
            && let Some(k) = (1..rows.len()).find(|&k| rows[k] <= rows[k - 1])
        {
            return Err(ParamError::HeldOut(format!(
                "they must ascend, each row once, but row {} follows row {}",
                rows[k],
                rows[k - 1]
            )));
        }
        if let Some(w) = &self.validation_weight
            && let Some((row, v)) = w
                .iter()
                .enumerate()
                .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
        {
            return Err(ParamError::HeldOut(format!(
                "validation_weight[{row}] is {v}: a row's weight must be a finite number >= 0"
            )));
        }
        if let Some(d) = self.intercept_decay {
            if !(d.is_finite() && d > 0.0) {
                return Err(ParamError::InterceptDecay(d.to_string()));
            }
            if !self.bias {
                return Err(ParamError::InterceptDecayWithoutBias);
            }
        }
        if let Some(w) = &self.class_weight {
            w.check()?;
        }
        if let Some(e) = &self.early_stop {
            e.check()?;
        }
        if let Some(m) = &self.margin {
            // A `Margin` is checked when made; one deserialised from a file
            // is checked here.
            Margin::parse(m.text())?;
        }
        Ok(CheckedParams(self))
    }

    /// [`TrainParams::check`] without giving up the parameters.
    pub fn check_ref(&self) -> Result<CheckedParams, ParamError> {
        self.clone().check()
    }
}

/// Parameters that passed [`TrainParams::check`]: readable, not writable,
/// so they stay checked.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedParams(TrainParams);

impl CheckedParams {
    /// The rules that depend on the weights' precision, which [`TrainParams::check`]
    /// does not know. The loop checks them; a front end that knows the
    /// precision before it reads the data checks them first, so that a run
    /// that cannot go is refused before a long read.
    pub fn check_precision(&self, precision: Precision) -> Result<(), ParamError> {
        if self.intercept_decay.is_some() && precision != Precision::F64 {
            // scikit-learn sums the decayed steps in float64 beside
            // float32 weights; this package's f32 bias cannot.
            return Err(ParamError::InterceptDecayPrecision);
        }
        Ok(())
    }

    /// The perceptrons trained together on data with `classes` classes:
    /// one per class for one-vs-rest, else 1.
    pub fn heads(&self, classes: usize) -> usize {
        if self.0.multiclass { classes } else { 1 }
    }

    /// The most passes over `data`'s rows a run starting in (0-based)
    /// epoch `from` can make: its epochs left, at least the one in
    /// progress, times its heads (what `auto` weighs a GPU's start
    /// against; a resumed run has only the rest of its epochs to go).
    pub fn passes_left<F: crate::float::Real>(
        &self,
        data: &crate::data::Dataset<F>,
        from: usize,
    ) -> usize {
        self.0
            .max_epochs
            .saturating_sub(from)
            .max(1)
            .saturating_mul(self.heads(data.classes.len()))
    }

    /// The margin threshold τ as f64 (0 for the classic rule).
    pub fn tau_f64(&self) -> f64 {
        self.0.margin.as_ref().map_or(0.0, |m| m.value::<f64>())
    }

    /// The scaling these parameters ask for, fitted on `data` (in file
    /// order); `None` without `scale`. Apply it with [`Scaling::apply_to`]
    /// before shuffling, and give it to [`crate::model::Model::from_scaled_fit`].
    pub fn fit_scaling<F: Real>(&self, data: &Dataset<F>) -> crate::error::Result<Option<Scaling>> {
        self.0
            .scale
            .map(|kind| Scaling::fit(kind, data))
            .transpose()
    }

    pub fn into_inner(self) -> TrainParams {
        self.0
    }
}

impl std::ops::Deref for CheckedParams {
    type Target = TrainParams;
    fn deref(&self) -> &TrainParams {
        &self.0
    }
}

/// How the loop uses a certifying engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PassPolicy {
    /// Measure every way of walking and use whichever costs least per row:
    /// the engine (its walk, or passes over windows), the host's own fast
    /// certified margins (better when mistakes are only a few rows apart),
    /// the textbook loop (better where a certificate costs more than the
    /// dot it saves), or on sparse rows the host with the other cores
    /// summing ahead (better when mistakes are far apart).
    #[default]
    Adaptive,
    /// Always use the engine: its walk where it has one (the GPU's, or the
    /// CPU engine's parallel one), else passes over windows of rows (for
    /// testing and measuring an engine).
    Always,
    /// Always use engine passes over windows of rows, never the engine's
    /// walk (to measure one against the other).
    Windows,
    /// Always walk on the host with its own fast certified margins.
    Host,
    /// Always walk on the host with the reference dot for every row (the
    /// textbook loop).
    Reference,
    /// Always walk on the host with the other cores summing sparse rows
    /// ahead of it (on dense rows, or with one core, the host's certified
    /// walk instead).
    Ahead,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_names_its_value() {
        let bad = TrainParams {
            max_epochs: 0,
            ..TrainParams::default()
        };
        assert_eq!(bad.check(), Err(ParamError::MaxEpochs(0)));
        let bad = TrainParams {
            multiclass: true,
            variant: Variant::Pocket,
            ..TrainParams::default()
        };
        assert_eq!(bad.check(), Err(ParamError::PocketWithMulticlass));
        let bad = TrainParams {
            held_out: Some(vec![1, 4, 4].into()),
            ..TrainParams::default()
        };
        assert_eq!(
            bad.check(),
            Err(ParamError::HeldOut(
                "they must ascend, each row once, but row 4 follows row 4".into()
            ))
        );
        let bad = TrainParams {
            validation_weight: Some(vec![1.0, f64::NAN].into()),
            ..TrainParams::default()
        };
        assert_eq!(
            bad.check(),
            Err(ParamError::HeldOut(
                "validation_weight[1] is NaN: a row's weight must be a finite number >= 0".into()
            ))
        );
        let fine = TrainParams::default().check().unwrap();
        assert_eq!((fine.heads(10), fine.tau_f64()), (1, 0.0));
    }
}
