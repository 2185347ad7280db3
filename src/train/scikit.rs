//! scikit-learn's `Perceptron()` schedule, reproduced bit for bit: the rows
//! reshuffled before every epoch, each one-vs-rest class trained and
//! stopped on its own with its own seed.
//!
//! # The order (`--shuffle every-epoch --seed S`)
//! scikit-learn 1.9's SGD keeps an index array, identity at the start, and
//! before every epoch permutes it in place with the same seed s: for
//! i = 0..n-2, j = i + r % (n - i), swap(i, j), where r comes from a 32-bit
//! xorshift (13, 17, 5) started at s (1 if s = 0) and taken modulo 2^31
//! (`sklearn/utils/_seq_dataset.pyx.tp`, `_random.pxd`). So epoch e visits
//! the rows in that permutation applied e times.
//!
//! The seed s of a perceptron comes from `random_state` through NumPy's
//! legacy `RandomState`: a binary model draws `randint(1, 2^31-1)` (the
//! dataset's seed, unused here) and then s = `randint(2^31-1)`. A
//! one-vs-rest model first draws one seed per class, `randint(2^31-1,
//! size=K)`, and class h's perceptron then draws as a binary one from
//! `RandomState(seed_h)`. [`Mt19937`] is that generator (Matsumoto and
//! Nishimura's MT19937 with NumPy's seeding and its masked rejection for
//! bounded integers).
//!
//! # One-vs-rest
//! scikit-learn trains each class's perceptron alone, with its own order and
//! its own stopping rule, and reports the largest epoch count. So does this
//! schedule, when the order changes every epoch or the rule judges the mean
//! loss (which is per perceptron).
//!
//! # The epoch count
//! scikit-learn does not stop at an epoch without a mistake: it runs until
//! its rule stops it, or `max_iter`. Nothing changes after such an epoch
//! (every row is right, so every later epoch is too, in any order, with
//! loss 0), so the loop stops there and [`Fit::nominal_epochs`] counts the
//! epochs scikit-learn's loop would have run.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::data::Dataset;
use crate::data::labels::LabelMap;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::class_weight::ClassWeights;
use crate::train::early_stop::EarlyStop;
use crate::train::fit::Fit;
use crate::train::params::TrainParams;
use crate::train::state::{LoopStats, Observer, Outcome, State, Stop};
use crate::train::theory;
use crate::train::trainer::Trainer;

/// NumPy's `np.iinfo(np.int32).max`, the bound of scikit-learn's seeds.
const MAX_INT: u32 = i32::MAX as u32;

/// How the rows are reshuffled before every epoch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum EveryEpoch {
    /// scikit-learn's `random_state=S` (an int): the seeds follow from it.
    RandomState(u32),
    /// The xorshift seed of each perceptron (one per one-vs-rest class), as
    /// a caller drew them from its own generator.
    Seeds(Vec<u32>),
}

impl EveryEpoch {
    /// The xorshift seed of each of `heads` perceptrons (see the module
    /// documentation).
    pub fn seeds(&self, heads: usize) -> Result<Vec<u32>> {
        match self {
            EveryEpoch::RandomState(s) => Ok(seeds_from_random_state(*s, heads)),
            EveryEpoch::Seeds(seeds) if seeds.len() == heads => Ok(seeds.clone()),
            EveryEpoch::Seeds(seeds) => Err(Error::Usage(format!(
                "the every-epoch shuffle has {} seed(s) for {heads} perceptron(s)",
                seeds.len()
            ))),
        }
    }
}

/// The seeds scikit-learn's `Perceptron(random_state=state)` shuffles its
/// `heads` perceptrons with (1 for a binary model).
pub fn seeds_from_random_state(state: u32, heads: usize) -> Vec<u32> {
    let of_binary = |state: u32| {
        let mut rng = Mt19937::new(state);
        rng.below(1, MAX_INT); // the dataset's own seed
        rng.below(0, MAX_INT)
    };
    if heads == 1 {
        return vec![of_binary(state)];
    }
    let mut rng = Mt19937::new(state);
    let per_class: Vec<u32> = (0..heads).map(|_| rng.below(0, MAX_INT)).collect();
    per_class.into_iter().map(of_binary).collect()
}

