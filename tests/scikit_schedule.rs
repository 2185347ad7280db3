//! scikit-learn's `Perceptron()` schedule (`--shuffle-every-epoch`,
//! `--tol-on mean-loss`): every backend trains the same model under it, a
//! run continued from its state equals the run in one go, its epoch count
//! is scikit-learn's, and the command line refuses what it cannot do; with
//! rows held out (scikit-learn's `early_stopping=True`), the loop skips
//! them where they fall in every epoch's order, judges the held-out
//! accuracy (weighted as NumPy weighs it) and returns the last epoch's
//! weights. (python/tests/test_sklearn_defaults.py and
//! test_sklearn_early_stopping.py check the models against the installed
//! scikit-learn itself.)

use crate::common::{cmd, data_file, data_str};
use perceptron::Real;
use perceptron::data::Row;
use perceptron::data::{self, Dataset, LoadOptions};
use perceptron::engine::backend::Backend;
use perceptron::engine::gpu::{AdapterRequest, GpuOptions};
use perceptron::engine::reference;
use perceptron::train::early_stop::{self, Judge, Keep};
use perceptron::train::scikit::{EveryEpoch, reshuffle, seeds_from_random_state};
use perceptron::train::{
    EarlyStop, Fit, PassPolicy, Silent, State, TrainParams, Trainer, Validation,
};

fn load<F: Real>(name: &str, multiclass: bool) -> Dataset<F> {
    let path = data_file(name);
    let raw = data::load_raw::<F>(&path, &LoadOptions::default()).unwrap();
    if multiclass {
        Dataset::from_raw_classes(raw, &path).unwrap()
    } else {
        Dataset::from_raw(raw, &path, None).unwrap()
    }
}

/// scikit-learn's defaults with `random_state`.
fn defaults(random_state: u32, multiclass: bool) -> TrainParams {
    TrainParams {
        max_epochs: 1000,
        shuffle_every_epoch: Some(EveryEpoch::RandomState(random_state)),
        early_stop: Some(EarlyStop {
            judge: Judge::MeanLoss,
            ..EarlyStop::default()
        }),
        multiclass,
        ..TrainParams::default()
    }
}

