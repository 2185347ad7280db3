//! The one training loop, generic over how margins are obtained.
//!
//! The host owns the weights and walks the rows in order, committing one
//! decision at a time with the reference semantics. An engine supplies, for
//! a window of rows, each row's normalised slack under the weights of the
//! moment the pass was submitted. While walking, the loop tracks how far the
//! weights have drifted since (δ = ||w - w_pass||, updated on every
//! update) and settles a row without a dot product whenever its slack
//! exceeds the drift threshold ([`crate::certify::settle`]): a certain
//! correct row is skipped, a certain mistake is updated directly. Every
//! other row gets the reference dot. So the result is the textbook
//! algorithm's, bit for bit, whatever the engine computed.
//!
//! The next window's pass is submitted halfway through the current one,
//! with the weights of that moment, so a device computes while the host
//! walks. When drift makes too many rows uncertain, the loop drops the rest
//! of the window and asks for a fresh pass from where it is.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::certify::{self, Settled};
use crate::data::{Dataset, Row};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::reference;
use crate::engine::{EngineError, EngineStats, MarginEngine, Pass, WalkStart, WalkStop};
use crate::train::variant::{self, Pocket, Variant};
use crate::train::{PassPolicy, TrainParams};

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
}

impl<F: Real> State<F> {
    pub fn initial(dim: usize) -> Self {
        Self::starting_from(vec![F::ZERO; dim])
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
}

/// Supplies a replacement engine after a device failure.
pub type Fallback<'a, F> = &'a mut dyn FnMut() -> Box<dyn MarginEngine<F> + 'a>;

/// Runs epochs from `state` until convergence, `max_epochs`, or a stop request.
pub fn run<'a, F: Real>(
    data: &Dataset<F>,
    params: &TrainParams,
    state: State<F>,
    mut engine: Box<dyn MarginEngine<F> + 'a>,
    fallback: Fallback<'a, F>,
    observer: &mut dyn Observer<F>,
) -> Result<Outcome<F>> {
    let (bias, max_epochs) = (params.bias, params.max_epochs);
    let heads = if params.multiclass {
        data.classes.len()
    } else {
        1
    };
    if params.multiclass {
        if data.class_ids.len() != data.rows() || heads < 2 {
            return Err(Error::Usage(format!(
                "one-vs-rest training needs at least two classes, with a class for every row (found {heads})"
            )));
        }
        if params.variant == Variant::Pocket {
            return Err(Error::Usage(
                "--pocket is not available with --multiclass".into(),
            ));
        }
    }
    let dim = data.cols() + bias as usize;
    if state.weights.len() != dim * heads {
        return Err(Error::Usage(format!(
            "initial weights have {} entries but the data needs {}",
            state.weights.len(),
            dim * heads
        )));
    }
    let mut state = state;
    if heads > 1 && state.head_mistakes_in_epoch.len() != heads {
        state.head_mistakes_in_epoch = vec![0; heads];
    }
    let mut lp = Loop::new(data, bias, heads, state);
    lp.modes.adaptive = params.passes == PassPolicy::Adaptive;
    lp.walk_enabled = params.passes != PassPolicy::Windows;
    lp.tau = params.margin.as_ref().map_or(F::ZERO, |m| m.value());
    if params.variant == Variant::Averaged && lp.state.average.is_none() {
        lp.state.average = Some(vec![F::ZERO; dim * heads]);
    }
    let mut engines = vec![engine.name()];
    let mut engine_stats = EngineStats::default();
    if params.variant == Variant::Pocket && lp.state.pocket.is_none() {
        // The initial weights are the first pocket.
        let mistakes = loop {
            match lp.count_mistakes(engine.as_mut())? {
                Ok(m) => break m,
                Err(e) => {
                    let old = engine.name();
                    engine = fallback();
                    lp.stats.fallbacks += 1;
                    engines.push(engine.name());
                    observer.on_warning(&format!(
                        "{old} failed: {e}; continuing on {}",
                        engine.name()
                    ));
                }
            }
        };
        lp.state.pocket = Some(Pocket {
            weights: lp.state.weights.clone(),
            mistakes,
            run: 0,
            epoch: 0,
            current_run: 0,
            current_evaluated: true,
            evaluations: 1,
        });
    }
    let mut epoch_seconds = Vec::new();
    let mut epoch_start = Instant::now();
    let stop = loop {
        if lp.state.mistakes_per_epoch.len() >= max_epochs {
            break Stop::MaxEpochs;
        }
        match lp.run_epoch(engine.as_mut(), observer)? {
            EpochEnd::Done => {
                let m = lp.finish_epoch();
                epoch_seconds.push(epoch_start.elapsed().as_secs_f64());
                observer.on_epoch_end(&lp.state)?;
                epoch_start = Instant::now();
                if m == 0 {
                    break Stop::Converged;
                }
            }
            EpochEnd::Interrupted => break Stop::Interrupted,
            EpochEnd::EngineFailed(e) => {
                let old = engine.name();
                accumulate(&mut engine_stats, &engine.stats());
                engine = fallback();
                lp.inflight.clear();
                lp.walk_active = false;
                lp.walker_version = None;
                lp.stats.fallbacks += 1;
                engines.push(engine.name());
                observer.on_warning(&format!(
                    "{old} failed: {e}; continuing on {} from epoch {}, row {} (no work lost, the result is unchanged)",
                    engine.name(),
                    lp.state.epoch + 1,
                    lp.state.position + 1
                ));
            }
        }
    };
    accumulate(&mut engine_stats, &engine.stats());
    Ok(Outcome {
        state: lp.state,
        stop,
        engines,
        stats: lp.stats,
        engine_stats,
        epoch_seconds,
    })
}

