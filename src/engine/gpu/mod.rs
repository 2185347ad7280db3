//! The GPU backend: certified margins computed by WGSL kernels through wgpu
//! (the `gpu` feature), and the kernels' CPU twins, which need no device.

#[cfg(feature = "gpu")]
mod chunks;
#[cfg(feature = "gpu")]
pub mod context;
#[cfg(feature = "gpu")]
pub mod engine;
pub mod layout;
pub mod options;
pub mod shaders;
pub mod twin;
#[cfg(feature = "gpu")]
pub mod walk;
pub mod walk_plan;

#[cfg(feature = "gpu")]
pub use engine::GpuEngine;
pub use options::{AdapterRequest, AdapterSummary, GpuOptions};

#[cfg(not(feature = "gpu"))]
use crate::error::Error;
use crate::error::Result;

/// Why GPU requests fail in a build without the `gpu` feature.
pub const NOT_BUILT: &str =
    "this build has no GPU support: rebuild with the cargo feature `gpu` (on by default)";

/// The adapters this machine offers (none without the `gpu` feature).
pub fn adapters() -> Vec<AdapterSummary> {
    #[cfg(feature = "gpu")]
    return context::list();
    #[cfg(not(feature = "gpu"))]
    Vec::new()
}

/// Whether a hardware (not software) adapter exists.
pub fn hardware_available() -> bool {
    #[cfg(feature = "gpu")]
    return context::hardware_available();
    #[cfg(not(feature = "gpu"))]
    false
}

/// Opens the adapter `request` names, and closes it: whether a GPU run
/// can start.
pub fn probe(request: &AdapterRequest) -> Result<()> {
    #[cfg(feature = "gpu")]
    return context::open(request, wgpu::Features::empty()).map(drop);
    #[cfg(not(feature = "gpu"))]
    {
        let _ = request;
        Err(Error::Gpu(NOT_BUILT.into()))
    }
}
