//! Writing generated rows: the whole dataset in memory, or streamed a
//! block at a time to a file that appears only once complete.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;

use super::rows::{Block, Workspace};
use super::{Density, GenSummary, Generated, Generator, MATERIALISE_U, RowLabels, label_text};
use crate::data::binary::{Layout, Writer};
use crate::data::csv::{csv_line, shortest_csv_line};
use crate::data::libsvm::{libsvm_line, shortest_libsvm_line};
use crate::data::write::{OutputFormat, check_line, check_shortest_line};
use crate::data::{CsrMatrix, DenseMatrix, Features, Format, LabelTable, RawData, Row};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::output::{write_atomic, write_atomic_seekable};

impl Generator {
    /// Generates the whole dataset in memory, with the planted labels.
    pub fn generate<F: Real>(&self) -> Result<Generated<F>> {
        let rows = usize::try_from(self.opts.rows)
            .map_err(|_| Error::Usage("too many rows for memory".into()))?;
        let mut buf = Block::default();
        let mut values = Vec::new();
        let mut indices = Vec::new();
        let mut labels = Vec::with_capacity(rows);
        let mut redraws = 0;
        let step = self.block_rows();
        for start in (0..rows).step_by(step) {
            let n = step.min(rows - start);
            redraws += self.block::<F>(start as u64, n, &mut buf)?;
            values.extend_from_slice(&buf.values);
            indices.extend_from_slice(&buf.indices);
            labels.extend_from_slice(&buf.labels);
        }
        let cols = self.opts.features as usize;
        let features = match self.opts.density {
            Density::Dense => Features::Dense(DenseMatrix {
                rows,
                cols,
                values: values.into(),
            }),
            Density::Sparse { .. } => Features::Sparse(CsrMatrix {
                cols,
                row_ptr: (0..=rows).map(|i| i * self.k).collect(),
                indices: indices.into(),
                values: values.into(),
            }),
        };
        let first = labels[0].label;
        let class_ids: Vec<u32> = labels.iter().map(|l| (l.label != first) as u32).collect();
        let others = class_ids.iter().filter(|&&c| c == 1).count() as u64;
        let mut texts = vec![label_text(first).to_owned()];
        let mut counts = vec![rows as u64 - others];
        if others > 0 {
            texts.push(label_text(-first).to_owned());
            counts.push(others);
        }
        let table = LabelTable::from_parts(texts, &counts)
            .map_err(|_| Error::Usage("internal error: duplicate labels".into()))?;
        Ok(Generated {
            raw: RawData {
                features,
                class_ids,
                table,
                format: Format::Binary,
                csv: None,
                libsvm: None,
            },
            labels,
            redraws,
        })
    }

    /// Streams the dataset to `path` (atomically: a temporary file renamed
    /// at the end) in `format`, a block of rows at a time.
    pub fn write<F: Real>(&self, path: &Path, format: OutputFormat) -> Result<GenSummary> {
        self.check_fits::<F>(path, format)?;
        let t0 = Instant::now();
        let mut failure: Option<Error> = None;
        let mut summary = GenSummary {
            rows: self.opts.rows,
            cols: self.opts.features,
            nnz: self.opts.rows * self.k as u64,
            ..Default::default()
        };
        let result = match format {
            OutputFormat::Binary => write_atomic_seekable(path, |w| {
                self.stream_binary::<F>(w, &mut summary)
                    .map_err(|e| stash(e, &mut failure))
            }),
            OutputFormat::Csv | OutputFormat::Libsvm => write_atomic(path, |w| {
                self.stream_text::<F>(path, w, format == OutputFormat::Csv, &mut summary)
                    .map_err(|e| stash(e, &mut failure))
            }),
        };
        if let Some(e) = failure {
            return Err(e);
        }
        result?;
        summary.seconds = t0.elapsed().as_secs_f64();
        Ok(summary)
    }

