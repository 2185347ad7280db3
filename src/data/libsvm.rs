//! LIBSVM/svmlight parsing into CSR.
//!
//! A line is `label index:value index:value ... [# comment]`, tokens separated
//! by spaces or tabs, indices 1-based and strictly increasing. The label is a
//! number (`+1`, `-1`, `0`, `2.5`, ...), kept as written. `qid:N` tokens are
//! checked and ignored. Blank and comment-only lines are skipped. Values of
//! exactly zero are kept as given. Unlabeled data (`predict --unlabeled`) may
//! leave the label out: a first token holding `:` is then a feature.

use std::io::BufRead;
use std::path::Path;

use crate::error::{Error, Result};
use crate::float::Real;

use super::blocks::{Block, TextRows, extend_in_parallel, parse_rows};
use super::labels::MAX_DISTINCT_LABELS;
use super::source::{LineReader, NO_DATA_ROWS, column_at, parse_value, quote, trim_excess};
use super::{CsrMatrix, Features, Format, LabelTable, MAX_FEATURE_INDEX, NO_LABEL, RawData};

/// Parses LIBSVM text into a CSR matrix.
pub fn parse<F: Real, R: BufRead>(reader: R, path: &Path) -> Result<RawData<F>> {
    parse_sized(reader, path, None)
}

/// [`parse`], reserving memory once from `size_hint`, the content's length in
/// bytes when known.
pub fn parse_sized<F: Real, R: BufRead>(
    reader: R,
    path: &Path,
    size_hint: Option<u64>,
) -> Result<RawData<F>> {
    parse_lines(LineReader::new(reader, path), path, false, size_hint)
}

/// [`parse_sized`], for unlabeled data when `unlabeled` (see
/// [`super::LoadOptions::unlabeled`]).
pub fn parse_options<F: Real, R: BufRead>(
    reader: R,
    path: &Path,
    unlabeled: bool,
    size_hint: Option<u64>,
) -> Result<RawData<F>> {
    parse_lines(LineReader::new(reader, path), path, unlabeled, size_hint)
}

/// The whitespace-separated tokens of `text` with their byte offsets.
fn tokens(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let base = text.as_ptr() as usize;
    text.split_ascii_whitespace()
        .map(move |t| ((t.as_ptr() as usize).wrapping_sub(base), t))
}

/// The largest feature index a reader accepts, and what to add to the
/// message when an index exceeds it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexLimit<'a> {
    pub max: u64,
    /// Appended to "exceeds the limit of N" (empty for the format's own limit).
    pub why: &'a str,
}

/// The format's own limit, [`MAX_FEATURE_INDEX`].
pub(crate) const FORMAT_LIMIT: IndexLimit<'static> = IndexLimit {
    max: MAX_FEATURE_INDEX,
    why: "",
};

/// A data line whose label has been checked; its features are read by
/// [`Line::parse_features`]. Shared by the batch parser and the row stream
/// ([`super::stream`]), so both read a line the same way and say the same
/// thing about a bad one.
pub(crate) struct Line<'a> {
    path: &'a Path,
    no: u64,
    line: &'a str,
    /// The line without its comment.
    pub data: &'a str,
    /// The label as written; empty when an unlabeled line has none.
    pub label: &'a str,
    /// Byte offset of the label in the line.
    pub label_at: usize,
    /// Tokens of `data` before the first feature: 1, or 0 without a label.
    first_feature: usize,
}

