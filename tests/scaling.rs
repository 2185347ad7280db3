//! `--scale standard|maxabs`: the statistics saved in the model are the
//! sequential f64 sums of `src/data/scaling.rs`, the loop trains on the
//! scaled rows on every backend alike, and predict and eval apply the same
//! transform (checked against an independent computation here).

use std::path::Path;

use serde_json::Value;

use crate::common::{cmd, data_str, essence};

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// breast_cancer.csv parsed here as f32 (labels first), independently of
/// the crate.
fn breast_cancer_f32() -> (Vec<String>, Vec<Vec<f32>>) {
    let text = std::fs::read_to_string(crate::common::data_file("breast_cancer.csv")).unwrap();
    let mut labels = Vec::new();
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut fields = line.split(',');
        labels.push(fields.next().unwrap().to_owned());
        rows.push(fields.map(|v| v.trim().parse::<f32>().unwrap()).collect());
    }
    (labels, rows)
}

#[test]
fn standard_statistics_predictions_and_eval_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_str("breast_cancer.csv");
    cmd(dir.path())
        .args(["train", &data, "-o", "m.json", "--scale", "standard"])
        .args(["--max-epochs", "20", "--backend", "cpu"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains(
            "scaling     standard: x' = (x - mean) / std per feature",
        ));
    let model = json(&dir.path().join("m.json"));
    let mean = floats(&model["scaling"]["mean"]);
    let scale = floats(&model["scaling"]["scale"]);
    let (labels, rows) = breast_cancer_f32();
    let n = rows.len() as f64;
    for k in 0..mean.len() {
        let mut sum = 0.0f64;
        for r in &rows {
            sum += r[k] as f64;
        }
        let m = sum / n;
        let mut sq = 0.0f64;
        for r in &rows {
            let d = r[k] as f64 - m;
            sq += d * d;
        }
        assert_eq!(m.to_bits(), mean[k].to_bits(), "mean {k}");
        assert_eq!((sq / n).sqrt().to_bits(), scale[k].to_bits(), "scale {k}");
    }
    // Predictions and scores: the f32 textbook score of the scaled row.
    let w: Vec<f32> = floats(&model["weights"])
        .iter()
        .map(|&v| v as f32)
        .collect();
    let b = model["bias"].as_f64().unwrap() as f32;
    let out = cmd(dir.path())
        .args(["predict", "m.json", &data, "--scores"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // After the line naming the columns: one line per row.
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .map(str::to_owned)
        .collect();
    let mut correct = 0;
    for (i, r) in rows.iter().enumerate() {
        let mut s = 0.0f32;
        for k in 0..r.len() {
            let x = ((r[k] as f64 - mean[k]) / scale[k]) as f32;
            s += w[k] * x;
        }
        s += b;
        let class = if s > 0.0 { "1" } else { "-1" };
        let (got, score) = lines[i].split_once('\t').unwrap();
        assert_eq!(got, class, "row {}", i + 1);
        assert_eq!(
            score.parse::<f32>().unwrap().to_bits(),
            s.to_bits(),
            "row {}",
            i + 1
        );
        correct += (class == labels[i]) as usize;
    }
    let plain = cmd(dir.path())
        .args(["predict", "m.json", &data, "--backend", "cpu"])
        .output()
        .unwrap();
    let plain = String::from_utf8(plain.stdout).unwrap();
    assert!(
        plain
            .lines()
            .zip(&lines)
            .all(|(a, b)| b.starts_with(&format!("{a}\t")))
    );
    let eval = cmd(dir.path())
        .args(["eval", "m.json", &data, "--json"])
        .output()
        .unwrap();
    let eval: Value = serde_json::from_slice(&eval.stdout).unwrap();
    assert_eq!(eval["correct"].as_u64(), Some(correct as u64));
    let trained = model["training"]["training_accuracy"].as_f64().unwrap();
    assert_eq!(eval["accuracy"].as_f64().unwrap(), trained);
    // Scaling helps: unscaled, 20 epochs leave far more rows wrong.
    assert!(trained > 0.97, "{trained}");
}

#[test]
fn every_backend_trains_the_same_scaled_model() {
    let dir = tempfile::tempdir().unwrap();
    for (data, scale) in [
        ("breast_cancer.csv", "standard"),
        ("breast_cancer.csv", "maxabs"),
        ("heart_scale.svm", "maxabs"),
    ] {
        let mut models = Vec::new();
        for backend in ["reference", "cpu"] {
            for passes in ["adaptive", "always", "windows"] {
                let name = format!("{backend}-{passes}.json");
                cmd(dir.path())
                    .args(["train", &data_str(data), "-o", &name, "--scale", scale])
                    .args([
                        "--max-epochs",
                        "15",
                        "--backend",
                        backend,
                        "--passes",
                        passes,
                    ])
                    .args(["--shuffle", "--seed", "3"])
                    .assert()
                    .code(0);
                models.push(essence(&dir.path().join(&name)));
            }
        }
        assert!(
            models.windows(2).all(|w| w[0] == w[1]),
            "{data} --scale {scale}: the backends differ"
        );
    }
    // Sparse data stays sparse under maxabs, and refuses standard.
    cmd(dir.path())
        .args(["train", &data_str("heart_scale.svm"), "--scale", "maxabs"])
        .args(["--max-epochs", "2", "-o", "h.json"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("sparse, f32"));
    let h = json(&dir.path().join("h.json"));
    assert!(h["scaling"].get("mean").is_none());
    cmd(dir.path())
        .args(["train", &data_str("heart_scale.svm"), "--scale", "standard"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--scale standard would make sparse data dense (it subtracts each feature's mean); \
             use --scale maxabs",
        ));
}

#[test]
fn resume_init_and_online_respect_the_scaling() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_str("breast_cancer.csv");
    let train = |extra: &[&str]| {
        let mut c = cmd(dir.path());
        c.args(["train", &data, "--max-epochs", "3"]).args(extra);
        c
    };
    train(&[
        "-o",
        "a.json",
        "--scale",
        "standard",
        "--checkpoint",
        "ck.json",
    ])
    .assert()
    .code(0);
    // A resumed run adopts the scaling; another one is refused.
    train(&["-o", "b.json", "--resume", "ck.json"])
        .assert()
        .code(0);
    assert_eq!(
        essence(&dir.path().join("a.json")),
        essence(&dir.path().join("b.json"))
    );
    assert_eq!(
        json(&dir.path().join("a.json"))["scaling"],
        json(&dir.path().join("b.json"))["scaling"]
    );
    train(&["--resume", "ck.json", "--scale", "maxabs"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--scale was standard, now maxabs",
        ));
    // A warm start reads features as its model does.
    train(&["--init", "a.json"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--init a.json reads features scaled by --scale standard; pass --scale standard",
        ));
    train(&["-o", "warm.json", "--init", "a.json", "--scale", "standard"])
        .assert()
        .code(0);
    let a = json(&dir.path().join("a.json"));
    assert_eq!(json(&dir.path().join("warm.json"))["scaling"], a["scaling"]);
    cmd(dir.path())
        .args(["online", &data, "--init", "a.json"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("does not scale them"));
    // Unscaled models load and predict as before: no scaling field at all.
    train(&["-o", "plain.json"]).assert().code(0);
    assert!(
        json(&dir.path().join("plain.json"))
            .get("scaling")
            .is_none()
    );
}
