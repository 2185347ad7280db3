//! Early stopping (`--tol`, `--n-iter-no-change`, `--validation-fraction`):
//! the scores are what an independent computation gives, the run stops
//! where scikit-learn's rule says, the model is the best epoch's weights
//! bit for bit, every backend agrees, and an interrupted run resumes to the
//! same model.

use std::path::Path;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{cmd, data_file, data_str, essence};
use perceptron::data::{self, Dataset, LoadOptions, ScaleKind};
use perceptron::engine::MarginEngine;
use perceptron::engine::backend::Backend;
use perceptron::engine::cpu::CpuEngine;
use perceptron::engine::gpu::twin::TwinEngine;
use perceptron::engine::reference;
use perceptron::train::folds;
use perceptron::train::{
    self, EarlyStop, Observer, ReferenceEngine, RunDescription, RunSettings, Silent, State, Stop,
    TrainParams, Trainer, Validation, Variant, checkpoint,
};

/// breast_cancer (f64), standard-scaled on its training part, split 80/20
/// by the held-out rule with seed `seed`.
fn breast_cancer(seed: u64) -> (Dataset<f64>, Dataset<f64>) {
    let path = data_file("breast_cancer.csv");
    let all = data::load::<f64>(&path, &LoadOptions::default()).unwrap();
    let (strata, classes) = folds::strata(&all);
    let held = folds::holdout(&strata, classes, 0.2, seed);
    let (kept, out) = folds::split(&all, &held);
    let scaling = perceptron::data::Scaling::fit(ScaleKind::Standard, &kept).unwrap();
    (
        scaling.apply_to(kept).unwrap(),
        scaling.apply_to(out).unwrap(),
    )
}

fn rule(tol: f64, k: usize, seed: u64) -> EarlyStop {
    EarlyStop {
        tol,
        n_iter_no_change: k,
        validation: Some(Validation {
            fraction: 0.2,
            seed,
        }),
        judge: Default::default(),
        keep: Default::default(),
    }
}

fn accuracy(held: &Dataset<f64>, w: &[f64]) -> f64 {
    let right = (0..held.rows())
        .filter(|&i| {
            let s = reference::dot(w, held.features.row(i), true);
            (if s > 0.0 { 1 } else { -1 }) == held.labels[i]
        })
        .count();
    right as f64 / held.rows() as f64
}

/// scikit-learn's rule, written out again: the epoch it stops after.
fn sklearn_stop(scores: &[f64], tol: f64, k: usize) -> Option<usize> {
    let (mut best, mut count) = (f64::NEG_INFINITY, 0);
    for (e, &s) in scores.iter().enumerate() {
        count = if s < best + tol { count + 1 } else { 0 };
        best = best.max(s);
        if count >= k {
            return Some(e + 1);
        }
    }
    None
}

#[test]
fn the_model_is_the_best_epochs_weights_and_the_stop_is_the_rules() {
    for (variant, seed) in [(Variant::Classic, 0), (Variant::Averaged, 5)] {
        let (train, held) = breast_cancer(seed);
        let params = TrainParams {
            variant,
            early_stop: Some(rule(1e-3, 4, seed)),
            ..Default::default()
        }
        .check()
        .unwrap();
        let trainer = Trainer::new(params).with_backend(Backend::Cpu);
        let fit = trainer
            .fit_validated(
                &train,
                Some(&held),
                trainer.start(&train, None),
                &mut Silent,
            )
            .unwrap();
        assert_eq!(fit.stop, Stop::EarlyStopped);
        let report = fit.early_stopping.clone().unwrap();
        let epochs = fit.epochs();
        assert_eq!(report.validation_accuracy.len(), epochs);
        assert_eq!(report.validation_rows, Some(held.rows()));
        // Each epoch's score is the held-out accuracy of the plain run cut
        // at that epoch, computed here.
        let mut kept = None;
        let mut best = f64::NEG_INFINITY;
        for e in 1..=epochs {
            let plain = TrainParams {
                max_epochs: e,
                variant,
                ..Default::default()
            }
            .check()
            .unwrap();
            let cut = train::fit_reference(&train, &plain).unwrap();
            let a = accuracy(&held, &cut.weights);
            assert_eq!(
                a,
                report.validation_accuracy[e - 1],
                "{variant:?} epoch {e}"
            );
            if a > best {
                best = a;
                kept = Some((e, cut.weights));
            }
        }
        let (best_epoch, best_weights) = kept.unwrap();
        assert_eq!(report.best_epoch, Some(best_epoch));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&fit.weights), bits(&best_weights), "{variant:?}");
        assert_eq!(
            sklearn_stop(&report.validation_accuracy, 1e-3, 4),
            Some(epochs),
            "{variant:?}: stops where the rule says"
        );
    }
}

