//! Exact mode on ranks that are threads: the single-process state, bit for
//! bit, for 1 to 4 ranks, every variant, shuffled or not, both precisions;
//! and a failure on one rank ends every rank with its message.

use std::path::Path;

use super::*;
use crate::data::{self, LoadOptions};
use crate::distributed::agree::plainly;
use crate::distributed::local::run_ranks;
use crate::distributed::order::block_order;
use crate::distributed::plan::span;
use crate::engine::ReferenceEngine;
use crate::engine::cpu::CpuEngine;
use crate::train::Stop;
use crate::train::{Margin, Silent, TrainParams, Variant};

pub(crate) fn load<F: Real>(name: &str, multiclass: bool) -> Dataset<F> {
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

/// The exact state as bits, for comparisons that tell -0 from 0.
pub(crate) fn bits<F: Real>(s: &State<F>) -> Vec<u64> {
    let mut v: Vec<u64> = s.weights.iter().map(|x| x.to_f64().to_bits()).collect();
    if let Some(u) = &s.average {
        v.extend(u.iter().map(|x| x.to_f64().to_bits()));
    }
    if let Some(p) = &s.pocket {
        v.extend(p.weights.iter().map(|x| x.to_f64().to_bits()));
        v.extend([
            p.mistakes,
            p.run,
            p.epoch as u64,
            p.current_run,
            p.evaluations,
        ]);
        v.push(p.current_evaluated as u64);
    }
    v.extend(&s.mistakes_per_epoch);
    v.extend(s.head_mistakes_per_epoch.iter().flatten());
    v.extend([s.epoch as u64, s.position as u64, s.mistakes_in_epoch]);
    v
}

fn initial<F: Real>(d: &Dataset<F>, p: &CheckedParams) -> State<F> {
    State::initial((d.cols() + p.bias as usize) * p.heads(d.classes.len()))
}

pub(crate) fn single<F: Real>(d: &Dataset<F>, p: &CheckedParams) -> crate::train::Fit<F> {
    let d = match p.shuffle_seed {
        Some(s) => d.permuted(&crate::train::shuffle::permutation(d.rows(), s)),
        None => d.clone(),
    };
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    crate::train::fit(
        &d,
        p,
        initial(&d, p),
        Box::new(CpuEngine::new(&d, p.bias)),
        &mut fb,
        &mut Silent,
    )
    .unwrap()
}

/// Rank `rank` of `k`'s block of `d` (rows cut evenly), in visit order.
pub(crate) fn block_of<F: Real>(
    d: &Dataset<F>,
    k: usize,
    rank: usize,
    seed: Option<u64>,
) -> (Dataset<F>, Placement) {
    let (lo, hi) = span(d.rows() as u64, k, rank);
    let (lo, hi) = (lo as usize, hi as usize);
    let (order, part) = block_order(d.rows(), lo, hi, seed);
    let rows: Vec<usize> = match order {
        Some(o) => o.iter().map(|&i| lo + i).collect(),
        None => (lo..hi).collect(),
    };
    (d.permuted(&rows), part)
}

/// Every rank's final state and steps when `k` ranks train `d` exactly.
pub(crate) fn distributed<F: Real>(
    d: &Dataset<F>,
    p: &CheckedParams,
    k: usize,
    start: Option<State<F>>,
) -> Vec<(State<F>, Stop, Steps)> {
    run_ranks(k, |t| {
        let net = MeteredTransport::new(t);
        let (block, part) = block_of(d, k, t.rank(), p.shuffle_seed);
        let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
        let engine = Box::new(CpuEngine::new(&block, p.bias));
        let start = start.clone().unwrap_or_else(|| initial(d, p));
        let r = train(
            &net,
            &block,
            part,
            p,
            start,
            engine,
            &mut fb,
            &mut Silent,
            &plainly,
        )
        .unwrap();
        (r.outcome.state, r.outcome.stop, r.steps)
    })
}

fn cases() -> Vec<(&'static str, bool, TrainParams)> {
    let base = TrainParams {
        max_epochs: 15,
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
                shuffle_seed: Some(5),
                ..base.clone()
            },
        ),
        (
            "breast_cancer.csv",
            false,
            TrainParams {
                variant: Variant::Pocket,
                margin: Some(Margin::parse("0.25").unwrap()),
                ..base.clone()
            },
        ),
        (
            "iris_setosa.svm",
            false,
            TrainParams {
                margin: Some(Margin::parse("1").unwrap()),
                shuffle_seed: Some(2),
                variant: Variant::Averaged,
                ..base.clone()
            },
        ),
        (
            "digits.csv",
            true,
            TrainParams {
                multiclass: true,
                max_epochs: 3,
                ..base.clone()
            },
        ),
    ]
}

fn check_all<F: Real>() {
    for (name, multiclass, params) in cases() {
        let p = params.check_ref().unwrap();
        let d = load::<F>(name, multiclass);
        let want = single(&d, &p);
        for k in 1..=4 {
            for (rank, (state, stop, _)) in distributed(&d, &p, k, None).into_iter().enumerate() {
                assert_eq!(
                    bits(&state),
                    bits(&want.state),
                    "{name} {params:?}, rank {rank} of {k}"
                );
                assert_eq!(stop, want.stop);
            }
        }
    }
}

#[test]
fn exact_mode_is_the_single_process_state_in_f32() {
    check_all::<f32>();
}

#[test]
fn exact_mode_is_the_single_process_state_in_f64() {
    check_all::<f64>();
}

