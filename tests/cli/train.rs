//! The `train` command end to end: convergence, reports, exit codes and outputs kept on failure.

use perceptron::model::{self, AnyModel};
use predicates::prelude::*;
use serde_json::Value;

use super::*;
use crate::common::{cmd, data_str, demo_cmd};
use assert_cmd::prelude::OutputAssertExt;

#[test]
fn train_on_the_bundled_data_converges_and_reports_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let out = demo_cmd(dir.path()).arg("train").assert().success();
    let text = stdout_of(out.get_output());
    // The bundled digits 3 vs 5 are integer-valued: f32 equals the golden run.
    assert!(
        text.contains("epochs      6 of at most 1000: converged"),
        "{text}"
    );
    assert!(
        text.contains("M = 37 in total; per epoch: 19 10 4 2 2 0"),
        "{text}"
    );
    assert!(text.contains("(D/gamma)^2 = "), "{text}");
    assert!(
        text.contains("the convergence theorem's bound holds"),
        "{text}"
    );
    assert!(text.contains("accuracy    100.00% on the training data (365 of 365 rows)"));
    let AnyModel::F32(m) = model::load(&dir.path().join("model.json")).unwrap() else {
        panic!("default precision is f32")
    };
    let (gw, gb) = golden_model("digits_3v5");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let w: Vec<f64> = m.weights(0).iter().map(|&v| v as f64).collect();
    assert_eq!(bits(&w), bits(&gw));
    assert_eq!((m.bias(0) as f64).to_bits(), gb.to_bits());
    assert!(m.training.converged);
}

#[test]
fn train_json_is_one_object_with_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = cmd(dir.path())
        .args(["train", &data_str("iris_setosa.csv"), "--precision", "f64"])
        .args(["--json", "-o", "iris.json"])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    assert_eq!(text.lines().count(), 1, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    for key in [
        "data",
        "format",
        "rows",
        "features",
        "precision",
        "bias",
        "positive_label",
        "negative_label",
        "backend",
        "epochs",
        "max_epochs",
        "converged",
        "stop",
        "mistakes_per_epoch",
        "total_mistakes",
        "training_accuracy",
        "radius",
        "margin",
        "mistake_bound",
        "bound_holds",
        "model",
        "seconds",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {text}");
    }
    assert_eq!(v["format"], "csv");
    assert_eq!(
        (v["rows"].as_u64(), v["features"].as_u64()),
        (Some(150), Some(4))
    );
    assert_eq!(v["precision"], "f64");
    assert_eq!(v["converged"], true);
    assert_eq!(v["stop"], "converged");
    assert_eq!(v["epochs"], 4);
    assert_eq!(v["mistakes_per_epoch"], serde_json::json!([2, 2, 1, 0]));
    assert_eq!(v["total_mistakes"], 5);
    assert_eq!(v["training_accuracy"], 1.0);
    assert_eq!(v["bound_holds"], true);
    assert_eq!(
        (v["positive_label"].as_str(), v["negative_label"].as_str()),
        (Some("1"), Some("-1"))
    );
    assert_eq!(v["model"], "iris.json");
    assert!(v["mistake_bound"].as_f64().unwrap() >= 5.0);
    assert!(dir.path().join("iris.json").is_file());
}

#[test]
fn xor_does_not_converge_exits_3_when_required_and_still_saves_the_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("xor.csv"), "-1,0,0\n-1,1,1\n1,0,1\n1,1,0\n").unwrap();
    let out = cmd(dir.path())
        .args(["train", "xor.csv", "--max-epochs", "25", "-o", "xor.json"])
        .arg("--require-convergence")
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "perceptron: not converged: the data was not separated within 25 epochs",
        ))
        .stderr(predicate::str::contains(
            "the last model was saved to xor.json",
        ));
    assert!(stdout_of(out.get_output()).contains("NOT converged"));
    let AnyModel::F32(m) = model::load(&dir.path().join("xor.json")).unwrap() else {
        panic!("f32")
    };
    assert!(!m.training.converged);
    assert_eq!(m.training.epochs, 25);
    assert!(m.training.mistakes_per_epoch.iter().all(|&k| k > 0));
    // --json too: exit 3, `converged: false`, and the same sentence on
    // stderr (stdout holds the JSON object alone).
    let out = cmd(dir.path())
        .args([
            "train",
            "xor.csv",
            "--max-epochs",
            "3",
            "--json",
            "-o",
            "x2.json",
            "--require-convergence",
        ])
        .assert()
        .code(3)
        .stderr(
            "perceptron: not converged: the data was not separated within 3 epochs (the last \
             epoch made 4 mistakes); the last model was saved to x2.json. It may not be \
             linearly separable: --average (the averaged perceptron) or --scale standard \
             usually help; or try more --max-epochs, or check the labels.\n",
        );
    let text = stdout_of(out.get_output());
    assert_eq!(text.lines().count(), 1, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (v["converged"].as_bool(), v["stop"].as_str()),
        (Some(false), Some("max_epochs"))
    );
    // One-vs-rest likewise: "a" and "b" share a point and cannot be separated.
    std::fs::write(dir.path().join("abc.csv"), "a,0\nb,0\nc,1\n").unwrap();
    for json in [false, true] {
        let mut c = cmd(dir.path());
        c.args([
            "train",
            "abc.csv",
            "--multiclass",
            "ovr",
            "--max-epochs",
            "2",
            "-o",
            "o.json",
            "--require-convergence",
        ]);
        if json {
            c.arg("--json");
        }
        let out = c.assert().code(3);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert_eq!(
            stderr.lines().collect::<Vec<_>>(),
            [
                "perceptron: not converged: some class was not separated from the rest within 2 \
              epochs (the last epoch made 5 mistakes in all); the last model was saved to o.json. \
              --average (the averaged perceptron) or --scale standard usually help."
            ]
        );
        if json {
            let text = stdout_of(out.get_output());
            assert_eq!(text.lines().count(), 1, "{text}");
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["converged"], false);
        }
    }
}

