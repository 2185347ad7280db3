//! `perceptron gen` and `perceptron convert` from the command line.

use crate::common::data_file;

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn perceptron() -> Command {
    Command::cargo_bin("perceptron").unwrap()
}

/// The weights and bias of a saved model.
fn weights(model: &Path) -> (serde_json::Value, serde_json::Value) {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(model).unwrap()).unwrap();
    (v["weights"].clone(), v["bias"].clone())
}

fn train(data: &Path, model: &Path, extra: &[&str]) {
    perceptron()
        .arg("train")
        .arg(data)
        .args(["--backend", "reference", "--max-epochs", "200", "-o"])
        .arg(model)
        .args(extra)
        .assert()
        .code(predicate::in_iter([0, 3]));
}

#[test]
fn gen_writes_every_format_deterministically_and_trains() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut sizes = Vec::new();
    for name in ["a.pbin", "a.csv", "a.svm", "b.pbin"] {
        perceptron()
            .args([
                "gen",
                "--rows",
                "300",
                "--features",
                "6",
                "--seed",
                "3",
                "-o",
            ])
            .arg(d.join(name))
            .assert()
            .success()
            .stdout(predicate::str::contains(format!(
                "data        {} (",
                d.join(name).display()
            )))
            .stdout(predicate::str::contains(
                "300 rows x 6 features, dense, f32), 1800 stored values, ",
            ))
            .stdout(predicate::str::contains("separable"));
        sizes.push(std::fs::read(d.join(name)).unwrap());
    }
    assert_eq!(sizes[0], sizes[3], "same options, same bytes");
    // Separable: training converges (exit 0), to the same model from each
    // format.
    let mut models = Vec::new();
    for name in ["a.pbin", "a.csv", "a.svm"] {
        let model = d.join(format!("{name}.json"));
        perceptron()
            .arg("train")
            .arg(d.join(name))
            .args(["--backend", "reference", "-o"])
            .arg(&model)
            .assert()
            .success();
        models.push(weights(&model));
    }
    assert_eq!(models[0], models[1]);
    assert_eq!(models[0], models[2]);
}

