//! The binary dataset format (`.pbin`): for data too large to parse as text.
//!
//! A `.pbin` file is a fixed little-endian header followed by sections, each
//! starting at a multiple of 64 bytes, so that it can be memory-mapped and
//! every section read with one plain `read` into an aligned array. Numbers
//! are not parsed: loading is as fast as the disk or the page cache.
//!
//! # Layout, version 1
//!
//! All integers are unsigned little-endian; all floats IEEE-754 little-endian.
//!
//! | offset | size | field                                                        |
//! |-------:|-----:|--------------------------------------------------------------|
//! |      0 |    8 | magic bytes `89 50 42 4E 0D 0A 1A 0A` (`\x89PBN\r\n\x1a\n`)  |
//! |      8 |    4 | format version (u32) = 1                                     |
//! |     12 |    4 | header size in bytes (u32) = 192                             |
//! |     16 |    4 | layout (u32): 0 = dense row-major, 1 = CSR                   |
//! |     20 |    4 | value type (u32): 4 = f32, 8 = f64 (bytes per value)         |
//! |     24 |    8 | rows (u64), at least 1                                       |
//! |     32 |    8 | cols (u64): features per row, bias excluded, < 2^31          |
//! |     40 |    8 | nnz (u64): stored values; dense: exactly rows * cols         |
//! |     48 |    8 | classes (u64): entries in the label table, 1 ..= 65536       |
//! |     56 |   16 | class-id section: offset (u64), length (u64)                 |
//! |     72 |   16 | values section: offset, length                               |
//! |     88 |   16 | indices section: offset, length                              |
//! |    104 |   16 | row-pointer section: offset, length                          |
//! |    120 |   16 | label-table section: offset, length                          |
//! |    136 |   56 | reserved, all zero                                           |
//!
//! | section     | length in bytes       | content                                         |
//! |-------------|-----------------------|-------------------------------------------------|
//! | class ids   | rows * 4              | u32 per row: its label's index in the table     |
//! | values      | nnz * value size      | f32/f64; dense: row after row; CSR: by row_ptr  |
//! | indices     | CSR: nnz * 4; dense 0 | u32 0-based feature index per stored value      |
//! | row pointer | CSR: (rows+1) * 8; 0  | u64: row i owns entries row_ptr[i]..row_ptr[i+1] |
//! | label table | as needed, <= 64 MiB  | per class: byte length (u32) + UTF-8 text       |
//!
//! Rules a reader checks (and a writer must follow):
//! - Every section offset is a multiple of 64. A non-empty section lies
//!   after the header, inside the file, and overlaps no other section; an
//!   empty one has offset 0. The file ends exactly where the last section
//!   ends (no trailing bytes). Bytes between sections should be zero and are
//!   not read. This writer puts the sections in the order of the table above
//!   (the label table last, so a streaming writer can append it once the
//!   labels are known) but readers accept any order.
//! - CSR: `row_ptr[0] = 0`, non-decreasing, `row_ptr[rows] = nnz`; each
//!   row's indices strictly increase and are `< cols`.
//! - Every value is finite (no NaN or infinity).
//! - Every class id is `< classes`, and every class is used by some row.
//! - Label texts are valid UTF-8, 1 to 65536 bytes each, and distinct as
//!   labels (`1` and `1.0` are the same label, as in the text formats).
//! - A newer version than this reader knows is refused with a message saying
//!   so; a change of layout always bumps the version.
//!
//! Messages count rows and features from 1, like the text formats.
//!
//! # Precision
//!
//! The stored precision is part of the file. Reading an f32 file for f64
//! training is exact. Reading an f64 file for f32 training rounds every
//! value to the nearest f32 (ties to even) and refuses values beyond the f32
//! range. That rounding is *not* the same as parsing the original decimal
//! text as f32 (it can round twice), so the tool's exactness guarantees
//! refer to the values stored in the file; convert with `--precision f32` to
//! store exactly what f32 training of the original text would use.
//!
//! # Reading safely
//!
//! The header is checked against the file's length before anything is
//! allocated, so a corrupt or hostile header cannot make the reader allocate
//! more than the file holds.
//!
//! # Memory mapping
//!
//! [`read`] maps the file read-only and uses the values, CSR indices and row
//! pointers in place, without copying them: the data then costs no memory
//! of the process's own (only the page cache's, shared with every other
//! process reading the file, and reclaimable), and a file larger than the
//! memory can be trained from (at the disk's speed). A section is used in
//! place when the host is little-endian, the section is aligned for its
//! element type (always, as sections start at multiples of 64 and mappings
//! at page boundaries), its values are in the precision asked for, and (row
//! pointers) `usize` is 64 bits wide; anything else is read into owned
//! memory as before, converting where needed. Labels and class ids are
//! always read (they are small). Every rule of the format is checked over
//! the mapped bytes exactly as over read ones.
//!
//! The remaining risk of a mapping is another process changing the file
//! while it is mapped: the file is opened read-only, and perceptron's own
//! writers (`convert`, `gen`, `split`) replace a file by renaming a new one
//! over it, which leaves a mapped file's bytes alone; but a file truncated
//! in place (`cp` over it, or a writer that truncates) makes the next read
//! of a vanished page kill the process with SIGBUS, and bytes rewritten in
//! place would be used without having been checked. Setting the
//! environment variable `PERCEPTRON_NO_MMAP=1` reads the whole file into
//! owned memory instead, as earlier versions did.
//!
//! # Example: writing a dense f32 file from Python
//!
//! ```text
//! import numpy as np, struct
//! X = np.ascontiguousarray(X, dtype='<f4'); ids = np.asarray(ids, '<u4')
//! labels = [b'-1', b'+1']; table = b''.join(struct.pack('<I', len(t)) + t for t in labels)
//! al = lambda n: (n + 63) // 64 * 64
//! o_ids = 192; o_val = al(o_ids + ids.nbytes); o_tab = al(o_val + X.nbytes)
//! head = struct.pack('<8sIIIIQQQQ', b'\x89PBN\r\n\x1a\n', 1, 192, 0, 4,
//!                    X.shape[0], X.shape[1], X.size, len(labels))
//! head += struct.pack('<10Q', o_ids, ids.nbytes, o_val if X.size else 0, X.nbytes,
//!                     0, 0, 0, 0, o_tab, len(table)) + bytes(56)
//! with open('x.pbin', 'wb') as f:
//!     for off, b in [(0, head), (o_ids, ids.tobytes()), (o_val, X.tobytes()), (o_tab, table)]:
//!         f.seek(off); f.write(b)
//! ```

