//! Memory as the operating system counts it: the process's own peak, for
//! the reports of long runs, and what is available, so that a run too big
//! for the machine is refused up front instead of being killed hours in.

use std::path::Path;

use crate::error::{Error, Result};

/// Bytes training needs per weight and class beyond the data itself,
/// measured with margin: the host's weights, the engine's copy, the
/// pocket or averaging accumulators, and the model file's text on its way
/// to disk (about 20 bytes in all, measured on 10^7 features).
pub const TRAIN_BYTES_PER_WEIGHT: u64 = 24;

/// Peak resident memory of this process in bytes (Linux's `VmHWM`), or None
/// where the system does not say. Read from /proc rather than getrusage:
/// a spawned child's rusage starts from its parent's high-water mark.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let mut words = line["VmHWM:".len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib * 1024)
}

/// Memory the system could give this process now without swapping
/// (Linux's `MemAvailable`), or None where the system does not say.
pub fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line["MemAvailable:".len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib * 1024)
}

/// Refuses a run whose weights cannot fit in memory. A LIBSVM file with one
/// large feature index sets the feature count for every row, so a single
/// line can ask for billions of weights; the out-of-memory killer would
/// otherwise end the run only after minutes of swapping.
pub fn check_weights_fit(source: &Path, weights: usize, classes: usize) -> Result<()> {
    check_weights_fit_in(source, weights, classes, available_bytes())
}

fn check_weights_fit_in(
    source: &Path,
    weights: usize,
    classes: usize,
    available: Option<u64>,
) -> Result<()> {
    let needed = (weights as u64)
        .saturating_mul(classes as u64)
        .saturating_mul(TRAIN_BYTES_PER_WEIGHT);
    let Some(available) = available else {
        return Ok(());
    };
    if needed <= available {
        return Ok(());
    }
    let per_class = if classes > 1 {
        format!(" for each of {classes} classes")
    } else {
        String::new()
    };
    Err(Error::Data {
        path: source.to_path_buf(),
        message: format!(
            "{weights} weights{per_class} need about {} of memory to train and save \
             ({TRAIN_BYTES_PER_WEIGHT} bytes each), but {} is available; the number of \
             features is the largest feature index in the file, so renumber the features \
             densely (or hash them into fewer columns), or use a machine with more memory",
            gib(needed),
            gib(available)
        ),
    })
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// `12.3 MiB` style, for the human summaries.
pub fn describe(bytes: Option<u64>) -> String {
    match bytes {
        Some(b) => format!("{:.1} MiB peak resident", b as f64 / (1u64 << 20) as f64),
        None => "peak not reported by this system".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_high_water_mark_in_bytes() {
        let status = "Name:\tperceptron\nVmPeak:\t  99 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 1 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(12345 * 1024));
        assert_eq!(parse_vm_hwm("VmHWM:\t12 MB\n"), None);
        assert_eq!(parse_vm_hwm("VmRSS:\t12 kB\n"), None);
    }

    #[test]
    fn weights_beyond_the_available_memory_are_refused_with_the_numbers() {
        let src = Path::new("wide.svm");
        let gb = 1u64 << 30;
        assert!(check_weights_fit_in(src, 1 << 20, 1, Some(gb)).is_ok());
        assert!(check_weights_fit_in(src, usize::MAX, 7, None).is_ok());
        let e = check_weights_fit_in(src, 1 << 31, 1, Some(2 * gb))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("wide.svm: 2147483648 weights need about 48.0 GiB"),
            "{e}"
        );
        assert!(e.contains("but 2.0 GiB is available"), "{e}");
        let e = check_weights_fit_in(src, 1 << 26, 10, Some(gb))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("for each of 10 classes need about 15.0 GiB"),
            "{e}"
        );
        // No overflow at absurd sizes.
        assert!(check_weights_fit_in(src, usize::MAX, usize::MAX, Some(u64::MAX - 1)).is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_a_peak() {
        assert!(available_bytes().expect("Linux reports MemAvailable") > 0);
        let peak = peak_rss_bytes().expect("Linux reports VmHWM");
        assert!(peak > 1 << 20, "{peak}");
    }
}
