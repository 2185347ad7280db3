//! Datasets: loading CSV and LIBSVM files (optionally gzipped) into memory.
//!
//! Parsing streams through the file once; only the in-memory matrix (f32/f64
//! dense rows or CSR) and one small class id per row are kept.

pub mod bundled;
pub mod csv;
pub mod labels;
pub mod libsvm;
pub mod matrix;
pub mod source;
pub mod stats;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::float::Real;
pub use labels::{ClassLabel, LabelMap, LabelTable};
pub use matrix::{CsrMatrix, DenseMatrix, Features, Row};

/// The text formats the tool reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Delimited text, one row per line, the label in one column.
    Csv,
    /// LIBSVM/svmlight: `label index:value ...`, 1-based increasing indices.
    Libsvm,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "CSV",
            Format::Libsvm => "LIBSVM",
        }
    }
}

/// Which CSV column holds the label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LabelColumn {
    /// 1-based column number.
    Index(usize),
    /// Column name from the header line.
    Name(String),
}

impl std::str::FromStr for LabelColumn {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.parse::<usize>() {
            Ok(0) => Err("column numbers start at 1".into()),
            Ok(n) => Ok(LabelColumn::Index(n)),
            Err(_) if s.is_empty() => Err("empty column name".into()),
            Err(_) => Ok(LabelColumn::Name(s.to_owned())),
        }
    }
}

/// Whether a CSV file starts with a header line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HeaderMode {
    /// A header is present when a field of the first line other than the
    /// label is not a number.
    #[default]
    Auto,
    Present,
    Absent,
}

/// How to read a data file.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// `None` infers the format from the extension (`.csv`, `.tsv`, `.svm`,
    /// `.libsvm`, `.svmlight`, `.txt`; `.gz` stripped first) or the content.
    pub format: Option<Format>,
    /// CSV: the label column; `None` means the first.
    pub label_column: Option<LabelColumn>,
    pub header: HeaderMode,
    /// CSV: `b','`, `b';'` or `b'\t'`; `None` detects it from the first line.
    pub delimiter: Option<u8>,
    /// The label value to treat as +1 (one-vs-rest when more than two).
    pub positive: Option<String>,
}

/// The longest line accepted, so that a corrupt file without newlines cannot
/// exhaust memory. Generous: a dense row of 100k float features fits.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The largest accepted LIBSVM feature index (1-based): indices are stored as
/// u32 and the bias takes one more slot.
pub const MAX_FEATURE_INDEX: u64 = (1 << 31) - 1;

/// A parsed file before its labels are mapped to -1/+1.
#[derive(Clone, Debug)]
pub struct RawData<F> {
    pub features: Features<F>,
    /// Class id per row, indexing `table.classes()`.
    pub class_ids: Vec<u32>,
    pub table: LabelTable,
    pub format: Format,
}

/// A labelled dataset ready for training or evaluation.
#[derive(Clone, Debug)]
pub struct Dataset<F> {
    pub features: Features<F>,
    /// -1 or +1 per row.
    pub labels: Vec<i8>,
    pub label_map: LabelMap,
    /// The distinct label values with their row counts.
    pub classes: Vec<ClassLabel>,
    /// Where the data came from, for messages and reports.
    pub source: PathBuf,
    pub format: Format,
}

impl<F: Real> Dataset<F> {
    pub fn rows(&self) -> usize {
        self.features.rows()
    }

    pub fn cols(&self) -> usize {
        self.features.cols()
    }

    /// Maps raw labels with the rules of [`labels::decide`].
    pub fn from_raw(raw: RawData<F>, source: &Path, positive: Option<&str>) -> Result<Self> {
        let (label_map, signs) =
            labels::decide(&raw.table, positive).map_err(|e| Error::data(source, e.to_string()))?;
        let labels = raw.class_ids.iter().map(|&c| signs[c as usize]).collect();
        Ok(Dataset {
            features: raw.features,
            labels,
            label_map,
            classes: raw.table.classes().to_vec(),
            source: source.to_path_buf(),
            format: raw.format,
        })
    }

    /// The rows reordered so that new row `p` is old row `order[p]`.
    pub fn permuted(&self, order: &[usize]) -> Self {
        Dataset {
            features: self.features.permuted(order),
            labels: order.iter().map(|&i| self.labels[i]).collect(),
            label_map: self.label_map.clone(),
            classes: self.classes.clone(),
            source: self.source.clone(),
            format: self.format,
        }
    }
}

/// Reads a data file without mapping its labels.
pub fn load_raw<F: Real>(path: &Path, opts: &LoadOptions) -> Result<RawData<F>> {
    let input = source::open(path)?;
    let format = match opts.format {
        Some(f) => f,
        None => source::infer_format(path, &input.head)?,
    };
    match format {
        Format::Csv => csv::parse(input.reader, path, opts),
        Format::Libsvm => libsvm::parse(input.reader, path),
    }
}

/// Reads a data file and maps its labels to -1/+1.
pub fn load<F: Real>(path: &Path, opts: &LoadOptions) -> Result<Dataset<F>> {
    let raw = load_raw(path, opts)?;
    Dataset::from_raw(raw, path, opts.positive.as_deref())
}
