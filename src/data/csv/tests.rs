//! The CSV reader: layouts, headers, labels, quoting, every refusal with
//! its line, column and value, and files of many blocks.

use std::path::Path;

use super::read::parse_lines;
use super::*;
use crate::data::blocks::{Reading, Text};
use crate::data::bundled;
use crate::data::labels::MAX_DISTINCT_LABELS;
use crate::data::lines::LineReader;
use crate::data::matrix::{DenseMatrix, Features};
use crate::data::options::{Format, HeaderMode, LabelColumn, LoadOptions, NO_LABEL};
use crate::data::raw::{CsvInfo, RawData};
use crate::error::{Error, Result};
use crate::float::Real;

fn data_file(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

fn opts() -> LoadOptions {
    LoadOptions::default()
}

fn parse_str<F: Real>(text: &str, opts: &LoadOptions) -> Result<RawData<F>> {
    parse(text.as_bytes(), Path::new("t.csv"), opts)
}

fn dense<F: Real>(raw: &RawData<F>) -> DenseMatrix<F> {
    match &raw.features {
        Features::Dense(m) => m.clone(),
        Features::Sparse(_) => panic!("CSV gave a sparse matrix"),
    }
}

/// The label text of every row.
fn labels<F>(raw: &RawData<F>) -> Vec<&str> {
    raw.class_ids
        .iter()
        .map(|&c| raw.table.classes()[c as usize].text.as_str())
        .collect()
}

/// The matrix and row labels of `text` read in f64.
fn ok(text: &str, opts: &LoadOptions) -> (DenseMatrix<f64>, Vec<String>) {
    let raw = parse_str::<f64>(text, opts).unwrap();
    let l = labels(&raw).iter().map(|s| s.to_string()).collect();
    (dense(&raw), l)
}

fn err_with<F: Real>(text: &str, opts: &LoadOptions) -> String {
    parse_str::<F>(text, opts).unwrap_err().to_string()
}

fn err(text: &str) -> String {
    err_with::<f64>(text, &opts())
}

fn matrix(rows: usize, cols: usize, values: &[f64]) -> DenseMatrix<f64> {
    DenseMatrix {
        rows,
        cols,
        values: values.to_vec().into(),
    }
}

#[test]
fn real_datasets_parse_exactly() {
    // name, rows, cols, sum of all features in file order, classes in
    // order of appearance with their counts.
    type Case = (&'static str, usize, usize, f64, [(&'static str, u64); 2]);
    let cases: [Case; 4] = [
        (
            "iris_setosa",
            150,
            4,
            2078.6999999999985,
            [("1", 50), ("-1", 100)],
        ),
        ("digits_0v1", 360, 64, 113422.0, [("-1", 178), ("1", 182)]),
        ("digits_3v5", 365, 64, 112066.0, [("-1", 183), ("1", 182)]),
        (
            "breast_cancer",
            569,
            30,
            1056474.4596356046,
            [("-1", 212), ("1", 357)],
        ),
    ];
    for (name, rows, cols, sum, classes) in cases {
        let path = data_file(&format!("{name}.csv"));
        let file = std::fs::File::open(&path).unwrap();
        let raw = parse::<f64, _>(std::io::BufReader::new(file), &path, &opts()).unwrap();
        let m = dense(&raw);
        assert_eq!(
            (m.rows, m.cols, m.values.len()),
            (rows, cols, rows * cols),
            "{name}"
        );
        assert_eq!(m.values.iter().sum::<f64>(), sum, "{name}");
        let got: Vec<(&str, u64)> = raw
            .table
            .classes()
            .iter()
            .map(|c| (c.text.as_str(), c.count))
            .collect();
        assert_eq!(got, classes, "{name}");
        assert_eq!(raw.class_ids.len(), rows);
        assert_eq!(raw.format, Format::Csv);
    }
}

