//! The exact state of a training run between two rows, and how the loop
//! talks to its caller: the observer it reports to, why it stopped, what it
//! counted.

use crate::engine::{EngineStats, MarginEngine};
use crate::error::Result;
use crate::float::Real;
use crate::train::early_stop::EarlyState;
use crate::train::variant::Pocket;

/// Exact training state between two rows: enough to resume bit for bit.
#[derive(Clone, Debug, PartialEq)]
pub struct State<F> {
    /// w~ in force at `position` of `epoch` (bias last).
    pub weights: Vec<F>,
    /// 0-based epoch in progress.
    pub epoch: usize,
    /// Next row (in training order) of that epoch.
    pub position: usize,
    /// Mistakes of the completed epochs.
    pub mistakes_per_epoch: Vec<u64>,
    /// Mistakes so far in the epoch in progress.
    pub mistakes_in_epoch: u64,
    /// The averaged perceptron's accumulator u (see `train::variant`).
    pub average: Option<Vec<F>>,
    /// The pocket algorithm's state.
    pub pocket: Option<Pocket<F>>,
    /// One-vs-rest: mistakes per head in the epoch in progress, and per
    /// completed epoch (empty with a single head).
    pub head_mistakes_in_epoch: Vec<u64>,
    pub head_mistakes_per_epoch: Vec<Vec<u64>>,
    /// Early stopping's scores and kept weights (`None` without it).
    pub early: Option<EarlyState<F>>,
}

impl<F: Real> State<F> {
    pub fn initial(dim: usize) -> Self {
        Self::starting_from(crate::memory::resident(dim, F::ZERO))
    }

    /// The state before the first row, with the given initial weights (a
    /// warm start when not zero).
    pub fn starting_from(weights: Vec<F>) -> Self {
        State {
            weights,
            epoch: 0,
            position: 0,
            mistakes_per_epoch: Vec::new(),
            mistakes_in_epoch: 0,
            average: None,
            pocket: None,
            head_mistakes_in_epoch: Vec::new(),
            head_mistakes_per_epoch: Vec::new(),
            early: None,
        }
    }

    /// Row visits so far (T of the averaged perceptron).
    pub fn visits(&self, rows: usize) -> u64 {
        self.epoch as u64 * rows as u64 + self.position as u64
    }
}

/// Why training stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// An epoch made no mistake.
    Converged,
    /// `max_epochs` epochs ran, each with a mistake.
    MaxEpochs,
    /// The observer asked to stop (Ctrl-C); the state is exact.
    Interrupted,
    /// The early-stopping rule stopped it (`--tol`, `--n-iter-no-change`,
    /// `--validation-fraction`): epochs stopped improving.
    EarlyStopped,
}

/// Counters of the loop itself.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LoopStats {
    /// Passes submitted to the engine.
    pub passes: u64,
    /// Reference dot products computed on the host.
    pub host_dots: u64,
    /// Rows the host settled with its own fast certified margin.
    pub host_certified: u64,
    /// Of those, rows decided from a margin the host computed exactly
    /// (whole weights and rows of bytes: see `train::sweep::whole`).
    pub host_exact: u64,
    /// Rows settled correct by their slack, without a dot product.
    pub certified_correct: u64,
    /// Rows settled as mistakes by their slack (updated without a dot product).
    pub certified_mistakes: u64,
    /// Rows with a non-zero slack that drift left uncertain.
    pub drift_fallbacks: u64,
    /// Windows abandoned early because drift left too many rows uncertain.
    pub early_breaks: u64,
    /// Engines given up after a device failure.
    pub fallbacks: u64,
    /// Pocket candidates whose training mistakes were counted.
    pub pocket_evaluations: u64,
    /// Rows an engine's walk decided speculatively (by its own reference
    /// dot), each re-decided by the host.
    pub walk_speculative: u64,
    /// Walks discarded after a row where the host decided otherwise.
    pub walk_rollbacks: u64,
    /// The host's walk on sparse rows with the other cores summing ahead
    /// ([`crate::engine::cpu::lookahead`]): rows decided with a sum made ahead, and
    /// rows the walk summed itself.
    pub ahead_kept: u64,
    pub ahead_summed: u64,
}

impl LoopStats {
    /// Adds another run's counters (runs of the same training, one after
    /// another).
    pub fn add(&mut self, o: &LoopStats) {
        self.passes += o.passes;
        self.host_dots += o.host_dots;
        self.host_certified += o.host_certified;
        self.host_exact += o.host_exact;
        self.certified_correct += o.certified_correct;
        self.certified_mistakes += o.certified_mistakes;
        self.drift_fallbacks += o.drift_fallbacks;
        self.early_breaks += o.early_breaks;
        self.fallbacks += o.fallbacks;
        self.pocket_evaluations += o.pocket_evaluations;
        self.walk_speculative += o.walk_speculative;
        self.walk_rollbacks += o.walk_rollbacks;
        self.ahead_kept += o.ahead_kept;
        self.ahead_summed += o.ahead_summed;
    }
}

/// What the loop reports while it runs, and how it is told to stop.
pub trait Observer<F> {
    fn on_progress(&mut self, _epoch: usize, _position: usize, _rows: usize) {}
    /// Called after each epoch with the exact state (position 0 of the next
    /// epoch), for example to write a checkpoint. An error stops training.
    fn on_epoch_end(&mut self, _state: &State<F>) -> Result<()> {
        Ok(())
    }
    fn on_warning(&mut self, _message: &str) {}
    /// Polled between windows (at most about 2^26 multiply-adds apart);
    /// `true` stops at that row boundary with the state exact.
    fn should_stop(&mut self) -> bool {
        false
    }
}

/// An observer that ignores everything.
pub struct Silent;
impl<F> Observer<F> for Silent {}

/// The result of the loop.
#[derive(Clone, Debug)]
pub struct Outcome<F> {
    pub state: State<F>,
    pub stop: Stop,
    /// Names of the engines used, in order (more than one after a fallback).
    pub engines: Vec<String>,
    pub stats: LoopStats,
    pub engine_stats: EngineStats,
    /// Wall time of each epoch this run completed, in seconds.
    pub epoch_seconds: Vec<f64>,
    /// How each epoch's rows were walked (host, textbook loop, engine).
    pub epoch_modes: Vec<crate::train::EpochModes>,
    /// The class weights the updates used, if any.
    pub class_weights: Option<crate::train::class_weight::Resolved<F>>,
    /// What the chooser measured, for a next run over the same rows (see
    /// [`crate::train::Stepper::recall`]).
    pub chooser: crate::train::ChooserMemory,
}

/// Supplies a replacement engine after a device failure.
pub type Fallback<'a, 'e, F> = &'a mut dyn FnMut() -> Box<dyn MarginEngine<F> + 'e>;
