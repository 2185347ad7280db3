//! Datasets: loading CSV and LIBSVM files (optionally gzipped) and the
//! binary `.pbin` format into memory, and writing them back.
//!
//! Parsing streams through the file once; only the in-memory matrix (f32/f64
//! dense rows or CSR) and one small class id per row are kept.
//! [`stream::RowStream`] reads the same text one example at a time instead,
//! for online learning, keeping nothing.

pub mod binary;
mod blocks;
pub mod bundled;
pub mod csv;
pub mod fingerprint;
pub mod labels;
pub mod libsvm;
pub mod matrix;
pub mod source;
pub mod stats;
pub mod storage;
pub mod stream;
pub mod write;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::float::Real;
pub use labels::{ClassLabel, LabelMap, LabelTable};
pub use matrix::{CsrMatrix, DenseMatrix, Features, Row};
pub use storage::Storage;

/// The formats the tool reads.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Delimited text, one row per line, the label in one column.
    Csv,
    /// LIBSVM/svmlight: `label index:value ...`, 1-based increasing indices.
    Libsvm,
    /// The tool's binary format (`.pbin`), written by `perceptron convert`.
    Binary,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "CSV",
            Format::Libsvm => "LIBSVM",
            Format::Binary => "binary",
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
    /// A header is present when no field of the first line other than the
    /// label is a number (and at least one such field is not empty): a
    /// single text field among numbers is a typo in a data row, not a header.
    #[default]
    Auto,
    Present,
    Absent,
}

/// How to read a data file.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// `None` infers the format from the extension (`.csv`, `.tsv`, `.svm`,
    /// `.libsvm`, `.svmlight`, `.pbin`; `.gz` stripped first) or else the
    /// content (`.txt` and other names); binary files are recognised by their
    /// magic bytes whatever their name.
    pub format: Option<Format>,
    /// CSV: the label column; `None` means the first.
    pub label_column: Option<LabelColumn>,
    pub header: HeaderMode,
    /// CSV: `b','`, `b';'` or `b'\t'`; `None` detects it from the first line.
    pub delimiter: Option<u8>,
    /// The label value to treat as +1 (one-vs-rest when more than two).
    pub positive: Option<String>,
    /// The rows have no label: every CSV column is a feature, and a LIBSVM
    /// line's first token is a feature when it holds `:` (else a label,
    /// ignored). Every row then gets the one class [`NO_LABEL`]. Wins over
    /// `label_column`.
    pub unlabeled: bool,
    /// The model file `label_column` was taken from, when it was not given
    /// by the user, so that a column the data lacks is explained.
    pub label_column_from: Option<PathBuf>,
}

/// The one class of every row read with [`LoadOptions::unlabeled`].
pub const NO_LABEL: &str = "(no label)";

/// What the CSV reader settled about a file's layout: for reports (the
/// header line skipped) and for the model file (the label column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvInfo {
    /// The 1-based line of the header, when one was detected or forced (it
    /// is skipped, not read as data).
    pub header_line: Option<u64>,
    /// The 1-based label column; `None` for unlabeled data.
    pub label_column: Option<usize>,
    /// The label column's name in the header, when there is a header.
    pub label_name: Option<String>,
    /// `b','`, `b';'` or `b'\t'`.
    pub delimiter: u8,
    /// Fields on every line, the label included.
    pub columns: usize,
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
    /// The layout of a CSV file; `None` for the other formats.
    pub csv: Option<CsvInfo>,
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
    /// Per row, its index in `classes` (for one-vs-rest multiclass
    /// training); empty for data built without class information.
    pub class_ids: Vec<u32>,
    /// Where the data came from, for messages and reports.
    pub source: PathBuf,
    pub format: Format,
    /// Per-row facts for engines, computed on first use (see [`Dataset::facts`]).
    pub facts: FactsCache,
}

/// [`crate::certify::RowFacts`] for the data with and without the bias,
/// each computed at most once.
#[derive(Clone, Debug, Default)]
pub struct FactsCache([std::sync::OnceLock<std::sync::Arc<crate::certify::RowFacts>>; 2]);

impl PartialEq for FactsCache {
    /// A cache never makes two datasets differ.
    fn eq(&self, _: &Self) -> bool {
        true
    }
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
            class_ids: raw.class_ids,
            source: source.to_path_buf(),
            format: raw.format,
            facts: FactsCache::default(),
        })
    }

    /// Row norms, the L1 maximum and the host-only rows (with the bias
    /// feature when `bias`), computed in one parallel pass on first use.
    pub fn facts(&self, bias: bool) -> std::sync::Arc<crate::certify::RowFacts> {
        self.facts.0[bias as usize]
            .get_or_init(|| {
                std::sync::Arc::new(crate::certify::RowFacts::compute(&self.features, bias))
            })
            .clone()
    }

    /// Head `head`'s label of row `row` when training `heads` perceptrons:
    /// the -1/+1 label with one head, +1 iff the class id is `head` otherwise.
    #[inline]
    pub fn label_for(&self, head: usize, heads: usize, row: usize) -> i8 {
        if heads == 1 {
            self.labels[row]
        } else if self.class_ids[row] as usize == head {
            1
        } else {
            -1
        }
    }

    /// Keeps every label value as its own class, for one-vs-rest training:
    /// `class_ids` indexes `classes` (in order of first appearance) and the
    /// -1/+1 `labels` stay empty.
    pub fn from_raw_classes(raw: RawData<F>, source: &Path) -> Result<Self> {
        let classes = raw.table.classes().to_vec();
        if classes.len() < 2 {
            return Err(Error::data(
                source,
                format!(
                    "one-vs-rest training needs at least two label values; found {}",
                    raw.table.describe()
                ),
            ));
        }
        Ok(Dataset {
            features: raw.features,
            labels: Vec::new(),
            label_map: LabelMap {
                positive: String::new(),
                negative: None,
            },
            classes,
            class_ids: raw.class_ids,
            source: source.to_path_buf(),
            format: raw.format,
            facts: FactsCache::default(),
        })
    }

    /// The rows reordered so that new row `p` is old row `order[p]`.
    pub fn permuted(&self, order: &[usize]) -> Self {
        Dataset {
            features: self.features.permuted(order),
            labels: if self.labels.is_empty() {
                Vec::new()
            } else {
                order.iter().map(|&i| self.labels[i]).collect()
            },
            label_map: self.label_map.clone(),
            classes: self.classes.clone(),
            class_ids: if self.class_ids.is_empty() {
                Vec::new()
            } else {
                order.iter().map(|&i| self.class_ids[i]).collect()
            },
            source: self.source.clone(),
            format: self.format,
            facts: FactsCache::default(),
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
        Format::Csv => csv::parse_sized(input.reader, path, opts, input.size_hint),
        Format::Libsvm => {
            libsvm::parse_options(input.reader, path, opts.unlabeled, input.size_hint)
        }
        Format::Binary if input.gzip => Err(Error::data(
            path,
            "gzip-compressed binary (.pbin) files are not supported; decompress it \
             first (for example with gunzip)",
        )),
        Format::Binary => {
            drop(input);
            binary::read(path)
        }
    }
}

