//! Opening data files: plain or gzipped, with the first bytes kept for format
//! detection, and the bounded line reader both parsers use.
//!
//! Gzip is recognised by a `.gz` name or by its magic bytes, so that a
//! compressed file under another name, or a pipe such as `<(gzip -c f)`,
//! reads like any other instead of failing as invalid UTF-8.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, ErrorKind, Read};
use std::path::Path;

use crate::error::{Error, Result};

use super::{Format, MAX_LINE_BYTES};

/// How many bytes of the (decompressed) content [`open`] keeps in
/// [`Input::head`] for format detection.
pub const HEAD_BYTES: usize = 8 << 10;

/// Buffer size of the reader handed to the parsers.
const BUFFER_BYTES: usize = 64 << 10;

/// An opened data file.
pub struct Input {
    /// The whole (decompressed) content, [`Input::head`] included.
    pub reader: Box<dyn BufRead>,
    /// The first bytes of the (decompressed) content (at most [`HEAD_BYTES`]).
    pub head: Vec<u8>,
    /// The content's length in bytes when it is cheap to know (plain files),
    /// so parsers can reserve their matrices once instead of regrowing them.
    pub size_hint: Option<u64>,
    /// The file is gzip-compressed (by its name or its first bytes).
    pub gzip: bool,
}

/// True when the file name ends in `.gz` (any case).
pub(crate) fn is_gzip(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// The first two bytes of every gzip member. No UTF-8 text starts with
/// them (0x8b cannot follow 0x1f), nor does a `.pbin` file.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether content starting with `head` is gzip data.
pub(crate) fn looks_like_gzip(head: &[u8]) -> bool {
    head.starts_with(&GZIP_MAGIC)
}

/// Decompresses gzip data (several concatenated members read as one
/// stream), with errors that say the data is damaged.
pub(crate) fn gunzip<R: Read>(raw: R) -> GzipErrors<flate2::read::MultiGzDecoder<R>> {
    GzipErrors(flate2::read::MultiGzDecoder::new(raw))
}

/// Adds where reading stopped to a read error: `lines` complete lines were
/// read before it (nothing is added before the first).
pub(crate) fn after_lines(e: io::Error, lines: u64) -> io::Error {
    if lines == 0 {
        e
    } else {
        io::Error::new(e.kind(), format!("{e}, after line {lines}"))
    }
}

/// Opens a data file; gzip data (a `.gz` name or the magic bytes) is
/// decompressed transparently (several concatenated members are read as
/// one stream).
pub fn open(path: &Path) -> Result<Input> {
    let file = File::open(path).map_err(|e| Error::io(path, "cannot open data file", e))?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(path, "cannot open data file", e))?;
    if meta.is_dir() {
        return Err(Error::io(
            path,
            "cannot open data file",
            io::Error::new(ErrorKind::IsADirectory, "it is a directory, not a file"),
        ));
    }
    let mut file = file;
    let mut magic = Vec::with_capacity(GZIP_MAGIC.len());
    read_up_to(&mut file, &mut magic, GZIP_MAGIC.len())
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let gzip = is_gzip(path) || looks_like_gzip(&magic);
    let raw = Cursor::new(magic).chain(file);
    let (mut rest, size_hint): (Box<dyn Read>, Option<u64>) = if gzip {
        (Box::new(gunzip(raw)), None)
    } else {
        let len = meta.is_file().then_some(meta.len());
        (Box::new(raw), len)
    };
    let mut head = Vec::with_capacity(HEAD_BYTES);
    read_up_to(&mut rest, &mut head, HEAD_BYTES).map_err(|e| {
        let lines = head.iter().filter(|&&b| b == b'\n').count() as u64;
        Error::io(path, "cannot read", after_lines(e, lines))
    })?;
    let replay = Cursor::new(head.clone()).chain(rest);
    Ok(Input {
        reader: Box::new(BufReader::with_capacity(BUFFER_BYTES, replay)),
        head,
        size_hint,
        gzip,
    })
}

