//! Reading one rank's block of the dataset (see [`super::plan`]), and
//! agreeing with the other ranks on what the whole dataset is: its label
//! values and their -1/+1 mapping, its feature count, its rows. Each of
//! these comes from collective operations on exact integers and texts, so
//! it equals what a single process reading every row finds.
//!
//! A rank holds its block and O(features) besides. Every rank reads the
//! first bytes of every file (its format, a `.pbin` header, a CSV file's
//! first data line); plain text is cut at line boundaries and each rank
//! counts the newlines of its own part, so that lines keep their numbers in
//! messages; gzip text is decompressed by every rank that holds part of it,
//! once to count its lines and once to read its part.

use std::path::{Path, PathBuf};

use crate::data::binary::{self, Header};
use crate::data::block::{self, CsvStart};
use crate::data::labels::{ClassLabel, LabelTable, MAX_DISTINCT_LABELS};
use crate::data::matrix::{CsrMatrix, DenseMatrix, Features};
use crate::data::message::quote;
use crate::data::shards::{self, Shape};
use crate::data::{
    BaseWhy, CsvInfo, Dataset, Format, IndexBase, LibsvmInfo, LoadOptions, RawData, format, source,
};
use crate::error::{Error, Result};
use crate::float::Real;

use super::agree::{Agreed, DescribeFailure, agree};
use super::plan;
use super::transport::{Reduce, Transport, all_gather, all_gather_bytes, exclusive_sums};
use super::wire::{Reader, Writer};

/// One rank's rows and what the ranks agreed about the whole.
pub struct Block<F> {
    /// The rows this rank holds, in dataset order, with the labels mapped
    /// and the feature count of the whole dataset.
    pub data: Dataset<F>,
    /// The layout of the first CSV file, if any (for the model file).
    pub csv: Option<CsvInfo>,
    /// How the LIBSVM files counted their indices, if any (for the report
    /// and the model file).
    pub libsvm: Option<LibsvmInfo>,
    pub whole: Whole,
}

/// The whole dataset, as every rank knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Whole {
    /// Rows of every rank together.
    pub rows: usize,
    /// Rows each rank holds, in rank order.
    pub block_rows: Vec<usize>,
    /// The files, in order, and how reports name them.
    pub paths: Vec<PathBuf>,
    pub source: String,
}

impl Whole {
    /// The first row (in dataset order) of rank `r`'s block.
    pub fn first_row(&self, r: usize) -> usize {
        self.block_rows[..r].iter().sum()
    }
}

/// What every rank learns of a file before reading any rows.
struct FileInfo {
    path: PathBuf,
    format: Format,
    gzip: bool,
    size: u64,
    header: Option<Header>,
    csv: Option<CsvStart>,
}

impl FileInfo {
    fn shape(&self) -> Option<Shape> {
        match (self.format, &self.header, &self.csv) {
            (Format::Binary, Some(h), _) => Some(Shape {
                sparse: h.layout == binary::Layout::Csr,
                cols: h.cols as usize,
            }),
            (Format::Csv, _, Some(c)) => Some(Shape {
                sparse: false,
                cols: c.layout.cols(),
            }),
            (Format::Csv, _, None) => None,
            _ => Some(Shape {
                sparse: true,
                cols: 0,
            }),
        }
    }
}

fn inspect(path: &Path, opts: &LoadOptions) -> Result<FileInfo> {
    let input = source::open(path)?;
    let format = match opts.format {
        Some(f) => f,
        None => format::infer_format(path, &input.head)?,
    };
    let gzip = input.gzip;
    drop(input);
    if format == Format::Npy {
        return Err(Error::data(
            path,
            "a .npy file is not split among processes; convert it first \
             (perceptron convert DATA.npy DATA.pbin), a .pbin file is",
        ));
    }
    if format == Format::Binary && gzip {
        return Err(Error::data(
            path,
            "gzip-compressed binary (.pbin) files are not supported; decompress it \
             first (for example with gunzip)",
        ));
    }
    let size = source::open_file(path)?.1.len();
    let header = match format {
        Format::Binary => Some(binary::read_header(path)?),
        _ => None,
    };
    let csv = match format {
        Format::Csv => block::csv_start(path, opts, gzip)?,
        _ => None,
    };
    Ok(FileInfo {
        path: path.to_path_buf(),
        format,
        gzip,
        size,
        header,
        csv,
    })
}

