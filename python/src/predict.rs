//! Predictions with fitted weights, the GIL released: every score is the
//! reference dot (s = w·x summed in index order, then the bias), and
//! every class is the one those scores give, whichever backend decides.
//!
//! A single head needs only the sign of s, which an engine certifies (the
//! rows it cannot certify get the reference dot); several heads compare
//! scores, which are computed exactly on all cores.

use numpy::{Element, PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use perceptron::data::{Dataset, Features};
use perceptron::engine::{backend, decide, reference};
use perceptron::{Precision, Real};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::errors::to_py;
use crate::fit::gpu_options;
use crate::input::precision;
use crate::input::{self, Plain};

/// Fitted weights: `heads` rows of w~ = [w, b] (b only with a bias).
struct Weights<F> {
    augmented: Vec<F>,
    heads: usize,
    features: usize,
    bias: bool,
}

impl<F: Real + Element> Weights<F> {
    fn read(coef: &Bound<'_, PyAny>, intercept: &Bound<'_, PyAny>, bias: bool) -> PyResult<Self> {
        let coef = coef.cast::<PyArray2<F>>().map_err(|_| {
            PyValueError::new_err(format!("coef_ must be a 2-D {} array", F::PRECISION))
        })?;
        let intercept = intercept.cast::<PyArray1<F>>().map_err(|_| {
            PyValueError::new_err(format!("intercept_ must be a 1-D {} array", F::PRECISION))
        })?;
        let (heads, features) = (coef.shape()[0], coef.shape()[1]);
        let coef = coef.to_owned_array();
        let intercept = intercept.to_owned_array();
        if intercept.len() != heads {
            return Err(PyValueError::new_err(format!(
                "coef_ has {heads} rows but intercept_ has {} values",
                intercept.len()
            )));
        }
        let mut augmented = Vec::with_capacity(heads * (features + bias as usize));
        for h in 0..heads {
            augmented.extend(coef.row(h).iter().copied());
            if bias {
                augmented.push(intercept[h]);
            }
        }
        Ok(Weights {
            augmented,
            heads,
            features,
            bias,
        })
    }

    fn head(&self, h: usize) -> &[F] {
        let dim = self.features + self.bias as usize;
        &self.augmented[h * dim..(h + 1) * dim]
    }

    /// Refuses rows with more features than the weights have, in the
    /// command line's words.
    fn check(&self, features: &Features<F>) -> PyResult<()> {
        if features.cols() > self.features {
            return Err(PyValueError::new_err(format!(
                "X has {} features, but the model has {}; the model was trained on other \
                 data (rows may have fewer features than the model, never more)",
                features.cols(),
                self.features
            )));
        }
        Ok(())
    }

    /// Every row's score for every head, row after row (exact, in parallel).
    fn scores(&self, features: &Features<F>) -> Vec<F> {
        let heads = self.heads;
        let mut out = vec![F::ZERO; features.rows() * heads];
        out.par_chunks_mut(heads.max(1) * 256)
            .enumerate()
            .for_each(|(block, chunk)| {
                for (k, s) in chunk.iter_mut().enumerate() {
                    let (i, h) = (block * 256 + k / heads, k % heads);
                    *s = reference::dot(self.head(h), features.row(i), self.bias);
                }
            });
        out
    }
}

/// The scores s = w~·x~ of every row (rows) and head (columns).
#[pyfunction]
#[pyo3(signature = (x, coef, intercept, *, precision, fit_intercept))]
pub fn decision_function<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    coef: &Bound<'py, PyAny>,
    intercept: &Bound<'py, PyAny>,
    precision: &str,
    fit_intercept: bool,
) -> PyResult<Bound<'py, PyAny>> {
    match self::precision(precision)? {
        Precision::F32 => scores_in::<f32>(py, x, coef, intercept, fit_intercept),
        Precision::F64 => scores_in::<f64>(py, x, coef, intercept, fit_intercept),
    }
}

fn scores_in<'py, F: Real + Element + Plain>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    coef: &Bound<'py, PyAny>,
    intercept: &Bound<'py, PyAny>,
    bias: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let w = Weights::<F>::read(coef, intercept, bias)?;
    let features = input::features::<F>(x)?.features;
    w.check(&features)?;
    let rows = features.rows();
    let scores = py.detach(|| w.scores(&features));
    Ok(PyArray1::from_vec(py, scores)
        .reshape([rows, w.heads])?
        .into_any())
}

/// Every row's class, as an index into `classes_`: the sign of the score
/// with one head (decided on `backend`, certified), else the head with the
/// highest score (the first of a tie).
#[pyfunction]
#[pyo3(signature = (x, coef, intercept, *, precision, fit_intercept, backend, adapter))]
#[allow(clippy::too_many_arguments)]
pub fn predict<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    coef: &Bound<'py, PyAny>,
    intercept: &Bound<'py, PyAny>,
    precision: &str,
    fit_intercept: bool,
    backend: &str,
    adapter: Option<String>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let backend = crate::fit::backend(backend, adapter.as_deref())?;
    let gpu = gpu_options(adapter);
    match self::precision(precision)? {
        Precision::F32 => predict_in::<f32>(py, x, coef, intercept, fit_intercept, backend, &gpu),
        Precision::F64 => predict_in::<f64>(py, x, coef, intercept, fit_intercept, backend, &gpu),
    }
}

fn predict_in<'py, F: Real + Element + Plain>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    coef: &Bound<'py, PyAny>,
    intercept: &Bound<'py, PyAny>,
    bias: bool,
    backend: backend::Backend,
    gpu: &perceptron::engine::gpu::GpuOptions,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let w = Weights::<F>::read(coef, intercept, bias)?;
    let features = input::features::<F>(x)?.features;
    w.check(&features)?;
    let classes = py.detach(|| -> perceptron::Result<Vec<i64>> {
        if w.heads > 1 {
            let scores = w.scores(&features);
            return Ok(scores
                .chunks(w.heads)
                .map(|s| reference::argmax(s) as i64)
                .collect());
        }
        let cols = features.cols();
        let data: Dataset<F> = decide::as_positive(features);
        let weights = decide::weights_for(w.head(0), bias, cols);
        let mut chosen = backend::choose(backend, gpu, &data, bias)?;
        let (positive, _) = decide::positive_rows(&data, &weights, bias, chosen.engine.as_mut())?;
        Ok(positive.into_iter().map(i64::from).collect())
    });
    Ok(PyArray1::from_vec(py, classes.map_err(to_py)?))
}