use std::fs::File;
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;

use crate::error::{Error, Result};
use crate::float::{Precision, Real};

use super::labels::MAX_DISTINCT_LABELS;
use super::{
    CsrMatrix, DenseMatrix, Features, Format, LabelTable, MAX_FEATURE_INDEX, RawData, Storage,
};

/// The first eight bytes of every `.pbin` file. The first byte is not ASCII
/// and the CR LF and ^Z catch transfers in text mode, as in PNG.
pub const MAGIC: [u8; 8] = *b"\x89PBN\r\n\x1a\n";

/// The format version this code writes and the newest it reads.
pub const VERSION: u32 = 1;

/// Size of the version-1 header.
pub const HEADER_BYTES: u64 = 192;

/// Every section starts at a multiple of this.
pub const ALIGN: u64 = 64;

/// The longest label text, in bytes.
pub const MAX_LABEL_BYTES: u64 = 1 << 16;

/// The largest label table, in bytes.
pub const MAX_TABLE_BYTES: u64 = 64 << 20;

/// The environment variable that turns memory mapping off (any value but
/// empty, `0`, `false`, `no` or `off`).
pub const NO_MMAP_ENV: &str = "PERCEPTRON_NO_MMAP";

/// The conventional extension (without the dot).
pub const EXTENSION: &str = "pbin";

/// How the feature values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Row-major, every value stored.
    Dense,
    /// Compressed sparse rows: only stored entries, with their indices.
    Csr,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Dense => "dense",
            Layout::Csr => "csr",
        }
    }

    /// The layout `features` are in.
    pub fn of<F>(features: &Features<F>) -> Layout {
        match features {
            Features::Dense(_) => Layout::Dense,
            Features::Sparse(_) => Layout::Csr,
        }
    }
}

/// Where a section lies in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Section {
    pub offset: u64,
    pub len: u64,
}

impl Section {
    fn end(&self) -> u64 {
        self.offset.saturating_add(self.len)
    }
}

