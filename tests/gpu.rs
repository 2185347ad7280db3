//! GPU results are bit-identical to the reference on every adapter.
//!
//! These tests need a GPU adapter (lavapipe is enough). With `CI=true` a
//! missing adapter fails them; elsewhere they skip and say why.

use crate::common::{self, Rng, random_dense, random_sparse, textbook};
use perceptron::Real;
use perceptron::data::{self, Dataset, Features, LoadOptions};
use perceptron::engine::gpu::twin::TwinEngine;
use perceptron::engine::gpu::{AdapterRequest, GpuEngine, GpuOptions};
use perceptron::engine::{MarginEngine, Pass};
use perceptron::train::{self, Fit, PassPolicy, ReferenceEngine, Silent, State, TrainParams};

fn options() -> GpuOptions {
    GpuOptions {
        adapter: AdapterRequest {
            name: std::env::var("PERCEPTRON_TEST_ADAPTER").ok(),
            allow_software: true,
        },
        ..Default::default()
    }
}

/// Opens the GPU engine, or explains why the test cannot run.
fn engine<'d, F: Real>(
    data: &'d Dataset<F>,
    bias: bool,
    opts: &GpuOptions,
) -> Option<GpuEngine<'d, F>> {
    match GpuEngine::new(data, bias, opts) {
        Ok(e) => Some(e),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true requires a GPU adapter (install mesa-vulkan-drivers): {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: no usable GPU adapter: {e}");
            None
        }
    }
}

fn fit_with<'a, F: Real>(
    data: &Dataset<F>,
    bias: bool,
    epochs: usize,
    engine: Box<dyn MarginEngine<F> + 'a>,
) -> Fit<F> {
    // Always use the device: these tests are about its results.
    let params = TrainParams {
        max_epochs: epochs,
        bias,
        shuffle_seed: None,
        passes: PassPolicy::Always,
        ..Default::default()
    };
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let dim = data.cols() + bias as usize;
    train::fit(
        data,
        &params.check_ref().unwrap(),
        State::initial(dim),
        engine,
        &mut fb,
        &mut Silent,
    )
    .expect("training failed")
}

fn bits<F: Real>(v: &[F]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

/// Trains on the GPU and checks the result equals the textbook loop's.
/// Returns the fit, or None when skipped.
fn check_gpu<F: Real>(
    data: &Dataset<F>,
    bias: bool,
    epochs: usize,
    opts: &GpuOptions,
) -> Option<Fit<F>> {
    let gpu = engine(data, bias, opts)?;
    let fit = fit_with(data, bias, epochs, Box::new(gpu));
    let (w, mistakes) = textbook(data, bias, epochs);
    assert_eq!(fit.mistakes_per_epoch, mistakes, "mistakes per epoch");
    assert_eq!(bits(&fit.weights), bits(&w), "weights");
    assert_eq!(fit.loop_stats.fallbacks, 0, "no fallback expected");
    Some(fit)
}

const REAL: &[(&str, usize)] = &[
    ("iris_setosa.csv", 100),
    ("iris_setosa.svm", 100),
    ("digits_0v1.csv", 100),
    ("digits_0v1.svm", 100),
    ("digits_3v5.csv", 100),
    ("digits_3v5.svm", 100),
    ("breast_cancer.csv", 20),
    ("breast_cancer.svm", 20),
    ("heart_scale.svm", 30),
];

fn real<F: Real>(name: &str) -> Dataset<F> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name);
    data::load(&path, &LoadOptions::default()).unwrap()
}

#[test]
fn real_datasets_f32_match_reference() {
    for &(name, epochs) in REAL {
        let d = real::<f32>(name);
        if check_gpu(&d, true, epochs, &options()).is_none() {
            return;
        }
    }
}

#[test]
fn real_datasets_f64_match_reference() {
    for &(name, epochs) in REAL {
        let d = real::<f64>(name);
        if check_gpu(&d, true, epochs, &options()).is_none() {
            return;
        }
    }
}

#[test]
fn random_dense_shapes_match_reference() {
    let mut rng = Rng(0xfeed);
    let shapes: &[(usize, usize)] = &[
        (1, 5000),
        (2, 3000),
        (3, 20_000),
        (7, 2000),
        (31, 1500),
        (64, 1000),
        (100, 100_000),
        (257, 800),
        (1000, 300),
        (3000, 200),
    ];
    for (case, &(cols, rows)) in shapes.iter().enumerate() {
        let noise = [0.0, 0.01, 0.1][case % 3];
        let bias = case % 3 != 2;
        let d = random_dense::<f32>(&mut rng, rows, cols, noise);
        if check_gpu(&d, bias, 6, &options()).is_none() {
            return;
        }
        let d = random_dense::<f64>(&mut rng, rows.min(5000), cols, noise);
        if check_gpu(&d, bias, 4, &options()).is_none() {
            return;
        }
    }
}

