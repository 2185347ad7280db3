//! The fast path of the LIBSVM reader: a block's lines read straight from
//! the bytes.
//!
//! It takes a line only when it is sure to read it as [`super::Line`] does:
//! a numeric label, `index:value` tokens with increasing indices within the
//! format's limit (index 0 only where the base allows it) and plain decimal values ([`parse_prefix`]), `qid:N` tokens,
//! a comment after `#`. Anything else (a byte outside ASCII before the
//! comment, a bad token, a line too long) gives the block up to the line
//! reader, which reads the same values or says what is wrong.

use crate::data::matrix::MAX_FEATURE_INDEX;
use crate::data::number::{leading_digits, parse_prefix};
use crate::data::options::{IndexBase, NO_LABEL};
use crate::float::Real;

use super::line::label_problem;
use super::read::CsrRows;

/// The separators of `str::split_ascii_whitespace`.
#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0c | b'\r')
}

/// Where a token that starts at `pos` ends: at a space, a `#` or the end.
#[inline]
fn token_end(line: &[u8], mut pos: usize) -> usize {
    while pos < line.len() && !is_space(line[pos]) && line[pos] != b'#' {
        pos += 1;
    }
    pos
}

/// The end of the `qid:N` token at `pos`, checked and ignored; `None`
/// when it is no such token.
#[inline]
fn qid_end(line: &[u8], pos: usize) -> Option<usize> {
    let end = token_end(line, pos);
    let ok = line[pos..end]
        .strip_prefix(b"qid:")
        .and_then(|v| std::str::from_utf8(v).ok())
        .is_some_and(|v| v.parse::<i64>().is_ok());
    ok.then_some(end)
}

/// The index whose digits start at `pos`, and where they end (at `pos`
/// for none).
#[inline]
fn index_at(line: &[u8], mut pos: usize) -> (u64, usize) {
    let digits = pos;
    // Indices of up to seven digits and their colon in one load.
    if let Some((n, v)) = line[pos..].first_chunk::<8>().and_then(leading_digits) {
        return (v, pos + n);
    }
    let mut index: u64 = 0;
    while pos < line.len() && line[pos].is_ascii_digit() && pos - digits < 11 {
        index = index * 10 + u64::from(line[pos] - b'0');
        pos += 1;
    }
    (index, pos)
}

/// A comment (from `#` on) is skipped, but must be text like any line.
fn comment_ok(comment: &[u8]) -> bool {
    comment.is_ascii() || std::str::from_utf8(comment).is_ok()
}

impl<F: Real> CsrRows<'_, F> {
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
        let mut pos = 0;
        while pos < line.len() && is_space(line[pos]) {
            pos += 1;
        }
        if pos == line.len() || line[pos] == b'#' {
            return comment_ok(&line[pos..]).then_some(());
        }
        let label;
        (label, pos) = self.label_token(line, pos)?;
        let class = self.intern_label(label, no)?;
        let offset = self.indexing.offset();
        // The smallest index the next token may have.
        let mut next: u64 = 0;
        let entries = self.indices.len();
        loop {
            while pos < line.len() && is_space(line[pos]) {
                pos += 1;
            }
            if pos == line.len() {
                break;
            }
            if line[pos] == b'#' {
                comment_ok(&line[pos..]).then_some(())?;
                break;
            }
            if line[pos] == b'q' {
                pos = qid_end(line, pos)?;
                continue;
            }
            let digits = pos;
            let index;
            (index, pos) = index_at(line, pos);
            if pos == digits || line.get(pos) != Some(&b':') {
                return None;
            }
            pos += 1;
            let (value, n) = parse_prefix::<F>(&line[pos..])?;
            pos += n;
            if pos < line.len() && !is_space(line[pos]) && line[pos] != b'#' {
                return None;
            }
            // Zero-based, the largest index is one less (the limit is on
            // features).
            if index > MAX_FEATURE_INDEX + offset - 1 || index < next {
                return None;
            }
            if index == 0 {
                self.note_index_zero(no, digits)?;
            }
            self.push_entry(index, offset, value)?;
            next = index + 1;
        }
        self.finish_row(entries, next, offset, class)
    }

    /// The label of a line from its first token, at `pos`, and where the
    /// features start; [`NO_LABEL`] for unlabeled data. `None` (the line
    /// reader's turn) for a line without a label where one is needed, or
    /// a bad label on an unlabeled line.
    #[inline]
    fn label_token<'l>(&self, line: &'l [u8], pos: usize) -> Option<(&'l [u8], usize)> {
        let end = token_end(line, pos);
        let first = &line[pos..end];
        if memchr::memchr(b':', first).is_some() {
            // A feature first: only unlabeled lines may leave the label out.
            if !self.unlabeled {
                return None;
            }
            Some((NO_LABEL.as_bytes(), pos))
        } else if self.unlabeled {
            // Checked like any label, then ignored.
            label_problem(std::str::from_utf8(first).ok()?)
                .is_none()
                .then_some(())?;
            Some((NO_LABEL.as_bytes(), end))
        } else {
            Some((first, end))
        }
    }

    /// Index 0 on line `no`, its digits at byte `digits`: kept while the
    /// base is detected, `None` where the base refuses it.
    #[cold]
    fn note_index_zero(&mut self, no: u64, digits: usize) -> Option<()> {
        match self.indexing.base {
            Some(IndexBase::Zero) => {}
            // Detecting: only the first is kept (the line is ASCII
            // up to here, so the byte is the column).
            None if self.zero_at.is_none() => self.zero_at = Some((no, digits as u64 + 1)),
            None => {}
            // Refused: the line reader says why.
            Some(IndexBase::One) => return None,
        }
        Some(())
    }

    /// Appends the entry `index:value` of the row being read.
    #[inline]
    fn push_entry(&mut self, index: u64, offset: u64, value: F) -> Option<()> {
        if crate::memory::reserve(&mut self.indices, 1).is_err()
            || crate::memory::reserve(&mut self.values, 1).is_err()
        {
            return None;
        }
        // index - offset < MAX_FEATURE_INDEX < 2^31 fits in u32; index 0
        // while detecting wraps to u32::MAX (see `Indexing`).
        self.indices
            .push((index as u32).wrapping_sub(offset as u32));
        self.values.push(value);
        Some(())
    }

    /// Ends the row whose entries began at `entries`: the largest index
    /// grows to its last (`next` is one past it), and the row's end and
    /// its class are appended.
    #[inline]
    fn finish_row(&mut self, entries: usize, next: u64, offset: u64, class: u32) -> Option<()> {
        if self.row_ptr.try_reserve(1).is_err() || self.class_ids.try_reserve(1).is_err() {
            return None;
        }
        if self.indices.len() > entries {
            self.max_index = self.max_index.max(next - offset);
        }
        self.row_ptr.push(self.indices.len());
        self.class_ids.push(class);
        Some(())
    }

    /// The class of a label (checked to be a finite number the first time
    /// it is seen), through the recent labels.
    #[inline]
    fn intern_label(&mut self, label: &[u8], no: u64) -> Option<u32> {
        if !self.recent.contains(label) && label != NO_LABEL.as_bytes() {
            let text = std::str::from_utf8(label).ok()?;
            if label_problem(text).is_some() {
                return None;
            }
        }
        self.table.intern_recent(label, no, &mut self.recent)
    }
}
