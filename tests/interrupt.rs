//! Interrupted runs lose nothing: Ctrl-C saves the exact state, SIGKILL at
//! any moment leaves the last checkpoint intact, and resuming gives the
//! bit-identical model of an uninterrupted run.
#![cfg(unix)]

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Rng, bin, essence};

/// A noisy dataset that takes a couple of seconds to train 60 epochs with
/// the reference loop in a debug build.
fn write_data(dir: &Path) -> PathBuf {
    let mut rng = Rng(0x5eed);
    let mut text = String::new();
    for _ in 0..6000 {
        let x: Vec<f64> = (0..40).map(|_| (rng.unit() * 8.0).round() - 4.0).collect();
        let s: f64 = x
            .iter()
            .enumerate()
            .map(|(k, v)| v * ((k % 7) as f64 - 3.0))
            .sum();
        let y = if (s > 0.0) ^ (rng.unit() < 0.1) {
            1
        } else {
            -1
        };
        text.push_str(&y.to_string());
        for v in x {
            text.push_str(&format!(",{v}"));
        }
        text.push('\n');
    }
    let path = dir.join("noisy.csv");
    std::fs::write(&path, text).unwrap();
    path
}

fn train(data: &Path, model: &Path, extra: &[&str]) -> Command {
    train_for(60, data, model, extra)
}

/// `train` for `epochs` epochs on the reference loop, unless `extra` names
/// another `--backend`.
fn train_for(epochs: usize, data: &Path, model: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.arg("train")
        .arg(data)
        .args(["--max-epochs", &epochs.to_string()]);
    if !extra.contains(&"--backend") {
        c.args(["--backend", "reference"]);
    }
    c.arg("-o")
        .arg(model)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} failed");
}

fn wait_for(path: &Path, limit: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn ctrl_c_saves_the_state_and_resuming_gives_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let full = dir.path().join("full.json");
    let st = train(&data, &full, &["--require-convergence"])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(3), "the noisy data does not converge");

    // SIGTERM (`timeout`, a batch system) stops a run as Ctrl-C does.
    for sig in ["-INT", "-TERM"] {
        let model = dir.path().join("model.json");
        let ck = dir.path().join("ck.json");
        let _ = std::fs::remove_file(&ck);
        let ck_arg = ck.to_str().unwrap();
        let child = train(&data, &model, &["--checkpoint", ck_arg])
            .spawn()
            .unwrap();
        assert!(
            wait_for(&ck, Duration::from_secs(60)),
            "no checkpoint after the first epoch"
        );
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{sig}: {stderr}");
        assert!(stderr.contains("--resume"), "{sig}: {stderr}");
        assert!(!model.exists(), "an interrupted run writes no model");

        let st = train(&data, &model, &["--checkpoint", ck_arg, "--resume", ck_arg])
            .status()
            .unwrap();
        // Not converged at the cap: exit 0 with a note (the model is written).
        assert_eq!(st.code(), Some(0));
        assert_eq!(essence(&model), essence(&full), "{sig}");
        std::fs::remove_file(&model).unwrap();
    }
}

/// The epoch a checkpoint file records, or None before the first one. The
/// file is replaced atomically, so a read never sees half of one.
fn checkpoint_epoch(ck: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(ck).ok()?;
    let c: serde_json::Value = serde_json::from_str(&text).ok()?;
    c["epoch"].as_u64()
}

#[test]
fn repeated_sigkill_then_resume_gives_the_same_model() {
    sigkill_rounds(&[]);
}

/// The same on the CPU engine, whose state between rows (certified
/// windows, the shuffled order, the running average) must all come back
/// from the checkpoint exactly.
#[test]
fn repeated_sigkill_on_the_cpu_engine_shuffled_and_averaged() {
    sigkill_rounds(&["--backend", "cpu", "--shuffle", "--seed", "11", "--average"]);
}

