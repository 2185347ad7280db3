//! Writing datasets as CSV, LIBSVM or the binary `.pbin` format, the format
//! chosen by the output file's extension.
//!
//! Text output round-trips exactly in its own precision: every value is
//! written with Rust's shortest representation that parses back to the same
//! bits (`{}`) in the precision it is stored in, and labels as their text.
//! Read in the *other* precision, a decimal gives its own nearest value:
//! text of f32 values read for f64 training is not the f32 values widened
//! (a `.pbin` file of them is), so write text in the precision it will be
//! trained in. CSV output has every feature (zeros included); CSV read from
//! CSV keeps its layout (the header, the label column and the delimiter),
//! so that a model of the original reads it as it reads the original;
//! other CSV output has no header and the label first. LIBSVM output lists
//! the stored entries with 1-based indices (the LIBSVM standard), or
//! 0-based when asked. LIBSVM files do not record the number of features,
//! so a reader sees as many as the largest index present.

use std::io;
use std::path::Path;

use crate::error::{Error, Result};
use crate::float::Real;
use crate::output::{write_atomic, write_atomic_seekable};

use super::lines::MAX_LINE_BYTES;
use super::matrix::{CsrMatrix, DenseMatrix, Features};
use super::options::IndexBase;
use super::raw::RawData;
use super::{binary, csv, libsvm};

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
            Some("npy") => Err(Error::Usage(format!(
                "{}: writing .npy is not supported (it is read: features, with --labels for \
                 the labels); write .pbin (binary), .csv or .svm",
                path.display()
            ))),
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

    /// The format of an output that goes to standard output (`-`), which
    /// has no extension: text, CSV for dense data and LIBSVM for sparse.
    pub fn for_stdout(sparse: bool) -> Self {
        if sparse {
            OutputFormat::Libsvm
        } else {
            OutputFormat::Csv
        }
    }

    /// The format of the output `path`: by its extension (see
    /// [`OutputFormat::from_path`]), or for standard output by the data's
    /// layout (see [`OutputFormat::for_stdout`]).
    pub fn of_output(path: &Path, sparse: bool) -> Result<Self> {
        if crate::output::is_stdout(path) {
            Ok(Self::for_stdout(sparse))
        } else {
            Self::from_path(path)
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

/// Refuses text output whose lines could not be read back: even the
/// shortest line would exceed [`MAX_LINE_BYTES`], which this tool's readers
/// refuse (and building it could exhaust memory). `shortest` counts the
/// line's bytes without its newline; `why` says what makes it that long.
pub fn check_shortest_line(
    path: &Path,
    format: OutputFormat,
    shortest: u64,
    why: &str,
) -> Result<()> {
    if shortest <= MAX_LINE_BYTES as u64 {
        return Ok(());
    }
    Err(Error::data(
        path,
        format!(
            "{} lines of this data would be at least {shortest} bytes long ({why}), more than \
             the {MAX_LINE_BYTES}-byte line limit of this tool's readers; write binary \
             (.pbin) instead",
            format.name()
        ),
    ))
}

/// Refuses one line longer than [`MAX_LINE_BYTES`] (its newline not
/// counted), which this tool's readers would refuse; `row` counts from 1.
pub fn check_line(path: &Path, row: u64, len: usize) -> Result<()> {
    if len <= MAX_LINE_BYTES {
        return Ok(());
    }
    Err(Error::data(
        path,
        format!(
            "the line of row {row} would be {len} bytes long, more than the \
             {MAX_LINE_BYTES}-byte line limit of this tool's readers; write binary (.pbin) \
             instead"
        ),
    ))
}

/// Writes `raw` to `path` atomically in `format`; returns the bytes written.
/// Binary output keeps the features' layout and precision; LIBSVM output
/// is one-based.
pub fn write_raw<F: Real>(path: &Path, raw: &RawData<F>, format: OutputFormat) -> Result<u64> {
    write_raw_based(path, raw, format, IndexBase::One)
}

/// [`write_raw`], LIBSVM indices counted from `base`.
pub fn write_raw_based<F: Real>(
    path: &Path,
    raw: &RawData<F>,
    format: OutputFormat,
    base: IndexBase,
) -> Result<u64> {
    match format {
        OutputFormat::Binary => {
            let mut written = 0u64;
            crate::output::check_space(path, least_bytes(raw, format, 0))?;
            write_atomic_seekable(path, |w| {
                written = binary::write_raw(w, raw)?;
                Ok(())
            })?;
            Ok(written)
        }
        OutputFormat::Csv | OutputFormat::Libsvm => write_text(path, raw, format, base),
    }
}

/// [`write_raw_based`] for CSV and LIBSVM: the labels and every line
/// checked, and the space, before the file is written.
fn write_text<F: Real>(
    path: &Path,
    raw: &RawData<F>,
    format: OutputFormat,
    base: IndexBase,
) -> Result<u64> {
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
                csv::csv_label(&c.text)
            } else {
                libsvm::libsvm_label(&c.text)
            }
        })
        .collect::<std::result::Result<Vec<String>, String>>()
        .map_err(|m| Error::data(path, m))?;
    check_text_lines(path, raw, format, &labels)?;
    let shortest = labels.iter().map(String::len).min().unwrap_or(0);
    crate::output::check_space(path, least_bytes(raw, format, shortest))?;
    let (label_at, delimiter, header) = csv_layout(path, raw, csv, cols)?;
    let text = Text {
        path,
        raw,
        labels: &labels,
        csv,
        cols,
        label_at,
        delimiter,
        header: &header,
        base,
    };
    let mut failure = None;
    let mut written = 0u64;
    let result = write_atomic(path, |w| {
        written = text.write(w, &mut failure)?;
        Ok(())
    });
    if let Some(e) = failure {
        return Err(e);
    }
    result?;
    Ok(written)
}

