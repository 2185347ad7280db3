//! Who walks the rows, the host or the engine: chosen by the measured wall
//! time per row of each, in stretches, with budgeted trials of the other.

/// Rows walked and the seconds they took, for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ModeTime {
    pub rows: u64,
    pub seconds: f64,
}

impl ModeTime {
    fn is_empty(&self) -> bool {
        self.rows == 0 && self.seconds == 0.0
    }

    fn add(&mut self, seconds: f64, rows: usize) {
        self.rows += rows as u64;
        self.seconds += seconds;
    }
}

/// How one epoch's rows were walked: by the host with its certified
/// margins, by the textbook loop (the reference dot for every row), by the
/// engine (its walk or passes over windows), by the host with the other
/// cores summing sparse rows ahead, and by the CPU engine beside a device's
/// (its walk or passes; only with a pair, see [`crate::engine::pair`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct EpochModes {
    pub host: ModeTime,
    pub reference: ModeTime,
    pub engine: ModeTime,
    pub ahead: ModeTime,
    #[serde(skip_serializing_if = "ModeTime::is_empty")]
    pub cores: ModeTime,
}

/// Who walks the rows: the host alone with its fast certified margins, the
/// host alone with the reference dot for every row (the textbook loop:
/// where a certificate costs more than the dot it would save, as on short
/// sparse rows), the engine (its walk, or passes over windows), the host
/// with the other cores summing sparse rows ahead of it
/// ([`crate::engine::cpu::lookahead`]: where mistakes are far apart), or
/// the CPU engine beside a device's ([`crate::engine::pair`]: where
/// mistakes are too close together for a device's round trips).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Host = 0,
    Reference = 1,
    Engine = 2,
    Ahead = 3,
    Cores = 4,
}

impl Mode {
    /// Whether the mode walks with several cores or a device, so that it
    /// gains the most when mistakes grow further apart.
    fn parallel(self) -> bool {
        matches!(self, Mode::Engine | Mode::Ahead | Mode::Cores)
    }

    /// Whether the mode is an engine's walk or passes (the device's, or
    /// the CPU engine's beside it), rather than a walk of the host's.
    pub(super) fn engine(self) -> bool {
        matches!(self, Mode::Engine | Mode::Cores)
    }
}

const MODES: usize = 5;
const ALL: [Mode; MODES] = [
    Mode::Host,
    Mode::Reference,
    Mode::Engine,
    Mode::Ahead,
    Mode::Cores,
];
/// The order unmeasured modes get their first trials in: the engine, which
/// is there to be used, and the cores beside it, before the textbook loop,
/// which rarely wins.
const FIRST_TRIALS: [Mode; MODES] = [
    Mode::Engine,
    Mode::Cores,
    Mode::Host,
    Mode::Ahead,
    Mode::Reference,
];

/// Chooses among the modes by the wall time per row each has been measured
/// to cost, in stretches. The host is measured first. A mode's stretches
/// double while it stays the cheapest; after its longest stretch another
/// mode gets a short trial (one not yet measured first, else each in turn),
/// so a change in the data's behaviour is noticed. A trial has a time
/// budget and is cut short beyond it; a lost trial is followed by a
/// winner's stretch long enough that trials cost a small share of the time;
/// a winner that loses starts the cheaper one from short, and each trial a
/// mode loses in a row doubles the wait for its next. A mode's first
/// piece is not measured at all: it pays one-time costs (a device's first
/// dispatch loads and compiles its pipelines, tens of milliseconds on an
/// H100) that say nothing about its cost per row. When an epoch makes far
/// fewer mistakes than the one before, the modes' relative costs change
/// (a device's walk, or the walk ahead, gains the most), so those modes'
/// figures are dropped and the current stretch ends soon, for fresh trials.
#[derive(Clone, Debug)]
pub(super) struct Chooser {
    /// Seconds per row, as last measured over at least [`MEASURE_ROWS`]
    /// rows: the latest figure, not an average, since a mode's cost changes
    /// with the mistake rate and older figures describe other rows.
    cost: [Option<f64>; MODES],
    /// Time and rows walked but not yet measured (a stretch that ends at an
    /// epoch's end joins the next).
    pending: [(f64, usize); MODES],
    /// The mode walking now, the rows left in its stretch, each mode's next
    /// stretch length, and the longest.
    current: Mode,
    left: usize,
    len: [usize; MODES],
    max: usize,
    /// While the current stretch is a trial: the mode it is measured against
    /// and the stretch length that mode resumes with if the trial loses.
    resume: Option<(Mode, usize)>,
    /// Seconds and rows the current trial has taken so far.
    trial_spent: (f64, usize),
    /// Whether each mode has walked its first, unmeasured piece, and
    /// whether it walks one after each switch to it (see
    /// [`Chooser::switch`]).
    warmed: [bool; MODES],
    rewarms: [bool; MODES],
    /// Whether each mode can walk these rows at all (the walk ahead needs
    /// sparse rows and cores to help).
    available: [bool; MODES],
    /// Rows a measurement needs (see [`MEASURE_ROWS`]).
    measure: usize,
    /// The mode the next trial starts looking from (each in turn), and each
    /// mode's trials lost in a row (each doubles the wait for the next).
    next_trial: usize,
    losses: [u32; MODES],
    /// `Some(mode)`: always that mode, nothing measured for choosing.
    pub(super) forced: Option<Mode>,
    /// Mistakes in the epoch the modes' figures were last measured afresh
    /// in (see [`Chooser::epoch_ended`]).
    measured_in: Option<u64>,
    /// What each mode walked this epoch, every piece counted.
    epoch: EpochModes,
    /// Tests: pieces of given modes and rows, in turn, one per measurement,
    /// in place of any choice (the loop then switches modes mid-stretch,
    /// with walks and passes in flight).
    #[cfg(test)]
    pub(super) turns: Vec<(Mode, usize)>,
}