/// Appends up to `limit` bytes of `reader` to `out`, stopping early only at
/// the end of the input.
fn read_up_to(reader: &mut dyn Read, out: &mut Vec<u8>, limit: usize) -> io::Result<()> {
    let mut buf = [0u8; 4096];
    while out.len() < limit {
        let want = (limit - out.len()).min(buf.len());
        match reader.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Rewords the decompressor's errors so that a truncated or corrupt `.gz`
/// says so (flate2 alone reports, for example, just "unexpected end of file").
pub(crate) struct GzipErrors<R>(pub R);

impl<R: Read> Read for GzipErrors<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.kind() == ErrorKind::Interrupted {
                e
            } else {
                io::Error::new(
                    e.kind(),
                    format!("the gzip data is truncated or corrupt ({e})"),
                )
            }
        })
    }
}

/// Picks the format from the magic bytes of a binary file, else the file
/// name (`.gz` stripped first), or else from the first data line of `head`.
pub fn infer_format(path: &Path, head: &[u8]) -> Result<Format> {
    // No text file starts with these bytes, so they win over the name.
    if super::binary::is_binary(head) {
        return Ok(Format::Binary);
    }
    if let Some(format) = format_from_name(path) {
        return Ok(format);
    }
    let complete = head.len() < HEAD_BYTES;
    let mut lines = head.split(|&b| b == b'\n').peekable();
    while let Some(raw) = lines.next() {
        // Only the last piece can lack its newline; when the head was cut
        // short of the file's end, that piece may end mid-token.
        let cut = lines.peek().is_none() && !complete;
        let line = String::from_utf8_lossy(raw);
        let line = line.trim_start_matches('\u{feff}').trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(format) = format_from_line(line, cut) {
            return Ok(format);
        }
        return Err(Error::data(
            path,
            format!(
                "cannot tell the format from the file name or from its first data line {}; \
                 use --format csv or --format libsvm",
                quote(line)
            ),
        ));
    }
    if complete {
        Err(Error::data(path, NO_DATA_ROWS))
    } else {
        Err(Error::data(
            path,
            "cannot tell the format: the first bytes hold no data line; \
             use --format csv or --format libsvm",
        ))
    }
}

/// The format a file name says (`.gz` stripped first): `.csv .tsv`, `.svm
/// .libsvm .svmlight` or `.pbin`.
pub(crate) fn format_from_name(path: &Path) -> Option<Format> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    match name.rsplit_once('.').map(|(_, e)| e) {
        Some("csv" | "tsv") => Some(Format::Csv),
        Some("svm" | "libsvm" | "svmlight") => Some(Format::Libsvm),
        Some(super::binary::EXTENSION) => Some(Format::Binary),
        _ => None,
    }
}

/// The format a data line (trimmed, not a comment) looks like: LIBSVM when
/// it is a label and `index:value` tokens, CSV when it holds `,` `;` or a
/// tab. `cut` says the line may end mid-token.
pub(crate) fn format_from_line(line: &str, cut: bool) -> Option<Format> {
    if looks_like_libsvm(line, cut) {
        Some(Format::Libsvm)
    } else if line.contains([',', ';', '\t']) {
        Some(Format::Csv)
    } else {
        None
    }
}

/// A label followed by whitespace-separated `index:value` tokens (at least
/// one), or (unlabeled data) such tokens alone.
fn looks_like_libsvm(line: &str, cut: bool) -> bool {
    let data = line.split_once('#').map_or(line, |(d, _)| d);
    let mut tokens: Vec<&str> = data.split_ascii_whitespace().collect();
    if cut && tokens.len() > 2 {
        tokens.pop();
    }
    let feature = |t: &&str| {
        t.split_once(':').is_some_and(|(i, v)| {
            (i == "qid" || (!i.is_empty() && i.bytes().all(|b| b.is_ascii_digit())))
                && !v.is_empty()
        })
    };
    match tokens.split_first() {
        Some((first, rest)) if !first.contains(':') => !rest.is_empty() && rest.iter().all(feature),
        _ => !tokens.is_empty() && tokens.iter().all(feature),
    }
}