#[test]
fn real_dataset_rows_hold_the_file_values() {
    let path = data_file("iris_setosa.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let raw = parse_str::<f64>(&text, &opts()).unwrap();
    let m = dense(&raw);
    assert_eq!(m.values[..4], [5.1, 3.5, 1.4, 0.2]);
    assert_eq!(m.values[m.values.len() - 4..], [5.9, 3.0, 5.1, 1.8]);
    assert_eq!((raw.class_ids[0], raw.class_ids[149]), (0, 1));
    let raw = parse_str::<f32>(&text, &opts()).unwrap();
    assert_eq!(dense(&raw).values[..4], [5.1f32, 3.5, 1.4, 0.2]);

    let text = std::fs::read_to_string(data_file("digits_0v1.csv")).unwrap();
    let m = dense(&parse_str::<f32>(&text, &opts()).unwrap());
    let first: [f32; 64] = [
        0., 0., 5., 13., 9., 1., 0., 0., 0., 0., 13., 15., 10., 15., 5., 0., 0., 3., 15., 2., 0.,
        11., 8., 0., 0., 4., 12., 0., 0., 8., 8., 0., 0., 5., 8., 0., 0., 9., 8., 0., 0., 4., 11.,
        0., 1., 12., 7., 0., 0., 2., 14., 5., 10., 12., 0., 0., 0., 0., 6., 13., 10., 0., 0., 0.,
    ];
    assert_eq!(m.values[..64], first);

    let text = std::fs::read_to_string(data_file("breast_cancer.csv")).unwrap();
    let m = dense(&parse_str::<f64>(&text, &opts()).unwrap());
    assert_eq!(m.values[..5], [17.99, 10.38, 122.8, 1001.0, 0.1184]);
    assert_eq!(m.values[29], 0.1189);
    assert_eq!(
        m.values[568 * 30..568 * 30 + 5],
        [7.76, 24.54, 47.92, 181.0, 0.05263]
    );
}

#[test]
fn bundled_dataset_parses() {
    let d = bundled::digits_3v5::<f32>(&opts()).unwrap();
    assert_eq!((d.rows(), d.cols()), (365, 64));
    assert_eq!(d.labels.iter().filter(|&&y| y > 0).count(), 182);
    assert_eq!(d.label_map.positive, "1");
}

#[test]
fn f32_values_are_parsed_directly() {
    let raw = parse_str::<f32>("1,1.0000000596046447753906250001\n", &opts()).unwrap();
    // Through f64 it would round to 1.0 (a tie, to even).
    assert_eq!(dense(&raw).values, [1.000_000_1_f32]);
    let raw = parse_str::<f32>("1,0.1\n", &opts()).unwrap();
    assert_eq!(dense(&raw).values[0].to_bits(), 0.1f32.to_bits());
}

#[test]
fn header_is_detected_from_non_numeric_fields() {
    let (m, l) = ok("label, x1 ,x2\n1,2,3\n-1,4,5\n", &opts());
    assert_eq!(
        (m, l),
        (
            matrix(2, 2, &[2., 3., 4., 5.]),
            vec!["1".into(), "-1".into()]
        )
    );
    // The label column may hold text without making the line a header.
    let (m, l) = ok("a,1,2\nb,3,4\n", &opts());
    assert_eq!(
        (m, l),
        (
            matrix(2, 2, &[1., 2., 3., 4.]),
            vec!["a".into(), "b".into()]
        )
    );
    // nan/inf are numbers (bad ones), not header names.
    assert_eq!(
        err("1,2\n1,inf\n"),
        "t.csv:2:3: expected a finite number in column 2, found \"inf\""
    );
    assert_eq!(
        err("1,nan\n"),
        "t.csv:1:3: expected a finite number in column 2, found \"nan\""
    );
    // Forced either way.
    let present = LoadOptions {
        header: HeaderMode::Present,
        ..opts()
    };
    let (m, _) = ok("1,2,3\n4,5,6\n", &present);
    assert_eq!(m, matrix(1, 2, &[5., 6.]));
    let absent = LoadOptions {
        header: HeaderMode::Absent,
        ..opts()
    };
    assert_eq!(
        err_with::<f64>("y,x\n1,2\n", &absent),
        "t.csv:1:3: expected a number in column 2, found \"x\" (the label is read from column 1 by default; if column 2 holds the labels, take the last column as the label)"
    );
    assert_eq!(
        err_with::<f64>("é,2,x\n", &absent),
        "t.csv:1:5: expected a number in column 3, found \"x\" (the label is read from column 1 by default; if column 3 holds the labels, take the last column as the label)"
    );
}

#[test]
fn one_text_field_among_numbers_is_a_typo_not_a_header() {
    let hint = "(line 1 was read as data because other fields on it are numbers; if it is \
                a header, say that the file has a header)";
    assert_eq!(
        err("1,2,abc\n-1,4,5\n1,6,7\n"),
        format!("t.csv:1:5: expected a number in column 3, found \"abc\" {hint}")
    );
    assert_eq!(
        err("# c\nlabel,x1,2020\n1,2,3\n"),
        "t.csv:2:7: expected a number in column 2, found \"x1\" (line 2 was read as data \
         because other fields on it are numbers; if it is a header, say that the file has a header)"
    );
    // Forced, such a line is a header.
    let present = LoadOptions {
        header: HeaderMode::Present,
        ..opts()
    };
    let (m, _) = ok("label,x1,2020\n1,2,3\n", &present);
    assert_eq!(m, matrix(1, 2, &[2., 3.]));
    // Empty fields neither make nor prevent a header.
    let (m, _) = ok("y,,x\n1,2,3\n", &opts());
    assert_eq!(m, matrix(1, 2, &[2., 3.]));
    assert_eq!(
        err("y,,\n1,2,3\n"),
        "t.csv:1:3: empty field in column 2 (expected a number)"
    );
    // Numbers that are not finite are numbers: no header, and no hint.
    assert_eq!(
        err("1,x,inf\n"),
        format!("t.csv:1:3: expected a number in column 2, found \"x\" {hint}")
    );
}

#[test]
fn the_layout_is_reported() {
    let raw = parse_str::<f64>("# c\n\nx;class;y\n1;a;2\n", &opts_named("class")).unwrap();
    assert_eq!(
        raw.csv,
        Some(CsvInfo {
            header_line: Some(3),
            label_column: Some(2),
            label_name: Some("class".into()),
            delimiter: b';',
            columns: 3,
            names: vec!["x".into(), "class".into(), "y".into()],
            ignored: vec![],
        })
    );
    assert_eq!(
        raw.csv.as_ref().unwrap().feature_names(),
        Some(vec!["x".to_owned(), "y".to_owned()])
    );
    let raw = parse_str::<f64>("1\t2\n", &opts()).unwrap();
    assert_eq!(
        raw.csv,
        Some(CsvInfo {
            header_line: None,
            label_column: Some(1),
            label_name: None,
            delimiter: b'\t',
            columns: 2,
            names: vec![],
            ignored: vec![],
        })
    );
}

fn opts_named(name: &str) -> LoadOptions {
    LoadOptions {
        label_column: Some(LabelColumn::Name(name.into())),
        ..opts()
    }
}

#[test]
fn unlabeled_rows_are_all_features() {
    let un = LoadOptions {
        unlabeled: true,
        // Ignored: there is no label column.
        label_column: Some(LabelColumn::Index(2)),
        ..opts()
    };
    let (m, l) = ok("1,2\n3,4\n", &un);
    assert_eq!(
        (m, l),
        (matrix(2, 2, &[1., 2., 3., 4.]), vec![NO_LABEL.into(); 2])
    );
    let raw = parse_str::<f64>("x;y\n1;2\n", &un).unwrap();
    assert_eq!(dense(&raw), matrix(1, 2, &[1., 2.]));
    let info = raw.csv.unwrap();
    assert_eq!(
        (info.header_line, info.label_column, info.columns),
        (Some(1), None, 2)
    );
    // One column is enough.
    let (m, _) = ok("5\n-6\n", &un);
    assert_eq!(m, matrix(2, 1, &[5., -6.]));
    // A text field is a feature like any other.
    assert_eq!(
        err_with::<f64>("a,1\n", &un),
        "t.csv:1:1: expected a number in column 1, found \"a\" (line 1 was read as data \
         because other fields on it are numbers; if it is a header, say that the file has a header)"
    );
    assert_eq!(
        err_with::<f64>("1,2\n3\n", &un),
        "t.csv:2:2: expected 2 fields separated by `,` (as on line 1), found 1"
    );
}

#[test]
fn a_label_column_from_the_model_says_where_it_came_from() {
    let from = |c: LabelColumn, header: HeaderMode| LoadOptions {
        label_column: Some(c),
        label_column_from: Some("m.json".into()),
        header,
        ..opts()
    };
    let how = "(the label column is the one the model m.json was trained with); pass \
               --label-column N, \
               or --unlabeled if the file has no label column";
    assert_eq!(
        err_with::<f64>("1,2\n", &from(LabelColumn::Index(3), HeaderMode::Auto)),
        format!(
            "t.csv:1:1: label column 3 is out of range: the file has 2 columns (numbered \
             from 1, or from -1 for the last) {how}"
        )
    );
    assert_eq!(
        err_with::<f64>(
            "a,b\n1,2\n",
            &from(LabelColumn::Name("y".into()), HeaderMode::Auto)
        ),
        format!(
            "t.csv:1:1: no column named \"y\" in the header; its columns are \"a\", \"b\" {how}"
        )
    );
    // A file without the header the model was trained with: its first line
    // is data, not names.
    assert_eq!(
        err_with::<f64>(
            "7,5,1\n",
            &from(LabelColumn::Name("y".into()), HeaderMode::Auto)
        ),
        format!(
            "t.csv:1:1: no column named \"y\": line 1 (\"7\", \"5\", \"1\") reads as data, \
             not a header, so the file's columns have no names {how}"
        )
    );
    assert_eq!(
        err_with::<f64>(
            "1,2\n",
            &from(LabelColumn::Name("y".into()), HeaderMode::Absent)
        ),
        format!(
            "t.csv:1:1: the label column is named \"y\" but the file is read without a \
             header line {how}"
        )
    );
    let (m, l) = ok(
        "a,y\n1,2\n",
        &from(LabelColumn::Name("y".into()), HeaderMode::Auto),
    );
    assert_eq!((m, l), (matrix(1, 1, &[1.]), vec!["2".into()]));
}

#[test]
fn label_column_by_number() {
    let third = LoadOptions {
        label_column: Some(LabelColumn::Index(3)),
        ..opts()
    };
    let (m, l) = ok("1,2,a\n3,4,b\n", &third);
    assert_eq!(
        (m, l),
        (
            matrix(2, 2, &[1., 2., 3., 4.]),
            vec!["a".into(), "b".into()]
        )
    );
    // With a header, detected from the non-label fields.
    let (m, l) = ok("x,y,class\n1,2,a\n", &third);
    assert_eq!((m, l), (matrix(1, 2, &[1., 2.]), vec!["a".into()]));
    let fourth = LoadOptions {
        label_column: Some(LabelColumn::Index(4)),
        ..opts()
    };
    assert_eq!(
        err_with::<f64>("\n1,2,3\n", &fourth),
        "t.csv:2:1: label column 4 is out of range: the file has 3 columns (numbered from 1, or from -1 for the last)"
    );
    let zero = LoadOptions {
        label_column: Some(LabelColumn::Index(0)),
        ..opts()
    };
    assert!(err_with::<f64>("1,2\n", &zero).contains("label column 0 is out of range"));
}

#[test]
fn label_column_by_name() {
    let by = |name: &str| LoadOptions {
        label_column: Some(LabelColumn::Name(name.into())),
        ..opts()
    };
    let (m, l) = ok("x1, y ,x2\n1,a,2\n3,b,4\n", &by("y"));
    assert_eq!(
        (m, l),
        (
            matrix(2, 2, &[1., 2., 3., 4.]),
            vec!["a".into(), "b".into()]
        )
    );
    let (m, _) = ok("\"x,1\";\"the label\"\n5;1\n", &by("the label"));
    assert_eq!(m, matrix(1, 1, &[5.]));
    assert_eq!(
        err_with::<f64>("x1,y,x2\n1,2,3\n", &by("z")),
        "t.csv:1:1: no column named \"z\" in the header; its columns are \"x1\", \"y\", \"x2\""
    );
    assert_eq!(
        err_with::<f64>("1,2\n", &by("y")),
        "t.csv:1:1: no column named \"y\": line 1 (\"1\", \"2\") reads as data, not a \
         header, so the file's columns have no names; give the label column by its number \
         (--label-column N)"
    );
    assert_eq!(
        err_with::<f64>("y,x,y\n1,2,3\n", &by("y")),
        "t.csv:1:5: the header names columns 1 and 3 both \"y\"; give the label column's \
         number instead"
    );
    let absent = LoadOptions {
        header: HeaderMode::Absent,
        ..by("y")
    };
    assert_eq!(
        err_with::<f64>("1,2\n", &absent),
        "t.csv:1:1: the label column is given by name (\"y\") but the file is read without \
         a header line; give its number instead"
    );
}

#[test]
fn semicolon_and_tab_delimiters() {
    let (m, l) = ok("1;2.5;3\n-1; 4 ;5\n", &opts());
    assert_eq!(
        (m, l),
        (
            matrix(2, 2, &[2.5, 3., 4., 5.]),
            vec!["1".into(), "-1".into()]
        )
    );
    let (m, _) = ok("y\tx 1\tx 2\n1 \t 2\t3 \n", &opts());
    assert_eq!(m, matrix(1, 2, &[2., 3.]));
    // The most frequent wins; ties go to `,` then `;`.
    let (m, l) = ok("a,b;1;2\n", &opts());
    assert_eq!((m, l), (matrix(1, 2, &[1., 2.]), vec!["a,b".into()]));
    let absent = LoadOptions {
        header: HeaderMode::Absent,
        ..opts()
    };
    assert_eq!(
        err_with::<f64>("1,2;3\n", &absent),
        "t.csv:1:3: expected a number in column 2, found \"2;3\" (the delimiter was detected as \
         `,` from line 1; if fields are separated by `;`, set the delimiter to ';')"
    );
    assert_eq!(
        err_with::<f64>("1;2\t3\n", &absent),
        "t.csv:1:3: expected a number in column 2, found \"2\\t3\" (the delimiter was detected \
         as `;` from line 1; if fields are separated by tab, set the delimiter to tab)"
    );
    // Given explicitly.
    let semi = LoadOptions {
        delimiter: Some(b';'),
        ..opts()
    };
    let (m, l) = ok("1,5;2\n", &semi);
    assert_eq!((m, l), (matrix(1, 1, &[2.]), vec!["1,5".into()]));
    assert_eq!(
        err_with::<f64>("1,2\n", &semi),
        "t.csv:1:1: no feature columns: found the single field \"1,2\"; expected the label \
         and at least one feature separated by `;`"
    );
    let quote = LoadOptions {
        delimiter: Some(b'"'),
        ..opts()
    };
    assert!(matches!(
        parse_str::<f64>("1,2\n", &quote),
        Err(Error::Usage(_))
    ));
}

#[test]
fn quoted_fields() {
    let (m, l) = ok("\"a,b\",1,2\n\"say \"\"hi\"\"\" , 3 ,\"4\"\n", &opts());
    assert_eq!(
        (m, l),
        (
            matrix(2, 2, &[1., 2., 3., 4.]),
            vec!["a,b".into(), "say \"hi\"".into()]
        )
    );
    // Delimiters inside quotes do not count for detection.
    let (m, l) = ok("\"a;b;c\",1,2\n", &opts());
    assert_eq!((m, l), (matrix(1, 2, &[1., 2.]), vec!["a;b;c".into()]));
    assert_eq!(
        err("1,\"abc\n"),
        "t.csv:1:3: unterminated quoted field: the closing `\"` is missing (quoted fields \
         cannot span lines)"
    );
    assert_eq!(
        err("\"a\"b,1\n"),
        "t.csv:1:4: expected `,` or the end of the line after a closing quote, found \"b\""
    );
    assert_eq!(
        err("1,\"\"\n"),
        "t.csv:1:3: empty field in column 2 (expected a number)"
    );
    assert_eq!(err("\"\",1\n"), "t.csv:1:1: empty label in column 1");
}

#[test]
fn crlf_and_comments_and_blank_lines() {
    let raw = parse_str::<f64>(
        "# made by hand\r\ny,x\r\n\r\n1,2\r\n  \r\n-1,3\r\n",
        &opts(),
    )
    .unwrap();
    assert_eq!(dense(&raw), matrix(2, 1, &[2., 3.]));
    assert_eq!(labels(&raw), ["1", "-1"]);
    assert_eq!(
        err("y,x\r\n1,abc\r\n"),
        "t.csv:2:3: expected a number in column 2 (\"x\"), found \"abc\" (the label is read from column 1 by default; if column 2 holds the labels, take the column named \"x\" as the label)"
    );
}

#[test]
fn ragged_rows_name_expected_and_found() {
    assert_eq!(
        err("1,2,3\n1,2\n"),
        "t.csv:2:4: expected 3 fields separated by `,` (as on line 1), found 2"
    );
    assert_eq!(
        err("1,2,3\n\n1,2,3,4,5\n"),
        "t.csv:3:7: expected 3 fields separated by `,` (as on line 1), found 5 (the first \
         extra field is \"4\")"
    );
    assert_eq!(
        err("\ny;a;b\n1;2\n"),
        "t.csv:3:4: expected 3 fields separated by `;` (as in the header on line 2), found 2"
    );
}

#[test]
fn bad_values_name_line_column_and_value() {
    assert_eq!(
        err("1,2,3\n-1,4,abc\n"),
        "t.csv:2:6: expected a number in column 3, found \"abc\" (the label is read from column 1 by default; if column 3 holds the labels, take the last column as the label)"
    );
    assert_eq!(
        err("y,a,b\n1,2,abc\n"),
        "t.csv:2:5: expected a number in column 3 (\"b\"), found \"abc\" (the label is read from column 1 by default; if column 3 holds the labels, take the column named \"b\" as the label)"
    );
    assert_eq!(
        err("1,2\n1,NaN\n"),
        "t.csv:2:3: expected a finite number in column 2, found \"NaN\""
    );
    assert_eq!(
        err("1,2\n1, -Infinity\n"),
        "t.csv:2:4: expected a finite number in column 2, found \"-Infinity\""
    );
    assert_eq!(
        err_with::<f32>("1,2\n1,1e39\n", &opts()),
        "t.csv:2:3: value \"1e39\" in column 2 is too large for f32 (largest finite \
         magnitude 3.4028235e38)"
    );
    let (m, _) = ok("1,1e39\n", &opts());
    assert_eq!(m.values, [1e39]);
    assert_eq!(
        err("1,1e999\n"),
        "t.csv:1:3: value \"1e999\" in column 2 is too large for f64 (largest finite \
         magnitude 1.7976931348623157e308)"
    );
    assert_eq!(
        err("1,,3\n"),
        "t.csv:1:3: empty field in column 2 (expected a number)"
    );
    assert_eq!(
        err("1,2,\n"),
        "t.csv:1:5: empty field in column 3 (expected a number)"
    );
    assert_eq!(err("1,2\n ,3\n"), "t.csv:2:2: empty label in column 1");
}

#[test]
fn files_without_data_rows_are_refused() {
    let none = "t.csv: no data rows: the file is empty or holds only comments and blank lines";
    assert_eq!(err(""), none);
    assert_eq!(err("\n\r\n  \n"), none);
    assert_eq!(err("# a comment\n\n  # another\n"), none);
    assert_eq!(
        err("y,x\n\n"),
        "t.csv: no data rows: the file holds only a header line"
    );
    assert_eq!(
        err("1\n2\n"),
        "t.csv:1:1: no feature columns: found the single field \"1\"; expected the label and \
         at least one feature separated by `,`, `;` or tab"
    );
}

#[test]
fn invalid_utf8_and_long_lines_are_refused() {
    let path = Path::new("t.csv");
    let e = parse::<f64, _>(&b"1,2\n1,\xff\n"[..], path, &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:2:3: invalid UTF-8 (byte 0xff); data files must be UTF-8 text"
    );
    let text = b"1,2\n1,2,3,4,5,6,7,8,9\n";
    let lines = LineReader::with_limit(Text::bytes(&text[..]), path, 16);
    let e = parse_lines::<f64>(lines, path, &opts(), None, Reading::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv:2:17: line is longer than the limit of 16 bytes; is this a text data file?"
    );
    let lines = LineReader::with_limit(Text::bytes(&text[..]), path, 17);
    assert!(
        parse_lines::<f64>(lines, path, &opts(), None, Reading::default())
            .is_err_and(|e| e.to_string().starts_with("t.csv:2:5: expected 2 fields"))
    );
}

#[test]
fn labels_remember_the_line_they_first_appear_on() {
    let raw = parse_str::<f64>("# c\ny,x\n\na,1\na,2\n# c\nb,3\n", &opts()).unwrap();
    let got: Vec<(&str, u64)> = raw
        .table
        .classes()
        .iter()
        .map(|c| (c.text.as_str(), c.first_line))
        .collect();
    assert_eq!(got, vec![("a", 4), ("b", 7)]);
}

#[test]
fn too_many_distinct_labels_are_refused() {
    let mut text = String::new();
    for i in 0..=MAX_DISTINCT_LABELS {
        text.push_str(&format!("{i},1\n"));
    }
    assert_eq!(
        err(&text),
        format!(
            "t.csv:{}:1: more than 65536 distinct label values (this one is \"65536\"); is \
             column 1 really the label?",
            MAX_DISTINCT_LABELS + 1
        )
    );
}

/// A file of many blocks (parsed on all cores) reads as one: every row
/// in order, each label with the line it first appears on and its count
/// over the whole file, and an error in a late block naming its line,
/// column and value.
#[test]
fn files_of_many_blocks_parse_as_one() {
    let rows = 200_000u64;
    let mut text = String::from("label,a,b\n");
    let mut line = 1;
    let mut late_line = 0;
    for i in 0..rows {
        if i % 1000 == 7 {
            text.push_str("# a comment\n\n");
            line += 2;
        }
        line += 1;
        let label = if i == 150_000 {
            late_line = line;
            "late".to_owned()
        } else {
            (i % 2).to_string()
        };
        text.push_str(&format!("{label},{i}.25,{}\n", i * 3));
    }
    assert!(text.len() > 3 << 20, "{}", text.len());
    let raw = parse_str::<f64>(&text, &opts()).unwrap();
    let m = dense(&raw);
    assert_eq!(m.rows, rows as usize);
    for i in [0, 1, 99_999, 150_000, rows - 1] {
        let at = 2 * i as usize;
        assert_eq!(m.values[at..at + 2], [i as f64 + 0.25, (i * 3) as f64]);
    }
    let got: Vec<(&str, u64, u64)> = raw
        .table
        .classes()
        .iter()
        .map(|c| (c.text.as_str(), c.first_line, c.count))
        .collect();
    assert_eq!(
        got,
        [("0", 2, 99_999), ("1", 3, 100_000), ("late", late_line, 1)]
    );
    assert_eq!(labels(&raw)[150_000], "late");

    let bad = text.replacen("180000.25", "18x", 1);
    let bad_line = 1 + 180_001 + 2 * 180;
    assert_eq!(
        err(&bad),
        format!("t.csv:{bad_line}:3: expected a number in column 2 (\"a\"), found \"18x\"")
    );
}

/// The cap on distinct labels holds across blocks, and the refusal
/// names the line where the first label too many appears.
#[test]
fn the_label_cap_holds_across_blocks() {
    let pad = ",1".repeat(20);
    let mut text = String::new();
    for i in 0..=MAX_DISTINCT_LABELS + 10 {
        text.push_str(&format!("{i}{pad}\n"));
    }
    assert!(text.len() > 2 << 20, "{}", text.len());
    assert!(err(&text).starts_with(&format!(
        "t.csv:{}:1: more than 65536 distinct label values (this one is \"65536\")",
        MAX_DISTINCT_LABELS + 1
    )));
}

#[test]
fn memory_is_reserved_once_from_the_size_hint() {
    let text: String = (0..1000)
        .map(|i| format!("{},{i}.5,{}\n", i % 2, i * 3))
        .collect();
    let raw = parse_sized::<f64, _>(
        text.as_bytes(),
        Path::new("t.csv"),
        &opts(),
        Some(text.len() as u64),
    )
    .unwrap();
    let Features::Dense(m) = &raw.features else {
        unreachable!()
    };
    assert_eq!(m.values.len(), 2000);
    assert!(m.values.capacity() <= 2250, "{}", m.values.capacity());
    assert_eq!(m.values[1998..], [999.5, 2997.0]);
    // A wild hint costs nothing lasting.
    let raw = parse_sized::<f64, _>(text.as_bytes(), Path::new("t.csv"), &opts(), Some(u64::MAX))
        .unwrap();
    assert_eq!(raw.features.rows(), 1000);
}

proptest::proptest! {
    #[test]
    fn any_bytes_give_a_result_not_a_panic(
        bytes in proptest::collection::vec(proptest::sample::select(ALPHABET.to_vec()), 0..200),
        header in 0..3u8,
        label in 0..4usize,
    ) {
        let opts = LoadOptions {
            header: [HeaderMode::Auto, HeaderMode::Present, HeaderMode::Absent][header as usize],
            label_column: match label {
                0 => None,
                1 => Some(LabelColumn::Name("a".into())),
                n => Some(LabelColumn::Index(n)),
            },
            ..opts()
        };
        let path = Path::new("t.csv");
        if let Ok(raw) = parse::<f32, _>(&bytes[..], path, &opts) {
            let m = dense(&raw);
            proptest::prop_assert_eq!(m.values.len(), m.rows * m.cols);
            proptest::prop_assert_eq!(raw.class_ids.len(), m.rows);
        }
        let lines = LineReader::with_limit(Text::bytes(&bytes[..]), path, 7);
        let _ = parse_lines::<f64>(lines, path, &opts, Some(bytes.len() as u64), Reading::default());
    }
}

const ALPHABET: &[u8] = b"0123456789,,,;;\t\t  \"\"\n\n\r#.-+eEnaif:xy\xff\xc3\xa9";

#[test]
fn lines_can_be_written_in_a_files_own_layout() {
    use crate::data::matrix::Row;
    let mut out = Vec::new();
    let dense = [1.5f32, -2.0, 0.25];
    for (at, want) in [
        (0, "a;1.5;-2;0.25\n"),
        (1, "1.5;a;-2;0.25\n"),
        (3, "1.5;-2;0.25;a\n"),
    ] {
        out.clear();
        let len = super::csv_line_in(&mut out, "a", Row::Dense(&dense), 3, at, b';');
        assert_eq!(String::from_utf8(out.clone()).unwrap(), want);
        assert_eq!(len, want.len() - 1);
    }
    out.clear();
    super::csv_line_in(&mut out, "x", Row::Sparse(&[1u32], &[7.0f64]), 3, 2, b'\t');
    assert_eq!(String::from_utf8(out.clone()).unwrap(), "0\t7\tx\t0\n");
    out.clear();
    super::csv_header(&mut out, &["a, b".to_owned(), "y".to_owned()], b',').unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "\"a, b\",y\n");
}

