//! Arrays in: a C-ordered NumPy matrix, or the three arrays of a SciPy CSR
//! matrix, become the library's [`Features`], lent to it in place (no copy)
//! wherever the element types allow; the class codes the Python side made
//! become a [`Dataset`].
//!
//! The Python side has already put `X` in the training precision and in C
//! order (one copy, only when it was not), so the values are always lent
//! here. Of a CSR matrix's index arrays, 32-bit column indices are lent as
//! `u32` and 64-bit row pointers as `usize`; the other widths are converted
//! (for `indptr` that is one entry per row). [`Input::copied`] says which.

use std::any::Any;
use std::sync::Arc;

use numpy::{Element, PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use perceptron::data::labels::LabelRuleError;
use perceptron::data::{
    ClassLabel, CsrMatrix, Dataset, DenseMatrix, FactsCache, Features, Format, LabelMap, Storage,
    arrays,
};
use perceptron::{Precision, Real};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::about;

/// The features of `X`, and the names of the arrays that had to be copied
/// (none for dense data; `indptr` for a CSR matrix with 32-bit row
/// pointers, `indices` for one with 64-bit column indices).
pub struct Input<F> {
    pub features: Features<F>,
    pub copied: Vec<&'static str>,
}

/// Element types whose every bit pattern is a valid value, so that memory
/// of one can be read as the other of the same size and alignment.
pub trait Plain: Copy + Send + Sync + 'static {}
impl Plain for f32 {}
impl Plain for f64 {}
impl Plain for i32 {}
impl Plain for u32 {}
impl Plain for i64 {}
impl Plain for usize {}

/// The elements of the contiguous `array`, in place, as `U` (of `T`'s size
/// and alignment): the array itself is the owner that keeps them alive.
fn lend<T, U>(array: &Bound<'_, PyArrayDyn<T>>) -> PyResult<Storage<U>>
where
    T: Element + Plain,
    U: Plain,
{
    if size_of::<T>() != size_of::<U>() || align_of::<T>() != align_of::<U>() {
        return Err(PyTypeError::new_err(format!(
            "cannot read {} as {}: they differ in size or alignment",
            std::any::type_name::<T>(),
            std::any::type_name::<U>()
        )));
    }
    if !array.is_c_contiguous() || !array.is_aligned() {
        return Err(PyValueError::new_err(
            "an array passed to the native module must be C-contiguous and aligned",
        ));
    }
    let len = array.len();
    let ptr = array.data().cast_const().cast::<U>();
    let owner: Arc<dyn Any + Send + Sync> = Arc::new(array.clone().unbind());
    // SAFETY: a C-contiguous NumPy array holds `len` aligned elements of
    // `T` from `data()`, and `U` has `T`'s size and alignment with every
    // bit pattern valid (`Plain`). `owner` holds a reference to the array,
    // so its memory stays allocated while the storage lives; the array
    // cannot be resized while referenced, and the caller does not write
    // it during the call (the package documents this, as every extension
    // that releases the GIL must).
    Ok(unsafe { Storage::lent(owner, ptr, len) })
}

/// Reads `X`: a 2-D C-ordered array of `F`, or the tuple
/// `(data, indices, indptr, n_columns)` of a CSR matrix in canonical form.
pub fn features<F: Real + Element + Plain>(x: &Bound<'_, PyAny>) -> PyResult<Input<F>> {
    if let Ok(dense) = x.cast::<PyArray2<F>>() {
        let (rows, cols) = (dense.shape()[0], dense.shape()[1]);
        let values = lend::<F, F>(dense.as_any().cast::<PyArrayDyn<F>>()?)?;
        let features = Features::Dense(DenseMatrix { rows, cols, values });
        arrays::check_finite(&features).map_err(|m| about("X", m))?;
        return Ok(Input {
            features,
            copied: Vec::new(),
        });
    }
    let (data, indices, indptr, cols): (Bound<PyAny>, Bound<PyAny>, Bound<PyAny>, usize) =
        x.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "X must be a 2-D C-ordered {} array or a CSR matrix's (data, indices, \
                 indptr, columns)",
                F::PRECISION
            ))
        })?;
    let values = lend::<F, F>(data.cast::<PyArrayDyn<F>>().map_err(|_| {
        PyTypeError::new_err(format!("the CSR matrix's data must be {}", F::PRECISION))
    })?)?;
    let mut copied = Vec::new();
    let indices: Storage<u32> = if let Ok(a) = indices.cast::<PyArrayDyn<i32>>() {
        lend::<i32, u32>(a)?
    } else if let Ok(a) = indices.cast::<PyArray1<i64>>() {
        copied.push("indices");
        let a = a.readonly();
        a.as_slice()
            .map_err(|e| PyValueError::new_err(e.to_string()))?
            .iter()
            .map(|&k| u32::try_from(k).ok().filter(|&k| k < u32::MAX))
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| {
                about(
                    "X",
                    "a column index is negative or beyond 2^32 - 2 (indices)",
                )
            })?
            .into()
    } else {
        return Err(PyTypeError::new_err(
            "the CSR matrix's indices must be int32 or int64",
        ));
    };
    let row_ptr: Storage<usize> = if let Ok(a) = indptr.cast::<PyArrayDyn<i64>>() {
        lend::<i64, usize>(a)?
    } else if let Ok(a) = indptr.cast::<PyArray1<i32>>() {
        copied.push("indptr");
        let a = a.readonly();
        let slice = a
            .as_slice()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        // A negative entry becomes a huge one, which the CSR check refuses.
        slice.iter().map(|&p| p as usize).collect()
    } else {
        return Err(PyTypeError::new_err(
            "the CSR matrix's indptr must be int32 or int64",
        ));
    };
    arrays::check_csr(&row_ptr, &indices, values.len(), cols).map_err(|m| about("X", m))?;
    let features = Features::Sparse(CsrMatrix {
        cols,
        row_ptr,
        indices,
        values,
    });
    arrays::check_finite(&features).map_err(|m| about("X", m))?;
    Ok(Input { features, copied })
}

