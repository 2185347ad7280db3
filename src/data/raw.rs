//! A parsed file before its labels are mapped to -1/+1, and what the CSV
//! reader settled about the file's layout.

use super::labels::LabelTable;
use super::matrix::Features;
use std::path::PathBuf;

use super::options::{Format, IndexBase};

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
    /// The header's names of every column, the label's included, in file
    /// order; empty without a header.
    pub names: Vec<String>,
    /// The 1-based columns left out (`--ignore-columns`), in file order:
    /// neither label nor features.
    pub ignored: Vec<usize>,
}

impl CsvInfo {
    /// The header's names of the feature columns (every column but the
    /// label and the ignored ones), in file order; `None` without a header.
    pub fn feature_names(&self) -> Option<Vec<String>> {
        if self.names.is_empty() {
            return None;
        }
        let label = self.label_column.map(|k| k - 1);
        Some(
            self.names
                .iter()
                .enumerate()
                .filter(|(k, _)| Some(*k) != label && !self.ignored.contains(&(k + 1)))
                .map(|(_, n)| n.clone())
                .collect(),
        )
    }

    /// The ignored columns as reports name them: by header name, else by
    /// number (`column 1`).
    pub fn ignored_names(&self) -> Vec<String> {
        self.ignored
            .iter()
            .map(|&k| match self.names.get(k - 1) {
                Some(n) if !n.trim().is_empty() => crate::data::message::quote(n),
                _ => format!("column {k}"),
            })
            .collect()
    }

    /// The header's names of the columns read (the ignored ones left out),
    /// and the label's place among them: the layout of the data as read.
    pub fn kept(&self) -> (Vec<String>, Option<usize>) {
        let kept = |k: usize| !self.ignored.contains(&k);
        let names = (1..=self.names.len())
            .filter(|&k| kept(k))
            .map(|k| self.names[k - 1].clone())
            .collect();
        let label = self
            .label_column
            .map(|l| (1..=l).filter(|&k| kept(k)).count());
        (names, label)
    }
}

/// How the LIBSVM reader counted a file's feature indices, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibsvmInfo {
    pub base: IndexBase,
    pub why: BaseWhy,
}

/// Why a LIBSVM file was read with its [`IndexBase`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BaseWhy {
    /// The user asked for it.
    Asked,
    /// It is the base of the model's training data (this model file).
    Model(PathBuf),
    /// Detected: index 0 appears on this line of this file.
    ZeroAt { path: PathBuf, line: u64 },
    /// Detected: no index 0 anywhere, so the LIBSVM standard.
    NoZero,
    /// A stream, read one example at a time, is not searched ahead for an
    /// index 0: the LIBSVM standard unless asked.
    Stream,
}

impl LibsvmInfo {
    /// The base and why, for reports: `zero-based: index 0 appears on line
    /// 3 of a.svm`.
    pub fn describe(&self) -> String {
        let why = match &self.why {
            BaseWhy::Asked => "as asked".to_owned(),
            BaseWhy::Model(m) => format!("as the training data of {}", m.display()),
            BaseWhy::ZeroAt { path, line } => {
                format!("index 0 appears on line {line} of {}", path.display())
            }
            BaseWhy::NoZero => "no index 0 appears (the LIBSVM standard)".to_owned(),
            BaseWhy::Stream => {
                "the LIBSVM standard (a stream is not searched ahead for an index 0)".to_owned()
            }
        };
        format!("{}: {why}", self.base.words())
    }
}

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
    /// How a LIBSVM file's indices were counted; `None` for the other
    /// formats.
    pub libsvm: Option<LibsvmInfo>,
}

/// Everything a reading gives, for tests that compare two readings: the
/// values (their `Debug` tells every float apart, `-0` from `0`), the
/// classes with their counts and first lines, or the error's message.
#[cfg(test)]
pub(crate) fn summary<F: std::fmt::Debug>(r: &crate::error::Result<RawData<F>>) -> String {
    match r {
        Ok(raw) => format!(
            "{:?} {:?} {:?} {:?} {:?} {:?}",
            raw.features,
            raw.class_ids,
            raw.table.classes(),
            raw.format,
            raw.csv,
            raw.libsvm
        ),
        Err(e) => format!("error: {e}"),
    }
}
