//! The stepper, driven in stretches, through certified scans and rows
//! passed as correct, gives the plain loop's state bit for bit.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;
use crate::data::{self, LoadOptions};
use crate::engine::ReferenceEngine;
use crate::engine::cpu::CpuEngine;
use crate::train::placement::AllRowsHere;
use crate::train::{Margin, Silent, TrainParams};

fn load<F: Real>(name: &str, multiclass: bool) -> Dataset<F> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name);
    let raw = data::load_raw::<F>(&path, &LoadOptions::default()).unwrap();
    if multiclass {
        Dataset::from_raw_classes(raw, &path).unwrap()
    } else {
        Dataset::from_raw(raw, &path, None).unwrap()
    }
}

/// The cases: every variant, the margin rule, one-vs-rest, and a shuffle.
fn cases() -> Vec<(&'static str, bool, TrainParams)> {
    let base = TrainParams {
        max_epochs: 12,
        ..TrainParams::default()
    };
    vec![
        ("digits_3v5.csv", false, base.clone()),
        (
            "heart_scale.svm",
            false,
            TrainParams {
                variant: Variant::Averaged,
                ..base.clone()
            },
        ),
        (
            "heart_scale.svm",
            false,
            TrainParams {
                variant: Variant::Pocket,
                ..base.clone()
            },
        ),
        (
            "breast_cancer.csv",
            false,
            TrainParams {
                variant: Variant::Pocket,
                margin: Some(Margin::parse("0.5").unwrap()),
                shuffle_seed: Some(3),
                ..base.clone()
            },
        ),
        (
            "iris_setosa.csv",
            false,
            TrainParams {
                bias: false,
                margin: Some(Margin::parse("2").unwrap()),
                ..base.clone()
            },
        ),
        (
            "digits.csv",
            true,
            TrainParams {
                multiclass: true,
                variant: Variant::Averaged,
                max_epochs: 4,
                ..base.clone()
            },
        ),
    ]
}

fn prepared<F: Real>(name: &str, multiclass: bool, params: &TrainParams) -> Dataset<F> {
    let d = load::<F>(name, multiclass);
    match params.shuffle_seed {
        Some(s) => d.permuted(&crate::train::shuffle::permutation(d.rows(), s)),
        None => d,
    }
}

fn initial<F: Real>(d: &Dataset<F>, p: &CheckedParams) -> State<F> {
    State::initial((d.cols() + p.bias as usize) * p.heads(d.classes.len()))
}

fn plain<F: Real>(d: &Dataset<F>, p: &CheckedParams) -> State<F> {
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let engine = Box::new(ReferenceEngine);
    crate::train::fit(d, p, initial(d, p), engine, &mut fb, &mut Silent)
        .unwrap()
        .state
}

/// Walks each epoch in stretches of `lengths` (cycled), with the CPU engine.
fn in_stretches<F: Real>(d: &Dataset<F>, p: &CheckedParams, lengths: &[usize]) -> State<F> {
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let engine = Box::new(CpuEngine::new(d, p.bias));
    let rows = d.rows();
    let part = Placement::whole(rows);
    let mut st = Stepper::new(d, p, initial(d, p), part, engine, &mut fb).unwrap();
    st.start(&mut AllRowsHere, &mut Silent).unwrap();
    let mut k = 0;
    while st.state().mistakes_per_epoch.len() < p.max_epochs {
        let mut at = 0;
        while at < rows {
            at = (at + lengths[k % lengths.len()]).min(rows);
            k += 1;
            assert_eq!(
                st.advance(at, &mut AllRowsHere, &mut Silent).unwrap(),
                Advanced::End
            );
            assert_eq!(st.state().position, at);
        }
        if st.finish_epoch() == 0 {
            break;
        }
    }
    st.finish(Stop::Converged, Vec::new()).state
}

