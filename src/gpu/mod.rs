//! The GPU backend: certified margins computed by WGSL kernels through wgpu.

mod chunks;
pub mod context;
pub mod engine;
pub mod layout;
pub mod shaders;
pub mod twin;
pub mod walk;
pub mod walk_twin;

pub use context::{AdapterRequest, AdapterSummary};
pub use engine::{GpuEngine, GpuOptions};
