//! The engines: the one interface between the training loop and a way of
//! obtaining margins ([`MarginEngine`]), what every engine (the CPU's, a
//! GPU's, the reference) implements, and the engines themselves.
//!
//! [`reference`](mod@reference) is the textbook arithmetic every result must equal;
//! [`certify`] bounds a margin's rounding error so a sign can be trusted;
//! [`cpu`] and [`gpu`] compute margins in parallel, and [`pair`] serves
//! with either of a device's engine and the CPU engine; [`backend`] names
//! the engines a user can ask for and builds one; [`decide`] decides a
//! fixed model's classes with one.
//!
//! An engine never decides anything. For a range of rows it returns each
//! row's *normalised slack* under given weights (see [`crate::engine::certify`]): a
//! number whose size says how far the weights may still drift before the
//! row's decision is no longer certain, and whose sign says which decision
//! (0: not certain at all). The loop applies every update itself and uses
//! the slacks only to skip reference dot products.

pub mod backend;
pub mod certify;
pub mod cpu;
pub mod decide;
pub mod gpu;
pub mod pair;
pub mod reference;

use std::collections::VecDeque;

use crate::float::Real;

/// One evaluation request: rows `start..end` (in training order) under
/// `weights`, for `heads` perceptrons at once.
///
/// With one head the labels are the dataset's -1/+1 labels. With K > 1
/// heads (one-vs-rest), `weights` holds K weight vectors one after the
/// other, head h's label of a row is +1 iff the row's class id is h, and
/// the slacks come out row by row, head by head: `slack[(p - start)·K + h]`.
#[derive(Clone, Copy, Debug)]
pub struct Pass<'a, F> {
    pub start: usize,
    pub end: usize,
    pub weights: &'a [F],
    /// The margin threshold τ of the mistake rule y·s <= τ (0: classic).
    pub tau: F,
    pub heads: usize,
}

impl<F> Pass<'_, F> {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Slack values of the pass: rows × heads.
    pub fn slots(&self) -> usize {
        self.len() * self.heads
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// A failure of the device behind an engine. The loop's state is unaffected:
/// it can continue with another engine from the same row.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct EngineError(pub String);

/// Counters an engine keeps for reports and benchmarks.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct EngineStats {
    /// Passes served (GPU: round trips).
    pub passes: u64,
    /// Row evaluations, counting a row again each time a pass covers it.
    pub rows_evaluated: u64,
    /// Rows returned with slack 0 (not certain even without drift).
    pub rows_uncertain: u64,
    /// Time spent inside `submit` and `collect`, in seconds (the host's
    /// view: for a GPU, mostly waiting).
    pub seconds: f64,
    /// Seconds a device took to start on a thread of its own while the
    /// CPU engine beside it trained ([`pair`]): not the loop's, and not
    /// waited for.
    pub start_beside_seconds: f64,
    /// A device's work as recorded: kernel dispatches, and compute passes
    /// (each pass boundary costs several dispatches).
    pub dispatches: u64,
    pub compute_passes: u64,
    /// What a device's own walk did: decisions it recorded, steps that
    /// walked (one a dispatch pair), fresh dots, searches of the slacks.
    pub walk: WalkCounts,
}

impl EngineStats {
    /// Adds `other`'s counters (another engine's of the same run).
    pub fn add(&mut self, other: &EngineStats) {
        self.passes += other.passes;
        self.rows_evaluated += other.rows_evaluated;
        self.rows_uncertain += other.rows_uncertain;
        self.seconds += other.seconds;
        self.start_beside_seconds += other.start_beside_seconds;
        self.dispatches += other.dispatches;
        self.compute_passes += other.compute_passes;
        self.walk.add(&other.walk);
    }
}

/// A device walk's counters (see [`EngineStats::walk`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WalkCounts {
    pub batches: u64,
    pub decisions: u64,
    pub steps: u64,
    pub dots: u64,
    pub searches: u64,
    /// The CPU's walk on sparse rows: rows decided with a sum the other
    /// cores computed ahead (its own sums are counted in `dots`).
    pub kept: u64,
}

impl WalkCounts {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &WalkCounts) {
        *self = self.each(other, |a, b| a + b);
    }

    /// The counts since `before` was taken.
    pub fn since(&self, before: &WalkCounts) -> WalkCounts {
        self.each(before, |a, b| a - b)
    }

    /// `f` of each pair of counts (every field named, so a new one cannot
    /// be left out).
    fn each(&self, other: &WalkCounts, f: impl Fn(u64, u64) -> u64) -> WalkCounts {
        let WalkCounts {
            batches,
            decisions,
            steps,
            dots,
            searches,
            kept,
        } = *other;
        WalkCounts {
            batches: f(self.batches, batches),
            decisions: f(self.decisions, decisions),
            steps: f(self.steps, steps),
            dots: f(self.dots, dots),
            searches: f(self.searches, searches),
            kept: f(self.kept, kept),
        }
    }
}