#[test]
fn without_a_validation_part_the_training_mistakes_decide() {
    let path = data_file("heart_scale.svm");
    let data = data::load::<f32>(&path, &LoadOptions::default()).unwrap();
    let es = EarlyStop {
        tol: 0.01,
        n_iter_no_change: 3,
        validation: None,
        judge: Default::default(),
        keep: Default::default(),
    };
    let params = TrainParams {
        early_stop: Some(es),
        ..Default::default()
    }
    .check()
    .unwrap();
    let fit = train::fit_reference(&data, &params).unwrap();
    assert_eq!(fit.stop, Stop::EarlyStopped);
    let scores: Vec<f64> = fit
        .mistakes_per_epoch
        .iter()
        .map(|&m| -(m as f64 / data.rows() as f64))
        .collect();
    assert_eq!(sklearn_stop(&scores, 0.01, 3), Some(fit.epochs()));
    let report = fit.early_stopping.unwrap();
    assert_eq!(report.best_epoch, None, "the last iterate is returned");
    assert_eq!(fit.weights, fit.last_weights);
    // Every engine stops at the same epoch with the same weights.
    let engines: Vec<Box<dyn MarginEngine<f32>>> = vec![
        Box::new(CpuEngine::new(&data, true)),
        Box::new(TwinEngine::new(&data, true, Some(8))),
        Box::new(ReferenceEngine),
    ];
    for engine in engines {
        let name = engine.name();
        let mut fb = || -> Box<dyn MarginEngine<f32>> { Box::new(ReferenceEngine) };
        let other = train::fit(
            &data,
            &params,
            State::initial(data.cols() + 1),
            engine,
            &mut fb,
            &mut Silent,
        )
        .unwrap();
        assert_eq!(other.mistakes_per_epoch, fit.mistakes_per_epoch, "{name}");
        assert_eq!(other.weights, fit.weights, "{name}");
    }
}

/// Stops the run after `after` epochs, like a Ctrl-C at an epoch's end.
struct StopAfter {
    after: usize,
    seen: usize,
}

impl<F> Observer<F> for StopAfter {
    fn on_epoch_end(&mut self, _: &State<F>) -> perceptron::Result<()> {
        self.seen += 1;
        Ok(())
    }
    fn should_stop(&mut self) -> bool {
        self.seen >= self.after
    }
}

