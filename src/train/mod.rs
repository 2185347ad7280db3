//! Training: checked parameters in, a fit out.
//!
//! [`TrainParams`] says what to train and [`TrainParams::check`] checks it
//! once; a [`Trainer`] picks the engine (and the CPU fallback after a device
//! failure) and runs the one loop (`epoch`) over data in training order.
//! The [`Fit`] it returns holds the weights, the per-epoch mistakes and what
//! the convergence theorem says about the run; [`RunDescription`] describes
//! the run once, for checkpoints, model files and reports.

pub mod checkpoint;
pub mod class_weight;
pub mod cv;
mod description;
pub mod early_stop;
mod epochs;
mod fit;
pub mod folds;
mod params;
pub mod placement;
pub mod scikit;
pub mod shuffle;
pub mod state;
mod sweep;
pub mod theory;
mod trainer;
pub mod variant;

pub use crate::engine::{EngineStats, MarginEngine, ReferenceEngine};
pub use class_weight::ClassWeights;
pub use description::{RunDescription, RunSettings};
pub use early_stop::{EarlyStop, EarlyStopReport, Validation};
pub use fit::{Fit, PocketReport, fit, fit_reference};
pub use params::{CheckedParams, PassPolicy, TrainParams};
pub use placement::{AllRowsHere, OtherRows, Placement, Positions};
pub use state::{Fallback, LoopStats, Observer, Outcome, Silent, State, Stop};
pub use sweep::chooser::{ChooserMemory, EpochModes, ModeTime};
pub use sweep::epoch::{Epoch, Swept, drive};
pub use sweep::stepper::{Advanced, Stepper};
pub use theory::Theory;
pub use trainer::Trainer;
pub use variant::{Margin, Pocket, Variant};