/// The message for a file without a single data row.
pub(crate) const NO_DATA_ROWS: &str =
    "no data rows: the file is empty or holds only comments and blank lines";

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
        }
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
        if self.line == 1 {
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

/// Number of characters in UTF-8 bytes (continuation bytes not counted).
fn count_chars(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b & 0xc0 != 0x80).count() as u64
}

/// The 1-based character column at byte offset `at` of `line`.
pub(crate) fn column_at(line: &str, at: usize) -> u64 {
    let at = at.min(line.len());
    count_chars(&line.as_bytes()[..at]).saturating_add(1)
}

/// Quotes a value for a message, escaping control characters and cutting
/// very long values short.
pub(crate) fn quote(text: &str) -> String {
    const MAX_CHARS: usize = 60;
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// Parses a feature value directly into `F` (never through f64, which would
/// round twice). Only finite values are accepted. The error says what is wrong
/// with `text`; `what` names where it was expected, e.g. `column 3`.
pub(crate) fn parse_value<F: crate::float::Real>(
    text: &str,
    what: &dyn std::fmt::Display,
) -> std::result::Result<F, String> {
    match text.parse::<F>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => {
            let lower = text.to_ascii_lowercase();
            let bare = lower.trim_start_matches(['+', '-']);
            if matches!(bare, "nan" | "inf" | "infinity") {
                Err(format!(
                    "expected a finite number {what}, found {}",
                    quote(text)
                ))
            } else {
                Err(format!(
                    "value {} {what} is too large for {} (largest finite magnitude {})",
                    quote(text),
                    F::PRECISION,
                    max_finite::<F>()
                ))
            }
        }
        Err(_) if text.is_empty() => Err(format!("empty field {what} (expected a number)")),
        Err(_) => Err(format!("expected a number {what}, found {}", quote(text))),
    }
}

fn max_finite<F: crate::float::Real>() -> String {
    match F::PRECISION {
        crate::float::Precision::F32 => format!("{:e}", f32::MAX),
        crate::float::Precision::F64 => format!("{:e}", f64::MAX),
    }
}

