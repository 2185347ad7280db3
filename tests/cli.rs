//! The `perceptron` binary end to end: exit codes, messages, files written,
//! and predictions checked against an independent computation from the
//! golden (scikit-learn) weights.

use std::io::Write;
use std::path::Path;

use perceptron::model::{self, AnyModel};
use predicates::prelude::*;
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

// ---------------------------------------------------------------- train

#[test]
fn train_on_the_bundled_data_converges_and_reports_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let out = cmd(dir.path()).arg("train").assert().success();
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
fn xor_does_not_converge_exits_3_and_still_saves_the_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("xor.csv"), "-1,0,0\n-1,1,1\n1,0,1\n1,1,0\n").unwrap();
    let out = cmd(dir.path())
        .args(["train", "xor.csv", "--max-epochs", "25", "-o", "xor.json"])
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
        ])
        .assert()
        .code(3)
        .stderr(
            "perceptron: not converged: the data was not separated within 3 epochs (the last \
             epoch made 4 mistakes); the last model was saved to x2.json. It may not be \
             linearly separable; try more --max-epochs, or check the labels.\n",
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
              epochs (the last epoch made 5 mistakes in all); the last model was saved to o.json"
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

// ---------------------------------------------------------------- predict and eval

/// Trains `data` in f64 for `epochs` (as the golden run did) into `out`.
fn train_f64(dir: &Path, data_file: &str, epochs: &str, out: &str, code: i32) {
    cmd(dir)
        .args(["train", &data_str(data_file), "--precision", "f64"])
        .args(["--max-epochs", epochs, "-o", out])
        .assert()
        .code(code);
}

#[test]
fn predict_prints_the_golden_models_labels_and_scores() {
    let dir = tempfile::tempdir().unwrap();
    // heart_scale does not converge in 30 epochs (exit 3); the model is the
    // golden one, so predictions can be computed from the golden weights.
    train_f64(dir.path(), "heart_scale.svm", "30", "heart.json", 3);
    let (w, b) = golden_model("heart_scale");
    let rows = read_svm(&data_file("heart_scale.svm"));

    let out = cmd(dir.path())
        .args([
            "predict",
            "heart.json",
            &data_str("heart_scale.svm"),
            "--scores",
        ])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    // A first line names the columns: the score is the +1 class's.
    let (header, text) = text.split_once('\n').unwrap();
    assert_eq!(header, "predicted\t+1");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 270);
    let mut wrong = 0;
    for (line, (truth, x)) in lines.iter().zip(&rows) {
        let s = score(&w, b, x);
        let want = if s > 0.0 { "+1" } else { "-1" };
        let (label, printed) = line.split_once('\t').unwrap();
        assert_eq!(label, want, "{line}");
        assert_eq!(
            printed.parse::<f64>().unwrap().to_bits(),
            s.to_bits(),
            "{line}"
        );
        assert_eq!(printed, format!("{s}"), "shortest round-trip form");
        wrong += (label != truth) as usize;
    }
    assert!(wrong > 0, "heart_scale is not separable");

    // Without --scores: the labels alone; with -o: the same bytes in a file.
    let plain = cmd(dir.path())
        .args(["predict", "heart.json", &data_str("heart_scale.svm")])
        .assert()
        .success();
    let labels: Vec<&str> = lines
        .iter()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(stdout_of(plain.get_output()), labels.join("\n") + "\n");
    cmd(dir.path())
        .args([
            "predict",
            "heart.json",
            &data_str("heart_scale.svm"),
            "-o",
            "p.txt",
        ])
        .assert()
        .success()
        .stdout("");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("p.txt")).unwrap(),
        labels.join("\n") + "\n"
    );
}

#[test]
fn predict_reads_every_format_and_fewer_columns() {
    let dir = tempfile::tempdir().unwrap();
    train_f64(dir.path(), "iris_setosa.csv", "100", "iris.json", 0);
    let (w, b) = golden_model("iris_setosa");
    let rows = read_csv(&data_file("iris_setosa.csv"));
    let want: String = std::iter::once("predicted\t1\n".to_owned())
        .chain(rows.iter().map(|(_, x)| {
            let s = score(&w, b, x);
            format!("{}\t{s}\n", if s > 0.0 { "1" } else { "-1" })
        }))
        .collect();
    for file in ["iris_setosa.csv", "iris_setosa.svm", "iris_setosa.csv.gz"] {
        let out = cmd(dir.path())
            .args(["predict", "iris.json", &data_str(file), "--scores"])
            .assert()
            .success();
        assert_eq!(stdout_of(out.get_output()), want, "{file}");
    }
    // The model separates its training data: predictions are the labels.
    let truth: String = rows.iter().map(|(y, _)| format!("{y}\n")).collect();
    cmd(dir.path())
        .args(["predict", "iris.json", &data_str("iris_setosa.csv")])
        .assert()
        .success()
        .stdout(truth);
    // Two features of four (LIBSVM; CSV must have the model's columns), and
    // labels the model never saw: fine.
    std::fs::write(
        dir.path().join("short.svm"),
        "7 1:1.5 2:2\n8 1:0 2:0\n9 1:-3 2:0.25\n",
    )
    .unwrap();
    let want: String = std::iter::once("predicted\t1\n".to_owned())
        .chain([[1.5, 2.0], [0.0, 0.0], [-3.0, 0.25]].iter().map(|x| {
            let s = w[0] * x[0] + w[1] * x[1] + b;
            format!("{}\t{s}\n", if s > 0.0 { "1" } else { "-1" })
        }))
        .collect();
    cmd(dir.path())
        .args(["predict", "iris.json", "short.svm", "--scores"])
        .assert()
        .success()
        .stdout(want);
}

#[test]
fn predict_reads_unlabeled_rows_with_unlabeled() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("iris.json"), iris_model_text()).unwrap();
    let labeled = cmd(dir.path())
        .args([
            "predict",
            "iris.json",
            &data_str("iris_setosa.csv"),
            "--scores",
        ])
        .assert()
        .success()
        .stderr("");
    let want = stdout_of(labeled.get_output());
    assert_eq!(want.lines().count(), 1 + 150);
    // The same rows without their label column, with and without a header.
    let rows: Vec<String> = std::fs::read_to_string(data_file("iris_setosa.csv"))
        .unwrap()
        .lines()
        .map(|l| l.split_once(',').unwrap().1.to_owned())
        .collect();
    let bare = rows.join("\n") + "\n";
    std::fs::write(dir.path().join("u.csv"), &bare).unwrap();
    std::fs::write(dir.path().join("h.csv"), format!("a,b,c,d\n{bare}")).unwrap();
    for file in ["u.csv", "h.csv"] {
        cmd(dir.path())
            .args(["predict", "iris.json", file, "--unlabeled", "--scores"])
            .assert()
            .success()
            .stderr("")
            .stdout(want.clone());
    }
    // LIBSVM: a line may start with a feature, or with a label that is ignored.
    let svm: Vec<String> = std::fs::read_to_string(data_file("iris_setosa.svm"))
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let (label, rest) = l.split_once(' ').unwrap();
            if i % 2 == 0 {
                rest.to_owned()
            } else {
                format!("{label} {rest}")
            }
        })
        .collect();
    std::fs::write(dir.path().join("u.svm"), svm.join("\n") + "\n").unwrap();
    cmd(dir.path())
        .args(["predict", "iris.json", "u.svm", "--unlabeled", "--scores"])
        .assert()
        .success()
        .stdout(want.clone());
    // Read as labeled, u.csv would lose its first feature: an error that
    // says to pass --unlabeled.
    let out = cmd(dir.path())
        .args(["predict", "iris.json", "u.csv"])
        .assert()
        .code(1);
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stderr),
        "perceptron: error: u.csv does not fit the model iris.json: the model has 4 features \
         but the data has 3 feature columns; CSV data must have the model's columns; the file \
         has as many columns as the model has features: if it has no label column, pass \
         --unlabeled\n"
    );
    // The help says so.
    let out = cmd(dir.path())
        .args(["predict", "--help"])
        .assert()
        .success();
    let help = stdout_of(out.get_output());
    assert!(help.contains("--unlabeled"), "{help}");
    assert!(help.contains("With --unlabeled the rows"), "{help}");
    assert!(!help.contains("The data must be in the layout"), "{help}");
}

