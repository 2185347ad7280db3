//! Reading examples one at a time from a file or stdin, for online learning.
//!
//! A [`RowStream`] reads CSV or LIBSVM text (gzipped or not) line by line and
//! hands out one example at a time: its label text and its features, in
//! buffers that the next example reuses. Nothing accumulates, so memory stays
//! O(features) however long the stream. Each line is read by the batch
//! parsers' own code (`csv::Layout`, `libsvm::Line`, the
//! bounded `LineReader`), so a bad line gives the same message, with the
//! same file (`<stdin>` for standard input), line and column, as `train`
//! would give for it.
//!
//! The format comes from `--format`, else the file name, else the first data
//! line (a label and `index:value` tokens is LIBSVM; `,` `;` or a tab is
//! CSV). Gzip is recognised by a file's `.gz` name or by the gzip magic bytes
//! at the start of the input (stdin included). Binary `.pbin` files cannot be
//! streamed and are refused.
//!
//! The input is read by a helper thread in chunks, as soon as any bytes
//! arrive, so a line written into a pipe is processed at once, and a stop
//! flag (Ctrl-C) ends a wait for input that may never come.

mod pump;

use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};
use crate::float::Real;

use super::binary;
use super::csv::{Layout, is_skipped};
use super::format::{format_from_line, format_from_name};
use super::libsvm::{IndexLimit, Indexing, Line};
use super::lines::LineReader;
use super::matrix::Row;
use super::message::{NO_DATA_ROWS, column_at, quote};
use super::options::{Format, IndexBase, LoadOptions, NO_LABEL};
use super::raw::{BaseWhy, CsvInfo, LibsvmInfo};
use super::source::{self, gunzip, looks_like_gzip};
use pump::{CHUNK_BYTES, Pump};

/// How standard input is named in messages.
pub use super::source::STDIN_NAME;

/// Appended to the message for a feature index beyond the stream's limit.
const MAX_FEATURES_WHY: &str =
    " (--max-features): the weight vector grows to the largest feature index seen";

/// Where a stream comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamSource<'p> {
    File(&'p Path),
    Stdin,
}

impl<'p> StreamSource<'p> {
    /// `-` is standard input, anything else a file.
    pub fn from_arg(arg: &'p Path) -> Self {
        if arg.as_os_str() == "-" {
            StreamSource::Stdin
        } else {
            StreamSource::File(arg)
        }
    }

    /// The name used in messages: the path, or `<stdin>`.
    pub fn name(&self) -> &'p Path {
        match self {
            StreamSource::File(p) => p,
            StreamSource::Stdin => Path::new(STDIN_NAME),
        }
    }
}

/// One example of a stream, valid until the next is read.
#[derive(Clone, Copy, Debug)]
pub struct StreamRow<'a, F> {
    /// 1-based line number.
    pub line: u64,
    /// The label as written (unquoted).
    pub label: &'a str,
    /// 1-based character column of the label, for messages.
    pub label_column: u64,
    pub row: Row<'a, F>,
    /// Weights the row needs: the feature columns of a CSV row, the largest
    /// column + 1 of a LIBSVM row (0 when it has no features).
    pub features: usize,
}

/// Examples read one at a time; see the module documentation.
pub struct RowStream<'p, F> {
    path: &'p Path,
    lines: LineReader<'p, Box<dyn BufRead>>,
    format: Format,
    /// The CSV layout (None for LIBSVM).
    csv: Option<Layout>,
    /// The first data line, read to detect the format and layout and not yet
    /// handed out.
    pending: Option<(u64, String)>,
    max_features: u64,
    /// Rows have no label (see [`LoadOptions::unlabeled`]).
    unlabeled: bool,
    /// How LIBSVM indices count: a stream cannot look ahead for an index 0,
    /// so it is one-based unless asked (an index 0 is then refused, with a
    /// hint).
    index_base: IndexBase,
    index_base_from: Option<PathBuf>,
    index_base_asked: bool,
    stop: Option<Arc<AtomicBool>>,
    values: Vec<F>,
    indices: Vec<u32>,
    label: String,
}

