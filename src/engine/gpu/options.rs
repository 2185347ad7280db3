//! What a GPU run may use: which adapter, how much device memory, and the
//! hooks tests use. Plain settings, compiled with or without the `gpu`
//! feature, so every front end can carry them.

/// Which adapter to open.
#[derive(Clone, Debug, Default)]
pub struct AdapterRequest {
    /// Case-insensitive part of the adapter's name; any type, software too.
    pub name: Option<String>,
    /// Accept a software adapter when no hardware one exists.
    pub allow_software: bool,
}

/// How to run on the GPU.
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    pub adapter: AdapterRequest,
    /// Bytes of data to keep resident on the device; the rest is streamed.
    /// `None`: as much as the device accepts.
    pub memory_budget: Option<u64>,
    /// Largest chunk in bytes (default and maximum: the adapter's largest
    /// storage binding, capped at 1 GiB). Smaller chunks exercise chunking.
    pub chunk_bytes: Option<u64>,
    /// Test hook: the engine reports a device failure at this pass.
    pub fail_at_pass: Option<u64>,
    /// Threads per row in the kernels (a power of two up to 32); default:
    /// 1 on CPU-type adapters, else chosen from the row length. For tests
    /// of the multi-lane reduction on any adapter, and for tuning.
    pub lanes: Option<u32>,
    /// Never walk on the device (use margin passes over windows only).
    pub no_walk: bool,
    /// Decisions one walk batch may record at most; default 2048.
    pub walk_iterations: Option<usize>,
    /// Fresh dots a walk step may find correct before a new scan; default
    /// 64 (`PERCEPTRON_GPU_WALK_WASTE`, for tuning).
    pub walk_waste: Option<u32>,
    /// Among equally good adapters, the one at this index modulo their
    /// number (a distributed run passes each process's rank on its machine).
    pub spread: Option<usize>,
}

impl GpuOptions {
    /// Reads the fault-injection hook from `PERCEPTRON_GPU_FAIL_AT_PASS`, and
    /// the tuning knobs `PERCEPTRON_GPU_WALK_WASTE` and `PERCEPTRON_GPU_LANES`.
    pub fn with_env(mut self) -> Self {
        if let Ok(v) = std::env::var("PERCEPTRON_GPU_FAIL_AT_PASS") {
            self.fail_at_pass = v.trim().parse().ok();
        }
        if let Ok(v) = std::env::var("PERCEPTRON_GPU_WALK_WASTE") {
            self.walk_waste = v.trim().parse().ok();
        }
        if let Ok(v) = std::env::var("PERCEPTRON_GPU_LANES") {
            self.lanes = v.trim().parse().ok();
        }
        self
    }
}

/// What `perceptron devices` shows about an adapter.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AdapterSummary {
    pub index: usize,
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub software: bool,
    pub f64: bool,
    pub subgroups: bool,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroups_per_dimension: u32,
}
