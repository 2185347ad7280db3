//! The training loop with every CPU engine equals the textbook algorithm bit
//! for bit, including under randomly injected uncertainty (which drives the
//! speculation, verification and rollback paths).

use crate::common::{Rng, random_dense, random_sparse, textbook, textbook_variant};
use perceptron::Real;
use perceptron::data::Dataset;
use perceptron::engine::cpu::CpuEngine;
use perceptron::engine::gpu::twin::TwinEngine;
use perceptron::engine::gpu::twin::TwinWalkEngine;
use perceptron::engine::{
    BatchLimits, EngineError, EngineStats, MarginEngine, Pass, WalkBatch, WalkStart, Walker,
};
use perceptron::train::PassPolicy::{self, Adaptive, Ahead, Always, Host, Reference, Windows};
use perceptron::train::{self, Margin, ReferenceEngine, Silent, State, TrainParams, Variant};

/// Wraps an engine and weakens its slacks at random: zeroing a slack
/// ("uncertain") or shrinking it is always allowed, so results must not
/// change. Drives the drift, early-break and host-dot paths.
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
        // Vary the window too, to cross pass boundaries in many ways.
        let w = self.inner.preferred_window(r);
        1 + (self.rng.0 as usize % w.clamp(1, 4096))
    }
    fn submit(&mut self, pass: &Pass<'_, F>) -> Result<(), EngineError> {
        self.inner.submit(pass)
    }
    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        self.inner.collect(slack)?;
        for r in slack.iter_mut() {
            let u = self.rng.unit();
            if u < self.rate {
                *r = 0.0;
            } else if u < 2.0 * self.rate {
                *r *= self.rng.unit() as f32;
            }
        }
        Ok(())
    }
    fn stats(&self) -> EngineStats {
        self.inner.stats()
    }
}

fn run<'a, F: Real>(
    passes: PassPolicy,
    data: &Dataset<F>,
    bias: bool,
    epochs: usize,
    engine: Box<dyn MarginEngine<F> + 'a>,
) -> train::Fit<F> {
    let params = TrainParams {
        max_epochs: epochs,
        bias,
        shuffle_seed: None,
        passes,
        ..Default::default()
    };
    let dim = data.cols() + bias as usize;
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    train::fit(
        data,
        &params.check_ref().unwrap(),
        State::initial(dim),
        engine,
        &mut fb,
        &mut Silent,
    )
    .unwrap()
}

/// Wraps a walking engine and meddles with its batches the way a device
/// with other arithmetic could: flips speculative decisions and corrupts
/// the values of some updates. The loop must notice every time (rolling the
/// walk back, or turning it off), so results must not change.
struct Meddler<'d> {
    inner: TwinWalkEngine<'d, f32>,
    rng: Rng,
    flip: f64,
    corrupt: f64,
}

/// `MarginEngine` for a test wrapper of a walking engine (its field
/// `inner`): everything forwarded, named `PREFIX(inner)`, the wrapper
/// itself the walker.
macro_rules! walking_wrapper {
    ($wrapper:ident, $prefix:literal) => {
        impl MarginEngine<f32> for $wrapper<'_> {
            fn name(&self) -> String {
                format!(concat!($prefix, "({})"), self.inner.name())
            }
            fn preferred_window(&self, r: f64) -> usize {
                self.inner.preferred_window(r)
            }
            fn submit(&mut self, pass: &Pass<'_, f32>) -> Result<(), EngineError> {
                self.inner.submit(pass)
            }
            fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
                self.inner.collect(slack)
            }
            fn stats(&self) -> EngineStats {
                self.inner.stats()
            }
            fn walker(&mut self) -> Option<&mut dyn Walker<f32>> {
                Some(self)
            }
        }
    };
}

walking_wrapper!(Meddler, "meddler");

impl Walker<f32> for Meddler<'_> {
    fn begin(&mut self, start: &WalkStart<'_, f32>) -> Result<(), EngineError> {
        self.inner.begin(start)
    }
    fn next(&mut self, limits: BatchLimits) -> Result<WalkBatch<f32>, EngineError> {
        let mut b = self.inner.next(limits)?;
        for d in &mut b.decisions {
            if d.speculative && self.rng.unit() < self.flip {
                d.mistake = !d.mistake;
            }
            if let Some(at) = d.values_at
                && self.rng.unit() < self.corrupt
            {
                b.values[at] = b.values[at].next_up();
            }
        }
        Ok(b)
    }
    fn cancel(&mut self) -> Result<(), EngineError> {
        self.inner.cancel()
    }
    fn keeps_deadlines(&self) -> bool {
        self.inner.keeps_deadlines()
    }
}

