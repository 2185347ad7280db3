//! The trainer: checked parameters plus the choice of engine, and the CPU
//! engine as the fallback when a device fails mid-run.

use crate::data::Dataset;
use crate::engine::MarginEngine;
use crate::engine::backend::Backend;
use crate::engine::backend::cpu_engine;
use crate::engine::gpu::GpuOptions;
use crate::error::Result;
use crate::float::Real;
use crate::train::epochs::EpochRunner;
use crate::train::fit::{Fit, fit};
use crate::train::params::CheckedParams;
use crate::train::scikit;
use crate::train::state::{Observer, State};

/// Trains with checked parameters on the engine a [`Backend`] names.
///
/// Every backend gives the same model; the choice only changes the speed.
/// A device that fails during training is replaced by the CPU engine from
/// the exact row where it failed, so no work is lost and the result is
/// unchanged.
#[derive(Clone, Debug)]
pub struct Trainer {
    runner: EpochRunner,
}

impl Trainer {
    /// A trainer on the `auto` backend (a hardware GPU when there is one,
    /// else the CPU engine).
    pub fn new(params: CheckedParams) -> Self {
        Trainer {
            runner: EpochRunner {
                params,
                backend: Backend::Auto,
                gpu: GpuOptions::default(),
            },
        }
    }

    pub fn with_backend(mut self, backend: Backend) -> Self {
        self.runner.backend = backend;
        self
    }

    /// Which GPU adapter, and how much of its memory, a GPU backend uses.
    pub fn with_gpu(mut self, gpu: GpuOptions) -> Self {
        self.runner.gpu = gpu;
        self
    }

    pub fn params(&self) -> &CheckedParams {
        &self.runner.params
    }

    /// The backend asked for and the GPU options (for a caller that
    /// chooses the engine itself: a rank of a distributed run).
    pub fn engine_options(&self) -> (Backend, &GpuOptions) {
        (self.runner.backend, &self.runner.gpu)
    }

    /// The initial state: w = 0 for every head, or `weights` (a warm start,
    /// checked against the data by the loop).
    pub fn start<F: Real>(&self, data: &Dataset<F>, weights: Option<Vec<F>>) -> State<F> {
        match weights {
            Some(w) => State::starting_from(w),
            None => {
                let dim = data.cols() + self.runner.params.bias as usize;
                State::initial(dim * self.runner.params.heads(data.classes.len()))
            }
        }
    }

    /// Trains on `data`, already in training order (see
    /// [`crate::train::shuffle::permutation`]), from `start`, reporting to
    /// `observer`.
    pub fn fit<F: Real>(
        &self,
        data: &Dataset<F>,
        start: State<F>,
        observer: &mut dyn Observer<F>,
    ) -> Result<Fit<F>> {
        self.fit_validated(data, None, start, observer)
    }

    /// [`Trainer::fit`] with held-out rows for early stopping's validation
    /// part (see [`crate::train::early_stop`]).
    pub fn fit_validated<F: Real>(
        &self,
        data: &Dataset<F>,
        validation: Option<&Dataset<F>>,
        start: State<F>,
        observer: &mut dyn Observer<F>,
    ) -> Result<Fit<F>> {
        let heads = self.runner.params.heads(data.classes.len());
        if scikit::applies(&self.runner.params, heads) {
            return scikit::fit(&self.runner, data, validation, start, observer);
        }
        self.runner.fit_epochs(data, validation, start, observer)
    }

    /// [`Trainer::fit`] with an engine the caller built (to measure it first,
    /// say); the fallback is still the CPU engine.
    pub fn fit_on<'d, F: Real>(
        &self,
        data: &'d Dataset<F>,
        start: State<F>,
        engine: Box<dyn MarginEngine<F> + 'd>,
        observer: &mut dyn Observer<F>,
    ) -> Result<Fit<F>> {
        let bias = self.runner.params.bias;
        let mut fallback = || cpu_engine(data, bias);
        fit(
            data,
            &self.runner.params,
            start,
            engine,
            &mut fallback,
            observer,
        )
    }
}
