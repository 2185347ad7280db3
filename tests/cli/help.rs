//! Every command's help teaches with examples.

use predicates::prelude::*;

use super::*;
use crate::common::cmd;

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
