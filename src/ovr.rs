//! One-vs-rest multiclass models: one binary perceptron per class, all
//! trained together in the same passes (`train --multiclass ovr`).
//!
//! Prediction takes the class whose perceptron scores highest
//! (s_k = w_k·x + b_k, the reference arithmetic); a tie goes to the class
//! listed first, which is the class seen first in the training data.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data::Row;
use crate::error::{Error, Result};
use crate::float::{Precision, Real};
use crate::model::{FORMAT_NAME, FORMAT_VERSION, TrainingInfo};
use crate::reference;

/// The `kind` of one-vs-rest model files (binary models have none).
pub const KIND: &str = "one-vs-rest";

/// The index of the highest score; the first one wins a tie, and a NaN
/// score never wins over a number.
pub fn argmax<F: Real>(scores: &[F]) -> usize {
    let mut best = 0;
    for (k, s) in scores.iter().enumerate() {
        let best_is_nan = scores[best].to_f64().is_nan();
        if *s > scores[best] || (best_is_nan && !s.to_f64().is_nan()) {
            best = k;
        }
    }
    best
}

/// What training says about one class's perceptron.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassTraining {
    pub mistakes_per_epoch: Vec<u64>,
    pub total_mistakes: u64,
    /// The first epoch (1-based) without a mistake for this class, if any.
    pub converged_epoch: Option<usize>,
    /// gamma_k = min y w_k~·x~ / ||w_k~|| when this class's perceptron
    /// separates it from the rest.
    pub margin: Option<f64>,
    pub mistake_bound: Option<f64>,
}

/// A one-vs-rest model.
#[derive(Clone, Debug, PartialEq)]
pub struct OvrModel<F> {
    /// Class label texts, in head order.
    pub classes: Vec<String>,
    /// Per class: the feature weights.
    pub weights: Vec<Vec<F>>,
    /// Per class: the bias (0 without one).
    pub biases: Vec<F>,
    pub has_bias: bool,
    pub training: TrainingInfo,
    pub per_class: Vec<ClassTraining>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OvrFile {
    format: String,
    format_version: u32,
    kind: String,
    created_by: String,
    precision: Precision,
    feature_count: usize,
    classes: Vec<String>,
    weights: Vec<Vec<f64>>,
    bias: Vec<f64>,
    has_bias: bool,
    training: TrainingInfo,
    class_training: Vec<ClassTraining>,
}

impl<F: Real> OvrModel<F> {
    pub fn feature_count(&self) -> usize {
        self.weights.first().map_or(0, Vec::len)
    }

    /// Class k's w~ = [w_k, b_k] (or w_k without a bias).
    pub fn augmented(&self, k: usize) -> Vec<F> {
        let mut w = self.weights[k].clone();
        if self.has_bias {
            w.push(self.biases[k]);
        }
        w
    }

    /// The scores of every class and the predicted class (ties: lowest index).
    pub fn predict(&self, augmented: &[Vec<F>], row: Row<'_, F>, scores: &mut Vec<F>) -> usize {
        scores.clear();
        scores.extend(
            augmented
                .iter()
                .map(|w| reference::dot(w, row, self.has_bias)),
        );
        argmax(scores)
    }

    /// Writes the model atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let file = OvrFile {
            format: FORMAT_NAME.into(),
            format_version: FORMAT_VERSION,
            kind: KIND.into(),
            created_by: concat!("perceptron ", env!("CARGO_PKG_VERSION")).into(),
            precision: F::PRECISION,
            feature_count: self.feature_count(),
            classes: self.classes.clone(),
            weights: self
                .weights
                .iter()
                .map(|w| w.iter().map(|v| v.to_f64()).collect())
                .collect(),
            bias: self.biases.iter().map(|v| v.to_f64()).collect(),
            has_bias: self.has_bias,
            training: self.training.clone(),
            class_training: self.per_class.clone(),
        };
        crate::output::write_atomic(path, |w| {
            serde_json::to_writer_pretty(&mut *w, &file).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })
    }
}

