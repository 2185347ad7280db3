//! A fitted perceptron: one model type with k heads (a binary model is
//! k = 1, one-vs-rest has a head per class), how it predicts, and its file.
//!
//! Predictions use the reference arithmetic: s_h = w~_h·x~ summed in index
//! order, bias last ([`crate::engine::reference::dot`]). One head predicts its +1
//! class iff s > 0 ([`crate::engine::reference::predicted_sign`]); several heads
//! predict the class whose head scores highest, ties to the class listed
//! first ([`crate::engine::reference::argmax`]).

mod columns;
pub mod evaluation;
mod file;
mod numbers;
mod ovr_file;
mod predict;
mod reading;
mod training;
mod warm;

use crate::data::{Dataset, Features, LabelMap, Row, Scaling};
use crate::engine::reference;
use crate::error::{Error, Result};
use crate::float::{Precision, Real};
use crate::train::{Fit, RunDescription};

pub use crate::saved::{Kind as FileKind, MAX_MODEL_BYTES, read_capped};
pub use columns::Fitted;
pub use file::{load, parse};
pub use ovr_file::KIND as ONE_VS_REST_KIND;
pub use predict::{DecideStats, NonFinite, Predictions};
pub use reading::{LabelFromModel, ReadForModel, options_for_model};
pub use training::{
    ClassTraining, ColumnRef, DataLayout, DistributedInfo, LabelWeight, TrainingInfo,
};

/// The `format` field of every model file.
pub const FORMAT_NAME: &str = "perceptron-model";
/// The newest model format this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// What a model's heads stand for.
#[derive(Clone, Debug, PartialEq)]
pub enum Classes {
    /// One head: s > 0 is the +1 label, anything else the -1 label (or, in
    /// one-vs-rest against a chosen `--positive`, "rest").
    Binary(LabelMap),
    /// One head per class (one-vs-rest), in head order.
    OneVsRest(Vec<String>),
}

/// A trained perceptron with `heads` weight vectors over `features` features.
#[derive(Clone, Debug, PartialEq)]
pub struct Model<F> {
    /// Head after head, each head's feature weights then its bias (when
    /// there is one): the layout training uses and the reference dot reads.
    weights: Vec<F>,
    features: usize,
    has_bias: bool,
    classes: Classes,
    pub training: TrainingInfo,
    /// One-vs-rest: what training says about each class's perceptron
    /// (empty for a binary model).
    pub per_class: Vec<ClassTraining>,
    /// The feature scaling training applied (`--scale`), which every
    /// prediction applies first; `None` for unscaled models (and every file
    /// written before scaling existed).
    scaling: Option<Scaling>,
}

/// A model of either precision, as read from a file.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyModel {
    F32(Model<f32>),
    F64(Model<f64>),
}

impl AnyModel {
    pub fn precision(&self) -> Precision {
        match self {
            AnyModel::F32(_) => Precision::F32,
            AnyModel::F64(_) => Precision::F64,
        }
    }

    pub fn training(&self) -> &TrainingInfo {
        match self {
            AnyModel::F32(m) => &m.training,
            AnyModel::F64(m) => &m.training,
        }
    }

    pub fn heads(&self) -> usize {
        match self {
            AnyModel::F32(m) => m.heads(),
            AnyModel::F64(m) => m.heads(),
        }
    }

    /// The feature scaling the model applies before its weights, if any.
    pub fn scaling(&self) -> Option<&Scaling> {
        match self {
            AnyModel::F32(m) => m.scaling(),
            AnyModel::F64(m) => m.scaling(),
        }
    }
}

impl<F: Real> Model<F> {
    /// A model from its weights (`weights`: head after head, each head's
    /// `features` weights then its bias when `has_bias`). The number of
    /// heads follows from `classes`; a length that does not match is
    /// refused.
    pub fn new(
        weights: Vec<F>,
        features: usize,
        has_bias: bool,
        classes: Classes,
        training: TrainingInfo,
        per_class: Vec<ClassTraining>,
    ) -> Result<Self> {
        let heads = match &classes {
            Classes::Binary(_) => 1,
            Classes::OneVsRest(c) => c.len(),
        };
        let dim = features + has_bias as usize;
        if weights.len() != heads * dim {
            return Err(Error::Train(format!(
                "a model of {heads} heads over {features} features{} needs {} weights, not {}",
                if has_bias { " with a bias" } else { "" },
                heads * dim,
                weights.len()
            )));
        }
        let records = per_class.len();
        if heads > 1 && records != heads || heads == 1 && records != 0 {
            return Err(Error::Train(format!(
                "a model of {heads} heads has {records} class records"
            )));
        }
        Ok(Model {
            weights,
            features,
            has_bias,
            classes,
            training,
            per_class,
            scaling: None,
        })
    }