    /// Refuses, before anything is allocated or written, output whose lines
    /// this tool could not read back and blocks of rows that do not fit in
    /// the memory available (one row of 2*10^9 features is 8 GB in f32, and
    /// its scratch space twice that in f64).
    fn check_fits<F: Real>(&self, path: &Path, format: OutputFormat) -> Result<()> {
        let cols = self.opts.features as usize;
        let k = self.k;
        // Labels are `+1` or `-1`.
        match format {
            OutputFormat::Csv => check_shortest_line(
                path,
                format,
                shortest_csv_line(2, cols),
                &format!("{cols} features, each written"),
            )?,
            OutputFormat::Libsvm => check_shortest_line(
                path,
                format,
                shortest_libsvm_line(2, k),
                &format!("{k} values per row"),
            )?,
            OutputFormat::Binary => {}
        }
        // The file, at its smallest: each line at its shortest (labels `+1`
        // or `-1`), or the binary arrays; checked against the disk first.
        let rows = self.opts.rows;
        let k = k as u64;
        let sparse = matches!(self.opts.density, Density::Sparse { .. });
        let least = match format {
            OutputFormat::Csv => shortest_csv_line(2, cols).saturating_add(1),
            OutputFormat::Libsvm => shortest_libsvm_line(2, k as usize).saturating_add(1),
            OutputFormat::Binary => {
                (std::mem::size_of::<F>() as u64 + if sparse { 4 } else { 0 }).saturating_mul(k)
            }
        }
        .saturating_mul(rows);
        crate::output::check_space(path, least)?;
        let needed = self.block_bytes::<F>(format);
        crate::memory::check(needed).map_err(|s| {
            Error::data(
                path,
                format!(
                    "generating rows of {} (a block of rows and the generator's scratch \
                     space) {s}; use fewer --features{}",
                    crate::text::count(cols, "feature"),
                    if matches!(self.opts.density, Density::Dense) {
                        " or --density sparse"
                    } else {
                        " or a smaller --nnz"
                    }
                ),
            )
        })
    }

    /// What writing holds at once: a block of values (and indices) for
    /// binary, two blocks of lines for text (one being written out, the
    /// next being made), each busy thread's f64 scratch of the row (x and
    /// w, and its row of values for text), and the planted vector when kept.
    fn block_bytes<F: Real>(&self, format: OutputFormat) -> u64 {
        let k = self.k as u64;
        let rows = self.block_rows() as u64;
        let sparse = matches!(self.opts.density, Density::Sparse { .. });
        let per_value = std::mem::size_of::<F>() as u64 + if sparse { 4 } else { 0 };
        let threads = (rayon::current_num_threads() as u64).min(rows);
        let dims = self.opts.features + self.opts.bias as u64;
        let planted = if dims <= MATERIALISE_U { dims * 8 } else { 0 };
        // A value's text and its separator, as `Display` writes the values
        // gen draws (`-0.12345678` in f32, 17 significant digits in f64). It
        // writes no exponent, so a far smaller value is longer: this is an
        // estimate, and a buffer that needs more grows.
        let chars = if F::PRECISION == crate::float::Precision::F32 {
            16
        } else {
            26
        };
        let line = match format {
            OutputFormat::Binary => 0,
            OutputFormat::Csv => (self.opts.features * 2).saturating_add(k * chars),
            OutputFormat::Libsvm => k.saturating_mul(chars + 12),
        };
        // A binary block's values are drawn in place; a text task draws its
        // row into a row of values of its own.
        let (held, scratch) = match format {
            OutputFormat::Binary => (k.saturating_mul(per_value), 16),
            OutputFormat::Csv | OutputFormat::Libsvm => (line.saturating_mul(2), 16 + per_value),
        };
        rows.saturating_mul(held)
            .saturating_add(threads.saturating_mul(k.saturating_mul(scratch)))
            .saturating_add(planted)
    }

