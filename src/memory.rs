//! Memory as the operating system counts it: the process's own peak, for
//! the reports of long runs, and what is available, so that a run too big
//! for the machine is refused with a message instead of being aborted by the
//! allocator or killed by the out-of-memory killer hours in.

use std::path::Path;

use crate::error::{Error, Result};

/// Lowers the memory taken as available to this many bytes: for tests that
/// make small inputs look huge, or to keep a run within a budget.
pub const LIMIT_VAR: &str = "PERCEPTRON_MEMORY_LIMIT";

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
/// (Linux's `MemAvailable`), lowered to [`LIMIT_VAR`] when that is set and
/// to the address space left under `ulimit -v`; None where none says.
pub fn available_bytes() -> Option<u64> {
    available().map(|(bytes, _)| bytes)
}

/// What sets the memory taken as available.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ceiling {
    /// The memory the system has free (`MemAvailable`).
    System,
    /// [`LIMIT_VAR`].
    Variable,
    /// The address space left under the process's limit on it (`ulimit
    /// -v`), less what the threads need besides the data.
    AddressSpace,
}

/// [`available_bytes`], and which of its figures is the lowest.
pub fn available() -> Option<(u64, Ceiling)> {
    [
        system_available().map(|a| (a, Ceiling::System)),
        limit().ok().flatten().map(|l| (l, Ceiling::Variable)),
        address_space_left().map(|a| (a, Ceiling::AddressSpace)),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|&(bytes, _)| bytes)
}

/// Address space kept free under `ulimit -v` for what the process allocates
/// besides the data (each thread's blocks of text in flight, line buffers,
/// the error message): growing the data into the last of it would leave one
/// of those small allocations to fail, and Rust aborts on that (seen with
/// 16 threads under a 150 MB limit: the values' growth took all but the
/// last few KiB, and a 4,001-byte line buffer aborted). The large buffers
/// (blocks of text, each block's rows) are checked against what is left
/// like the data, so the spare is for the small ones.
const SPARE_ADDRESS_SPACE: u64 = 16 << 20;
const SPARE_ADDRESS_SPACE_PER_THREAD: u64 = 1 << 20;

/// Whether `bytes` more fit in the address space left under `ulimit -v`
/// without going into the spare (always, without such a limit): for the
/// large buffers that are not the data, checked without asking
/// `MemAvailable` each time.
pub(crate) fn fits_address_space(bytes: u64) -> bool {
    address_space_left().is_none_or(|left| bytes <= left)
}

/// The address space this process may still map under its limit (`ulimit
/// -v`, RLIMIT_AS), less [`SPARE_ADDRESS_SPACE`] and its share per worker
/// thread (or less half of it, if that is less); None without a limit, or
/// where the system does not say.
pub(crate) fn address_space_left() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit only writes the struct passed.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0
            || limit.rlim_cur == libc::RLIM_INFINITY
        {
            return None;
        }
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
        // SAFETY: sysconf reads a system constant.
        let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
        let left = limit.rlim_cur.saturating_sub(pages.saturating_mul(page));
        // Half of what is left at most: many threads under a tight limit
        // still read a small file.
        let spare = (SPARE_ADDRESS_SPACE
            + SPARE_ADDRESS_SPACE_PER_THREAD * rayon::current_num_threads() as u64)
            .min(left / 2);
        Some(left - spare)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

fn system_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line["MemAvailable:".len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib * 1024)
}

/// [`LIMIT_VAR`] in bytes, None when unset; an error naming the variable
/// when it is not a whole number of bytes (the command line checks this
/// first, so elsewhere a bad value is simply not a limit).
pub fn limit() -> Result<Option<u64>> {
    let Some(raw) = std::env::var_os(LIMIT_VAR) else {
        return Ok(None);
    };
    parse_limit(&raw.to_string_lossy()).map(Some)
}

fn parse_limit(text: &str) -> Result<u64> {
    text.trim().parse::<u64>().map_err(|_| {
        Error::Usage(format!(
            "{LIMIT_VAR} must be a whole number of bytes, not {text:?}"
        ))
    })
}

/// Memory that could not be had: what was asked for and what there was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shortfall {
    /// Bytes of the allocation that was refused.
    pub needed: u64,
    /// What was available, and what set that figure (None: the system
    /// does not say, and the allocation itself failed).
    pub available: Option<(u64, Ceiling)>,
}