#[test]
fn predict_and_eval_read_the_label_column_the_model_was_trained_with() {
    let dir = tempfile::tempdir().unwrap();
    let rows = "1,2,x\n3,1,y\n-1,4,x\n4,0,y\n0,3,x\n";
    std::fs::write(dir.path().join("named.csv"), format!("a,b,label\n{rows}")).unwrap();
    std::fs::write(dir.path().join("bare.csv"), rows).unwrap();
    let run = |args: &[&str]| {
        let out = cmd(dir.path()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        (
            stdout_of(&out),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // By name, the label last.
    run(&[
        "train",
        "named.csv",
        "--label-column",
        "label",
        "-o",
        "name.json",
    ]);
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("name.json")).unwrap()).unwrap();
    assert_eq!(
        v["training"]["data_layout"],
        serde_json::json!({
            "format": "csv", "label_column": "label", "header": true, "delimiter": ",",
            "feature_names": ["a", "b"]
        })
    );
    let told = run(&[
        "predict",
        "name.json",
        "named.csv",
        "--scores",
        "--label-column",
        "label",
    ]);
    assert_eq!(told.0.lines().collect::<Vec<_>>().len(), 1 + 5);
    assert!(told.0.starts_with("predicted\ty\nx\t"), "{}", told.0);
    assert_eq!(told.1, "");
    let untold = run(&["predict", "name.json", "named.csv", "--scores"]);
    assert_eq!(untold.0, told.0);
    assert_eq!(
        untold.1,
        "perceptron: note: the label of named.csv is read from column 3 (\"label\"), as in \
         the training data of name.json; pass --label-column to read another\n"
    );
    let told = run(&[
        "eval",
        "name.json",
        "named.csv",
        "--json",
        "--label-column",
        "label",
    ]);
    let untold = run(&["eval", "name.json", "named.csv", "--json"]);
    assert_eq!(untold.0, told.0);
    let v: Value = serde_json::from_str(&untold.0).unwrap();
    assert_eq!(
        (v["rows"].as_u64(), v["accuracy"].as_f64()),
        (Some(5), Some(1.0))
    );
    assert_eq!(untold.1.lines().count(), 1, "{}", untold.1);

    // Online models too.
    run(&[
        "online",
        "named.csv",
        "--label-column",
        "label",
        "--positive",
        "y",
        "-o",
        "on.json",
    ]);
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("on.json")).unwrap()).unwrap();
    assert_eq!(v["training"]["data_layout"]["label_column"], "label");
    assert!(
        run(&["predict", "on.json", "named.csv"])
            .1
            .contains("from column 3 (\"label\")")
    );

    // By number, without a header.
    run(&["train", "bare.csv", "--label-column", "3", "-o", "num.json"]);
    let told = run(&["predict", "num.json", "bare.csv", "--label-column", "3"]);
    let untold = run(&["predict", "num.json", "bare.csv"]);
    assert_eq!(
        (untold.0.as_str(), told.0.as_str()),
        ("x\ny\nx\ny\nx\n", "x\ny\nx\ny\nx\n")
    );
    assert_eq!(
        untold.1,
        "perceptron: note: the label of bare.csv is read from column 3, as in the training \
         data of num.json; pass --label-column to read another\n"
    );
    // A label in the first column says nothing.
    run(&["train", &data_str("iris_setosa.csv"), "-o", "iris.json"]);
    assert_eq!(
        run(&["predict", "iris.json", &data_str("iris_setosa.csv")]).1,
        ""
    );

    // One-vs-rest models remember it too.
    std::fs::write(
        dir.path().join("three.csv"),
        "a,b,class\n0,0,p\n5,0,q\n0,5,r\n6,1,q\n1,6,r\n",
    )
    .unwrap();
    run(&[
        "train",
        "three.csv",
        "--label-column",
        "class",
        "--multiclass",
        "ovr",
        "-o",
        "ovr.json",
    ]);
    let told = run(&[
        "predict",
        "ovr.json",
        "three.csv",
        "--label-column",
        "class",
    ]);
    let untold = run(&["predict", "ovr.json", "three.csv"]);
    assert_eq!(untold.0, told.0);
    assert_eq!(untold.0, "p\nq\nr\nq\nr\n");
    assert!(
        untold.1.contains("from column 3 (\"class\")"),
        "{}",
        untold.1
    );
    let untold = run(&["eval", "ovr.json", "three.csv", "--json"]);
    let v: Value = serde_json::from_str(&untold.0).unwrap();
    assert_eq!(v["accuracy"], 1.0);

    // A model file from before the layout was recorded reads column 1, as then.
    let text = std::fs::read_to_string(dir.path().join("num.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let mut old = v.clone();
    old["training"]
        .as_object_mut()
        .unwrap()
        .remove("data_layout");
    std::fs::write(dir.path().join("old.json"), old.to_string()).unwrap();
    cmd(dir.path())
        .args(["predict", "old.json", "bare.csv"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "perceptron: error: bare.csv:1:5: expected a number in column 3, found \"x\" (",
        ));
}

#[test]
fn predict_in_f32_uses_f32_arithmetic() {
    let dir = tempfile::tempdir().unwrap();
    cmd(dir.path())
        .args(["train", &data_str("digits_0v1.csv"), "-o", "d.json"])
        .assert()
        .success();
    let (w, b) = golden_model("digits_0v1");
    let rows = read_csv(&data_file("digits_0v1.csv"));
    let out = cmd(dir.path())
        .args(["predict", "d.json", &data_str("digits_0v1.svm"), "--scores"])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    let text = text.strip_prefix("predicted\t1\n").unwrap();
    for (line, (y, x)) in text.lines().zip(&rows) {
        let mut s = 0.0f32;
        for &(k, v) in x {
            s += w[k] as f32 * v as f32;
        }
        s += b as f32;
        assert_eq!(line, format!("{y}\t{s}"));
    }
    assert_eq!(text.lines().count(), 360);
}

#[test]
fn eval_reports_accuracy_confusion_and_f1() {
    let dir = tempfile::tempdir().unwrap();
    train_f64(dir.path(), "heart_scale.svm", "30", "heart.json", 3);
    let (w, b) = golden_model("heart_scale");
    // [true][predicted], 0 = "-1", 1 = "+1".
    let mut m = [[0u64; 2]; 2];
    for (truth, x) in read_svm(&data_file("heart_scale.svm")) {
        let p = (score(&w, b, &x) > 0.0) as usize;
        m[(truth == "+1") as usize][p] += 1;
    }
    let (tn, fp, fn_, tp) = (m[0][0], m[0][1], m[1][0], m[1][1]);
    assert_eq!(tn + fp + fn_ + tp, 270);

    let out = cmd(dir.path())
        .args(["eval", "heart.json", &data_str("heart_scale.svm"), "--json"])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    assert_eq!(text.lines().count(), 1);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["rows"], 270);
    assert_eq!(v["correct"], tp + tn);
    assert_eq!(v["accuracy"].as_f64().unwrap(), (tp + tn) as f64 / 270.0);
    assert_eq!(v["confusion"]["labels"], serde_json::json!(["-1", "+1"]));
    assert_eq!(v["confusion"]["matrix"], serde_json::json!(m));
    assert_eq!(
        (v["true_positives"].as_u64(), v["false_positives"].as_u64()),
        (Some(tp), Some(fp))
    );
    let pc = &v["positive_class"];
    assert_eq!(pc["label"], "+1");
    let (precision, recall) = (tp as f64 / (tp + fp) as f64, tp as f64 / (tp + fn_) as f64);
    assert_eq!(pc["precision"].as_f64().unwrap(), precision);
    assert_eq!(pc["recall"].as_f64().unwrap(), recall);
    let f1 = pc["f1"].as_f64().unwrap();
    assert!((f1 - 2.0 * precision * recall / (precision + recall)).abs() < 1e-15);

    let out = cmd(dir.path())
        .args(["eval", "heart.json", &data_str("heart_scale.svm")])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    let acc = format!(
        "{:.2}% ({} of 270 rows correct)",
        100.0 * (tp + tn) as f64 / 270.0,
        tp + tn
    );
    assert!(text.contains(&acc), "{text}");
    assert!(
        text.contains("rows: true label, columns: predicted label"),
        "{text}"
    );
    let row = |label: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("\"{label}\" ")))
            .unwrap_or_else(|| panic!("no row {label}: {text}"));
        line.split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(
        row("-1"),
        ["\"-1\"".to_owned(), tn.to_string(), fp.to_string()]
    );
    assert_eq!(
        row("+1"),
        ["\"+1\"".to_owned(), fn_.to_string(), tp.to_string()]
    );
    assert!(
        text.contains(&format!("precision   {precision:.4}")),
        "{text}"
    );
    assert!(text.contains(&format!("recall      {recall:.4}")), "{text}");
}