    fn blocks<F: Real>(
        &self,
        summary: &mut GenSummary,
        mut each: impl FnMut(u64, &Block<F>) -> Result<()>,
    ) -> Result<()> {
        let mut buf = Block::default();
        let step = self.block_rows() as u64;
        let mut start = 0;
        while start < self.opts.rows {
            let n = step.min(self.opts.rows - start);
            let mut counts = RowCounts {
                redraws: self.block::<F>(start, n as usize, &mut buf)?,
                ..RowCounts::default()
            };
            counts.values(&buf.values);
            buf.labels.iter().for_each(|&l| counts.labels(l));
            counts.add_to(summary);
            each(start, &buf)?;
            start += n;
        }
        Ok(())
    }

    fn stream_binary<F: Real>(
        &self,
        w: &mut dyn crate::output::WriteSeek,
        summary: &mut GenSummary,
    ) -> Result<()> {
        let layout = match self.opts.density {
            Density::Dense => Layout::Dense,
            Density::Sparse { .. } => Layout::Csr,
        };
        let io = |e: std::io::Error| Error::Io {
            path: Default::default(),
            action: "cannot write output",
            source: e,
        };
        let mut out = Writer::new(
            w,
            layout,
            F::PRECISION,
            summary.rows,
            summary.cols,
            summary.nnz,
        )
        .map_err(io)?;
        let mut first: Option<i8> = None;
        let mut other = false;
        let mut ids = Vec::new();
        let k = self.k as u64;
        self.blocks::<F>(summary, |start, buf| {
            let f = *first.get_or_insert(buf.labels[0].label);
            ids.clear();
            ids.extend(buf.labels.iter().map(|l| (l.label != f) as u32));
            other |= ids.contains(&1);
            out.class_ids(&ids).map_err(io)?;
            out.values(&buf.values).map_err(io)?;
            if layout == Layout::Csr {
                out.indices(&buf.indices).map_err(io)?;
                let n = buf.labels.len() as u64;
                out.row_ends((start + 1..=start + n).map(|i| i * k))
                    .map_err(io)?;
            }
            Ok(())
        })?;
        let f = first.unwrap_or(1);
        let mut labels = vec![label_text(f)];
        if other {
            labels.push(label_text(-f));
        }
        let (_, bytes) = out.finish(&labels).map_err(io)?;
        summary.bytes = bytes;
        Ok(())
    }

    /// Streams text a block of rows at a time. The rows of a block are
    /// drawn and written as text in parallel, a chunk of lines per task,
    /// while this thread writes the previous block's text out.
    fn stream_text<F: Real>(
        &self,
        path: &Path,
        w: &mut dyn Write,
        csv: bool,
        summary: &mut GenSummary,
    ) -> Result<()> {
        let step = self.block_rows() as u64;
        let mut bytes = 0u64;
        let mut write = |chunks: &[TextChunk]| -> Result<()> {
            for c in chunks {
                w.write_all(&c.text).map_err(|e| Error::Io {
                    path: Default::default(),
                    action: "cannot write output",
                    source: e,
                })?;
                bytes += c.text.len() as u64;
            }
            Ok(())
        };
        let mut pending: Vec<TextChunk> = Vec::new();
        // The buffers of text written out, used again: fresh ones would
        // cost a page fault (and the kernel's zeroing) every 4 KiB.
        let mut pool: Vec<Vec<u8>> = Vec::new();
        let mut start = 0;
        while start < self.opts.rows {
            let n = step.min(self.opts.rows - start);
            let mut made = None;
            let mut written = Ok(());
            let spare = Mutex::new(std::mem::take(&mut pool));
            rayon::in_place_scope(|s| {
                s.spawn(|_| made = Some(self.text_block::<F>(path, start, n, csv, &spare)));
                written = write(&pending);
            });
            written?;
            pool = spare.into_inner().unwrap_or_else(|e| e.into_inner());
            pool.extend(pending.drain(..).map(|mut c| {
                c.text.clear();
                c.text
            }));
            pending = made.unwrap_or_else(|| Ok(Vec::new()))?;
            pending.iter().for_each(|c| c.counts.add_to(summary));
            start += n;
        }
        write(&pending)?;
        summary.bytes = bytes;
        Ok(())
    }