/// Kills five runs at random moments after each has checkpointed progress
/// of its own, resuming each time, then checks the final model against an
/// uninterrupted run with the same `options`.
fn sigkill_rounds(options: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let full = dir.path().join("full.json");
    let t0 = Instant::now();
    let st = train(&data, &full, options).status().unwrap();
    // The noisy data does not converge: the cap ends the run with exit 0.
    assert_eq!(st.code(), Some(0), "the noisy data runs to the cap");
    let epoch = t0.elapsed().as_secs_f64() / 60.0;

    let model = dir.path().join("model.json");
    let ck = dir.path().join("ck.json");
    let ck_arg = ck.to_str().unwrap();
    let mut rng = Rng(0xdead);
    let mut resumed_at = Vec::new();
    let mut killed = 0;
    for _ in 0..5 {
        let mut args = options.to_vec();
        args.extend(["--checkpoint", ck_arg]);
        let before = checkpoint_epoch(&ck);
        if let Some(e) = before {
            args.extend(["--resume", ck_arg]);
            resumed_at.push(e);
        }
        let mut child = train(&data, &model, &args).spawn().unwrap();
        // Kill at a random moment after this run has made progress of its
        // own, so the kill lands mid-epoch or mid-write however fast the
        // machine is, and every round moves the run forward.
        let t = Instant::now();
        while checkpoint_epoch(&ck) == before && t.elapsed() < Duration::from_secs(60) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_secs_f64(epoch * 2.0 * rng.unit()));
        signal(&child, "-KILL");
        if child.wait().unwrap().signal() == Some(9) {
            killed += 1;
        }
    }
    assert_eq!(killed, 5, "every run must be killed mid-training");
    assert!(ck.exists(), "some checkpoint must have been written");
    let mut args = options.to_vec();
    args.extend(["--checkpoint", ck_arg, "--resume", ck_arg]);
    let st = train(&data, &model, &args).status().unwrap();
    assert_eq!(st.code(), Some(0));
    assert_eq!(
        essence(&model),
        essence(&full),
        "resumed at epochs {resumed_at:?}"
    );
}