/// Where CSV output puts the label, its delimiter, and its header line
/// (empty for none); for LIBSVM output, what [`Text`] ignores.
fn csv_layout<F: Real>(
    path: &Path,
    raw: &RawData<F>,
    csv: bool,
    cols: usize,
) -> Result<(usize, u8, Vec<u8>)> {
    // CSV keeps a CSV input's layout; the label goes first otherwise.
    // Ignored columns were not read: the layout of what was.
    let layout = raw.csv.as_ref().filter(|_| csv).map(|i| (i.kept(), i));
    let (label_at, delimiter) = match &layout {
        Some(((_, label), info)) => (label.map_or(0, |k| k - 1).min(cols), info.delimiter),
        None => (0, b','),
    };
    let mut header = Vec::new();
    if let Some(((names, _), _)) = &layout
        && !names.is_empty()
    {
        let len = csv::csv_header(&mut header, names, delimiter)
            .map_err(|m| Error::data(path, format!("the header's {m}")))?;
        check_line(path, 0, len)?;
    }
    Ok((label_at, delimiter, header))
}

/// A dataset being written as text, with what every line needs.
struct Text<'a, F> {
    path: &'a Path,
    raw: &'a RawData<F>,
    /// Per class, its label as the format writes it.
    labels: &'a [String],
    /// CSV, else LIBSVM.
    csv: bool,
    cols: usize,
    label_at: usize,
    delimiter: u8,
    header: &'a [u8],
    base: IndexBase,
}

impl<F: Real> Text<'_, F> {
    /// Writes the header and the rows to `w`; returns the bytes written.
    /// A line too long leaves its error in `failure`.
    fn write(&self, w: &mut dyn io::Write, failure: &mut Option<Error>) -> io::Result<u64> {
        let mut written = 0u64;
        w.write_all(self.header)?;
        written += self.header.len() as u64;
        let mut line = Vec::with_capacity(1 << 16);
        for (i, &c) in self.raw.class_ids.iter().enumerate() {
            let label = self.labels.get(c as usize).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "class id out of range")
            })?;
            let len = self.push_line(&mut line, i, label);
            if let Err(e) = check_line(self.path, i as u64 + 1, len) {
                *failure = Some(e);
                return Err(io::Error::other("a line is too long"));
            }
            if line.len() >= 1 << 16 {
                w.write_all(&line)?;
                written += line.len() as u64;
                line.clear();
            }
        }
        w.write_all(&line)?;
        written += line.len() as u64;
        Ok(written)
    }

    /// Appends row `i`, labeled `label`, to `line`; returns the row's line
    /// length.
    #[inline]
    fn push_line(&self, line: &mut Vec<u8>, i: usize, label: &str) -> usize {
        let (cols, label_at, delimiter) = (self.cols, self.label_at, self.delimiter);
        let row = self.raw.features.row(i);
        if self.csv && i == 0 && self.header.is_empty() {
            let len = csv::csv_line_in(line, label, row, cols, label_at, delimiter);
            let before = line.len();
            csv::first_line_as_data(line, 0, delimiter, label_at);
            len + (line.len() - before)
        } else if self.csv {
            csv::csv_line_in(line, label, row, cols, label_at, delimiter)
        } else {
            libsvm::libsvm_line_based(line, label, row, self.base)
        }
    }
}

