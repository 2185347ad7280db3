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
//! | row pointer | CSR: (rows+1) * 8; 0  | u64: row i owns entries `row_ptr[i]..row_ptr[i+1]` |
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

pub mod block;
mod check;
mod header;
mod read;
mod write;

use crate::float::Precision;

use super::matrix::Features;

pub use crate::data::source::{NO_MMAP_ENV, mmap_enabled};
pub use header::{decode_header, read_header};
pub use read::{read, read_from_bytes, read_with};
// The rules on values that arrays held in memory follow too (`data::arrays`).
pub(crate) use check::{first_non_finite, locate};
pub(crate) use read::non_finite_message;
pub use write::{Writer, write_raw};

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

/// The conventional extension (without the dot).
pub const EXTENSION: &str = "pbin";

/// How the feature values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
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
pub(crate) const SECTION_NAMES: [&str; 5] = [
    "class-id",
    "values",
    "indices",
    "row-pointer",
    "label-table",
];
pub(crate) const CLASS_IDS: usize = 0;
pub(crate) const VALUES: usize = 1;
pub(crate) const INDICES: usize = 2;
pub(crate) const ROW_PTR: usize = 3;
pub(crate) const TABLE: usize = 4;

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

pub(crate) fn value_bytes(p: Precision) -> u64 {
    match p {
        Precision::F32 => 4,
        Precision::F64 => 8,
    }
}

pub(crate) fn align_up(n: u64) -> u64 {
    n.div_ceil(ALIGN).saturating_mul(ALIGN)
}

/// True when `head` starts with the magic bytes.
pub fn is_binary(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

/// Turns little-endian scalars read from a file into native ones (and back):
/// nothing to do on little-endian machines, a byte reversal otherwise.
pub(crate) fn fix_endian<T: bytemuck::Pod>(v: &mut [T]) {
    if cfg!(target_endian = "big") {
        for x in v {
            bytemuck::bytes_of_mut(x).reverse();
        }
    }
}

#[cfg(test)]
mod tests;