/// The part of a file a rank reads.
enum Piece {
    /// Rows of a `.pbin`.
    Rows(u64, u64),
    /// Bytes of plain text, cut at line starts.
    Bytes(u64, u64),
    /// Lines of gzip text.
    Lines(u64, u64),
}

/// Reads this rank's block of the files `paths` (in order, one dataset),
/// with one-vs-rest classes when `multiclass`, else the -1/+1 labels that
/// `opts.positive` and the label rules give the whole dataset.
pub fn load<F: Real>(
    t: &dyn Transport,
    paths: &[PathBuf],
    opts: &LoadOptions,
    multiclass: bool,
    describe: DescribeFailure<'_>,
) -> Agreed<Block<F>> {
    let infos: Vec<FileInfo> = agree(
        t,
        paths.iter().map(|p| inspect(p, opts)).collect(),
        describe,
    )?;
    agree(t, check_shapes(&infos), describe)?;
    agree(t, check_names(&infos), describe)?;
    let sizes: Vec<u64> = infos.iter().map(|i| i.size).collect();
    let mine = plan::pieces(&sizes, t.size(), t.rank());
    let cuts: Vec<(usize, Piece, u64)> = agree(
        t,
        mine.iter()
            .map(|&(f, lo, hi)| cut(&infos[f], lo, hi).map(|(p, n)| (f, p, n)))
            .collect(),
        describe,
    )?;
    let mut newlines = vec![0u64; infos.len()];
    for (f, _, n) in &cuts {
        newlines[*f] = *n;
    }
    let files = Files {
        infos: &infos,
        lines_before: exclusive_sums(t, &newlines),
    };
    let mut parts: Vec<(usize, RawData<F>, Vec<u64>)> = agree(
        t,
        cuts.iter()
            .map(|(f, piece, _)| files.read(*f, piece, opts).map(|(r, c)| (*f, r, c)))
            .collect(),
        describe,
    )?;
    let libsvm = files.settle_libsvm_base(t, &mut parts, &cuts, opts, describe)?;
    check_whole_files_together(t, &infos, &parts, describe)?;
    let first_csv = infos
        .iter()
        .find_map(|i| i.csv.as_ref().map(|c| c.layout.info()));
    let (data, whole) = join_block(t, parts, &infos, paths, opts, multiclass, describe)?;
    Ok(Block {
        data,
        csv: first_csv,
        libsvm,
        whole,
    })
}

/// Where a rank's piece of a file (bytes `lo..hi` of its size) starts and
/// ends, and the newlines of plain text in it: rows of a `.pbin`, lines of
/// a gzip file (which cannot be entered mid-stream), bytes of plain text
/// cut at line starts.
fn cut(info: &FileInfo, lo: u64, hi: u64) -> Result<(Piece, u64)> {
    Ok(match (info.format, info.gzip) {
        (Format::Binary, _) => {
            let rows = info.header.as_ref().map_or(0, |h| h.rows);
            let r = (
                plan::scaled(lo, info.size, rows),
                plan::scaled(hi, info.size, rows),
            );
            (Piece::Rows(r.0, r.1), 0)
        }
        (_, true) => {
            let lines = block::count_gzip_lines(&info.path)?;
            let l = (
                plan::scaled(lo, info.size, lines),
                plan::scaled(hi, info.size, lines),
            );
            (Piece::Lines(l.0, l.1), 0)
        }
        (_, false) => {
            let a = block::line_start_at_or_after(&info.path, info.size, lo)?;
            let b = block::line_start_at_or_after(&info.path, info.size, hi)?;
            (
                Piece::Bytes(a, b),
                block::count_newlines(&info.path, (a, b))?,
            )
        }
    })
}

/// The files, and the lines of plain text before each rank's piece of
/// them (so that messages name a file's own line numbers).
struct Files<'a> {
    infos: &'a [FileInfo],
    lines_before: Vec<u64>,
}

