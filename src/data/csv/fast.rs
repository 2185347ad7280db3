//! The fast path of the CSV reader: a block's lines read straight from the
//! bytes, for the common file of plain unquoted numbers.
//!
//! It takes a line only when it is sure to read it as [`super::Layout`]
//! does: ASCII fields, none quoted, as many as the layout expects, a
//! non-empty label and plain decimal numbers ([`parse_prefix`]) (ignored
//! fields are skipped, ASCII without quotes). Anything else
//! (a quote, a byte outside ASCII, a bad or missing field, a line too long)
//! gives the block up to the line reader, which reads the same values or
//! says what is wrong.

use crate::data::number::{integer_value, leading_digits, parse_prefix};
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
        match line_kind(line) {
            LineKind::Skipped => return Some(()),
            LineKind::Unsure => return None,
            LineKind::Data => {}
        }
        let delim = self.layout.delimiter();
        let expected = self.layout.expected();
        let label = self.layout.label;
        let tab_is_space = delim != b'\t';
        self.reserve_row()?;
        let start_len = self.values.len();
        let mut class = None;
        let mut pos = 0;
        let mut k = 0;
        let mut ended = false;
        loop {
            pos = skip_spaces(line, pos, tab_is_space);
            if line.get(pos) == Some(&b'"') || k >= expected {
                break;
            }
            if self.layout.skipped(k) {
                // Left out unread; only plain ASCII without quotes here,
                // where the line reader would read the field alike.
                let Some(end) = plain_field_end(line, pos, delim) else {
                    self.values.truncate(start_len);
                    return None;
                };
                pos = end;
            } else if Some(k) == label {
                let start = pos;
                let end;
                (end, pos) = label_field_end(line, pos, delim, tab_is_space);
                if end == start {
                    break;
                }
                class = Some(
                    self.table
                        .intern_recent(&line[start..end], no, &mut self.recent)?,
                );
            } else {
                // Up to seven digits and the delimiter (pixels, counts):
                // one load, and on to the next field.
                if let Some((n, w)) = line[pos..].first_chunk::<8>().and_then(leading_digits)
                    && line[pos + n] == delim
                {
                    self.values.push(integer_value::<F>(false, w));
                    pos += n + 1;
                    k += 1;
                    continue;
                }
                // The number is read where it starts; only spaces may
                // follow it before the delimiter.
                let Some((v, end)) = number_at::<F>(line, pos, delim) else {
                    break;
                };
                pos = skip_spaces(line, end, tab_is_space);
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
        self.finish_row(ended && k == expected, start_len, class, no)
    }

    /// Room for one more row, so that pushing its values cannot fail
    /// halfway; `None` (the line reader's turn) when memory is short.
    #[inline]
    fn reserve_row(&mut self) -> Option<()> {
        if crate::memory::reserve(&mut self.values, self.layout.cols()).is_err()
            || crate::memory::reserve(&mut self.class_ids, 1).is_err()
        {
            return None;
        }
        Some(())
    }

    /// Ends the row begun at `start_len` of the values: its class (the
    /// label `class`, or [`NO_LABEL`] for unlabeled data) is appended when
    /// the line was `whole` (every field read, up to the line's end);
    /// otherwise its values are taken back, for the line reader to say
    /// what is wrong.
    #[inline]
    fn finish_row(
        &mut self,
        whole: bool,
        start_len: usize,
        class: Option<u32>,
        no: u64,
    ) -> Option<()> {
        if !whole {
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

/// What the fast path makes of a line before its fields.
enum LineKind {
    /// Blank, or a comment: read, and no row.
    Skipped,
    /// Left to the line reader.
    Unsure,
    /// A row to read.
    Data,
}

/// Whether `line` is blank, a comment or a row, by its first byte that is
/// not a space.
#[inline]
fn line_kind(line: &[u8]) -> LineKind {
    match line.iter().position(|&b| !is_space(b)) {
        None => LineKind::Skipped,
        Some(k) if line[k] == b'#' => {
            // A comment is skipped, but must be text like any line.
            if line.is_ascii() || std::str::from_utf8(line).is_ok() {
                LineKind::Skipped
            } else {
                LineKind::Unsure
            }
        }
        // Unicode spaces are trimmed too: the line reader decides.
        Some(k) if !line[k].is_ascii() => LineKind::Unsure,
        Some(_) => LineKind::Data,
    }
}

/// Whether `b` is a space around a field: a tab is one unless it is the
/// delimiter.
#[inline]
fn is_field_space(b: u8, tab_is_space: bool) -> bool {
    b == b' ' || (b == b'\t' && tab_is_space)
}

/// The first byte from `pos` that is not a space around a field.
#[inline]
fn skip_spaces(line: &[u8], mut pos: usize, tab_is_space: bool) -> usize {
    while pos < line.len() && is_field_space(line[pos], tab_is_space) {
        pos += 1;
    }
    pos
}

/// The end of the ignored field at `pos` (its delimiter or the line's
/// end); `None` for a quote or a byte outside ASCII, which the line reader
/// must see.
fn plain_field_end(line: &[u8], mut pos: usize, delim: u8) -> Option<usize> {
    while pos < line.len() && line[pos] != delim {
        if line[pos] == b'"' || !line[pos].is_ascii() {
            return None;
        }
        pos += 1;
    }
    Some(pos)
}

/// The label field at `pos`: the end of its text without trailing spaces,
/// and the field's end (its delimiter or the line's end).
#[inline]
fn label_field_end(line: &[u8], start: usize, delim: u8, tab_is_space: bool) -> (usize, usize) {
    let mut pos = start;
    while pos < line.len() && line[pos] != delim {
        pos += 1;
    }
    let mut end = pos;
    while end > start && is_field_space(line[end - 1], tab_is_space) {
        end -= 1;
    }
    (end, pos)
}

/// The number that starts at `pos`, and where it ends; `None` when none
/// does. Small unsigned integers that end the field are read first,
/// directly.
#[inline]
fn number_at<F: Real>(line: &[u8], pos: usize, delim: u8) -> Option<(F, usize)> {
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
    if end > pos && (end == line.len() || line[end] == delim) {
        Some((integer_value::<F>(false, w), end))
    } else {
        parse_prefix::<F>(&line[pos..]).map(|(v, n)| (v, pos + n))
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, Read};
    use std::path::Path;

    use crate::data::blocks::{Reading, Text};
    use crate::data::csv::{parse_text, parse_with};
    use crate::data::options::{HeaderMode, LabelColumn, LoadOptions};

    fn opts() -> LoadOptions {
        LoadOptions::default()
    }

    /// Lines of CSV-like text: mostly good rows of numbers (so that the fast
    /// path reads whole blocks), with every kind of trouble mixed in rarely, to
    /// check the fast path against the line reader.
    fn csv_text() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let good = proptest::sample::select(vec![
            "0",
            "1",
            "-1",
            "255",
            "2.5",
            "-0",
            "-0.0",
            "1e3",
            ".5",
            "1.",
            "+7",
            "0.008900964",
            "16777217",
            "1e-50",
            "123456789012345678901",
            " 3 ",
            "3.4028235e38",
            "4.9e-324",
        ]);
        let bad = proptest::sample::select(vec![
            "1e39", "nan", "inf", "", "\t4", "\"q\"", "\"a,b\"", "abc", "é", "#x", "1,5", "\u{a0}",
            "\x0b1", "1;2",
        ]);
        let field = prop_oneof![20 => good, 1 => bad];
        let line = (2usize..5, 0usize..40).prop_flat_map(move |(n, ragged)| {
            let n = if ragged == 0 { n + 1 } else { n };
            (
                proptest::collection::vec(field.clone(), n),
                prop_oneof![
                    20 => Just("\n"),
                    1 => Just("\r\n"),
                    1 => Just("\n\n"),
                    1 => Just("\n# c\n"),
                    1 => Just("\n \n"),
                    1 => Just("\n#é\n"),
                ],
            )
        });
        (
            2usize..5,
            proptest::collection::vec(line, 1..40),
            proptest::sample::select(vec![",", ";", "\t", ", "]),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(cols, lines, delim, bom, last_newline)| {
                let mut text = String::new();
                if bom {
                    text.push('\u{feff}');
                }
                for (mut fields, end) in lines {
                    // Most lines have the same number of fields.
                    if fields.len() != cols + 1 {
                        fields.resize(cols, "1");
                    }
                    text.push_str(&fields.join(delim));
                    text.push_str(end);
                }
                if !last_newline {
                    text.pop();
                }
                text.into_bytes()
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]
        /// The fast path, in blocks of any size, from a reader or from memory,
        /// reads what the line reader reads, or fails with its message.
        #[test]
        fn the_fast_path_reads_as_the_line_reader(
            bytes in csv_text(),
            block in 1usize..80,
            header in 0..3u8,
            label in 0..4usize,
        ) {
            use crate::data::raw::summary;
            let opts = LoadOptions {
                header: [HeaderMode::Auto, HeaderMode::Present, HeaderMode::Absent][header as usize],
                label_column: match label {
                    0 => None,
                    1 => Some(LabelColumn::Index(2)),
                    _ => None,
                },
                unlabeled: label == 3,
                ..opts()
            };
            let path = Path::new("t.csv");
            let slow = summary(&parse_with::<f32, _>(&bytes[..], path, &opts, None, Reading::line_by_line()));
            let fast = summary(&parse_with::<f32, _>(&bytes[..], path, &opts, None, Reading::default()));
            proptest::prop_assert_eq!(&fast, &slow);
            let tiny = Reading { fast: true, block_bytes: block };
            let fast = summary(&parse_with::<f32, _>(&bytes[..], path, &opts, None, tiny));
            proptest::prop_assert_eq!(&fast, &slow);
            let fast = summary(&parse_text::<f32>(Text::bytes(&bytes), path, &opts, None, tiny));
            proptest::prop_assert_eq!(&fast, &slow);
            let slow = summary(&parse_with::<f64, _>(&bytes[..], path, &opts, None, Reading::line_by_line()));
            let fast = summary(&parse_text::<f64>(Text::bytes(&bytes), path, &opts, None, tiny));
            proptest::prop_assert_eq!(&fast, &slow);
        }
    }

    /// Bytes, then an error, as a damaged `.gz` gives them.
    struct Failing(&'static [u8]);

    impl Read for Failing {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::other("disk on fire"));
            }
            let n = out.len().min(self.0.len()).min(3);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// A read error comes after the whole lines before it were merged (a
    /// bad line among them wins), naming the last whole line, whatever the
    /// blocks.
    #[test]
    fn read_errors_follow_the_whole_lines_before_them() {
        let path = Path::new("t.csv");
        for block_bytes in [1, 2, 5, 64, 1 << 20] {
            for fast in [true, false] {
                let reading = Reading { fast, block_bytes };
                let read = |text: &'static [u8]| {
                    let reader = io::BufReader::with_capacity(4, Failing(text));
                    parse_with::<f64, _>(reader, path, &LoadOptions::default(), None, reading)
                        .unwrap_err()
                        .to_string()
                };
                assert_eq!(
                    read(b"1,2\n3,4\n5,6\n7,"),
                    "t.csv: cannot read: disk on fire, after line 3",
                    "{reading:?}"
                );
                assert_eq!(
                    read(b"1,2\n3,x\n5,6\n7,"),
                    "t.csv:2:3: expected a number in column 2, found \"x\" (the label is read from column 1 by default; if column 2 holds the labels, take the last column as the label)",
                    "{reading:?}"
                );
            }
        }
    }
}
