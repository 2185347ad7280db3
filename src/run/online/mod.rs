//! One online run, defined once (`perceptron online`): a stream through
//! the [`Learner`](crate::online::Learner), predict then learn per example,
//! so that a front end only translates its arguments and renders the
//! results.
//!
//! - `start.rs`: the run's [`OnlineParams`], checked, and where it starts
//!   ([`OnlineStart`]: w~ = 0 or an `--init` model's weights and labels);
//! - `labels.rs`: how a stream's labels map to ±1 ([`LabelRule`]);
//! - `run.rs`: the run ([`OnlineRun`]): a
//!   [`RowStream`](crate::data::stream::RowStream) through the learner,
//!   with the snapshots and the stop request, then the second pass for the
//!   convergence theorem's bound; the front end's [`OnlineObserver`] says
//!   where the outputs go;
//! - `summary.rs`: the model the run made and its summary
//!   ([`OnlineSummary`], the one record front ends print as JSON);
//! - `text.rs`: that summary as text ([`OnlineSummary::render`]).
//!
//! It sits in the run layer, beside [`Run`](crate::run::Run): it makes
//! models, which the learner (training layer) does not know.

mod labels;
mod run;
mod start;
mod summary;
mod text;

pub use labels::LabelRule;
pub use run::{OnlineObserver, OnlineRun};
pub use start::{OnlineParams, OnlineStart};
pub use summary::OnlineSummary;

#[cfg(test)]
mod tests;
