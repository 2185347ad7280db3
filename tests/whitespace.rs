//! `--delimiter whitespace`: one or more spaces or tabs separate fields,
//! whitespace at either end of a line is ignored (numpy.savetxt's default
//! output), in the batch reader, the stream and the command line.

use perceptron::data::csv::WHITESPACE;
use perceptron::data::{LoadOptions, load_raw};

use crate::common::{cmd, data_file, essence};

fn opts() -> LoadOptions {
    LoadOptions {
        delimiter: Some(WHITESPACE),
        ..Default::default()
    }
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn runs_of_spaces_and_tabs_separate_fields() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "a.txt",
        "  1.0  2   3\n-1\t4 \t 5  \n\n# note\n1 \"6\" 7\n",
    );
    let raw = load_raw::<f64>(&p, &opts()).unwrap();
    let f = raw.features.to_dense();
    assert_eq!((f.rows, f.cols), (3, 2));
    assert_eq!(&f.values[..], &[2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    let labels: Vec<&str> = raw
        .class_ids
        .iter()
        .map(|&c| raw.table.classes()[c as usize].text.as_str())
        .collect();
    // `1` and `1.0` are one label, named as first seen.
    assert_eq!(labels, ["1.0", "-1", "1.0"]);
    assert_eq!(raw.csv.unwrap().delimiter, WHITESPACE);
    // A header, a quoted label with a space in it.
    let p = write(dir.path(), "h.txt", "class  x  y\n\"a b\" 1 2\nc 3 4\n");
    let raw = load_raw::<f32>(&p, &opts()).unwrap();
    assert_eq!(raw.csv.as_ref().unwrap().header_line, Some(1));
    assert_eq!(raw.table.classes()[0].text, "a b");
    // A short line is an error naming its line and what was expected.
    let p = write(dir.path(), "bad.txt", "1 2 3\n-1  2\n");
    let e = load_raw::<f32>(&p, &opts()).unwrap_err().to_string();
    assert!(e.contains("bad.txt:2"), "{e}");
    assert!(e.contains("expected 3 fields"), "{e}");
    let p = write(dir.path(), "q.txt", "\"a\"b 1 2\n");
    let e = load_raw::<f32>(&p, &opts()).unwrap_err().to_string();
    assert!(
        e.contains("expected whitespace or the end of the line after a closing quote"),
        "{e}"
    );
}

#[test]
fn savetxt_output_trains_the_csv_files_model() {
    let dir = tempfile::tempdir().unwrap();
    let csv = data_file("breast_cancer.csv");
    // numpy.savetxt(X) writes "%.18e" values separated by single spaces.
    let text: String = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<String> = l
                .split(',')
                .map(|x| format!("{:.18e}", x.parse::<f64>().unwrap()))
                .collect();
            v.join(" ") + "\n"
        })
        .collect();
    std::fs::write(dir.path().join("bc.txt"), text).unwrap();
    let train = |args: &[&str], out: &str| {
        cmd(dir.path())
            .args([
                "train",
                "--precision",
                "f64",
                "--max-epochs",
                "5",
                "-o",
                out,
            ])
            .args(args)
            .assert()
            .code(0);
        essence(&dir.path().join(out))
    };
    let want = train(&[csv.to_str().unwrap()], "csv.json");
    assert_eq!(
        train(&["bc.txt", "--delimiter", "whitespace"], "ws.json"),
        want
    );
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("ws.json")).unwrap())
            .unwrap();
    assert_eq!(model["training"]["data_layout"]["delimiter"], "whitespace");
    // Without the delimiter, the message says which one to give.
    cmd(dir.path())
        .args(["train", "bc.txt"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("--delimiter whitespace"));
    // The stream reads it too.
    cmd(dir.path())
        .args(["online", "bc.txt", "--delimiter", "space"])
        .assert()
        .code(0);
}