impl<'p, F: Real> RowStream<'p, F> {
    /// Opens `source` and reads up to its first data line (to settle the
    /// format and, for CSV, the layout and header). CSV options come from
    /// `opts` (`positive` is ignored). Rows needing more than `max_features`
    /// weights are refused. When `stop` becomes true, a wait for input ends
    /// with an error (see [`RowStream::stopped`]).
    pub fn open(
        source: StreamSource<'p>,
        opts: &LoadOptions,
        max_features: u64,
        stop: Option<Arc<AtomicBool>>,
    ) -> Result<Self> {
        let path = source.name();
        let (raw, regular): (Box<dyn Read + Send>, bool) = match source {
            StreamSource::File(p) => {
                let (file, meta) = source::open_file(p)?;
                (Box::new(file), meta.is_file())
            }
            StreamSource::Stdin => (Box::new(io::stdin()), false),
        };
        let named = match source {
            StreamSource::File(p) => format_from_name(p),
            StreamSource::Stdin => None,
        };
        let gzip_name = matches!(source, StreamSource::File(p) if source::is_gzip(p));
        Self::from_reader(
            path,
            raw,
            regular,
            named,
            gzip_name,
            opts,
            max_features,
            stop,
        )
    }

    /// [`RowStream::open`] on an opened reader. `regular`: a plain file,
    /// whose first bytes can be awaited without delaying a live stream.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_reader(
        path: &'p Path,
        raw: Box<dyn Read + Send>,
        regular: bool,
        named: Option<Format>,
        gzip_name: bool,
        opts: &LoadOptions,
        max_features: u64,
        stop: Option<Arc<AtomicBool>>,
    ) -> Result<Self> {
        let said = opts.format.or(named);
        if said == Some(Format::Binary) {
            return Err(binary_refused(path));
        }
        if said == Some(Format::Npy) {
            return Err(npy_refused(path));
        }
        let mut lines = open_text(path, raw, regular, gzip_name, stop.clone())?;
        let (no, first) = loop {
            match lines.next_line()? {
                None => return Err(Error::data(path, NO_DATA_ROWS)),
                Some((_, l)) if is_skipped(l) => continue,
                Some((no, l)) => break (no, l.to_owned()),
            }
        };
        let format = stream_format(path, (no, &first), said, opts, regular || named.is_some())?;
        let (csv, pending) = match format {
            Format::Csv => {
                let (layout, header) = csv_layout(path, (no, &first), opts, max_features)?;
                (Some(layout), (!header).then_some((no, first)))
            }
            Format::Libsvm => (None, Some((no, first))),
            Format::Binary => return Err(binary_refused(path)),
            Format::Npy => return Err(npy_refused(path)),
        };
        Ok(RowStream {
            path,
            lines,
            format,
            csv,
            pending,
            max_features,
            unlabeled: opts.unlabeled,
            index_base: opts.index_base.unwrap_or(IndexBase::One),
            index_base_from: opts.index_base_from.clone(),
            index_base_asked: opts.index_base.is_some(),
            stop,
            values: Vec::new(),
            indices: Vec::new(),
            label: String::new(),
        })
    }

    /// The next example, or `None` at the end of the input. After an error
    /// the stream should not be read further.
    pub fn next_row(&mut self) -> Result<Option<StreamRow<'_, F>>> {
        let RowStream {
            path,
            lines,
            csv,
            pending,
            max_features,
            unlabeled,
            index_base,
            index_base_from,
            values,
            indices,
            label,
            ..
        } = self;
        let path: &Path = path;
        loop {
            let held;
            let (no, line): (u64, &str) = match pending.take() {
                Some((no, l)) => {
                    held = l;
                    (no, held.as_str())
                }
                None => match lines.next_line()? {
                    None => return Ok(None),
                    Some(x) => x,
                },
            };
            values.clear();
            if let Some(layout) = csv {
                if is_skipped(line) {
                    continue;
                }
                let mut column = 1;
                label.clear();
                if *unlabeled {
                    label.push_str(NO_LABEL);
                }
                layout.parse_row(path, line, no, values, |text, at| {
                    label.clear();
                    label.push_str(text);
                    column = column_at(line, at);
                    Ok(())
                })?;
                return Ok(Some(StreamRow {
                    line: no,
                    label,
                    label_column: column,
                    row: Row::Dense(values),
                    features: layout.cols(),
                }));
            }
            let Some(parsed) = Line::split(path, no, line, *unlabeled)? else {
                continue;
            };
            label.clear();
            label.push_str(if *unlabeled { NO_LABEL } else { parsed.label });
            let column = column_at(line, parsed.label_at);
            indices.clear();
            let limit = IndexLimit {
                max: *max_features,
                why: MAX_FEATURES_WHY,
            };
            let indexing = Indexing {
                base: Some(*index_base),
                from: index_base_from.as_deref(),
            };
            let read = parsed.parse_features(limit, indexing, indices, values)?;
            return Ok(Some(StreamRow {
                line: no,
                label,
                label_column: column,
                row: Row::Sparse(indices, values),
                features: usize::try_from(read.count).unwrap_or(usize::MAX),
            }));
        }
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// How LIBSVM indices are counted, and why (`None` for CSV).
    pub fn libsvm_info(&self) -> Option<LibsvmInfo> {
        (self.format == Format::Libsvm).then(|| LibsvmInfo {
            base: self.index_base,
            why: match &self.index_base_from {
                Some(m) => BaseWhy::Model(m.clone()),
                None if self.index_base_asked => BaseWhy::Asked,
                None => BaseWhy::Stream,
            },
        })
    }

    /// The CSV layout settled from the first line (`None` for LIBSVM).
    pub fn csv_info(&self) -> Option<CsvInfo> {
        self.csv.as_ref().map(Layout::info)
    }

    /// The name used in messages.
    pub fn path(&self) -> &'p Path {
        self.path
    }

    /// Whether the stop flag is set: an error from [`RowStream::next_row`]
    /// may then just mean that a wait for input was cut short.
    pub fn stopped(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// The text of a stream, read by a helper thread: `raw` gunzipped when its
/// name (`gzip_name`) or its first bytes say so. An error for a `.pbin` or
/// `.npy` file, which cannot be streamed. `regular`: a plain file, whose
/// first bytes can be awaited without delaying a live stream.
fn open_text<'p>(
    path: &'p Path,
    raw: Box<dyn Read + Send>,
    regular: bool,
    gzip_name: bool,
    stop: Option<Arc<AtomicBool>>,
) -> Result<LineReader<'p, Box<dyn BufRead>>> {
    let mut pump =
        Pump::spawn(raw, stop).map_err(|e| Error::io(path, "cannot start reading", e))?;
    // A live stream is only asked for two bytes (the gzip magic) before
    // its first line is read, so its first example is not held back.
    let want = if regular { binary::MAGIC.len() } else { 2 };
    let head = pump
        .peek(want)
        .map_err(|e| Error::io(path, "cannot read", e))?;
    if head.len() >= 2 && binary::MAGIC.starts_with(&head[..head.len().min(8)]) {
        return Err(binary_refused(path));
    }
    if crate::data::npy::is_npy(head) {
        return Err(npy_refused(path));
    }
    let gzip = gzip_name || looks_like_gzip(head);
    let reader: Box<dyn BufRead> = if gzip {
        Box::new(BufReader::with_capacity(CHUNK_BYTES, gunzip(pump)))
    } else {
        Box::new(BufReader::with_capacity(CHUNK_BYTES, pump))
    };
    Ok(LineReader::new(reader, path))
}

