//! What the training loop tells Python while it runs without the GIL:
//! Ctrl-C (Python's pending signals, checked a few times a second), the
//! epochs when `verbose`, and warnings for `warnings.warn`.

use std::time::{Duration, Instant};

use perceptron::Real;
use perceptron::train::{Observer, State};
use pyo3::prelude::*;

/// How often the loop's polls look at Python's signals: often enough for
/// Ctrl-C to stop within a second, rarely enough that taking the GIL
/// costs nothing measurable.
const SIGNAL_CHECK_EVERY: Duration = Duration::from_millis(50);

/// An observer for a fit run with the GIL released.
pub struct PythonObserver {
    last_check: Instant,
    /// The exception a signal handler raised (KeyboardInterrupt for Ctrl-C):
    /// the loop stops, and the fit raises it.
    pub interrupt: Option<PyErr>,
    verbose: u32,
    /// Warnings of the loop (a device that failed, say), for the caller to
    /// issue once the GIL is back.
    pub warnings: Vec<String>,
    rows: usize,
}

impl PythonObserver {
    pub fn new(verbose: u32, rows: usize) -> Self {
        PythonObserver {
            last_check: Instant::now(),
            interrupt: None,
            verbose,
            warnings: Vec::new(),
            rows,
        }
    }
}

impl<F: Real> Observer<F> for PythonObserver {
    fn on_epoch_end(&mut self, state: &State<F>) -> perceptron::Result<()> {
        if self.verbose > 0 {
            let epoch = state.mistakes_per_epoch.len();
            let mistakes = state.mistakes_per_epoch.last().copied().unwrap_or(0);
            let total: u64 = state.mistakes_per_epoch.iter().sum();
            let line = format!(
                "-- Epoch {epoch}: {mistakes} mistakes in {} rows ({total} in total)\n",
                self.rows
            );
            // Through sys.stdout, so that notebooks and redirections see it.
            Python::attach(|py| {
                let written = py
                    .import("sys")
                    .and_then(|sys| sys.getattr("stdout"))
                    .and_then(|out| out.call_method1("write", (line,)));
                if let Err(e) = written {
                    e.restore(py);
                    // Printing is best effort; a broken stdout stops nothing.
                    PyErr::take(py);
                }
            });
        }
        Ok(())
    }

    fn on_warning(&mut self, message: &str) {
        self.warnings.push(message.to_owned());
    }

    fn should_stop(&mut self) -> bool {
        if self.interrupt.is_some() {
            return true;
        }
        if self.last_check.elapsed() < SIGNAL_CHECK_EVERY {
            return false;
        }
        self.last_check = Instant::now();
        self.interrupt = Python::attach(|py| py.check_signals().err());
        self.interrupt.is_some()
    }
}
