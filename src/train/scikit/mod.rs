//! scikit-learn's `Perceptron()` schedule, reproduced bit for bit: the rows
//! reshuffled before every epoch, each one-vs-rest class trained and
//! stopped on its own with its own seed.
//!
//! # The order
//! [`order`]: scikit-learn's reshuffle before every epoch, and the seeds of
//! each perceptron drawn from `random_state`; `visit`: how each epoch's
//! order reaches the loop (in place on the host, as a copy for a device).
//!
//! # One-vs-rest
//! scikit-learn trains each class's perceptron alone, with its own order and
//! its own stopping rule, and reports the largest epoch count. So does this
//! schedule, when the order changes every epoch or the rule judges the mean
//! loss (which is per perceptron).
//!
//! # Held-out rows (`early_stopping=True`)
//! scikit-learn's early stopping holds a stratified fraction of the rows
//! out of training (`_make_validation_split`; the caller computes that
//! split and gives its rows, [`TrainParams::held_out`]). Its loop still
//! reshuffles all the rows every epoch and skips the held-out ones where
//! they fall, so the rows trained on are visited in the reshuffled order
//! with those rows left out; after every epoch each perceptron is judged
//! on its own binary accuracy on the held-out rows (its class +1, the rest
//! -1, weighted by their `sample_weight`), and the model is the last
//! epoch's weights ([`crate::train::early_stop::Keep::Last`]). A
//! one-vs-rest model holds out the same rows in every perceptron.
//!
//! # The epoch count
//! scikit-learn does not stop at an epoch without a mistake: it runs until
//! its rule stops it, or `max_iter`. Nothing changes after such an epoch
//! (every row is right, so every later epoch is too, in any order, with
//! loss 0), so the loop stops there and [`Fit::nominal_epochs`] counts the
//! epochs scikit-learn's loop would have run.

pub mod order;
mod side_by_side;
mod visit;

pub use order::{EveryEpoch, Mt19937, reshuffle, seeds_from_random_state, xorshift};

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use crate::data::Dataset;
use crate::data::labels::LabelMap;
use crate::engine::backend::Backend;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::train::class_weight::ClassWeights;
use crate::train::early_stop::EarlyStop;
use crate::train::epochs::EpochRunner;
use crate::train::fit::Fit;
use crate::train::params::TrainParams;
use crate::train::state::{LoopStats, Observer, Outcome, State, Stop};
use crate::train::theory;
use visit::EpochRows;

/// Whether `params` need this schedule rather than one run of the loop:
/// an order that changes every epoch, a mean-loss rule over several
/// perceptrons (each judged alone), or rows held out of training.
pub fn applies(params: &TrainParams, heads: usize) -> bool {
    let per_head_rule = params.early_stop.as_ref().is_some_and(|e| {
        e.validation.is_none() && e.judge == crate::train::early_stop::Judge::MeanLoss
    });
    params.shuffle_every_epoch.is_some()
        || (per_head_rule && heads > 1)
        || params.held_out.is_some()
}

/// The rows held out of training ([`TrainParams::held_out`]).
struct Holdout<F> {
    /// The validation part: the held-out rows, in the data's order.
    part: Dataset<F>,
    /// Their `sample_weight`, in the same order.
    weight: Option<Arc<[f64]>>,
    /// Whether each row of the data is held out.
    skipped: Vec<bool>,
}

impl<F: Real> Holdout<F> {
    /// The held-out `rows` of `data` (checked against it), weighted by
    /// `sample_weight` when given.
    fn of(data: &Dataset<F>, rows: &[usize], sample_weight: Option<&[f64]>) -> Result<Self> {
        let n = data.rows();
        if let Some(w) = sample_weight
            && w.len() != n
        {
            return Err(Error::Usage(format!(
                "sample_weight has {} values for {n} rows",
                w.len()
            )));
        }
        if let Some(&last) = rows.iter().max()
            && last >= n
        {
            return Err(Error::Usage(format!(
                "held-out row {last} is not a row of the data ({n} rows)"
            )));
        }
        if rows.is_empty() || rows.len() >= n {
            return Err(Error::Usage(format!(
                "holding out {} of {n} rows leaves {}: both the rows trained on and \
                 the held-out rows must be at least one",
                rows.len(),
                if rows.is_empty() {
                    "nothing to judge on"
                } else {
                    "nothing to train on"
                }
            )));
        }
        let mut skipped = vec![false; n];
        for &i in rows {
            skipped[i] = true;
        }
        Ok(Holdout {
            part: data.permuted(rows),
            weight: sample_weight.map(|w| rows.iter().map(|&i| w[i]).collect()),
            skipped,
        })
    }
}