#[test]
fn random_sparse_shapes_match_reference() {
    let mut rng = Rng(0xbeef);
    let shapes: &[(usize, usize, usize)] = &[
        (10, 2000, 1),
        (100, 5000, 5),
        (1000, 20_000, 20),
        (50_000, 100_000, 30),
        (5000, 3000, 200),
    ];
    for (case, &(cols, rows, nnz)) in shapes.iter().enumerate() {
        let d = random_sparse::<f32>(&mut rng, rows, cols, nnz, [0.0, 0.05][case % 2]);
        if check_gpu(&d, case % 2 == 0, 5, &options()).is_none() {
            return;
        }
    }
}

#[test]
fn chunked_and_streamed_data_match_reference() {
    let mut rng = Rng(0xc4c4);
    let dense = random_dense::<f32>(&mut rng, 20_000, 24, 0.02);
    let sparse = random_sparse::<f32>(&mut rng, 20_000, 300, 12, 0.02);
    // ~100 KiB chunks; then only the first few resident and the rest streamed.
    for budget in [None, Some(300_000)] {
        let opts = GpuOptions {
            chunk_bytes: Some(100_000),
            memory_budget: budget,
            ..options()
        };
        for d in [&dense, &sparse] {
            let Some(gpu) = engine(d, true, &opts) else {
                return;
            };
            assert!(
                gpu.chunk_count() >= 8,
                "expected many chunks, got {}",
                gpu.chunk_count()
            );
            if budget.is_some() {
                assert!(gpu.streamed_chunks() > 0, "expected streamed chunks");
            }
            let fit = fit_with(d, true, 5, Box::new(gpu));
            let (w, m) = textbook(d, true, 5);
            assert_eq!((bits(&fit.weights), fit.mistakes_per_epoch), (bits(&w), m));
        }
    }
}

/// Rows built so margins fall within a few ulps of zero: cancellation of
/// huge and tiny values, subnormal features, duplicated rows with opposite
/// labels, exact-zero margins. The device must flag them (never settle them
/// wrongly) and the host must resolve them.
fn adversarial<F: Real>() -> Dataset<F> {
    let mut rng = Rng(0xadd);
    let cols = 6;
    let mut values = Vec::new();
    let mut labels = Vec::new();
    let mut push = |row: [f64; 6], y: i8, values: &mut Vec<F>| {
        values.extend(row.iter().map(|&v| F::from_f64(v)));
        labels.push(y);
    };
    for i in 0..3000 {
        // Large enough to cancel catastrophically, small enough that w·x
        // stays finite in f32 (otherwise the reference itself refuses).
        let big = 10f64.powi(rng.below(12) as i32);
        let tiny = rng.unit() * 1e-3;
        let y = if rng.unit() < 0.5 { 1 } else { -1 };
        match i % 6 {
            0 => push([big, -big, tiny, 1.0, -1.0, 0.0], y, &mut values),
            1 => push([1e-40, -1e-42, 3e-39, 0.0, 1e-41, 2.0], y, &mut values),
            2 => {
                push([0.5, 0.25, -0.125, 1.0, 2.0, -4.0], 1, &mut values);
                push([0.5, 0.25, -0.125, 1.0, 2.0, -4.0], -1, &mut values);
            }
            3 => push([0.0; 6], y, &mut values),
            4 => push([big, 1.0, -big, tiny, -tiny, 0.5], y, &mut values),
            _ => push(
                [rng.unit(), -rng.unit(), 1e-30, -1e12, 1e12, rng.unit()],
                y,
                &mut values,
            ),
        }
    }
    common::dense_dataset(cols, values, labels)
}

#[test]
fn adversarial_margins_take_the_uncertain_path_and_still_match() {
    // One lane per row sums in the reference order on a CPU-type adapter
    // (lavapipe), which cannot show a bound that is too small; 32 lanes sum
    // in a tree, as real GPUs do. Both the walk and pass windows.
    for (bias, lanes, no_walk) in [
        (true, None, false),
        (false, None, false),
        (true, Some(32), false),
        (false, Some(32), true),
        (true, None, true),
    ] {
        let opts = GpuOptions {
            lanes,
            no_walk,
            ..options()
        };
        let d32 = adversarial::<f32>();
        let Some(fit) = check_gpu(&d32, bias, 8, &opts) else {
            return;
        };
        if no_walk {
            // Rows the device could not certify, which the host resolved;
            // some needed the reference dot itself.
            let uncertain = fit.engine_stats.rows_uncertain;
            assert!(
                uncertain > 100,
                "uncertain path exercised only {uncertain} times"
            );
            assert!(
                fit.loop_stats.host_dots > 100,
                "reference dots: {}",
                fit.loop_stats.host_dots
            );
        } else {
            // The walk decided rows within rounding of 0 by its own reference
            // dot, and the host re-decided each with its reference dot.
            let ls = &fit.loop_stats;
            assert!(ls.walk_speculative > 20, "speculative: {ls:?}");
            assert!(ls.host_dots > 10, "reference dots: {ls:?}");
            assert_eq!(ls.drift_fallbacks, 0, "the walk has no drift: {ls:?}");
        }

        let d64 = adversarial::<f64>();
        let Some(fit) = check_gpu(&d64, bias, 8, &opts) else {
            return;
        };
        // Fewer rows are uncertain in f64; some still need the host.
        assert!(fit.loop_stats.host_dots > 0, "{:?}", fit.loop_stats);
        // Sparse layout of the same rows.
        let sparse = Dataset {
            features: Features::Sparse(d32.features.to_sparse()),
            ..d32.clone()
        };
        check_gpu(&sparse, bias, 8, &opts);
    }
}