#[test]
fn eval_of_a_separating_model_is_perfect_and_one_vs_rest_works() {
    let dir = tempfile::tempdir().unwrap();
    train_f64(dir.path(), "iris_setosa.csv", "100", "iris.json", 0);
    let out = cmd(dir.path())
        .args([
            "eval",
            "iris.json",
            &data_str("iris_setosa.csv.gz"),
            "--json",
        ])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
    assert_eq!(v["accuracy"], 1.0);
    assert_eq!(
        v["confusion"]["matrix"],
        serde_json::json!([[100, 0], [0, 50]])
    );
    assert_eq!(v["positive_class"]["f1"], 1.0);

    // One-vs-rest: every value but the +1 label is -1, so unseen labels are fine.
    std::fs::write(
        dir.path().join("abc.csv"),
        "a,0,0\nb,1,0\nc,0,1\nb,2,1\nd,0,2\n",
    )
    .unwrap();
    cmd(dir.path())
        .args([
            "train",
            "abc.csv",
            "--positive",
            "b",
            "-o",
            "ovr.json",
            "--max-epochs",
            "100",
        ])
        .assert()
        .success();
    std::fs::write(dir.path().join("new.csv"), "b,1,0\nzzz,0,1\n").unwrap();
    let out = cmd(dir.path())
        .args(["eval", "ovr.json", "new.csv", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout_of(out.get_output())).unwrap();
    assert_eq!(v["confusion"]["labels"], serde_json::json!(["rest", "b"]));
    assert_eq!(
        v["confusion"]["matrix"],
        serde_json::json!([[1, 0], [0, 1]])
    );
    cmd(dir.path())
        .args(["predict", "ovr.json", "new.csv"])
        .assert()
        .success()
        .stdout("b\nrest\n");
}

// ---------------------------------------------------------------- info

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
        .code(3)
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

// ---------------------------------------------------------------- help

#[test]
fn every_command_has_examples_in_its_help() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["train", "predict", "eval", "info"] {
        for flag in ["--help", "-h"] {
            cmd(dir.path())
                .args([sub, flag])
                .assert()
                .success()
                .stdout(predicate::str::contains("Examples:"))
                .stdout(predicate::str::contains(format!("perceptron {sub} ")))
                .stdout(predicate::str::contains("Exit status:"));
        }
    }
    let out = cmd(dir.path()).arg("--help").assert().success();
    let text = stdout_of(out.get_output());
    for sub in ["train", "predict", "eval", "info"] {
        assert!(text.contains(&format!("perceptron {sub}")), "{text}");
    }
}

// ---------------------------------------------------------------- bad input

