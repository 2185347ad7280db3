//! Starting a run from a saved model (a warm start): its weights, once they
//! are known to fit the run's data, heads, bias and precision exactly.

use std::path::Path;

use crate::data::{Dataset, ScaleKind, Scaling};
use crate::error::{Error, Result, WarmStartError};
use crate::float::{Precision, Real};
use crate::model::{AnyModel, Classes, Model};

impl AnyModel {
    /// The scaling a run asking for `kind` starts from this model with: the
    /// model's own statistics (its weights read features scaled by them,
    /// whatever data the run has), when the kinds agree. `path` names the
    /// model in errors.
    pub fn warm_scaling(&self, path: &Path, kind: Option<ScaleKind>) -> Result<Option<Scaling>> {
        let model = self.scaling().map(|s| s.kind);
        if model != kind {
            return Err(Error::WarmStart {
                path: path.to_path_buf(),
                reason: WarmStartError::Scaling {
                    model: model.map(ScaleKind::name),
                    run: kind.map(ScaleKind::name),
                },
            });
        }
        Ok(self.scaling().cloned())
    }

    /// The model's weights as the initial w~ of a run in precision `F` on
    /// `data` with `heads` perceptrons and the bias when `bias`: head after
    /// head, as training lays them out. Widening f32 to f64 is exact; an f64
    /// model cannot start an f32 run. `path` names the model in errors.
    pub fn warm_start<F: Real>(
        &self,
        path: &Path,
        data: &Dataset<F>,
        heads: usize,
        bias: bool,
    ) -> Result<Vec<F>> {
        let refuse = |reason| Error::WarmStart {
            path: path.to_path_buf(),
            reason,
        };
        if (self.heads() > 1) != (heads > 1) {
            return Err(refuse(WarmStartError::Heads {
                model_heads: self.heads(),
                run_heads: heads,
            }));
        }
        let (weights, has_bias, features, same) = match self {
            AnyModel::F32(m) => widened(m, data),
            AnyModel::F64(_) if F::PRECISION == Precision::F32 => {
                return Err(refuse(WarmStartError::Precision {
                    one_vs_rest: heads > 1,
                }));
            }
            AnyModel::F64(m) => widened(m, data),
        };
        if features != data.cols() {
            return Err(refuse(WarmStartError::Features {
                model: features,
                data: data.cols(),
            }));
        }
        if has_bias != bias {
            return Err(refuse(WarmStartError::Bias { model: has_bias }));
        }
        if !same {
            return Err(refuse(WarmStartError::Labels));
        }
        Ok(weights)
    }
}

/// A model's weights in precision `F` (at least as wide), whether it has a
/// bias, its features, and whether its classes are the data's. A
/// one-vs-rest model's heads are taken in the data's class order, matched
/// by label (a model listing its classes in another order, as files from
/// before classes were sorted do, starts the run as well).
fn widened<M: Real, F: Real>(model: &Model<M>, data: &Dataset<F>) -> (Vec<F>, bool, usize, bool) {
    let widen = |w: &[M]| -> Vec<F> { w.iter().map(|v| F::from_f64(v.to_f64())).collect() };
    let (weights, same) = match model.classes() {
        Classes::Binary(labels) => (widen(model.all_weights()), *labels == data.label_map),
        Classes::OneVsRest(classes) => {
            let heads: Option<Vec<usize>> = data
                .classes
                .iter()
                .map(|c| {
                    classes
                        .iter()
                        .position(|k| crate::data::labels::same_label(k, &c.text))
                })
                .collect();
            match heads.filter(|h| h.len() == classes.len()) {
                Some(h) => (h.iter().flat_map(|&k| widen(model.head(k))).collect(), true),
                None => (widen(model.all_weights()), false),
            }
        }
    };
    (weights, model.has_bias(), model.feature_count(), same)
}
