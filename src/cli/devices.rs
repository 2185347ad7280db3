//! `perceptron devices`: the GPU adapters this machine offers.

use clap::Args;

use crate::error::{Result, exit};

const EXAMPLES: &str = "\
Examples:
  perceptron devices            list adapters
  perceptron devices --json     the same, for scripts
  perceptron train data.svm --adapter llvmpipe   train on a listed adapter

Only the Vulkan, Metal and DX12 backends are used. On Debian or Ubuntu,
`apt-get install mesa-vulkan-drivers` provides lavapipe, a software adapter.

Exit status: 0 success (also when no adapter is found); 2 bad command line;
130 interrupted (Ctrl-C, SIGTERM or SIGHUP).";

/// List the GPU adapters (backend, type, f64 support, limits).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct DevicesArgs {
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &DevicesArgs) -> Result<i32> {
    let adapters = crate::engine::gpu::adapters();
    if args.json {
        super::stdout::print(&super::stdout::summary(true, &adapters, String::new)?)?;
        return Ok(exit::SUCCESS);
    }
    if !cfg!(feature = "gpu") {
        super::stdout::print_line(&format!(
            "{}; training will use the CPU",
            crate::engine::gpu::NOT_BUILT
        ))?;
        return Ok(exit::SUCCESS);
    }
    if adapters.is_empty() {
        super::stdout::print_line(
            "no GPU adapter found (backends tried: Vulkan, Metal, DX12); training will use the CPU",
        )?;
        return Ok(exit::SUCCESS);
    }
    for a in &adapters {
        super::stdout::print_line(&format!(
            "[{}] {}\n    backend {}, type {}{}, driver {}\n    f64 shaders: {}, subgroups: {}\n    max storage binding {} MiB, max buffer {} MiB, max workgroups per dimension {}",
            a.index,
            a.name,
            a.backend,
            a.device_type,
            if a.software {
                " (software: used only with --backend gpu or --adapter)"
            } else {
                ""
            },
            if a.driver.is_empty() {
                "unknown"
            } else {
                &a.driver
            },
            if a.f64 { "yes" } else { "no" },
            if a.subgroups { "yes" } else { "no" },
            a.max_storage_buffer_binding_size >> 20,
            a.max_buffer_size >> 20,
            a.max_compute_workgroups_per_dimension
        ))?;
    }
    Ok(exit::SUCCESS)
}
