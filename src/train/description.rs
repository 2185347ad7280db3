//! One training run, described once: what was asked of which data. The
//! checkpoint's identity is this description, and the model file's
//! `training` section and the reports are made from it and the [`Fit`].
//!
//! [`Fit`]: crate::train::Fit

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::data::{Dataset, LabelMap, ScaleKind};
use crate::error::Difference;
use crate::float::{Precision, Real};
use crate::train::class_weight::ClassWeights;
use crate::train::early_stop::EarlyStop;
use crate::train::params::CheckedParams;
use crate::train::variant::{Margin, Variant};

/// What shapes a run's result, and must therefore match between an
/// interrupted run and the one resuming it; plus how it was set up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunDescription {
    pub precision: Precision,
    pub bias: bool,
    pub max_epochs: usize,
    /// The shuffle seed (None: file order).
    pub seed: Option<u64>,
    /// scikit-learn's reshuffle before every epoch, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle_every_epoch: Option<crate::train::scikit::order::EveryEpoch>,
    pub labels: LabelMap,
    pub rows: usize,
    pub features: usize,
    /// `data::fingerprint::fingerprint` of the data in file order; empty
    /// until [`RunDescription::take_fingerprint`] (it costs a pass over the data).
    pub fingerprint: String,
    pub variant: Variant,
    /// The margin threshold as given (None: the classic rule).
    pub margin: Option<Margin>,
    /// Fingerprint of the initial weights' source (None: started from zero).
    pub init: Option<String>,
    /// One-vs-rest training (one head per class).
    #[serde(default)]
    pub multiclass: bool,
    /// Perceptrons trained together (the classes in one-vs-rest, else 1).
    #[serde(default = "one")]
    pub heads: usize,
    /// The features were scaled before training (statistics of the data,
    /// which the fingerprint identifies). Absent from older checkpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScaleKind>,
    /// The class weights as asked for (resolved from the data, which the
    /// fingerprint identifies). Absent from older checkpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_weight: Option<ClassWeights>,
    /// The early-stopping rule, held-out part included. Absent from older
    /// checkpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_stop: Option<EarlyStop>,
    /// The intercept decay (None: the textbook update). Absent from older
    /// checkpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intercept_decay: Option<f64>,
    /// How the run was set up beyond what must match: adopted by a resumed
    /// run that does not say otherwise, never compared. Absent from older
    /// checkpoints, and ignored by older builds.
    #[serde(default, skip_serializing_if = "RunSettings::is_empty")]
    pub settings: RunSettings,
}

fn one() -> usize {
    1
}

/// Paths and intervals of a run, as given (relative paths are relative to
/// the directory the run was started in).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// Where the model is written, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<PathBuf>,
    /// The initial model's path (its content is [`RunDescription::init`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<PathBuf>,
    /// Epochs between checkpoints, when the run checkpointed periodically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_every: Option<usize>,
}

impl RunSettings {
    fn is_empty(&self) -> bool {
        *self == RunSettings::default()
    }
}

impl RunDescription {
    /// The run `params` asks for on `data` in precision `F`, started from
    /// zero or from initial weights identified by `init`. The fingerprint
    /// is left empty (see [`RunDescription::take_fingerprint`]).
    pub fn new<F: Real>(
        params: &CheckedParams,
        data: &Dataset<F>,
        init: Option<String>,
        settings: RunSettings,
    ) -> Self {
        RunDescription {
            precision: F::PRECISION,
            bias: params.bias,
            max_epochs: params.max_epochs,
            seed: params.shuffle_seed,
            shuffle_every_epoch: params.shuffle_every_epoch.clone(),
            labels: data.label_map.clone(),
            rows: data.rows(),
            features: data.cols(),
            fingerprint: String::new(),
            variant: params.variant,
            margin: params.margin.clone(),
            init,
            multiclass: params.multiclass,
            heads: params.heads(data.classes.len()),
            scale: params.scale,
            class_weight: params.class_weight.clone(),
            early_stop: params.early_stop.clone(),
            intercept_decay: params.intercept_decay,
            settings,
        }
    }

    /// Fingerprints `data`, which must be in file order (before a shuffle),
    /// unless done already.
    pub fn take_fingerprint<F: Real>(&mut self, data: &Dataset<F>) {
        if self.fingerprint.is_empty() {
            self.fingerprint = crate::data::fingerprint::fingerprint(data);
        }
    }

    /// Every difference from `other` (the run trying to resume this one).
    pub fn differences(&self, other: &RunDescription) -> Vec<Difference> {
        let mut d = Vec::new();
        self.loop_differences(other, &mut d);
        self.rule_differences(other, &mut d);
        self.start_differences(other, &mut d);
        d
    }

