//! The estimator's core: one training run on arrays, with the library's
//! `Trainer`, the GIL released, and Ctrl-C raising `KeyboardInterrupt`.
//!
//! `fit` starts from zero or from given weights (`warm_start`), and
//! `partial_fit` is the same run with one epoch from the current weights,
//! which is bit for bit what `perceptron online` does over those rows.

use std::sync::OnceLock;

use numpy::{Element, PyArray1, PyArrayMethods, PyReadonlyArray1};
use perceptron::engine::backend::Backend;
use perceptron::engine::gpu::{AdapterRequest, GpuOptions};
use perceptron::model::{ClassTraining, TrainingInfo};
use perceptron::run::{FingerprintWhen, Init, Run, RunInputs};
use perceptron::train::early_stop::{Judge, Keep, Validation};
use perceptron::train::scikit::EveryEpoch;
use perceptron::train::{
    CheckedParams, ClassWeights, EarlyStop, Fit, Margin, PassPolicy, RunSettings, Stop,
    TrainParams, Trainer, Variant,
};
use perceptron::{Precision, Real};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::to_py;
use crate::input::{self, Plain};
use crate::model_file::ModelInfo;

/// The options of one run, as the estimator's parameters give them.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub max_iter: usize,
    pub fit_intercept: bool,
    pub shuffle_seed: Option<u64>,
    /// scikit-learn's reshuffle before every epoch: each perceptron's seed.
    pub shuffle_seeds: Option<Vec<u32>>,
    /// scikit-learn's stopping rule on the mean loss: (tol, n_iter_no_change).
    pub tol: Option<(f64, usize)>,
    /// Each class's weight, in the order of the classes (scikit-learn's
    /// expanded `class_weight`).
    pub class_weights: Option<Vec<f64>>,
    /// Each row's weight (`sample_weight`).
    pub sample_weight: Option<std::sync::Arc<[f64]>>,
    /// scikit-learn's `early_stopping=True`: the rows its split holds out
    /// of training (ascending) and the `validation_fraction` they are.
    pub held_out: Option<(Vec<usize>, f64)>,
    pub variant: Variant,
    pub margin: Option<Margin>,
    pub multiclass: bool,
    /// The bias's step per unit (scikit-learn's 0.01 on sparse input;
    /// `None`: the textbook update).
    pub intercept_decay: Option<f64>,
    pub backend: Backend,
    pub gpu: GpuOptions,
    pub verbose: u32,
}

impl RunOptions {
    /// The library's checked parameters for these options, over `classes`.
    fn params(&self, classes: &[String]) -> PyResult<CheckedParams> {
        TrainParams {
            max_epochs: self.max_iter,
            bias: self.fit_intercept,
            shuffle_seed: self.shuffle_seed,
            shuffle_every_epoch: self.shuffle_seeds.clone().map(EveryEpoch::Seeds),
            early_stop: self.tol.map(|(tol, n_iter_no_change)| EarlyStop {
                tol,
                n_iter_no_change,
                validation: self
                    .held_out
                    .as_ref()
                    .map(|&(_, fraction)| Validation { fraction, seed: 0 }),
                judge: Judge::MeanLoss,
                keep: Keep::Last,
            }),
            held_out: self.held_out.as_ref().map(|(rows, _)| rows.clone().into()),
            class_weight: self.class_weights.as_ref().map(|w| {
                ClassWeights::Given(
                    classes
                        .iter()
                        .zip(w)
                        .map(|(label, c)| (label.clone(), format!("{c:?}")))
                        .collect(),
                )
            }),
            sample_weight: self.sample_weight.clone(),
            passes: PassPolicy::Adaptive,
            variant: self.variant,
            margin: self.margin.clone(),
            multiclass: self.multiclass,
            intercept_decay: self.intercept_decay,
            ..TrainParams::default()
        }
        .check()
        .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// Whether a hardware GPU adapter exists, asked once per process: looking
/// costs tens of milliseconds (every driver is loaded), which a process
/// that fits many small models (a grid search) should pay once. Without a
/// GPU's device node no driver is loaded at all: a software driver may
/// write to stderr when loaded (Mesa's, without a display), which a fit on
/// the CPU has no reason to show.
fn hardware_gpu() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        perceptron::engine::backend::gpu_device_present()
            && perceptron::engine::gpu::context::hardware_available()
    })
}

