//! The certificate against the worst device WGSL allows: every operation
//! faithfully rounded in whichever direction hurts most, subnormal results
//! flushed to zero, fused multiply-adds, and any summation order.
//!
//! A real adapter's arithmetic cannot be chosen in CI (lavapipe sums a row
//! in the reference order and rounds to nearest), so this file emulates the
//! hostile device on the CPU with exact directed rounding: error-free
//! transformations (TwoSum, and TwoProduct through a true fused multiply-add)
//! tell on which side of the exact result a rounded value lies, and the
//! result is moved to the other neighbour when that hurts more. The bound
//! must hold for all of it, the training loop fed by such a device must
//! still return the textbook model bit for bit, and a bound made too small
//! must be caught.

use crate::common::{self, Rng, random_dense, random_sparse, textbook};
use perceptron::Real;
use perceptron::data::{Dataset, Row};
use perceptron::engine::certify::Bound;
use perceptron::engine::certify::needs_host;
use perceptron::engine::reference;
use perceptron::engine::{Completed, EngineError, EngineStats, MarginEngine, Pass};
use perceptron::train::{self, PassPolicy, ReferenceEngine, Silent, State, TrainParams};

/// What the emulation needs beyond [`Real`]: a true fused multiply-add and
/// the neighbours of a number.
trait Exact: Real {
    fn fused(a: Self, b: Self, c: Self) -> Self;
    fn up(self) -> Self;
    fn down(self) -> Self;
}

impl Exact for f32 {
    fn fused(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    fn up(self) -> f32 {
        self.next_up()
    }
    fn down(self) -> f32 {
        self.next_down()
    }
}

impl Exact for f64 {
    fn fused(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    fn up(self) -> f64 {
        self.next_up()
    }
    fn down(self) -> f64 {
        self.next_down()
    }
}

/// The device's choices for one evaluation.
#[derive(Clone, Copy, Debug)]
struct Device {
    /// Round every operation of ŝ up (true) or down.
    s_up: bool,
    /// Flush subnormal results to zero.
    ftz: bool,
    /// How the terms are combined.
    order: Order,
}

#[derive(Clone, Copy, Debug)]
enum Order {
    /// Reversed, accumulated with fused multiply-adds.
    FusedReverse,
    /// Products first, then a pairwise tree of additions.
    Pairwise,
    /// 32 strided lanes, then a tree over the lanes (the GPU kernels' shape).
    Lanes,
}

impl Device {
    fn flush<F: Exact>(&self, v: F) -> F {
        if self.ftz && v.is_subnormal() {
            F::ZERO
        } else {
            v
        }
    }

    /// Moves a round-to-nearest result to its other neighbour when the exact
    /// value lies on that side and the direction asks for it: still within
    /// one ulp of the exact value, so still "correctly rounded" in WGSL's
    /// sense. Subnormal results are left alone (the error terms are not exact
    /// there) and then flushed or not.
    fn directed<F: Exact>(&self, r: F, err: F, up: bool) -> F {
        let r = if r.is_subnormal() || !r.is_finite() {
            r
        } else if up && err > F::ZERO {
            r.up()
        } else if !up && err < F::ZERO {
            r.down()
        } else {
            r
        };
        self.flush(r)
    }

    fn mul<F: Exact>(&self, a: F, b: F, up: bool) -> F {
        let p = a * b;
        self.directed(p, F::fused(a, b, -p), up)
    }

    fn add<F: Exact>(&self, a: F, b: F, up: bool) -> F {
        let s = a + b;
        let bb = s - a;
        let err = (a - (s - bb)) + (b - bb);
        self.directed(s, err, up)
    }

