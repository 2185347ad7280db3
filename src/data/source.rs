//! Opening data files: plain or gzipped, with the first bytes kept for format
//! detection.
//!
//! Gzip is recognised by a `.gz` name or by its magic bytes, so that a
//! compressed file under another name, or a pipe such as `<(gzip -c f)`,
//! reads like any other instead of failing as invalid UTF-8.

use std::fs::{File, Metadata};
use std::io::{self, BufRead, BufReader, Cursor, ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex};

use memmap2::Mmap;

use crate::error::{Error, Result};

use super::message::after_lines;

/// How many bytes of the (decompressed) content [`open`] keeps in
/// [`Input::head`] for format detection.
pub const HEAD_BYTES: usize = 8 << 10;

/// Buffer size of the reader handed to the parsers.
const BUFFER_BYTES: usize = 64 << 10;

/// The environment variable that turns memory mapping off (any value but
/// empty, `0`, `false`, `no` or `off`): text and `.pbin` files are then
/// read into memory instead.
pub const NO_MMAP_ENV: &str = "PERCEPTRON_NO_MMAP";

/// Bytes the decompressing thread hands over at a time.
const INFLATE_CHUNK: usize = 1 << 20;

/// Whether data files may be mapped: unless [`NO_MMAP_ENV`] says otherwise.
pub fn mmap_enabled() -> bool {
    mmap_allowed_by(std::env::var_os(NO_MMAP_ENV).as_deref())
}

/// Whether the value of [`NO_MMAP_ENV`] (`None`: not set) allows mapping.
pub(crate) fn mmap_allowed_by(no_mmap: Option<&std::ffi::OsStr>) -> bool {
    match no_mmap {
        None => true,
        Some(v) => {
            let v = v.to_string_lossy().trim().to_ascii_lowercase();
            matches!(v.as_str(), "" | "0" | "false" | "no" | "off")
        }
    }
}

/// The content of an opened data file.
pub enum Content {
    /// A plain file, mapped read-only: parsed in place, without copying.
    /// Like a mapped `.pbin` (see [`super::binary`], "Memory mapping"), a
    /// file truncated in place while it is read ends the process (SIGBUS);
    /// [`NO_MMAP_ENV`] reads it instead.
    Mapped(Mmap),
    /// Everything else: gzip (decompressed on a thread of its own), pipes,
    /// and files when mapping is off or fails.
    Reader(Box<dyn BufRead + Send>),
}

/// An opened data file.
pub struct Input {
    /// The whole (decompressed) content, [`Input::head`] included.
    pub content: Content,
    /// The first bytes of the (decompressed) content (at most [`HEAD_BYTES`]).
    pub head: Vec<u8>,
    /// The content's length in bytes when it is cheap to know (plain files),
    /// so parsers can reserve their matrices once instead of regrowing them.
    pub size_hint: Option<u64>,
    /// The file is gzip-compressed (by its name or its first bytes).
    pub gzip: bool,
}

impl Input {
    /// The whole content as a reader.
    pub fn into_reader(self) -> Box<dyn BufRead + Send> {
        match self.content {
            Content::Mapped(map) => Box::new(Cursor::new(map)),
            Content::Reader(r) => r,
        }
    }
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

/// Opens a file for reading, refusing a directory; the error names the
/// file. Every reader opens its file here.
pub fn open_file(path: &Path) -> Result<(File, Metadata)> {
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
    Ok((file, meta))
}

/// The data path that stands for standard input.
pub const STDIN_ARG: &str = "-";

/// How standard input is named in messages and reports.
pub const STDIN_NAME: &str = "<stdin>";

/// Whether standard input holds data: a pipe, a file or a socket (not a
/// terminal, and not an empty device such as /dev/null). Commands whose
/// DATA may be omitted read it then, rather than their bundled demo data.
pub fn stdin_is_piped() -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::FileTypeExt;
        let Ok(fd) = io::stdin().as_fd().try_clone_to_owned() else {
            return false;
        };
        match std::fs::File::from(fd).metadata() {
            Ok(m) => {
                let t = m.file_type();
                t.is_fifo() || t.is_file() || t.is_socket()
            }
            Err(_) => false,
        }
    }
    #[cfg(not(unix))]
    {
        use std::io::IsTerminal;
        !io::stdin().is_terminal()
    }
}

/// The DATA of a command that falls back on its bundled data when none is
/// given: standard input (`-`) when it is piped, else none (a terminal, or
/// the null device: the bundled data, which the reports name as such).
pub fn omitted_data() -> Option<PathBuf> {
    stdin_is_piped().then(|| PathBuf::from(STDIN_ARG))
}

/// An error from reading standard input that no DATA stood for: one that
/// says it found no rows also says why standard input was read.
pub fn explain_omitted(e: Error) -> Error {
    match e {
        Error::Data { path, message }
            if path.as_os_str() == STDIN_NAME && message.starts_with("no data rows") =>
        {
            Error::Data {
                path,
                message: format!(
                    "{message}; no DATA was given and standard input is not a terminal, so it was \
                     read: give a data file, or run the command from a terminal (or with \
                     standard input from /dev/null) for the bundled demo data"
                ),
            }
        }
        other => other,
    }
}

/// Whether a data path stands for standard input (`-`).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN_ARG
}

/// The name of a data path in messages and reports: the path, or
/// `<stdin>` for `-`.
pub fn name(path: &Path) -> &Path {
    if is_stdin(path) {
        Path::new(STDIN_NAME)
    } else {
        path
    }
}

