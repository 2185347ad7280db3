//! What a new user meets in the first hour: the rough edges of everyday use
//! (messages, standard input and output, outputs that must not be replaced,
//! options that must not be ignored) and the scripts around the tool.

use std::path::Path;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{cmd, data_file, data_str};

fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Writes an executable shell script.
#[cfg(unix)]
fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `scripts/fuzz` reports every target that fails, however it fails: a
/// target that dies at start-up leaves no status line in its log, which
/// once ended the script silently under `set -euo pipefail`.
#[cfg(unix)]
#[test]
fn the_fuzz_script_reports_every_failing_target() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    script(
        &bin.join("dies"),
        "echo 'INFO: Seed: 1'\necho 'ERROR: libFuzzer: deadly signal' >&2\nexit 77\n",
    );
    script(&bin.join("silent"), "exit 0\n");
    script(
        &bin.join("fine"),
        "printf '#2\\tINITED\\n#1000\\tDONE\\n'\necho 'stat::number_of_executed_units: 1000'\n",
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("bash")
        .arg(root.join("scripts/fuzz"))
        .env("FUZZ_BIN_DIR", &bin)
        .env("FUZZ_WORK", dir.path().join("work"))
        .env("FUZZ_TARGETS", "dies silent fine missing")
        .env("FUZZ_SECONDS", "1")
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr_of(&out));
    for (target, status) in [
        ("dies", "FAILED (exit 77)"),
        ("silent", "FAILED (exit 0, but no status line in its log)"),
        ("missing", "FAILED (exit 127)"),
    ] {
        assert!(
            text.contains(&format!("---- fuzz/{target}: {status}; the end of ")),
            "{target}: {text}"
        );
    }
    assert!(text.contains("ERROR: libFuzzer: deadly signal"), "{text}");
    assert!(text.contains("missing: No such file"), "{text}");
    assert!(text.contains("ok (1 s, no crash)"), "{text}");
    assert!(
        text.ends_with("fuzz: FAILED: dies silent missing\nfuzz: 1 passed, 3 failed\n"),
        "{text}"
    );
}

/// `-` is standard input for every DATA: a piped file trains, predicts,
/// evaluates and describes exactly as the file does, and messages call it
/// `<stdin>`.
#[test]
fn a_dash_reads_data_from_standard_input_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let iris = std::fs::read(data_file("iris_setosa.csv")).unwrap();
    let out = cmd(d)
        .args(["train", "-", "-o", "piped.json", "--backend", "cpu"])
        .write_stdin(iris.clone())
        .assert()
        .success();
    assert!(
        stdout_of(out.get_output()).starts_with("data        <stdin> (CSV, 150 rows x 4 features"),
        "{}",
        stdout_of(out.get_output())
    );
    cmd(d)
        .args(["train", &data_str("iris_setosa.csv"), "-o", "file.json"])
        .args(["--backend", "cpu"])
        .assert()
        .success();
    assert_eq!(
        crate::common::essence(&d.join("piped.json")),
        crate::common::essence(&d.join("file.json"))
    );
    let from_file = cmd(d)
        .args(["predict", "file.json", &data_str("iris_setosa.csv")])
        .assert()
        .success();
    let from_stdin = cmd(d)
        .args(["predict", "file.json", "-"])
        .write_stdin(iris.clone())
        .assert()
        .success();
    assert_eq!(
        from_stdin.get_output().stdout,
        from_file.get_output().stdout
    );
    let eval = cmd(d)
        .args(["eval", "file.json", "-", "--json"])
        .write_stdin(iris.clone())
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&eval.get_output().stdout).unwrap();
    assert_eq!(
        (v["data"].as_str(), v["accuracy"].as_f64()),
        (Some("<stdin>"), Some(1.0))
    );
    let gz = std::fs::read(data_file("iris_setosa.csv.gz")).unwrap();
    let info = cmd(d)
        .args(["info", "-", "--json"])
        .write_stdin(gz)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&info.get_output().stdout).unwrap();
    assert_eq!(
        (v["data"].as_str(), v["rows"].as_u64()),
        (Some("<stdin>"), Some(150))
    );
    // Errors name <stdin> with the line, as for a file.
    cmd(d)
        .args(["train", "-"])
        .write_stdin("1,2\n-1,x\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("<stdin>:2:4: expected a number"));
    let pbin = d.join("iris.pbin");
    cmd(d)
        .args([
            "convert",
            &data_str("iris_setosa.csv"),
            pbin.to_str().unwrap(),
        ])
        .assert()
        .success();
    cmd(d)
        .args(["info", "-"])
        .write_stdin(std::fs::read(&pbin).unwrap())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "<stdin>: binary (.pbin) data cannot be read from standard input",
        ));
}

