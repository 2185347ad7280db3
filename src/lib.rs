//! `perceptron`: Rosenblatt's classic perceptron, trained exactly on the CPU and the GPU.
//!
//! Every backend returns the model of the textbook sequential algorithm bit
//! for bit (see [`engine::reference`](mod@engine::reference)). Fast backends never re-implement the
//! arithmetic: they only *certify* that a row is classified correctly, with a
//! rigorous rounding-error bound ([`engine::certify`]), and leave every uncertain row
//! and every update to the host's reference arithmetic ([`train`]).
//!
//! The library flow is parameters → checked parameters → trainer → model:
//!
//! ```
//! use perceptron::engine::backend::Backend;
//! use perceptron::data::{self, LoadOptions};
//! use perceptron::model::Model;
//! use perceptron::train::{RunDescription, RunSettings, Silent, TrainParams, Trainer};
//!
//! # fn main() -> perceptron::Result<()> {
//! let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/data/iris_setosa.csv"));
//! let data = data::load::<f64>(path, &LoadOptions::default())?;
//! let params = TrainParams { max_epochs: 100, ..TrainParams::default() }.check()?;
//! let run = RunDescription::new(&params, &data, None, RunSettings::default());
//! let trainer = Trainer::new(params).with_backend(Backend::Cpu);
//! let fit = trainer.fit(&data, trainer.start(&data, None), &mut Silent)?;
//! assert!(fit.converged());
//! assert!(fit.total_mistakes() as f64 <= fit.theory.mistake_bound.unwrap());
//! let model = Model::from_fit(&fit, &run, &data, None)?;
//! assert_eq!(model.class_names(), ["-1", "1"]);
//! # Ok(())
//! # }
//! ```

pub mod bench;

#[cfg(feature = "cli")]
pub mod cli;
pub mod data;
pub mod distributed;
pub mod engine;
pub mod error;
pub mod float;
// `gen` is a reserved word in edition 2024, hence the raw identifier.
pub mod r#gen;
pub mod memory;
pub mod model;
pub mod online;
pub mod output;
#[cfg(feature = "plot")]
pub mod plot;
pub mod run;
pub mod saved;
pub mod text;
pub mod train;

pub use error::{Error, Result};
pub use float::{Precision, Real};
