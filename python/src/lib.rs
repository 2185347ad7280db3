//! `perceptron._core`: the native half of the Python package. The
//! scikit-learn estimator (`perceptron/_estimator.py`) checks its arguments
//! and keeps the fitted attributes; this module does the work, on the
//! library's exact engines, with the GIL released.
//!
//! One file per job: [`input`] (arrays in, lent without a copy), [`fit`]
//! (one training run), [`observer`] (Ctrl-C, verbose, warnings),
//! [`predict`] (scores and classes), [`model_file`] (the command line's
//! model file), [`loaders`] (data files to NumPy), [`errors`] (exceptions).

mod errors;
mod fit;
mod input;
mod loaders;
mod model_file;
mod observer;
mod predict;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The GPU adapters wgpu finds (Vulkan, Metal, DX12; software ones too),
/// one dict each, as `perceptron devices` lists them.
#[pyfunction]
fn adapters(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let found = py.detach(perceptron::engine::gpu::adapters);
    found
        .into_iter()
        .map(|a| {
            let d = PyDict::new(py);
            d.set_item("name", a.name)?;
            d.set_item("backend", a.backend)?;
            d.set_item("device_type", a.device_type)?;
            d.set_item("driver", a.driver)?;
            d.set_item("software", a.software)?;
            d.set_item("f64", a.f64)?;
            Ok(d)
        })
        .collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(fit::fit, m)?)?;
    m.add_function(wrap_pyfunction!(predict::decision_function, m)?)?;
    m.add_function(wrap_pyfunction!(predict::predict, m)?)?;
    m.add_function(wrap_pyfunction!(model_file::save_model, m)?)?;
    m.add_function(wrap_pyfunction!(model_file::load_model, m)?)?;
    m.add_function(wrap_pyfunction!(loaders::load_data, m)?)?;
    m.add_function(wrap_pyfunction!(adapters, m)?)?;
    m.add_class::<loaders::Buffer>()?;
    Ok(())
}
