//! Data files in, NumPy arrays out: the library's parsers (CSV, LIBSVM,
//! `.pbin`), each array handed to NumPy without a copy.
//!
//! Parsed arrays are owned vectors, which NumPy adopts as they are; a
//! `.pbin` file's sections are memory-mapped, and NumPy gets read-only
//! views of the mapping (kept alive by the arrays). Only a CSR matrix's row
//! pointers are converted, to the 32-bit indices SciPy and scikit-learn
//! prefer (one entry per row).

use std::any::Any;
use std::path::PathBuf;

use numpy::ndarray::ArrayView1;
use numpy::{Element, PyArray1, PyArrayMethods};
use perceptron::data::{
    self, CsrMatrix, Features, Format, HeaderMode, IndexBase, LabelColumn, LoadOptions, Storage,
};
use perceptron::{Precision, Real};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::to_py;
use crate::input::precision;

/// Keeps memory alive that NumPy arrays view (a `.pbin` file's mapping).
#[pyclass(frozen, module = "perceptron._core")]
pub struct Buffer {
    _keep: Box<dyn Any + Send + Sync>,
}

/// `storage` as a 1-D NumPy array of `U` (`T`'s size): adopted when owned,
/// a read-only view that keeps the storage alive when mapped.
fn to_numpy<'py, T, U>(py: Python<'py>, storage: Storage<T>) -> PyResult<Bound<'py, PyArray1<U>>>
where
    T: bytemuck::Pod + Send + Sync,
    U: bytemuck::Pod + Element,
{
    if !storage.is_mapped() && !storage.is_lent() {
        let v: Vec<U> = bytemuck::allocation::try_cast_vec(storage.into_vec())
            .map_err(|(e, _)| PyValueError::new_err(format!("{e:?}")))?;
        return Ok(PyArray1::from_vec(py, v));
    }
    let slice: &[U] =
        bytemuck::try_cast_slice(&storage).map_err(|e| PyValueError::new_err(format!("{e:?}")))?;
    let view = ArrayView1::from(slice);
    // The view points into the mapping, which moving the storage (an Arc
    // of it) into the buffer does not move.
    let container = Bound::new(
        py,
        Buffer {
            _keep: Box::new(storage.clone()),
        },
    )?;
    // SAFETY: `container` holds a clone of `storage`, which keeps the mapped
    // memory of `slice` alive and unchanged for as long as the array lives.
    let array = unsafe { PyArray1::borrow_from_array(&view, container.into_any()) };
    drop(storage);
    // The mapping is read-only: writing through the array must be refused.
    let kwargs = PyDict::new(py);
    kwargs.set_item("write", false)?;
    array.call_method("setflags", (), Some(&kwargs))?;
    Ok(array)
}

