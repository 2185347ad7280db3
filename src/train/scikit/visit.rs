//! How an epoch's reshuffled order reaches the loop: on the host, the loop
//! visits the rows in that order where they lie; for a device, the rows
//! are copied in that order (an engine reads its rows in their order).
//!
//! The copy is what made the schedule slow on the host: a whole pass of
//! reading and writing the data every epoch, more than the epoch's own
//! walk on a Fashion-MNIST pair (14,000 x 784 float64). Visiting in place
//! gives the same decisions in the same order, so the same bits.
//!
//! Except on large sparse data ([`copy_pays`]): there each short row is a
//! fresh trip to memory, which the walk in place waits for row after row,
//! while the copy asks for many rows at once on every core; and the copy
//! is in file order, where the CPU engine's walks are open to the loop.

use std::borrow::Cow;

use crate::data::Dataset;
use crate::error::Result;
use crate::float::Real;
use crate::train::epochs::EpochRunner;
use crate::train::params::TrainParams;
use crate::train::state::{Observer, Outcome, State};
use crate::train::sweep::chooser::ChooserMemory;

/// Sparse data this large ([`copy_pays`]) is copied in each epoch's order.
const COPY_FROM_BYTES: usize = 64 << 20;

/// Whether copying the rows in each epoch's order pays on the host: sparse
/// rows (a few hundred bytes, each a fresh trip to memory in a shuffled
/// order) too many to stay in the caches ([`COPY_FROM_BYTES`]), where
/// memory has room for a copy for each of the `at_once` perceptrons
/// training at the same time (one-vs-rest classes side by side) and as
/// much again. On a 500,000 x 10^6 matrix of 64 values a row the copy on
/// two cores took under a fifth of the epoch visited in place. Either way
/// the decisions are the same.
fn copy_pays<F: Real>(data: &Dataset<F>, at_once: usize) -> bool {
    if !data.features.is_sparse() {
        return false;
    }
    let bytes = data.features.storage_bytes();
    let needed = (bytes as u64).saturating_mul(at_once as u64 + 1);
    bytes >= copy_from_bytes() && crate::memory::available_bytes().is_none_or(|a| a >= needed)
}

#[cfg(not(test))]
fn copy_from_bytes() -> usize {
    COPY_FROM_BYTES
}

#[cfg(test)]
thread_local! {
    /// [`COPY_FROM_BYTES`], which a test lowers to copy small data.
    static COPY_FROM: std::cell::Cell<usize> = const { std::cell::Cell::new(COPY_FROM_BYTES) };
}

