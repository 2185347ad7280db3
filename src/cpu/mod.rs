//! The fast CPU engine: certified margins computed on all cores.
//!
//! Each worker takes a contiguous slice of the pass (whole 32-row flag words,
//! so workers never share a word), rebuilds the weights in force at its first
//! row from the pass's base and patches, and walks its rows in order.

mod kernel;

use std::time::Instant;

use rayon::prelude::*;

use crate::certify::{self, Bound};
use crate::data::Dataset;
use crate::float::Real;
use crate::train::engine::{EngineError, EngineStats, MarginEngine, Pass};

pub use kernel::margin;

/// Certified margins on the CPU.
pub struct CpuEngine<'d, F> {
    data: &'d Dataset<F>,
    bias: bool,
    l1_max: f64,
    threads: usize,
    stats: EngineStats,
}

impl<'d, F: Real> CpuEngine<'d, F> {
    pub fn new(data: &'d Dataset<F>, bias: bool) -> Self {
        CpuEngine {
            data,
            bias,
            l1_max: certify::l1_max(&data.features, bias),
            threads: rayon::current_num_threads(),
            stats: EngineStats::default(),
        }
    }
}

impl<F: Real> MarginEngine<F> for CpuEngine<'_, F> {
    fn name(&self) -> String {
        format!("cpu ({} threads)", self.threads)
    }

    fn preferred_window(&self, flag_rate: f64) -> usize {
        // About 64 flagged rows per window keeps rollbacks rare and the
        // window's rows in cache for the verifying pass.
        let w = 64.0 / flag_rate.max(1e-9);
        (w as usize).clamp(4096, 1 << 18)
    }

    fn evaluate(&mut self, pass: &Pass<'_, F>, flags: &mut [u32]) -> Result<(), EngineError> {
        let t0 = Instant::now();
        let any_sub = pass
            .base
            .iter()
            .chain(pass.patch_values)
            .any(|v| v.is_subnormal());
        let bound = Bound::<F>::new(any_sub, self.l1_max);
        let words_per_task = flags.len().div_ceil(self.threads * 4).max(1);
        let (data, bias) = (self.data, self.bias);
        let flagged: u64 = flags
            .par_chunks_mut(words_per_task)
            .enumerate()
            .map(|(task, words)| {
                let lo = pass.start + task * words_per_task * 32;
                let hi = (lo + words.len() * 32).min(pass.end);
                let mut w = pass.base.to_vec();
                let mut seg = 0;
                let mut count = 0u64;
                for p in lo..hi {
                    while seg < pass.segments.len() && pass.segments[seg].from <= p {
                        for e in pass.segments[seg].patch.clone() {
                            w[pass.patch_coords[e] as usize] = pass.patch_values[e];
                        }
                        seg += 1;
                    }
                    let row = data.features.row(p);
                    let (s, t) = kernel::margin(&w, row, bias);
                    let m = F::from_f64((row.stored() + bias as usize) as f64);
                    if !bound.settles_correct(data.labels[p], s, t, m) {
                        let off = p - lo;
                        words[off / 32] |= 1 << (off % 32);
                        count += 1;
                    }
                }
                count
            })
            .sum();
        self.stats.passes += 1;
        self.stats.rows_evaluated += pass.len() as u64;
        self.stats.rows_flagged += flagged;
        self.stats.seconds += t0.elapsed().as_secs_f64();
        Ok(())
    }

    fn stats(&self) -> EngineStats {
        self.stats.clone()
    }
}
