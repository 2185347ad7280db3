//! Writing datasets as CSV, LIBSVM or the binary `.pbin` format, the format
//! chosen by the output file's extension.
//!
//! Text output round-trips exactly in its own precision: every value is
//! written with Rust's shortest representation that parses back to the same
//! bits (`{}`) in the precision it is stored in, and labels as their text.
//! Read in the *other* precision, a decimal gives its own nearest value:
//! text of f32 values read for f64 training is not the f32 values widened
//! (a `.pbin` file of them is), so write text in the precision it will be
//! trained in. CSV output has no header, the label first and
//! every feature (zeros included); LIBSVM output lists the stored entries
//! with 1-based indices. LIBSVM files do not record the number of features,
//! so a reader sees as many as the largest index present.

use std::io::{self, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::float::Real;
use crate::output::{write_atomic, write_atomic_seekable};

use super::{Features, RawData, Row, binary};

/// The formats the tool writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    Csv,
    Libsvm,
    Binary,
}

impl OutputFormat {
    /// The format named by `path`'s extension: `.csv`, `.svm`/`.libsvm`/
    /// `.svmlight` or `.pbin` (any case).
    pub fn from_path(path: &Path) -> Result<Self> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("csv") => Ok(OutputFormat::Csv),
            Some("svm" | "libsvm" | "svmlight") => Ok(OutputFormat::Libsvm),
            Some(binary::EXTENSION) => Ok(OutputFormat::Binary),
            Some("gz") => Err(Error::Usage(format!(
                "{}: compressed output is not supported; write the plain file and compress \
                 it afterwards",
                path.display()
            ))),
            _ => Err(Error::Usage(format!(
                "{}: cannot tell the output format from the name; use the extension .csv, \
                 .svm (LIBSVM) or .pbin (binary)",
                path.display()
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Csv => "CSV",
            OutputFormat::Libsvm => "LIBSVM",
            OutputFormat::Binary => "binary",
        }
    }
}

/// Appends `v` in the shortest form that parses back to the same value.
#[inline]
pub fn push_value<F: Real>(out: &mut Vec<u8>, v: F) {
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{v}");
}

/// A label as a CSV field: quoted when it holds a delimiter, a quote, a
/// leading `#` or surrounding spaces.
pub fn csv_label(label: &str) -> std::result::Result<String, String> {
    if label.contains(['\n', '\r']) {
        return Err(format!(
            "label {} holds a line break and cannot be written as CSV",
            super::source::quote(label)
        ));
    }
    let plain = !label.is_empty()
        && !label.contains([',', ';', '\t', '"'])
        && !label.starts_with('#')
        && label.trim() == label;
    if plain {
        Ok(label.to_owned())
    } else {
        Ok(format!("\"{}\"", label.replace('"', "\"\"")))
    }
}

/// A label as a LIBSVM token: a finite number (the reader refuses anything
/// else), with no spaces, `:` or `#`.
pub fn libsvm_label(label: &str) -> std::result::Result<String, String> {
    if label.is_empty() || label.contains(|c: char| c.is_whitespace() || c == ':' || c == '#') {
        return Err(format!(
            "label {} holds a space, `:` or `#` and cannot be written as LIBSVM",
            super::source::quote(label)
        ));
    }
    if !label.parse::<f64>().is_ok_and(f64::is_finite) {
        return Err(format!(
            "label {} is not a number and cannot be written as LIBSVM, whose labels are \
             numbers; write CSV or .pbin instead",
            super::source::quote(label)
        ));
    }
    Ok(label.to_owned())
}

/// Appends a CSV line: the label, then all `cols` features (zeros for
/// entries a sparse row does not store).
pub fn csv_line<F: Real>(out: &mut Vec<u8>, label: &str, row: Row<'_, F>, cols: usize) {
    out.extend_from_slice(label.as_bytes());
    match row {
        Row::Dense(x) => {
            for &v in x {
                out.push(b',');
                push_value(out, v);
            }
        }
        Row::Sparse(idx, val) => {
            let mut next = 0usize;
            for (&k, &v) in idx.iter().zip(val) {
                for _ in next..k as usize {
                    out.extend_from_slice(b",0");
                }
                out.push(b',');
                push_value(out, v);
                next = k as usize + 1;
            }
            for _ in next..cols {
                out.extend_from_slice(b",0");
            }
        }
    }
    out.push(b'\n');
}

/// Appends a LIBSVM line: the label, then `index:value` for every stored
/// entry (1-based indices).
pub fn libsvm_line<F: Real>(out: &mut Vec<u8>, label: &str, row: Row<'_, F>) {
    out.extend_from_slice(label.as_bytes());
    row.for_each(|k, v| {
        let _ = write!(out, " {}:", k + 1);
        push_value(out, v);
    });
    out.push(b'\n');
}

/// Writes `raw` to `path` atomically in `format`; returns the bytes written.
/// Binary output keeps the features' layout and precision.
pub fn write_raw<F: Real>(path: &Path, raw: &RawData<F>, format: OutputFormat) -> Result<u64> {
    let mut written = 0u64;
    match format {
        OutputFormat::Binary => {
            write_atomic_seekable(path, |w| {
                written = binary::write_raw(w, raw)?;
                Ok(())
            })?;
        }
        OutputFormat::Csv | OutputFormat::Libsvm => {
            let csv = format == OutputFormat::Csv;
            let cols = raw.features.cols();
            if csv && cols == 0 {
                return Err(Error::data(
                    path,
                    "cannot write CSV without feature columns",
                ));
            }
            let labels = raw
                .table
                .classes()
                .iter()
                .map(|c| {
                    if csv {
                        csv_label(&c.text)
                    } else {
                        libsvm_label(&c.text)
                    }
                })
                .collect::<std::result::Result<Vec<String>, String>>()
                .map_err(|m| Error::data(path, m))?;
            write_atomic(path, |w| {
                let mut line = Vec::with_capacity(1 << 16);
                for (i, &c) in raw.class_ids.iter().enumerate() {
                    let label = labels.get(c as usize).ok_or_else(|| {
                        io::Error::new(io::ErrorKind::InvalidInput, "class id out of range")
                    })?;
                    let row = raw.features.row(i);
                    if csv {
                        csv_line(&mut line, label, row, cols);
                    } else {
                        libsvm_line(&mut line, label, row);
                    }
                    if line.len() >= 1 << 16 {
                        w.write_all(&line)?;
                        written += line.len() as u64;
                        line.clear();
                    }
                }
                w.write_all(&line)?;
                written += line.len() as u64;
                Ok(())
            })?;
        }
    }
    Ok(written)
}

/// The same data with the features in `layout` (dense to CSR drops exact
/// zeros; CSR to dense fills them in).
pub fn with_layout<F: Real>(raw: RawData<F>, layout: binary::Layout) -> RawData<F> {
    let features = match (layout, raw.features) {
        (binary::Layout::Dense, Features::Sparse(m)) => {
            Features::Dense(Features::Sparse(m).to_dense())
        }
        (binary::Layout::Csr, Features::Dense(m)) => {
            Features::Sparse(Features::Dense(m).to_sparse())
        }
        (_, f) => f,
    };
    RawData { features, ..raw }
}
