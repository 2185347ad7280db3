//! The line reader both text parsers use: lines of bounded length, line
//! endings and a byte-order mark stripped, UTF-8 checked, and every read
//! error an error (never a silent end of file).

use std::io::{BufRead, ErrorKind};
use std::path::Path;

use crate::error::{Error, Result};

use super::message::{after_lines, count_chars};

/// The longest line accepted, so that a corrupt file without newlines cannot
/// exhaust memory. Generous: a dense row of 100k float features fits.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Reads lines of at most a fixed number of bytes, so that a corrupt file
/// without newlines cannot exhaust memory. Strips `\n`, a `\r` before it,
/// and a UTF-8 byte-order mark at the start of the file; read errors (a
/// corrupt `.gz`, say) are errors, never a silent end of file.
pub(crate) struct LineReader<'p, R> {
    reader: R,
    path: &'p Path,
    buf: Vec<u8>,
    line: u64,
    max_bytes: usize,
    /// The line whose byte-order mark is stripped (0: none).
    bom_line: u64,
}

impl<'p, R: BufRead> LineReader<'p, R> {
    pub fn new(reader: R, path: &'p Path) -> Self {
        Self::with_limit(reader, path, MAX_LINE_BYTES)
    }

    /// A reader that refuses lines longer than `max_bytes` (tests use small limits).
    pub fn with_limit(reader: R, path: &'p Path, max_bytes: usize) -> Self {
        LineReader {
            reader,
            path,
            buf: Vec::new(),
            line: 0,
            max_bytes,
            bom_line: 1,
        }
    }

    /// A reader of text that starts after line `before` of its file (a part
    /// of the file read on its own): lines are numbered from `before + 1`,
    /// and only a file's first line has a byte-order mark.
    pub fn after_line(reader: R, path: &'p Path, before: u64) -> Self {
        Self::resume(reader, path, before, MAX_LINE_BYTES, before == 0)
    }

    /// A reader of lines that follow `lines_before` lines already read;
    /// `at_start`: these are the first bytes of the file, whose first line
    /// may start with a byte-order mark.
    pub fn resume(
        reader: R,
        path: &'p Path,
        lines_before: u64,
        max_bytes: usize,
        at_start: bool,
    ) -> Self {
        LineReader {
            reader,
            path,
            buf: Vec::new(),
            line: lines_before,
            max_bytes,
            bom_line: if at_start { lines_before + 1 } else { 0 },
        }
    }

