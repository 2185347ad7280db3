//! One-vs-rest training equals K independent binary perceptrons, each its
//! textbook self, bit for bit, on every CPU engine (tests/gpu.rs: the GPU).

use crate::common::{Rng, head_dataset, random_multiclass, textbook_variant};
use perceptron::Real;
use perceptron::data::Dataset;
use perceptron::engine::cpu::CpuEngine;
use perceptron::engine::gpu::twin::TwinEngine;
use perceptron::train::{
    self, MarginEngine, PassPolicy, ReferenceEngine, Silent, State, TrainParams, Variant,
};

fn bits<F: Real>(v: &[F]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

/// Trains every head alone with the textbook loop, for as many epochs as
/// the joint run makes (a converged head stays unchanged afterwards).
fn expected<F: Real>(
    data: &Dataset<F>,
    bias: bool,
    max_epochs: usize,
    variant: Variant,
) -> (Vec<F>, Vec<Vec<u64>>) {
    let heads = data.classes.len();
    let per_head: Vec<(Vec<F>, Vec<u64>)> = (0..heads)
        .map(|h| {
            let (w, m, _) =
                textbook_variant(&head_dataset(data, h), bias, max_epochs, variant, F::ZERO);
            (w, m)
        })
        .collect();
    let epochs = per_head.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
    let weights = per_head.iter().flat_map(|(w, _)| w.clone()).collect();
    // Epoch by epoch, a head that converged earlier makes no mistakes.
    let table = (0..epochs)
        .map(|e| {
            per_head
                .iter()
                .map(|(_, m)| m.get(e).copied().unwrap_or(0))
                .collect()
        })
        .collect();
    (weights, table)
}

fn check<F: Real>(data: &Dataset<F>, bias: bool, epochs: usize, variant: Variant) {
    let heads = data.classes.len();
    let dim = (data.cols() + bias as usize) * heads;
    let (want, table) = expected(data, bias, epochs, variant);
    let averaged_runs_longer = variant == Variant::Averaged;
    let engines: Vec<(PassPolicy, Box<dyn MarginEngine<F>>)> = vec![
        (PassPolicy::Always, Box::new(ReferenceEngine)),
        (PassPolicy::Always, Box::new(CpuEngine::new(data, bias))),
        (PassPolicy::Adaptive, Box::new(CpuEngine::new(data, bias))),
        (
            PassPolicy::Always,
            Box::new(TwinEngine::new(data, bias, None)),
        ),
    ];
    for (policy, engine) in engines {
        let name = format!("{} {policy:?} {variant:?}", engine.name());
        let params = TrainParams {
            max_epochs: epochs,
            bias,
            passes: policy,
            variant,
            multiclass: true,
            ..Default::default()
        };
        let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
        let fit = train::fit(
            data,
            &params.check_ref().unwrap(),
            State::initial(dim),
            engine,
            &mut fb,
            &mut Silent,
        )
        .unwrap();
        assert_eq!(
            fit.state.head_mistakes_per_epoch, table,
            "{name}: mistakes per head and epoch"
        );
        if !averaged_runs_longer {
            assert_eq!(bits(&fit.weights), bits(&want), "{name}: weights");
        }
        assert_eq!(fit.head_theory.len(), heads);
    }
}

#[test]
fn one_vs_rest_is_k_independent_perceptrons() {
    let mut rng = Rng(0x0f5);
    for case in 0..10 {
        let (rows, cols, classes) = (1 + rng.below(1500), 1 + rng.below(25), 2 + rng.below(6));
        let noise = [0.0, 0.05][case % 2];
        let d32 = random_multiclass::<f32>(&mut rng, rows, cols, classes, noise);
        check(&d32, case % 3 != 0, 1 + rng.below(8), Variant::Classic);
        let d64 = random_multiclass::<f64>(&mut rng, rows, cols, classes, noise);
        check(&d64, true, 1 + rng.below(8), Variant::Classic);
    }
}

/// Averaged one-vs-rest: each head's average runs over the joint run's
/// visits, so compare with each head trained alone for that many epochs.
#[test]
fn averaged_one_vs_rest_matches_per_head_averages() {
    let mut rng = Rng(0xa0f);
    for _ in 0..6 {
        let (rows, cols, classes) = (1 + rng.below(800), 1 + rng.below(12), 3 + rng.below(3));
        let d = random_multiclass::<f64>(&mut rng, rows, cols, classes, 0.1);
        let epochs = 1 + rng.below(5);
        let heads = d.classes.len();
        let params = TrainParams {
            max_epochs: epochs,
            variant: Variant::Averaged,
            multiclass: true,
            ..Default::default()
        };
        let fit = train::fit_reference(&d, &params.check_ref().unwrap()).unwrap();
        let run_epochs = fit.epochs();
        let dim = d.cols() + 1;
        for h in 0..heads {
            // Alone, a head that converged would stop early; the joint run
            // keeps visiting (its weights then stay put but the average
            // moves on), so train it alone for exactly the joint epochs.
            let alone = textbook_variant(
                &head_dataset(&d, h),
                true,
                run_epochs,
                Variant::Averaged,
                0.0,
            );
            let (w_alone, m_alone, _) = alone;
            if m_alone.len() == run_epochs {
                assert_eq!(
                    bits(&fit.weights[h * dim..(h + 1) * dim]),
                    bits(&w_alone),
                    "head {h}"
                );
            }
        }
        check(&d, true, epochs, Variant::Averaged);
    }
}

/// A run on real multi-class data through the CLI: the bundled digits.
#[test]
fn digits_through_the_cli() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("ovr.json");
    let out = assert_cmd::Command::cargo_bin("perceptron")
        .unwrap()
        .args([
            "train",
            "--multiclass",
            "ovr",
            "--max-epochs",
            "30",
            "--backend",
            "cpu",
            "-o",
        ])
        .arg(&model)
        .arg(root.join("data/digits.csv"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Not converged at the cap: the model is written, exit 0 with a note.
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not converged"));
    assert!(stdout.contains("10 (one-vs-rest"), "{stdout}");
    let eval = assert_cmd::Command::cargo_bin("perceptron")
        .unwrap()
        .args(["eval", "--json"])
        .arg(&model)
        .arg(root.join("data/digits.csv"))
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&eval.stdout).unwrap();
    assert_eq!(r["confusion"]["labels"].as_array().unwrap().len(), 10);
    assert_eq!(r["confusion"]["matrix"].as_array().unwrap().len(), 10);
    assert!(r["accuracy"].as_f64().unwrap() > 0.9, "{r}");
    // predict agrees with eval's count of correct rows.
    let pred = assert_cmd::Command::cargo_bin("perceptron")
        .unwrap()
        .arg("predict")
        .arg(&model)
        .arg(root.join("data/digits.csv"))
        .output()
        .unwrap();
    let truth: Vec<String> = std::fs::read_to_string(root.join("data/digits.csv"))
        .unwrap()
        .lines()
        .map(|l| l.split(',').next().unwrap().to_owned())
        .collect();
    let correct = String::from_utf8_lossy(&pred.stdout)
        .lines()
        .zip(&truth)
        .filter(|(p, t)| p == t)
        .count();
    assert_eq!(correct as u64, r["correct"].as_u64().unwrap());
}

/// Ties go to the class listed first; NaN never wins.
#[test]
fn argmax_breaks_ties_towards_the_first_class() {
    use perceptron::engine::reference::argmax;
    assert_eq!(argmax(&[1.0f32, 3.0, 3.0, 2.0]), 1);
    assert_eq!(argmax(&[0.0f64, 0.0]), 0);
    assert_eq!(argmax(&[f32::NAN, -1.0]), 1);
    assert_eq!(argmax(&[-0.0f32, 0.0]), 0);
}

#[test]
fn one_vs_rest_models_round_trip() {
    let mut rng = Rng(42);
    let d = random_multiclass::<f32>(&mut rng, 300, 6, 4, 0.0);
    let params = TrainParams {
        max_epochs: 20,
        multiclass: true,
        ..Default::default()
    };
    let fit = train::fit_reference(&d, &params.check_ref().unwrap()).unwrap();
    let model = perceptron::model::Model::new(
        fit.weights.clone(),
        6,
        true,
        perceptron::model::Classes::OneVsRest(d.classes.iter().map(|c| c.text.clone()).collect()),
        serde_json::from_value(serde_json::json!({
            "epochs": 1, "max_epochs": 1, "mistakes_per_epoch": [], "total_mistakes": 0, "converged": true,
            "radius": 1.0, "margin": null, "mistake_bound": null, "backend": "x", "seed": null, "data": "d",
            "rows": 1, "training_accuracy": 1.0, "seconds": 0.0
        }))
        .unwrap(),
        vec![
            perceptron::model::ClassTraining { mistakes_per_epoch: vec![], total_mistakes: 0, converged_epoch: None, margin: None, mistake_bound: None };
            4
        ],
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.json");
    model.save(&path).unwrap();
    match perceptron::model::load(&path).unwrap() {
        perceptron::model::AnyModel::F32(back) => assert_eq!(back, model),
        other => panic!("loaded {other:?}"),
    }
}