/// What a bad-input case creates in its directory before running.
enum Make {
    Text(&'static str, &'static str),
    Bytes(&'static str, Vec<u8>),
    Dir(&'static str),
    /// A model trained on iris_setosa (4 features), f64.
    IrisModel(&'static str),
    /// The iris model with one text replacement.
    EditedModel(&'static str, &'static str, &'static str),
    /// A file whose second line is over the 64 MiB line limit, written by
    /// the test rather than held in the table.
    LongLine(&'static str),
    /// The checkpoint of one f64 epoch on iris_setosa, made with
    /// `--max-epochs 1`.
    IrisCheckpoint(&'static str),
    /// That checkpoint with text replacements.
    EditedCheckpoint(&'static str, &'static [(&'static str, &'static str)]),
    /// An environment variable for the command.
    Env(&'static str, &'static str),
}

struct Case {
    name: &'static str,
    args: &'static [&'static str],
    make: Vec<Make>,
    code: i32,
    /// Fragments stderr must contain. `@data/` expands to the data folder.
    stderr: &'static [&'static str],
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn truncated_gzip() -> Vec<u8> {
    let text: Vec<u8> = (0..20000)
        .flat_map(|i| format!("{},{}.25,{}\n", i % 2, i, i * 7).into_bytes())
        .collect();
    let gz = gzip(&text);
    gz[..gz.len() / 2].to_vec()
}

/// A one-vs-rest model file whose first and third classes are one label.
const OVR_TWICE: &str = r#"{
  "format": "perceptron-model", "format_version": 1, "kind": "one-vs-rest",
  "created_by": "hand", "precision": "f64", "feature_count": 1,
  "classes": ["1", "-1", "1.0"], "weights": [[1.0], [-1.0], [0.5]], "bias": [0.0, 0.0, 0.0],
  "has_bias": true,
  "training": {
    "epochs": 1, "max_epochs": 1, "mistakes_per_epoch": [0], "total_mistakes": 0,
    "converged": true, "radius": 1.0, "margin": null, "mistake_bound": null,
    "backend": "reference", "seed": null, "data": "x.csv", "rows": 3,
    "training_accuracy": 1.0, "seconds": 0.0
  },
  "class_training": [
    {"mistakes_per_epoch": [0], "total_mistakes": 0, "converged_epoch": 1, "margin": null, "mistake_bound": null},
    {"mistakes_per_epoch": [0], "total_mistakes": 0, "converged_epoch": 1, "margin": null, "mistake_bound": null},
    {"mistakes_per_epoch": [0], "total_mistakes": 0, "converged_epoch": 1, "margin": null, "mistake_bound": null}
  ]
}"#;

fn cases() -> Vec<Case> {
    use Make::*;
    vec![
        Case {
            name: "predictions over the model",
            args: &["predict", "m.json", "@data/iris_setosa.csv", "-o", "m.json"],
            make: vec![IrisModel("m.json")],
            code: 2,
            stderr: &["the output m.json is also an input of this command (m.json)"],
        },
        Case {
            name: "a model over its training data",
            args: &["train", "d.csv", "-o", "d.csv"],
            make: vec![Text("d.csv", "1,2\n-1,-3\n")],
            code: 2,
            stderr: &["writing it would destroy the input"],
        },
        Case {
            name: "checkpoints every 0 epochs",
            args: &[
                "train",
                "@data/iris_setosa.csv",
                "--checkpoint",
                "c.json",
                "--checkpoint-every",
                "0",
            ],
            make: vec![],
            code: 2,
            stderr: &["--checkpoint-every must be at least 1"],
        },
        Case {
            name: "ragged CSV row",
            args: &["train", "r.csv"],
            make: vec![Text("r.csv", "1,2,3\n-1,4,5\n1,6\n")],
            code: 1,
            stderr: &["r.csv:3:4: expected 3 fields separated by `,` (as on line 1), found 2"],
        },
        Case {
            name: "extra field",
            args: &["train", "r.csv"],
            make: vec![Text("r.csv", "y,a,b\n1,2,3\n-1,4,5,6\n")],
            code: 1,
            stderr: &[
                "r.csv:3:8: expected 3 fields",
                "(as in the header on line 1), found 4",
            ],
        },
        Case {
            name: "non-numeric field",
            args: &["train", "n.csv"],
            make: vec![Text("n.csv", "1,2,3\n-1,4,abc\n")],
            code: 1,
            stderr: &["n.csv:2:6: expected a number in column 3, found \"abc\""],
        },
        Case {
            // Not a header: the other fields of line 1 are numbers.
            name: "one text field in line 1",
            args: &["train", "n.csv"],
            make: vec![Text("n.csv", "1,2,abc\n-1,4,5\n1,6,7\n")],
            code: 1,
            stderr: &[
                "n.csv:1:5: expected a number in column 3, found \"abc\" (line 1 was read as data because other fields on it are numbers; if it is a header, pass --header)",
            ],
        },
        Case {
            name: "one text field in line 1, online",
            args: &["online", "n.csv"],
            make: vec![Text("n.csv", "1,2,abc\n-1,4,5\n1,6,7\n")],
            code: 1,
            stderr: &["n.csv:1:5: expected a number in column 3, found \"abc\""],
        },
        Case {
            name: "a CSV file named .svm",
            args: &["train", "x.svm"],
            make: vec![Text("x.svm", "1,2\n-1,3\n")],
            code: 1,
            stderr: &[
                "x.svm:1:1: expected a numeric label, found \"1,2\" (is this a CSV file? pass --format csv)",
            ],
        },
        Case {
            name: "a CSV file read with --format libsvm",
            args: &["info", "@data/iris_setosa.csv", "--format", "libsvm"],
            make: vec![],
            code: 1,
            stderr: &[
                "@data/iris_setosa.csv:1:1: expected a numeric label, found \"1,5.1,3.5,1.4,0.2\" (is this a CSV file? pass --format csv)",
            ],
        },
        Case {
            name: "LIBSVM label that is not a number",
            args: &["train", "l.svm"],
            make: vec![Text("l.svm", "+1 1:2\nyes 1:3\n")],
            code: 1,
            stderr: &["l.svm:2:1: expected a numeric label, found \"yes\""],
        },
        Case {
            name: "LIBSVM label that is not a number, online",
            args: &["online", "l.svm"],
            make: vec![Text("l.svm", "+1 1:2\nyes 1:3\n")],
            code: 1,
            stderr: &["l.svm:2:1: expected a numeric label, found \"yes\""],
        },
        Case {
            name: "LIBSVM label that is not finite",
            args: &["train", "l.svm"],
            make: vec![Text("l.svm", "+1 1:2\nnan 1:3\n")],
            code: 1,
            stderr: &["l.svm:2:1: expected a numeric label (a finite number), found \"nan\""],
        },
        Case {
            // The .svm would not read back.
            name: "text labels written as LIBSVM",
            args: &["convert", "t.csv", "out.svm"],
            make: vec![Text("t.csv", "a,1\nb,2\n")],
            code: 1,
            stderr: &[
                "out.svm: label \"a\" is not a number and cannot be written as LIBSVM, whose labels are numbers; write CSV or .pbin instead",
            ],
        },
        Case {
            name: "--unlabeled with --label-column",
            args: &[
                "predict",
                "iris.json",
                "@data/iris_setosa.csv",
                "--unlabeled",
                "--label-column",
                "2",
            ],
            make: vec![IrisModel("iris.json")],
            code: 2,
            stderr: &["the argument '--unlabeled' cannot be used with '--label-column <N|NAME>'"],
        },
        Case {
            name: "unlabeled LIBSVM line starting with text",
            args: &["predict", "iris.json", "u.svm", "--unlabeled"],
            make: vec![IrisModel("iris.json"), Text("u.svm", "1:5 2:3\nx 1:2\n")],
            code: 1,
            stderr: &["u.svm:2:1: expected a numeric label, found \"x\""],
        },
        Case {
            name: "unlabeled CSV with more columns than the model has features",
            args: &["predict", "iris.json", "u.csv", "--unlabeled"],
            make: vec![IrisModel("iris.json"), Text("u.csv", "1,2,3,4,5\n")],
            code: 1,
            stderr: &[
                "u.csv does not fit the model iris.json: the model has 4 features but the data \
                 has 5 feature columns",
                "if one is the label, leave out --unlabeled",
            ],
        },
        Case {
            name: "a label column name from the model that the data lacks",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"label_column\": 1,",
                "\"label_column\": \"species\",",
            )],
            code: 1,
            stderr: &[
                "@data/iris_setosa.csv:1:1: no column named \"species\" in the header; its columns are \"1\", \"5.1\", \"3.5\", \"1.4\", \"0.2\" (the label column is the one the model m.json was trained with); pass --label-column N, or --unlabeled if the file has no label column",
            ],
        },
        Case {
            name: "a label column number from the model that the data lacks",
            args: &["eval", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"label_column\": 1,",
                "\"label_column\": 9,",
            )],
            code: 1,
            stderr: &[
                "@data/iris_setosa.csv:1:1: label column 9 is out of range: the file has 5 columns (numbered from 1) (the label column is the one the model m.json was trained with); pass --label-column N, or --unlabeled if the file has no label column",
            ],
        },
        Case {
            name: "a model whose label column is 0",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"label_column\": 1,",
                "\"label_column\": 0,",
            )],
            code: 1,
            stderr: &[
                "m.json: is corrupt: \"training.data_layout.label_column\" is 0, but columns are numbered from 1",
            ],
        },
        Case {
            name: "a label column name from the model, read without a header",
            args: &["eval", "m.json", "@data/iris_setosa.csv", "--no-header"],
            make: vec![EditedModel(
                "m.json",
                "\"label_column\": 1,",
                "\"label_column\": \"species\",",
            )],
            code: 1,
            stderr: &[
                "@data/iris_setosa.csv:1:1: the label column is named \"species\" but the file is read without a header line (the label column is the one the model m.json was trained with); pass --label-column N, or --unlabeled if the file has no label column",
            ],
        },
        Case {
            name: "a model whose label column is an empty name",
            args: &["eval", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"label_column\": 1,",
                "\"label_column\": \"\",",
            )],
            code: 1,
            stderr: &["m.json: is corrupt: \"training.data_layout.label_column\" is an empty name"],
        },
        Case {
            name: "a one-vs-rest model with a class twice",
            args: &["predict", "ovr.json", "@data/iris_setosa.csv"],
            make: vec![Text("ovr.json", OVR_TWICE)],
            code: 1,
            stderr: &[
                "ovr.json: is corrupt: classes 1 and 3 (\"1\" and \"1.0\") are the same label; a model's classes must differ",
            ],
        },
        Case {
            name: "eval with many labels the model does not know",
            args: &["eval", "iris.json", "l.csv"],
            make: vec![
                IrisModel("iris.json"),
                Bytes(
                    "l.csv",
                    (0..30)
                        .map(|k| format!("x{k},1,2,3,4\n"))
                        .collect::<String>()
                        .into_bytes(),
                ),
            ],
            code: 1,
            stderr: &[
                "l.csv:1: label \"x0\" (1 row) is not a class of the model iris.json, which knows \"1\" (+1) and \"-1\" (-1); other unknown labels: \"x1\", ",
                "\"x20\", and 9 more",
            ],
        },
        Case {
            name: "a model whose two labels are the same",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"negative\": \"-1\"",
                "\"negative\": \"1.0\"",
            )],
            code: 1,
            stderr: &[
                "m.json: is corrupt: its +1 label \"1\" and its -1 label \"1.0\" are the same label; a model's two classes must differ",
            ],
        },
        Case {
            name: "150 label values",
            args: &["train", "m.csv"],
            make: vec![Bytes(
                "m.csv",
                (0..150)
                    .map(|k| format!("x{k},{k}\n"))
                    .collect::<String>()
                    .into_bytes(),
            )],
            code: 1,
            stderr: &[
                "m.csv: more than two label values (\"x0\" (1 row), \"x1\" (1 row), ",
                "\"x19\" (1 row), and 130 more); choose the +1 class with --positive",
            ],
        },
        Case {
            name: "NaN",
            args: &["train", "nan.csv"],
            make: vec![Text("nan.csv", "1,2\n-1,NaN\n")],
            code: 1,
            stderr: &["nan.csv:2:4: expected a finite number in column 2, found \"NaN\""],
        },
        Case {
            name: "infinity",
            args: &["train", "inf.csv"],
            make: vec![Text("inf.csv", "1,2,3\n-1,4,5\n1,7,-inf\n")],
            code: 1,
            stderr: &["inf.csv:3:5: expected a finite number in column 3, found \"-inf\""],
        },
        Case {
            name: "NaN in LIBSVM",
            args: &["train", "nan.svm"],
            make: vec![Text("nan.svm", "+1 1:2\n-1 1:1 3:nan\n")],
            code: 1,
            stderr: &["nan.svm:2:10: expected a finite number for feature 3, found \"nan\""],
        },
        Case {
            name: "value too large for f32",
            args: &["train", "big.csv"],
            make: vec![Text("big.csv", "1,2\n-1,1e39\n")],
            code: 1,
            stderr: &["big.csv:2:4: value \"1e39\" in column 2 is too large for f32"],
        },
        Case {
            name: "empty file",
            args: &["train", "e.csv"],
            make: vec![Text("e.csv", "")],
            code: 1,
            stderr: &["e.csv: no data rows: the file is empty"],
        },
        Case {
            name: "empty file, info",
            args: &["info", "e.svm"],
            make: vec![Text("e.svm", "# nothing\n\n")],
            code: 1,
            stderr: &["e.svm: no data rows"],
        },
        Case {
            name: "single class",
            args: &["train", "s.csv"],
            make: vec![Text("s.csv", "5,1\n5,2\n5.0,3\n")],
            code: 1,
            stderr: &[
                "s.csv: only one label value (\"5\" (3 rows)); a perceptron needs two classes",
            ],
        },
        Case {
            name: "unknown label for --positive",
            args: &["train", "t.csv", "--positive", "z"],
            make: vec![Text("t.csv", "a,1\nb,2\n")],
            code: 1,
            stderr: &[
                "t.csv: --positive \"z\" is not a label in this file; labels found: \"a\" (1 row), \"b\" (1 row)",
            ],
        },
        Case {
            name: "unknown label for info --positive",
            args: &["info", "t.csv", "--positive", "z"],
            make: vec![Text("t.csv", "a,1\nb,2\n")],
            code: 1,
            stderr: &["t.csv: --positive \"z\" is not a label in this file"],
        },
        Case {
            name: "more than two labels without --positive",
            args: &["train", "t.csv"],
            make: vec![Text("t.csv", "a,1\nb,2\nc,3\n")],
            code: 1,
            stderr: &[
                "t.csv: more than two label values",
                "choose the +1 class with --positive",
            ],
        },
        Case {
            name: "LIBSVM index 0",
            args: &["train", "z.svm"],
            make: vec![Text("z.svm", "+1 1:2\n-1 0:2 1:3\n")],
            code: 1,
            stderr: &["z.svm:2:4: feature index 0 in \"0:2\": feature indices start at 1"],
        },
        Case {
            name: "LIBSVM non-increasing index",
            args: &["train", "d.svm"],
            make: vec![Text("d.svm", "+1 3:1 2:1\n-1 1:1\n")],
            code: 1,
            stderr: &["d.svm:1:8: feature index 2 follows index 3; indices must strictly increase"],
        },
        Case {
            name: "LIBSVM duplicate index",
            args: &["train", "d.svm"],
            make: vec![Text("d.svm", "+1 1:1\n-1 2:1 2:5\n")],
            code: 1,
            stderr: &["d.svm:2:8: duplicate feature index 2"],
        },
        Case {
            name: "LIBSVM index beyond 2^31",
            args: &["train", "b.svm"],
            make: vec![Text("b.svm", "+1 1:1\n-1 2147483648:1\n")],
            code: 1,
            stderr: &[
                "b.svm:2:4: feature index 2147483648 in \"2147483648:1\" exceeds the limit of 2147483647",
            ],
        },
        Case {
            // 100 classes x 2^31 weights: more memory than any machine has,
            // refused at once instead of swapping until killed.
            name: "LIBSVM index needing more memory than available",
            args: &["train", "w.svm", "--multiclass", "ovr", "--backend", "cpu"],
            make: vec![Bytes(
                "w.svm",
                (0..100)
                    .map(|c| format!("{c} 2147483647:1\n"))
                    .collect::<String>()
                    .into_bytes(),
            )],
            code: 1,
            stderr: &[
                "w.svm: 2147483648 weights for each of 100 classes need about 4800.0 GiB of memory",
                "is available",
                "renumber the features densely",
            ],
        },
        Case {
            // Made to look huge: the limit stands for a small machine, and
            // keeps a machine with 16 GiB free from writing the copy.
            name: "a dense copy beyond memory",
            args: &["convert", "big.svm", "o.pbin", "--layout", "dense"],
            make: vec![
                Text("big.svm", "+1 1:1\n-1 2147483647:1\n"),
                Env("PERCEPTRON_MEMORY_LIMIT", "1000000"),
            ],
            code: 1,
            stderr: &[
                "big.svm: the data needs more memory than is available: a dense copy of 2 rows x 2147483647 features (f32) takes 16.0 GiB, but only 976.6 KiB is available (PERCEPTRON_MEMORY_LIMIT); keep the CSR layout (leave out --layout dense)",
            ],
        },
        Case {
            name: "CSV output whose lines exceed the line limit",
            args: &["convert", "big.svm", "big.csv"],
            make: vec![Text("big.svm", "+1 1:1\n-1 2147483647:1\n")],
            code: 1,
            stderr: &[
                "big.csv: CSV lines of this data would be at least 4294967296 bytes long (2147483647 features, each written), more than the 67108864-byte line limit of this tool's readers; write binary (.pbin) instead",
            ],
        },
        Case {
            name: "gen rows beyond memory",
            args: &[
                "gen",
                "--rows",
                "2",
                "--features",
                "2000000000",
                "-o",
                "g.pbin",
            ],
            make: vec![Env("PERCEPTRON_MEMORY_LIMIT", "1000000000")],
            code: 1,
            stderr: &[
                "g.pbin: generating rows of 2000000000 features (a block of rows and the generator's scratch space) takes 37.3 GiB, but only 953.7 MiB is available (PERCEPTRON_MEMORY_LIMIT); use fewer --features or --density sparse",
            ],
        },
        Case {
            name: "gen CSV lines over the line limit",
            args: &[
                "gen",
                "--rows",
                "2",
                "--features",
                "40000000",
                "-o",
                "g.csv",
            ],
            make: vec![],
            code: 1,
            stderr: &[
                "g.csv: CSV lines of this data would be at least 80000002 bytes long (40000000 features, each written), more than the 67108864-byte line limit",
            ],
        },
        Case {
            name: "gen LIBSVM lines over the line limit",
            args: &[
                "gen",
                "--rows",
                "2",
                "--features",
                "40000000",
                "--density",
                "sparse",
                "--nnz",
                "20000000",
                "-o",
                "g.svm",
            ],
            make: vec![],
            code: 1,
            stderr: &[
                "g.svm: LIBSVM lines of this data would be at least 80000002 bytes long (20000000 values per row), more than the 67108864-byte line limit",
            ],
        },
        Case {
            name: "compressed CSV expanding beyond memory",
            args: &["train", "w.csv.gz"],
            make: vec![
                Bytes("w.csv.gz", wide_csv_gz(400)),
                Env("PERCEPTRON_MEMORY_LIMIT", "100000"),
            ],
            code: 1,
            stderr: &[
                "w.csv.gz: the data needs more memory than is available: storing the feature values takes 101.4 KiB, but only 97.7 KiB is available (PERCEPTRON_MEMORY_LIMIT), after line 231; use a machine with more memory or part of the file",
            ],
        },
        Case {
            name: "LIBSVM beyond memory",
            args: &["info", "w.svm"],
            make: vec![
                Bytes(
                    "w.svm",
                    (0..400)
                        .map(|i| {
                            let x: String = (1..=100).map(|k| format!(" {k}:0.5")).collect();
                            format!("{}{x}\n", i % 2)
                        })
                        .collect::<String>()
                        .into_bytes(),
                ),
                Env("PERCEPTRON_MEMORY_LIMIT", "100000"),
            ],
            code: 1,
            stderr: &[
                "w.svm: the data needs more memory than is available: storing the feature values takes 102.5 KiB, but only 97.7 KiB is available (PERCEPTRON_MEMORY_LIMIT), after line 234",
            ],
        },
        Case {
            // Read into memory: a mapped file takes none (see the next case).
            name: ".pbin beyond memory",
            args: &["info", "z.pbin"],
            make: vec![
                Bytes("z.pbin", pbin(1, 400, 100)),
                Env("PERCEPTRON_MEMORY_LIMIT", "100000"),
                Env("PERCEPTRON_NO_MMAP", "1"),
            ],
            code: 1,
            stderr: &[
                "z.pbin: the data needs more memory than is available: its values section takes 156.2 KiB, but only 97.7 KiB is available (PERCEPTRON_MEMORY_LIMIT)",
            ],
        },
        Case {
            name: "a memory limit that is not a number of bytes",
            args: &["info", "@data/iris_setosa.csv"],
            make: vec![Env("PERCEPTRON_MEMORY_LIMIT", "1G")],
            code: 2,
            stderr: &["PERCEPTRON_MEMORY_LIMIT must be a whole number of bytes, not \"1G\""],
        },
        Case {
            name: "a line over the 64 MiB limit",
            args: &["train", "long.csv"],
            make: vec![LongLine("long.csv")],
            code: 1,
            stderr: &[
                "long.csv:2:67108865: line is longer than the limit of 67108864 bytes; is this a text data file?",
            ],
        },
        Case {
            name: "a model holding values of the wrong precision",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"precision\": \"f64\"",
                "\"precision\": \"f32\"",
            )],
            code: 1,
            stderr: &[
                "m.json: has the wrong precision: weight 1 = 1.299999999999999 is not an f32 value, though the file says \"precision\": \"f32\"",
            ],
        },
        Case {
            name: "a .pbin file that is not one",
            args: &["info", "c.pbin"],
            make: vec![Bytes("c.pbin", b"PK\x03\x04 a zip file, not data".to_vec())],
            code: 1,
            stderr: &[
                "c.pbin: not a perceptron binary (.pbin) file: it starts with bytes [50 4b 03 04 20 61 20 7a], not the magic bytes [89 50 42 4e 0d 0a 1a 0a]",
            ],
        },
        Case {
            name: "a .pbin file from a newer version",
            args: &["train", "n.pbin"],
            make: vec![Bytes("n.pbin", pbin(2, 4, 2))],
            code: 1,
            stderr: &[
                "n.pbin: format version 2 is newer than this version of perceptron can read (version 1 and older); upgrade perceptron to read it",
            ],
        },
        Case {
            name: "a .pbin file shorter than its header says",
            args: &["train", "t.pbin"],
            make: vec![Bytes("t.pbin", pbin(1, 4, 2)[..300].to_vec())],
            code: 1,
            stderr: &[
                "t.pbin: truncated: the label-table section ends at byte 332 but the file has only 300 bytes",
            ],
        },
        Case {
            name: "a .pbin header claiming too many columns",
            args: &["train", "w.pbin"],
            make: vec![Bytes("w.pbin", {
                let mut b = pbin(1, 4, 2);
                b[32..40].copy_from_slice(&(1u64 << 31).to_le_bytes());
                b
            })],
            code: 1,
            stderr: &["w.pbin: 2147483648 feature columns is more than the supported 2147483647"],
        },
        Case {
            name: "a checkpoint that is not JSON",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![Text("ck.json", "{\"format\": \"perceptron-checkpoint\", ")],
            code: 1,
            stderr: &["ck.json: is not a checkpoint (not valid JSON: EOF while parsing"],
        },
        Case {
            name: "a checkpoint of another format",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![Text("ck.json", "{}")],
            code: 1,
            stderr: &[
                "ck.json: is not a perceptron checkpoint (no \"format\": \"perceptron-checkpoint\")",
            ],
        },
        Case {
            name: "a checkpoint from a newer version",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![EditedCheckpoint(
                "ck.json",
                &[("\"format_version\":1", "\"format_version\":2")],
            )],
            code: 1,
            stderr: &[
                "ck.json: was written by a newer perceptron (checkpoint format 2; this build reads 1)",
            ],
        },
        Case {
            // f64 weights in a checkpoint that says f32, for f32 data.
            name: "a checkpoint holding values of the wrong precision",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![EditedCheckpoint(
                "ck.json",
                &[
                    ("\"precision\":\"f64\"", "\"precision\":\"f32\""),
                    ("066bb9042cac580f", "a588694bebd4c865"),
                ],
            )],
            code: 1,
            stderr: &[
                "ck.json: has the wrong precision: a weight = -1.9000000000000004 is not an f32 value, though the file says \"precision\": \"f32\"",
            ],
        },
        Case {
            name: "a checkpoint whose counters disagree",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![EditedCheckpoint(
                "ck.json",
                &[("\"epoch\":1,", "\"epoch\":3,")],
            )],
            code: 1,
            stderr: &["ck.json: is corrupt: its epoch, row and counters do not agree"],
        },
        Case {
            name: "a checkpoint with a weight missing",
            args: &["train", "@data/iris_setosa.csv", "--resume", "ck.json"],
            make: vec![EditedCheckpoint("ck.json", &[(",0.0]", "]")])],
            code: 1,
            stderr: &["ck.json: is corrupt: 4 weights for 5 needed"],
        },
        Case {
            name: "a checkpoint for other data",
            args: &["train", "@data/iris_petals.csv", "--resume", "ck.json"],
            make: vec![IrisCheckpoint("ck.json")],
            code: 2,
            stderr: &[
                "ck.json cannot be resumed by this run: the data differ: the checkpoint was made on 150 rows x 4 features with fingerprint 066bb9042cac580f, this data has 150 rows x 2 features",
                "Resume with the same data and options as the interrupted run.",
            ],
        },
        Case {
            name: "a checkpoint for another --max-epochs",
            args: &[
                "train",
                "@data/iris_setosa.csv",
                "--resume",
                "ck.json",
                "--max-epochs",
                "5",
            ],
            make: vec![IrisCheckpoint("ck.json")],
            code: 2,
            stderr: &["ck.json cannot be resumed by this run: --max-epochs was 1, now 5."],
        },
        Case {
            name: "a checkpoint for another variant",
            args: &[
                "train",
                "@data/iris_setosa.csv",
                "--resume",
                "ck.json",
                "--pocket",
            ],
            make: vec![IrisCheckpoint("ck.json")],
            code: 2,
            stderr: &[
                "ck.json cannot be resumed by this run: the variant was classic, now pocket.",
            ],
        },
        Case {
            name: "a checkpoint for a run from zero, resumed from --init",
            args: &[
                "train",
                "@data/iris_setosa.csv",
                "--resume",
                "ck.json",
                "--init",
                "m.json",
            ],
            make: vec![IrisCheckpoint("ck.json"), IrisModel("m.json")],
            code: 2,
            stderr: &[
                "ck.json cannot be resumed by this run: the run started from zero, now from --init.",
            ],
        },
        Case {
            name: "LIBSVM index far beyond u64",
            args: &["train", "b.svm"],
            make: vec![Text("b.svm", "+1 1:1\n-1 99999999999999999999999:1\n")],
            code: 1,
            stderr: &[
                "b.svm:2:4: feature index 99999999999999999999999",
                "exceeds the limit",
            ],
        },
        Case {
            name: "truncated .gz",
            args: &["train", "t.csv.gz"],
            make: vec![Bytes("t.csv.gz", truncated_gzip())],
            code: 1,
            stderr: &[
                "t.csv.gz: cannot read: the gzip data is truncated or corrupt",
                ", after line ",
            ],
        },
        Case {
            name: "not gzip at all",
            args: &["info", "t.svm.gz"],
            make: vec![Text("t.svm.gz", "+1 1:1\n-1 1:2\n")],
            code: 1,
            stderr: &["t.svm.gz: cannot read: the gzip data"],
        },
        Case {
            name: "invalid UTF-8",
            args: &["train", "u.csv"],
            make: vec![Bytes("u.csv", b"1,2\n-1,\xff\n".to_vec())],
            code: 1,
            stderr: &["u.csv:2:4: invalid UTF-8 (byte 0xff)"],
        },
        Case {
            name: "missing file",
            args: &["train", "missing.csv"],
            make: vec![],
            code: 1,
            stderr: &["missing.csv: cannot open data file: "],
        },
        Case {
            name: "missing file, eval",
            args: &["eval", "iris.json", "missing.svm"],
            make: vec![IrisModel("iris.json")],
            code: 1,
            stderr: &["missing.svm: cannot open data file: "],
        },
        Case {
            name: "a directory as data",
            args: &["train", "folder.csv"],
            make: vec![Dir("folder.csv")],
            code: 1,
            stderr: &["folder.csv: cannot open data file: it is a directory, not a file"],
        },
        Case {
            name: "a directory as data, predict",
            args: &["predict", "iris.json", "folder"],
            make: vec![IrisModel("iris.json"), Dir("folder")],
            code: 1,
            stderr: &["folder: cannot open data file: it is a directory, not a file"],
        },
        Case {
            name: "corrupt model",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![Text(
                "m.json",
                "{\"format\": \"perceptron-model\", \"weights\": [1,",
            )],
            code: 1,
            stderr: &[
                "m.json: is not a model file (not valid JSON: line 1 column 45: EOF while parsing",
            ],
        },
        Case {
            name: "corrupt model field",
            args: &["eval", "m.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "m.json",
                "\"has_bias\": true",
                "\"has_bias\": \"yes\"",
            )],
            code: 1,
            stderr: &[
                "m.json: is corrupt: line ",
                "invalid type: string \"yes\", expected a boolean",
            ],
        },
        Case {
            name: "not a model file",
            args: &["predict", "m.json", "@data/iris_setosa.csv"],
            make: vec![Text("m.json", "[1, 2, 3]\n")],
            code: 1,
            stderr: &["m.json: is not a perceptron model file"],
        },
        Case {
            name: "a data file as the model",
            args: &["predict", "@data/iris_setosa.csv", "@data/iris_setosa.csv"],
            make: vec![],
            code: 1,
            stderr: &["@data/iris_setosa.csv: is not a model file (not valid JSON"],
        },
        Case {
            name: "model from a newer format_version",
            args: &["predict", "new.json", "@data/iris_setosa.csv"],
            make: vec![EditedModel(
                "new.json",
                "\"format_version\": 1,",
                "\"format_version\": 2,",
            )],
            code: 1,
            stderr: &[
                "new.json: was written by a newer perceptron (model format version 2); this build reads versions up to 1: upgrade perceptron",
            ],
        },
        Case {
            name: "model with fewer features than the data, predict",
            args: &["predict", "iris.json", "@data/breast_cancer.csv"],
            make: vec![IrisModel("iris.json")],
            code: 1,
            stderr: &[
                "@data/breast_cancer.csv does not fit the model iris.json: the model has 4 \
                 features but the data has 30 feature columns; CSV data must have the model's \
                 columns",
            ],
        },
        Case {
            name: "model with fewer features than the data, eval",
            args: &["eval", "iris.json", "w.svm"],
            make: vec![IrisModel("iris.json"), Text("w.svm", "1 1:1 5:2\n-1 2:1\n")],
            code: 1,
            stderr: &[
                "w.svm does not fit the model iris.json: the model has 4 features but the data \
                 has 5; rows may have fewer features than the model (the missing ones count as \
                 zeros), never more",
            ],
        },
        Case {
            name: "eval with a label the model does not know",
            args: &["eval", "iris.json", "l.csv"],
            make: vec![
                IrisModel("iris.json"),
                Text("l.csv", "1,5,3,1,0.2\n# c\n7,5,3,1,0.2\n-1,1,1,1,1\n"),
            ],
            code: 1,
            stderr: &[
                "l.csv:3: label \"7\" (1 row) is not a class of the model iris.json, which knows \"1\" (+1) and \"-1\" (-1)",
            ],
        },
        Case {
            name: "output path is a directory, train",
            args: &["train", "@data/iris_setosa.csv", "-o", "out"],
            make: vec![Dir("out")],
            code: 1,
            stderr: &["out: cannot write output: it is a directory"],
        },
        Case {
            name: "output path is a directory, predict",
            args: &["predict", "iris.json", "@data/iris_setosa.csv", "-o", "out"],
            make: vec![IrisModel("iris.json"), Dir("out")],
            code: 1,
            stderr: &["out: cannot write output: it is a directory"],
        },
        Case {
            name: "output folder is a file",
            args: &["train", "@data/iris_setosa.csv", "-o", "nowhere/m.json"],
            make: vec![Text("nowhere", "")],
            code: 1,
            stderr: &["nowhere/m.json: cannot write output: nowhere is not a directory"],
        },
        Case {
            name: "label column out of range",
            args: &["train", "t.csv", "--label-column", "9"],
            make: vec![Text("t.csv", "1,2\n-1,3\n")],
            code: 1,
            stderr: &["t.csv:1:1: label column 9 is out of range: the file has 2 columns"],
        },
        Case {
            name: "cannot tell the format",
            args: &["info", "t.txt"],
            make: vec![Text("t.txt", "1 2 3\n")],
            code: 1,
            stderr: &[
                "t.txt: cannot tell the format",
                "use --format csv or --format libsvm",
            ],
        },
        Case {
            name: "zero epochs",
            args: &["train", "@data/iris_setosa.csv", "--max-epochs", "0"],
            make: vec![],
            code: 2,
            stderr: &["--max-epochs must be at least 1"],
        },
        Case {
            name: "unknown option",
            args: &["eval", "--frobnicate"],
            make: vec![],
            code: 2,
            stderr: &["unexpected argument '--frobnicate'"],
        },
        Case {
            name: "missing argument",
            args: &["predict", "m.json"],
            make: vec![],
            code: 2,
            stderr: &["<DATA>"],
        },
        Case {
            name: "--shuffle without --seed",
            args: &["train", "--shuffle"],
            make: vec![],
            code: 2,
            stderr: &["--seed"],
        },
    ]
}

