//! Datasets: loading CSV and LIBSVM files (optionally gzipped) and the
//! binary `.pbin` format into memory, and writing them back.
//!
//! Parsing streams through the file once; only the in-memory matrix (f32/f64
//! dense rows or CSR) and one small class id per row are kept.
//! [`stream::RowStream`] reads the same text one example at a time instead,
//! for online learning, keeping nothing.
//!
//! Each format has its folder, holding its reading, writing and what marks
//! it (`csv/`, `libsvm/`, `binary/`). [`source`] opens files,
//! [`format`](mod@format) tells which format a file is in, and the rest is
//! shared: the options, the parsed data, the matrices and labels, the line
//! reader and the messages. Dependencies point one way: the formats use the
//! shared files, and only this file, [`format`](mod@format),
//! [`write`](mod@write) and [`stream`] use the formats.

pub mod arrays;
pub mod binary;
pub mod block;
pub mod blocks;
pub mod bundled;
pub mod byte_rows;
pub mod convert;
pub mod csv;
pub mod dataset;
pub mod describe;
pub mod exact;
pub mod facts;
pub mod fingerprint;
pub mod format;
pub mod labels;
pub mod libsvm;
pub mod lines;
pub mod matrix;
pub mod message;
pub mod notes;
pub mod npy;
pub mod number;
pub mod options;
pub mod raw;
pub mod scaling;
pub mod shards;
pub mod source;
pub mod split;
pub mod stats;
pub mod storage;
pub mod stream;
pub mod write;

use std::path::Path;

use crate::error::{Error, Result};
use crate::float::Real;

use blocks::{Reading, Text};
use source::Content;

pub use dataset::{Dataset, FactsCache};
pub use facts::RowFacts;
pub use labels::{ClassLabel, LabelMap, LabelTable};
pub use lines::MAX_LINE_BYTES;
pub use matrix::{CsrMatrix, DenseMatrix, Features, MAX_FEATURE_INDEX, Row};
pub use options::{Format, HeaderMode, IndexBase, LabelColumn, LoadOptions, NO_LABEL};
pub use raw::{BaseWhy, CsvInfo, LibsvmInfo, RawData};
pub use scaling::{ScaleKind, Scaling};
pub use storage::Storage;

/// Reads a data file (standard input for `-`) without mapping its labels.
/// Messages name standard input `<stdin>` (see [`source::name`]).
pub fn load_raw<F: Real>(path: &Path, opts: &LoadOptions) -> Result<RawData<F>> {
    let mut input = source::open(path)?;
    let stdin = source::is_stdin(path);
    let path = source::name(path);
    // `<stdin>` has no extension: its format comes from the content.
    let format = match opts.format {
        Some(f) => f,
        None => match format::infer_format(path, &input.head) {
            // A delimiter given says the file is delimited text, also when
            // its lines tell nothing (`1 2 3` with `--delimiter whitespace`).
            Err(_) if opts.delimiter.is_some() => Format::Csv,
            inferred => inferred?,
        },
    };
    let size_hint = input.size_hint;
    let text = match &mut input.content {
        Content::Mapped(map) => Text::mapped(map),
        Content::Reader(reader) => Text::reader(reader),
    };
    let reading = Reading::default();
    match format {
        Format::Csv => {
            let raw = csv::parse_text(text, path, opts, size_hint, reading)?;
            csv::refuse_pandas_index(&raw, path)?;
            Ok(raw)
        }
        Format::Libsvm => libsvm::parse_text(
            text,
            path,
            opts.unlabeled,
            libsvm::Indexing::of(opts),
            size_hint,
            reading,
        ),
        Format::Binary if input.gzip => Err(Error::data(
            path,
            "gzip-compressed binary (.pbin) files are not supported; decompress it \
             first (for example with gunzip)",
        )),
        Format::Binary if stdin => Err(Error::data(
            path,
            "binary (.pbin) data cannot be read from standard input (it is read in place, \
             not parsed); give the file's path",
        )),
        Format::Binary => {
            drop(text);
            drop(input);
            binary::read(path)
        }
        Format::Npy if input.gzip => Err(Error::data(
            path,
            "gzip-compressed .npy files are not supported; decompress it first (for example \
             with gunzip)",
        )),
        Format::Npy if stdin => Err(Error::data(
            path,
            ".npy data cannot be read from standard input (its size is checked against the \
             file's before anything is read); give the file's path",
        )),
        Format::Npy => {
            drop(text);
            drop(input);
            npy::read(path, opts)
        }
    }
}