/// `-` is standard output for every text output, the summary then goes to
/// stderr; `/dev/stdout` is a pipe here, written directly, not replaced.
#[test]
fn a_dash_or_dev_stdout_writes_outputs_to_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let iris = data_str("iris_setosa.csv");
    let out = cmd(d)
        .args(["train", &iris, "-o", "-", "--backend", "cpu"])
        .assert()
        .success();
    let o = out.get_output();
    let model: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(model["format"], "perceptron-model");
    assert!(
        stderr_of(o).contains("model       <stdout>\n"),
        "{}",
        stderr_of(o)
    );
    assert!(!d.join("-").exists());
    std::fs::write(d.join("m.json"), &o.stdout).unwrap();
    let expected: String = std::fs::read_to_string(data_file("iris_setosa.csv"))
        .unwrap()
        .lines()
        .map(|l| format!("{}\n", l.split(',').next().unwrap()))
        .collect();
    for to in ["-", "/dev/stdout"] {
        let out = cmd(d)
            .args(["predict", "m.json", &iris, "-o", to])
            .assert()
            .success();
        assert_eq!(stdout_of(out.get_output()), expected, "{to}");
    }
    assert!(!d.join("-").exists());
    let out = cmd(d).args(["convert", &iris, "-"]).assert().success();
    let o = out.get_output();
    let text = stdout_of(o);
    assert_eq!(text.lines().count(), 150);
    assert!(
        text.starts_with("1,5.1,3.5,1.4,0.2\n1,4.9,3,1.4,0.2\n"),
        "{text}"
    );
    assert!(
        stderr_of(o).starts_with("wrote <stdout>: CSV"),
        "{}",
        stderr_of(o)
    );
    let out = cmd(d)
        .args([
            "gen",
            "--rows",
            "5",
            "--density",
            "sparse",
            "--json",
            "-o",
            "-",
        ])
        .assert()
        .success();
    let o = out.get_output();
    let v: Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!(
        (v["format"].as_str(), v["output"].as_str()),
        (Some("libsvm"), Some("<stdout>"))
    );
    assert_eq!(stdout_of(o).lines().count(), 5);
    let out = cmd(d)
        .args(["plot", "curve", "m.json", "-o", "-"])
        .assert()
        .success();
    assert!(
        stdout_of(out.get_output()).starts_with("<svg"),
        "{}",
        stdout_of(out.get_output())
    );
    // A file that must be read back cannot be standard output.
    cmd(d)
        .args(["train", &iris, "--checkpoint", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--checkpoint must be a file"));
}

/// A read-only output is refused, as `cp` refuses it, and left as it was;
/// `train` says where it writes without `-o`.
#[cfg(unix)]
#[test]
fn read_only_outputs_are_refused_and_the_default_model_path_is_documented() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("model.json"), "precious").unwrap();
    std::fs::set_permissions(d.join("model.json"), std::fs::Permissions::from_mode(0o444)).unwrap();
    cmd(d)
        .args(["train", &data_str("iris_setosa.csv")])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "model.json: cannot write output: the file is read-only",
        ));
    assert_eq!(std::fs::read(d.join("model.json")).unwrap(), b"precious");
    std::fs::write(d.join("p.txt"), "kept").unwrap();
    std::fs::set_permissions(d.join("p.txt"), std::fs::Permissions::from_mode(0o400)).unwrap();
    cmd(d)
        .args([
            "predict",
            "model.json",
            &data_str("iris_setosa.csv"),
            "-o",
            "p.txt",
        ])
        .assert()
        .code(1);
    assert_eq!(std::fs::read(d.join("p.txt")).unwrap(), b"kept");
    cmd(d)
        .args(["train", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "[default: model.json, in the current",
        ));
}