fn accumulate(total: &mut EngineStats, s: &EngineStats) {
    total.passes += s.passes;
    total.rows_evaluated += s.rows_evaluated;
    total.rows_uncertain += s.rows_uncertain;
    total.seconds += s.seconds;
}

enum EpochEnd {
    Done,
    Interrupted,
    EngineFailed(EngineError),
}

/// A pass submitted and not yet collected, with the weights it used.
struct InFlight<F> {
    start: usize,
    end: usize,
    weights: Vec<F>,
}

/// An upper bound of δ = ||w - w_pass||, kept up to date incrementally.
struct Drift {
    /// Σ (w_k - w_pass,k)² as computed, and a bound on its rounding error.
    sq: f64,
    err: f64,
    threshold: f64,
}

impl Drift {
    /// Starts tracking w relative to `base`: the pass may have been
    /// submitted before the latest updates, so w need not equal it.
    fn start<F: Real>(&mut self, w: &[F], base: &[F]) {
        self.sq = 0.0;
        self.err = 0.0;
        for (a, b) in w.iter().zip(base) {
            if a != b {
                self.change(0.0, a.to_f64() - b.to_f64());
            }
        }
        self.refresh();
    }

    /// Coordinate `k` moved from `old` to `new` (both relative to w_pass).
    #[inline]
    fn change(&mut self, old: f64, new: f64) {
        let (o, n) = (old * old, new * new);
        self.sq = self.sq + n - o;
        // Each of the few operations above errs by at most 2^-53 of the
        // magnitudes involved; 2^-50 leaves room for all of them.
        self.err += 2f64.powi(-50) * (self.sq.abs() + n + o);
    }

    fn refresh(&mut self) {
        let delta = (self.sq.max(0.0) + self.err).sqrt() * (1.0 + 2f64.powi(-50));
        self.threshold = certify::threshold(delta);
    }
}

/// Abandon a window once this many rows in it fell back to a dot product
/// because of drift, and they are more than a tenth of the rows walked.
const BREAK_AFTER: u64 = 32;

/// The smallest window the loop asks for after an early break.
const MIN_WINDOW: usize = 64;

/// Who walks the rows: the host alone (with its fast certified margins),
/// or the engine (its walk, or passes over windows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Host = 0,
    Engine = 1,
}

impl Mode {
    fn other(self) -> Mode {
        match self {
            Mode::Host => Mode::Engine,
            Mode::Engine => Mode::Host,
        }
    }
}

/// Chooses between the host and the engine by the wall time per row each
/// has been measured to cost, in stretches. The host is measured first. A
/// mode's stretches double while it stays the cheaper one; after its
/// longest stretch the other mode gets a short trial, so a change in the
/// data's behaviour (the mistake rate falls from epoch to epoch) is
/// noticed. A trial has a time budget and is cut short beyond it; a lost
/// trial is followed by a winner's stretch long enough that trials cost a
/// small share of the time; a winner that loses starts the other from
/// short.
struct Modes {
    /// Seconds per row, as last measured over at least [`MEASURE_ROWS`]
    /// rows: the latest figure, not an average, since a mode's cost changes
    /// with the mistake rate and older figures describe other rows.
    cost: [Option<f64>; 2],
    /// Time and rows walked but not yet measured (a stretch that ends at an
    /// epoch's end joins the next).
    pending: [(f64, usize); 2],
    /// The mode walking now, the rows left in its stretch, each mode's next
    /// stretch length, and the longest.
    current: Mode,
    left: usize,
    len: [usize; 2],
    max: usize,
    /// While the current stretch is a trial of the other mode: the stretch
    /// length the winner resumes with if the trial loses.
    resume: Option<usize>,
    /// Seconds and rows the current trial has taken so far.
    trial_spent: (f64, usize),
    /// False: always the engine.
    adaptive: bool,
}

/// Rows a mode must have walked before its cost per row counts; also the
/// shortest stretch.
const MEASURE_ROWS: usize = 4096;

/// A lost trial costs its rows times the gap between the two modes' costs;
/// the winner then walks long enough that trials cost at most 1/TRIAL_SHARE
/// of its time (at most [`MAX_EPOCHS_PER_STRETCH`] epochs).
const TRIAL_SHARE: f64 = 20.0;
const MAX_EPOCHS_PER_STRETCH: usize = 64;

/// A trial is cut short, and lost, once it has taken this many times what
/// the winner would take for the whole trial: a device far slower than the
/// host (a software adapter, or data with a mistake every few rows) then
/// costs little more than a bounded detour.
const TRIAL_BUDGET: f64 = 4.0;

impl Modes {
    fn new(rows: usize) -> Self {
        Modes {
            cost: [None, None],
            pending: [(0.0, 0); 2],
            // The host first: measuring it costs no setup, and the engine's
            // first stretch is then a trial with a budget.
            current: Mode::Host,
            left: MEASURE_ROWS,
            len: [MEASURE_ROWS; 2],
            max: rows.max(MEASURE_ROWS),
            resume: None,
            trial_spent: (0.0, 0),
            adaptive: true,
        }
    }

    /// The mode to walk with now, and at most how many rows before the next
    /// measurement.
    fn next(&self) -> (Mode, usize) {
        if self.adaptive {
            (self.current, self.left.max(1))
        } else {
            (Mode::Engine, usize::MAX)
        }
    }