    /// (ŝ, t̂) of `terms` (pairs w_k, x_k), t̂ always rounded down.
    fn dot<F: Exact>(&self, terms: &[(F, F)]) -> (F, F) {
        let terms: Vec<(F, F)> = terms
            .iter()
            .map(|&(w, x)| (self.flush(w), self.flush(x)))
            .collect();
        match self.order {
            Order::FusedReverse => {
                let (mut s, mut t) = (F::ZERO, F::ZERO);
                for &(w, x) in terms.iter().rev() {
                    s = self.flush(F::fused(w, x, s));
                    t = self.flush(F::fused(w.abs(), x.abs(), t));
                }
                (s, t)
            }
            Order::Pairwise => {
                let s: Vec<F> = terms
                    .iter()
                    .map(|&(w, x)| self.mul(w, x, self.s_up))
                    .collect();
                let t: Vec<F> = terms
                    .iter()
                    .map(|&(w, x)| self.mul(w.abs(), x.abs(), false))
                    .collect();
                (self.tree(s, self.s_up), self.tree(t, false))
            }
            Order::Lanes => {
                let lanes = 32;
                let mut s = vec![F::ZERO; lanes];
                let mut t = vec![F::ZERO; lanes];
                for (k, &(w, x)) in terms.iter().enumerate() {
                    let l = k % lanes;
                    s[l] = self.add(s[l], self.mul(w, x, self.s_up), self.s_up);
                    t[l] = self.add(t[l], self.mul(w.abs(), x.abs(), false), false);
                }
                (self.tree(s, self.s_up), self.tree(t, false))
            }
        }
    }

    fn tree<F: Exact>(&self, mut v: Vec<F>, up: bool) -> F {
        if v.is_empty() {
            return F::ZERO;
        }
        while v.len() > 1 {
            let next = v
                .chunks(2)
                .map(|c| {
                    if c.len() == 2 {
                        self.add(c[0], c[1], up)
                    } else {
                        c[0]
                    }
                })
                .collect();
            v = next;
        }
        v[0]
    }
}

/// The augmented terms (w_k, x_k) of a row, the bias last.
fn terms<F: Real>(w: &[F], row: Row<'_, F>, bias: bool) -> Vec<(F, F)> {
    let mut t = Vec::new();
    row.for_each(|k, v| t.push((w[k], v)));
    if bias {
        t.push((w[w.len() - 1], F::ONE));
    }
    t
}

/// The hostile device's (ŝ, t̂) for a row: rounding pushes ŝ towards the
/// wrong decision (up for a row the reference finds a mistake, down for a
/// correct one) and t̂ down, so that the certificate is as weak as the
/// model allows.
fn hostile<F: Exact>(w: &[F], row: Row<'_, F>, bias: bool, y: i8, order: Order) -> (F, F) {
    let s_ref = reference::dot(w, row, bias);
    let mistake = reference::is_mistake(y, s_ref);
    let device = Device {
        s_up: mistake == (y > 0),
        ftz: true,
        order,
    };
    device.dot(&terms(w, row, bias))
}

/// An engine computing certified slacks on the hostile device.
struct HostileEngine<'d, F: Real> {
    data: &'d Dataset<F>,
    bias: bool,
    done: Completed,
    passes: u64,
    turn: usize,
}

impl<F: Exact> MarginEngine<F> for HostileEngine<'_, F> {
    fn name(&self) -> String {
        "hostile device".into()
    }
    fn preferred_window(&self, rate: f64) -> usize {
        ((64.0 / rate.max(1e-9)) as usize).clamp(64, 4096)
    }
    fn submit(&mut self, pass: &Pass<'_, F>) -> Result<(), EngineError> {
        let facts = self.data.facts(self.bias);
        let bound = Bound::<F>::for_weights(pass.weights, facts.l1_max).with_margin(pass.tau);
        let mut out = self.done.buffer(pass.slots());
        self.turn += 1;
        let order = [Order::FusedReverse, Order::Pairwise, Order::Lanes][self.turn % 3];
        for (j, r) in out.iter_mut().enumerate() {
            let i = pass.start + j;
            let row = self.data.features.row(i);
            let y = self.data.labels[i];
            let (s, t) = hostile(pass.weights, row, self.bias, y, order);
            let m = F::from_f64((row.stored() + self.bias as usize) as f64);
            *r = bound.slack(y, s, t, m, F::from_f64(facts.norms[i] as f64));
        }
        self.done.push(out);
        self.passes += 1;
        Ok(())
    }
    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        self.done.pop_into(slack)
    }
    fn stats(&self) -> EngineStats {
        EngineStats {
            passes: self.passes,
            ..Default::default()
        }
    }
}

