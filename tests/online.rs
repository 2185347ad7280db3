//! `perceptron online`: the mistake bound on separable streams, equality
//! with one reference epoch, streaming through pipes, --init, snapshots,
//! errors and label rules.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command as StdCommand, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use perceptron::Real;
use perceptron::data::Row;
use perceptron::r#gen::{Density, GenOptions, Generator};
use perceptron::model::{self, AnyModel};
use perceptron::online::Learner;
use predicates::prelude::*;

use crate::common::{Rng, bin, cmd, data_file};

/// What a run determines: the bits of w~ (bias last when there is one), the
/// total mistakes, and the number of rows.
#[derive(Debug, PartialEq, Eq)]
struct Essence {
    bits: Vec<u64>,
    has_bias: bool,
    mistakes: u64,
    rows: usize,
}

fn essence(path: &Path) -> Essence {
    let loaded = model::load(path).unwrap();
    assert_eq!(loaded.heads(), 1, "online runs write binary models");
    let (bits, has_bias, t) = match loaded {
        AnyModel::F32(m) => (
            m.all_weights().iter().map(|v| v.to_bits() as u64).collect(),
            m.has_bias(),
            m.training,
        ),
        AnyModel::F64(m) => (
            m.all_weights().iter().map(|v| v.to_bits()).collect(),
            m.has_bias(),
            m.training,
        ),
    };
    Essence {
        bits,
        has_bias,
        mistakes: t.total_mistakes,
        rows: t.rows,
    }
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

// ---------------------------------------------------------------------------
// (1) The mistake bound on separable streams with a planted margin.

/// Runs the learner over a generated stream; returns (mistakes, bound, D).
fn online_on_generated<F: Real>(opts: GenOptions) -> (u64, f64, f64, u64) {
    let g = Generator::new(opts.clone()).unwrap();
    let data = g.generate::<F>().unwrap();
    let mut learner = Learner::<F>::new(opts.bias, F::ZERO);
    let features = &data.raw.features;
    for i in 0..features.rows() {
        let row = features.row(i);
        let need = match row {
            Row::Dense(x) => x.len(),
            Row::Sparse(idx, _) => idx.last().map_or(0, |&k| k as usize + 1),
        };
        learner.step(row, need, data.labels[i].label).unwrap();
    }
    // gamma is the planted margin of x~ = [x, 1] (just x without the bias);
    // every ||x~|| <= R.
    let bound = (g.radius() / g.margin()).powi(2);
    (learner.mistakes(), bound, learner.radius(), opts.rows)
}

#[test]
fn mistakes_on_separable_streams_stay_within_the_bound() {
    let mut checked = 0;
    for seed in 0..6u64 {
        for (density, features, rows) in [
            (Density::Dense, 10, 2000),
            (Density::Sparse { nnz: 4 }, 20, 6000),
        ] {
            for bias in [true, false] {
                let opts = GenOptions {
                    rows,
                    features,
                    density,
                    seed,
                    bias,
                    ..Default::default()
                };
                let g = Generator::new(opts.clone()).unwrap();
                for (m, bound, d, n) in [
                    online_on_generated::<f32>(opts.clone()),
                    online_on_generated::<f64>(opts.clone()),
                ] {
                    assert!(d <= g.radius(), "D = {d} > R = {}", g.radius());
                    assert!(
                        m as f64 <= bound,
                        "seed {seed}, {density:?}, bias {bias}: M = {m} > (D/gamma)^2 = {bound}"
                    );
                    // The test has teeth: the stream is long enough that a
                    // learner that never learned (s = 0 always, so every
                    // example a mistake) would break the bound.
                    assert!(n as f64 > 2.0 * bound, "{n} rows, bound {bound}");
                    assert!(m > 0);
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 48);
}

#[test]
fn the_command_keeps_the_bound_on_generated_files_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut outcomes = Vec::new();
    for seed in 1..=4u64 {
        for name in ["s.svm", "s.csv"] {
            let opts = GenOptions {
                rows: 3000,
                features: 8,
                density: if name.ends_with("svm") {
                    Density::Sparse { nnz: 3 }
                } else {
                    Density::Dense
                },
                seed,
                ..Default::default()
            };
            let g = Generator::new(opts).unwrap();
            let format = perceptron::data::write::OutputFormat::from_path(Path::new(name)).unwrap();
            g.write::<f32>(&d.join(name), format).unwrap();
            let out = cmd(d)
                .args(["online", name, "-o", "m.json", "--report-bound"])
                .assert()
                .success()
                .get_output()
                .clone();
            // The summary is on stdout: no predictions go there.
            let stderr = String::from_utf8(out.stdout).unwrap();
            let e = essence(&d.join("m.json"));
            let planted = (g.radius() / g.margin()).powi(2);
            assert!(e.mistakes as f64 <= planted, "{} > {planted}", e.mistakes);
            assert!(e.mistakes > 0 && e.rows == 3000);
            // The report's bound uses the final weights' own margin, when
            // they separate the whole file after one pass (they need not):
            // the theorem holds for any separating vector, so it holds too.
            let v = json(&d.join("m.json"));
            let reported = v["training"]["mistake_bound"].as_f64();
            match reported {
                Some(b) => {
                    assert!(b >= e.mistakes as f64);
                    assert!(
                        stderr.contains(&format!("and M = {} <= ", e.mistakes))
                            && stderr.contains("the convergence theorem's bound holds"),
                        "{stderr}"
                    );
                }
                None => assert!(
                    stderr.contains("none: the final weights do not separate the examples"),
                    "{stderr}"
                ),
            }
            outcomes.push(reported.is_some());
        }
    }
    // Both cases occur among these seeds.
    assert!(
        outcomes.contains(&true) && outcomes.contains(&false),
        "{outcomes:?}"
    );
}

// ---------------------------------------------------------------------------
// (2) One online pass over a file is one reference epoch, bit for bit.

fn train_one_epoch(dir: &Path, file: &Path, out: &str, extra: &[&str]) {
    cmd(dir)
        .arg("train")
        .arg(file)
        .args(["--backend", "reference", "--max-epochs", "1", "-o", out])
        .args(extra)
        .assert()
        .code(predicate::in_iter([0, 3]));
}

fn online(dir: &Path, file: &Path, out: &str, extra: &[&str]) {
    cmd(dir)
        .arg("online")
        .arg(file)
        .args(["-o", out, "--quiet"])
        .args(extra)
        .assert()
        .success()
        .stdout("")
        .stderr("");
}

/// A noisy dense CSV and LIBSVM copy with -1/+1 labels, values of all
/// magnitudes (so f32 rounding matters).
fn noisy_files(dir: &Path) -> (PathBuf, PathBuf) {
    let mut rng = Rng(0xfeed);
    let (mut csv, mut svm) = (String::new(), String::new());
    for _ in 0..400 {
        let x: Vec<f64> = (0..7)
            .map(|k| {
                let v = (rng.unit() - 0.45) * 10f64.powi(k % 3 - 1);
                if rng.unit() < 0.3 { 0.0 } else { v }
            })
            .collect();
        let y = if x[0] - x[3] + 0.1 > 0.0 { 1 } else { -1 };
        let y = if rng.unit() < 0.1 { -y } else { y };
        csv.push_str(&y.to_string());
        svm.push_str(if y > 0 { "+1" } else { "-1" });
        for (k, v) in x.iter().enumerate() {
            csv.push_str(&format!(",{v}"));
            if *v != 0.0 {
                svm.push_str(&format!(" {}:{v}", k + 1));
            }
        }
        csv.push('\n');
        svm.push('\n');
    }
    let (a, b) = (dir.join("noisy.csv"), dir.join("noisy.svm"));
    std::fs::write(&a, csv).unwrap();
    std::fs::write(&b, svm).unwrap();
    (a, b)
}

#[test]
fn an_online_pass_is_one_reference_epoch_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (noisy_csv, noisy_svm) = noisy_files(d);
    let files = [
        data_file("heart_scale.svm"),
        data_file("iris_setosa.csv"),
        data_file("breast_cancer.csv"),
        data_file("digits_3v5.svm"),
        noisy_csv,
        noisy_svm,
    ];
    let mut compared = 0;
    for (f, file) in files.iter().enumerate() {
        for precision in ["f32", "f64"] {
            for bias in [true, false] {
                for margin in [None, Some("0.5")] {
                    // All combinations on the small files, a few on the rest.
                    if (2..4).contains(&f) && bias == margin.is_none() {
                        continue;
                    }
                    let mut extra = vec!["--precision", precision];
                    if !bias {
                        extra.push("--no-bias");
                    }
                    if let Some(t) = margin {
                        extra.extend(["--margin", t]);
                    }
                    train_one_epoch(d, file, "t.json", &extra);
                    online(d, file, "o.json", &extra);
                    let (t, o) = (essence(&d.join("t.json")), essence(&d.join("o.json")));
                    assert_eq!(o, t, "{} {extra:?}", file.display());
                    assert!(o.mistakes > 0);
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 40);
}

#[test]
fn standard_input_and_gzip_give_the_same_pass() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    train_one_epoch(d, &data_file("iris_setosa.csv"), "t.json", &[]);
    let text = std::fs::read(data_file("iris_setosa.csv")).unwrap();
    cmd(d)
        .args(["online", "-", "-o", "stdin.json", "--quiet"])
        .write_stdin(text)
        .assert()
        .success();
    // gzip is recognised on stdin by its magic bytes.
    let gz = std::fs::read(data_file("iris_setosa.csv.gz")).unwrap();
    cmd(d)
        .args(["online", "-o", "gz.json", "--quiet"])
        .write_stdin(gz)
        .assert()
        .success();
    online(d, &data_file("iris_setosa.csv.gz"), "file_gz.json", &[]);
    let t = essence(&d.join("t.json"));
    for m in ["stdin.json", "gz.json", "file_gz.json"] {
        assert_eq!(essence(&d.join(m)), t, "{m}");
    }
}

// ---------------------------------------------------------------------------
// (3) Pipes: predictions come before updates, line by line.

/// The textbook online perceptron on dense rows in f64, written out
/// independently: the predictions (+1 iff s > 0) and the final w~.
fn textbook(rows: &[(i8, Vec<f64>)], bias: bool) -> (Vec<i8>, Vec<f64>) {
    let d = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let mut w = vec![0.0f64; d + bias as usize];
    let mut predictions = Vec::new();
    for (y, x) in rows {
        let mut s = 0.0;
        for (k, v) in x.iter().enumerate() {
            s += w[k] * v;
        }
        if bias {
            s += w[d];
        }
        predictions.push(if s > 0.0 { 1 } else { -1 });
        if (*y as f64) * s <= 0.0 {
            for (k, v) in x.iter().enumerate() {
                w[k] += *y as f64 * v;
            }
            if bias {
                w[d] += *y as f64;
            }
        }
    }
    (predictions, w)
}

fn random_rows(seed: u64, n: usize, cols: usize) -> Vec<(i8, Vec<f64>)> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            let x: Vec<f64> = (0..cols)
                .map(|_| (rng.unit() * 8.0).round() - 4.0)
                .collect();
            let s = x[0] + 0.5 * x[1] - x[2] + 0.25;
            let y = if (s > 0.0) ^ (rng.unit() < 0.05) {
                1
            } else {
                -1
            };
            (y, x)
        })
        .collect()
}

fn csv_text(rows: &[(i8, Vec<f64>)]) -> String {
    rows.iter()
        .map(|(y, x)| {
            let xs: Vec<String> = x.iter().map(|v| v.to_string()).collect();
            format!("{y},{}\n", xs.join(","))
        })
        .collect()
}

fn label(y: i8) -> &'static str {
    if y > 0 { "1" } else { "-1" }
}