    /// The seconds the current stretch may take before it is cut short:
    /// only a trial has a limit, from the winner's cost.
    fn trial_budget(&self) -> Option<f64> {
        self.resume?;
        let o = self.cost[self.current.other() as usize]?;
        Some((TRIAL_BUDGET * o * MEASURE_ROWS as f64 - self.trial_spent.0).max(0.0))
    }

    /// `mode` walked `rows` rows in `seconds`.
    fn measured(&mut self, mode: Mode, seconds: f64, rows: usize) {
        let m = mode as usize;
        self.pending[m].0 += seconds;
        self.pending[m].1 += rows;
        if self.pending[m].1 >= MEASURE_ROWS {
            let (s, r) = self.pending[m];
            self.cost[m] = Some(s / r as f64);
            self.pending[m] = (0.0, 0);
        }
        if !self.adaptive || mode != self.current {
            return;
        }
        self.left = self.left.saturating_sub(rows);
        if self.resume.is_some() {
            self.trial_spent.0 += seconds;
            self.trial_spent.1 += rows;
            if self.left > 0 && self.trial_budget() == Some(0.0) {
                // Over budget: what the trial took so far is its cost.
                let (s, r) = self.trial_spent;
                self.cost[m] = Some(s / r.max(1) as f64);
                self.pending[m] = (0.0, 0);
                self.left = 0;
            }
        }
        if self.left > 0 {
            return;
        }
        self.trial_spent = (0.0, 0);
        let other = mode.other();
        let trial = self.resume.take();
        match (self.cost[m], self.cost[other as usize]) {
            (Some(c), Some(o)) if c <= o => {
                if self.len[m] >= self.max {
                    // The longest stretch won: a short trial of the other.
                    self.resume = Some(self.len[m]);
                    self.switch(other, MEASURE_ROWS);
                } else {
                    self.len[m] = (2 * self.len[m]).min(self.max);
                    self.left = self.len[m];
                }
            }
            (Some(c), Some(o)) if trial.is_some() => {
                // A trial lost: the winner resumes, for long enough that the
                // next trial costs a small share of its time.
                // (The trial's rows, not fewer if it was cut short.)
                let spaced = TRIAL_SHARE * MEASURE_ROWS as f64 * (c / o - 1.0);
                let cap = self.max.saturating_mul(MAX_EPOCHS_PER_STRETCH);
                let len = trial
                    .unwrap_or(self.max)
                    .max(spaced.min(cap as f64) as usize)
                    .min(cap);
                self.len[m] = MEASURE_ROWS;
                self.switch(other, len);
            }
            // Lost, or the other never measured: the other, from short.
            _ => {
                if self.cost[other as usize].is_none() && self.cost[m].is_some() {
                    // The other's first stretch is a trial of it.
                    self.resume = Some(self.len[m]);
                }
                self.len[m] = MEASURE_ROWS;
                self.switch(other, MEASURE_ROWS);
            }
        }
    }

    fn switch(&mut self, to: Mode, rows: usize) {
        self.current = to;
        self.len[to as usize] = rows;
        self.left = rows;
    }
}

struct Loop<'d, F> {
    data: &'d Dataset<F>,
    bias: bool,
    /// Weights per head (features plus the bias).
    dim: usize,
    /// Perceptrons trained together (one-vs-rest classes; 1 for binary).
    heads: usize,
    rows: usize,
    state: State<F>,
    /// The rows' norms and which rows must never be settled by slack
    /// (`certify::needs_host`).
    facts: std::sync::Arc<certify::RowFacts>,
    inflight: VecDeque<InFlight<F>>,
    slack: Vec<f32>,
    /// One drift bound per head.
    drift: Vec<Drift>,
    /// Scratch: touched weights before an update.
    before: Vec<F>,
    /// The bound for the host's fast margins (None: reference dots only).
    host_bound: Option<crate::certify::Bound<F>>,
    /// The margin threshold τ of the mistake rule.
    tau: F,
    /// Slacks of the passes that count a pocket candidate's mistakes.
    eval_slack: Vec<f32>,
    /// Recent fraction of rows that were mistakes.
    mistake_rate: f64,
    /// Upper limit on the window, from how far recent windows got.
    window_cap: usize,
    /// Rows per window such that a window is about 2^26 multiply-adds, so
    /// stop requests are noticed promptly.
    work_cap: usize,
    modes: Modes,
    stats: LoopStats,
    /// Whether to use an engine's walk when it has one.
    walk_enabled: bool,
    /// A walk is in flight (begun, not yet stopped or cancelled).
    walk_active: bool,
    /// Counts every update of the weights, whoever decided it.
    weights_version: u64,
    /// The version the walker's copy of the weights is known to equal
    /// (verified bit for bit, or uploaded); `None` if unknown.
    walker_version: Option<u64>,
}

impl<'d, F: Real> Loop<'d, F> {
    fn new(data: &'d Dataset<F>, bias: bool, heads: usize, state: State<F>) -> Self {
        let rows = data.rows();
        let facts = data.facts(bias);
        Loop {
            data,
            bias,
            dim: data.cols() + bias as usize,
            heads,
            rows,
            state,
            facts,
            inflight: VecDeque::new(),
            slack: Vec::new(),
            drift: (0..heads)
                .map(|_| Drift {
                    sq: 0.0,
                    err: 0.0,
                    threshold: certify::threshold(0.0),
                })
                .collect(),
            before: Vec::new(),
            host_bound: None,
            tau: F::ZERO,
            eval_slack: Vec::new(),
            mistake_rate: 0.05,
            window_cap: usize::MAX,
            work_cap: {
                let terms =
                    data.features.storage_bytes() / std::mem::size_of::<F>().max(1) / rows.max(1);
                ((1usize << 26) / (terms + 1)).max(1)
            },
            modes: Modes::new(rows),
            stats: LoopStats::default(),
            walk_enabled: true,
            walk_active: false,
            weights_version: 0,
            walker_version: None,
        }
    }

