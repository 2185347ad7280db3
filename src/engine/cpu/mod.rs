//! The fast CPU engine: certified slacks computed on all cores.
//!
//! A pass is split into contiguous slices, one per task; each task computes
//! its rows' margins with the 8-lane kernel and turns them into normalised
//! slacks with [`crate::engine::certify::Bound::slack`].

pub mod byte_rows;
mod helpers;
mod kernel;
pub mod lookahead;
pub mod simd;
pub mod walk;

use std::time::Instant;

use rayon::prelude::*;

use crate::data::Dataset;
use crate::engine::certify::{self, Bound};
use crate::engine::{
    BatchLimits, Completed, EngineError, EngineStats, MarginEngine, Pass, WalkBatch, WalkStart,
    Walker,
};
use crate::float::Real;

pub use kernel::{decide, margin};

/// Certified slacks on the CPU.
pub struct CpuEngine<'d, F: Real> {
    data: &'d Dataset<F>,
    bias: bool,
    l1_max: f64,
    /// Row norms (and the rest of the data's facts), shared with the loop.
    norms: std::sync::Arc<certify::RowFacts>,
    threads: usize,
    done: Completed,
    stats: EngineStats,
    walk: walk::CpuWalk<F>,
}

impl<'d, F: Real> CpuEngine<'d, F> {
    pub fn new(data: &'d Dataset<F>, bias: bool) -> Self {
        CpuEngine {
            data,
            bias,
            l1_max: data.facts(bias).l1_max,
            norms: data.facts(bias),
            threads: rayon::current_num_threads(),
            done: Completed::default(),
            stats: EngineStats::default(),
            walk: walk::CpuWalk::default(),
        }
    }
}

impl<F: Real> MarginEngine<F> for CpuEngine<'_, F> {
    fn name(&self) -> String {
        format!("cpu ({} threads)", self.threads)
    }

    fn preferred_window(&self, mistake_rate: f64) -> usize {
        // Drift grows with every update, so aim for a few dozen updates per
        // window; small windows are cheap on the CPU.
        ((32.0 / mistake_rate.max(1e-9)) as usize).clamp(2048, 1 << 17)
    }

    fn submit(&mut self, pass: &Pass<'_, F>) -> Result<(), EngineError> {
        let t0 = Instant::now();
        let bound = Bound::<F>::for_weights(pass.weights, self.l1_max).with_margin(pass.tau);
        let heads = pass.heads;
        let mut out = self.done.buffer(pass.slots());
        let rows_per_task = pass.len().div_ceil(self.threads * 4).max(256);
        let (data, bias, norms, w) = (self.data, self.bias, &self.norms, pass.weights);
        let dim = w.len() / heads.max(1);
        let uncertain: u64 = out
            .par_chunks_mut(rows_per_task * heads)
            .enumerate()
            .map(|(task, slice)| {
                let lo = pass.start + task * rows_per_task;
                let mut zero = 0;
                for (j, row_slacks) in slice.chunks_mut(heads).enumerate() {
                    let p = lo + j;
                    data.features.prefetch_row(p + 1);
                    let row = data.features.row(p);
                    let m = F::from_f64((row.stored() + bias as usize) as f64);
                    let norm = F::from_f64(norms.norms[p] as f64);
                    for (h, r) in row_slacks.iter_mut().enumerate() {
                        let (s, t) = kernel::margin(&w[h * dim..(h + 1) * dim], row, bias);
                        *r = bound.slack(data.label_for(h, heads, p), s, t, m, norm);
                        zero += (*r == 0.0) as u64;
                    }
                }
                zero
            })
            .sum();
        self.done.push(out);
        self.stats.passes += 1;
        self.stats.rows_evaluated += pass.len() as u64;
        self.stats.rows_uncertain += uncertain;
        self.stats.seconds += t0.elapsed().as_secs_f64();
        Ok(())
    }

    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        self.done.pop_into(slack)
    }

    fn stats(&self) -> EngineStats {
        let mut stats = self.stats.clone();
        let sparse = self.walk.lookahead_counts();
        stats.walk.dots = sparse.summed;
        stats.walk.kept = sparse.kept;
        stats
    }

    fn walker(&mut self) -> Option<&mut dyn Walker<F>> {
        Some(self)
    }

    fn walks_like_the_host_ahead(&self) -> bool {
        // The condition `walk::CpuWalk::next_batch` walks ahead under.
        self.data.features.is_sparse() && rayon::current_num_threads() > 1
    }
}

impl<F: Real> Walker<F> for CpuEngine<'_, F> {
    fn begin(&mut self, start: &WalkStart<'_, F>) -> Result<(), EngineError> {
        self.walk.begin(start);
        Ok(())
    }

    fn next(&mut self, limits: BatchLimits) -> Result<WalkBatch<F>, EngineError> {
        let t0 = Instant::now();
        let batch = self.walk.next_batch(self.data, self.bias, limits)?;
        self.stats.passes += 1;
        self.stats.rows_evaluated += (batch.end - batch.start) as u64;
        self.stats.seconds += t0.elapsed().as_secs_f64();
        Ok(batch)
    }

    fn cancel(&mut self) -> Result<(), EngineError> {
        self.walk.cancel();
        Ok(())
    }

    fn keeps_deadlines(&self) -> bool {
        true
    }
}
