//! The classic perceptron on the bundled real datasets equals scikit-learn's
//! float64 results (`data/golden_classic_perceptron.json`) bit for bit, with
//! the reference loop and with the certified CPU engine, from both the CSV
//! and the LIBSVM copy of each dataset. In float32 it matches bit for bit
//! where every sum is exact (integer-valued features) and mistake for mistake
//! elsewhere (see data/README.md for how the golden file may be used).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use perceptron::Real;
use perceptron::data::{self, Dataset, LoadOptions};
use perceptron::engine::cpu::CpuEngine;
use perceptron::train::{self, Fit, MarginEngine, ReferenceEngine, Silent, State, TrainParams};
use serde::Deserialize;

#[derive(Deserialize, Debug)]
struct Golden {
    file: String,
    rows: usize,
    features: usize,
    max_epochs: usize,
    epochs_run: usize,
    converged: bool,
    mistakes_per_epoch: Vec<u64>,
    bias: f64,
    weights: Vec<f64>,
    integer_valued_features: bool,
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// Every dataset of the golden file, by name.
fn golden() -> BTreeMap<String, Golden> {
    let text = std::fs::read_to_string(data_dir().join("golden_classic_perceptron.json")).unwrap();
    let all: BTreeMap<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
    let out: BTreeMap<String, Golden> = all
        .into_iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .map(|(k, v)| (k, serde_json::from_value(v).unwrap()))
        .collect();
    assert_eq!(
        out.keys().collect::<Vec<_>>(),
        [
            "breast_cancer",
            "digits_0v1",
            "digits_3v5",
            "heart_scale",
            "iris_setosa"
        ],
        "the golden file's datasets"
    );
    out
}

/// The files holding dataset `name`: its CSV and LIBSVM copies, whichever exist.
fn files_of(name: &str, g: &Golden) -> Vec<PathBuf> {
    let files: Vec<PathBuf> = ["csv", "svm"]
        .iter()
        .map(|ext| data_dir().join(format!("{name}.{ext}")))
        .filter(|p| p.exists())
        .collect();
    assert!(
        files.iter().any(|p| p.ends_with(&g.file)),
        "{name}: golden file {} not found",
        g.file
    );
    files
}

fn params(g: &Golden) -> TrainParams {
    TrainParams {
        max_epochs: g.max_epochs,
        bias: true,
        shuffle_seed: None,
        ..Default::default()
    }
}

fn fit_cpu<F: Real>(data: &Dataset<F>, params: &TrainParams) -> Fit<F> {
    let dim = data.cols() + params.bias as usize;
    let mut fallback = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let fit = train::fit(
        data,
        &params.check_ref().unwrap(),
        State::initial(dim),
        Box::new(CpuEngine::new(data, params.bias)),
        &mut fallback,
        &mut Silent,
    )
    .unwrap();
    assert!(
        fit.engines.iter().all(|e| e.starts_with("cpu")),
        "{:?}",
        fit.engines
    );
    fit
}

/// Both fits of `data`: (engine name, fit).
fn fits<F: Real>(data: &Dataset<F>, g: &Golden) -> Vec<(&'static str, Fit<F>)> {
    let p = params(g);
    vec![
        (
            "reference",
            train::fit_reference(data, &p.check_ref().unwrap()).unwrap(),
        ),
        ("cpu", fit_cpu(data, &p)),
    ]
}

/// The fitted feature weights padded to the golden length: a LIBSVM file's
/// width is its largest index, so trailing all-zero features may be absent
/// (their weights are exactly zero, which the comparison checks too).
fn weights_bits<F: Real>(fit: &Fit<F>, g: &Golden, what: &str) -> Vec<u64> {
    let w = fit.feature_weights();
    assert!(w.len() <= g.features, "{what}: {} weights", w.len());
    let mut bits: Vec<u64> = w.iter().map(|v| v.to_f64().to_bits()).collect();
    bits.resize(g.features, 0.0f64.to_bits());
    bits
}

fn golden_bits(g: &Golden) -> Vec<u64> {
    g.weights.iter().map(|v| v.to_bits()).collect()
}

fn load<F: Real>(path: &Path, g: &Golden) -> Dataset<F> {
    let data = data::load::<F>(path, &LoadOptions::default()).unwrap();
    assert_eq!(data.rows(), g.rows, "{}", path.display());
    assert!(data.cols() <= g.features, "{}", path.display());
    data
}

#[test]
fn float64_equals_scikit_learn_bit_for_bit() {
    let mut checked = 0;
    for (name, g) in golden() {
        assert_eq!(g.weights.len(), g.features, "{name}");
        assert_eq!(g.mistakes_per_epoch.len(), g.epochs_run, "{name}");
        for path in files_of(&name, &g) {
            let data = load::<f64>(&path, &g);
            for (engine, fit) in fits(&data, &g) {
                let what = format!("{} ({engine}, f64)", path.display());
                assert_eq!(fit.mistakes_per_epoch, g.mistakes_per_epoch, "{what}");
                assert_eq!(fit.epochs(), g.epochs_run, "{what}: epochs");
                assert_eq!(fit.converged(), g.converged, "{what}: converged");
                let stop = if g.converged {
                    train::Stop::Converged
                } else {
                    train::Stop::MaxEpochs
                };
                assert_eq!(fit.stop, stop, "{what}");
                assert_eq!(
                    fit.intercept().to_bits(),
                    g.bias.to_bits(),
                    "{what}: bias {} vs {}",
                    fit.intercept(),
                    g.bias
                );
                assert_eq!(weights_bits(&fit, &g, &what), golden_bits(&g), "{what}");
                checked += 1;
            }
        }
    }
    // 4 datasets with two files and heart_scale with one, two engines each.
    assert_eq!(checked, 18);
}

#[test]
fn float32_equals_scikit_learn_where_sums_are_exact() {
    let mut bitwise = 0;
    let mut by_mistakes = 0;
    for (name, g) in golden() {
        for path in files_of(&name, &g) {
            let data = load::<f32>(&path, &g);
            for (engine, fit) in fits(&data, &g) {
                let what = format!("{} ({engine}, f32)", path.display());
                assert_eq!(fit.mistakes_per_epoch, g.mistakes_per_epoch, "{what}");
                assert_eq!(fit.converged(), g.converged, "{what}: converged");
                if g.integer_valued_features {
                    assert_eq!(
                        fit.intercept().to_f64().to_bits(),
                        g.bias.to_bits(),
                        "{what}: bias"
                    );
                    assert_eq!(weights_bits(&fit, &g, &what), golden_bits(&g), "{what}");
                    bitwise += 1;
                } else {
                    by_mistakes += 1;
                }
            }
        }
    }
    assert_eq!((bitwise, by_mistakes), (8, 10));
}

/// The golden comparison can fail: one flipped label changes the result.
#[test]
fn a_changed_dataset_no_longer_matches() {
    let all = golden();
    let g = &all["iris_setosa"];
    let mut data = load::<f64>(&data_dir().join("iris_setosa.csv"), g);
    data.labels[0] = -data.labels[0];
    let fit = train::fit_reference(&data, &(params(g)).check_ref().unwrap()).unwrap();
    assert_ne!(fit.mistakes_per_epoch, g.mistakes_per_epoch);
    assert_ne!(weights_bits(&fit, g, "flipped"), golden_bits(g));
}