    fn finish_epoch(&mut self) -> u64 {
        let m = self.state.mistakes_in_epoch;
        self.state.mistakes_per_epoch.push(m);
        if self.heads > 1 {
            let per_head =
                std::mem::replace(&mut self.state.head_mistakes_in_epoch, vec![0; self.heads]);
            self.state.head_mistakes_per_epoch.push(per_head);
        }
        self.state.epoch += 1;
        self.state.position = 0;
        self.state.mistakes_in_epoch = 0;
        m
    }

    /// Whether the current weights may go to an engine: small enough that
    /// nothing an engine computes can overflow ([`certify::engine_safe`]).
    fn weights_safe(&self) -> bool {
        certify::engine_safe(&self.state.weights, self.facts.max_norm)
    }

    fn window(&self, engine: &dyn MarginEngine<F>, from: usize) -> usize {
        let w = engine
            .preferred_window(self.mistake_rate)
            .min(self.window_cap)
            .min(self.work_cap)
            .max(1)
            .min(engine.max_pass().max(1));
        w.min(self.rows - from)
    }

    fn submit(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        start: usize,
    ) -> std::result::Result<(), EngineError> {
        let end = start + self.window(engine, start);
        let weights = self.state.weights.clone();
        engine.submit(&Pass {
            start,
            end,
            weights: &weights,
            tau: self.tau,
            heads: self.heads,
        })?;
        self.stats.passes += 1;
        self.inflight.push_back(InFlight {
            start,
            end,
            weights,
        });
        Ok(())
    }

    fn run_epoch(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        observer: &mut dyn Observer<F>,
    ) -> Result<EpochEnd> {
        self.host_bound = engine.certifies().then(|| {
            certify::Bound::for_weights(&self.state.weights, self.facts.l1_max)
                .with_margin(self.tau)
        });
        while self.state.position < self.rows {
            if observer.should_stop() {
                if let Err(e) = self.end_walk(engine) {
                    return Ok(EpochEnd::EngineFailed(e));
                }
                return Ok(EpochEnd::Interrupted);
            }
            if let Some(notice) = engine.take_notice() {
                observer.on_warning(&notice);
            }
            let pos = self.state.position;
            let t0 = Instant::now();
            if !engine.certifies() {
                // The textbook loop: every margin by the reference dot.
                let end = pos + self.window(engine, pos);
                if let Err(e) = self.walk_host(engine, end)? {
                    return Ok(EpochEnd::EngineFailed(e));
                }
                observer.on_progress(self.state.epoch, self.state.position, self.rows);
                continue;
            }
            let (mode, stretch) = self.modes.next();
            if mode == Mode::Host {
                // The host alone, with its fast certified margins.
                if let Err(e) = self.end_walk(engine) {
                    return Ok(EpochEnd::EngineFailed(e));
                }
                // Draining the engine's walk is the engine's cost, not the
                // host's: the host's stretch is timed from here.
                let t0 = Instant::now();
                let end = (pos + stretch.min(self.work_cap)).min(self.rows);
                if let Err(e) = self.walk_host(engine, end)? {
                    return Ok(EpochEnd::EngineFailed(e));
                }
                self.modes
                    .measured(Mode::Host, t0.elapsed().as_secs_f64(), end - pos);
                observer.on_progress(self.state.epoch, self.state.position, self.rows);
                continue;
            }
            if self.walks(engine) {
                // A trial's walk stops at its budget (see Modes::measured).
                let deadline = self
                    .modes
                    .trial_budget()
                    .and_then(|b| Duration::try_from_secs_f64(b).ok())
                    .and_then(|b| t0.checked_add(b));
                match self.walk_device(engine, observer, stretch, deadline)? {
                    Ok(()) => {}
                    Err(e) => return Ok(EpochEnd::EngineFailed(e)),
                }
                self.modes.measured(
                    Mode::Engine,
                    t0.elapsed().as_secs_f64(),
                    self.state.position - pos,
                );
                observer.on_progress(self.state.epoch, self.state.position, self.rows);
                continue;
            }
            if self.inflight.is_empty() && !self.weights_safe() {
                // Weights this large could overflow on a device: the host
                // decides every row until they are handed out again.
                let end = (pos + self.work_cap).min(self.rows);
                if let Err(e) = self.walk_host(engine, end)? {
                    return Ok(EpochEnd::EngineFailed(e));
                }
                observer.on_progress(self.state.epoch, self.state.position, self.rows);
                continue;
            }
            // Collect the pass that starts here, dropping any stale one.
            let pass = loop {
                if self.inflight.is_empty()
                    && let Err(e) = self.submit(engine, pos)
                {
                    return Ok(EpochEnd::EngineFailed(e));
                }

                let Some(front) = self.inflight.pop_front() else {
                    continue;
                };
                self.slack
                    .resize((front.end - front.start) * self.heads, 0.0);
                if let Err(e) = engine.collect(&mut self.slack) {
                    return Ok(EpochEnd::EngineFailed(e));
                }
                if front.start == pos {
                    break front;
                }
            };
            match self.walk(engine, &pass)? {
                Ok(()) => {}
                Err(e) => return Ok(EpochEnd::EngineFailed(e)),
            }
            self.modes.measured(
                Mode::Engine,
                t0.elapsed().as_secs_f64(),
                self.state.position - pos,
            );
            observer.on_progress(self.state.epoch, self.state.position, self.rows);
        }
        // Passes for rows beyond this epoch's end cannot exist: windows stop
        // at the last row.
        Ok(EpochEnd::Done)
    }