/// `train DATA --resume FILE` alone continues an interrupted run: every
/// option the checkpoint records (here all different from the defaults, -o
/// and the checkpoint file included) is taken from it, and the model is the
/// uninterrupted run's. A resumed run that is interrupted again says to run
/// the same command, not to add `--resume` once more.
#[test]
fn resume_alone_adopts_the_checkpoints_options() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let options = [
        "--max-epochs",
        "40",
        "--precision",
        "f64",
        "--no-bias",
        "--shuffle",
        "--seed",
        "5",
        "--average",
        "--margin",
        "0.5",
        "--backend",
        "reference",
    ];
    let run = |extra: &[&str]| {
        let mut c = Command::new(bin());
        c.arg("train")
            .arg(&data)
            .args(extra)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    };
    let st = run(&[&options[..], &["-o", "full.json"]].concat())
        .status()
        .unwrap();
    // --average runs every epoch: exit 0 although the data is noisy.
    assert_eq!(st.code(), Some(0), "the averaged run ends normally");

    // The checkpoint's name goes with the model's (custom.json's), so
    // resuming may write the model where the checkpoint says.
    let ck = dir.path().join("custom.checkpoint.json");
    let child = run(&[
        &options[..],
        &[
            "-o",
            "custom.json",
            "--checkpoint",
            "custom.checkpoint.json",
        ],
    ]
    .concat())
    .spawn()
    .unwrap();
    assert!(wait_for(&ck, Duration::from_secs(60)), "no checkpoint");
    signal(&child, "-INT");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("continue with the same command plus `--resume custom.checkpoint.json`"),
        "{stderr}"
    );
    // Under another name, the checkpoint's model path is not obeyed alone.
    std::fs::copy(&ck, dir.path().join("received.json")).unwrap();
    let out = run(&["--resume", "received.json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("add `-o custom.json`"), "{stderr}");
    assert!(!dir.path().join("custom.json").exists());

    // Resume with nothing but the data and the checkpoint (the backend is
    // not an option of the run: every backend gives the same model).
    // Interrupt the first two resumed runs as soon as they have made
    // progress, then let one finish.
    let custom = dir.path().join("custom.json");
    let mut code = None;
    for round in 0..3 {
        let before = checkpoint_epoch(&ck);
        let mut child = run(&[
            "--resume",
            "custom.checkpoint.json",
            "--backend",
            "reference",
        ])
        .spawn()
        .unwrap();
        let t = Instant::now();
        while checkpoint_epoch(&ck) == before && t.elapsed() < Duration::from_secs(60) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if round < 2 {
            signal_if_running(&mut child, "-INT");
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        code = out.status.code();
        match code {
            Some(130) => {
                assert!(
                    stderr.contains(
                        "continue with the same command (its --resume reads the new state)"
                    ),
                    "{stderr}"
                );
                assert!(!stderr.contains("plus `--resume"), "{stderr}");
            }
            Some(0) => break,
            other => panic!("exit {other:?}: {stderr}"),
        }
        assert!(!custom.exists(), "an interrupted run writes no model");
    }
    assert_eq!(code, Some(0), "some resumed run finishes");
    assert!(
        !dir.path().join("model.json").exists(),
        "-o was taken from the checkpoint"
    );
    assert_eq!(essence(&custom), essence(&dir.path().join("full.json")));
}

/// Sends `sig` unless the child has already exited (a finished run's pid
/// must not be signalled: it may be reused).
fn signal_if_running(child: &mut Child, sig: &str) {
    if child.try_wait().unwrap().is_none() {
        signal(child, sig);
    }
}

#[test]
fn resuming_with_other_data_or_options_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let model = dir.path().join("model.json");
    let ck = dir.path().join("ck.json");
    let ck_arg = ck.to_str().unwrap();
    train_for(2, &data, &model, &["--checkpoint", ck_arg])
        .status()
        .unwrap();
    assert!(ck.exists());
    let other = dir.path().join("other.csv");
    let text = std::fs::read_to_string(&data)
        .unwrap()
        .replacen(",4", ",3", 1);
    std::fs::write(&other, text).unwrap();
    let cases: Vec<(PathBuf, usize, Vec<&str>, &str)> = vec![
        (other.clone(), 2, vec![], "the data differ"),
        (data.clone(), 2, vec!["--no-bias"], "now --no-bias"),
        (
            data.clone(),
            2,
            vec!["--precision", "f64"],
            "--precision was f32, now f64",
        ),
        (
            data.clone(),
            2,
            vec!["--shuffle", "--seed", "3"],
            "--shuffle --seed 3",
        ),
        (
            data.clone(),
            2,
            vec!["--average"],
            "the variant was classic, now averaged",
        ),
    ];
    for (d, epochs, extra, fragment) in cases {
        let mut c = train_for(epochs, &d, &model, &["--resume", ck_arg]);
        c.args(&extra);
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(fragment), "{extra:?}: {stderr}");
        // The same file under another precision is not called other data
        // (its fingerprint, of the values as read, differs all the same).
        if d == data {
            assert!(!stderr.contains("the data differ"), "{extra:?}: {stderr}");
        }
    }
}

/// The hidden temporary files in `dir` (`.perceptron-*.tmp`).
fn temporary_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".perceptron-") && n.ends_with(".tmp"))
        .collect()
}