fn train<F: Real>(data: &Dataset<F>, params: TrainParams, backend: Backend) -> Option<Fit<F>> {
    let trainer = Trainer::new(params.check().unwrap())
        .with_backend(backend)
        .with_gpu(GpuOptions {
            adapter: AdapterRequest {
                name: std::env::var("PERCEPTRON_TEST_ADAPTER").ok(),
                allow_software: true,
            },
            ..Default::default()
        });
    let start = trainer.start(data, None);
    match trainer.fit(data, start, &mut Silent) {
        Ok(fit) => Some(fit),
        Err(e) if backend == Backend::Gpu && std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("SKIPPED: no usable GPU adapter: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn bits<F: Real>(w: &[F]) -> Vec<u64> {
    w.iter().map(|v| v.to_f64().to_bits()).collect()
}

fn every_backend_agrees<F: Real>(name: &str, multiclass: bool) {
    let data = load::<F>(name, multiclass);
    let want = train(&data, defaults(0, multiclass), Backend::Reference).unwrap();
    for backend in [Backend::Cpu, Backend::Gpu] {
        if let Some(got) = train(&data, defaults(0, multiclass), backend) {
            assert_eq!(
                bits(&got.weights),
                bits(&want.weights),
                "{name} on {backend:?}"
            );
            assert_eq!(got.mistakes_per_epoch, want.mistakes_per_epoch);
            assert_eq!(got.nominal_epochs, want.nominal_epochs);
            assert_eq!(
                mean_losses(&got),
                mean_losses(&want),
                "{name} on {backend:?}"
            );
        }
    }
}

/// The mean loss of every epoch, as bits.
fn mean_losses<F>(fit: &Fit<F>) -> Vec<u64> {
    let report = fit.early_stopping.as_ref().expect("a stopping rule");
    report.mean_loss.iter().map(|l| l.to_bits()).collect()
}

/// Rows of whole numbers from 0 to 255 (pictures), about a third zeros,
/// labelled by a random plane with `noise` of them flipped.
fn pictures<F: Real>(seed: u64, rows: usize, cols: usize, noise: f64) -> Dataset<F> {
    let mut state = seed;
    let mut unit = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let plane: Vec<f64> = (0..cols).map(|_| unit() - 0.5).collect();
    let (mut values, mut labels) = (Vec::new(), Vec::new());
    for _ in 0..rows {
        let mut s = 0.0;
        for &p in &plane {
            let v = if unit() < 0.35 {
                0.0
            } else {
                (unit() * 256.0).floor()
            };
            s += p * (v - 128.0);
            values.push(F::from_f64(v));
        }
        let y = if (s > 0.0) != (unit() < noise) { 1 } else { -1 };
        labels.push(y);
    }
    crate::common::dense_dataset(cols, values, labels)
}

/// On rows of bytes, the CPU decides rows and takes the mistakes' losses
/// from margins it computed in its own order, exact because the weights
/// are whole numbers (`train::sweep::whole`): the model, the mistakes and
/// every epoch's mean loss are the textbook loop's (`--backend reference`
/// sums each row in order), bit for bit, in f32 (where the sums soon pass
/// 2^24 and the certified margins take over) and f64; and from weights
/// that are not whole (a warm start), where the margins are not exact.
#[test]
fn exact_margins_of_byte_rows_give_the_textbook_losses() {
    fn case<F: Real>(data: &Dataset<F>, warm: bool) -> u64 {
        // The host's certified walk, where the exact margins are used,
        // rather than what the chooser's timings pick (on a loaded machine
        // that can be the textbook loop throughout).
        let params = TrainParams {
            passes: PassPolicy::Host,
            ..defaults(3, false)
        };
        let run = |backend| {
            let trainer = Trainer::new(params.clone().check().unwrap()).with_backend(backend);
            let mut start = trainer.start(data, None);
            if warm {
                start.weights.iter_mut().for_each(|w| *w = F::from_f64(0.5));
            }
            trainer.fit(data, start, &mut Silent).unwrap()
        };
        let (want, got) = (run(Backend::Reference), run(Backend::Cpu));
        let what = format!("{} warm={warm}", F::PRECISION);
        assert_eq!(bits(&got.weights), bits(&want.weights), "{what}");
        assert_eq!(got.mistakes_per_epoch, want.mistakes_per_epoch, "{what}");
        assert_eq!(mean_losses(&got), mean_losses(&want), "{what}");
        assert_eq!(want.loop_stats.host_exact, 0, "{what}: the textbook loop");
        if warm {
            assert_eq!(got.loop_stats.host_exact, 0, "{what}: not whole");
        }
        got.loop_stats.host_exact
    }
    for (seed, noise) in [(1, 0.0), (2, 0.05), (3, 0.3)] {
        let data64 = pictures::<f64>(seed, 3000, 200, noise);
        assert!(data64.byte_rows().is_some());
        assert!(case(&data64, false) > 10_000, "exact margins not used");
        case(&data64, true);
        let data32 = pictures::<f32>(seed, 3000, 200, noise);
        assert!(data32.byte_rows().is_some());
        assert!(case(&data32, false) > 0, "exact margins not used in f32");
        case(&data32, true);
    }
}

#[test]
fn every_backend_trains_the_same_model_under_the_schedule() {
    every_backend_agrees::<f64>("breast_cancer.csv", false);
    every_backend_agrees::<f32>("digits_3v5.csv", false);
    every_backend_agrees::<f64>("digits.csv", true);
}

#[test]
fn the_epoch_counts_are_scikit_learns() {
    // scikit-learn 1.9.1: Perceptron(random_state=r).fit(X, y).n_iter_ on
    // the repository's breast_cancer.csv (f64): 14 for r = 0, 21 for r = 1;
    // on digits.csv (one-vs-rest): 22 for r = 0 and r = 1, 21 for r = 42.
    let cancer = load::<f64>("breast_cancer.csv", false);
    let digits = load::<f64>("digits.csv", true);
    for (data, multiclass, r, n) in [
        (&cancer, false, 0, 14),
        (&cancer, false, 1, 21),
        (&digits, true, 0, 22),
        (&digits, true, 42, 21),
    ] {
        let fit = train(data, defaults(r, multiclass), Backend::Cpu).unwrap();
        assert_eq!(fit.nominal_epochs, Some(n), "random_state {r}");
        assert!(fit.epochs() <= n);
    }
}

/// Counts what the loop tells the observer; `Rc` keeps it on the thread
/// that made it, as Python's observer and a terminal's progress are.
struct Counting {
    epochs: std::rc::Rc<std::cell::Cell<usize>>,
    stop_after_polls: Option<usize>,
    polls: usize,
}

impl<F> perceptron::train::Observer<F> for Counting {
    fn on_epoch_end(&mut self, _: &State<F>) -> perceptron::Result<()> {
        self.epochs.set(self.epochs.get() + 1);
        Ok(())
    }

    fn should_stop(&mut self) -> bool {
        self.polls += 1;
        self.stop_after_polls.is_some_and(|n| self.polls > n)
    }
}

/// Trains on a pool of `threads` threads, so that `threads` one-vs-rest
/// heads train side by side (one after another with one thread).
fn on_threads<F: Real>(
    threads: usize,
    data: &Dataset<F>,
    params: TrainParams,
    stop_after_polls: Option<usize>,
) -> (Fit<F>, usize) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let trainer = Trainer::new(params.check().unwrap()).with_backend(Backend::Cpu);
    let start = trainer.start(data, None);
    pool.install(|| {
        let epochs = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut observer = Counting {
            epochs: epochs.clone(),
            stop_after_polls,
            polls: 0,
        };
        let fit = trainer.fit(data, start, &mut observer).unwrap();
        (fit, epochs.get())
    })
}

#[test]
fn one_vs_rest_heads_side_by_side_give_the_bits_of_one_after_another() {
    let digits = load::<f64>("digits.csv", true);
    let digits32 = load::<f32>("digits.csv", true);
    for r in [0, 7] {
        let (alone, epochs_alone) = on_threads(1, &digits, defaults(r, true), None);
        for threads in [2, 3, 16] {
            let (side, epochs_side) = on_threads(threads, &digits, defaults(r, true), None);
            assert_eq!(
                bits(&side.weights),
                bits(&alone.weights),
                "{threads} threads"
            );
            assert_eq!(
                side.state.head_mistakes_per_epoch,
                alone.state.head_mistakes_per_epoch
            );
            assert_eq!(
                (side.nominal_epochs, side.stop),
                (alone.nominal_epochs, alone.stop)
            );
            // Every head's every epoch reached the calling thread's observer.
            assert_eq!(epochs_side, epochs_alone);
        }
        let (alone, _) = on_threads(1, &digits32, defaults(r, true), None);
        let (side, _) = on_threads(2, &digits32, defaults(r, true), None);
        assert_eq!(bits(&side.weights), bits(&alone.weights), "f32");
    }
    // The observer heard each of the 10 heads' epochs.
    let (alone, epochs) = on_threads(1, &digits, defaults(0, true), None);
    assert!(epochs >= 10 && epochs >= alone.epochs(), "{epochs}");
}

#[test]
fn a_stop_request_cuts_side_by_side_heads_where_one_after_another_would() {
    let digits = load::<f64>("digits.csv", true);
    let dim = digits.cols() + 1;
    for threads in [1, 2, 4] {
        // Asked at the first poll: the first head is interrupted, the
        // others never start and keep their starting weights (one theorem
        // record a head that trained).
        let (fit, _) = on_threads(threads, &digits, defaults(0, true), Some(0));
        assert_eq!(
            fit.stop,
            perceptron::train::Stop::Interrupted,
            "{threads} threads"
        );
        assert_eq!(fit.weights.len(), 10 * dim, "{threads} threads");
        assert_eq!(fit.head_theory.len(), 1, "{threads} threads");
        assert!(fit.weights[dim..].iter().all(|w| *w == 0.0));
    }
}

#[test]
fn a_continued_run_reshuffles_as_the_run_in_one_go() {
    let data = load::<f64>("heart_scale.svm", false);
    let run = |epochs: usize| TrainParams {
        max_epochs: epochs,
        shuffle_every_epoch: Some(EveryEpoch::RandomState(5)),
        ..TrainParams::default()
    };
    let whole = train(&data, run(6), Backend::Cpu).unwrap();
    let first = train(&data, run(3), Backend::Cpu).unwrap();
    let trainer = Trainer::new(run(6).check().unwrap()).with_backend(Backend::Cpu);
    let state: State<f64> = first.state;
    let rest = trainer.fit(&data, state, &mut Silent).unwrap();
    assert_eq!(bits(&rest.weights), bits(&whole.weights));
    assert_eq!(rest.mistakes_per_epoch, whole.mistakes_per_epoch);
}

/// Runs the command with `args` in `dir` and checks that it is refused
/// as bad usage (exit 2), saying `says`.
fn refused_in(dir: &std::path::Path, args: &[&str], says: &str) {
    let out = cmd(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(says), "{args:?}: {stderr}");
}

#[test]
fn the_command_line_refuses_what_the_schedule_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_str("breast_cancer.csv");
    let refused = |args: &[&str], says: &str| refused_in(dir.path(), args, says);
    refused(
        &[
            "train",
            &data,
            "--shuffle-every-epoch",
            "--seed",
            "4294967296",
        ],
        "between 0 and 2^32 - 1",
    );
    refused(
        &["train", &data, "--shuffle-every-epoch", "--shuffle"],
        "cannot be used with",
    );
    let digits = data_str("digits.csv");
    refused(
        &[
            "train",
            &digits,
            "--multiclass",
            "ovr",
            "--tol-on",
            "mean-loss",
            "--checkpoint",
            "c.json",
        ],
        "not available for one-vs-rest training",
    );
    // What it can do, it records: the model file names the schedule.
    let out = cmd(dir.path())
        .args(["train", &data, "--shuffle-every-epoch", "--seed", "3"])
        .args(["--tol-on", "mean-loss", "-o", "m.json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("m.json")).unwrap()).unwrap();
    let training = &model["training"];
    assert_eq!(training["shuffle_every_epoch"]["random_state"], 3);
    assert!(training["nominal_epochs"].as_u64().unwrap() >= training["epochs"].as_u64().unwrap());
    assert!(training["early_stopping"]["mean_loss"].as_array().is_some());
}

#[test]
fn row_weights_give_the_same_model_on_every_backend_and_weight_0_never_updates() {
    for multiclass in [false, true] {
        let name = if multiclass {
            "digits.csv"
        } else {
            "digits_3v5.csv"
        };
        let data = load::<f64>(name, multiclass);
        let weights: std::sync::Arc<[f64]> = (0..data.rows())
            .map(|i| [0.0, 0.25, 1.0, 3.0][i % 4])
            .collect();
        let params = TrainParams {
            sample_weight: Some(weights.clone()),
            ..defaults(1, multiclass)
        };
        let want = train(&data, params.clone(), Backend::Reference).unwrap();
        assert_eq!(
            want.theory.mistake_bound, None,
            "rows of different weights: no bound"
        );
        for backend in [Backend::Cpu, Backend::Gpu] {
            if let Some(got) = train(&data, params.clone(), backend) {
                assert_eq!(
                    bits(&got.weights),
                    bits(&want.weights),
                    "{name} on {backend:?}"
                );
            }
        }
    }
    // Rows of weight 0 are as if absent from the updates: the model of the
    // rows of weight 1 alone, in the same order (file order, no rule).
    let data = load::<f64>("breast_cancer.csv", false);
    let keep: Vec<usize> = (0..data.rows()).filter(|i| i % 3 != 0).collect();
    let weights: std::sync::Arc<[f64]> = (0..data.rows())
        .map(|i| if i % 3 == 0 { 0.0 } else { 1.0 })
        .collect();
    let plain = |sample_weight| TrainParams {
        max_epochs: 5,
        sample_weight,
        ..TrainParams::default()
    };
    let weighted = train(&data, plain(Some(weights)), Backend::Cpu).unwrap();
    let kept = train(&data.permuted(&keep), plain(None), Backend::Cpu).unwrap();
    assert_eq!(bits(&weighted.weights), bits(&kept.weights));
}

#[test]
fn a_negative_row_weight_is_refused_with_its_row() {
    let params = TrainParams {
        sample_weight: Some(vec![1.0, -2.0].into()),
        ..TrainParams::default()
    };
    let err = params.check().unwrap_err().to_string();
    assert!(err.contains("sample_weight[1] is -2"), "{err}");
}

/// scikit-learn's loop with rows held out, written out for a binary
/// classic perceptron with weights of 1: before each of `epochs` epochs all
/// the rows are reshuffled with `seed` (file order without one), and the
/// rows not `held` are visited in that order.
fn by_hand(data: &Dataset<f64>, held: &[usize], seed: Option<u32>, epochs: usize) -> Vec<f64> {
    let mut w = vec![0.0; data.cols() + 1];
    let mut order: Vec<usize> = (0..data.rows()).collect();
    for _ in 0..epochs {
        if let Some(seed) = seed {
            reshuffle(&mut order, seed);
        }
        for &i in order.iter().filter(|i| !held.contains(i)) {
            let Row::Dense(x) = data.features.row(i) else {
                unreachable!("dense data")
            };
            let y = data.labels[i];
            if reference::is_mistake(y, reference::dot(&w, Row::Dense(x), true)) {
                let y = y as f64;
                for (wk, xk) in w.iter_mut().zip(x) {
                    *wk += y * xk;
                }
                *w.last_mut().unwrap() += y;
            }
        }
    }
    w
}

/// Every seventh row of `data`, from row 3.
fn every_seventh(data: &Dataset<f64>) -> Vec<usize> {
    (3..data.rows()).step_by(7).collect()
}

/// scikit-learn's early stopping on `held` (fraction 0.1, its defaults
/// otherwise), keeping `keep`.
fn held_out(random_state: Option<u32>, held: &[usize], keep: Keep) -> TrainParams {
    TrainParams {
        max_epochs: 1000,
        shuffle_every_epoch: random_state.map(EveryEpoch::RandomState),
        early_stop: Some(EarlyStop {
            validation: Some(Validation {
                fraction: 0.1,
                seed: 0,
            }),
            judge: Judge::MeanLoss,
            keep,
            ..EarlyStop::default()
        }),
        held_out: Some(held.into()),
        ..TrainParams::default()
    }
}

#[test]
fn held_out_rows_are_skipped_where_they_fall_in_every_epochs_order() {
    let data = load::<f64>("breast_cancer.csv", false);
    let held = every_seventh(&data);
    for random_state in [None, Some(3)] {
        let seed = random_state.map(|r| seeds_from_random_state(r, 1)[0]);
        // No rule: max_epochs epochs.
        let params = TrainParams {
            early_stop: None,
            max_epochs: 4,
            ..held_out(random_state, &held, Keep::Last)
        };
        for backend in [Backend::Reference, Backend::Cpu] {
            let fit = train(&data, params.clone(), backend).unwrap();
            assert_eq!(bits(&fit.weights), bits(&by_hand(&data, &held, seed, 4)));
            assert_eq!(fit.nominal_epochs, Some(4));
            // The theorem's figures are of the rows trained on.
            assert_eq!(fit.theory.rows, data.rows() - held.len());
        }
    }
}

#[test]
fn early_stopping_on_held_out_rows_returns_the_last_epochs_weights() {
    let data = load::<f64>("breast_cancer.csv", false);
    let held = every_seventh(&data);
    let seed = seeds_from_random_state(0, 1)[0];
    let last = train(&data, held_out(Some(0), &held, Keep::Last), Backend::Cpu).unwrap();
    let best = train(&data, held_out(Some(0), &held, Keep::Best), Backend::Cpu).unwrap();
    // The same epochs run; the rule stopped them.
    assert_eq!(last.mistakes_per_epoch, best.mistakes_per_epoch);
    let epochs = last.epochs();
    assert_eq!(last.stop, perceptron::train::Stop::EarlyStopped);
    let report = last.early_stopping.as_ref().unwrap();
    assert_eq!((report.keep, report.best_epoch), (Keep::Last, None));
    assert_eq!(report.validation_rows, Some(held.len()));
    assert_eq!(report.validation_accuracy.len(), epochs);
    assert_eq!(
        bits(&last.weights),
        bits(&by_hand(&data, &held, Some(seed), epochs))
    );
    // Keeping the best epoch's weights is another model here.
    let best_epoch = best.early_stopping.as_ref().unwrap().best_epoch.unwrap();
    assert!(
        best_epoch < epochs,
        "the best epoch {best_epoch} is the last"
    );
    assert_eq!(
        bits(&best.weights),
        bits(&by_hand(&data, &held, Some(seed), best_epoch))
    );
    // Each epoch's score is the accuracy of its weights on the held rows.
    let on_held = data.permuted(&held);
    for e in [1, epochs] {
        let w = by_hand(&data, &held, Some(seed), e);
        let right = early_stop::correct(&on_held, &w, true, 1);
        assert_eq!(
            report.validation_accuracy[e - 1],
            right as f64 / held.len() as f64
        );
    }
}

#[test]
fn the_held_out_rows_weigh_their_accuracy_by_their_sample_weights() {
    let data = load::<f64>("breast_cancer.csv", false);
    let held = every_seventh(&data);
    let weights: std::sync::Arc<[f64]> = (0..data.rows())
        .map(|i| [0.0, 0.25, 1.0, 3.0, 0.1][i % 5])
        .collect();
    let params = TrainParams {
        sample_weight: Some(weights.clone()),
        ..held_out(Some(1), &held, Keep::Last)
    };
    let fit = train(&data, params.clone(), Backend::Cpu).unwrap();
    let on_held = data.permuted(&held);
    let right: Vec<bool> = (0..held.len())
        .map(|i| {
            let s = reference::dot(&fit.weights, on_held.features.row(i), true);
            reference::predicted_sign(s) == on_held.labels[i]
        })
        .collect();
    let held_weights: Vec<f64> = held.iter().map(|&i| weights[i]).collect();
    let scores = &fit.early_stopping.as_ref().unwrap().validation_accuracy;
    let want = early_stop::weighted_accuracy(&right, &held_weights, false);
    assert_eq!(scores.last().unwrap().to_bits(), want.to_bits());
    // Not the share of rows right: the weights count.
    let count = right.iter().filter(|&&r| r).count() as f64 / held.len() as f64;
    assert_ne!(want, count);
    // Every backend agrees.
    let reference = train(&data, params, Backend::Reference).unwrap();
    assert_eq!(bits(&reference.weights), bits(&fit.weights));
}

#[test]
fn held_out_rows_that_cannot_be_are_refused() {
    let data = load::<f64>("breast_cancer.csv", false);
    let n = data.rows();
    let fails = |params: TrainParams| {
        let trainer = Trainer::new(params.check().unwrap()).with_backend(Backend::Cpu);
        let start = trainer.start(&data, None);
        trainer
            .fit(&data, start, &mut Silent)
            .unwrap_err()
            .to_string()
    };
    let err = fails(held_out(Some(0), &[2, n], Keep::Last));
    assert!(
        err.contains(&format!(
            "held-out row {n} is not a row of the data ({n} rows)"
        )),
        "{err}"
    );
    let all: Vec<usize> = (0..n).collect();
    let err = fails(held_out(Some(0), &all, Keep::Last));
    assert!(err.contains("leaves nothing to train on"), "{err}");
    let err = fails(held_out(None, &[], Keep::Last));
    assert!(err.contains("leaves nothing to judge on"), "{err}");
    // A validation part of the caller's besides.
    let trainer = Trainer::new(held_out(Some(0), &[1, 2], Keep::Last).check().unwrap());
    let start = trainer.start(&data, None);
    let err = trainer
        .fit_validated(&data, Some(&data.permuted(&[1, 2])), start, &mut Silent)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not both"), "{err}");
    // The loop alone does not hold rows out: it refuses them.
    let params = held_out(None, &[1, 2], Keep::Last).check().unwrap();
    let err = perceptron::train::fit_reference(&data, &params)
        .unwrap_err()
        .to_string();
    assert!(err.contains("train with Trainer::fit"), "{err}");
    let err = held_out(None, &[4, 2], Keep::Last)
        .check()
        .unwrap_err()
        .to_string();
    assert!(err.contains("row 2 follows row 4"), "{err}");
}

/// scikit-learn's update on sparse input, written out: in file order for
/// `epochs` epochs, a mistake adds y·x to the weights and y·0.01 to the
/// intercept (in f64, so not a multiple of 0.01 after many).
fn decayed_by_hand(data: &Dataset<f64>, epochs: usize) -> Vec<f64> {
    let mut w = vec![0.0; data.cols() + 1];
    for _ in 0..epochs {
        for i in 0..data.rows() {
            let row = data.features.row(i);
            let y = data.labels[i];
            if reference::is_mistake(y, reference::dot(&w, row, true)) {
                let y = y as f64;
                row.for_each(|k, x| w[k] += y * x);
                *w.last_mut().unwrap() += y * 0.01;
            }
        }
    }
    w
}

#[test]
fn an_intercept_decay_moves_only_the_bias_by_its_step_on_every_backend() {
    let data = load::<f64>("heart_scale.svm", false);
    assert!(
        data.features.is_sparse(),
        "scikit-learn's sparse path is tested on sparse rows"
    );
    let params = TrainParams {
        max_epochs: 7,
        intercept_decay: Some(0.01),
        ..TrainParams::default()
    };
    let want = decayed_by_hand(&data, 7);
    assert_ne!(want.last(), Some(&0.0));
    for backend in [Backend::Reference, Backend::Cpu, Backend::Gpu] {
        if let Some(got) = train(&data, params.clone(), backend) {
            assert_eq!(bits(&got.weights), bits(&want), "{backend:?}");
            assert_eq!(
                got.theory.mistake_bound, None,
                "the theorem's x~ is not [x, d]"
            );
        }
    }
    // Under scikit-learn's defaults, with row weights, and one-vs-rest:
    // every backend agrees with the reference, which differs from the
    // textbook update's model.
    for (name, multiclass) in [("heart_scale.svm", false), ("digits.csv", true)] {
        let data = load::<f64>(name, multiclass);
        let weights: std::sync::Arc<[f64]> =
            (0..data.rows()).map(|i| [0.5, 1.0, 3.0][i % 3]).collect();
        for sample_weight in [None, Some(weights)] {
            let params = TrainParams {
                intercept_decay: Some(0.01),
                sample_weight,
                ..defaults(3, multiclass)
            };
            let want = train(&data, params.clone(), Backend::Reference).unwrap();
            let textbook = TrainParams {
                intercept_decay: None,
                ..params.clone()
            };
            let plain = train(&data, textbook, Backend::Reference).unwrap();
            assert_ne!(bits(&want.weights), bits(&plain.weights), "{name}");
            for backend in [Backend::Cpu, Backend::Gpu] {
                if let Some(got) = train(&data, params.clone(), backend) {
                    assert_eq!(
                        bits(&got.weights),
                        bits(&want.weights),
                        "{name} on {backend:?}"
                    );
                    assert_eq!(mean_losses(&got), mean_losses(&want));
                }
            }
        }
    }
}

#[test]
fn an_intercept_decay_is_refused_where_it_cannot_be_made() {
    let refused = |params: TrainParams| params.check().unwrap_err().to_string();
    for d in [0.0, -0.01, f64::NAN, f64::INFINITY] {
        let params = TrainParams {
            intercept_decay: Some(d),
            ..TrainParams::default()
        };
        assert!(refused(params).contains("must be a finite number > 0"));
    }
    let params = TrainParams {
        intercept_decay: Some(0.01),
        bias: false,
        ..TrainParams::default()
    };
    assert!(refused(params).contains("without a bias"));
    // A decay of 1 is the textbook update, said one way.
    let one = TrainParams {
        intercept_decay: Some(1.0),
        bias: false,
        ..TrainParams::default()
    };
    assert_eq!(one.check().unwrap().intercept_decay, None);
    // scikit-learn sums the decayed steps in float64 beside float32 weights.
    let data = load::<f32>("heart_scale.svm", false);
    let trainer = Trainer::new(
        TrainParams {
            intercept_decay: Some(0.01),
            ..TrainParams::default()
        }
        .check()
        .unwrap(),
    );
    let start = trainer.start(&data, None);
    let err = trainer
        .fit(&data, start, &mut Silent)
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs f64 precision"), "{err}");
}

#[test]
fn the_command_line_records_resumes_and_refuses_an_intercept_decay() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_str("heart_scale.svm");
    let refused = |args: &[&str], says: &str| {
        refused_in(dir.path(), &[&["train", &data], args].concat(), says)
    };
    refused(
        &["--intercept-decay", "0.01"],
        "--intercept-decay needs --precision f64",
    );
    // Refused before the data is read (a file that is not there would be
    // the error otherwise), by `train` and by `cv`.
    for command in ["train", "cv"] {
        refused_in(
            dir.path(),
            &[command, "no-such-file.svm", "--intercept-decay", "0.01"],
            "--intercept-decay needs --precision f64",
        );
    }
    refused(
        &["--intercept-decay", "0", "--precision", "f64"],
        "--intercept-decay must be a finite number > 0, got 0",
    );
    refused(
        &[
            "--intercept-decay",
            "0.01",
            "--precision",
            "f64",
            "--no-bias",
        ],
        "--no-bias trains without one",
    );
    // A model that separates its data has a margin, and no bound to show.
    let out = cmd(dir.path())
        .args([
            "train",
            &data_str("iris_setosa.svm"),
            "--intercept-decay",
            "0.01",
        ])
        .args(["--precision", "f64", "-o", "setosa.json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("margin      gamma = ")
            && text.contains("bound       none: --intercept-decay D moves the bias by D·y"),
        "{text}"
    );
    // Recorded in the model, adopted by a resumed run, refused if changed.
    let decayed = ["--intercept-decay", "0.01", "--precision", "f64"];
    cmd(dir.path())
        .args(["train", &data, "--max-epochs", "6", "-o", "whole.json"])
        .args(decayed)
        .assert()
        .code(0);
    cmd(dir.path())
        .args(["train", &data, "--max-epochs", "3", "-o", "part.json"])
        .args(["--checkpoint", "ck.json"])
        .args(decayed)
        .assert()
        .code(0);
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("whole.json")).unwrap())
            .unwrap();
    assert_eq!(model["training"]["intercept_decay"], 0.01);
    assert!(model["training"]["mistake_bound"].is_null());
    refused(
        &["--resume", "ck.json", "--intercept-decay", "0.5"],
        "--intercept-decay was 0.01, now 0.5",
    );
    cmd(dir.path())
        .args(["train", &data, "--resume", "ck.json", "--max-epochs", "6"])
        .args(["-o", "resumed.json"])
        .assert()
        .code(0);
    assert_eq!(
        crate::common::essence(&dir.path().join("whole.json")),
        crate::common::essence(&dir.path().join("resumed.json"))
    );
}