    /// The data and the loop over it: rows, precision, bias, epoch cap
    /// and order.
    fn loop_differences(&self, other: &RunDescription, d: &mut Vec<Difference>) {
        // The fingerprint is of the values in the run's precision and of
        // the labels as the run reads them: under another precision, label
        // map or one-vs-rest it differs for the same file, and only that
        // difference is named.
        let comparable = self.precision == other.precision
            && self.multiclass == other.multiclass
            && self.labels == other.labels;
        if (comparable && self.fingerprint != other.fingerprint)
            || self.rows != other.rows
            || self.features != other.features
        {
            d.push(Difference::Data {
                was_rows: self.rows,
                was_features: self.features,
                was_fingerprint: self.fingerprint.clone(),
                rows: other.rows,
                features: other.features,
                fingerprint: other.fingerprint.clone(),
            });
        }
        if self.precision != other.precision {
            d.push(Difference::Precision {
                was: self.precision.to_string(),
                now: other.precision.to_string(),
            });
        }
        if self.bias != other.bias {
            d.push(Difference::Bias {
                was: self.bias,
                now: other.bias,
            });
        }
        if self.max_epochs != other.max_epochs {
            d.push(Difference::MaxEpochs {
                was: self.max_epochs,
                now: other.max_epochs,
            });
        }
        if self.seed != other.seed {
            d.push(Difference::Order {
                was: self.seed,
                now: other.seed,
            });
        }
        if self.shuffle_every_epoch != other.shuffle_every_epoch {
            let text = |e: &Option<crate::train::scikit::order::EveryEpoch>| {
                e.as_ref()
                    .map(|e| serde_json::to_string(e).unwrap_or_default())
            };
            d.push(Difference::Reshuffle {
                was: text(&self.shuffle_every_epoch),
                now: text(&other.shuffle_every_epoch),
            });
        }
    }

    /// The rule learned: variant, margin, one-vs-rest, the intercept's
    /// decay and early stopping.
    fn rule_differences(&self, other: &RunDescription, d: &mut Vec<Difference>) {
        if self.variant != other.variant {
            d.push(Difference::Variant {
                was: self.variant.name().to_owned(),
                now: other.variant.name().to_owned(),
            });
        }
        if self.margin != other.margin {
            let text = |m: &Option<Margin>| m.as_ref().map(|m| m.text().to_owned());
            d.push(Difference::Margin {
                was: text(&self.margin),
                now: text(&other.margin),
            });
        }
        if self.multiclass != other.multiclass {
            d.push(Difference::Multiclass {
                was: self.multiclass,
                now: other.multiclass,
            });
        }
        if self.intercept_decay != other.intercept_decay {
            let text = |d: Option<f64>| d.map(|d| d.to_string());
            d.push(Difference::InterceptDecay {
                was: text(self.intercept_decay),
                now: text(other.intercept_decay),
            });
        }
        if self.early_stop != other.early_stop {
            let text = |e: &Option<EarlyStop>| e.as_ref().map(early_stop_text);
            d.push(Difference::EarlyStop {
                was: text(&self.early_stop),
                now: text(&other.early_stop),
            });
        }
    }

    /// How the data and the weights start: class weights, scaling, the
    /// initial model and the labels.
    fn start_differences(&self, other: &RunDescription, d: &mut Vec<Difference>) {
        if self.class_weight != other.class_weight {
            let text = |w: &Option<ClassWeights>| w.as_ref().map(ClassWeights::text);
            d.push(Difference::ClassWeight {
                was: text(&self.class_weight),
                now: text(&other.class_weight),
            });
        }
        if self.scale != other.scale {
            let name = |s: Option<ScaleKind>| s.map(|s| s.name().to_owned());
            d.push(Difference::Scale {
                was: name(self.scale),
                now: name(other.scale),
            });
        }
        if self.init != other.init {
            d.push(Difference::Init {
                was: self.init.is_some(),
                now: other.init.is_some(),
            });
        }
        if self.labels != other.labels {
            d.push(Difference::Labels {
                was: self.labels.positive.clone(),
                now: other.labels.positive.clone(),
            });
        }
    }
}

/// Early stopping's options as a resume error names them.
fn early_stop_text(e: &EarlyStop) -> String {
    let on = match e.validation {
        Some(v) => format!(
            "on a held-out {} (seed {})",
            crate::text::fmt_g(v.fraction),
            v.seed
        ),
        None => "on the training mistakes".to_owned(),
    };
    format!(
        "tol {}, {} epochs, {on}",
        crate::text::fmt_g(e.tol),
        e.n_iter_no_change
    )
}
