//! Typed errors: each names the rule that was broken and the value that broke it.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where in an input file something went wrong (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub line: u64,
    /// 1-based character column of the offending token, when known.
    pub column: Option<u64>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)?;
        if let Some(c) = self.column {
            write!(f, ":{c}")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong, grouped by what the user must fix.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be opened, read or written.
    #[error("{path}: {action}: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// A line of a data file breaks the format.
    #[error("{location}: {message}")]
    Parse { location: Location, message: String },

    /// The data as a whole cannot be used (empty, one class, ...).
    #[error("{path}: {message}", path = .path.display())]
    Data { path: PathBuf, message: String },

    /// A model file is unreadable, corrupt, or does not fit the data.
    #[error("{path}: {message}", path = .path.display())]
    Model { path: PathBuf, message: String },

    /// Training could not continue (for example, a weight overflowed).
    #[error("{0}")]
    Train(String),

    /// A GPU adapter is missing, lacks a feature, or failed.
    #[error("{0}\nhint: run with `--backend cpu` to train on the CPU instead")]
    Gpu(String),

    /// Options that contradict each other or a value out of range.
    #[error("{0}")]
    Usage(String),

    /// The system refused a resource the tool needs (worker threads).
    #[error("{0}")]
    System(String),
}

impl Error {
    pub fn io(path: &Path, action: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }

    pub fn parse(path: &Path, line: u64, column: Option<u64>, message: impl Into<String>) -> Self {
        Error::Parse {
            location: Location {
                path: path.to_path_buf(),
                line,
                column,
            },
            message: message.into(),
        }
    }

    pub fn data(path: &Path, message: impl Into<String>) -> Self {
        Error::Data {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    pub fn model(path: &Path, message: impl Into<String>) -> Self {
        Error::Model {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Process exit codes, documented in the README and in `--help`.
pub mod exit {
    /// Success: the command did what was asked (training converged).
    pub const SUCCESS: i32 = 0;
    /// An error: bad input, unreadable file, device failure, ...
    pub const ERROR: i32 = 1;
    /// Bad command-line usage (reported by the argument parser).
    pub const USAGE: i32 = 2;
    /// Training ran to `--max-epochs` without an epoch free of mistakes.
    /// The last model was still saved.
    pub const NOT_CONVERGED: i32 = 3;
    /// Interrupted by Ctrl-C (SIGINT), SIGTERM or SIGHUP.
    pub const INTERRUPTED: i32 = 130;
}
