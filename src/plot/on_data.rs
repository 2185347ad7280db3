//! A saved model's pictures on labelled data (`plot margins`, `plot
//! boundary`): the check that the model is one perceptron, the rows
//! labelled +1/-1 as the model labels them, and each figure made from the
//! data a front end has read for the model.

use std::path::Path;

use super::boundary::Boundary;
use super::margins::Margins;
use crate::data::{self, Features, RawData};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::model::evaluation::true_classes;
use crate::model::{AnyModel, Model};

/// `model` (read from `path`) when it is binary: `plot margins` and `plot
/// boundary` (`kind`) draw one hyperplane.
pub fn binary_only(path: &Path, model: AnyModel, kind: &str) -> Result<AnyModel> {
    let classes = model.heads();
    if classes == 1 {
        return Ok(model);
    }
    Err(Error::model(
        path,
        format!(
            "is a one-vs-rest model of {classes} classes; `plot {kind}` draws a binary model \
             (train one class against the rest with --positive CLASS)"
        ),
    ))
}

/// The rows of `raw` (read from `data_path` for `model`, in the model's
/// precision and no wider than it) as the model's weights read them, and
/// their labels mapped by the model's label map (as `eval` maps them).
pub fn labelled<F: Real>(
    model: &Model<F>,
    model_path: &Path,
    raw: RawData<F>,
    data_path: &Path,
) -> Result<(Features<F>, Vec<i8>)> {
    // A binary model's class 1 is its +1 class.
    let classes = true_classes(model, model_path, &raw, data_path)?;
    let labels = raw
        .class_ids
        .iter()
        .map(|&c| if classes[c as usize] == 1 { 1 } else { -1 })
        .collect();
    // The weights read scaled features (`train --scale`).
    Ok((model.input(raw.features)?, labels))
}

/// The margins picture of `model` (read from `model_path`) on `raw` (read
/// from `data_path` for it); an error when every weight is zero.
pub fn margins<F: Real>(
    model: &Model<F>,
    model_path: &Path,
    raw: RawData<F>,
    data_path: &Path,
) -> Result<Margins> {
    let (features, labels) = labelled(model, model_path, raw, data_path)?;
    Margins::compute(
        model,
        &features,
        &labels,
        &model_path.display().to_string(),
        &data::source::name(data_path).display().to_string(),
    )
    .ok_or_else(|| {
        Error::model(
            model_path,
            "has only zero weights: every margin is 0/0, there is nothing to draw",
        )
    })
}

/// The boundary picture of `model` (read from `model_path`) on `raw` (read
/// from `data_path` for it).
pub fn boundary<F: Real>(
    model: &Model<F>,
    model_path: &Path,
    raw: RawData<F>,
    data_path: &Path,
) -> Result<Boundary> {
    let (features, labels) = labelled(model, model_path, raw, data_path)?;
    Boundary::for_model(
        model,
        &features,
        &labels,
        &model_path.display().to_string(),
        &data::source::name(data_path).display().to_string(),
    )
}
