//! Training from a memory-mapped `.pbin` gives exactly the model of the
//! same data parsed from text, on every engine, and so does reading it into
//! memory instead (`PERCEPTRON_NO_MMAP=1`).

use crate::common::{bin, essence, p};

use std::path::Path;
use std::process::Command;

/// Runs perceptron; `None` when it failed only for want of a GPU adapter
/// (outside CI).
fn run(args: &[&str], env: &[(&str, &str)]) -> Option<()> {
    let out = Command::new(bin())
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !matches!(out.status.code(), Some(0 | 3)) {
        let no_adapter = stderr.contains("no GPU adapter") || stderr.contains("backends tried");
        if no_adapter && std::env::var("CI").as_deref() != Ok("true") && args.contains(&"gpu") {
            eprintln!("SKIPPED: {args:?}: {stderr}");
            return None;
        }
        panic!("perceptron {args:?} {env:?} failed: {stderr}");
    }
    Some(())
}

#[test]
fn mapped_unmapped_and_text_data_train_the_identical_model() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (density, precision) in [
        ("dense", "f32"),
        ("dense", "f64"),
        ("sparse", "f32"),
        ("sparse", "f64"),
    ] {
        let (csv, pbin) = (d.join("d.csv"), d.join("d.pbin"));
        for out in [&csv, &pbin] {
            let mut args = vec!["gen", "--rows", "3000", "--features", "40", "--seed", "11"];
            args.extend([
                "--density",
                density,
                "--precision",
                precision,
                "--planted-margin",
            ]);
            args.extend(["0.002", "-o", p(out)]);
            if density == "sparse" {
                args.extend(["--nnz", "6"]);
            }
            run(&args, &[]).unwrap();
        }
        let train = |data: &Path, backend: &str, shuffle: bool, env: &[(&str, &str)]| {
            let model = d.join("m.json");
            let _ = std::fs::remove_file(&model);
            let mut args = vec!["train", p(data), "--backend", backend];
            args.extend([
                "--precision",
                precision,
                "--max-epochs",
                "8",
                "-o",
                p(&model),
            ]);
            if shuffle {
                args.extend(["--shuffle", "--seed", "3"]);
            }
            run(&args, env).map(|()| essence(&model))
        };
        for shuffle in [false, true] {
            let want = train(&csv, "reference", shuffle, &[]).unwrap();
            assert!(want.2.len() > 1, "the data should take several epochs");
            let case = format!("{density} {precision} shuffle {shuffle}");
            for backend in ["reference", "cpu", "gpu"] {
                for env in [&[][..], &[("PERCEPTRON_NO_MMAP", "1")][..]] {
                    if let Some(got) = train(&pbin, backend, shuffle, env) {
                        assert_eq!(got, want, "{case}, {backend}, {env:?}");
                    }
                }
            }
        }
    }
}

/// A mapped file is read in place: replacing it the way perceptron writes
/// files (a new file renamed over the old) while a run trains from it
/// leaves the run alone.
#[cfg(target_os = "linux")]
#[test]
fn a_file_replaced_by_rename_while_mapped_leaves_the_run_alone() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (csv, pbin) = (d.join("d.csv"), d.join("d.pbin"));
    let make = |rows: &str, seed: &str, out: &Path| {
        let args = [
            "gen",
            "--rows",
            rows,
            "--features",
            "50",
            "--planted-margin",
            "0.001",
        ];
        let mut args = args.to_vec();
        args.extend(["--seed", seed, "-o", p(out)]);
        run(&args, &[]).unwrap();
    };
    make("20000", "5", &csv);
    let expected = d.join("expected.json");
    let train = ["train", "--backend", "cpu", "--max-epochs", "20", "-o"];
    let mut args = train.to_vec();
    args.extend([p(&expected), p(&csv)]);
    run(&args, &[]).unwrap();
    let model = d.join("m.json");
    let mut replaced_while_mapped = false;
    for _ in 0..5 {
        make("20000", "5", &pbin);
        let child = Command::new(bin())
            .args(train)
            .args([p(&model), p(&pbin)])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Once the run has the file mapped, other data takes its name.
        let maps = format!("/proc/{}/maps", child.id());
        let name = pbin.file_name().unwrap().to_str().unwrap();
        loop {
            let mapped = std::fs::read_to_string(&maps).is_ok_and(|m| m.contains(name));
            if mapped {
                make("100", "9", &pbin);
                replaced_while_mapped = true;
                break;
            }
            if !Path::new(&maps).exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let out = child.wait_with_output().unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(essence(&model), essence(&expected));
        if replaced_while_mapped {
            break;
        }
    }
    assert!(
        replaced_while_mapped,
        "never saw the run with the file mapped"
    );
}

/// A mapped file takes no anonymous memory for its rows: a memory limit
/// far below the file's size refuses reading it into memory, and lets the
/// mapped run go on.
#[test]
fn a_mapped_file_is_not_held_to_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.pbin");
    let args = ["gen", "--rows", "20000", "--features", "50", "--seed", "2"];
    run(&[&args[..], &["-o", p(&data)]].concat(), &[]).unwrap();
    let size = std::fs::metadata(&data).unwrap().len();
    let limit = (size / 4).to_string();
    let info = |env: &[(&str, &str)]| {
        Command::new(bin())
            .args(["info", p(&data)])
            .env("PERCEPTRON_MEMORY_LIMIT", &limit)
            .envs(env.iter().copied())
            .output()
            .unwrap()
    };
    let mapped = info(&[]);
    assert!(
        mapped.status.success(),
        "{}",
        String::from_utf8_lossy(&mapped.stderr)
    );
    let read = info(&[("PERCEPTRON_NO_MMAP", "1")]);
    assert_eq!(read.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&read.stderr).contains("needs more memory than is available"));
}
