//! How big the walk's next batch is: the rows each iteration's scan covers,
//! the entries the batch may record, and its iterations, from what the
//! last batches did. Shared by the device's walk and its CPU twin.
//!
//! An iteration costs two dispatches whatever it does, and a scan costs its
//! rows' bytes: the window is about twice the rows a step walked before
//! the drift ended it (so little of a scan goes unused), and a batch holds
//! about as many iterations as its expected decisions need (so few run
//! empty once the entries are full).
//!
//! Under a trial's time budget ([`BatchPlan::next_within`]) a batch scans
//! no more rows than the time left buys: fewer iterations first, then a
//! narrower window. A batch's time is priced as a fixed part (the round
//! trip and the dispatches: about the quickest batch seen) plus a part per
//! scanned row (from the last batch clearly slower than that). Until both
//! are known, the last batch's time spread over its rows prices a row: too
//! high where the round trip dominates, so a trial's first batches are
//! small, and each one that stays near the round trip prices the next one
//! larger. A trial then measures the walk as far as its budget goes, at
//! the batches it would use, and ends near its deadline rather than a
//! whole batch past it (on lavapipe one iteration's scan of a wide window
//! took 50-400 ms, against trial budgets of about a millisecond).

use super::layout::BatchParams;

/// The smallest and largest scan window, in rows.
pub const MIN_WINDOW: usize = 256;
pub const MAX_WINDOW: usize = 1 << 20;
/// The fewest entries a batch may record.
pub const MIN_CAPACITY: usize = 16;
/// The most iterations one batch records.
pub const MAX_ITERATIONS: usize = 256;
/// Fresh dots a step may find correct before it hands back to a new scan,
/// unless set (`GpuOptions::walk_waste`).
pub const DEFAULT_WASTE: u32 = 64;

/// Seconds from `from` until `deadline`, negative once it is past.
pub fn seconds_until(deadline: std::time::Instant, from: std::time::Instant) -> f64 {
    match deadline.checked_duration_since(from) {
        Some(left) => left.as_secs_f64(),
        None => -from.duration_since(deadline).as_secs_f64(),
    }
}

/// The rows a batch of `params` scanned, of its `iterations`, when `steps`
/// of them walked: those, and the one that found the batch done (the
/// iterations after it return at once).
pub fn scanned(params: &BatchParams, iterations: usize, steps: usize) -> usize {
    (steps + 1).min(iterations) * params.window as usize
}

/// What a finished batch did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BatchDone {
    /// Rows it moved the walk by, decisions it recorded, and steps that
    /// walked (iterations that did not find the batch full or stopped).
    pub rows: usize,
    pub decisions: usize,
    pub steps: usize,
    /// Whether the batch ended with its entries full.
    pub full: bool,
    /// Rows its scans covered (iterations times the window), and the
    /// seconds it took, fixed costs included (None: not timed).
    pub scanned: usize,
    pub seconds: Option<f64>,
}

/// The next batch's size, adapted to the last batches.
#[derive(Clone, Debug)]
pub struct BatchPlan {
    /// The most entries and the widest window this walk allows.
    max_capacity: usize,
    max_window: usize,
    waste: u32,
    /// Rows and decisions per step, as last seen (at least one row).
    rows_per_step: f64,
    decisions_per_step: f64,
    capacity: usize,
    /// A batch's fixed seconds (the quickest batch timed), and the seconds
    /// per scanned row beyond them (the last batch at least twice as slow).
    fixed_seconds: Option<f64>,
    seconds_per_row: Option<f64>,
    /// The last timed batch's seconds per scanned row, its fixed part
    /// included.
    last_rate: Option<f64>,
}

impl BatchPlan {
    pub fn new(max_capacity: usize, max_window: usize, waste: u32) -> Self {
        let max_capacity = max_capacity.max(1);
        let max_window = max_window.clamp(1, MAX_WINDOW);
        BatchPlan {
            max_capacity,
            max_window,
            waste,
            rows_per_step: 2048.0,
            decisions_per_step: 4.0,
            capacity: MIN_CAPACITY.min(max_capacity),
            fixed_seconds: None,
            seconds_per_row: None,
            last_rate: None,
        }
    }

