//! Standard output for every command: buffered, and never a panic.
//!
//! `println!` panics when stdout is a closed pipe or a full disk, which would
//! turn `perceptron train ... | head -1` into a crash and lose the exit code
//! that says whether training converged. Here a closed pipe means the reader
//! has gone away: a summary ends quietly. (An output asked for by name,
//! `-o -`, is written by [`crate::output::write_stdout_whole`]: its loss is
//! an error.) Any other failure is an error naming `<stdout>`.
//!
//! Every command prints its summary (text or `--json`) on stdout, unless one
//! of its outputs goes there (`-o -`, `--predictions`): the summary then
//! goes to stderr, so that stdout holds only the output.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};

/// A command's summary: `record` as one line of JSON with `--json`, else
/// the text `rendered` gives.
pub fn summary<T: Serialize>(
    json: bool,
    record: &T,
    rendered: impl FnOnce() -> String,
) -> Result<String> {
    match json {
        true => Ok(serde_json::to_string(record).map_err(|e| Error::Train(e.to_string()))? + "\n"),
        false => Ok(rendered()),
    }
}

/// Writes to stdout, buffered. A closed pipe (`perceptron predict ... | head`)
/// ends the output quietly rather than as an error.
pub fn write_stdout(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    crate::output::write_stdout(write)
}

/// Prints a command's summary `text` (ending in a newline): on stdout, or on
/// stderr when `stdout_taken` (an output of the command goes to stdout).
pub fn print_summary(text: &str, stdout_taken: bool) -> Result<()> {
    if !stdout_taken {
        return print(text);
    }
    let mut err = io::stderr().lock();
    // A summary that cannot reach stderr has nowhere else to go.
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
    Ok(())
}

/// Whether any of `outputs` is standard output (`-` or `/dev/stdout`).
pub fn any_stdout<'a>(outputs: impl IntoIterator<Item = Option<&'a Path>>) -> bool {
    outputs.into_iter().flatten().any(crate::output::is_stdout)
}

/// Prints `text` as it is (no newline added).
pub fn print(text: &str) -> Result<()> {
    write_stdout(|out| out.write_all(text.as_bytes()))
}

/// Prints `text` and a newline.
pub fn print_line(text: &str) -> Result<()> {
    write_stdout(|out| writeln!(out, "{text}"))
}
