//! `--class-weight`: the weighted update w~ <- w~ + fl(c_y·x~)·y equals
//! scikit-learn's `Perceptron(class_weight=...)` bit for bit in f64 (golden
//! file), and every engine (the CPU engine, the GPU kernels' twins, with
//! uncertainty injected) gives the textbook weighted loop's bits, for the
//! classic and the averaged variant.

use std::path::Path;

use serde_json::Value;

use crate::common::{Rng, cmd, data_file, data_str, random_dense, random_sparse};
use perceptron::Real;
use perceptron::data::{self, Dataset, LoadOptions};
use perceptron::engine::MarginEngine;
use perceptron::engine::cpu::CpuEngine;
use perceptron::engine::gpu::twin::TwinEngine;
use perceptron::engine::gpu::twin::TwinWalkEngine;
use perceptron::train::PassPolicy::{self, Adaptive, Always, Windows};
use perceptron::train::{self, ClassWeights, ReferenceEngine, Silent, State, TrainParams, Variant};

fn bits<F: Real>(v: &[F]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

fn params(epochs: usize, bias: bool, w: &str, variant: Variant, policy: PassPolicy) -> TrainParams {
    TrainParams {
        max_epochs: epochs,
        bias,
        passes: policy,
        variant,
        class_weight: Some(ClassWeights::parse(w).unwrap()),
        ..Default::default()
    }
}

fn fit<'a, F: Real>(
    data: &Dataset<F>,
    p: &TrainParams,
    engine: Box<dyn MarginEngine<F> + 'a>,
) -> train::Fit<F> {
    let heads = if p.multiclass { data.classes.len() } else { 1 };
    let dim = (data.cols() + p.bias as usize) * heads;
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    train::fit(
        data,
        &p.check_ref().unwrap(),
        State::initial(dim),
        engine,
        &mut fb,
        &mut Silent,
    )
    .unwrap()
}

#[test]
fn the_weighted_update_is_scikit_learns_bit_for_bit() {
    let text = std::fs::read_to_string(data_file("golden_class_weight.json")).unwrap();
    let golden: Value = serde_json::from_str(&text).unwrap();
    for (name, g) in golden.as_object().unwrap() {
        if name.starts_with('_') {
            continue;
        }
        let file = data_file(g["file"].as_str().unwrap());
        let ovr = name.contains("ovr");
        let raw = data::load_raw::<f64>(&file, &LoadOptions::default()).unwrap();
        let data = if ovr {
            Dataset::from_raw_classes(raw, &file).unwrap()
        } else {
            Dataset::from_raw(raw, &file, None).unwrap()
        };
        let p = TrainParams {
            multiclass: ovr,
            ..params(
                g["max_epochs"].as_u64().unwrap() as usize,
                true,
                g["class_weight"].as_str().unwrap(),
                Variant::Classic,
                Adaptive,
            )
        };
        let dim = data.cols() + 1;
        for engine in ["reference", "cpu"] {
            let e: Box<dyn MarginEngine<f64>> = if engine == "cpu" {
                Box::new(CpuEngine::new(&data, true))
            } else {
                Box::new(ReferenceEngine)
            };
            let f = fit(&data, &p, e);
            for (k, class) in g["classes"].as_array().unwrap().iter().enumerate() {
                // scikit-learn's classes are sorted; a binary model has one row.
                let h = if ovr {
                    data.classes
                        .iter()
                        .position(|c| c.text == class.as_str().unwrap())
                        .unwrap()
                } else if k == 0 {
                    continue;
                } else {
                    0
                };
                let row = if ovr { k } else { 0 };
                let want: Vec<f64> = g["weights"][row]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect();
                let got = &f.weights[h * dim..(h + 1) * dim];
                assert_eq!(
                    bits(&got[..dim - 1]),
                    bits(&want),
                    "{name} ({engine}): class {class} weights"
                );
                assert_eq!(
                    got[dim - 1].to_bits(),
                    g["bias"][row].as_f64().unwrap().to_bits(),
                    "{name} ({engine}): class {class} bias"
                );
            }
        }
    }
}