/// The walk decides on the device: far fewer round trips than mistakes,
/// across chunk boundaries and batch boundaries, dense and sparse, with and
/// without the bias, with the result of the textbook loop.
#[test]
fn the_walk_needs_far_fewer_round_trips_than_mistakes() {
    let mut rng = Rng(0x3a1c);
    for (case, (sparse, bias, iterations, chunk)) in [
        (false, true, 128, None),
        (false, false, 3, Some(64 << 10)),
        (true, true, 5, Some(32 << 10)),
        (true, false, 128, None),
    ]
    .into_iter()
    .enumerate()
    {
        let data = if sparse {
            random_sparse::<f32>(&mut rng, 20_000, 400, 12, 0.01)
        } else {
            random_dense::<f32>(&mut rng, 20_000, 24, 0.01)
        };
        let opts = GpuOptions {
            walk_iterations: Some(iterations),
            chunk_bytes: chunk,
            ..options()
        };
        let Some(fit) = check_gpu(&data, bias, 4, &opts) else {
            return;
        };
        let mistakes: u64 = fit.mistakes_per_epoch.iter().sum();
        let trips = fit.engine_stats.passes;
        assert!(
            fit.loop_stats.certified_mistakes > 0,
            "case {case}: {:?}",
            fit.loop_stats
        );
        assert_eq!(
            fit.loop_stats.drift_fallbacks, 0,
            "case {case}: windows were used"
        );
        let per_trip = if iterations >= 100 { 20 } else { 1 };
        assert!(
            trips * per_trip < mistakes,
            "case {case}: {trips} round trips for {mistakes} mistakes"
        );
    }
}

#[test]
fn injected_device_failure_finishes_on_the_cpu_with_the_same_model() {
    let mut rng = Rng(0xfa11);
    let d = random_dense::<f32>(&mut rng, 30_000, 20, 0.05);
    let opts = GpuOptions {
        fail_at_pass: Some(3),
        ..options()
    };
    let Some(gpu) = engine(&d, true, &opts) else {
        return;
    };
    let fit = fit_with(&d, true, 6, Box::new(gpu));
    let (w, m) = textbook(&d, true, 6);
    assert_eq!(
        (bits(&fit.weights), fit.mistakes_per_epoch.clone()),
        (bits(&w), m)
    );
    assert_eq!(fit.loop_stats.fallbacks, 1);
    assert_eq!(fit.engines.len(), 2, "{:?}", fit.engines);
    assert!(fit.engines[0].starts_with("gpu"));
}

/// The device and its CPU twin agree on every row's slack up to the
/// rounding that summation order and fused multiply-add may change: both
/// zero or both with the same sign and within 1e-3 relative (far looser than
/// any real difference, far tighter than any indexing bug).
#[test]
fn device_slacks_agree_with_the_cpu_twin() {
    let mut rng = Rng(0x7777);
    let dense = random_dense::<f32>(&mut rng, 5000, 77, 0.3);
    let sparse = Dataset {
        features: Features::Sparse(dense.features.to_sparse()),
        ..dense.clone()
    };
    // The default lanes, and forced multi-lane reductions (what real GPUs
    // run), whatever the adapter.
    for (d, lanes) in [
        (&dense, None),
        (&sparse, None),
        (&dense, Some(32)),
        (&sparse, Some(8)),
        (&dense, Some(4)),
    ] {
        let dim = d.cols() + 1;
        let weights: Vec<f32> = (0..dim).map(|_| (rng.unit() - 0.5) as f32).collect();
        // A margin threshold, so the kernels' τ path is compared too.
        let pass = Pass {
            start: 100,
            end: 4990,
            weights: &weights,
            tau: 0.25,
            heads: 1,
        };
        let Some(mut gpu) = engine(d, true, &GpuOptions { lanes, ..options() }) else {
            return;
        };
        let mut got = vec![0f32; pass.len()];
        gpu.submit(&pass).unwrap();
        gpu.collect(&mut got).unwrap();
        let twin = TwinEngine::new(d, true, Some(gpu.lanes()));
        let mut want = vec![0f32; pass.len()];
        twin.slacks(&pass, &mut want);
        let nonzero = want.iter().filter(|r| **r != 0.0).count();
        assert!(nonzero > 4000, "most rows should be certain, got {nonzero}");
        let mut differ = 0;
        for (a, b) in got.iter().zip(&want) {
            let close = (a == b) || (a.signum() == b.signum() && (a - b).abs() <= 1e-3 * b.abs());
            if !close {
                differ += 1;
            }
        }
        assert!(differ <= 2, "{differ} rows differ between device and twin");
    }
}

