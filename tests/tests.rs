//! The integration tests, one binary: each module is one area of the crate,
//! `common` holds the helpers they share. One binary links the crate and its
//! dependencies (wgpu above all) once instead of once per file, which is most
//! of the suite's build time. Run one area with `cargo test --test tests
//! gpu::`, one test with its full path.

mod common;

mod backends_cli;
mod class_weights;
mod cli;
mod cli_data;
mod cv;
mod early_stop;
mod everyday;
mod golden;
mod gpu;
mod hostile_device;
mod ignore_columns;
mod interrupt;
mod loop_exactness;
mod mpi;
mod multiclass;
mod npy;
mod online;
mod pbin_mmap;
mod plot;
mod properties;
mod reliability;
mod scaling;
mod scikit_schedule;
mod shell;
mod split;
mod variants;
mod whitespace;
mod zero_based;