    /// Whether this run walks with the engine's walker: one head, no pocket
    /// (whose evaluations need passes), and an engine that has one.
    fn walks(&self, engine: &mut dyn MarginEngine<F>) -> bool {
        self.walk_enabled
            && self.heads == 1
            && self.state.pocket.is_none()
            && engine.walker().is_some()
    }

    /// Cancels a walk in flight, if any: its decisions past the loop's
    /// position are dropped, and the walker's weights need a resync.
    fn end_walk(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
    ) -> std::result::Result<(), EngineError> {
        if self.walk_active {
            // The walker may have gone on past the loop's position.
            self.walk_active = false;
            self.walker_version = None;
            if let Some(w) = engine.walker() {
                w.cancel()?;
            }
        }
        Ok(())
    }

    /// Replays the engine's walk for a stretch of rows (about `stretch`
    /// rows, or to a stop): every listed decision is applied with the
    /// reference arithmetic, the weights each update produced are compared
    /// with the walker's bit for bit, speculative decisions are re-decided,
    /// and unlisted rows are certainly correct.
    fn walk_device(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        observer: &mut dyn Observer<F>,
        stretch: usize,
        deadline: Option<Instant>,
    ) -> Result<std::result::Result<(), EngineError>> {
        let max_updates = certify::safe_updates(&self.state.weights, self.facts.max_norm);
        if max_updates == 0 {
            // Weights this large could overflow on a device.
            if let Err(e) = self.end_walk(engine) {
                return Ok(Err(e));
            }
            let end = (self.state.position + self.work_cap).min(self.rows);
            return self.walk_host(engine, end);
        }
        if !self.walk_active {
            let start = WalkStart {
                position: self.state.position,
                end: self.rows,
                weights: &self.state.weights,
                resync: self.walker_version != Some(self.weights_version),
                tau: self.tau,
                max_updates,
            };
            let Some(walker) = engine.walker() else {
                return Ok(Err(EngineError("the engine has no walker".into())));
            };
            if let Err(e) = walker.begin(&start) {
                return Ok(Err(e));
            }
            self.walk_active = true;
            self.walker_version = Some(self.weights_version);
        }
        // The chooser's stretch (the walk goes on between stretches), and
        // never more than about 2^26 multiply-adds, for stop requests.
        let stretch = self.work_cap.min(stretch);
        let target = (self.state.position + stretch).min(self.rows);
        // A walker must move: a batch may end where it started, but not
        // many in a row.
        let mut stalled = 0;
        while self.walk_active && self.state.position < target {
            let Some(walker) = engine.walker() else {
                return Ok(Err(EngineError("the engine has no walker".into())));
            };
            let batch = match walker.next() {
                Ok(b) => b,
                Err(e) => return Ok(Err(e)),
            };
            stalled = if batch.end == batch.start && batch.stop == WalkStop::Running {
                stalled + 1
            } else {
                0
            };
            if stalled > 64 {
                return Ok(Err(EngineError(format!(
                    "the walk made no progress at row {} in {stalled} batches",
                    self.state.position
                ))));
            }
            if batch.start != self.state.position
                || batch.end < batch.start
                || batch.end > self.rows
            {
                return Ok(Err(EngineError(format!(
                    "the walk returned rows {}..{} while the loop is at row {}",
                    batch.start, batch.end, self.state.position
                ))));
            }
            for d in &batch.decisions {
                let i = d.row;
                if i < self.state.position || i >= batch.end || (!d.speculative && !d.mistake) {
                    return Ok(Err(EngineError(format!(
                        "the walk returned an invalid decision for row {i} (loop at row {})",
                        self.state.position
                    ))));
                }
                self.stats.certified_correct += (i - self.state.position) as u64;
                self.state.position = i;
                let (mistake, rollback) = if d.speculative {
                    self.stats.walk_speculative += 1;
                    let host = self.host_decides(i, 0)?;
                    (host, host != d.mistake)
                } else {
                    self.stats.certified_mistakes += 1;
                    (true, false)
                };
                if let Err(e) = self.commit(engine, i, 0, mistake, None)? {
                    return Ok(Err(e));
                }
                self.state.position = i + 1;
                if rollback {
                    // The device's reference dot came out otherwise (a fused
                    // multiply-add can do that): the host's decision stands,
                    // and the walk after it is void.
                    self.stats.walk_rollbacks += 1;
                    return Ok(self.end_walk(engine));
                }
                if mistake {
                    match d.values_at {
                        Some(at) => {
                            // The walker applied this very update to weights
                            // equal to the loop's (verified so far).
                            self.walker_version = self.walker_version.map(|_| self.weights_version);
                            if let Some(k) = self.differing_weight(i, &batch.values, at) {
                                observer.on_warning(&format!(
                                    "the device's update of weight {} at epoch {}, row {} differs from IEEE round-to-nearest; its walk is off for the rest of this run (the result is unaffected)",
                                    k + 1,
                                    self.state.epoch + 1,
                                    i + 1
                                ));
                                self.walk_enabled = false;
                                return Ok(self.end_walk(engine));
                            }
                        }
                        None => self.walker_version = None,
                    }
                }
            }
            self.stats.certified_correct += (batch.end - self.state.position) as u64;
            self.state.position = batch.end;
            match batch.stop {
                WalkStop::Running => {}
                WalkStop::End | WalkStop::Updates => self.walk_active = false,
                WalkStop::Resync => {
                    self.walk_active = false;
                    self.walker_version = None;
                }
            }
            if observer.should_stop() || deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
        }
        Ok(Ok(()))
    }

