//! CSV parsing: one row per line, the label in one column, `,` `;` or tab.
//!
//! Fields are trimmed of surrounding spaces; a field may be double-quoted
//! (`"a,b"`, with `""` for a quote inside) but cannot span lines. Blank lines
//! and lines starting with `#` are skipped. The first other line is a header
//! when no field but the label is a number (see [`crate::data::HeaderMode::Auto`]).
//! Unlabeled data (`predict --unlabeled`) has no label column: every field
//! is a feature.

mod fast;
mod fields;
mod layout;
mod read;
mod sniff;
mod write;

use std::io::BufRead;
use std::path::Path;

use crate::error::Result;
use crate::float::Real;

use super::blocks::{Reading, Text};
use super::lines::LineReader;
use super::options::LoadOptions;
use super::raw::RawData;

pub use fields::WHITESPACE;
pub(crate) use layout::Layout;
pub(crate) use read::{parse_first_part, parse_part};
pub(crate) use sniff::{EXTENSIONS, is_skipped, looks_like_csv};
pub use write::{
    csv_header, csv_label, csv_line, csv_line_in, first_line_as_data, shortest_csv_line,
};

/// Parses CSV text into a dense matrix.
pub fn parse<F: Real, R: BufRead>(
    reader: R,
    path: &Path,
    opts: &LoadOptions,
) -> Result<RawData<F>> {
    parse_sized(reader, path, opts, None)
}

/// [`parse`], reserving memory once from `size_hint`, the content's length in
/// bytes when known.
pub fn parse_sized<F: Real, R: BufRead>(
    reader: R,
    path: &Path,
    opts: &LoadOptions,
    size_hint: Option<u64>,
) -> Result<RawData<F>> {
    parse_with(reader, path, opts, size_hint, Reading::default())
}

/// [`parse_sized`] with the given [`Reading`] (tests and fuzzing compare
/// the fast path with the line reader).
pub fn parse_with<F: Real, R: BufRead>(
    reader: R,
    path: &Path,
    opts: &LoadOptions,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<RawData<F>> {
    parse_text(Text::reader(reader), path, opts, size_hint, reading)
}

/// [`parse_with`] for text already in memory or mapped.
pub(crate) fn parse_text<F: Real>(
    text: Text<'_>,
    path: &Path,
    opts: &LoadOptions,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<RawData<F>> {
    read::parse_lines(LineReader::new(text, path), path, opts, size_hint, reading)
}

#[cfg(test)]
mod tests;
