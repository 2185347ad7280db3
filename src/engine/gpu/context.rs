//! Finding an adapter and opening a device on it.
//!
//! Only the Vulkan, Metal and DX12 backends are ever asked for: wgpu's GL
//! fallback would silently run on whatever GL driver is around. A software
//! adapter (such as Mesa's lavapipe) is used only when asked for, by
//! `--backend gpu` or by name with `--adapter`.

use std::sync::{Arc, Mutex};

use crate::engine::gpu::options::{AdapterRequest, AdapterSummary};
use crate::error::{Error, Result};

/// The native backends this tool uses.
pub const BACKENDS: wgpu::Backends = wgpu::Backends::VULKAN
    .union(wgpu::Backends::METAL)
    .union(wgpu::Backends::DX12);

/// An open device with the adapter's full limits.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
    pub features: wgpu::Features,
    /// The first device error reported asynchronously (lost, validation, out
    /// of memory), if any. Checked after every pass.
    pub failure: Arc<Mutex<Option<String>>>,
}

impl Gpu {
    /// A short description such as `NVIDIA H100 (Vulkan)`.
    pub fn describe(&self) -> String {
        describe(&self.info)
    }

    /// Takes the pending asynchronous failure, if one was reported.
    pub fn take_failure(&self) -> Option<String> {
        take_failure(&self.failure)
    }
}

/// Takes the pending asynchronous failure recorded in `failure`, if any.
pub fn take_failure(failure: &Mutex<Option<String>>) -> Option<String> {
    failure.lock().ok().and_then(|mut f| f.take())
}

/// Where the outcome of a buffer's `map_async` lands.
pub type MapResult = Arc<Mutex<Option<std::result::Result<(), wgpu::BufferAsyncError>>>>;

/// Starts mapping `slice` for reading; its outcome lands in the result.
pub fn map_for_reading(slice: wgpu::BufferSlice<'_>) -> MapResult {
    let mapped: MapResult = Arc::new(Mutex::new(None));
    let sink = mapped.clone();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        if let Ok(mut m) = sink.lock() {
            *m = Some(r);
        }
    });
    mapped
}

/// Waits for submission `index`, then for no device failure and a mapped
/// readback; `what` names the data read back in messages.
pub fn wait_mapped(
    device: &wgpu::Device,
    failure: &Mutex<Option<String>>,
    index: wgpu::SubmissionIndex,
    mapped: &MapResult,
    what: &str,
) -> std::result::Result<(), String> {
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: Some(std::time::Duration::from_secs(600)),
        })
        .map_err(|e| format!("waiting for the GPU failed: {e}"))?;
    if let Some(e) = take_failure(failure) {
        return Err(e);
    }
    match mapped.lock().ok().and_then(|mut m| m.take()) {
        Some(Ok(())) => Ok(()),
        Some(Err(e)) => Err(format!("reading {what} back failed: {e}")),
        None => Err(format!("the GPU did not return {what}")),
    }
}

pub fn describe(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?})", info.name, info.backend)
}

/// The process's one wgpu instance, made on first use and never dropped.
///
/// NVIDIA's Vulkan driver (580, on an H100) does not survive instances that
/// come and go in one process: once the first was dropped, a second found no
/// adapter at all, and with two alive on two threads a thread's exit crashed
/// in the driver's libEGL (SIGSEGV). Both were seen with the GPU tests,
/// which open an engine per test; one instance for the whole process ended
/// both, and is what wgpu recommends anyway.
pub fn instance() -> wgpu::Instance {
    static INSTANCE: std::sync::OnceLock<wgpu::Instance> = std::sync::OnceLock::new();
    INSTANCE
        .get_or_init(|| {
            let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
            desc.backends = BACKENDS;
            wgpu::Instance::new(desc)
        })
        .clone()
}

fn is_software(info: &wgpu::AdapterInfo) -> bool {
    info.device_type == wgpu::DeviceType::Cpu
}

fn summary(index: usize, a: &wgpu::Adapter) -> AdapterSummary {
    let info = a.get_info();
    let limits = a.limits();
    let features = a.features();
    AdapterSummary {
        index,
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver: format!("{} {}", info.driver, info.driver_info)
            .trim()
            .to_owned(),
        software: is_software(&info),
        f64: features.contains(wgpu::Features::SHADER_F64),
        subgroups: features.contains(wgpu::Features::SUBGROUP),
        max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
        max_buffer_size: limits.max_buffer_size,
        max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
    }
}

fn adapters() -> Vec<wgpu::Adapter> {
    pollster::block_on(instance().enumerate_adapters(BACKENDS))
}

/// Every adapter of the native backends.
pub fn list() -> Vec<AdapterSummary> {
    adapters()
        .iter()
        .enumerate()
        .map(|(i, a)| summary(i, a))
        .collect()
}