    /// The model with the feature scaling its training applied (checked
    /// against its features).
    pub fn with_scaling(mut self, scaling: Option<Scaling>) -> Result<Self> {
        if let Some(s) = &scaling {
            s.check()
                .map_err(|e| Error::Train(format!("a model's feature scaling: {e}")))?;
            if s.features() != self.features {
                return Err(Error::Train(format!(
                    "a model over {} features cannot have a scaling of {}",
                    self.features,
                    s.features()
                )));
            }
        }
        self.scaling = scaling;
        Ok(self)
    }

    /// The feature scaling applied before the weights (`None`: the weights
    /// read the features as they are).
    pub fn scaling(&self) -> Option<&Scaling> {
        self.scaling.as_ref()
    }

    /// `features` (in the data's own units) as the weights read them: scaled
    /// when the model has a scaling, else as they are. [`Model::predict`]
    /// does this itself; [`Model::scores`] takes rows already transformed.
    pub fn input(&self, features: Features<F>) -> Result<Features<F>> {
        match &self.scaling {
            None => Ok(features),
            Some(s) => s
                .apply(&features)
                .map_err(|e| Error::Train(format!("cannot scale the data for the model: {e}"))),
        }
    }

    /// A binary model from its w~ (the feature weights, then the bias when
    /// `has_bias`).
    pub fn binary(
        weights: Vec<F>,
        has_bias: bool,
        labels: LabelMap,
        training: TrainingInfo,
    ) -> Self {
        Model {
            features: weights.len().saturating_sub(has_bias as usize),
            weights,
            has_bias,
            classes: Classes::Binary(labels),
            training,
            per_class: Vec::new(),
            scaling: None,
        }
    }

    /// The model `fit` returned in the run `run` on `data`, read in `layout`.
    /// A run that scaled its data needs [`Model::from_scaled_fit`].
    pub fn from_fit(
        fit: &Fit<F>,
        run: &RunDescription,
        data: &Dataset<F>,
        layout: Option<DataLayout>,
    ) -> Result<Self> {
        Self::from_scaled_fit(fit, run, data, layout, None)
    }

    /// [`Model::from_fit`] for a run that trained on data scaled by
    /// `scaling` (which must be the scaling `run.scale` names).
    pub fn from_scaled_fit(
        fit: &Fit<F>,
        run: &RunDescription,
        data: &Dataset<F>,
        layout: Option<DataLayout>,
        scaling: Option<Scaling>,
    ) -> Result<Self> {
        if run.scale != scaling.as_ref().map(|s| s.kind) {
            return Err(Error::Train(format!(
                "the run's scaling is {} but the model was given {}",
                run.scale.map_or("none", |k| k.name()),
                scaling.as_ref().map_or("none", |s| s.kind.name())
            )));
        }
        let classes = if run.heads > 1 {
            Classes::OneVsRest(data.classes.iter().map(|c| c.text.clone()).collect())
        } else {
            Classes::Binary(data.label_map.clone())
        };
        Model::new(
            fit.weights.clone(),
            data.cols(),
            fit.bias,
            classes,
            TrainingInfo::of_fit(run, fit, data, layout),
            ClassTraining::of_fit(fit),
        )?
        .with_scaling(scaling)
    }

    pub fn heads(&self) -> usize {
        match &self.classes {
            Classes::Binary(_) => 1,
            Classes::OneVsRest(c) => c.len(),
        }
    }

    pub fn feature_count(&self) -> usize {
        self.features
    }

    /// Whether a bias was trained (false with `--no-bias`: every bias is 0).
    pub fn has_bias(&self) -> bool {
        self.has_bias
    }

    pub fn classes(&self) -> &Classes {
        &self.classes
    }

    /// A binary model's label map (`None` for one-vs-rest).
    pub fn labels(&self) -> Option<&LabelMap> {
        match &self.classes {
            Classes::Binary(l) => Some(l),
            Classes::OneVsRest(_) => None,
        }
    }

    /// The class texts, in the order predictions index them: a binary
    /// model's -1 class then its +1 class; one-vs-rest's classes in head
    /// order.
    pub fn class_names(&self) -> Vec<&str> {
        match &self.classes {
            Classes::Binary(l) => vec![l.negative_text(), &l.positive],
            Classes::OneVsRest(c) => c.iter().map(String::as_str).collect(),
        }
    }

    /// The prediction index of the class a label text names (as text or as
    /// a number: `1`, `+1` and `1.0` are one label), or `None` for a label
    /// the model does not know. In one-vs-rest against a chosen +1 label,
    /// every other label is the -1 class.
    pub fn class_of_label(&self, text: &str) -> Option<usize> {
        match &self.classes {
            Classes::Binary(l) => l.sign_of(text).map(|s| (s > 0) as usize),
            Classes::OneVsRest(c) => c
                .iter()
                .position(|k| crate::data::labels::same_label(k, text)),
        }
    }