    /// Starts again from small batches (a new walk: the data's behaviour at
    /// its start is unknown).
    pub fn restart(&mut self) {
        self.capacity = MIN_CAPACITY.min(self.max_capacity);
    }

    /// The most entries a batch may record.
    pub fn max_capacity(&self) -> usize {
        self.max_capacity
    }

    /// The next batch's parameters and iterations, with `rows_left` rows
    /// before the walk's limit.
    pub fn next(&self, rows_left: usize) -> (BatchParams, usize) {
        let window = ((2.0 * self.rows_per_step) as usize)
            .next_power_of_two()
            .clamp(MIN_WINDOW.min(self.max_window), self.max_window);
        let by_decisions = (self.capacity as f64 / self.decisions_per_step.max(0.25)).ceil();
        let by_rows = (rows_left as f64 / self.rows_per_step.max(1.0)).ceil();
        let iterations = (by_decisions.min(by_rows) as usize + 1).clamp(1, MAX_ITERATIONS);
        let params = BatchParams {
            window: window as u32,
            capacity: self.capacity as u32,
            waste: self.waste,
            _pad: 0,
        };
        (params, iterations)
    }

    /// The same within `seconds_left` (a trial's budget; None: no limit):
    /// the rows the batch scans are at most what that time buys (see the
    /// module's notes), taken from its iterations first, then from its
    /// window (at least one iteration of [`MIN_WINDOW`] rows, or the walk's
    /// widest window if narrower). Before any batch was timed, the plan's
    /// own size.
    pub fn next_within(&self, rows_left: usize, seconds_left: Option<f64>) -> (BatchParams, usize) {
        let (mut params, mut iterations) = self.next(rows_left);
        let Some(rows) = seconds_left.and_then(|left| self.rows_for(left)) else {
            return (params, iterations);
        };
        let window = params.window as usize;
        iterations = iterations.min(rows / window.max(1)).max(1);
        if window > rows {
            let floor = MIN_WINDOW.min(self.max_window);
            let narrower = match rows.checked_next_power_of_two() {
                Some(p) if p > rows => p / 2,
                Some(p) => p,
                None => window,
            };
            params.window = narrower.clamp(floor, window) as u32;
        }
        (params, iterations)
    }

    /// Whether a batch was timed yet.
    pub fn timed(&self) -> bool {
        self.last_rate.is_some()
    }

    /// The scanned rows `seconds` buy (None: no batch timed yet).
    fn rows_for(&self, seconds: f64) -> Option<usize> {
        let (beyond, rate) = match (self.fixed_seconds, self.seconds_per_row) {
            (Some(fixed), Some(rate)) => (seconds - fixed, rate),
            _ => (seconds, self.last_rate?),
        };
        Some((beyond.max(0.0) / rate.max(f64::MIN_POSITIVE)).min(usize::MAX as f64) as usize)
    }

    /// The seconds a batch of `params` and `iterations` is expected to
    /// take (None: no batch timed yet).
    pub fn seconds_for(&self, params: &BatchParams, iterations: usize) -> Option<f64> {
        let rows = (iterations * params.window as usize) as f64;
        match (self.fixed_seconds, self.seconds_per_row) {
            (Some(fixed), Some(rate)) => Some(fixed + rate * rows),
            _ => Some(self.last_rate? * rows),
        }
    }

