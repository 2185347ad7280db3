//! The shape of a CSV file, fixed by its first data line, and the reading
//! of one line under it.

use std::fmt;
use std::path::Path;

use crate::data::message::{column_at, quote};
use crate::data::number::parse_value;
use crate::data::options::{HeaderMode, LoadOptions};
use crate::data::raw::CsvInfo;
use crate::error::{Error, Hint, Remedy, Result};
use crate::float::Real;

use super::fields::{Fields, delimiter_name};
use super::first_line::FirstLine;
use super::sniff::detect_delimiter;

/// The shape of a CSV file, fixed by its first line that is not blank or a
/// comment: the delimiter, the number of fields, the label column and the
/// header names. Shared by the batch parser and the row stream
/// ([`super::stream`]), so both read a line the same way and say the same
/// thing about a bad one.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    delim: u8,
    /// Fields every line must have.
    expected: usize,
    /// 0-based label field; `None` for unlabeled data.
    pub(crate) label: Option<usize>,
    /// Per field, whether it is left out (`--ignore-columns`): skipped
    /// unread, neither label nor feature.
    pub(crate) skip: Vec<bool>,
    /// The line that fixed `expected`, for messages.
    shape_line: u64,
    /// Header names, empty without a header.
    names: Vec<String>,
    /// Line `shape_line` was judged data by its content (not by
    /// `--no-header`): a text field there may be a header name that looks
    /// like a number elsewhere, which the message for it says.
    guessed_data: bool,
    /// The delimiter was detected, not given: a field holding another
    /// delimiter may mean the detection was wrong, which the message says.
    detected_delim: bool,
    /// The label column is the first by default, not given: a feature
    /// column holding text may be the label, which the message says.
    default_label: bool,
}

impl Layout {
    /// Reads the layout from `first`, line `first_no`, the first line that is
    /// not blank or a comment; also says whether that line is a header
    /// (otherwise it is the first data row).
    pub(crate) fn detect(
        first: &str,
        first_no: u64,
        path: &Path,
        opts: &LoadOptions,
    ) -> Result<(Layout, bool)> {
        let delim = match opts.delimiter {
            Some(d) if !d.is_ascii() || matches!(d, b'"' | b'\n' | b'\r' | b'#') => {
                return Err(Error::Usage(format!(
                    "cannot use {:?} as the CSV delimiter; use `,`, `;` or tab",
                    char::from(d)
                )));
            }
            Some(d) => d,
            None => detect_delimiter(first),
        };
        let first = FirstLine::split(first, first_no, delim, path, opts)?;
        first.check_has_features()?;
        let (label, mut has_header) = first.label()?;
        let skip = first.skipped(label, &mut has_header)?;
        first.check_kept(label, &skip)?;

        let layout = Layout {
            delim,
            expected: first.fields.len(),
            label,
            skip,
            shape_line: first_no,
            names: if has_header {
                first
                    .fields
                    .iter()
                    .map(|f| f.text.clone().into_owned())
                    .collect()
            } else {
                Vec::new()
            },
            guessed_data: !has_header && opts.header == HeaderMode::Auto,
            detected_delim: opts.delimiter.is_none(),
            default_label: opts.label_column.is_none() && !opts.unlabeled,
        };
        Ok((layout, has_header))
    }

    /// The delimiter.
    pub(crate) fn delimiter(&self) -> u8 {
        self.delim
    }

    /// Fields on every line, the label included.
    pub(crate) fn expected(&self) -> usize {
        self.expected
    }

    /// Feature columns per row (every field but the label and the ignored
    /// ones).
    pub(crate) fn cols(&self) -> usize {
        self.expected - usize::from(self.label.is_some()) - self.skip.iter().filter(|&&s| s).count()
    }

    /// Whether field `k` (0-based) is left out.
    #[inline]
    pub(crate) fn skipped(&self, k: usize) -> bool {
        self.skip.get(k).copied().unwrap_or(false)
    }

    /// What reports and the model file say about this layout.
    pub(crate) fn info(&self) -> CsvInfo {
        CsvInfo {
            header_line: (!self.names.is_empty()).then_some(self.shape_line),
            label_column: self.label.map(|k| k + 1),
            label_name: self.label.and_then(|k| self.names.get(k).cloned()),
            delimiter: self.delim,
            columns: self.expected,
            names: self.names.clone(),
            ignored: (0..self.expected)
                .filter(|&k| self.skipped(k))
                .map(|k| k + 1)
                .collect(),
        }
    }

