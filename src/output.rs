//! Writing output files atomically: a failed or interrupted run never leaves a
//! half-written file and never replaces an existing one.
//!
//! The content goes to a temporary file in the destination's directory, is
//! flushed and fsynced, then renamed over the destination (atomic on POSIX
//! filesystems), and the directory is fsynced so the rename survives a crash.
//!
//! A symbolic link is followed, so the file it points to is replaced and the
//! link stays. A destination that exists but is not a regular file (a named
//! pipe, `/dev/null`, a terminal) cannot be replaced without destroying it,
//! so it is written in place, like a shell redirection does. `-`, and
//! `/dev/stdout` and its aliases, are standard output, written directly.
//!
//! An existing regular file that is read-only is refused, as `cp` refuses
//! it: renaming over it would replace it although its permissions say not
//! to. A missing directory on the way to an output is created (as `mkdir
//! -p` would), when the output is written.

use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::error::{Error, Result};

/// The temporary files being written, with their destinations, so that a
/// process stopped by a signal can remove them first (`tempfile` removes
/// them on drop, which `std::process::exit` skips).
static PENDING: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());

fn pending() -> MutexGuard<'static, Vec<(PathBuf, PathBuf)>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// One temporary file on the list, taken off when dropped.
struct Pending(PathBuf);

impl Pending {
    fn new(tmp: &Path, destination: &Path) -> Self {
        pending().push((tmp.to_path_buf(), destination.to_path_buf()));
        Pending(tmp.to_path_buf())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        pending().retain(|(t, _)| t != &self.0);
    }
}

/// Removes every temporary file being written, then calls `stop` (which
/// ends the process) with their destinations. The list stays locked to the
/// end, so a rename in progress has either finished (that output is
/// complete) or never happens (its temporary file is gone).
pub fn abandon_pending(stop: impl FnOnce(&[PathBuf]) -> std::convert::Infallible) -> ! {
    let list = pending();
    for (tmp, _) in list.iter() {
        let _ = std::fs::remove_file(tmp);
    }
    let destinations: Vec<PathBuf> = list.iter().map(|(_, d)| d.clone()).collect();
    match stop(&destinations) {}
}

/// A complete temporary file waiting for its rename, while a [`Batch`] is
/// open: it stays on the interrupt list until then.
struct Staged {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
    _pending: Pending,
}

thread_local! {
    /// The outputs staged by this thread's open [`Batch`]; None when none
    /// is open.
    static BATCH: RefCell<Option<Vec<Staged>>> = const { RefCell::new(None) };
}

/// The outputs of one run, replaced together: while a batch is open, every
/// atomic write on this thread writes its temporary file completely and
/// then waits; [`Batch::commit`] renames them all over their destinations
/// once every one is written. A batch dropped without a commit (an output
/// failed, the disk filled) removes them all, so every existing output
/// keeps its old content: a run never leaves some outputs new and others
/// old. The renames cannot run out of space; only a filesystem fault
/// between two of them could separate them. Standard output and devices
/// are written at once, as without a batch.
pub struct Batch {
    /// False for a batch opened inside another: the outer one commits.
    owner: bool,
    // The batch belongs to the thread that opened it.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Batch {
    /// Opens a batch on this thread; writes before [`Batch::commit`] are
    /// staged. Batches do not nest: an inner one joins the outer.
    pub fn begin() -> Self {
        let owner = BATCH.with(|b| {
            let mut b = b.borrow_mut();
            let outermost = b.is_none();
            if outermost {
                *b = Some(Vec::new());
            }
            outermost
        });
        Batch {
            owner,
            _thread: std::marker::PhantomData,
        }
    }

