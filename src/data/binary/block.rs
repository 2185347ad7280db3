//! Reading rows `lo..hi` of a `.pbin` file without the others: one process
//! of a distributed run holds its block of rows only. Only the block's
//! bytes are mapped (or read), and the rules of the format that concern
//! those rows are checked, with messages that count rows from the file's
//! first, as [`super::read`] does. The rules about the whole file that a
//! block cannot see (every label table entry used by some row; the row
//! pointers' first and last entries, checked by the blocks that hold them)
//! are the caller's to combine: [`PartCounts`] has what it needs.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use memmap2::{Mmap, MmapOptions};

use crate::data::labels::LabelTable;
use crate::data::matrix::{CsrMatrix, DenseMatrix, Features};
use crate::data::options::Format;
use crate::data::raw::RawData;
use crate::data::storage::Storage;
use crate::error::{Error, Result};
use crate::float::{Precision, Real};

use super::check::{check_csr_part, check_csr_rows, decode_table};
use super::header::open_checked;
use super::read::{check_finite, class_counts, count, label_table, read_converted, read_section};
use super::{CLASS_IDS, Header, INDICES, Layout, ROW_PTR, Section, TABLE, VALUES};
use crate::data::source::mmap_enabled;

/// What a block knows about the whole file's rules: its rows of each class
/// (in the file's label table order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartCounts {
    pub class_rows: Vec<u64>,
}

/// The rows of a `.pbin` file: its header, read and checked against the
/// file's length.
pub fn rows_of(path: &Path) -> Result<u64> {
    Ok(open_checked(path)?.1.rows)
}

/// Rows `lo..hi` of the file (0-based, `hi` at most its rows), in
/// precision `F`. The label table is the file's whole table; class counts
/// are the block's.
pub fn read_rows<F: Real>(path: &Path, lo: u64, hi: u64) -> Result<(RawData<F>, PartCounts)> {
    let (file, h, _) = open_checked(path)?;
    if lo > hi || hi > h.rows {
        return Err(Error::Usage(format!(
            "{}: rows {lo}..{hi} asked of a file of {} rows",
            path.display(),
            h.rows
        )));
    }
    let block = Block {
        file: &file,
        path,
        h: &h,
        lo,
        hi,
        lo_u: count(lo, path)?,
        rows: count(hi - lo, path)?,
        cols: count(h.cols, path)?,
    };
    let (class_ids, table, counts) = block.classes()?;
    let (features, first) = match h.layout {
        Layout::Dense => block.dense::<F>()?,
        Layout::Csr => block.csr::<F>()?,
    };
    block.check_finite(&features, first)?;
    Ok((
        RawData {
            features,
            class_ids,
            table,
            format: Format::Binary,
            csv: None,
            libsvm: None,
        },
        PartCounts { class_rows: counts },
    ))
}

/// Rows `lo..hi` of an open, checked file: what each step of reading them
/// needs.
struct Block<'a> {
    file: &'a File,
    path: &'a Path,
    h: &'a Header,
    lo: u64,
    hi: u64,
    /// `lo`, `hi - lo` and the file's columns as `usize`, checked to fit.
    lo_u: usize,
    rows: usize,
    cols: usize,
}

