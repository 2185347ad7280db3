//! NumPy's `.npy` files (read with the `npyz` crate): a 2-D float array of
//! rows, its labels in a second `.npy` (`--labels FILE`) or in the column
//! `--label-column N` names (never a column by default: an array is most
//! often the features alone).
//!
//! - **Features**: dtype `f4` or `f8`, little- or big-endian, C or Fortran
//!   order, shape (rows, columns). Values are converted to the training
//!   precision as `.pbin` values are: f4 to f64 exactly, f8 to f4 rounded
//!   to nearest, value by value in the file's order into the final
//!   row-major storage (no copy of the whole array on the way). NaN and
//!   infinity are refused, naming the row and column.
//! - **Labels file**: shape (rows,) or (rows, 1), dtype bool, any integer
//!   or f4/f8; integers are labels as written in decimal, floats as the
//!   shortest decimal that reads back to them (`1.0` is the label `1`).
//! - **Labels in a column**: the column's floats are labels as above, and
//!   the other columns are the features.
//!
//! Every error names the file and what is wrong: the dtype, the number of
//! dimensions, or the shape against the labels file's.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use npyz::{DType, NpyFile, Order, TypeChar};

use crate::data::labels::LabelTable;
use crate::data::matrix::{DenseMatrix, Features};
use crate::data::options::{Format, LabelColumn, LoadOptions, NO_LABEL};
use crate::data::raw::RawData;
use crate::error::{Error, Result};
use crate::float::Real;

/// The file name extension.
pub const EXTENSION: &str = "npy";

/// The first bytes of every `.npy` file.
pub const MAGIC: &[u8] = b"\x93NUMPY";

