//! The pictures of a training run that `train --plot DIR` writes: the
//! learning curve and the margins on the training data, and the directory
//! made ready for them before training.

use std::path::{Path, PathBuf};

use super::curve::Curve;
use super::margins::Margins;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::model::Model;

/// The files `train --plot DIR` writes in DIR.
pub const TRAINING_PICTURES: [&str; 2] = ["curve.svg", "margins.svg"];

/// The learning curve and the margins on the training data, as
/// DIR/curve.svg and DIR/margins.svg. Returns the paths written.
/// `None` when `stopped` says a stop was asked for between two pictures.
pub fn training_pictures<F: Real>(
    dir: &Path,
    model: &Model<F>,
    model_path: &Path,
    data: &Dataset<F>,
    stopped: &dyn Fn() -> bool,
) -> Result<Option<Vec<PathBuf>>> {
    let [curve, margins] = TRAINING_PICTURES;
    let curve_path = dir.join(curve);
    super::save(&Curve::from_training(&model.training), &curve_path, None)?;
    let mut written = vec![curve_path];
    // The margins picture is of one perceptron; a one-vs-rest run's curve
    // shows every class.
    if model.heads() > 1 {
        return Ok(Some(written));
    }
    if stopped() {
        return Ok(None);
    }
    if let Some(figure) = Margins::compute(
        model,
        &data.features,
        &data.labels,
        &model_path.display().to_string(),
        &data.source.display().to_string(),
    ) {
        let margins_path = dir.join(margins);
        super::save(&figure, &margins_path, None)?;
        written.push(margins_path);
    }
    Ok(Some(written))
}

/// Makes `dir` ready for `train --plot` before training: an existing
/// directory, or one created now.
pub fn prepare_dir(dir: &Path, inputs: &[&Path]) -> Result<()> {
    // The pictures' paths may be links to an input (the training data):
    // writing them would destroy it.
    for name in TRAINING_PICTURES {
        crate::output::check_not_an_input(&dir.join(name), inputs)?;
    }
    if dir.exists() && !dir.is_dir() {
        return Err(Error::io(
            dir,
            "cannot write pictures there",
            std::io::Error::new(std::io::ErrorKind::NotADirectory, "it is not a directory"),
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(dir, "cannot create the pictures directory", e))
}