/// A way of obtaining certified margins.
///
/// Passes are collected in the order they were submitted; an engine must
/// accept at least two passes in flight.
pub trait MarginEngine<F: Real> {
    /// Short name for reports (`reference`, `cpu (8 threads)`, `gpu: ...`).
    fn name(&self) -> String;

    /// False for an engine that certifies nothing: the loop then computes
    /// every margin itself and never submits a pass.
    fn certifies(&self) -> bool {
        true
    }

    /// A good number of rows per pass, given the recent fraction of rows
    /// that were mistakes. The loop clamps it to the rows left.
    fn preferred_window(&self, mistake_rate: f64) -> usize;

    /// Most rows one pass may cover.
    fn max_pass(&self) -> usize {
        usize::MAX
    }

    /// Starts computing the slacks of `pass` (possibly finishing later).
    fn submit(&mut self, pass: &Pass<'_, F>) -> Result<(), EngineError>;

    /// Waits for the oldest pass not yet collected and writes its slacks,
    /// `slack[i]` for row `start + i`.
    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError>;

    fn stats(&self) -> EngineStats;

    /// The engine's walker, if it can walk rows itself (see [`Walker`]) for
    /// this data and these settings.
    fn walker(&mut self) -> Option<&mut dyn Walker<F>> {
        None
    }

    /// Whether the engine's walk on these rows is the host's walk ahead
    /// ([`crate::engine::cpu::lookahead`]) on a copy of the weights, which the loop
    /// replays: the loop's own walk ahead does the same work without the
    /// copy and the replay, and far more cheaply than the engine's passes
    /// over windows on the same cores, so the chooser tries neither.
    fn walks_like_the_host_ahead(&self) -> bool {
        false
    }

    /// A note for the user that the engine has not given yet (a feature it
    /// could not set up, say), handed over once.
    fn take_notice(&mut self) -> Option<String> {
        None
    }

    /// Whether the CPU engine serves beside this one ([`pair`]): the loop
    /// may then walk with either, switching by [`MarginEngine::serve_cores`].
    fn has_cores_beside(&self) -> bool {
        false
    }

    /// Whether this engine's own side can serve now: not while a pair's
    /// device is still starting beside the cores, or failed to start
    /// ([`pair`]); then only the cores can. Asks the starting device
    /// whether it has arrived.
    fn device_ready(&mut self) -> bool {
        true
    }

    /// Which side serves the calls that follow: the CPU engine beside this
    /// one (`true`) or this engine itself. Called only with no pass and no
    /// walk in flight; the side that takes over must resync its walker's
    /// weights. Ignored by an engine without cores beside it.
    fn serve_cores(&mut self, _cores: bool) {}

    /// Whether the CPU engine beside this one serves now.
    fn serves_cores(&self) -> bool {
        false
    }
}

/// Where a walk starts: the loop's exact state at a row boundary.
#[derive(Clone, Copy, Debug)]
pub struct WalkStart<'a, F> {
    /// The next row to decide (in training order) and where the epoch ends.
    pub position: usize,
    pub end: usize,
    /// The exact weights at `position`.
    pub weights: &'a [F],
    /// The walker's copy of the weights may differ from `weights` (the loop
    /// changed them since the walker last saw them): upload them.
    pub resync: bool,
    /// The margin threshold τ.
    pub tau: F,
    /// Updates the walker may make before its weights could overflow (see
    /// [`crate::engine::certify::engine_safe`]); at least 1.
    pub max_updates: u64,
}

/// One decision a walker made, in row order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkDecision {
    pub row: usize,
    pub mistake: bool,
    /// Decided by the reference dot on the device rather than certified: the
    /// loop re-decides the row and discards the walk after it on a difference.
    pub speculative: bool,
    /// For a mistake: where the new values of the coordinates the update
    /// touched start in [`WalkBatch::values`] (the row's stored features in
    /// order, then the bias), for the loop to compare with its own update;
    /// `None` when the device may have flushed a subnormal (no comparison,
    /// and the walk stops there).
    pub values_at: Option<usize>,
}