/// Trains with the schedule: each perceptron alone, epoch by epoch.
pub(super) fn fit<F: Real>(
    trainer: &EpochRunner,
    data: &Dataset<F>,
    validation: Option<&Dataset<F>>,
    start: State<F>,
    observer: &mut dyn Observer<F>,
) -> Result<Fit<F>> {
    let holdout = match &trainer.params().held_out {
        None => None,
        Some(_) if validation.is_some() => {
            return Err(Error::Usage(
                "a run holds out the rows TrainParams::held_out names or is given a \
                 validation part, not both"
                    .into(),
            ));
        }
        Some(rows) => Some(Holdout::of(
            data,
            rows,
            trainer.params().sample_weight.as_deref(),
        )?),
    };
    // From here the held-out rows are the validation part, weighted by
    // their sample weights, and the rows the order skips.
    let held_trainer;
    let (trainer, validation, skipped) = match &holdout {
        None => (trainer, validation, &[][..]),
        Some(h) => {
            held_trainer = trainer.with_params(TrainParams {
                held_out: None,
                validation_weight: h.weight.clone(),
                ..(**trainer.params()).clone()
            })?;
            (&held_trainer, Some(&h.part), &h.skipped[..])
        }
    };
    let params = trainer.params();
    let heads = params.heads(data.classes.len());
    let seeds = match &params.shuffle_every_epoch {
        Some(e) => Some(e.seeds(heads)?),
        None => None,
    };
    // `auto` is decided here once, for the whole run, from all its passes
    // (every head's), where the run is several: its heads are runs of
    // their own, and so, under a reshuffle, is each epoch (capped at one
    // epoch more than those done). One run decides for itself (a second
    // look could list the adapters twice).
    // A run too short for a GPU, or without one, trains every head on the
    // cores, side by side. Rows reshuffled before every epoch would reach
    // a device as a copy in each epoch's order, uploaded anew with the
    // device's start: more work than a CPU engine's whole epoch over the
    // rows where they lie. On the H100 machine (dense 4M x 256 f32) a
    // GPU's start with the upload took 2.1 s, and the 16 cores walked an
    // epoch in 137-474 ms.
    let note = match trainer.backend {
        Backend::Auto if heads > 1 || seeds.is_some() => {
            match trainer.auto_cpu_reason(data, start.epoch) {
                Some(why) => Some(why),
                None if seeds.is_some() => {
                    // An adapter named is still opened once: a wrong name is
                    // an error here as everywhere else.
                    trainer.check_named_adapter()?;
                    Some(RESHUFFLED_ON_CORES.to_owned())
                }
                None => None,
            }
        }
        _ => None,
    };
    let on_cores;
    let trainer = match note {
        Some(_) => {
            on_cores = trainer.with_backend(Backend::Cpu);
            &on_cores
        }
        None => trainer,
    };
    let mut fit = if heads == 1 {
        let seed = seeds.as_ref().map(|s| s[0]);
        fit_alone(trainer, data, validation, skipped, start, seed, 1, observer)?
    } else {
        fit_one_vs_rest(
            trainer,
            data,
            validation,
            skipped,
            start,
            seeds.as_deref(),
            observer,
        )?
    };
    if let Some(note) = note {
        fit.backend_note = Some(match fit.backend_note {
            Some(how) => format!("{note}; {how}"),
            None => note,
        });
    }
    Ok(fit)
}

/// Why `auto` trains on the CPU engine under a reshuffle before every
/// epoch, for the report.
const RESHUFFLED_ON_CORES: &str = "auto: the rows are reshuffled before every epoch \
    (scikit-learn's schedule), which a GPU would copy and upload anew each epoch; using the \
    CPU engine";

