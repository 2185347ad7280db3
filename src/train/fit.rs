//! A finished run: the weights a variant returns, the per-epoch story and
//! the theorem's figures, from the one loop.

use std::time::Instant;

use crate::data::Dataset;
use crate::engine::{EngineStats, MarginEngine, ReferenceEngine};
use crate::error::Result;
use crate::float::Real;
use crate::train::early_stop::EarlyStopReport;
use crate::train::params::CheckedParams;
use crate::train::state::{Fallback, LoopStats, Observer, Outcome, Silent, State, Stop};
use crate::train::theory::{self, Theory};
use crate::train::variant::{self, Variant};

/// A trained perceptron and the story of its training.
#[derive(Clone, Debug)]
pub struct Fit<F> {
    /// w~: the feature weights, then the bias when `bias`.
    pub weights: Vec<F>,
    pub bias: bool,
    pub mistakes_per_epoch: Vec<u64>,
    pub stop: Stop,
    /// Engines used, in order (more than one after a device failure).
    pub engines: Vec<String>,
    pub loop_stats: LoopStats,
    pub engine_stats: EngineStats,
    pub theory: Theory,
    /// The loop's seconds (the epochs, and what the loop does between them).
    pub seconds: f64,
    /// Seconds the engine took to start, apart from `seconds`: a device,
    /// its pipelines and the data's upload (a CPU engine's start is all but
    /// free).
    pub engine_start_seconds: f64,
    /// Wall time of each epoch this run completed (a resumed run's earlier
    /// epochs are not timed).
    pub epoch_seconds: Vec<f64>,
    /// How each epoch's rows were walked: rows and seconds per mode.
    pub epoch_modes: Vec<crate::train::EpochModes>,
    /// The state to resume from (meaningful when interrupted).
    pub state: State<F>,
    pub variant: Variant,
    /// The last iterate w~ (equal to `weights` for the classic variant).
    pub last_weights: Vec<F>,
    /// For the pocket variant: where the pocket weights came from.
    pub pocket: Option<PocketReport>,
    /// One-vs-rest: the theorem's figures for each class's perceptron
    /// (`theory` then holds the overall argmax accuracy and the radius).
    pub head_theory: Vec<Theory>,
    /// Why `auto`, or a GPU that could not be used, led to the first engine
    /// (for the report).
    pub backend_note: Option<String>,
    /// The class weights of the updates by label (`--class-weight`), exact.
    pub class_weights: Option<Vec<(String, f64)>>,
    /// What early stopping did, when it was on.
    pub early_stopping: Option<EarlyStopReport>,
    /// With scikit-learn's schedule ([`crate::train::scikit`]): the epochs
    /// its loop would report (`n_iter_`), which runs on after an epoch
    /// without a mistake until its rule or the cap stops it.
    pub nominal_epochs: Option<usize>,
}

/// What the pocket variant returned.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PocketReport {
    /// 0-based epoch in which the returned weights were pocketed.
    pub epoch: usize,
    /// Their training mistakes (rows with y·s <= 0).
    pub mistakes: u64,
    pub training_accuracy: f64,
    /// Candidates whose mistakes were counted.
    pub evaluations: u64,
}

impl<F: Real> Fit<F> {
    pub fn epochs(&self) -> usize {
        self.mistakes_per_epoch.len()
    }

    pub fn total_mistakes(&self) -> u64 {
        // Saturating: a checkpoint's counts are checked, but a sum that
        // could wrap must not report a small M.
        self.mistakes_per_epoch
            .iter()
            .fold(self.state.mistakes_in_epoch, |a, &m| a.saturating_add(m))
    }

    pub fn converged(&self) -> bool {
        self.stop == Stop::Converged
    }

    /// The feature weights without the bias.
    pub fn feature_weights(&self) -> &[F] {
        &self.weights[..self.weights.len() - self.bias as usize]
    }