    /// The first coordinate (0-based, the bias last) whose weight after the
    /// update of row `i` differs from the walker's value, if any.
    fn differing_weight(&self, i: usize, values: &[F], at: usize) -> Option<usize> {
        let w = &self.state.weights;
        let mut j = at;
        let mut differs = None;
        reference::for_each_touched(self.data.features.row(i), self.bias, self.dim, |k| {
            if differs.is_none()
                && values.get(j).map(|v| v.to_f64().to_bits()) != Some(w[k].to_f64().to_bits())
            {
                differs = Some(k);
            }
            j += 1;
        });
        differs
    }

    /// Walks the rows of `pass` from the current position, settling by slack
    /// where the drift allows. Submits the next window halfway through.
    fn walk(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        pass: &InFlight<F>,
    ) -> Result<std::result::Result<(), EngineError>> {
        let dim = self.dim;
        for (h, d) in self.drift.iter_mut().enumerate() {
            d.start(
                &self.state.weights[h * dim..(h + 1) * dim],
                &pass.weights[h * dim..(h + 1) * dim],
            );
        }
        let mut drift_fallbacks = 0u64;
        let half = pass.start + (pass.end - pass.start) / 2;
        let mut i = pass.start;
        let mut mistakes = 0u64;
        let mut next_considered = false;
        while i < pass.end {
            if !next_considered && self.inflight.is_empty() && i >= half && pass.end < self.rows {
                next_considered = true;
                if self.weights_safe()
                    && let Err(e) = self.submit(engine, pass.end)
                {
                    return Ok(Err(e));
                }
            }
            if self.heads == 1 && self.state.pocket.is_none() {
                // The common case, rows settled correct, in a tight loop:
                // the same test as below, nothing to do for such a row.
                // Stops at the halfway mark so the next pass goes out then.
                let stop = if i < half { half } else { pass.end };
                let skipped = self.skip_settled_correct(i, stop, pass.start);
                if skipped > 0 {
                    self.stats.certified_correct += skipped as u64;
                    i += skipped;
                    self.state.position = i;
                    continue;
                }
            }
            let forced = self.facts.is_host_only(i);
            for h in 0..self.heads {
                let r = self.slack[(i - pass.start) * self.heads + h];
                let verdict = if forced {
                    Settled::Unknown
                } else {
                    certify::settle(r, self.drift[h].threshold)
                };
                let mistake = match verdict {
                    Settled::Correct => {
                        self.stats.certified_correct += 1;
                        false
                    }
                    Settled::Mistake => {
                        self.stats.certified_mistakes += 1;
                        true
                    }
                    Settled::Unknown => {
                        if r != 0.0 && !forced {
                            self.stats.drift_fallbacks += 1;
                            drift_fallbacks += 1;
                        }
                        self.host_decides(i, h)?
                    }
                };
                mistakes += mistake as u64;
                let base = &pass.weights[h * dim..(h + 1) * dim];
                if let Err(e) = self.commit(engine, i, h, mistake, Some(base))? {
                    return Ok(Err(e));
                }
            }
            i += 1;
            self.state.position = i;
            let walked = (i - pass.start) as u64;
            if drift_fallbacks >= BREAK_AFTER
                && drift_fallbacks * 10 > walked * self.heads as u64
                && i < pass.end
            {
                // Windows this long are all drift allows: ask for about
                // that much next time.
                self.stats.early_breaks += 1;
                self.window_cap = (2 * walked as usize).max(MIN_WINDOW);
                break;
            }
        }
        if i == pass.end {
            self.window_cap = self.window_cap.saturating_mul(2);
        }

        let walked = ((i - pass.start) * self.heads).max(1) as f64;
        self.mistake_rate = 0.5 * self.mistake_rate + 0.5 * (mistakes as f64 / walked);
        Ok(Ok(()))
    }

    /// How many rows from `i` (before `stop`) are settled correct by their
    /// slack under the current drift of a single head: exactly the rows the
    /// per-row test would settle correct, host-only rows excluded.
    fn skip_settled_correct(&self, i: usize, stop: usize, pass_start: usize) -> usize {
        let threshold = self.drift[0].threshold;
        let slack = &self.slack[i - pass_start..stop - pass_start];
        let mut n = 0;
        while n < slack.len() {
            let p = i + n;
            // The one settle test (a NaN slack settles nothing).
            if self.facts.is_host_only(p)
                || certify::settle(slack[n], threshold) != Settled::Correct
            {
                break;
            }
            n += 1;
        }
        n
    }

    /// Walks rows up to `end` deciding every row on the host.
    fn walk_host(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        end: usize,
    ) -> Result<std::result::Result<(), EngineError>> {
        for i in self.state.position..end {
            self.data.features.prefetch_row(i + 1);
            for h in 0..self.heads {
                let mistake = self.host_decides(i, h)?;
                if let Err(e) = self.commit(engine, i, h, mistake, None)? {
                    return Ok(Err(e));
                }
            }
            self.state.position = i + 1;
        }
        Ok(Ok(()))
    }