/// The checkpoint after one f64 epoch on iris_setosa, made once by the binary.
fn iris_checkpoint_text() -> String {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        cmd(dir.path())
            .args(["train", &data_str("iris_setosa.csv")])
            .args(["--precision", "f64", "--max-epochs", "1"])
            .args(["--checkpoint", "ck.json", "-o", "m.json"])
            .assert()
            .code(3);
        std::fs::read_to_string(dir.path().join("ck.json")).unwrap()
    })
    .clone()
}

/// A dense f32 `.pbin` file of `rows` x `cols` zeros with labels -1 and +1
/// alternating, its header's format version set to `version`.
fn pbin(version: u32, rows: u64, cols: u64) -> Vec<u8> {
    let align = |n: u64| n.div_ceil(64) * 64;
    let ids = 192;
    let values = align(ids + rows * 4);
    let table = align(values + rows * cols * 4);
    let labels: Vec<u8> = [&b"-1"[..], b"+1"]
        .iter()
        .flat_map(|t| [&(t.len() as u32).to_le_bytes()[..], t].concat())
        .collect();
    let mut b = b"\x89PBN\r\n\x1a\n".to_vec();
    for v in [version, 192, 0, 4] {
        b.extend(v.to_le_bytes());
    }
    let (vo, vl) = if rows * cols > 0 {
        (values, rows * cols * 4)
    } else {
        (0, 0)
    };
    for v in [
        rows,
        cols,
        rows * cols,
        2,
        ids,
        rows * 4,
        vo,
        vl,
        0,
        0,
        0,
        0,
        table,
    ] {
        b.extend(v.to_le_bytes());
    }
    b.extend((labels.len() as u64).to_le_bytes());
    b.resize(ids as usize, 0);
    for i in 0..rows {
        b.extend(((i % 2) as u32).to_le_bytes());
    }
    b.resize(table as usize, 0);
    b.extend(labels);
    b
}