/// The weighted loop and the averaged accumulator, written out from their
/// definitions (`reference::apply_weighted_update`,
/// `variant::accumulate_weighted`) independently of the crate.
fn textbook_weighted<F: Real>(
    data: &Dataset<F>,
    bias: bool,
    epochs: usize,
    c: [F; 2],
    averaged: bool,
) -> (Vec<F>, Vec<u64>) {
    let d = data.cols();
    let mut w = vec![F::ZERO; d + bias as usize];
    let mut u = vec![F::ZERO; d + bias as usize];
    let mut per_epoch = Vec::new();
    let mut visit = 0u64;
    for _ in 0..epochs {
        let mut mistakes = 0;
        for i in 0..data.rows() {
            visit += 1;
            let mut terms = Vec::new();
            data.features.row(i).for_each(|k, v| terms.push((k, v)));
            let mut s = F::ZERO;
            for &(k, v) in &terms {
                s = s + w[k] * v;
            }
            if bias {
                s = s + w[d];
            }
            let y = data.labels[i];
            let cy = c[(y > 0) as usize];
            if (if y > 0 { s } else { -s }) <= F::ZERO {
                mistakes += 1;
                let kk = F::from_f64((visit - 1) as f64);
                for &(k, v) in &terms {
                    let cx = cy * v;
                    w[k] = if y > 0 { w[k] + cx } else { w[k] - cx };
                    let kx = kk * cx;
                    u[k] = if y > 0 { u[k] + kx } else { u[k] - kx };
                }
                if bias {
                    w[d] = if y > 0 { w[d] + cy } else { w[d] - cy };
                    let kb = kk * cy;
                    u[d] = if y > 0 { u[d] + kb } else { u[d] - kb };
                }
            }
        }
        per_epoch.push(mistakes);
        if mistakes == 0 {
            break;
        }
    }
    if averaged {
        let t = F::from_f64(visit as f64);
        w = w.iter().zip(&u).map(|(&a, &b)| a - b / t).collect();
    }
    (w, per_epoch)
}

fn check<F: Real>(data: &Dataset<F>, bias: bool, epochs: usize, seed: u64) {
    for (weights, c) in [
        ("1=0.3,-1=2.5", [F::from_f64(2.5), F::from_f64(0.3)]),
        ("-1=1e-3", [F::from_f64(1e-3), F::ONE]),
    ] {
        for variant in [Variant::Classic, Variant::Averaged] {
            let want = textbook_weighted(data, bias, epochs, c, variant == Variant::Averaged);
            let engines: Vec<(PassPolicy, Box<dyn MarginEngine<F>>)> = vec![
                (Always, Box::new(ReferenceEngine)),
                (Always, Box::new(CpuEngine::new(data, bias))),
                (Adaptive, Box::new(CpuEngine::new(data, bias))),
                (Windows, Box::new(CpuEngine::new(data, bias))),
                // A walking engine: class weights turn its walk off.
                (Always, Box::new(TwinWalkEngine::new(data, bias, 4, 16))),
                (Always, Box::new(TwinEngine::new(data, bias, None))),
                (Always, Box::new(TwinEngine::new(data, bias, Some(32)))),
            ];
            for (policy, engine) in engines {
                let name = format!(
                    "{} {policy:?} {variant:?} {weights} seed {seed}",
                    engine.name()
                );
                let f = fit(
                    data,
                    &params(epochs, bias, weights, variant, policy),
                    engine,
                );
                assert_eq!(f.mistakes_per_epoch, want.1, "{name}: mistakes");
                assert_eq!(bits(&f.weights), bits(&want.0), "{name}: weights");
                assert_eq!(f.loop_stats.walk_speculative, 0, "{name}: no walk");
            }
        }
    }
}