#[test]
fn predictions_through_a_pipe_match_the_textbook() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // By hand: w~ = 0 predicts -1 (s = 0), and every row here is a mistake:
    // w~ = [1,0,1], then s = 1 predicts 1 for y = -1; w~ = [1,-1,0], then
    // s = 0 predicts -1 for y = +1; w~ = [2,0,1], then s = 3 predicts 1.
    cmd(d)
        .args(["online", "--predictions", "-o", "m.json"])
        .write_stdin("1,1,0\n-1,0,1\n1,1,1\n-1,1,-1\n")
        .assert()
        .success()
        .stdout("-1\n1\n-1\n1\n")
        .stderr(predicate::str::contains("M = 4 (100.00% of examples)"))
        .stderr(predicate::str::contains("0 of 4 right"));
    assert_eq!(
        essence(&d.join("m.json")).bits,
        [1.0f32, 1.0, 0.0].map(|v| v.to_bits() as u64)
    );
    // Longer streams against the independent textbook loop, in f64.
    for (seed, bias) in [(1, true), (2, false), (3, true)] {
        let rows = random_rows(seed, 300, 4);
        let (predicted, w) = textbook(&rows, bias);
        let mut c = cmd(d);
        c.args([
            "online",
            "--predictions",
            "--precision",
            "f64",
            "-o",
            "m.json",
        ]);
        if !bias {
            c.arg("--no-bias");
        }
        let out = c.write_stdin(csv_text(&rows)).assert().success();
        let expected: String = predicted
            .iter()
            .map(|&y| format!("{}\n", label(y)))
            .collect();
        out.stdout(expected);
        let bits: Vec<u64> = w.iter().map(|v| v.to_bits()).collect();
        assert_eq!(essence(&d.join("m.json")).bits, bits, "seed {seed}");
    }
}

