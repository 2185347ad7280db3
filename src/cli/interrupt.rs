//! Ctrl-C for long-running commands (`train`, `online`): the first one asks
//! the command to stop at its next safe point and save its state; a second
//! one exits at once with status 130.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::exit;

/// The flag the first Ctrl-C sets. The handler is installed once per
/// process, on first use.
pub fn flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let seen = flag.clone();
        // Without a handler (e.g. it cannot be installed), Ctrl-C simply
        // ends the process, which never leaves a half-written file either.
        let _ = ctrlc::set_handler(move || {
            if seen.swap(true, Ordering::SeqCst) {
                std::process::exit(exit::INTERRUPTED);
            }
        });
        flag
    })
    .clone()
}
