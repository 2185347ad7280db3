//! The LIBSVM reader: real files, tokens, indices, labels, every refusal
//! with its line, column and value, and files of many blocks.

use std::path::Path;

use super::read::parse_lines;
use super::*;
use crate::data::blocks::{Reading, Text};
use crate::data::csv;
use crate::data::lines::LineReader;
use crate::data::matrix::{CsrMatrix, Features};
use crate::data::options::{Format, IndexBase, LoadOptions, NO_LABEL};
use crate::data::raw::RawData;
use crate::error::Result;
use crate::float::Real;

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

/// Reads `text` with its indices counted as `base` says (`None`: detected),
/// on the fast path, line by line and in tiny blocks: the three must agree.
fn read_as(text: &str, base: Option<IndexBase>, from: Option<&Path>) -> Result<RawData<f64>> {
    let path = Path::new("t.svm");
    let indexing = Indexing { base, from };
    let tiny = Reading {
        fast: true,
        block_bytes: 7,
    };
    let read = |reading| {
        parse_text(
            Text::bytes(text.as_bytes()),
            path,
            false,
            indexing,
            None,
            reading,
        )
    };
    let fast = read(Reading::default());
    let summary = crate::data::raw::summary;
    assert_eq!(summary(&fast), summary(&read(Reading::line_by_line())));
    assert_eq!(summary(&fast), summary(&read(tiny)));
    fast
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
    let text = "# made by hand\n\n+1\t1:0.5\t 3:2  \r\n  # indented comment\r\n-1 qid:7 2:-3#x\n";
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
        "t.svm:1:3: expected a feature index (a non-negative integer) in \"a:b\", found \"a\""
    );
    assert_eq!(
        err("1 1:2 -3:1\n"),
        "t.svm:1:7: expected a feature index (a non-negative integer) in \"-3:1\", found \"-3\""
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
        "t.svm:1:7: expected a feature index (a non-negative integer) in \"\u{e9}:1\", found \
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
    let raw = parse_str::<f64>("+1 1:1\n-1 1:2\n0 1:3\n1 1:4\n2.5 1:5\n3 1:6\n1e0 1:7\n").unwrap();
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
        "t.svm:1:1: expected a numeric label, found \"1,2\" (is this a CSV file? read \
         it as CSV)"
    );
    assert_eq!(
        err("+1 1:2\n  -1;3;4\n"),
        "t.svm:2:3: expected a numeric label, found \"-1;3;4\" (is this a CSV file? read \
         it as CSV)"
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
    let un = |text: &str| parse_options::<f64, _>(text.as_bytes(), Path::new("t.svm"), true, None);
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
        "t.svm:1:1: expected a numeric label, found \"1,2\" (is this a CSV file? read \
         it as CSV)"
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
    let lines = LineReader::with_limit(Text::bytes(&text[..]), path, 10);
    let e = parse_lines::<f64>(
        lines,
        path,
        false,
        Indexing::default(),
        None,
        Reading::default(),
    )
    .unwrap_err();
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
    let raw = parse_sized::<f32, _>(text.as_bytes(), Path::new("t.svm"), Some(text.len() as u64))
        .unwrap();
    let m = csr(&raw);
    assert_eq!((m.rows(), m.cols, m.values.len()), (1000, 3, 2000));
    assert!(m.values.capacity() <= 2250 && m.indices.capacity() <= 2250);
    assert_eq!(m.values[1998..], [999.0, 2997.5]);
    let raw = parse_sized::<f32, _>(text.as_bytes(), Path::new("t.svm"), Some(u64::MAX)).unwrap();
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
        let lines = LineReader::with_limit(Text::bytes(&bytes[..]), path, 7);
        let _ = parse_lines::<f64>(lines, path, false, Indexing::default(), Some(bytes.len() as u64), Reading::default());
    }
}

