//! Choosing how margins are computed: the reference loop, the CPU engine,
//! or a GPU, with `auto` picking a hardware GPU for dense rows when there
//! is one.

use crate::data::Dataset;
use crate::engine::gpu::GpuOptions;
use crate::engine::pair::EnginePair;
use crate::engine::{MarginEngine, ReferenceEngine};
use crate::error::{Error, Result};
use crate::float::Real;

/// Which engine computes margins. Every choice gives the same model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// The textbook sequential loop: every margin by the reference dot.
    Reference,
    /// Certified margins on all CPU cores.
    Cpu,
    /// Certified margins on a GPU (a software adapter such as lavapipe is
    /// accepted when no hardware GPU exists).
    Gpu,
    /// A hardware GPU when one is found and the rows are dense, otherwise
    /// the CPU engine.
    #[default]
    Auto,
}

impl Backend {
    /// The backend as the user names it, and as reports give it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Reference => "reference",
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
            Backend::Auto => "auto",
        }
    }
}

/// An engine ready to train, and a note on how it was chosen.
pub struct EngineChoice<'d, F> {
    pub engine: Box<dyn MarginEngine<F> + 'd>,
    /// Why `auto` or a GPU problem led to this engine, for the report.
    pub note: Option<String>,
}

/// Whether the system shows a device through which a hardware GPU could be
/// used, found without starting any GPU driver. On Linux every Vulkan
/// driver for hardware opens a device node: a DRM render node
/// (`/dev/dri`: Intel, AMD, Nouveau, virtio, ...), NVIDIA's `/dev/nvidia*`,
/// or WSL's `/dev/dxg`; without one, no hardware adapter exists. Elsewhere
/// the adapters must be asked.
pub fn gpu_device_present() -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    let dev = std::path::Path::new("/dev");
    if dev.join("dri").is_dir() || dev.join("dxg").exists() {
        return true;
    }
    std::fs::read_dir(dev).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("nvidia"))
    })
}

/// Builds the engine for `backend`. `auto` never fails for lack of a GPU:
/// it uses the CPU engine and says why.
pub fn choose<'d, F: Real>(
    backend: Backend,
    gpu: &GpuOptions,
    data: &'d Dataset<F>,
    bias: bool,
) -> Result<EngineChoice<'d, F>> {
    // One pass over the rows.
    choose_in(backend, gpu, data, bias, 1, false)
}

/// [`choose`] for training: `auto`'s GPU comes with the CPU engine beside
/// it ([`crate::engine::pair`]), so that the loop can walk with either.
/// On the H100 machine (dense 4M x 256, 20 epochs) the CPU engine's 16
/// cores took 474 ms in the mistake-dense first epoch where the GPU's
/// adaptive walk took 913, and the device's walk 94 ms in the second where
/// the cores took 463: neither engine alone is the best in every epoch.
/// `passes`: the most passes over the rows the run can make (its epochs
/// times its heads; see [`SMALL_RUN_VALUES`]).
pub fn choose_to_train<'d, F: Real>(
    backend: Backend,
    gpu: &GpuOptions,
    data: &'d Dataset<F>,
    bias: bool,
    passes: usize,
) -> Result<EngineChoice<'d, F>> {
    choose_in(backend, gpu, data, bias, passes, true)
}

/// What `auto` does with these rows before any device is opened: the CPU
/// engine, and why, or a GPU.
enum AutoPlan {
    Cpu(String),
    Gpu,
}

/// Why `auto` would train `data` on the CPU engine (for want of a GPU,
/// because the rows are sparse or because the run is too short), or `None`
/// when it would take a GPU, found before any device is opened (the
/// adapters may be listed). `passes` as for [`choose_to_train`].
pub fn auto_cpu_reason<F: Real>(
    gpu: &GpuOptions,
    data: &Dataset<F>,
    passes: usize,
) -> Option<String> {
    match auto_plan(gpu, data, passes) {
        AutoPlan::Cpu(why) => Some(why),
        AutoPlan::Gpu => None,
    }
}

/// The stored values a run visits at most (the data's, times its passes
/// over them), below which `auto` does not look for a GPU that was not
/// asked for by name. The textbook loop on one core visits about one a
/// nanosecond (dense 4M x 256: 958 ms an epoch on the H100 machine), so
/// such a run is over within about 70 ms on one core, and sooner on all
/// of them; listing the adapters alone takes about a tenth of a second,
/// and a device's start more (its pipelines, the upload). A small data
/// set fitted many times over (cross-validation, a parameter search from
/// Python) would pay a GPU's start on every fit and never use it.
pub const SMALL_RUN_VALUES: u64 = 1 << 26;

