//! `predict` and `eval` against predictions computed independently from the golden weights.

use predicates::prelude::*;
use serde_json::Value;

use super::*;
use crate::common::{cmd, data_file, data_str};

#[test]
fn predict_prints_the_golden_models_labels_and_scores() {
    let dir = tempfile::tempdir().unwrap();
    // heart_scale does not converge in 30 epochs (exit 3); the model is the
    // golden one, so predictions can be computed from the golden weights.
    train_f64(dir.path(), "heart_scale.svm", "30", "heart.json", 0);
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
    train_f64(dir.path(), "heart_scale.svm", "30", "heart.json", 0);
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

#[test]
fn libsvm_features_beyond_the_models_are_left_out_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    cmd(d)
        .args(["train", &data_str("heart_scale.svm"), "-o", "h.json"])
        .assert()
        .success();
    // The same rows, some with features 14 and 20 the model never saw.
    let text = std::fs::read_to_string(data_file("heart_scale.svm")).unwrap();
    let wider: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| match i % 3 {
            0 => format!("{} 14:0.5 20:-2\n", l.trim_end()),
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(d.join("wider.svm"), wider).unwrap();
    let run = |data: &str| {
        let out = cmd(d)
            .args(["predict", "h.json", data, "--scores"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (want, quiet) = run(&data_str("heart_scale.svm"));
    let (got, note) = run("wider.svm");
    assert_eq!(got, want, "the scores are the same");
    assert!(quiet.is_empty(), "{quiet}");
    assert!(
        note.contains("wider.svm has 7 features beyond the 13 features of h.json, holding 180 non-zero values: they are left out"),
        "{note}"
    );
    cmd(d)
        .args(["eval", "h.json", "wider.svm"])
        .assert()
        .success()
        .stderr(predicate::str::contains("left out"));
}

/// Labels holding a tab or a terminal escape (C0 or C1) are quoted and
/// escaped wherever they are printed: `predict`'s lines and columns stay
/// one label a line and tab-separated, and no escape reaches the terminal
/// raw. Ordinary labels are printed as they are.
#[test]
fn labels_with_control_characters_are_quoted_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("d.csv"),
        "y,a,b\n\"x\ty\",1,0\n\"\x1b[31mred\u{9b}\",0,1\n\"x\ty\",2,0\n\"\x1b[31mred\u{9b}\",0,2\n",
    )
    .unwrap();
    let train = cmd(dir.path())
        .args(["train", "d.csv", "--header", "-o", "m.json"])
        .assert()
        .success();
    let report = stdout_of(train.get_output());
    assert!(
        report.contains(r#"+1 = "x\ty" (2 rows), -1 = "\u{1b}[31mred\u{9b}" (2 rows)"#),
        "{report}"
    );
    let out = cmd(dir.path())
        .args(["predict", "m.json", "d.csv", "--header"])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            r#""x\ty""#,
            r#""\u{1b}[31mred\u{9b}""#,
            r#""x\ty""#,
            r#""\u{1b}[31mred\u{9b}""#
        ]
    );
    let out = cmd(dir.path())
        .args(["predict", "m.json", "d.csv", "--header", "--scores"])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "predicted\t\"x\\ty\"");
    assert!(lines.iter().all(|l| l.split('\t').count() == 2), "{text}");
    for command in ["eval", "info"] {
        let args: &[&str] = if command == "eval" {
            &["eval", "m.json", "d.csv", "--header"]
        } else {
            &["info", "d.csv", "--header"]
        };
        let out = cmd(dir.path()).args(args).assert().success();
        let text = stdout_of(out.get_output());
        assert!(
            !text.contains('\x1b') && !text.contains("x\ty"),
            "{command}: {text}"
        );
        assert!(
            text.contains(r#""\u{1b}[31mred\u{9b}""#),
            "{command}: {text}"
        );
    }
    // Plain labels are unchanged.
    std::fs::write(dir.path().join("p.csv"), "y,a\nyes,1\nno,-1\n").unwrap();
    cmd(dir.path())
        .args(["train", "p.csv", "--header", "-o", "p.json"])
        .assert()
        .success();
    let out = cmd(dir.path())
        .args(["predict", "p.json", "p.csv", "--header"])
        .assert()
        .success();
    assert_eq!(stdout_of(out.get_output()), "yes\nno\n");
}

/// A row whose score overflows the model's precision has no class:
/// `predict` (with and without --scores) and `eval` refuse it, naming the
/// row, instead of printing the class a NaN or infinite score would give.
/// Rows near the limit whose scores are finite are predicted as usual.
#[test]
fn a_score_that_overflows_is_an_error_naming_the_row() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "1,1,1\n-1,-1,-1\n").unwrap();
    cmd(dir.path())
        .args(["train", "t.csv", "-o", "m.json"])
        .assert()
        .success();
    // Row 2's score is 3e38 + 3e38: beyond f32. Row 1's is 3e38, finite
    // but past the quick bound, so it is computed and passes.
    std::fs::write(
        dir.path().join("big.csv"),
        "1,3e38,0\n1,3e38,3e38\n-1,-1,-1\n",
    )
    .unwrap();
    for extra in [&[][..], &["--scores"][..]] {
        cmd(dir.path())
            .args(["predict", "m.json", "big.csv"])
            .args(extra)
            .assert()
            .failure()
            .stderr(predicate::str::contains(
                "big.csv: row 2: the score w·x is inf: the model's weights times this row's values overflow f32",
            ));
    }
    cmd(dir.path())
        .args(["eval", "m.json", "big.csv"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("row 2: the score w·x is inf"));
    std::fs::write(dir.path().join("near.csv"), "1,3e38,0\n-1,-1,-1\n").unwrap();
    let out = cmd(dir.path())
        .args(["predict", "m.json", "near.csv"])
        .assert()
        .success();
    assert_eq!(stdout_of(out.get_output()), "1\n-1\n");
}