    /// Applies the decision for row `i`: the update on a mistake (keeping
    /// the drift relative to `pass_weights`), and each variant's bookkeeping.
    fn commit(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
        i: usize,
        h: usize,
        mistake: bool,
        pass_weights: Option<&[F]>,
    ) -> Result<std::result::Result<(), EngineError>> {
        if mistake {
            self.update(i, h, pass_weights)?;
            let dim = self.dim;
            if let Some(u) = &mut self.state.average {
                let c = self.state.epoch as u64 * self.rows as u64 + i as u64 + 1;
                let y = self.data.label_for(h, self.heads, i);
                variant::accumulate(
                    &mut u[h * dim..(h + 1) * dim],
                    self.data.features.row(i),
                    y,
                    c,
                    self.bias,
                )?;
            }
            if let Some(p) = &mut self.state.pocket {
                p.current_run = 0;
                p.current_evaluated = false;
            }
            return Ok(Ok(()));
        }
        let Some(p) = &mut self.state.pocket else {
            return Ok(Ok(()));
        };
        p.current_run += 1;
        if p.current_evaluated || p.current_run <= p.run {
            return Ok(Ok(()));
        }
        p.current_evaluated = true;
        let mistakes = match self.count_mistakes(engine)? {
            Ok(m) => m,
            Err(e) => {
                // Evaluate again on the next engine.
                if let Some(p) = &mut self.state.pocket {
                    p.current_evaluated = false;
                    p.current_run -= 1;
                }
                return Ok(Err(e));
            }
        };
        let (epoch, weights) = (self.state.epoch, &self.state.weights);
        if let Some(p) = &mut self.state.pocket {
            p.evaluations += 1;
            if mistakes < p.mistakes {
                p.weights.clone_from(weights);
                p.mistakes = mistakes;
                p.run = p.current_run;
                p.epoch = epoch;
            }
        }
        Ok(Ok(()))
    }

    /// Training mistakes (y·s <= 0) of the current weights over every row,
    /// certified by engine passes where the engine certifies. Passes in
    /// flight are dropped first (the walk resubmits).
    fn count_mistakes(
        &mut self,
        engine: &mut dyn MarginEngine<F>,
    ) -> Result<std::result::Result<u64, EngineError>> {
        while let Some(stale) = self.inflight.pop_front() {
            self.eval_slack.resize(stale.end - stale.start, 0.0);
            if let Err(e) = engine.collect(&mut self.eval_slack) {
                return Ok(Err(e));
            }
        }
        self.stats.pocket_evaluations += 1;
        let data = self.data;
        let w = &self.state.weights;
        let use_engine = engine.certifies() && certify::engine_safe(w, self.facts.max_norm);
        let host = engine
            .certifies()
            .then(|| certify::Bound::for_weights(w, self.facts.l1_max));
        let mut mistakes = 0u64;
        let mut start = 0;
        while start < self.rows {
            let end = (start
                + engine
                    .max_pass()
                    .min(self.work_cap.saturating_mul(4))
                    .max(1))
            .min(self.rows);
            self.eval_slack.clear();
            self.eval_slack.resize(end - start, 0.0);
            if use_engine {
                self.stats.passes += 1;
                if let Err(e) = engine.submit(&Pass {
                    start,
                    end,
                    weights: w,
                    tau: F::ZERO,
                    heads: 1,
                }) {
                    return Ok(Err(e));
                }
                if let Err(e) = engine.collect(&mut self.eval_slack) {
                    return Ok(Err(e));
                }
            }
            for i in start..end {
                let y = data.labels[i];
                let slack = self.eval_slack[i - start];
                let (verdict, _) = crate::decide::settle_row(
                    &self.facts,
                    host.as_ref(),
                    slack,
                    w,
                    data,
                    i,
                    self.bias,
                    y,
                );
                mistakes += match verdict {
                    Settled::Correct => 0,
                    Settled::Mistake => 1,
                    Settled::Unknown => {
                        self.stats.host_dots += 1;
                        let s = reference::dot(w, data.features.row(i), self.bias);
                        if !s.is_finite() {
                            return Err(Error::Train(format!(
                                "row {}: the margin w·x is {s} while counting a pocket candidate's mistakes: the features are too large for {}",
                                i + 1,
                                F::PRECISION
                            )));
                        }
                        reference::is_mistake(y, s) as u64
                    }
                };
            }
            start = end;
        }
        Ok(Ok(mistakes))
    }

    /// The reference decision for row `i` under the current weights:
    /// first from a fast (8-lane) margin with its certificate when the
    /// engine certifies at all, else from the reference dot itself.
    fn host_decides(&mut self, i: usize, h: usize) -> Result<bool> {
        let dim = self.dim;
        let w = &self.state.weights[h * dim..(h + 1) * dim];
        let y = self.data.label_for(h, self.heads, i);
        let row = self.data.features.row(i);
        if let Some(bound) = &self.host_bound {
            let forced = self.facts.is_host_only(i);
            if !forced {
                match crate::cpu::decide(bound, w, row, self.bias, y) {
                    Settled::Correct => {
                        self.stats.host_certified += 1;
                        return Ok(false);
                    }
                    Settled::Mistake => {
                        self.stats.host_certified += 1;
                        return Ok(true);
                    }
                    Settled::Unknown => {}
                }
            }
        }
        self.stats.host_dots += 1;
        let s = reference::dot(w, row, self.bias);
        if !s.is_finite() {
            return Err(Error::Train(format!(
                "epoch {}, row {}: the margin w·x is {s}: the features are too large for {} (products overflow); rescale them or use --precision f64",
                self.state.epoch + 1,
                i + 1,
                F::PRECISION
            )));
        }
        Ok(reference::is_mistake_within(y, s, self.tau))
    }