#[test]
fn numbered_column_names_after_a_text_label_are_a_header() {
    // pandas writes a frame built from a matrix with columns 0, 1, 2, ...
    for text in [
        "y,0,1,2\n1,5,6,7\n",
        "class,0,1,2,3\n1,5,6,7,8\n",
        ",y,0,1,2\n",
    ] {
        let opts = if text.starts_with(',') {
            LoadOptions {
                label_column: Some(LabelColumn::Index(2)),
                ..opts()
            }
        } else {
            opts()
        };
        let text = if text.starts_with(',') {
            ",y,0,1,2\n0,1,5,6,7\n"
        } else {
            text
        };
        let raw = parse_str::<f64>(text, &opts).unwrap();
        assert_eq!(raw.csv.as_ref().unwrap().header_line, Some(1), "{text}");
        assert_eq!(raw.class_ids.len(), 1, "{text}");
    }
    // Too few numbers, numbers out of sequence, or a numeric label: data.
    for text in ["cat,0,1\n", "y,0,2,3\n", "x,1,2,3,4\n", "5,0,1,2\n"] {
        let raw = parse_str::<f64>(text, &opts()).unwrap();
        assert_eq!(raw.csv.as_ref().unwrap().header_line, None, "{text}");
        assert_eq!(raw.class_ids.len(), 1, "{text}");
    }
}