/// scikit-learn's one-vs-rest: each class's perceptron trained alone, on
/// its own labels, with its own seed and class weight; side by side on the
/// host's cores when no device trains them, else one after another.
fn fit_one_vs_rest<F: Real>(
    trainer: &EpochRunner,
    data: &Dataset<F>,
    validation: Option<&Dataset<F>>,
    skipped: &[bool],
    start: State<F>,
    seeds: Option<&[u32]>,
    observer: &mut dyn Observer<F>,
) -> Result<Fit<F>> {
    let params = trainer.params();
    let heads = params.heads(data.classes.len());
    let seed = |h: usize| seeds.map(|s| s[h]);
    let t0 = Instant::now();
    let resolved = params
        .class_weight
        .as_ref()
        .map(|w| w.resolve(data, heads))
        .transpose()?;
    let dim = data.cols() + params.bias as usize;
    // The heads share the data's features, row facts and, on the CPU, rows
    // as bytes (none depends on the labels) rather than copying them once
    // each.
    if trainer.uses_no_device() {
        data.byte_rows();
    }
    data.facts(params.bias);
    if let Some(v) = validation {
        v.facts(params.bias);
    }
    let train_head = |h: usize, observer: &mut dyn Observer<F>| -> Result<Fit<F>> {
        // SAFETY: the head's datasets are dropped before this closure
        // returns, and `data` and `validation` are borrowed, unwritten,
        // for the whole fit.
        let head_data = unsafe { one_vs_rest(data, h) };
        let head_validation = validation.map(|v| unsafe { one_vs_rest(v, h) });
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
        fit_alone(
            &head_trainer,
            &head_data,
            head_validation.as_ref(),
            skipped,
            head_start,
            seed(h),
            at_once(trainer, heads),
            observer,
        )
    };
    let (fits, how) = each_head(trainer, heads, &train_head, observer)?;
    // The theorem's figures are of the rows trained on.
    let trained = match skipped {
        [] => Cow::Borrowed(data),
        _ => Cow::Owned(data.permuted(&kept(skipped))),
    };
    let mut fit = combine(
        params,
        &trained,
        fits,
        &start.weights,
        heads,
        resolved.map(|c| c.labels),
        t0,
    );
    if let Some(how) = how {
        fit.backend_note = Some(match fit.backend_note {
            Some(note) => format!("{note}; {how}"),
            None => how,
        });
    }
    Ok(fit)
}

/// Every head trained with `train_head`: side by side on the host's
/// cores when no device trains them (and how, for the report), else one
/// after another; up to the first interrupted head either way.
fn each_head<F: Real>(
    trainer: &EpochRunner,
    heads: usize,
    train_head: &side_by_side::TrainHead<'_, F>,
    observer: &mut dyn Observer<F>,
) -> Result<(Vec<Fit<F>>, Option<String>)> {
    let threads = rayon::current_num_threads();
    if trainer.uses_no_device() && threads > 1 {
        let fits = side_by_side::train_heads(heads, threads, train_head, observer)?;
        return Ok((fits, Some(side_by_side::how(heads, threads))));
    }
    let mut fits = Vec::with_capacity(heads);
    for h in 0..heads {
        let fit = train_head(h, observer)?;
        let interrupted = fit.stop == Stop::Interrupted;
        fits.push(fit);
        if interrupted {
            break;
        }
    }
    Ok((fits, None))
}

/// How many of `heads` perceptrons train at the same time (each may hold a
/// copy of the rows): side by side on the host's threads, as `each_head`
/// trains them, or one at a time.
fn at_once(trainer: &EpochRunner, heads: usize) -> usize {
    match rayon::current_num_threads() {
        threads if trainer.uses_no_device() && threads > 1 => side_by_side::at_once(heads, threads),
        _ => 1,
    }
}

/// The rows not `skipped`, in order.
fn kept(skipped: &[bool]) -> Vec<usize> {
    (0..skipped.len()).filter(|&i| !skipped[i]).collect()
}