/// Scans for the first uncertain row, passes the rows before it as
/// correct, and walks `walk` rows from it: the distributed protocol's
/// steps, on one process.
fn by_scans<F: Real>(d: &Dataset<F>, p: &CheckedParams, walk: usize) -> State<F> {
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let engine = Box::new(CpuEngine::new(d, p.bias));
    let rows = d.rows();
    let mut st =
        Stepper::new(d, p, initial(d, p), Placement::whole(rows), engine, &mut fb).unwrap();
    st.start(&mut AllRowsHere, &mut Silent).unwrap();
    while st.state().mistakes_per_epoch.len() < p.max_epochs {
        let mut at = 0;
        while at < rows {
            let q = st.first_uncertain(at, rows, &mut Silent).unwrap();
            assert!(q >= at);
            st.pass_correct((q - at) as u64, &mut AllRowsHere, &mut Silent)
                .unwrap();
            if q == rows {
                break;
            }
            st.set_position(q).unwrap();
            at = (q + walk).min(rows);
            st.advance(at, &mut AllRowsHere, &mut Silent).unwrap();
        }
        if st.finish_epoch() == 0 {
            break;
        }
    }
    st.finish(Stop::Converged, Vec::new()).state
}

/// Walks each epoch in stretches of `lengths` (cycled) with `engine` (a
/// pair), in pieces of the modes and rows of `turns` (cycled): the pair's
/// sides take turns with walks and passes in flight.
#[allow(clippy::too_many_arguments)]
fn on_a_pair<'d, F: Real>(
    d: &'d Dataset<F>,
    p: &CheckedParams,
    lengths: &[usize],
    turns: &[(Mode, usize)],
    engine: Box<dyn MarginEngine<F> + 'd>,
    fb: Fallback<'_, 'd, F>,
    before_piece: &mut dyn FnMut(usize),
) -> Outcome<F> {
    let rows = d.rows();
    let mut st = Stepper::new(d, p, initial(d, p), Placement::whole(rows), engine, fb).unwrap();
    st.lp.chooser.turns = turns.to_vec();
    st.start(&mut AllRowsHere, &mut Silent).unwrap();
    let mut k = 0;
    while st.state().mistakes_per_epoch.len() < p.max_epochs {
        let mut at = 0;
        while at < rows {
            at = (at + lengths[k % lengths.len()]).min(rows);
            before_piece(k);
            k += 1;
            st.advance(at, &mut AllRowsHere, &mut Silent).unwrap();
        }
        if st.finish_epoch() == 0 {
            break;
        }
    }
    st.finish(Stop::Converged, Vec::new())
}

/// [`on_a_pair`] with two CPU engines: the state and the rows each side
/// walked.
fn on_a_cpu_pair<F: Real>(
    d: &Dataset<F>,
    p: &CheckedParams,
    lengths: &[usize],
    turns: &[(Mode, usize)],
) -> (State<F>, u64, u64) {
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let engine = Box::new(crate::engine::pair::EnginePair::new(
        Box::new(CpuEngine::new(d, p.bias)),
        Box::new(CpuEngine::new(d, p.bias)),
    ));
    let out = on_a_pair(d, p, lengths, turns, engine, &mut fb, &mut |_| {});
    assert_eq!(out.stats.fallbacks, 0, "no side failed");
    let (device, cores) = out
        .epoch_modes
        .iter()
        .fold((0, 0), |(e, c), m| (e + m.engine.rows, c + m.cores.rows));
    (out.state, device, cores)
}

#[test]
fn a_pair_taking_turns_gives_the_plain_loop() {
    let turns = [
        (Mode::Engine, 40),
        (Mode::Cores, 7),
        (Mode::Host, 3),
        (Mode::Cores, 90),
        (Mode::Engine, 1),
        (Mode::Engine, 30),
    ];
    for (name, multiclass, params) in cases() {
        let p = params.check_ref().unwrap();
        let d = prepared::<f32>(name, multiclass, &params);
        let want = plain(&d, &p);
        for lengths in [&[usize::MAX][..], &[17, 400]] {
            let (got, device, cores) = on_a_cpu_pair(&d, &p, lengths, &turns);
            assert_eq!(
                got, want,
                "{name} {params:?} on a pair, stretches of {lengths:?}"
            );
            assert!(
                device > 0 && cores > 0,
                "{name}: each side walked ({device}, {cores})"
            );
        }
    }
}

