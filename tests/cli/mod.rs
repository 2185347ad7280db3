//! The `perceptron` binary end to end: exit codes, messages, files written,
//! and predictions checked against an independent computation from the
//! golden (scikit-learn) weights.

mod bad_input;
mod help;
mod outputs;
mod predict_eval;
mod reading;
mod train;

use std::path::Path;

use serde_json::Value;

use crate::common::{cmd, data_file, data_str};

fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn golden(name: &str) -> Value {
    let text = std::fs::read_to_string(data_file("golden_classic_perceptron.json")).unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    all[name].clone()
}

/// (weights, bias) of a golden entry.
fn golden_model(name: &str) -> (Vec<f64>, f64) {
    let g = golden(name);
    let w = g["weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    (w, g["bias"].as_f64().unwrap())
}

/// Rows of a LIBSVM file as (label text, [(0-based index, value)]), parsed
/// here independently of the crate.
fn read_svm(path: &Path) -> Vec<(String, Vec<(usize, f64)>)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut t = l.split_whitespace();
            let label = t.next().unwrap().to_owned();
            let feats = t
                .map(|tok| {
                    let (i, v) = tok.split_once(':').unwrap();
                    (i.parse::<usize>().unwrap() - 1, v.parse::<f64>().unwrap())
                })
                .collect();
            (label, feats)
        })
        .collect()
}

/// Rows of a label-first CSV file without header, parsed independently.
fn read_csv(path: &Path) -> Vec<(String, Vec<(usize, f64)>)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut t = l.split(',');
            let label = t.next().unwrap().to_owned();
            let feats = t
                .map(|v| v.trim().parse::<f64>().unwrap())
                .enumerate()
                .collect();
            (label, feats)
        })
        .collect()
}

/// s = w·x + b summed in index order, bias last: the textbook score in f64.
fn score(w: &[f64], b: f64, x: &[(usize, f64)]) -> f64 {
    let mut s = 0.0;
    for &(k, v) in x {
        s += w[k] * v;
    }
    s + b
}

/// The iris model file text (f64, 4 features), trained once by the binary.
fn iris_model_text() -> String {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        train_f64(dir.path(), "iris_setosa.csv", "100", "iris.json", 0);
        std::fs::read_to_string(dir.path().join("iris.json")).unwrap()
    })
    .clone()
}

/// Trains `data` in f64 for `epochs` (as the golden run did) into `out`.
fn train_f64(dir: &Path, data_file: &str, epochs: &str, out: &str, code: i32) {
    cmd(dir)
        .args(["train", &data_str(data_file), "--precision", "f64"])
        .args(["--max-epochs", epochs, "-o", out])
        .assert()
        .code(code);
}
