//! A train/test split of a data file (`perceptron split`): how many rows
//! the test part takes, writing both parts, given which rows are the
//! test part's, and the report of what was written ([`SplitReport`], its
//! JSON and its text form). The choice of those rows is seeded and lives with the other
//! held-out parts, above this layer (`train::folds::test_rows`).
//!
//! A part in the input's own text format holds the input's lines as they
//! are (the CSV header first, comments and blank lines left out), so that
//! nothing is rounded or reformatted; any other part holds the values.

use std::io::BufRead;
use std::path::Path;

use serde::Serialize;

use super::options::{Format, IndexBase};
use super::raw::{LibsvmInfo, RawData};
use super::source::{self, Content};
use super::write::{OutputFormat, write_raw_based};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::text::count;
use crate::text::summary_line;

/// What a split is asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitParams {
    /// The fraction of rows held out for testing, in (0, 1).
    pub test_fraction: f64,
    /// The seed of the permutation that picks the test rows.
    pub seed: u64,
    /// Hold out the same share of every label value.
    pub stratify: bool,
}

impl SplitParams {
    /// The number of test rows of data with `rows` rows: round(F·rows).
    /// An error naming `data` (the file split) when a part would be empty.
    pub fn test_count(&self, rows: usize, data: &Path) -> Result<usize> {
        let tests = ((rows as f64) * self.test_fraction).round() as usize;
        if tests == 0 || tests == rows {
            return Err(Error::Usage(format!(
                "{} has {}: a test fraction of {} leaves one part empty",
                source::name(data).display(),
                crate::text::count(rows, "row"),
                self.test_fraction
            )));
        }
        Ok(tests)
    }
}

/// One part of a split, as written.
#[derive(Serialize, Debug)]
pub struct SplitPart {
    /// The path written, as messages show it.
    pub output: String,
    pub format: OutputFormat,
    pub rows: usize,
    pub bytes: u64,
}

/// What a split did: the data split, how, and each part as written. Its
/// JSON is `split --json`'s; [`SplitReport::render`] its text form.
#[derive(Serialize, Debug)]
pub struct SplitReport {
    /// The file split, as messages show it.
    pub data: String,
    pub format: Format,
    pub rows: usize,
    pub features: usize,
    pub seed: u64,
    pub test_fraction: f64,
    pub train: SplitPart,
    pub test: SplitPart,
}

impl SplitReport {
    /// The report of splitting `parts` as `params` asked, its parts written
    /// as `train` and `test` ([`SplitParts::write`]).
    pub fn new<F: Real>(
        parts: &SplitParts<F>,
        params: &SplitParams,
        (train, test): (SplitPart, SplitPart),
    ) -> Self {
        SplitReport {
            data: source::name(parts.data).display().to_string(),
            format: parts.raw.format,
            rows: parts.raw.features.rows(),
            features: parts.raw.features.cols(),
            seed: params.seed,
            test_fraction: params.test_fraction,
            train,
            test,
        }
    }

    /// The human-readable summary, as `perceptron split` prints it.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let mut line = |k: &str, v: String| summary_line(&mut s, k, v);
        line(
            "data",
            format!(
                "{} ({}, {} x {})",
                self.data,
                self.format.name(),
                count(self.rows, "row"),
                count(self.features, "feature")
            ),
        );
        line(
            "split",
            format!(
                "seed {}, test fraction {}",
                self.seed,
                crate::text::fmt_g(self.test_fraction)
            ),
        );
        for (name, part) in [("train", &self.train), ("test", &self.test)] {
            line(
                name,
                format!(
                    "{}: {} ({}, {})",
                    part.output,
                    count(part.rows, "row"),
                    part.format.name(),
                    crate::text::bytes(part.bytes)
                ),
            );
        }
        s
    }
}

/// Where one part goes: the path and its format.
#[derive(Clone, Copy, Debug)]
pub struct PartTarget<'a> {
    pub path: &'a Path,
    pub format: OutputFormat,
}

/// The data being split (read from `data`) and which rows are the test
/// part's, for writing either part.
pub struct SplitParts<'a, F> {
    raw: &'a RawData<F>,
    data: &'a Path,
    is_test: Vec<bool>,
}

impl<'a, F: Real> SplitParts<'a, F> {
    /// The parts of `raw`, read from `data`, whose row `i` is the test
    /// part's when `is_test[i]` (one entry per row).
    pub fn new(raw: &'a RawData<F>, data: &'a Path, is_test: Vec<bool>) -> Self {
        Self { raw, data, is_test }
    }

    /// The rows of the test part (`test`) or the training part, in file
    /// order.
    pub fn rows(&self, test: bool) -> Vec<usize> {
        (0..self.raw.features.rows())
            .filter(|&i| self.is_test[i] == test)
            .collect()
    }