fn auto_plan<F: Real>(gpu: &GpuOptions, data: &Dataset<F>, passes: usize) -> AutoPlan {
    let named = gpu.adapter.name.is_some();
    if !cfg!(feature = "gpu") {
        return AutoPlan::Cpu("auto: this build has no GPU support, using the CPU engine".into());
    }
    if !named && data.features.is_sparse() {
        // On sparse rows the host's walks decide the rows, and the
        // CPU engine's cores help them (the walk ahead): on an H100
        // with 16 cores (sparse 2M x 10^6, 64 non-zeros a row, 10
        // epochs) the CPU engine took 353 ms an epoch and the GPU
        // engine 584, its walk paying 10-18 us a mistake.
        return AutoPlan::Cpu(
            "auto: sparse rows, using the CPU engine (faster than a GPU's walk on them)".into(),
        );
    }
    let stored = data.features.stored() as u64;
    let values = stored.saturating_mul(passes.max(1) as u64);
    if !named && values < SMALL_RUN_VALUES {
        return AutoPlan::Cpu(format!(
            "auto: at most {} over {stored} stored values, a run over before a GPU could \
             start; using the CPU engine",
            crate::text::count(passes.max(1), "pass"),
        ));
    }
    // Starting Vulkan to find no GPU costs a tenth of a second and
    // some 60 MiB (the drivers load); a machine without a GPU
    // device node has no hardware adapter to find.
    if !named && (!gpu_device_present() || !crate::engine::gpu::hardware_available()) {
        return AutoPlan::Cpu("auto: no hardware GPU adapter found, using the CPU engine".into());
    }
    AutoPlan::Gpu
}

/// `auto`'s choice when a GPU could not be used: the CPU engine, saying
/// why; an adapter asked for by name is an error.
fn without_gpu<'d, F: Real>(
    e: Error,
    gpu: &GpuOptions,
    data: &'d Dataset<F>,
    bias: bool,
) -> Result<EngineChoice<'d, F>> {
    match e {
        Error::Gpu(msg) if gpu.adapter.name.is_none() => Ok(on_cpu(
            &format!("auto: the GPU could not be used ({msg}); using the CPU engine"),
            data,
            bias,
        )),
        e => Err(e),
    }
}

/// The CPU engine, boxed: `cpu`'s engine, the side of a pair beside a
/// device, and the fallback of a device that fails.
pub fn cpu_engine<F: Real>(data: &Dataset<F>, bias: bool) -> Box<dyn MarginEngine<F> + '_> {
    Box::new(crate::engine::cpu::CpuEngine::new(data, bias))
}

/// The CPU engine, and why `auto` took it.
fn on_cpu<'d, F: Real>(why: &str, data: &'d Dataset<F>, bias: bool) -> EngineChoice<'d, F> {
    EngineChoice {
        engine: cpu_engine(data, bias),
        note: Some(why.into()),
    }
}

fn choose_in<'d, F: Real>(
    backend: Backend,
    gpu: &GpuOptions,
    data: &'d Dataset<F>,
    bias: bool,
    passes: usize,
    to_train: bool,
) -> Result<EngineChoice<'d, F>> {
    match backend {
        Backend::Reference => Ok(EngineChoice {
            engine: Box::new(ReferenceEngine),
            note: None,
        }),
        Backend::Cpu => Ok(EngineChoice {
            engine: cpu_engine(data, bias),
            note: None,
        }),
        Backend::Gpu => {
            let mut opts = gpu.clone();
            opts.adapter.allow_software = true;
            Ok(EngineChoice {
                engine: gpu_engine(data, bias, &opts)?,
                note: None,
            })
        }
        Backend::Auto => match auto_plan(gpu, data, passes) {
            AutoPlan::Cpu(why) => Ok(on_cpu(&why, data, bias)),
            AutoPlan::Gpu => match gpu_engine(data, bias, gpu) {
                // Dense rows only: on sparse ones (an adapter named) the
                // CPU engine's walk is the host's walk ahead, which the
                // loop has already.
                Ok(device) if to_train && !data.features.is_sparse() => Ok(EngineChoice {
                    engine: Box::new(EnginePair::new(device, cpu_engine(data, bias))),
                    note: None,
                }),
                Ok(engine) => Ok(EngineChoice { engine, note: None }),
                Err(e) => without_gpu(e, gpu, data, bias),
            },
        },
    }
}

/// Runs `train` with [`choose_to_train`]'s engine, but for one thing: the
/// GPU that `auto` pairs with the cores on dense rows starts on a thread
/// of its own while the CPU engine trains ([`EnginePair::starting`]), and
/// joins once it is ready. A device's start (its pipelines, the data's
/// upload: 2.1 s for 4 GB of dense rows on the H100, where the 16 cores
/// walked an epoch in 474 ms) then no longer holds up the first epochs.
/// The adapter is opened here, before training: an adapter asked for by
/// name that cannot be is an error, as with [`choose_to_train`]. What fails
/// later (rows too many for the device, a device lost in the upload) leaves
/// the cores training alone, with a warning, a named adapter's too: the
/// result is the same. Dropping the pair (the run over, or replaced by the
/// fallback) cancels a start still going, and the scope then waits for it
/// to stop: between two chunks of the upload, or before the walk's
/// pipelines. `passes` as for [`choose_to_train`].
pub fn train_with<'d, F: Real, R>(
    backend: Backend,
    gpu: &GpuOptions,
    data: &'d Dataset<F>,
    bias: bool,
    passes: usize,
    train: impl for<'e> FnOnce(EngineChoice<'e, F>) -> Result<R>,
) -> Result<R> {
    // `auto`'s look for a GPU is made once (listing the adapters can take
    // a tenth of a second).
    if backend == Backend::Auto && !data.features.is_sparse() {
        match auto_plan(gpu, data, passes) {
            AutoPlan::Cpu(why) => return train(on_cpu(&why, data, bias)),
            #[cfg(feature = "gpu")]
            AutoPlan::Gpu => return start_beside(gpu, data, bias, train),
            // Without the `gpu` feature the plan is never a GPU.
            #[cfg(not(feature = "gpu"))]
            AutoPlan::Gpu => {}
        }
    }
    train(choose_to_train(backend, gpu, data, bias, passes)?)
}