/// One perceptron (binary data) trained epoch by epoch, its rows in the
/// order `seed` gives each epoch (file order without one), the rows
/// `skipped` marks (none when empty) left out where they fall; `at_once`
/// perceptrons train at the same time (each may copy the rows).
#[allow(clippy::too_many_arguments)]
fn fit_alone<F: Real>(
    trainer: &EpochRunner,
    data: &Dataset<F>,
    validation: Option<&Dataset<F>>,
    skipped: &[bool],
    mut state: State<F>,
    seed: Option<u32>,
    at_once: usize,
    observer: &mut dyn Observer<F>,
) -> Result<Fit<F>> {
    let params = trainer.params();
    let max = params.max_epochs;
    let Some(seed) = seed else {
        return fit_in_file_order(trainer, data, validation, skipped, state, observer);
    };
    let t0 = Instant::now();
    let mut order: Vec<usize> = (0..data.rows()).collect();
    // A resumed run's order has been reshuffled once per epoch done.
    for _ in 0..state.mistakes_per_epoch.len() {
        reshuffle(&mut order, seed);
    }
    let mut past = Past::default();
    let mut engine_started = 0.0;
    // What the chooser measured goes on from epoch to epoch, as it would
    // in one run.
    let mut memory = None;
    let mut rows = EpochRows::new(
        data,
        skipped,
        params.sample_weight.as_deref(),
        trainer.walks_on_host(),
        at_once,
    );
    // Copied rows take their facts (norms, host-only rows) along instead
    // of computing them again.
    data.facts(params.bias);
    loop {
        reshuffle(&mut order, seed);
        // scikit-learn reshuffles every row and skips the held-out ones.
        let visited: Cow<[usize]> = match skipped {
            [] => Cow::Borrowed(&order[..]),
            _ => Cow::Owned(order.iter().copied().filter(|&i| !skipped[i]).collect()),
        };
        let (mut out, note, started) =
            rows.run_epoch(trainer, &visited, validation, state, memory, observer)?;
        engine_started += started;
        past.add(&mut out);
        if out.stop != Stop::MaxEpochs || out.state.mistakes_per_epoch.len() >= max {
            let out = past.into(out);
            let seconds = t0.elapsed().as_secs_f64() - engine_started;
            // The theorem's figures are of the rows trained on.
            let trained = rows.trained(skipped);
            let mut fit = Fit::of_run(out, params, trained, validation.map(|v| v.rows()), seconds);
            fit.backend_note = note;
            fit.engine_start_seconds = engine_started;
            fit.nominal_epochs = Some(nominal_epochs(params.early_stop.as_ref(), &fit, max));
            return Ok(fit);
        }
        state = out.state;
        memory = Some(out.chooser);
    }
}