/// Ctrl-C or SIGTERM (as `timeout` sends) in the middle of a long `gen`
/// stops it at once: exit 130, a message, no temporary file left, and the
/// existing output as it was.
#[test]
fn an_interrupted_gen_removes_its_temporary_file_and_keeps_the_output() {
    for sig in ["-INT", "-TERM"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("big.pbin");
        std::fs::write(&out, b"precious").unwrap();
        // 2 GB if it ran to the end: minutes in a debug build, seconds in
        // a release one; it is stopped well before.
        let child = Command::new(bin())
            .args(["gen", "--rows", "5000000", "--features", "100", "-o"])
            .arg(&out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while temporary_files(dir.path()).is_empty() && t0.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            !temporary_files(dir.path()).is_empty(),
            "{sig}: gen never started writing"
        );
        std::thread::sleep(Duration::from_millis(100));
        signal(&child, sig);
        let result = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(130), "{sig}: {stderr}");
        assert_eq!(
            stderr,
            format!(
                "perceptron: interrupted: {} was not written (the partial output was removed; an \
                 existing file is left as it was)\n",
                out.display()
            ),
            "{sig}"
        );
        assert!(
            result.stdout.is_empty(),
            "{sig}: no summary of a run that stopped"
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"precious", "{sig}");
        assert_eq!(temporary_files(dir.path()), Vec::<String>::new(), "{sig}");
    }
}

#[test]
fn a_killed_run_leaves_an_existing_model_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let t0 = Instant::now();
    train(&data, &dir.path().join("timing.json"), &[])
        .status()
        .unwrap();
    let whole = t0.elapsed().as_secs_f64();
    let model = dir.path().join("model.json");
    std::fs::write(&model, b"{\"precious\": true}\n").unwrap();
    // Kill mid-run; retry earlier if the run happened to finish first.
    let mut fraction = 0.5;
    loop {
        let mut child = train(&data, &model, &[]).spawn().unwrap();
        std::thread::sleep(Duration::from_secs_f64(whole * fraction));
        signal(&child, "-KILL");
        if child.wait().unwrap().signal() == Some(9) {
            break;
        }
        fraction /= 2.0;
        assert!(fraction > 0.01, "could not kill the run before it finished");
        std::fs::write(&model, b"{\"precious\": true}\n").unwrap();
    }
    assert_eq!(std::fs::read(&model).unwrap(), b"{\"precious\": true}\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(
        leftovers.is_empty() || leftovers.len() == 1,
        "at most one stray temporary file"
    );
}

