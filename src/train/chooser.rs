//! Who walks the rows, the host or the engine: chosen by the measured wall
//! time per row of each, in stretches, with budgeted trials of the other.

/// Rows walked and the seconds they took, for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ModeTime {
    pub rows: u64,
    pub seconds: f64,
}

impl ModeTime {
    fn add(&mut self, seconds: f64, rows: usize) {
        self.rows += rows as u64;
        self.seconds += seconds;
    }
}

/// How one epoch's rows were walked: by the host with its certified
/// margins, by the textbook loop (the reference dot for every row), and by
/// the engine (its walk or passes over windows).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct EpochModes {
    pub host: ModeTime,
    pub reference: ModeTime,
    pub engine: ModeTime,
}

/// Who walks the rows: the host alone (with its fast certified margins),
/// or the engine (its walk, or passes over windows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
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
/// short. A mode's first piece is not measured at all: it pays one-time
/// costs (a device's first dispatch loads and compiles its pipelines, tens
/// of milliseconds on an H100) that say nothing about its cost per row.
pub(super) struct Modes {
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
    /// Whether each mode has walked its first, unmeasured piece.
    warmed: [bool; 2],
    /// False: always the engine.
    pub(super) adaptive: bool,
    /// What each mode walked this epoch, every piece counted.
    epoch: EpochModes,
}

/// Rows a mode must have walked before its cost per row counts; also the
/// shortest stretch.
pub(super) const MEASURE_ROWS: usize = 4096;

/// A lost trial costs its rows times the gap between the two modes' costs;
/// the winner then walks long enough that trials cost at most 1/TRIAL_SHARE
/// of its time (at most [`MAX_EPOCHS_PER_STRETCH`] epochs).
pub(super) const TRIAL_SHARE: f64 = 20.0;
pub(super) const MAX_EPOCHS_PER_STRETCH: usize = 64;

/// A trial is cut short, and lost, once it has taken this many times what
/// the winner would take for the whole trial: a device far slower than the
/// host (a software adapter, or data with a mistake every few rows) then
/// costs little more than a bounded detour.
pub(super) const TRIAL_BUDGET: f64 = 4.0;

impl Modes {
    pub(super) fn new(rows: usize) -> Self {
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
            warmed: [false; 2],
            adaptive: true,
            epoch: EpochModes::default(),
        }
    }

    /// What each mode walked since the last call: one epoch's account.
    pub(super) fn take_epoch(&mut self) -> EpochModes {
        std::mem::take(&mut self.epoch)
    }

    /// The textbook loop walked `rows` rows in `seconds` (an engine that
    /// certifies nothing: nothing to choose).
    pub(super) fn measured_reference(&mut self, seconds: f64, rows: usize) {
        self.epoch.reference.add(seconds, rows);
    }

    /// The mode to walk with now, and at most how many rows before the next
    /// measurement.
    pub(super) fn next(&self) -> (Mode, usize) {
        if self.adaptive {
            (self.current, self.left.max(1))
        } else {
            (Mode::Engine, usize::MAX)
        }
    }

    /// The seconds the current stretch may take before it is cut short:
    /// only a trial has a limit, from the winner's cost.
    pub(super) fn trial_budget(&self) -> Option<f64> {
        self.resume?;
        let o = self.cost[self.current.other() as usize]?;
        Some((TRIAL_BUDGET * o * MEASURE_ROWS as f64 - self.trial_spent.0).max(0.0))
    }

    /// `mode` walked `rows` rows in `seconds`.
    pub(super) fn measured(&mut self, mode: Mode, seconds: f64, rows: usize) {
        match mode {
            Mode::Host => self.epoch.host.add(seconds, rows),
            Mode::Engine => self.epoch.engine.add(seconds, rows),
        }
        let m = mode as usize;
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
        let spent = std::mem::take(&mut self.trial_spent);
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
            (Some(_), Some(o)) if trial.is_some() => {
                // A trial lost: the winner resumes, for long enough that the
                // next trial costs a small share of its time. What the trial
                // lost is what it took beyond the winner's time for its rows:
                // at most its budget, however dear its few rows made its
                // cost per row look (a device's first batches early in
                // training settle a handful of rows each).
                let lost = (spent.0 - o * spent.1 as f64).max(0.0);
                let spaced = TRIAL_SHARE * lost / o;
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

    /// The engine was replaced (by the fallback, after a failure): what was
    /// measured of the old one says nothing of the new, which warms up anew.
    pub(super) fn engine_replaced(&mut self) {
        let e = Mode::Engine as usize;
        self.cost[e] = None;
        self.pending[e] = (0.0, 0);
        self.warmed[e] = false;
    }

    fn switch(&mut self, to: Mode, rows: usize) {
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
        modes: &mut Modes,
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
        modes: &mut Modes,
        from: usize,
        rows: usize,
        cost: impl Fn(Mode, usize) -> f64,
    ) -> f64 {
        simulate_pieces(piece, modes, from, rows, |m, at, n| n as f64 * cost(m, at))
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
    fn a_device_slow_to_start_is_still_chosen_when_it_is_cheaper() {
        // As measured on an H100 (4M x 256): the host 140 ns a row, the
        // device's walk 18 ns a row, and its first batch 50 ms more.
        let epoch = 1_000_000;
        let mut modes = Modes::new(epoch);
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
        let mut modes = Modes::new(4_000_000);
        for _ in 0..2 {
            // The host's warm-up piece, then its first measured one.
            modes.measured(Mode::Host, MEASURE_ROWS as f64 * host, MEASURE_ROWS);
        }
        assert_eq!(modes.next(), (Mode::Engine, MEASURE_ROWS));
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

    #[test]
    fn a_piece_that_walked_no_row_is_not_a_warm_up() {
        // An engine whose trial keeps stalling (no row walked) still uses
        // up its trial's budget.
        let mut modes = Modes::new(25_000);
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
        let mut modes = Modes::new(25_000);
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
        let mut modes = Modes::new(25_000);
        // The host's first piece, however slow, does not count.
        modes.measured(Mode::Host, 1.0, 1000);
        assert_eq!(modes.cost, [None, None]);
        assert_eq!(modes.next(), (Mode::Host, MEASURE_ROWS));
        modes.measured(Mode::Host, 4096e-9, 4096);
        assert_eq!(modes.cost[Mode::Host as usize], Some(1e-9));
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
