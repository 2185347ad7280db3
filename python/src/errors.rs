//! The library's errors as Python exceptions, in the command line's words
//! where the two agree: bad data and bad models are `ValueError`, files that
//! cannot be opened are `OSError` (its `FileNotFoundError` and
//! `PermissionError` subclasses where they apply), a GPU that cannot be used
//! is `RuntimeError`.

use std::io::ErrorKind;

use perceptron::Error;
use perceptron::error::{Remedy, hint_text};
use pyo3::PyErr;
use pyo3::exceptions::{
    PyFileNotFoundError, PyOSError, PyPermissionError, PyRuntimeError, PyValueError,
};

/// `e` as the Python exception a caller of the package expects.
pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::Io { ref source, .. } => {
            let text = e.to_string();
            match source.kind() {
                ErrorKind::NotFound => PyFileNotFoundError::new_err(text),
                ErrorKind::PermissionDenied => PyPermissionError::new_err(text),
                _ => PyOSError::new_err(text),
            }
        }
        // The command line's hint names its flag; say the keyword instead.
        Error::Gpu(message) => PyRuntimeError::new_err(format!(
            "{message}\nhint: pass backend=\"cpu\" to train on the CPU instead"
        )),
        Error::System(message) => PyRuntimeError::new_err(message),
        Error::Parse {
            location,
            message,
            hint,
        } => PyValueError::new_err(format!(
            "{location}: {message}{}",
            hint_text(hint.as_ref(), remedy)
        )),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A reading remedy as the package's loaders take it.
fn remedy(r: Remedy) -> String {
    match r {
        Remedy::ReadAsCsv => "read it with perceptron.load_csv".to_owned(),
        Remedy::Delimiter(b'\t') => "pass delimiter='\\t'".to_owned(),
        Remedy::Delimiter(d) => format!("pass delimiter='{}'", char::from(d)),
        Remedy::Header => "pass header=True".to_owned(),
        Remedy::LabelColumn(c) => match c.parse::<usize>() {
            Ok(n) => format!("pass label_column={n}"),
            Err(_) => format!("pass label_column='{c}'"),
        },
        Remedy::ZeroBased => "pass zero_based=True".to_owned(),
    }
}

/// A message about the array argument `name` (`X`, `y`, ...), said as the
/// command line says a message about a file: `X: row 3, feature 2: ...`.
pub fn about(name: &str, message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{name}: {message}"))
}