/// Lines of LIBSVM-like text: mostly good rows (so that the fast path
/// reads whole blocks), with every kind of trouble mixed in rarely, to
/// check the fast path against the line reader.
fn svm_text() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let label = prop_oneof![
        30 => proptest::sample::select(vec!["1", "-1", "+1", "0", "2.5", "1e0"]),
        1 => proptest::sample::select(vec!["", "a", "1,2", "nan", "1:1", "qid:1", "#c", "é"]),
    ];
    let value = prop_oneof![
        30 => proptest::sample::select(vec![
            "0", "1", "-1", "0.008900964", "-0.0091879405", "2.5e-3", ".5", "1.", "-0",
            "1e-50", "123456789012345678901", "3#c",
        ]),
        1 => proptest::sample::select(vec!["1e39", "nan", "", "x", "1:2", "é"]),
    ];
    let index = prop_oneof![
        30 => (1u64..4).prop_map(|step| step.to_string()),
        1 => proptest::sample::select(vec!["0", "007", "2147483647", "2147483648", "99999999999", "qid", "a", ""])
            .prop_map(str::to_owned),
    ];
    let token = (index, value);
    let line = (
        label,
        proptest::collection::vec(token, 0..6),
        prop_oneof![20 => Just(" "), 1 => Just("\t"), 1 => Just("  "), 1 => Just(" \x0c")],
        prop_oneof![
            20 => Just("\n"),
            1 => Just("\r\n"),
            1 => Just("\n\n"),
            1 => Just(" # note\n"),
            1 => Just("\n#é\n"),
            1 => Just(" qid:7\n"),
        ],
    );
    (
        proptest::collection::vec(line, 1..40),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(lines, bom, last_newline)| {
            let mut text = String::new();
            if bom {
                text.push('\u{feff}');
            }
            for (label, tokens, sep, end) in lines {
                text.push_str(label);
                // Steps give increasing indices; odd ones are written as is.
                let mut at = 0u64;
                for (index, value) in tokens {
                    text.push_str(sep);
                    match index.parse::<u64>() {
                        Ok(step) if index.len() == 1 && step > 0 => {
                            at += step;
                            text.push_str(&format!("{at}:{value}"));
                        }
                        _ => text.push_str(&format!("{index}:{value}")),
                    }
                }
                text.push_str(end);
            }
            if !last_newline {
                text.pop();
            }
            text.into_bytes()
        })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]
    /// The fast path, in blocks of any size, from a reader or from memory,
    /// reads what the line reader reads, or fails with its message.
    #[test]
    fn the_fast_path_reads_as_the_line_reader(
        bytes in svm_text(),
        block in 1usize..80,
        unlabeled in proptest::prelude::any::<bool>(),
    ) {
        use crate::data::raw::summary;
        let path = Path::new("t.svm");
        let slow = summary(&parse_with::<f32, _>(&bytes[..], path, unlabeled, None, Reading::line_by_line()));
        let fast = summary(&parse_with::<f32, _>(&bytes[..], path, unlabeled, None, Reading::default()));
        proptest::prop_assert_eq!(&fast, &slow);
        let tiny = Reading { fast: true, block_bytes: block };
        let fast = summary(&parse_with::<f32, _>(&bytes[..], path, unlabeled, None, tiny));
        proptest::prop_assert_eq!(&fast, &slow);
        let fast = summary(&parse_text::<f32>(Text::bytes(&bytes), path, unlabeled, Indexing::default(), None, tiny));
        proptest::prop_assert_eq!(&fast, &slow);
        let slow = summary(&parse_with::<f64, _>(&bytes[..], path, unlabeled, None, Reading::line_by_line()));
        let fast = summary(&parse_text::<f64>(Text::bytes(&bytes), path, unlabeled, Indexing::default(), None, tiny));
        proptest::prop_assert_eq!(&fast, &slow);
    }
}

const ALPHABET: &[u8] = b"0123456789:::  \t\n\n\r#.-+eEnaifqd\xff\xc3\xa9";

