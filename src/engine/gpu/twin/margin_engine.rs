//! The GPU engine's margin pass computed by the margin kernels' twins: an
//! engine that needs no device, so CI tests the loop's GPU path on any
//! machine and GPU tests compare the device against it.

use std::sync::Arc;

use super::common::MarginBindings;
use super::margins_dense::margins_dense;
use super::margins_sparse::margins_sparse;
use crate::data::{Dataset, Features};
use crate::engine::certify::{self, Bound};
use crate::engine::{Completed, EngineError, EngineStats, MarginEngine, Pass};
use crate::float::Real;

/// The GPU engine's pass computed by the twins on the CPU.
pub struct TwinEngine<'d, F: Real> {
    data: &'d Dataset<F>,
    bias: bool,
    lanes: u32,
    l1_max: f64,
    /// Row norms (and the rest of the data's facts), shared with the loop.
    norms: Arc<certify::RowFacts>,
    done: Completed,
    stats: EngineStats,
}

impl<'d, F: Real> TwinEngine<'d, F> {
    /// `lanes` as the GPU would pick it unless given.
    pub fn new(data: &'d Dataset<F>, bias: bool, lanes: Option<u32>) -> Self {
        let terms = match &data.features {
            Features::Dense(m) => m.cols,
            Features::Sparse(m) => m.values.len() / m.rows().max(1),
        };
        TwinEngine {
            data,
            bias,
            lanes: lanes.unwrap_or_else(|| crate::engine::gpu::shaders::lanes_for(terms)),
            l1_max: data.facts(bias).l1_max,
            norms: data.facts(bias),
            done: Completed::default(),
            stats: EngineStats::default(),
        }
    }

    /// The slacks of one pass, as the kernels compute them.
    pub fn slacks(&self, pass: &Pass<'_, F>, out: &mut [f32]) {
        let bound = Bound::<F>::for_weights(pass.weights, self.l1_max).with_margin(pass.tau);
        let k = MarginBindings {
            pass,
            bound: &bound,
            data: self.data,
            norms: &self.norms.norms,
            lanes: self.lanes,
            bias: self.bias,
            stride: self.data.cols() + self.bias as usize,
        };
        match &self.data.features {
            Features::Dense(x) => margins_dense(&k, x, out),
            Features::Sparse(x) => margins_sparse(&k, x, out),
        }
    }
}

impl<F: Real> MarginEngine<F> for TwinEngine<'_, F> {
    fn name(&self) -> String {
        format!("gpu twin (lanes {})", self.lanes)
    }

    fn preferred_window(&self, mistake_rate: f64) -> usize {
        ((64.0 / mistake_rate.max(1e-9)) as usize).clamp(64, 1 << 16)
    }

    fn submit(&mut self, pass: &Pass<'_, F>) -> Result<(), EngineError> {
        let mut out = self.done.buffer(pass.slots());
        self.slacks(pass, &mut out);
        self.stats.passes += 1;
        self.stats.rows_evaluated += pass.len() as u64;
        self.stats.rows_uncertain += out.iter().filter(|r| **r == 0.0).count() as u64;
        self.done.push(out);
        Ok(())
    }

    fn collect(&mut self, slack: &mut [f32]) -> Result<(), EngineError> {
        self.done.pop_into(slack)
    }

    fn stats(&self) -> EngineStats {
        self.stats.clone()
    }
}