impl<'a> Line<'a> {
    /// Splits line `no` of `path`: `None` when it is blank or only a comment,
    /// an error when its first token is not a numeric label. When
    /// `unlabeled`, a first token holding `:` is a feature instead.
    pub(crate) fn split(
        path: &'a Path,
        no: u64,
        line: &'a str,
        unlabeled: bool,
    ) -> Result<Option<Self>> {
        let data = line.split_once('#').map_or(line, |(d, _)| d);
        let Some((at, label)) = tokens(data).next() else {
            return Ok(None); // blank or comment-only
        };
        let mut this = Line {
            path,
            no,
            line,
            data,
            label,
            label_at: at,
            first_feature: 1,
        };
        if label.contains(':') {
            if unlabeled {
                this.label = "";
                this.first_feature = 0;
                return Ok(Some(this));
            }
            return Err(this.err(
                at,
                format!(
                    "expected a label before the features, found {}",
                    quote(label)
                ),
            ));
        }
        if let Some(problem) = label_problem(label) {
            return Err(this.err(at, problem));
        }
        Ok(Some(this))
    }

    /// An error at byte `byte` of the line.
    pub(crate) fn err(&self, byte: usize, msg: String) -> Error {
        Error::parse(self.path, self.no, Some(column_at(self.line, byte)), msg)
    }

    /// Appends the features to `indices` (0-based) and `values`, checking
    /// every token; returns the largest 1-based index (0 for none). On an
    /// error the vectors may hold part of the row.
    pub(crate) fn parse_features<F: Real>(
        &self,
        limit: IndexLimit<'_>,
        indices: &mut Vec<u32>,
        values: &mut Vec<F>,
    ) -> Result<u64> {
        let err = |byte: usize, msg: String| self.err(byte, msg);
        let mut prev: u64 = 0;
        for (at, tok) in tokens(self.data).skip(self.first_feature) {
            // A byte search: `:` is ASCII, and the tokens are short.
            let Some(colon) = tok.bytes().position(|b| b == b':') else {
                return Err(err(
                    at,
                    format!("expected index:value, found {}", quote(tok)),
                ));
            };
            let (name, value) = (&tok[..colon], &tok[colon + 1..]);
            // The first byte first: most names are digits, and comparing
            // strings calls memcmp.
            if name.as_bytes().first() == Some(&b'q') && name == "qid" {
                if value.parse::<i64>().is_err() {
                    return Err(err(
                        at + name.len() + 1,
                        format!(
                            "expected an integer query id in {}, found {}",
                            quote(tok),
                            quote(value)
                        ),
                    ));
                }
                continue;
            }
            if name.is_empty() {
                return Err(err(
                    at,
                    format!(
                        "expected index:value, found {} (the index is missing)",
                        quote(tok)
                    ),
                ));
            }
            if value.is_empty() {
                return Err(err(
                    at,
                    format!(
                        "expected index:value, found {} (the value is missing)",
                        quote(tok)
                    ),
                ));
            }
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err(
                    at,
                    format!(
                        "expected a feature index (a positive integer) in {}, found {}",
                        quote(tok),
                        quote(name)
                    ),
                ));
            }
            // All digits: only overflow can fail, and that is over the limit too.
            let index = name.parse::<u64>().unwrap_or(u64::MAX);
            if index == 0 {
                return Err(err(
                    at,
                    format!(
                        "feature index 0 in {}: feature indices start at 1",
                        quote(tok)
                    ),
                ));
            }
            let max = limit.max.min(MAX_FEATURE_INDEX);
            if index > max {
                let why = if max < limit.max { "" } else { limit.why };
                return Err(err(
                    at,
                    format!(
                        "feature index {name} in {} exceeds the limit of {max}{why}",
                        quote(tok)
                    ),
                ));
            }
            if index == prev {
                return Err(err(
                    at,
                    format!(
                        "duplicate feature index {index}: the previous feature also has index \
                         {prev}; indices must strictly increase"
                    ),
                ));
            }
            if index < prev {
                return Err(err(
                    at,
                    format!(
                        "feature index {index} follows index {prev}; indices must strictly \
                         increase"
                    ),
                ));
            }
            let v = parse_value::<F>(value, &format_args!("for feature {index}"))
                .map_err(|msg| err(at + name.len() + 1, msg))?;
            // The row's length is not known ahead, so each entry makes its
            // own room: a comparison, unless the vectors must grow.
            crate::memory::reserve(indices, 1)
                .and_then(|()| crate::memory::reserve(values, 1))
                .map_err(|s| s.data_error(self.path, "the feature values", self.no))?;
            // index <= MAX_FEATURE_INDEX < 2^31, so index - 1 fits in u32.
            indices.push(u32::try_from(index - 1).unwrap_or(u32::MAX));
            values.push(v);
            prev = index;
        }
        Ok(prev)
    }
}

