//! Splitting a CSV line into fields: trimmed, optionally double-quoted
//! (`""` for a quote inside), never spanning lines.
//!
//! The delimiter [`WHITESPACE`] (numpy.savetxt's default) stands for runs
//! of spaces and tabs: one or more separate two fields, and whitespace at
//! the start and end of a line is ignored, so no field is empty.

use std::borrow::Cow;

use crate::data::message::quote;

/// The delimiter byte that means "one or more spaces or tabs".
pub const WHITESPACE: u8 = b' ';

/// A delimiter for messages.
pub(crate) fn delimiter_name(d: u8) -> String {
    match d {
        b'\t' => "tab".to_owned(),
        WHITESPACE => "whitespace".to_owned(),
        b => format!("`{}`", char::from(b)),
    }
}

/// One field of a line.
pub(crate) struct Field<'a> {
    /// Byte offset in the line of its first character (the opening quote of a
    /// quoted field).
    pub(crate) start: usize,
    /// The text, trimmed and unquoted.
    pub(crate) text: Cow<'a, str>,
}

/// The fields of a line; an error is a byte offset and a message, and ends
/// the iteration.
pub(crate) struct Fields<'a> {
    line: &'a str,
    pos: usize,
    delim: u8,
    done: bool,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(line: &'a str, delim: u8) -> Self {
        Fields {
            line,
            pos: 0,
            delim,
            done: false,
        }
    }

    fn is_space(&self, b: u8) -> bool {
        (b == b' ' || b == b'\t') && (b != self.delim || self.delim == WHITESPACE)
    }

    /// Moves past spaces from `i`.
    fn skip_spaces(&self, mut i: usize) -> usize {
        let bytes = self.line.as_bytes();
        while bytes.get(i).is_some_and(|&b| self.is_space(b)) {
            i += 1;
        }
        i
    }

    fn quoted(&mut self, open: usize) -> std::result::Result<Field<'a>, (usize, String)> {
        let line = self.line;
        let bytes = line.as_bytes();
        let mut text = String::new();
        let mut seg = open + 1;
        loop {
            let Some(q) = bytes
                .get(seg..)
                .and_then(|rest| rest.iter().position(|&b| b == b'"'))
                .map(|k| seg + k)
            else {
                return Err((
                    open,
                    "unterminated quoted field: the closing `\"` is missing (quoted fields \
                     cannot span lines)"
                        .to_owned(),
                ));
            };
            text.push_str(line.get(seg..q).unwrap_or(""));
            if bytes.get(q + 1) == Some(&b'"') {
                text.push('"');
                seg = q + 2;
            } else {
                seg = q + 1;
                break;
            }
        }
        let after = self.skip_spaces(seg);
        match bytes.get(after) {
            None => self.done = true,
            // Whitespace-separated: the spaces after the quote were the
            // delimiter.
            Some(_) if self.delim == WHITESPACE && after > seg => self.pos = after,
            Some(&b) if b == self.delim => self.pos = after + 1,
            Some(_) => {
                let rest = line.get(after..).unwrap_or("");
                let c: String = rest.chars().take(1).collect();
                return Err((
                    after,
                    format!(
                        "expected {} or the end of the line after a closing quote, found {}",
                        delimiter_name(self.delim),
                        quote(&c)
                    ),
                ));
            }
        }
        Ok(Field {
            start: open,
            text: Cow::Owned(text),
        })
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = std::result::Result<Field<'a>, (usize, String)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let bytes = self.line.as_bytes();
        let start = self.skip_spaces(self.pos);
        if self.delim == WHITESPACE {
            if start >= bytes.len() {
                // Trailing whitespace ends the line without another field.
                self.done = true;
                return None;
            }
            if bytes[start] != b'"' {
                let len = bytes[start..]
                    .iter()
                    .position(|&b| b == b' ' || b == b'\t')
                    .unwrap_or(bytes.len() - start);
                self.pos = start + len;
                return Some(Ok(Field {
                    start,
                    text: Cow::Borrowed(self.line.get(start..start + len).unwrap_or("")),
                }));
            }
        }
        if bytes.get(start) == Some(&b'"') {
            let field = self.quoted(start);
            if field.is_err() {
                self.done = true;
            }
            return Some(field);
        }
        let end = match bytes
            .get(start..)
            .and_then(|r| r.iter().position(|&b| b == self.delim))
        {
            Some(k) => {
                self.pos = start + k + 1;
                start + k
            }
            None => {
                self.done = true;
                bytes.len()
            }
        };
        let raw = self.line.get(start..end).unwrap_or("");
        let tab_is_space = self.delim != b'\t';
        let text = raw.trim_end_matches(|c: char| c == ' ' || (c == '\t' && tab_is_space));
        Some(Ok(Field {
            start,
            text: Cow::Borrowed(text),
        }))
    }
}
