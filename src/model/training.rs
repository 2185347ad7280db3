//! The `training` section of a model file: how the model was trained, made
//! once from the run's description and its fit.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::data::{CsvInfo, Dataset, Format, IndexBase, LabelColumn, LibsvmInfo};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::{Fit, RunDescription};

/// How a model was trained; saved with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainingInfo {
    pub epochs: usize,
    pub max_epochs: usize,
    pub mistakes_per_epoch: Vec<u64>,
    pub total_mistakes: u64,
    pub converged: bool,
    /// D = max ||x~||.
    pub radius: f64,
    /// gamma = min y w~·x~ / ||w~|| when the model separates its training data.
    pub margin: Option<f64>,
    /// (D/gamma)^2.
    pub mistake_bound: Option<f64>,
    /// The engines that computed margins (e.g. `gpu: NVIDIA H100`, `cpu`).
    pub backend: String,
    /// The shuffle seed, or null when rows were visited in file order.
    pub seed: Option<u64>,
    /// scikit-learn's reshuffle before every epoch (`--shuffle every-epoch
    /// --seed S`: `{"random_state": S}`; from Python, each perceptron's
    /// `{"seeds": [...]}`). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle_every_epoch: Option<crate::train::scikit::order::EveryEpoch>,
    /// The bias's step per unit of the weights' step (`--intercept-decay`;
    /// scikit-learn's update on sparse input moves it by 0.01). Absent for
    /// the textbook update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intercept_decay: Option<f64>,
    /// With scikit-learn's schedule: the epochs its loop reports
    /// (`n_iter_`), which runs on after an epoch without a mistake until its
    /// rule or the cap stops it. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominal_epochs: Option<usize>,
    /// Where the training data came from.
    pub data: String,
    pub rows: usize,
    pub training_accuracy: f64,
    pub seconds: f64,
    /// `classic`, `averaged` or `pocket`.
    #[serde(default)]
    pub variant: crate::train::Variant,
    /// The `--margin` threshold τ, if any.
    #[serde(default)]
    pub margin_threshold: Option<crate::train::Margin>,
    /// The model the run started from (`--init`), if any.
    #[serde(default)]
    pub init: Option<String>,
    /// Pocket variant: the epoch the weights came from and their accuracy.
    #[serde(default)]
    pub pocket_epoch: Option<usize>,
    #[serde(default)]
    pub pocket_training_accuracy: Option<f64>,
    /// Models written by `perceptron online`: examples, wrong predictions
    /// and the state of the run. There `epochs` is 1, `total_mistakes` counts
    /// updates, `radius` is D over the examples seen, and
    /// `training_accuracy` is the share of predictions, each made before
    /// learning from its example, that were right.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online: Option<crate::online::OnlineInfo>,
    /// How the training data was laid out, so that `predict` and `eval` read
    /// a CSV file's label from the same column without being told again.
    /// Absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_layout: Option<DataLayout>,
    /// The class weights of the updates (`--class-weight`): binary, the +1
    /// then the -1 label's; one-vs-rest, each class's weight of its own
    /// rows (the others' rows update with 1). Absent without class weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_weights: Option<Vec<LabelWeight>>,
    /// What early stopping did (`--tol`, `--n-iter-no-change`,
    /// `--validation-fraction`): the scores per epoch and, with a held-out
    /// part, the epoch whose weights the model is. Absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_stopping: Option<crate::train::EarlyStopReport>,
    /// Trained by several processes (`train --distributed`); absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed: Option<DistributedInfo>,
}

/// One class's update weight.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelWeight {
    pub label: String,
    pub weight: f64,
}

/// How a distributed run trained a model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistributedInfo {
    /// `exact` (the single-process model, bit for bit) or `mix` (iterative
    /// parameter mixing, a different algorithm).
    pub mode: String,
    /// The number of processes (ranks).
    pub ranks: usize,
    /// Mix mode: `uniform` or `errors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixing: Option<String>,
}