/// Whether a file starting with `head` is a `.npy` file.
pub fn is_npy(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// A `.npy` file's array, opened: its header read, its data next.
struct Array {
    file: NpyFile<BufReader<File>>,
    shape: Vec<u64>,
}

fn open(path: &Path, what: &str) -> Result<Array> {
    let f = File::open(path).map_err(|e| Error::io(path, "cannot open data file", e))?;
    let length = f
        .metadata()
        .map_err(|e| Error::io(path, "cannot read data file", e))?
        .len();
    let mut reader = BufReader::new(f);
    let mut head = [0u8; 12];
    let got = read_up_to(&mut reader, &mut head).map_err(|e| Error::io(path, "cannot read", e))?;
    if !is_npy(&head[..got]) {
        return Err(Error::data(
            path,
            format!("{what} is not a .npy file (it does not start with \\x93NUMPY)"),
        ));
    }
    // The header's length, to check the data's against the file's before
    // anything is allocated (version 1: u16 at byte 8; 2 and 3: u32).
    let data_start = match head[6] {
        1 if got >= 10 => 10 + u16::from_le_bytes([head[8], head[9]]) as u64,
        2 | 3 if got >= 12 => {
            12 + u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as u64
        }
        v => {
            return Err(Error::data(
                path,
                format!("{what} has .npy format version {v}, which is not 1, 2 or 3"),
            ));
        }
    };
    let file = File::open(path).map_err(|e| Error::io(path, "cannot open data file", e))?;
    let file = NpyFile::new(BufReader::new(file))
        .map_err(|e| Error::data(path, format!("{what} has an invalid .npy header: {e}")))?;
    let shape = file.shape().to_vec();
    let item = match file.dtype() {
        DType::Plain(t) => t.num_bytes().unwrap_or(0) as u64,
        _ => 0,
    };
    let values = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let expected = values.and_then(|n| n.checked_mul(item));
    if let Some(bytes) = expected
        && item > 0
        && length.checked_sub(data_start) != Some(bytes)
    {
        return Err(Error::data(
            path,
            format!(
                "{what} is truncated or padded: its header says {shape:?} values of {item} bytes \
                 ({bytes} bytes), but the file holds {} bytes after the header",
                length.saturating_sub(data_start)
            ),
        ));
    }
    Ok(Array { file, shape })
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The dtype in numpy's words (`<f8`), for messages.
fn dtype_name(dtype: &DType) -> String {
    match dtype {
        DType::Plain(t) => t.to_string(),
        DType::Array(..) => "a sub-array dtype".into(),
        DType::Record(_) => "a structured (record) dtype".into(),
    }
}

/// The array's values in file order, as f64 (exact for f4 and f8).
fn floats(path: &Path, what: &str, array: Array) -> Result<Vec<f64>> {
    let n = array.shape.iter().product::<u64>();
    let n = usize::try_from(n)
        .map_err(|_| Error::data(path, format!("{what} has more values than fit in memory")))?;
    let mut out: Vec<f64> = Vec::new();
    crate::memory::reserve(&mut out, n)
        .map_err(|s| s.refusal(path, &format!("the values of {what}"), ""))?;
    for_each_value(path, what, array, |_, v| {
        out.push(v);
        Ok(())
    })?;
    Ok(out)
}

/// Calls `put(k, v)` for each value of a float array, `k` counting them
/// in the file's order, `v` as f64 (exact for f4 and f8); an error for any
/// other dtype or a value that cannot be read.
fn for_each_value(
    path: &Path,
    what: &str,
    array: Array,
    mut put: impl FnMut(usize, f64) -> Result<()>,
) -> Result<()> {
    let dtype = array.file.dtype();
    let size = match &dtype {
        DType::Plain(t) if t.type_char() == TypeChar::Float => t.size_field(),
        _ => 0,
    };
    let bad = |e: std::io::Error| Error::data(path, format!("{what} cannot be read: {e}"));
    match size {
        4 => {
            let data = array
                .file
                .data::<f32>()
                .map_err(|e| Error::data(path, e.to_string()))?;
            for (k, v) in data.enumerate() {
                put(k, v.map_err(bad)? as f64)?;
            }
        }
        8 => {
            let data = array
                .file
                .data::<f64>()
                .map_err(|e| Error::data(path, e.to_string()))?;
            for (k, v) in data.enumerate() {
                put(k, v.map_err(bad)?)?;
            }
        }
        _ => {
            return Err(Error::data(
                path,
                format!(
                    "{what} has dtype {}; the features must be floats (f4 or f8): convert with \
                     .astype(numpy.float32) or .astype(numpy.float64)",
                    dtype_name(&dtype)
                ),
            ));
        }
    }
    Ok(())
}

/// A float label as text: the shortest decimal that reads back to it.
fn float_label(v: f64) -> String {
    if v == 0.0 { "0".into() } else { format!("{v}") }
}

/// The labels of a labels file, as texts, and their count.
fn label_texts(path: &Path) -> Result<Vec<String>> {
    let what = "the labels file";
    let array = open(path, what)?;
    let rows = match array.shape[..] {
        [n] | [n, 1] => n,
        ref s => {
            return Err(Error::data(
                path,
                format!(
                    "{what} has shape {s:?}; labels need one per row: shape (rows,) or (rows, 1)"
                ),
            ));
        }
    };
    let dtype = array.file.dtype();
    let bad = |e: std::io::Error| Error::data(path, format!("{what} cannot be read: {e}"));
    let DType::Plain(t) = &dtype else {
        return Err(Error::data(
            path,
            format!(
                "{what} has {}; labels must be bool, integers or floats",
                dtype_name(&dtype)
            ),
        ));
    };
    let texts: Vec<String> = match (t.type_char(), t.size_field()) {
        (TypeChar::Float, 4 | 8) => {
            let values = floats(path, what, array)?;
            if let Some(i) = values.iter().position(|v| !v.is_finite()) {
                return Err(Error::data(
                    path,
                    format!("{what}: label {} is {}, not a number", i + 1, values[i]),
                ));
            }
            values.into_iter().map(float_label).collect()
        }
        (TypeChar::Int | TypeChar::Uint, _) => {
            drop(array);
            read_ints(path, what)?
        }
        (TypeChar::Bool, 1) => array
            .file
            .data::<bool>()
            .map_err(|e| Error::data(path, e.to_string()))?
            .map(|v| v.map(|b| (b as u8).to_string()).map_err(bad))
            .collect::<Result<_>>()?,
        _ => {
            return Err(Error::data(
                path,
                format!(
                    "{what} has dtype {}; labels must be bool, integers or floats",
                    dtype_name(&dtype)
                ),
            ));
        }
    };
    debug_assert_eq!(texts.len() as u64, rows);
    Ok(texts)
}

/// Integer labels of any width and signedness, as decimal texts.
fn read_ints(path: &Path, what: &str) -> Result<Vec<String>> {
    let array = open(path, what)?;
    let dtype = array.file.dtype();
    let bad = |e: std::io::Error| Error::data(path, format!("{what} cannot be read: {e}"));
    let DType::Plain(t) = &dtype else {
        return Err(Error::data(
            path,
            format!("{what} has {}", dtype_name(&dtype)),
        ));
    };
    macro_rules! texts {
        ($t:ty) => {
            array
                .file
                .data::<$t>()
                .map_err(|e| Error::data(path, e.to_string()))?
                .map(|v| v.map(|v| v.to_string()).map_err(bad))
                .collect::<Result<Vec<String>>>()
        };
    }
    match (t.type_char(), t.size_field()) {
        (TypeChar::Int, 1) => texts!(i8),
        (TypeChar::Int, 2) => texts!(i16),
        (TypeChar::Int, 4) => texts!(i32),
        (TypeChar::Int, 8) => texts!(i64),
        (TypeChar::Uint, 1) => texts!(u8),
        (TypeChar::Uint, 2) => texts!(u16),
        (TypeChar::Uint, 4) => texts!(u32),
        (TypeChar::Uint, 8) => texts!(u64),
        _ => Err(Error::data(
            path,
            format!(
                "{what} has dtype {}; labels must be bool, integers or floats",
                dtype_name(&dtype)
            ),
        )),
    }
}

/// Reads a `.npy` data file (and its labels file, if `opts` names one).
/// "row i, column j: v is not a finite number" (0-based i, j).
fn not_finite(path: &Path, i: usize, j: usize, v: f64) -> Error {
    Error::data(
        path,
        format!(
            "row {}, column {}: {v} is not a finite number",
            i + 1,
            j + 1
        ),
    )
}

/// `v` in the training precision: an f8 value beyond f32's range would
/// become infinity, and is refused, as a .pbin file's is.
fn narrowed<F: Real>(path: &Path, i: usize, j: usize, v: f64) -> Result<F> {
    let x = F::from_f64(v);
    if x.is_finite() {
        return Ok(x);
    }
    Err(Error::data(
        path,
        format!(
            "row {}, column {}: {v:e} is too large for {} (largest finite magnitude {:e}); train \
             with --precision f64",
            i + 1,
            j + 1,
            F::PRECISION,
            f32::MAX
        ),
    ))
}

/// A float array read value by value, in the file's order (C or Fortran),
/// straight into its final storage: the features row-major in the training
/// precision, and the label column (when `label` names one) as f64, one per
/// row. The one copy the data needs: an f64 copy of the whole array first
/// would be 2x an f4 array on top of it.
fn read_values<F: Real>(
    path: &Path,
    what: &str,
    array: Array,
    (rows, cols): (usize, usize),
    label: Option<usize>,
) -> Result<(Vec<F>, Vec<f64>)> {
    let fortran = array.file.order() == Order::Fortran;
    let feature_cols = cols - usize::from(label.is_some());
    let n = rows
        .checked_mul(feature_cols)
        .ok_or_else(|| Error::data(path, format!("{what} has more values than fit in memory")))?;
    let mut out: Vec<F> = Vec::new();
    crate::memory::reserve(&mut out, n).map_err(|s| s.refusal(path, "the feature values", ""))?;
    // In C order without a label column the values arrive in their final
    // order and are appended; otherwise each goes to its place.
    let in_place = fortran || label.is_some();
    if in_place {
        out.resize(n, F::ZERO);
    }
    let mut labels: Vec<f64> = Vec::new();
    if label.is_some() {
        crate::memory::reserve(&mut labels, rows).map_err(|s| s.refusal(path, "the labels", ""))?;
        labels.resize(rows, 0.0);
    }
    let (rows1, cols1) = (rows.max(1), cols.max(1));
    let put = |k: usize, v: f64| -> Result<()> {
        let (i, j) = if fortran {
            (k % rows1, k / rows1)
        } else {
            (k / cols1, k % cols1)
        };
        if !v.is_finite() {
            return Err(not_finite(path, i, j, v));
        }
        match label {
            Some(c) if j == c => labels[i] = v,
            _ if !in_place => out.push(narrowed::<F>(path, i, j, v)?),
            _ => {
                let jj = j - usize::from(label.is_some_and(|c| j > c));
                out[i * feature_cols + jj] = narrowed::<F>(path, i, j, v)?;
            }
        }
        Ok(())
    };
    for_each_value(path, what, array, put)?;
    Ok((out, labels))
}

pub fn read<F: Real>(path: &Path, opts: &LoadOptions) -> Result<RawData<F>> {
    let what = "the array";
    let array = open(path, what)?;
    let (rows, cols) = matrix_shape(path, &array.shape)?;
    // Where the labels are: a file, a column, or nowhere. A mistake here is
    // reported after the values are read, so that a bad value is reported
    // before a missing label option, as for every other layout.
    let labels_file = opts.labels.as_deref().filter(|_| !opts.unlabeled);
    let label_column: Result<Option<usize>> = if opts.unlabeled || labels_file.is_some() {
        Ok(None)
    } else {
        label_column(path, opts, cols)
    };
    // Read once, into the final storage (a label column apart).
    let read_label = label_column.as_ref().ok().copied().flatten();
    let (out, values) = read_values::<F>(path, what, array, (rows, cols), read_label)?;
    let label_column = label_column?;
    if label_column.is_some() && cols < 2 {
        return Err(Error::data(
            path,
            "the array has one column, which would be the label: give the labels with --labels \
             FILE, or --unlabeled",
        ));
    }
    let column_labels = label_column.map(|_| values.as_slice());
    let (table, class_ids) = classes(path, rows, labels_file, column_labels)?;
    let feature_cols = cols - label_column.is_some() as usize;
    drop(values);
    Ok(RawData {
        features: Features::Dense(DenseMatrix {
            rows,
            cols: feature_cols,
            values: out.into(),
        }),
        class_ids,
        table,
        format: Format::Npy,
        csv: None,
        libsvm: None,
    })
}

/// The rows and columns of an array's `shape`; an error unless it is 2-D.
fn matrix_shape(path: &Path, shape: &[u64]) -> Result<(usize, usize)> {
    match *shape {
        [r, c] => Ok((r as usize, c as usize)),
        ref s => Err(Error::data(
            path,
            format!(
                "the array has {} dimensions (shape {s:?}); the data must be 2-D, shape (rows, \
                 columns)",
                s.len()
            ),
        )),
    }
}

/// The 0-based label column `--label-column` names among `cols`, for an
/// array whose labels are neither in a file nor absent.
fn label_column(path: &Path, opts: &LoadOptions, cols: usize) -> Result<Option<usize>> {
    match &opts.label_column {
        // A 2-D array is most often the features alone (numpy.save of
        // X): taking a column as the label would be a silent guess.
        None => Err(Error::data(
            path,
            format!(
                "a .npy array holds no labels unless told where they are: give them in a \
                 file with --labels FILE.npy (one per row), or name the array's label column \
                 with --label-column N (1 to {cols}); `predict --unlabeled` reads it without \
                 labels"
            ),
        )),
        Some(c @ (LabelColumn::Index(_) | LabelColumn::FromEnd(_))) => match c.position(cols) {
            Some(k) => Ok(Some(k)),
            None => {
                let given = match c {
                    LabelColumn::FromEnd(k) => format!("-{k}"),
                    LabelColumn::Index(k) => k.to_string(),
                    LabelColumn::Name(n) => n.clone(),
                };
                Err(Error::data(
                    path,
                    format!("--label-column {given}: the array has {cols} columns"),
                ))
            }
        },
        Some(LabelColumn::Name(name)) => Err(Error::data(
            path,
            format!(
                "--label-column {name}: a .npy array has no column names; give the \
                 column's number, or the labels in a file with --labels"
            ),
        )),
    }
}

/// The classes of the `rows` rows of the array at `path`: from the labels
/// file `labels_file`, else from the label column's values
/// `column_labels`, else one class for unlabeled rows.
fn classes(
    path: &Path,
    rows: usize,
    labels_file: Option<&Path>,
    column_labels: Option<&[f64]>,
) -> Result<(LabelTable, Vec<u32>)> {
    let mut table = LabelTable::default();
    let mut class_ids = Vec::new();
    crate::memory::reserve(&mut class_ids, rows)
        .map_err(|s| s.refusal(path, "the class ids", ""))?;
    match (labels_file, column_labels) {
        (Some(file), _) => {
            let texts = label_texts(file)?;
            if texts.len() != rows {
                return Err(Error::data(
                    path,
                    format!(
                        "has {} rows but the labels file {} has {} labels",
                        rows,
                        file.display(),
                        texts.len()
                    ),
                ));
            }
            for (i, t) in texts.iter().enumerate() {
                class_ids.push(
                    table
                        .intern(t, i as u64 + 1)
                        .ok_or_else(|| too_many_labels(file))?,
                );
            }
        }
        (None, Some(values)) => {
            for (i, &v) in values.iter().enumerate() {
                let t = float_label(v);
                class_ids.push(
                    table
                        .intern(&t, i as u64 + 1)
                        .ok_or_else(|| too_many_labels(path))?,
                );
            }
        }
        (None, None) => {
            for i in 0..rows {
                class_ids.push(table.intern(NO_LABEL, i as u64 + 1).unwrap_or(0));
            }
        }
    }
    Ok((table, class_ids))
}

/// The error for a labels file, or an array's label column, with more
/// distinct labels than a model can have.
fn too_many_labels(file: &Path) -> Error {
    Error::data(
        file,
        format!(
            "more than {} distinct labels",
            crate::data::labels::MAX_DISTINCT_LABELS
        ),
    )
}

#[cfg(test)]
mod tests;
