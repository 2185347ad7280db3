//! Fitting data to a model's features: CSV data must have the model's
//! columns, matched by name when both have a header; sparse and binary data
//! may have fewer features (the missing ones count as zeros), and LIBSVM
//! data more (left out: training never saw them).

use crate::data::{Format, RawData};
use crate::error::ColumnMismatch;
use crate::float::Real;

use super::Model;

/// How data was fitted to a model's features.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fitted {
    /// Used as it was read.
    AsRead,
    /// The header names the model's features in another order: the columns
    /// were reordered to the model's.
    ReorderedByName,
    /// LIBSVM data with features beyond the model's: they were left out (a
    /// feature training never saw has weight 0, so the scores are the
    /// same), `features` of them holding `values` non-zero values.
    BeyondModel { features: usize, values: u64 },
}

impl<F: Real> Model<F> {
    /// The names of the feature columns of the model's training data, when
    /// it was CSV with a header.
    pub fn feature_names(&self) -> Option<&[String]> {
        self.training.data_layout.as_ref()?.feature_names.as_deref()
    }

    /// Fits `raw` to the model's features, or says why it does not fit.
    ///
    /// CSV data must have as many feature columns as the model has
    /// features. When the model and the data both have header names, the
    /// data's must be the model's: in the same order, or in another order
    /// (the columns are then reordered to the model's, matched by name). A
    /// name of one that the other lacks is refused, naming it. Other
    /// formats may have fewer features than the model; LIBSVM data may
    /// also have more (left out: [`Fitted::BeyondModel`]), the others not.
    pub fn fit_columns(&self, raw: RawData<F>) -> Result<(RawData<F>, Fitted), ColumnMismatch> {
        let model = self.feature_count();
        let data = raw.features.cols();
        let Some(csv) = raw.csv.as_ref().filter(|_| raw.format == Format::Csv) else {
            if data > model && raw.format == Format::Libsvm {
                // LIBSVM names features by index; ones past the model's are
                // features training never saw (as LIBLINEAR and VW read them).
                let (features, values) = raw.features.first_features(model);
                let fitted = Fitted::BeyondModel {
                    features: data - model,
                    values,
                };
                return Ok((RawData { features, ..raw }, fitted));
            }
            if data > model {
                return Err(ColumnMismatch::TooMany { model, data });
            }
            return Ok((raw, Fitted::AsRead));
        };
        let count = ColumnMismatch::Count {
            model,
            data,
            columns: csv.columns,
            labelled: csv.label_column.is_some(),
        };
        let (Some(want), Some(have)) = (self.feature_names(), csv.feature_names()) else {
            return if data == model {
                Ok((raw, Fitted::AsRead))
            } else {
                Err(count)
            };
        };
        if want == have.as_slice() {
            return Ok((raw, Fitted::AsRead));
        }
        let order = match_names(want, &have)?;
        if data != model {
            return Err(count);
        }
        let features = raw.features.with_columns(&order);
        Ok((RawData { features, ..raw }, Fitted::ReorderedByName))
    }
}