/// Every variant on the GPU equals its textbook definition bit for bit.
#[test]
fn variants_match_their_definitions_on_the_gpu() {
    use perceptron::train::{Margin, Variant};
    let mut rng = Rng(0x7a71);
    let dense = random_dense::<f32>(&mut rng, 3000, 20, 0.1);
    let sparse = random_sparse::<f64>(&mut rng, 3000, 300, 12, 0.1);
    let cases: [(Variant, Option<&str>); 5] = [
        (Variant::Averaged, None),
        (Variant::Pocket, None),
        (Variant::Classic, Some("0.5")),
        (Variant::Averaged, Some("0.25")),
        (Variant::Pocket, Some("1")),
    ];
    for (variant, margin) in cases {
        let tau32: f32 = margin.map_or(0.0, |m| Margin::parse(m).unwrap().value());
        let tau64: f64 = margin.map_or(0.0, |m| Margin::parse(m).unwrap().value());
        let params = TrainParams {
            max_epochs: 5,
            bias: true,
            passes: PassPolicy::Always,
            variant,
            margin: margin.map(|m| Margin::parse(m).unwrap()),
            ..Default::default()
        };
        let mut fb32 = || -> Box<dyn MarginEngine<f32>> { Box::new(ReferenceEngine) };
        let Some(gpu) = engine(&dense, true, &options()) else {
            return;
        };
        let fit = train::fit(
            &dense,
            &params.check_ref().unwrap(),
            State::initial(21),
            Box::new(gpu),
            &mut fb32,
            &mut Silent,
        )
        .unwrap();
        let (w, m, pocket) = common::textbook_variant(&dense, true, 5, variant, tau32);
        assert_eq!(
            (bits(&fit.weights), fit.mistakes_per_epoch.clone()),
            (bits(&w), m),
            "dense {variant:?} {margin:?}"
        );
        assert_eq!(fit.pocket.map(|p| (p.epoch, p.mistakes)), pocket);
        let mut fb64 = || -> Box<dyn MarginEngine<f64>> { Box::new(ReferenceEngine) };
        let Some(gpu) = engine(&sparse, true, &options()) else {
            return;
        };
        let fit = train::fit(
            &sparse,
            &params.check_ref().unwrap(),
            State::initial(301),
            Box::new(gpu),
            &mut fb64,
            &mut Silent,
        )
        .unwrap();
        let (w, m, _) = common::textbook_variant(&sparse, true, 5, variant, tau64);
        assert_eq!(
            (bits(&fit.weights), fit.mistakes_per_epoch),
            (bits(&w), m),
            "sparse {variant:?} {margin:?}"
        );
    }
}

/// One-vs-rest on the GPU (one pass computes every class's slacks) equals
/// each class trained alone with the textbook loop.
#[test]
fn one_vs_rest_on_the_gpu_is_k_independent_perceptrons() {
    let mut rng = Rng(0x0f6);
    for (case, classes) in [3usize, 7, 10].into_iter().enumerate() {
        let d = common::random_multiclass::<f32>(&mut rng, 1000, 9 + 20 * case, classes, 0.05);
        let sparse = Dataset {
            features: Features::Sparse(d.features.to_sparse()),
            ..d.clone()
        };
        for data in [&d, &sparse] {
            let Some(gpu) = engine(data, true, &options()) else {
                return;
            };
            let params = TrainParams {
                max_epochs: 4,
                passes: PassPolicy::Always,
                multiclass: true,
                ..Default::default()
            };
            let dim = (data.cols() + 1) * classes;
            let mut fb = || -> Box<dyn MarginEngine<f32>> { Box::new(ReferenceEngine) };
            let fit = train::fit(
                data,
                &params.check_ref().unwrap(),
                State::initial(dim),
                Box::new(gpu),
                &mut fb,
                &mut Silent,
            )
            .unwrap();
            let reference = train::fit_reference(data, &params.check_ref().unwrap()).unwrap();
            assert_eq!(
                bits(&fit.weights),
                bits(&reference.weights),
                "{classes} classes"
            );
            assert_eq!(
                fit.state.head_mistakes_per_epoch,
                reference.state.head_mistakes_per_epoch
            );
            for h in 0..classes {
                let (w, _, _) = common::textbook_variant(
                    &common::head_dataset(data, h),
                    true,
                    fit.epochs(),
                    perceptron::train::Variant::Classic,
                    0.0,
                );
                let stride = data.cols() + 1;
                assert_eq!(
                    bits(&fit.weights[h * stride..(h + 1) * stride]),
                    bits(&w),
                    "head {h}"
                );
            }
        }
    }
}