#[test]
fn an_interrupted_run_resumes_to_the_same_model() {
    let (train, held) = breast_cancer(2);
    let params = TrainParams {
        early_stop: Some(rule(1e-3, 4, 2)),
        ..Default::default()
    }
    .check()
    .unwrap();
    let run = RunDescription::new(&params, &train, None, RunSettings::default());
    let trainer = Trainer::new(params).with_backend(Backend::Cpu);
    let whole = trainer
        .fit_validated(
            &train,
            Some(&held),
            trainer.start(&train, None),
            &mut Silent,
        )
        .unwrap();
    assert!(whole.epochs() > 3, "{}", whole.epochs());
    for after in [1, 2, whole.epochs() - 1, whole.epochs()] {
        let mut stop = StopAfter { after, seen: 0 };
        let first = trainer
            .fit_validated(&train, Some(&held), trainer.start(&train, None), &mut stop)
            .unwrap();
        // Through a checkpoint file and back.
        let dir = tempfile::tempdir().unwrap();
        let ck = dir.path().join("ck.json");
        checkpoint::save(&ck, &run, &first.state).unwrap();
        let state = checkpoint::load::<f64>(&ck, &run).unwrap();
        assert_eq!(state, first.state);
        let resumed = trainer
            .fit_validated(&train, Some(&held), state, &mut Silent)
            .unwrap();
        assert_eq!(resumed.weights, whole.weights, "stopped after {after}");
        assert_eq!(resumed.mistakes_per_epoch, whole.mistakes_per_epoch);
        assert_eq!(resumed.stop, Stop::EarlyStopped);
        assert_eq!(resumed.early_stopping, whole.early_stopping);
    }
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_command_exits_0_reports_and_saves_the_kept_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let bc = data_str("breast_cancer.csv");
    let mut models = Vec::new();
    for backend in ["reference", "cpu"] {
        let name = format!("{backend}.json");
        let out = cmd(dir.path())
            .args([
                "train",
                &bc,
                "--scale",
                "standard",
                "--validation-fraction",
                "0.2",
            ])
            .args([
                "--seed",
                "4",
                "--n-iter-no-change",
                "3",
                "-o",
                &name,
                "--json",
            ])
            .args(["--backend", backend])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(out.stderr.is_empty(), "no not-converged message");
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["stop"], "early_stopped");
        assert_eq!(report["rows"], 455, "the training part");
        let es = &report["early_stopping"];
        assert_eq!(es["validation_rows"], 114);
        assert_eq!(es["stopped"], true);
        assert_eq!(report["validation_seed"], 4);
        let model = json(&dir.path().join(&name));
        assert_eq!(model["training"]["early_stopping"], *es);
        models.push(essence(&dir.path().join(&name)));
    }
    assert_eq!(models[0], models[1], "the backends agree");
    let text = cmd(dir.path())
        .args([
            "train",
            &bc,
            "--scale",
            "standard",
            "--validation-fraction",
            "0.2",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains(
            "held out    114 rows (20%, stratified by label, seed 0); accuracy per epoch: "
        ),
        "{text}"
    );
    assert!(
        text.contains("kept        the weights after epoch "),
        "{text}"
    );
    // The epoch cap still ends the run when it comes first: exit 3 when
    // convergence is required, else 0 with the note.
    cmd(dir.path())
        .args(["train", &bc, "--tol", "0.001", "--max-epochs", "3"])
        .arg("--require-convergence")
        .assert()
        .code(3);
    cmd(dir.path())
        .args(["train", &bc, "--tol", "0.001", "--max-epochs", "3"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("not converged"));
    // Without a validation part the mistakes per row decide.
    cmd(dir.path())
        .args([
            "train",
            &data_str("heart_scale.svm"),
            "--n-iter-no-change",
            "2",
        ])
        .assert()
        .code(0)
        .stdout(predicates::str::contains(
            "early stop  on the mistakes per row",
        ));
    // With `--tol-on mean-loss` the mean hinge loss decides, and the
    // summary names it and its values (it once named the mistakes per row
    // and listed nothing).
    let out = cmd(dir.path())
        .args([
            "train",
            &data_str("heart_scale.svm"),
            "--tol-on",
            "mean-loss",
        ])
        .args(["--shuffle-every-epoch", "--precision", "f64"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("did not beat the best mean loss by 0.001")
            && text.contains("early stop  on the mean hinge loss: stop after 5 epochs")
            && text.contains("(it did); per epoch: 0."),
        "{text}"
    );
}

#[test]
fn bad_early_stopping_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bc = data_str("breast_cancer.csv");
    for (args, says) in [
        (
            vec!["--validation-fraction", "1.5"],
            "--validation-fraction must be between 0 and 1, got 1.5",
        ),
        (
            vec!["--tol", "-1"],
            "--tol must be a finite number >= 0, got -1",
        ),
        (
            vec!["--n-iter-no-change", "0"],
            "--n-iter-no-change must be at least 1, got 0",
        ),
        (vec!["--seed", "3"], "--shuffle"),
    ] {
        cmd(dir.path())
            .args(["train", &bc])
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
    std::fs::write(dir.path().join("two.csv"), "1,0\n-1,1\n").unwrap();
    cmd(dir.path())
        .args(["train", "two.csv", "--validation-fraction", "0.1"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--validation-fraction 0.1 of 2 rows leaves 2 rows to train on and 0 rows held out",
        ));
    // A checkpoint's rule is adopted on resume, and another one refused.
    cmd(dir.path())
        .args([
            "train",
            &bc,
            "--validation-fraction",
            "0.2",
            "--max-epochs",
            "2",
        ])
        .args(["--checkpoint", "ck.json", "-o", "a.json"])
        .assert()
        .code(0);
    cmd(dir.path())
        .args(["train", &bc, "--resume", "ck.json", "--tol", "0.5"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("early stopping was tol 0.001, 5 epochs, on a held-out 0.2 (seed 0), now tol 0.5, 5 epochs"));
    cmd(dir.path())
        .args(["train", &bc, "--resume", "ck.json", "-o", "b.json"])
        .assert()
        .code(0);
    assert_eq!(
        essence(&dir.path().join("a.json")),
        essence(&dir.path().join("b.json"))
    );
}
