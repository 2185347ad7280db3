//! Outputs: a closed or full stdout, links and pipes.

use std::path::Path;

use super::*;
use crate::common::{cmd, data_str};

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
    assert_eq!(out.status.code(), Some(0), "{stderr}");
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

/// Issue: `train -o m.json --plot DIR` whose picture could not be written
/// exited 1 with m.json already replaced. The model and its pictures are
/// replaced together once all are written: here DIR/margins.svg, the last
/// output, is a directory, so the model and the curve keep their old
/// content and no temporary file is left.
#[cfg(feature = "plot")]
#[test]
fn a_picture_that_cannot_be_written_leaves_the_old_model() {
    let dir = tempfile::tempdir().unwrap();
    let pictures = dir.path().join("pictures");
    std::fs::create_dir_all(pictures.join("margins.svg")).unwrap();
    std::fs::write(pictures.join("curve.svg"), "old curve").unwrap();
    std::fs::write(dir.path().join("m.json"), "old model").unwrap();
    let train = |plot: &str| {
        cmd(dir.path())
            .args(["train", &data_str("iris_setosa.csv"), "-o", "m.json"])
            .args(["--plot", plot])
            .assert()
    };
    train("pictures").code(1).stderr(predicates::str::contains(
        "margins.svg: cannot write output: it is a directory",
    ));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.json")).unwrap(),
        "old model"
    );
    assert_eq!(
        std::fs::read_to_string(pictures.join("curve.svg")).unwrap(),
        "old curve"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temporary file"
    );
    assert_eq!(
        std::fs::read_dir(&pictures).unwrap().count(),
        2,
        "no temporary file"
    );
    // Once every output can be written, all are replaced.
    std::fs::remove_dir(pictures.join("margins.svg")).unwrap();
    train("pictures").success();
    assert!(
        std::fs::read_to_string(dir.path().join("m.json"))
            .unwrap()
            .starts_with('{')
    );
    assert!(
        std::fs::read_to_string(pictures.join("margins.svg"))
            .unwrap()
            .contains("<svg")
    );
}

/// A standard output closed from the start (`>&-`) is an error with a
/// non-zero exit, not a model or predictions lost with exit 0: the runtime
/// puts /dev/null in its place, so the command looks before it does.
/// /dev/null given on purpose stays fine.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_standard_output_closed_from_the_start_is_an_error_not_a_silent_loss() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin!("perceptron");
    let data = data_str("iris_setosa.csv");
    let sh = |script: &str| {
        std::process::Command::new("sh")
            .current_dir(dir.path())
            .arg("-c")
            .arg(script)
            .arg(bin)
            .arg(&data)
            .output()
            .unwrap()
    };
    for script in [
        r#""$0" train "$1" -o - >&-"#,
        r#""$0" train "$1" -o m.json && "$0" predict m.json "$1" >&-"#,
        r#""$0" online "$1" --predictions >&-"#,
    ] {
        let out = sh(script);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{script}: {stderr}");
        assert!(
            stderr.contains("standard output was closed when perceptron started"),
            "{script}: {stderr}"
        );
    }
    let out = sh(r#""$0" train "$1" -o - >/dev/null"#);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An output asked for by name on standard output (`-o -`) whose reader
/// goes away before it is complete is lost: an error, exit 1 (it used to
/// end quietly with exit 0). A report or predictions printed on standard
/// output without `-o` still end quietly (`predict ... | head`).
#[cfg(unix)]
#[test]
fn a_named_output_whose_reader_goes_away_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin!("perceptron");
    let data = data_str("iris_setosa.csv");
    let run = |command: &str| {
        // The reader (`true`) has exited before perceptron starts, so
        // every write meets a pipe without readers.
        let script = format!(r#"{{ sleep 0.3; {command} 2>err; echo $? >status; }} | true"#);
        let out = std::process::Command::new("sh")
            .current_dir(dir.path())
            .arg("-c")
            .arg(script)
            .arg(bin)
            .arg(&data)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let status = std::fs::read_to_string(dir.path().join("status")).unwrap();
        let err = std::fs::read_to_string(dir.path().join("err")).unwrap();
        (status.trim().to_owned(), err)
    };
    for command in [r#""$0" train "$1" -o -"#, r#""$0" convert "$1" -"#] {
        let (status, err) = run(command);
        assert_eq!(status, "1", "{command}: {err}");
        assert!(
            err.contains("its reader went away before the output was complete"),
            "{command}: {err}"
        );
    }
    let (status, err) = run(r#""$0" train "$1" -o m.json >/dev/null && "$0" predict m.json "$1""#);
    assert_eq!(status, "0", "{err}");
}
