//! Reading a whole CSV file into a dense matrix, on all cores.

use std::path::Path;

use crate::data::blocks::{Reading, Text, TextRows, extend_in_parallel, parse_rows, trim_excess};
use crate::data::labels::{LabelTable, MAX_DISTINCT_LABELS, Recent};
use crate::data::lines::LineReader;
use crate::data::matrix::{DenseMatrix, Features};
use crate::data::message::{NO_DATA_ROWS, column_at, quote};
use crate::data::options::{Format, LoadOptions, NO_LABEL};
use crate::data::raw::RawData;
use crate::error::{Error, Result};
use crate::float::Real;

use super::layout::Layout;
use super::sniff::is_skipped;

pub(crate) fn parse_lines<F: Real>(
    lines: LineReader<'_, Text<'_>>,
    path: &Path,
    opts: &LoadOptions,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<RawData<F>> {
    let Some(raw) = parse_first_part(lines, path, opts, size_hint, reading)? else {
        return Err(Error::data(path, NO_DATA_ROWS));
    };
    if raw.class_ids.is_empty() {
        return Err(Error::data(
            path,
            "no data rows: the file holds only a header line",
        ));
    }
    Ok(raw)
}

/// Reads the part of a file that starts at or before its first data line:
/// that line fixes the layout (and is skipped when it is a header), as in
/// [`parse_lines`]. `None` when the part holds only blank and comment lines;
/// a part without data rows is not an error (see [`crate::data::block`]).
pub(crate) fn parse_first_part<F: Real>(
    mut lines: LineReader<'_, Text<'_>>,
    path: &Path,
    opts: &LoadOptions,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<Option<RawData<F>>> {
    // The first line that is not blank or a comment fixes the delimiter, the
    // number of fields, the label column and whether there is a header.
    let (first, first_no) = loop {
        match lines.next_line()? {
            None => return Ok(None),
            Some((_, l)) if is_skipped(l) => continue,
            Some((no, l)) => break (l.to_owned(), no),
        }
    };
    let (layout, has_header) = Layout::detect(&first, first_no, path, opts)?;
    let first = (!has_header).then_some((first.as_str(), first_no));
    parse_body(lines, path, layout, first, size_hint, reading).map(Some)
}

/// Reads a part of a file that starts after its first data line: every
/// line that is not blank or a comment is a data row under `layout`.
pub(crate) fn parse_part<F: Real>(
    lines: LineReader<'_, Text<'_>>,
    path: &Path,
    layout: Layout,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<RawData<F>> {
    parse_body(lines, path, layout, None, size_hint, reading)
}

/// The rows of `lines` under `layout`, after `first` (a data row already
/// read, with its line number).
fn parse_body<F: Real>(
    lines: LineReader<'_, Text<'_>>,
    path: &Path,
    layout: Layout,
    first: Option<(&str, u64)>,
    size_hint: Option<u64>,
    reading: Reading,
) -> Result<RawData<F>> {
    let cols = layout.cols();
    let info = layout.info();
    let mut rows = Rows {
        path,
        layout,
        values: Vec::new(),
        class_ids: Vec::new(),
        table: LabelTable::default(),
        recent: Recent::default(),
    };
    let mut reserved = false;
    let mut reserve = |rows: &mut Rows<F>, line_bytes: usize| {
        if reserved {
            return;
        }
        reserved = true;
        if let Some(total) = size_hint {
            // Rows like this one would fill the file; a few percent over
            // rather than a regrowth.
            let est = usize::try_from(total / (line_bytes as u64 + 1)).unwrap_or(usize::MAX);
            let est = est.saturating_add(est / 32).saturating_add(1);
            crate::memory::reserve_hint(&mut rows.values, est.saturating_mul(cols));
            crate::memory::reserve_hint(&mut rows.class_ids, est);
        }
    };
    if let Some((line, no)) = first {
        reserve(&mut rows, line.len());
        rows.push(line, no)?;
    }
    parse_rows(lines, &mut rows, reading, |rows, bytes, lines, _| {
        reserve(rows, (bytes / lines.max(1) as usize).saturating_sub(1));
        true
    })?;
    let Rows {
        mut values,
        mut class_ids,
        table,
        ..
    } = rows;
    trim_excess(&mut values);
    trim_excess(&mut class_ids);
    Ok(RawData {
        features: Features::Dense(DenseMatrix {
            rows: class_ids.len(),
            cols,
            values: values.into(),
        }),
        class_ids,
        table,
        format: Format::Csv,
        csv: Some(info),
        libsvm: None,
    })
}

/// The data rows read so far.
pub(super) struct Rows<'p, F> {
    pub(super) path: &'p Path,
    pub(super) layout: Layout,
    pub(super) values: Vec<F>,
    pub(super) class_ids: Vec<u32>,
    pub(super) table: LabelTable,
    /// The last labels seen (for the fast path).
    pub(super) recent: Recent,
}

impl<F: Real> TextRows for Rows<'_, F> {
    fn for_block(&self, bytes: usize) -> Self {
        let mut rows = Rows {
            path: self.path,
            layout: self.layout.clone(),
            values: Vec::new(),
            class_ids: Vec::new(),
            table: LabelTable::default(),
            recent: Recent::default(),
        };
        // Every field takes two bytes at least (a character and a
        // delimiter or the newline): room for the most rows the block holds.
        let most = bytes / (2 * self.layout.expected()).max(1) + 1;
        crate::memory::reserve_hint(&mut rows.values, most.saturating_mul(self.layout.cols()));
        crate::memory::reserve_hint(&mut rows.class_ids, most);
        rows
    }

    fn clear(&mut self) {
        self.values.clear();
        self.class_ids.clear();
        self.table = LabelTable::default();
        self.recent = Recent::default();
    }

    fn push_block(&mut self, block: &[u8], at_start: bool, max_line: usize) -> Option<u64> {
        self.push_fast(block, at_start, max_line)
    }

    fn push_line(&mut self, line: &str, no: u64) -> Result<()> {
        if is_skipped(line) {
            return Ok(());
        }
        self.push(line, no)
    }

    fn stored(&self) -> usize {
        self.values.len()
    }

    fn absorb(&mut self, block: &Self, pending: usize, lines_before: u64) -> bool {
        let room = pending.saturating_add(block.values.len());
        if crate::memory::reserve(&mut self.values, room).is_err()
            || crate::memory::reserve(&mut self.class_ids, block.class_ids.len()).is_err()
        {
            return false;
        }
        let Some(ids) = self.table.absorb(&block.table, lines_before) else {
            return false;
        };
        self.class_ids
            .extend(block.class_ids.iter().map(|&c| ids[c as usize]));
        true
    }

    fn append(&mut self, blocks: &[&Self]) {
        let parts: Vec<&[F]> = blocks.iter().map(|b| b.values.as_slice()).collect();
        extend_in_parallel(&mut self.values, &parts);
    }
}

impl<F: Real> Rows<'_, F> {
    /// Parses one data line and appends it.
    fn push(&mut self, line: &str, no: u64) -> Result<()> {
        let path = self.path;
        // Room for the whole row first, so that the pushes below never
        // reallocate: running out of memory is then an error, not an abort.
        crate::memory::reserve(&mut self.values, self.layout.cols())
            .map_err(|s| s.data_error(path, "the feature values", no))?;
        crate::memory::reserve(&mut self.class_ids, 1)
            .map_err(|s| s.data_error(path, "the labels", no))?;
        let start = self.values.len();
        let Some(label) = self.layout.label else {
            // Unlabeled: every row is of the one class.
            self.layout
                .parse_row(path, line, no, &mut self.values, |_, _| Ok(()))?;
            let class = self.table.intern(NO_LABEL, no).unwrap_or(0);
            self.class_ids.push(class);
            return Ok(());
        };
        let label_column = label + 1;
        let table = &mut self.table;
        let mut class = None;
        self.layout
            .parse_row(path, line, no, &mut self.values, |text, at| {
                let id = table.intern(text, no).ok_or_else(|| {
                    Error::parse(
                        path,
                        no,
                        Some(column_at(line, at)),
                        format!(
                            "more than {MAX_DISTINCT_LABELS} distinct label values (this one is \
                             {}); is column {label_column} really the label?",
                            quote(text),
                        ),
                    )
                })?;
                class = Some(id);
                Ok(())
            })?;
        match class {
            Some(c) => self.class_ids.push(c),
            None => {
                // Unreachable: every complete line has a label. Keep the matrix whole anyway.
                self.values.truncate(start);
            }
        }
        Ok(())
    }
}