/// MT19937 as NumPy's legacy `RandomState(seed)` runs it.
pub struct Mt19937 {
    state: [u32; 624],
    next: usize,
}

impl Mt19937 {
    /// `RandomState(seed)` for an int seed (Knuth's initialisation).
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; 624];
        state[0] = seed;
        for i in 1..624 {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { state, next: 624 }
    }

    pub fn next_u32(&mut self) -> u32 {
        if self.next >= 624 {
            for i in 0..624 {
                let y = (self.state[i] & 0x8000_0000) | (self.state[(i + 1) % 624] & 0x7fff_ffff);
                let mut v = self.state[(i + 397) % 624] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                self.state[i] = v;
            }
            self.next = 0;
        }
        let mut y = self.state[self.next];
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `randint(low, high)` (high > low + 1): draws masked to the smallest
    /// 2^k - 1 covering high - low - 1, rejected above it.
    pub fn below(&mut self, low: u32, high: u32) -> u32 {
        let range = high - low - 1;
        let mask = u32::MAX >> range.leading_zeros();
        loop {
            let v = self.next_u32() & mask;
            if v <= range {
                return low + v;
            }
        }
    }
}

/// scikit-learn's `our_rand_r`: a 32-bit xorshift, taken modulo 2^31.
#[inline]
pub fn xorshift(seed: &mut u32) -> u32 {
    if *seed == 0 {
        *seed = 1;
    }
    *seed ^= *seed << 13;
    *seed ^= *seed >> 17;
    *seed ^= *seed << 5;
    *seed % (MAX_INT + 1)
}

/// One epoch's reshuffle of `order` in place (scikit-learn's
/// `SequentialDataset.shuffle(seed)`).
pub fn reshuffle(order: &mut [usize], seed: u32) {
    let n = order.len();
    let mut s = seed;
    for i in 0..n.saturating_sub(1) {
        let j = i + xorshift(&mut s) as usize % (n - i);
        order.swap(i, j);
    }
}

/// Whether `params` need this schedule rather than one run of the loop:
/// an order that changes every epoch, or a mean-loss rule over several
/// perceptrons (each judged alone).
pub fn applies(params: &TrainParams, heads: usize) -> bool {
    let per_head_rule = params.early_stop.as_ref().is_some_and(|e| {
        e.validation.is_none() && e.judge == crate::train::early_stop::Judge::MeanLoss
    });
    params.shuffle_every_epoch.is_some() || (per_head_rule && heads > 1)
}

/// Trains with the schedule: each perceptron alone, epoch by epoch.
pub(super) fn fit<F: Real>(
    trainer: &Trainer,
    data: &Dataset<F>,
    validation: Option<&Dataset<F>>,
    start: State<F>,
    observer: &mut dyn Observer<F>,
) -> Result<Fit<F>> {
    let params = trainer.params();
    let heads = params.heads(data.classes.len());
    let seeds = match &params.shuffle_every_epoch {
        Some(e) => Some(e.seeds(heads)?),
        None => None,
    };
    let seed = |h: usize| seeds.as_ref().map(|s| s[h]);
    if heads == 1 {
        return fit_alone(trainer, data, validation, start, seed(0), observer);
    }
    let t0 = Instant::now();
    let resolved = params
        .class_weight
        .as_ref()
        .map(|w| w.resolve(data, heads))
        .transpose()?;
    let dim = data.cols() + params.bias as usize;
    let mut fits = Vec::with_capacity(heads);
    for h in 0..heads {
        let head_data = one_vs_rest(data, h);
        let head_validation = validation.map(|v| one_vs_rest(v, h));
        let class_weight = resolved.as_ref().map(|c| {
            // Class h's rows update with c_h, the rest with 1.
            let c = c.of(h, 1).to_f64();
            ClassWeights::Given(vec![(data.classes[h].text.clone(), format!("{c:?}"))])
        });
        let head_trainer = trainer.with_params(TrainParams {
            multiclass: false,
            class_weight,
            ..(**params).clone()
        })?;
        let head_start = State::starting_from(start.weights[h * dim..(h + 1) * dim].to_vec());
        let fit = fit_alone(
            &head_trainer,
            &head_data,
            head_validation.as_ref(),
            head_start,
            seed(h),
            observer,
        )?;
        let interrupted = fit.stop == Stop::Interrupted;
        fits.push(fit);
        if interrupted {
            break;
        }
    }
    Ok(combine(
        params,
        data,
        fits,
        heads,
        resolved.map(|c| c.labels),
        t0,
    ))
}