/// The layout of the training data (see [`TrainingInfo::data_layout`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataLayout {
    /// `csv`, `libsvm` or `binary`.
    pub format: Format,
    /// CSV: the label column as `--label-column` named it, else its 1-based
    /// number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_column: Option<ColumnRef>,
    /// CSV: whether the first line (not blank, not a comment) was a header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<bool>,
    /// CSV: `,`, `;`, `tab` or `whitespace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    /// CSV with a header: the names of the feature columns, in training
    /// order (the label's excluded), which `predict` and `eval` match the
    /// data's header against. Absent without a header, and in files
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_names: Option<Vec<String>>,
    /// LIBSVM: how the training data counted its feature indices (`zero`
    /// or `one`), which `predict` and `eval` read LIBSVM data with unless
    /// told otherwise. Absent in files written before it was recorded:
    /// those were one-based, the only base then read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_base: Option<IndexBase>,
    /// CSV: the columns left out (`--ignore-columns`), by header name when
    /// there is a header, else by 1-based number; `predict` and `eval`
    /// leave out the same unless told otherwise. Absent when none were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_columns: Option<Vec<ColumnRef>>,
}

/// A CSV column by 1-based number or by header name; a number or a string in
/// JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ColumnRef {
    Number(u64),
    Name(String),
}

impl DataLayout {
    /// The layout of data in `format`; for CSV, from what the reader settled
    /// (`csv`) and how the user named the label column (`given`): a name is
    /// kept as a name, so that data with its columns in another order still
    /// reads right.
    pub fn of(
        format: Format,
        csv: Option<&CsvInfo>,
        libsvm: Option<&LibsvmInfo>,
        given: Option<&LabelColumn>,
    ) -> Self {
        let index_base = libsvm.map(|l| l.base);
        let Some(csv) = csv else {
            return DataLayout {
                format,
                label_column: None,
                header: None,
                delimiter: None,
                feature_names: None,
                index_base,
                ignored_columns: None,
            };
        };
        let label_column = match (given, csv.label_column) {
            (Some(LabelColumn::Name(name)), _) => Some(ColumnRef::Name(name.clone())),
            (_, Some(k)) => Some(ColumnRef::Number(k as u64)),
            (_, None) => None,
        };
        DataLayout {
            format,
            label_column,
            header: Some(csv.header_line.is_some()),
            delimiter: Some(match csv.delimiter {
                b'\t' => "tab".to_owned(),
                crate::data::csv::WHITESPACE => "whitespace".to_owned(),
                d => char::from(d).to_string(),
            }),
            feature_names: csv.feature_names(),
            index_base,
            ignored_columns: (!csv.ignored.is_empty()).then(|| {
                csv.ignored
                    .iter()
                    .map(|&k| match csv.names.get(k - 1) {
                        // A name is the column wherever it is; an empty one
                        // (a pandas index) names nothing.
                        Some(name) if !name.is_empty() => ColumnRef::Name(name.clone()),
                        _ => ColumnRef::Number(k as u64),
                    })
                    .collect()
            }),
        }
    }

    /// The columns to leave out of other CSV data, as the training data's
    /// were.
    pub fn ignored_columns(&self) -> Vec<LabelColumn> {
        self.ignored_columns
            .iter()
            .flatten()
            .filter_map(|c| match c {
                ColumnRef::Number(n) => usize::try_from(*n).ok().map(LabelColumn::Index),
                ColumnRef::Name(name) => Some(LabelColumn::Name(name.clone())),
            })
            .collect()
    }

    /// The index base to read LIBSVM data for this model with: the
    /// training data's; one-based for a LIBSVM model file that predates
    /// the record; `None` (detect, as training does) when the model was
    /// not trained on LIBSVM data.
    pub fn libsvm_base(&self) -> Option<IndexBase> {
        match self.format {
            Format::Libsvm => Some(self.index_base.unwrap_or(IndexBase::One)),
            _ => None,
        }
    }