/// Wraps the CPU engine and records what the loop lets its walk do in a
/// trial: each trial batch's horizon, and the end of the walk it is in.
struct TrialProbe<'d> {
    inner: CpuEngine<'d, f32>,
    end: usize,
    trial_reach: std::rc::Rc<std::cell::RefCell<Vec<(usize, usize)>>>,
}

walking_wrapper!(TrialProbe, "probe");

impl Walker<f32> for TrialProbe<'_> {
    fn begin(&mut self, start: &WalkStart<'_, f32>) -> Result<(), EngineError> {
        self.end = start.end;
        self.inner.begin(start)
    }
    fn next(&mut self, limits: BatchLimits) -> Result<WalkBatch<f32>, EngineError> {
        if limits.deadline.is_some() {
            self.trial_reach
                .borrow_mut()
                .push((limits.horizon, self.end));
        }
        self.inner.next(limits)
    }
    fn cancel(&mut self) -> Result<(), EngineError> {
        self.inner.cancel()
    }
    fn keeps_deadlines(&self) -> bool {
        self.inner.keeps_deadlines()
    }
}

/// In a trial, a walk that keeps its deadline may walk past the trial's
/// rows, as far as the budget allows: held to a trial's few thousand rows,
/// the CPU search on an H100's 16 cores measured its fork and join instead
/// of its speed, and lost every trial on dense 4M x 256 where it is 8x the
/// host's walk. The result stays the textbook's.
#[test]
fn a_trial_lets_a_walk_that_keeps_its_deadline_walk_past_the_trials_rows() {
    let mut rng = Rng(0x5eed);
    let rows = 60_000;
    let data = random_dense::<f32>(&mut rng, rows, 24, 0.0);
    let (w, mistakes) = textbook(&data, true, 30);
    let trial_reach = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let probe = TrialProbe {
        inner: CpuEngine::new(&data, true),
        end: 0,
        trial_reach: trial_reach.clone(),
    };
    let fit = run(Adaptive, &data, true, 30, Box::new(probe));
    assert_eq!(fit.mistakes_per_epoch, mistakes);
    assert_eq!(fit.weights, w);
    let reach = trial_reach.borrow();
    assert!(
        !reach.is_empty(),
        "no trial of the engine's walk: nothing was tested"
    );
    // A trial measures 1,875 rows here (a 32nd of the epoch): every trial
    // batch may go on to the walk's end.
    assert!(
        reach.iter().all(|&(horizon, end)| horizon >= end),
        "trial batches held short of the walk's end (horizon, end): {reach:?}"
    );
}

/// Totals over every run of a test, to show which paths were exercised.
#[derive(Default, Debug)]
struct Exercised {
    certified_correct: u64,
    certified_mistakes: u64,
    drift_fallbacks: u64,
    early_breaks: u64,
}