/// An output into a missing directory creates it, as `--plot DIR` does.
#[test]
fn outputs_create_missing_directories_as_plot_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    cmd(d)
        .args([
            "train",
            &data_str("iris_setosa.csv"),
            "-o",
            "models/iris/m.json",
        ])
        .args(["--plot", "pictures/iris"])
        .assert()
        .success();
    assert!(d.join("models/iris/m.json").is_file());
    assert!(d.join("pictures/iris/curve.svg").is_file());
    cmd(d)
        .args([
            "split",
            &data_str("iris_setosa.csv"),
            "-o",
            "parts/a.csv",
            "--test",
            "parts/b.csv",
        ])
        .assert()
        .success();
    assert!(d.join("parts/a.csv").is_file() && d.join("parts/b.csv").is_file());
}

/// `split` and CSV-to-CSV `convert` keep the header, the label column and
/// the delimiter, so the model of the original evaluates the parts.
#[test]
fn split_and_convert_keep_the_csv_layout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::from("# exported\n\"width, cm\";height;class\n");
    for i in 0..40 {
        let x = i as f64 / 4.0 - 5.0;
        let class = if x > 0.3 { "big" } else { "small" };
        text.push_str(&format!("{x};{};{class}\n", 0.5 - x / 8.0));
    }
    std::fs::write(d.join("h.csv"), &text).unwrap();
    cmd(d)
        .args(["train", "h.csv", "--label-column", "class", "-o", "m.json"])
        .assert()
        .success();
    cmd(d)
        .args(["split", "h.csv", "--label-column", "class", "--seed", "3"])
        .args(["-o", "train.csv", "--test", "test.csv"])
        .assert()
        .success();
    let test = std::fs::read_to_string(d.join("test.csv")).unwrap();
    assert!(test.starts_with("\"width, cm\";height;class\n"), "{test}");
    assert_eq!(test.lines().count(), 1 + 8);
    for line in test.lines().skip(1) {
        assert!(line.ends_with(";big") || line.ends_with(";small"), "{line}");
    }
    for part in ["train.csv", "test.csv"] {
        let out = cmd(d)
            .args(["eval", "m.json", part, "--json"])
            .assert()
            .success();
        let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert_eq!(v["accuracy"], 1.0, "{part}");
    }
    cmd(d)
        .args(["convert", "h.csv", "copy.csv", "--label-column", "class"])
        .assert()
        .success();
    let copy = std::fs::read_to_string(d.join("copy.csv")).unwrap();
    let original: Vec<&str> = text.lines().skip(1).collect();
    let copied: Vec<&str> = copy.lines().collect();
    assert_eq!(copied[0], original[0]);
    assert_eq!(copied.len(), original.len());
    assert_eq!(copied[1], "-5;1.125;small");
    // LIBSVM has no header or label column: its CSV has the label first.
    cmd(d)
        .args(["convert", &data_str("iris_setosa.svm"), "iris.csv"])
        .assert()
        .success();
    let iris = std::fs::read_to_string(d.join("iris.csv")).unwrap();
    assert!(iris.starts_with("1,5.1,3.5,1.4,0.2\n"), "{iris}");
}

