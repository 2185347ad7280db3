//! How an epoch's reshuffled order reaches the loop: on the host, the loop
//! visits the rows in that order where they lie; for a device, the rows
//! are copied in that order (an engine reads its rows in their order).
//!
//! The copy is what made the schedule slow on the host: a whole pass of
//! reading and writing the data every epoch, more than the epoch's own
//! walk on a Fashion-MNIST pair (14,000 x 784 float64). Visiting in place
//! gives the same decisions in the same order, so the same bits.

use std::borrow::Cow;

use crate::data::Dataset;
use crate::error::Result;
use crate::float::Real;
use crate::train::epochs::EpochRunner;
use crate::train::params::TrainParams;
use crate::train::state::{Observer, Outcome, State};

/// The rows one perceptron is trained on, and how each epoch visits them.
pub(super) enum EpochRows<'d, F: Real> {
    /// The loop visits the rows trained on in each epoch's order.
    InPlace {
        /// The rows trained on: the data, or its rows not held out (copied
        /// once, in the data's order).
        trained: Cow<'d, Dataset<F>>,
        /// Each data row's index among the rows trained on (with rows
        /// held out; `usize::MAX` for those).
        rank: Option<Vec<usize>>,
        /// Their `sample_weight`, in `trained`'s order.
        weights: Option<std::sync::Arc<[f64]>>,
    },
    /// Each epoch runs on a copy of its rows in its order (kept to reuse
    /// its buffers).
    Copied {
        data: &'d Dataset<F>,
        last: Option<Dataset<F>>,
    },
}

impl<'d, F: Real> EpochRows<'d, F> {
    /// The rows of `data` not `skipped` (all when empty), visited in place
    /// when `in_place`, else copied every epoch; `sample_weight` is the
    /// data's, in its order.
    pub(super) fn new(
        data: &'d Dataset<F>,
        skipped: &[bool],
        sample_weight: Option<&[f64]>,
        in_place: bool,
    ) -> Self {
        if !in_place {
            return EpochRows::Copied { data, last: None };
        }
        if skipped.is_empty() {
            return EpochRows::InPlace {
                trained: Cow::Borrowed(data),
                rank: None,
                weights: sample_weight.map(Into::into),
            };
        }
        let kept = super::kept(skipped);
        let mut rank = vec![usize::MAX; data.rows()];
        for (k, &r) in kept.iter().enumerate() {
            rank[r] = k;
        }
        EpochRows::InPlace {
            trained: Cow::Owned(data.permuted(&kept)),
            rank: Some(rank),
            weights: sample_weight.map(|w| kept.iter().map(|&i| w[i]).collect()),
        }
    }

    /// One epoch (`params` with `max_epochs` the epochs done plus one) over
    /// the data rows `visited`, in that order, from `state`.
    pub(super) fn run_epoch(
        &mut self,
        trainer: &EpochRunner,
        params: TrainParams,
        visited: &[usize],
        validation: Option<&Dataset<F>>,
        state: State<F>,
        observer: &mut dyn Observer<F>,
    ) -> Result<(Outcome<F>, Option<String>, f64)> {
        match self {
            EpochRows::InPlace {
                trained,
                rank,
                weights,
            } => {
                let order: Cow<[usize]> = match rank {
                    None => Cow::Borrowed(visited),
                    Some(rank) => Cow::Owned(visited.iter().map(|&i| rank[i]).collect()),
                };
                let one_more = trainer.with_params(TrainParams {
                    sample_weight: weights.clone(),
                    ..params
                })?;
                one_more.run_epochs(trained, Some(&order), validation, state, observer)
            }
            EpochRows::Copied { data, last } => {
                let shuffled = data.permuted_into(visited, last.take());
                let one_more = trainer.with_params(TrainParams {
                    sample_weight: params
                        .sample_weight
                        .as_ref()
                        .map(|w| visited.iter().map(|&i| w[i]).collect()),
                    ..params
                })?;
                let out = one_more.run_epochs(&shuffled, None, validation, state, observer);
                *last = Some(shuffled);
                out
            }
        }
    }

    /// The rows trained on (for the theorem's figures): `data` itself
    /// when no row is held out.
    pub(super) fn trained(&self, skipped: &[bool]) -> &Dataset<F> {
        match self {
            EpochRows::InPlace { trained, .. } => trained,
            EpochRows::Copied { data, .. } if skipped.is_empty() => data,
            EpochRows::Copied { data, last } => last.as_ref().unwrap_or(data),
        }
    }
}