/// Reads a backend name as the estimator's `backend` parameter spells it.
/// `auto` without a named adapter or a hardware GPU is the CPU engine, as
/// the library's own `auto` would decide after looking again.
pub fn backend(name: &str, adapter: Option<&str>) -> PyResult<Backend> {
    match name {
        "auto" if adapter.is_none() && !hardware_gpu() => Ok(Backend::Cpu),
        "auto" => Ok(Backend::Auto),
        "cpu" => Ok(Backend::Cpu),
        "gpu" => Ok(Backend::Gpu),
        "reference" => Ok(Backend::Reference),
        other => Err(PyValueError::new_err(format!(
            "backend must be \"auto\", \"cpu\", \"gpu\" or \"reference\", not {other:?}"
        ))),
    }
}

/// The GPU options for `adapter` (a part of an adapter's name, or any).
pub fn gpu_options(adapter: Option<String>) -> GpuOptions {
    GpuOptions {
        adapter: AdapterRequest {
            name: adapter,
            allow_software: false,
        },
        ..GpuOptions::default()
    }
}

/// Trains on `x` (see [`input::features`]) whose row `i` is of class
/// `codes[i]` among `classes`, from zero or from `init` (w~ of every head,
/// head after head), and returns the fitted attributes as a dict.
#[pyfunction]
#[pyo3(signature = (
    x, codes, classes, *, precision, max_iter, fit_intercept, shuffle_seed,
    shuffle_seeds, tol, n_iter_no_change, class_weights, sample_weight, held_out, validation_fraction,
    average, pocket, margin, multiclass, intercept_decay, backend, adapter, init, verbose
))]
#[allow(clippy::too_many_arguments)]
pub fn fit<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    codes: PyReadonlyArray1<'py, i64>,
    classes: Vec<String>,
    precision: &str,
    max_iter: usize,
    fit_intercept: bool,
    shuffle_seed: Option<u64>,
    shuffle_seeds: Option<Vec<u32>>,
    tol: Option<f64>,
    n_iter_no_change: usize,
    class_weights: Option<Vec<f64>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    held_out: Option<Vec<usize>>,
    validation_fraction: f64,
    average: bool,
    pocket: bool,
    margin: Option<String>,
    multiclass: bool,
    intercept_decay: Option<f64>,
    backend: &str,
    adapter: Option<String>,
    init: Option<&Bound<'py, PyAny>>,
    verbose: u32,
) -> PyResult<Bound<'py, PyDict>> {
    let variant = match (average, pocket) {
        (false, false) => Variant::Classic,
        (true, false) => Variant::Averaged,
        (false, true) => Variant::Pocket,
        (true, true) => {
            return Err(PyValueError::new_err(
                "average and pocket are two variants: choose one of them",
            ));
        }
    };
    let options = RunOptions {
        max_iter,
        fit_intercept,
        shuffle_seed,
        shuffle_seeds,
        tol: tol.map(|t| (t, n_iter_no_change)),
        class_weights,
        sample_weight: match &sample_weight {
            Some(w) => Some(w.as_slice()?.into()),
            None => None,
        },
        held_out: held_out.map(|rows| (rows, validation_fraction)),
        variant,
        margin: margin
            .map(|m| Margin::parse(&m))
            .transpose()
            .map_err(|e| PyValueError::new_err(e.to_string()))?,
        multiclass,
        intercept_decay,
        backend: self::backend(backend, adapter.as_deref())?,
        gpu: gpu_options(adapter),
        verbose,
    };
    let codes = codes.as_slice()?;
    match crate::input::precision(precision)? {
        Precision::F32 => fit_in::<f32>(py, x, codes, &classes, options, init),
        Precision::F64 => fit_in::<f64>(py, x, codes, &classes, options, init),
    }
}