/// A checkpoint is data a user may have received: its counters are checked
/// against each other and the run before anything resumes. A one-vs-rest
/// checkpoint with one count per epoch instead of one per class made the
/// resumed run panic (exit 101); counts that wrap, a position past the
/// last row, and an averaged run's missing average were taken as they were.
#[test]
fn hand_edited_checkpoints_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let digits = crate::common::data_file("digits.csv");
    let run = |extra: &[&str]| {
        Command::new(bin())
            .current_dir(d)
            .arg("train")
            .arg(&digits)
            .args([
                "-o",
                "m.json",
                "--max-epochs",
                "3",
                "--checkpoint",
                "ck.json",
            ])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let edit = |extra: &[&str], change: &dyn Fn(&mut serde_json::Value)| {
        let out = run(extra);
        assert!(matches!(out.status.code(), Some(0 | 3)), "{out:?}");
        let text = std::fs::read_to_string(d.join("ck.json")).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        change(&mut v);
        std::fs::write(d.join("ck.json"), v.to_string()).unwrap();
        let mut args = extra.to_vec();
        args.extend(["--resume", "ck.json"]);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let ovr = ["--multiclass", "ovr"];
    let err = edit(&ovr, &|v| {
        v["head_mistakes_per_epoch"] = serde_json::json!(vec![vec![0]; 10]);
    });
    assert!(err.contains("per-class mistake counts"), "{err}");
    let err = edit(&["--positive", "0"], &|v| {
        v["mistakes_per_epoch"][0] = serde_json::json!(u64::MAX);
    });
    assert!(err.contains("more than a 64-bit count holds"), "{err}");
    let err = edit(&["--positive", "0"], &|v| {
        v["position"] = serde_json::json!(1797);
        v["epoch"] = serde_json::json!(v["mistakes_per_epoch"].as_array().unwrap().len());
    });
    assert!(
        err.contains("its epoch, row and counters do not agree"),
        "{err}"
    );
    let err = edit(&["--positive", "0", "--average"], &|v| {
        v["average"] = serde_json::Value::Null;
    });
    assert!(err.contains("lacks an average"), "{err}");
    // Counts no run on these rows can make: more mistakes in an epoch than
    // rows (which also let the total wrap), more so far than rows visited,
    // an epoch without mistakes that training went on from.
    let err = edit(&["--positive", "0"], &|v| {
        v["mistakes_per_epoch"][0] = serde_json::json!(1798);
    });
    assert!(
        err.contains("mistakes_per_epoch[0] is 1798, more than the 1797 mistakes"),
        "{err}"
    );
    let err = edit(&["--positive", "0"], &|v| {
        v["position"] = serde_json::json!(10);
        v["mistakes_in_epoch"] = serde_json::json!(11);
    });
    assert!(err.contains("its mistakes_in_epoch is 11"), "{err}");
    let err = edit(&["--positive", "0"], &|v| {
        v["mistakes_per_epoch"] = serde_json::json!([0, 1]);
        v["epoch"] = serde_json::json!(2);
        v["position"] = serde_json::json!(0);
        v["mistakes_in_epoch"] = serde_json::json!(0);
    });
    assert!(
        err.contains("mistakes_per_epoch[0] is 0, but training stops"),
        "{err}"
    );
    let err = edit(&ovr, &|v| {
        v["identity"]["heads"] = serde_json::json!(11);
    });
    assert!(err.contains("identity.heads is 11"), "{err}");
    let err = edit(&["--positive", "0", "--pocket"], &|v| {
        v.as_object_mut().unwrap().remove("pocket");
    });
    assert!(err.contains("its pocket is missing"), "{err}");
    // A cap taken from the checkpoint (not the default) is said; one given
    // on the command line is not.
    let out = run(&["--positive", "0"]);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{out:?}");
    let text = std::fs::read_to_string(d.join("ck.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["identity"]["max_epochs"] = serde_json::json!(5);
    std::fs::write(d.join("ck.json"), v.to_string()).unwrap();
    let resume = |extra: &[&str]| {
        let out = Command::new(bin())
            .current_dir(d)
            .arg("train")
            .arg(&digits)
            .args(["-o", "m.json", "--positive", "0", "--resume", "ck.json"])
            .args(["--checkpoint", "ck2.json"])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        String::from_utf8(out.stderr).unwrap()
    };
    let err = resume(&[]);
    assert!(
        err.contains("at most 5 epochs, as the checkpoint says"),
        "{err}"
    );
    let err = resume(&["--max-epochs=6"]);
    assert!(!err.contains("as the checkpoint says"), "{err}");
}

/// The 1 GiB cap on model files holds for `--resume` and `--init` too: a
/// larger file is refused before it is read (it was read whole, and
/// `--resume /dev/zero` read until memory ran out; such a device is now cut
/// at the cap).
#[test]
fn resume_and_init_files_are_capped_like_models() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = d.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(perceptron::model::MAX_MODEL_BYTES + 1)
        .unwrap();
    for (flag, what) in [("--resume", "checkpoints"), ("--init", "model files")] {
        let out = Command::new(bin())
            .current_dir(d)
            .arg("train")
            .arg(crate::common::data_file("iris_setosa.csv"))
            .args(["-o", "m.json", flag])
            .arg(&big)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("{what} over 1073741824 bytes are refused")),
            "{flag}: {err}"
        );
    }
}

#[test]
fn a_resumed_run_takes_a_larger_epoch_cap_and_refuses_one_it_has_passed() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let ck = dir.path().join("ck.json");
    let ck_arg = ck.to_str().unwrap();
    let model = dir.path().join("m.json");
    // Three epochs with a checkpoint after each (the last one, after epoch
    // 2, is the state to resume from).
    train_for(3, &data, &model, &["--checkpoint", ck_arg])
        .status()
        .unwrap();
    assert!(ck.exists());
    // Extended to 6 epochs: the run of 6 epochs from the start, bit for bit.
    let extended = dir.path().join("extended.json");
    let st = train_for(6, &data, &extended, &["--resume", ck_arg])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
    let fresh = dir.path().join("fresh.json");
    train_for(6, &data, &fresh, &[]).status().unwrap();
    assert_eq!(essence(&extended), essence(&fresh));
    // A cap the checkpoint has passed would change the result: refused.
    let out = train_for(1, &data, &dir.path().join("x.json"), &["--resume", ck_arg])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("now 1, which the checkpoint has already passed"),
        "{stderr}"
    );
}

