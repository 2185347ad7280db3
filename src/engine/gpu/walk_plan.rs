//! How big the walk's next batch is: the rows each iteration's scan covers,
//! the entries the batch may record, and its iterations, from what the
//! last batches did. Shared by the device's walk and its CPU twin.
//!
//! An iteration costs two dispatches whatever it does, and a scan costs its
//! rows' bytes: the window is about twice the rows a step walked before
//! the drift ended it (so little of a scan goes unused), and a batch holds
//! about as many iterations as its expected decisions need (so few run
//! empty once the entries are full).

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

    /// Learns from a finished batch.
    pub fn observe(&mut self, done: BatchDone) {
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
}