/// Rows built so that margins fall within a few ulps of zero: cancellation
/// of huge and tiny values, values near 1 ± ulp, subnormal weights through
/// tiny features, duplicate rows with opposite labels, zero rows.
fn adversarial<F: Real>(rng: &mut Rng, rows: usize, cols: usize) -> Dataset<F> {
    let mut values = Vec::with_capacity(rows * cols);
    let mut labels = Vec::with_capacity(rows);
    let ulp = F::UNIT_ROUNDOFF * 2.0;
    while labels.len() < rows {
        let kind = rng.below(6);
        let y = if rng.unit() < 0.5 { 1 } else { -1 };
        let mut row: Vec<f64> = (0..cols).map(|_| rng.unit() - 0.5).collect();
        match kind {
            0 => {
                let big = 10f64.powi(rng.below(8) as i32);
                row[0] = big;
                if cols > 1 {
                    row[cols - 1] = -big;
                }
            }
            1 => row
                .iter_mut()
                .for_each(|v| *v = 1.0 + (rng.below(5) as f64 - 2.0) * ulp),
            2 => row.iter_mut().for_each(|v| *v *= F::MIN_NORMAL * 1e3),
            3 => row.iter_mut().for_each(|v| *v = 0.0),
            _ => {}
        }
        values.extend(row.iter().map(|&v| F::from_f64(v)));
        labels.push(y);
        if kind == 4 && labels.len() < rows {
            values.extend(row.iter().map(|&v| F::from_f64(v)));
            labels.push(-y);
        }
    }
    common::dense_dataset(cols, values, labels)
}

/// Weights from a short textbook run, so margins are those of training.
fn trained<F: Real>(data: &Dataset<F>, bias: bool) -> Vec<F> {
    textbook(data, bias, 2).0
}

/// The largest |ŝ - s_ref| / E seen over many rows, weights and orders.
fn worst_ratio<F: Exact>(scale_rel: f64) -> (f64, usize) {
    let mut rng = Rng(0xbad_de71ce);
    let (mut worst, mut violations) = (0.0f64, 0usize);
    for case in 0..60 {
        let cols = [1, 2, 7, 64, 300, 2000][case % 6];
        let data = if case % 2 == 0 {
            adversarial::<F>(&mut rng, 200, cols)
        } else {
            random_dense::<F>(&mut rng, 200, cols, 0.1)
        };
        let bias = case % 3 != 0;
        let mut w = trained(&data, bias);
        if case % 5 == 0 {
            // Positive products only: directed rounding then errs one way on
            // every operation, the worst case for a sum.
            w.iter_mut().for_each(|v| *v = v.abs());
        }
        let facts = data.facts(bias);
        let mut bound = Bound::<F>::for_weights(&w, facts.l1_max);
        bound.rel = F::from_f64(bound.rel.to_f64() * scale_rel);
        for i in 0..data.rows() {
            let row = data.features.row(i);
            if needs_host(row, bias) {
                // A subnormal feature may be flushed, dropping its whole term:
                // the loop never lets a device settle such a row.
                continue;
            }
            let s_ref = reference::dot(&w, row, bias).to_f64();
            let m = F::from_f64((row.stored() + bias as usize) as f64);
            for order in [Order::FusedReverse, Order::Pairwise, Order::Lanes] {
                for y in [-1i8, 1] {
                    let (s, t) = hostile(&w, row, bias, y, order);
                    let e = bound.of(m, t).to_f64();
                    let gap = (s.to_f64() - s_ref).abs();
                    if gap > 0.0 {
                        worst = worst.max(gap / e);
                    }
                    if gap > e {
                        violations += 1;
                        eprintln!(
                            "violation: case {case} row {i} {order:?} y {y}: s {s:?} t {t:?} s_ref {s_ref} e {e}"
                        );
                    }
                }
            }
        }
    }
    (worst, violations)
}