/// A running `perceptron online` fed through a pipe, its predictions read
/// line by line.
struct Live {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Live {
    fn start(dir: &Path, args: &[&str]) -> Live {
        let mut child = StdCommand::new(bin())
            .arg("online")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Live {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next prediction; fails rather than hangs if none comes.
    fn prediction(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .expect("no prediction within 60 s: predictions are not streamed")
    }

    fn close(&mut self) {
        self.stdin = None;
    }

    /// Waits for the exit; returns the status code and stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        self.stdin = None;
        let out = self.child.wait_with_output().unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    }
}

#[test]
fn each_prediction_is_written_before_the_next_example_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let rows = random_rows(9, 40, 3);
    let (predicted, _) = textbook(&rows, true);
    let mut live = Live::start(dir.path(), &["--predictions", "--format", "csv"]);
    for (i, line) in csv_text(&rows).lines().enumerate() {
        live.send(line);
        // The answer comes while the next example has not been written.
        assert_eq!(live.prediction(), label(predicted[i]), "example {}", i + 1);
    }
    live.close();
    let (code, stderr) = live.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("examples    40 (the input ended)"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------
// (4) --init continues from a model.

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn init_continues_exactly_where_a_run_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // LIBSVM whose second half reveals features the first half never saw.
    let mut rng = Rng(77);
    let mut lines = Vec::new();
    for i in 0..300 {
        let top = if i < 150 { 5 } else { 12 };
        let mut toks = Vec::new();
        let mut s = 0.1;
        for k in 1..=top {
            if rng.unit() < 0.5 {
                let v = ((rng.unit() - 0.5) * 6.0 * 8.0).round() / 8.0;
                s += v * if k % 2 == 0 { 1.0 } else { -0.7 };
                toks.push(format!("{k}:{v}"));
            }
        }
        lines.push(format!(
            "{} {}",
            if s > 0.0 { "+1" } else { "-1" },
            toks.join(" ")
        ));
    }
    let all = write(d, "all.svm", &(lines.join("\n") + "\n"));
    let first = write(d, "first.svm", &(lines[..150].join("\n") + "\n"));
    let second = write(d, "second.svm", &(lines[150..].join("\n") + "\n"));
    for precision in ["f32", "f64"] {
        let p = ["--precision", precision];
        online(d, &all, "all.json", &p);
        online(d, &first, "a.json", &p);
        // The precision comes from the model.
        online(d, &second, "b.json", &["--init", "a.json"]);
        let (a, b, full) = (
            essence(&d.join("a.json")),
            essence(&d.join("b.json")),
            essence(&d.join("all.json")),
        );
        assert_eq!(b.bits, full.bits, "{precision}");
        assert_eq!(a.mistakes + b.mistakes, full.mistakes);
        assert!(a.bits.len() < b.bits.len(), "the weights grew");
        let v = json(&d.join("b.json"));
        assert_eq!(v["training"]["online"]["features_added"], 12 - 5);
        assert_eq!(v["training"]["init"], "a.json");
        assert_eq!(v["precision"], precision);
    }
    // From a trained model: the same as one more reference epoch.
    train_one_epoch(d, &data_file("heart_scale.svm"), "t1.json", &[]);
    train_one_epoch(
        d,
        &data_file("heart_scale.svm"),
        "t2.json",
        &["--init", "t1.json"],
    );
    online(
        d,
        &data_file("heart_scale.svm"),
        "o2.json",
        &["--init", "t1.json"],
    );
    assert_eq!(essence(&d.join("o2.json")), essence(&d.join("t2.json")));
}

#[test]
fn init_options_that_cannot_continue_exactly_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = data_file("iris_setosa.csv");
    online(d, &file, "m64.json", &["--precision", "f64"]);
    cmd(d)
        .arg("online")
        .arg(&file)
        .args(["--init", "m64.json", "--precision", "f32"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is an f64 model"));
    online(d, &file, "m.json", &[]);
    cmd(d)
        .arg("online")
        .arg(&file)
        .args(["--init", "m.json", "--no-bias"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("was trained with a bias"));
    cmd(d)
        .arg("online")
        .arg(&file)
        .args(["--init", "m.json", "--positive=-1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has +1 = \"1\", not \"-1\""));
}

// ---------------------------------------------------------------------------
// (5) Snapshots.

/// Waits until the snapshot exists and says `rows`; every version seen
/// along the way must be a complete model.
fn wait_for_snapshot(path: &Path, rows: usize) -> Essence {
    let t0 = Instant::now();
    loop {
        if path.exists() {
            // Written atomically: whenever it exists, it is whole.
            let e = essence(path);
            if e.rows == rows {
                return e;
            }
            assert!(
                e.rows < rows,
                "snapshot at {} rows, expected {rows}",
                e.rows
            );
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no snapshot at {rows} rows"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn snapshots_are_written_atomically_every_n_examples_and_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows = random_rows(5, 7, 3);
    let lines: Vec<String> = csv_text(&rows).lines().map(str::to_owned).collect();
    let mut live = Live::start(
        d,
        &[
            "--predictions",
            "--precision",
            "f64",
            "--snapshot",
            "snap.json",
            "--snapshot-every",
            "3",
            "-o",
            "final.json",
        ],
    );
    let snap = d.join("snap.json");
    let textbook_after = |n: usize| -> Vec<u64> {
        let (_, w) = textbook(&rows[..n], true);
        // Features the stream has revealed so far: all 3 from the first row.
        w.iter().map(|v| v.to_bits()).collect()
    };
    for (i, line) in lines.iter().enumerate() {
        live.send(line);
        live.prediction();
        let n = i + 1;
        if n % 3 == 0 {
            let e = wait_for_snapshot(&snap, n);
            assert_eq!(e.bits, textbook_after(n), "snapshot after {n}");
            assert_eq!(json(&snap)["training"]["online"]["state"], "running");
        } else if n > 3 {
            // Between multiples the last snapshot stays.
            assert_eq!(essence(&snap).rows, n - n % 3);
        } else {
            assert!(!snap.exists() || essence(&snap).rows == 0);
        }
    }
    let (code, stderr) = live.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("snap.json (written 3 times)"), "{stderr}");
    let end = essence(&snap);
    assert_eq!(end.rows, 7);
    assert_eq!(end.bits, textbook_after(7));
    assert_eq!(end, essence(&d.join("final.json")));
    assert_eq!(json(&snap)["training"]["online"]["state"], "ended");
    // Nothing but the outputs is left in the directory.
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["final.json", "snap.json"]);
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_after_the_current_example_and_saves_even_while_input_is_idle() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows = random_rows(6, 5, 3);
    let mut live = Live::start(
        d,
        &[
            "--predictions",
            "--format",
            "csv",
            "--precision",
            "f64",
            "-o",
            "m.json",
            "--snapshot",
            "s.json",
        ],
    );
    for line in csv_text(&rows).lines() {
        live.send(line);
        live.prediction();
    }
    // stdin stays open and idle: the run is waiting for input.
    let ok = StdCommand::new("kill")
        .args(["-INT", &live.child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = live.child.try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    let (_, stderr) = live.finish();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted after 5 examples; the model was saved to m.json and s.json"),
        "{stderr}"
    );
    let (_, w) = textbook(&rows, true);
    let m = essence(&d.join("m.json"));
    assert_eq!(m.bits, w.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    assert_eq!(m, essence(&d.join("s.json")));
    assert_eq!(
        json(&d.join("m.json"))["training"]["online"]["state"],
        "interrupted"
    );
}

#[test]
fn a_closed_predictions_pipe_ends_the_run_and_saves_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut child = StdCommand::new(bin())
        .args([
            "online",
            "--predictions",
            "--format",
            "libsvm",
            "-o",
            "m.json",
        ])
        .current_dir(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    drop(child.stdout.take()); // the reader goes away
    // Write until the run notices (the first write into the closed pipe).
    for _ in 0..50 {
        if stdin
            .write_all(b"1 1:1\n")
            .and_then(|()| stdin.flush())
            .is_err()
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the reader of the predictions went away"),
        "{stderr}"
    );
    assert_eq!(
        json(&d.join("m.json"))["training"]["online"]["state"],
        "closed"
    );
}

// ---------------------------------------------------------------------------
// (6) Bad input.

#[test]
fn bad_lines_are_errors_with_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The first example's prediction is out before line 2 is read.
    cmd(d)
        .args(["online", "--predictions", "-o", "m.json"])
        .write_stdin("1,2,3\n-1,4,abc\n")
        .assert()
        .code(1)
        .stdout("-1\n")
        .stderr(
            "perceptron: error: <stdin>:2:6: expected a number in column 3, found \"abc\" (the \
             label is read from column 1 by default; if column 3 holds the labels, pass \
             --label-column last)\n",
        );
    assert!(!d.join("m.json").exists(), "no model after an error");
    write(d, "bad.svm", "1 1:2\n1 0:1\n");
    cmd(d)
        .args(["online", "bad.svm"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad.svm:2:3: feature index 0 in \"0:1\": indices are read one-based, from 1 (the \
             LIBSVM standard) (if this file counts features from 0, as scikit-learn's \
             dump_svmlight_file writes by default, pass --zero-based)",
        ));
    cmd(d)
        .args(["online", "--format", "csv"])
        .write_stdin("y,a,b\n1,2,3\n1,2\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "<stdin>:3:4: expected 3 fields separated by `,` (as in the header on line 1), found 2",
        ));
    cmd(d)
        .args(["online", "--max-features", "10"])
        .write_stdin("1 1:1\n-1 3:1 100:1\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "<stdin>:2:8: feature index 100 in \"100:1\" exceeds the limit of 10 (--max-features)",
        ));
    cmd(d)
        .args(["online"])
        .write_stdin("hello\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "<stdin>:1: cannot tell the format from the first data line \"hello\"",
        ));
    cmd(d)
        .args(["online"])
        .write_stdin("")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("<stdin>: no data rows"));
    cmd(d)
        .args(["online", "--format", "csv"])
        .write_stdin("y,x\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "<stdin>: no data rows: the input ended before the first example",
        ));
    cmd(d)
        .args(["online", "--precision", "f32"])
        .write_stdin("1 1:1e30\n-1 1:1e30\n1 1:1e30\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "<stdin>:2: the margin w·x is inf: the features are too large for f32",
        ));
    cmd(d)
        .args(["gen", "--rows", "5", "-o", "g.pbin"])
        .assert()
        .success();
    cmd(d)
        .args(["online", "g.pbin"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot be read as a stream"));
    cmd(d)
        .args(["online", "--report-bound"])
        .write_stdin("1 1:1\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("standard input cannot do"));
}

// ---------------------------------------------------------------------------
// (7) Labels.

#[test]
fn numeric_labels_map_without_options_and_others_need_positive() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    cmd(d)
        .args(["online", "--predictions", "-o", "m.json"])
        .write_stdin("0 1:1\n1 1:1\n-1 1:2\n+1 1:1\n1.0 2:1\n-1.0 2:1\n")
        .assert()
        .success();
    let v = json(&d.join("m.json"));
    assert_eq!(v["labels"]["positive"], "1");
    assert_eq!(v["labels"]["negative"], "-1");
    // 0 and -1 are -1: the same weights as the -1/+1 spelling.
    cmd(d)
        .args(["online", "-o", "n.json"])
        .write_stdin("-1 1:1\n+1 1:1\n0 1:2\n1 1:1\n1 2:1\n0 2:1\n")
        .assert()
        .success();
    assert_eq!(essence(&d.join("m.json")), essence(&d.join("n.json")));
    cmd(d)
        .args(["online"])
        .write_stdin("1 1:1\n2 1:1\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "<stdin>:2:1: label \"2\" is not -1, +1, 0 or 1; for other labels name the +1 \
             class with --positive LABEL",
        ));
    cmd(d)
        .args(["online", "--format", "csv", "--label-column", "3"])
        .write_stdin("1,2,cat\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "<stdin>:1:5: label \"cat\" is not -1",
        ));
    // --positive: L is +1, everything else -1 (printed as `rest`).
    cmd(d)
        .args([
            "online",
            "--predictions",
            "--positive",
            "cat",
            "-o",
            "c.json",
        ])
        .args(["--format", "csv", "--label-column", "class"])
        .write_stdin("x,class\n1,cat\n1,dog\n-1,cow\n2,cat\n")
        .assert()
        .success()
        .stdout("rest\ncat\nrest\ncat\n");
    let v = json(&d.join("c.json"));
    assert_eq!(v["labels"]["positive"], "cat");
    assert_eq!(v["labels"]["negative"], serde_json::Value::Null);
}

