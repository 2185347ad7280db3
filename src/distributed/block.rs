//! A rank's block of the rows, as a run sees it ([`crate::run::Block`]):
//! the whole dataset's rows, fingerprint and visit order, agreed with the
//! other ranks.

use crate::data::Dataset;
use crate::float::Real;
use crate::run::Block;
use crate::train::Placement;

use super::Mixing;
use super::fingerprint::fingerprint;
use super::load::Whole;
use super::order::block_order;
use super::transport::Transport;

/// This rank's block of `whole`, read by [`super::load::load`].
pub struct RankBlock<'a> {
    pub t: &'a dyn Transport,
    pub whole: &'a Whole,
    /// One-vs-rest training (the fingerprint covers the classes).
    pub multiclass: bool,
    /// The mixing of a mix-mode run.
    pub mixing: Option<Mixing>,
}

impl<F: Real> Block<F> for RankBlock<'_> {
    fn whole_rows(&self) -> usize {
        self.whole.rows
    }

    fn fingerprint(&self, data: &Dataset<F>) -> String {
        fingerprint(self.t, data, self.whole, self.multiclass)
    }

    fn order(&self, rows: usize, seed: Option<u64>) -> (Option<Vec<usize>>, Placement) {
        let lo = self.whole.first_row(self.t.rank());
        block_order(self.whole.rows, lo, lo + rows, seed)
    }

    fn mix(&self) -> Option<(usize, &str)> {
        self.mixing.map(|m| (self.t.size(), m.name()))
    }
}
