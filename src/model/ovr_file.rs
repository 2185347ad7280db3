//! The one-vs-rest shape of the model file (`"kind": "one-vs-rest"`): one
//! weight vector and bias per class, with each class's training record.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data::Scaling;
use crate::error::{Error, Result};
use crate::float::{Precision, Real};
use crate::model::{
    AnyModel, ClassTraining, Classes, FORMAT_NAME, FORMAT_VERSION, Model, TrainingInfo,
};

/// The `kind` of one-vs-rest model files (binary models have none).
pub const KIND: &str = "one-vs-rest";

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
    /// The feature scaling (`--scale`), as in the binary shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scaling: Option<Scaling>,
}

/// Writes a one-vs-rest `model` atomically, in the file shape with
/// `"kind": "one-vs-rest"`.
pub(super) fn save<F: Real>(model: &Model<F>, classes: &[String], path: &Path) -> Result<()> {
    let heads = model.heads();
    let file = OvrFile {
        format: FORMAT_NAME.into(),
        format_version: FORMAT_VERSION,
        kind: KIND.into(),
        created_by: concat!("perceptron ", env!("CARGO_PKG_VERSION")).into(),
        precision: F::PRECISION,
        feature_count: model.feature_count(),
        classes: classes.to_vec(),
        // Written by numbers.rs, on all cores.
        weights: Vec::new(),
        bias: (0..heads).map(|h| model.bias(h).to_f64()).collect(),
        has_bias: model.has_bias(),
        training: model.training.clone(),
        class_training: model.per_class.clone(),
        scaling: model.scaling().cloned(),
    };
    let weights: Vec<&[F]> = (0..heads).map(|h| model.weights(h)).collect();
    crate::output::write_atomic(path, |w| {
        super::numbers::write_pretty_with_arrays(&mut *w, &file, "weights", &weights)?;
        w.write_all(b"\n")
    })
}

/// Builds a one-vs-rest model from validated JSON (called by `model::parse`).
pub(super) fn parse_value(path: &Path, value: serde_json::Value) -> Result<AnyModel> {
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
        Precision::F32 => Ok(AnyModel::F32(build::<f32>(path, file)?)),
        Precision::F64 => Ok(AnyModel::F64(build::<f64>(path, file)?)),
    }
}

fn build<F: Real>(path: &Path, file: OvrFile) -> Result<Model<F>> {
    let exact = |what: String, v: f64| crate::float::exact_value::<F>(path, &what, v);
    let dim = file.feature_count + file.has_bias as usize;
    let mut weights = Vec::with_capacity(file.weights.len() * dim);
    for (c, w) in file.weights.iter().enumerate() {
        for (j, &v) in w.iter().enumerate() {
            weights.push(exact(format!("class {} weight {}", c + 1, j + 1), v)?);
        }
        if file.has_bias {
            weights.push(exact(format!("class {} bias", c + 1), file.bias[c])?);
        }
    }
    Model::new(
        weights,
        file.feature_count,
        file.has_bias,
        Classes::OneVsRest(file.classes),
        file.training,
        file.class_training,
    )
    .and_then(|m| m.with_scaling(file.scaling))
    .map_err(|e| Error::model(path, format!("is corrupt: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three_classes() -> Model<f64> {
        Model::new(
            vec![1.0, 0.0, -1.0, 0.25, 0.5, -0.5],
            1,
            true,
            Classes::OneVsRest(vec!["a".into(), "1".into(), "c".into()]),
            training(),
            vec![class(); 3],
        )
        .unwrap()
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

    fn text_of(m: &Model<f64>) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        m.save(&path).unwrap();
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn models_round_trip_and_duplicate_classes_are_refused() {
        let m = three_classes();
        let text = text_of(&m);
        let AnyModel::F64(back) = crate::model::parse(Path::new("m.json"), &text).unwrap() else {
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