#[test]
fn a_field_with_another_delimiter_or_a_decimal_comma_says_what_to_pass() {
    // European CSV: `;` between fields, `,` in numbers. The tie goes to
    // `,`, and the message says to pass `--delimiter ';'`, not --header.
    let e = err("1;0,5;1,0\n0;1,5;2,0\n");
    assert_eq!(
        e,
        "t.csv:1:5: expected a number in column 2, found \"5;1\" (the delimiter was detected \
         as `,` from line 1; if fields are separated by `;`, set the delimiter to ';')"
    );
    let semicolon = LoadOptions {
        delimiter: Some(b';'),
        header: HeaderMode::Absent,
        ..opts()
    };
    assert_eq!(
        err_with::<f64>("1;0,5;1,0\n", &semicolon),
        "t.csv:1:3: expected a number in column 2, found \"0,5\" (a decimal comma: numbers \
         are read with a decimal point, as in \"0.5\")"
    );
    let e = err("1,2\t3,4\n");
    assert!(e.ends_with("set the delimiter to tab)"), "{e}");
}

#[test]
fn a_first_data_line_is_never_written_as_a_header() {
    // Read with --no-header, `y,0,1,2` is a row; written back without a
    // header it must still read as one.
    let absent = LoadOptions {
        header: HeaderMode::Absent,
        ..opts()
    };
    let raw = parse_str::<f32>("y,0,1,2\nz,1.5,-1,0\n", &absent).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.csv");
    let mut raw = raw;
    raw.csv = None;
    crate::data::write::write_raw(&path, &raw, crate::data::write::OutputFormat::Csv).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, "y,0.0,1.0,2.0\nz,1.5,-1,0\n");
    let back = parse_str::<f32>(&text, &opts()).unwrap();
    assert_eq!(back.features, raw.features);
    assert_eq!(back.csv.unwrap().header_line, None);
    // Other first lines are left as they are.
    let mut line = b"y,0,2,3\n".to_vec();
    super::first_line_as_data(&mut line, 0, b',', 0);
    assert_eq!(line, b"y,0,2,3\n");
}

