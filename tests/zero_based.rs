//! Zero-based LIBSVM (scikit-learn's `dump_svmlight_file` default): read
//! to the same features as the same rows written one-based, the base said
//! in every summary and recorded in the model, which `predict` and `eval`
//! read with instead of guessing again; index 0 where indices count from 1
//! is refused with its file, line, column and value.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

use crate::common::data_file;

fn perceptron() -> Command {
    Command::cargo_bin("perceptron").unwrap()
}

/// `text` with every feature index one less: the rows as scikit-learn
/// writes them.
fn zero_based(text: &str) -> String {
    text.lines()
        .map(|l| {
            let mut t = l.split_whitespace();
            let mut out = vec![t.next().unwrap_or_default().to_owned()];
            for tok in t {
                let (i, v) = tok.split_once(':').unwrap();
                out.push(format!("{}:{v}", i.parse::<u64>().unwrap() - 1));
            }
            out.join(" ") + "\n"
        })
        .collect()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// heart_scale one-based and zero-based in `dir`.
fn heart(dir: &Path) -> (PathBuf, PathBuf) {
    let one = std::fs::read_to_string(data_file("heart_scale.svm")).unwrap();
    let (o, z) = (dir.join("one.svm"), dir.join("zero.svm"));
    std::fs::write(&o, &one).unwrap();
    std::fs::write(&z, zero_based(&one)).unwrap();
    (o, z)
}

fn train(data: &[&Path], model: &Path, extra: &[&str]) -> String {
    let out = perceptron()
        .arg("train")
        .args(data)
        .args(["--backend", "reference", "--max-epochs", "30", "-o"])
        .arg(model)
        .args(extra)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn a_zero_based_file_trains_to_the_model_of_the_same_rows_one_based() {
    let dir = tempfile::tempdir().unwrap();
    let (one, zero) = heart(dir.path());
    let (mo, mz) = (dir.path().join("o.json"), dir.path().join("z.json"));
    let text = train(&[&one], &mo, &[]);
    assert!(
        text.contains("indices     one-based: no index 0 appears (the LIBSVM standard)\n"),
        "{text}"
    );
    let text = train(&[&zero], &mz, &[]);
    assert!(
        text.contains(&format!(
            "indices     zero-based: index 0 appears on line 1 of {}\n",
            zero.display()
        )),
        "{text}"
    );
    let (o, z) = (json(&mo), json(&mz));
    assert_eq!((&o["weights"], &o["bias"]), (&z["weights"], &z["bias"]));
    assert_eq!(o["training"]["data_layout"]["index_base"], "one");
    assert_eq!(z["training"]["data_layout"]["index_base"], "zero");
    // --json says it too.
    let out = perceptron()
        .args([
            "train",
            "--json",
            "--backend",
            "reference",
            "--max-epochs",
            "1",
            "-o",
        ])
        .arg(dir.path().join("j.json"))
        .arg(&zero)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["index_base"], "zero");
    // Asked for, a file without index 0 is read zero-based: one feature more.
    let text = train(&[&one], &dir.path().join("a.json"), &["--zero-based"]);
    assert!(
        text.contains("indices     zero-based: as asked\n"),
        "{text}"
    );
    assert!(text.contains("270 rows x 14 features"), "{text}");
}

/// The silent misalignment: a test file of a zero-based model that holds no
/// index 0 must still be read zero-based (detected again, it would read
/// one-based, every feature shifted by one).
#[test]
fn predict_and_eval_read_libsvm_with_the_models_base() {
    let dir = tempfile::tempdir().unwrap();
    let (one, zero) = heart(dir.path());
    let (mo, mz) = (dir.path().join("o.json"), dir.path().join("z.json"));
    train(&[&one], &mo, &[]);
    train(&[&zero], &mz, &[]);
    // The rows whose first feature is absent: no index 0 in zero-based text.
    let keep = |text: String| -> String {
        text.lines()
            .filter(|l| !l.split_whitespace().nth(1).unwrap_or("").starts_with("1:"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let one_text = keep(std::fs::read_to_string(&one).unwrap());
    assert!(one_text.lines().count() > 0);
    let (to, tz) = (dir.path().join("to.svm"), dir.path().join("tz.svm"));
    std::fs::write(&to, &one_text).unwrap();
    std::fs::write(&tz, zero_based(&one_text)).unwrap();
    assert!(!std::fs::read_to_string(&tz).unwrap().contains(" 0:"));
    let scores = |model: &Path, data: &Path| {
        let out = perceptron()
            .args(["predict", "--scores"])
            .arg(model)
            .arg(data)
            .assert()
            .success();
        out.get_output().stdout.clone()
    };
    assert_eq!(scores(&mz, &tz), scores(&mo, &to));
    let eval = |model: &Path, data: &Path| {
        let out = perceptron()
            .args(["eval", "--json"])
            .arg(model)
            .arg(data)
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        v["accuracy"].clone()
    };
    assert_eq!(eval(&mz, &tz), eval(&mo, &to));
    // The user's word wins over the model's: the same rows one-based.
    assert_eq!(
        perceptron()
            .args(["predict", "--scores", "--one-based"])
            .arg(&mz)
            .arg(&to)
            .assert()
            .success()
            .get_output()
            .stdout,
        scores(&mo, &to)
    );
}

#[test]
fn index_0_where_indices_count_from_1_is_refused_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let (one, zero) = heart(dir.path());
    let mo = dir.path().join("o.json");
    train(&[&one], &mo, &[]);
    perceptron()
        .arg("predict")
        .arg(&mo)
        .arg(&zero)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "{}:1:4: feature index 0 in \"0:0.708333\": the model {} was trained on one-based \
             LIBSVM data, so indices are read from 1 (if this file counts features from 0, as \
             scikit-learn's dump_svmlight_file writes by default, pass --zero-based)",
            zero.display(),
            mo.display()
        )));
    perceptron()
        .args(["train", "--one-based", "-o"])
        .arg(dir.path().join("x.json"))
        .arg(&zero)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "{}:1:4: feature index 0 in \"0:0.708333\": indices are read one-based, from 1",
            zero.display()
        )))
        .stderr(predicate::str::contains("pass --zero-based"));
    assert!(!dir.path().join("x.json").exists());
    perceptron()
        .args(["info", "--zero-based", "--one-based"])
        .arg(&zero)
        .assert()
        .code(2);
}