/// `auto` weighs a GPU's start against the whole run: a one-vs-rest run
/// with rows held out trains its heads as runs of their own, and `auto` is
/// decided once for all of them, from every head's passes (before, each
/// head decided from its own, a tenth of the run's on digits).
#[test]
fn auto_decides_a_held_out_one_vs_rest_run_once_from_every_heads_passes() {
    let data = load::<f64>("digits.csv", true);
    let heads = data.classes.len();
    let held = every_seventh(&data);
    let params = TrainParams {
        early_stop: None,
        max_epochs: 5,
        multiclass: true,
        ..held_out(None, &held, Keep::Last)
    };
    let auto = train(&data, params.clone(), Backend::Auto).unwrap();
    let stored = data.rows() * data.cols();
    let note = auto.backend_note.clone().unwrap_or_default();
    if cfg!(feature = "gpu") {
        assert!(
            note.starts_with(&format!(
                "auto: at most {} passes over {stored} stored values",
                5 * heads
            )),
            "{note}"
        );
    }
    let cpu = train(&data, params, Backend::Cpu).unwrap();
    assert_eq!(bits(&auto.weights), bits(&cpu.weights));
}

/// A resumed run has only the rest of its epochs to go, and `auto` weighs
/// a GPU's start against those: on breast_cancer (569 x 30, 17,070 stored
/// values) 3,934 epochs are past the short-run rule (2^26 values), the
/// 3,931 left after three are not.
#[test]
fn auto_counts_the_passes_a_resumed_run_has_left() {
    let data = load::<f64>("breast_cancer.csv", false);
    assert_eq!(data.rows() * data.cols(), 17_070);
    let first = train(
        &data,
        TrainParams {
            max_epochs: 3,
            ..TrainParams::default()
        },
        Backend::Cpu,
    )
    .unwrap();
    assert_eq!(first.state.epoch, 3, "the first run must not converge");
    let trainer = Trainer::new(
        TrainParams {
            max_epochs: 3934,
            ..TrainParams::default()
        }
        .check()
        .unwrap(),
    );
    let resumed = trainer.fit(&data, first.state, &mut Silent).unwrap();
    if cfg!(feature = "gpu") {
        assert_eq!(
            resumed.backend_note.as_deref(),
            Some(
                "auto: at most 3931 passes over 17070 stored values, a run over before a GPU \
                 could start; using the CPU engine"
            )
        );
    }
}
