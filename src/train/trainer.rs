//! The trainer: checked parameters plus the choice of engine, and the CPU
//! engine as the fallback when a device fails mid-run.

use crate::data::Dataset;
use crate::engine::MarginEngine;
use crate::engine::backend::{self, Backend};
use crate::engine::gpu::GpuOptions;
use crate::error::Result;
use crate::float::Real;
use crate::train::fit::{Fit, fit};
use crate::train::params::{CheckedParams, TrainParams};
use crate::train::scikit;
use crate::train::state::{Observer, Outcome, State};

/// Trains with checked parameters on the engine a [`Backend`] names.
///
/// Every backend gives the same model; the choice only changes the speed.
/// A device that fails during training is replaced by the CPU engine from
/// the exact row where it failed, so no work is lost and the result is
/// unchanged.
#[derive(Clone, Debug)]
pub struct Trainer {
    params: CheckedParams,
    backend: Backend,
    gpu: GpuOptions,
}

impl Trainer {
    /// A trainer on the `auto` backend (a hardware GPU when there is one,
    /// else the CPU engine).
    pub fn new(params: CheckedParams) -> Self {
        Trainer {
            params,
            backend: Backend::Auto,
            gpu: GpuOptions::default(),
        }
    }

    pub fn with_backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// Which GPU adapter, and how much of its memory, a GPU backend uses.
    pub fn with_gpu(mut self, gpu: GpuOptions) -> Self {
        self.gpu = gpu;
        self
    }

    pub fn params(&self) -> &CheckedParams {
        &self.params
    }

    /// This trainer (backend, GPU options) with other parameters.
    pub(super) fn with_params(&self, params: TrainParams) -> Result<Trainer> {
        Ok(Trainer {
            params: params.check()?,
            backend: self.backend,
            gpu: self.gpu.clone(),
        })
    }

    /// The initial state: w = 0 for every head, or `weights` (a warm start,
    /// checked against the data by the loop).
    pub fn start<F: Real>(&self, data: &Dataset<F>, weights: Option<Vec<F>>) -> State<F> {
        match weights {
            Some(w) => State::starting_from(w),
            None => {
                let dim = data.cols() + self.params.bias as usize;
                State::initial(dim * self.params.heads(data.classes.len()))
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
        let heads = self.params.heads(data.classes.len());
        if scikit::applies(&self.params, heads) {
            return scikit::fit(self, data, validation, start, observer);
        }
        self.fit_epochs(data, validation, start, observer)
    }

    /// One run of the loop over `data` in the order given.
    pub(super) fn fit_epochs<F: Real>(
        &self,
        data: &Dataset<F>,
        validation: Option<&Dataset<F>>,
        start: State<F>,
        observer: &mut dyn Observer<F>,
    ) -> Result<Fit<F>> {
        let t0 = std::time::Instant::now();
        let (out, note, started) = self.run_epochs(data, validation, start, observer)?;
        let seconds = t0.elapsed().as_secs_f64() - started;
        let mut fitted = Fit::of_run(
            out,
            &self.params,
            data,
            validation.map(|v| v.rows()),
            seconds,
        );
        fitted.backend_note = note;
        fitted.engine_start_seconds = started;
        Ok(fitted)
    }

    /// One run of the loop over `data` in the order given, without the
    /// theorem's figures (a caller running epoch by epoch makes them once,
    /// at the end): the loop's outcome, why `auto` chose its engine, and
    /// the seconds the engine took to start (a device, its pipelines, the
    /// data's upload), which are not the loop's.
    pub(super) fn run_epochs<F: Real>(
        &self,
        data: &Dataset<F>,
        validation: Option<&Dataset<F>>,
        start: State<F>,
        observer: &mut dyn Observer<F>,
    ) -> Result<(Outcome<F>, Option<String>, f64)> {
        let t0 = std::time::Instant::now();
        let chosen = backend::choose(self.backend, &self.gpu, data, self.params.bias)?;
        let started = t0.elapsed().as_secs_f64();
        let bias = self.params.bias;
        let mut fallback = || cpu_engine(data, bias);
        let out = crate::train::sweep::epoch::run(
            data,
            validation,
            &self.params,
            start,
            chosen.engine,
            &mut fallback,
            observer,
        )?;
        Ok((out, chosen.note, started))
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
        let bias = self.params.bias;
        let mut fallback = || cpu_engine(data, bias);
        fit(data, &self.params, start, engine, &mut fallback, observer)
    }
}

fn cpu_engine<F: Real>(data: &Dataset<F>, bias: bool) -> Box<dyn MarginEngine<F> + '_> {
    Box::new(crate::engine::cpu::CpuEngine::new(data, bias))
}