    /// Parses data line `no` of `path`: appends its feature values to
    /// `values`, in column order, and calls `on_label(text, byte offset)`
    /// with its label when the label field is reached (so an error there is
    /// reported before errors in later fields; never for unlabeled data).
    /// On an error `values` may hold part of the row.
    pub(crate) fn parse_row<F: Real>(
        &self,
        path: &Path,
        line: &str,
        no: u64,
        values: &mut Vec<F>,
        mut on_label: impl FnMut(&str, usize) -> Result<()>,
    ) -> Result<()> {
        let err =
            |byte: usize, msg: String| Error::parse(path, no, Some(column_at(line, byte)), msg);
        let mut fields = Fields::new(line, self.delim);
        let mut count = 0usize;
        for field in fields.by_ref() {
            let field = field.map_err(|(b, m)| err(b, m))?;
            let k = count;
            count += 1;
            if k >= self.expected {
                // Count the rest, then say how many there were.
                let extra = fields.by_ref().take_while(|f| f.is_ok()).count();
                return Err(err(
                    field.start,
                    format!(
                        "expected {} {}, found {} (the first extra field is {})",
                        crate::text::count(self.expected, "field"),
                        self.shape_hint(),
                        count + extra,
                        quote(&field.text)
                    ),
                ));
            }
            let name = ColumnName(k, self.names.get(k).map(String::as_str));
            if self.skipped(k) {
                // Not a feature: whatever it holds (ids, dates) is not read.
            } else if Some(k) == self.label {
                if field.text.is_empty() {
                    return Err(err(field.start, format!("empty label {name}")));
                }
                on_label(&field.text, field.start)?;
            } else {
                let v = parse_value::<F>(&field.text, &name).map_err(|m| {
                    match self.hint(&field.text, no, k) {
                        Some((why, Some(remedy))) => {
                            err(field.start, m).with_hint(Some(Hint { why, remedy }))
                        }
                        Some((why, None)) => err(field.start, format!("{m} ({why})")),
                        None => err(field.start, m),
                    }
                })?;
                values.push(v);
            }
        }
        if count < self.expected {
            return Err(err(
                line.len(),
                format!(
                    "expected {} {}, found {}",
                    crate::text::count(self.expected, "field"),
                    self.shape_hint(),
                    count
                ),
            ));
        }
        Ok(())
    }

    /// Why a field of line `no` that is not a number may be so, and the
    /// option that would fix it: another delimiter inside it (the detection
    /// took the wrong one), a decimal comma (no option), or a header read
    /// as data.
    fn hint(&self, text: &str, no: u64, k: usize) -> Option<(String, Option<Remedy>)> {
        let other = [b';', b'\t', b',']
            .into_iter()
            .find(|&d| d != self.delim && text.as_bytes().contains(&d));
        if self.detected_delim
            && let Some(d) = other
            && !(d == b',' && decimal_comma(text))
        {
            return Some((
                format!(
                    "the delimiter was detected as {} from line {}; if fields are separated by \
                     {}, ",
                    delimiter_name(self.delim),
                    self.shape_line,
                    delimiter_name(d)
                ),
                Some(Remedy::Delimiter(d)),
            ));
        }
        if decimal_comma(text) {
            return Some((
                format!(
                    "a decimal comma: numbers are read with a decimal point, as in \"{}\"",
                    text.replacen(',', ".", 1)
                ),
                None,
            ));
        }
        let text_like = !text.is_empty() && text.parse::<f64>().is_err();
        if no == self.shape_line && self.guessed_data && text_like {
            return Some((
                format!(
                    "line {no} was read as data because other fields on it are numbers; if it is \
                     a header, "
                ),
                Some(Remedy::Header),
            ));
        }
        // A word where a feature is expected, with the label in the default
        // first column: most often the labels are in this other column. (A
        // mistyped number such as `18x` is no label.)
        let word = text
            .chars()
            .all(|c| c.is_alphabetic() || matches!(c, '_' | '-' | ' ' | '.'))
            && text.chars().any(char::is_alphabetic);
        (self.default_label && text_like && word).then(|| {
            let name = self.names.get(k).filter(|n| !n.trim().is_empty());
            let column = match name {
                Some(n) => n.clone(),
                None if k + 1 == self.expected => "last".to_owned(),
                None => (k + 1).to_string(),
            };
            (
                format!(
                    "the label is read from column 1 by default; if column {} holds the \
                     labels, ",
                    k + 1
                ),
                Some(Remedy::LabelColumn(column)),
            )
        })
    }

    fn shape_hint(&self) -> String {
        if self.names.is_empty() {
            format!(
                "separated by {} (as on line {})",
                delimiter_name(self.delim),
                self.shape_line
            )
        } else {
            format!(
                "separated by {} (as in the header on line {})",
                delimiter_name(self.delim),
                self.shape_line
            )
        }
    }
}

/// Whether `text` is a number written with a decimal comma (`0,5`, `-1,25`).
fn decimal_comma(text: &str) -> bool {
    text.matches(',').count() == 1 && text.replacen(',', ".", 1).parse::<f64>().is_ok()
}

/// "column 3" or `column 3 ("petal length")`, for messages.
struct ColumnName<'a>(usize, Option<&'a str>);

impl fmt::Display for ColumnName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "in column {}", self.0 + 1)?;
        if let Some(name) = self.1 {
            write!(f, " ({})", quote(name))?;
        }
        Ok(())
    }
}
