//! `perceptron completions` and `perceptron man`: generated from the clap
//! definitions, so they name every command and option `--help` names.

use crate::common::{cmd, p};

fn stdout(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = cmd(dir.path()).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn completion_scripts_know_the_commands_and_their_options() {
    let bash = stdout(&["completions", "bash"]);
    for word in [
        "train",
        "predict",
        "cv",
        "--max-epochs",
        "--scale",
        "--class-weight",
        "completions",
    ] {
        assert!(bash.contains(word), "bash script lacks {word}");
    }
    // The script is valid bash.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("perceptron.bash");
    std::fs::write(&script, &bash).unwrap();
    let check = std::process::Command::new("bash")
        .args(["-n", p(&script)])
        .status();
    if let Ok(status) = check {
        assert!(status.success(), "bash -n refused the script");
    }
    let zsh = stdout(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef perceptron"), "{}", &zsh[..40]);
    let fish = stdout(&["completions", "fish"]);
    assert!(fish.contains("complete -c perceptron"));
    assert!(fish.contains("-l backend"));
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    cmd(dir.path())
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("possible values: bash"));
}

#[test]
fn manual_pages_are_roff_for_every_command() {
    let top = stdout(&["man"]);
    assert!(top.contains(".TH perceptron 1"), "{top}");
    assert!(top.contains("perceptron\\-train(1)"), "lists the commands");
    let train = stdout(&["man", "train"]);
    assert!(
        train.contains(".TH perceptron-train 1  \"perceptron 0."),
        "{train}"
    );
    assert!(train.contains("\\-\\-max\\-epochs"));
    assert!(
        train.contains("Exit status"),
        "the examples section is there"
    );

    let dir = tempfile::tempdir().unwrap();
    cmd(dir.path())
        .args(["man", "--dir", "."])
        .assert()
        .success();
    for page in ["perceptron.1", "perceptron-train.1", "perceptron-man.1"] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        assert!(text.starts_with(".ie"), "{page} is roff");
    }
    cmd(dir.path())
        .args(["man", "nope"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "no command `nope`; the commands are train",
        ));
    // A missing directory is created, as -o creates an output's (it was
    // refused); a file in the way is not a directory.
    cmd(dir.path())
        .args(["man", "--dir", "missing/man1"])
        .assert()
        .success();
    assert!(dir.path().join("missing/man1/perceptron.1").is_file());
    std::fs::write(dir.path().join("a_file"), "x").unwrap();
    cmd(dir.path())
        .args(["man", "--dir", "a_file"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a directory"));
}