/// Rows a mode must have walked before its cost per row counts, also the
/// shortest stretch: a 32nd of an epoch, within these bounds.
pub(super) const MEASURE_ROWS: usize = 4096;
pub(super) const MIN_MEASURE_ROWS: usize = 256;

/// A lost trial costs its rows times the gap between the two modes' costs;
/// the winner then walks long enough that trials cost at most 1/TRIAL_SHARE
/// of its time (at most [`MAX_EPOCHS_PER_STRETCH`] epochs).
pub(super) const TRIAL_SHARE: f64 = 20.0;
pub(super) const MAX_EPOCHS_PER_STRETCH: usize = 64;

/// A trial is cut short, and lost, once it has taken this many times what
/// the winner would take for the whole trial: a device far slower than the
/// host (a software adapter, or data with a mistake every few rows) then
/// costs little more than a bounded detour.
pub(super) const TRIAL_BUDGET: f64 = 2.0;

/// Rows of a mode's first, unmeasured piece at most: its one-time costs
/// are paid whatever it walks, and its rows are walked at whatever cost.
pub(super) const WARM_ROWS: usize = 256;

/// A trial of the walk ahead walks this many measurements' rows (see
/// [`Chooser::trial_rows`]).
pub(super) const AHEAD_TRIAL: usize = 4;

/// An epoch with fewer than 1/MISTAKES_FELL of the mistakes of the epoch
/// the modes were last measured in starts fresh trials.
pub(super) const MISTAKES_FELL: u64 = 2;

/// What a run's chooser measured of the modes, carried into the next run
/// over the same rows ([`crate::train::Stepper::recall`]). scikit-learn's
/// schedule runs each epoch as a run of its own, in a new order: without
/// this, every epoch priced every mode afresh, trials and all, and a
/// trial lost at an epoch's start could hand the whole epoch to another
/// mode.
#[derive(Clone, Debug)]
pub struct ChooserMemory(Chooser);

impl Chooser {
    /// What this chooser measured, for the next run (the run is over).
    pub(super) fn into_memory(self) -> ChooserMemory {
        ChooserMemory(self)
    }

    /// The chooser a new run over the same rows starts with: what `memory`
    /// measured, and the mode it walked, go on. Each mode's first piece
    /// is again unmeasured, since the new run has a new engine and new
    /// helpers whose one-time costs say nothing of their cost per row; the
    /// new run's `forced` mode stands.
    pub(super) fn recall(&mut self, memory: ChooserMemory) {
        if (memory.0.measure, memory.0.max) != (self.measure, self.max) {
            // Rows of another number: what was measured does not carry.
            return;
        }
        let forced = self.forced;
        *self = memory.0;
        self.forced = forced;
        self.warmed = [false; MODES];
        self.epoch = EpochModes::default();
    }

    pub(super) fn new(rows: usize) -> Self {
        // Small data measures on fewer rows: a trial is then a small share
        // of an epoch (a Fashion-MNIST pair's epoch is 14,000 rows).
        let measure = (rows / 32).clamp(MIN_MEASURE_ROWS, MEASURE_ROWS);
        Chooser {
            cost: [None; MODES],
            pending: [(0.0, 0); MODES],
            // The host first: measuring it costs no setup, and the engine's
            // first stretch is then a trial with a budget.
            current: Mode::Host,
            left: measure,
            len: [measure; MODES],
            max: rows.max(measure),
            measure,
            resume: None,
            trial_spent: (0.0, 0),
            warmed: [false; MODES],
            rewarms: [false, false, true, true, true],
            available: [true, true, true, false, false],
            next_trial: Mode::Engine as usize,
            losses: [0; MODES],
            forced: None,
            measured_in: None,
            epoch: EpochModes::default(),
            #[cfg(test)]
            turns: Vec::new(),
        }
    }

    /// Whether the current mode's next piece is its unmeasured warm-up.
    pub(super) fn warming(&self) -> bool {
        self.forced.is_none() && !self.warmed[self.current as usize]
    }

    /// Rows a mode must walk before its cost per row counts.
    pub(super) fn measure(&self) -> usize {
        self.measure
    }

    /// What each mode walked since the last call: one epoch's account.
    pub(super) fn take_epoch(&mut self) -> EpochModes {
        std::mem::take(&mut self.epoch)
    }

    /// The textbook loop walked `rows` rows in `seconds` with an engine that
    /// certifies nothing (nothing to choose).
    pub(super) fn measured_textbook(&mut self, seconds: f64, rows: usize) {
        self.epoch.reference.add(seconds, rows);
    }

    /// The mode to walk with now, and at most how many rows before the next
    /// measurement.
    pub(super) fn next(&self) -> (Mode, usize) {
        #[cfg(test)]
        if let Some(&turn) = self.turns.first() {
            return turn;
        }
        match self.forced {
            Some(mode) => (mode, usize::MAX),
            None if !self.warmed[self.current as usize] => {
                (self.current, self.left.clamp(1, WARM_ROWS))
            }
            None => (self.current, self.left.max(1)),
        }
    }