#[test]
fn with_init_the_models_labels_apply_and_unknown_ones_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ab = write(d, "ab.csv", "a,1,0\nb,0,1\na,2,0\nb,0,2\n");
    train_one_epoch(d, &ab, "m.json", &[]);
    let v = json(&d.join("m.json"));
    assert_eq!(
        (
            v["labels"]["positive"].as_str(),
            v["labels"]["negative"].as_str()
        ),
        (Some("b"), Some("a"))
    );
    cmd(d)
        .args([
            "online",
            "--init",
            "m.json",
            "--predictions",
            "--format",
            "csv",
        ])
        .write_stdin("b,0,3\na,3,0\n")
        .assert()
        .success()
        .stdout("b\na\n");
    cmd(d)
        .args([
            "online",
            "--init",
            "m.json",
            "--predictions",
            "--format",
            "csv",
        ])
        .write_stdin("b,0,3\n\nc,3,0\n")
        .assert()
        .code(1)
        .stdout("b\n")
        .stderr(predicate::str::contains(
            "<stdin>:3:1: label \"c\" is not one of the --init model's labels (+1 = \"b\", -1 = \
             \"a\") in m.json",
        ));
}

#[test]
fn progress_lines_go_to_a_terminal_or_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    // 270 examples; stderr is a pipe here, not a terminal.
    let svm = data_file("heart_scale.svm");
    let quiet = cmd(dir.path())
        .args(["online", svm.to_str().unwrap(), "-o", "m.json"])
        .output()
        .unwrap();
    assert!(quiet.status.success());
    let stderr = String::from_utf8_lossy(&quiet.stderr);
    assert!(
        !stderr.contains("examples"),
        "no progress lines in a log: {stderr}"
    );
    let asked = cmd(dir.path())
        .args([
            "online",
            svm.to_str().unwrap(),
            "-o",
            "m.json",
            "--report-every",
            "100",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&asked.stderr);
    assert_eq!(
        stderr.lines().filter(|l| l.contains("examples")).count(),
        2,
        "{stderr}"
    );
}