    /// Applies head `h`'s update for a mistake at row `i`, keeping its
    /// drift bound relative to `pass_weights` (that head's slice) current.
    fn update(&mut self, i: usize, h: usize, pass_weights: Option<&[F]>) -> Result<()> {
        self.state.mistakes_in_epoch += 1;
        self.weights_version += 1;
        if self.heads > 1 {
            self.state.head_mistakes_in_epoch[h] += 1;
        }
        let data = self.data;
        let row = data.features.row(i);
        let dim = self.dim;
        let w = &mut self.state.weights[h * dim..(h + 1) * dim];
        if pass_weights.is_some() {
            // The touched coordinates' values before the update.
            self.before.clear();
            reference::for_each_touched(row, self.bias, dim, |k| self.before.push(w[k]));
        }
        if let Err(o) = reference::apply_update(w, row, data.label_for(h, self.heads, i), self.bias)
        {
            return Err(Error::Train(format!(
                "epoch {}, row {}: weight {} overflowed to infinity: the features are too large for {}; rescale them or use --precision f64",
                self.state.epoch + 1,
                i + 1,
                o.coordinate + 1,
                F::PRECISION
            )));
        }
        let subnormal = reference::touched_subnormal(w, row, self.bias);
        if let Some(base) = pass_weights {
            self.record_drift(row, h, base);
        }
        if let Some(b) = &mut self.host_bound {
            // A subnormal weight adds the flush term (sticky until the next epoch).
            if b.flush == F::ZERO && subnormal {
                *b = certify::Bound::new(true, self.facts.l1_max).with_margin(self.tau);
            }
        }
        Ok(())
    }

    fn record_drift(&mut self, row: Row<'_, F>, h: usize, base: &[F]) {
        let dim = self.dim;
        let w = &self.state.weights[h * dim..(h + 1) * dim];
        let before = &self.before;
        let drift = &mut self.drift[h];
        let mut j = 0;
        reference::for_each_touched(row, self.bias, dim, |k| {
            let b = base[k].to_f64();
            drift.change(before[j].to_f64() - b, w[k].to_f64() - b);
            j += 1;
        });
        drift.refresh();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks `rows` rows with the chooser, each mode costing `cost(mode,
    /// row)` seconds per row, in pieces of at most `piece` rows (the loop's
    /// windows, or a walk's batches); returns the seconds spent.
    fn simulate_in(
        piece: usize,
        modes: &mut Modes,
        from: usize,
        rows: usize,
        cost: impl Fn(Mode, usize) -> f64,
    ) -> f64 {
        let (mut at, mut seconds) = (from, 0.0);
        while at < from + rows {
            let (mode, stretch) = modes.next();
            let n = stretch.min(piece).min(from + rows - at);
            let s = n as f64 * cost(mode, at);
            modes.measured(mode, s, n);
            seconds += s;
            at += n;
        }
        seconds
    }

    fn simulate(
        modes: &mut Modes,
        from: usize,
        rows: usize,
        cost: impl Fn(Mode, usize) -> f64,
    ) -> f64 {
        simulate_in(1000, modes, from, rows, cost)
    }

    #[test]
    fn trials_of_a_much_dearer_mode_cost_a_small_share() {
        let epoch = 25_000;
        let mut modes = Modes::new(epoch);
        let cost = |m: Mode, _| if m == Mode::Host { 1e-9 } else { 1e-8 };
        simulate(&mut modes, 0, 20 * epoch, cost);
        // In steady state: within 10% of always walking with the host.
        let t = simulate(&mut modes, 20 * epoch, 200 * epoch, cost);
        let best = 200.0 * epoch as f64 * 1e-9;
        assert!(t <= 1.1 * best, "{:.3}x the cheaper mode's time", t / best);
        // And trials still happen: never more than 64 epochs apart.
        assert!(t > best);
    }

    #[test]
    fn a_trial_of_a_far_dearer_mode_is_cut_short() {
        let epoch = 25_000;
        let mut modes = Modes::new(epoch);
        // The engine costs 1000x the host: every trial is cut at its
        // budget (4x the host's time for the trial's rows) after a piece.
        let cost = |m: Mode, _| if m == Mode::Host { 1e-9 } else { 1e-6 };
        simulate_in(100, &mut modes, 0, 20 * epoch, cost);
        let t = simulate_in(100, &mut modes, 20 * epoch, 400 * epoch, cost);
        let best = 400.0 * epoch as f64 * 1e-9;
        assert!(t <= 1.1 * best, "{:.3}x the cheaper mode's time", t / best);
    }

    #[test]
    fn a_change_in_which_mode_is_cheaper_is_followed() {
        let epoch = 25_000;
        let mut modes = Modes::new(epoch);
        // The engine is 10x dearer for 100 epochs, then 10x cheaper.
        let flip = 100 * epoch;
        let cost = |m: Mode, at: usize| match (m == Mode::Host, at < flip) {
            (true, true) | (false, false) => 1e-9,
            _ => 1e-8,
        };
        simulate(&mut modes, 0, flip, cost);
        // Within the longest stretch (64 epochs) and a doubling or two.
        simulate(&mut modes, flip, 70 * epoch, cost);
        let t = simulate(&mut modes, flip + 70 * epoch, 100 * epoch, cost);
        let best = 100.0 * epoch as f64 * 1e-9;
        assert!(t <= 1.1 * best, "{:.3}x the cheaper mode's time", t / best);
    }
}
