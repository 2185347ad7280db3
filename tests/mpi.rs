//! `train --distributed` under `mpirun`, on loopback: exact mode writes the
//! single process's model bit for bit (dense and sparse, f32 and f64,
//! shuffled, every variant, one-vs-rest, `.pbin`, shards) for 1 to 4 ranks;
//! mix mode is reproducible and converges on separable data; a rank with
//! bad data, or killed, ends the job cleanly without output; checkpoints
//! resume across rank counts.
//!
//! These need the binary built with `--features mpi` and Open MPI's
//! `mpirun` (`scripts/test-all` runs `cargo test --features mpi --test
//! tests mpi::`). Without the feature they skip and say so; with it but
//! without `mpirun` they skip, except under CI=true, where they fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{bin, data_file, p};

/// Whether the tests can run here (else why not, on stderr).
fn ready() -> bool {
    if !cfg!(feature = "mpi") {
        eprintln!(
            "skipped: the binary under test was built without MPI; run `cargo test --features mpi \
             --test tests mpi::` (scripts/test-all does)"
        );
        return false;
    }
    let found = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "mpirun not found: under CI=true the MPI tests must run (apt-get install openmpi-bin)"
        );
        eprintln!("skipped: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)");
        return false;
    }
    true
}

/// `mpirun` with `k` ranks of the binary under test, in `dir`, without
/// mpirun's own notices (of an exit status not 0, say).
fn mpirun(k: usize, dir: &Path, args: &[&str]) -> Output {
    launch(k, dir, args, &[], true)
}

/// `mpirun` with its notices (which name a rank that died), and `env`.
fn mpirun_env(k: usize, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    launch(k, dir, args, env, false)
}

