//! WGSL sources, assembled per precision: prelude + shared code + kernel.
//!
//! WGSL has no generics, so each kernel is written once against the alias
//! `real`, and the prelude of `shaders/prelude_f32.wgsl` or
//! `shaders/prelude_f64.wgsl` defines it.

use crate::float::Precision;

const PRELUDE_F32: &str = include_str!("../../shaders/prelude_f32.wgsl");
const PRELUDE_F64: &str = include_str!("../../shaders/prelude_f64.wgsl");
const COMMON: &str = include_str!("../../shaders/common.wgsl");
const DENSE: &str = include_str!("../../shaders/margins_dense.wgsl");
const SPARSE: &str = include_str!("../../shaders/margins_sparse.wgsl");

/// The margin kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    Dense,
    Sparse,
}

impl Kernel {
    pub const ALL: [Kernel; 2] = [Kernel::Dense, Kernel::Sparse];

    pub fn entry_point(self) -> &'static str {
        match self {
            Kernel::Dense => "margins_dense",
            Kernel::Sparse => "margins_sparse",
        }
    }
}

/// The complete WGSL module for a kernel in a precision.
pub fn source(kernel: Kernel, precision: Precision) -> String {
    let prelude = match precision {
        Precision::F32 => PRELUDE_F32,
        Precision::F64 => PRELUDE_F64,
    };
    let body = match kernel {
        Kernel::Dense => DENSE,
        Kernel::Sparse => SPARSE,
    };
    format!("{prelude}\n{COMMON}\n{body}")
}

/// Threads per row for a row of about `terms` stored entries: enough lanes
/// to keep the loads coalesced, not so many that most idle.
pub fn lanes_for(terms: usize) -> u32 {
    match terms {
        0..=8 => 1,
        9..=32 => 4,
        33..=64 => 8,
        65..=128 => 16,
        _ => 32,
    }
}