/// Shards are one dataset: an index 0 in any makes them all zero-based,
/// as one file holding their rows would be.
#[test]
fn shards_are_read_with_one_base() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The second shard alone holds index 0.
    std::fs::write(d.join("a.svm"), "1 1:1 2:2\n-1 2:1 3:-1\n").unwrap();
    std::fs::write(d.join("b.svm"), "1 0:1 3:2\n-1 1:-2\n").unwrap();
    std::fs::write(
        d.join("one.svm"),
        "1 2:1 3:2\n-1 3:1 4:-1\n1 1:1 4:2\n-1 2:-2\n",
    )
    .unwrap();
    let (ms, mo) = (d.join("s.json"), d.join("o.json"));
    let text = train(&[&d.join("a.svm"), &d.join("b.svm")], &ms, &[]);
    assert!(
        text.contains(&format!(
            "indices     zero-based: index 0 appears on line 1 of {}\n",
            d.join("b.svm").display()
        )),
        "{text}"
    );
    train(&[&d.join("one.svm")], &mo, &[]);
    let (s, o) = (json(&ms), json(&mo));
    assert_eq!((&s["weights"], &s["bias"]), (&o["weights"], &o["bias"]));
    assert_eq!(s["training"]["data_layout"]["index_base"], "zero");
    perceptron()
        .args(["train", "--one-based", "-o"])
        .arg(d.join("x.json"))
        .arg(d.join("a.svm"))
        .arg(d.join("b.svm"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "{}:1:3: feature index 0 in \"0:1\"",
            d.join("b.svm").display()
        )));
}

#[test]
fn info_convert_and_online_agree_on_the_base() {
    let dir = tempfile::tempdir().unwrap();
    let (one, zero) = heart(dir.path());
    perceptron()
        .arg("info")
        .arg(&zero)
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "indices     zero-based: index 0 appears on line 1 of {}\n",
            zero.display()
        )));
    let out = perceptron()
        .args(["info", "--json"])
        .arg(&zero)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["index_base"], "zero");
    assert_eq!(v["features"], 13);
    // convert writes the standard, one-based, unless asked; and says so.
    let back = dir.path().join("back.svm");
    perceptron()
        .arg("convert")
        .arg(&zero)
        .arg(&back)
        .assert()
        .success()
        .stderr(predicate::str::contains("counts features from 1"));
    let read = |p: &Path| {
        perceptron()
            .args(["convert", "--precision", "f64"])
            .arg(p)
            .arg("-")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    assert_eq!(read(&back), read(&one));
    // --zero-based reads zero-based and writes so: the rows as they were.
    let again = dir.path().join("again.svm");
    perceptron()
        .args(["convert", "--zero-based"])
        .arg(&zero)
        .arg(&again)
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(&again)
            .unwrap()
            .starts_with("+1 0:0.708333 1:1 ")
    );
    // A stream cannot look ahead: one-based unless asked, index 0 refused.
    perceptron()
        .arg("online")
        .arg(&zero)
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("feature index 0")
                .and(predicate::str::contains("pass --zero-based")),
        );
    let m = dir.path().join("on.json");
    perceptron()
        .args(["online", "--zero-based", "-o"])
        .arg(&m)
        .arg(&zero)
        .assert()
        .success();
    assert_eq!(json(&m)["training"]["data_layout"]["index_base"], "zero");
}