/// Opens a data file, or standard input for `-`; gzip data (a `.gz` name or
/// the magic bytes) is decompressed transparently (several concatenated
/// members are read as one stream).
pub fn open(path: &Path) -> Result<Input> {
    let opened = if is_stdin(path) {
        None
    } else {
        Some(open_file(path)?)
    };
    let name = name(path);
    let mut magic = Vec::with_capacity(GZIP_MAGIC.len());
    let (raw, gzip, len): (Box<dyn Read + Send>, bool, Option<u64>) = match opened {
        Some((mut file, meta)) => {
            read_up_to(&mut file, &mut magic, GZIP_MAGIC.len())
                .map_err(|e| Error::io(name, "cannot read", e))?;
            let gzip = is_gzip(path) || looks_like_gzip(&magic);
            if !gzip
                && meta.is_file()
                && meta.len() > 0
                && mmap_enabled()
                && let Some(map) = map_file(&file, meta.len())
            {
                let head = map[..map.len().min(HEAD_BYTES)].to_vec();
                return Ok(Input {
                    size_hint: Some(map.len() as u64),
                    content: Content::Mapped(map),
                    head,
                    gzip,
                });
            }
            (Box::new(file), gzip, meta.is_file().then_some(meta.len()))
        }
        None => {
            let mut stdin = io::stdin();
            read_up_to(&mut stdin, &mut magic, GZIP_MAGIC.len())
                .map_err(|e| Error::io(name, "cannot read", e))?;
            (Box::new(stdin), looks_like_gzip(&magic), None)
        }
    };
    let path = name;
    let raw = Cursor::new(magic).chain(raw);
    let (mut rest, size_hint): (Box<dyn Read + Send>, Option<u64>) = if gzip {
        (inflate_on_a_thread(gunzip(raw)), None)
    } else {
        (Box::new(raw), len)
    };
    let mut head = Vec::with_capacity(HEAD_BYTES);
    read_up_to(&mut rest, &mut head, HEAD_BYTES).map_err(|e| {
        let lines = head.iter().filter(|&&b| b == b'\n').count() as u64;
        Error::io(path, "cannot read", after_lines(e, lines))
    })?;
    let replay = Cursor::new(head.clone()).chain(rest);
    Ok(Input {
        content: Content::Reader(Box::new(BufReader::with_capacity(BUFFER_BYTES, replay))),
        head,
        size_hint,
        gzip,
    })
}

/// A read-only map of the whole file, when it has the length `len` it was
/// opened with; `None` where mapping fails (some filesystems and special
/// files), and the caller reads instead.
pub(crate) fn map_file(file: &File, len: u64) -> Option<Mmap> {
    // SAFETY: the mapping is read-only (the file was opened read-only) and
    // only read as bytes, for which every bit pattern is valid. A file
    // truncated in place while mapped makes a read of the vanished pages
    // raise SIGBUS, which ends the process rather than corrupting it (see
    // `Content::Mapped`).
    let map = unsafe { Mmap::map(file) }.ok()?;
    if map.len() as u64 != len {
        return None;
    }
    // Read front to back: the kernel may read ahead.
    let _ = map.advise(memmap2::Advice::Sequential);
    Some(map)
}

/// Decompresses `src` on a thread of its own, a megabyte at a time ahead
/// of the parser, so that the two overlap; on the calling thread when no
/// thread can be started.
fn inflate_on_a_thread<R: Read + Send + 'static>(src: R) -> Box<dyn Read + Send> {
    let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(2);
    let slot = Arc::new(Mutex::new(Some(src)));
    let theirs = Arc::clone(&slot);
    let started = std::thread::Builder::new()
        .name("perceptron-gunzip".into())
        .stack_size(256 << 10)
        .spawn(move || {
            let Some(mut src) = theirs.lock().ok().and_then(|mut s| s.take()) else {
                return;
            };
            loop {
                let mut buf = Vec::new();
                if !crate::memory::fits_address_space(INFLATE_CHUNK as u64)
                    || buf.try_reserve_exact(INFLATE_CHUNK).is_err()
                {
                    let _ = tx.send(Err(io::Error::new(
                        ErrorKind::OutOfMemory,
                        "no memory for the decompressed text",
                    )));
                    return;
                }
                buf.resize(INFLATE_CHUNK, 0);
                let mut filled = 0;
                let mut failed = None;
                while filled < buf.len() {
                    match src.read(&mut buf[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                buf.truncate(filled);
                let more = filled == INFLATE_CHUNK;
                if filled > 0 && tx.send(Ok(buf)).is_err() {
                    return;
                }
                if let Some(e) = failed {
                    let _ = tx.send(Err(e));
                    return;
                }
                if !more {
                    return;
                }
            }
        });
    if started.is_err()
        && let Some(src) = slot.lock().ok().and_then(|mut s| s.take())
    {
        return Box::new(src);
    }
    Box::new(Inflated {
        rx,
        chunk: Vec::new(),
        pos: 0,
    })
}

/// The receiving end of [`inflate_on_a_thread`].
struct Inflated {
    rx: Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl Read for Inflated {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.chunk.len() {
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                // The thread is done: the end of the data.
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.chunk.len() - self.pos);
        out[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
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

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::PathBuf;

    use super::*;
    use crate::data::lines::LineReader;

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
        let mut r = input.into_reader();
        r.read_to_end(&mut out)?;
        Ok(out)
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
        let mut lines = LineReader::new(input.into_reader(), &big);
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
}