/// The CPU engine holding the loop to the engines' protocol, as a device
/// does: a batch only within a walk begun on it, a pass collected only
/// once submitted to it. A breach is an engine failure (the loop's
/// fallback then counts it). Or, built by [`Strict::failing_at`], the CPU
/// engine without its walk, failing at its `at`-th pass as a lost device
/// would.
struct Strict<'d, F: Real> {
    inner: CpuEngine<'d, F>,
    walking: bool,
    in_flight: usize,
    /// Passes submitted, and the one that fails, if any (no walk then).
    passes: u64,
    fails_at: Option<u64>,
    /// Called once after this many batches: mid-walk, where a device
    /// starting beside the cores may arrive.
    after_batches: Option<(usize, Box<dyn FnMut() + Send + 'd>)>,
}

impl<'d, F: Real> Strict<'d, F> {
    fn new(d: &'d Dataset<F>, bias: bool) -> Self {
        Strict {
            inner: CpuEngine::new(d, bias),
            walking: false,
            in_flight: 0,
            passes: 0,
            fails_at: None,
            after_batches: None,
        }
    }

    fn failing_at(d: &'d Dataset<F>, bias: bool, at: u64) -> Self {
        Strict {
            fails_at: Some(at),
            ..Strict::new(d, bias)
        }
    }
}

impl<F: Real> MarginEngine<F> for Strict<'_, F> {
    fn name(&self) -> String {
        "strict".into()
    }

    fn preferred_window(&self, mistake_rate: f64) -> usize {
        self.inner.preferred_window(mistake_rate)
    }

    fn submit(&mut self, pass: &crate::engine::Pass<'_, F>) -> Result<(), EngineError> {
        self.passes += 1;
        if self.fails_at == Some(self.passes) {
            return Err(EngineError("injected failure".into()));
        }
        self.in_flight += 1;
        self.inner.submit(pass)
    }

    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        if self.in_flight == 0 {
            return Err(EngineError(
                "a pass collected that was not submitted here".into(),
            ));
        }
        self.in_flight -= 1;
        self.inner.collect(slack)
    }

    fn stats(&self) -> EngineStats {
        self.inner.stats()
    }

    fn walker(&mut self) -> Option<&mut dyn crate::engine::Walker<F>> {
        if self.fails_at.is_some() {
            return None;
        }
        self.inner.walker()?;
        Some(self)
    }
}

impl<F: Real> crate::engine::Walker<F> for Strict<'_, F> {
    fn begin(&mut self, start: &crate::engine::WalkStart<'_, F>) -> Result<(), EngineError> {
        self.walking = true;
        self.inner.walker().expect("a walker").begin(start)
    }

    fn next(
        &mut self,
        limits: crate::engine::BatchLimits,
    ) -> Result<crate::engine::WalkBatch<F>, EngineError> {
        if !self.walking {
            return Err(EngineError("a batch asked of a walk not begun here".into()));
        }
        let batch = self.inner.walker().expect("a walker").next(limits)?;
        self.walking = batch.stop == crate::engine::WalkStop::Running;
        if let Some((left, then)) = &mut self.after_batches {
            *left = left.saturating_sub(1);
            if *left == 0 {
                then();
                self.after_batches = None;
            }
        }
        Ok(batch)
    }

    fn cancel(&mut self) -> Result<(), EngineError> {
        self.walking = false;
        self.inner.walker().expect("a walker").cancel()
    }

    fn keeps_deadlines(&self) -> bool {
        // As the CPU engine wrapped here does (`inner.walker()` needs
        // `&mut`).
        true
    }
}

/// How a starting device ends its start, in [`a_pair_whose_device_arrives_mid_run_gives_the_plain_loop`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Arrival {
    Works,
    /// Arrives, then fails at its second pass: a fallback proves it served.
    FailsOnceServing,
    StartFails,
}