#[test]
fn gen_sparse_json_summary_and_noise() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.pbin");
    let assert = perceptron()
        .args([
            "gen",
            "--rows",
            "1000",
            "--features",
            "5000",
            "--density",
            "sparse",
            "--nnz",
            "7",
            "--noise",
            "0.2",
            "--precision",
            "f64",
            "--json",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(v["rows"], 1000);
    assert_eq!(v["nonzeros"], 7000);
    assert_eq!(v["sparse"], true);
    assert_eq!(v["precision"], "f64");
    let flipped = v["flipped"].as_u64().unwrap();
    assert!((150..250).contains(&flipped), "{flipped}");
    assert_eq!(v["bytes"], std::fs::metadata(&out).unwrap().len());
    let h = perceptron::data::binary::read_header(&out).unwrap();
    assert_eq!((h.rows, h.cols, h.nnz), (1000, 5000, 7000));
}

#[test]
fn gen_refuses_bad_options_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    perceptron()
        .args(["gen", "-o"])
        .arg(d.join("x.parquet"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot tell the output format from the name; use the extension .csv, .svm \
             (LIBSVM) or .pbin (binary)",
        ));
    perceptron()
        .args(["gen", "--nnz", "3", "-o"])
        .arg(d.join("x.csv"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--nnz applies to sparse data"));
    perceptron()
        .args(["gen", "--planted-margin", "2", "-o"])
        .arg(d.join("x.csv"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("must be smaller than --radius"));
    perceptron()
        .args(["gen", "--rows", "x", "-o"])
        .arg(d.join("x.csv"))
        .assert()
        .code(2);
    std::fs::write(d.join("a_file"), "").unwrap();
    perceptron()
        .args(["gen", "-o"])
        .arg(d.join("a_file").join("x.csv"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("a_file is not a directory"));
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 1);
}

#[test]
fn convert_to_binary_keeps_the_model_identical() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (input, layout) in [("iris_setosa.csv", "dense"), ("heart_scale.svm", "csr")] {
        for precision in ["f32", "f64"] {
            let bin = d.join(format!("{input}.{precision}.pbin"));
            perceptron()
                .arg("convert")
                .arg(data_file(input))
                .arg(&bin)
                .args(["--precision", precision])
                .assert()
                .success()
                .stdout(predicate::str::contains(format!(
                    "binary ({layout}, {precision} values: --precision {precision})"
                )));
            let (m_text, m_bin) = (d.join("text.json"), d.join("bin.json"));
            train(&data_file(input), &m_text, &["--precision", precision]);
            train(&bin, &m_bin, &["--precision", precision]);
            assert_eq!(weights(&m_text), weights(&m_bin), "{input} {precision}");
        }
    }
}

#[test]
fn convert_between_text_formats_and_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // LIBSVM -> dense binary -> CSV -> LIBSVM: the same data throughout.
    perceptron()
        .arg("convert")
        .arg(data_file("heart_scale.svm"))
        .arg(d.join("h.pbin"))
        .args(["--layout", "dense", "--json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"layout\":\"dense\""))
        .stdout(predicate::str::contains("\"rows\":270"));
    perceptron()
        .arg("convert")
        .arg(d.join("h.pbin"))
        .arg(d.join("h.csv"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "CSV (f64 values: row 1, column 1: 0.708333 needs f64), 270 rows x 13 features",
        ));
    perceptron()
        .arg("convert")
        .arg(d.join("h.csv"))
        .arg(d.join("h.svm"))
        .args(["--layout", "csr"])
        .assert()
        .success();
    let opts = perceptron::data::LoadOptions::default();
    let a = perceptron::data::load_raw::<f32>(&data_file("heart_scale.svm"), &opts).unwrap();
    let b = perceptron::data::load_raw::<f32>(&d.join("h.svm"), &opts).unwrap();
    assert_eq!(a.features, b.features);
    assert_eq!(a.class_ids, b.class_ids);
}

#[test]
fn convert_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    perceptron()
        .arg("convert")
        .arg(data_file("iris_setosa.csv"))
        .arg(d.join("out.xyz"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot tell the output format"));
    perceptron()
        .arg("convert")
        .arg(d.join("missing.csv"))
        .arg(d.join("out.pbin"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "missing.csv: cannot open data file",
        ));
    std::fs::write(d.join("bad.pbin"), b"\x89PBN\r\n\x1a\nshort").unwrap();
    perceptron()
        .arg("convert")
        .arg(d.join("bad.pbin"))
        .arg(d.join("out.csv"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad.pbin: truncated: the file has 13 bytes, fewer than the 192-byte header",
        ));
    perceptron()
        .arg("convert")
        .arg(data_file("iris_setosa.csv"))
        .arg(d.join("out.csv.gz"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "compressed output is not supported",
        ));
    // Nothing half-written.
    assert_eq!(
        std::fs::read_dir(d).unwrap().count(),
        1,
        "only bad.pbin is there"
    );
}

/// Issue: `convert h.svm h.pbin --layout dense` of a 2-row file whose one
/// index is 2^31 - 1 started a 16 GiB write with no size check. The
/// output's size is known before the copy is made and checked against the
/// disk's free space (here lowered by `PERCEPTRON_DISK_LIMIT`): refused
/// with both numbers, nothing written.
#[test]
fn convert_refuses_a_dense_copy_larger_than_the_disk_with_both_numbers() {
    let dir = tempfile::tempdir().unwrap();
    for (index, needs) in [
        ("16777216", "128.0 MiB (134217728 bytes)"),
        ("2147483647", "16.0 GiB (17179869176 bytes)"),
    ] {
        std::fs::write(
            dir.path().join("h.svm"),
            format!("1 1:1\n-1 1:3 {index}:1\n"),
        )
        .unwrap();
        let out = perceptron()
            .current_dir(dir.path())
            .args(["convert", "h.svm", "h.pbin", "--layout", "dense"])
            .env("PERCEPTRON_DISK_LIMIT", "1000000")
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .code(1);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert_eq!(
            err.trim_end(),
            format!(
                "perceptron: error: h.pbin: cannot write output: it would take at least \
                 {needs}, but only 976.6 KiB (1000000 bytes) is free under \
                 PERCEPTRON_DISK_LIMIT; nothing was written"
            )
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "only h.svm: {left:?}");
    }
}

/// Issue: a 20-byte sparse file with index 3e7 converted to CSV took 1.47
/// GB (the first line's fields were held to test it for a header, 50 bytes
/// each). The CSV's size is checked against the disk first, and the
/// conversion runs in memory proportional to one line.
#[cfg(target_os = "linux")]
#[test]
fn a_far_index_converted_to_csv_is_checked_against_the_disk_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.svm"), "1 30000000:1\n").unwrap();
    let out = perceptron()
        .current_dir(dir.path())
        .args(["convert", "s.svm", "s.csv"])
        .env("PERCEPTRON_DISK_LIMIT", "1000000")
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains(
            "s.csv: cannot write output: it would take at least 57.2 MiB (60000002 bytes), \
             but only 976.6 KiB (1000000 bytes) is free under PERCEPTRON_DISK_LIMIT"
        ),
        "{err}"
    );
    assert!(!dir.path().join("s.csv").exists());
    // 10^7 columns: a 20 MB line, converted within 300 MB of address space
    // (holding its fields took 500 MB).
    std::fs::write(dir.path().join("t.svm"), "1 10000000:1\n").unwrap();
    let out = std::process::Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg("ulimit -v 300000 && exec \"$0\" convert t.svm t.csv")
        .arg(crate::common::bin())
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::metadata(dir.path().join("t.csv")).unwrap().len(),
        20_000_002
    );
}

/// `gen` writes files of the size asked for: checked against the disk
/// before anything is drawn.
#[test]
fn gen_refuses_a_file_larger_than_the_disk_with_both_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let out = perceptron()
        .current_dir(dir.path())
        .args(["gen", "--rows", "100000", "--features", "10", "-o", "g.csv"])
        .env("PERCEPTRON_DISK_LIMIT", "100000")
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains(
            "g.csv: cannot write output: it would take at least 2.2 MiB (2300000 bytes), but \
             only 97.7 KiB (100000 bytes) is free under PERCEPTRON_DISK_LIMIT"
        ),
        "{err}"
    );
    assert!(!dir.path().join("g.csv").exists());
    perceptron()
        .current_dir(dir.path())
        .args(["gen", "--rows", "100000", "--features", "10", "-o", "g.csv"])
        .env("PERCEPTRON_DISK_LIMIT", "x")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "PERCEPTRON_DISK_LIMIT must be a whole number of bytes, not \"x\"",
        ));
}