/// Reads a data file (standard input for `-`) and maps its labels to -1/+1.
pub fn load<F: Real>(path: &Path, opts: &LoadOptions) -> Result<Dataset<F>> {
    let raw = load_raw(path, opts)?;
    Dataset::from_raw(raw, source::name(path), opts.positive.as_deref())
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::PathBuf;

    use super::*;

    fn data_file(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data")
            .join(name)
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn bundled_gzip_copy_reads_like_the_plain_file() {
        let opts = LoadOptions::default();
        let plain = load_raw::<f64>(&data_file("iris_setosa.csv"), &opts).unwrap();
        let gz = load_raw::<f64>(&data_file("iris_setosa.csv.gz"), &opts).unwrap();
        assert_eq!(gz.features, plain.features);
        assert_eq!(gz.class_ids, plain.class_ids);
        assert_eq!(gz.table.classes(), plain.table.classes());
        assert_eq!(gz.format, Format::Csv);
        assert_eq!((gz.features.rows(), gz.features.cols()), (150, 4));
        let d = load::<f32>(&data_file("iris_setosa.csv.gz"), &opts).unwrap();
        assert_eq!(d.labels.iter().filter(|&&y| y > 0).count(), 50);
    }

    #[test]
    fn format_is_inferred_from_name_or_content() {
        let dir = tempfile::tempdir().unwrap();
        let svm_txt = dir.path().join("a.txt");
        std::fs::write(&svm_txt, "# c\n1 1:2\n-1 2:3\n").unwrap();
        let raw = load_raw::<f64>(&svm_txt, &LoadOptions::default()).unwrap();
        assert_eq!(
            (raw.format, raw.features.is_sparse()),
            (Format::Libsvm, true)
        );
        let csv_gz = dir.path().join("b.data.gz");
        std::fs::write(&csv_gz, gzip(b"1;2\n-1;3\n")).unwrap();
        let raw = load_raw::<f64>(&csv_gz, &LoadOptions::default()).unwrap();
        assert_eq!((raw.format, raw.features.cols()), (Format::Csv, 1));
        // An explicit format wins over the name.
        let forced = LoadOptions {
            format: Some(Format::Csv),
            ..Default::default()
        };
        let e = load_raw::<f64>(&data_file("heart_scale.svm"), &forced).unwrap_err();
        assert!(
            e.to_string()
                .contains("heart_scale.svm:1:1: no feature columns"),
            "{e}"
        );
        let heart = load_raw::<f64>(&data_file("heart_scale.svm"), &LoadOptions::default());
        assert_eq!(heart.unwrap().features.rows(), 270);
    }

    #[test]
    fn truncated_gzip_fails_while_parsing_not_silently() {
        let dir = tempfile::tempdir().unwrap();
        let csv: Vec<u8> = (0..20000)
            .flat_map(|i| format!("{},{}.25,{}\n", i % 2, i, i * 7).into_bytes())
            .collect();
        let svm: Vec<u8> = (0..20000)
            .flat_map(|i| format!("{} 1:{}.25 3:{}\n", i % 2, i, i * 7).into_bytes())
            .collect();
        for (name, text) in [("a.csv.gz", &csv), ("a.txt.gz", &csv), ("a.svm.gz", &svm)] {
            let gz = gzip(text);
            let path = dir.path().join(name);
            std::fs::write(&path, &gz[..gz.len() / 2]).unwrap();
            let e = load_raw::<f32>(&path, &LoadOptions::default()).unwrap_err();
            assert!(matches!(e, Error::Io { .. }), "{e:?}");
            let e = e.to_string();
            assert!(
                e.starts_with(&format!(
                    "{}: cannot read: the gzip data is truncated or corrupt",
                    path.display()
                )),
                "{e}"
            );
            // Where it stopped: after the last complete line, far into the file.
            let (_, line) = e.rsplit_once(", after line ").expect(&e);
            let line: u64 = line.parse().unwrap();
            assert!(line > 1000 && line < 20000, "{e}");
        }
    }

    #[test]
    fn missing_files_and_directories_fail_to_load() {
        let dir = tempfile::tempdir().unwrap();
        let e = load_raw::<f64>(dir.path(), &LoadOptions::default()).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("cannot open data file: it is a directory, not a file")
        );
        let missing = dir.path().join("missing.svm");
        let e = load::<f64>(&missing, &LoadOptions::default()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("{}: cannot open data file: ", missing.display()))
        );
    }
}