/// A pair whose device is still starting when training begins (as `auto`
/// starts a GPU beside the cores): the cores serve every mode until it
/// arrives (before the run, between two pieces of the loop, mid-walk, or
/// never), and the result is the plain loop's.
#[test]
fn a_pair_whose_device_arrives_mid_run_gives_the_plain_loop() {
    // Two engine turns in a row: a device arriving during the first must
    // not take over the walk the cores began.
    let turns = [
        (Mode::Engine, 40),
        (Mode::Engine, 30),
        (Mode::Cores, 7),
        (Mode::Host, 3),
    ];
    let arrivals = [0, 5]
        .map(|k| (Arrives::BeforePiece(k), Arrival::Works))
        .into_iter()
        .chain((1..=6).map(|n| (Arrives::AfterBatches(n), Arrival::Works)))
        .chain([
            (Arrives::Never, Arrival::Works),
            (Arrives::BeforePiece(0), Arrival::FailsOnceServing),
            (Arrives::AfterBatches(2), Arrival::StartFails),
            (Arrives::BeforePiece(0), Arrival::StartFails),
        ])
        .collect::<Vec<_>>();
    let cancel = AtomicBool::new(false);
    for (name, multiclass, params) in cases() {
        let p = params.check_ref().unwrap();
        let d = prepared::<f32>(name, multiclass, &params);
        let want = plain(&d, &p);
        for &(when, how) in &arrivals {
            let (started, arrival) = std::sync::mpsc::channel();
            cancel.store(false, Ordering::Relaxed);
            let (d, bias) = (&d, p.bias);
            let device = move || -> crate::engine::pair::Started<'_, f32> {
                match how {
                    Arrival::Works => Ok(Box::new(Strict::new(d, bias))),
                    Arrival::FailsOnceServing => Ok(Box::new(Strict::failing_at(d, bias, 2))),
                    Arrival::StartFails => Err(crate::Error::Gpu("out of memory".into())),
                }
            };
            let mut cores = Strict::new(d, bias);
            let mut before_piece: Box<dyn FnMut(usize)> = Box::new(|_| {});
            match when {
                Arrives::BeforePiece(k) => {
                    let started = started.clone();
                    before_piece = Box::new(move |piece| {
                        if piece == k {
                            started.send(device()).unwrap();
                        }
                    })
                }
                Arrives::AfterBatches(n) => {
                    let started = started.clone();
                    cores.after_batches =
                        Some((n, Box::new(move || started.send(device()).unwrap())));
                }
                Arrives::Never => {}
            }
            let engine = Box::new(crate::engine::pair::EnginePair::starting(
                "device".into(),
                arrival,
                Box::new(cores),
                &cancel,
            ));
            let mut fb = || -> Box<dyn MarginEngine<f32>> { Box::new(CpuEngine::new(d, bias)) };
            // Long pieces of the loop, so that walks outlast the chooser's
            // pieces.
            let out = on_a_pair(d, &p, &[400], &turns, engine, &mut fb, &mut before_piece);
            let case = format!("{name} {params:?}, arriving {when:?}, {how:?}");
            assert_eq!(out.state, want, "{case}");
            // Only a device that arrived and then served can fail (a
            // breach of the protocol is a failure too).
            let served = how == Arrival::FailsOnceServing;
            // The pair is gone: a start still going is told to stop.
            assert!(cancel.load(Ordering::Relaxed), "{case}");
            // A device whose start failed is not named (where the failure
            // came: walks and their batches are not in every case).
            if let (Arrives::BeforePiece(0), Arrival::StartFails) = (when, how) {
                assert_eq!(out.engines, ["strict"], "{case}");
            }
            assert_eq!(
                out.stats.fallbacks, served as u64,
                "{case}: {:?}",
                out.engines
            );
        }
    }
}

/// When a starting device arrives in
/// [`a_pair_whose_device_arrives_mid_run_gives_the_plain_loop`].
#[derive(Clone, Copy, Debug)]
enum Arrives {
    BeforePiece(usize),
    AfterBatches(usize),
    Never,
}

#[test]
fn a_pair_whose_device_fails_mid_turns_finishes_on_the_fallback_exactly() {
    let turns = [
        (Mode::Engine, 50),
        (Mode::Cores, 20),
        (Mode::Host, 5),
        (Mode::Cores, 60),
    ];
    for (name, multiclass, params) in cases() {
        let p = params.check_ref().unwrap();
        let d = prepared::<f32>(name, multiclass, &params);
        let want = plain(&d, &p);
        let mut fb = || -> Box<dyn MarginEngine<f32>> { Box::new(CpuEngine::new(&d, p.bias)) };
        let engine = Box::new(crate::engine::pair::EnginePair::new(
            Box::new(Strict::failing_at(&d, p.bias, 4)),
            Box::new(CpuEngine::new(&d, p.bias)),
        ));
        let out = on_a_pair(&d, &p, &[usize::MAX], &turns, engine, &mut fb, &mut |_| {});
        assert_eq!(out.state, want, "{name} {params:?}");
        assert_eq!(out.stats.fallbacks, 1, "{name}: {:?}", out.engines);
    }
}

