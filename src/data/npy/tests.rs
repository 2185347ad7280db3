//! `.npy` files built byte by byte (format version 1): every dtype the
//! reader takes, both byte orders, both memory orders, and every refusal.

use std::path::{Path, PathBuf};

use super::*;
use crate::data::{LoadOptions, load_raw};

/// A version-1 `.npy` file: `descr` such as `<f4`, then `data` as given.
fn npy(descr: &str, fortran: bool, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

fn le32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn be64(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_be_bytes()).collect()
}

fn write(dir: &Path, name: &str, bytes: Vec<u8>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn labels_of<F>(raw: &RawData<F>) -> Vec<String> {
    raw.class_ids
        .iter()
        .map(|&c| raw.table.classes()[c as usize].text.clone())
        .collect()
}

fn dense<F: Real>(raw: &RawData<F>) -> Vec<f64> {
    let Features::Dense(m) = &raw.features else {
        panic!("npy data is dense")
    };
    m.values.iter().map(|v| v.to_f64()).collect()
}

#[test]
fn little_endian_c_order_with_the_label_first() {
    let dir = tempfile::tempdir().unwrap();
    // Rows (label, x1, x2): (1, 0.5, 2), (-1, 3, -4).
    let p = write(
        dir.path(),
        "a.npy",
        npy(
            "<f4",
            false,
            &[2, 3],
            &le32(&[1.0, 0.5, 2.0, -1.0, 3.0, -4.0]),
        ),
    );
    // Without --labels or --label-column an array's columns are features
    // only: taking the first as the label (as before) was a silent guess.
    let e = load_raw::<f64>(&p, &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("holds no labels unless told where they are") && e.contains("--labels FILE.npy"),
        "{e}"
    );
    let first = LoadOptions {
        label_column: Some(LabelColumn::Index(1)),
        ..Default::default()
    };
    let raw = load_raw::<f64>(&p, &first).unwrap();
    assert_eq!(raw.format, Format::Npy);
    assert_eq!((raw.features.rows(), raw.features.cols()), (2, 2));
    assert_eq!(dense(&raw), [0.5, 2.0, 3.0, -4.0]);
    assert_eq!(labels_of(&raw), ["1", "-1"]);
    // Another column as the label, or none at all.
    let last = LoadOptions {
        label_column: Some(LabelColumn::Index(3)),
        ..Default::default()
    };
    let raw = load_raw::<f32>(&p, &last).unwrap();
    assert_eq!(
        (dense(&raw), labels_of(&raw)),
        (vec![1.0, 0.5, -1.0, 3.0], vec!["2".into(), "-4".into()])
    );
    let none = LoadOptions {
        unlabeled: true,
        ..Default::default()
    };
    let raw = load_raw::<f32>(&p, &none).unwrap();
    assert_eq!(raw.features.cols(), 3);
    assert_eq!(labels_of(&raw), [NO_LABEL; 2]);
}

#[test]
fn big_endian_fortran_order_with_a_labels_file() {
    let dir = tempfile::tempdir().unwrap();
    // The 3 x 2 array [[1, 2], [3, 4], [5, 6]] stored column by column.
    let x = write(
        dir.path(),
        "x.npy",
        npy(">f8", true, &[3, 2], &be64(&[1.0, 3.0, 5.0, 2.0, 4.0, 6.0])),
    );
    let cases: Vec<(&str, Vec<u8>, [&str; 3])> = vec![
        (
            "<i8",
            [7i64, -2, 7].iter().flat_map(|v| v.to_le_bytes()).collect(),
            ["7", "-2", "7"],
        ),
        (
            ">u2",
            [1u16, 0, 1].iter().flat_map(|v| v.to_be_bytes()).collect(),
            ["1", "0", "1"],
        ),
        ("|b1", vec![1, 0, 0], ["1", "0", "0"]),
        ("<f4", le32(&[1.0, 0.5, -1.0]), ["1", "0.5", "-1"]),
        ("|i1", vec![3, 3, 255], ["3", "3", "-1"]),
    ];
    for (descr, bytes, want) in cases {
        let y = write(dir.path(), "y.npy", npy(descr, false, &[3], &bytes));
        let opts = LoadOptions {
            labels: Some(y.clone()),
            ..Default::default()
        };
        let raw = load_raw::<f32>(&x, &opts).unwrap();
        assert_eq!(dense(&raw), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "{descr}");
        assert_eq!(labels_of(&raw), want, "{descr}");
    }
    // A (rows, 1) column of labels works too.
    let y = write(dir.path(), "y2.npy", npy("<f8", false, &[3, 1], &[0u8; 24]));
    let opts = LoadOptions {
        labels: Some(y),
        ..Default::default()
    };
    assert_eq!(labels_of(&load_raw::<f64>(&x, &opts).unwrap()), ["0"; 3]);
}

#[test]
fn f8_values_round_to_nearest_f4() {
    let dir = tempfile::tempdir().unwrap();
    let v = 0.1f64;
    let p = write(
        dir.path(),
        "a.npy",
        npy(
            "<f8",
            false,
            &[1, 2],
            &[1.0f64, v]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect::<Vec<_>>(),
        ),
    );
    let first = LoadOptions {
        label_column: Some(LabelColumn::Index(1)),
        ..Default::default()
    };
    let raw = load_raw::<f32>(&p, &first).unwrap();
    assert_eq!(dense(&raw), [v as f32 as f64]);
}

#[test]
fn every_refusal_names_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let err = |p: &Path, opts: &LoadOptions| load_raw::<f32>(p, opts).unwrap_err().to_string();
    let d = LoadOptions::default();
    let p = write(
        dir.path(),
        "3d.npy",
        npy("<f4", false, &[1, 1, 2], &le32(&[1.0, 2.0])),
    );
    assert!(err(&p, &d).ends_with("3d.npy: the array has 3 dimensions (shape [1, 1, 2]); the data must be 2-D, shape (rows, columns)"), "{}", err(&p, &d));
    let p = write(dir.path(), "i.npy", npy("<i4", false, &[1, 2], &[0u8; 8]));
    assert!(
        err(&p, &d).contains("the array has dtype <i4; the features must be floats (f4 or f8)"),
        "{}",
        err(&p, &d)
    );
    let p = write(
        dir.path(),
        "short.npy",
        npy("<f4", false, &[2, 2], &le32(&[1.0, 2.0, 3.0])),
    );
    assert!(err(&p, &d).contains("is truncated or padded: its header says [2, 2] values of 4 bytes (16 bytes), but the file holds 12 bytes"), "{}", err(&p, &d));
    let p = write(
        dir.path(),
        "nan.npy",
        npy("<f4", false, &[2, 2], &le32(&[1.0, 2.0, 3.0, f32::NAN])),
    );
    assert!(
        err(&p, &d).ends_with("nan.npy: row 2, column 2: NaN is not a finite number"),
        "{}",
        err(&p, &d)
    );
    let p = write(
        dir.path(),
        "one.npy",
        npy("<f4", false, &[2, 1], &le32(&[1.0, 2.0])),
    );
    let first = LoadOptions {
        label_column: Some(LabelColumn::Index(1)),
        ..Default::default()
    };
    assert!(err(&p, &first).contains("one column, which would be the label"));
    let x = write(
        dir.path(),
        "x.npy",
        npy("<f4", false, &[2, 2], &le32(&[1.0, 2.0, 3.0, 4.0])),
    );
    let y = write(dir.path(), "y.npy", npy("<i1", false, &[3], &[1, 2, 3]));
    let opts = LoadOptions {
        labels: Some(y.clone()),
        ..Default::default()
    };
    assert!(
        err(&x, &opts).ends_with(&format!(
            "x.npy: has 2 rows but the labels file {} has 3 labels",
            y.display()
        )),
        "{}",
        err(&x, &opts)
    );
    let y = write(
        dir.path(),
        "y2.npy",
        npy("<i1", false, &[2, 2], &[1, 2, 3, 4]),
    );
    let opts = LoadOptions {
        labels: Some(y),
        ..Default::default()
    };
    assert!(err(&x, &opts).contains("the labels file has shape [2, 2]; labels need one per row"));
    let named = LoadOptions {
        label_column: Some(LabelColumn::Name("y".into())),
        ..Default::default()
    };
    assert!(err(&x, &named).contains("a .npy array has no column names"));
    let mut bad = npy("<f4", false, &[1, 1], &le32(&[1.0]));
    bad[6] = 9;
    let p = write(dir.path(), "v9.npy", bad);
    assert!(
        err(&p, &d).contains("has .npy format version 9"),
        "{}",
        err(&p, &d)
    );
    let p = write(
        dir.path(),
        "garbage.npy",
        b"\x93NUMPY\x01\x00\x04\x00{abc".to_vec(),
    );
    assert!(
        err(&p, &d).contains("invalid .npy header"),
        "{}",
        err(&p, &d)
    );
    assert!(!is_npy(b"\x93NUMP"));

    // An f8 value beyond f32's range: refused in f32 (it became infinity),
    // read in f64.
    let big = write(
        dir.path(),
        "big.npy",
        npy(
            "<f8",
            false,
            &[1, 2],
            &[1e300f64, 2.0]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect::<Vec<_>>(),
        ),
    );
    let unlabeled = LoadOptions {
        unlabeled: true,
        ..Default::default()
    };
    let e = load_raw::<f32>(&big, &unlabeled).unwrap_err().to_string();
    assert!(
        e.ends_with("big.npy: row 1, column 1: 1e300 is too large for f32 (largest finite magnitude 3.4028235e38); train with --precision f64"),
        "{e}"
    );
    assert_eq!(
        dense(&load_raw::<f64>(&big, &unlabeled).unwrap()),
        [1e300, 2.0]
    );
}