/// Reads a data file and maps its labels to -1/+1.
pub fn load<F: Real>(path: &Path, opts: &LoadOptions) -> Result<Dataset<F>> {
    let raw = load_raw(path, opts)?;
    Dataset::from_raw(raw, path, opts.positive.as_deref())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn data_file(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data")
            .join(name)
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn bundled_gzip_copy_reads_like_the_plain_file() {
        let opts = LoadOptions::default();
        let plain = load_raw::<f64>(&data_file("iris_setosa.csv"), &opts).unwrap();
        let gz = load_raw::<f64>(&data_file("iris_setosa.csv.gz"), &opts).unwrap();
        assert_eq!(gz.features, plain.features);
        assert_eq!(gz.class_ids, plain.class_ids);
        assert_eq!(gz.table.classes(), plain.table.classes());
        assert_eq!(gz.format, Format::Csv);
        assert_eq!((gz.features.rows(), gz.features.cols()), (150, 4));
        let d = load::<f32>(&data_file("iris_setosa.csv.gz"), &opts).unwrap();
        assert_eq!(d.labels.iter().filter(|&&y| y > 0).count(), 50);
    }

    #[test]
    fn format_is_inferred_from_name_or_content() {
        let dir = tempfile::tempdir().unwrap();
        let svm_txt = dir.path().join("a.txt");
        std::fs::write(&svm_txt, "# c\n1 1:2\n-1 2:3\n").unwrap();
        let raw = load_raw::<f64>(&svm_txt, &LoadOptions::default()).unwrap();
        assert_eq!(
            (raw.format, raw.features.is_sparse()),
            (Format::Libsvm, true)
        );
        let csv_gz = dir.path().join("b.data.gz");
        std::fs::write(&csv_gz, gzip(b"1;2\n-1;3\n")).unwrap();
        let raw = load_raw::<f64>(&csv_gz, &LoadOptions::default()).unwrap();
        assert_eq!((raw.format, raw.features.cols()), (Format::Csv, 1));
        // An explicit format wins over the name.
        let forced = LoadOptions {
            format: Some(Format::Csv),
            ..Default::default()
        };
        let e = load_raw::<f64>(&data_file("heart_scale.svm"), &forced).unwrap_err();
        assert!(
            e.to_string()
                .contains("heart_scale.svm:1:1: no feature columns"),
            "{e}"
        );
        let heart = load_raw::<f64>(&data_file("heart_scale.svm"), &LoadOptions::default());
        assert_eq!(heart.unwrap().features.rows(), 270);
    }

    #[test]
    fn truncated_gzip_fails_while_parsing_not_silently() {
        let dir = tempfile::tempdir().unwrap();
        let csv: Vec<u8> = (0..20000)
            .flat_map(|i| format!("{},{}.25,{}\n", i % 2, i, i * 7).into_bytes())
            .collect();
        let svm: Vec<u8> = (0..20000)
            .flat_map(|i| format!("{} 1:{}.25 3:{}\n", i % 2, i, i * 7).into_bytes())
            .collect();
        for (name, text) in [("a.csv.gz", &csv), ("a.txt.gz", &csv), ("a.svm.gz", &svm)] {
            let gz = gzip(text);
            let path = dir.path().join(name);
            std::fs::write(&path, &gz[..gz.len() / 2]).unwrap();
            let e = load_raw::<f32>(&path, &LoadOptions::default()).unwrap_err();
            assert!(matches!(e, Error::Io { .. }), "{e:?}");
            let e = e.to_string();
            assert!(
                e.starts_with(&format!(
                    "{}: cannot read: the gzip data is truncated or corrupt",
                    path.display()
                )),
                "{e}"
            );
            // Where it stopped: after the last complete line, far into the file.
            let (_, line) = e.rsplit_once(", after line ").expect(&e);
            let line: u64 = line.parse().unwrap();
            assert!(line > 1000 && line < 20000, "{e}");
        }
    }

    #[test]
    fn missing_files_and_directories_fail_to_load() {
        let dir = tempfile::tempdir().unwrap();
        let e = load_raw::<f64>(dir.path(), &LoadOptions::default()).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("cannot open data file: it is a directory, not a file")
        );
        let missing = dir.path().join("missing.svm");
        let e = load::<f64>(&missing, &LoadOptions::default()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("{}: cannot open data file: ", missing.display()))
        );
    }
}
