//! The training loop with every CPU engine equals the textbook algorithm bit
//! for bit, including under randomly injected uncertainty (which drives the
//! speculation, verification and rollback paths).

mod common;

use common::{Rng, random_dense, random_sparse, textbook};
use perceptron::Real;
use perceptron::cpu::CpuEngine;
use perceptron::data::Dataset;
use perceptron::gpu::twin::TwinEngine;
use perceptron::train::engine::{EngineError, EngineStats, MarginEngine, Pass};
use perceptron::train::{self, ReferenceEngine, Silent, State, TrainParams};

/// Wraps an engine and flags extra rows at random. Flagging is always
/// allowed (it only means "not certified"), so results must not change.
struct Chaos<E> {
    inner: E,
    rng: Rng,
    rate: f64,
}

impl<F: Real, E: MarginEngine<F>> MarginEngine<F> for Chaos<E> {
    fn name(&self) -> String {
        format!("chaos({})", self.inner.name())
    }
    fn preferred_window(&self, r: f64) -> usize {
        // Vary the window too, to cross segment boundaries in many ways.
        let w = self.inner.preferred_window(r);
        1 + (self.rng.0 as usize % w.clamp(1, 4096))
    }
    fn evaluate(&mut self, pass: &Pass<'_, F>, flags: &mut [u32]) -> Result<(), EngineError> {
        self.inner.evaluate(pass, flags)?;
        for p in 0..pass.len() {
            if self.rng.unit() < self.rate {
                flags[p / 32] |= 1 << (p % 32);
            }
        }
        Ok(())
    }
    fn stats(&self) -> EngineStats {
        self.inner.stats()
    }
}

fn run<'a, F: Real>(
    data: &Dataset<F>,
    bias: bool,
    epochs: usize,
    engine: Box<dyn MarginEngine<F> + 'a>,
) -> train::Fit<F> {
    let params = TrainParams {
        max_epochs: epochs,
        bias,
        shuffle_seed: None,
    };
    let dim = data.cols() + bias as usize;
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    train::fit(
        data,
        &params,
        State::initial(dim),
        engine,
        &mut fb,
        &mut Silent,
    )
    .unwrap()
}

/// Totals over every run of a test, to show which paths were exercised.
#[derive(Default, Debug)]
struct Exercised {
    certified: u64,
    rollbacks: u64,
    segments_passes: u64,
}

fn check<F: Real>(data: &Dataset<F>, bias: bool, epochs: usize, seed: u64, ex: &mut Exercised) {
    let (w, mistakes) = textbook(data, bias, epochs);
    let bits = |v: &[F]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
    let engines: Vec<Box<dyn MarginEngine<F>>> = vec![
        Box::new(ReferenceEngine),
        Box::new(CpuEngine::new(data, bias)),
        Box::new(Chaos {
            inner: CpuEngine::new(data, bias),
            rng: Rng(seed | 1),
            rate: 0.02,
        }),
        Box::new(Chaos {
            inner: CpuEngine::new(data, bias),
            rng: Rng(seed ^ 0xabcdef),
            rate: 0.3,
        }),
    ];
    for engine in engines {
        let name = engine.name();
        let fit = run(data, bias, epochs, engine);
        assert_eq!(
            fit.mistakes_per_epoch, mistakes,
            "{name}: mistakes per epoch"
        );
        assert_eq!(bits(&fit.weights), bits(&w), "{name}: weights");
        ex.certified += fit.loop_stats.certified_rows;
        ex.rollbacks += fit.loop_stats.rollbacks;
        ex.segments_passes += fit.loop_stats.passes;
    }
}

#[test]
fn dense_random_data_matches_textbook() {
    let mut rng = Rng(0x1234_5678);
    let mut ex = Exercised::default();
    for case in 0..40 {
        let rows = 1 + rng.below(3000);
        let cols = 1 + rng.below(40);
        let noise = [0.0, 0.01, 0.2][case % 3];
        let bias = case % 4 != 3;
        let data32 = random_dense::<f32>(&mut rng, rows, cols, noise);
        check(&data32, bias, 1 + rng.below(12), case as u64, &mut ex);
        let data64 = random_dense::<f64>(&mut rng, rows, cols, noise);
        check(&data64, bias, 1 + rng.below(12), case as u64 + 100, &mut ex);
    }
    assert!(
        ex.certified > 100_000 && ex.rollbacks > 50,
        "paths not exercised: {ex:?}"
    );
}

#[test]
fn sparse_random_data_matches_textbook() {
    let mut rng = Rng(0x8765_4321);
    let mut ex = Exercised::default();
    for case in 0..40 {
        let rows = 1 + rng.below(3000);
        let cols = 1 + rng.below(500);
        let nnz = 1 + rng.below(30);
        let noise = [0.0, 0.02, 0.3][case % 3];
        let bias = case % 5 != 4;
        let data = random_sparse::<f32>(&mut rng, rows, cols, nnz, noise);
        check(&data, bias, 1 + rng.below(10), case as u64, &mut ex);
    }
    assert!(
        ex.certified > 100_000 && ex.rollbacks > 50,
        "paths not exercised: {ex:?}"
    );
}

/// An engine that certifies every row, even mistakes. The comparison above
/// must notice: this shows the exactness tests can fail.
struct Liar;

impl<F: Real> MarginEngine<F> for Liar {
    fn name(&self) -> String {
        "liar".into()
    }
    fn preferred_window(&self, _: f64) -> usize {
        1024
    }
    fn evaluate(&mut self, _: &Pass<'_, F>, _: &mut [u32]) -> Result<(), EngineError> {
        Ok(())
    }
    fn stats(&self) -> EngineStats {
        EngineStats::default()
    }
}

#[test]
fn a_lying_engine_is_caught() {
    let mut rng = Rng(99);
    let data = random_dense::<f32>(&mut rng, 500, 5, 0.1);
    let (w, mistakes) = textbook(&data, true, 5);
    let fit = run(&data, true, 5, Box::new(Liar));
    assert_ne!(fit.mistakes_per_epoch, mistakes);
    assert_ne!(fit.weights, w);
}