    /// Learns from a finished batch.
    pub fn observe(&mut self, done: BatchDone) {
        if let Some(seconds) = done.seconds.filter(|_| done.scanned > 0) {
            self.last_rate = Some(seconds / done.scanned as f64);
            // The quickest batch, allowed to rise a tenth a batch: one timed
            // too quickly (a batch found nearly done) does not price the
            // rest for good.
            let fixed = self.fixed_seconds.map_or(seconds, |f| seconds.min(1.1 * f));
            self.fixed_seconds = Some(fixed);
            if seconds >= 2.0 * fixed {
                self.seconds_per_row = Some((seconds - fixed) / done.scanned as f64);
            }
        }
        if done.steps > 0 {
            let steps = done.steps as f64;
            self.rows_per_step = (done.rows as f64 / steps).max(1.0);
            self.decisions_per_step = done.decisions as f64 / steps;
        }
        // Twice the decisions seen, so a batch that filled up doubles.
        let want = if done.full {
            2 * done.decisions
        } else {
            2 * done.decisions + 1
        };
        self.capacity = want.clamp(MIN_CAPACITY.min(self.max_capacity), self.max_capacity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_the_rows_a_step_walks() {
        let mut plan = BatchPlan::new(1024, 1 << 20, 16);
        plan.observe(BatchDone {
            rows: 10_000,
            decisions: 100,
            steps: 10,
            full: false,
            scanned: 0,
            seconds: None,
        });
        let (p, iterations) = plan.next(1_000_000);
        // 1,000 rows a step: a window of 2,048.
        assert_eq!(p.window, 2048);
        // Room for twice the decisions, and iterations to fill it.
        assert_eq!(p.capacity, 201);
        assert_eq!(iterations, 22);
    }

    #[test]
    fn a_full_batch_doubles_and_the_window_stays_in_bounds() {
        let mut plan = BatchPlan::new(64, 4096, 16);
        for _ in 0..10 {
            let (p, _) = plan.next(1 << 30);
            plan.observe(BatchDone {
                rows: 1 << 24,
                decisions: p.capacity as usize,
                steps: 1,
                full: true,
                scanned: 0,
                seconds: None,
            });
        }
        let (p, iterations) = plan.next(1 << 30);
        assert_eq!(p.capacity, 64);
        assert_eq!(p.window, 4096);
        assert!(iterations >= 1);
        // Few rows left: few iterations.
        let (_, iterations) = plan.next(10);
        assert_eq!(iterations, 2);
    }

    #[test]
    fn a_time_budget_bounds_the_rows_a_batch_scans() {
        let mut plan = BatchPlan::new(1024, 1 << 20, 16);
        let timed = |rows, scanned, seconds| BatchDone {
            rows,
            decisions: 100,
            steps: 10,
            full: false,
            scanned,
            seconds: Some(seconds),
        };
        // Untimed: the plan's own size, whatever the budget.
        assert_eq!(plan.next_within(1 << 30, Some(1e-9)), plan.next(1 << 30));
        // A small batch of 0.1 ms sets the fixed cost; its rows say nothing
        // of the cost per row beyond it, so its time spread over its rows
        // prices a row (about 0.39 µs): 1 ms buys 2,560 rows.
        plan.observe(timed(80_000, 256, 1e-4));
        let (p, iterations) = plan.next_within(1 << 30, Some(1e-3));
        assert_eq!((p.window, iterations), (2048, 1));
        assert!((plan.seconds_for(&p, 1).unwrap() - 0.8e-3).abs() < 1e-9);
        // The fixed part may rise a tenth a batch (to 0.11 ms): 200,000
        // rows in 0.20011 s are 1 µs a row beyond it.
        plan.observe(timed(80_000, 200_000, 0.20011));
        let (free, free_iterations) = plan.next(1 << 30);
        assert_eq!(plan.next_within(1 << 30, None), (free, free_iterations));
        assert_eq!(free.window, 16_384);
        assert!(free_iterations > 2);
        // 40.1 ms buys 40,000 rows: two iterations of the same window.
        let (p, iterations) = plan.next_within(1 << 30, Some(0.0401));
        assert_eq!((p.window, iterations), (16_384, 2));
        assert_eq!(p.capacity, free.capacity);
        let expected = plan.seconds_for(&p, iterations).unwrap();
        assert!((expected - (1.1e-4 + 32_768e-6)).abs() < 1e-9, "{expected}");
        // 5.1 ms buys 5,000 rows: one iteration of a 4,096-row window.
        let (p, iterations) = plan.next_within(1 << 30, Some(0.0051));
        assert_eq!((p.window, iterations), (4096, 1));
        // A deadline past: one iteration of the narrowest window.
        let (p, iterations) = plan.next_within(1 << 30, Some(-1.0));
        assert_eq!((p.window as usize, iterations), (MIN_WINDOW, 1));
        // A batch near the fixed cost leaves the cost per row as it was.
        plan.observe(timed(80_000, 256, 1.5e-4));
        let (p, iterations) = plan.next_within(1 << 30, Some(0.0051));
        assert_eq!((p.window, iterations), (4096, 1));
    }
}