impl Files<'_> {
    /// This rank's rows of file `f`, and a `.pbin`'s rows per class.
    fn read<F: Real>(
        &self,
        f: usize,
        piece: &Piece,
        opts: &LoadOptions,
    ) -> Result<(RawData<F>, Vec<u64>)> {
        let info = &self.infos[f];
        Ok(match *piece {
            Piece::Rows(lo, hi) => {
                let (raw, counts) = binary::block::read_rows::<F>(&info.path, lo, hi)?;
                (raw, counts.class_rows)
            }
            Piece::Bytes(a, b) => (
                block::read_text(
                    &info.path,
                    info.format,
                    opts,
                    (a, b),
                    self.lines_before[f],
                    info.csv.as_ref(),
                )?,
                Vec::new(),
            ),
            Piece::Lines(a, b) => (
                block::read_gzip_lines(&info.path, info.format, opts, (a, b), info.csv.as_ref())?,
                Vec::new(),
            ),
        })
    }

    /// LIBSVM files are one dataset with one index base: when it is
    /// detected, the first index 0 of any rank makes every part zero-based
    /// (parts read one-based are read again), as in a single process.
    fn settle_libsvm_base<F: Real>(
        &self,
        t: &dyn Transport,
        parts: &mut [(usize, RawData<F>, Vec<u64>)],
        cuts: &[(usize, Piece, u64)],
        opts: &LoadOptions,
        describe: DescribeFailure<'_>,
    ) -> Agreed<Option<LibsvmInfo>> {
        let libsvm = self.agreed_libsvm_base(t, parts, opts);
        if let Some(settled) = &libsvm {
            let zero_opts = LoadOptions {
                index_base: Some(IndexBase::Zero),
                ..opts.clone()
            };
            let again: Result<()> = (|| {
                for ((f, raw, _), (_, piece, _)) in parts.iter_mut().zip(cuts) {
                    let Some(read_as) = raw.libsvm.as_ref().map(|l| l.base) else {
                        continue;
                    };
                    if read_as != settled.base {
                        *raw = self.read(*f, piece, &zero_opts)?.0;
                    }
                    raw.libsvm = Some(settled.clone());
                }
                Ok(())
            })();
            agree(t, again, describe)?;
        }
        Ok(libsvm)
    }

    /// The index base every rank reads LIBSVM with: the one asked for, or
    /// zero from the first file (then line) where any rank saw an index 0,
    /// or one. None without LIBSVM files.
    fn agreed_libsvm_base<F: Real>(
        &self,
        t: &dyn Transport,
        parts: &[(usize, RawData<F>, Vec<u64>)],
        opts: &LoadOptions,
    ) -> Option<LibsvmInfo> {
        let mut zero = [u64::MAX];
        for (f, raw, _) in parts {
            if let Some(BaseWhy::ZeroAt { .. }) = raw.libsvm.as_ref().map(|l| &l.why) {
                zero[0] = zero[0].min(*f as u64);
            }
        }
        t.all_reduce(Reduce::Min, &mut zero);
        let mut line = [u64::MAX];
        for (f, raw, _) in parts {
            if let Some(BaseWhy::ZeroAt { line: l, .. }) = raw.libsvm.as_ref().map(|l| &l.why)
                && *f as u64 == zero[0]
            {
                line[0] = line[0].min(*l);
            }
        }
        t.all_reduce(Reduce::Min, &mut line);
        let infos = self.infos;
        infos.iter().any(|i| i.format == Format::Libsvm).then(|| {
            match (opts.index_base, infos.get(zero[0] as usize)) {
                (Some(base), _) => LibsvmInfo {
                    base,
                    why: opts
                        .index_base_from
                        .clone()
                        .map_or(BaseWhy::Asked, BaseWhy::Model),
                },
                (None, Some(info)) => LibsvmInfo {
                    base: IndexBase::Zero,
                    why: BaseWhy::ZeroAt {
                        path: info.path.clone(),
                        line: line[0],
                    },
                },
                (None, None) => LibsvmInfo {
                    base: IndexBase::One,
                    why: BaseWhy::NoZero,
                },
            }
        })
    }
}

