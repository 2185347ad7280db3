//! `perceptron split`: disjoint, complete, reproducible, in file order.

use std::path::Path;

fn split(data: &Path, train: &Path, test: &Path, seed: &str) -> std::process::Output {
    assert_cmd::Command::cargo_bin("perceptron")
        .unwrap()
        .arg("split")
        .arg(data)
        .arg("-o")
        .arg(train)
        .arg("--test")
        .arg(test)
        .args(["--seed", seed, "--test-fraction", "0.25"])
        .output()
        .unwrap()
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn parts_are_disjoint_complete_reproducible_and_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    // The first feature is the row number, so positions identify rows.
    let data = dir.path().join("ids.csv");
    let text: String = (0..150)
        .map(|i| format!("{},{i},{}\n", if i % 3 == 0 { 1 } else { -1 }, i % 7))
        .collect();
    std::fs::write(&data, text).unwrap();
    let (tr, te) = (dir.path().join("tr.csv"), dir.path().join("te.csv"));
    assert!(split(&data, &tr, &te, "3").status.success());
    let (a, b) = (lines(&tr), lines(&te));
    assert_eq!((a.len(), b.len()), (112, 38));
    let id = |l: &String| l.split(',').nth(1).unwrap().parse::<usize>().unwrap();
    let (pa, pb): (Vec<usize>, Vec<usize>) =
        (a.iter().map(id).collect(), b.iter().map(id).collect());
    assert!(pa.windows(2).all(|w| w[0] < w[1]) && pb.windows(2).all(|w| w[0] < w[1]));
    let mut all: Vec<usize> = pa.iter().chain(&pb).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..150).collect::<Vec<_>>());
    // Same seed, same split; another seed, another split.
    let (tr2, te2) = (dir.path().join("tr2.csv"), dir.path().join("te2.csv"));
    assert!(split(&data, &tr2, &te2, "3").status.success());
    assert_eq!(lines(&te2), b);
    assert!(split(&data, &tr2, &te2, "4").status.success());
    assert_ne!(lines(&te2), b);
}

#[test]
fn bad_fractions_are_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("perceptron")
        .unwrap()
        .arg("split")
        .arg(root.join("data/iris_setosa.csv"))
        .args(["-o", "a.csv", "--test", "b.csv", "--test-fraction", "1.5"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("between 0 and 1"));
}

