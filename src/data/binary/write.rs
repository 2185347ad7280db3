//! Writing a `.pbin` file, streamed section by section.

use std::io::{self, ErrorKind, Seek, SeekFrom, Write};

use crate::data::labels::MAX_DISTINCT_LABELS;
use crate::data::matrix::{Features, MAX_FEATURE_INDEX};
use crate::data::message::quote;
use crate::data::raw::RawData;
use crate::float::{Precision, Real};

use super::check::first_non_finite;
use super::{
    CLASS_IDS, HEADER_BYTES, Header, INDICES, Layout, MAX_LABEL_BYTES, MAX_TABLE_BYTES, ROW_PTR,
    SECTION_NAMES, Section, TABLE, VALUES, VERSION, align_up, fix_endian, value_bytes,
};

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
                    quote(l),
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