/// What is wrong with a LIBSVM label, if anything: labels are finite
/// numbers. A comma or semicolon in it says the file is probably CSV.
fn label_problem(label: &str) -> Option<String> {
    match label.parse::<f64>() {
        Ok(v) if v.is_finite() => None,
        Ok(_) => Some(format!(
            "expected a numeric label (a finite number), found {}",
            quote(label)
        )),
        Err(_) => Some(format!(
            "expected a numeric label, found {}{}",
            quote(label),
            if label.contains([',', ';']) {
                " (is this a CSV file? pass --format csv)"
            } else {
                ""
            }
        )),
    }
}

/// The rows read so far, as a [`CsrMatrix`] under construction in owned
/// vectors, with their labels.
struct CsrRows<'p, F> {
    path: &'p Path,
    unlabeled: bool,
    row_ptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<F>,
    class_ids: Vec<u32>,
    table: LabelTable,
    max_index: u64,
}

impl<'p, F: Real> CsrRows<'p, F> {
    fn new(path: &'p Path, unlabeled: bool) -> Self {
        CsrRows {
            path,
            unlabeled,
            row_ptr: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
            class_ids: Vec::new(),
            table: LabelTable::default(),
            max_index: 0,
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
    fn for_block(&self, block: &Block) -> Self {
        let mut rows = CsrRows::new(self.path, self.unlabeled);
        // Every entry has its colon: room for all of them at once.
        let entries = block.count_bytes(b':');
        let _ = rows.row_ptr.try_reserve_exact(block.len());
        let _ = rows.class_ids.try_reserve_exact(block.len());
        let _ = rows.indices.try_reserve_exact(entries);
        let _ = rows.values.try_reserve_exact(entries);
        rows
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
        let last = parsed.parse_features(FORMAT_LIMIT, &mut self.indices, &mut self.values)?;
        self.max_index = self.max_index.max(last);
        self.row_ptr.push(self.indices.len());
        self.class_ids.push(class);
        Ok(())
    }

    fn stored(&self) -> usize {
        self.indices.len()
    }

    fn absorb(&mut self, block: &Self, pending: usize) -> bool {
        let rows = block.class_ids.len();
        let room = pending.saturating_add(block.values.len());
        if crate::memory::reserve(&mut self.indices, room).is_err()
            || crate::memory::reserve(&mut self.values, room).is_err()
            || crate::memory::reserve(&mut self.row_ptr, rows).is_err()
            || crate::memory::reserve(&mut self.class_ids, rows).is_err()
        {
            return false;
        }
        let Some(ids) = self.table.absorb(&block.table) else {
            return false;
        };
        let base = self.indices.len() + pending;
        self.row_ptr
            .extend(block.row_ptr[1..].iter().map(|&end| base + end));
        self.class_ids
            .extend(block.class_ids.iter().map(|&c| ids[c as usize]));
        self.max_index = self.max_index.max(block.max_index);
        true
    }

    fn append(&mut self, blocks: &[&Self]) {
        let indices: Vec<&[u32]> = blocks.iter().map(|b| b.indices.as_slice()).collect();
        let values: Vec<&[F]> = blocks.iter().map(|b| b.values.as_slice()).collect();
        extend_in_parallel(&mut self.indices, &indices);
        extend_in_parallel(&mut self.values, &values);
    }
}

pub(crate) fn parse_lines<F: Real, R: BufRead>(
    mut lines: LineReader<'_, R>,
    path: &Path,
    unlabeled: bool,
    size_hint: Option<u64>,
) -> Result<RawData<F>> {
    let mut m = CsrRows::<F>::new(path, unlabeled);
    // Sized once, from the first block with rows.
    parse_rows(&mut lines, &mut m, |m, block, local| {
        let Some(total) = size_hint else {
            return true;
        };
        if local.class_ids.is_empty() {
            return false;
        }
        let entries = local.values.len().div_ceil(local.class_ids.len());
        m.reserve_for(total, block.mean_line_bytes(), entries);
        true
    })?;
    let CsrRows {
        mut row_ptr,
        mut indices,
        mut values,
        mut class_ids,
        table,
        max_index,
        ..
    } = m;
    if class_ids.is_empty() {
        return Err(Error::data(path, NO_DATA_ROWS));
    }
    trim_excess(&mut row_ptr);
    trim_excess(&mut indices);
    trim_excess(&mut values);
    trim_excess(&mut class_ids);
    Ok(RawData {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{LoadOptions, csv};

    fn data_file(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data")
            .join(name)
    }

    fn parse_str<F: Real>(text: &str) -> Result<RawData<F>> {
        parse(text.as_bytes(), Path::new("t.svm"))
    }

    fn csr<F: Real>(raw: &RawData<F>) -> CsrMatrix<F> {
        match &raw.features {
            Features::Sparse(m) => m.clone(),
            Features::Dense(_) => panic!("LIBSVM gave a dense matrix"),
        }
    }

    fn labels<F>(raw: &RawData<F>) -> Vec<&str> {
        raw.class_ids
            .iter()
            .map(|&c| raw.table.classes()[c as usize].text.as_str())
            .collect()
    }

    fn ok(text: &str) -> CsrMatrix<f64> {
        csr(&parse_str::<f64>(text).unwrap())
    }

    fn err(text: &str) -> String {
        parse_str::<f64>(text).unwrap_err().to_string()
    }

    fn matrix(cols: usize, row_ptr: &[usize], indices: &[u32], values: &[f64]) -> CsrMatrix<f64> {
        CsrMatrix {
            cols,
            row_ptr: row_ptr.into(),
            indices: indices.into(),
            values: values.into(),
        }
    }

    #[test]
    fn labels_remember_the_line_they_first_appear_on() {
        let raw = parse_str::<f64>("# c\n\n+1 1:2\n-1 2:3\n+1 1:1\n").unwrap();
        let got: Vec<(&str, u64)> = raw
            .table
            .classes()
            .iter()
            .map(|c| (c.text.as_str(), c.first_line))
            .collect();
        assert_eq!(got, vec![("+1", 3), ("-1", 4)]);
    }

    /// A file of many blocks (parsed on all cores) reads as one: rows,
    /// entries and the widest index in order, labels with their first line
    /// and count over the whole file, and an error in a late block naming
    /// its line and column.
    #[test]
    fn files_of_many_blocks_parse_as_one() {
        let rows = 150_000u64;
        let mut text = String::new();
        let mut line = 0;
        let mut late_line = 0;
        for i in 0..rows {
            if i % 1000 == 7 {
                text.push_str("# a comment: with a colon\n\n");
                line += 2;
            }
            line += 1;
            let label = if i == 120_000 {
                late_line = line;
                "7"
            } else if i % 2 == 0 {
                "+1"
            } else {
                "-1"
            };
            // Rows of 1 to 3 entries; the widest index only in row 90,000.
            let wide = if i == 90_000 { " 5000:1" } else { "" };
            let entries = match i % 3 {
                0 => format!("1:{i}.5"),
                1 => format!("2:1 3:{i}"),
                _ => format!("1:1 2:2 4:{i}"),
            };
            text.push_str(&format!("{label} {entries}{wide}\n"));
        }
        assert!(text.len() > 2 << 20, "{}", text.len());
        let raw = parse_str::<f64>(&text).unwrap();
        let m = csr(&raw);
        assert_eq!((m.rows(), m.cols), (rows as usize, 5000));
        assert_eq!(m.indices.len(), 300_001);
        for i in [0usize, 1, 2, 90_000, 149_999] {
            let (a, b) = (m.row_ptr[i], m.row_ptr[i + 1]);
            let want: (Vec<u32>, Vec<f64>) = match (i % 3, i) {
                (0, 90_000) => (vec![0, 4999], vec![i as f64 + 0.5, 1.0]),
                (0, _) => (vec![0], vec![i as f64 + 0.5]),
                (1, _) => (vec![1, 2], vec![1.0, i as f64]),
                _ => (vec![0, 1, 3], vec![1.0, 2.0, i as f64]),
            };
            assert_eq!(
                (m.indices[a..b].to_vec(), m.values[a..b].to_vec()),
                want,
                "row {i}"
            );
        }
        let got: Vec<(&str, u64, u64)> = raw
            .table
            .classes()
            .iter()
            .map(|c| (c.text.as_str(), c.first_line, c.count))
            .collect();
        assert_eq!(
            got,
            [("+1", 1, 74_999), ("-1", 2, 75_000), ("7", late_line, 1)]
        );

        let bad = text.replacen("2:1 3:130000\n", "2:1 3:13x\n", 1);
        let bad_line = 130_001 + 2 * 130;
        let e = parse_str::<f64>(&bad).unwrap_err().to_string();
        assert!(e.starts_with(&format!("t.svm:{bad_line}:10: ")), "{e}");
        assert!(e.contains("\"13x\""), "{e}");
    }

    #[test]
    fn heart_scale_parses_exactly() {
        let path = data_file("heart_scale.svm");
        let file = std::fs::File::open(&path).unwrap();
        let raw = parse::<f64, _>(std::io::BufReader::new(file), &path).unwrap();
        let m = csr(&raw);
        assert_eq!((m.rows(), m.cols, m.indices.len()), (270, 13, 3378));
        assert_eq!(m.values.iter().sum::<f64>(), -666.4008602999996);
        assert_eq!(m.indices[..12], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12]);
        assert_eq!(
            m.values[..12],
            [
                0.708333, 1., 1., -0.320755, -0.105023, -1., 1., -0.419847, -1., -0.225806, 1., -1.
            ]
        );
        assert_eq!(m.row_ptr[1], 12);
        let last = m.row_ptr[269];
        assert_eq!(m.indices[last..], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12]);
        assert_eq!(m.values[last..last + 4], [0.583333, 1., 1., 0.245283]);
        let got: Vec<(&str, u64)> = raw
            .table
            .classes()
            .iter()
            .map(|c| (c.text.as_str(), c.count))
            .collect();
        assert_eq!(got, [("+1", 120), ("-1", 150)]);
        assert_eq!(raw.format, Format::Libsvm);
        let raw32 = parse_str::<f32>(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(csr(&raw32).values[..4], [0.708333f32, 1., 1., -0.320755]);
    }

    fn same_as_csv<F: Real>(name: &str, rows: usize, cols: usize) {
        let svm = data_file(&format!("{name}.svm"));
        let csv_path = data_file(&format!("{name}.csv"));
        let a = parse_str::<F>(&std::fs::read_to_string(&svm).unwrap()).unwrap();
        let b = csv::parse::<F, _>(
            std::fs::read(&csv_path).unwrap().as_slice(),
            &csv_path,
            &LoadOptions::default(),
        )
        .unwrap();
        assert!(a.features.is_sparse() && !b.features.is_sparse());
        assert_eq!(
            (a.features.rows(), a.features.cols()),
            (rows, cols),
            "{name}"
        );
        let (da, db) = (a.features.to_dense(), b.features.to_dense());
        assert_eq!(da, db, "{name}");
        assert_eq!(labels(&a), labels(&b), "{name}");
        // The .svm leaves zeros out; the .csv stores them.
        assert_eq!(a.features.nonzeros(), csr(&a).values.len(), "{name}");
        assert_eq!(
            da.values.iter().filter(|v| **v != F::ZERO).count(),
            a.features.nonzeros()
        );
    }

    #[test]
    fn real_datasets_match_their_csv_versions() {
        for (name, rows, cols) in [
            ("iris_setosa", 150, 4),
            ("digits_0v1", 360, 64),
            ("digits_3v5", 365, 64),
            ("breast_cancer", 569, 30),
        ] {
            same_as_csv::<f64>(name, rows, cols);
            same_as_csv::<f32>(name, rows, cols);
        }
    }

    #[test]
    fn whitespace_comments_crlf_and_qid() {
        let text =
            "# made by hand\n\n+1\t1:0.5\t 3:2  \r\n  # indented comment\r\n-1 qid:7 2:-3#x\n";
        let raw = parse_str::<f64>(text).unwrap();
        assert_eq!(
            csr(&raw),
            matrix(3, &[0, 2, 3], &[0, 2, 1], &[0.5, 2., -3.])
        );
        assert_eq!(labels(&raw), ["+1", "-1"]);
        // qid anywhere; zeros kept as given; rows without features.
        assert_eq!(
            ok("1 1:0 qid:-2 2:5 3:0.0\n-1\n1 # no features\n"),
            matrix(3, &[0, 3, 3, 3], &[0, 1, 2], &[0., 5., 0.])
        );
        assert_eq!(ok("1\n-1\n"), matrix(0, &[0, 0, 0], &[], &[]));
        assert_eq!(
            err("1 qid:x 1:2\n"),
            "t.svm:1:7: expected an integer query id in \"qid:x\", found \"x\""
        );
    }

    #[test]
    fn indices_are_one_based_increasing_and_bounded() {
        assert_eq!(
            err("1 1:2\n1 0:1\n"),
            "t.svm:2:3: feature index 0 in \"0:1\": feature indices start at 1"
        );
        assert_eq!(
            err("1 2:1 1:3\n"),
            "t.svm:1:7: feature index 1 follows index 2; indices must strictly increase"
        );
        assert_eq!(
            err("1 1:1 2:1 2:3\n"),
            "t.svm:1:11: duplicate feature index 2: the previous feature also has index 2; \
             indices must strictly increase"
        );
        assert_eq!(
            err("1 2147483648:1\n"),
            "t.svm:1:3: feature index 2147483648 in \"2147483648:1\" exceeds the limit of \
             2147483647"
        );
        assert_eq!(
            err("1 99999999999999999999999:1\n"),
            "t.svm:1:3: feature index 99999999999999999999999 in \"99999999999999999999999:1\" \
             exceeds the limit of 2147483647"
        );
        assert_eq!(
            ok("1 2147483647:1\n"),
            matrix(2147483647, &[0, 1], &[2147483646], &[1.])
        );
        assert_eq!(ok("1 007:1\n"), matrix(7, &[0, 1], &[6], &[1.]));
    }

    #[test]
    fn malformed_tokens_are_named() {
        assert_eq!(
            err("1 3:\n"),
            "t.svm:1:3: expected index:value, found \"3:\" (the value is missing)"
        );
        assert_eq!(
            err("1 :4\n"),
            "t.svm:1:3: expected index:value, found \":4\" (the index is missing)"
        );
        assert_eq!(
            err("1 a:b\n"),
            "t.svm:1:3: expected a feature index (a positive integer) in \"a:b\", found \"a\""
        );
        assert_eq!(
            err("1 1:2 -3:1\n"),
            "t.svm:1:7: expected a feature index (a positive integer) in \"-3:1\", found \"-3\""
        );
        assert_eq!(
            err("1  3\n"),
            "t.svm:1:4: expected index:value, found \"3\""
        );
        assert_eq!(
            err("1 1:x\n"),
            "t.svm:1:5: expected a number for feature 1, found \"x\""
        );
        assert_eq!(
            err("1 1:\u{e9} 2:1\n"),
            "t.svm:1:5: expected a number for feature 1, found \"\u{e9}\""
        );
        assert_eq!(
            err("1 2:1 \u{e9}:1\n"),
            "t.svm:1:7: expected a feature index (a positive integer) in \"\u{e9}:1\", found \
             \"\u{e9}\""
        );

        assert_eq!(
            err("1 3:4:5\n"),
            "t.svm:1:5: expected a number for feature 3, found \"4:5\""
        );
        assert_eq!(
            err("1 1:2\n1:2 3:4\n"),
            "t.svm:2:1: expected a label before the features, found \"1:2\""
        );
    }

    #[test]
    fn labels_are_numbers_kept_as_written() {
        let raw =
            parse_str::<f64>("+1 1:1\n-1 1:2\n0 1:3\n1 1:4\n2.5 1:5\n3 1:6\n1e0 1:7\n").unwrap();
        assert_eq!(labels(&raw), ["+1", "-1", "0", "+1", "2.5", "3", "+1"]);
        let texts: Vec<&str> = raw
            .table
            .classes()
            .iter()
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!(texts, ["+1", "-1", "0", "2.5", "3"]);
        // A CSV file read as LIBSVM.
        assert_eq!(
            err("1,2\n-1,3\n"),
            "t.svm:1:1: expected a numeric label, found \"1,2\" (is this a CSV file? pass \
             --format csv)"
        );
        assert_eq!(
            err("+1 1:2\n  -1;3;4\n"),
            "t.svm:2:3: expected a numeric label, found \"-1;3;4\" (is this a CSV file? pass \
             --format csv)"
        );
        assert_eq!(
            err("\u{e9} 1:2\n"),
            "t.svm:1:1: expected a numeric label, found \"\u{e9}\""
        );
        assert_eq!(
            err("yes 1:2\n"),
            "t.svm:1:1: expected a numeric label, found \"yes\""
        );
        assert_eq!(
            err("1 1:2\nnan 1:3\n"),
            "t.svm:2:1: expected a numeric label (a finite number), found \"nan\""
        );
        assert_eq!(
            err("-inf 1:3\n"),
            "t.svm:1:1: expected a numeric label (a finite number), found \"-inf\""
        );
    }

    #[test]
    fn unlabeled_lines_may_start_with_a_feature() {
        let un =
            |text: &str| parse_options::<f64, _>(text.as_bytes(), Path::new("t.svm"), true, None);
        let raw = un("1:0.5 3:2\n# c\n7 2:1\n\n-1\n2:4 qid:3\n").unwrap();
        assert_eq!(
            csr(&raw),
            matrix(3, &[0, 2, 3, 3, 4], &[0, 2, 1, 1], &[0.5, 2., 1., 4.])
        );
        assert_eq!(labels(&raw), [NO_LABEL; 4]);
        assert_eq!(raw.table.classes().len(), 1);
        // The features are checked as ever; a label is still a number.
        assert_eq!(
            un("1:1 1:2\n").unwrap_err().to_string(),
            "t.svm:1:5: duplicate feature index 1: the previous feature also has index 1; \
             indices must strictly increase"
        );
        assert_eq!(
            un("1,2\n").unwrap_err().to_string(),
            "t.svm:1:1: expected a numeric label, found \"1,2\" (is this a CSV file? pass \
             --format csv)"
        );
        // Labeled, a feature first is an error.
        assert_eq!(
            err("1:1 2:2\n"),
            "t.svm:1:1: expected a label before the features, found \"1:1\""
        );
    }

    #[test]
    fn values_must_be_finite_numbers_of_the_precision() {
        assert_eq!(
            err("1 1:nan\n"),
            "t.svm:1:5: expected a finite number for feature 1, found \"nan\""
        );
        assert_eq!(
            err("1 1:1 2:-inf\n"),
            "t.svm:1:9: expected a finite number for feature 2, found \"-inf\""
        );
        assert_eq!(
            parse_str::<f32>("1 4:1e39\n").unwrap_err().to_string(),
            "t.svm:1:5: value \"1e39\" for feature 4 is too large for f32 (largest finite \
             magnitude 3.4028235e38)"
        );
        assert_eq!(ok("1 4:1e39\n").values, [1e39]);
        assert_eq!(
            err("1 1:1e999\n"),
            "t.svm:1:5: value \"1e999\" for feature 1 is too large for f64 (largest finite \
             magnitude 1.7976931348623157e308)"
        );
        // Parsed straight into f32: through f64 this would round to 1.0.
        let raw = parse_str::<f32>("1 1:1.0000000596046447753906250001\n").unwrap();
        assert_eq!(csr(&raw).values, [1.000_000_1_f32]);
    }

    #[test]
    fn files_without_rows_and_bad_bytes_are_refused() {
        let none = "t.svm: no data rows: the file is empty or holds only comments and blank lines";
        assert_eq!(err(""), none);
        assert_eq!(err("\r\n \t\n"), none);
        assert_eq!(err("# only\n   # comments\n"), none);
        let path = Path::new("t.svm");
        let e = parse::<f64, _>(&b"1 1:2\n-1 2:\xc0\n"[..], path).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.svm:2:6: invalid UTF-8 (byte 0xc0); data files must be UTF-8 text"
        );
        let text = b"1 1:2\n-1 1:2 2:3 3:4 4:5\n";
        let lines = LineReader::with_limit(&text[..], path, 10);
        let e = parse_lines::<f64, _>(lines, path, false, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.svm:2:11: line is longer than the limit of 10 bytes; is this a text data file?"
        );
    }

    #[test]
    fn memory_is_reserved_once_from_the_size_hint() {
        let text: String = (0..1000)
            .map(|i| format!("{} 1:{i} 3:{}.5\n", i % 2, i * 3))
            .collect();
        let raw =
            parse_sized::<f32, _>(text.as_bytes(), Path::new("t.svm"), Some(text.len() as u64))
                .unwrap();
        let m = csr(&raw);
        assert_eq!((m.rows(), m.cols, m.values.len()), (1000, 3, 2000));
        assert!(m.values.capacity() <= 2250 && m.indices.capacity() <= 2250);
        assert_eq!(m.values[1998..], [999.0, 2997.5]);
        let raw =
            parse_sized::<f32, _>(text.as_bytes(), Path::new("t.svm"), Some(u64::MAX)).unwrap();
        assert_eq!(raw.features.rows(), 1000);
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_give_a_result_not_a_panic(
            bytes in proptest::collection::vec(proptest::sample::select(ALPHABET.to_vec()), 0..200),
        ) {
            let path = Path::new("t.svm");
            if let Ok(raw) = parse::<f32, _>(&bytes[..], path) {
                let m = csr(&raw);
                proptest::prop_assert_eq!(m.row_ptr.len(), raw.class_ids.len() + 1);
                proptest::prop_assert!(m.indices.iter().all(|&i| (i as usize) < m.cols));
                for r in 0..m.rows() {
                    let row = &m.indices[m.row_ptr[r]..m.row_ptr[r + 1]];
                    proptest::prop_assert!(row.windows(2).all(|w| w[0] < w[1]));
                }
            }
            let lines = LineReader::with_limit(&bytes[..], path, 7);
            let _ = parse_lines::<f64, _>(lines, path, false, Some(bytes.len() as u64));
        }
    }

    const ALPHABET: &[u8] = b"0123456789:::  \t\n\n\r#.-+eEnaifqd\xff\xc3\xa9";
}
