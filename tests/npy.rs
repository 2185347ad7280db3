//! `.npy` input end to end: the same rows as a CSV file train the same
//! model bit for bit, in either byte order and memory order, with the
//! labels in a column or in a second file; predict and eval read it too.

use std::path::Path;

use crate::common::{cmd, data_file, essence};

/// A version-1 `.npy` file of f8 values in the given byte and memory order.
fn npy_f8(path: &Path, rows: usize, cols: usize, values: &[f64], big: bool, fortran: bool) {
    let mut header = format!(
        "{{'descr': '{}f8', 'fortran_order': {}, 'shape': ({rows}, {cols}), }}",
        if big { ">" } else { "<" },
        if fortran { "True" } else { "False" }
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    let at = |k: usize| {
        if fortran {
            values[(k % rows) * cols + k / rows]
        } else {
            values[k]
        }
    };
    for k in 0..rows * cols {
        let v = at(k);
        out.extend(if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }
    std::fs::write(path, out).unwrap();
}

fn npy_labels(path: &Path, labels: &[i8]) {
    let mut header = format!(
        "{{'descr': '|i1', 'fortran_order': False, 'shape': ({},), }}",
        labels.len()
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(labels.iter().map(|&v| v as u8));
    std::fs::write(path, out).unwrap();
}

#[test]
fn npy_files_train_the_csv_files_model() {
    let dir = tempfile::tempdir().unwrap();
    let csv = data_file("breast_cancer.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let (n, cols) = (rows.len(), rows[0].len());
    let all: Vec<f64> = rows.iter().flatten().copied().collect();
    let features: Vec<f64> = rows.iter().flat_map(|r| r[1..].to_vec()).collect();
    let labels: Vec<i8> = rows.iter().map(|r| r[0] as i8).collect();
    npy_f8(&dir.path().join("all.npy"), n, cols, &all, false, false);
    npy_f8(
        &dir.path().join("x.npy"),
        n,
        cols - 1,
        &features,
        true,
        true,
    );
    npy_labels(&dir.path().join("y.npy"), &labels);
    let train = |args: &[&str], out: &str| {
        let status = cmd(dir.path())
            .args([
                "train",
                "--precision",
                "f64",
                "--max-epochs",
                "6",
                "-o",
                out,
            ])
            .args(args)
            .output()
            .unwrap()
            .status;
        assert_eq!(status.code(), Some(0), "{args:?}");
        essence(&dir.path().join(out))
    };
    let want = train(&[csv.to_str().unwrap()], "csv.json");
    assert_eq!(train(&["all.npy", "--label-column", "1"], "all.json"), want);
    // Without --labels or --label-column the array is features only: the
    // first column is no longer taken as the label without a word.
    let out = cmd(dir.path())
        .args(["train", "all.npy", "-o", "guess.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--labels FILE.npy"), "{err}");
    assert!(!dir.path().join("guess.json").exists());
    assert_eq!(train(&["x.npy", "--labels", "y.npy"], "xy.json"), want);
    // predict and eval read .npy as well, --unlabeled or with the labels.
    let predict = |args: &[&str]| {
        let out = cmd(dir.path()).arg("predict").args(args).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let by_csv = predict(&["csv.json", csv.to_str().unwrap()]);
    assert_eq!(predict(&["csv.json", "x.npy", "--unlabeled"]), by_csv);
    assert_eq!(
        predict(&["csv.json", "all.npy", "--label-column", "1"]),
        by_csv
    );
    let eval = cmd(dir.path())
        .args(["eval", "csv.json", "x.npy", "--labels", "y.npy", "--json"])
        .output()
        .unwrap();
    let eval: serde_json::Value = serde_json::from_slice(&eval.stdout).unwrap();
    assert_eq!(eval["format"], "npy");
    assert_eq!(eval["rows"], 569);
    // Errors name the file and the problem, and exit 1.
    npy_labels(&dir.path().join("short.npy"), &labels[..10]);
    cmd(dir.path())
        .args(["train", "x.npy", "--labels", "short.npy"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "x.npy: has 569 rows but the labels file short.npy has 10 labels",
        ));
    cmd(dir.path())
        .args(["online", "x.npy"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("cannot be read as a stream"));
}

#[test]
fn writing_npy_is_refused_as_such() {
    let dir = tempfile::tempdir().unwrap();
    cmd(dir.path())
        .args([
            "convert",
            &crate::common::data_str("heart_scale.svm"),
            "x.npy",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("writing .npy is not supported"));
}

#[test]
fn an_array_of_features_is_read_into_its_final_storage_alone() {
    // 2,000 x 50 f8 values (800 KB) read in f32 (400 KB): no allocation of
    // the whole array in f64 on the way, so a limit of 600 KB for any one
    // allocation is enough (reading it through an f64 copy needed 800 KB,
    // and peaked at 3x the array in all).
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols) = (2000, 50);
    let values: Vec<f64> = (0..rows * cols)
        .map(|k| (k % 97) as f64 * 0.25 - 3.0)
        .collect();
    npy_f8(&dir.path().join("x.npy"), rows, cols, &values, false, false);
    let labels: Vec<i8> = (0..rows).map(|i| if i % 3 == 0 { 1 } else { -1 }).collect();
    npy_labels(&dir.path().join("y.npy"), &labels);
    cmd(dir.path())
        .env("PERCEPTRON_MEMORY_LIMIT", "600000")
        .args(["info", "x.npy", "--labels", "y.npy", "--json"])
        .assert()
        .success()
        .stdout(predicates::str::contains("\"rows\":2000"));
}

#[test]
fn fortran_order_and_a_label_column_are_read_into_the_final_storage_alone() {
    // 2,000 x 51 f8 values (816 KB), the label in the middle column, read
    // in f32 (400 KB of features): under a 600 KB limit on any one
    // allocation, so no f64 copy of the whole array is made on the way
    // (reading through one needed 816 KB, and peaked at 3x the array). In
    // either memory order it reads to the same data.
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols, label) = (2000, 51, 20);
    let values: Vec<f64> = (0..rows * cols)
        .map(|k| {
            if k % cols == label {
                if (k / cols) % 3 == 0 { 1.0 } else { -1.0 }
            } else {
                (k % 97) as f64 * 0.25 - 3.0
            }
        })
        .collect();
    npy_f8(&dir.path().join("c.npy"), rows, cols, &values, false, false);
    npy_f8(&dir.path().join("f.npy"), rows, cols, &values, false, true);
    let info = |name: &str| {
        let out = cmd(dir.path())
            .env("PERCEPTRON_MEMORY_LIMIT", "600000")
            .args(["info", name, "--label-column", "21", "--json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["data"] = serde_json::Value::Null;
        v
    };
    let c = info("c.npy");
    assert_eq!(
        (c["rows"].as_u64(), c["features"].as_u64()),
        (Some(2000), Some(50))
    );
    assert_eq!(info("f.npy"), c);
    // The same model bit for bit.
    let train = |name: &str| {
        let out = format!("{name}.json");
        cmd(dir.path())
            .args([
                "train",
                name,
                "--label-column",
                "21",
                "--max-epochs",
                "3",
                "-o",
                &out,
            ])
            .output()
            .unwrap();
        essence(&dir.path().join(out))
    };
    assert_eq!(train("f.npy"), train("c.npy"));
}