#[test]
fn a_failing_run_leaves_existing_outputs_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let precious = b"{\"not\": \"touched\"}\n".to_vec();
    std::fs::write(dir.path().join("m.json"), &precious).unwrap();
    std::fs::write(dir.path().join("bad.csv"), "1,2\n-1,x\n").unwrap();
    cmd(dir.path())
        .args(["train", "bad.csv", "-o", "m.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("bad.csv:2:4: expected a number"));
    assert_eq!(std::fs::read(dir.path().join("m.json")).unwrap(), precious);
    // A bad option value, too.
    cmd(dir.path())
        .args([
            "train",
            &data_str("iris_setosa.csv"),
            "--max-epochs",
            "0",
            "-o",
            "m.json",
        ])
        .assert()
        .code(2);
    assert_eq!(std::fs::read(dir.path().join("m.json")).unwrap(), precious);
    // And predict's output.
    cmd(dir.path())
        .args(["train", &data_str("iris_setosa.csv"), "-o", "iris.json"])
        .assert()
        .success();
    std::fs::write(dir.path().join("p.txt"), &precious).unwrap();
    cmd(dir.path())
        .args([
            "predict",
            "iris.json",
            &data_str("breast_cancer.csv"),
            "-o",
            "p.txt",
        ])
        .assert()
        .code(1);
    assert_eq!(std::fs::read(dir.path().join("p.txt")).unwrap(), precious);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
}

/// `--shuffle` without `--seed` draws a seed, says it and records it in the
/// model (it was refused): `--seed` with that number repeats the run bit
/// for bit.
#[test]
fn shuffle_without_a_seed_draws_one_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = data_str("iris_setosa.csv");
    let out = cmd(d)
        .args(["train", &data, "--shuffle", "-o", "a.json"])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let seed: u64 = err
        .split("drew the seed ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no drawn seed in {err}"));
    let model: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("a.json")).unwrap()).unwrap();
    assert_eq!(model["training"]["seed"], seed, "{}", model["training"]);
    cmd(d)
        .args([
            "train",
            &data,
            "--shuffle",
            "--seed",
            &seed.to_string(),
            "-o",
            "b.json",
        ])
        .assert()
        .success();
    let weights = |f: &str| {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(d.join(f)).unwrap()).unwrap();
        (v["weights"].clone(), v["bias"].clone())
    };
    assert_eq!(weights("a.json"), weights("b.json"));
}

#[test]
fn the_epoch_cap_ends_with_status_0_and_a_note_unless_convergence_is_required() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_str("heart_scale.svm");
    let out = cmd(dir.path())
        .args(["train", &data, "--max-epochs", "3", "-o", "m.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("not converged"), "{stderr}");
    assert!(
        stderr.contains("--average"),
        "the note says what usually helps: {stderr}"
    );
    assert!(dir.path().join("m.json").exists());
    // A script can still chain on success, and ask for the old ending.
    let out = cmd(dir.path())
        .args(["train", &data, "--max-epochs", "3", "-o", "m2.json"])
        .arg("--require-convergence")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(
        dir.path().join("m2.json").exists(),
        "the model is still written"
    );
    // A run that converges is 0 either way.
    cmd(dir.path())
        .args([
            "train",
            &data_str("iris_setosa.csv"),
            "--require-convergence",
            "-o",
            "s.json",
        ])
        .assert()
        .success();
}

#[test]
fn the_time_line_reports_the_whole_run_and_its_parts() {
    let dir = tempfile::tempdir().unwrap();
    let digits = data_str("digits.csv");
    let out = cmd(dir.path())
        .args([
            "train",
            &digits,
            "--multiclass",
            "ovr",
            "--max-epochs",
            "3",
            "--json",
        ])
        .args(["-o", "d.json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (training, reading, start, all) = (
        v["seconds"].as_f64().unwrap(),
        v["reading_seconds"].as_f64().unwrap(),
        v["engine_start_seconds"].as_f64().unwrap(),
        v["run_seconds"].as_f64().unwrap(),
    );
    // The engine's start is apart from the loop's seconds, and in the
    // command's.
    assert!(
        all >= training + reading + start && reading > 0.0 && start >= 0.0,
        "{training} {reading} {start} {all}"
    );
    for extra in [&["--multiclass", "ovr"][..], &[]] {
        let out = cmd(dir.path())
            .args(["train", &data_str("iris_setosa.csv"), "-o", "i.json"])
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let time = text.lines().find(|l| l.starts_with("time")).unwrap();
        assert!(
            time.contains("s training") && time.contains("s in all (reading the data"),
            "{time}"
        );
    }
}

#[test]
fn perceptron_backend_is_read_in_any_case_and_a_bad_one_is_named_as_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let iris = data_str("iris_setosa.csv");
    cmd(dir.path())
        .env("PERCEPTRON_BACKEND", "CPU")
        .args(["train", &iris, "-o", "m.json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("backend     cpu"));
    cmd(dir.path())
        .env("PERCEPTRON_BACKEND", "tpu")
        .args(["train", &iris, "-o", "m.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the environment variable PERCEPTRON_BACKEND is \"tpu\", which is not a backend",
        ))
        .stderr(predicate::str::contains("--backend").not());
}