impl Block<'_> {
    /// The block's class ids, the file's whole label table (with the
    /// block's counts) and the block's rows of each class; an error for a
    /// class id outside the table.
    fn classes(&self) -> Result<(Vec<u32>, LabelTable, Vec<u64>)> {
        let (file, path, h, lo, hi) = (self.file, self.path, self.h, self.lo, self.hi);
        let s = h.sections;
        let table_bytes: Vec<u8> =
            read_section(file, path, s[TABLE], s[TABLE].len as usize, "label-table")?;
        let texts = decode_table(&table_bytes, h.classes).map_err(|m| Error::data(path, m))?;
        let ids_at = Section {
            offset: s[CLASS_IDS].offset + lo * 4,
            len: (hi - lo) * 4,
        };
        let class_ids: Vec<u32> = read_section(file, path, ids_at, self.rows, "class-id")?;
        let counts = class_counts(path, &class_ids, texts.len(), self.lo_u)?;
        let table = label_table(path, texts, &counts)?;
        Ok((class_ids, table, counts))
    }

    /// The block's rows of a dense file, and the index of their first
    /// stored value.
    fn dense<F: Real>(&self) -> Result<(Features<F>, u64)> {
        let (h, lo, hi) = (self.h, self.lo, self.hi);
        let first = lo * h.cols;
        let n = count((hi - lo) * h.cols, self.path)?;
        let values = values_at::<F>(self.file, self.path, h, first, n)?;
        let (rows, cols) = (self.rows, self.cols);
        Ok((Features::Dense(DenseMatrix { rows, cols, values }), first))
    }

    /// The block's rows of a sparse file, their row pointers and indices
    /// checked, and the index of their first stored value.
    fn csr<F: Real>(&self) -> Result<(Features<F>, u64)> {
        let (file, path, h, lo, hi) = (self.file, self.path, self.h, self.lo, self.hi);
        let s = h.sections;
        let rows = self.rows;
        let ptr_at = Section {
            offset: s[ROW_PTR].offset + lo * 8,
            len: (hi - lo + 1) * 8,
        };
        let wide: Vec<u64> = read_section(file, path, ptr_at, rows + 1, "row-pointer")?;
        let end_at = Section {
            offset: s[ROW_PTR].offset + h.rows * 8,
            len: 8,
        };
        let last: Vec<u64> = read_section(file, path, end_at, 1, "row-pointer")?;
        let ptr: Vec<usize> = wide
            .iter()
            .map(|&p| count(p, path))
            .collect::<Result<_>>()?;
        check_csr_part(&ptr, lo, count(last[0], path)?, h.nnz).map_err(|m| Error::data(path, m))?;
        let (first, n) = (wide[0], ptr[rows] - ptr[0]);
        let at = Section {
            offset: s[INDICES].offset + first * 4,
            len: n as u64 * 4,
        };
        let indices: Storage<u32> = match mapped(file, at.offset, n) {
            Some(m) => m,
            None => read_section(file, path, at, n, "indices")?.into(),
        };
        check_csr_rows(&ptr, &indices, h.cols, lo).map_err(|m| Error::data(path, m))?;
        let values = values_at::<F>(file, path, h, first, n)?;
        let row_ptr: Vec<usize> = ptr.iter().map(|&p| p - ptr[0]).collect();
        let m = CsrMatrix {
            cols: self.cols,
            row_ptr: row_ptr.into(),
            indices,
            values,
        };
        Ok((Features::Sparse(m), first))
    }

    /// An error naming the first value of `features` (the block's, from
    /// stored value `first` on) that is not finite in precision `F`.
    fn check_finite<F: Real>(&self, features: &Features<F>, first: u64) -> Result<()> {
        let first = (count(first, self.path)?, self.lo_u);
        check_finite(self.file, self.path, self.h, features, first)
    }
}

/// Stored values `first..first + n` as `F`: mapped in place where they can
/// be, else read (and converted from the file's precision).
fn values_at<F: Real>(
    file: &File,
    path: &Path,
    h: &Header,
    first: u64,
    n: usize,
) -> Result<Storage<F>> {
    let vb = h.value_bytes();
    let at = Section {
        offset: h.sections[VALUES].offset + first * vb,
        len: n as u64 * vb,
    };
    Ok(match (h.precision, F::PRECISION) {
        (p, q) if p == q => match mapped(file, at.offset, n) {
            Some(m) => m,
            None => read_section(file, path, at, n, "values")?.into(),
        },
        (Precision::F32, _) => read_converted::<f32, F>(file, path, at, n)?.into(),
        (Precision::F64, _) => read_converted::<f64, F>(file, path, at, n)?.into(),
    })
}

/// `n` elements of `T` at byte `offset` of the file, mapped by themselves
/// (the pages around them only), when mapping is on and works.
fn mapped<T: bytemuck::Pod>(file: &File, offset: u64, n: usize) -> Option<Storage<T>> {
    if cfg!(target_endian = "big") || n == 0 || !mmap_enabled() {
        return None;
    }
    const PAGE: u64 = 4096;
    let start = offset / PAGE * PAGE;
    let len = usize::try_from(offset - start).ok()? + n.checked_mul(std::mem::size_of::<T>())?;
    // SAFETY: as for the whole-file map in `super::read`: read-only, read
    // only as plain numbers; a file changed by another process while mapped
    // is the documented remaining risk.
    let map = unsafe { MmapOptions::new().offset(start).len(len).map(file) }.ok()?;
    let map: Arc<Mmap> = Arc::new(map);
    Storage::mapped(map, (offset - start) as usize, n)
}