    /// Renames every staged output over its destination, in the order they
    /// were written, then syncs their directories.
    pub fn commit(self) -> Result<()> {
        if !self.owner {
            return Ok(());
        }
        let staged = BATCH.with(|b| b.borrow_mut().take()).unwrap_or_default();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for Staged {
            tmp,
            path,
            _pending,
        } in staged
        {
            let mut list = pending();
            let tmp_path = tmp.path().to_path_buf();
            let persisted = tmp.persist(&path);
            list.retain(|(t, _)| t != &tmp_path);
            drop(list);
            // A failure drops the rest of the list: their files go.
            persisted.map_err(|e| Error::io(&path, "cannot replace output", e.error))?;
            let dir = directory_of(&path).to_path_buf();
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        for d in dirs {
            if let Ok(d) = File::open(d) {
                // Best effort: not every platform can fsync a directory.
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Drop for Batch {
    /// Without a commit, removes every staged file (the temporary files
    /// delete themselves when dropped).
    fn drop(&mut self) {
        if self.owner {
            let _ = BATCH.try_with(|b| b.borrow_mut().take());
        }
    }
}

/// A destination that can also seek (for formats whose header is written last).
pub trait WriteSeek: Write + Seek {}

impl<T: Write + Seek + ?Sized> WriteSeek for T {}

/// The output path that stands for standard output, and the data path that
/// stands for standard input.
pub const STDIO: &str = "-";

/// How standard output is named in messages.
pub const STDOUT_NAME: &str = "<stdout>";

/// Whether `path` is standard output: `-`, `/dev/stdout`, or the
/// descriptor 1 by its `/dev/fd` or `/proc/self/fd` name.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == STDIO
        || ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]
            .iter()
            .any(|s| path.as_os_str() == *s)
}

/// An output path as reports show it: `<stdout>` for standard output.
pub fn shown(path: &Path) -> String {
    if path.as_os_str() == STDIO {
        STDOUT_NAME.to_owned()
    } else {
        path.display().to_string()
    }
}

/// Refuses standard output for an output that must be a file (`what`
/// names it in the message, for example `--checkpoint`).
pub fn check_not_stdout(path: &Path, what: &str) -> Result<()> {
    if is_stdout(path) {
        return Err(Error::Usage(format!(
            "{what} must be a file (it is read back later), not standard output"
        )));
    }
    Ok(())
}

/// Whether standard output was closed when the process started (see
/// [`note_stdout_closed_at_start`]).
static STDOUT_CLOSED_AT_START: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Records that standard output was closed when the process started
/// (`>&-`): the Rust runtime then puts /dev/null in its place, so what is
/// written there would be lost without a word. The command's `main` looks
/// before the runtime starts and tells the library here.
pub fn note_stdout_closed_at_start() {
    STDOUT_CLOSED_AT_START.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// An error if standard output was closed when the process started: an
/// output sent there would be lost, so nothing is written and the run
/// fails instead.
pub fn check_stdout_open() -> Result<()> {
    if !STDOUT_CLOSED_AT_START.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    Err(Error::io(
        Path::new(STDOUT_NAME),
        "cannot write output",
        std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "standard output was closed when perceptron started (>&-), so what is written \
             there would be lost; give it a file (-o FILE) or leave it open",
        ),
    ))
}

/// Whether stdout is a regular file (where per-line flushing only costs).
#[cfg(unix)]
pub fn stdout_is_regular_file() -> bool {
    use std::os::fd::AsFd;
    std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.is_file())
}

#[cfg(not(unix))]
pub fn stdout_is_regular_file() -> bool {
    false
}

/// [`write_stdout`] for an output asked for by name (`-o -`): the model,
/// the predictions or the data the command makes. A reader that goes away
/// before the end has lost it, which is an error (a report printed on
/// standard output ends quietly instead).
pub fn write_stdout_whole(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    to_stdout(write)?.map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::BrokenPipe {
            "its reader went away before the output was complete"
        } else {
            "cannot write output"
        };
        Error::io(Path::new(STDOUT_NAME), why, e)
    })
}

/// Writes what `write` produces to standard output, buffered; a reader
/// that went away (a closed pipe) ends the output quietly. Standard output
/// closed from the start is an error ([`check_stdout_open`]).
pub fn write_stdout(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    match to_stdout(write)? {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::io(Path::new(STDOUT_NAME), "cannot write output", e)),
    }
}

