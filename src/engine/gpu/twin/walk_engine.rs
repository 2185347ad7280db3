//! An engine that walks with the walk kernels' twins, so the loop's walk
//! mode is tested where no adapter exists; and the conversion of a
//! finished batch into the loop's terms, which the device's walk shares.

use super::walk_common::*;
use super::walk_dense::{scan_dense, step_dense};
use super::walk_sparse::{scan_sparse, step_sparse};
use crate::data::{Dataset, Features};
use crate::engine::certify::Bound;
use crate::engine::gpu::layout::{BatchParams, WalkParams, WalkState};
use crate::engine::gpu::walk_plan::{
    BatchDone, BatchPlan, DEFAULT_WASTE, MAX_WINDOW, scanned, seconds_until,
};
use crate::engine::{
    BatchLimits, EngineError, EngineStats, MarginEngine, Pass, WalkBatch, WalkDecision, WalkStart,
    WalkStop, Walker,
};
use crate::float::Real;
use std::time::Instant;

/// Values per entry: the longest row's stored terms plus the bias.
pub fn entry_stride<F: Real>(features: &Features<F>, bias: bool) -> usize {
    let longest = match features {
        Features::Dense(m) => m.cols,
        Features::Sparse(m) => m.row_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0),
    };
    longest + bias as usize
}

/// Turns a finished batch's state and entries into the loop's terms, with
/// rows offset by `offset` (the chunk's first row) and the batch starting
/// at `start`.
pub fn to_batch<F: Real>(
    state: &WalkState,
    entries: Entries<F>,
    stride: usize,
    offset: usize,
    start: usize,
    epoch_end: usize,
) -> Result<WalkBatch<F>, EngineError> {
    let n = entries.rows[0] as usize;
    if 1 + 2 * n > entries.rows.len() || n * stride > entries.values.len() {
        // More entries than the batch could hold: a broken device.
        return Err(EngineError(format!(
            "the walk reported {n} decisions, more than its batch holds ({})",
            (entries.rows.len() - 1) / 2
        )));
    }
    let mut decisions = Vec::with_capacity(n);
    for j in 0..n {
        let row = entries.rows[1 + 2 * j] as usize + offset;
        let flags = entries.rows[2 + 2 * j];
        let mistake = flags & ENTRY_MISTAKE != 0;
        decisions.push(WalkDecision {
            row,
            mistake,
            speculative: flags & ENTRY_SPECULATIVE != 0,
            values_at: (mistake && flags & ENTRY_SUBNORMAL == 0).then_some(j * stride),
        });
    }
    let end = if state.stop == 0 {
        state.p as usize + offset
    } else {
        state.stop_row as usize + offset
    };
    let stop = match state.stop {
        0 => WalkStop::Running,
        STOP_LIMIT if end >= epoch_end => WalkStop::End,
        STOP_LIMIT => WalkStop::Running,
        STOP_SUBNORMAL => WalkStop::Resync,
        _ => WalkStop::Updates,
    };
    Ok(WalkBatch {
        start,
        end,
        decisions,
        values: {
            let mut values = entries.values;
            values.truncate(n * stride);
            values
        },
        stop,
    })
}

/// An engine that walks with the twins: the GPU walk's logic on the CPU,
/// the whole dataset as one chunk, batches of at most `capacity` entries
/// sized by the device's [`BatchPlan`] (windows of at most `max_window`
/// rows). Margin passes (for the pocket variant) come from the margin
/// kernels' twins.
pub struct TwinWalkEngine<'d, F: Real> {
    passes: super::TwinEngine<'d, F>,
    data: &'d Dataset<F>,
    bias: bool,
    lanes: u32,
    stride: usize,
    l1_max: f64,
    plan: BatchPlan,
    bindings: Bindings<F>,
    started: bool,
    epoch_end: usize,
}

impl<'d, F: Real> TwinWalkEngine<'d, F> {
    /// A twin walk recording at most `capacity` entries a batch, with
    /// windows of up to 4,096 rows (so small test sets see many steps).
    pub fn new(data: &'d Dataset<F>, bias: bool, lanes: u32, capacity: usize) -> Self {
        Self::with_window(data, bias, lanes, capacity, 4096, DEFAULT_WASTE)
    }

