//! `perceptron cv` and `split --stratify`: the folds and the held-out part
//! follow their definition (src/train/folds.rs, rewritten here), each fold
//! scores what `train` + `eval` give on the same rows, and the summary is
//! the mean and population standard deviation of the folds.

use std::path::Path;

use serde_json::Value;

use crate::common::{cmd, data_file, data_str};
use perceptron::train::shuffle::permutation;

/// The lines of a label-first CSV file without header, and their labels.
fn rows_of(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| (l.split(',').next().unwrap().to_owned(), l.to_owned()))
        .collect()
}

/// Each row's class in order of first appearance.
fn strata(rows: &[(String, String)]) -> (Vec<usize>, usize) {
    let mut seen: Vec<String> = Vec::new();
    let ids = rows
        .iter()
        .map(|(label, _)| match seen.iter().position(|s| s == label) {
            Some(i) => i,
            None => {
                seen.push(label.clone());
                seen.len() - 1
            }
        })
        .collect();
    (ids, seen.len())
}

/// The folds by their definition: rows by class, then permutation order;
/// the j-th goes to fold j mod k.
fn folds(ids: &[usize], classes: usize, k: usize, seed: u64) -> Vec<usize> {
    let order = permutation(ids.len(), seed);
    let mut fold = vec![0; ids.len()];
    let mut j = 0;
    for c in 0..classes {
        for &i in order.iter().filter(|&&i| ids[i] == c) {
            fold[i] = j % k;
            j += 1;
        }
    }
    fold
}