#[test]
fn every_engine_gives_the_textbook_weighted_loop() {
    let mut rng = Rng(0xc1a55);
    for case in 0..12 {
        let rows = 1 + rng.below(1500);
        let noise = [0.0, 0.05, 0.3][case % 3];
        let bias = case % 4 != 3;
        let epochs = 1 + rng.below(8);
        let (c32, c64, csparse) = (1 + rng.below(30), 1 + rng.below(30), 1 + rng.below(300));
        let d32 = random_dense::<f32>(&mut rng, rows, c32, noise);
        check(&d32, bias, epochs, case as u64);
        let d64 = random_dense::<f64>(&mut rng, rows, c64, noise);
        check(&d64, bias, epochs, case as u64);
        let sparse = random_sparse::<f32>(&mut rng, rows, csparse, 12, noise);
        check(&sparse, bias, epochs, case as u64);
    }
}

#[test]
fn unit_weights_are_the_classic_loop() {
    let mut rng = Rng(77);
    let data = random_dense::<f32>(&mut rng, 800, 9, 0.1);
    let unit = fit(
        &data,
        &params(6, true, "1=1,-1=1", Variant::Averaged, Adaptive),
        Box::new(CpuEngine::new(&data, true)),
    );
    let plain = fit(
        &data,
        &TrainParams {
            max_epochs: 6,
            variant: Variant::Averaged,
            ..Default::default()
        },
        Box::new(CpuEngine::new(&data, true)),
    );
    assert_eq!(bits(&unit.weights), bits(&plain.weights));
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_command_reports_saves_and_checks_the_weights() {
    let dir = tempfile::tempdir().unwrap();
    let digits = data_str("digits_3v5.csv");
    let out = cmd(dir.path())
        .args([
            "train",
            &digits,
            "--class-weight=-1=2",
            "-o",
            "m.json",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["class_weight"], "-1=2");
    assert_eq!(report["class_weights"][1]["weight"], 2.0);
    // (c_max/c_min)·(D/γ)² = 2·(D/γ)².
    let (d, g) = (
        report["radius"].as_f64().unwrap(),
        report["margin"].as_f64().unwrap(),
    );
    let bound = report["mistake_bound"].as_f64().unwrap();
    assert!(
        (bound / (2.0 * (d / g).powi(2)) - 1.0).abs() < 1e-12,
        "{bound}"
    );
    assert_eq!(report["bound_holds"], true);
    let model = json(&dir.path().join("m.json"));
    assert_eq!(model["training"]["class_weights"][1]["label"], "-1");
    let text = cmd(dir.path())
        .args([
            "train",
            &digits,
            "--class-weight",
            "balanced",
            "-o",
            "b.json",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains(
            "weights     updates add c_y·y·x~ with \"1\" x 1.00275, \"-1\" x 0.997268 (balanced)"
        ),
        "{text}"
    );
    assert!(text.contains("(c_max/c_min)*(D/gamma)^2 = "), "{text}");
    cmd(dir.path())
        .args(["train", &digits, "--class-weight", "1=0"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "weight \"0\" is not a finite positive number",
        ));
    cmd(dir.path())
        .args(["train", &digits, "--class-weight", "7=2"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "the class weights name label \"7\", but the model's classes are \"1\" (+1) and \"-1\" (-1)",
        ));
    // Resuming adopts the weights and refuses others.
    cmd(dir.path())
        .args([
            "train",
            &digits,
            "--class-weight",
            "balanced",
            "--max-epochs",
            "2",
        ])
        .args(["--checkpoint", "ck.json", "-o", "c.json"])
        .assert()
        .code(0);
    cmd(dir.path())
        .args([
            "train",
            &digits,
            "--resume",
            "ck.json",
            "--class-weight",
            "1=2",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--class-weight was balanced, now 1=2",
        ));
    cmd(dir.path())
        .args(["train", &digits, "--resume", "ck.json", "-o", "d.json"])
        .assert()
        .code(0);
    assert_eq!(
        crate::common::essence(&dir.path().join("c.json")),
        crate::common::essence(&dir.path().join("d.json"))
    );
}