fn check<F: Real>(data: &Dataset<F>, bias: bool, epochs: usize, seed: u64, ex: &mut Exercised) {
    let (w, mistakes) = textbook(data, bias, epochs);
    let bits = |v: &[F]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
    let engines: Vec<(PassPolicy, Box<dyn MarginEngine<F>>)> = vec![
        (Always, Box::new(ReferenceEngine)),
        (Always, Box::new(CpuEngine::new(data, bias))),
        (Adaptive, Box::new(CpuEngine::new(data, bias))),
        // The host's certified walk alone, and the textbook loop inside an
        // engine's run.
        (Host, Box::new(CpuEngine::new(data, bias))),
        (Reference, Box::new(TwinWalkEngine::new(data, bias, 4, 16))),
        // The walk with the other cores summing ahead (on dense rows, the
        // host's certified walk).
        (Ahead, Box::new(CpuEngine::new(data, bias))),
        (
            Always,
            Box::new(Chaos {
                inner: CpuEngine::new(data, bias),
                rng: Rng(seed | 1),
                rate: 0.02,
            }),
        ),
        (
            Always,
            Box::new(Chaos {
                inner: CpuEngine::new(data, bias),
                rng: Rng(seed ^ 0xabcdef),
                rate: 0.3,
            }),
        ),
        // The GPU walk's twins: small batches cross batch boundaries often.
        (Always, Box::new(TwinWalkEngine::new(data, bias, 1, 7))),
        (Always, Box::new(TwinWalkEngine::new(data, bias, 32, 64))),
        (Adaptive, Box::new(TwinWalkEngine::new(data, bias, 4, 16))),
        // The GPU kernels' CPU twins, with one lane and with many lanes.
        (Windows, Box::new(TwinWalkEngine::new(data, bias, 8, 16))),
        (Always, Box::new(TwinEngine::new(data, bias, None))),
        (Always, Box::new(TwinEngine::new(data, bias, Some(1)))),
        (
            Always,
            Box::new(Chaos {
                inner: TwinEngine::new(data, bias, Some(32)),
                rng: Rng(seed ^ 77),
                rate: 0.05,
            }),
        ),
    ];
    for (policy, engine) in engines {
        let name = format!("{} {policy:?}", engine.name());
        let fit = run(policy, data, bias, epochs, engine);
        assert_eq!(
            fit.mistakes_per_epoch, mistakes,
            "{name}: mistakes per epoch"
        );
        assert_eq!(bits(&fit.weights), bits(&w), "{name}: weights");
        ex.certified_correct += fit.loop_stats.certified_correct;
        ex.certified_mistakes += fit.loop_stats.certified_mistakes;
        ex.drift_fallbacks += fit.loop_stats.drift_fallbacks;
        ex.early_breaks += fit.loop_stats.early_breaks;
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
        ex.certified_correct > 100_000
            && ex.certified_mistakes > 1000
            && ex.drift_fallbacks > 1000
            && ex.early_breaks > 10,
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
        ex.certified_correct > 100_000
            && ex.certified_mistakes > 1000
            && ex.drift_fallbacks > 1000
            && ex.early_breaks > 10,
        "paths not exercised: {ex:?}"
    );
}

/// Whole numbers from 0 to 255, as pictures are: the host reads such rows
/// as bytes ([`perceptron::data::byte_rows`]; made here by the check that
/// they are, as a run on the CPU makes them), and every engine and policy
/// still gives the textbook's bits, in f32 and f64, with and without bias.
/// (Breaking the widened rows or the byte margins' decisions fails it; the
/// shuffled schedule with the mean loss and one-vs-rest on byte rows is
/// checked against scikit-learn on `digits.csv` in
/// `python/tests/test_sklearn_defaults.py`.)
#[test]
fn rows_of_bytes_match_textbook() {
    fn pixels<F: Real>(rng: &mut Rng, rows: usize, cols: usize, noise: f64) -> Dataset<F> {
        let plane: Vec<f64> = (0..cols).map(|_| rng.unit() - 0.5).collect();
        let mut values = Vec::with_capacity(rows * cols);
        let mut labels = Vec::with_capacity(rows);
        for _ in 0..rows {
            let mut s = 0.0;
            for &p in &plane {
                // About a third of the pixels dark, as in Fashion-MNIST.
                let v = if rng.unit() < 0.35 {
                    0.0
                } else {
                    rng.below(256) as f64
                };
                s += p * (v - 128.0);
                values.push(F::from_f64(v));
            }
            let mut y = if s > 0.0 { 1 } else { -1 };
            if rng.unit() < noise {
                y = -y;
            }
            labels.push(y);
        }
        crate::common::dense_dataset(cols, values, labels)
    }
    let mut rng = Rng(0x0bad_cafe);
    let mut ex = Exercised::default();
    for case in 0..16 {
        let rows = 1 + rng.below(1500);
        let cols = 1 + rng.below(300);
        let noise = [0.0, 0.01, 0.2][case % 3];
        let bias = case % 4 != 3;
        let data32 = pixels::<f32>(&mut rng, rows, cols, noise);
        assert!(
            data32.byte_rows().is_some(),
            "case {case}: not read as bytes"
        );
        check(&data32, bias, 1 + rng.below(8), case as u64, &mut ex);
        let data64 = pixels::<f64>(&mut rng, rows, cols, noise);
        assert!(
            data64.byte_rows().is_some(),
            "case {case}: not read as bytes"
        );
        check(&data64, bias, 1 + rng.below(8), case as u64 + 100, &mut ex);
    }
    assert!(
        ex.certified_correct > 10_000 && ex.certified_mistakes > 1000,
        "paths not exercised: {ex:?}"
    );
}

