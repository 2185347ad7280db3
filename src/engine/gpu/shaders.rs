//! The WGSL modules the kernels run, as build.rs assembles them from
//! `shaders/` (and, with the `gpu` feature, validates them with naga, so a
//! broken kernel fails the build, not a run): per precision, the prelude
//! `shaders/prelude_f32.wgsl` or `shaders/prelude_f64.wgsl`, which defines
//! the alias `real` (WGSL has no generics), then the module's parts, listed
//! in build.rs (`MODULES`).

use crate::float::Precision;

/// One assembled module in both precisions, and its entry points.
pub struct WgslModule {
    pub f32: &'static str,
    pub f64: &'static str,
    pub entry_points: &'static [&'static str],
}

// MARGINS_DENSE, MARGINS_DENSE4, MARGINS_SPARSE, WALK_DENSE, WALK_DENSE4,
// WALK_SPARSE.
include!(concat!(env!("OUT_DIR"), "/wgsl_modules.rs"));

/// The WGSL modules: margin passes, and the walk (two entry points each);
/// dense rows read one value at a time, or four (`*4`, see
/// [`reads_vectors`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    Dense,
    Dense4,
    Sparse,
    WalkDense,
    WalkDense4,
    WalkSparse,
}

impl Kernel {
    pub const ALL: [Kernel; 6] = [
        Kernel::Dense,
        Kernel::Dense4,
        Kernel::Sparse,
        Kernel::WalkDense,
        Kernel::WalkDense4,
        Kernel::WalkSparse,
    ];

    /// The margin pass for dense rows of `cols` columns.
    pub fn dense(cols: usize) -> Kernel {
        if reads_vectors(cols) {
            Kernel::Dense4
        } else {
            Kernel::Dense
        }
    }

    /// The walk for dense rows of `cols` columns.
    pub fn walk_dense(cols: usize) -> Kernel {
        if reads_vectors(cols) {
            Kernel::WalkDense4
        } else {
            Kernel::WalkDense
        }
    }

    fn module(self) -> &'static WgslModule {
        match self {
            Kernel::Dense => &MARGINS_DENSE,
            Kernel::Dense4 => &MARGINS_DENSE4,
            Kernel::Sparse => &MARGINS_SPARSE,
            Kernel::WalkDense => &WALK_DENSE,
            Kernel::WalkDense4 => &WALK_DENSE4,
            Kernel::WalkSparse => &WALK_SPARSE,
        }
    }

    /// The module's entry points (build.rs checks the module has exactly
    /// these).
    pub fn entry_points(self) -> &'static [&'static str] {
        self.module().entry_points
    }

    /// The margin kernels' one entry point.
    pub fn entry_point(self) -> &'static str {
        self.entry_points()[0]
    }
}

/// The complete WGSL module for a kernel in a precision.
pub fn source(kernel: Kernel, precision: Precision) -> &'static str {
    let module = kernel.module();
    match precision {
        Precision::F32 => module.f32,
        Precision::F64 => module.f64,
    }
}

/// Whether dense rows of `cols` columns are read as vectors of four: when
/// every row starts on one (a multiple of 4 columns), and has one.
pub fn reads_vectors(cols: usize) -> bool {
    cols >= 4 && cols.is_multiple_of(4)
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
