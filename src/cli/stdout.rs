//! Standard output for every command: buffered, and never a panic.
//!
//! `println!` panics when stdout is a closed pipe or a full disk, which would
//! turn `perceptron train ... | head -1` into a crash and lose the exit code
//! that says whether training converged. Here a closed pipe means the reader
//! has gone away: the output ends quietly. Any other failure is an error
//! naming `<stdout>`.

use std::io::{self, Write};
use std::path::Path;

use crate::error::{Error, Result};

/// Writes to stdout, buffered. A closed pipe (`perceptron predict ... | head`)
/// ends the output quietly rather than as an error.
pub fn write_stdout(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::io(Path::new("<stdout>"), "cannot write output", e)),
    }
}

/// Prints `text` as it is (no newline added).
pub fn print(text: &str) -> Result<()> {
    write_stdout(|out| out.write_all(text.as_bytes()))
}

/// Prints `text` and a newline.
pub fn print_line(text: &str) -> Result<()> {
    write_stdout(|out| writeln!(out, "{text}"))
}