/// One perceptron (binary data) trained epoch by epoch, its rows in the
/// order `seed` gives each epoch (file order without one).
fn fit_alone<F: Real>(
    trainer: &Trainer,
    data: &Dataset<F>,
    validation: Option<&Dataset<F>>,
    mut state: State<F>,
    seed: Option<u32>,
    observer: &mut dyn Observer<F>,
) -> Result<Fit<F>> {
    let params = trainer.params();
    let max = params.max_epochs;
    let Some(seed) = seed else {
        // File order every epoch: one run of the loop.
        let mut fit = trainer.fit_epochs(data, validation, state, observer)?;
        fit.nominal_epochs = Some(nominal_epochs(params.early_stop.as_ref(), &fit, max));
        return Ok(fit);
    };
    let t0 = Instant::now();
    let mut order: Vec<usize> = (0..data.rows()).collect();
    // A resumed run's order has been reshuffled once per epoch done.
    for _ in 0..state.mistakes_per_epoch.len() {
        reshuffle(&mut order, seed);
    }
    let mut past = Past::default();
    let mut engine_started = 0.0;
    // The facts of the rows (norms, host-only rows) move with each order
    // instead of being computed again.
    data.facts(params.bias);
    let mut spare = None;
    loop {
        let done = state.mistakes_per_epoch.len();
        reshuffle(&mut order, seed);
        let shuffled = data.permuted_into(&order, spare.take());
        let one_more = trainer.with_params(TrainParams {
            max_epochs: done + 1,
            shuffle_every_epoch: None,
            // Each row's weight moves with it.
            sample_weight: params
                .sample_weight
                .as_ref()
                .map(|w| order.iter().map(|&i| w[i]).collect()),
            ..(**params).clone()
        })?;
        let (mut out, note, started) =
            one_more.run_epochs(&shuffled, validation, state, observer)?;
        engine_started += started;
        past.add(&mut out);
        spare = Some(shuffled);
        if out.stop != Stop::MaxEpochs || out.state.mistakes_per_epoch.len() >= max {
            let out = past.into(out);
            let seconds = t0.elapsed().as_secs_f64() - engine_started;
            let mut fit = Fit::of_run(out, params, data, validation.map(|v| v.rows()), seconds);
            fit.backend_note = note;
            fit.engine_start_seconds = engine_started;
            fit.nominal_epochs = Some(nominal_epochs(params.early_stop.as_ref(), &fit, max));
            return Ok(fit);
        }
        state = out.state;
    }
}

/// What the earlier one-epoch runs of a perceptron did, carried into the
/// last one's outcome.
#[derive(Default)]
struct Past {
    epoch_seconds: Vec<f64>,
    epoch_modes: Vec<crate::train::EpochModes>,
    engines: Vec<String>,
    stats: LoopStats,
}

impl Past {
    fn add<F>(&mut self, out: &mut Outcome<F>) {
        self.epoch_seconds.append(&mut out.epoch_seconds);
        self.epoch_modes.append(&mut out.epoch_modes);
        for e in out.engines.drain(..) {
            if self.engines.last() != Some(&e) {
                self.engines.push(e);
            }
        }
        self.stats.add(&out.stats);
    }

