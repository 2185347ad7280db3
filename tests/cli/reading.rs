//! `info` and how every command reads data: headers, gzip, labels, singular counts.

use predicates::prelude::*;
use serde_json::Value;

use super::*;
use crate::common::{cmd, data_file, data_str, demo_cmd};
use assert_cmd::prelude::OutputAssertExt;

#[test]
fn info_describes_a_dense_file_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let out = cmd(dir.path())
        .args(["info", &data_str("iris_setosa.csv"), "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
    assert_eq!(v["format"], "csv");
    assert_eq!(
        (v["rows"].as_u64(), v["features"].as_u64()),
        (Some(150), Some(4))
    );
    assert_eq!(
        (v["nonzeros"].as_u64(), v["density"].as_f64()),
        (Some(600), Some(1.0))
    );
    assert_eq!(
        (v["storage"].as_str(), v["precision"].as_str()),
        (Some("dense"), Some("f32"))
    );
    assert_eq!(v["storage_bytes"], 150 * 4 * 4);
    assert_eq!(
        v["labels"],
        serde_json::json!([
            {"label": "1", "rows": 50, "first_line": 1},
            {"label": "-1", "rows": 100, "first_line": 51}
        ])
    );
    assert_eq!(v["mapping"]["positive_label"], "1");
    assert_eq!(v["mapping"]["negative_rows"], 100);
    assert_eq!(
        (v["min_value"].as_f64(), v["max_value"].as_f64()),
        (Some(0.1), Some(7.9))
    );
    // D from the file, computed here in f64 from the f32 values.
    let rows = read_csv(&data_file("iris_setosa.csv"));
    let max_sq = rows
        .iter()
        .map(|(_, x)| {
            x.iter()
                .map(|&(_, v)| (v as f32 as f64).powi(2))
                .sum::<f64>()
        })
        .fold(0.0f64, f64::max);
    let with = v["radius_with_bias"].as_f64().unwrap();
    let without = v["radius_without_bias"].as_f64().unwrap();
    assert!((with - (max_sq + 1.0).sqrt()).abs() < 1e-12, "{with}");
    assert!((without - max_sq.sqrt()).abs() < 1e-12, "{without}");

    let out = cmd(dir.path())
        .args(["info", &data_str("iris_setosa.csv")])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    assert!(
        text.contains("150 rows x 4 features; 600 non-zeros (density 100.00%)"),
        "{text}"
    );
    assert!(text.contains("with the bias feature 1 appended"), "{text}");
    assert!(text.contains("dense f32, 2.3 KiB in memory"), "{text}");
}

#[test]
fn info_describes_sparse_files_and_any_number_of_labels() {
    let dir = tempfile::tempdir().unwrap();
    let out = cmd(dir.path())
        .args([
            "info",
            &data_str("heart_scale.svm"),
            "--json",
            "--precision",
            "f64",
        ])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
    let rows = read_svm(&data_file("heart_scale.svm"));
    let nnz: usize = rows
        .iter()
        .map(|r| r.1.iter().filter(|e| e.1 != 0.0).count())
        .sum();
    let stored: usize = rows.iter().map(|r| r.1.len()).sum();
    assert_eq!(v["format"], "libsvm");
    assert_eq!(
        (v["rows"].as_u64(), v["features"].as_u64()),
        (Some(270), Some(13))
    );
    assert_eq!(v["nonzeros"], nnz);
    assert_eq!(v["density"].as_f64().unwrap(), nnz as f64 / (270.0 * 13.0));
    assert_eq!(v["storage"], "sparse");
    assert_eq!(v["storage_bytes"], stored * (8 + 4) + 271 * 8);
    assert_eq!(
        (v["min_value"].as_f64(), v["max_value"].as_f64()),
        (Some(-1.0), Some(1.0))
    );
    assert_eq!(v["labels"][0]["label"], "+1");
    assert_eq!(v["labels"][0]["rows"], 120);

    std::fs::write(dir.path().join("three.csv"), "a,1\nb,2\nc,3\nb,-4\n").unwrap();
    let out = cmd(dir.path())
        .args(["info", "three.csv", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
    let labels: Vec<(&str, u64)> = v["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["label"].as_str().unwrap(), l["rows"].as_u64().unwrap()))
        .collect();
    assert_eq!(labels, [("a", 1), ("b", 2), ("c", 1)]);
    assert!(v["mapping"].is_null());
    assert!(v["mapping_error"].as_str().unwrap().contains("--positive"));
    assert_eq!(
        (v["min_value"].as_f64(), v["max_value"].as_f64()),
        (Some(-4.0), Some(3.0))
    );
    let out = cmd(dir.path())
        .args(["info", "three.csv", "--positive", "b"])
        .assert()
        .success();
    assert!(stdout_of(out.get_output()).contains("+1 = \"b\" (2 rows), -1 = the rest (2 rows)"));
}

#[test]
fn a_skipped_header_line_is_reported_by_train_and_info() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("h.csv"),
        "# made by hand\ny,a,b\n1,2,3\n-1,4,5\n",
    )
    .unwrap();
    let out = cmd(dir.path())
        .args(["train", "h.csv", "-o", "h.json"])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    assert!(
        text.starts_with(
            "data        h.csv (CSV, header on line 2, 2 rows x 2 features, dense, f32, with bias)\n"
        ),
        "{text}"
    );
    let out = cmd(dir.path())
        .args(["train", "h.csv", "-o", "h.json", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
    assert_eq!(v["header_line"], 2);
    let out = cmd(dir.path()).args(["info", "h.csv"]).assert().success();
    assert!(
        stdout_of(out.get_output()).starts_with("data        h.csv (CSV, header on line 2)\n"),
        "{}",
        stdout_of(out.get_output())
    );
    let out = cmd(dir.path())
        .args(["info", "h.csv", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
    assert_eq!(
        (v["header_line"].as_u64(), v["rows"].as_u64()),
        (Some(2), Some(2))
    );
    // Without a header: nothing said, null in JSON.
    let out = cmd(dir.path())
        .args(["info", &data_str("iris_setosa.csv"), "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
    assert!(v["header_line"].is_null());
    let out = cmd(dir.path())
        .args(["train", &data_str("iris_setosa.csv"), "-o", "i.json"])
        .assert()
        .success();
    assert!(!stdout_of(out.get_output()).contains("header"));
}

#[test]
fn gzip_data_is_read_whatever_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let gz = std::fs::read(data_file("iris_setosa.csv.gz")).unwrap();
    assert_eq!(gz[..2], [0x1f, 0x8b]);
    // Named as plain CSV, and with no extension at all (format from the content).
    for name in ["iris.csv", "iris"] {
        std::fs::write(dir.path().join(name), &gz).unwrap();
        let out = cmd(dir.path())
            .args(["info", name, "--json"])
            .assert()
            .success();
        let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
        assert_eq!(
            (
                v["format"].as_str(),
                v["rows"].as_u64(),
                v["features"].as_u64()
            ),
            (Some("csv"), Some(150), Some(4)),
            "{name}"
        );
    }
    let plain = cmd(dir.path())
        .args([
            "train",
            &data_str("iris_setosa.csv"),
            "-o",
            "a.json",
            "--json",
        ])
        .assert()
        .success();
    let packed = cmd(dir.path())
        .args(["train", "iris.csv", "-o", "b.json", "--json"])
        .assert()
        .success();
    let epochs = |o: &std::process::Output| {
        let v: Value = serde_json::from_str(&stdout_of(o)).unwrap();
        (v["epochs"].clone(), v["mistakes_per_epoch"].clone())
    };
    assert_eq!(epochs(plain.get_output()), epochs(packed.get_output()));
    // A stream without a name, as from `<(gzip -c f)`, on the command line.
    #[cfg(unix)]
    {
        let status = std::process::Command::new("sh")
            .current_dir(dir.path())
            .arg("-c")
            .arg(format!(
                "cat iris.csv | {} info /dev/stdin --json > out.json",
                assert_cmd::cargo::cargo_bin!("perceptron").display()
            ))
            .status()
            .unwrap();
        assert!(status.success());
        let v: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("out.json")).unwrap()).unwrap();
        assert_eq!(v["rows"], 150);
    }
}

#[test]
fn one_row_one_epoch_one_mistake_are_singular() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.csv"), "1,1\n-1,-3\n").unwrap();
    let out = cmd(dir.path())
        .args(["train", "two.csv", "--max-epochs", "1", "-o", "two.json"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains(
            "not separated within 1 epoch (the last epoch made 1 mistake); the last model",
        ));
    let text = stdout_of(out.get_output());
    for want in [
        "data        two.csv (CSV, 2 rows x 1 feature, dense, f32, with bias)\n",
        "labels      +1 = \"1\" (1 row), -1 = \"-1\" (1 row)\n",
        "epochs      1 of at most 1: NOT converged: the data was not separated within 1 epoch \
         (the last epoch made 1 mistake)\n",
        "mistakes    M = 1 in total; per epoch: 1\n",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
    let out = cmd(dir.path()).args(["info", "two.csv"]).assert().success();
    let text = stdout_of(out.get_output());
    assert!(
        text.contains("shape       2 rows x 1 feature; 2 non-zeros"),
        "{text}"
    );
    assert!(
        text.contains("2 distinct: \"1\" (1 row), \"-1\" (1 row)"),
        "{text}"
    );
    std::fs::write(dir.path().join("one.csv"), "1,5\n").unwrap();
    let out = cmd(dir.path())
        .args(["eval", "two.json", "one.csv"])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    assert!(text.contains("one.csv (CSV, 1 row x 1 feature)"), "{text}");
    assert!(text.contains("(1 of 1 row correct)"), "{text}");
}

#[test]
fn negative_labels_follow_positive_without_an_equals_sign() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "-1,0,0\n0,1,0\n1,5,5\n-1,0,1\n").unwrap();
    cmd(dir.path())
        .args([
            "train",
            "t.csv",
            "--positive",
            "-1",
            "-o",
            "m.json",
            "--json",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"positive_label\":\"-1\""));
    cmd(dir.path())
        .args(["info", "t.csv", "--positive", "-1"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "+1 = \"-1\" (2 rows), -1 = the rest (2 rows)",
        ));
    cmd(dir.path())
        .args([
            "online",
            "t.csv",
            "--positive",
            "-1",
            "--quiet",
            "-o",
            "o.json",
        ])
        .assert()
        .success();
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("o.json")).unwrap()).unwrap();
    assert_eq!(v["labels"]["positive"], "-1");
    cmd(dir.path())
        .args(["plot", "bias", "t.csv", "--positive", "-1", "-o", "b.svg"])
        .assert()
        .success();
    // A label that looks like an option is still a value.
    cmd(dir.path())
        .args(["info", "t.csv", "--positive", "--json"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "--positive \"--json\" is not a label in this file",
        ));
}

#[test]
fn format_help_is_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let commands: [&[&str]; 11] = [
        &["train"],
        &["predict"],
        &["eval"],
        &["info"],
        &["bench"],
        &["split"],
        &["convert"],
        &["plot", "margins"],
        &["plot", "boundary"],
        &["plot", "bias"],
        &["plot", "trace"],
    ];
    for c in commands {
        let out = cmd(dir.path()).args(c).arg("--help").assert().success();
        let help = stdout_of(out.get_output());
        assert!(
            help.contains(
                "- binary: The tool's binary format (`.pbin`), written by `perceptron convert`"
            ),
            "{c:?}: {help}"
        );
        assert!(!help.contains("[`"), "{c:?}: {help}");
    }
}

/// `cat x.svm | perceptron train` trains on x.svm, not on the bundled demo
/// data (which it used to, without a word); `info` and `bench` likewise.
/// With nothing piped (stdin /dev/null or a terminal) the demo stays.
#[test]
fn piped_data_is_read_when_no_data_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(data_file("iris_setosa.svm")).unwrap();
    for args in [
        vec!["train", "--json", "-o", "m.json"],
        vec!["info", "--json"],
        vec!["bench", "--backends", "cpu", "--max-epochs", "2", "--json"],
    ] {
        let out = cmd(dir.path())
            .args(&args)
            .write_stdin(text.clone())
            .assert()
            .success();
        let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
        assert_eq!(v["rows"], 150, "{args:?}: {v}");
        assert_eq!(v["data"], "<stdin>", "{args:?}");
        if args[0] == "bench" {
            // The host's ceiling is measured on the data read.
            let pass = &v["host_dot_pass"];
            let (one, all) = (
                pass["one_thread_seconds"].as_f64().unwrap(),
                pass["all_threads_seconds"].as_f64().unwrap(),
            );
            assert!(one > 0.0 && all > 0.0, "{pass}");
            let speedup = pass["speedup"].as_f64().unwrap();
            assert!((speedup - one / all).abs() <= 1e-9 * speedup, "{pass}");
        }
    }
    // Nothing piped: the bundled digits, named as such.
    let out = demo_cmd(dir.path())
        .args(["info", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
    assert_eq!(v["rows"], 365);
    assert!(v["data"].as_str().unwrap().contains("bundled"), "{v}");
    // An empty pipe is not the demo: it says why it read standard input.
    cmd(dir.path())
        .arg("train")
        .write_stdin("")
        .assert()
        .failure()
        .stderr(predicate::str::contains("no DATA was given"));
}

/// `df.to_csv()` writes a first column with no name holding the row
/// numbers: a pandas index. It used to become a feature (or, as the
/// default label column, a label per row) without a word; now it is
/// refused with the fix. A first column that is not the row numbers, or
/// has a name, is read as before.
#[test]
fn a_pandas_index_column_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, header: &str, first: &dyn Fn(usize) -> String| {
        let mut text = format!("{header}\n");
        for i in 0..12 {
            text += &format!("{},{},{},{}\n", first(i), i % 3, (i * 7) % 5, i % 2);
        }
        std::fs::write(dir.path().join(name), text).unwrap();
    };
    write("index.csv", ",x1,x2,target", &|i| i.to_string());
    cmd(dir.path())
        .args(["train", "index.csv", "--label-column", "target", "-o", "m.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "column 1 has no name in the header and holds the row numbers 0, 1, 2, ...: a pandas index",
        ))
        .stderr(predicate::str::contains("to_csv(index=False)"));
    assert!(!dir.path().join("m.json").exists());
    // The index where the label is read by default.
    cmd(dir.path())
        .args(["train", "index.csv", "-o", "m.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "column 1, the label column by default",
        ))
        .stderr(predicate::str::contains("--label-column NAME"));
    // Not row numbers, or a name: ordinary data.
    write("ids.csv", ",x1,x2,target", &|i| (i + 1).to_string());
    write("named.csv", "id,x1,x2,target", &|i| i.to_string());
    for name in ["ids.csv", "named.csv"] {
        let code = cmd(dir.path())
            .args(["train", name, "--label-column", "target", "-o", "m.json"])
            .output()
            .unwrap()
            .status
            .code();
        assert!(matches!(code, Some(0 | 3)), "{name}: {code:?}");
    }
}

/// Text in a feature column, with the label read from column 1 by default,
/// suggests that column as the label (by its header name); `last` and
/// negative positions count from the end (neither was understood before).
#[test]
fn a_text_column_suggests_itself_as_the_label() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("named.csv"),
        "a,b,target\n1.5,2,malignant\n0.5,3,benign\n",
    )
    .unwrap();
    std::fs::write(d.join("plain.csv"), "1.5,2,malignant\n0.5,3,benign\n").unwrap();
    cmd(d)
        .args(["train", "named.csv", "-o", "m.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "if column 3 holds the labels, pass --label-column target)",
        ));
    for column in ["last", "-1", "target"] {
        let file = if column == "target" {
            "named.csv"
        } else {
            "plain.csv"
        };
        let out = cmd(d)
            .args([
                "train",
                file,
                "--label-column",
                column,
                "--json",
                "-o",
                "m.json",
            ])
            .assert()
            .success();
        let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
        assert_eq!(v["positive_label"], "malignant", "{column}: {v}");
        assert_eq!(v["features"], 2, "{column}");
    }
    cmd(d)
        .args(["train", "plain.csv", "--label-column", "-4", "-o", "m.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("label column -4 is out of range"));
}