fn fit_in<'py, F: Real + Element + Plain>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    codes: &[i64],
    classes: &[String],
    options: RunOptions,
    init: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let input = input::features::<F>(x)?;
    let lent = input::is_lent(&input.features);
    let data = input::dataset(input.features, codes, classes, options.multiclass)?;
    let params = options.params(classes)?;
    let heads = params.heads(data.classes.len());
    let dim = data.cols() + params.bias as usize;
    let init = match init {
        None => Init::Zero,
        Some(w) => {
            let w = w.cast::<PyArray1<F>>().map_err(|_| {
                PyValueError::new_err(format!("the initial weights must be {}", F::PRECISION))
            })?;
            let w = w.readonly().as_slice()?.to_vec();
            if w.len() != heads * dim {
                return Err(PyValueError::new_err(format!(
                    "the initial weights hold {} values, but {heads} head(s) of {dim} need {}",
                    w.len(),
                    heads * dim
                )));
            }
            Init::Weights {
                weights: w,
                source: "the estimator's coef_ and intercept_".to_owned(),
            }
        }
    };
    let warm = !matches!(init, Init::Zero);
    // With `--shuffle --seed` the rows are permuted into owned memory.
    let mut run = Run::prepare(RunInputs {
        trainer: Trainer::new(params)
            .with_backend(options.backend)
            .with_gpu(options.gpu),
        data,
        settings: RunSettings::default(),
        init,
        resume: None,
        fingerprint: FingerprintWhen::Never,
    })
    .map_err(to_py)?;
    let mut observer = crate::observer::PythonObserver::new(options.verbose, run.data.rows());
    let fitted = py.detach(|| run.fit(&mut observer));
    if let Some(interrupt) = observer.interrupt.take() {
        // Nothing was kept: the estimator stays as it was.
        return Err(interrupt);
    }
    let fit = fitted.map_err(to_py)?;
    if fit.stop == Stop::Interrupted {
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "training was interrupted",
        ));
    }
    let out = attributes(py, &run, &fit, options.max_iter, warm)?;
    // What the input was (lent or copied) and what the run warned of.
    out.set_item("warnings", std::mem::take(&mut observer.warnings))?;
    out.set_item("lent", lent)?;
    out.set_item("copied", input.copied)?;
    Ok(out)
}

/// The fitted attributes the estimator keeps, from a finished run: the
/// coefficients, scikit-learn's counts, the theorem's figures, the backend
/// and the model file's `training` section.
fn attributes<'py, F: Real + Element>(
    py: Python<'py>,
    run: &Run<F>,
    fit: &Fit<F>,
    max_iter: usize,
    warm: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let data = &run.data;
    let heads = run.trainer.params().heads(data.classes.len());
    let dim = data.cols() + fit.bias as usize;
    let training = TrainingInfo::of_fit(&run.description, fit, data, None);
    let per_class = ClassTraining::of_fit(fit);

    let out = PyDict::new(py);
    let cols = data.cols();
    let mut coef = Vec::with_capacity(heads * cols);
    let mut intercept = Vec::with_capacity(heads);
    for h in 0..heads {
        let w = &fit.weights[h * dim..(h + 1) * dim];
        coef.extend_from_slice(&w[..cols]);
        intercept.push(if fit.bias { w[cols] } else { F::ZERO });
    }
    out.set_item("coef", PyArray1::from_vec(py, coef).reshape([heads, cols])?)?;
    out.set_item("intercept", PyArray1::from_vec(py, intercept))?;
    // scikit-learn's n_iter_: its loop runs on after an epoch without a
    // mistake until its rule (or max_iter) stops it.
    let n_iter = fit.nominal_epochs.unwrap_or_else(|| {
        perceptron::train::scikit::nominal_epochs(
            run.trainer.params().early_stop.as_ref(),
            fit,
            max_iter,
        )
    });
    out.set_item("n_iter", n_iter)?;
    out.set_item("epochs_run", fit.epochs())?;
    out.set_item("mistakes_per_epoch", &fit.mistakes_per_epoch)?;
    out.set_item("converged", fit.converged())?;
    out.set_item("radius", training.radius)?;
    if heads > 1 {
        let margins: Vec<f64> = per_class
            .iter()
            .map(|c| c.margin.unwrap_or(f64::NAN))
            .collect();
        let bounds: Vec<f64> = per_class
            .iter()
            .map(|c| c.mistake_bound.filter(|_| !warm).unwrap_or(f64::NAN))
            .collect();
        out.set_item("margin", PyArray1::from_vec(py, margins))?;
        out.set_item("mistake_bound", PyArray1::from_vec(py, bounds))?;
    } else {
        out.set_item("margin", training.margin)?;
        out.set_item("mistake_bound", training.mistake_bound)?;
    }
    out.set_item("backend", &training.backend)?;
    out.set_item("backend_note", fit.backend_note.as_deref())?;
    let info = ModelInfo {
        training,
        per_class,
    };
    out.set_item("info", info.to_json()?)?;
    Ok(out)
}