/// Runs `write` on standard output, buffered, and flushes it; the outer
/// error is a standard output closed from the start.
fn to_stdout(
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<std::io::Result<()>> {
    check_stdout_open()?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    Ok(write(&mut out).and_then(|()| out.flush()))
}

/// Writes `path` atomically with what `write` produces. If `write` fails, the
/// temporary file is removed and `path` is untouched. Standard output (see
/// [`is_stdout`]) and other destinations that are not regular files are
/// written directly.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    if is_stdout(path) {
        return write_stdout_whole(write);
    }
    check_destination(path)?;
    // The system follows the links itself, also those a path cannot name
    // (`/dev/stderr` leads to `pipe:[...]`).
    if is_special(path) {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, "cannot open output", e))?;
        let mut out = BufWriter::new(file);
        return write(&mut out)
            .and_then(|()| out.flush())
            .map_err(|e| Error::io(path, "cannot write output", e));
    }
    write_atomic_seekable(path, |w| write(w))
}

/// [`write_atomic`] for writers that need to seek, such as a streamed binary
/// data file whose header is filled in at the end. The writer is buffered;
/// seeking flushes it.
pub fn write_atomic_seekable(
    path: &Path,
    write: impl FnOnce(&mut dyn WriteSeek) -> std::io::Result<()>,
) -> Result<()> {
    check_destination(path)?;
    let original = path;
    if is_stdout(path) || is_special(path) {
        return Err(Error::io(
            original,
            "cannot write output",
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "this format must be written to a regular file (it is completed out of order), not to a pipe or device",
            ),
        ));
    }
    let target = resolve_links(path);
    let path = target.as_path();
    let dir = directory_of(path);
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(path, "cannot create the output's directory", e))?;
    let tmp = tempfile::Builder::new()
        .prefix(".perceptron-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io(path, "cannot create a temporary file next to the output", e))?;
    let _pending = Pending::new(tmp.path(), path);
    let mut out = BufWriter::new(tmp);
    write(&mut out).map_err(|e| Error::io(path, "cannot write output", e))?;
    let tmp = out
        .into_inner()
        .map_err(|e| Error::io(path, "cannot write output", e.into_error()))?;
    // The temporary file is private (0600 on Unix); the output should not
    // be. A replaced file keeps its permissions, a new one gets the usual
    // 0644.
    let permissions = std::fs::metadata(path)
        .map(|m| m.permissions())
        .ok()
        .or_else(default_permissions);
    if let Some(p) = permissions {
        tmp.as_file()
            .set_permissions(p)
            .map_err(|e| Error::io(path, "cannot set the output's permissions", e))?;
    }
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io(path, "cannot flush output to disk", e))?;
    let staged = BATCH.with(|b| b.borrow().is_some());
    if staged {
        let staged = Staged {
            tmp,
            path: path.to_path_buf(),
            _pending,
        };
        BATCH.with(|b| {
            if let Some(list) = b.borrow_mut().as_mut() {
                list.push(staged);
            }
        });
        return Ok(());
    }
    let mut list = pending();
    let tmp_path = tmp.path().to_path_buf();
    let persisted = tmp.persist(path);
    list.retain(|(t, _)| t != &tmp_path);
    drop(list);
    persisted.map_err(|e| Error::io(path, "cannot replace output", e.error))?;
    if let Ok(d) = File::open(dir) {
        // Best effort: not every platform can fsync a directory.
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(unix)]
fn default_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

/// Elsewhere temporary files are not made private: keep what they have.
#[cfg(not(unix))]
fn default_permissions() -> Option<std::fs::Permissions> {
    None
}

/// The directory `path` would be written in.
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Follows symbolic links (also dangling ones, whose target will be
/// created) to the path that would really be written. Gives up after 40
/// links, as the operating system does, and then returns the last path.
fn resolve_links(path: &Path) -> std::path::PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&current) {
            Ok(next) => {
                current = if next.is_absolute() {
                    next
                } else {
                    directory_of(&current).join(next)
                };
            }
            Err(_) => break,
        }
    }
    current
}

/// Whether `path` exists and is not a regular file (nor a directory).
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| !m.is_file() && !m.is_dir())
        .unwrap_or(false)
}

