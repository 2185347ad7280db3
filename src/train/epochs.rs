//! One run of the loop with a backend's engine and the CPU fallback: what
//! the [`Trainer`](crate::train::Trainer) runs, and what the scikit-learn
//! schedule runs once per epoch and per perceptron.

use crate::data::Dataset;
use crate::engine::backend::{self, Backend};
use crate::engine::gpu::GpuOptions;
use crate::error::Result;
use crate::float::Real;
use crate::train::fit::Fit;
use crate::train::params::{CheckedParams, PassPolicy, TrainParams};
use crate::train::state::{Observer, Outcome, State};
use crate::train::sweep::chooser::ChooserMemory;

/// Checked parameters and the engine to run them on.
#[derive(Clone, Debug)]
pub(super) struct EpochRunner {
    pub(super) params: CheckedParams,
    pub(super) backend: Backend,
    pub(super) gpu: GpuOptions,
}

impl EpochRunner {
    pub(super) fn params(&self) -> &CheckedParams {
        &self.params
    }

    /// Whether every engine this runner starts walks on the host (the CPU
    /// engine or the reference), and its pass policy lets the host walk:
    /// then a run may visit the rows in an order of its own rather than
    /// in a copy of them in that order (see [`run_epochs`](Self::run_epochs)).
    /// A device reads the rows it was given, in their order.
    pub(super) fn walks_on_host(&self) -> bool {
        self.uses_no_device()
            && !matches!(self.params.passes, PassPolicy::Always | PassPolicy::Windows)
    }

    /// Whether every engine this runner starts runs on the host's cores
    /// (the CPU engine or the reference): then several runs may share the
    /// cores, each with its own threads.
    pub(super) fn uses_no_device(&self) -> bool {
        match self.backend {
            Backend::Cpu | Backend::Reference => true,
            // `auto` without an adapter named and without a GPU device in
            // sight takes the CPU engine (the cheap part of its look).
            Backend::Auto => {
                self.gpu.adapter.name.is_none()
                    && (!cfg!(feature = "gpu") || !backend::gpu_device_present())
            }
            Backend::Gpu => false,
        }
    }

    /// With `auto`: why it would train `data` on the CPU engine here, in
    /// a run starting in (0-based) epoch `from`, or `None` when it would
    /// take a GPU (see [`backend::auto_cpu_reason`]).
    pub(super) fn auto_cpu_reason<F: Real>(
        &self,
        data: &Dataset<F>,
        from: usize,
    ) -> Option<String> {
        backend::auto_cpu_reason(&self.gpu, data, self.params.passes_left(data, from))
    }

    /// Opens and closes the adapter `--adapter` names, if any: whether it
    /// exists and can start.
    pub(super) fn check_named_adapter(&self) -> Result<()> {
        match self.gpu.adapter.name {
            Some(_) => crate::engine::gpu::probe(&self.gpu.adapter),
            None => Ok(()),
        }
    }

    /// This runner with another backend.
    pub(super) fn with_backend(&self, backend: Backend) -> EpochRunner {
        EpochRunner {
            backend,
            ..self.clone()
        }
    }

    /// This runner (backend, GPU options) with other parameters.
    pub(super) fn with_params(&self, params: TrainParams) -> Result<EpochRunner> {
        Ok(EpochRunner {
            params: params.check()?,
            backend: self.backend,
            gpu: self.gpu.clone(),
        })
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
        let (out, note, started) =
            self.run_epochs(data, None, validation, start, None, observer)?;
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

    /// One run of the loop over `data` in its order, or in `order` when
    /// given (see [`Stepper::visit_in`]), its chooser starting from
    /// `memory` when given, without the theorem's figures (a caller
    /// running epoch by epoch makes them once, at the end, and carries the
    /// outcome's [`Outcome::chooser`] into the next run): the
    /// loop's outcome, why `auto` chose its engine, and the seconds the
    /// engine took to start (a device, its pipelines, the data's upload),
    /// which are not the loop's. A GPU that `auto` pairs with the cores
    /// starts beside them while they train ([`backend::train_with`]); a
    /// run of one epoch of many (scikit-learn's schedule) never pairs one:
    /// there `auto` trains on the CPU engine.
    ///
    /// [`Stepper::visit_in`]: crate::train::sweep::stepper::Stepper::visit_in
    pub(super) fn run_epochs<'d, F: Real>(
        &self,
        data: &'d Dataset<F>,
        order: Option<&'d [usize]>,
        validation: Option<&Dataset<F>>,
        start: State<F>,
        memory: Option<ChooserMemory>,
        observer: &mut dyn Observer<F>,
    ) -> Result<(Outcome<F>, Option<String>, f64)> {
        let t0 = std::time::Instant::now();
        if self.uses_no_device() {
            // The host walks every row: its copy of pictures' rows as bytes
            // is its upload, made once per dataset (before the engine's
            // row facts, which it then computes from the bytes).
            data.byte_rows();
        }
        let bias = self.params.bias;
        // A resumed run has only the rest of its epochs to go.
        let passes = self.params.passes_left(data, start.epoch);
        let run = |chosen: backend::EngineChoice<'_, F>| {
            let started = t0.elapsed().as_secs_f64();
            let mut fallback = || backend::cpu_engine(data, bias);
            let out = crate::train::sweep::epoch::run(
                data,
                order,
                validation,
                &self.params,
                start,
                memory,
                chosen.engine,
                &mut fallback,
                observer,
            )?;
            Ok((out, chosen.note, started))
        };
        backend::train_with(self.backend, &self.gpu, data, bias, passes, run)
    }
}