/// The checkpoint of a run that converged holds its epoch without a
/// mistake: resuming it ends where the run ended, with its model, and
/// leaves a checkpoint that resumes again. (It used to train one epoch
/// more, record a history an uninterrupted run never has, and save a
/// checkpoint the next resume refused as corrupt.)
#[test]
fn resuming_a_converged_runs_checkpoint_ends_as_the_run_did() {
    let dir = tempfile::tempdir().unwrap();
    let data = crate::common::data_file("iris_setosa.csv");
    let ck = dir.path().join("ck.json");
    let ck_arg = ck.to_str().unwrap();
    let model = dir.path().join("m.json");
    let st = train_for(1000, &data, &model, &["--checkpoint", ck_arg])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
    for round in 0..2 {
        let resumed = dir.path().join(format!("resumed{round}.json"));
        let out = train_for(1000, &data, &resumed, &["--resume", ck_arg])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "round {round}: {stderr}");
        assert_eq!(essence(&resumed), essence(&model), "round {round}");
    }
}

/// A stop request that arrives after the loop, while the model and its
/// pictures are being written, is honoured at the next safe point: exit
/// 130, the old model and pictures left as they were, no temporary file,
/// and the trained state saved, from which the same command writes the
/// model of an uninterrupted run. (It used to be ignored: exit 0, every
/// output replaced.) The test pauses the run at each safe point of the
/// writing, so that the signal lands between the model and the pictures.
#[test]
fn a_signal_while_the_model_is_written_stops_before_anything_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path());
    let full = dir.path().join("full.json");
    let st = train_for(3, &data, &full, &[]).status().unwrap();
    assert_eq!(st.code(), Some(0));

    let model = dir.path().join("model.json");
    let pics = dir.path().join("pics");
    std::fs::create_dir(&pics).unwrap();
    std::fs::write(&model, "old model").unwrap();
    std::fs::write(pics.join("curve.svg"), "old curve").unwrap();
    // No --checkpoint: the state must be saved where the message says (the
    // default path), not staged with the outputs that were abandoned (it
    // used to be removed with them).
    let ck = dir.path().join("model.checkpoint.json");
    let extra = ["--plot", pics.to_str().unwrap()];
    let child = train_for(3, &data, &model, &extra)
        .env("PERCEPTRON_TEST_PAUSE_BEFORE_WRITING", "1500")
        .spawn()
        .unwrap();
    // The first pause (before the model) ends at about 1.5 s, the second
    // (after it, before the pictures) at about 3 s.
    std::thread::sleep(Duration::from_millis(2200));
    signal(&child, "-TERM");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("training had ended"), "{stderr}");
    assert!(stderr.contains("was not replaced"), "{stderr}");
    assert!(stderr.contains(ck.to_str().unwrap()), "{stderr}");
    assert!(ck.exists(), "the checkpoint the message names: {stderr}");
    assert_eq!(std::fs::read_to_string(&model).unwrap(), "old model");
    assert_eq!(
        std::fs::read_to_string(pics.join("curve.svg")).unwrap(),
        "old curve"
    );
    assert!(
        temporary_files(dir.path()).is_empty(),
        "{:?}",
        temporary_files(dir.path())
    );
    assert!(
        temporary_files(&pics).is_empty(),
        "{:?}",
        temporary_files(&pics)
    );

    let resume = ["--resume", ck.to_str().unwrap()];
    let st = train_for(3, &data, &model, &resume).status().unwrap();
    assert_eq!(st.code(), Some(0));
    assert_eq!(essence(&model), essence(&full));
}
