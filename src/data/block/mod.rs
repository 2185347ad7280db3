//! One contiguous block of a text file's rows, read without the others:
//! one process of a distributed run parses only its own part of the file.
//!
//! - Plain CSV or LIBSVM text is cut at line boundaries
//!   ([`line_start_at_or_after`]): a part is the lines that start in a range
//!   of bytes. It is parsed alone ([`read_text`]), its lines numbered as in
//!   the whole file (the caller adds up the newlines of the parts before),
//!   so a bad line gives the message it gives in a single process.
//! - gzip text cannot be entered in the middle: a part is a range of line
//!   numbers, and reading it decompresses the file from the start, parsing
//!   only its own lines ([`read_gzip_lines`]).
//! - A CSV file's layout (delimiter, columns, label, header) is fixed by its
//!   first data line ([`csv_start`]), which every part reads.
//! - A `.pbin` file's rows are read with [`crate::data::binary::block`].
//!
//! A part may hold no rows: the rules about a whole file (it has rows) are
//! the caller's to check over all parts.

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::rc::Rc;

use crate::error::{Error, Result};
use crate::float::Real;

use super::blocks::{Reading, Text};
use super::csv::{self, Layout, is_skipped};
use super::lines::LineReader;
use super::matrix::{CsrMatrix, DenseMatrix, Features};
use super::options::{Format, LoadOptions};
use super::raw::RawData;
use super::source;

/// Bytes read at a time while searching and counting.
const CHUNK: usize = 1 << 20;

/// Where a CSV file's rows start and how they read: its first line that is
/// not blank or a comment, which fixes the layout.
#[derive(Clone, Debug)]
pub struct CsvStart {
    /// Byte offset of that line in the (decompressed) text.
    pub offset: u64,
    /// Its 1-based line number.
    pub line: u64,
    pub(crate) layout: Layout,
}

/// A text file's [`CsvStart`], read from its beginning (decompressed when
/// `gzip`); `None` when it holds no such line.
pub fn csv_start(path: &Path, opts: &LoadOptions, gzip: bool) -> Result<Option<CsvStart>> {
    let reader: Box<dyn BufRead> = if gzip {
        let (file, _) = source::open_file(path)?;
        Box::new(BufReader::new(source::gunzip(file)))
    } else {
        Box::new(BufReader::new(source::open_file(path)?.0))
    };
    let consumed = Rc::new(Cell::new(0u64));
    let counted = CountingReader {
        inner: reader,
        consumed: Rc::clone(&consumed),
    };
    let mut lines = LineReader::new(counted, path);
    // The line reader consumes its input up to the end of each line, so
    // the count before a line is where it starts.
    let found = loop {
        let at = consumed.get();
        match lines.next_line()? {
            None => break None,
            Some((_, l)) if is_skipped(l) => {}
            Some((no, l)) => break Some((no, l.to_owned(), at)),
        }
    };
    let Some((line, text, offset)) = found else {
        return Ok(None);
    };
    let (layout, _) = Layout::detect(&text, line, path, opts)?;
    Ok(Some(CsvStart {
        offset,
        line,
        layout,
    }))
}

/// A reader that counts the bytes consumed through it.
struct CountingReader<R> {
    inner: R,
    consumed: Rc<Cell<u64>>,
}

impl<R: BufRead> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.set(self.consumed.get() + n as u64);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for CountingReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.consumed.set(self.consumed.get() + amt as u64);
        self.inner.consume(amt);
    }
}

/// The start of the first line that begins at byte `at` or later of a
/// plain file of `size` bytes (`size` if none; 0 stays 0). Parts cut at
/// the same `at` therefore meet exactly.
pub fn line_start_at_or_after(path: &Path, size: u64, at: u64) -> Result<u64> {
    if at == 0 || at >= size {
        return Ok(at.min(size));
    }
    let (mut file, _) = source::open_file(path)?;
    // A line starts at `at` when the byte before it ends one.
    let mut pos = at - 1;
    file.seek(SeekFrom::Start(pos))
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = read_some(&mut file, &mut buf).map_err(|e| Error::io(path, "cannot read", e))?;
        if n == 0 {
            return Ok(size);
        }
        if let Some(k) = memchr::memchr(b'\n', &buf[..n]) {
            return Ok((pos + k as u64 + 1).min(size));
        }
        pos += n as u64;
    }
}

/// Newlines in bytes `range` of a plain file: the lines before a part that
/// starts at `range.1`, for the parts before it.
pub fn count_newlines(path: &Path, range: (u64, u64)) -> Result<u64> {
    let (mut file, _) = source::open_file(path)?;
    file.seek(SeekFrom::Start(range.0))
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let mut left = range.1.saturating_sub(range.0);
    let mut buf = vec![0u8; CHUNK];
    let mut n_lines = 0u64;
    while left > 0 {
        let want = (left as usize).min(CHUNK);
        let n = read_some(&mut file, &mut buf[..want])
            .map_err(|e| Error::io(path, "cannot read", e))?;
        if n == 0 {
            return Err(Error::data(
                path,
                "truncated: the file ended while reading it (was it being written?)",
            ));
        }
        n_lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        left -= n as u64;
    }
    Ok(n_lines)
}

