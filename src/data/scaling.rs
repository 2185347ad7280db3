//! Feature scaling (`--scale standard|maxabs`): per-feature statistics of
//! the training data, computed once and exactly in a fixed order, and the
//! transform that training, `predict` and `eval` all apply on the host
//! before any engine sees a row.
//!
//! # Statistics (f64, rows in file order)
//! For feature k over the n training rows x_1k, ..., x_nk (each widened to
//! f64 exactly; a sparse row's missing entries are 0):
//!
//! - **standard**: mean_k = (((x_1k + x_2k) + x_3k) + ...) / n, summed in
//!   row order; var_k = (((d_1² + d_2²) + ...) / n with d_i = x_ik - mean_k,
//!   each product and sum rounded once (the population variance, as
//!   scikit-learn's `StandardScaler`); scale_k = sqrt(var_k), or 1 when
//!   that is 0 (a constant feature).
//! - **maxabs**: scale_k = max_i |x_ik|, or 1 when that is 0.
//!
//! Every operation is one IEEE-754 f64 operation in that order, so the
//! statistics are the same bits on every machine. scikit-learn sums with
//! numpy's pairwise summation, so its means and scales agree with these to
//! rounding, not always bit for bit (on breast_cancer in f64 they are
//! bit-identical).
//!
//! # The transform
//! x'_k = F::from_f64((x_k - mean_k) / scale_k) for standard, and
//! x'_k = F::from_f64(x_k / scale_k) for maxabs: a subtraction and a
//! division in f64, each rounded to nearest, then one rounding to the
//! training precision. |x'| <= sqrt(n) for standard and <= 1 for maxabs,
//! so nothing overflows. Standard scaling centres the features, so it
//! makes sparse data dense: it is refused for sparse training data, and a
//! sparse file given to a standard-scaled model is made dense first.
//! maxabs keeps every zero a zero, so sparse data stays sparse.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ParamError, Result};
use crate::float::Real;

use super::dataset::{Dataset, FactsCache};
use super::matrix::{CsrMatrix, DenseMatrix, Features};

/// Which scaling (`--scale`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleKind {
    /// Subtract each feature's mean, divide by its standard deviation.
    Standard,
    /// Divide each feature by its largest absolute value (keeps zeros).
    #[serde(rename = "maxabs")]
    MaxAbs,
}

impl ScaleKind {
    pub fn name(self) -> &'static str {
        match self {
            ScaleKind::Standard => "standard",
            ScaleKind::MaxAbs => "maxabs",
        }
    }

    /// What the transform does, for reports.
    pub fn formula(self) -> &'static str {
        match self {
            ScaleKind::Standard => "x' = (x - mean) / std per feature",
            ScaleKind::MaxAbs => "x' = x / max|x| per feature",
        }
    }
}

/// A fitted scaling: the statistics of the training data, saved in the
/// model (each an f64, written as its exact decimal like the weights).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scaling {
    pub kind: ScaleKind,
    /// Standard: each feature's mean; absent for maxabs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<Vec<f64>>,
    /// Each feature's divisor (finite and positive).
    pub scale: Vec<f64>,
}

impl Scaling {
    /// The statistics of `data`'s features (rows in the order stored, which
    /// must be file order; see the module documentation).
    pub fn fit<F: Real>(kind: ScaleKind, data: &Dataset<F>) -> Result<Scaling> {
        let features = &data.features;
        let (rows, cols) = (features.rows(), features.cols());
        let not_finite = |k: usize, what: &str| {
            Error::data(
                &data.source,
                format!(
                    "feature {}: its {what} is not a finite f64, so it cannot be scaled",
                    k + 1
                ),
            )
        };
        let scaling = match kind {
            ScaleKind::Standard => {
                if features.is_sparse() {
                    return Err(ParamError::SparseStandardScaling.into());
                }
                let mut sum = vec![0.0f64; cols];
                for i in 0..rows {
                    features.row(i).for_each(|k, v| sum[k] += v.to_f64());
                }
                let n = rows.max(1) as f64;
                let mean: Vec<f64> = sum.iter().map(|s| s / n).collect();
                let mut sq = vec![0.0f64; cols];
                for i in 0..rows {
                    features.row(i).for_each(|k, v| {
                        let d = v.to_f64() - mean[k];
                        sq[k] += d * d;
                    });
                }
                let mut scale = Vec::with_capacity(cols);
                for k in 0..cols {
                    if !mean[k].is_finite() {
                        return Err(not_finite(k, "mean"));
                    }
                    let std = (sq[k] / n).sqrt();
                    if !std.is_finite() {
                        return Err(not_finite(k, "variance"));
                    }
                    scale.push(if std == 0.0 { 1.0 } else { std });
                }
                Scaling {
                    kind,
                    mean: Some(mean),
                    scale,
                }
            }
            ScaleKind::MaxAbs => {
                let mut max = vec![0.0f64; cols];
                for i in 0..rows {
                    features
                        .row(i)
                        .for_each(|k, v| max[k] = max[k].max(v.to_f64().abs()));
                }
                let scale = max
                    .into_iter()
                    .map(|m| if m == 0.0 { 1.0 } else { m })
                    .collect();
                Scaling {
                    kind,
                    mean: None,
                    scale,
                }
            }
        };
        Ok(scaling)
    }