/// scikit-learn's `dump_svmlight_file` writes zero-based indices: a file
/// with an index 0 is read zero-based (as its `zero_based="auto"` does), to
/// the same matrix as the same rows written one-based, and says why.
#[test]
fn a_file_with_index_0_is_zero_based() {
    let zero = "# sklearn\n1 0:1.5 2:3\n-1 1:2 3:-1\n1 3:2\n";
    let one = "# sklearn\n1 1:1.5 3:3\n-1 2:2 4:-1\n1 4:2\n";
    let z = read_as(zero, None, None).unwrap();
    let o = read_as(one, None, None).unwrap();
    assert_eq!(z.features, o.features);
    assert_eq!(
        csr(&z),
        matrix(4, &[0, 2, 4, 5], &[0, 2, 1, 3, 3], &[1.5, 3., 2., -1., 2.])
    );
    let zi = z.libsvm.unwrap();
    assert_eq!(zi.base, IndexBase::Zero);
    assert_eq!(
        zi.describe(),
        "zero-based: index 0 appears on line 2 of t.svm"
    );
    let oi = o.libsvm.unwrap();
    assert_eq!(oi.base, IndexBase::One);
    assert_eq!(
        oi.describe(),
        "one-based: no index 0 appears (the LIBSVM standard)"
    );
    // The first index 0 is named, however far into the file (blocks parsed
    // on their own number their lines from 1).
    let mut late: String = (0..2000)
        .map(|i| format!("{} 1:{i} 2:1\n", i % 2))
        .collect();
    late.push_str("1 0:7\n-1 0:1 1:1\n");
    let raw = read_as(&late, None, None).unwrap();
    assert_eq!(
        raw.libsvm.as_ref().unwrap().describe(),
        "zero-based: index 0 appears on line 2001 of t.svm"
    );
    let m = csr(&raw);
    assert_eq!(
        (m.cols, &m.indices[..2], &m.indices[4000..]),
        (3, &[1, 2][..], &[0, 0, 1][..])
    );
    // A row holding only index 0 is one feature.
    assert_eq!(read_as("1 0:1\n", None, None).unwrap().features.cols(), 1);
}

/// Asked for, the base is used as given: zero-based without an index 0
/// (the case detection cannot see), one-based refusing index 0 with its
/// line, column and value, and a hint.
#[test]
fn an_index_base_asked_for_is_used_as_given() {
    let z = read_as("1 1:2 3:1\n", Some(IndexBase::Zero), None).unwrap();
    assert_eq!(csr(&z), matrix(4, &[0, 2], &[1, 3], &[2., 1.]));
    assert_eq!(z.libsvm.unwrap().describe(), "zero-based: as asked");
    let e = read_as("1 1:2\n-1 0:1.5 2:1\n", Some(IndexBase::One), None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.svm:2:4: feature index 0 in \"0:1.5\": indices are read one-based, from 1 (the \
         LIBSVM standard) (if this file counts features from 0, as scikit-learn's \
         dump_svmlight_file writes by default, read its indices as zero-based)"
    );
    let model = Path::new("m.json");
    let e = read_as("1 0:1\n", Some(IndexBase::One), Some(model)).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "t.svm:1:3: feature index 0 in \"0:1\": the model m.json was trained on one-based \
             LIBSVM data, so indices are read from 1 ("
        ),
        "{e}"
    );
    let z = read_as("1 0:1\n", Some(IndexBase::Zero), Some(model)).unwrap();
    assert_eq!(
        z.libsvm.unwrap().describe(),
        "zero-based: as the training data of m.json"
    );
    // Counted from 0, the largest index is one less: the limit is on
    // features.
    assert_eq!(
        read_as("1 2147483647:1\n", Some(IndexBase::Zero), None)
            .unwrap_err()
            .to_string(),
        "t.svm:1:3: feature index 2147483647 in \"2147483647:1\" exceeds the limit of \
         2147483646 (indices counted from 0)"
    );
    assert_eq!(
        read_as("1 2147483646:1\n", Some(IndexBase::Zero), None)
            .unwrap()
            .features
            .cols(),
        2147483647
    );
    let e = read_as("1 0:1 2147483647:1\n", None, None).unwrap_err();
    assert!(e.to_string().contains("more than the limit"), "{e}");
}