    /// The bias (0 without one).
    pub fn intercept(&self) -> F {
        if self.bias {
            self.weights[self.weights.len() - 1]
        } else {
            F::ZERO
        }
    }
}

/// Trains on `data`, already in training order (see [`shuffle::permutation`]),
/// starting from `state` (use [`State::initial`] for w = 0), with `engine`
/// and, after a device failure, the engines `fallback` makes. [`Trainer`]
/// chooses both; this is the loop for callers that bring their own.
///
/// [`shuffle::permutation`]: crate::train::shuffle::permutation
/// [`Trainer`]: crate::train::Trainer
pub fn fit<'a, F: Real>(
    data: &Dataset<F>,
    params: &CheckedParams,
    state: State<F>,
    engine: Box<dyn MarginEngine<F> + 'a>,
    fallback: Fallback<'_, 'a, F>,
    observer: &mut dyn Observer<F>,
) -> Result<Fit<F>> {
    let t0 = Instant::now();
    let out = super::sweep::epoch::run(
        data, None, None, params, state, None, engine, fallback, observer,
    )?;
    let seconds = t0.elapsed().as_secs_f64();
    Ok(Fit::of_run(out, params, data, None, seconds))
}

impl<F: Real> Fit<F> {
    /// The fit of a finished loop over `data` (any order: the theorem's
    /// figures do not depend on it), with the figures computed.
    pub(super) fn of_run(
        out: Outcome<F>,
        params: &CheckedParams,
        data: &Dataset<F>,
        validation_rows: Option<usize>,
        seconds: f64,
    ) -> Fit<F> {
        let heads = params.heads(data.classes.len());
        let bias = params.bias;
        Fit::from_outcome(out, params, data.rows(), validation_rows, seconds, |w| {
            if heads > 1 {
                let dim = data.cols() + bias as usize;
                let per_head = (0..heads)
                    .map(|h| theory::analyse_head(data, &w[h * dim..(h + 1) * dim], bias, h, heads))
                    .collect();
                (theory::analyse_ovr(data, w, bias, heads), per_head)
            } else {
                (theory::analyse(data, w, bias), Vec::new())
            }
        })
    }
}

impl<F: Real> Fit<F> {
    /// The fit a finished loop's `out` stands for: the weights its variant
    /// returns (`rows`: the row visits of one epoch, for the average; with
    /// early stopping on `validation_rows` held-out rows, the best epoch's
    /// weights), and the theorem's figures of them from `analyse` (overall,
    /// and per head for one-vs-rest), which holds the data.
    pub fn from_outcome(
        out: Outcome<F>,
        params: &CheckedParams,
        rows: usize,
        validation_rows: Option<usize>,
        seconds: f64,
        analyse: impl FnOnce(&[F]) -> (Theory, Vec<Theory>),
    ) -> Fit<F> {
        let (weights, pocket) = model_weights(&out, params, rows);
        let early_stopping = params.early_stop.as_ref().map(|rule| {
            let empty = crate::train::early_stop::EarlyState::default();
            EarlyStopReport::of(
                rule,
                out.state.early.as_ref().unwrap_or(&empty),
                validation_rows.filter(|_| rule.validation.is_some()),
                out.stop == Stop::EarlyStopped,
            )
        });
        let (theory, head_theory) = theorem(analyse(&weights), params, out.class_weights.as_ref());
        let last = &out.state.weights;
        Fit {
            head_theory,
            variant: params.variant,
            last_weights: last.clone(),
            pocket,
            weights,
            bias: params.bias,
            mistakes_per_epoch: out.state.mistakes_per_epoch.clone(),
            stop: out.stop,
            engines: out.engines,
            loop_stats: out.stats,
            engine_stats: out.engine_stats,
            theory,
            seconds,
            epoch_seconds: out.epoch_seconds,
            epoch_modes: out.epoch_modes,
            class_weights: out.class_weights.map(|c| c.labels),
            early_stopping,
            state: out.state,
            backend_note: None,
            engine_start_seconds: 0.0,
            nominal_epochs: None,
        }
    }
}

