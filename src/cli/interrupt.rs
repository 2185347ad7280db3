//! Ctrl-C and termination (SIGINT, SIGTERM, SIGHUP) for every command.
//! Commands with state worth saving (`train`, `online`) take the [`flag`]:
//! the first signal asks them to stop at their next safe point and save it;
//! a second one stops at once. Every other command stops at once. Stopping
//! at once first removes the temporary files of outputs still being written
//! ([`crate::output::abandon_pending`]), so an interrupted `gen` or `convert`
//! leaves no `.perceptron-*.tmp` file and every existing output as it was.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::exit;

/// Whether the running command saves its state on the first signal.
static SAVES: AtomicBool = AtomicBool::new(false);

fn stop_requested() -> &'static Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Installs the handler; called once, before any command runs. Without a
/// handler (it cannot be installed) a signal ends the process the default
/// way, which can leave a temporary file but never a half-written output.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        let first = !stop_requested().swap(true, Ordering::SeqCst);
        if first && SAVES.load(Ordering::SeqCst) {
            return;
        }
        crate::output::abandon_pending(|outputs| {
            eprintln!("perceptron: {}", stopped_message(outputs));
            std::process::exit(exit::INTERRUPTED)
        })
    });
}

/// The flag the first signal sets, for a command that stops at a safe point
/// and saves its state: from this call on, the first signal no longer ends
/// the process.
pub fn flag() -> Arc<AtomicBool> {
    SAVES.store(true, Ordering::SeqCst);
    stop_requested().clone()
}

/// What a command stopped at once tells the user.
fn stopped_message(outputs: &[PathBuf]) -> String {
    if outputs.is_empty() {
        return "interrupted".to_owned();
    }
    let names: Vec<String> = outputs.iter().map(|p| p.display().to_string()).collect();
    format!(
        "interrupted: {} not written (the partial output was removed; an existing file is left as it was)",
        if names.len() == 1 {
            format!("{} was", names[0])
        } else {
            format!("{} were", names.join(", "))
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_outputs_not_written() {
        assert_eq!(stopped_message(&[]), "interrupted");
        assert_eq!(
            stopped_message(&[PathBuf::from("x.pbin")]),
            "interrupted: x.pbin was not written (the partial output was removed; an existing \
             file is left as it was)"
        );
        assert!(
            stopped_message(&[PathBuf::from("a.csv"), PathBuf::from("b.csv")])
                .starts_with("interrupted: a.csv, b.csv were not written")
        );
    }
}