fn check_all<F: Real>() {
    for (name, multiclass, params) in cases() {
        let p = params.check_ref().unwrap();
        let d = prepared::<F>(name, multiclass, &params);
        let want = plain(&d, &p);
        for lengths in [&[1usize, 2, 3][..], &[17, 400], &[usize::MAX]] {
            let got = in_stretches(&d, &p, lengths);
            assert_eq!(got, want, "{name} {params:?} in stretches of {lengths:?}");
        }
        for walk in [1, 5, 1000] {
            let got = by_scans(&d, &p, walk);
            assert_eq!(got, want, "{name} {params:?} by scans, walks of {walk}");
        }
    }
}

#[test]
fn stretches_and_scans_give_the_plain_loop_in_f32() {
    check_all::<f32>();
}

#[test]
fn stretches_and_scans_give_the_plain_loop_in_f64() {
    check_all::<f64>();
}

/// A part of an epoch: the visit counter and row numbers follow the
/// positions, and rows are found by position.
#[test]
fn parts_map_rows_to_positions() {
    let block = Placement {
        epoch_rows: 100,
        positions: Positions::Offset(40),
    };
    assert_eq!(block.position(0), 40);
    assert_eq!(block.position(10), 50);
    assert_eq!(block.first_at_or_after(45, 20), 5);
    assert_eq!(block.first_at_or_after(10, 20), 0);
    assert_eq!(block.first_at_or_after(90, 20), 20);
    assert_eq!(block.consecutive_from(3, 20), 17);
    let listed = Placement {
        epoch_rows: 10,
        positions: Positions::Listed(vec![1, 2, 3, 7, 9]),
    };
    assert_eq!(listed.position(3), 7);
    assert_eq!(listed.position(5), 10);
    assert_eq!(listed.first_at_or_after(4, 5), 3);
    assert_eq!(listed.first_at_or_after(10, 5), 5);
    assert_eq!(listed.consecutive_from(0, 5), 3);
    assert_eq!(listed.consecutive_from(3, 5), 1);
}

/// Two parts of one epoch, each walked by its own stepper, the other's
/// weights adopted between stretches: the plain loop's state (the averaged
/// variant's visit counter comes from the positions).
#[test]
fn two_parts_handing_over_give_the_plain_loop() {
    let params = TrainParams {
        max_epochs: 6,
        variant: Variant::Averaged,
        ..TrainParams::default()
    };
    let p = params.check_ref().unwrap();
    let d = prepared::<f32>("heart_scale.svm", false, &params);
    let want = plain(&d, &p);
    let rows = d.rows();
    let cut = rows / 3;
    let parts = [(0..cut), (cut..rows)];
    let blocks: Vec<Dataset<f32>> = parts
        .iter()
        .map(|r| d.permuted(&r.clone().collect::<Vec<_>>()))
        .collect();
    let mut fb0 = || -> Box<dyn MarginEngine<f32>> { Box::new(ReferenceEngine) };
    let mut fb1 = || -> Box<dyn MarginEngine<f32>> { Box::new(ReferenceEngine) };
    let part = |o: usize| Placement {
        epoch_rows: rows,
        positions: Positions::Offset(o),
    };
    let e0 = Box::new(CpuEngine::new(&blocks[0], p.bias));
    let e1 = Box::new(CpuEngine::new(&blocks[1], p.bias));
    let mut a = Stepper::new(&blocks[0], &p, initial(&d, &p), part(0), e0, &mut fb0).unwrap();
    let mut b = Stepper::new(&blocks[1], &p, initial(&d, &p), part(cut), e1, &mut fb1).unwrap();
    for _ in 0..p.max_epochs {
        a.set_position(0).unwrap();
        a.advance(cut, &mut AllRowsHere, &mut Silent).unwrap();
        let s = a.state().clone();
        b.adopt(|t| *t = s).unwrap();
        b.set_position(0).unwrap();
        b.advance(rows - cut, &mut AllRowsHere, &mut Silent)
            .unwrap();
        let s = b.state().clone();
        a.adopt(|t| *t = s).unwrap();
        a.finish_epoch();
        if b.finish_epoch() == 0 {
            break;
        }
    }
    let mut got = b.finish(Stop::Converged, Vec::new()).state;
    got.position = want.position;
    assert_eq!(got, want);
}

