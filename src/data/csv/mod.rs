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
mod first_line;
mod layout;
mod read;
mod sniff;
mod write;

use std::io::BufRead;
use std::path::Path;

use crate::error::{Error, Result};
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

/// Refuses a CSV file whose first column is a pandas index: no name in the
/// header, and the row numbers 0, 1, 2, ... as values (what
/// `DataFrame.to_csv()` writes unless `index=False`). Read as it is, it is
/// a feature that counts the rows (or, in the default label column, a
/// label per row): a wrong model without a word.
pub(crate) fn refuse_pandas_index<F: Real>(raw: &RawData<F>, path: &Path) -> Result<()> {
    let Some(info) = &raw.csv else {
        return Ok(());
    };
    let rows = raw.features.rows();
    let unnamed = info.names.first().is_some_and(|n| n.trim().is_empty());
    if !unnamed || rows < 2 || info.columns < 2 || info.ignored.contains(&1) {
        return Ok(());
    }
    let what = "has no name in the header and holds the row numbers 0, 1, 2, ...: a pandas \
                index, which DataFrame.to_csv() writes unless given index=False";
    if info.label_column == Some(1) {
        let classes = raw.table.classes();
        let numbered = raw
            .class_ids
            .iter()
            .enumerate()
            .all(|(i, &c)| classes[c as usize].number == Some(i as f64));
        if numbered {
            return Err(Error::data(
                path,
                format!(
                    "column 1, the label column by default, {what}; name the label column \
                     with --label-column NAME and leave this one out with --ignore-columns 1 \
                     (or write the file with to_csv(index=False))"
                ),
            ));
        }
        return Ok(());
    }
    // The first column is the first feature: dense text rows.
    let crate::data::Features::Dense(m) = &raw.features else {
        return Ok(());
    };
    let numbered = m
        .values
        .chunks_exact(m.cols.max(1))
        .take(m.rows)
        .enumerate()
        .all(|(i, row)| row.first().is_some_and(|v| v.to_f64() == i as f64));
    if numbered {
        return Err(Error::data(
            path,
            format!(
                "column 1 {what}; it would be trained on as a feature: leave it out with \
                 --ignore-columns 1 (or write the file with to_csv(index=False))"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
