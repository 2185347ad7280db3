//! `--ignore-columns`: columns that are not features (ids, dates, a pandas
//! index) are left out, the model records them, and `predict` and `eval`
//! leave out the same columns of data with the same header.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn perceptron() -> Command {
    Command::cargo_bin("perceptron").unwrap()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

const WITH_IDS: &str = "id,y,a,date,b\n7,1,1.5,2020-01-01,2\n8,-1,-1,2020-01-02,0.5\n\
                        9,1,2,2020-01-03,3\n10,-1,-2,2020-01-04,-1\n11,1,0.5,2020-01-05,1\n";
const PLAIN: &str = "y,a,b\n1,1.5,2\n-1,-1,0.5\n1,2,3\n-1,-2,-1\n1,0.5,1\n";

fn train(dir: &Path, data: &str, model: &str, extra: &[&str]) -> String {
    let out = perceptron()
        .current_dir(dir)
        .args([
            "train",
            data,
            "--backend",
            "reference",
            "--label-column",
            "y",
            "-o",
            model,
        ])
        .args(extra)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn ignored_columns_are_not_features_and_the_model_remembers_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("ids.csv"), WITH_IDS).unwrap();
    std::fs::write(d.join("plain.csv"), PLAIN).unwrap();
    let text = train(d, "ids.csv", "m.json", &["--ignore-columns", "id,date"]);
    assert!(
        text.starts_with(
            "data        ids.csv (CSV, header on line 1, ignoring \"id\", \"date\", 5 rows x 2 \
             features"
        ),
        "{text}"
    );
    train(d, "plain.csv", "p.json", &[]);
    let (m, p) = (json(&d.join("m.json")), json(&d.join("p.json")));
    assert_eq!((&m["weights"], &m["bias"]), (&p["weights"], &p["bias"]));
    let layout = &m["training"]["data_layout"];
    assert_eq!(layout["ignored_columns"], serde_json::json!(["id", "date"]));
    assert_eq!(layout["feature_names"], serde_json::json!(["a", "b"]));
    // The same positions from either end ignore the same columns.
    train(d, "ids.csv", "n.json", &["--ignore-columns", "1,-2"]);
    assert_eq!(json(&d.join("n.json"))["weights"], p["weights"]);

    // predict and eval leave the model's columns out of data with the same
    // header, also reordered, and of data that no longer has them.
    let scores = |data: &str| {
        perceptron()
            .current_dir(d)
            .args(["predict", "--scores", "m.json", data])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let want = perceptron()
        .current_dir(d)
        .args(["predict", "--scores", "p.json", "plain.csv"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(scores("ids.csv"), want);
    assert_eq!(scores("plain.csv"), want);
    let reordered = "date,b,id,a,y\n2020-01-01,2,7,1.5,1\n2020-01-02,0.5,8,-1,-1\n\
                     2020-01-03,3,9,2,1\n2020-01-04,-1,10,-2,-1\n2020-01-05,1,11,0.5,1\n";
    std::fs::write(d.join("re.csv"), reordered).unwrap();
    perceptron()
        .current_dir(d)
        .args(["eval", "m.json", "re.csv"])
        .assert()
        .success()
        .stdout(predicate::str::contains("accuracy"));
    assert_eq!(scores("re.csv"), want);
}

#[test]
fn a_name_no_column_has_is_an_error_listing_the_header() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ids.csv"), WITH_IDS).unwrap();
    perceptron()
        .current_dir(dir.path())
        .args([
            "train",
            "ids.csv",
            "--label-column",
            "y",
            "--ignore-columns",
            "id,when",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "ids.csv:1:1: --ignore-columns: no column named \"when\" in the header; its columns \
             are \"id\", \"y\", \"a\", \"date\", \"b\"",
        ));
    assert!(!dir.path().join("model.json").exists());
}

/// pandas' `to_csv()` index column: refused with the fix, and the fix reads
/// the file; predict then leaves the index out of the test file too.
#[test]
fn a_pandas_index_is_left_out_with_ignore_columns_1() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("pd.csv"), ",y,a\n0,1,2\n1,-1,-3\n2,1,4\n").unwrap();
    perceptron()
        .current_dir(d)
        .args(["train", "pd.csv", "--label-column", "y"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "leave it out with --ignore-columns 1",
        ));
    let text = train(d, "pd.csv", "m.json", &["--ignore-columns", "1"]);
    assert!(
        text.contains("ignoring column 1, 3 rows x 1 feature"),
        "{text}"
    );
    assert_eq!(
        json(&d.join("m.json"))["training"]["data_layout"]["ignored_columns"],
        serde_json::json!([1])
    );
    perceptron()
        .current_dir(d)
        .args(["predict", "m.json", "pd.csv"])
        .assert()
        .success()
        .stdout("1\n-1\n1\n");
}
