//! Reading a whole LIBSVM file into a CSR matrix, on all cores.

use std::path::Path;

use crate::data::blocks::{Reading, Text, TextRows, extend_in_parallel, parse_rows, trim_excess};
use crate::data::labels::{LabelTable, MAX_DISTINCT_LABELS, Recent};
use crate::data::lines::LineReader;
use crate::data::matrix::MAX_FEATURE_INDEX;
use crate::data::matrix::{CsrMatrix, Features};
use crate::data::message::{NO_DATA_ROWS, quote};
use crate::data::options::{Format, IndexBase, NO_LABEL};
use crate::data::raw::{BaseWhy, LibsvmInfo, RawData};
use crate::error::{Error, Result};
use crate::float::Real;

use super::line::{FORMAT_LIMIT, Indexing, Line};

/// The rows read so far, as a [`CsrMatrix`] under construction in owned
/// vectors, with their labels.
pub(super) struct CsrRows<'p, F> {
    pub(super) path: &'p Path,
    pub(super) unlabeled: bool,
    pub(super) indexing: Indexing<'p>,
    pub(super) row_ptr: Vec<usize>,
    pub(super) indices: Vec<u32>,
    pub(super) values: Vec<F>,
    pub(super) class_ids: Vec<u32>,
    pub(super) table: LabelTable,
    /// Features the rows need: the largest column + 1 (see
    /// [`super::line::Read::count`]).
    pub(super) max_index: u64,
    /// The first index 0 (its line and 1-based column) while the base is
    /// detected.
    pub(super) zero_at: Option<(u64, u64)>,
    /// The last labels seen (for the fast path).
    pub(super) recent: Recent,
}

impl<'p, F: Real> CsrRows<'p, F> {
    fn new(path: &'p Path, unlabeled: bool, indexing: Indexing<'p>) -> Self {
        CsrRows {
            path,
            unlabeled,
            indexing,
            row_ptr: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
            class_ids: Vec::new(),
            table: LabelTable::default(),
            max_index: 0,
            zero_at: None,
            recent: Recent::default(),
        }
    }

    /// Reserves room for lines of `line_bytes` bytes with `entries_per_row`
    /// entries to fill `total` bytes (a few percent over rather than a
    /// regrowth).
    fn reserve_for(&mut self, total: u64, line_bytes: usize, entries_per_row: usize) {
        let rows = usize::try_from(total / (line_bytes as u64 + 1)).unwrap_or(usize::MAX);
        let rows = rows.saturating_add(rows / 32).saturating_add(1);
        let nnz = rows.saturating_mul(entries_per_row);
        crate::memory::reserve_hint(&mut self.row_ptr, rows);
        crate::memory::reserve_hint(&mut self.class_ids, rows);
        crate::memory::reserve_hint(&mut self.indices, nnz);
        crate::memory::reserve_hint(&mut self.values, nnz);
    }
}

impl<F: Real> TextRows for CsrRows<'_, F> {
    fn for_block(&self, bytes: usize) -> Self {
        let mut rows = CsrRows::new(self.path, self.unlabeled, self.indexing);
        // An entry takes four bytes at least (` k:v`): room for the most
        // the block holds (pages that stay untouched cost nothing). Rows
        // grow as they come: there are few of them.
        let entries = bytes / 4 + 1;
        crate::memory::reserve_hint(&mut rows.indices, entries);
        crate::memory::reserve_hint(&mut rows.values, entries);
        rows
    }

    fn clear(&mut self) {
        self.row_ptr.clear();
        self.row_ptr.push(0);
        self.indices.clear();
        self.values.clear();
        self.class_ids.clear();
        self.table = LabelTable::default();
        self.max_index = 0;
        self.zero_at = None;
        self.recent = Recent::default();
    }

    fn push_block(&mut self, block: &[u8], at_start: bool, max_line: usize) -> Option<u64> {
        self.push_fast(block, at_start, max_line)
    }

    /// Parses one line (a comment or blank line adds nothing).
    fn push_line(&mut self, line: &str, no: u64) -> Result<()> {
        let path = self.path;
        let Some(parsed) = Line::split(path, no, line, self.unlabeled)? else {
            return Ok(());
        };
        // Unlabeled rows share one class, whatever label a line has.
        let label = if self.unlabeled {
            NO_LABEL
        } else {
            parsed.label
        };
        let class = self.table.intern(label, no).ok_or_else(|| {
            parsed.err(
                parsed.label_at,
                format!(
                    "more than {MAX_DISTINCT_LABELS} distinct label values (this one is {}); \
                     this looks like regression data, not two classes",
                    quote(label)
                ),
            )
        })?;
        crate::memory::reserve(&mut self.row_ptr, 1)
            .and_then(|()| crate::memory::reserve(&mut self.class_ids, 1))
            .map_err(|s| s.data_error(path, "the rows", no))?;
        let read = parsed.parse_features(
            FORMAT_LIMIT,
            self.indexing,
            &mut self.indices,
            &mut self.values,
        )?;
        self.max_index = self.max_index.max(read.count);
        if self.zero_at.is_none() {
            self.zero_at = read.zero_at.map(|column| (no, column));
        }
        self.row_ptr.push(self.indices.len());
        self.class_ids.push(class);
        Ok(())
    }

    fn stored(&self) -> usize {
        self.indices.len()
    }

    fn absorb(&mut self, block: &Self, pending: usize, lines_before: u64) -> bool {
        let rows = block.class_ids.len();
        let room = pending.saturating_add(block.values.len());
        if crate::memory::reserve(&mut self.indices, room).is_err()
            || crate::memory::reserve(&mut self.values, room).is_err()
            || crate::memory::reserve(&mut self.row_ptr, rows).is_err()
            || crate::memory::reserve(&mut self.class_ids, rows).is_err()
        {
            return false;
        }
        let Some(ids) = self.table.absorb(&block.table, lines_before) else {
            return false;
        };
        let base = self.indices.len() + pending;
        self.row_ptr
            .extend(block.row_ptr[1..].iter().map(|&end| base + end));
        self.class_ids
            .extend(block.class_ids.iter().map(|&c| ids[c as usize]));
        self.max_index = self.max_index.max(block.max_index);
        if self.zero_at.is_none() {
            self.zero_at = block
                .zero_at
                .map(|(line, column)| (line + lines_before, column));
        }
        true
    }

    fn append(&mut self, blocks: &[&Self]) {
        let indices: Vec<&[u32]> = blocks.iter().map(|b| b.indices.as_slice()).collect();
        let values: Vec<&[F]> = blocks.iter().map(|b| b.values.as_slice()).collect();
        extend_in_parallel(&mut self.indices, &indices);
        extend_in_parallel(&mut self.values, &values);
    }
}