    /// Head `h`'s w~ = [w, b] (or just w without a bias).
    pub fn head(&self, h: usize) -> &[F] {
        let dim = self.features + self.has_bias as usize;
        &self.weights[h * dim..(h + 1) * dim]
    }

    /// Head `h`'s feature weights, without the bias.
    pub fn weights(&self, h: usize) -> &[F] {
        &self.head(h)[..self.features]
    }

    /// Head `h`'s bias (0 without one).
    pub fn bias(&self, h: usize) -> F {
        if self.has_bias {
            self.head(h)[self.features]
        } else {
            F::ZERO
        }
    }

    /// Every head's w~, head after head (the layout training uses).
    pub fn all_weights(&self) -> &[F] {
        &self.weights
    }

    /// s_h = w~_h·x~ for every head, with the reference arithmetic. Rows may
    /// have fewer features than the model (missing ones are zero), never more.
    /// A scaled model's rows must be scaled already ([`Model::input`]).
    pub fn scores(&self, row: Row<'_, F>, out: &mut Vec<F>) {
        out.clear();
        out.extend((0..self.heads()).map(|h| reference::dot(self.head(h), row, self.has_bias)));
    }

    /// The prediction index (see [`Model::class_names`]) of the class
    /// `scores` (from [`Model::scores`]) give.
    pub fn class_of_scores(&self, scores: &[F]) -> usize {
        match &self.classes {
            Classes::Binary(_) => (reference::predicted_sign(scores[0]) > 0) as usize,
            Classes::OneVsRest(_) => reference::argmax(scores),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DenseMatrix, Features};
    use crate::engine::backend::Backend;
    use crate::engine::gpu::GpuOptions;

    fn info() -> TrainingInfo {
        serde_json::from_value(serde_json::json!({
            "epochs": 1, "max_epochs": 1, "mistakes_per_epoch": [0], "total_mistakes": 0,
            "converged": true, "radius": 1.0, "margin": null, "mistake_bound": null,
            "backend": "reference", "seed": null, "data": "x.csv", "rows": 3,
            "training_accuracy": 1.0, "seconds": 0.0
        }))
        .unwrap()
    }

    #[test]
    fn a_binary_model_is_one_head_and_ties_go_to_the_negative_class() {
        let labels = LabelMap {
            positive: "yes".into(),
            negative: Some("no".into()),
        };
        let m = Model::new(
            vec![1.0f64, -1.0, 0.0],
            2,
            true,
            Classes::Binary(labels),
            info(),
            vec![],
        )
        .unwrap();
        assert_eq!((m.heads(), m.class_names()), (1, vec!["no", "yes"]));
        assert_eq!(m.class_of_label("yes"), Some(1));
        assert_eq!(m.class_of_label("maybe"), None);
        let mut features = Features::Dense(DenseMatrix {
            rows: 3,
            cols: 2,
            values: vec![2.0, 1.0, 1.0, 1.0, 0.0, 3.0].into(),
        });
        let p = m
            .predict(&mut features, Backend::Cpu, &GpuOptions::default())
            .unwrap();
        // s = 1, 0 (a tie: the -1 class) and -3.
        assert_eq!(p.classes, [1, 0, 0]);
        assert_eq!(features.rows(), 3, "the features are given back");
    }

    #[test]
    fn one_vs_rest_takes_the_highest_score_and_the_first_of_a_tie() {
        let classes = Classes::OneVsRest(vec!["a".into(), "b".into(), "c".into()]);
        let m = Model::new(
            vec![1.0f32, 0.0, 1.0, 0.0, -1.0, 5.0],
            1,
            true,
            classes,
            info(),
            vec![
                ClassTraining {
                    mistakes_per_epoch: vec![],
                    total_mistakes: 0,
                    converged_epoch: None,
                    margin: None,
                    mistake_bound: None,
                };
                3
            ],
        )
        .unwrap();
        assert_eq!((m.bias(2), m.weights(1)), (5.0, &[1.0f32][..]));
        let mut features = Features::Dense(DenseMatrix {
            rows: 2,
            cols: 1,
            values: vec![5.0f32, 10.0].into(),
        });
        let p = m
            .predict(&mut features, Backend::Reference, &GpuOptions::default())
            .unwrap();
        // x = 5: scores 5, 5, 0 (a tie of a and b: a); x = 10: 10, 10, -5.
        assert_eq!(p.classes, [0, 0]);
        assert!(Model::new(vec![1.0f32], 1, true, m.classes().clone(), info(), vec![]).is_err());
    }
}