/// The fewest bytes `raw` can take written in `format`, computed without
/// writing: every text line at its shortest (labels of `label_bytes` at
/// least), or the binary file's arrays. A lower bound, so that an output
/// the disk cannot hold is refused before the first byte.
pub fn least_bytes<F: Real>(raw: &RawData<F>, format: OutputFormat, label_bytes: usize) -> u64 {
    let rows = raw.features.rows() as u64;
    let line = |shortest: u64| shortest.saturating_add(1).saturating_mul(rows);
    match (format, &raw.features) {
        (OutputFormat::Csv, f) => line(csv::shortest_csv_line(label_bytes, f.cols())),
        // Every value that is not zero is written, as ` k:v` at least.
        (OutputFormat::Libsvm, f) => {
            line(label_bytes as u64).saturating_add((f.nonzeros() as u64).saturating_mul(4))
        }
        (OutputFormat::Binary, Features::Dense(m)) => crate::memory::bytes_of::<F>(m.values.len()),
        (OutputFormat::Binary, Features::Sparse(m)) => crate::memory::bytes_of::<F>(m.values.len())
            .saturating_add(crate::memory::bytes_of::<u32>(m.indices.len()))
            .saturating_add(crate::memory::bytes_of::<u64>(m.rows())),
    }
}

/// Refuses text output when the shortest line of some row would exceed the
/// line limit, before anything is built or written.
fn check_text_lines<F: Real>(
    path: &Path,
    raw: &RawData<F>,
    format: OutputFormat,
    labels: &[String],
) -> Result<()> {
    let label = labels.iter().map(String::len).min().unwrap_or(0);
    match (format, &raw.features) {
        (OutputFormat::Csv, f) => check_shortest_line(
            path,
            format,
            csv::shortest_csv_line(label, f.cols()),
            &format!("{} features, each written", f.cols()),
        ),
        (_, Features::Sparse(m)) => {
            let Some((row, nnz)) = (0..m.rows())
                .map(|i| (i, m.row_ptr[i + 1] - m.row_ptr[i]))
                .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))
            else {
                return Ok(());
            };
            check_shortest_line(
                path,
                format,
                libsvm::shortest_libsvm_line(label, nnz),
                &format!("row {} stores {nnz} values", row + 1),
            )
        }
        (_, Features::Dense(m)) => check_shortest_line(
            path,
            format,
            libsvm::shortest_libsvm_line(label, m.cols),
            &format!("{} features in a dense row", m.cols),
        ),
    }
}

/// The same data with the features in `layout` (dense to CSR drops exact
/// zeros; CSR to dense fills them in). The copy is refused, naming
/// `source`, when it would not fit in the memory available.
pub fn with_layout<F: Real>(
    raw: RawData<F>,
    layout: binary::Layout,
    source: &Path,
) -> Result<RawData<F>> {
    let features = match (layout, raw.features) {
        (binary::Layout::Dense, Features::Sparse(m)) => Features::Dense(to_dense(&m, source)?),
        (binary::Layout::Csr, Features::Dense(m)) => Features::Sparse(to_csr(&m, source)?),
        (_, f) => f,
    };
    Ok(RawData { features, ..raw })
}

fn to_dense<F: Real>(m: &CsrMatrix<F>, source: &Path) -> Result<DenseMatrix<F>> {
    let rows = m.rows();
    let what = format!(
        "a dense copy of {} x {} ({})",
        crate::text::count(rows, "row"),
        crate::text::count(m.cols, "feature"),
        F::PRECISION
    );
    let hint = "; keep the CSR layout (leave out --layout dense)";
    // Beyond usize, which only a 32-bit platform can reach.
    let cells = rows.saturating_mul(m.cols);
    let mut values =
        crate::memory::filled(cells, F::ZERO).map_err(|s| s.refusal(source, &what, hint))?;
    m.scatter_into(&mut values);
    Ok(DenseMatrix {
        rows,
        cols: m.cols,
        values: values.into(),
    })
}

fn to_csr<F: Real>(m: &DenseMatrix<F>, source: &Path) -> Result<CsrMatrix<F>> {
    let nnz = m.values.iter().filter(|&&v| v != F::ZERO).count();
    let what = format!("a CSR copy of {nnz} non-zero values");
    let oom = |s: crate::memory::Shortfall| s.refusal(source, &what, "; keep the dense layout");
    let needed = crate::memory::bytes_of::<F>(nnz)
        .saturating_add(crate::memory::bytes_of::<u32>(nnz))
        .saturating_add(crate::memory::bytes_of::<usize>(m.rows + 1));
    crate::memory::check(needed).map_err(oom)?;
    let mut row_ptr = Vec::new();
    let mut indices = Vec::new();
    let mut values = Vec::new();
    crate::memory::reserve(&mut row_ptr, m.rows + 1).map_err(oom)?;
    crate::memory::reserve(&mut indices, nnz).map_err(oom)?;
    crate::memory::reserve(&mut values, nnz).map_err(oom)?;
    m.push_csr(&mut row_ptr, &mut indices, &mut values);
    Ok(CsrMatrix {
        cols: m.cols,
        row_ptr: row_ptr.into(),
        indices: indices.into(),
        values: values.into(),
    })
}
