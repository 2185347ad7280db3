//! Reading a `.pbin` file: its sections used in place from a read-only
//! memory map where possible, else read (in parallel pieces) into owned
//! memory, and every rule of the format checked.

use std::fs::File;
use std::io::{self, ErrorKind};
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;

use crate::data::labels::LabelTable;
use crate::data::matrix::{CsrMatrix, DenseMatrix, Features};
use crate::data::message::quote;
use crate::data::options::Format;
use crate::data::raw::RawData;
use crate::data::source::mmap_enabled;
use crate::data::storage::Storage;
use crate::error::{Error, Result};
use crate::float::{Precision, Real};

use super::check::{check_csr, decode_table, first_non_finite, locate};
use super::header::{decode_header, open_checked};
use super::{
    CLASS_IDS, HEADER_BYTES, Header, INDICES, Layout, ROW_PTR, Section, TABLE, VALUES, fix_endian,
};

/// Converts a count already bounded by the file length to `usize`.
pub(super) fn count(n: u64, path: &Path) -> Result<usize> {
    usize::try_from(n).map_err(|_| {
        Error::data(
            path,
            format!("{n} elements do not fit in this platform's memory"),
        )
    })
}

/// A zeroed vector of `n` elements, or a clean error when memory is short.
///
/// The memory comes from `alloc_zeroed`, which for large sizes maps fresh
/// zero pages without writing them: the pages are first touched by the
/// (parallel) read that fills them, instead of by a separate zeroing pass
/// that would take most of the load time.
fn zeroed<T: bytemuck::Pod>(n: usize, path: &Path, what: &str) -> Result<Vec<T>> {
    let refuse = |s: crate::memory::Shortfall| s.refusal(path, &format!("its {what} section"), "");
    let needed = crate::memory::bytes_of::<T>(n);
    let oom = || {
        refuse(crate::memory::Shortfall {
            needed,
            available: None,
        })
    };
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Ok(Vec::new());
    }
    // Fresh zero pages are only counted once touched, so the allocation
    // would succeed and the out-of-memory killer strike while reading.
    crate::memory::check(needed).map_err(refuse)?;
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| oom())?;
    // SAFETY: `layout` has a non-zero size. The allocation is made by the
    // global allocator with exactly the layout `Vec<T>` uses for capacity
    // `n`, as `from_raw_parts` requires, and all-zero bytes are a valid `T`
    // because `T: Pod`, so all `n` elements are initialised.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<T>();
        if ptr.is_null() {
            return Err(oom());
        }
        Ok(Vec::from_raw_parts(ptr, n, n))
    }
}

fn read_err(path: &Path) -> impl Fn(io::Error) -> Error + '_ {
    move |e| {
        if e.kind() == ErrorKind::UnexpectedEof {
            Error::data(
                path,
                "truncated: the file ended while reading it (was it being written?)",
            )
        } else {
            Error::io(path, "cannot read", e)
        }
    }
}

/// Where a `.pbin` file's bytes are read from: the file itself, or (for
/// [`read_from_bytes`]) its bytes already in memory. Positioned reads, so
/// that large sections can be read in parallel pieces.
pub(super) trait Source: Sync {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

impl Source for File {
    #[cfg(unix)]
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }

    /// Seeks and reads (callers are sequential where positioned reads are
    /// not available).
    #[cfg(not(unix))]
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let mut file = self;
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }
}