    /// How the input counts LIBSVM indices, when from 0: its LIBSVM parts
    /// count from 0 too, and a part may hold no index 0 that would tell.
    pub fn zero_based(&self) -> Option<&'a LibsvmInfo> {
        self.raw
            .libsvm
            .as_ref()
            .filter(|l| l.base == IndexBase::Zero)
    }

    /// Writes the training part to `train` and the test part to `test`,
    /// both or neither (an old test part beside a new training part could
    /// share rows). Returns each part as written.
    pub fn write(&self, train: PartTarget, test: PartTarget) -> Result<(SplitPart, SplitPart)> {
        let batch = crate::output::Batch::begin();
        let train = self.write_part(train, false)?;
        let test = self.write_part(test, true)?;
        batch.commit()?;
        Ok((train, test))
    }

    /// Writes the test part (when `test`) or the training part to
    /// `target`: the input's own lines when in its text format, else the
    /// values.
    fn write_part(&self, target: PartTarget, test: bool) -> Result<SplitPart> {
        let rows = self.rows(test);
        let bytes = self.write_rows(target, &rows, test)?;
        Ok(SplitPart {
            output: crate::output::shown(target.path),
            format: target.format,
            rows: rows.len(),
            bytes,
        })
    }

    /// Writes `rows` (the test part's when `test`) to `target`; returns the
    /// bytes written.
    fn write_rows(&self, target: PartTarget, rows: &[usize], test: bool) -> Result<u64> {
        let raw = self.raw;
        let same_text = matches!(
            (raw.format, target.format),
            (Format::Csv, OutputFormat::Csv) | (Format::Libsvm, OutputFormat::Libsvm)
        );
        if same_text && !source::is_stdin(self.data) {
            let header = raw.csv.as_ref().and_then(|c| c.header_line);
            let part = LinesPart {
                rows: raw.features.rows(),
                is_test: &self.is_test,
                test,
                header,
            };
            if let Some(bytes) = part.copy(self.data, target.path)? {
                return Ok(bytes);
            }
        }
        // Text LIBSVM counts as the input did (the halves are its rows).
        let base = raw.libsvm.as_ref().map_or(IndexBase::One, |l| l.base);
        write_raw_based(target.path, &subset(raw, rows), target.format, base)
    }
}

/// The rows `rows` (in increasing order) of `raw`.
fn subset<F: Real>(raw: &RawData<F>, rows: &[usize]) -> RawData<F> {
    RawData {
        features: raw.features.permuted(rows),
        class_ids: rows.iter().map(|&i| raw.class_ids[i]).collect(),
        table: raw.table.clone(),
        format: raw.format,
        csv: raw.csv.clone(),
        libsvm: raw.libsvm.clone(),
    }
}

/// One part's data lines of a text file of `rows` rows: those of the rows
/// `i` with `is_test[i] == test`, after the CSV header (line `header`,
/// 1-based).
struct LinesPart<'a> {
    rows: usize,
    is_test: &'a [bool],
    test: bool,
    header: Option<u64>,
}

impl LinesPart<'_> {
    /// Writes to `out` the part's data lines of `input` (a CSV or LIBSVM
    /// file, plain or gzip) as they are: the header first, comments and
    /// blank lines left out. `None` when the file's data lines are not the
    /// rows read (then nothing is written, and the caller writes the
    /// values).
    fn copy(&self, input: &Path, out: &Path) -> Result<Option<u64>> {
        let Some((header, lines)) = self.read(input)? else {
            return Ok(None);
        };
        let bytes = (header.len() + lines.len()) as u64;
        crate::output::check_space(out, bytes)?;
        crate::output::write_atomic(out, |w| {
            w.write_all(&header)?;
            w.write_all(&lines)
        })?;
        Ok(Some(bytes))
    }

    /// The header line and the part's data lines of `input`, each ending in
    /// a newline; `None` when its data lines are not the rows read. They are
    /// all counted before anything is written.
    fn read(&self, input: &Path) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let rows = self.rows;
        let opened = source::open(input)?;
        let mut reader: Box<dyn BufRead> = match opened.content {
            Content::Mapped(map) => Box::new(std::io::Cursor::new(map)),
            Content::Reader(r) => r,
        };
        let name = source::name(input).to_path_buf();
        let mut lines: Vec<u8> = Vec::new();
        let mut kept_header: Vec<u8> = Vec::new();
        let (mut no, mut row) = (0u64, 0usize);
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| Error::io(&name, "cannot read data file", e))?;
            if n == 0 {
                break;
            }
            no += 1;
            if !line.ends_with(b"\n") {
                line.push(b'\n');
            }
            if Some(no) == self.header {
                kept_header.extend_from_slice(&line);
                continue;
            }
            if super::csv::is_skipped(&String::from_utf8_lossy(&line)) {
                continue;
            }
            if row >= rows {
                return Ok(None);
            }
            if self.is_test[row] == self.test {
                lines.extend_from_slice(&line);
            }
            row += 1;
        }
        Ok((row == rows).then_some((kept_header, lines)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_part_is_round_f_rows_and_neither_part_is_empty() {
        let params = |test_fraction| SplitParams {
            test_fraction,
            seed: 0,
            stratify: false,
        };
        let data = Path::new("d.csv");
        assert_eq!(params(0.2).test_count(569, data).unwrap(), 114);
        // 0.25 of 10 is 2.5: halves away from zero.
        assert_eq!(params(0.25).test_count(10, data).unwrap(), 3);
        for (f, rows) in [(0.0001, 569), (0.9999, 569), (0.4, 1)] {
            let e = params(f).test_count(rows, data).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{e:?}");
            assert!(e.to_string().contains("leaves one part empty"), "{e}");
        }
    }
}