#[cfg(test)]
fn copy_from_bytes() -> usize {
    COPY_FROM.get()
}

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
    /// when `in_place` and copying does not pay ([`copy_pays`], with
    /// `at_once` perceptrons training at the same time), else copied every
    /// epoch; `sample_weight` is the data's, in its order.
    pub(super) fn new(
        data: &'d Dataset<F>,
        skipped: &[bool],
        sample_weight: Option<&[f64]>,
        in_place: bool,
        at_once: usize,
    ) -> Self {
        if !in_place || copy_pays(data, at_once) {
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

    /// One epoch (the `trainer`'s parameters with `max_epochs` the epochs
    /// done plus one) over the data rows `visited`, in that order, from
    /// `state`, the chooser starting from what the epoch before measured
    /// (`memory`).
    pub(super) fn run_epoch(
        &mut self,
        trainer: &EpochRunner,
        visited: &[usize],
        validation: Option<&Dataset<F>>,
        state: State<F>,
        memory: Option<ChooserMemory>,
        observer: &mut dyn Observer<F>,
    ) -> Result<(Outcome<F>, Option<String>, f64)> {
        let params = TrainParams {
            max_epochs: state.mistakes_per_epoch.len() + 1,
            shuffle_every_epoch: None,
            ..(**trainer.params()).clone()
        };
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
                one_more.run_epochs(trained, Some(&order), validation, state, memory, observer)
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
                let out = one_more.run_epochs(&shuffled, None, validation, state, memory, observer);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{self, LoadOptions};
    use crate::engine::backend::Backend;
    use crate::train::early_stop::{EarlyStop, Judge};
    use crate::train::scikit::EveryEpoch;
    use crate::train::state::Silent;
    use crate::train::{Fit, TrainParams, Trainer};

    fn train(data: &Dataset<f64>, params: &TrainParams, copy: bool) -> Fit<f64> {
        COPY_FROM.set(if copy { 0 } else { usize::MAX });
        let trainer = Trainer::new(params.clone().check().unwrap()).with_backend(Backend::Cpu);
        let fit = trainer
            .fit(
                data,
                State::initial(data.cols() + params.bias as usize),
                &mut Silent,
            )
            .unwrap();
        COPY_FROM.set(COPY_FROM_BYTES);
        fit
    }

    #[test]
    fn sparse_rows_copied_in_each_order_train_as_visited_in_place() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/heart_scale.svm");
        let raw = data::load_raw::<f64>(&path, &LoadOptions::default()).unwrap();
        let data = Dataset::from_raw(raw, &path, None).unwrap();
        assert!(data.features.is_sparse());
        // The threshold is what decides, on the host.
        COPY_FROM.set(0);
        assert!(matches!(
            EpochRows::new(&data, &[], None, true, 1),
            EpochRows::Copied { .. }
        ));
        COPY_FROM.set(COPY_FROM_BYTES);
        assert!(matches!(
            EpochRows::new(&data, &[], None, true, 1),
            EpochRows::InPlace { .. }
        ));
        // The walk ahead decides copied rows in file order, or rows in
        // place in the epoch's order (forced here; it needs helpers): with
        // scikit-learn's sparse update and its loss too.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let held = [None, Some((0..data.rows()).step_by(5).collect::<Vec<_>>())];
        for (held_out, random_state) in held.iter().flat_map(|h| [(h, 0), (h, 7)]) {
            for intercept_decay in [None, Some(0.01)] {
                let params = TrainParams {
                    max_epochs: 30,
                    shuffle_every_epoch: Some(EveryEpoch::RandomState(random_state)),
                    early_stop: Some(EarlyStop {
                        judge: Judge::MeanLoss,
                        ..EarlyStop::default()
                    }),
                    held_out: held_out.clone().map(Into::into),
                    intercept_decay,
                    ..TrainParams::default()
                };
                let ahead = TrainParams {
                    passes: crate::train::PassPolicy::Ahead,
                    ..params.clone()
                };
                // The reference: the textbook dot for every row, in place.
                let textbook = TrainParams {
                    passes: crate::train::PassPolicy::Reference,
                    ..params.clone()
                };
                let in_place = train(&data, &textbook, false);
                let bits = |w: &[f64]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                let losses = |f: &Fit<f64>| {
                    let e = f.early_stopping.as_ref().unwrap();
                    e.mean_loss.iter().map(|l| l.to_bits()).collect::<Vec<_>>()
                };
                for copied in [
                    train(&data, &params, true),
                    pool.install(|| train(&data, &ahead, true)),
                    // In place: the walk ahead in the epoch's order.
                    pool.install(|| train(&data, &ahead, false)),
                ] {
                    assert_eq!(bits(&copied.weights), bits(&in_place.weights));
                    assert_eq!(copied.mistakes_per_epoch, in_place.mistakes_per_epoch);
                    assert_eq!(copied.nominal_epochs, in_place.nominal_epochs);
                    assert_eq!(losses(&copied), losses(&in_place));
                    assert!(copied.epochs() > 2, "{:?}", copied.mistakes_per_epoch);
                }
                for copy in [true, false] {
                    let walked = pool.install(|| train(&data, &ahead, copy)).loop_stats;
                    assert!(walked.ahead_kept + walked.ahead_summed > 0, "{walked:?}");
                }
            }
        }
    }
}
