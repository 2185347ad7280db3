//! One LIBSVM line: its label checked, its `index:value` features read.

use std::path::Path;

use crate::data::matrix::MAX_FEATURE_INDEX;
use crate::data::message::{column_at, quote};
use crate::data::number::parse_value;
use crate::error::{Error, Hint, Remedy, Result};
use crate::float::Real;

/// The whitespace-separated tokens of `text` with their byte offsets.
fn tokens(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let base = text.as_ptr() as usize;
    text.split_ascii_whitespace()
        .map(move |t| ((t.as_ptr() as usize).wrapping_sub(base), t))
}

/// The largest feature index a reader accepts, and what to add to the
/// message when an index exceeds it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexLimit<'a> {
    pub max: u64,
    /// Appended to "exceeds the limit of N" (empty for the format's own limit).
    pub why: &'a str,
}

/// The format's own limit, [`MAX_FEATURE_INDEX`].
pub(crate) const FORMAT_LIMIT: IndexLimit<'static> = IndexLimit {
    max: MAX_FEATURE_INDEX,
    why: "",
};

/// A data line whose label has been checked; its features are read by
/// [`Line::parse_features`]. Shared by the batch parser and the row stream
/// ([`super::stream`]), so both read a line the same way and say the same
/// thing about a bad one.
pub(crate) struct Line<'a> {
    path: &'a Path,
    no: u64,
    line: &'a str,
    /// The line without its comment.
    pub data: &'a str,
    /// The label as written; empty when an unlabeled line has none.
    pub label: &'a str,
    /// Byte offset of the label in the line.
    pub label_at: usize,
    /// Tokens of `data` before the first feature: 1, or 0 without a label.
    first_feature: usize,
}

impl<'a> Line<'a> {
    /// Splits line `no` of `path`: `None` when it is blank or only a comment,
    /// an error when its first token is not a numeric label. When
    /// `unlabeled`, a first token holding `:` is a feature instead.
    pub(crate) fn split(
        path: &'a Path,
        no: u64,
        line: &'a str,
        unlabeled: bool,
    ) -> Result<Option<Self>> {
        let data = line.split_once('#').map_or(line, |(d, _)| d);
        let Some((at, label)) = tokens(data).next() else {
            return Ok(None); // blank or comment-only
        };
        let mut this = Line {
            path,
            no,
            line,
            data,
            label,
            label_at: at,
            first_feature: 1,
        };
        if label.contains(':') {
            if unlabeled {
                this.label = "";
                this.first_feature = 0;
                return Ok(Some(this));
            }
            return Err(this.err(
                at,
                format!(
                    "expected a label before the features, found {}",
                    quote(label)
                ),
            ));
        }
        if let Some((problem, hint)) = label_problem(label) {
            return Err(this.err(at, problem).with_hint(hint));
        }
        Ok(Some(this))
    }

    /// An error at byte `byte` of the line.
    pub(crate) fn err(&self, byte: usize, msg: String) -> Error {
        Error::parse(self.path, self.no, Some(column_at(self.line, byte)), msg)
    }

    /// Appends the features to `indices` (0-based) and `values`, checking
    /// every token; returns the largest 1-based index (0 for none). On an
    /// error the vectors may hold part of the row.
    pub(crate) fn parse_features<F: Real>(
        &self,
        limit: IndexLimit<'_>,
        indices: &mut Vec<u32>,
        values: &mut Vec<F>,
    ) -> Result<u64> {
        let err = |byte: usize, msg: String| self.err(byte, msg);
        let mut prev: u64 = 0;
        for (at, tok) in tokens(self.data).skip(self.first_feature) {
            // A byte search: `:` is ASCII, and the tokens are short.
            let Some(colon) = tok.bytes().position(|b| b == b':') else {
                return Err(err(
                    at,
                    format!("expected index:value, found {}", quote(tok)),
                ));
            };
            let (name, value) = (&tok[..colon], &tok[colon + 1..]);
            // The first byte first: most names are digits, and comparing
            // strings calls memcmp.
            if name.as_bytes().first() == Some(&b'q') && name == "qid" {
                if value.parse::<i64>().is_err() {
                    return Err(err(
                        at + name.len() + 1,
                        format!(
                            "expected an integer query id in {}, found {}",
                            quote(tok),
                            quote(value)
                        ),
                    ));
                }
                continue;
            }
            if name.is_empty() {
                return Err(err(
                    at,
                    format!(
                        "expected index:value, found {} (the index is missing)",
                        quote(tok)
                    ),
                ));
            }
            if value.is_empty() {
                return Err(err(
                    at,
                    format!(
                        "expected index:value, found {} (the value is missing)",
                        quote(tok)
                    ),
                ));
            }
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err(
                    at,
                    format!(
                        "expected a feature index (a positive integer) in {}, found {}",
                        quote(tok),
                        quote(name)
                    ),
                ));
            }
            // All digits: only overflow can fail, and that is over the limit too.
            let index = name.parse::<u64>().unwrap_or(u64::MAX);
            if index == 0 {
                return Err(err(
                    at,
                    format!(
                        "feature index 0 in {}: feature indices start at 1",
                        quote(tok)
                    ),
                ));
            }
            let max = limit.max.min(MAX_FEATURE_INDEX);
            if index > max {
                let why = if max < limit.max { "" } else { limit.why };
                return Err(err(
                    at,
                    format!(
                        "feature index {name} in {} exceeds the limit of {max}{why}",
                        quote(tok)
                    ),
                ));
            }
            if index == prev {
                return Err(err(
                    at,
                    format!(
                        "duplicate feature index {index}: the previous feature also has index \
                         {prev}; indices must strictly increase"
                    ),
                ));
            }
            if index < prev {
                return Err(err(
                    at,
                    format!(
                        "feature index {index} follows index {prev}; indices must strictly \
                         increase"
                    ),
                ));
            }
            let v = parse_value::<F>(value, &format_args!("for feature {index}"))
                .map_err(|msg| err(at + name.len() + 1, msg))?;
            // The row's length is not known ahead, so each entry makes its
            // own room: a comparison, unless the vectors must grow.
            crate::memory::reserve(indices, 1)
                .and_then(|()| crate::memory::reserve(values, 1))
                .map_err(|s| s.data_error(self.path, "the feature values", self.no))?;
            // index <= MAX_FEATURE_INDEX < 2^31, so index - 1 fits in u32.
            indices.push(u32::try_from(index - 1).unwrap_or(u32::MAX));
            values.push(v);
            prev = index;
        }
        Ok(prev)
    }
}

/// What is wrong with a LIBSVM label, if anything: labels are finite
/// numbers. A comma or semicolon in it says the file is probably CSV.
pub(super) fn label_problem(label: &str) -> Option<(String, Option<Hint>)> {
    match label.parse::<f64>() {
        Ok(v) if v.is_finite() => None,
        Ok(_) => Some((
            format!(
                "expected a numeric label (a finite number), found {}",
                quote(label)
            ),
            None,
        )),
        Err(_) => Some((
            format!("expected a numeric label, found {}", quote(label)),
            label.contains([',', ';']).then(|| Hint {
                why: "is this a CSV file? ".to_owned(),
                remedy: Remedy::ReadAsCsv,
            }),
        )),
    }
}
