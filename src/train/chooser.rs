//! Who walks the rows, the host or the engine: chosen by the measured wall
//! time per row of each, in stretches, with budgeted trials of the other.

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
/// short.
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
    /// False: always the engine.
    pub(super) adaptive: bool,
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
            adaptive: true,
        }
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