/// A one-vs-rest model file with `k` classes "c0", "c1", ... over one
/// feature x, in f64: class c scores 2c·x - c², the largest for x = c, so a
/// row with x = c is predicted "c{c}". Made from a small trained model
/// whose fields are repeated `k` times.
fn many_class_model(dir: &Path, k: usize) {
    std::fs::write(dir.join("abc.csv"), "a,0\nb,1\nc,2\n").unwrap();
    cmd(dir)
        .args([
            "train",
            "abc.csv",
            "--multiclass",
            "ovr",
            "--precision",
            "f64",
        ])
        .args(["--max-epochs", "2", "-o", "small.json"])
        .assert()
        .code(predicate::in_iter([0, 3]));
    let text = std::fs::read_to_string(dir.join("small.json")).unwrap();
    let mut m: Value = serde_json::from_str(&text).unwrap();
    let record = m["class_training"][0].clone();
    m["classes"] = (0..k).map(|c| format!("c{c}")).collect();
    m["weights"] = (0..k)
        .map(|c| serde_json::json!([2.0 * c as f64]))
        .collect();
    m["bias"] = (0..k).map(|c| -((c * c) as f64)).collect();
    m["class_training"] = (0..k).map(|_| record.clone()).collect();
    std::fs::write(dir.join("many.json"), serde_json::to_string(&m).unwrap()).unwrap();
}