/// CSV data must have the model's columns: another count is an error
/// naming both; header names are stored with the model and matched by
/// name; LIBSVM data may still have fewer features.
#[test]
fn csv_columns_must_fit_the_model_and_are_matched_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    cmd(d)
        .args(["train", &data_str("digits.csv"), "--multiclass", "ovr"])
        .args(["--max-epochs", "2", "-o", "digits.json"])
        .assert()
        .code(0);
    cmd(d)
        .args(["eval", "digits.json", &data_str("iris_setosa.csv")])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(
            "does not fit the model digits.json: the model has 64 features but the data has 4 \
             feature columns",
        ));
    let rows = [
        "2.0,1.0,0.5,yes",
        "-1.0,0.0,2.5,no",
        "1.5,-2.0,1.0,yes",
        "-2.0,1.0,-0.5,no",
    ];
    std::fs::write(
        d.join("h.csv"),
        format!("a,b,c,label\n{}\n", rows.join("\n")),
    )
    .unwrap();
    cmd(d)
        .args(["train", "h.csv", "--label-column", "label", "-o", "h.json"])
        .assert()
        .success();
    let model: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("h.json")).unwrap()).unwrap();
    assert_eq!(
        model["training"]["data_layout"]["feature_names"],
        serde_json::json!(["a", "b", "c"])
    );
    let reference = cmd(d)
        .args(["predict", "h.json", "h.csv", "--scores"])
        .assert()
        .success();
    // The same rows with the columns in another order: matched by name.
    let moved: Vec<String> = rows
        .iter()
        .map(|r| {
            let f: Vec<&str> = r.split(',').collect();
            format!("{},{},{},{}", f[3], f[2], f[0], f[1])
        })
        .collect();
    std::fs::write(
        d.join("moved.csv"),
        format!("label,c,a,b\n{}\n", moved.join("\n")),
    )
    .unwrap();
    let out = cmd(d)
        .args(["predict", "h.json", "moved.csv", "--scores"])
        .assert()
        .success();
    assert_eq!(out.get_output().stdout, reference.get_output().stdout);
    assert!(
        stderr_of(out.get_output()).contains(
            "note: the columns of moved.csv are the features of h.json in another order; they \
             are matched by name"
        ),
        "{}",
        stderr_of(out.get_output())
    );
    // A missing name, an unknown one.
    std::fs::write(d.join("renamed.csv"), "a,b,z,label\n1,2,3,yes\n").unwrap();
    cmd(d)
        .args(["eval", "h.json", "renamed.csv"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "renamed.csv does not fit the model h.json: the model's feature \"c\" is not a column \
             of the data's header",
        ));
    std::fs::write(d.join("wide.csv"), "a,b,c,d,label\n1,2,3,4,yes\n").unwrap();
    cmd(d)
        .args(["predict", "h.json", "wide.csv"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "the data's column \"d\" is not one of the model's features",
        ));
    // Without a header, the count alone; LIBSVM may have fewer features.
    std::fs::write(d.join("short.csv"), "yes,1,2\n").unwrap();
    cmd(d)
        .args(["predict", "h.json", "short.csv", "--label-column", "1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "the model has 3 features but the data has 2 feature columns",
        ));
    std::fs::write(d.join("short.svm"), "1 1:2 2:1\n").unwrap();
    cmd(d)
        .args(["predict", "h.json", "short.svm"])
        .assert()
        .success();
    // A model file from before feature names loads and predicts as before.
    let mut old = model.clone();
    old["training"]["data_layout"]
        .as_object_mut()
        .unwrap()
        .remove("feature_names");
    std::fs::write(d.join("old.json"), old.to_string()).unwrap();
    let out = cmd(d)
        .args(["predict", "old.json", "h.csv", "--scores"])
        .assert()
        .success();
    assert_eq!(out.get_output().stdout, reference.get_output().stdout);
}

/// More than two labels: `train` and `info` offer both ways, a +1 class or
/// one-vs-rest.
#[test]
fn more_than_two_labels_suggest_positive_and_multiclass() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let both = "; choose the +1 class with --positive LABEL (that class against the rest), or \
                train one perceptron per class with --multiclass ovr";
    cmd(d)
        .args(["train", &data_str("digits.csv")])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(both));
    cmd(d)
        .args(["info", &data_str("digits.csv")])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("{both}\n")));
    assert!(!d.join("model.json").exists());
}

/// A header of numbered column names (pandas' `y,0,1,2,...`) is a header,
/// not a data row; where too few names make it doubtful, the label error
/// suggests --header.
#[test]
fn numbered_header_names_are_a_header_or_suggest_header() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("pandas.csv"),
        "y,0,1,2\n1,2,0,1\n0,-1,-2,0\n1,3,1,1\n",
    )
    .unwrap();
    let out = cmd(d)
        .args(["train", "pandas.csv", "--json", "-o", "m.json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        (v["header_line"].as_u64(), v["rows"].as_u64()),
        (Some(1), Some(3))
    );
    std::fs::write(d.join("two.csv"), "y,0,1\n1,2,0\n0,-1,-2\n-1,3,1\n").unwrap();
    cmd(d)
        .args(["train", "two.csv"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "if line 1 is a header (its label is text, every other label a number), pass --header",
        ));
    cmd(d)
        .args(["train", "two.csv", "--header", "--positive", "1"])
        .assert()
        .success();
}

