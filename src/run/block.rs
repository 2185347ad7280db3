//! A run on one block of the rows: a process that holds only some of the
//! dataset's rows (one rank of a distributed run) prepares its run as any
//! other, asking a [`Block`] what only the whole dataset can say.

use crate::data::Dataset;
use crate::float::Real;
use crate::train::Placement;

/// What a run on one block of the rows needs to know of the whole dataset.
/// Every process that holds a block calls [`Block::fingerprint`] at the
/// same point of [`Run::prepare_block`](super::Run::prepare_block), so an
/// implementation may talk to the others there.
pub trait Block<F: Real> {
    /// The rows of the whole dataset (the run's description records them).
    fn whole_rows(&self) -> usize;

    /// The whole dataset's fingerprint, `data` being this block's rows in
    /// file order.
    fn fingerprint(&self, data: &Dataset<F>) -> String;

    /// The order to visit this block's `rows` in under the shuffle `seed`
    /// (indices into the block; `None`: as they are), and where they sit
    /// in an epoch of the whole.
    fn order(&self, rows: usize, seed: Option<u64>) -> (Option<Vec<usize>>, Placement);

    /// The ranks and the mixing a mix-mode run's checkpoints record
    /// (`None` for any other run): a checkpoint must be of the same kind.
    fn mix(&self) -> Option<(usize, &str)>;
}