#[test]
fn the_bound_covers_the_worst_device_with_room_to_spare() {
    let (worst32, v32) = worst_ratio::<f32>(1.0);
    let (worst64, v64) = worst_ratio::<f64>(1.0);
    assert_eq!(
        (v32, v64),
        (0, 0),
        "worst |s^ - s_ref| / E: {worst32} (f32), {worst64} (f64)"
    );
    // Directed rounding of every operation reaches about 2·m·u·t̂, 40% of
    // the bound: the bound is not vacuous, and its margin is real.
    assert!(worst32 < 0.6 && worst64 < 0.6, "{worst32} {worst64}");
    assert!(worst32 > 0.2 && worst64 > 0.2, "{worst32} {worst64}");
}

#[test]
fn a_bound_five_times_too_small_is_caught() {
    // REL = u instead of 5u: what a round-to-nearest-only analysis of the
    // device alone would give. The hostile device breaks it.
    let (worst32, v32) = worst_ratio::<f32>(0.2);
    let (worst64, v64) = worst_ratio::<f64>(0.2);
    assert!(v32 > 0 && v64 > 0, "{worst32} {worst64}");
}

fn check_training<F: Exact>(data: &Dataset<F>, bias: bool, epochs: usize) -> train::Fit<F> {
    let (w, mistakes) = textbook(data, bias, epochs);
    let params = TrainParams {
        max_epochs: epochs,
        bias,
        passes: PassPolicy::Always,
        ..Default::default()
    };
    let engine = HostileEngine {
        data,
        bias,
        done: Completed::default(),
        passes: 0,
        turn: 0,
    };
    let mut fb = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    let dim = data.cols() + bias as usize;
    let fit = train::fit(
        data,
        &params.check_ref().unwrap(),
        State::initial(dim),
        Box::new(engine),
        &mut fb,
        &mut Silent,
    )
    .unwrap();
    let bits = |v: &[F]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
    assert_eq!(fit.mistakes_per_epoch, mistakes, "{}", F::PRECISION);
    assert_eq!(bits(&fit.weights), bits(&w), "{}", F::PRECISION);
    fit
}

#[test]
fn training_on_the_worst_device_gives_the_textbook_model() {
    let mut rng = Rng(0x5eed);
    let (mut settled, mut host) = (0u64, 0u64);
    for case in 0..12 {
        let bias = case % 4 != 3;
        let cols = [1, 3, 16, 120][case % 4];
        let d32 = adversarial::<f32>(&mut rng, 1500, cols);
        let d64 = adversarial::<f64>(&mut rng, 1500, cols);
        let fit = check_training(&d32, bias, 6);
        settled += fit.loop_stats.certified_correct + fit.loop_stats.certified_mistakes;
        host += fit.loop_stats.host_dots;
        let fit = check_training(&d64, bias, 6);
        settled += fit.loop_stats.certified_correct + fit.loop_stats.certified_mistakes;
        host += fit.loop_stats.host_dots;
        let r = random_dense::<f32>(&mut rng, 2000, cols, 0.05);
        check_training(&r, bias, 5);
        let sp = random_sparse::<f32>(&mut rng, 2000, 300, 1 + cols % 40, 0.05);
        check_training(&sp, bias, 5);
    }
    // Both the device's certificates and the host's reference dots decided
    // many rows: the hostile device was trusted where its bound allowed.
    assert!(
        settled > 10_000 && host > 1_000,
        "settled {settled}, host {host}"
    );
}