impl Source for [u8] {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|at| self.get(at..)?.get(..buf.len()))
            .ok_or_else(|| io::Error::from(ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// Reads one section's elements straight into a vector's bytes.
pub(super) fn read_section<T: bytemuck::Pod>(
    file: &(impl Source + ?Sized),
    path: &Path,
    section: Section,
    n: usize,
    what: &str,
) -> Result<Vec<T>> {
    let mut v = zeroed::<T>(n, path, what)?;
    if n > 0 {
        read_at(file, path, section.offset, bytemuck::cast_slice_mut(&mut v))?;
        fix_endian(&mut v);
    }
    Ok(v)
}

/// Fills `buf` from the file at `offset`. Large reads are split over the
/// thread pool: the kernel's copy out of the page cache and the page faults
/// of fresh memory then run on every core.
fn read_at(file: &(impl Source + ?Sized), path: &Path, offset: u64, buf: &mut [u8]) -> Result<()> {
    const PIECE: usize = 8 << 20;
    #[cfg(unix)]
    if buf.len() >= 2 * PIECE && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        return buf
            .par_chunks_mut(PIECE)
            .enumerate()
            .try_for_each(|(i, piece)| file.read_exact_at(piece, offset + (i * PIECE) as u64))
            .map_err(read_err(path));
    }
    file.read_exact_at(buf, offset).map_err(read_err(path))
}

/// Reads values stored as `S` into a vector of `F`, converting in chunks
/// (exact from f32 to f64; round to nearest from f64 to f32), in parallel
/// where positioned reads are available.
pub(super) fn read_converted<S: Real, F: Real>(
    file: &(impl Source + ?Sized),
    path: &Path,
    section: Section,
    n: usize,
) -> Result<Vec<F>> {
    const CHUNK: usize = 1 << 16;
    let mut out = zeroed::<F>(n, path, "values")?;
    let convert = |buf: &mut [S], dst: &mut [F]| {
        fix_endian(buf);
        for (d, s) in dst.iter_mut().zip(buf.iter()) {
            *d = F::from_f64(s.to_f64());
        }
    };
    #[cfg(unix)]
    {
        use rayon::prelude::*;
        let size = std::mem::size_of::<S>() as u64;
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .try_for_each_init(
                || vec![S::ZERO; CHUNK],
                |buf, (i, dst)| {
                    let src = &mut buf[..dst.len()];
                    let at = section.offset + (i * CHUNK) as u64 * size;
                    file.read_exact_at(bytemuck::cast_slice_mut(src), at)?;
                    convert(src, dst);
                    Ok(())
                },
            )
            .map_err(read_err(path))?;
    }
    #[cfg(not(unix))]
    {
        let size = std::mem::size_of::<S>() as u64;
        let mut buf = vec![S::ZERO; CHUNK.min(n)];
        for (i, dst) in out.chunks_mut(CHUNK).enumerate() {
            let src = &mut buf[..dst.len()];
            let at = section.offset + (i * CHUNK) as u64 * size;
            file.read_exact_at(bytemuck::cast_slice_mut(src), at)
                .map_err(read_err(path))?;
            convert(src, dst);
        }
    }
    Ok(out)
}

/// Reads a `.pbin` file, checking every rule of the format (see the module
/// documentation). Values are converted to `F` if stored in the other
/// precision. The large sections are used in place from a read-only memory
/// map where they can be (see "Memory mapping" in the module
/// documentation), unless [`mmap_enabled`] says no.
pub fn read<F: Real>(path: &Path) -> Result<RawData<F>> {
    read_with(path, mmap_enabled())
}

/// [`read`], mapping the file only when `mmap` is true.
pub fn read_with<F: Real>(path: &Path, mmap: bool) -> Result<RawData<F>> {
    let (file, h, len) = open_checked(path)?;
    let map = if mmap { map_file(&file, len) } else { None };
    read_body(&file, map.as_ref(), path, h)
}

/// A read-only map of the whole file, or `None` where the bytes could not
/// be used in place anyway (big-endian hosts) or mapping fails (some
/// filesystems and special files do not support it); the caller then reads.
fn map_file(file: &File, len: u64) -> Option<Arc<Mmap>> {
    if cfg!(target_endian = "big") {
        return None;
    }
    // SAFETY: the mapping is read-only (the file was opened read-only) and
    // only ever read as plain integers and floats, for which every bit
    // pattern is valid. What no code here can rule out is another process
    // truncating or rewriting the file while it is mapped (see "Memory
    // mapping" in the module documentation): a truncation makes reads of
    // the vanished pages raise SIGBUS, which ends the process rather than
    // corrupting it, and rewritten bytes are read as whatever they now are.
    let map = unsafe { Mmap::map(file) }.ok()?;
    // The length the header was checked against; a file that changed since
    // is read instead, which reports it.
    (map.len() as u64 == len).then(|| Arc::new(map))
}

/// [`read`] for a file's bytes already in memory (`path` is for messages),
/// checking the same rules and allocating no more than [`read`] would.
pub fn read_from_bytes<F: Real>(bytes: &[u8], path: &Path) -> Result<RawData<F>> {
    let head = &bytes[..bytes.len().min(HEADER_BYTES as usize)];
    let h = decode_header(head, bytes.len() as u64).map_err(|m| Error::data(path, m))?;
    read_body(bytes, None, path, h)
}

/// A section's `n` elements of type `T` (stored as `T` in little-endian
/// order): in place in `map` when there is one and the bytes can be used as
/// they are, else read into owned memory.
fn section<T: bytemuck::Pod>(
    file: &(impl Source + ?Sized),
    map: Option<&Arc<Mmap>>,
    path: &Path,
    section: Section,
    n: usize,
    what: &str,
) -> Result<Storage<T>> {
    if cfg!(target_endian = "little")
        && n > 0
        && let Some(map) = map
        && let Ok(at) = usize::try_from(section.offset)
        && let Some(mapped) = Storage::mapped(Arc::clone(map), at, n)
    {
        return Ok(mapped);
    }
    read_section(file, path, section, n, what).map(Storage::from)
}

/// The sections of a file whose header `h` has been checked against its
/// length, the large ones in place in `map` where possible.
fn read_body<F: Real>(
    file: &(impl Source + ?Sized),
    map: Option<&Arc<Mmap>>,
    path: &Path,
    h: Header,
) -> Result<RawData<F>> {
    let s = h.sections;
    let rows = count(h.rows, path)?;
    let nnz = count(h.nnz, path)?;
    let cols = count(h.cols, path)?;

    // The label table first: it is small, and its size bounds the class ids.
    let table_bytes: Vec<u8> =
        read_section(file, path, s[TABLE], s[TABLE].len as usize, "label-table")?;
    let texts = decode_table(&table_bytes, h.classes).map_err(|m| Error::data(path, m))?;
    drop(table_bytes);

    let class_ids: Vec<u32> = read_section(file, path, s[CLASS_IDS], rows, "class-id")?;
    let counts = class_counts(path, &class_ids, texts.len(), 0)?;
    if let Some(unused) = counts.iter().position(|&n| n == 0) {
        return Err(Error::data(
            path,
            format!(
                "label table entry {unused} ({}) is used by no row",
                quote(&texts[unused])
            ),
        ));
    }
    let table = label_table(path, texts, &counts)?;

    let values: Storage<F> = match (h.precision, F::PRECISION) {
        (p, q) if p == q => section(file, map, path, s[VALUES], nnz, "values")?,
        (Precision::F32, _) => read_converted::<f32, F>(file, path, s[VALUES], nnz)?.into(),
        (Precision::F64, _) => read_converted::<f64, F>(file, path, s[VALUES], nnz)?.into(),
    };

    let features = match h.layout {
        Layout::Dense => Features::Dense(DenseMatrix { rows, cols, values }),
        Layout::Csr => {
            let indices: Storage<u32> = section(file, map, path, s[INDICES], nnz, "indices")?;
            let row_ptr = read_row_ptr(file, map, path, s[ROW_PTR], rows + 1)?;
            check_csr(&row_ptr, &indices, h.cols, h.nnz).map_err(|m| Error::data(path, m))?;
            Features::Sparse(CsrMatrix {
                cols,
                row_ptr,
                indices,
                values,
            })
        }
    };
    check_finite(file, path, &h, &features, (0, 0))?;
    Ok(RawData {
        features,
        class_ids,
        table,
        format: Format::Binary,
        csv: None,
        libsvm: None,
    })
}

/// The rows of each class among `class_ids`, rows counted from
/// `first_row` (0-based) in messages; an error for an id outside the label
/// table of `entries` entries.
pub(super) fn class_counts(
    path: &Path,
    class_ids: &[u32],
    entries: usize,
    first_row: usize,
) -> Result<Vec<u64>> {
    let mut counts = vec![0u64; entries];
    for (i, &c) in class_ids.iter().enumerate() {
        match counts.get_mut(c as usize) {
            Some(n) => *n += 1,
            None => {
                return Err(Error::data(
                    path,
                    format!(
                        "row {}: class id {c} is out of range: the label table has {} entries",
                        first_row + i + 1,
                        entries
                    ),
                ));
            }
        }
    }
    Ok(counts)
}

/// The label table of the file's entries `texts`, each used by `counts`
/// rows; an error for two entries that are the same label.
pub(super) fn label_table(path: &Path, texts: Vec<String>, counts: &[u64]) -> Result<LabelTable> {
    LabelTable::from_parts(texts, counts).map_err(|(a, b)| {
        Error::data(
            path,
            format!("label table entries {a} and {b} are the same label"),
        )
    })
}

/// An error naming the first value of `features` that is not finite in
/// precision `F`: not finite in the file, or too large for `F`.
pub(super) fn check_finite<F: Real>(
    file: &(impl Source + ?Sized),
    path: &Path,
    h: &Header,
    features: &Features<F>,
    (first_value, first_row): (usize, usize),
) -> Result<()> {
    let nnz = count(h.nnz, path)?;
    let values = match features {
        Features::Dense(m) => &m.values,
        Features::Sparse(m) => &m.values,
    };
    if let Some(e) = first_non_finite(values) {
        let (row, feature) = locate(features, e);
        // Finite as stored (checked below) but out of range after rounding?
        let stored = if h.precision != F::PRECISION && first_value + e < nnz {
            Some(reread_value(file, path, h, first_value + e)?)
        } else {
            None
        };
        let msg = read_value_message::<F>(first_row + row, feature, values[e].to_f64(), stored);
        return Err(Error::data(path, msg));
    }
    Ok(())
}

/// Why the value read at `row`, `feature` (`read`, in F) is not finite:
/// too large for F when the value as `stored` in the file (another
/// precision) is finite, otherwise not finite in the file itself.
pub(super) fn read_value_message<F: Real>(
    row: usize,
    feature: usize,
    read: f64,
    stored: Option<f64>,
) -> String {
    match stored {
        Some(stored) if stored.is_finite() => format!(
            "row {row}, feature {feature}: value {stored:e} is too large for {} \
             (largest finite magnitude {:e})",
            F::PRECISION,
            f32::MAX
        ),
        Some(stored) => non_finite_message(row, feature, stored),
        None => non_finite_message(row, feature, read),
    }
}

pub(crate) fn non_finite_message(row: usize, feature: usize, v: f64) -> String {
    format!("row {row}, feature {feature}: value {v} is not finite; values must be finite numbers")
}

/// The stored value number `e`, as f64 (for an error message).
pub(super) fn reread_value(
    file: &(impl Source + ?Sized),
    path: &Path,
    h: &Header,
    e: usize,
) -> Result<f64> {
    let vb = h.value_bytes();
    let at = h.sections[VALUES].offset + e as u64 * vb;
    let mut b = [0u8; 8];
    file.read_exact_at(&mut b[..vb as usize], at)
        .map_err(read_err(path))?;
    Ok(match h.precision {
        Precision::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
        Precision::F64 => f64::from_le_bytes(b),
    })
}

/// The row pointers, stored as u64: `usize` as they are on 64-bit hosts
/// (so in place when mapped).
#[cfg(target_pointer_width = "64")]
fn read_row_ptr(
    file: &(impl Source + ?Sized),
    map: Option<&Arc<Mmap>>,
    path: &Path,
    s: Section,
    n: usize,
) -> Result<Storage<usize>> {
    section::<usize>(file, map, path, s, n, "row-pointer")
}

/// The row pointers, stored as u64, narrowed to `usize` (so always read).
#[cfg(not(target_pointer_width = "64"))]
fn read_row_ptr(
    file: &(impl Source + ?Sized),
    _map: Option<&Arc<Mmap>>,
    path: &Path,
    s: Section,
    n: usize,
) -> Result<Storage<usize>> {
    let wide = read_section::<u64>(file, path, s, n, "row-pointer")?;
    wide.into_iter()
        .map(|p| count(p, path))
        .collect::<Result<Storage<usize>>>()
}
