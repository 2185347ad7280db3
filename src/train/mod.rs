//! Training: parameters in, fitted model out.
//!
//! [`TrainParams`] says what to train; [`fit`] runs the one loop of
//! [`driver`] with whichever [`MarginEngine`] the caller picked and returns a
//! [`Fit`]: the weights, the per-epoch mistakes and what the convergence
//! theorem says about the run.

pub mod driver;
pub mod shuffle;
pub mod theory;
pub mod variant;

use std::time::Instant;

use crate::data::Dataset;
use crate::error::Result;
use crate::float::Real;

pub use driver::{LoopStats, Observer, Silent, State, Stop};
pub use crate::engine::{EngineStats, MarginEngine, ReferenceEngine};
pub use theory::Theory;
pub use variant::{Margin, Pocket, Variant};

/// What to train. The defaults are the classic algorithm.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainParams {
    /// Stop after this many epochs even if the last one made mistakes.
    pub max_epochs: usize,
    /// Append the constant feature 1 (the bias) to every row.
    pub bias: bool,
    /// Visit the rows in the order fixed by this seed instead of file order.
    pub shuffle_seed: Option<u64>,
    /// When the loop may skip engine passes in favour of the host's own
    /// certified margins. Never changes the result, only the speed.
    pub passes: PassPolicy,
    /// Which weights training returns (classic, averaged, pocket).
    pub variant: Variant,
    /// Update when y·s <= τ instead of 0.
    pub margin: Option<Margin>,
    /// Train one perceptron per class (one-vs-rest) in the same pass over
    /// the data: head h learns "class h" against the rest.
    pub multiclass: bool,
}

impl Default for TrainParams {
    fn default() -> Self {
        TrainParams {
            max_epochs: 1000,
            bias: true,
            shuffle_seed: None,
            passes: PassPolicy::Adaptive,
            variant: Variant::Classic,
            margin: None,
            multiclass: false,
        }
    }
}

/// How the loop uses a certifying engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PassPolicy {
    /// Measure both and use whichever costs less per row: the engine (its
    /// walk, or passes over windows), or the host's own fast certified
    /// margins (better when mistakes are only a few rows apart).
    #[default]
    Adaptive,
    /// Always use the engine: its walk where it has one (the GPU's, or the
    /// CPU engine's parallel one), else passes over windows of rows (for
    /// testing and measuring an engine).
    Always,
    /// Always use engine passes over windows of rows, never the engine's
    /// walk (to measure one against the other).
    Windows,
}

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
    pub seconds: f64,
    /// Wall time of each epoch this run completed (a resumed run's earlier
    /// epochs are not timed).
    pub epoch_seconds: Vec<f64>,
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
        self.mistakes_per_epoch.iter().sum::<u64>() + self.state.mistakes_in_epoch
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
/// starting from `state` (use [`State::initial`] for w = 0).
pub fn fit<'a, F: Real>(
    data: &Dataset<F>,
    params: &TrainParams,
    state: State<F>,
    engine: Box<dyn MarginEngine<F> + 'a>,
    fallback: driver::Fallback<'a, F>,
    observer: &mut dyn Observer<F>,
) -> Result<Fit<F>> {
    let t0 = Instant::now();
    let out = driver::run(data, params, state, engine, fallback, observer)?;

    let seconds = t0.elapsed().as_secs_f64();
    let last = &out.state.weights;
    let (weights, pocket) = match params.variant {
        Variant::Classic => (last.clone(), None),
        Variant::Averaged => {
            let u = out.state.average.as_deref().unwrap_or(&[]);
            let visits = out.state.visits(data.rows());
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
                    training_accuracy: 1.0 - p.mistakes as f64 / data.rows().max(1) as f64,
                    evaluations: p.evaluations,
                }),
            ),
            None => (last.clone(), None),
        },
    };
    let heads = if params.multiclass {
        data.classes.len()
    } else {
        1
    };
    let (theory, head_theory) = if heads > 1 {
        let dim = data.cols() + params.bias as usize;
        let per_head = (0..heads)
            .map(|h| {
                theory::analyse_head(
                    data,
                    &weights[h * dim..(h + 1) * dim],
                    params.bias,
                    h,
                    heads,
                )
            })
            .collect();
        (
            theory::analyse_ovr(data, &weights, params.bias, heads),
            per_head,
        )
    } else {
        (theory::analyse(data, &weights, params.bias), Vec::new())
    };
    let tau = params.margin.as_ref().map_or(0.0, |m| m.value::<f64>());
    let (theory, head_theory) = (
        theory.with_margin(tau),
        head_theory
            .into_iter()
            .map(|t| t.with_margin(tau))
            .collect(),
    );
    Ok(Fit {
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
        state: out.state,
    })
}

/// Trains with the reference engine: the textbook sequential algorithm.
pub fn fit_reference<F: Real>(data: &Dataset<F>, params: &TrainParams) -> Result<Fit<F>> {
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