    /// The seconds the current stretch may take before it is cut short:
    /// only a trial has a limit, from the cost of the mode it is measured
    /// against, for one measurement's rows (also for the walk ahead's
    /// longer trial: see [`Chooser::trial_rows`]).
    pub(super) fn trial_budget(&self) -> Option<f64> {
        let (against, _) = self.resume?;
        let o = self.cost[against as usize]?;
        Some((TRIAL_BUDGET * o * self.measure as f64 - self.trial_spent.0).max(0.0))
    }

    /// When the current stretch, started at `t0`, must end: at its trial
    /// budget ([`Chooser::trial_budget`]); `None` outside a trial.
    pub(super) fn trial_deadline(&self, t0: std::time::Instant) -> Option<std::time::Instant> {
        self.trial_budget()
            .and_then(|b| std::time::Duration::try_from_secs_f64(b).ok())
            .and_then(|b| t0.checked_add(b))
    }

    /// An epoch ended with `mistakes`, after one of `before`: if far fewer
    /// than in the epoch the modes' figures were measured in, what was
    /// measured of the modes not walking now describes other rows. (Against
    /// that epoch, not just the one before: mistakes that fall by a third
    /// an epoch never halve from one epoch to the next, yet they do every
    /// two or three.)
    pub(super) fn epoch_ended(&mut self, mistakes: u64, before: Option<u64>) {
        if self.forced.is_some() {
            return;
        }
        let Some(measured_in) = self.measured_in.or(before) else {
            return;
        };
        self.measured_in = Some(measured_in);
        if mistakes * MISTAKES_FELL >= measured_in {
            return;
        }
        self.measured_in = Some(mistakes);
        // Fewer mistakes make the modes that walk on several cores (or a
        // device) cheaper against those that walk on one, not the other
        // way round: only their figures are stale, and only they are tried
        // afresh (each trial costs up to twice the winner's time for its
        // rows; trying every mode each time mistakes halve cost a seventh
        // of the late epochs on sparse rows).
        let stale: Vec<Mode> = ALL
            .into_iter()
            .filter(|&m| m != self.current && m.parallel())
            .collect();
        if stale.is_empty() {
            return;
        }
        for m in stale {
            self.cost[m as usize] = None;
            self.pending[m as usize] = (0.0, 0);
            self.losses[m as usize] = 0;
        }
        self.end_stretch_soon();
    }