/// The rules about whole files, over every rank's parts: rows in each,
/// and every class of a `.pbin` table used.
fn check_whole_files_together<F: Real>(
    t: &dyn Transport,
    infos: &[FileInfo],
    parts: &[(usize, RawData<F>, Vec<u64>)],
    describe: DescribeFailure<'_>,
) -> Agreed<()> {
    let mut file_rows = vec![0u64; infos.len()];
    for (f, raw, _) in parts {
        file_rows[*f] += raw.class_ids.len() as u64;
    }
    t.all_reduce(Reduce::Sum, &mut file_rows);
    let mut class_rows: Vec<Vec<u64>> = infos
        .iter()
        .map(|i| vec![0u64; i.header.as_ref().map_or(0, |h| h.classes as usize)])
        .collect();
    for (f, _, counts) in parts {
        for (c, n) in class_rows[*f].iter_mut().zip(counts) {
            *c += n;
        }
    }
    for counts in &mut class_rows {
        t.all_reduce(Reduce::Sum, counts);
    }
    let whole_files = check_whole_files(infos, &file_rows, &class_rows, parts);
    agree(t, whole_files, describe)
}

/// This rank's rows as one piece, with the labels of the whole (in order of
/// first appearance), the widest sparse row's width, and the whole's rows
/// per rank; as a dataset whose weights fit in memory.
fn join_block<F: Real>(
    t: &dyn Transport,
    parts: Vec<(usize, RawData<F>, Vec<u64>)>,
    infos: &[FileInfo],
    paths: &[PathBuf],
    opts: &LoadOptions,
    multiclass: bool,
    describe: DescribeFailure<'_>,
) -> Agreed<(Dataset<F>, Whole)> {
    let shape = infos.iter().find_map(FileInfo::shape).unwrap_or(Shape {
        sparse: false,
        cols: 0,
    });
    let joined = agree(t, join(parts, infos, shape), describe)?;
    let first = paths.first().cloned().unwrap_or_default();
    let (joined, table) = agree_labels(t, joined, &first, describe)?;
    let mut raw = joined;
    raw.table = table;
    if shape.sparse {
        let mut cols = [raw.features.cols() as u64];
        t.all_reduce(Reduce::Max, &mut cols);
        if let Features::Sparse(m) = &mut raw.features {
            m.cols = cols[0] as usize;
        }
    }
    let rows = all_gather(t, raw.class_ids.len() as u64);
    let whole = Whole {
        rows: rows.iter().sum::<u64>() as usize,
        block_rows: rows.iter().map(|&r| r as usize).collect(),
        paths: paths.to_vec(),
        source: shards::describe(paths),
    };
    let data = if multiclass {
        Dataset::from_raw_classes(raw, &first)
    } else {
        Dataset::from_raw(raw, &first, opts.positive.as_deref())
    };
    let data = agree(
        t,
        data.and_then(|d| {
            let heads = if multiclass { d.classes.len() } else { 1 };
            crate::memory::check_weights_fit(&d.source, d.cols() + 1, heads)?;
            Ok(d)
        }),
        describe,
    )?;
    Ok((data, whole))
}

/// The shards' shapes agree (the same rule and message as
/// [`crate::data::shards::concat`]).
fn check_shapes(infos: &[FileInfo]) -> Result<()> {
    let mut first: Option<(&Path, Shape)> = None;
    for i in infos {
        let Some(s) = i.shape() else { continue };
        match first {
            None => first = Some((&i.path, s)),
            Some((p, f)) => shards::check_shape(p, f, &i.path, s)?,
        }
    }
    Ok(())
}

/// CSV shards with headers name the same columns in the same order (the
/// same rule and message as [`crate::data::shards::check_names`]): every
/// rank reads its rows from byte offsets, past the headers, so the names
/// are compared here, before any row is read.
fn check_names(infos: &[FileInfo]) -> Result<()> {
    let mut first: Option<(&Path, crate::data::CsvInfo)> = None;
    for i in infos {
        let Some(c) = &i.csv else { continue };
        let info = c.layout.info();
        match &first {
            None => first = Some((&i.path, info)),
            Some((p, f)) => shards::check_names(p, Some(f), &i.path, Some(&info))?,
        }
    }
    Ok(())
}