/// Training with the multi-lane reduction (what hardware GPUs run) is exact
/// on this adapter too.
#[test]
fn multi_lane_kernels_match_reference() {
    let mut rng = Rng(0x1a4e);
    let dense = random_dense::<f32>(&mut rng, 4000, 70, 0.05);
    let sparse = random_sparse::<f64>(&mut rng, 4000, 500, 40, 0.05);
    for lanes in [2, 16, 32] {
        let opts = GpuOptions {
            lanes: Some(lanes),
            ..options()
        };
        if check_gpu(&dense, true, 4, &opts).is_none() {
            return;
        }
        check_gpu(&sparse, lanes != 16, 4, &opts);
    }
}

/// `predict` and `eval` decide classes through the same certificates: on
/// rows whose scores are within rounding of 0, the GPU's classes are the
/// reference arithmetic's.
#[test]
fn predicted_classes_on_the_gpu_are_the_reference_classes() {
    let d32 = adversarial::<f32>();
    let (w, _) = textbook(&d32, true, 3);
    let data = perceptron::engine::decide::as_positive(d32.features.clone());
    let Some(mut gpu) = engine(&data, true, &options()) else {
        return;
    };
    let (positive, stats) =
        perceptron::engine::decide::positive_rows(&data, &w, true, &mut gpu).unwrap();
    for (i, &p) in positive.iter().enumerate() {
        let s = perceptron::engine::reference::dot(&w, data.features.row(i), true);
        assert_eq!(p, s > 0.0, "row {i}: s = {s}");
    }
    assert!(stats.certified > 1000 && stats.host_dots > 10, "{stats:?}");
}

fn layout<F: Real>(data: &Dataset<F>) -> &'static str {
    match data.features {
        Features::Dense(_) => "dense",
        Features::Sparse(_) => "sparse",
    }
}

/// Like [`engine`] for f32. For f64 an adapter without `SHADER_F64` skips
/// the case with the reason printed (also under CI: the adapter is there,
/// it just cannot run f64 kernels); any other failure is [`engine`]'s.
fn engine_or_skip_f64<'d, F: Real>(
    data: &'d Dataset<F>,
    bias: bool,
    opts: &GpuOptions,
) -> Option<GpuEngine<'d, F>> {
    if F::PRECISION == perceptron::Precision::F64 {
        match GpuEngine::new(data, bias, opts) {
            Ok(e) => return Some(e),
            Err(e) if e.to_string().contains("SHADER_F64") => {
                eprintln!("SKIPPED f64 case: {e}");
                return None;
            }
            Err(_) => {}
        }
    }
    engine(data, bias, opts)
}

/// Saves `weights` (w~, bias last when `bias`) as a binary model file and
/// reads them back, as `train --init MODEL` does.
fn saved_and_loaded<F: Real>(
    dir: &std::path::Path,
    data: &Dataset<F>,
    weights: &[F],
    bias: bool,
) -> Vec<F> {
    use perceptron::model::{self, AnyModel, Model};
    let m = Model::binary(
        weights.to_vec(),
        bias,
        data.label_map.clone(),
        serde_json::from_value(serde_json::json!({
            "epochs": 2, "max_epochs": 2, "mistakes_per_epoch": [], "total_mistakes": 0,
            "converged": false, "radius": 1.0, "margin": null, "mistake_bound": null,
            "backend": "reference", "seed": null, "data": "generated", "rows": data.rows(),
            "training_accuracy": 0.5, "seconds": 0.0
        }))
        .unwrap(),
    );
    let path = dir.join(format!("init-{}.json", F::PRECISION));
    m.save(&path).unwrap();
    let back = match model::load(&path).unwrap() {
        AnyModel::F32(m) => m
            .all_weights()
            .iter()
            .map(|&v| F::from_f64(v as f64))
            .collect::<Vec<F>>(),
        AnyModel::F64(m) => m.all_weights().iter().map(|&v| F::from_f64(v)).collect(),
    };
    assert_eq!(bits(&back), bits(weights), "the model file round trip");
    back
}