fn launch(k: usize, dir: &Path, args: &[&str], env: &[(&str, &str)], quiet: bool) -> Output {
    let mut c = Command::new("mpirun");
    if quiet {
        c.arg("--quiet");
    }
    c.args(["--oversubscribe", "-np", &k.to_string()])
        .arg(bin())
        .args(args)
        .current_dir(dir)
        // Open MPI refuses root without these (containers, CI).
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("NODEVICE_SELECT", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// The binary alone, in `dir`.
fn single(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env("NODEVICE_SELECT", "1")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A model file without what may differ between equal models: the time,
/// the engines' names and the distributed record.
fn model(path: &Path) -> Value {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    if let Some(t) = v.get_mut("training").and_then(Value::as_object_mut) {
        for k in ["seconds", "backend", "distributed"] {
            t.remove(k);
        }
    }
    v
}

/// Trains `data` with `args` in one process and exactly on 1 to 4 ranks:
/// the same model file (but for the time and the engines' names).
fn exact_everywhere(dir: &Path, data: &[&str], args: &[&str], ranks: &[usize]) {
    let want = dir.join("single.json");
    let mut line: Vec<&str> = vec!["train"];
    line.extend(data);
    line.extend(args);
    let base = line.clone();
    let mut one = base.clone();
    one.extend(["-o", p(&want)]);
    let out = single(dir, &one);
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(3),
        "{}",
        text(&out.stderr)
    );
    for &k in ranks {
        let got = dir.join(format!("ranks-{k}.json"));
        let mut many = base.clone();
        many.extend(["--distributed", "exact", "-o", p(&got), "--json"]);
        let out = mpirun(k, dir, &many);
        assert_eq!(
            out.status.code(),
            single(dir, &one).status.code(),
            "{many:?} on {k}: {}",
            text(&out.stderr)
        );
        assert_eq!(model(&got), model(&want), "{many:?} on {k} ranks");
        // Rank 0 alone prints: one JSON object, and nothing on stderr but
        // the not-converged notice.
        let stdout = text(&out.stdout);
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        let report: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(report["distributed"]["ranks"], k);
        assert_eq!(report["distributed"]["mode"], "exact");
        let stderr = text(&out.stderr);
        assert!(
            stderr.is_empty() || stderr.lines().all(|l| l.contains("not converged")),
            "{stderr}"
        );
    }
}

#[test]
fn exact_mode_writes_the_single_process_model_on_1_to_4_ranks() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: &[(&str, &[&str])] = &[
        ("digits_3v5.csv", &[]),
        (
            "heart_scale.svm",
            &["--precision", "f64", "--max-epochs", "20"],
        ),
        (
            "breast_cancer.csv",
            &["--shuffle", "--seed", "3", "--max-epochs", "15"],
        ),
        (
            "heart_scale.svm",
            &[
                "--average",
                "--max-epochs",
                "12",
                "--shuffle",
                "--seed",
                "9",
            ],
        ),
        (
            "breast_cancer.svm",
            &["--pocket", "--max-epochs", "8", "--precision", "f64"],
        ),
        ("iris_setosa.csv.gz", &["--margin", "2", "--no-bias"]),
        ("digits.csv", &["--multiclass", "ovr", "--max-epochs", "3"]),
    ];
    for (name, args) in cases {
        exact_everywhere(d, &[p(&data_file(name))], args, &[1, 2, 3, 4]);
    }
}

/// Every dataset of the repository, as it is, on 1 to 4 ranks (block
/// boundaries fall inside runs of mistakes in the early epochs of all).
#[test]
fn exact_mode_on_every_repository_dataset() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(data_file(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv") || n.ends_with(".svm") || n.ends_with(".gz"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    for name in &names {
        // The ten digits need one-vs-rest; the rest are two classes.
        let args: &[&str] = if name == "digits.csv" {
            &["--multiclass", "ovr", "--max-epochs", "4"]
        } else {
            &["--max-epochs", "30"]
        };
        exact_everywhere(dir.path(), &[p(&data_file(name))], args, &[1, 2, 3, 4]);
    }
}

#[test]
fn exact_mode_from_pbin_shards_and_a_warm_start() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A .pbin: each rank maps only its rows.
    let pbin = d.join("digits.pbin");
    let out = single(d, &["convert", p(&data_file("digits_0v1.svm")), p(&pbin)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    exact_everywhere(d, &[p(&pbin)], &["--precision", "f64"], &[2, 3]);
    // Shards, as a list and as a pattern, with headers and comments.
    let whole = std::fs::read_to_string(data_file("breast_cancer.csv")).unwrap();
    let lines: Vec<&str> = whole.lines().collect();
    let mut shards: Vec<PathBuf> = Vec::new();
    for (s, (a, b)) in [(0, 150), (150, 151), (151, lines.len())]
        .into_iter()
        .enumerate()
    {
        let path = d.join(format!("bc-{s}.csv"));
        std::fs::write(&path, format!("# shard {s}\n{}\n", lines[a..b].join("\n"))).unwrap();
        shards.push(path);
    }
    let list: Vec<&str> = shards.iter().map(|s| p(s)).collect();
    exact_everywhere(d, &list, &["--max-epochs", "10"], &[2, 4]);
    let pattern = d.join("bc-*.csv");
    exact_everywhere(
        d,
        &[p(&pattern)],
        &["--max-epochs", "10", "--average"],
        &[3],
    );
    // A warm start from a model trained on part of the data.
    let init = d.join("init.json");
    let out = single(d, &["train", list[0], "-o", p(&init), "--max-epochs", "2"]);
    assert!(out.status.code().is_some(), "{}", text(&out.stderr));
    exact_everywhere(d, &list, &["--init", p(&init), "--max-epochs", "6"], &[2]);
}

#[test]
fn exact_mode_on_the_gpu_backend() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let probe = single(dir.path(), &["devices"]);
    if !text(&probe.stdout).contains("lavapipe") && !text(&probe.stdout).contains("llvmpipe") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no software GPU adapter under CI=true: {}",
            text(&probe.stdout)
        );
        eprintln!("skipped: no GPU adapter");
        return;
    }
    exact_everywhere(
        dir.path(),
        &[p(&data_file("digits_3v5.csv"))],
        &["--backend", "gpu"],
        &[2],
    );
}