/// The model's weights of a finished loop, and the pocket's report: the
/// last weights, their average, or the pocket's; with a validation part,
/// the best epoch's weights instead.
fn model_weights<F: Real>(
    out: &Outcome<F>,
    params: &CheckedParams,
    rows: usize,
) -> (Vec<F>, Option<PocketReport>) {
    let last = &out.state.weights;
    let (weights, pocket) = match params.variant {
        Variant::Classic => (last.clone(), None),
        Variant::Averaged => {
            let u = out.state.average.as_deref().unwrap_or(&[]);
            let visits = out.state.visits(rows);
            (
                if u.len() == last.len() {
                    variant::averaged(last, u, visits)
                } else {
                    last.clone()
                },
                None,
            )
        }
        Variant::Pocket => match &out.state.pocket {
            Some(p) => (
                p.weights.clone(),
                Some(PocketReport {
                    epoch: p.epoch,
                    mistakes: p.mistakes,
                    training_accuracy: 1.0 - p.mistakes as f64 / rows.max(1) as f64,
                    evaluations: p.evaluations,
                }),
            ),
            None => (last.clone(), None),
        },
    };
    // With a validation part, the model is the best epoch's weights.
    let weights = match out.state.early.as_ref().and_then(|e| e.best.as_ref()) {
        Some((_, best)) => best.clone(),
        None => weights,
    };
    (weights, pocket)
}

/// The theorem's figures of the model's weights (`analysed`: the run's and
/// each head's), under the run's margin and class weights.
fn theorem<F: Real>(
    analysed: (Theory, Vec<Theory>),
    params: &CheckedParams,
    class_weights: Option<&crate::train::class_weight::Resolved<F>>,
) -> (Theory, Vec<Theory>) {
    let (theory, head_theory) = analysed;
    let tau = params.margin.as_ref().map_or(0.0, |m| m.value::<f64>());
    let (theory, head_theory): (Theory, Vec<Theory>) = match class_weights {
        None => (
            theory.with_margin(tau),
            head_theory
                .into_iter()
                .map(|t| t.with_margin(tau))
                .collect(),
        ),
        Some(c) => {
            // The theorem for each head's own weights; a binary run's one
            // head is the whole run.
            let (lo, hi) = c.range(0);
            (
                theory.with_class_weights(tau, lo, hi),
                head_theory
                    .into_iter()
                    .enumerate()
                    .map(|(h, t)| {
                        let (lo, hi) = c.range(h);
                        t.with_class_weights(tau, lo, hi)
                    })
                    .collect(),
            )
        }
    };
    // Rows of different weights (one of them possibly 0) leave the
    // theorem without a bound to report; so does an intercept decay, whose
    // run is the textbook loop on rows [x, d], not the x~ = [x, 1] whose
    // radius and margin are reported.
    if params.sample_weight.is_some() || params.intercept_decay.is_some() {
        let unbound = |mut t: Theory| {
            t.mistake_bound = None;
            t
        };
        (
            unbound(theory),
            head_theory.into_iter().map(unbound).collect::<Vec<_>>(),
        )
    } else {
        (theory, head_theory)
    }
}

/// Trains with the reference engine: the textbook sequential algorithm.
pub fn fit_reference<F: Real>(data: &Dataset<F>, params: &CheckedParams) -> Result<Fit<F>> {
    let heads = if params.multiclass {
        data.classes.len()
    } else {
        1
    };
    let dim = (data.cols() + params.bias as usize) * heads;
    let mut fallback = || -> Box<dyn MarginEngine<F>> { Box::new(ReferenceEngine) };
    fit(
        data,
        params,
        State::initial(dim),
        Box::new(ReferenceEngine),
        &mut fallback,
        &mut Silent,
    )
}
