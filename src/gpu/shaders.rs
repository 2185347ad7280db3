//! WGSL sources, assembled per precision: prelude + shared code + kernel.
//!
//! WGSL has no generics, so each kernel is written once against the alias
//! `real`, and the prelude of `shaders/prelude_f32.wgsl` or
//! `shaders/prelude_f64.wgsl` defines it.

use crate::float::Precision;

const PRELUDE_F32: &str = include_str!("../../shaders/prelude_f32.wgsl");
const PRELUDE_F64: &str = include_str!("../../shaders/prelude_f64.wgsl");
const LANES: &str = include_str!("../../shaders/lanes.wgsl");
const COMMON: &str = include_str!("../../shaders/common.wgsl");
const DENSE: &str = include_str!("../../shaders/margins_dense.wgsl");
const SPARSE: &str = include_str!("../../shaders/margins_sparse.wgsl");
const WALK_COMMON: &str = include_str!("../../shaders/walk_common.wgsl");
const WALK_DENSE: &str = include_str!("../../shaders/walk_dense.wgsl");
const WALK_SPARSE: &str = include_str!("../../shaders/walk_sparse.wgsl");

/// The WGSL modules: margin passes, and the walk (two entry points each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    Dense,
    Sparse,
    WalkDense,
    WalkSparse,
}

impl Kernel {
    pub const ALL: [Kernel; 4] = [
        Kernel::Dense,
        Kernel::Sparse,
        Kernel::WalkDense,
        Kernel::WalkSparse,
    ];

    /// The module's entry points.
    pub fn entry_points(self) -> &'static [&'static str] {
        match self {
            Kernel::Dense => &["margins_dense"],
            Kernel::Sparse => &["margins_sparse"],
            Kernel::WalkDense => &["walk_scan_dense", "walk_step_dense"],
            Kernel::WalkSparse => &["walk_scan_sparse", "walk_step_sparse"],
        }
    }

    /// The margin kernels' one entry point.
    pub fn entry_point(self) -> &'static str {
        self.entry_points()[0]
    }
}

/// The complete WGSL module for a kernel in a precision.
pub fn source(kernel: Kernel, precision: Precision) -> String {
    let prelude = match precision {
        Precision::F32 => PRELUDE_F32,
        Precision::F64 => PRELUDE_F64,
    };
    let (shared, body) = match kernel {
        Kernel::Dense => (COMMON, DENSE),
        Kernel::Sparse => (COMMON, SPARSE),
        Kernel::WalkDense => (WALK_COMMON, WALK_DENSE),
        Kernel::WalkSparse => (WALK_COMMON, WALK_SPARSE),
    };
    format!("{prelude}\n{LANES}\n{shared}\n{body}")
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
