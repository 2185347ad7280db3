//! How to read a data file: its format, where the label is, whether there
//! is a header, and whether the rows are labelled at all.

use std::path::PathBuf;

/// The formats the tool reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Delimited text, one row per line, the label in one column.
    Csv,
    /// LIBSVM/svmlight: `label index:value ...`, 1-based increasing indices.
    Libsvm,
    /// The tool's binary format (`.pbin`), written by `perceptron convert`.
    Binary,
    /// NumPy's `.npy`: a 2-D float array (see [`crate::data::npy`]).
    Npy,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "CSV",
            Format::Libsvm => "LIBSVM",
            Format::Binary => "binary",
            Format::Npy => "NumPy",
        }
    }
}

/// Which CSV column holds the label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LabelColumn {
    /// 1-based column number.
    Index(usize),
    /// Column counted from the end: 1 is the last (`last`, `-1`), 2 the one
    /// before it (`-2`).
    FromEnd(usize),
    /// Column name from the header line.
    Name(String),
}

impl LabelColumn {
    /// The 0-based column among `n`, when there is such a column.
    pub fn position(&self, n: usize) -> Option<usize> {
        match *self {
            LabelColumn::Index(k) if (1..=n).contains(&k) => Some(k - 1),
            LabelColumn::FromEnd(k) if (1..=n).contains(&k) => Some(n - k),
            _ => None,
        }
    }
}

impl std::str::FromStr for LabelColumn {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s == "last" {
            return Ok(LabelColumn::FromEnd(1));
        }
        if let Some(back) = s.strip_prefix('-')
            && let Ok(k) = back.parse::<usize>()
        {
            return match k {
                0 => Err("column positions from the end start at -1 (the last)".into()),
                k => Ok(LabelColumn::FromEnd(k)),
            };
        }
        match s.parse::<usize>() {
            Ok(0) => Err("column numbers start at 1".into()),
            Ok(n) => Ok(LabelColumn::Index(n)),
            Err(_) if s.is_empty() => Err("empty column name".into()),
            Err(_) => Ok(LabelColumn::Name(s.to_owned())),
        }
    }
}

/// How a LIBSVM file counts its feature indices: from 1 (the LIBSVM
/// standard) or from 0 (scikit-learn's `dump_svmlight_file` writes this by
/// default). Either way the first feature is column 0 of the matrix, so the
/// base only says how a file names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexBase {
    /// Index 0 is the first feature.
    Zero,
    /// Index 1 is the first feature.
    One,
}

impl IndexBase {
    /// `zero-based` or `one-based`.
    pub fn words(self) -> &'static str {
        match self {
            IndexBase::Zero => "zero-based",
            IndexBase::One => "one-based",
        }
    }

    /// The index of the first feature.
    pub fn first(self) -> u64 {
        match self {
            IndexBase::Zero => 0,
            IndexBase::One => 1,
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
    /// `.npy` data: the labels, one per row, in this second `.npy` file
    /// (else in a column of the array).
    pub labels: Option<PathBuf>,
    /// LIBSVM: how feature indices count; `None` detects it as
    /// scikit-learn's `zero_based="auto"` does: a file (or a set of
    /// shards) with an index 0 is zero-based, else one-based. A stream,
    /// read one example at a time, cannot look ahead: it is then one-based,
    /// and an index 0 is refused.
    pub index_base: Option<IndexBase>,
    /// The model file `index_base` was taken from, when it was not given by
    /// the user, so that an index the base refuses is explained.
    pub index_base_from: Option<PathBuf>,
    /// CSV: columns that are not features (ids, timestamps), by header name
    /// or position (as [`LoadOptions::label_column`] names a column); their
    /// fields are skipped unread.
    pub ignore_columns: Vec<LabelColumn>,
    /// The model file `ignore_columns` was taken from, when they were not
    /// given by the user: a name the data lacks is then no error (the
    /// model's features are matched by name anyway).
    pub ignore_columns_from: Option<PathBuf>,
}

/// The one class of every row read with [`LoadOptions::unlabeled`].
pub const NO_LABEL: &str = "(no label)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_columns_count_from_either_end() {
        let parse = |s: &str| s.parse::<LabelColumn>();
        assert_eq!(parse("last"), Ok(LabelColumn::FromEnd(1)));
        assert_eq!(parse("-2"), Ok(LabelColumn::FromEnd(2)));
        assert_eq!(parse("3"), Ok(LabelColumn::Index(3)));
        assert_eq!(parse("y"), Ok(LabelColumn::Name("y".into())));
        assert!(parse("0").is_err() && parse("-0").is_err() && parse("").is_err());
        assert_eq!(LabelColumn::FromEnd(1).position(4), Some(3));
        assert_eq!(LabelColumn::FromEnd(4).position(4), Some(0));
        assert_eq!(LabelColumn::FromEnd(5).position(4), None);
        assert_eq!(LabelColumn::Index(4).position(4), Some(3));
        assert_eq!(LabelColumn::Name("y".into()).position(4), None);
    }
}