/// Refuses an output that is one of the command's inputs (the same file,
/// whatever the path says), which writing would destroy.
pub fn check_not_an_input(output: &Path, inputs: &[&Path]) -> Result<()> {
    for input in inputs {
        if same_file(output, input) {
            return Err(Error::Usage(format!(
                "the output {} is also an input of this command ({}); writing it would destroy the input: choose another output path",
                output.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// Refuses two outputs of one command that land on the same file, whatever
/// the paths say and whether or not the file exists yet: the later would
/// replace the earlier when the outputs are committed. Each output comes
/// with what it is (`"the model"`, `"the picture"`), for the message.
pub fn check_distinct_outputs(outputs: &[(&str, &Path)]) -> Result<()> {
    let written: Vec<(&str, &Path, PathBuf)> = outputs
        .iter()
        .filter(|(_, p)| !is_stdout(p))
        .map(|&(what, p)| (what, p, landing(p)))
        .collect();
    for (i, (what_a, a, land_a)) in written.iter().enumerate() {
        if let Some((what_b, b, _)) = written[i + 1..].iter().find(|(_, _, l)| l == land_a) {
            return Err(Error::Usage(format!(
                "{what_a} {} and {what_b} {} are the same file ({}): one would replace \
                 the other; choose another path for one of them",
                a.display(),
                b.display(),
                land_a.display()
            )));
        }
    }
    Ok(())
}

/// The file writing `path` replaces: links followed (dangling ones too),
/// its directory without links, `.` or `..` where that directory exists,
/// made absolute by the words alone where it does not yet.
fn landing(path: &Path) -> PathBuf {
    let path = resolve_links(path);
    let dir = directory_of(&path);
    let name = path.file_name().map(PathBuf::from).unwrap_or_default();
    match std::fs::canonicalize(dir) {
        Ok(dir) => dir.join(name),
        Err(_) => {
            let absolute = std::path::absolute(&path).unwrap_or(path);
            let mut clean = PathBuf::new();
            for c in absolute.components() {
                match c {
                    std::path::Component::CurDir => {}
                    std::path::Component::ParentDir => {
                        clean.pop();
                    }
                    c => clean.push(c),
                }
            }
            clean
        }
    }
}

#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.is_file() && x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Lowers the disk space taken as free for outputs to this many bytes: for
/// tests that make small outputs look huge, or to cap what a run writes.
pub const DISK_LIMIT_VAR: &str = "PERCEPTRON_DISK_LIMIT";

/// [`DISK_LIMIT_VAR`] in bytes, None when unset; an error naming the
/// variable when it is not a whole number of bytes.
pub fn disk_limit() -> Result<Option<u64>> {
    let Some(raw) = std::env::var_os(DISK_LIMIT_VAR) else {
        return Ok(None);
    };
    let text = raw.to_string_lossy();
    text.trim().parse::<u64>().map(Some).map_err(|_| {
        Error::Usage(format!(
            "{DISK_LIMIT_VAR} must be a whole number of bytes, not {text:?}"
        ))
    })
}

/// Bytes free for an unprivileged writer on the filesystem holding `dir`
/// (`statvfs`'s available blocks), None where the system does not say.
#[cfg(unix)]
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is a valid value for statvfs to fill.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a struct it may write.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // the fields' widths differ by platform
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

#[cfg(not(unix))]
fn free_bytes(_dir: &Path) -> Option<u64> {
    None
}

/// Refuses, before anything is written, an output that will take at least
/// `bytes` when its disk has less free (or [`DISK_LIMIT_VAR`] says less):
/// a small sparse file can ask for gigabytes of dense or CSV text, and
/// finding out at the full disk costs the time and leaves the disk full
/// for everyone meanwhile. The file being replaced does not count as free:
/// it stays until the new one is complete. Standard output and devices
/// are not checked.
pub fn check_space(path: &Path, bytes: u64) -> Result<()> {
    if is_stdout(path) || is_special(path) {
        return Ok(());
    }
    let target = resolve_links(path);
    let mut dir = directory_of(&target);
    while !dir.exists() {
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p,
            _ => {
                dir = Path::new(".");
                break;
            }
        }
    }
    let limit = disk_limit()?;
    let (free, named) = match (free_bytes(dir), limit) {
        (Some(f), Some(l)) if l < f => (l, true),
        (None, Some(l)) => (l, true),
        (Some(f), _) => (f, false),
        (None, None) => return Ok(()),
    };
    if bytes <= free {
        return Ok(());
    }
    // Both units: the human one to read, the exact one to compare.
    let both = |n: u64| {
        if n < 1024 {
            crate::text::count(n, "byte")
        } else {
            format!("{} ({n} bytes)", crate::memory::human(n))
        }
    };
    Err(Error::io(
        path,
        "cannot write output",
        std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            format!(
                "it would take at least {}, but only {} is free {}; nothing was written",
                both(bytes),
                both(free),
                if named {
                    format!("under {DISK_LIMIT_VAR}")
                } else {
                    format!("on the disk of {}", dir.display())
                }
            ),
        ),
    ))
}

/// Checks that [`write_atomic`] could write `path`: it is not a directory,
/// not a read-only file, and its directory exists or can be created (the
/// nearest existing one on the way is a directory). Commands call this
/// before doing any work, so a mistyped output path does not cost a long
/// run.
pub fn check_destination(path: &Path) -> Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    let refuse = |kind: std::io::ErrorKind, why: String| {
        Err(Error::io(
            path,
            "cannot write output",
            std::io::Error::new(kind, why),
        ))
    };
    if path.is_dir() {
        return refuse(
            std::io::ErrorKind::IsADirectory,
            "it is a directory".to_owned(),
        );
    }
    if let Ok(meta) = std::fs::metadata(path)
        && meta.is_file()
        && meta.permissions().readonly()
    {
        return refuse(
            std::io::ErrorKind::PermissionDenied,
            "the file is read-only; make it writable (chmod u+w) to replace it, or choose \
             another output path"
                .to_owned(),
        );
    }
    let mut dir = directory_of(path);
    // The directory is created when the output is written; here only the
    // nearest existing one is checked.
    while !dir.exists() {
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p,
            _ => return Ok(()),
        }
    }
    if !dir.is_dir() {
        return refuse(
            std::io::ErrorKind::NotADirectory,
            format!("{} is not a directory", dir.display()),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_leaves_existing_file_byte_identical() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.json");
        std::fs::write(&path, b"precious").unwrap();
        let r = write_atomic(&path, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk on fire"))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"precious");
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "temporary file removed");
        write_atomic(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    /// What an interrupted process would remove: the temporary files of
    /// the writes in progress, and only those.
    #[test]
    fn writes_in_progress_are_listed_for_an_interrupt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        let ours = |list: &[(PathBuf, PathBuf)]| -> Vec<PathBuf> {
            list.iter()
                .filter(|(_, d)| d == &path)
                .map(|(t, _)| t.clone())
                .collect()
        };
        let mut seen = Vec::new();
        write_atomic(&path, |w| {
            seen = ours(&pending());
            w.write_all(b"x")
        })
        .unwrap();
        assert_eq!(seen.len(), 1);
        assert!(seen[0].starts_with(dir.path()), "{seen:?}");
        assert!(!seen[0].exists(), "renamed over the output");
        assert!(ours(&pending()).is_empty());
        let _ = write_atomic(&path, |_| Err(std::io::Error::other("fails")));
        assert!(ours(&pending()).is_empty());
    }

    #[test]
    fn destinations_are_checked_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_destination(dir.path()).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: cannot write output: it is a directory",
                dir.path().display()
            )
        );
        // A missing directory is created when the output is written.
        let nested = dir.path().join("no/such/m.json");
        check_destination(&nested).unwrap();
        assert!(!dir.path().join("no").exists(), "checking creates nothing");
        write_atomic(&nested, |w| w.write_all(b"x")).unwrap();
        assert_eq!(std::fs::read(&nested).unwrap(), b"x");
        // A file on the way cannot be a directory.
        let file = dir.path().join("file");
        std::fs::write(&file, b"").unwrap();
        let e = check_destination(&file.join("sub/m.json"))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("/file is not a directory"), "{e}");
        assert!(write_atomic(&file.join("m.json"), |w| w.write_all(b"x")).is_err());
        check_destination(&dir.path().join("m.json")).unwrap();
        check_destination(Path::new("m.json")).unwrap();
        check_destination(Path::new("-")).unwrap();
    }
}

