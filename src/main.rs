//! The `perceptron` command: a thin shell around the library's CLI module.

fn main() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if closed_stdout::CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        perceptron::output::note_stdout_closed_at_start();
    }
    std::process::exit(perceptron::cli::main());
}

/// Whether standard output was closed when the process started
/// (`perceptron train d.csv -o - >&-`). The Rust runtime opens /dev/null in
/// place of a closed standard descriptor before `main`, so whatever went
/// there would vanish with exit 0; this looks first, from the ELF
/// constructors that run before the runtime starts.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod closed_stdout {
    use std::sync::atomic::{AtomicBool, Ordering};

    pub static CLOSED: AtomicBool = AtomicBool::new(false);

    extern "C" fn look() {
        // SAFETY: F_GETFD only asks whether descriptor 1 is open; it reads
        // and changes nothing.
        let closed = unsafe { libc::fcntl(1, libc::F_GETFD) } == -1;
        CLOSED.store(closed, Ordering::Relaxed);
    }

    #[used]
    #[unsafe(link_section = ".init_array")]
    static LOOK: extern "C" fn() = look;
}
