//! `perceptron cv`'s run and its one result record: the folds checked
//! against the data and trained ([`crate::train::cv`]), and the
//! [`CvReport`] every front end prints, serialised as it is for
//! `cv --json` (each fold's confusion counts in `eval`'s shape, its
//! backend in `train`'s); `text.rs` is its text form.
//!
//! It lives in the run layer, not beside the folds in `train/`, because
//! the record reuses the model layer's confusion shape and the train
//! report's backend record, both above `train`.

mod text;

use std::path::Path;

use serde::Serialize;

use crate::data::{Dataset, Format};
use crate::error::Result;
use crate::float::{Precision, Real};
use crate::model::evaluation::OvrConfusion;
use crate::run::report::{BackendReport, EngineReport};
use crate::text::Quoted;
use crate::train::CheckedParams;
use crate::train::cv::{CvParams, CvWatch, FoldResult, Spread, cross_validate};

/// Everything a cross-validation reports: the one record of `perceptron
/// cv`, its fields and their order the JSON's.
#[derive(Debug, Serialize)]
pub struct CvReport {
    /// The data file as shown.
    pub data: String,
    pub format: Format,
    pub rows: usize,
    pub features: usize,
    pub precision: Precision,
    /// `binary` or `one-vs-rest`.
    pub kind: &'static str,
    /// What `f1` is: `f1 of the +1 class "L"` or `macro f1`.
    pub f1_of: String,
    /// The classes in the folds' confusion order: a binary run's -1 class
    /// then its +1 class; a one-vs-rest run's classes in the data's order.
    pub classes: Vec<String>,
    pub folds: usize,
    pub seed: u64,
    pub per_fold: Vec<FoldReport>,
    /// Over the folds.
    pub accuracy: Spread,
    /// Over the folds whose F1 is defined (`None` if none is).
    pub f1: Option<Spread>,
    /// Folds whose F1 is undefined.
    pub f1_undefined: usize,
    /// Wall time of the folds.
    pub seconds: f64,
}

/// One fold of a [`CvReport`], in the words `train --json` and `eval
/// --json` use.
#[derive(Debug, Serialize)]
pub struct FoldReport {
    /// The fold's figures (train's `FoldResult`), in its JSON as they are.
    #[serde(flatten)]
    pub result: FoldResult,
    /// The fold's confusion counts with the classes' labels.
    pub confusion: OvrConfusion,
    /// The backend asked for and the engines that trained the fold.
    pub backend: BackendReport,
}

impl FoldReport {
    /// `fold`'s figures, its confusion counts labelled with `classes` (in
    /// the folds' confusion order), `requested` the backend asked for.
    fn of(fold: FoldResult, classes: &[String], requested: &'static str) -> Self {
        FoldReport {
            confusion: OvrConfusion::of_fold(&fold.confusion, classes),
            backend: BackendReport {
                requested,
                engines: fold
                    .backend
                    .iter()
                    .map(|n| EngineReport::of_name(n))
                    .collect(),
                note: None,
            },
            result: fold,
        }
    }
}

impl CvReport {
    /// Checks the folds against `data` (read from `path`), cross-validates
    /// `params` on it, telling `watch` how the folds go, and gathers the
    /// report.
    pub fn run<F: Real>(
        data: &Dataset<F>,
        path: &Path,
        params: &CheckedParams,
        cv: &CvParams,
        watch: &dyn CvWatch,
    ) -> Result<Self> {
        // Messages and reports call `-` what every command calls it.
        let path = crate::data::source::name(path);
        cv.check_folds(data.rows(), path)?;
        let backend = cv.fold_backend();
        let t0 = std::time::Instant::now();
        let summary = cross_validate(data, params, cv.folds, cv.seed, backend, &cv.gpu, watch)?;
        let seconds = t0.elapsed().as_secs_f64();
        let ovr = params.multiclass;
        let positive = &data.label_map.positive;
        let classes: Vec<String> = if ovr {
            data.classes.iter().map(|c| c.text.clone()).collect()
        } else {
            vec![data.label_map.negative_text().to_owned(), positive.clone()]
        };
        let requested = cv.backend.name();
        Ok(CvReport {
            data: path.display().to_string(),
            format: data.format,
            rows: data.rows(),
            features: data.cols(),
            precision: F::PRECISION,
            kind: if ovr { "one-vs-rest" } else { "binary" },
            f1_of: if ovr {
                "macro f1".into()
            } else {
                format!("f1 of the +1 class {}", Quoted(positive))
            },
            per_fold: summary
                .folds
                .into_iter()
                .map(|f| FoldReport::of(f, &classes, requested))
                .collect(),
            classes,
            folds: cv.folds,
            seed: cv.seed,
            accuracy: summary.accuracy,
            f1: summary.f1,
            f1_undefined: summary.f1_undefined,
            seconds,
        })
    }
}