/// `split` writes a text input's lines as they were, and `convert` keeps
/// every value exactly unless a precision is asked for. Before, both read
/// the values in f32: `0.123456789012345` became `0.12345679`,
/// `12345678.9` became `12345679` and `1e-50` became `0`.
#[test]
fn split_and_convert_change_no_value() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = d.join("v.csv");
    let rows = [
        "1,0.123456789012345,2",
        "-1,12345678.9,1e-50",
        "1,0.50,3",
        "-1, 7 ,8",
        "1,-0.0,1e300",
        "-1,2.5,0.1",
    ];
    std::fs::write(
        &data,
        format!("# made by hand\ny,a,b\n{}\n\n", rows.join("\n")),
    )
    .unwrap();
    let (train, test) = (d.join("tr.csv"), d.join("te.csv"));
    let out = split(&data, &train, &test, "3");
    assert!(out.status.success(), "{out:?}");
    // Every data line lands in one part, as it was, after the header.
    let (a, b) = (lines(&train), lines(&test));
    assert_eq!((a[0].as_str(), b[0].as_str()), ("y,a,b", "y,a,b"));
    let mut all: Vec<String> = a[1..].iter().chain(&b[1..]).cloned().collect();
    all.sort();
    let mut want: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    want.sort();
    assert_eq!(all, want);
    // convert: to CSV, and through .pbin and back, the same values in f64.
    let values = |p: &Path| -> Vec<f64> {
        lines(p)
            .iter()
            .filter(|l| !l.starts_with('y') && !l.starts_with('#') && !l.trim().is_empty())
            .flat_map(|l| {
                l.split(',')
                    .skip(1)
                    .map(|v| v.trim().parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let convert = |args: &[&Path]| {
        let out = assert_cmd::Command::cargo_bin("perceptron")
            .unwrap()
            .arg("convert")
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let want = values(&data);
    let r = convert(&[&data, &d.join("c.csv")]);
    assert_eq!(values(&d.join("c.csv")), want);
    assert_eq!(r["precision"], "f64");
    assert!(
        r["precision_reason"]
            .as_str()
            .unwrap()
            .contains("row 1, column 1: 0.123456789012345 needs f64"),
        "{r}"
    );
    convert(&[&data, &d.join("c.pbin")]);
    convert(&[&d.join("c.pbin"), &d.join("back.csv")]);
    let back: Vec<f64> = values(&d.join("back.csv"));
    assert_eq!(
        back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    // Values that f32 holds exactly stay f32.
    let small = d.join("s.csv");
    std::fs::write(&small, "1,0.5,2\n-1,3,-0.25\n").unwrap();
    assert_eq!(convert(&[&small, &d.join("s.pbin")])["precision"], "f32");
}

/// Issue: a split to a full disk replaced `-o` and then failed on
/// `--test`. Both parts' sizes are checked against the disk (here lowered
/// by `PERCEPTRON_DISK_LIMIT`) before either is written: refused with both
/// numbers, both old files intact.
#[test]
fn a_split_larger_than_the_disk_is_refused_before_either_part_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.csv");
    let text: String = (0..200).map(|i| format!("{},{i}\n", i % 2)).collect();
    std::fs::write(&data, text).unwrap();
    let (tr, te) = (dir.path().join("tr.csv"), dir.path().join("te.csv"));
    std::fs::write(&tr, "old train\n").unwrap();
    std::fs::write(&te, "old test\n").unwrap();
    let out = assert_cmd::Command::cargo_bin("perceptron")
        .unwrap()
        .arg("split")
        .arg(&data)
        .arg("-o")
        .arg(&tr)
        .arg("--test")
        .arg(&te)
        .env("PERCEPTRON_DISK_LIMIT", "500")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write output: it would take at least ")
            && err.contains("but only 500 bytes is free under PERCEPTRON_DISK_LIMIT"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&tr).unwrap(), "old train\n");
    assert_eq!(std::fs::read_to_string(&te).unwrap(), "old test\n");
}

/// Issue: `split` to a full disk exited 1 with `-o` already replaced and
/// `--test` old, so the parts could share rows. Here the training part (a
/// copy of LIBSVM lines) fits under the disk limit and the test part (the
/// same rows as CSV, 500 columns each) does not: neither file changes.
#[test]
fn a_split_whose_second_part_fails_replaces_neither() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.svm");
    let text: String = (0..40)
        .map(|i| format!("{} 1:{i} 500:1\n", if i % 2 == 0 { "+1" } else { "-1" }))
        .collect();
    std::fs::write(&data, text).unwrap();
    let (tr, te) = (dir.path().join("tr.svm"), dir.path().join("te.csv"));
    std::fs::write(&tr, "old train\n").unwrap();
    std::fs::write(&te, "old test\n").unwrap();
    let run = |limit: &str| {
        assert_cmd::Command::cargo_bin("perceptron")
            .unwrap()
            .arg("split")
            .arg(&data)
            .arg("-o")
            .arg(&tr)
            .arg("--test")
            .arg(&te)
            .env("PERCEPTRON_DISK_LIMIT", limit)
            .output()
            .unwrap()
    };
    let out = run("5000");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("te.csv: cannot write output: it would take at least 7.8 KiB (8024 bytes)"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&tr).unwrap(), "old train\n");
    assert_eq!(std::fs::read_to_string(&te).unwrap(), "old test\n");
    let left = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(left, 3, "no temporary file left");
    assert!(run("1000000").status.success());
    assert_eq!(std::fs::read_to_string(&tr).unwrap().lines().count(), 32);
    assert_eq!(std::fs::read_to_string(&te).unwrap().lines().count(), 8);
}
