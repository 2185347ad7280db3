//! The GPU backend: certified margins computed by WGSL kernels through wgpu.

pub mod shaders;
