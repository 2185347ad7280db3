//! Every variant (averaged, pocket, margin threshold, warm start) gives the
//! bit-identical result of its textbook definition on every CPU engine;
//! tests/gpu.rs checks the GPU the same way.

use crate::common::{Rng, random_dense, random_sparse, textbook_variant};
use perceptron::Real;
use perceptron::data::Dataset;
use perceptron::engine::cpu::CpuEngine;
use perceptron::engine::gpu::twin::TwinEngine;
use perceptron::train::{
    self, Margin, MarginEngine, PassPolicy, ReferenceEngine, Silent, State, TrainParams, Variant,
};

fn params(
    epochs: usize,
    bias: bool,
    variant: Variant,
    margin: Option<&str>,
    passes: PassPolicy,
) -> TrainParams {
    TrainParams {
        max_epochs: epochs,
        bias,
        shuffle_seed: None,
        passes,
        variant,
        margin: margin.map(|m| Margin::parse(m).unwrap()),
        multiclass: false,
        ..Default::default()
    }
}

fn bits<F: Real>(v: &[F]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

fn check<F: Real>(
    data: &Dataset<F>,
    bias: bool,
    epochs: usize,
    variant: Variant,
    margin: Option<&str>,
) -> u64 {
    let tau: F = margin.map_or(F::ZERO, |m| Margin::parse(m).unwrap().value());
    let (want, mistakes, pocket) = textbook_variant(data, bias, epochs, variant, tau);
    let dim = data.cols() + bias as usize;
    let engines: Vec<(PassPolicy, Box<dyn MarginEngine<F>>)> = vec![
        (PassPolicy::Always, Box::new(ReferenceEngine)),
        (PassPolicy::Always, Box::new(CpuEngine::new(data, bias))),
        (PassPolicy::Adaptive, Box::new(CpuEngine::new(data, bias))),
        (
            PassPolicy::Always,
            Box::new(TwinEngine::new(data, bias, None)),
        ),
    ];
    let mut evaluations = 0;
    for (policy, engine) in engines {
        let name = format!("{} {policy:?} {variant:?} margin {margin:?}", engine.name());
        let p = params(epochs, bias, variant, margin, policy);
        let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
        let fit = train::fit(
            data,
            &p.check_ref().unwrap(),
            State::initial(dim),
            engine,
            &mut fb,
            &mut Silent,
        )
        .unwrap();
        assert_eq!(
            fit.mistakes_per_epoch, mistakes,
            "{name}: mistakes per epoch"
        );
        assert_eq!(bits(&fit.weights), bits(&want), "{name}: weights");
        if let Some((epoch, m)) = pocket {
            let r = fit.pocket.clone().expect("pocket report");
            assert_eq!((r.epoch, r.mistakes), (epoch, m), "{name}: pocket");
            evaluations += r.evaluations;
        }
    }
    evaluations
}

#[test]
fn averaged_matches_its_definition() {
    let mut rng = Rng(0xa11);
    for case in 0..12 {
        let noise = [0.0, 0.05, 0.2][case % 3];
        let d32_a0 = 1 + rng.below(2000);
        let d32_a1 = 1 + rng.below(30);
        let d32 = random_dense::<f32>(&mut rng, d32_a0, d32_a1, noise);
        check(
            &d32,
            case % 4 != 0,
            1 + rng.below(8),
            Variant::Averaged,
            None,
        );
        let d64_a0 = 1 + rng.below(2000);
        let d64_a1 = 1 + rng.below(30);
        let d64 = random_dense::<f64>(&mut rng, d64_a0, d64_a1, noise);
        check(&d64, true, 1 + rng.below(8), Variant::Averaged, None);
        let s_a0 = 1 + rng.below(2000);
        let s_a1 = 1 + rng.below(300);
        let s_a2 = 1 + rng.below(20);
        let s = random_sparse::<f32>(&mut rng, s_a0, s_a1, s_a2, noise);
        check(&s, true, 1 + rng.below(8), Variant::Averaged, None);
    }
}

#[test]
fn pocket_matches_its_definition() {
    let mut rng = Rng(0xb0c);
    let mut evaluations = 0;
    for case in 0..12 {
        let noise = [0.05, 0.2, 0.4][case % 3];
        let d32_a0 = 1 + rng.below(800);
        let d32_a1 = 1 + rng.below(20);
        let d32 = random_dense::<f32>(&mut rng, d32_a0, d32_a1, noise);
        evaluations += check(&d32, case % 4 != 0, 1 + rng.below(8), Variant::Pocket, None);
        let s_a0 = 1 + rng.below(800);
        let s_a1 = 1 + rng.below(200);
        let s_a2 = 1 + rng.below(20);
        let s = random_sparse::<f64>(&mut rng, s_a0, s_a1, s_a2, noise);
        evaluations += check(&s, true, 1 + rng.below(8), Variant::Pocket, None);
    }
    assert!(
        evaluations > 100,
        "pocket candidates evaluated: {evaluations}"
    );
}

#[test]
fn margin_threshold_matches_its_definition() {
    let mut rng = Rng(0x7a0);
    for (case, margin) in ["0.5", "0.1", "2", "0.25", "0.3"]
        .iter()
        .cycle()
        .take(15)
        .enumerate()
    {
        let noise = [0.0, 0.05][case % 2];
        let d32_a0 = 1 + rng.below(2000);
        let d32_a1 = 1 + rng.below(30);
        let d32 = random_dense::<f32>(&mut rng, d32_a0, d32_a1, noise);
        check(&d32, true, 1 + rng.below(8), Variant::Classic, Some(margin));
        let s_a0 = 1 + rng.below(2000);
        let s_a1 = 1 + rng.below(200);
        let s_a2 = 1 + rng.below(15);
        let s = random_sparse::<f64>(&mut rng, s_a0, s_a1, s_a2, noise);
        check(
            &s,
            case % 3 != 0,
            1 + rng.below(8),
            Variant::Classic,
            Some(margin),
        );
        // Combined with the other variants.
        check(
            &d32,
            true,
            1 + rng.below(6),
            Variant::Averaged,
            Some(margin),
        );
        check(&d32, true, 1 + rng.below(6), Variant::Pocket, Some(margin));
    }
}

/// A margin threshold changes the model (the tests above are not vacuous).
#[test]
fn margin_threshold_changes_the_result() {
    let mut rng = Rng(5);
    let d = random_dense::<f32>(&mut rng, 500, 5, 0.0);
    let (a, ma, _) = textbook_variant(&d, true, 20, Variant::Classic, 0.0);
    let (b, mb, _) = textbook_variant(&d, true, 20, Variant::Classic, 1.0);
    assert!(a != b && ma != mb);
}

/// Starting from a model's weights continues exactly where training would.
#[test]
fn warm_start_continues_exactly() {
    let mut rng = Rng(0x3a);
    let d = random_dense::<f64>(&mut rng, 1500, 12, 0.05);
    let p = params(3, true, Variant::Classic, None, PassPolicy::Adaptive);
    let first = train::fit_reference(&d, &p.check_ref().unwrap()).unwrap();
    let mut fb = || -> Box<dyn MarginEngine<f64>> { Box::new(ReferenceEngine) };
    let cont = train::fit(
        &d,
        &p.check_ref().unwrap(),
        State::starting_from(first.weights.clone()),
        Box::new(CpuEngine::new(&d, true)),
        &mut fb,
        &mut Silent,
    )
    .unwrap();
    let (want, mistakes, _) = textbook_variant(&d, true, 6, Variant::Classic, 0.0);
    assert_eq!(bits(&cont.weights), bits(&want));
    assert_eq!(
        [first.mistakes_per_epoch, cont.mistakes_per_epoch].concat(),
        mistakes
    );
}

/// scikit-learn's averaged SGD perceptron (an independent implementation of
/// the same algorithm, with a different rounding of the mean) agrees with
/// `--average` in f64 to within rounding on every real dataset.
#[test]
fn averaged_agrees_with_scikit_learn_to_rounding() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("golden_averaged_sgd.json")).unwrap(),
    )
    .unwrap();
    let mut checked = 0;
    for (name, case) in golden.as_object().unwrap() {
        if name.starts_with('_') {
            continue;
        }
        let data: Dataset<f64> = perceptron::data::load(
            &root.join(case["file"].as_str().unwrap()),
            &Default::default(),
        )
        .unwrap();
        let epochs = case["max_epochs"].as_u64().unwrap() as usize;
        let fit = train::fit_reference(
            &data,
            &(params(epochs, true, Variant::Averaged, None, PassPolicy::Always))
                .check_ref()
                .unwrap(),
        )
        .unwrap();
        let want: Vec<f64> = case["weights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (got, w) in fit.feature_weights().iter().zip(&want) {
            approx::assert_abs_diff_eq!(*got, *w, epsilon = 1e-12 * scale.max(1.0));
        }
        approx::assert_abs_diff_eq!(
            fit.intercept(),
            case["bias"].as_f64().unwrap(),
            epsilon = 1e-12 * scale.max(1.0)
        );
        checked += 1;
    }
    assert_eq!(checked, 5);
}