/// A file without rows, or a `.pbin` label table entry no row uses, is
/// refused as a single process refuses it.
fn check_whole_files<F>(
    infos: &[FileInfo],
    file_rows: &[u64],
    class_rows: &[Vec<u64>],
    parts: &[(usize, RawData<F>, Vec<u64>)],
) -> Result<()> {
    for (f, info) in infos.iter().enumerate() {
        if file_rows[f] == 0 {
            let header = info
                .csv
                .as_ref()
                .is_some_and(|c| c.layout.info().header_line.is_some());
            return Err(Error::data(
                &info.path,
                if header {
                    "no data rows: the file holds only a header line"
                } else {
                    crate::data::message::NO_DATA_ROWS
                },
            ));
        }
        if let Some(unused) = class_rows[f].iter().position(|&n| n == 0) {
            let text = parts
                .iter()
                .find(|(g, _, _)| *g == f)
                .and_then(|(_, r, _)| r.table.classes().get(unused))
                .map(|c| quote(&c.text))
                .unwrap_or_else(|| format!("entry {unused}"));
            return Err(Error::data(
                &info.path,
                format!("label table entry {unused} ({text}) is used by no row"),
            ));
        }
    }
    Ok(())
}

/// The pieces one after another (an empty piece of another file's shape
/// left out); no rows at all gives an empty block of `shape`.
fn join<F: Real>(
    parts: Vec<(usize, RawData<F>, Vec<u64>)>,
    infos: &[FileInfo],
    shape: Shape,
) -> Result<RawData<F>> {
    let pieces: Vec<(PathBuf, RawData<F>)> = parts
        .into_iter()
        .filter(|(_, r, _)| !r.class_ids.is_empty())
        .map(|(f, r, _)| (infos[f].path.clone(), r))
        .collect();
    if !pieces.is_empty() {
        return shards::concat(pieces);
    }
    let features = if shape.sparse {
        Features::Sparse(CsrMatrix {
            cols: 0,
            row_ptr: vec![0].into(),
            indices: Vec::new().into(),
            values: Vec::new().into(),
        })
    } else {
        Features::Dense(DenseMatrix {
            rows: 0,
            cols: shape.cols,
            values: Vec::new().into(),
        })
    };
    Ok(RawData {
        features,
        class_ids: Vec::new(),
        table: LabelTable::default(),
        format: infos.first().map_or(Format::Csv, |i| i.format),
        csv: None,
        libsvm: None,
    })
}

/// Every rank's label table, joined in rank order (which is dataset
/// order): the whole dataset's table, with this rank's class ids remapped
/// to it.
fn agree_labels<F: Real>(
    t: &dyn Transport,
    mut raw: RawData<F>,
    first: &Path,
    describe: DescribeFailure<'_>,
) -> Agreed<(RawData<F>, LabelTable)> {
    let mut w = Writer::default();
    w.u64(raw.table.classes().len() as u64);
    for c in raw.table.classes() {
        w.str(&c.text).u64(c.count).u64(c.first_line);
    }
    let tables = all_gather_bytes(t, &w.finish());
    let mut whole = LabelTable::default();
    let mut mine = Vec::new();
    let mut result = Ok(());
    for (r, bytes) in tables.iter().enumerate() {
        let table = match decode_table(bytes) {
            Ok(t) => t,
            Err(e) => {
                result = Err(e);
                break;
            }
        };
        match whole.absorb(&table, 0) {
            Some(ids) if r == t.rank() => mine = ids,
            Some(_) => {}
            None => {
                result = Err(Error::data(
                    first,
                    format!("the data have more than {MAX_DISTINCT_LABELS} distinct label values"),
                ));
                break;
            }
        }
    }
    agree(t, result, describe)?;
    for c in &mut raw.class_ids {
        *c = mine.get(*c as usize).copied().unwrap_or(*c);
    }
    Ok((raw, whole))
}

fn decode_table(bytes: &[u8]) -> Result<LabelTable> {
    let mut r = Reader::new(bytes);
    let n = r.usize()?;
    let mut classes = Vec::with_capacity(n.min(MAX_DISTINCT_LABELS));
    for _ in 0..n {
        let text = r.str()?;
        let count = r.u64()?;
        let first_line = r.u64()?;
        let number = text
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(|v| if v == 0.0 { 0.0 } else { v });
        classes.push(ClassLabel {
            text,
            number,
            count,
            first_line,
        });
    }
    Ok(LabelTable::from_classes(classes))
}
