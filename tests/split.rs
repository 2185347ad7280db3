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