/// The host's walk on sparse rows, with other cores summing the rows ahead
/// on the loop's own weights, equals the textbook variants bit for bit:
/// the classic and the averaged perceptron (whose sums the loop adds after
/// each batch of the walk), with and without a margin, in f32 and f64; and
/// the sums made ahead were both kept and refused.
#[test]
fn the_hosts_walk_ahead_on_sparse_rows_matches_the_textbook_variants() {
    fn case<F: Real>(rng: &mut Rng, case: usize, kept: &mut u64, summed: &mut u64) {
        // Wide rows, as sparse data has (a narrow matrix's updates touch
        // every row ahead), and some narrow ones.
        let rows = 500 + rng.below(6000);
        let cols = if case % 4 == 3 {
            1 + rng.below(300)
        } else {
            5_000 + rng.below(50_000)
        };
        let nnz = 1 + rng.below(30);
        let data = random_sparse::<F>(rng, rows, cols, nnz, [0.0, 0.01, 0.2][case % 3]);
        let variant = [Variant::Classic, Variant::Averaged][case % 2];
        let margin = ["0", "0.5"][case / 2 % 2];
        let bias = case % 5 != 4;
        let epochs = 1 + rng.below(8);
        let tau = Margin::parse(margin).unwrap().value::<F>();
        let (w, mistakes, _) = textbook_variant(&data, bias, epochs, variant, tau);
        let params = TrainParams {
            max_epochs: epochs,
            bias,
            passes: Ahead,
            variant,
            margin: Some(Margin::parse(margin).unwrap()),
            ..Default::default()
        };
        let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
        let fit = train::fit(
            &data,
            &params.check_ref().unwrap(),
            State::initial(cols + bias as usize),
            Box::new(CpuEngine::new(&data, bias)),
            &mut fb,
            &mut Silent,
        )
        .unwrap();
        let bits = |v: &[F]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
        let what = format!("case {case}: {variant:?}, margin {margin}, bias {bias}");
        assert_eq!(fit.mistakes_per_epoch, mistakes, "{what}: mistakes");
        assert_eq!(bits(&fit.weights), bits(&w), "{what}: weights");
        *kept += fit.loop_stats.ahead_kept;
        *summed += fit.loop_stats.ahead_summed;
    }
    // Several threads, whatever the machine has: the walk needs helpers.
    // (How many sums are kept depends on how the threads are scheduled:
    // on a loaded machine the helpers may hardly run, so further rounds of
    // fresh cases follow until both kinds of row were seen often enough;
    // the walk's own tests, in src/engine/cpu/lookahead.rs, make every
    // chunk a helper's.)
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let mut rng = Rng(0x51de_a4ead);
    let (mut kept, mut summed) = (0, 0);
    pool.install(|| {
        for _round in 0..8 {
            for n in 0..16 {
                case::<f32>(&mut rng, n, &mut kept, &mut summed);
                case::<f64>(&mut rng, n, &mut kept, &mut summed);
            }
            if kept > 1_000 && summed > 1_000 {
                break;
            }
        }
    });
    assert!(
        kept > 1_000 && summed > 1_000,
        "kept {kept}, summed {summed}"
    );
}

/// Where mistakes come a few rows apart, the default policy gives the walk
/// ahead no trial (each update would move the row's weights between the
/// cores' caches, as many transfers as the dot saved), whatever the
/// timings; the model is the textbook's.
#[test]
fn adaptive_gives_the_walk_ahead_no_trial_while_mistakes_are_dense() {
    let mut rng = Rng(0xde25e);
    // Few enough features for the flipped labels to stay mistakes.
    let (rows, cols) = (20_000, 2_000);
    let data = random_sparse::<f32>(&mut rng, rows, cols, 20, 0.3);
    let epochs = 3;
    let (w, mistakes) = textbook(&data, true, epochs);
    let params = TrainParams {
        max_epochs: epochs,
        passes: Adaptive,
        ..Default::default()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let mut fb = || -> Box<dyn MarginEngine<f32>> { Box::new(ReferenceEngine) };
    let fit = pool.install(|| {
        train::fit(
            &data,
            &params.check_ref().unwrap(),
            State::initial(cols + 1),
            Box::new(CpuEngine::new(&data, true)),
            &mut fb,
            &mut Silent,
        )
        .unwrap()
    });
    assert_eq!(fit.mistakes_per_epoch, mistakes);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&fit.weights), bits(&w));
    assert!(
        mistakes.iter().all(|&m| m * 4 > rows as u64),
        "{mistakes:?}"
    );
    assert!(fit.loop_stats.host_dots > 0, "the default policy walked");
    for (e, modes) in fit.epoch_modes.iter().enumerate() {
        assert_eq!(modes.ahead.rows, 0, "epoch {}: {modes:?}", e + 1);
        assert_eq!(modes.host.rows + modes.reference.rows, rows as u64);
    }
}