#[cfg(test)]
mod batch_tests {
    use super::*;

    /// A run's outputs are replaced together or not at all.
    #[test]
    fn a_batch_replaces_every_output_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.svg"));
        std::fs::write(&a, b"old a").unwrap();
        std::fs::write(&b, b"old b").unwrap();
        {
            let _batch = Batch::begin();
            write_atomic(&a, |w| w.write_all(b"new a")).unwrap();
            // Written, not yet in place.
            assert_eq!(std::fs::read(&a).unwrap(), b"old a");
            assert!(write_atomic(&b, |_| Err(std::io::Error::other("disk full"))).is_err());
            // Dropped without a commit: the run failed.
        }
        assert_eq!(std::fs::read(&a).unwrap(), b"old a");
        assert_eq!(std::fs::read(&b).unwrap(), b"old b");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no temporary left"
        );
        let batch = Batch::begin();
        write_atomic(&a, |w| w.write_all(b"new a")).unwrap();
        let inner = Batch::begin();
        write_atomic(&b, |w| w.write_all(b"new b")).unwrap();
        inner.commit().unwrap();
        assert_eq!(
            std::fs::read(&b).unwrap(),
            b"old b",
            "the outer batch commits"
        );
        assert!(
            pending().iter().any(|(_, d)| d == &b),
            "staged files are removed on an interrupt"
        );
        batch.commit().unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"new a");
        assert_eq!(std::fs::read(&b).unwrap(), b"new b");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        // Without a batch, a write is in place at once.
        write_atomic(&a, |w| w.write_all(b"newer")).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"newer");
    }
}