/// European CSV (`;` between fields, `,` in numbers) is not a header
/// problem: the message says to pass --delimiter ';'.
#[test]
fn european_csv_suggests_the_delimiter() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("eu.csv"), "1;0,5;1,0\n0;1,5;2,0\n").unwrap();
    let out = cmd(d).args(["train", "eu.csv"]).assert().code(1);
    let e = stderr_of(out.get_output());
    assert!(e.contains("pass --delimiter ';'"), "{e}");
    assert!(!e.contains("--header"), "{e}");
    cmd(d)
        .args(["train", "eu.csv", "--delimiter", ";", "--no-header"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "found \"0,5\" (a decimal comma: numbers are read with a decimal point",
        ));
}

/// One-vs-rest classes come out sorted as scikit-learn sorts them; a model
/// file listing them in first-seen order (as older builds wrote) predicts
/// the same and starts a run; `--scores` names its columns.
#[test]
fn one_vs_rest_classes_are_sorted_and_scores_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::new();
    for i in 0..60 {
        let (label, x, y) = match i % 3 {
            0 => ("10", 3.0, 0.0),
            1 => ("9", 0.0, 3.0),
            _ => ("2", -3.0, -3.0),
        };
        let j = (i / 3) as f64 * 0.05;
        text.push_str(&format!("{label},{},{}\n", x + j, y - j));
    }
    std::fs::write(d.join("three.csv"), &text).unwrap();
    cmd(d)
        .args([
            "train",
            "three.csv",
            "--multiclass",
            "ovr",
            "-o",
            "new.json",
        ])
        .assert()
        .success();
    let model: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("new.json")).unwrap()).unwrap();
    assert_eq!(model["classes"], serde_json::json!(["2", "9", "10"]));
    let scores = cmd(d)
        .args(["predict", "new.json", "three.csv", "--scores"])
        .assert()
        .success();
    let scores = stdout_of(scores.get_output());
    assert!(scores.starts_with("predicted\t2\t9\t10\n10\t"), "{scores}");
    // The same model as an older build wrote it: classes first-seen.
    let mut old = model.clone();
    for key in ["classes", "weights", "bias", "class_training"] {
        let v = old[key].as_array().unwrap().clone();
        old[key] = serde_json::json!([v[2], v[1], v[0]]);
    }
    std::fs::write(d.join("old.json"), old.to_string()).unwrap();
    let labels = |m: &str| {
        let out = cmd(d).args(["predict", m, "three.csv"]).assert().success();
        stdout_of(out.get_output())
    };
    assert_eq!(labels("old.json"), labels("new.json"));
    assert_eq!(labels("new.json").lines().next(), Some("10"));
    let old_scores = cmd(d)
        .args(["predict", "old.json", "three.csv", "--scores"])
        .assert()
        .success();
    assert!(
        stdout_of(old_scores.get_output()).starts_with("predicted\t10\t9\t2\n"),
        "{}",
        stdout_of(old_scores.get_output())
    );
    // Both start a run from the same weights, so they end at one model.
    for m in ["old.json", "new.json"] {
        cmd(d)
            .args(["train", "three.csv", "--multiclass", "ovr", "--init", m])
            .args(["-o", &format!("from-{m}")])
            .assert()
            .success();
    }
    let weights = |m: &str| {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(d.join(m)).unwrap()).unwrap();
        (
            v["classes"].clone(),
            v["weights"].clone(),
            v["bias"].clone(),
        )
    };
    assert_eq!(weights("from-old.json"), weights("from-new.json"));
    // Binary models name their one score column by the +1 class.
    cmd(d)
        .args(["train", &data_str("iris_setosa.csv"), "-o", "iris.json"])
        .assert()
        .success();
    cmd(d)
        .args([
            "predict",
            "iris.json",
            &data_str("iris_setosa.csv"),
            "--scores",
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("predicted\t1\n1\t"));
}