    fn into<F>(self, mut out: Outcome<F>) -> Outcome<F> {
        out.epoch_seconds = self.epoch_seconds;
        out.epoch_modes = self.epoch_modes;
        out.engines = self.engines;
        out.stats = self.stats;
        out
    }
}

/// The epochs scikit-learn's loop runs for this fit: as many as ran, and
/// after an epoch without a mistake, the epochs its rule (or `max`) would
/// still have run, each scored as that epoch was (loss 0, no mistake, the
/// same held-out accuracy).
pub fn nominal_epochs<F>(rule: Option<&EarlyStop>, fit: &Fit<F>, max: usize) -> usize {
    let ran = fit.mistakes_per_epoch.len();
    if fit.stop != Stop::Converged {
        return ran;
    }
    let Some(rule) = rule else {
        return max;
    };
    let mut scores = fit
        .state
        .early
        .as_ref()
        .map(|e| e.scores.clone())
        .unwrap_or_default();
    let again = if rule.validation.is_some() {
        scores.last().copied().unwrap_or(0.0)
    } else {
        -0.0
    };
    while scores.len() < max && !rule.stops(&scores) {
        scores.push(again);
    }
    scores.len().max(ran)
}

/// Class `h`'s binary problem: its rows +1, the rest -1.
fn one_vs_rest<F: Real>(data: &Dataset<F>, h: usize) -> Dataset<F> {
    Dataset {
        features: data.features.clone(),
        labels: data
            .class_ids
            .iter()
            .map(|&c| if c as usize == h { 1 } else { -1 })
            .collect(),
        label_map: LabelMap {
            positive: data.classes[h].text.clone(),
            negative: None,
        },
        classes: data.classes.clone(),
        class_ids: data.class_ids.clone(),
        source: data.source.clone(),
        format: data.format,
        facts: Default::default(),
    }
}

