//! Reading back the files a run saves (models and checkpoints): whole, but
//! capped in size, since such a file may come from anywhere and is parsed
//! in memory. Below the model and the training loop, which both read them.

use std::io::{BufReader, Read};
use std::path::Path;

use crate::error::{Error, Result};

/// Model files larger than this are refused rather than read into memory.
pub const MAX_MODEL_BYTES: u64 = 1 << 30;

/// The files [`read_capped`] reads, for its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Model,
    Checkpoint,
}

/// The bytes of a model or checkpoint file, at most [`MAX_MODEL_BYTES`]: a
/// larger file is refused before it is read, and a file that says nothing
/// of its size (a device such as /dev/zero, a pipe) once it has given more.
pub fn read_capped(path: &Path, kind: Kind) -> Result<Vec<u8>> {
    let (what, open, read) = match kind {
        Kind::Model => (
            "model file",
            "cannot open model file",
            "cannot read model file",
        ),
        Kind::Checkpoint => (
            "checkpoint",
            "cannot open checkpoint",
            "cannot read checkpoint",
        ),
    };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, open, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, read, e))?;
    if meta.is_dir() {
        return Err(Error::model(path, format!("is a directory, not a {what}")));
    }
    let too_big = |len: u64| {
        Error::model(
            path,
            format!("is {len} bytes or more; {what}s over {MAX_MODEL_BYTES} bytes are refused"),
        )
    };
    if meta.len() > MAX_MODEL_BYTES {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::new();
    BufReader::new(file)
        .take(MAX_MODEL_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, read, e))?;
    if bytes.len() as u64 > MAX_MODEL_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}