/// Whether `features` uses the memory of `X` in place.
pub fn is_lent<F>(features: &Features<F>) -> bool {
    match features {
        Features::Dense(m) => m.values.is_lent(),
        Features::Sparse(m) => m.values.is_lent(),
    }
}

/// The labelled dataset of `features` whose row `i` is of class
/// `codes[i]`, an index into `classes` (the label texts, in the order of
/// the estimator's `classes_`). Binary data (two classes, no one-vs-rest)
/// labels `classes[1]` +1, as scikit-learn does.
pub fn dataset<F: Real>(
    features: Features<F>,
    codes: &[i64],
    classes: &[String],
    multiclass: bool,
) -> PyResult<Dataset<F>> {
    if codes.len() != features.rows() {
        return Err(PyValueError::new_err(format!(
            "X has {} rows but y has {} labels; they must have one label per row",
            features.rows(),
            codes.len()
        )));
    }
    let (class_ids, counts) = class_ids(codes, classes.len())?;
    let labels_found = || {
        classes
            .iter()
            .zip(&counts)
            .filter(|(_, n)| **n > 0)
            .map(|(t, n)| format!("\"{t}\" ({})", rows(*n)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if classes.len() < 2 {
        // The command line's message, and the words scikit-learn's checks
        // look for.
        let e = LabelRuleError::SingleClass(labels_found());
        return Err(about("y", format!("{e}, and y has one class")));
    }
    let class_labels = classes
        .iter()
        .zip(&counts)
        .map(|(text, &count)| ClassLabel {
            text: text.clone(),
            number: text.parse::<f64>().ok().filter(|v| v.is_finite()),
            count,
            first_line: 0,
        })
        .collect();
    let (labels, label_map) = binary_labels(&class_ids, classes, multiclass);
    Ok(Dataset {
        features,
        labels,
        label_map,
        classes: class_labels,
        class_ids,
        source: "<array>".into(),
        // Arrays in memory are closest to the binary format: values as
        // stored, nothing parsed. Only reports read this field.
        format: Format::Binary,
        facts: FactsCache::default(),
    })
}

/// Each row's class id, checked against the `n_classes` classes, and each
/// class's row count.
fn class_ids(codes: &[i64], n_classes: usize) -> PyResult<(Vec<u32>, Vec<u64>)> {
    let mut counts = vec![0u64; n_classes];
    let mut class_ids = Vec::with_capacity(codes.len());
    for &c in codes {
        let id = usize::try_from(c)
            .ok()
            .filter(|&c| c < n_classes)
            .ok_or_else(|| PyValueError::new_err(format!("class code {c} is out of range")))?;
        counts[id] += 1;
        class_ids.push(id as u32);
    }
    Ok((class_ids, counts))
}

/// The ±1 labels and their map for binary data (`classes[1]` +1);
/// one-vs-rest data has neither.
fn binary_labels(class_ids: &[u32], classes: &[String], multiclass: bool) -> (Vec<i8>, LabelMap) {
    if multiclass {
        (
            Vec::new(),
            LabelMap {
                positive: String::new(),
                negative: None,
            },
        )
    } else {
        (
            class_ids
                .iter()
                .map(|&c| if c == 1 { 1 } else { -1 })
                .collect(),
            LabelMap {
                positive: classes[1].clone(),
                negative: Some(classes[0].clone()),
            },
        )
    }
}

fn rows(n: u64) -> String {
    if n == 1 {
        "1 row".into()
    } else {
        format!("{n} rows")
    }
}

/// Reads a precision as `"f32"` or `"f64"`.
pub fn precision(name: &str) -> PyResult<Precision> {
    match name {
        "f32" => Ok(Precision::F32),
        "f64" => Ok(Precision::F64),
        other => Err(PyValueError::new_err(format!(
            "precision must be \"f32\" or \"f64\", not {other:?}"
        ))),
    }
}