/// Builds a one-vs-rest model from validated JSON (called by `model::parse`).
pub(crate) fn parse_value(path: &Path, value: serde_json::Value) -> Result<crate::model::AnyModel> {
    let file: OvrFile = serde_json::from_value(value)
        .map_err(|e| Error::model(path, format!("is corrupt: {e}")))?;
    let k = file.classes.len();
    if k < 2 || file.weights.len() != k || file.bias.len() != k || file.class_training.len() != k {
        return Err(Error::model(
            path,
            format!(
                "is corrupt: {k} classes but {} weight vectors, {} biases and {} class records",
                file.weights.len(),
                file.bias.len(),
                file.class_training.len()
            ),
        ));
    }
    if let Some(bad) = file
        .weights
        .iter()
        .position(|w| w.len() != file.feature_count)
    {
        return Err(Error::model(
            path,
            format!(
                "is corrupt: class {} has {} weights, not feature_count {}",
                bad + 1,
                file.weights[bad].len(),
                file.feature_count
            ),
        ));
    }
    if !file.has_bias && file.bias.iter().any(|b| *b != 0.0) {
        return Err(Error::model(
            path,
            "is corrupt: \"has_bias\" is false but a bias is not 0",
        ));
    }
    // Two heads for one class would make predictions ambiguous and eval's
    // confusion matrix wrong.
    if let Err((a, b)) = crate::data::LabelTable::from_parts(file.classes.clone(), &vec![0; k]) {
        return Err(Error::model(
            path,
            format!(
                "is corrupt: classes {} and {} ({} and {}) are the same label; a model's \
                 classes must differ",
                a + 1,
                b + 1,
                crate::data::message::quote(&file.classes[a]),
                crate::data::message::quote(&file.classes[b])
            ),
        ));
    }
    if let Some(layout) = &file.training.data_layout {
        layout.check(path)?;
    }
    match file.precision {
        Precision::F32 => Ok(crate::model::AnyModel::OvrF32(build::<f32>(path, file)?)),
        Precision::F64 => Ok(crate::model::AnyModel::OvrF64(build::<f64>(path, file)?)),
    }
}

fn build<F: Real>(path: &Path, file: OvrFile) -> Result<OvrModel<F>> {
    let exact = |what: String, v: f64| crate::model::exact_value::<F>(path, &what, v);
    let mut weights = Vec::with_capacity(file.weights.len());
    for (c, w) in file.weights.iter().enumerate() {
        weights.push(
            w.iter()
                .enumerate()
                .map(|(j, &v)| exact(format!("class {} weight {}", c + 1, j + 1), v))
                .collect::<Result<Vec<F>>>()?,
        );
    }
    let biases = file
        .bias
        .iter()
        .enumerate()
        .map(|(c, &v)| exact(format!("class {} bias", c + 1), v))
        .collect::<Result<Vec<F>>>()?;
    Ok(OvrModel {
        classes: file.classes,
        weights,
        biases,
        has_bias: file.has_bias,
        training: file.training,
        per_class: file.class_training,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AnyModel;

    fn three_classes() -> OvrModel<f64> {
        OvrModel {
            classes: vec!["a".into(), "1".into(), "c".into()],
            weights: vec![vec![1.0], vec![-1.0], vec![0.5]],
            biases: vec![0.0, 0.25, -0.5],
            has_bias: true,
            training: training(),
            per_class: vec![class(); 3],
        }
    }

    fn training() -> TrainingInfo {
        serde_json::from_value(serde_json::json!({
            "epochs": 1, "max_epochs": 1, "mistakes_per_epoch": [0], "total_mistakes": 0,
            "converged": true, "radius": 1.0, "margin": null, "mistake_bound": null,
            "backend": "reference", "seed": null, "data": "x.csv", "rows": 3,
            "training_accuracy": 1.0, "seconds": 0.0
        }))
        .unwrap()
    }

    fn class() -> ClassTraining {
        ClassTraining {
            mistakes_per_epoch: vec![0],
            total_mistakes: 0,
            converged_epoch: Some(1),
            margin: None,
            mistake_bound: None,
        }
    }

    fn text_of(m: &OvrModel<f64>) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        m.save(&path).unwrap();
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn models_round_trip_and_duplicate_classes_are_refused() {
        let m = three_classes();
        let text = text_of(&m);
        let AnyModel::OvrF64(back) = crate::model::parse(Path::new("m.json"), &text).unwrap()
        else {
            panic!("kind or precision changed")
        };
        assert_eq!(back, m);
        let refused = |text: &str| {
            crate::model::parse(Path::new("m.json"), text)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            refused(&text.replace("\"c\"", "\"a\"")),
            "m.json: is corrupt: classes 1 and 3 (\"a\" and \"a\") are the same label; a \
             model's classes must differ"
        );
        // The same number, spelt differently, is the same label.
        assert_eq!(
            refused(&text.replace("\"c\"", "\"+1.0\"")),
            "m.json: is corrupt: classes 2 and 3 (\"1\" and \"+1.0\") are the same label; a \
             model's classes must differ"
        );
    }
}