/// CSV options on LIBSVM data are not silently ignored.
#[test]
fn csv_options_on_libsvm_data_warn() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let svm = data_str("heart_scale.svm");
    cmd(d)
        .args(["train", &svm, "--label-column", "3", "--delimiter", ";"])
        .args(["--max-epochs", "2", "-o", "h.json"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains(format!(
            "perceptron: warning: --label-column and --delimiter are ignored: {svm} is LIBSVM \
             data, and they apply only to CSV"
        )));
    cmd(d)
        .args(["info", &svm, "--header"])
        .assert()
        .success()
        .stderr(predicate::str::contains("warning: --header is ignored: "));
    // A label column taken from the model is not the user's: no warning.
    cmd(d)
        .args([
            "train",
            &data_str("iris_setosa.csv"),
            "--label-column",
            "1",
            "-o",
            "i.json",
        ])
        .assert()
        .success()
        .stderr("");
    cmd(d)
        .args(["predict", "i.json", &data_str("iris_setosa.svm")])
        .assert()
        .success()
        .stderr("");
}

/// `bench` chooses its backends with --backends: a --backend it would
/// ignore is refused.
#[test]
fn bench_refuses_a_backend_it_would_ignore() {
    let dir = tempfile::tempdir().unwrap();
    cmd(dir.path())
        .args(["bench", "--backend", "cpu"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unexpected argument '--backend'"))
        .stderr(predicate::str::contains("--backends"));
}

/// On sparse rows `auto` takes the CPU engine whether or not a GPU is
/// there, and says so; `--adapter` still asks for the GPU by name.
#[test]
fn auto_takes_the_cpu_engine_on_sparse_rows_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let out = cmd(dir.path())
        .env_remove("PERCEPTRON_BACKEND")
        .args(["train", &data_str("digits_0v1.svm"), "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["sparse"], true, "{v}");
    assert_eq!(v["backend"]["engines"][0]["kind"], "cpu", "{v}");
    let note = v["backend"]["note"].as_str().unwrap_or_default();
    assert!(note.contains("sparse rows"), "{note}");
}

/// Without a GPU device, `auto` costs what `cpu` costs: no GPU driver is
/// started (it took about 60 MiB and a tenth of a second). PERCEPTRON_BACKEND
/// sets the default backend.
#[test]
fn auto_is_cheap_without_a_gpu_and_the_default_comes_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A cap of 10^6 epochs (the data converge in a few) puts the run past
    // the short-run rule, which would keep `auto` off the GPU whatever the
    // machine: the device-node check is then what keeps the drivers away.
    let peak = |backend: &str| {
        let out = cmd(d)
            .env_remove("PERCEPTRON_BACKEND")
            .args([
                "train",
                &data_str("iris_setosa.csv"),
                "--json",
                "--max-epochs",
                "1000000",
                "--backend",
                backend,
            ])
            .assert()
            .success();
        let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        (v["peak_memory_bytes"].as_u64(), v["backend"].clone())
    };
    if !perceptron::engine::backend::gpu_device_present() {
        let (auto, how) = peak("auto");
        let note = how["note"].as_str().unwrap_or_default();
        assert!(note.contains("no hardware GPU adapter"), "{note}");
        let (cpu, _) = peak("cpu");
        if let (Some(auto), Some(cpu)) = (auto, cpu) {
            assert!(
                auto < cpu + (16 << 20),
                "auto peaks at {auto} bytes, cpu at {cpu}: a GPU driver was started"
            );
        }
    }
    let out = cmd(d)
        .env("PERCEPTRON_BACKEND", "reference")
        .args(["train", &data_str("iris_setosa.csv"), "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["backend"]["engines"][0]["kind"], "reference", "{v}");
    // The command line wins over the environment.
    let out = cmd(d)
        .env("PERCEPTRON_BACKEND", "reference")
        .args([
            "train",
            &data_str("iris_setosa.csv"),
            "--json",
            "--backend",
            "cpu",
        ])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["backend"]["engines"][0]["kind"], "cpu", "{v}");
    cmd(d)
        .env("PERCEPTRON_BACKEND", "quantum")
        .args(["train", &data_str("iris_setosa.csv")])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("quantum"));
}

/// Running every epoch is how --average and --pocket end: exit 0, and the
/// summary still says whether the last epoch was clean. The classic rule
/// keeps exit 3.
#[test]
fn averaged_and_pocket_runs_end_normally_at_the_epoch_cap() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let heart = data_str("heart_scale.svm");
    for variant in ["--average", "--pocket"] {
        let out = cmd(d)
            .args([
                "train",
                &heart,
                variant,
                "--max-epochs",
                "3",
                "-o",
                "m.json",
            ])
            .assert()
            .success()
            .stderr("");
        let text = stdout_of(out.get_output());
        assert!(
            text.contains("3 of at most 3: ran every epoch, as the ")
                && text.contains(" variant does; the last epoch was not clean ("),
            "{text}"
        );
        let out = cmd(d)
            .args(["train", &heart, variant, "--max-epochs", "3", "--json"])
            .assert()
            .success();
        let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert_eq!(
            (v["converged"].as_bool(), v["stop"].as_str()),
            (Some(false), Some("max_epochs"))
        );
    }
    cmd(d)
        .args(["train", &heart, "--max-epochs", "3"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("not converged"));
    cmd(d)
        .args([
            "train",
            &data_str("digits.csv"),
            "--multiclass",
            "ovr",
            "--average",
        ])
        .args(["--max-epochs", "2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("the last epoch was not clean ("));
}

/// Values too large for f32: training names the file, and `info` warns
/// before, with numbers in six significant figures.
#[test]
fn overflow_is_named_and_foreseen() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("big.csv"), "1,1e30,2\n-1,2e30,1\n1,3e30,-1\n").unwrap();
    cmd(d)
        .args(["train", "big.csv", "--backend", "cpu"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "perceptron: error: big.csv: epoch 1, row 2: the margin w·x is inf",
        ));
    let out = cmd(d).args(["info", "big.csv"]).assert().success();
    let text = stdout_of(out.get_output());
    assert!(
        text.contains("radius      D = max ||x~|| = 3.00000e30 with the bias"),
        "{text}"
    );
    assert!(text.contains("values      min -1, max 3e30\n"), "{text}");
    assert!(
        text.contains(
            "warning     the largest squared norm ||x~||^2 is 9.00000e60, beyond f32's largest \
             number (3.40282e38): training in f32 will overflow"
        ),
        "{text}"
    );
    let out = cmd(d)
        .args(["info", "big.csv", "--precision", "f64", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["warnings"], serde_json::json!([]));
    let out = cmd(d)
        .args(["info", &data_str("iris_setosa.csv")])
        .assert()
        .success();
    assert!(
        stdout_of(out.get_output()).contains("radius      D = max ||x~|| = 11.1562 with"),
        "{}",
        stdout_of(out.get_output())
    );
}

/// Every command with a summary has --json; the summaries are on stdout
/// (stderr when an output of the command is there) and speak one
/// vocabulary: rows, features, nonzeros, positive_rows, lower-case format
/// names, one confusion matrix shape.
#[test]
fn summaries_share_a_stream_a_vocabulary_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let json = |args: &[&str]| -> Value {
        let out = cmd(d).args(args).assert().success();
        let o = out.get_output();
        assert_eq!(stderr_of(o), "", "{args:?}");
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    };
    let iris = data_str("iris_setosa.csv");
    let generated = json(&[
        "gen",
        "--rows",
        "20",
        "--features",
        "3",
        "--json",
        "-o",
        "g.csv",
    ]);
    let convert = json(&["convert", "g.csv", "g.svm", "--json"]);
    let info = json(&["info", "g.csv", "--json"]);
    for (what, v) in [("gen", &generated), ("convert", &convert), ("info", &info)] {
        assert_eq!(v["rows"], 20, "{what}: {v}");
        assert_eq!(v["features"], 3, "{what}: {v}");
        assert_eq!(v["nonzeros"], info["nonzeros"], "{what}: {v}");
        assert!(
            v.get("nnz").is_none() && v.get("cols").is_none(),
            "{what}: {v}"
        );
    }
    assert_eq!(generated["positive_rows"], info["mapping"]["positive_rows"]);
    assert_eq!(
        (
            generated["format"].as_str(),
            convert["output_format"].as_str()
        ),
        (Some("csv"), Some("libsvm"))
    );
    assert_eq!(convert["input_format"], "csv");
    assert_eq!(info["format"], "csv");
    let split = json(&["split", &iris, "-o", "a.csv", "--test", "b.csv", "--json"]);
    assert_eq!(
        (
            split["rows"].as_u64(),
            split["train"]["rows"].as_u64(),
            split["test"]["rows"].as_u64()
        ),
        (Some(150), Some(120), Some(30))
    );
    assert_eq!(split["format"], "csv");
    let train = json(&["train", &iris, "--json", "-o", "m.json"]);
    assert_eq!(
        (train["format"].as_str(), train["positive_rows"].as_u64()),
        (Some("csv"), Some(50))
    );
    let online = json(&["online", &iris, "--positive", "1", "--json", "-o", "o.json"]);
    assert_eq!(online["examples"], 150);
    assert!(online["total_mistakes"].as_u64().unwrap() > 0, "{online}");
    assert_eq!(online["format"], "csv");
    // Binary and one-vs-rest confusion matrices have one shape.
    let binary = json(&["eval", "m.json", &iris, "--json"]);
    assert_eq!(
        binary["confusion"]["labels"],
        serde_json::json!(["-1", "1"])
    );
    assert_eq!(
        binary["confusion"]["matrix"],
        serde_json::json!([[100, 0], [0, 50]])
    );
    cmd(d)
        .args([
            "train",
            &data_str("digits.csv"),
            "--multiclass",
            "ovr",
            "--max-epochs",
            "3",
        ])
        .args(["-o", "d.json"])
        .assert()
        .code(0);
    let ovr = json(&["eval", "d.json", &data_str("digits.csv"), "--json"]);
    assert_eq!(ovr["confusion"]["labels"].as_array().unwrap().len(), 10);
    assert_eq!(ovr["confusion"]["matrix"][0].as_array().unwrap().len(), 10);
    assert!(ovr.get("labels").is_none(), "{ovr}");
    // Text summaries: stdout, sizes in binary units.
    let out = cmd(d)
        .args(["split", &iris, "-o", "a.csv", "--test", "b.csv"])
        .assert()
        .success()
        .stderr("");
    let text = stdout_of(out.get_output());
    assert!(
        text.contains("train       a.csv: 120 rows (CSV, 2.2 KiB)"),
        "{text}"
    );
    let out = cmd(d)
        .args(["online", &iris, "--positive", "1"])
        .assert()
        .success()
        .stderr("");
    assert!(stdout_of(out.get_output()).contains("examples    150 (the input ended)"));
    // With the predictions on stdout, the summary goes to stderr.
    let out = cmd(d)
        .args([
            "online",
            &iris,
            "--positive",
            "1",
            "--predictions",
            "--json",
        ])
        .assert()
        .success();
    let o = out.get_output();
    assert_eq!(stdout_of(o).lines().count(), 150);
    let v: Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!(v["examples"], 150);
}

/// Every --help says the exit statuses, 130 included; gen's planted margin
/// is --planted-margin (train's --margin is tau); online offers only the
/// formats it reads.
#[test]
fn help_and_options_are_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let commands: &[&[&str]] = &[
        &[],
        &["train"],
        &["predict"],
        &["eval"],
        &["online"],
        &["info"],
        &["devices"],
        &["bench"],
        &["split"],
        &["convert"],
        &["gen"],
        &["plot"],
        &["plot", "curve"],
        &["plot", "margins"],
        &["plot", "boundary"],
        &["plot", "bias"],
        &["plot", "trace"],
    ];
    for c in commands {
        let out = cmd(d).args(*c).arg("--help").assert().success();
        let help = stdout_of(out.get_output()).replace('\n', " ");
        let status = help
            .split_once("Exit status:")
            .unwrap_or_else(|| panic!("{c:?}: no exit status: {help}"))
            .1;
        assert!(status.contains("130 interrupted"), "{c:?}: {status}");
    }
    let out = cmd(d).arg("--help").assert().success();
    assert!(stdout_of(out.get_output()).contains("; 3 with train --require-convergence"));
    cmd(d)
        .args(["gen", "--margin", "0.1", "-o", "g.csv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--planted-margin"));
    let out = cmd(d)
        .args(["gen", "--planted-margin", "0.05", "--json", "-o", "g.csv"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["planted_margin"], 0.05);
    cmd(d)
        .args(["online", "g.csv", "--format", "binary"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'binary'"));
    let out = cmd(d).args(["online", "--help"]).assert().success();
    assert!(!stdout_of(out.get_output()).contains("- binary:"));
}