/// How far the loop lets a walker's next batch go. Given with every batch,
/// so that nothing from an earlier one (a trial's deadline) lingers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchLimits {
    /// The loop wants rows up to here for now (the chooser may hand the
    /// rest to another mode): a walker that can, ends the batch there
    /// rather than walking far past it. A hint.
    pub horizon: usize,
    /// When the batch must end (a trial's time budget), for a walker that
    /// [keeps deadlines](Walker::keeps_deadlines).
    pub deadline: Option<std::time::Instant>,
}

impl BatchLimits {
    /// No limit: the walker's own batch.
    pub const NONE: BatchLimits = BatchLimits {
        horizon: usize::MAX,
        deadline: None,
    };
}

/// Why a walker stopped after a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkStop {
    /// Still walking: more batches follow.
    Running,
    /// Reached the end of the epoch.
    End,
    /// The walker's weights need the loop's copy before it can continue
    /// (an update met a subnormal value).
    Resync,
    /// The walker made as many updates as it was allowed.
    Updates,
}

/// Decisions of a stretch of rows: every row in `start..end` that is not
/// listed is certainly correct under the weights of its moment.
#[derive(Clone, Debug, PartialEq)]
pub struct WalkBatch<F> {
    pub start: usize,
    pub end: usize,
    pub decisions: Vec<WalkDecision>,
    pub values: Vec<F>,
    pub stop: WalkStop,
}

/// An engine that walks the rows itself, one decision after another, with
/// its own copy of the weights: it certifies each row under the weights of
/// that moment, applies the updates of certain mistakes to its copy, and
/// decides uncertain rows speculatively with the reference dot. The loop
/// replays every decision with its own arithmetic, compares the weights an
/// update produced bit for bit, and re-decides speculative rows, so the
/// result is the reference's whatever the walker did.
pub trait Walker<F> {
    /// Starts walking from `start.position` (abandoning any walk in flight).
    fn begin(&mut self, start: &WalkStart<'_, F>) -> Result<(), EngineError>;

    /// The next batch of decisions, in row order, continuing the previous
    /// one, within `limits`. After a batch that stopped, call
    /// [`Walker::begin`] first.
    fn next(&mut self, limits: BatchLimits) -> Result<WalkBatch<F>, EngineError>;

    /// Whether the walker ends a batch at [`BatchLimits::deadline`] itself.
    /// The loop then lets a trial's batch walk past the trial's rows, as far
    /// as the budget allows; one that cannot (the default) gets short
    /// batches instead, cut between them, which costs a walker whose
    /// batches start helpers.
    fn keeps_deadlines(&self) -> bool {
        false
    }

    /// Abandons the walk in flight (its results are never returned).
    fn cancel(&mut self) -> Result<(), EngineError>;
}

/// What the CPU walk did (see [`crate::engine::cpu::walk`]).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct WalkStats {
    pub batches: u64,
    /// Decisions made by the walker (one device iteration each), and
    /// stretches of certainly correct rows walked to a stop.
    pub iterations: u64,
}

/// The engine that certifies nothing: with it the loop *is* the textbook
/// sequential algorithm, computing every margin with the reference dot.
#[derive(Debug, Default)]
pub struct ReferenceEngine;

impl<F: Real> MarginEngine<F> for ReferenceEngine {
    fn name(&self) -> String {
        "reference".into()
    }

    fn certifies(&self) -> bool {
        false
    }

    fn preferred_window(&self, _mistake_rate: f64) -> usize {
        1 << 16
    }

    fn submit(&mut self, _pass: &Pass<'_, F>) -> Result<(), EngineError> {
        Ok(())
    }

    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        slack.fill(0.0);
        Ok(())
    }

    fn stats(&self) -> EngineStats {
        EngineStats::default()
    }
}

/// Holds the results of passes computed synchronously in `submit`, for
/// engines without real asynchrony.
#[derive(Debug, Default)]
pub struct Completed {
    queue: VecDeque<Vec<f32>>,
    spare: Vec<Vec<f32>>,
}

impl Completed {
    /// A buffer of `len` zeros to compute a pass into.
    pub fn buffer(&mut self, len: usize) -> Vec<f32> {
        let mut b = self.spare.pop().unwrap_or_default();
        b.clear();
        b.resize(len, 0.0);
        b
    }

    pub fn push(&mut self, done: Vec<f32>) {
        self.queue.push_back(done);
    }

    /// Copies out the oldest result.
    pub fn pop_into(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        let done = self
            .queue
            .pop_front()
            .ok_or_else(|| EngineError("collect without a submitted pass".into()))?;
        if done.len() != slack.len() {
            return Err(EngineError(format!(
                "pass of {} rows collected into {}",
                done.len(),
                slack.len()
            )));
        }
        slack.copy_from_slice(&done);
        self.spare.push(done);
        Ok(())
    }
}