/// [`train_with`]'s pair, its device starting beside the cores.
#[cfg(feature = "gpu")]
fn start_beside<'d, F: Real, R>(
    gpu: &GpuOptions,
    data: &'d Dataset<F>,
    bias: bool,
    train: impl for<'e> FnOnce(EngineChoice<'e, F>) -> Result<R>,
) -> Result<R> {
    use crate::engine::gpu::GpuEngine;
    use std::sync::atomic::AtomicBool;
    let device = match GpuEngine::<F>::open(gpu) {
        Ok(device) => device,
        Err(e) => return train(without_gpu(e, gpu, data, bias)?),
    };
    let name = format!("gpu: {}", device.describe());
    let cancel = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (started, arrives) = std::sync::mpsc::channel();
        let cancel = &cancel;
        s.spawn(move || {
            // A panic in a driver must not outlive the start: the scope
            // would raise it again once training is done.
            let engine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                GpuEngine::start_beside(device, data, bias, gpu, cancel)
            }))
            .unwrap_or_else(|_| Err(Error::Gpu("its start panicked".into())));
            // A run that ended first has dropped the receiver.
            let _ = started.send(engine.map(|e| Box::new(e) as Box<dyn MarginEngine<F> + Send>));
        });
        // Dropping the pair (the run over, or the pair replaced by the
        // fallback, or a panic unwinding) cancels a start still going.
        let pair = EnginePair::starting(name, arrives, cpu_engine(data, bias), cancel);
        train(EngineChoice {
            engine: Box::new(pair),
            note: None,
        })
    })
}

/// The GPU engine, or why there is none.
#[cfg(feature = "gpu")]
fn gpu_engine<'d, F: Real>(
    data: &'d Dataset<F>,
    bias: bool,
    gpu: &GpuOptions,
) -> Result<Box<dyn MarginEngine<F> + 'd>> {
    Ok(Box::new(crate::engine::gpu::GpuEngine::new(
        data, bias, gpu,
    )?))
}

/// A build without the `gpu` feature has no GPU engine.
#[cfg(not(feature = "gpu"))]
fn gpu_engine<'d, F: Real>(
    _data: &'d Dataset<F>,
    _bias: bool,
    _gpu: &GpuOptions,
) -> Result<Box<dyn MarginEngine<F> + 'd>> {
    Err(Error::Gpu(crate::engine::gpu::NOT_BUILT.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DenseMatrix, Features};

    /// `rows` x 8 dense rows.
    fn dense(rows: usize) -> Dataset<f32> {
        crate::engine::decide::as_positive(Features::Dense(DenseMatrix {
            rows,
            cols: 8,
            values: vec![1.0; rows * 8].into(),
        }))
    }

    fn short_run_note(plan: &AutoPlan) -> bool {
        matches!(plan, AutoPlan::Cpu(why) if why.contains("a run over before a GPU could start"))
    }

    /// A run that cannot visit 2^26 stored values trains on the CPU engine
    /// without a look for a GPU, and says why; a longer one, or an adapter
    /// asked for by name, is not held back by it.
    #[test]
    fn auto_keeps_a_run_too_short_for_a_gpu_on_the_cores() {
        let unnamed = GpuOptions::default();
        let data = dense(1000);
        let chosen = choose_to_train(Backend::Auto, &unnamed, &data, true, 10).unwrap();
        assert!(chosen.engine.name().starts_with("cpu"));
        if !cfg!(feature = "gpu") {
            return;
        }
        // On any machine, with or without a GPU, and without looking.
        assert!(
            chosen
                .note
                .is_some_and(|n| n.contains("a run over before a GPU could start"))
        );
        // 8,000 values: 8,387 passes stay below 2^26, 8,389 do not.
        let plan = auto_plan(&unnamed, &data, 8387);
        assert!(short_run_note(&plan));
        {
            let AutoPlan::Cpu(why) = plan else {
                unreachable!()
            };
            assert_eq!(
                why,
                "auto: at most 8387 passes over 8000 stored values, a run over before a GPU \
                 could start; using the CPU engine"
            );
            assert!(!short_run_note(&auto_plan(&unnamed, &data, 8389)));
            let mut named = GpuOptions::default();
            named.adapter.name = Some("llvmpipe".into());
            assert!(matches!(auto_plan(&named, &data, 1), AutoPlan::Gpu));
        }
    }
}