/// Gives back reserved memory when an estimate overshot by more than 1/8.
pub(crate) fn trim_excess<T>(v: &mut Vec<T>) {
    if v.capacity() > v.len().saturating_add(v.len() / 8) {
        v.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::PathBuf;

    use super::*;

    fn data_file(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data")
            .join(name)
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    fn read_all(input: Input) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut r = input.reader;
        r.read_to_end(&mut out)?;
        Ok(out)
    }

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
    fn plain_files_replay_their_head_and_know_their_size() {
        let path = data_file("iris_setosa.csv");
        let bytes = std::fs::read(&path).unwrap();
        let input = open(&path).unwrap();
        assert_eq!(input.size_hint, Some(bytes.len() as u64));
        assert_eq!(input.head, bytes[..bytes.len().min(HEAD_BYTES)]);
        assert_eq!(read_all(input).unwrap(), bytes);
    }

    #[test]
    fn long_files_keep_only_the_first_bytes_as_head() {
        let path = data_file("breast_cancer.csv");
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.len() > HEAD_BYTES);
        let input = open(&path).unwrap();
        assert_eq!(input.head, bytes[..HEAD_BYTES]);
        assert_eq!(read_all(input).unwrap(), bytes);
    }

    #[test]
    fn gzip_files_are_decompressed_transparently_even_multi_member() {
        let dir = tempfile::tempdir().unwrap();
        let text: Vec<u8> = (0..3000)
            .flat_map(|i| format!("{},{}.5\n", i % 2, i).into_bytes())
            .collect();
        let (a, b) = text.split_at(5000);
        let mut gz = gzip(a);
        gz.extend(gzip(b));
        let path = dir.path().join("x.csv.GZ");
        std::fs::write(&path, &gz).unwrap();
        let input = open(&path).unwrap();
        assert_eq!(input.size_hint, None);
        assert_eq!(input.head, text[..HEAD_BYTES]);
        assert_eq!(read_all(input).unwrap(), text);
    }

    #[test]
    fn truncated_gzip_is_a_read_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        // Small: the damage shows while `open` reads the head.
        let small = dir.path().join("small.csv.gz");
        let gz = gzip(b"1,2\n-1,3\n");
        std::fs::write(&small, &gz[..gz.len() - 6]).unwrap();
        let e = open(&small).err().unwrap().to_string();
        assert!(
            e.starts_with(&format!("{}: cannot read: ", small.display())),
            "{e}"
        );
        assert!(e.contains("gzip data is truncated or corrupt"), "{e}");
        // Both lines came out before the damaged trailer was noticed.
        assert!(e.ends_with(", after line 2"), "{e}");

        // Large: the head is fine, the parser meets the damage later and
        // must not take it for the end of the file.
        let text: Vec<u8> = (0..20000)
            .flat_map(|i| format!("{},{}.25,{}\n", i % 2, i, i * 7).into_bytes())
            .collect();
        let gz = gzip(&text);
        let big = dir.path().join("big.csv.gz");
        std::fs::write(&big, &gz[..gz.len() / 2]).unwrap();
        let input = open(&big).unwrap();
        let mut lines = LineReader::new(input.reader, &big);
        let mut read = 0;
        let e = loop {
            match lines.next_line() {
                Ok(Some(_)) => read += 1,
                Ok(None) => panic!("a truncated gzip file read as complete"),
                Err(e) => break e,
            }
        };
        assert!(read > 1000 && read < 20000, "{read}");
        assert!(matches!(e, Error::Io { .. }), "{e:?}");
        let e = e.to_string();
        assert!(
            e.starts_with(&format!("{}: cannot read: ", big.display())),
            "{e}"
        );
        assert!(e.contains("gzip data is truncated or corrupt"), "{e}");
        assert!(e.ends_with(&format!(", after line {read}")), "{e}");
    }

    #[test]
    fn gzip_is_recognised_by_its_magic_bytes_whatever_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let text = b"1,2\n-1,3\n";
        for name in ["data.csv", "data", "x.svm"] {
            let path = dir.path().join(name);
            std::fs::write(&path, gzip(text)).unwrap();
            let input = open(&path).unwrap();
            assert!(input.gzip, "{name}");
            assert_eq!(input.size_hint, None);
            assert_eq!(input.head, text);
            assert_eq!(read_all(input).unwrap(), text);
        }
        // Plain text, and files shorter than the magic, are not gzip.
        for bytes in [&text[..], b"\x1f", b""] {
            let path = dir.path().join("plain.csv");
            std::fs::write(&path, bytes).unwrap();
            let input = open(&path).unwrap();
            assert!(!input.gzip);
            assert_eq!(input.size_hint, Some(bytes.len() as u64));
            assert_eq!(read_all(input).unwrap(), bytes);
        }
    }

    #[test]
    fn corrupt_or_fake_gzip_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("fake.svm.gz");
        std::fs::write(&fake, b"1 1:2\n").unwrap();
        let e = open(&fake).err().unwrap().to_string();
        assert!(
            e.starts_with(&format!("{}: cannot read: the gzip data", fake.display())),
            "{e}"
        );

        let mut gz = gzip(b"1 1:2\n-1 2:3\n");
        let mid = gz.len() / 2;
        gz[mid] ^= 0xff;
        gz[mid + 1] ^= 0x55;
        let bad = dir.path().join("bad.svm.gz");
        std::fs::write(&bad, &gz).unwrap();
        let e = match open(&bad) {
            Err(e) => e,
            Ok(input) => Error::io(&bad, "cannot read", read_all(input).unwrap_err()),
        };
        assert!(matches!(e, Error::Io { .. }), "{e:?}");
        let e = e.to_string();
        assert!(
            e.starts_with(&format!("{}: cannot read: the gzip data", bad.display())),
            "{e}"
        );
    }

    #[test]
    fn missing_files_and_directories_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.csv");
        let e = open(&missing).err().unwrap();
        assert!(matches!(&e, Error::Io { source, .. } if source.kind() == ErrorKind::NotFound));
        assert!(
            e.to_string()
                .starts_with(&format!("{}: cannot open data file: ", missing.display())),
            "{e}"
        );
        let e = open(dir.path()).err().unwrap();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: cannot open data file: it is a directory, not a file",
                dir.path().display()
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn unreadable_files_are_clear_errors() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.csv");
        std::fs::write(&path, b"1,2\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
        if File::open(&path).is_ok() {
            return; // running as root: permissions are not enforced
        }
        let e = open(&path).err().unwrap();
        assert!(
            matches!(&e, Error::Io { source, .. } if source.kind() == ErrorKind::PermissionDenied)
        );
        assert!(
            e.to_string()
                .starts_with(&format!("{}: cannot open data file: ", path.display()))
        );
    }

    #[test]
    fn format_follows_the_extension_without_gz() {
        let cases = [
            ("a.csv", Format::Csv),
            ("a.TSV", Format::Csv),
            ("a.csv.gz", Format::Csv),
            ("a.svm", Format::Libsvm),
            ("dir.csv/a.libsvm", Format::Libsvm),
            ("a.svmlight.gz", Format::Libsvm),
        ];
        for (name, want) in cases {
            // The content says otherwise: the name wins.
            let head: &[u8] = if want == Format::Csv {
                b"1 1:2\n"
            } else {
                b"1,2\n"
            };
            assert_eq!(infer_format(Path::new(name), head).unwrap(), want, "{name}");
        }
    }

    #[test]
    fn format_follows_the_content_otherwise() {
        let f = |head: &str| infer_format(Path::new("d/data.txt.gz"), head.as_bytes());
        assert_eq!(f("# c\n\n+1 1:0.5 3:-1 \n").unwrap(), Format::Libsvm);
        assert_eq!(f("1\tqid:3\t2:1e-3 # note\n").unwrap(), Format::Libsvm);
        assert_eq!(f("1,2,3\n").unwrap(), Format::Csv);
        assert_eq!(f("  \r\n1;2\r\n").unwrap(), Format::Csv);
        assert_eq!(f("y\tx\n1\t2\n").unwrap(), Format::Csv);
        assert_eq!(f("1 2:3,4 5\n").unwrap(), Format::Csv);
        assert_eq!(f("\u{feff}1 1:2\n").unwrap(), Format::Libsvm);
        // Unlabeled LIBSVM: features alone.
        assert_eq!(f("1:0.5 3:2\n").unwrap(), Format::Libsvm);
        assert_eq!(f("a:1,b:2\n").unwrap(), Format::Csv);
        let e = f("\n1 2 3\n").unwrap_err().to_string();
        assert_eq!(
            e,
            "d/data.txt.gz: cannot tell the format from the file name or from its first data \
             line \"1 2 3\"; use --format csv or --format libsvm"
        );
        let e = f("").unwrap_err().to_string();
        assert_eq!(e, format!("d/data.txt.gz: {NO_DATA_ROWS}"));
        let e = f("# only\n\n# comments\n").unwrap_err().to_string();
        assert!(e.contains("no data rows"), "{e}");
        let e = f(&"#".repeat(HEAD_BYTES)).unwrap_err().to_string();
        assert!(e.contains("--format csv or --format libsvm"), "{e}");
        // A head cut mid-token still reads as LIBSVM.
        let mut long = "1".to_owned();
        while long.len() < HEAD_BYTES {
            long.push_str(&format!(" {}:1", long.len()));
        }
        long.truncate(HEAD_BYTES);
        long.pop();
        long.push(':');
        assert_eq!(f(&long).unwrap(), Format::Libsvm);
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

    #[test]
    fn values_parse_directly_and_must_be_finite() {
        let col = format_args!("in column 2").to_string();
        assert_eq!(parse_value::<f64>("-1.5e3", &col), Ok(-1500.0));
        assert_eq!(parse_value::<f32>("+.5", &col), Ok(0.5));
        assert_eq!(parse_value::<f32>("1e-50", &col), Ok(0.0));
        for bad in ["nan", "NaN", "-inf", "inf", "+Infinity"] {
            assert_eq!(
                parse_value::<f64>(bad, &col),
                Err(format!(
                    "expected a finite number in column 2, found \"{bad}\""
                ))
            );
        }
        assert_eq!(
            parse_value::<f32>("1e39", &col),
            Err(
                "value \"1e39\" in column 2 is too large for f32 (largest finite magnitude \
                 3.4028235e38)"
                    .to_owned()
            )
        );
        assert_eq!(parse_value::<f64>("1e39", &col), Ok(1e39));
        assert_eq!(
            parse_value::<f64>("-1e999", &col),
            Err(
                "value \"-1e999\" in column 2 is too large for f64 (largest finite magnitude \
                 1.7976931348623157e308)"
                    .to_owned()
            )
        );
        assert_eq!(
            parse_value::<f64>("1,5", &col),
            Err("expected a number in column 2, found \"1,5\"".to_owned())
        );
        assert_eq!(
            parse_value::<f64>("", &col),
            Err("empty field in column 2 (expected a number)".to_owned())
        );
    }

    /// A decimal whose nearest f64 lies exactly halfway between two f32s, so
    /// that going through f64 rounds it a second time, the wrong way.
    fn double_rounding_cases() -> Vec<(String, f32)> {
        let mut found = Vec::new();
        let mut x = 1.0f32;
        while found.len() < 5 && x < 1e6 {
            let up = f32::from_bits(x.to_bits() + 1);
            // The midpoint fits exactly in f64 (25 significant bits); a
            // decimal a hair above it belongs to `up`.
            let mid = (x as f64 + up as f64) / 2.0;
            let s = format!("{mid:.40}1");
            let direct: f32 = s.parse().unwrap();
            let via_f64 = s.parse::<f64>().unwrap() as f32;
            if direct != via_f64 {
                found.push((s, direct));
            }
            x = x * 1.37 + 0.11;
        }
        found
    }

    #[test]
    fn f32_values_are_not_rounded_twice() {
        let cases = double_rounding_cases();
        assert!(cases.len() >= 3, "{cases:?}");
        for (s, direct) in &cases {
            assert_eq!(parse_value::<f32>(s, &"here"), Ok(*direct), "{s}");
            assert_ne!(s.parse::<f64>().unwrap() as f32, *direct, "{s}");
        }
        // The textbook case: 1 + 2^-24 + a hair is above the midpoint of
        // 1 and 1 + 2^-23.
        let s = "1.0000000596046447753906250001";
        assert_eq!(parse_value::<f32>(s, &"here"), Ok(1.000_000_1_f32));
        assert_eq!(s.parse::<f64>().unwrap() as f32, 1.0);
    }

    #[test]
    fn quotes_escape_and_cut_long_values() {
        assert_eq!(quote("a\"b\t"), "\"a\\\"b\\t\"");
        let long = "é".repeat(100);
        assert_eq!(quote(&long), format!("\"{}\"...", "é".repeat(60)));
        assert_eq!(column_at("éé,x", 5), 4);
        assert_eq!(column_at("ab", 99), 3);
    }
}