#[test]
fn a_label_starting_with_u_feff_survives_a_round_trip_on_the_first_line() {
    // Bare, it would be taken for a byte-order mark and stripped.
    let label = "\u{feff}a";
    let mut text = csv_label(label).unwrap();
    assert!(text.starts_with('"'), "{text:?}");
    text.push_str(",1\nb,2\n");
    let o = LoadOptions {
        header: HeaderMode::Absent,
        ..opts()
    };
    let raw = parse_str::<f64>(&text, &o).unwrap();
    assert_eq!(labels(&raw), [label, "b"]);
}

/// `--ignore-columns`: the columns named (by header name, number or from
/// the end) are skipped unread, whatever they hold; the rest read as if
/// they were not there, on the fast path, line by line and in tiny blocks
/// alike.
#[test]
fn ignored_columns_are_left_out_unread() {
    let text = "id,y,a,date,b\n7,1,1.5,2020-01-01,2\n8,-1,-1,\"3 May\",0.5\nx9,1,2,,3\n";
    let plain = "y,a,b\n1,1.5,2\n-1,-1,0.5\n1,2,3\n";
    let with = |ignore: &[LabelColumn]| LoadOptions {
        label_column: Some(LabelColumn::Name("y".into())),
        ignore_columns: ignore.to_vec(),
        ..opts()
    };
    let want = ok(plain, &with(&[]));
    let path = Path::new("t.csv");
    for ignore in [
        vec![
            LabelColumn::Name("id".into()),
            LabelColumn::Name("date".into()),
        ],
        vec![LabelColumn::Index(1), LabelColumn::FromEnd(2)],
    ] {
        let o = with(&ignore);
        assert_eq!(ok(text, &o), want);
        let tiny = Reading {
            fast: true,
            block_bytes: 5,
        };
        for reading in [Reading::line_by_line(), tiny] {
            let raw = parse_with::<f64, _>(text.as_bytes(), path, &o, None, reading).unwrap();
            assert_eq!(dense(&raw), want.0);
        }
        let info = parse_str::<f64>(text, &o).unwrap().csv.unwrap();
        assert_eq!(info.ignored, [1, 4]);
        assert_eq!(info.feature_names(), Some(vec!["a".into(), "b".into()]));
        assert_eq!(
            info.kept(),
            (vec!["y".into(), "a".into(), "b".into()], Some(1))
        );
        assert_eq!(info.ignored_names(), ["\"id\"", "\"date\""]);
    }
    // A name no column has is refused, listing the header; so is the label.
    assert_eq!(
        err_with::<f64>(text, &with(&[LabelColumn::Name("ts".into())])),
        "t.csv:1:1: --ignore-columns: no column named \"ts\" in the header; its columns are \
         \"id\", \"y\", \"a\", \"date\", \"b\""
    );
    assert_eq!(
        err_with::<f64>(text, &with(&[LabelColumn::Index(2)])),
        "t.csv:1:4: --ignore-columns names column 2 (\"y\"), the label column; the label is \
         never a feature, so leave it out of --ignore-columns"
    );
    // Column 1 is the label only by default: the hint names --label-column.
    let unnamed_label = LoadOptions {
        ignore_columns: vec![LabelColumn::Name("id".into())],
        ..opts()
    };
    assert_eq!(
        err_with::<f64>(text, &unnamed_label),
        "t.csv:1:1: --ignore-columns names column 1 (\"id\"), which is the label column when \
         --label-column is not given; name the label with --label-column NAME (or N), or leave \
         column 1 out of --ignore-columns"
    );
    assert!(
        err_with::<f64>(text, &with(&[LabelColumn::Index(9)]))
            .contains("--ignore-columns 9: out of range: the file has 5 columns")
    );
    let all = [1, 3, 4, 5].map(LabelColumn::Index);
    assert!(err_with::<f64>(text, &with(&all)).contains("no feature columns left"));
    // A name the data lacks is no error when the list is the model's.
    let from_model = LoadOptions {
        ignore_columns_from: Some("m.json".into()),
        ..with(&[
            LabelColumn::Name("ts".into()),
            LabelColumn::Name("id".into()),
            LabelColumn::Name("date".into()),
        ])
    };
    let raw = parse_str::<f64>(text, &from_model).unwrap();
    assert_eq!(raw.csv.unwrap().ignored, [1, 4]);
}

/// A pandas index column is refused with the fix, and that fix reads the
/// file: the unnamed first column left out.
#[test]
fn ignoring_a_pandas_index_reads_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.csv");
    std::fs::write(&path, ",y,a\n0,1,2\n1,-1,3\n2,1,4\n").unwrap();
    let o = LoadOptions {
        label_column: Some(LabelColumn::Name("y".into())),
        ..opts()
    };
    let e = crate::data::load_raw::<f64>(&path, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("leave it out with --ignore-columns 1"), "{e}");
    let o = LoadOptions {
        ignore_columns: vec![LabelColumn::Index(1)],
        ..o
    };
    let raw = crate::data::load_raw::<f64>(&path, &o).unwrap();
    assert_eq!(dense(&raw), matrix(3, 1, &[2., 3., 4.]));
    assert_eq!(raw.csv.unwrap().ignored_names(), ["column 1"]);
}