/// `--init`: training continued on the GPU from a saved model's weights
/// (State::starting_from) equals the textbook loop run for all the epochs
/// at once, and the reference engine continued from the same weights. One
/// head without pocket: the device walks the rows (no margin pass at all).
fn check_warm_start<F: Real>(data: &Dataset<F>, bias: bool, dir: &std::path::Path) -> bool {
    let (before, after) = (2, 3);
    let dim = data.cols() + bias as usize;
    let params = |epochs| TrainParams {
        max_epochs: epochs,
        bias,
        passes: PassPolicy::Always,
        ..Default::default()
    };
    let first = train::fit_reference(data, &(params(before)).check_ref().unwrap()).unwrap();
    assert_eq!(first.epochs(), before, "the first run must not converge");
    let w0 = saved_and_loaded(dir, data, &first.weights, bias);
    assert!(w0.iter().any(|v| *v != F::ZERO), "a warm start from zero");

    let Some(gpu) = engine_or_skip_f64(data, bias, &options()) else {
        return F::PRECISION == perceptron::Precision::F64;
    };
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let fit = train::fit(
        data,
        &(params(after)).check_ref().unwrap(),
        State::starting_from(w0.clone()),
        Box::new(gpu),
        &mut fb,
        &mut Silent,
    )
    .expect("training failed");
    let what = format!("{} {} bias {bias}", F::PRECISION, layout(data));

    // All the epochs at once, from w = 0, with the independent textbook loop.
    let (w, mistakes) = textbook(data, bias, before + after);
    assert_eq!(
        [
            first.mistakes_per_epoch.clone(),
            fit.mistakes_per_epoch.clone()
        ]
        .concat(),
        mistakes,
        "{what}: mistakes per epoch"
    );
    assert_eq!(bits(&fit.weights), bits(&w), "{what}: weights");
    // The library's reference continued from the same weights.
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let reference = train::fit(
        data,
        &(params(after)).check_ref().unwrap(),
        State::starting_from(w0),
        Box::new(ReferenceEngine),
        &mut fb,
        &mut Silent,
    )
    .unwrap();
    assert_eq!(bits(&fit.weights), bits(&reference.weights), "{what}");
    assert_eq!(fit.weights.len(), dim);

    // The walk decided the rows: no margin pass, no window, no fallback,
    // and far fewer round trips than mistakes.
    let ls = &fit.loop_stats;
    assert_eq!(ls.fallbacks, 0, "{what}: {ls:?}");
    assert_eq!(ls.passes, 0, "{what}: margin passes were used: {ls:?}");
    assert_eq!(ls.drift_fallbacks, 0, "{what}: windows were used: {ls:?}");
    assert!(ls.certified_mistakes > 0, "{what}: {ls:?}");
    let total: u64 = fit.mistakes_per_epoch.iter().sum();
    assert!(
        fit.engine_stats.passes * 10 < total,
        "{what}: {} round trips for {total} mistakes",
        fit.engine_stats.passes
    );
    true
}

#[test]
fn warm_start_from_a_saved_model_walks_on_the_gpu_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x1417);
    for (case, (sparse, bias)) in [(false, true), (true, true), (false, false), (true, false)]
        .into_iter()
        .enumerate()
    {
        let noise = [0.01, 0.02][case % 2];
        let (d32, d64) = if sparse {
            (
                random_sparse::<f32>(&mut rng, 8000, 300, 12, noise),
                random_sparse::<f64>(&mut rng, 4000, 300, 12, noise),
            )
        } else {
            (
                random_dense::<f32>(&mut rng, 8000, 24, noise),
                random_dense::<f64>(&mut rng, 4000, 24, noise),
            )
        };
        if !check_warm_start(&d32, bias, dir.path()) {
            return;
        }
        check_warm_start(&d64, bias, dir.path());
    }
}