    /// The label column to read other CSV data with, if the layout has one.
    pub fn label_column(&self) -> Option<LabelColumn> {
        match self.label_column.as_ref()? {
            ColumnRef::Number(n) => usize::try_from(*n).ok().map(LabelColumn::Index),
            ColumnRef::Name(name) => Some(LabelColumn::Name(name.clone())),
        }
    }

    /// Refuses a label column no CSV file can have (`path` is for messages).
    pub(crate) fn check(&self, path: &Path) -> Result<()> {
        match &self.label_column {
            Some(ColumnRef::Number(0)) => Err(Error::model(
                path,
                "is corrupt: \"training.data_layout.label_column\" is 0, but columns are \
                 numbered from 1",
            )),
            Some(ColumnRef::Name(name)) if name.is_empty() => Err(Error::model(
                path,
                "is corrupt: \"training.data_layout.label_column\" is an empty name",
            )),
            _ => Ok(()),
        }
    }
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

impl TrainingInfo {
    /// The section for the model `fit` returned in the run `run` on `data`
    /// (in training order), read in `layout`.
    pub fn of_fit<F: Real>(
        run: &RunDescription,
        fit: &Fit<F>,
        data: &Dataset<F>,
        layout: Option<DataLayout>,
    ) -> Self {
        // The theorem counts mistakes from w = 0: a warm start has no bound.
        let cold = run.init.is_none();
        TrainingInfo {
            epochs: fit.epochs(),
            max_epochs: run.max_epochs,
            mistakes_per_epoch: fit.mistakes_per_epoch.clone(),
            total_mistakes: fit.total_mistakes(),
            converged: fit.converged(),
            radius: fit.theory.radius,
            margin: fit.theory.margin,
            mistake_bound: fit.theory.mistake_bound.filter(|_| cold),
            backend: fit.engines.join(", then "),
            seed: run.seed,
            shuffle_every_epoch: run.shuffle_every_epoch.clone(),
            intercept_decay: run.intercept_decay,
            nominal_epochs: fit.nominal_epochs,
            data: data.source.display().to_string(),
            rows: data.rows(),
            training_accuracy: fit.theory.accuracy(),
            seconds: fit.seconds,
            variant: fit.variant,
            margin_threshold: run.margin.clone(),
            init: run.settings.init.as_ref().map(|p| p.display().to_string()),
            pocket_epoch: fit.pocket.as_ref().map(|p| p.epoch),
            pocket_training_accuracy: fit.pocket.as_ref().map(|p| p.training_accuracy),
            online: None,
            data_layout: layout,
            class_weights: fit.class_weights.as_ref().map(|c| {
                c.iter()
                    .map(|(label, weight)| LabelWeight {
                        label: label.clone(),
                        weight: *weight,
                    })
                    .collect()
            }),
            early_stopping: fit.early_stopping.clone(),
            distributed: None,
        }
    }
}

impl ClassTraining {
    /// Each head's record, from the per-head mistake counts and theory of a
    /// one-vs-rest `fit` (empty for a single head).
    pub fn of_fit<F: Real>(fit: &Fit<F>) -> Vec<ClassTraining> {
        let state = &fit.state;
        (0..fit.head_theory.len())
            .map(|h| {
                let mistakes: Vec<u64> =
                    state.head_mistakes_per_epoch.iter().map(|e| e[h]).collect();
                let theory = &fit.head_theory[h];
                ClassTraining {
                    total_mistakes: mistakes.iter().sum::<u64>()
                        + state.head_mistakes_in_epoch.get(h).copied().unwrap_or(0),
                    converged_epoch: mistakes.iter().position(|&m| m == 0).map(|e| e + 1),
                    mistakes_per_epoch: mistakes,
                    margin: theory.margin,
                    mistake_bound: theory.mistake_bound,
                }
            })
            .collect()
    }
}
