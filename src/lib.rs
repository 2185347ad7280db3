//! `perceptron`: Rosenblatt's classic perceptron, trained exactly on the CPU and the GPU.
//!
//! Every backend returns the model of the textbook sequential algorithm bit
//! for bit (see [`reference`]). Fast backends never re-implement the
//! arithmetic: they only *certify* that a row is classified correctly, with a
//! rigorous rounding-error bound ([`certify`]), and leave every uncertain row
//! and every update to the host's reference arithmetic ([`train`]).

pub mod backend;
pub mod bench;
pub mod certify;

#[cfg(feature = "cli")]
pub mod cli;
pub mod cpu;
pub mod data;
pub mod decide;
pub mod distributed;
pub mod engine;
pub mod error;
pub mod float;
// `gen` is a reserved word in edition 2024, hence the raw identifier.
pub mod r#gen;
pub mod gpu;
pub mod memory;
pub mod model;
pub mod online;
pub mod output;
#[cfg(feature = "plot")]
pub mod plot;
pub mod reference;
pub mod text;
pub mod train;

pub use error::{Error, Result};
pub use float::{Precision, Real};