/// One-vs-rest with the averaged variant on the GPU: several heads go
/// through margin passes over windows (never the walk), and the result is
/// the reference loop's bit for bit (the returned averages, the last
/// iterates, each head's mistakes per epoch), and each head's average is
/// that head trained alone for the joint run's epochs.
fn check_ovr_averaged<F: Real>(data: &Dataset<F>, bias: bool, margin: Option<&str>) -> bool {
    use perceptron::train::{Margin, Variant};
    let classes = data.classes.len();
    let dim = data.cols() + bias as usize;
    let params = TrainParams {
        max_epochs: 5,
        bias,
        passes: PassPolicy::Always,
        variant: Variant::Averaged,
        margin: margin.map(|m| Margin::parse(m).unwrap()),
        multiclass: true,
        ..Default::default()
    };
    let Some(gpu) = engine_or_skip_f64(data, bias, &options()) else {
        return F::PRECISION == perceptron::Precision::F64;
    };
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let fit = train::fit(
        data,
        &params.check_ref().unwrap(),
        State::initial(dim * classes),
        Box::new(gpu),
        &mut fb,
        &mut Silent,
    )
    .expect("training failed");
    let what = format!(
        "{} {} {classes} classes bias {bias} margin {margin:?}",
        F::PRECISION,
        layout(data)
    );
    let reference = train::fit_reference(data, &params.check_ref().unwrap()).unwrap();
    assert_eq!(
        bits(&fit.weights),
        bits(&reference.weights),
        "{what}: averages"
    );
    assert_eq!(
        bits(&fit.last_weights),
        bits(&reference.last_weights),
        "{what}: last iterates"
    );
    assert_ne!(
        bits(&fit.weights),
        bits(&fit.last_weights),
        "{what}: the average must differ from the last iterate"
    );
    assert_eq!(
        fit.state.head_mistakes_per_epoch, reference.state.head_mistakes_per_epoch,
        "{what}: mistakes per head and epoch"
    );
    let tau: F = margin.map_or(F::ZERO, |m| Margin::parse(m).unwrap().value());
    let mut compared = 0;
    for h in 0..classes {
        let (w, m, _) = common::textbook_variant(
            &common::head_dataset(data, h),
            bias,
            fit.epochs(),
            Variant::Averaged,
            tau,
        );
        // A head that converged alone would stop early; the joint run keeps
        // visiting (and averaging), so only heads that ran every epoch
        // compare with their lone run.
        if m.len() == fit.epochs() {
            assert_eq!(
                bits(&fit.weights[h * dim..(h + 1) * dim]),
                bits(&w),
                "{what}: head {h}"
            );
            compared += 1;
        }
    }
    assert!(compared > 0, "{what}: no head ran every epoch");
    // Every head in one pass over each window; the walk (one head only)
    // was not used.
    let ls = &fit.loop_stats;
    assert_eq!(ls.fallbacks, 0, "{what}: {ls:?}");
    assert!(ls.passes > 0, "{what}: no margin pass: {ls:?}");
    assert_eq!(ls.walk_speculative, 0, "{what}: the walk was used: {ls:?}");
    assert!(
        ls.certified_correct + ls.certified_mistakes > 0,
        "{what}: {ls:?}"
    );
    true
}

#[test]
fn averaged_one_vs_rest_on_the_gpu_matches_the_reference() {
    let mut rng = Rng(0xa0f6);
    for (case, (classes, bias, margin)) in [
        (3usize, true, None),
        (7, false, None),
        (10, true, Some("0.25")),
    ]
    .into_iter()
    .enumerate()
    {
        let cols = 9 + 10 * case;
        let d32 = common::random_multiclass::<f32>(&mut rng, 1500, cols, classes, 0.05);
        let d64 = common::random_multiclass::<f64>(&mut rng, 1000, cols, classes, 0.05);
        for dense in [true, false] {
            let (d32, d64) = if dense {
                (d32.clone(), d64.clone())
            } else {
                (
                    Dataset {
                        features: Features::Sparse(d32.features.to_sparse()),
                        ..d32.clone()
                    },
                    Dataset {
                        features: Features::Sparse(d64.features.to_sparse()),
                        ..d64.clone()
                    },
                )
            };
            if !check_ovr_averaged(&d32, bias, margin) {
                return;
            }
            check_ovr_averaged(&d64, bias, margin);
        }
    }
}

/// Waits a while at the end of the first epoch: a device starting beside
/// the cores has then arrived when the second begins.
struct PauseAfterFirstEpoch(std::time::Duration);

impl<F: Real> perceptron::train::Observer<F> for PauseAfterFirstEpoch {
    fn on_epoch_end(&mut self, state: &State<F>) -> perceptron::Result<()> {
        if state.epoch == 1 {
            std::thread::sleep(self.0);
        }
        Ok(())
    }
}