/// The sections in header order.
const SECTION_NAMES: [&str; 5] = [
    "class-id",
    "values",
    "indices",
    "row-pointer",
    "label-table",
];
const CLASS_IDS: usize = 0;
const VALUES: usize = 1;
const INDICES: usize = 2;
const ROW_PTR: usize = 3;
const TABLE: usize = 4;

/// A decoded and checked header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u32,
    pub layout: Layout,
    pub precision: Precision,
    pub rows: u64,
    pub cols: u64,
    pub nnz: u64,
    pub classes: u64,
    /// Class ids, values, indices, row pointer, label table.
    pub sections: [Section; 5],
}

impl Header {
    /// Bytes per stored value.
    pub fn value_bytes(&self) -> u64 {
        value_bytes(self.precision)
    }

    /// The header's bytes.
    pub fn encode(&self) -> [u8; HEADER_BYTES as usize] {
        let mut b = [0u8; HEADER_BYTES as usize];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&self.version.to_le_bytes());
        b[12..16].copy_from_slice(&(HEADER_BYTES as u32).to_le_bytes());
        let layout: u32 = match self.layout {
            Layout::Dense => 0,
            Layout::Csr => 1,
        };
        b[16..20].copy_from_slice(&layout.to_le_bytes());
        b[20..24].copy_from_slice(&(self.value_bytes() as u32).to_le_bytes());
        for (k, v) in [self.rows, self.cols, self.nnz, self.classes]
            .into_iter()
            .enumerate()
        {
            b[24 + 8 * k..32 + 8 * k].copy_from_slice(&v.to_le_bytes());
        }
        for (k, s) in self.sections.iter().enumerate() {
            let at = 56 + 16 * k;
            b[at..at + 8].copy_from_slice(&s.offset.to_le_bytes());
            b[at + 8..at + 16].copy_from_slice(&s.len.to_le_bytes());
        }
        b
    }
}

fn value_bytes(p: Precision) -> u64 {
    match p {
        Precision::F32 => 4,
        Precision::F64 => 8,
    }
}

fn align_up(n: u64) -> u64 {
    n.div_ceil(ALIGN).saturating_mul(ALIGN)
}

