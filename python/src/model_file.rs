//! The command line's model file, both ways: an estimator saves the file
//! `perceptron predict` reads, and loads the file `perceptron train` writes,
//! with every weight back to its identical bits.

use std::path::PathBuf;

use numpy::{Element, PyArray1, PyArray2, PyArrayMethods};
use perceptron::data::LabelMap;
use perceptron::model::{self, AnyModel, ClassTraining, Classes, Model, TrainingInfo};
use perceptron::{Precision, Real};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::{Deserialize, Serialize};

use crate::errors::to_py;
use crate::input::precision;

/// What a model file says besides its weights and classes: the `training`
/// section and, for one-vs-rest, each class's record. Kept by the
/// estimator as JSON text, so that it pickles and saves unchanged.
#[derive(Serialize, Deserialize)]
pub struct ModelInfo {
    pub training: TrainingInfo,
    #[serde(default)]
    pub per_class: Vec<ClassTraining>,
}

impl ModelInfo {
    pub fn to_json(&self) -> PyResult<String> {
        serde_json::to_string(self).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn from_json(text: &str) -> PyResult<Self> {
        serde_json::from_str(text).map_err(|e| {
            PyValueError::new_err(format!("the estimator's model information is corrupt: {e}"))
        })
    }
}

/// Writes a model file (atomically, as the command line does): one head
/// with `classes` = [the -1 class, the +1 class], or one-vs-rest with a
/// head per class, in `classes` order.
#[pyfunction]
#[pyo3(signature = (path, coef, intercept, classes, *, precision, fit_intercept, info))]
#[allow(clippy::too_many_arguments)]
pub fn save_model(
    path: PathBuf,
    coef: &Bound<'_, PyAny>,
    intercept: &Bound<'_, PyAny>,
    classes: Vec<String>,
    precision: &str,
    fit_intercept: bool,
    info: &str,
) -> PyResult<()> {
    let info = ModelInfo::from_json(info)?;
    match self::precision(precision)? {
        Precision::F32 => save_in::<f32>(&path, coef, intercept, classes, fit_intercept, info),
        Precision::F64 => save_in::<f64>(&path, coef, intercept, classes, fit_intercept, info),
    }
}

fn save_in<F: Real + Element>(
    path: &std::path::Path,
    coef: &Bound<'_, PyAny>,
    intercept: &Bound<'_, PyAny>,
    classes: Vec<String>,
    bias: bool,
    info: ModelInfo,
) -> PyResult<()> {
    let coef = coef
        .cast::<PyArray2<F>>()
        .map_err(|_| PyValueError::new_err(format!("coef_ must be {}", F::PRECISION)))?
        .to_owned_array();
    let intercept = intercept
        .cast::<PyArray1<F>>()
        .map_err(|_| PyValueError::new_err(format!("intercept_ must be {}", F::PRECISION)))?
        .to_owned_array();
    let (heads, features) = coef.dim();
    let mut weights = Vec::with_capacity(heads * (features + bias as usize));
    for h in 0..heads {
        weights.extend(coef.row(h).iter().copied());
        if bias {
            weights.push(intercept[h]);
        }
    }
    let (classes, per_class) = if heads == 1 && classes.len() == 2 {
        let [negative, positive] = [classes[0].clone(), classes[1].clone()];
        let labels = LabelMap {
            positive,
            negative: Some(negative),
        };
        (Classes::Binary(labels), Vec::new())
    } else {
        (Classes::OneVsRest(classes), info.per_class)
    };
    let model =
        Model::new(weights, features, bias, classes, info.training, per_class).map_err(to_py)?;
    model.save(path).map_err(to_py)
}

/// Reads a model file: its precision, `coef` (heads x features),
/// `intercept`, whether it has a bias, its classes in head order (a binary
/// model's -1 class, then its +1 class) and the rest as `info`.
#[pyfunction]
pub fn load_model(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    match model::load(&path).map_err(to_py)? {
        AnyModel::F32(m) => describe(py, m, "f32"),
        AnyModel::F64(m) => describe(py, m, "f64"),
    }
}

fn describe<'py, F: Real + Element>(
    py: Python<'py>,
    m: Model<F>,
    precision: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let heads = m.heads();
    let features = m.feature_count();
    let coef: Vec<F> = (0..heads).flat_map(|h| m.weights(h).to_vec()).collect();
    let intercept: Vec<F> = (0..heads).map(|h| m.bias(h)).collect();
    let out = PyDict::new(py);
    out.set_item("precision", precision)?;
    out.set_item(
        "coef",
        PyArray1::from_vec(py, coef).reshape([heads, features])?,
    )?;
    out.set_item("intercept", PyArray1::from_vec(py, intercept))?;
    out.set_item("fit_intercept", m.has_bias())?;
    out.set_item("classes", m.class_names())?;
    let info = ModelInfo {
        training: m.training.clone(),
        per_class: m.per_class.clone(),
    };
    out.set_item("info", info.to_json()?)?;
    Ok(out)
}
