//! `predict` and `eval` print the same bytes on every backend: classes come
//! from certified decisions, scores from the reference arithmetic.

use std::path::Path;

use crate::common::{cmd, data_str};

fn run(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = cmd(dir).args(args).output().unwrap();
    assert!(
        out.status.success() || out.status.code() == Some(3),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn predict_and_eval_are_identical_on_every_cpu_backend() {
    let dir = tempfile::tempdir().unwrap();
    for (file, precision) in [
        ("breast_cancer.csv", "f64"),
        ("breast_cancer.svm", "f32"),
        ("heart_scale.svm", "f32"),
        ("digits_3v5.csv", "f32"),
    ] {
        run(
            dir.path(),
            &[
                "train",
                &data_str(file),
                "--precision",
                precision,
                "--max-epochs",
                "30",
                "-o",
                "m.json",
            ],
        );
        for command in ["predict", "eval"] {
            let outputs: Vec<Vec<u8>> = ["reference", "cpu"]
                .iter()
                .map(|b| {
                    run(
                        dir.path(),
                        &[command, "m.json", &data_str(file), "--backend", b],
                    )
                })
                .collect();
            assert!(!outputs[0].is_empty());
            assert_eq!(outputs[0], outputs[1], "{command} {file}");
        }
    }
}
