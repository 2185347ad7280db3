//! Reading a data file for a model: in the layout of the model's training
//! data (its CSV label column and ignored columns, its LIBSVM index base),
//! unless told otherwise, and then fitted to the model's features. The
//! front ends say what happened (notes); this module only reports it.

use std::path::Path;

use crate::data::{self, Format, LabelColumn, LoadOptions, RawData};
use crate::error::{Error, Result};
use crate::float::Real;

use super::{DataLayout, Fitted, Model, TrainingInfo};

/// The options to read data for a model with: unless told otherwise
/// (`label_column`, `unlabeled`, another `format`), a CSV file's label is
/// read from the column the model's training data had it in. A model
/// trained with the label last, by name or number, would otherwise read the
/// wrong column, silently. Likewise LIBSVM indices count as the training
/// data's did (unless an `index_base` is given): detected again, a
/// zero-based file that happens to hold no index 0 would be read one-based,
/// every feature shifted by one.
pub fn options_for_model(
    opts: &LoadOptions,
    training: &TrainingInfo,
    model_path: &Path,
) -> LoadOptions {
    let mut opts = opts.clone();
    let told = opts.label_column.is_some() || opts.unlabeled;
    let csv_or_unknown = matches!(opts.format, None | Some(Format::Csv));
    let layout = training.data_layout.as_ref();
    let column = layout
        .and_then(DataLayout::label_column)
        // The first column is the default anyway.
        .filter(|c| *c != LabelColumn::Index(1));
    if !told
        && csv_or_unknown
        && let Some(column) = column
    {
        opts.label_column = Some(column);
        opts.label_column_from = Some(model_path.to_path_buf());
    }
    let ignored = layout.map(DataLayout::ignored_columns).unwrap_or_default();
    if opts.ignore_columns.is_empty() && csv_or_unknown && !ignored.is_empty() {
        opts.ignore_columns = ignored;
        opts.ignore_columns_from = Some(model_path.to_path_buf());
    }
    if opts.index_base.is_none()
        && let Some(base) = layout.and_then(DataLayout::libsvm_base)
    {
        opts.index_base = Some(base);
        opts.index_base_from = Some(model_path.to_path_buf());
    }
    opts
}

/// A data file read for a model, its columns not yet fitted to the model's
/// features ([`Model::fit_data`]).
#[derive(Debug)]
pub struct ReadForModel<F> {
    pub raw: RawData<F>,
    /// The CSV label column when it was taken from the model's training
    /// data and is not the first.
    pub label_from_model: Option<LabelFromModel>,
}

/// A CSV label column taken from a model's training data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelFromModel {
    /// 1-based.
    pub column: usize,
    /// Its name in the data's header, when there is one.
    pub name: Option<String>,
}

impl<F: Real> Model<F> {
    /// Reads `path` for this model (saved at `model_path`) in the model's
    /// precision, with [`options_for_model`].
    pub fn read_data(
        &self,
        model_path: &Path,
        path: &Path,
        opts: &LoadOptions,
    ) -> Result<ReadForModel<F>> {
        let opts = options_for_model(opts, &self.training, model_path);
        let raw = data::load_raw::<F>(path, &opts)?;
        let label_from_model = raw
            .csv
            .as_ref()
            .filter(|_| opts.label_column_from.is_some())
            .and_then(|csv| {
                let column = csv.label_column.filter(|&k| k != 1)?;
                let name = csv.label_name.clone();
                Some(LabelFromModel { column, name })
            });
        Ok(ReadForModel {
            raw,
            label_from_model,
        })
    }

    /// Fits `raw`, read from `path`, to the features of this model (saved
    /// at `model_path`; see [`Model::fit_columns`]): CSV data must have the
    /// model's columns (matched by name when both have a header), other
    /// data may have fewer features (LIBSVM data more too, left out).
    pub fn fit_data(
        &self,
        raw: RawData<F>,
        model_path: &Path,
        path: &Path,
    ) -> Result<(RawData<F>, Fitted)> {
        self.fit_columns(raw).map_err(|mismatch| Error::Columns {
            model: model_path.to_path_buf(),
            data: data::source::name(path).to_path_buf(),
            mismatch,
        })
    }
}