/// Whether a hardware (non-software) adapter exists.
pub fn hardware_available() -> bool {
    adapters().iter().any(|a| !is_software(&a.get_info()))
}

fn rank(info: &wgpu::AdapterInfo) -> u8 {
    match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

fn tried() -> String {
    let found = list();
    let names = if found.is_empty() {
        "none".to_owned()
    } else {
        found
            .iter()
            .map(|a| format!("{} ({}, {})", a.name, a.backend, a.device_type))
            .collect::<Vec<_>>()
            .join("; ")
    };
    format!("backends tried: Vulkan, Metal, DX12; adapters found: {names}")
}

/// Picks an adapter and opens a device with its own limits (not wgpu's
/// conservative defaults) and `features`.
pub fn open(request: &AdapterRequest, features: wgpu::Features) -> Result<Gpu> {
    open_nth(request, None, features)
}

/// [`open`], taking among the adapters of the best kind the one at `nth`
/// modulo their number (the processes of a distributed run on one machine
/// pass their local rank: one GPU each).
pub fn open_nth(
    request: &AdapterRequest,
    nth: Option<usize>,
    features: wgpu::Features,
) -> Result<Gpu> {
    let mut candidates = candidates(request)?;
    let pick = match nth {
        Some(n) => {
            candidates.sort_by_key(|a| rank(&a.get_info()));
            let best = rank(&candidates[0].get_info());
            candidates.retain(|a| rank(&a.get_info()) == best);
            n % candidates.len()
        }
        None => 0,
    };
    let adapter = candidates.swap_remove(pick);
    let info = adapter.get_info();
    check_features(&adapter, &info, features)?;
    let limits = adapter.limits();
    let desc = wgpu::DeviceDescriptor {
        label: Some("perceptron"),
        required_features: features,
        required_limits: limits.clone(),
        ..Default::default()
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&desc))
        .map_err(|e| Error::Gpu(format!("cannot open a device on {}: {e}", describe(&info))))?;
    let failure = record_failures(&device);
    Ok(Gpu {
        device,
        queue,
        info,
        limits,
        features,
        failure,
    })
}

/// The adapters the request may open, best first: those whose name
/// contains the one asked for, else the hardware ones (and the software
/// ones if allowed); none is an error that says what was tried.
fn candidates(request: &AdapterRequest) -> Result<Vec<wgpu::Adapter>> {
    let mut candidates: Vec<wgpu::Adapter> = adapters();
    if let Some(name) = &request.name {
        let needle = name.to_lowercase();
        candidates.retain(|a| a.get_info().name.to_lowercase().contains(&needle));
        if candidates.is_empty() {
            return Err(Error::Gpu(format!(
                "no GPU adapter's name contains \"{name}\" ({})",
                tried()
            )));
        }
    } else {
        if !request.allow_software {
            candidates.retain(|a| !is_software(&a.get_info()));
        }
        if candidates.is_empty() {
            let hint = if request.allow_software {
                "; on Debian or Ubuntu, `apt-get install mesa-vulkan-drivers` provides the software adapter lavapipe"
            } else {
                ""
            };
            return Err(Error::Gpu(format!(
                "no GPU adapter found ({}){hint}",
                tried()
            )));
        }
        candidates.sort_by_key(|a| rank(&a.get_info()));
    }
    Ok(candidates)
}

/// The adapter has every feature the run needs, else an error naming the
/// missing ones (f64 shaders by what they are for).
fn check_features(
    adapter: &wgpu::Adapter,
    info: &wgpu::AdapterInfo,
    features: wgpu::Features,
) -> Result<()> {
    let missing = features - adapter.features();
    if !missing.is_empty() {
        let what = if missing.contains(wgpu::Features::SHADER_F64) {
            "64-bit float shaders (SHADER_F64), needed for f64 precision; use f32 precision"
                .to_owned()
        } else {
            format!("{missing:?}")
        };
        return Err(Error::Gpu(format!(
            "the adapter {} lacks {what}",
            describe(info)
        )));
    }
    Ok(())
}

/// The device's first uncaptured error or loss, kept for the engine to
/// report at its next step.
fn record_failures(device: &wgpu::Device) -> Arc<Mutex<Option<String>>> {
    let failure = Arc::new(Mutex::new(None::<String>));
    let sink = failure.clone();
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        if let Ok(mut f) = sink.lock() {
            f.get_or_insert_with(|| format!("GPU error: {e}"));
        }
    }));
    let sink = failure.clone();
    device.set_device_lost_callback(move |reason, msg| {
        if let Ok(mut f) = sink.lock() {
            f.get_or_insert_with(|| format!("GPU device lost ({reason:?}): {msg}"));
        }
    });
    failure
}
