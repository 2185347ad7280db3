//! Writing output files atomically: a failed or interrupted run never leaves a
//! half-written file and never replaces an existing one.
//!
//! The content goes to a temporary file in the destination's directory, is
//! flushed and fsynced, then renamed over the destination (atomic on POSIX
//! filesystems), and the directory is fsynced so the rename survives a crash.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `path` atomically with what `write` produces. If `write` fails, the
/// temporary file is removed and `path` is untouched.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if path.is_dir() {
        return Err(Error::io(
            path,
            "cannot write output",
            std::io::Error::new(std::io::ErrorKind::IsADirectory, "it is a directory"),
        ));
    }
    let tmp = tempfile::Builder::new()
        .prefix(".perceptron-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io(path, "cannot create a temporary file next to the output", e))?;
    let mut out = BufWriter::new(tmp);
    write(&mut out).map_err(|e| Error::io(path, "cannot write output", e))?;
    let tmp = out
        .into_inner()
        .map_err(|e| Error::io(path, "cannot write output", e.into_error()))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| Error::io(path, "cannot flush output to disk", e))?;
    tmp.persist(path)
        .map_err(|e| Error::io(path, "cannot replace output", e.error))?;
    if let Ok(d) = File::open(dir) {
        // Best effort: not every platform can fsync a directory.
        let _ = d.sync_all();
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
}
