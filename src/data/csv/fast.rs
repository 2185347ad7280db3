//! The fast path of the CSV reader: a block's lines read straight from the
//! bytes, for the common file of plain unquoted numbers.
//!
//! It takes a line only when it is sure to read it as [`super::Layout`]
//! does: ASCII fields, none quoted, as many as the layout expects, a
//! non-empty label and plain decimal numbers ([`parse_prefix`]). Anything else
//! (a quote, a byte outside ASCII, a bad or missing field, a line too long)
//! gives the block up to the line reader, which reads the same values or
//! says what is wrong.

use crate::data::number::{integer_value, parse_prefix};
use crate::data::options::NO_LABEL;
use crate::float::Real;

use super::read::Rows;

/// Blank lines and comments: the whole line trimmed as [`str::trim`] trims
/// ASCII text.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

impl<F: Real> Rows<'_, F> {
    /// Parses the lines of `block` (see [`crate::data::blocks::TextRows::push_block`]).
    pub(super) fn push_fast(
        &mut self,
        block: &[u8],
        at_start: bool,
        max_line: usize,
    ) -> Option<u64> {
        if at_start && block.starts_with(b"\xef\xbb\xbf") {
            return None;
        }
        let mut lines = 0u64;
        let mut rest = block;
        while !rest.is_empty() {
            let (line, next) = match memchr::memchr(b'\n', rest) {
                Some(k) => (&rest[..k], &rest[k + 1..]),
                None => (rest, &rest[rest.len()..]),
            };
            rest = next;
            lines += 1;
            if line.len() > max_line {
                return None;
            }
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            self.push_fast_line(line, lines)?;
        }
        Some(lines)
    }

    /// One line, number `no` of the block: `Some` when it was read (a row
    /// appended, or nothing for a blank line or a comment).
    fn push_fast_line(&mut self, line: &[u8], no: u64) -> Option<()> {
        let first = line.iter().position(|&b| !is_space(b));
        match first {
            None => return Some(()),
            Some(k) if line[k] == b'#' => {
                // A comment is skipped, but must be text like any line.
                return (line.is_ascii() || std::str::from_utf8(line).is_ok()).then_some(());
            }
            // Unicode spaces are trimmed too: the line reader decides.
            Some(k) if !line[k].is_ascii() => return None,
            Some(_) => {}
        }
        let delim = self.layout.delimiter();
        let expected = self.layout.expected();
        let label = self.layout.label;
        let tab_is_space = delim != b'\t';
        let space = |b: u8| b == b' ' || (b == b'\t' && tab_is_space);
        if self.values.try_reserve(self.layout.cols()).is_err()
            || self.class_ids.try_reserve(1).is_err()
        {
            return None;
        }
        let start_len = self.values.len();
        let mut class = None;
        let mut pos = 0;
        let mut k = 0;
        let mut ended = false;
        loop {
            while pos < line.len() && space(line[pos]) {
                pos += 1;
            }
            if line.get(pos) == Some(&b'"') || k >= expected {
                break;
            }
            if Some(k) == label {
                let start = pos;
                while pos < line.len() && line[pos] != delim {
                    pos += 1;
                }
                let mut end = pos;
                while end > start && space(line[end - 1]) {
                    end -= 1;
                }
                if end == start {
                    break;
                }
                class = Some(
                    self.table
                        .intern_recent(&line[start..end], no, &mut self.recent)?,
                );
            } else {
                // The number is read where it starts; only spaces may
                // follow it before the delimiter. Small unsigned integers
                // (pixels, counts) first, directly.
                let mut end = pos;
                let mut w: u64 = 0;
                while end < line.len() && end - pos < 19 {
                    let d = line[end].wrapping_sub(b'0');
                    if d >= 10 {
                        break;
                    }
                    w = w * 10 + u64::from(d);
                    end += 1;
                }
                let v = if end > pos && (end == line.len() || line[end] == delim) {
                    pos = end;
                    integer_value::<F>(false, w)
                } else {
                    let Some((v, n)) = parse_prefix::<F>(&line[pos..]) else {
                        break;
                    };
                    pos += n;
                    v
                };
                while pos < line.len() && space(line[pos]) {
                    pos += 1;
                }
                if pos < line.len() && line[pos] != delim {
                    break;
                }
                self.values.push(v);
            }
            k += 1;
            if pos == line.len() {
                ended = true;
                break;
            }
            pos += 1;
        }
        if !(ended && k == expected) {
            self.values.truncate(start_len);
            return None;
        }
        let class = match class {
            Some(c) => c,
            None => self
                .table
                .intern_recent(NO_LABEL.as_bytes(), no, &mut self.recent)?,
        };
        self.class_ids.push(class);
        Some(())
    }
}