/// An engine that claims every row is certainly correct, with a huge
/// slack. The comparison above must notice: the exactness tests can fail.
struct Liar(usize);

impl<F: Real> MarginEngine<F> for Liar {
    fn name(&self) -> String {
        "liar".into()
    }
    fn preferred_window(&self, _: f64) -> usize {
        1024
    }
    fn submit(&mut self, _: &Pass<'_, F>) -> Result<(), EngineError> {
        self.0 += 1;
        Ok(())
    }
    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        slack.fill(1e30);
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
    let fit = run(Always, &data, true, 5, Box::new(Liar(0)));
    assert_ne!(fit.mistakes_per_epoch, mistakes);
    assert_ne!(fit.weights, w);
}

/// An engine whose slacks are NaN or infinite (a misbehaving device) must
/// not settle anything wrongly: NaN is never "certain".
struct Garbage;

impl<F: Real> MarginEngine<F> for Garbage {
    fn name(&self) -> String {
        "garbage".into()
    }
    fn preferred_window(&self, _: f64) -> usize {
        777
    }
    fn submit(&mut self, _: &Pass<'_, F>) -> Result<(), EngineError> {
        Ok(())
    }
    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        for (i, r) in slack.iter_mut().enumerate() {
            *r = if i % 3 == 0 { f32::NAN } else { 0.0 };
        }
        Ok(())
    }
    fn stats(&self) -> EngineStats {
        EngineStats::default()
    }
}

#[test]
fn nan_slacks_settle_nothing() {
    let mut rng = Rng(7);
    let data = random_dense::<f32>(&mut rng, 3000, 6, 0.05);
    let (w, mistakes) = textbook(&data, true, 4);
    let fit = run(Always, &data, true, 4, Box::new(Garbage));
    assert_eq!(fit.mistakes_per_epoch, mistakes);
    assert_eq!(fit.weights, w);
}

/// Weights that grow past what a device may be handed (||w||·max||x|| >
/// MAX·2^-40, about 3e26 in f32) are decided on the host from then on: the
/// model stays the textbook one, and passes stop once the limit is crossed.
#[test]
fn weights_too_large_for_a_device_are_decided_on_the_host() {
    let mut rng = Rng(0xb16);
    let small = random_dense::<f32>(&mut rng, 4000, 4, 0.2);
    let perceptron::data::Features::Dense(m) = &small.features else {
        unreachable!()
    };
    let mut big = small.clone();
    big.features = perceptron::data::Features::Dense(perceptron::data::DenseMatrix {
        values: m.values.iter().map(|v| v * 1e13).collect(),
        ..m.clone()
    });
    let (w, mistakes) = textbook(&big, true, 12);
    let norm = w.iter().map(|v| (*v as f64).powi(2)).sum::<f64>().sqrt();
    let max_norm = big.facts(true).max_norm;
    assert!(
        norm * max_norm > 3.2e26,
        "the data must cross the limit: {norm} {max_norm}"
    );
    // Far fewer passes, or walk batches, than the same data scaled down:
    // after the crossing the host walks.
    for (policy, count) in [
        (
            Windows,
            (|f: &train::Fit<f32>| f.loop_stats.passes) as fn(&train::Fit<f32>) -> u64,
        ),
        (Always, |f: &train::Fit<f32>| f.engine_stats.passes),
    ] {
        let fit = run(policy, &big, true, 12, Box::new(CpuEngine::new(&big, true)));
        assert_eq!(fit.mistakes_per_epoch, mistakes, "{policy:?}");
        assert_eq!(fit.weights, w, "{policy:?}");
        let small_fit = run(
            policy,
            &small,
            true,
            12,
            Box::new(CpuEngine::new(&small, true)),
        );
        assert!(
            count(&fit) < count(&small_fit),
            "{policy:?}: {} vs {}",
            count(&fit),
            count(&small_fit)
        );
    }
}

/// Collects warnings.
#[derive(Default)]
struct Warnings(Vec<String>);

