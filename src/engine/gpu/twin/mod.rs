//! CPU twins of the WGSL kernels, one file per kernel, named after its
//! `.wgsl` file and reading line for line like it: same lane striding,
//! same tree reduction, same slack. They run where no adapter exists, so
//! CI checks the kernels' logic, and GPU tests compare the device against
//! them.
//!
//! | kernel (`shaders/`) | twin |
//! |---|---|
//! | `lanes.wgsl` | [`lanes`]: [`reduce_lanes`], [`RowDot`] |
//! | `common.wgsl` (with `slack.wgsl`) | [`common`]: [`write_slack`] ([`Bound::slack`](crate::engine::certify::Bound::slack) holds the arithmetic) |
//! | `row_dot_dense.wgsl` | [`row_dot_dense`](mod@row_dot_dense) |
//! | `row_dot_dense4.wgsl` | [`row_dot_dense4`](mod@row_dot_dense4) ([`dense_row_dot`] chooses as the host does) |
//! | `row_dot_sparse.wgsl` | [`row_dot_sparse`](mod@row_dot_sparse) |
//! | `margins_dense.wgsl` | [`margins_dense`](mod@margins_dense) |
//! | `margins_sparse.wgsl` | [`margins_sparse`](mod@margins_sparse) |
//! | `walk_common.wgsl` | [`walk_common`] |
//! | `walk_dense.wgsl` | [`walk_dense`] |
//! | `walk_sparse.wgsl` | [`walk_sparse`] |
//!
//! The row-dot twins serve the walk's scan too, as the WGSL row-dot blocks
//! serve both kinds of kernel. [`TwinEngine`] and [`TwinWalkEngine`] are
//! engines built on the twins, for the loop's tests.

pub mod common;
pub mod lanes;
mod margin_engine;
pub mod margins_dense;
pub mod margins_sparse;
pub mod row_dot_dense;
pub mod row_dot_dense4;
pub mod row_dot_sparse;
pub mod walk_common;
pub mod walk_dense;
mod walk_engine;
pub mod walk_sparse;

pub use common::MarginBindings;
pub use common::write_slack;
pub use lanes::{RowDot, reduce_lanes};
pub use margin_engine::TwinEngine;
pub use row_dot_dense::row_dot_dense;
pub use row_dot_dense4::row_dot_dense4;
pub use row_dot_sparse::row_dot_sparse;
pub use walk_common::{
    Bindings, ENTRY_MISTAKE, ENTRY_SPECULATIVE, ENTRY_SUBNORMAL, Entries, STOP_LIMIT, STOP_SAFETY,
    STOP_SUBNORMAL, drift_threshold, walk_bits,
};
pub use walk_dense::{scan_dense, step_dense};
pub use walk_engine::{TwinWalkEngine, entry_stride, to_batch};
pub use walk_sparse::{scan_sparse, step_sparse};

use crate::float::Real;

/// The dense row-dot block the device runs for rows of `x.len()` columns:
/// [`row_dot_dense4()`] where they are read as vectors
/// ([`crate::engine::gpu::shaders::reads_vectors`]), else [`row_dot_dense()`].
pub fn dense_row_dot<F: Real>(lanes: u32, weights: &[F], x: &[F], bias: bool) -> RowDot<F> {
    if crate::engine::gpu::shaders::reads_vectors(x.len()) {
        row_dot_dense4(lanes, weights, x, bias)
    } else {
        row_dot_dense(lanes, weights, x, bias)
    }
}

#[cfg(test)]
mod tests {
    /// Shaders that are not kernels of their own, and what stands for them
    /// on the CPU.
    const NO_TWIN_FILE: [(&str, &str); 5] = [
        ("prelude_f32", "the precision's `real` type: F = f32"),
        ("prelude_f64", "the precision's `real` type: F = f64"),
        ("slack", "its arithmetic is certify::Bound::slack"),
        (
            "x_scalar",
            "how rows are read: the twins read the values themselves",
        ),
        ("x_vec4", "how rows are read as vectors: row_dot_dense4.rs"),
    ];

    #[test]
    fn every_kernel_file_has_a_twin_named_after_it() {
        let root = env!("CARGO_MANIFEST_DIR");
        let twins = std::path::Path::new(root).join("src/engine/gpu/twin");
        let mut missing = Vec::new();
        for entry in std::fs::read_dir(std::path::Path::new(root).join("shaders")).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            if path.extension().is_some_and(|e| e == "wgsl")
                && !NO_TWIN_FILE.iter().any(|(name, _)| *name == stem)
                && !twins.join(format!("{stem}.rs")).exists()
            {
                missing.push(stem);
            }
        }
        assert!(
            missing.is_empty(),
            "shaders without a twin file: {missing:?}"
        );
    }
}