fn read_some(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// The rows of the lines that start in bytes `range` of a plain CSV or
/// LIBSVM file, `lines_before` lines preceding them. `csv` is the file's
/// [`CsvStart`] (CSV only; `None` when the file has no data line).
pub fn read_text<F: Real>(
    path: &Path,
    format: Format,
    opts: &LoadOptions,
    range: (u64, u64),
    lines_before: u64,
    csv: Option<&CsvStart>,
) -> Result<RawData<F>> {
    let (mut file, _) = source::open_file(path)?;
    file.seek(SeekFrom::Start(range.0))
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let len = range.1.saturating_sub(range.0);
    let reader = BufReader::with_capacity(64 << 10, file.take(len));
    let lines = LineReader::after_line(Text::reader(reader), path, lines_before);
    parse(lines, path, format, opts, range.0, csv, Some(len))
}

/// Lines in gzip text (a last line without a newline counts).
pub fn count_gzip_lines(path: &Path) -> Result<u64> {
    let (file, _) = source::open_file(path)?;
    let mut r = source::gunzip(file);
    let mut buf = vec![0u8; CHUNK];
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let n = read_some(&mut r, &mut buf)
            .map_err(|e| Error::io(path, "cannot read", super::message::after_lines(e, lines)))?;
        if n == 0 {
            break;
        }
        lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        last = buf[n - 1];
    }
    Ok(lines + (last != b'\n') as u64)
}

/// The rows of lines `lines.0..lines.1` (0-based) of gzip CSV or LIBSVM
/// text: decompressed from the start, only those lines parsed.
pub fn read_gzip_lines<F: Real>(
    path: &Path,
    format: Format,
    opts: &LoadOptions,
    lines: (u64, u64),
    csv: Option<&CsvStart>,
) -> Result<RawData<F>> {
    let (file, _) = source::open_file(path)?;
    let mut text = BufReader::with_capacity(64 << 10, source::gunzip(file));
    let (mut skipped, mut skipped_bytes) = (0u64, 0u64);
    while skipped < lines.0 {
        let buf = text
            .fill_buf()
            .map_err(|e| Error::io(path, "cannot read", super::message::after_lines(e, skipped)))?;
        if buf.is_empty() {
            break;
        }
        let want = lines.0 - skipped;
        let used = match memchr::memchr_iter(b'\n', buf).nth((want - 1) as usize) {
            Some(i) => {
                skipped = lines.0;
                i + 1
            }
            None => {
                skipped += memchr::memchr_iter(b'\n', buf).count() as u64;
                buf.len()
            }
        };
        skipped_bytes += used as u64;
        text.consume(used);
    }
    let part = TakeLines {
        inner: text,
        left: lines.1.saturating_sub(lines.0),
    };
    let reader = LineReader::after_line(Text::reader(part), path, lines.0);
    parse(reader, path, format, opts, skipped_bytes, csv, None)
}

/// At most `left` more lines of a reader.
struct TakeLines<R> {
    inner: R,
    left: u64,
}

impl<R: BufRead> Read for TakeLines<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for TakeLines<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.left == 0 {
            return Ok(&[]);
        }
        let left = self.left;
        let buf = self.inner.fill_buf()?;
        // Up to the end of the last line wanted.
        let mut end = buf.len();
        for (k, i) in memchr::memchr_iter(b'\n', buf).enumerate() {
            if k as u64 + 1 == left {
                end = i + 1;
                break;
            }
        }
        Ok(&buf[..end])
    }

    fn consume(&mut self, amt: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            self.left -= memchr::memchr_iter(b'\n', &buf[..amt]).count() as u64;
        }
        self.inner.consume(amt);
    }
}

/// Parses a part whose text starts at byte `start` of the (decompressed)
/// file.
fn parse<F: Real>(
    lines: LineReader<'_, Text<'_>>,
    path: &Path,
    format: Format,
    opts: &LoadOptions,
    start: u64,
    csv_start: Option<&CsvStart>,
    size_hint: Option<u64>,
) -> Result<RawData<F>> {
    let reading = Reading::default();
    match format {
        Format::Libsvm => super::libsvm::parse_part(
            lines,
            path,
            opts.unlabeled,
            super::libsvm::Indexing::of(opts),
            size_hint,
            reading,
        ),
        Format::Csv => match csv_start {
            // Only blank and comment lines in the whole file.
            None => Ok(empty_csv(0, None)),
            Some(s) if s.offset >= start => {
                let cols = s.layout.cols();
                let info = s.layout.info();
                Ok(
                    csv::parse_first_part(lines, path, opts, size_hint, reading)?
                        .unwrap_or_else(|| empty_csv(cols, Some(info))),
                )
            }
            Some(s) => csv::parse_part(lines, path, s.layout.clone(), size_hint, reading),
        },
        Format::Binary => Err(Error::Usage(format!(
            "{}: a .pbin file is read by rows, not as text",
            path.display()
        ))),
        Format::Npy => Err(Error::Usage(format!(
            "{}: a .npy file is read as a whole, not as text",
            path.display()
        ))),
    }
}

fn empty_csv<F: Real>(cols: usize, info: Option<super::raw::CsvInfo>) -> RawData<F> {
    RawData {
        features: Features::Dense(DenseMatrix {
            rows: 0,
            cols,
            values: Vec::new().into(),
        }),
        class_ids: Vec::new(),
        table: Default::default(),
        format: Format::Csv,
        csv: info,
        libsvm: None,
    }
}

/// An empty part of a sparse file.
pub fn empty_sparse<F: Real>(format: Format) -> RawData<F> {
    RawData {
        features: Features::Sparse(CsrMatrix {
            cols: 0,
            row_ptr: vec![0].into(),
            indices: Vec::new().into(),
            values: Vec::new().into(),
        }),
        class_ids: Vec::new(),
        table: Default::default(),
        format,
        libsvm: None,
        csv: None,
    }
}

#[cfg(test)]
mod tests;