#[cfg(all(test, unix))]
mod special_file_tests {
    use super::*;

    #[test]
    fn a_symlink_is_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.json");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        write_atomic(&link, |w| w.write_all(b"new")).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        // A dangling link creates its target.
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("created.json", &dangling).unwrap();
        write_atomic(&dangling, |w| w.write_all(b"x")).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("created.json")).unwrap(),
            b"x"
        );
    }

    #[test]
    fn devices_are_written_in_place_not_replaced() {
        write_atomic(Path::new("/dev/null"), |w| w.write_all(b"discarded")).unwrap();
        let meta = std::fs::metadata("/dev/null").unwrap();
        assert!(!meta.is_file(), "/dev/null must still be a device");
        let e = write_atomic_seekable(Path::new("/dev/null"), |w| w.write_all(b"x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be written to a regular file"), "{e}");
    }

    #[test]
    fn an_output_that_is_an_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        std::fs::write(&a, b"1,2").unwrap();
        let alias = dir.path().join("./a.csv");
        let e = check_not_an_input(&alias, &[Path::new("/nonexistent"), &a])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is also an input"), "{e}");
        check_not_an_input(&dir.path().join("b.csv"), &[&a]).unwrap();
    }
}

#[cfg(all(test, unix))]
mod permission_tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Renaming over a read-only file would replace it whatever its
    /// permissions say (even for root, which `cp` overrides too but is
    /// refused here: the bits are read, not tried).
    #[test]
    fn a_read_only_output_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kept.json");
        std::fs::write(&path, b"precious").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = write_atomic(&path, |w| w.write_all(b"new"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "{}: cannot write output: the file is read-only; make it writable (chmod u+w) \
                 to replace it, or choose another output path",
                path.display()
            )
        );
        assert!(check_destination(&path).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"precious");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    #[test]
    fn outputs_are_not_private_and_keep_existing_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.json");
        write_atomic(&new, |w| w.write_all(b"x")).unwrap();
        assert_eq!(
            std::fs::metadata(&new).unwrap().permissions().mode() & 0o777,
            0o644
        );
        std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&new, |w| w.write_all(b"y")).unwrap();
        assert_eq!(
            std::fs::metadata(&new).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }
}