/// The stream's format: the one `said` (by `--format` or the name), else
/// the one its first data line `first`, line `no`, has, else CSV when a
/// delimiter is given. `named`: the format could have come from a name,
/// which the message for none says.
fn stream_format(
    path: &Path,
    (no, first): (u64, &str),
    said: Option<Format>,
    opts: &LoadOptions,
    named: bool,
) -> Result<Format> {
    // A delimiter given says the stream is delimited text.
    let delimited = opts.delimiter.map(|_| Format::Csv);
    match said
        .or_else(|| format_from_line(first.trim(), false))
        .or(delimited)
    {
        Some(f) => Ok(f),
        None => Err(Error::parse(
            path,
            no,
            None,
            format!(
                "cannot tell the format from the {}first data line {}; use --format \
                 csv or --format libsvm",
                if named { "file name or from its " } else { "" },
                quote(first.trim())
            ),
        )),
    }
}

/// The CSV layout of a stream from its first data line `first`, line `no`,
/// and whether that line is a header; an error when its feature columns
/// exceed `max_features`.
fn csv_layout(
    path: &Path,
    (no, first): (u64, &str),
    opts: &LoadOptions,
    max_features: u64,
) -> Result<(Layout, bool)> {
    let (layout, header) = Layout::detect(first, no, path, opts)?;
    if layout.cols() as u64 > max_features {
        return Err(Error::parse(
            path,
            no,
            Some(1),
            format!(
                "{} feature columns exceed the limit of {max_features}{MAX_FEATURES_WHY}",
                layout.cols()
            ),
        ));
    }
    Ok((layout, header))
}

fn binary_refused(path: &Path) -> Error {
    Error::data(
        path,
        "binary (.pbin) data cannot be read as a stream; give CSV or LIBSVM text (`perceptron \
         convert DATA.pbin DATA.svm` writes one)",
    )
}

fn npy_refused(path: &Path) -> Error {
    Error::data(
        path,
        "NumPy (.npy) data cannot be read as a stream; give CSV or LIBSVM text (`perceptron \
         convert DATA.npy DATA.csv --labels LABELS.npy`, or `--label-column N` for labels \
         in the array, writes one)",
    )
}

#[cfg(test)]
mod tests;
