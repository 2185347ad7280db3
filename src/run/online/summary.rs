//! What an online run made and found: its model (a snapshot's or the
//! final one) and its summary, the one record of the run that every front
//! end prints (as JSON by serde, or as text by `text.rs`).

use serde::Serialize;

use super::run::OnlineRun;
use crate::data::Format;
use crate::float::{Precision, Real};
use crate::model::{DataLayout, Model, TrainingInfo};
use crate::online::{OnlineInfo, OnlineState};
use crate::train::Variant;

/// The figures of an online run at its end: `perceptron online`'s
/// summary, its fields and their order the JSON's.
#[derive(Serialize, Clone, Debug)]
pub struct OnlineSummary {
    /// The stream's name: its path, or `<stdin>`.
    pub data: String,
    pub format: Format,
    pub precision: Precision,
    pub bias: bool,
    pub positive_label: String,
    pub negative_label: String,
    /// How labels map to -1/+1: `model` (the `--init` model's), `positive`
    /// (`--positive`) or `numeric` (-1, +1, 0, 1).
    pub label_rule: &'static str,
    /// The `--init` model's file.
    pub init: Option<String>,
    /// Features of the starting weights (0 from w = 0).
    pub init_features: usize,
    pub state: OnlineState,
    pub examples: u64,
    pub features: usize,
    pub features_added: usize,
    /// τ as given (`--margin`).
    pub margin_threshold: Option<String>,
    /// Updates (y w~.x~ <= τ), M of the theorem.
    pub total_mistakes: u64,
    /// Predictions, each made before learning from its example, that were
    /// wrong.
    pub wrong_predictions: u64,
    pub prediction_accuracy: f64,
    /// D = max ||x~|| over the examples seen.
    pub radius: f64,
    /// Whether a second pass was asked for.
    pub report_bound: bool,
    /// The second pass's examples and the right predictions of the final
    /// weights among them (`None` when it did not run).
    pub second_pass_rows: Option<u64>,
    pub second_pass_correct: Option<u64>,
    /// gamma of the final weights over every example (second pass).
    pub margin: Option<f64>,
    /// The theorem's bound on M, when it applies.
    pub mistake_bound: Option<f64>,
    /// Whether M is within the bound (up to the slack rounding allows).
    pub bound_holds: Option<bool>,
    /// Where the front end saved the final model, as it shows the path
    /// (`None`: not saved). The run does not save it, so it leaves this
    /// `None` for the front end to fill.
    pub model: Option<String>,
    /// Where the front end saved the snapshots, as it shows the path; like
    /// `model`, the front end's to fill.
    pub snapshot: Option<String>,
    /// Snapshots saved, the last one included.
    pub snapshots: u64,
    pub seconds: f64,
    pub peak_memory_bytes: Option<u64>,
}

impl<F: Real> OnlineRun<'_, F> {
    /// The bound the theorem gives for this run, when it applies:
    /// (D^2 + 2τ)/gamma^2, which is (D/gamma)^2 for τ = 0.
    fn mistake_bound(&self) -> Option<f64> {
        let gamma = self.bound.as_ref()?.margin?;
        if self.init.is_some() {
            return None;
        }
        let d = self.learner.radius();
        let tau = self.params.tau::<F>().to_f64();
        Some(((d * d + 2.0 * tau) / (gamma * gamma)).max(0.0))
    }

    /// The share of predictions, each made before learning, that were right.
    fn prequential_accuracy(&self) -> f64 {
        let n = self.learner.examples();
        if n == 0 {
            0.0
        } else {
            (n - self.learner.wrong_predictions()) as f64 / n as f64
        }
    }

    /// The model as it stands, in a run in `state`.
    pub(super) fn model(&self, state: OnlineState) -> Model<F> {
        let l = &self.learner;
        let done = state != OnlineState::Running;
        let mut weights = l.weights().to_vec();
        if l.has_bias() {
            weights.push(l.bias());
        }
        let training = TrainingInfo {
            epochs: 1,
            max_epochs: 1,
            mistakes_per_epoch: vec![l.mistakes()],
            total_mistakes: l.mistakes(),
            converged: state == OnlineState::Ended && l.mistakes() == 0,
            radius: l.radius(),
            margin: if done {
                self.bound.as_ref().and_then(|b| b.margin)
            } else {
                None
            },
            mistake_bound: if done { self.mistake_bound() } else { None },
            backend: "online".into(),
            seed: None,
            shuffle_every_epoch: None,
            intercept_decay: None,
            nominal_epochs: None,
            data: self.data_name().display().to_string(),
            rows: usize::try_from(l.examples()).unwrap_or(usize::MAX),
            training_accuracy: self.prequential_accuracy(),
            seconds: self.started.elapsed().as_secs_f64(),
            variant: Variant::Classic,
            margin_threshold: self.params.margin.clone(),
            init: self.init.as_ref().map(|p| p.display().to_string()),
            pocket_epoch: None,
            pocket_training_accuracy: None,
            online: Some(OnlineInfo {
                examples: l.examples(),
                wrong_predictions: l.wrong_predictions(),
                features_added: l.features().saturating_sub(self.init_features),
                state,
            }),
            data_layout: Some(DataLayout::of(
                self.stream.format(),
                self.stream.csv_info().as_ref(),
                self.stream.libsvm_info().as_ref(),
                self.opts.label_column.as_ref(),
            )),
            class_weights: None,
            early_stopping: None,
            distributed: None,
        };
        Model::binary(weights, l.has_bias(), self.rule.map(), training)
    }

    /// The figures of the run, ended in `state`.
    pub fn summary(&self, state: OnlineState) -> OnlineSummary {
        let l = &self.learner;
        let map = self.rule.map();
        let bound = self.bound.as_ref();
        let mistake_bound = self.mistake_bound();
        OnlineSummary {
            data: self.data_name().display().to_string(),
            format: self.stream.format(),
            precision: F::PRECISION,
            bias: l.has_bias(),
            positive_label: map.positive.clone(),
            negative_label: map.negative_text().to_owned(),
            label_rule: self.rule.name(),
            init: self.init.as_ref().map(|p| p.display().to_string()),
            init_features: self.init_features,
            state,
            examples: l.examples(),
            features: l.features(),
            features_added: l.features().saturating_sub(self.init_features),
            margin_threshold: self.params.margin.as_ref().map(|m| m.text().to_owned()),
            total_mistakes: l.mistakes(),
            wrong_predictions: l.wrong_predictions(),
            prediction_accuracy: self.prequential_accuracy(),
            radius: l.radius(),
            report_bound: self.params.report_bound,
            second_pass_rows: bound.map(|b| b.tally.rows()),
            second_pass_correct: bound.map(|b| b.tally.correct()),
            margin: bound.and_then(|b| b.margin),
            mistake_bound,
            bound_holds: mistake_bound
                .map(|b| l.mistakes() as f64 <= b * (1.0 + crate::train::theory::BOUND_SLACK)),
            model: None,
            snapshot: None,
            snapshots: self.snapshots,
            seconds: self.started.elapsed().as_secs_f64(),
            peak_memory_bytes: crate::memory::peak_rss_bytes(),
        }
    }
}