pub(crate) fn parse_lines<F: Real>(
    lines: LineReader<'_, Text<'_>>,
    path: &Path,
    unlabeled: bool,
    indexing: Indexing<'_>,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<RawData<F>> {
    let raw = parse_part_lines(lines, path, unlabeled, indexing, size_hint, reading)?;
    if raw.class_ids.is_empty() {
        return Err(Error::data(path, NO_DATA_ROWS));
    }
    Ok(raw)
}

/// [`parse_lines`] for a part of a file (see [`crate::data::block`]): no
/// rows is not an error, and the feature count is the largest index in the
/// part. When the base is detected, the part's own index 0 decides it (a
/// caller reading several parts settles one base for all).
pub(crate) fn parse_part_lines<F: Real>(
    lines: LineReader<'_, Text<'_>>,
    path: &Path,
    unlabeled: bool,
    indexing: Indexing<'_>,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<RawData<F>> {
    let mut m = CsrRows::<F>::new(path, unlabeled, indexing);
    // Sized once, from the first block with rows.
    parse_rows(lines, &mut m, reading, |m, bytes, lines, local| {
        let Some(total) = size_hint else {
            return true;
        };
        if local.class_ids.is_empty() {
            return false;
        }
        let entries = local.values.len().div_ceil(local.class_ids.len());
        m.reserve_for(
            total,
            (bytes / lines.max(1) as usize).saturating_sub(1),
            entries,
        );
        true
    })?;
    let (base, why) = index_base(indexing, m.zero_at, path);
    if indexing.base.is_none() && m.zero_at.is_some() {
        m.count_from_zero()?;
    }
    Ok(m.into_raw(base, why))
}

/// The base a part's indices are read in, and why: the one asked for (or
/// the model's), else zero when an index 0 was read, else one.
fn index_base(
    indexing: Indexing<'_>,
    zero_at: Option<(u64, u64)>,
    path: &Path,
) -> (IndexBase, BaseWhy) {
    match (indexing.base, zero_at) {
        (Some(base), _) => (
            base,
            indexing
                .from
                .map_or(BaseWhy::Asked, |m| BaseWhy::Model(m.to_path_buf())),
        ),
        (None, Some((line, _))) => (
            IndexBase::Zero,
            BaseWhy::ZeroAt {
                path: path.to_path_buf(),
                line,
            },
        ),
        (None, None) => (IndexBase::One, BaseWhy::NoZero),
    }
}

impl<F: Real> CsrRows<'_, F> {
    /// Makes rows read one-based, while the base was detected, zero-based:
    /// an index 0 turned up. An error when counting from 0 makes one
    /// feature too many.
    fn count_from_zero(&mut self) -> Result<()> {
        // Read with 1 subtracted (index 0 wrapped to u32::MAX): one pass
        // puts every index back, which only zero-based files pay.
        use rayon::prelude::*;
        self.indices
            .par_iter_mut()
            .for_each(|i| *i = i.wrapping_add(1));
        self.max_index += 1;
        let max_index = self.max_index;
        if max_index > MAX_FEATURE_INDEX {
            let (line, _) = self.zero_at.unwrap_or_default();
            return Err(Error::data(
                self.path,
                format!(
                    "has feature index {MAX_FEATURE_INDEX} and, on line {line}, index 0: \
                     counted from 0 that is {max_index} features, more than the limit of \
                     {MAX_FEATURE_INDEX}"
                ),
            ));
        }
        Ok(())
    }

    /// The rows read, in indices of `base` (chosen for `why`), as the
    /// part's data, their vectors trimmed to size.
    fn into_raw(self, base: IndexBase, why: BaseWhy) -> RawData<F> {
        let CsrRows {
            mut row_ptr,
            mut indices,
            mut values,
            mut class_ids,
            table,
            max_index,
            ..
        } = self;
        trim_excess(&mut row_ptr);
        trim_excess(&mut indices);
        trim_excess(&mut values);
        trim_excess(&mut class_ids);
        RawData {
            features: Features::Sparse(CsrMatrix {
                cols: usize::try_from(max_index).unwrap_or(usize::MAX),
                row_ptr: row_ptr.into(),
                indices: indices.into(),
                values: values.into(),
            }),
            class_ids,
            table,
            format: Format::Libsvm,
            csv: None,
            libsvm: Some(LibsvmInfo { base, why }),
        }
    }
}