/// For each of the model's names `want`, the data column `have` holds it;
/// or the first name of either that the other lacks.
fn match_names(want: &[String], have: &[String]) -> Result<Vec<usize>, ColumnMismatch> {
    let unique = |names: &[String]| {
        let mut sorted: Vec<&String> = names.iter().collect();
        sorted.sort_unstable();
        sorted.windows(2).all(|w| w[0] != w[1])
    };
    let mut order = Vec::with_capacity(want.len());
    for name in want {
        match have.iter().position(|h| h == name) {
            Some(k) => order.push(k),
            None => return Err(ColumnMismatch::Missing { name: name.clone() }),
        }
    }
    if let Some(extra) = have.iter().find(|h| !want.contains(h)) {
        return Err(ColumnMismatch::Unknown {
            name: extra.clone(),
        });
    }
    if !unique(want) || !unique(have) {
        let position = want.iter().zip(have).position(|(a, b)| a != b).unwrap_or(0);
        return Err(ColumnMismatch::Ambiguous {
            position: position + 1,
            model: want.get(position).cloned().unwrap_or_default(),
            data: have.get(position).cloned().unwrap_or_default(),
        });
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsvInfo, DenseMatrix, Features, LabelMap, LabelTable};
    use crate::model::{DataLayout, TrainingInfo};

    fn model(names: Option<&[&str]>, features: usize) -> Model<f32> {
        let mut training: TrainingInfo = serde_json::from_value(serde_json::json!({
            "epochs": 1, "max_epochs": 1, "mistakes_per_epoch": [0], "total_mistakes": 0,
            "converged": true, "radius": 1.0, "margin": null, "mistake_bound": null,
            "backend": "reference", "seed": null, "data": "x.csv", "rows": 3,
            "training_accuracy": 1.0, "seconds": 0.0
        }))
        .unwrap();
        training.data_layout = Some(DataLayout {
            format: Format::Csv,
            label_column: None,
            header: Some(names.is_some()),
            delimiter: Some(",".into()),
            feature_names: names.map(|n| n.iter().map(|s| s.to_string()).collect()),
            index_base: None,
            ignored_columns: None,
        });
        let labels = LabelMap {
            positive: "1".into(),
            negative: Some("0".into()),
        };
        Model::binary(vec![0.0; features + 1], true, labels, training)
    }

    fn csv(names: &[&str], rows: Vec<Vec<f32>>) -> RawData<f32> {
        let cols = rows.first().map_or(0, Vec::len);
        let mut all = vec!["y".to_owned()];
        all.extend(names.iter().map(|s| s.to_string()));
        RawData {
            features: Features::Dense(DenseMatrix {
                rows: rows.len(),
                cols,
                values: rows.concat().into(),
            }),
            class_ids: vec![0; rows.len()],
            table: LabelTable::default(),
            format: Format::Csv,
            csv: Some(CsvInfo {
                header_line: (!names.is_empty()).then_some(1),
                label_column: Some(1),
                label_name: None,
                delimiter: b',',
                columns: cols + 1,
                names: if names.is_empty() { vec![] } else { all },
                ignored: vec![],
            }),
            libsvm: None,
        }
    }

    fn values(raw: &RawData<f32>) -> Vec<f32> {
        match &raw.features {
            Features::Dense(m) => m.values.to_vec(),
            Features::Sparse(_) => unreachable!(),
        }
    }

    #[test]
    fn csv_columns_must_be_the_models_and_are_matched_by_name() {
        let m = model(Some(&["a", "b", "c"]), 3);
        let rows = || vec![vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]];
        let (same, how) = m.fit_columns(csv(&["a", "b", "c"], rows())).unwrap();
        assert_eq!((how, values(&same)), (Fitted::AsRead, rows().concat()));
        let (moved, how) = m.fit_columns(csv(&["c", "a", "b"], rows())).unwrap();
        assert_eq!(how, Fitted::ReorderedByName);
        assert_eq!(values(&moved), vec![2.0, 3.0, 1.0, 5.0, 6.0, 4.0]);
        assert_eq!(
            m.fit_columns(csv(&["a", "b", "d"], rows())).unwrap_err(),
            ColumnMismatch::Missing { name: "c".into() }
        );
        assert_eq!(
            m.fit_columns(csv(&["a", "b", "c", "d"], vec![vec![0.0; 4]]))
                .unwrap_err(),
            ColumnMismatch::Unknown { name: "d".into() }
        );
        // No header: the count alone.
        let (_, how) = m.fit_columns(csv(&[], rows())).unwrap();
        assert_eq!(how, Fitted::AsRead);
        assert_eq!(
            m.fit_columns(csv(&[], vec![vec![0.0; 4]])).unwrap_err(),
            ColumnMismatch::Count {
                model: 3,
                data: 4,
                columns: 5,
                labelled: true
            }
        );
        let dup = model(Some(&["a", "a", "b"]), 3);
        assert!(matches!(
            dup.fit_columns(csv(&["a", "b", "a"], rows())).unwrap_err(),
            ColumnMismatch::Ambiguous { position: 2, .. }
        ));
    }

    #[test]
    fn libsvm_data_may_have_fewer_features_and_more_are_left_out() {
        let m = model(None, 3);
        let mut raw = csv(&[], vec![vec![1.0, 2.0]]);
        raw.format = Format::Libsvm;
        raw.csv = None;
        assert!(m.fit_columns(raw.clone()).is_ok());
        let mut wide = csv(&[], vec![vec![1.0, 0.0, 2.0, 0.0, 7.0], vec![0.0; 5]]);
        wide.format = Format::Libsvm;
        wide.csv = None;
        let (kept, how) = m.fit_columns(wide.clone()).unwrap();
        assert_eq!(
            how,
            Fitted::BeyondModel {
                features: 2,
                values: 1
            }
        );
        assert_eq!(kept.features.cols(), 3);
        assert_eq!(kept.features.row(0).values(), &[1.0, 0.0, 2.0]);
        // Binary data's columns are its layout: more than the model's is an
        // error.
        wide.format = Format::Binary;
        assert_eq!(
            m.fit_columns(wide).unwrap_err(),
            ColumnMismatch::TooMany { model: 3, data: 5 }
        );
    }
}