/// scikit-learn's schedule's updates on `d`: row weights (one of them 0),
/// a class weight and the mean loss of its stopping rule, which follow
/// their rows through an order.
fn weighted<F: Real>(d: &Dataset<F>) -> TrainParams {
    TrainParams {
        max_epochs: 12,
        sample_weight: Some((0..d.rows()).map(|i| [0.5, 1.0, 2.0, 0.0][i % 4]).collect()),
        class_weight: Some(crate::train::ClassWeights::Given(vec![(
            d.label_map.positive.clone(),
            "1.5".into(),
        )])),
        early_stop: Some(crate::train::EarlyStop {
            judge: crate::train::early_stop::Judge::MeanLoss,
            ..Default::default()
        }),
        ..TrainParams::default()
    }
}

/// Every epoch visits the rows in `order` where they lie, on the CPU
/// engine (with its fast certified margins): the run over a copy of the
/// rows in that order, bit for bit, for [`cases`] and [`weighted`]. (The
/// copy's row weights are its rows'.)
fn check_orders<F: Real>() {
    let mut all: Vec<(&str, bool, Option<TrainParams>)> = cases()
        .into_iter()
        .map(|(name, multiclass, params)| (name, multiclass, Some(params)))
        .collect();
    all.push(("breast_cancer.csv", false, None));
    for (name, multiclass, params) in all {
        let d = load::<F>(name, multiclass);
        let params = params.unwrap_or_else(|| weighted(&d));
        let order = crate::train::shuffle::permutation(d.rows(), 11);
        let mut copied = params.clone();
        if let Some(w) = &params.sample_weight {
            copied.sample_weight = Some(order.iter().map(|&i| w[i]).collect());
        }
        let (p, pc) = (params.check_ref().unwrap(), copied.check_ref().unwrap());
        let want = plain(&d.permuted(&order), &pc);
        let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
        let engine = Box::new(CpuEngine::new(&d, p.bias));
        let got = crate::train::sweep::epoch::run(
            &d,
            Some(&order),
            None,
            &p,
            initial(&d, &p),
            None,
            engine,
            &mut fb,
            &mut Silent,
        )
        .unwrap()
        .state;
        assert!(want.mistakes_per_epoch.iter().sum::<u64>() > 0, "{name}");
        assert_eq!(got, want, "{name} {params:?} in the order of a permutation");
    }
}

#[test]
fn an_order_of_its_own_gives_the_copy_in_that_order_in_f32() {
    check_orders::<f32>();
}

#[test]
fn an_order_of_its_own_gives_the_copy_in_that_order_in_f64() {
    check_orders::<f64>();
}

/// An order that is not a permutation of the rows, or with a policy that
/// forces the engine's passes, is refused.
#[test]
fn a_visit_order_must_be_a_permutation_the_host_walks() {
    let d = load::<f64>("iris_setosa.csv", false);
    let p = TrainParams::default().check_ref().unwrap();
    let rows = d.rows();
    let mut fb = || -> Box<dyn MarginEngine<f64>> { Box::new(ReferenceEngine) };
    let mut st = Stepper::new(
        &d,
        &p,
        initial(&d, &p),
        Placement::whole(rows),
        Box::new(CpuEngine::new(&d, p.bias)),
        &mut fb,
    )
    .unwrap();
    let short: Vec<usize> = (0..rows - 1).collect();
    let twice: Vec<usize> = (0..rows).map(|i| i.min(rows - 2)).collect();
    let beyond: Vec<usize> = (1..=rows).collect();
    for bad in [&short, &twice, &beyond] {
        assert!(st.visit_in(bad).is_err());
    }
    let p = TrainParams {
        passes: crate::train::PassPolicy::Always,
        ..TrainParams::default()
    }
    .check_ref()
    .unwrap();
    let mut fb = || -> Box<dyn MarginEngine<f64>> { Box::new(ReferenceEngine) };
    let mut st = Stepper::new(
        &d,
        &p,
        initial(&d, &p),
        Placement::whole(rows),
        Box::new(CpuEngine::new(&d, p.bias)),
        &mut fb,
    )
    .unwrap();
    let identity: Vec<usize> = (0..rows).collect();
    assert!(st.visit_in(&identity).is_err());
}