/// [`fit_alone`] without a seed: file order every epoch, so one run of the
/// loop over the rows not `skipped`.
fn fit_in_file_order<F: Real>(
    trainer: &EpochRunner,
    data: &Dataset<F>,
    validation: Option<&Dataset<F>>,
    skipped: &[bool],
    state: State<F>,
    observer: &mut dyn Observer<F>,
) -> Result<Fit<F>> {
    let params = trainer.params();
    let max = params.max_epochs;
    // Each row's weight moves with it.
    let weights_of = |rows: &[usize]| {
        params
            .sample_weight
            .as_ref()
            .map(|w| rows.iter().map(|&i| w[i]).collect())
    };
    // File order every epoch: one run of the loop.
    let mut fit = if skipped.is_empty() {
        trainer.fit_epochs(data, validation, state, observer)?
    } else {
        let rows = kept(skipped);
        let trained = trainer.with_params(TrainParams {
            sample_weight: weights_of(&rows),
            ..(**params).clone()
        })?;
        trained.fit_epochs(&data.permuted(&rows), validation, state, observer)?
    };
    fit.nominal_epochs = Some(nominal_epochs(params.early_stop.as_ref(), &fit, max));
    Ok(fit)
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

    /// The one-vs-rest heads' records, one head after another (each engine
    /// named once).
    fn of_heads<F>(fits: &[Fit<F>]) -> Self {
        let mut past = Past::default();
        for f in fits {
            for e in &f.engines {
                if !past.engines.contains(e) {
                    past.engines.push(e.clone());
                }
            }
            past.stats.add(&f.loop_stats);
            past.epoch_seconds.extend_from_slice(&f.epoch_seconds);
            past.epoch_modes.extend_from_slice(&f.epoch_modes);
        }
        past
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

/// Class `h`'s binary problem: its rows +1, the rest -1, on `data`'s
/// features and row facts without a copy.
///
/// # Safety
///
/// The result must be dropped before `data` is dropped, moved or written
/// (see [`crate::data::Features::borrowed`]).
unsafe fn one_vs_rest<F: Real>(data: &Dataset<F>, h: usize) -> Dataset<F> {
    Dataset {
        // SAFETY: passed on to the caller.
        features: unsafe { data.features.borrowed() },
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
        facts: data.facts.clone(),
    }
}

/// The one-vs-rest fit of the perceptrons trained alone, head after head
/// (`start`: every head's starting weights).
fn combine<F: Real>(
    params: &TrainParams,
    data: &Dataset<F>,
    fits: Vec<Fit<F>>,
    start: &[F],
    heads: usize,
    class_weights: Option<Vec<(String, f64)>>,
    t0: Instant,
) -> Fit<F> {
    // An interrupted run's heads that never started keep their starting
    // weights, so that the model has every head.
    let untrained = &start[fits.len() * (start.len() / heads.max(1))..];
    let concat = |of: &dyn Fn(&Fit<F>) -> &[F]| -> Vec<F> {
        let trained = fits.iter().flat_map(|f| of(f).iter().copied());
        trained.chain(untrained.iter().copied()).collect()
    };
    let weights = concat(&|f| &f.weights);
    let last_weights = concat(&|f| &f.last_weights);
    let stops: Vec<Stop> = fits.iter().map(|f| f.stop).collect();
    let stop = combined_stop(&stops);
    let state = combined_state(&fits, heads, last_weights.clone());
    let head_theory = fits.iter().map(|f| f.theory.clone()).collect();
    let tau = params.margin.as_ref().map_or(0.0, |m| m.value::<f64>());
    let theory = theory::analyse_ovr(data, &weights, params.bias, heads).with_margin(tau);
    let history = Past::of_heads(&fits);
    let early_stopping = params
        .early_stop
        .as_ref()
        .map(|rule| combined_early_stopping(rule, &fits, &stops));
    let nominal_epochs = fits.iter().filter_map(|f| f.nominal_epochs).max();
    let engine_start_seconds: f64 = fits.iter().map(|f| f.engine_start_seconds).sum();
    let first = fits.into_iter().next();
    Fit {
        weights,
        bias: params.bias,
        stop,
        engines: history.engines,
        loop_stats: history.stats,
        engine_stats: first
            .as_ref()
            .map(|f| f.engine_stats.clone())
            .unwrap_or_default(),
        theory,
        seconds: t0.elapsed().as_secs_f64() - engine_start_seconds,
        engine_start_seconds,
        epoch_seconds: history.epoch_seconds,
        epoch_modes: history.epoch_modes,
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

/// The run's stop: interrupted if any head was, converged if all did,
/// else capped if any head reached the epoch cap, else stopped early.
fn combined_stop(stops: &[Stop]) -> Stop {
    if stops.contains(&Stop::Interrupted) {
        Stop::Interrupted
    } else if stops.iter().all(|s| *s == Stop::Converged) {
        Stop::Converged
    } else if stops.contains(&Stop::MaxEpochs) {
        Stop::MaxEpochs
    } else {
        Stop::EarlyStopped
    }
}

/// The state of the heads together: the last weights, and each epoch's
/// mistakes per head (0 for a head that had stopped) and in all.
fn combined_state<F: Real>(fits: &[Fit<F>], heads: usize, last_weights: Vec<F>) -> State<F> {
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
    let mut state = State::starting_from(last_weights);
    state.epoch = epochs;
    state.mistakes_per_epoch = mistakes_per_epoch;
    state.head_mistakes_per_epoch = head_mistakes_per_epoch;
    state.head_mistakes_in_epoch = vec![0; heads];
    state
}

/// The early-stopping report of the heads together: the rule, the
/// held-out rows they share, and whether any head stopped early.
fn combined_early_stopping<F>(
    rule: &EarlyStop,
    fits: &[Fit<F>],
    stops: &[Stop],
) -> crate::train::EarlyStopReport {
    crate::train::EarlyStopReport {
        tol: rule.tol,
        n_iter_no_change: rule.n_iter_no_change,
        validation_fraction: rule.validation.map(|v| v.fraction),
        // Every perceptron is judged on the same held-out rows.
        validation_rows: fits
            .first()
            .and_then(|f| f.early_stopping.as_ref())
            .and_then(|e| e.validation_rows),
        validation_accuracy: Vec::new(),
        mistake_rate: Vec::new(),
        mean_loss: Vec::new(),
        best_epoch: None,
        keep: if rule.validation.is_some() {
            rule.keep
        } else {
            crate::train::early_stop::Keep::Best
        },
        stopped: stops.contains(&Stop::EarlyStopped),
    }
}

#[cfg(test)]
mod tests {
    use super::order::MAX_INT;
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