impl std::fmt::Display for Shortfall {
    /// "takes 2.0 GiB, but 1.0 GiB is available".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "takes {}, but ", human(self.needed))?;
        match self.available {
            Some((a, Ceiling::Variable)) => {
                write!(f, "only {} is available ({LIMIT_VAR})", human(a))
            }
            Some((a, Ceiling::AddressSpace)) => write!(
                f,
                "only {} of address space is left under the limit on it (`ulimit -v`)",
                human(a)
            ),
            Some((a, Ceiling::System)) => write!(f, "only {} is available", human(a)),
            None => write!(f, "the system could not provide it"),
        }
    }
}

impl Shortfall {
    /// "the data needs more memory than is available: {what} takes ...,
    /// but only ... is available{tail}", about the data file `path`.
    pub fn refusal(self, path: &Path, what: &str, tail: &str) -> Error {
        Error::data(
            path,
            format!("the data needs more memory than is available: {what} {self}{tail}"),
        )
    }

    /// The error of a data file whose rows do not fit, naming the line
    /// reached.
    pub fn data_error(self, path: &Path, what: &str, line: u64) -> Error {
        self.refusal(
            path,
            &format!("storing {what}"),
            &format!(
                ", after line {line}; use a machine with more memory or part of the file \
                 (`perceptron online` learns from a file of any length)"
            ),
        )
    }
}

/// Checks that `bytes` more could be allocated now.
pub fn check(bytes: u64) -> std::result::Result<(), Shortfall> {
    match available() {
        Some((a, ceiling)) if bytes > a => Err(Shortfall {
            needed: bytes,
            available: Some((a, ceiling)),
        }),
        _ => Ok(()),
    }
}

/// Bytes of `n` elements of `T`, saturating.
pub fn bytes_of<T>(n: usize) -> u64 {
    (n as u64).saturating_mul(std::mem::size_of::<T>() as u64)
}

/// Makes room in `v` for `additional` more elements, refusing instead of
/// aborting when memory is short. Costs one comparison when there is room
/// already; only growth asks the system.
#[inline]
pub fn reserve<T>(v: &mut Vec<T>, additional: usize) -> std::result::Result<(), Shortfall> {
    if v.capacity() - v.len() >= additional {
        return Ok(());
    }
    grow(v, additional)
}

/// Grows like `Vec` does (doubling, so pushes stay amortised O(1)), but
/// first compares the new capacity with the memory available and then
/// allocates with `try_reserve`, so that neither a request the machine
/// cannot meet nor a failing allocator (`ulimit -v`) aborts the process.
/// Near the limit it grows by an eighth instead of doubling.
#[cold]
fn grow<T>(v: &mut Vec<T>, additional: usize) -> std::result::Result<(), Shortfall> {
    grow_within(v, additional, available())
}

fn grow_within<T>(
    v: &mut Vec<T>,
    additional: usize,
    available: Option<(u64, Ceiling)>,
) -> std::result::Result<(), Shortfall> {
    let cap = v.capacity();
    let Some(needed) = v.len().checked_add(additional) else {
        return Err(Shortfall {
            needed: u64::MAX,
            available,
        });
    };
    let fits = |n: usize| available.is_none_or(|(a, _)| bytes_of::<T>(n) <= a);
    let doubled = needed.max(cap.saturating_mul(2)).max(8);
    let modest = needed.max(cap.saturating_add(cap / 8));
    let target = if fits(doubled) { doubled } else { modest };
    if !fits(target) {
        return Err(Shortfall {
            needed: bytes_of::<T>(target),
            available,
        });
    }
    if v.try_reserve_exact(target - v.len()).is_ok() {
        return Ok(());
    }
    // The allocator said no (an address-space limit): ask for less once.
    if modest < target && v.try_reserve_exact(modest - v.len()).is_ok() {
        return Ok(());
    }
    Err(Shortfall {
        needed: bytes_of::<T>(modest),
        available: None,
    })
}

/// Reserves room for `additional` more elements when that fits in the
/// memory available (for a size guessed from a file's length, which can be
/// far off); otherwise reserves nothing and leaves it to [`reserve`].
pub fn reserve_hint<T>(v: &mut Vec<T>, additional: usize) {
    let total = v.len().saturating_add(additional);
    if check(bytes_of::<T>(total)).is_ok() {
        let _ = v.try_reserve_exact(additional);
    }
}

/// A vector of `n` copies of `value`, or the shortfall.
pub fn filled<T: Clone>(n: usize, value: T) -> std::result::Result<Vec<T>, Shortfall> {
    check(bytes_of::<T>(n))?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Shortfall {
        needed: bytes_of::<T>(n),
        available: None,
    })?;
    v.resize(n, value);
    Ok(v)
}