impl<F> perceptron::train::Observer<F> for Warnings {
    fn on_warning(&mut self, message: &str) {
        self.0.push(message.to_owned());
    }
}

/// Random rows with all-zero rows mixed in: without the bias their margin
/// is exactly 0, so every walk decides them speculatively.
fn with_zero_rows(rng: &mut Rng, rows: usize, cols: usize) -> Dataset<f32> {
    let mut d = random_dense::<f32>(rng, rows, cols, 0.1);
    if let perceptron::data::Features::Dense(m) = &mut d.features {
        for r in (0..rows).step_by(9) {
            m.values.to_mut()[r * cols..(r + 1) * cols].fill(0.0);
        }
    }
    d
}

/// The loop catches a walker whose speculative decisions or update values
/// differ from its own, and the model stays the textbook one.
#[test]
fn a_meddling_walker_is_caught_and_the_model_is_unchanged() {
    let mut rng = Rng(0x3edd1e);
    let (mut rollbacks, mut off) = (0, 0);
    for case in 0..12 {
        let data = with_zero_rows(&mut rng, 1500, 1 + case % 7);
        let (w, mistakes) = textbook(&data, false, 6);
        let (flip, corrupt) = if case % 2 == 0 {
            (0.3, 0.0)
        } else {
            (0.0, 0.02)
        };
        let engine = Meddler {
            inner: TwinWalkEngine::new(&data, false, 1, 5 + case),
            rng: Rng(case as u64 + 1),
            flip,
            corrupt,
        };
        let params = TrainParams {
            max_epochs: 6,
            bias: false,
            passes: Always,
            ..Default::default()
        };
        let mut fb = || -> Box<dyn MarginEngine<f32>> { Box::new(ReferenceEngine) };
        let mut warnings = Warnings::default();
        let fit = train::fit(
            &data,
            &params.check_ref().unwrap(),
            State::initial(data.cols()),
            Box::new(engine),
            &mut fb,
            &mut warnings,
        )
        .unwrap();
        assert_eq!(fit.mistakes_per_epoch, mistakes, "case {case}");
        assert_eq!(fit.weights, w, "case {case}");
        rollbacks += fit.loop_stats.walk_rollbacks;
        off += warnings
            .0
            .iter()
            .filter(|m| m.contains("walk is off"))
            .count();
        assert!(fit.loop_stats.walk_speculative > 0, "case {case}");
    }
    assert!(rollbacks > 10, "rollbacks {rollbacks}");
    assert!(off >= 3, "walks turned off {off}");
}

/// A walker that never moves (a hung device reporting empty batches): the
/// loop must not spin. It gives up on the engine, and the fallback finishes
/// the textbook run.
struct Stalled<'d>(TwinWalkEngine<'d, f32>, u64);

impl MarginEngine<f32> for Stalled<'_> {
    fn name(&self) -> String {
        "stalled".into()
    }
    fn preferred_window(&self, r: f64) -> usize {
        self.0.preferred_window(r)
    }
    fn submit(&mut self, pass: &Pass<'_, f32>) -> Result<(), EngineError> {
        self.0.submit(pass)
    }
    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        self.0.collect(slack)
    }
    fn stats(&self) -> EngineStats {
        self.0.stats()
    }
    fn walker(&mut self) -> Option<&mut dyn Walker<f32>> {
        Some(self)
    }
}

impl Walker<f32> for Stalled<'_> {
    fn begin(&mut self, start: &WalkStart<'_, f32>) -> Result<(), EngineError> {
        self.1 = start.position as u64;
        Ok(())
    }
    fn next(&mut self, _limits: BatchLimits) -> Result<WalkBatch<f32>, EngineError> {
        let at = self.1 as usize;
        Ok(WalkBatch {
            start: at,
            end: at,
            decisions: Vec::new(),
            values: Vec::new(),
            stop: perceptron::engine::WalkStop::Running,
        })
    }
    fn cancel(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
}

#[test]
fn a_walker_that_makes_no_progress_is_given_up() {
    let mut rng = Rng(0x57a11);
    let data = random_dense::<f32>(&mut rng, 2000, 5, 0.1);
    let (w, mistakes) = textbook(&data, true, 4);
    let engine = Stalled(TwinWalkEngine::new(&data, true, 4, 64), 0);
    let fit = run(Always, &data, true, 4, Box::new(engine));
    assert_eq!(fit.mistakes_per_epoch, mistakes);
    assert_eq!(fit.weights, w);
}