    /// `mode` walked `rows` rows in `seconds`.
    pub(super) fn measured(&mut self, mode: Mode, seconds: f64, rows: usize) {
        let m = mode as usize;
        match mode {
            Mode::Host => self.epoch.host.add(seconds, rows),
            Mode::Reference => self.epoch.reference.add(seconds, rows),
            Mode::Engine => self.epoch.engine.add(seconds, rows),
            Mode::Ahead => self.epoch.ahead.add(seconds, rows),
            Mode::Cores => self.epoch.cores.add(seconds, rows),
        }
        #[cfg(test)]
        if !self.turns.is_empty() {
            self.turns.rotate_left(1);
            return;
        }
        if !self.warmed[m] && rows > 0 {
            // The warm-up piece: its rows are walked, its time is not
            // counted, and its stretch goes on as if it had not begun. (A
            // piece that walked no row counts as usual, so a trial of an
            // engine that keeps stalling still runs out of budget.)
            self.warmed[m] = true;
            return;
        }
        self.pending[m].0 += seconds;
        self.pending[m].1 += rows;
        if self.pending[m].1 >= self.measure {
            let (s, r) = self.pending[m];
            self.cost[m] = Some(s / r as f64);
            self.pending[m] = (0.0, 0);
        }
        if self.forced.is_some() || mode != self.current {
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
        self.stretch_ended(mode);
    }

    /// The current stretch, of `mode`, is over: `mode` walks on or another
    /// takes over, by what they were measured to cost.
    fn stretch_ended(&mut self, mode: Mode) {
        let m = mode as usize;
        let spent = std::mem::take(&mut self.trial_spent);
        let trial = self.resume.take();
        let cheapest_other = ALL
            .into_iter()
            .filter(|&o| o != mode)
            .filter_map(|o| Some((o, self.cost[o as usize]?)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match (trial, self.cost[m]) {
            (Some((winner, resume)), Some(c)) => self.trial_ended(mode, c, (winner, resume), spent),
            (_, Some(c)) if cheapest_other.is_none_or(|(_, o)| c <= o) => self.after_win(mode),
            (_, Some(_)) => {
                // Lost to a mode measured cheaper: that one, from short.
                self.len[m] = self.measure;
                if let Some((o, _)) = cheapest_other {
                    self.switch(o, self.trial_rows(o));
                }
            }
            // Not measured yet (its pieces were too short): more of it.
            (_, None) => self.left = self.measure,
        }
    }

    /// A trial of `mode` ended, measured at `c` per row after taking
    /// `spent` (seconds, rows): it lost to the `winner` it was measured
    /// against (who resumes, with `resume` rows at least) or won (and walks
    /// on).
    fn trial_ended(
        &mut self,
        mode: Mode,
        c: f64,
        (winner, resume): (Mode, usize),
        spent: (f64, usize),
    ) {
        let m = mode as usize;
        let w = self.cost[winner as usize];
        if w.is_some_and(|w| c > w) {
            // A trial lost: the winner resumes, for long enough that
            // the next trial costs a small share of its time. What
            // the trial lost is what it took beyond the winner's time
            // for its rows: at most its budget, however dear its few
            // rows made its cost per row look (a device's first
            // batches early in training settle a handful of rows
            // each).
            let o = w.unwrap_or(c);
            let lost = (spent.0 - o * spent.1 as f64).max(0.0);
            // A mode that keeps losing is tried ever more rarely.
            self.losses[m] = (self.losses[m] + 1).min(16);
            let backoff = f64::from(1u32 << (self.losses[m] - 1));
            let spaced = TRIAL_SHARE * lost / o * backoff;
            let cap = self.max.saturating_mul(MAX_EPOCHS_PER_STRETCH);
            let len = resume.max(spaced.min(cap as f64) as usize).min(cap);
            self.len[m] = self.measure;
            match self.unmeasured(winner) {
                // A mode not yet measured is tried at once, the
                // winner's stretch still to come: waiting a long
                // stretch for it could mean walking most of an epoch
                // with the dearer of two modes.
                Some(o) => {
                    self.resume = Some((winner, len));
                    self.switch(o, self.trial_rows(o));
                }
                None => self.switch(winner, len),
            }
        } else {
            // The trial won: it walks on, and doubles from here.
            self.losses[m] = 0;
            self.len[winner as usize] = self.measure;
            self.after_win(mode);
        }
    }

    /// `mode` is the cheapest measured: its stretches double, and after the
    /// longest, another mode gets a trial (an unmeasured one first).
    fn after_win(&mut self, mode: Mode) {
        let m = mode as usize;
        if let Some(o) = self.unmeasured(mode) {
            self.resume = Some((mode, self.len[m].max(self.measure)));
            self.switch(o, self.trial_rows(o));
        } else if self.len[m] >= self.max {
            // The longest stretch won: a short trial of the next in turn.
            let o = (1..=MODES)
                .map(|k| ALL[(self.next_trial + k - 1) % MODES])
                .find(|&o| o != mode && self.available[o as usize])
                .unwrap_or(mode);
            self.next_trial = (o as usize + 1) % MODES;
            self.resume = Some((mode, self.len[m]));
            self.switch(o, self.trial_rows(o));
        } else {
            self.len[m] = (2 * self.len[m]).min(self.max);
            self.left = self.len[m];
        }
    }

    /// The engine was replaced (by the fallback, after a failure): what was
    /// measured of the old one says nothing of the new, which warms up anew.
    pub(super) fn engine_replaced(&mut self) {
        for e in [Mode::Engine as usize, Mode::Cores as usize] {
            self.cost[e] = None;
            self.pending[e] = (0.0, 0);
            self.warmed[e] = false;
        }
    }

    /// The first mode in [`FIRST_TRIALS`] other than `mode` with no cost
    /// measured yet.
    fn unmeasured(&self, mode: Mode) -> Option<Mode> {
        FIRST_TRIALS
            .into_iter()
            .find(|&o| o != mode && self.available[o as usize] && self.cost[o as usize].is_none())
    }

    /// Whether the host's walk with the other cores summing ahead may get
    /// trials: it can walk these rows (see
    /// [`crate::train::sweep::Loop::may_walk_ahead`]), and their mistakes
    /// are not too close together.
    pub(super) fn ahead_available(&mut self, available: bool) {
        self.available[Mode::Ahead as usize] = available;
    }

    /// Whether the engine is worth a trial (not when its walk is the walk
    /// ahead plus a replay: see
    /// [`crate::engine::MarginEngine::walks_like_the_host_ahead`]).
    pub(super) fn engine_available(&mut self, available: bool) {
        self.available[Mode::Engine as usize] = available;
    }

    /// A pair's device, started beside the cores, has arrived: the current
    /// stretch ends soon, for its first trial, rather than after a stretch
    /// that may last epochs.
    pub(super) fn device_arrived(&mut self) {
        self.end_stretch_soon();
    }

    /// The current stretch ends within a measurement, for fresh trials
    /// (unless forced, or a trial itself).
    fn end_stretch_soon(&mut self) {
        if self.forced.is_none() && self.resume.is_none() {
            self.left = self.left.min(self.measure);
        }
    }

    /// Whether the CPU engine beside a device's may get trials (see
    /// [`crate::engine::pair`]).
    pub(super) fn cores_available(&mut self, available: bool) {
        self.available[Mode::Cores as usize] = available;
    }

    /// Rows of a trial of `mode`. The walk ahead's is longer: each of its
    /// batches starts with the helpers level with the walk, and until they
    /// get ahead the walk sums rows itself (on the dev VM a batch of 4,096
    /// rows took 15-50% longer per row than one of 65,536); over a
    /// measurement's rows that start made the walk ahead lose trials to
    /// the textbook loop in epochs where it walked a third faster. Its
    /// budget stays every trial's (twice the winner's time for one
    /// measurement's rows): the faster it walks, the more of its rows it
    /// walks before the budget cuts it short, while a walk ahead twice as
    /// slow as the winner (a mistake every few rows) loses no more than
    /// any trial. (A budget for all four measurements cost 2-3 ms an epoch
    /// in the sparse case's first five epochs, a tenth of each.)
    fn trial_rows(&self, mode: Mode) -> usize {
        match mode {
            Mode::Ahead => AHEAD_TRIAL * self.measure,
            _ => self.measure,
        }
    }

    fn switch(&mut self, to: Mode, rows: usize) {
        if self.rewarms[to as usize] && self.current != to {
            // Each switch to the engine pays its one-time costs again (it
            // uploads or copies the weights the host changed, a pass over
            // all of them: a millisecond on 10^6 features, more than a
            // whole trial's rows take), and so does one to a host walk
            // whose helper threads went to sleep (waking one can take a
            // millisecond on a virtual machine) and whose weights sit in
            // another core's cache: they say nothing of the mode's cost
            // per row, so its first piece is not measured.
            self.warmed[to as usize] = false;
        }
        self.current = to;
        self.len[to as usize] = rows;
        self.left = rows;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks `rows` rows with the chooser in pieces of at most `piece` rows
    /// (the loop's windows, or a walk's batches), a piece of `n` rows from
    /// row `at` costing `cost(mode, at, n)` seconds; returns the seconds
    /// spent.
    fn simulate_pieces(
        piece: usize,
        modes: &mut Chooser,
        from: usize,
        rows: usize,
        mut cost: impl FnMut(Mode, usize, usize) -> f64,
    ) -> f64 {
        let (mut at, mut seconds) = (from, 0.0);
        while at < from + rows {
            let (mode, stretch) = modes.next();
            let n = stretch.min(piece).min(from + rows - at);
            let s = cost(mode, at, n);
            modes.measured(mode, s, n);
            seconds += s;
            at += n;
        }
        seconds
    }

    /// [`simulate_pieces`] with each mode costing `cost(mode, row)` seconds
    /// per row.
    fn simulate_in(
        piece: usize,
        modes: &mut Chooser,
        from: usize,
        rows: usize,
        cost: impl Fn(Mode, usize) -> f64,
    ) -> f64 {
        simulate_pieces(piece, modes, from, rows, |m, at, n| n as f64 * cost(m, at))
    }

    fn simulate(
        modes: &mut Chooser,
        from: usize,
        rows: usize,
        cost: impl Fn(Mode, usize) -> f64,
    ) -> f64 {
        simulate_in(1000, modes, from, rows, cost)
    }

    #[test]
    fn trials_of_a_much_dearer_mode_cost_a_small_share() {
        let epoch = 25_000;
        let mut modes = Chooser::new(epoch);
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
        let mut modes = Chooser::new(epoch);
        // The engine costs 1000x the host: every trial is cut at its
        // budget (2x the host's time for the trial's rows) after a piece.
        let cost = |m: Mode, _| if m == Mode::Host { 1e-9 } else { 1e-6 };
        simulate_in(100, &mut modes, 0, 20 * epoch, cost);
        let t = simulate_in(100, &mut modes, 20 * epoch, 400 * epoch, cost);
        let best = 400.0 * epoch as f64 * 1e-9;
        assert!(t <= 1.1 * best, "{:.3}x the cheaper mode's time", t / best);
    }

    #[test]
    fn a_device_slow_to_start_is_still_chosen_when_it_is_cheaper() {
        // As measured on an H100 (4M x 256): the host 140 ns a row, the
        // device's walk 18 ns a row, and its first batch 50 ms more.
        let epoch = 1_000_000;
        let mut modes = Chooser::new(epoch);
        let (host, device, first) = (1.4e-7, 1.8e-8, 0.05);
        let mut started = false;
        let seconds = simulate_pieces(1000, &mut modes, 0, 20 * epoch, |mode, _, n| {
            let s = n as f64 * if mode == Mode::Host { host } else { device };
            if mode == Mode::Engine && !std::mem::replace(&mut started, true) {
                s + first
            } else {
                s
            }
        });
        let best = 20.0 * epoch as f64 * device + first;
        assert!(
            seconds <= 1.2 * best,
            "{:.3}x the device alone",
            seconds / best
        );
    }

    #[test]
    fn a_trial_cut_short_is_paid_back_by_what_it_lost() {
        // The H100's first trial: 121 rows in 5 ms, against the host's
        // 140 ns a row. Projected over the trial's 4,096 rows that priced
        // the device at 295 times the host and put the next trial 24M rows
        // away; what it lost, 5 ms, is worth about 0.7M of the host's rows.
        let host = 1.4e-7;
        let mut modes = Chooser::new(4_000_000);
        // The textbook loop measured already (else its trial comes first).
        modes.cost[Mode::Reference as usize] = Some(2.0 * host);
        for _ in 0..2 {
            // The host's warm-up piece, then its first measured one.
            modes.measured(Mode::Host, MEASURE_ROWS as f64 * host, MEASURE_ROWS);
        }
        assert_eq!(modes.next(), (Mode::Engine, WARM_ROWS));
        modes.measured(Mode::Engine, 0.05, 121); // the warm-up piece
        assert_eq!(modes.next(), (Mode::Engine, MEASURE_ROWS));
        modes.measured(Mode::Engine, 0.005, 121); // over its budget
        let (mode, stretch) = modes.next();
        assert_eq!(mode, Mode::Host);
        let lost = 0.005 - 121.0 * host;
        let expected = (TRIAL_SHARE * lost / host) as usize;
        assert_eq!(stretch, expected);
        assert!(stretch < 1_000_000, "{stretch}");
    }

    /// A chooser walking the host's stretches, every mode measured and the
    /// host the cheapest.
    fn host_winning(rows: usize) -> Chooser {
        let mut modes = Chooser::new(rows);
        modes.cost = [Some(1e-7), Some(2e-7), Some(4e-7), Some(3e-7), Some(5e-7)];
        modes.warmed = [true; MODES];
        modes.available = [true; MODES];
        modes.left = modes.max;
        modes
    }

    #[test]
    fn a_recalled_chooser_goes_on_where_the_last_run_stopped() {
        let mut before = host_winning(200_000);
        before.losses[Mode::Engine as usize] = 3;
        before.forced = Some(Mode::Ahead);
        let mut after = Chooser::new(200_000);
        after.recall(before.clone().into_memory());
        // What was measured and learned goes on; the forced mode, and the
        // warm-up of a new run's engine and helpers, are the new run's.
        assert_eq!(after.cost, before.cost);
        assert_eq!(after.losses, before.losses);
        assert_eq!((after.current, after.left), (before.current, before.left));
        assert_eq!(after.forced, None);
        assert_eq!(after.warmed, [false; MODES]);
        // Another number of rows: nothing carries.
        let mut other = Chooser::new(100_000);
        other.recall(before.clone().into_memory());
        assert_eq!(other.cost, [None; MODES]);
    }

    #[test]
    fn a_mode_not_yet_measured_is_tried_right_after_a_lost_trial() {
        // Sparse rows early in training (2-core VM): the host 900 ns a row,
        // the engine's walk far dearer, the textbook loop 150 ns. The
        // engine's lost trial must not put the textbook loop's first trial
        // a long stretch of the host's rows away.
        let mut modes = Chooser::new(200_000);
        for _ in 0..2 {
            modes.measured(Mode::Host, MEASURE_ROWS as f64 * 9e-7, MEASURE_ROWS);
        }
        assert_eq!(modes.next().0, Mode::Engine);
        modes.measured(Mode::Engine, 0.01, 256); // the warm-up piece
        modes.measured(Mode::Engine, 0.05, 1000); // over its budget
        assert_eq!(modes.next(), (Mode::Reference, WARM_ROWS));
        modes.measured(Mode::Reference, 1e-3, WARM_ROWS);
        modes.measured(Mode::Reference, MEASURE_ROWS as f64 * 1.5e-7, MEASURE_ROWS);
        // The textbook loop won: it walks on, from here.
        let (mode, _) = modes.next();
        assert_eq!(mode, Mode::Reference);
    }

    #[test]
    fn the_walk_ahead_warms_up_after_each_switch() {
        let mut modes = Chooser::new(200_000);
        modes.ahead_available(true);
        modes.switch(Mode::Ahead, MEASURE_ROWS);
        for _ in 0..2 {
            modes.measured(Mode::Ahead, MEASURE_ROWS as f64 * 1e-7, MEASURE_ROWS);
        }
        modes.switch(Mode::Reference, MEASURE_ROWS);
        modes.switch(Mode::Ahead, MEASURE_ROWS);
        assert_eq!(modes.next(), (Mode::Ahead, WARM_ROWS));
        // Its slow first piece after the switch is not its cost.
        modes.measured(Mode::Ahead, 1.0, WARM_ROWS);
        assert_eq!(modes.cost[Mode::Ahead as usize], Some(1e-7));
    }

    #[test]
    fn a_trial_of_the_walk_ahead_walks_several_measurements() {
        // Each of its batches starts with the helpers level with the walk:
        // a trial as short as the others' would price that start as its
        // cost per row. Its budget is every trial's: at the winner's cost
        // it walks twice a measurement's rows, at 1.5 times 1.33 times.
        for (ahead, rows) in [(1.0e-7, 2 * MEASURE_ROWS), (1.5e-7, 5461)] {
            let mut modes = Chooser::new(200_000);
            modes.ahead_available(true);
            let cost = |m: Mode| [1e-7, 1.8e-7, 3e-7, ahead][m as usize];
            let (mut at, mut trials, mut walked) = (0, Vec::new(), None);
            while at < 10 * 200_000 {
                let (mode, stretch) = modes.next();
                let warming = modes.warming();
                let n = stretch.min(100);
                modes.measured(mode, n as f64 * cost(mode), n);
                at += n;
                match (mode, warming, &mut walked) {
                    (Mode::Ahead, false, Some(r)) => *r += n,
                    (Mode::Ahead, true, _) => walked = Some(0),
                    (_, _, r) => trials.extend(r.take()),
                }
            }
            assert!(trials.len() >= 2, "{trials:?}");
            // Cut at the first piece (of 100 rows) past the budget.
            assert!(
                trials.iter().all(|&r| (rows..rows + 100).contains(&r)),
                "{ahead}: {trials:?}"
            );
        }
    }

    #[test]
    fn a_mode_is_tried_only_where_it_is_available() {
        // The walk ahead only on sparse rows; the engine not where its walk
        // is the walk ahead plus a replay; the cores only beside a device.
        for (ahead, engine, cores) in [
            (false, true, false),
            (true, true, false),
            (true, false, false),
            (false, true, true),
        ] {
            let mut modes = Chooser::new(25_000);
            modes.ahead_available(ahead);
            modes.engine_available(engine);
            modes.cores_available(cores);
            let mut tried = [false; MODES];
            let mut at = 0;
            while at < 40 * 25_000 {
                let (mode, stretch) = modes.next();
                tried[mode as usize] = true;
                let n = stretch.min(1000);
                modes.measured(mode, n as f64 * 1e-9, n);
                at += n;
            }
            assert_eq!(tried, [true, true, engine, ahead, cores]);
        }
    }

    #[test]
    fn a_piece_that_walked_no_row_is_not_a_warm_up() {
        // An engine whose trial keeps stalling (no row walked) still uses
        // up its trial's budget.
        let mut modes = Chooser::new(25_000);
        for _ in 0..2 {
            modes.measured(Mode::Host, 4096e-9, MEASURE_ROWS);
        }
        assert_eq!(modes.next().0, Mode::Engine);
        let mut calls = 0;
        while modes.next().0 == Mode::Engine {
            modes.measured(Mode::Engine, 1e-3, 0);
            calls += 1;
            assert!(calls < 100, "the trial never ended");
        }
        assert!(calls <= 1, "{calls}");
    }

    #[test]
    fn a_replaced_engine_is_measured_anew() {
        let mut modes = Chooser::new(25_000);
        modes.measured(Mode::Engine, 1.0, 1000);
        modes.measured(Mode::Engine, 4096e-9, 4096);
        assert_eq!(modes.cost[Mode::Engine as usize], Some(1e-9));
        modes.engine_replaced();
        assert_eq!(modes.cost[Mode::Engine as usize], None);
        // The new engine's first piece is its warm-up.
        modes.measured(Mode::Engine, 1.0, 4096);
        assert_eq!(modes.cost[Mode::Engine as usize], None);
    }

    #[test]
    fn a_mode_first_piece_is_not_measured() {
        let mut modes = Chooser::new(25_000);
        // The host's first piece is short (at most WARM_ROWS), and however
        // slow, does not count.
        assert_eq!(modes.next(), (Mode::Host, 781.min(WARM_ROWS)));
        modes.measured(Mode::Host, 1.0, 1000);
        assert_eq!(modes.cost, [None; MODES]);
        // A 32nd of the 25,000 rows.
        assert_eq!(modes.next(), (Mode::Host, 781));
        modes.measured(Mode::Host, 4096e-9, 4096);
        assert_eq!(modes.cost[Mode::Host as usize], Some(1e-9));
        // Large data measures 4,096 rows, tiny data 256.
        assert_eq!(Chooser::new(10_000_000).measure(), MEASURE_ROWS);
        assert_eq!(Chooser::new(1000).measure(), MIN_MEASURE_ROWS);
    }

    #[test]
    fn a_change_in_which_mode_is_cheaper_is_followed() {
        let epoch = 25_000;
        let mut modes = Chooser::new(epoch);
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

    #[test]
    fn the_cheapest_of_three_modes_is_found_and_kept() {
        // The textbook loop is the cheapest (short sparse rows), then the
        // host's certified walk, then the engine.
        let epoch = 50_000;
        let cost = |m: Mode, _| match m {
            Mode::Reference => 1e-8,
            Mode::Host => 1.3e-8,
            Mode::Engine => 4e-8,
            // Dense rows: the walk ahead cannot walk them (never tried).
            Mode::Ahead | Mode::Cores => 1e-9,
        };
        for first in [Mode::Host, Mode::Engine] {
            let mut modes = Chooser::new(epoch);
            if first == Mode::Engine {
                // The engine measured cheapest at first, then dearer.
                modes.cost[Mode::Engine as usize] = Some(1e-9);
            }
            simulate(&mut modes, 0, 10 * epoch, cost);
            let t = simulate(&mut modes, 10 * epoch, 100 * epoch, cost);
            let best = 100.0 * epoch as f64 * 1e-8;
            assert!(
                t <= 1.05 * best,
                "{:.3}x the textbook loop's time",
                t / best
            );
        }
    }

    #[test]
    fn an_epoch_with_far_fewer_mistakes_starts_fresh_trials() {
        // Epoch 1: the host is 3x cheaper than the engine (a mistake every
        // few rows); from epoch 2 on the engine is 10x cheaper than the
        // host. The engine's trials in epoch 1 lose, and space the next
        // trial far out; the epoch's end says the data changed.
        let epoch = 200_000;
        let cost = |m: Mode, at: usize| match (m, at < epoch) {
            (Mode::Host, _) => 3e-8,
            (Mode::Engine, true) => 9e-8,
            (Mode::Engine, false) => 3e-9,
            (Mode::Reference, _) => 6e-8,
            (Mode::Ahead | Mode::Cores, _) => 1e-9,
        };
        let run = |tell: bool| {
            let mut modes = Chooser::new(epoch);
            simulate(&mut modes, 0, epoch, cost);
            if tell {
                modes.epoch_ended(1000, Some(60_000));
            }
            simulate(&mut modes, epoch, epoch, cost)
        };
        let (told, untold) = (run(true), run(false));
        let best = epoch as f64 * 3e-9;
        assert!(told <= 1.5 * best, "{:.2}x the engine's time", told / best);
        assert!(told < untold, "{told} against {untold}");
        // Fewer mistakes by less than half: nothing changes.
        let mut modes = Chooser::new(epoch);
        simulate(&mut modes, 0, epoch, cost);
        let before = (modes.cost, modes.left);
        modes.epoch_ended(40_000, Some(60_000));
        assert_eq!((modes.cost, modes.left), before);
        // ... but two such epochs in a row halve them: fresh trials, and
        // the next halving is counted from there.
        modes.epoch_ended(28_000, Some(40_000));
        assert_ne!(modes.cost, before.0);
        let after = (modes.cost, modes.left);
        modes.epoch_ended(15_000, Some(28_000));
        assert_eq!((modes.cost, modes.left), after);
    }

    /// A pair's device that finishes starting while the cores walk a long
    /// stretch gets its first trial within about a measurement's rows, not
    /// after the stretch (which may last epochs).
    #[test]
    fn a_device_that_arrives_is_tried_within_a_measurement() {
        let epoch = 1_000_000;
        let cost = |m: Mode| match m {
            Mode::Cores => 1e-7,
            Mode::Host => 2e-7,
            Mode::Reference => 4e-7,
            Mode::Engine | Mode::Ahead => 1e-9,
        };
        let mut modes = Chooser::new(epoch);
        modes.cores_available(true);
        modes.engine_available(false);
        let walk = |modes: &mut Chooser, until: &dyn Fn(Mode, usize) -> bool| {
            let mut walked = 0;
            loop {
                let (mode, stretch) = modes.next();
                if until(mode, walked) {
                    return (mode, walked);
                }
                let n = stretch.min(10_000);
                modes.measured(mode, n as f64 * cost(mode), n);
                walked += n;
            }
        };
        // Three epochs on the cores: their stretches have grown long.
        let (_, walked) = walk(&mut modes, &|mode, walked| {
            assert_ne!(mode, Mode::Engine, "offered before it arrived");
            // ... and stop while they walk, not in a trial of another.
            walked >= 3 * epoch && mode == Mode::Cores
        });
        assert!(walked >= 3 * epoch);
        assert!(
            modes.left > 4 * MEASURE_ROWS,
            "a long stretch: {}",
            modes.left
        );
        modes.device_arrived();
        modes.engine_available(true);
        let (mode, walked) = walk(&mut modes, &|mode, walked| {
            mode == Mode::Engine || walked > 3 * MEASURE_ROWS
        });
        assert_eq!(mode, Mode::Engine, "not tried within {walked} rows");
    }

    #[test]
    fn a_pair_walks_with_the_cores_then_the_device_as_each_gets_cheaper() {
        // As measured on the H100 machine (dense 4M x 256): in the
        // mistake-dense first epoch the CPU engine's 16 cores took 474 ms,
        // the GPU's adaptive walk 913; from the second epoch the device's
        // walk took 94 ms and less, the cores 137-463.
        let epoch = 1_000_000;
        let cost = |m: Mode, at: usize| match (m, at < epoch) {
            (Mode::Cores, true) => 1.2e-7,
            (Mode::Engine, true) => 2.3e-7,
            (Mode::Host, true) => 2.5e-7,
            (Mode::Cores, false) => 1.2e-7,
            (Mode::Engine, false) => 2.4e-8,
            (Mode::Host, false) => 1.4e-7,
            (Mode::Reference, _) => 4e-7,
            (Mode::Ahead, _) => 1e-9, // dense rows: never tried
        };
        let mut modes = Chooser::new(epoch);
        modes.cores_available(true);
        let first = simulate(&mut modes, 0, epoch, cost);
        modes.epoch_ended(100_000, None);
        modes.epoch_ended(5_000, Some(100_000));
        let rest = simulate(&mut modes, epoch, 9 * epoch, cost);
        let (best_first, best_rest) = (epoch as f64 * 1.2e-7, 9.0 * epoch as f64 * 2.4e-8);
        assert!(
            first <= 1.15 * best_first,
            "epoch 1: {:.3}x the cores' time",
            first / best_first
        );
        assert!(
            rest <= 1.15 * best_rest,
            "epochs 2-10: {:.3}x the device's time",
            rest / best_rest
        );
        // Without the cores beside it, the first epoch is the host's.
        let mut alone = Chooser::new(epoch);
        let t = simulate(&mut alone, 0, epoch, cost);
        assert!(t > 1.8 * best_first, "{:.3}x", t / best_first);
    }

    #[test]
    fn fewer_mistakes_retry_only_the_modes_on_several_cores() {
        for (current, kept, dropped) in [
            (
                Mode::Ahead,
                [Mode::Host, Mode::Reference],
                [Mode::Engine].as_slice(),
            ),
            (
                Mode::Host,
                [Mode::Reference, Mode::Host],
                [Mode::Engine, Mode::Ahead].as_slice(),
            ),
        ] {
            let mut modes = Chooser::new(200_000);
            modes.ahead_available(true);
            modes.current = current;
            modes.cost = [Some(1e-7); MODES];
            modes.epoch_ended(1000, Some(60_000));
            for m in kept {
                assert!(modes.cost[m as usize].is_some(), "{current:?}: {m:?} kept");
            }
            for &m in dropped {
                assert!(
                    modes.cost[m as usize].is_none(),
                    "{current:?}: {m:?} dropped"
                );
            }
        }
    }

    #[test]
    fn a_forced_mode_is_always_walked() {
        for mode in ALL {
            let mut modes = Chooser::new(10_000);
            modes.forced = Some(mode);
            for _ in 0..10 {
                assert_eq!(modes.next(), (mode, usize::MAX));
                modes.measured(mode, 1e-3, 5000);
            }
            let account = modes.take_epoch();
            let rows = |t: ModeTime| t.rows;
            assert_eq!(
                [
                    account.host,
                    account.reference,
                    account.engine,
                    account.ahead,
                    account.cores
                ]
                .map(rows)[mode as usize],
                50_000
            );
        }
    }

    #[test]
    fn a_mode_that_keeps_losing_is_tried_ever_more_rarely() {
        let epoch = 25_000;
        let mut modes = Chooser::new(epoch);
        let (mut trials, mut last) = (0, Mode::Host);
        simulate_pieces(1000, &mut modes, 0, 400 * epoch, |m, _, n| {
            if m == Mode::Engine && last != Mode::Engine {
                trials += 1;
            }
            last = m;
            n as f64 * if m == Mode::Engine { 1e-8 } else { 1e-9 }
        });
        // Spaced by the doubling waits up to the longest stretch (64
        // epochs), not every few epochs.
        assert!(trials <= 14, "{trials} trials of the engine in 400 epochs");
    }
}