fn json_out(args: &[&str], dir: &Path) -> Value {
    let out = cmd(dir).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn write_part(path: &Path, rows: &[(String, String)], keep: impl Fn(usize) -> bool) {
    let text: String = rows
        .iter()
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .map(|(_, (_, l))| format!("{l}\n"))
        .collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn each_fold_scores_what_train_and_eval_give_on_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    for (file, extra, ovr) in [
        (
            "breast_cancer.csv",
            vec!["--scale", "standard", "--max-epochs", "20"],
            false,
        ),
        (
            "digits.csv",
            vec!["--multiclass", "ovr", "--max-epochs", "5"],
            true,
        ),
    ] {
        let path = data_file(file);
        let (k, seed) = (4, 9);
        let mut args = vec![
            "cv",
            path.to_str().unwrap(),
            "--folds",
            "4",
            "--seed",
            "9",
            "--json",
        ];
        args.extend(&extra);
        let cv = json_out(&args, dir.path());
        let rows = rows_of(&path);
        let (ids, classes) = strata(&rows);
        let fold = folds(&ids, classes, k, seed);
        let per_fold = cv["per_fold"].as_array().unwrap();
        assert_eq!(per_fold.len(), k);
        let mut acc = Vec::new();
        for (j, f) in per_fold.iter().enumerate() {
            let (tr, te) = (dir.path().join("tr.csv"), dir.path().join("te.csv"));
            write_part(&tr, &rows, |i| fold[i] != j);
            write_part(&te, &rows, |i| fold[i] == j);
            let mut train = vec!["train", "tr.csv", "-o", "m.json"];
            train.extend(&extra);
            let status = cmd(dir.path()).args(&train).output().unwrap().status;
            assert!(matches!(status.code(), Some(0 | 3)));
            let eval = json_out(&["eval", "m.json", "te.csv", "--json"], dir.path());
            assert_eq!(f["fold"], j + 1);
            assert_eq!(f["test_rows"], eval["rows"], "{file} fold {}", j + 1);
            assert_eq!(f["accuracy"], eval["accuracy"], "{file} fold {}", j + 1);
            let f1 = if ovr {
                &eval["macro_f1"]
            } else {
                &eval["positive_class"]["f1"]
            };
            if ovr {
                // The mean over the classes, summed in another class order
                // (eval's follows the fold's training file): equal to rounding.
                let (a, b) = (f["f1"].as_f64().unwrap(), f1.as_f64().unwrap());
                assert!((a - b).abs() <= 1e-15, "{file} fold {}: {a} {b}", j + 1);
            } else {
                assert_eq!(&f["f1"], f1, "{file} fold {}", j + 1);
            }
            acc.push(f["accuracy"].as_f64().unwrap());
        }
        let mean = acc.iter().sum::<f64>() / k as f64;
        let std = (acc.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>() / k as f64).sqrt();
        assert_eq!(cv["accuracy"]["mean"].as_f64().unwrap(), mean);
        assert_eq!(cv["accuracy"]["std"].as_f64().unwrap(), std);
    }
}

#[test]
fn every_backend_gives_the_same_folds_and_the_text_summarises_them() {
    let dir = tempfile::tempdir().unwrap();
    let heart = data_file("heart_scale.svm");
    let h = heart.to_str().unwrap();
    let strip = |mut v: Value| {
        for f in v["per_fold"].as_array_mut().unwrap() {
            f.as_object_mut().unwrap().remove("backend");
        }
        v.as_object_mut().unwrap().remove("seconds");
        v
    };
    let args = [
        "cv",
        h,
        "--folds",
        "5",
        "--average",
        "--max-epochs",
        "8",
        "--json",
    ];
    let a = strip(json_out(
        &[&args[..], &["--backend", "reference"]].concat(),
        dir.path(),
    ));
    let b = strip(json_out(
        &[&args[..], &["--backend", "cpu"]].concat(),
        dir.path(),
    ));
    assert_eq!(a, b);
    let out = cmd(dir.path())
        .args(["cv", h, "--folds", "3", "--validation-fraction", "0.25"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("folds       3 (stratified by label, seed 0), trained in parallel"),
        "{text}"
    );
    assert!(text.contains("F1          0."), "{text}");
    assert!(text.contains("early stop"), "{text}");
    for (folds, says) in [("1", "--folds must be between 2"), ("271", "got 271")] {
        cmd(dir.path())
            .args(["cv", h, "--folds", folds])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}

#[test]
fn a_stratified_split_holds_out_each_labels_share() {
    let dir = tempfile::tempdir().unwrap();
    let digits = data_file("digits.csv");
    let out = cmd(dir.path())
        .args([
            "split",
            digits.to_str().unwrap(),
            "-o",
            "tr.csv",
            "--test",
            "te.csv",
        ])
        .args(["--stratify", "--test-fraction", "0.3", "--seed", "5"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let rows = rows_of(&digits);
    let (ids, classes) = strata(&rows);
    // The allocation by its definition: floors, then the largest remainders.
    let f = 0.3;
    let count: Vec<usize> = (0..classes)
        .map(|c| ids.iter().filter(|&&i| i == c).count())
        .collect();
    let total = (rows.len() as f64 * f).round() as usize;
    let quota: Vec<f64> = count.iter().map(|&n| n as f64 * f).collect();
    let mut take: Vec<usize> = quota.iter().map(|q| q.floor() as usize).collect();
    let mut by: Vec<usize> = (0..classes).collect();
    by.sort_by(|&a, &b| (quota[b] - quota[b].floor()).total_cmp(&(quota[a] - quota[a].floor())));
    let mut left = total - take.iter().sum::<usize>();
    for c in by {
        if left > 0 {
            take[c] += 1;
            left -= 1;
        }
    }
    let order = permutation(rows.len(), 5);
    let mut want = Vec::new();
    for &i in &order {
        if take[ids[i]] > 0 {
            take[ids[i]] -= 1;
            want.push(i);
        }
    }
    want.sort_unstable();
    let want: Vec<String> = want.iter().map(|&i| rows[i].1.clone()).collect();
    let got: Vec<String> = std::fs::read_to_string(dir.path().join("te.csv"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(got.len(), total);
    // Values are rewritten exactly; compare them as numbers.
    let nums = |l: &str| -> Vec<f64> { l.split(',').map(|v| v.parse().unwrap()).collect() };
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(nums(g), nums(w));
    }
    let train = std::fs::read_to_string(dir.path().join("tr.csv")).unwrap();
    assert_eq!(train.lines().count() + total, rows.len());
}

#[test]
fn cv_json_speaks_as_train_and_eval_do() {
    let dir = tempfile::tempdir().unwrap();
    let heart = data_str("heart_scale.svm");
    let cv = json_out(
        &["cv", &heart, "--folds", "3", "--max-epochs", "5", "--json"],
        dir.path(),
    );
    let train = json_out(
        &[
            "train",
            &heart,
            "--max-epochs",
            "5",
            "--json",
            "-o",
            "m.json",
        ],
        dir.path(),
    );
    let eval = json_out(&["eval", "m.json", &heart, "--json"], dir.path());
    assert_eq!(cv["format"], train["format"]);
    assert_eq!(cv["format"], "libsvm");
    for f in cv["per_fold"].as_array().unwrap() {
        // The confusion matrix names its classes, in eval's order.
        assert_eq!(f["confusion"]["labels"], eval["confusion"]["labels"]);
        assert_eq!(f["confusion"]["matrix"].as_array().unwrap().len(), 2);
        // The backend as train reports it: asked for, and the engines.
        assert_eq!(f["backend"]["requested"], train["backend"]["requested"]);
        assert_eq!(f["backend"]["engines"][0]["kind"], "cpu");
    }
    // Standard input is `<stdin>` here too, as in train's report.
    let piped = cmd(dir.path())
        .args(["cv", "-", "--folds", "2", "--max-epochs", "2", "--json"])
        .write_stdin(std::fs::read(data_file("iris_setosa.csv")).unwrap())
        .output()
        .unwrap();
    assert!(piped.status.success());
    let piped: Value = serde_json::from_slice(&piped.stdout).unwrap();
    assert_eq!(piped["data"], "<stdin>");
}

/// Memory and output grow with the rows, not with the classes squared:
/// beyond 20 classes a fold's confusion counts are its non-zero cells (as
/// `eval --json` writes them), and the folds' weights are checked against
/// the memory limit before training (8,000 classes used to take a
/// gigabyte, past `PERCEPTRON_MEMORY_LIMIT`, and 36 MB of JSON).
#[test]
fn many_classes_cost_what_the_rows_cost() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::new();
    for c in 0..30 {
        for r in 0..4 {
            text.push_str(&format!("c{c},{},{}\n", r as f64 * 0.5 + c as f64, c % 3));
        }
    }
    std::fs::write(d.join("k30.csv"), text).unwrap();
    let args = [
        "cv",
        "k30.csv",
        "--folds",
        "2",
        "--multiclass",
        "ovr",
        "--max-epochs",
        "2",
    ];
    let out = cmd(d).args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v["per_fold"][0]["confusion"];
    assert_eq!(c["classes"], 30);
    assert!(c.get("matrix").is_none(), "{c}");
    let rows: u64 = c["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cell| cell["rows"].as_u64().unwrap())
        .sum();
    assert_eq!(rows, v["per_fold"][0]["test_rows"].as_u64().unwrap());
    cmd(d)
        .args(args)
        .env("PERCEPTRON_MEMORY_LIMIT", "1500")
        .assert()
        .code(1)
        .stderr(predicates::str::contains("folds side by side"))
        .stderr(predicates::str::contains("PERCEPTRON_MEMORY_LIMIT"));
}

/// A cross-validation tells its watcher how far the folds are, from the
/// threads that train them: the most rows they can walk, rows as they walk
/// them (adding up to that most, each fold's rest added when it stops
/// early), and each fold once done. `perceptron cv` draws its bar from it.
#[test]
fn the_folds_progress_reaches_their_cap_once_each_fold_is_done() {
    use perceptron::data::{self, Dataset, LoadOptions};
    use perceptron::engine::backend::Backend;
    use perceptron::engine::gpu::GpuOptions;
    use perceptron::train::TrainParams;
    use perceptron::train::cv::{CvWatch, cross_validate};
    use std::sync::Mutex;

    #[derive(Default)]
    struct Record {
        started: Mutex<Vec<(usize, u64)>>,
        walked: Mutex<Vec<u64>>,
        done: Mutex<Vec<usize>>,
    }
    impl CvWatch for Record {
        fn started(&self, folds: usize, rows: u64) {
            self.started.lock().unwrap().push((folds, rows));
        }
        fn walked(&self, rows: u64) {
            self.walked.lock().unwrap().push(rows);
        }
        fn fold_done(&self, fold: usize) {
            self.done.lock().unwrap().push(fold);
        }
    }
    let path = data_file("breast_cancer.csv");
    let raw = data::load_raw::<f64>(&path, &LoadOptions::default()).unwrap();
    let data = Dataset::from_raw(raw, &path, None).unwrap();
    let params = TrainParams {
        max_epochs: 3,
        ..TrainParams::default()
    }
    .check()
    .unwrap();
    let record = Record::default();
    let gpu = GpuOptions::default();
    let summary = cross_validate(&data, &params, 3, 0, Backend::Cpu, &gpu, &record).unwrap();
    assert_eq!(summary.folds.len(), 3);
    let total = data.rows() as u64 * 2 * 3;
    assert_eq!(*record.started.lock().unwrap(), vec![(3, total)]);
    let walked = record.walked.lock().unwrap();
    assert_eq!(walked.iter().sum::<u64>(), total);
    assert!(
        walked.len() > 3,
        "progress while the folds train: {walked:?}"
    );
    let mut done = record.done.lock().unwrap().clone();
    done.sort();
    assert_eq!(done, vec![1, 2, 3]);
}
