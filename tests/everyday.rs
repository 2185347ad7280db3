//! What a new user meets in the first hour: the rough edges of everyday use
//! (messages, standard input and output, outputs that must not be replaced,
//! options that must not be ignored) and the scripts around the tool.

use std::path::Path;



#[allow(dead_code)]
fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[allow(dead_code)]
fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Writes an executable shell script.
#[cfg(unix)]
fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `scripts/fuzz` reports every target that fails, however it fails: a
/// target that dies at start-up leaves no status line in its log, which
/// once ended the script silently under `set -euo pipefail`.
#[cfg(unix)]
#[test]
fn the_fuzz_script_reports_every_failing_target() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    script(
        &bin.join("dies"),
        "echo 'INFO: Seed: 1'\necho 'ERROR: libFuzzer: deadly signal' >&2\nexit 77\n",
    );
    script(&bin.join("silent"), "exit 0\n");
    script(
        &bin.join("fine"),
        "printf '#2\\tINITED\\n#1000\\tDONE\\n'\necho 'stat::number_of_executed_units: 1000'\n",
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("bash")
        .arg(root.join("scripts/fuzz"))
        .env("FUZZ_BIN_DIR", &bin)
        .env("FUZZ_WORK", dir.path().join("work"))
        .env("FUZZ_TARGETS", "dies silent fine missing")
        .env("FUZZ_SECONDS", "1")
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr_of(&out));
    for (target, status) in [
        ("dies", "FAILED (exit 77)"),
        ("silent", "FAILED (exit 0, but no status line in its log)"),
        ("missing", "FAILED (exit 127)"),
    ] {
        assert!(
            text.contains(&format!("---- fuzz/{target}: {status}; the end of ")),
            "{target}: {text}"
        );
    }
    assert!(text.contains("ERROR: libFuzzer: deadly signal"), "{text}");
    assert!(text.contains("missing: No such file"), "{text}");
    assert!(text.contains("ok (1 s, no crash)"), "{text}");
    assert!(
        text.ends_with("fuzz: FAILED: dies silent missing\nfuzz: 1 passed, 3 failed\n"),
        "{text}"
    );
}