/// True when `head` starts with the magic bytes.
pub fn is_binary(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

// ---------------------------------------------------------------------------
// Reading

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// Decodes and checks a header against the file's length; the message says
/// what is wrong. Allocates nothing sized by the header.
pub fn decode_header(head: &[u8], file_len: u64) -> std::result::Result<Header, String> {
    if !is_binary(head) {
        let shown: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return Err(format!(
            "not a perceptron binary (.pbin) file: it starts with bytes [{}], not the magic \
             bytes [89 50 42 4e 0d 0a 1a 0a]",
            shown.join(" ")
        ));
    }
    if (head.len() as u64) < HEADER_BYTES || file_len < HEADER_BYTES {
        return Err(format!(
            "truncated: the file has {file_len} bytes, fewer than the {HEADER_BYTES}-byte header"
        ));
    }
    let version = u32_at(head, 8);
    if version == 0 {
        return Err("invalid format version 0".into());
    }
    if version > VERSION {
        return Err(format!(
            "format version {version} is newer than this version of perceptron can read \
             (version {VERSION} and older); upgrade perceptron to read it"
        ));
    }
    let header_bytes = u32_at(head, 12);
    if u64::from(header_bytes) != HEADER_BYTES {
        return Err(format!(
            "header size {header_bytes} is wrong for format version {version} (expected \
             {HEADER_BYTES})"
        ));
    }
    let layout = match u32_at(head, 16) {
        0 => Layout::Dense,
        1 => Layout::Csr,
        other => {
            return Err(format!("unknown layout code {other} (0 = dense, 1 = CSR)"));
        }
    };
    let precision = match u32_at(head, 20) {
        4 => Precision::F32,
        8 => Precision::F64,
        other => {
            return Err(format!(
                "unknown value type code {other} (4 = f32, 8 = f64)"
            ));
        }
    };
    let (rows, cols, nnz, classes) = (
        u64_at(head, 24),
        u64_at(head, 32),
        u64_at(head, 40),
        u64_at(head, 48),
    );
    let mut sections = [Section::default(); 5];
    for (k, s) in sections.iter_mut().enumerate() {
        s.offset = u64_at(head, 56 + 16 * k);
        s.len = u64_at(head, 64 + 16 * k);
    }
    if let Some(at) = (136..HEADER_BYTES as usize).find(|&i| head[i] != 0) {
        return Err(format!(
            "reserved header byte {at} is {:#04x}, not zero; the file is corrupt or from an \
             incompatible writer",
            head[at]
        ));
    }
    if rows == 0 {
        return Err(super::source::NO_DATA_ROWS.into());
    }
    if cols > MAX_FEATURE_INDEX {
        return Err(format!(
            "{cols} feature columns is more than the supported {MAX_FEATURE_INDEX}"
        ));
    }
    if classes == 0 || classes > MAX_DISTINCT_LABELS as u64 {
        return Err(format!(
            "the header claims {classes} label values; expected 1 to {MAX_DISTINCT_LABELS}"
        ));
    }
    let overflow = |what: &str| format!("the header's sizes overflow: {what} is too large");
    if layout == Layout::Dense {
        let cells = rows
            .checked_mul(cols)
            .ok_or_else(|| overflow("rows * cols"))?;
        if nnz != cells {
            return Err(format!(
                "a dense file stores rows * cols = {rows} * {cols} = {cells} values, but the \
                 header says nnz = {nnz}"
            ));
        }
    }
    let vb = value_bytes(precision);
    let csr = layout == Layout::Csr;
    let expected: [Option<u64>; 4] = [
        rows.checked_mul(4),
        nnz.checked_mul(vb),
        if csr { nnz.checked_mul(4) } else { Some(0) },
        if csr {
            rows.checked_add(1).and_then(|r| r.checked_mul(8))
        } else {
            Some(0)
        },
    ];
    for (k, want) in expected.iter().enumerate() {
        let want = want.ok_or_else(|| overflow(&format!("the {} section", SECTION_NAMES[k])))?;
        if sections[k].len != want {
            return Err(format!(
                "the {} section is {} bytes, but rows = {rows}, cols = {cols}, nnz = {nnz} \
                 ({} {}) need {want}",
                SECTION_NAMES[k],
                sections[k].len,
                layout.name(),
                precision
            ));
        }
    }
    let table = sections[TABLE].len;
    if table > MAX_TABLE_BYTES {
        return Err(format!(
            "the label table is {table} bytes, more than the limit of {MAX_TABLE_BYTES}"
        ));
    }
    if table < classes.saturating_mul(5) {
        return Err(format!(
            "the label table is {table} bytes, too short for {classes} labels"
        ));
    }
    let mut end = HEADER_BYTES;
    for (k, s) in sections.iter().enumerate() {
        let name = SECTION_NAMES[k];
        if s.offset % ALIGN != 0 {
            return Err(format!(
                "the {name} section starts at byte {}, not a multiple of {ALIGN}",
                s.offset
            ));
        }
        if s.len == 0 {
            if s.offset != 0 {
                return Err(format!(
                    "the {name} section is empty but has offset {} (empty sections have \
                     offset 0)",
                    s.offset
                ));
            }
            continue;
        }
        if s.offset < HEADER_BYTES {
            return Err(format!(
                "the {name} section starts at byte {}, inside the {HEADER_BYTES}-byte header",
                s.offset
            ));
        }
        let section_end = s
            .offset
            .checked_add(s.len)
            .ok_or_else(|| overflow(&format!("the {name} section's end")))?;
        if section_end > file_len {
            return Err(format!(
                "truncated: the {name} section ends at byte {section_end} but the file has \
                 only {file_len} bytes"
            ));
        }
        for (j, t) in sections.iter().enumerate().take(k) {
            if t.len > 0 && s.offset < t.end() && t.offset < section_end {
                return Err(format!(
                    "the {} and {name} sections overlap",
                    SECTION_NAMES[j]
                ));
            }
        }
        end = end.max(section_end);
    }
    if file_len > end {
        return Err(format!(
            "{} unexpected bytes after the last section (which ends at byte {end}); the file \
             is corrupt",
            file_len - end
        ));
    }
    Ok(Header {
        version,
        layout,
        precision,
        rows,
        cols,
        nnz,
        classes,
        sections,
    })
}

/// Turns little-endian scalars read from a file into native ones (and back):
/// nothing to do on little-endian machines, a byte reversal otherwise.
fn fix_endian<T: bytemuck::Pod>(v: &mut [T]) {
    if cfg!(target_endian = "big") {
        for x in v {
            bytemuck::bytes_of_mut(x).reverse();
        }
    }
}

/// Converts a count already bounded by the file length to `usize`.
fn count(n: u64, path: &Path) -> Result<usize> {
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
trait Source: Sync {
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
fn read_section<T: bytemuck::Pod>(
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
fn read_converted<S: Real, F: Real>(
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

/// 1-based row and feature of value number `e` (0-based), for messages.
fn locate<F>(features: &Features<F>, e: usize) -> (usize, usize) {
    match features {
        Features::Dense(m) => (e / m.cols.max(1) + 1, e % m.cols.max(1) + 1),
        Features::Sparse(m) => {
            let row = m.row_ptr.partition_point(|&p| p <= e).saturating_sub(1);
            (row + 1, m.indices[e] as usize + 1)
        }
    }
}

/// Index of the first non-finite value, scanning in vectorisable blocks,
/// large arrays in parallel (for a mapped file, this scan is also what
/// brings its pages in).
fn first_non_finite<F: Real>(values: &[F]) -> Option<usize> {
    use rayon::prelude::*;
    const BLOCK: usize = 4096;
    let bad = |chunk: &[F]| !chunk.iter().fold(true, |ok, v| ok & v.is_finite());
    let b = if values.len() >= 256 * BLOCK && rayon::current_num_threads() > 1 {
        values.par_chunks(BLOCK).position_first(bad)
    } else {
        values.chunks(BLOCK).position(bad)
    }?;
    let k = values[b * BLOCK..]
        .iter()
        .position(|v| !v.is_finite())
        .unwrap_or(0);
    Some(b * BLOCK + k)
}

/// Reads the header of a `.pbin` file.
pub fn read_header(path: &Path) -> Result<Header> {
    let mut file = File::open(path).map_err(|e| Error::io(path, "cannot open data file", e))?;
    header_and_len(&mut file, path).map(|(h, _)| h)
}

/// The checked header and the file length it was checked against.
fn header_and_len(file: &mut File, path: &Path) -> Result<(Header, u64)> {
    let meta = file
        .metadata()
        .map_err(|e| Error::io(path, "cannot open data file", e))?;
    if meta.is_dir() {
        return Err(Error::io(
            path,
            "cannot open data file",
            io::Error::new(ErrorKind::IsADirectory, "it is a directory, not a file"),
        ));
    }
    let mut head = Vec::with_capacity(HEADER_BYTES as usize);
    Read::by_ref(file)
        .take(HEADER_BYTES)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let h = decode_header(&head, meta.len()).map_err(|m| Error::data(path, m))?;
    Ok((h, meta.len()))
}

/// Whether [`read`] may map files: unless [`NO_MMAP_ENV`] says otherwise.
pub fn mmap_enabled() -> bool {
    mmap_allowed_by(std::env::var_os(NO_MMAP_ENV).as_deref())
}

/// Whether the value of [`NO_MMAP_ENV`] (`None`: not set) allows mapping.
fn mmap_allowed_by(no_mmap: Option<&std::ffi::OsStr>) -> bool {
    match no_mmap {
        None => true,
        Some(v) => {
            let v = v.to_string_lossy().trim().to_ascii_lowercase();
            matches!(v.as_str(), "" | "0" | "false" | "no" | "off")
        }
    }
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
    let mut file = File::open(path).map_err(|e| Error::io(path, "cannot open data file", e))?;
    let (h, len) = header_and_len(&mut file, path)?;
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
    let mut counts = vec![0u64; texts.len()];
    for (i, &c) in class_ids.iter().enumerate() {
        match counts.get_mut(c as usize) {
            Some(n) => *n += 1,
            None => {
                return Err(Error::data(
                    path,
                    format!(
                        "row {}: class id {c} is out of range: the label table has {} entries",
                        i + 1,
                        texts.len()
                    ),
                ));
            }
        }
    }
    if let Some(unused) = counts.iter().position(|&n| n == 0) {
        return Err(Error::data(
            path,
            format!(
                "label table entry {unused} ({}) is used by no row",
                super::source::quote(&texts[unused])
            ),
        ));
    }
    let table = LabelTable::from_parts(texts, &counts).map_err(|(a, b)| {
        Error::data(
            path,
            format!("label table entries {a} and {b} are the same label"),
        )
    })?;

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
    let values = match &features {
        Features::Dense(m) => &m.values,
        Features::Sparse(m) => &m.values,
    };
    if let Some(e) = first_non_finite(values) {
        let (row, feature) = locate(&features, e);
        let msg = if h.precision != F::PRECISION && e < nnz {
            // Finite as stored (checked below) but out of range after rounding?
            let stored = reread_value(file, path, &h, e)?;
            if stored.is_finite() {
                format!(
                    "row {row}, feature {feature}: value {stored:e} is too large for {} \
                     (largest finite magnitude {:e})",
                    F::PRECISION,
                    f32::MAX
                )
            } else {
                non_finite_message(row, feature, stored)
            }
        } else {
            non_finite_message(row, feature, values[e].to_f64())
        };
        return Err(Error::data(path, msg));
    }
    Ok(RawData {
        features,
        class_ids,
        table,
        format: Format::Binary,
        csv: None,
    })
}

fn non_finite_message(row: usize, feature: usize, v: f64) -> String {
    format!("row {row}, feature {feature}: value {v} is not finite; values must be finite numbers")
}

/// The stored value number `e`, as f64 (for an error message).
fn reread_value(file: &(impl Source + ?Sized), path: &Path, h: &Header, e: usize) -> Result<f64> {
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

/// Checks the CSR structure; the message names the first broken rule.
fn check_csr(
    row_ptr: &[usize],
    indices: &[u32],
    cols: u64,
    nnz: u64,
) -> std::result::Result<(), String> {
    if row_ptr[0] != 0 {
        return Err(format!("row_ptr[0] is {}, not 0", row_ptr[0]));
    }
    if let Some(i) = row_ptr.windows(2).position(|w| w[0] > w[1]) {
        return Err(format!(
            "row {}: row_ptr decreases from {} to {}; it must not decrease",
            i + 1,
            row_ptr[i],
            row_ptr[i + 1]
        ));
    }
    let last = row_ptr[row_ptr.len() - 1];
    if last as u64 != nnz {
        return Err(format!(
            "row_ptr ends at {last}, but nnz is {nnz}; the last entry must equal nnz"
        ));
    }
    for (i, w) in row_ptr.windows(2).enumerate() {
        let idx = &indices[w[0]..w[1]];
        if let Some(k) = idx.windows(2).position(|p| p[0] >= p[1]) {
            return Err(format!(
                "row {}: stored index {} follows {}; indices must strictly increase within a \
                 row",
                i + 1,
                idx[k + 1],
                idx[k]
            ));
        }
        if let Some(&top) = idx.last()
            && u64::from(top) >= cols
        {
            return Err(format!(
                "row {}: stored index {top} (0-based) is not below cols = {cols}",
                i + 1
            ));
        }
    }
    Ok(())
}

/// Splits the label table into its texts.
fn decode_table(bytes: &[u8], classes: u64) -> std::result::Result<Vec<String>, String> {
    let mut texts = Vec::with_capacity(classes as usize);
    let mut at = 0usize;
    for k in 0..classes {
        let Some(len) = bytes.get(at..at + 4) else {
            return Err(format!(
                "the label table ends inside entry {k} of {classes}"
            ));
        };
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as u64;
        at += 4;
        if len == 0 || len > MAX_LABEL_BYTES {
            return Err(format!(
                "label table entry {k} is {len} bytes long; labels are 1 to {MAX_LABEL_BYTES} \
                 bytes"
            ));
        }
        let Some(text) = bytes.get(at..at + len as usize) else {
            return Err(format!(
                "label table entry {k} ({len} bytes) runs past the table's end"
            ));
        };
        let text = std::str::from_utf8(text).map_err(|e| {
            format!(
                "label table entry {k} is not valid UTF-8 (at byte {})",
                e.valid_up_to()
            )
        })?;
        texts.push(text.to_owned());
        at += len as usize;
    }
    if at != bytes.len() {
        return Err(format!(
            "the label table has {} bytes after its {classes} entries",
            bytes.len() - at
        ));
    }
    Ok(texts)
}

// ---------------------------------------------------------------------------
// Writing

fn invalid(msg: String) -> io::Error {
    io::Error::new(ErrorKind::InvalidInput, msg)
}

/// Writes a `.pbin` file section by section, in pieces of any size, so that
/// data can be streamed: values, indices and row pointers may be appended as
/// they are produced, and the header and label table are written by
/// [`Writer::finish`] once everything is known.
pub struct Writer<W: Write + Seek> {
    out: W,
    header: Header,
    /// Stream position, to seek only when switching sections.
    pos: u64,
    /// Bytes written so far to each section.
    done: [u64; 4],
    /// The last row pointer written (CSR).
    last_ptr: u64,
}

impl<W: Write + Seek> Writer<W> {
    /// Plans a file of the given shape. `out` should be empty and positioned
    /// at its start.
    pub fn new(
        out: W,
        layout: Layout,
        precision: Precision,
        rows: u64,
        cols: u64,
        nnz: u64,
    ) -> io::Result<Self> {
        if rows == 0 {
            return Err(invalid("a binary data file needs at least one row".into()));
        }
        if cols > MAX_FEATURE_INDEX {
            return Err(invalid(format!(
                "{cols} feature columns is more than the supported {MAX_FEATURE_INDEX}"
            )));
        }
        let too_big = || invalid("the data is too large for a binary file".into());
        let csr = layout == Layout::Csr;
        if !csr && rows.checked_mul(cols) != Some(nnz) {
            return Err(invalid(format!(
                "a dense file stores rows * cols values, not {nnz}"
            )));
        }
        let lens = [
            rows.checked_mul(4).ok_or_else(too_big)?,
            nnz.checked_mul(value_bytes(precision))
                .ok_or_else(too_big)?,
            if csr {
                nnz.checked_mul(4).ok_or_else(too_big)?
            } else {
                0
            },
            if csr {
                rows.checked_add(1)
                    .and_then(|r| r.checked_mul(8))
                    .ok_or_else(too_big)?
            } else {
                0
            },
        ];
        let mut sections = [Section::default(); 5];
        let mut next = HEADER_BYTES;
        for (s, &len) in sections.iter_mut().zip(&lens) {
            if len > 0 {
                s.offset = align_up(next);
                s.len = len;
                next = s.offset.checked_add(len).ok_or_else(too_big)?;
            }
        }
        sections[TABLE].offset = align_up(next);
        let header = Header {
            version: VERSION,
            layout,
            precision,
            rows,
            cols,
            nnz,
            classes: 0,
            sections,
        };
        let mut w = Writer {
            out,
            header,
            pos: 0,
            done: [0; 4],
            last_ptr: 0,
        };
        if csr {
            w.append(ROW_PTR, &0u64.to_le_bytes())?;
        }
        Ok(w)
    }

    /// The header as planned so far (the label table is filled in by `finish`).
    pub fn header(&self) -> &Header {
        &self.header
    }

    fn append(&mut self, k: usize, bytes: &[u8]) -> io::Result<()> {
        let s = self.header.sections[k];
        let room = s.len - self.done[k];
        if bytes.len() as u64 > room {
            return Err(invalid(format!(
                "more data than planned for the {} section ({} bytes)",
                SECTION_NAMES[k], s.len
            )));
        }
        let at = s.offset + self.done[k];
        if self.pos != at {
            self.out.seek(SeekFrom::Start(at))?;
        }
        self.out.write_all(bytes)?;
        self.done[k] += bytes.len() as u64;
        self.pos = at + bytes.len() as u64;
        Ok(())
    }

    /// Appends elements little-endian, converting in small chunks on
    /// big-endian machines.
    fn append_le<T: bytemuck::Pod>(&mut self, k: usize, data: &[T]) -> io::Result<()> {
        if cfg!(target_endian = "little") {
            return self.append(k, bytemuck::cast_slice(data));
        }
        for chunk in data.chunks(4096) {
            let mut le = chunk.to_vec();
            fix_endian(&mut le);
            self.append(k, bytemuck::cast_slice(&le))?;
        }
        Ok(())
    }

    /// Appends class ids (one per row).
    pub fn class_ids(&mut self, ids: &[u32]) -> io::Result<()> {
        self.append_le(CLASS_IDS, ids)
    }

    /// Appends values; `F` must be the planned precision.
    pub fn values<F: Real>(&mut self, values: &[F]) -> io::Result<()> {
        if F::PRECISION != self.header.precision {
            return Err(invalid(format!(
                "{} values given for a file planned as {}",
                F::PRECISION,
                self.header.precision
            )));
        }
        if let Some(e) = first_non_finite(values) {
            return Err(invalid(format!("value {} is not finite", values[e])));
        }
        self.append_le(VALUES, values)
    }

    /// Appends feature indices (CSR).
    pub fn indices(&mut self, indices: &[u32]) -> io::Result<()> {
        self.append_le(INDICES, indices)
    }

    /// Appends row ends, `row_ptr[1..]` (CSR); `row_ptr[0] = 0` is written
    /// by [`Writer::new`]. Ends must not decrease.
    pub fn row_ends(&mut self, ends: impl IntoIterator<Item = u64>) -> io::Result<()> {
        let mut buf: Vec<u64> = Vec::with_capacity(4096);
        for end in ends {
            if end < self.last_ptr {
                return Err(invalid(format!(
                    "row pointer decreases from {} to {end}",
                    self.last_ptr
                )));
            }
            self.last_ptr = end;
            buf.push(end.to_le());
            if buf.len() == 4096 {
                self.append(ROW_PTR, bytemuck::cast_slice(&buf))?;
                buf.clear();
            }
        }
        self.append(ROW_PTR, bytemuck::cast_slice(&buf))
    }

    /// Writes the label table (texts in class-id order) and the header, and
    /// returns the writer and the file's length in bytes. Fails if a section
    /// was not filled.
    pub fn finish(mut self, labels: &[&str]) -> io::Result<(W, u64)> {
        for (k, s) in self.header.sections.iter().take(4).enumerate() {
            if self.done[k] != s.len {
                return Err(invalid(format!(
                    "the {} section holds {} of its {} bytes",
                    SECTION_NAMES[k], self.done[k], s.len
                )));
            }
        }
        if self.header.layout == Layout::Csr && self.last_ptr != self.header.nnz {
            return Err(invalid(format!(
                "the row pointers end at {}, not nnz = {}",
                self.last_ptr, self.header.nnz
            )));
        }
        if labels.is_empty() || labels.len() > MAX_DISTINCT_LABELS {
            return Err(invalid(format!(
                "{} label values; a binary file holds 1 to {MAX_DISTINCT_LABELS}",
                labels.len()
            )));
        }
        let mut table = Vec::new();
        for l in labels {
            if l.is_empty() || l.len() as u64 > MAX_LABEL_BYTES {
                return Err(invalid(format!(
                    "label {} is {} bytes long; labels are 1 to {MAX_LABEL_BYTES} bytes",
                    super::source::quote(l),
                    l.len()
                )));
            }
            table.extend_from_slice(&(l.len() as u32).to_le_bytes());
            table.extend_from_slice(l.as_bytes());
        }
        if table.len() as u64 > MAX_TABLE_BYTES {
            return Err(invalid(format!(
                "the label table would be {} bytes, more than {MAX_TABLE_BYTES}",
                table.len()
            )));
        }
        self.header.classes = labels.len() as u64;
        self.header.sections[TABLE].len = table.len() as u64;
        let at = self.header.sections[TABLE].offset;
        self.out.seek(SeekFrom::Start(at))?;
        self.out.write_all(&table)?;
        let len = at + table.len() as u64;
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&self.header.encode())?;
        self.out.seek(SeekFrom::Start(len))?;
        self.out.flush()?;
        Ok((self.out, len))
    }
}

/// Writes `raw` in its own layout and precision; returns the bytes written.
pub fn write_raw<F: Real, W: Write + Seek>(out: W, raw: &RawData<F>) -> io::Result<u64> {
    let (layout, rows, cols, nnz) = match &raw.features {
        Features::Dense(m) => (Layout::Dense, m.rows, m.cols, m.values.len()),
        Features::Sparse(m) => (Layout::Csr, m.rows(), m.cols, m.values.len()),
    };
    if raw.class_ids.len() != rows {
        return Err(invalid(format!(
            "{} class ids for {rows} rows",
            raw.class_ids.len()
        )));
    }
    let mut w = Writer::new(
        out,
        layout,
        F::PRECISION,
        rows as u64,
        cols as u64,
        nnz as u64,
    )?;
    w.class_ids(&raw.class_ids)?;
    match &raw.features {
        Features::Dense(m) => w.values(&m.values)?,
        Features::Sparse(m) => {
            w.values(&m.values)?;
            w.indices(&m.indices)?;
            w.row_ends(m.row_ptr[1..].iter().map(|&p| p as u64))?;
        }
    }
    let labels: Vec<&str> = raw
        .table
        .classes()
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    let (_, len) = w.finish(&labels)?;
    Ok(len)
}

#[cfg(test)]
mod tests;