    /// The same with windows of at most `max_window` rows and `waste`.
    pub fn with_window(
        data: &'d Dataset<F>,
        bias: bool,
        lanes: u32,
        capacity: usize,
        max_window: usize,
        waste: u32,
    ) -> Self {
        let facts = data.facts(bias);
        let stride = entry_stride(&data.features, bias);
        let max_window = max_window.clamp(1, MAX_WINDOW);
        TwinWalkEngine {
            passes: super::TwinEngine::new(data, bias, Some(lanes)),
            data,
            bias,
            lanes,
            stride,
            l1_max: facts.l1_max,
            plan: BatchPlan::new(capacity, max_window, waste),
            bindings: Bindings {
                params: WalkParams::new(
                    &Bound::new(false, 1.0),
                    data.cols(),
                    bias,
                    data.rows(),
                    stride,
                ),
                batch: BatchParams::default(),
                bits: walk_bits(&data.labels, &facts.host_only, 0..data.rows()),
                norms: facts.norms.clone(),
                weights: Vec::new(),
                state: WalkState::default(),
                entries: Entries::default(),
                slack: vec![[0.0; 2]; max_window],
            },
            started: false,
            epoch_end: data.rows(),
        }
    }

    /// Steps, fresh dots and searches so far.
    pub fn counters(&self) -> (u32, u32, u32) {
        let s = &self.bindings.state;
        (s.iterations, s.dots, s.searches)
    }
}

impl<F: Real> MarginEngine<F> for TwinWalkEngine<'_, F> {
    fn name(&self) -> String {
        format!("gpu walk twin (lanes {})", self.lanes)
    }
    fn preferred_window(&self, mistake_rate: f64) -> usize {
        self.passes.preferred_window(mistake_rate)
    }
    fn submit(&mut self, pass: &Pass<'_, F>) -> Result<(), EngineError> {
        self.passes.submit(pass)
    }
    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        self.passes.collect(slack)
    }
    fn stats(&self) -> EngineStats {
        self.passes.stats()
    }
    fn walker(&mut self) -> Option<&mut dyn Walker<F>> {
        Some(self)
    }
}

impl<F: Real> Walker<F> for TwinWalkEngine<'_, F> {
    fn begin(&mut self, start: &WalkStart<'_, F>) -> Result<(), EngineError> {
        let b = &mut self.bindings;
        if start.resync || b.weights.len() != start.weights.len() {
            b.weights = start.weights.to_vec();
        }
        let bound = Bound::<F>::for_weights(&b.weights, self.l1_max).with_margin(start.tau);
        b.params = WalkParams::new(
            &bound,
            self.data.cols(),
            self.bias,
            self.data.rows(),
            self.stride,
        );
        self.epoch_end = start.end;
        let wnorm = crate::engine::gpu::layout::norm_bound(&b.weights);
        b.state = WalkState::start(start.position, start.end, start.max_updates, wnorm);
        self.plan.restart();
        self.started = true;
        Ok(())
    }

    fn next(&mut self, limits: BatchLimits) -> Result<WalkBatch<F>, EngineError> {
        if !self.started {
            return Err(EngineError("walk without begin".into()));
        }
        let t0 = Instant::now();
        let left = limits.deadline.map(|d| seconds_until(d, t0));
        let b = &mut self.bindings;
        let start = b.state.p as usize;
        let (batch, iterations) = self
            .plan
            .next_within(b.state.limit.saturating_sub(b.state.p) as usize, left);
        b.batch = batch;
        b.entries = Entries::new(batch.capacity as usize, self.stride);
        let steps_before = b.state.iterations;
        for _ in 0..iterations {
            match &self.data.features {
                Features::Dense(m) => {
                    scan_dense(b, self.lanes, &m.values);
                    step_dense(b, &m.values);
                }
                Features::Sparse(m) => {
                    let csr = (&m.row_ptr[..], &m.indices[..], &m.values[..]);
                    scan_sparse(b, self.lanes, csr);
                    step_sparse(b, csr);
                }
            }
        }
        let decisions = b.entries.rows[0] as usize;
        let steps = (b.state.iterations - steps_before) as usize;
        self.plan.observe(BatchDone {
            rows: b.state.p as usize - start,
            decisions,
            steps,
            full: decisions >= batch.capacity as usize,
            scanned: scanned(&batch, iterations, steps),
            seconds: Some(t0.elapsed().as_secs_f64()),
        });
        let entries = std::mem::take(&mut b.entries);
        to_batch(&b.state, entries, self.stride, 0, start, self.epoch_end)
    }

    /// As the device's walk: a trial's batches are sized to its deadline.
    fn keeps_deadlines(&self) -> bool {
        true
    }

    fn cancel(&mut self) -> Result<(), EngineError> {
        self.started = false;
        Ok(())
    }
}
