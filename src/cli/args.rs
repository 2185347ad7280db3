//! Command-line options shared by several commands.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::data::{Format, HeaderMode, LabelColumn, LoadOptions};
use crate::float::Precision;

/// How to read a data file.
#[derive(Args, Clone, Debug, Default)]
pub struct DataArgs {
    /// File format; inferred from the extension (.csv .tsv .svm .libsvm
    /// .svmlight, with or without .gz) or else from the content.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// CSV: the label column, as a 1-based number or a header name.
    #[arg(long, value_name = "N|NAME")]
    pub label_column: Option<LabelColumn>,

    /// CSV: the first line is a header (default: detected).
    #[arg(long, conflicts_with = "no_header")]
    pub header: bool,

    /// CSV: the first line is data, not a header.
    #[arg(long)]
    pub no_header: bool,

    /// CSV: field delimiter, `,` `;` or `tab` (default: detected).
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter)]
    pub delimiter: Option<u8>,
}

fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s {
        "," | "comma" => Ok(b','),
        ";" | "semicolon" => Ok(b';'),
        "\t" | "tab" | "\\t" => Ok(b'\t'),
        other => Err(format!(
            "unsupported delimiter `{other}` (use `,`, `;` or `tab`)"
        )),
    }
}

impl DataArgs {
    pub fn load_options(&self, positive: Option<String>) -> LoadOptions {
        LoadOptions {
            format: self.format,
            label_column: self.label_column.clone(),
            header: if self.header {
                HeaderMode::Present
            } else if self.no_header {
                HeaderMode::Absent
            } else {
                HeaderMode::Auto
            },
            delimiter: self.delimiter,
            positive,
        }
    }
}

/// Which engine computes margins.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The textbook sequential loop: every margin by the reference dot.
    Reference,
    /// Certified margins on all CPU cores (exact, faster).
    Cpu,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrecisionArg {
    F32,
    F64,
}

impl From<PrecisionArg> for Precision {
    fn from(p: PrecisionArg) -> Self {
        match p {
            PrecisionArg::F32 => Precision::F32,
            PrecisionArg::F64 => Precision::F64,
        }
    }
}

/// Shows a path the way the user typed it.
pub fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// The default model path.
pub fn default_model_path() -> PathBuf {
    PathBuf::from("model.json")
}
