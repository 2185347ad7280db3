//! LIBSVM/svmlight parsing into CSR.
//!
//! A line is `label index:value index:value ... [# comment]`, tokens separated
//! by spaces or tabs, indices strictly increasing and counted from 1 (the
//! LIBSVM standard) or from 0 (scikit-learn's default; see
//! [`crate::data::IndexBase`]: detected unless asked). The label is a
//! number (`+1`, `-1`, `0`, `2.5`, ...), kept as written. `qid:N` tokens are
//! checked and ignored. Blank and comment-only lines are skipped. Values of
//! exactly zero are kept as given. Unlabeled data (`predict --unlabeled`) may
//! leave the label out: a first token holding `:` is then a feature.

mod fast;
mod line;
mod read;
mod sniff;
mod write;

use std::io::BufRead;
use std::path::Path;

use crate::error::Result;
use crate::float::Real;

use super::blocks::{Reading, Text};
use super::lines::LineReader;
use super::raw::RawData;

pub(crate) use line::{IndexLimit, Indexing, Line};
pub(crate) use sniff::{EXTENSIONS, looks_like_libsvm};
pub use write::{libsvm_label, libsvm_line, libsvm_line_based, shortest_libsvm_line};

/// Parses LIBSVM text into a CSR matrix.
pub fn parse<F: Real, R: BufRead>(reader: R, path: &Path) -> Result<RawData<F>> {
    parse_sized(reader, path, None)
}

/// [`parse`], reserving memory once from `size_hint`, the content's length in
/// bytes when known.
pub fn parse_sized<F: Real, R: BufRead>(
    reader: R,
    path: &Path,
    size_hint: Option<u64>,
) -> Result<RawData<F>> {
    parse_with(reader, path, false, size_hint, Reading::default())
}

/// [`parse_sized`], for unlabeled data when `unlabeled` (see
/// [`crate::data::LoadOptions::unlabeled`]).
pub fn parse_options<F: Real, R: BufRead>(
    reader: R,
    path: &Path,
    unlabeled: bool,
    size_hint: Option<u64>,
) -> Result<RawData<F>> {
    parse_with(reader, path, unlabeled, size_hint, Reading::default())
}

/// [`parse_options`] with the given [`Reading`] (tests and fuzzing compare
/// the fast path with the line reader).
pub fn parse_with<F: Real, R: BufRead>(
    reader: R,
    path: &Path,
    unlabeled: bool,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<RawData<F>> {
    parse_text(
        Text::reader(reader),
        path,
        unlabeled,
        Indexing::default(),
        size_hint,
        reading,
    )
}

/// [`parse_with`] for text already in memory or mapped, its indices
/// counted as `indexing` says.
pub(crate) fn parse_text<F: Real>(
    text: Text<'_>,
    path: &Path,
    unlabeled: bool,
    indexing: Indexing<'_>,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<RawData<F>> {
    read::parse_lines(
        LineReader::new(text, path),
        path,
        unlabeled,
        indexing,
        size_hint,
        reading,
    )
}

/// A part of a file (see [`crate::data::block`]), its lines numbered by
/// `lines`: no rows is not an error, and the feature count is the part's
/// largest index.
pub(crate) fn parse_part<F: Real>(
    lines: LineReader<'_, Text<'_>>,
    path: &Path,
    unlabeled: bool,
    indexing: Indexing<'_>,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<RawData<F>> {
    read::parse_part_lines(lines, path, unlabeled, indexing, size_hint, reading)
}

#[cfg(test)]
mod tests;