/// Issue: eval built a K x K confusion matrix and printed it whole, so an
/// 8,000-class file of 190 KB took 1.2 GB and printed 577 MB. Beyond 20
/// classes it keeps only the non-zero cells and shows the largest, with the
/// figures of the classes that occur: output linear in the rows.
#[test]
fn eval_of_thousands_of_classes_prints_in_proportion_to_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let k = 3000;
    many_class_model(dir.path(), k);
    // Every row is predicted right but every seventh, predicted as the next
    // class; class c7 has a row predicted c8 twice over.
    let mut csv = String::new();
    for c in 0..k - 1 {
        let x = if c % 7 == 0 { c + 1 } else { c };
        csv.push_str(&format!("c{c},{x}\n"));
    }
    csv.push_str("c7,8\n");
    std::fs::write(dir.path().join("many.csv"), &csv).unwrap();
    let rows = k as u64;
    let wrong = (0..k - 1).filter(|c| c % 7 == 0).count() as u64 + 1;

    let out = cmd(dir.path())
        .args(["eval", "many.json", "many.csv", "--backend", "cpu"])
        .assert()
        .success();
    let text = stdout_of(out.get_output());
    // About one line per class that occurs; the matrix was 3000 x 3000.
    assert!(text.len() < 100 * k, "{} bytes", text.len());
    assert!(
        text.contains(&format!("({} of 3000 rows correct)", rows - wrong)),
        "{text}"
    );
    assert!(
        text.contains("no confusion matrix: 3000 classes are more than the 20"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "the 20 most frequent confusions (of {})",
            wrong - 1
        )),
        "{text}"
    );
    // The largest confusion comes first.
    let first = text
        .lines()
        .skip_while(|l| !l.contains("most frequent confusions"))
        .nth(2)
        .unwrap();
    assert_eq!(
        first.split_whitespace().collect::<Vec<_>>(),
        ["\"c7\"", "\"c8\"", "2"]
    );
    // c2999 is neither a row's class nor predicted.
    assert!(text.contains("the 2999 classes that occur"), "{text}");

    let out = cmd(dir.path())
        .args([
            "eval",
            "many.json",
            "many.csv",
            "--json",
            "--backend",
            "cpu",
        ])
        .assert()
        .success();
    let json = stdout_of(out.get_output());
    assert!(json.len() < 200 * k, "{} bytes", json.len());
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["correct"], rows - wrong);
    assert_eq!(v["confusion"]["classes"], k);
    assert!(v["confusion"].get("matrix").is_none());
    let cells = v["confusion"]["cells"].as_array().unwrap();
    // One cell per class with a row predicted right (2999 classes less the
    // 429 every seventh), one per distinct confusion (429: c7's two rows
    // make one).
    assert_eq!(
        cells.len() as u64,
        (k as u64 - 1 - (wrong - 1)) + (wrong - 1)
    );
    assert!(cells.contains(&serde_json::json!({"true": "c7", "predicted": "c8", "rows": 2})));
    let sum: u64 = cells.iter().map(|c| c["rows"].as_u64().unwrap()).sum();
    assert_eq!(sum, rows);
    let classes = v["classes"].as_array().unwrap();
    assert_eq!(classes.len(), k - 1);
    let c8 = &classes[8];
    assert_eq!(
        (c8["label"].as_str(), c8["support"].as_u64()),
        (Some("c8"), Some(1))
    );
    assert_eq!(c8["precision"].as_f64(), Some(1.0 / 3.0));
}

/// Issue: a 70,000-class model with a 2-row file asked for a matrix of 39
/// GB and aborted; with two rows, eval now needs memory for the model and
/// the two rows' cells only. Run under an address-space limit that the
/// matrix alone would exceed 40-fold.
#[cfg(target_os = "linux")]
#[test]
fn eval_of_seventy_thousand_classes_fits_in_a_small_address_space() {
    let dir = tempfile::tempdir().unwrap();
    many_class_model(dir.path(), 70_000);
    std::fs::write(dir.path().join("two.csv"), "c5,5\nc69999,3\n").unwrap();
    let out = std::process::Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg("ulimit -v 1000000 && exec \"$0\" eval many.json two.csv --json --backend cpu")
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
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["correct"], 1);
    assert_eq!(
        v["confusion"]["cells"],
        serde_json::json!([
            {"true": "c5", "predicted": "c5", "rows": 1},
            {"true": "c69999", "predicted": "c3", "rows": 1}
        ])
    );
    let labels: Vec<&str> = v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["c3", "c5", "c69999"]);
}

/// Issue: nothing bounded what a model file's parse takes (a one-vs-rest
/// model's per-class records and weights): it is checked against the
/// memory available before parsing, and refused with both numbers.
#[test]
fn a_model_whose_parse_exceeds_the_memory_limit_is_refused_with_the_numbers() {
    let dir = tempfile::tempdir().unwrap();
    many_class_model(dir.path(), 3000);
    std::fs::write(dir.path().join("two.csv"), "c5,5\nc2999,3\n").unwrap();
    let out = cmd(dir.path())
        .args(["eval", "many.json", "two.csv"])
        .env("PERCEPTRON_MEMORY_LIMIT", "1000000")
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("many.json: needs more memory than is available to be read: parsing its ")
            && err.contains(" JSON values and 3003 objects takes ")
            && err.contains("but only 976.6 KiB is available (PERCEPTRON_MEMORY_LIMIT)"),
        "{err}"
    );
    cmd(dir.path())
        .args(["eval", "many.json", "two.csv"])
        .env("PERCEPTRON_MEMORY_LIMIT", "100000000")
        .assert()
        .success();
}