    /// The lines read so far (the number of the last one).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The file's name, for messages.
    pub fn path(&self) -> &'p Path {
        self.path
    }

    /// The longest line accepted, in bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The reader, positioned after the last line read.
    pub fn into_reader(self) -> R {
        self.reader
    }

    /// The next line without its line ending, with its 1-based number;
    /// `None` at the end of the input.
    pub fn next_line(&mut self) -> Result<Option<(u64, &str)>> {
        self.buf.clear();
        let mut any = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Error::io(
                        self.path,
                        "cannot read",
                        after_lines(e, self.line),
                    ));
                }
            };
            if available.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let (take, found) = match memchr::memchr(b'\n', available) {
                Some(i) => (i, true),
                None => (available.len(), false),
            };
            if self.buf.len().saturating_add(take) > self.max_bytes {
                let line = self.line.saturating_add(1);
                let room = self.max_bytes - self.buf.len();
                self.buf.extend_from_slice(&available[..room]);
                // Column of the first character past the limit.
                let column = count_chars(&self.buf).saturating_add(1);
                return Err(Error::parse(
                    self.path,
                    line,
                    Some(column),
                    format!(
                        "line is longer than the limit of {} bytes; is this a text data file?",
                        self.max_bytes
                    ),
                ));
            }
            self.buf.extend_from_slice(&available[..take]);
            self.reader.consume(if found { take + 1 } else { take });
            if found {
                break;
            }
        }
        self.line = self.line.saturating_add(1);
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        let mut bytes = &self.buf[..];
        if self.line == self.bom_line {
            bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        }
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Some((self.line, s))),
            Err(e) => {
                let good = e.valid_up_to();
                let bad_len = e.error_len().unwrap_or(bytes.len() - good);
                let bad: Vec<String> = bytes[good..good + bad_len]
                    .iter()
                    .map(|b| format!("0x{b:02x}"))
                    .collect();
                Err(Error::parse(
                    self.path,
                    self.line,
                    Some(count_chars(&bytes[..good]).saturating_add(1)),
                    format!(
                        "invalid UTF-8 (byte {}); data files must be UTF-8 text",
                        bad.join(" ")
                    ),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, BufReader, Read};

    use super::*;
    /// All lines of `text` read under a limit, or the error message.
    fn lines_of(bytes: &[u8], limit: usize) -> std::result::Result<Vec<(u64, String)>, String> {
        let path = Path::new("t.txt");
        let mut r = LineReader::with_limit(bytes, path, limit);
        let mut out = Vec::new();
        loop {
            match r.next_line() {
                Ok(Some((n, l))) => out.push((n, l.to_owned())),
                Ok(None) => return Ok(out),
                Err(e) => return Err(e.to_string()),
            }
        }
    }
    #[test]
    fn lines_strip_crlf_bom_and_keep_numbers() {
        let got = lines_of(b"\xef\xbb\xbfa,b\r\n\r\nc\n\nd", 100).unwrap();
        let want: Vec<(u64, String)> = vec![
            (1, "a,b".into()),
            (2, "".into()),
            (3, "c".into()),
            (4, "".into()),
            (5, "d".into()),
        ];
        assert_eq!(got, want);
        assert_eq!(lines_of(b"", 100).unwrap(), vec![]);
        assert_eq!(lines_of(b"\n", 100).unwrap(), vec![(1, String::new())]);
    }

    #[test]
    fn lines_over_the_limit_are_refused() {
        // Exactly the limit is fine, one byte more is not.
        assert_eq!(
            lines_of(b"12345678\n", 8).unwrap(),
            vec![(1, "12345678".to_owned())]
        );
        let e = lines_of(b"ok\n123456789\n", 8).unwrap_err();
        assert_eq!(
            e,
            "t.txt:2:9: line is longer than the limit of 8 bytes; is this a text data file?"
        );
        // Also across buffer refills, without a newline at all.
        let reader = std::io::BufReader::with_capacity(3, &b"\xc3\xa9\xc3\xa9abcdefgh"[..]);
        let mut r = LineReader::with_limit(reader, Path::new("t.txt"), 8);
        let e = r.next_line().err().unwrap().to_string();
        assert_eq!(
            e,
            "t.txt:1:7: line is longer than the limit of 8 bytes; is this a text data file?"
        );
    }

    #[test]
    fn invalid_utf8_names_line_column_and_byte() {
        let e = lines_of(b"1,2\n1,\xc3\xa9,\xff,3\n", 100).unwrap_err();
        assert_eq!(
            e,
            "t.txt:2:5: invalid UTF-8 (byte 0xff); data files must be UTF-8 text"
        );
        let e = lines_of(b"1,\xe2\x82", 100).unwrap_err();
        assert_eq!(
            e,
            "t.txt:1:3: invalid UTF-8 (byte 0xe2 0x82); data files must be UTF-8 text"
        );
    }

    #[test]
    fn read_errors_are_errors_not_end_of_file() {
        struct Failing(usize);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("disk on fire"));
                }
                self.0 -= 1;
                buf[0] = b'1';
                Ok(1)
            }
        }
        let mut r = LineReader::new(BufReader::new(Failing(3)), Path::new("t.csv"));
        let e = r.next_line().err().unwrap();
        assert!(matches!(e, Error::Io { .. }));
        assert_eq!(e.to_string(), "t.csv: cannot read: disk on fire");
    }
}