/// Reads a data file with the command line's parsers, in `precision`
/// (`None`: a `.pbin` file's own precision, so that its values are mapped
/// rather than converted; float64 for text).
///
/// Returns a dict: `precision`, `X` (a dense 2-D array) or `csr` (`data`, `indices`,
/// `indptr`), `shape`, and the labels: `y` (float64) when every label is a
/// number, else `class_ids` (uint32) and `labels` (their texts).
#[pyfunction]
#[pyo3(signature = (path, *, format, precision, label_column=None, header=None, delimiter=None, zero_based=None))]
#[allow(clippy::too_many_arguments)]
pub fn load_data<'py>(
    py: Python<'py>,
    path: PathBuf,
    format: Option<&str>,
    precision: Option<&str>,
    label_column: Option<&Bound<'py, PyAny>>,
    header: Option<bool>,
    delimiter: Option<char>,
    zero_based: Option<bool>,
) -> PyResult<Bound<'py, PyDict>> {
    let format = match format {
        None => None,
        Some("csv") => Some(Format::Csv),
        Some("libsvm") => Some(Format::Libsvm),
        Some("pbin") => Some(Format::Binary),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "format must be \"csv\", \"libsvm\" or \"pbin\", not {other:?}"
            )));
        }
    };
    let label_column = match label_column {
        None => None,
        Some(c) => Some(if let Ok(n) = c.extract::<usize>() {
            // Python counts from 0, the command line from 1.
            LabelColumn::Index(n + 1)
        } else {
            LabelColumn::Name(c.extract::<String>().map_err(|_| {
                PyValueError::new_err("label_column must be a column number (from 0) or a name")
            })?)
        }),
    };
    let delimiter = match delimiter {
        None => None,
        Some(d @ (',' | ';' | '\t')) => Some(d as u8),
        Some(d) => {
            return Err(PyValueError::new_err(format!(
                "delimiter must be ',', ';' or '\\t', not {d:?}"
            )));
        }
    };
    let opts = LoadOptions {
        format,
        label_column,
        header: match header {
            None => HeaderMode::Auto,
            Some(true) => HeaderMode::Present,
            Some(false) => HeaderMode::Absent,
        },
        delimiter,
        // LIBSVM: `None` detects the base as scikit-learn's "auto" does.
        index_base: zero_based.map(|z| if z { IndexBase::Zero } else { IndexBase::One }),
        ..LoadOptions::default()
    };
    let precision = match precision {
        Some(p) => self::precision(p)?,
        None if opts.format == Some(Format::Binary) => {
            data::binary::read_header(&path).map_err(to_py)?.precision
        }
        None => Precision::F64,
    };
    let out = match precision {
        Precision::F32 => load_in::<f32>(py, path, opts),
        Precision::F64 => load_in::<f64>(py, path, opts),
    }?;
    out.set_item("precision", precision.name())?;
    Ok(out)
}

fn load_in<'py, F: Real + Element + bytemuck::Pod>(
    py: Python<'py>,
    path: PathBuf,
    opts: LoadOptions,
) -> PyResult<Bound<'py, PyDict>> {
    let raw = py
        .detach(|| data::load_raw::<F>(&path, &opts))
        .map_err(to_py)?;
    let out = PyDict::new(py);
    let (rows, cols) = (raw.features.rows(), raw.features.cols());
    out.set_item("shape", (rows, cols))?;
    match raw.features {
        Features::Dense(m) => {
            let values = to_numpy::<F, F>(py, m.values)?;
            out.set_item("X", values.reshape([rows, cols])?)?;
        }
        Features::Sparse(m) => out.set_item("csr", csr(py, m)?)?,
    }
    let classes = raw.table.classes();
    let numbers: Option<Vec<f64>> = classes.iter().map(|c| c.number).collect();
    match numbers {
        Some(numbers) => {
            let y: Vec<f64> = raw.class_ids.iter().map(|&c| numbers[c as usize]).collect();
            out.set_item("y", PyArray1::from_vec(py, y))?;
        }
        None => {
            let texts: Vec<&str> = classes.iter().map(|c| c.text.as_str()).collect();
            out.set_item("labels", texts)?;
            out.set_item("class_ids", PyArray1::from_vec(py, raw.class_ids))?;
        }
    }
    Ok(out)
}

/// A CSR matrix's `data`, `indices` and `indptr` arrays.
type CsrArrays<'py, F> = (
    Bound<'py, PyArray1<F>>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

/// A CSR matrix's arrays, with 32-bit indices when the matrix has fewer
/// than 2^31 stored values, else 64-bit ones.
fn csr<'py, F: Real + Element + bytemuck::Pod>(
    py: Python<'py>,
    m: CsrMatrix<F>,
) -> PyResult<CsrArrays<'py, F>> {
    let data = to_numpy::<F, F>(py, m.values)?;
    if m.indices.len() <= i32::MAX as usize {
        let indices = to_numpy::<u32, i32>(py, m.indices)?;
        let indptr: Vec<i32> = m.row_ptr.iter().map(|&p| p as i32).collect();
        Ok((
            data,
            indices.into_any(),
            PyArray1::from_vec(py, indptr).into_any(),
        ))
    } else {
        let indices: Vec<i64> = m.indices.iter().map(|&k| i64::from(k)).collect();
        let indptr = to_numpy::<usize, i64>(py, m.row_ptr)?;
        Ok((
            data,
            PyArray1::from_vec(py, indices).into_any(),
            indptr.into_any(),
        ))
    }
}