/// `auto` with an adapter named trains dense rows on the pair of that GPU
/// and the CPU engine ([`perceptron::engine::pair`]), whose chooser walks
/// with either side: the model is the textbook loop's, bit for bit, and
/// the report names both engines. The device starts on a thread of its
/// own while the cores train: in the first case the run waits for it
/// after the first epoch, and it then walks rows of the later ones.
#[test]
fn auto_trains_dense_rows_on_the_gpu_and_the_cores_beside_it_exactly() {
    use perceptron::engine::backend::Backend;
    use perceptron::train::Trainer;
    // The adapter `engine` opens, named, as `auto` needs it to look past
    // software adapters.
    let probe = random_dense::<f32>(&mut Rng(1), 10, 3, 0.0);
    let Some(gpu) = engine(&probe, true, &options()) else {
        return;
    };
    let name = MarginEngine::<f32>::name(&gpu);
    // `gpu: NAME (API)`: the adapter's own name is NAME.
    let named = name.trim_start_matches("gpu: ");
    let adapter = named.rsplit_once(" (").map_or(named, |(n, _)| n).to_owned();
    let mut rng = Rng(0x9a17);
    for (rows, cols, noise, pause) in [(20_000, 64, 0.05, 3.0), (3000, 300, 0.0, 0.0)] {
        let d = random_dense::<f32>(&mut rng, rows, cols, noise);
        let trainer = Trainer::new(
            TrainParams {
                max_epochs: 8,
                ..TrainParams::default()
            }
            .check()
            .unwrap(),
        )
        .with_backend(Backend::Auto)
        .with_gpu(GpuOptions {
            adapter: AdapterRequest {
                name: Some(adapter.clone()),
                allow_software: false,
            },
            ..Default::default()
        });
        let mut observer = PauseAfterFirstEpoch(std::time::Duration::from_secs_f64(pause));
        let fit = trainer
            .fit(&d, trainer.start(&d, None), &mut observer)
            .unwrap();
        let (want, per_epoch) = textbook(&d, true, 8);
        assert_eq!(bits(&fit.weights), bits(&want), "{rows} x {cols}");
        assert_eq!(fit.mistakes_per_epoch, per_epoch);
        assert_eq!(fit.engines.len(), 1, "{:?}", fit.engines);
        assert!(
            fit.engines[0].starts_with(&name) && fit.engines[0].contains(" + cpu ("),
            "{:?}",
            fit.engines
        );
        if pause > 0.0 {
            assert!(
                fit.engine_stats.start_beside_seconds > 0.0,
                "the device arrived"
            );
            let device: u64 = fit.epoch_modes[1..].iter().map(|m| m.engine.rows).sum();
            assert!(device > 0, "the device walked: {:?}", fit.epoch_modes);
        }
    }
    // Reshuffled before every epoch (scikit-learn's schedule), the rows
    // would reach a device as a new copy each epoch: `auto` trains them on
    // the CPU engine, and says so.
    let d = random_dense::<f32>(&mut rng, 5000, 64, 0.05);
    let params = TrainParams {
        max_epochs: 5,
        shuffle_every_epoch: Some(perceptron::train::scikit::EveryEpoch::RandomState(3)),
        ..TrainParams::default()
    };
    let fit_on = |backend| {
        let trainer = Trainer::new(params.clone().check().unwrap())
            .with_backend(backend)
            .with_gpu(GpuOptions {
                adapter: AdapterRequest {
                    name: Some(adapter.clone()),
                    allow_software: false,
                },
                ..Default::default()
            });
        trainer
            .fit(&d, trainer.start(&d, None), &mut Silent)
            .unwrap()
    };
    let (auto, reference) = (fit_on(Backend::Auto), fit_on(Backend::Reference));
    assert_eq!(bits(&auto.weights), bits(&reference.weights));
    assert!(auto.engines[0].starts_with("cpu ("), "{:?}", auto.engines);
    let note = auto.backend_note.unwrap_or_default();
    assert!(note.starts_with("auto: the rows are reshuffled"), "{note}");
}

/// A walk's batch under a trial's deadline that has passed scans one
/// narrowest window (so it ends within its rows), where the same walk's
/// batch without a deadline goes far past them: on the device, and in its
/// CPU twin, which sizes batches with the same plan.
#[test]
fn a_walk_batch_under_a_past_deadline_scans_one_narrow_window() {
    use perceptron::engine::gpu::twin::TwinWalkEngine;
    use perceptron::engine::{BatchLimits, WalkStart, Walker};
    const MIN_WINDOW: usize = 256;
    let mut rng = Rng(0x7e11);
    let data = random_dense::<f32>(&mut rng, 30_000, 16, 0.0);
    // Weights that make a mistake every hundred rows or so: a batch of up
    // to 64 decisions walks thousands of rows.
    let (weights, per_epoch) = textbook(&data, true, 10);
    assert!(per_epoch.last().is_some_and(|&m| m < 400), "{per_epoch:?}");
    let check = |walker: &mut dyn Walker<f32>, who: &str| {
        let start = |position| WalkStart {
            position,
            end: data.rows(),
            weights: &weights,
            resync: true,
            tau: 0.0,
            max_updates: 1 << 20,
        };
        walker.begin(&start(0)).unwrap();
        // Batches without a deadline, which the plan times.
        let mut free = 0;
        for _ in 0..3 {
            let b = walker.next(BatchLimits::NONE).unwrap();
            free = free.max(b.end - b.start);
        }
        assert!(free > 4 * MIN_WINDOW, "{who}: free batches of {free} rows");
        walker.cancel().unwrap();
        walker.begin(&start(1000)).unwrap();
        let past = BatchLimits {
            horizon: usize::MAX,
            deadline: Some(std::time::Instant::now()),
        };
        let cut = walker.next(past).unwrap();
        assert_eq!(cut.start, 1000, "{who}");
        assert!(
            cut.end - cut.start <= MIN_WINDOW,
            "{who}: a batch past its deadline walked {} rows",
            cut.end - cut.start
        );
        walker.cancel().unwrap();
    };
    let mut twin = TwinWalkEngine::new(&data, true, 4, 64);
    check(&mut twin, "twin");
    if let Some(mut gpu) = engine(&data, true, &options()) {
        let walker = gpu.walker().expect("the device walks");
        check(walker, "device");
    }
}
