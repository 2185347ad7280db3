//! One LIBSVM line: its label checked, its `index:value` features read.

use std::path::Path;

use crate::data::matrix::MAX_FEATURE_INDEX;
use crate::data::message::{column_at, quote};
use crate::data::number::parse_value;
use crate::data::options::{IndexBase, LoadOptions};
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

/// How a reader counts feature indices (see [`IndexBase`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Indexing<'a> {
    /// `None` detects the base: an index 0 is read (and reported, see
    /// [`Line::parse_features`]) and stored as `u32::MAX`, which the caller
    /// turns into 0 when it settles that the file is zero-based.
    pub base: Option<IndexBase>,
    /// The model file the base was taken from, to explain a refusal.
    pub from: Option<&'a Path>,
}

impl<'a> Indexing<'a> {
    /// The indexing `opts` ask for.
    pub(crate) fn of(opts: &'a LoadOptions) -> Self {
        Indexing {
            base: opts.index_base,
            from: opts.index_base_from.as_deref(),
        }
    }

    /// What is subtracted from an index as written to give its column: 1
    /// unless the base is zero.
    pub(crate) fn offset(self) -> u64 {
        match self.base {
            Some(IndexBase::Zero) => 0,
            _ => 1,
        }
    }
}

/// What [`Line::parse_features`] read besides the values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Read {
    /// Features the row needs: its largest column + 1 (0 for none). A row
    /// holding only index 0 when the base is detected counts 0; the caller
    /// adds one to the file's count once the file is known zero-based.
    pub count: u64,
    /// The 1-based column of an index 0, when the base is being detected.
    pub zero_at: Option<u64>,
}

/// One feature token of a line, split at its colon.
struct Token<'t> {
    /// Byte offset of the token in the line.
    at: usize,
    /// The whole token, for messages.
    text: &'t str,
    /// The index as written.
    name: &'t str,
    /// The value as written.
    value: &'t str,
}

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

    /// Appends the features to `indices` (their columns, see [`Indexing`])
    /// and `values`, checking every token. On an error the vectors may hold
    /// part of the row.
    pub(crate) fn parse_features<F: Real>(
        &self,
        limit: IndexLimit<'_>,
        indexing: Indexing<'_>,
        indices: &mut Vec<u32>,
        values: &mut Vec<F>,
    ) -> Result<Read> {
        let offset = indexing.offset();
        let mut prev: Option<u64> = None;
        let mut zero_at = None;
        for (at, tok) in tokens(self.data).skip(self.first_feature) {
            let Some(tok) = self.split_token(at, tok)? else {
                continue;
            };
            // All digits: only overflow can fail, and that is over the limit too.
            let index = tok.name.parse::<u64>().unwrap_or(u64::MAX);
            if index == 0 {
                match indexing.base {
                    Some(IndexBase::Zero) => {}
                    None => zero_at = Some(column_at(self.line, at)),
                    Some(IndexBase::One) => return Err(self.zero_refused(at, tok.text, indexing)),
                }
            }
            self.check_limit(&tok, index, limit, offset)?;
            if let Some(prev) = prev {
                self.check_order(at, index, prev)?;
            }
            let v = parse_value::<F>(tok.value, &format_args!("for feature {index}"))
                .map_err(|msg| self.err(at + tok.name.len() + 1, msg))?;
            // The row's length is not known ahead, so each entry makes its
            // own room: a comparison, unless the vectors must grow.
            crate::memory::reserve(indices, 1)
                .and_then(|()| crate::memory::reserve(values, 1))
                .map_err(|s| s.data_error(self.path, "the feature values", self.no))?;
            // index - offset < MAX_FEATURE_INDEX < 2^31 fits in u32; index 0
            // while detecting wraps to u32::MAX (see [`Indexing`]).
            indices.push((index as u32).wrapping_sub(offset as u32));
            values.push(v);
            prev = Some(index);
        }
        Ok(Read {
            count: prev.map_or(0, |p| p + 1 - offset),
            zero_at,
        })
    }

    /// Splits the feature token `tok`, at byte `at`, into its index and
    /// value, checking that both are there and the index is digits; `None`
    /// for a `qid:N` token, checked and ignored.
    #[inline]
    fn split_token<'t>(&self, at: usize, tok: &'t str) -> Result<Option<Token<'t>>> {
        let err = |byte: usize, msg: String| self.err(byte, msg);
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
            return Ok(None);
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
                    "expected a feature index (a non-negative integer) in {}, found {}",
                    quote(tok),
                    quote(name)
                ),
            ));
        }
        Ok(Some(Token {
            at,
            text: tok,
            name,
            value,
        }))
    }

    /// An error for a feature index over `limit` (and the format's own),
    /// `offset` being what is subtracted from an index for its column.
    #[inline]
    fn check_limit(
        &self,
        tok: &Token<'_>,
        index: u64,
        limit: IndexLimit<'_>,
        offset: u64,
    ) -> Result<()> {
        // The limit is on features: zero-based, the largest index is
        // one less.
        let cap = limit.max.min(MAX_FEATURE_INDEX);
        let max = cap + offset - 1;
        if index > max {
            let why = if cap < limit.max { "" } else { limit.why };
            let zero = if offset == 0 {
                " (indices counted from 0)"
            } else {
                ""
            };
            return Err(self.err(
                tok.at,
                format!(
                    "feature index {} in {} exceeds the limit of {max}{zero}{why}",
                    tok.name,
                    quote(tok.text)
                ),
            ));
        }
        Ok(())
    }

    /// An error for the feature index `index`, at byte `at`, unless it is
    /// larger than `prev`, the one before it on the line.
    #[inline]
    fn check_order(&self, at: usize, index: u64, prev: u64) -> Result<()> {
        if index == prev {
            return Err(self.err(
                at,
                format!(
                    "duplicate feature index {index}: the previous feature also has \
                     index {prev}; indices must strictly increase"
                ),
            ));
        }
        if index < prev {
            return Err(self.err(
                at,
                format!(
                    "feature index {index} follows index {prev}; indices must \
                     strictly increase"
                ),
            ));
        }
        Ok(())
    }

    /// The error for index 0 where indices are one-based.
    fn zero_refused(&self, at: usize, tok: &str, indexing: Indexing<'_>) -> Error {
        let whose = match indexing.from {
            Some(model) => format!(
                "the model {} was trained on one-based LIBSVM data, so indices are read \
                 from 1",
                model.display()
            ),
            None => "indices are read one-based, from 1 (the LIBSVM standard)".to_owned(),
        };
        self.err(at, format!("feature index 0 in {}: {whose}", quote(tok)))
            .with_hint(Some(Hint {
                why: "if this file counts features from 0, as scikit-learn's \
                      dump_svmlight_file writes by default, "
                    .to_owned(),
                remedy: Remedy::ZeroBased,
            }))
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