    /// Rows `start .. start + n` as text, in chunks of lines made in
    /// parallel (each row from its own stream, so the text does not depend
    /// on the threads).
    fn text_block<F: Real>(
        &self,
        path: &Path,
        start: u64,
        n: u64,
        csv: bool,
        spare: &Mutex<Vec<Vec<u8>>>,
    ) -> Result<Vec<TextChunk>> {
        const LINES: u64 = 256;
        (0..n.div_ceil(LINES))
            .into_par_iter()
            .map(|c| {
                let first = start + c * LINES;
                let text = spare.lock().ok().and_then(|mut p| p.pop());
                let n = LINES.min(start + n - first);
                self.text_chunk::<F>(path, first, n, csv, text.unwrap_or_default())
            })
            .collect()
    }

    /// Rows `first .. first + n` as text, in `text` (empty).
    fn text_chunk<F: Real>(
        &self,
        path: &Path,
        first: u64,
        n: u64,
        csv: bool,
        mut text: Vec<u8>,
    ) -> Result<TextChunk> {
        let k = self.k;
        let cols = self.opts.features as usize;
        let sparse = matches!(self.opts.density, Density::Sparse { .. });
        let mut ws = Workspace::default();
        let mut values = vec![F::ZERO; k];
        let mut indices = vec![0u32; if sparse { k } else { 0 }];
        // About what the lines take (values of up to ten characters and
        // indices of up to seven in LIBSVM; at most 8 MiB ahead), so that
        // the text rarely moves.
        text.reserve(
            (n as usize)
                .saturating_mul(4 + k.saturating_mul(if csv { 12 } else { 20 }))
                .min(1 << 23),
        );
        let mut chunk = TextChunk {
            text,
            ..Default::default()
        };
        for i in first..first + n {
            let (labels, attempts) = self.row(i, &mut ws, &mut indices, &mut values)?;
            chunk.counts.redraws += u64::from(attempts - 1);
            chunk.counts.values(&values);
            chunk.counts.labels(labels);
            let row = if sparse {
                Row::Sparse(&indices, &values)
            } else {
                Row::Dense(&values)
            };
            let label = label_text(labels.label);
            let len = if csv {
                csv_line(&mut chunk.text, label, row, cols)
            } else {
                libsvm_line(&mut chunk.text, label, row)
            };
            check_line(path, i + 1, len)?;
        }
        Ok(chunk)
    }
}

/// A chunk of rows as text, and what the summary counts of them.
#[derive(Default)]
struct TextChunk {
    text: Vec<u8>,
    counts: RowCounts,
}

/// What the summary counts of rows drawn, whatever the output.
#[derive(Clone, Copy, Default)]
struct RowCounts {
    redraws: u64,
    nonzeros: u64,
    positive: u64,
    flipped: u64,
}

impl RowCounts {
    /// Counts the values that are not zero, as `info` counts them.
    fn values<F: Real>(&mut self, values: &[F]) {
        self.nonzeros += values.iter().filter(|&&v| v != F::ZERO).count() as u64;
    }

    /// Counts a row's labels: +1 after noise, and flipped by it.
    fn labels(&mut self, l: RowLabels) {
        self.positive += u64::from(l.label > 0);
        self.flipped += u64::from(l.label != l.planted);
    }

    fn add_to(self, summary: &mut GenSummary) {
        summary.redraws += self.redraws;
        summary.nonzeros += self.nonzeros;
        summary.positive += self.positive;
        summary.flipped += self.flipped;
    }
}

/// Keeps the real error for after the atomic write is abandoned.
fn stash(e: Error, slot: &mut Option<Error>) -> std::io::Error {
    let io = match &e {
        Error::Io { source, .. } => std::io::Error::new(source.kind(), source.to_string()),
        _ => std::io::Error::other(e.to_string()),
    };
    if !matches!(e, Error::Io { .. }) {
        *slot = Some(e);
    }
    io
}