/// Dense mistakes make walks cover whole blocks: few walks per epoch; a
/// clean last epoch is one scan per rank's block at most.
#[test]
fn walks_cover_blocks_when_mistakes_are_dense() {
    let p = TrainParams {
        max_epochs: 40,
        ..TrainParams::default()
    }
    .check()
    .unwrap();
    let d = load::<f32>("digits_3v5.csv", false);
    let want = single(&d, &p);
    let out = distributed(&d, &p, 3, None);
    let (state, _, steps) = &out[0];
    assert_eq!(bits(state), bits(&want.state));
    let epochs = state.mistakes_per_epoch.len() as u64;
    let mistakes: u64 = state.mistakes_per_epoch.iter().sum();
    assert!(steps.walks < mistakes, "{steps:?}, {mistakes} mistakes");
    assert!(steps.walks <= epochs * 3 + mistakes / 2, "{steps:?}");
}

/// The rows the single process updates on (its mistakes), per epoch.
fn mistake_rows<F: Real>(d: &Dataset<F>, p: &CheckedParams) -> Vec<Vec<usize>> {
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let mut st = Stepper::new(
        d,
        p,
        initial(d, p),
        Placement::whole(d.rows()),
        Box::new(CpuEngine::new(d, p.bias)),
        &mut fb,
    )
    .unwrap();
    st.log_updates();
    let mut epochs = Vec::new();
    for _ in 0..p.max_epochs {
        st.advance(d.rows(), &mut crate::train::AllRowsHere, &mut Silent)
            .unwrap();
        epochs.push(st.take_updates().into_iter().map(|(i, _)| i).collect());
        if st.finish_epoch() == 0 {
            break;
        }
    }
    epochs
}

/// On the repository's noisy datasets (dense and sparse), for every rank
/// count, the rows on both sides of some block boundary are mistakes in the
/// same epoch (a run of mistakes crosses from one rank to the next, so a
/// walk hands over mid-run), and exact mode still gives the single
/// process's state.
#[test]
fn block_boundaries_inside_runs_of_mistakes_on_real_data() {
    let p = TrainParams {
        max_epochs: 10,
        ..TrainParams::default()
    }
    .check()
    .unwrap();
    let mut crossings = std::collections::BTreeMap::new();
    for name in ["heart_scale.svm", "breast_cancer.csv", "breast_cancer.svm"] {
        let d = load::<f64>(name, false);
        let epochs = mistake_rows(&d, &p);
        let want = single(&d, &p);
        for k in 2..=4 {
            *crossings.entry(k).or_insert(0) += (1..k)
                .map(|r| span(d.rows() as u64, k, r).0 as usize)
                .map(|lo| {
                    epochs
                        .iter()
                        .filter(|m| m.contains(&(lo - 1)) && m.contains(&lo))
                        .count()
                })
                .sum::<usize>();
            let out = distributed(&d, &p, k, None);
            for (rank, (state, _, _)) in out.iter().enumerate() {
                assert_eq!(bits(state), bits(&want.state), "{name}, rank {rank} of {k}");
            }
        }
    }
    assert_eq!(crossings.len(), 3);
    for (k, c) in &crossings {
        assert!(*c > 0, "{k} ranks: no boundary inside a run");
    }
}

/// A run resumed from the middle of an epoch, on another rank count.
#[test]
fn a_mid_epoch_state_resumes_on_any_rank_count() {
    let p = TrainParams {
        max_epochs: 12,
        variant: Variant::Pocket,
        ..TrainParams::default()
    }
    .check()
    .unwrap();
    let d = load::<f64>("heart_scale.svm", false);
    let want = single(&d, &p);
    // The single-process state at epoch 3, row 100.
    let short = TrainParams {
        max_epochs: 3,
        ..(*p).clone()
    }
    .check()
    .unwrap();
    let mut mid = single(&d, &short).state;
    let mut fb = || -> Box<dyn MarginEngine<f64>> { Box::new(ReferenceEngine) };
    let mut st = Stepper::new(
        &d,
        &p,
        mid.clone(),
        Placement::whole(d.rows()),
        Box::new(CpuEngine::new(&d, true)),
        &mut fb,
    )
    .unwrap();
    st.advance(100, &mut crate::train::AllRowsHere, &mut Silent)
        .unwrap();
    mid = st.finish(Stop::Interrupted, Vec::new()).state;
    assert_eq!(mid.position, 100);
    for k in [1, 2, 4] {
        let out = distributed(&d, &p, k, Some(mid.clone()));
        assert_eq!(bits(&out[k - 1].0), bits(&want.state), "{k} ranks");
    }
}

/// A weight that overflows on one rank's walk ends every rank with the
/// single process's message.
#[test]
fn a_failure_on_one_rank_is_every_ranks_failure() {
    let p = TrainParams::default().check().unwrap();
    let mut d = load::<f32>("iris_setosa.csv", false);
    let mut fb = || -> Box<dyn MarginEngine<f32>> { Box::new(ReferenceEngine) };
    if let crate::data::Features::Dense(m) = &mut d.features {
        let v = m.values.to_mut();
        let n = v.len();
        v[n - 3] = f32::MAX;
        v[n - 7] = f32::MAX;
    }
    let want = crate::train::fit(
        &d,
        &p,
        initial(&d, &p),
        Box::new(ReferenceEngine),
        &mut fb,
        &mut Silent,
    )
    .unwrap_err()
    .to_string();
    let out = run_ranks(3, |t| {
        let net = MeteredTransport::new(t);
        let (block, part) = block_of(&d, 3, t.rank(), None);
        let mut fb = || -> Box<dyn MarginEngine<f32>> { Box::new(ReferenceEngine) };
        let engine = Box::new(CpuEngine::new(&block, true));
        train(
            &net,
            &block,
            part,
            &p,
            initial(&d, &p),
            engine,
            &mut fb,
            &mut Silent,
            &plainly,
        )
        .err()
        .unwrap()
    });
    for f in out {
        assert_eq!(f.rank, 2);
        assert_eq!(f.message, want);
    }
}