#[test]
fn one_rank_without_mpirun_is_todays_result() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = data_file("heart_scale.svm");
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    let args = ["train", p(&data), "--max-epochs", "30"];
    let plain = single(d, &[&args[..], &["-o", p(&a)]].concat());
    let alone = single(
        d,
        &[&args[..], &["--distributed", "exact", "-o", p(&b)]].concat(),
    );
    assert_eq!(
        plain.status.code(),
        alone.status.code(),
        "{}",
        text(&alone.stderr)
    );
    assert_eq!(model(&a), model(&b));
}

/// A signal that arrives once training has ended, before the model is
/// written, stops a distributed run as it stops one process: exit 130, the
/// old model left as it was, and the trained state saved, from which the
/// same command writes the uninterrupted run's model. (It used to write the
/// model and exit 0.) The test pauses the run at each safe point of the
/// writing, so that the signal lands in the first pause.
#[test]
fn a_signal_after_training_stops_a_distributed_run_before_the_model() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = data_file("heart_scale.svm");
    let (full, kept, ck) = (d.join("full.json"), d.join("model.json"), d.join("ck.json"));
    let args = [
        "train",
        p(&data),
        "--max-epochs",
        "2",
        "--distributed",
        "exact",
    ];
    let out = single(d, &[&args[..], &["-o", p(&full)]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::write(&kept, "old model").unwrap();
    let mut child = Command::new(bin())
        .args([&args[..], &["-o", p(&kept), "--checkpoint", p(&ck)]].concat())
        .current_dir(d)
        .env("NODEVICE_SELECT", "1")
        .env("PERCEPTRON_TEST_PAUSE_BEFORE_WRITING", "3000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The last epoch's checkpoint comes just before the first pause.
    let t0 = std::time::Instant::now();
    let epoch = |ck: &Path| -> Option<u64> {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(ck).ok()?).ok()?;
        v["epoch"].as_u64()
    };
    while epoch(&ck) != Some(2) && t0.elapsed().as_secs() < 60 {
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("training had ended"), "{stderr}");
    assert!(stderr.contains("was not replaced"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "old model");
    let resumed = single(
        d,
        &[&args[..], &["-o", p(&kept), "--resume", p(&ck)]].concat(),
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    assert_eq!(model(&kept), model(&full));
}

/// The weights a mix run writes, and its report.
fn mix(d: &Path, k: usize, how: &str, out: &str, extra: &[&str]) -> (Output, Value) {
    let data = data_file("digits_3v5.csv");
    let path = d.join(out);
    let mut args = vec![
        "train",
        p(&data),
        "--distributed",
        "mix",
        "--mix",
        how,
        "-o",
        p(&path),
        "--json",
    ];
    args.extend(extra);
    let o = mpirun(k, d, &args);
    let m = if path.exists() {
        model(&path)
    } else {
        Value::Null
    };
    (o, m)
}

#[test]
fn mix_mode_is_reproducible_converges_and_states_its_bound() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for how in ["uniform", "errors"] {
        let (o1, m1) = mix(d, 3, how, "m1.json", &[]);
        assert_eq!(o1.status.code(), Some(0), "{}", text(&o1.stderr));
        let (o2, m2) = mix(d, 3, how, "m2.json", &[]);
        assert_eq!(o2.status.code(), Some(0));
        assert_eq!(m1, m2, "mix {how} is reproducible");
        let report: Value = serde_json::from_str(&text(&o1.stdout)).unwrap();
        let dist = &report["distributed"];
        assert_eq!(dist["mode"], "mix");
        assert_eq!(dist["mixing"], how);
        assert_eq!(dist["mix_bound_holds"], true, "{dist}");
        assert_eq!(report["training_accuracy"], 1.0);
        // The report's mistakes per epoch are the ranks' sums.
        let per_rank = dist["rank_mistakes"].as_array().unwrap();
        let sums: Vec<u64> = per_rank
            .iter()
            .map(|e| {
                e.as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .sum()
            })
            .collect();
        let reported: Vec<u64> = report["mistakes_per_epoch"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(sums, reported);
        let file: Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("m1.json")).unwrap()).unwrap();
        assert_eq!(file["training"]["distributed"]["mode"], "mix");
        assert_eq!(file["training"]["distributed"]["ranks"], 3);
    }
    // --average and --pocket are exact mode's.
    let (o, _) = mix(d, 2, "uniform", "m3.json", &["--average"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--average and --pocket need --distributed exact"));
}

#[test]
fn a_bad_line_on_one_rank_fails_the_job_with_the_single_process_message() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text_in = std::fs::read_to_string(data_file("heart_scale.svm")).unwrap();
    let mut lines: Vec<String> = text_in.lines().map(str::to_owned).collect();
    lines[250] = lines[250].replacen(':', ":oops", 1);
    let bad = d.join("bad.svm");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let model_path = d.join("m.json");
    std::fs::write(&model_path, "the old model\n").unwrap();
    let one = single(d, &["train", p(&bad), "-o", p(&model_path)]);
    let want = text(&one.stderr);
    assert_eq!(one.status.code(), Some(1), "{want}");
    let message = want
        .trim()
        .strip_prefix("perceptron: error: ")
        .unwrap()
        .to_owned();
    let out = mpirun(
        3,
        d,
        &[
            "train",
            p(&bad),
            "--distributed",
            "exact",
            "-o",
            p(&model_path),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("rank 2 of 3: {message}")),
        "{stderr}\nwant: {message}"
    );
    assert_eq!(stderr.matches(&message).count(), 1, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&model_path).unwrap(),
        "the old model\n"
    );
}

#[test]
fn a_killed_rank_fails_the_job_and_checkpoints_resume_on_any_rank_count() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = data_file("heart_scale.svm");
    let args = ["train", p(&data), "--max-epochs", "60", "--average"];
    let want = d.join("want.json");
    let out = single(d, &[&args[..], &["-o", p(&want)]].concat());
    // The averaged variant runs every epoch: reaching the cap is success.
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let model_path = d.join("m.json");
    std::fs::write(&model_path, "the old model\n").unwrap();
    let ck = d.join("ck.json");
    let run = [
        &args[..],
        &[
            "--distributed",
            "exact",
            "-o",
            p(&model_path),
            "--checkpoint",
            p(&ck),
        ],
    ]
    .concat();
    // Rank 1 is killed in epoch 5: the job fails, no model is written.
    let out = mpirun_env(3, d, &run, &[("PERCEPTRON_DISTRIBUTED_KILL", "1:5")]);
    assert_ne!(out.status.code(), Some(0));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("rank 1"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&model_path).unwrap(),
        "the old model\n"
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&ck).unwrap()).unwrap();
    assert_eq!(saved["epoch"], 4, "the last epoch rank 0 completed");
    // The checkpoint resumes on 2 ranks, and in one process, to the
    // uninterrupted model.
    let ck2 = d.join("ck2.json");
    std::fs::copy(&ck, &ck2).unwrap();
    let resumed = d.join("r2.json");
    let out = mpirun(
        2,
        d,
        &[
            "train",
            p(&data),
            "--resume",
            p(&ck),
            "--distributed",
            "exact",
            "-o",
            p(&resumed),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(model(&resumed), model(&want));
    let alone = d.join("r1.json");
    let out = single(
        d,
        &["train", p(&data), "--resume", p(&ck2), "-o", p(&alone)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(model(&alone), model(&want));
}

#[test]
fn a_mix_checkpoint_resumes_with_the_same_ranks_to_the_same_model() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = data_file("breast_cancer.svm");
    let base = [
        "train",
        p(&data),
        "--distributed",
        "mix",
        "--mix",
        "errors",
        "--max-epochs",
        "12",
    ];
    let want = d.join("want.json");
    let out = mpirun(2, d, &[&base[..], &["-o", p(&want)]].concat());
    assert!(
        out.status.code().is_some_and(|c| c == 0 || c == 3),
        "{}",
        text(&out.stderr)
    );
    let ck = d.join("ck.json");
    let got = d.join("got.json");
    let run = [&base[..], &["-o", p(&got), "--checkpoint", p(&ck)]].concat();
    let out = mpirun_env(2, d, &run, &[("PERCEPTRON_DISTRIBUTED_KILL", "0:4")]);
    assert_ne!(out.status.code(), Some(0));
    assert!(!got.exists());
    let out = mpirun(
        2,
        d,
        &[
            "train",
            p(&data),
            "--resume",
            p(&ck),
            "--distributed",
            "mix",
            "--mix",
            "errors",
            "-o",
            p(&got),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not converged"));
    assert_eq!(model(&got), model(&want));
    // Another rank count is refused, saying what differs.
    let out = mpirun(
        3,
        d,
        &[
            "train",
            p(&data),
            "--resume",
            p(&ck),
            "--distributed",
            "mix",
            "--mix",
            "errors",
            "-o",
            p(&got),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("mix (errors) on 2 ranks, now mix (errors) on 3 ranks"),
        "{}",
        text(&out.stderr)
    );
}

/// A 2 x 2 `.npy` file of f8 values.
fn small_npy(path: &Path) {
    let mut header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }".to_owned();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    for v in [1.0f64, 0.5, -1.0, 0.25] {
        out.extend(v.to_le_bytes());
    }
    std::fs::write(path, out).unwrap();
}

/// What needs every row in one process is refused in both modes, naming the
/// option, its value and the mode, once, before anything is read or
/// written (exit 2).
#[test]
fn options_that_need_one_process_are_refused() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = data_file("breast_cancer.csv");
    let npy = d.join("x.npy");
    small_npy(&npy);
    let model_path = d.join("m.json");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--scale", "maxabs"],
            "--scale maxabs is not available with --distributed",
        ),
        (
            &["--class-weight", "balanced"],
            "--class-weight balanced is not available with --distributed",
        ),
        (
            &["--validation-fraction", "0.2"],
            "--validation-fraction 0.2 is not available with --distributed",
        ),
        (
            &["--n-iter-no-change", "3"],
            "early stopping (--tol 0.001, --n-iter-no-change 3) is not available with --distributed",
        ),
    ];
    for mode in ["exact", "mix"] {
        for (extra, want) in cases {
            let mut args = vec![
                "train",
                p(&data),
                "--distributed",
                mode,
                "-o",
                p(&model_path),
            ];
            args.extend(*extra);
            let out = mpirun(2, d, &args);
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.contains(&format!("{want} {mode}")),
                "{args:?}: {stderr}"
            );
            assert_eq!(stderr.matches("not available").count(), 1, "{stderr}");
            assert!(!model_path.exists());
        }
    }
    // Standard input reaches one process; a .npy file is not split.
    let out = mpirun(2, d, &["train", "-", "--distributed", "exact"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("`-` (standard input) reaches one process only"));
    let out = mpirun(2, d, &["train", p(&npy), "--distributed", "exact"]);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("a .npy file is not split among processes"),
        "{}",
        text(&out.stderr)
    );
    assert!(!d.join("model.json").exists());
}

#[test]
fn a_build_without_mpi_says_how_to_get_one() {
    if cfg!(feature = "mpi") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = data_file("iris_setosa.csv");
    let out = single(dir.path(), &["train", p(&data), "--distributed", "exact"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("built without MPI")
            && stderr.contains("cargo build --release --features mpi"),
        "{stderr}"
    );
    assert!(!dir.path().join("model.json").exists());
}