/// The one-vs-rest fit of the perceptrons trained alone, head after head.
fn combine<F: Real>(
    params: &TrainParams,
    data: &Dataset<F>,
    fits: Vec<Fit<F>>,
    heads: usize,
    class_weights: Option<Vec<(String, f64)>>,
    t0: Instant,
) -> Fit<F> {
    let epochs = fits
        .iter()
        .map(|f| f.mistakes_per_epoch.len())
        .max()
        .unwrap_or(0);
    let per_head = |e: usize| -> Vec<u64> {
        (0..heads)
            .map(|h| {
                fits.get(h)
                    .and_then(|f| f.mistakes_per_epoch.get(e))
                    .copied()
                    .unwrap_or(0)
            })
            .collect()
    };
    let head_mistakes_per_epoch: Vec<Vec<u64>> = (0..epochs).map(per_head).collect();
    let mistakes_per_epoch = head_mistakes_per_epoch
        .iter()
        .map(|m| m.iter().sum())
        .collect();
    let concat = |of: &dyn Fn(&Fit<F>) -> &[F]| -> Vec<F> {
        fits.iter().flat_map(|f| of(f).to_vec()).collect()
    };
    let weights = concat(&|f| &f.weights);
    let last_weights = concat(&|f| &f.last_weights);
    let stops: Vec<Stop> = fits.iter().map(|f| f.stop).collect();
    let stop = if stops.contains(&Stop::Interrupted) {
        Stop::Interrupted
    } else if stops.iter().all(|s| *s == Stop::Converged) {
        Stop::Converged
    } else if stops.contains(&Stop::MaxEpochs) {
        Stop::MaxEpochs
    } else {
        Stop::EarlyStopped
    };
    let mut state = State::starting_from(last_weights.clone());
    state.epoch = epochs;
    state.mistakes_per_epoch = mistakes_per_epoch;
    state.head_mistakes_per_epoch = head_mistakes_per_epoch;
    state.head_mistakes_in_epoch = vec![0; heads];
    let head_theory = fits.iter().map(|f| f.theory.clone()).collect();
    let tau = params.margin.as_ref().map_or(0.0, |m| m.value::<f64>());
    let theory = theory::analyse_ovr(data, &weights, params.bias, heads).with_margin(tau);
    let mut engines: Vec<String> = Vec::new();
    let mut loop_stats = LoopStats::default();
    let (mut epoch_seconds, mut epoch_modes) = (Vec::new(), Vec::new());
    for f in &fits {
        for e in &f.engines {
            if !engines.contains(e) {
                engines.push(e.clone());
            }
        }
        loop_stats.add(&f.loop_stats);
        epoch_seconds.extend_from_slice(&f.epoch_seconds);
        epoch_modes.extend_from_slice(&f.epoch_modes);
    }
    let early_stopping = params
        .early_stop
        .as_ref()
        .map(|rule| crate::train::EarlyStopReport {
            tol: rule.tol,
            n_iter_no_change: rule.n_iter_no_change,
            validation_fraction: rule.validation.map(|v| v.fraction),
            validation_rows: None,
            validation_accuracy: Vec::new(),
            mistake_rate: Vec::new(),
            mean_loss: Vec::new(),
            best_epoch: None,
            stopped: stops.contains(&Stop::EarlyStopped),
        });
    let nominal_epochs = fits.iter().filter_map(|f| f.nominal_epochs).max();
    let engine_start_seconds: f64 = fits.iter().map(|f| f.engine_start_seconds).sum();
    let first = fits.into_iter().next();
    Fit {
        weights,
        bias: params.bias,
        stop,
        engines,
        loop_stats,
        engine_stats: first
            .as_ref()
            .map(|f| f.engine_stats.clone())
            .unwrap_or_default(),
        theory,
        seconds: t0.elapsed().as_secs_f64() - engine_start_seconds,
        engine_start_seconds,
        epoch_seconds,
        epoch_modes,
        variant: params.variant,
        last_weights,
        pocket: None,
        head_theory,
        backend_note: first.and_then(|f| f.backend_note),
        class_weights,
        early_stopping,
        mistakes_per_epoch: state.mistakes_per_epoch.clone(),
        state,
        nominal_epochs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_numpys() {
        // np.random.RandomState(s): randint(1, 2**31-1), then randint(2**31-1),
        // and for 3 classes randint(2**31-1, size=3) from RandomState(0).
        let mut r = Mt19937::new(0);
        assert_eq!(
            (r.below(1, MAX_INT), r.below(0, MAX_INT)),
            (209652397, 398764591)
        );
        let mut r = Mt19937::new(42);
        assert_eq!(
            (r.below(1, MAX_INT), r.below(0, MAX_INT)),
            (1608637543, 1273642419)
        );
        let mut r = Mt19937::new(u32::MAX);
        assert_eq!(
            (r.below(1, MAX_INT), r.below(0, MAX_INT)),
            (419326372, 479346978)
        );
        assert_eq!(seeds_from_random_state(0, 1), vec![398764591]);
    }

    #[test]
    fn the_reshuffle_is_fisher_yates_on_xorshift() {
        let mut order: Vec<usize> = (0..5).collect();
        let mut s = 7u32;
        let draws: Vec<u32> = (0..4).map(|_| xorshift(&mut s)).collect();
        let mut expected: Vec<usize> = (0..5).collect();
        for (i, r) in draws.iter().enumerate() {
            expected.swap(i, i + *r as usize % (5 - i));
        }
        reshuffle(&mut order, 7);
        assert_eq!(order, expected);
        // Seed 0 is seed 1.
        let (mut a, mut b): (Vec<usize>, Vec<usize>) = ((0..9).collect(), (0..9).collect());
        reshuffle(&mut a, 0);
        reshuffle(&mut b, 1);
        assert_eq!(a, b);
    }
}