/// `n` copies of `value` in pages the process already owns: every page
/// written once, here, by one thread. A zeroed allocation is otherwise
/// mapped lazily to the system's shared zero page, and the first write to
/// each page then costs a copy-on-write fault; when other threads are
/// running (the CPU engine's walk ahead), each such fault also interrupts
/// their cores to flush a stale mapping, which on 10^6 sparse weights made
/// a mistake-dense first epoch twice as slow as the textbook loop.
pub fn resident<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v = vec![value; n];
    let per_page = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    for i in (0..n).step_by(per_page) {
        // An opaque value: the compiler cannot drop the write as a no-op.
        v[i] = std::hint::black_box(value);
    }
    v
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
            human(needed),
            human(available)
        ),
    })
}

/// `512 bytes`, `3.0 KiB`, `1.5 MiB`, `48.0 GiB`.
pub fn human(bytes: u64) -> String {
    // GiB at most: sizes beyond are absurd requests, easier to compare in one unit.
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return crate::text::count(bytes, "byte");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
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

    #[test]
    fn vectors_grow_by_doubling_until_the_limit_then_refuse() {
        let mut v: Vec<u32> = Vec::new();
        grow_within(&mut v, 1, Some((1 << 20, Ceiling::System))).unwrap();
        assert_eq!(v.capacity(), 8);
        v.resize(8, 0);
        grow_within(&mut v, 1, Some((1 << 20, Ceiling::System))).unwrap();
        assert_eq!(v.capacity(), 16);
        // 1000 u32 fit in 4 KiB but 2000 do not: an eighth more instead.
        let mut v: Vec<u32> = vec![0; 1000];
        grow_within(&mut v, 1, Some((4500, Ceiling::System))).unwrap();
        assert_eq!(v.capacity(), 1125);
        v.resize(1125, 0);
        let e = grow_within(&mut v, 1, Some((4500, Ceiling::System))).unwrap_err();
        assert_eq!(
            e,
            Shortfall {
                needed: 4 * 1265,
                available: Some((4500, Ceiling::System)),
            }
        );
        assert_eq!(v.capacity(), 1125, "nothing allocated on a refusal");
        // Unknown availability: the allocator decides, and an impossible
        // request is an error, not an abort.
        let mut v: Vec<u64> = vec![0; 4];
        let e = grow_within(&mut v, usize::MAX / 16, None).unwrap_err();
        assert_eq!(e.available, None);
        assert!(grow_within(&mut v, usize::MAX, None).is_err());
    }

    #[test]
    fn shortfalls_say_both_numbers_in_units() {
        let s = Shortfall {
            needed: 3 << 29,
            available: Some((1 << 30, Ceiling::System)),
        };
        assert_eq!(
            s.to_string(),
            "takes 1.5 GiB, but only 1.0 GiB is available"
        );
        assert_eq!(human(1), "1 byte");
        assert_eq!(human(1023), "1023 bytes");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(5 << 40), "5120.0 GiB");
        let e = s.data_error(Path::new("big.csv.gz"), "the feature values", 7);
        assert_eq!(
            e.to_string(),
            "big.csv.gz: the data needs more memory than is available: storing the feature \
             values takes 1.5 GiB, but only 1.0 GiB is available, after line 7; use a machine \
             with more memory or part of the file (`perceptron online` learns from a file of \
             any length)"
        );
        let under = |ceiling| {
            Shortfall {
                needed: 3 << 29,
                available: Some((1 << 30, ceiling)),
            }
            .to_string()
        };
        assert_eq!(
            under(Ceiling::AddressSpace),
            "takes 1.5 GiB, but only 1.0 GiB of address space is left under the limit on it \
             (`ulimit -v`)"
        );
        assert_eq!(
            under(Ceiling::Variable),
            format!("takes 1.5 GiB, but only 1.0 GiB is available ({LIMIT_VAR})")
        );
    }

    #[test]
    fn the_limit_is_a_whole_number_of_bytes() {
        assert_eq!(parse_limit(" 1048576 ").unwrap(), 1 << 20);
        for bad in ["", "1M", "-1", "1.5"] {
            let e = parse_limit(bad).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("PERCEPTRON_MEMORY_LIMIT must be a whole number of bytes, not {bad:?}")
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_a_peak() {
        assert!(available_bytes().expect("Linux reports MemAvailable") > 0);
        let peak = peak_rss_bytes().expect("Linux reports VmHWM");
        assert!(peak > 1 << 20, "{peak}");
    }
}