/// A CSV file of `rows` rows of 100 values, gzipped: small on disk, 400
/// bytes a row in memory (f32).
fn wide_csv_gz(rows: usize) -> Vec<u8> {
    let line: String = std::iter::repeat_n(",0.5", 100).collect();
    let text: String = (0..rows).map(|i| format!("{}{line}\n", i % 2)).collect();
    gzip(text.as_bytes())
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

#[test]
fn bad_input_fails_with_the_right_code_and_message() {
    let data_dir = data_file("");
    let data_dir = data_dir.display().to_string();
    let expand = |s: &str| s.replace("@data/", &data_dir);
    let mut failures = Vec::new();
    let all = cases();
    for case in &all {
        let dir = tempfile::tempdir().unwrap();
        let mut command = cmd(dir.path());
        for m in &case.make {
            match m {
                Make::Env(name, value) => {
                    command.env(name, value);
                }
                Make::LongLine(name) => {
                    let mut f = std::fs::File::create(dir.path().join(name)).unwrap();
                    f.write_all(b"1,2\n-1,").unwrap();
                    f.write_all(&vec![b'3'; 64 << 20]).unwrap();
                    f.write_all(b"\n").unwrap();
                }
                Make::IrisCheckpoint(name) => {
                    std::fs::write(dir.path().join(name), iris_checkpoint_text()).unwrap()
                }
                Make::EditedCheckpoint(name, edits) => {
                    let mut text = iris_checkpoint_text();
                    for (from, to) in edits.iter() {
                        assert!(
                            text.contains(from),
                            "{}: {from} not in the checkpoint",
                            case.name
                        );
                        text = text.replace(from, to);
                    }
                    std::fs::write(dir.path().join(name), text).unwrap()
                }
                Make::Text(name, text) => std::fs::write(dir.path().join(name), text).unwrap(),
                Make::Bytes(name, bytes) => std::fs::write(dir.path().join(name), bytes).unwrap(),
                Make::Dir(name) => std::fs::create_dir(dir.path().join(name)).unwrap(),
                Make::IrisModel(name) => {
                    std::fs::write(dir.path().join(name), iris_model_text()).unwrap()
                }
                Make::EditedModel(name, from, to) => {
                    let text = iris_model_text();
                    assert!(
                        text.contains(from),
                        "{}: {from} not in the model",
                        case.name
                    );
                    std::fs::write(dir.path().join(name), text.replace(from, to)).unwrap()
                }
            }
        }
        let args: Vec<String> = case.args.iter().map(|a| expand(a)).collect();
        let out = command.args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        let missing: Vec<String> = case
            .stderr
            .iter()
            .map(|f| expand(f))
            .filter(|f| !stderr.contains(f.as_str()))
            .collect();
        if code != Some(case.code) || !missing.is_empty() {
            failures.push(format!(
                "{}: exit {code:?} (want {}), missing {missing:?}\nstderr: {stderr}",
                case.name, case.code
            ));
        }
        if case.code == 1 {
            // Errors are one line, prefixed, and nothing half-done on stdout.
            assert!(
                stderr.starts_with("perceptron: error: "),
                "{}: {stderr}",
                case.name
            );
            assert_eq!(
                stderr.trim_end().lines().count(),
                1,
                "{}: {stderr}",
                case.name
            );
            assert!(out.stdout.is_empty(), "{}: stdout not empty", case.name);
        }
        // Training never leaves a model behind when it fails.
        assert!(
            case.args[0] != "train" || !dir.path().join("model.json").exists(),
            "{}: model written",
            case.name
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

/// stdout that goes away or fills up never panics (exit 101) and never
/// hides whether training converged.
#[cfg(unix)]
#[test]
fn closed_or_full_stdout_is_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("xor.csv"), "1,0,0\n-1,0,1\n-1,1,0\n1,1,1\n").unwrap();
    // A reader that has already gone: every write to stdout fails with EPIPE.
    let bin = assert_cmd::cargo::cargo_bin!("perceptron");
    let mut child = std::process::Command::new(bin)
        .current_dir(dir.path())
        .args(["train", "xor.csv", "--max-epochs", "5", "-o", "x.json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(dir.path().join("x.json").exists());

    if Path::new("/dev/full").exists() {
        let out = std::process::Command::new(bin)
            .current_dir(dir.path())
            .args(["train", &data_str("iris_setosa.csv"), "-o", "i.json"])
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("<stdout>: cannot write output"), "{stderr}");
    }
}

/// `-o` follows a symbolic link (the link stays) and writes a named pipe in
/// place instead of replacing it with a regular file.
#[cfg(unix)]
#[test]
fn outputs_follow_links_and_write_pipes_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.txt");
    std::fs::write(&real, "old").unwrap();
    std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt")).unwrap();
    let model = dir.path().join("m.json");
    std::fs::write(&model, iris_model_text()).unwrap();
    cmd(dir.path())
        .args([
            "predict",
            "m.json",
            &data_str("iris_setosa.csv"),
            "-o",
            "link.txt",
        ])
        .assert()
        .success();
    assert!(
        std::fs::symlink_metadata(dir.path().join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap().lines().count(), 150);

    let fifo = dir.path().join("fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    cmd(dir.path())
        .args([
            "predict",
            "m.json",
            &data_str("iris_setosa.csv"),
            "-o",
            "fifo",
        ])
        .assert()
        .success();
    assert_eq!(reader.join().unwrap().lines().count(), 150);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}