    /// Features the scaling was fitted on.
    pub fn features(&self) -> usize {
        self.scale.len()
    }

    /// Refuses statistics that no fit produces (`what` names the file).
    pub fn check(&self) -> std::result::Result<(), String> {
        let want_mean = self.kind == ScaleKind::Standard;
        match &self.mean {
            Some(m) if !want_mean => {
                return Err(format!(
                    "maxabs scaling has a \"mean\" ({} values)",
                    m.len()
                ));
            }
            None if want_mean => return Err("standard scaling has no \"mean\"".into()),
            Some(m) if m.len() != self.scale.len() => {
                return Err(format!("{} means for {} scales", m.len(), self.scale.len()));
            }
            Some(m) => {
                if let Some(k) = m.iter().position(|v| !v.is_finite()) {
                    return Err(format!("mean {} is not finite", k + 1));
                }
            }
            None => {}
        }
        if let Some(k) = self.scale.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(format!(
                "scale {} is {}, not a finite positive number",
                k + 1,
                self.scale[k]
            ));
        }
        Ok(())
    }

    /// The scaled value of `x` in column `k`.
    #[inline]
    fn map<F: Real>(&self, k: usize, x: F) -> F {
        match &self.mean {
            Some(mean) => F::from_f64((x.to_f64() - mean[k]) / self.scale[k]),
            None => F::from_f64(x.to_f64() / self.scale[k]),
        }
    }

    /// `features` scaled, in owned memory. Rows may have fewer columns than
    /// the scaling (missing features are 0 in the original units, which
    /// standard scaling maps to -mean/std, so its output always has every
    /// column), never more. Sparse rows under standard scaling are made
    /// dense first.
    pub fn apply<F: Real>(
        &self,
        features: &Features<F>,
    ) -> std::result::Result<Features<F>, String> {
        let cols = features.cols();
        if cols > self.features() {
            return Err(format!(
                "the scaling covers {} features but the data has {cols}",
                self.features()
            ));
        }
        Ok(match (features, self.kind) {
            (Features::Dense(m), ScaleKind::MaxAbs) => Features::Dense(self.apply_dense(m, cols)),
            (Features::Dense(m), ScaleKind::Standard) => {
                Features::Dense(self.apply_dense(m, self.features()))
            }
            (Features::Sparse(m), ScaleKind::Standard) => {
                let dense = DenseMatrix {
                    rows: m.rows(),
                    cols,
                    values: {
                        let mut v = vec![F::ZERO; m.rows() * cols];
                        m.scatter_into(&mut v);
                        v.into()
                    },
                };
                Features::Dense(self.apply_dense(&dense, self.features()))
            }
            (Features::Sparse(m), ScaleKind::MaxAbs) => {
                let mut values: Vec<F> = m.values.to_vec();
                let indices = &m.indices;
                values
                    .par_iter_mut()
                    .zip(indices.par_iter())
                    .for_each(|(v, &k)| *v = self.map(k as usize, *v));
                Features::Sparse(CsrMatrix {
                    cols: m.cols,
                    row_ptr: m.row_ptr.clone(),
                    indices: m.indices.clone(),
                    values: values.into(),
                })
            }
        })
    }

    /// Dense rows scaled into `out_cols` columns (the columns past the
    /// input's are 0 before scaling).
    fn apply_dense<F: Real>(&self, m: &DenseMatrix<F>, out_cols: usize) -> DenseMatrix<F> {
        let mut values = vec![F::ZERO; m.rows * out_cols];
        if out_cols > 0 {
            values
                .par_chunks_mut(out_cols)
                .enumerate()
                .for_each(|(i, out)| {
                    let row = &m.values[i * m.cols..(i + 1) * m.cols];
                    for (k, o) in out.iter_mut().enumerate() {
                        let x = row.get(k).copied().unwrap_or(F::ZERO);
                        *o = self.map(k, x);
                    }
                });
        }
        DenseMatrix {
            rows: m.rows,
            cols: out_cols,
            values: values.into(),
        }
    }

    /// `data` with its features scaled (labels and classes unchanged).
    pub fn apply_to<F: Real>(&self, data: Dataset<F>) -> Result<Dataset<F>> {
        let features = self
            .apply(&data.features)
            .map_err(|e| Error::data(&data.source, e))?;
        Ok(Dataset {
            features,
            facts: FactsCache::default(),
            ..data
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{LabelMap, Row};

    fn dense(cols: usize, values: Vec<f64>) -> Dataset<f64> {
        let rows = values.len() / cols;
        Dataset {
            features: Features::Dense(DenseMatrix {
                rows,
                cols,
                values: values.into(),
            }),
            labels: vec![1; rows],
            label_map: LabelMap {
                positive: "1".into(),
                negative: Some("-1".into()),
            },
            classes: vec![],
            class_ids: vec![],
            source: "t.csv".into(),
            format: crate::data::Format::Csv,
            facts: Default::default(),
        }
    }

    #[test]
    fn standard_statistics_are_the_sequential_f64_sums() {
        // Column 0: 1, 2, 4 (mean 7/3); column 1 constant (scale 1).
        let d = dense(2, vec![1.0, 5.0, 2.0, 5.0, 4.0, 5.0]);
        let s = Scaling::fit(ScaleKind::Standard, &d).unwrap();
        let mean = ((1.0f64 + 2.0) + 4.0) / 3.0;
        let var = (((1.0 - mean) * (1.0 - mean) + (2.0 - mean) * (2.0 - mean))
            + (4.0 - mean) * (4.0 - mean))
            / 3.0;
        assert_eq!(s.mean.as_deref(), Some(&[mean, 5.0][..]));
        assert_eq!(s.scale, vec![var.sqrt(), 1.0]);
        let scaled = s.apply_to(d).unwrap();
        let Row::Dense(r) = scaled.features.row(2) else {
            panic!("dense stays dense")
        };
        assert_eq!(r, &[(4.0 - mean) / var.sqrt(), 0.0]);
        assert_eq!(s.check(), Ok(()));
    }

    #[test]
    fn f32_values_are_rounded_once_from_the_f64_result() {
        let d = dense(1, vec![1.0, 2.0, 4.0]);
        let s = Scaling::fit(ScaleKind::Standard, &d).unwrap();
        let f32_data = Features::Dense(DenseMatrix {
            rows: 1,
            cols: 1,
            values: vec![1.0f32].into(),
        });
        let Features::Dense(m) = s.apply(&f32_data).unwrap() else {
            panic!()
        };
        let want = ((1.0 - s.mean.as_ref().unwrap()[0]) / s.scale[0]) as f32;
        assert_eq!(m.values[0].to_bits(), want.to_bits());
    }

    #[test]
    fn maxabs_keeps_zeros_and_sparse_data_sparse() {
        let sparse = Dataset {
            features: Features::Sparse(CsrMatrix {
                cols: 3,
                row_ptr: vec![0, 2, 3].into(),
                indices: vec![0, 2, 2].into(),
                values: vec![-4.0, 1.0, 0.5].into(),
            }),
            ..dense(3, vec![0.0; 6])
        };
        let s = Scaling::fit(ScaleKind::MaxAbs, &sparse).unwrap();
        assert_eq!(
            (s.mean.clone(), s.scale.clone()),
            (None, vec![4.0, 1.0, 1.0])
        );
        let Features::Sparse(m) = s.apply(&sparse.features).unwrap() else {
            panic!("sparse stays sparse")
        };
        assert_eq!(&m.values[..], &[-1.0, 1.0, 0.5]);
        assert_eq!(
            Scaling::fit(ScaleKind::Standard, &sparse)
                .unwrap_err()
                .to_string(),
            ParamError::SparseStandardScaling.to_string()
        );
    }

    #[test]
    fn fewer_columns_are_zeros_and_more_are_refused() {
        let d = dense(2, vec![1.0, 3.0, 3.0, 5.0]);
        let s = Scaling::fit(ScaleKind::Standard, &d).unwrap();
        let narrow = Features::Dense(DenseMatrix {
            rows: 1,
            cols: 1,
            values: vec![1.0f64].into(),
        });
        let Features::Dense(m) = s.apply(&narrow).unwrap() else {
            panic!()
        };
        // Column 2 is 0 in the original units: (0 - 4) / 1.
        assert_eq!((m.cols, &m.values[..]), (2, &[-1.0, -4.0][..]));
        let wide = Features::Dense(DenseMatrix {
            rows: 1,
            cols: 3,
            values: vec![1.0f64; 3].into(),
        });
        assert!(s.apply(&wide).unwrap_err().contains("covers 2 features"));
        // A sparse file for a standard-scaled model is made dense first.
        let sparse = Features::Sparse(CsrMatrix {
            cols: 2,
            row_ptr: vec![0, 1].into(),
            indices: vec![1].into(),
            values: vec![5.0f64].into(),
        });
        let Features::Dense(m) = s.apply(&sparse).unwrap() else {
            panic!()
        };
        assert_eq!(&m.values[..], &[-2.0, 1.0]);
    }

    #[test]
    fn impossible_statistics_are_refused() {
        let bad = Scaling {
            kind: ScaleKind::MaxAbs,
            mean: None,
            scale: vec![1.0, 0.0],
        };
        assert_eq!(
            bad.check(),
            Err("scale 2 is 0, not a finite positive number".into())
        );
        let bad = Scaling {
            kind: ScaleKind::Standard,
            mean: None,
            scale: vec![1.0],
        };
        assert!(bad.check().is_err());
        let huge = dense(1, vec![1e300, -1e300]);
        let e = Scaling::fit(ScaleKind::Standard, &huge).unwrap_err();
        assert!(e.to_string().contains("feature 1: its variance"), "{e}");
    }
}
