//! Where the rows a loop holds sit in the epoch of the whole run, and the
//! peers that hold the rest: what lets one loop walk part of an epoch (one
//! rank of a distributed run) with the whole run's semantics.

use crate::error::Result;

/// Where the rows a loop holds sit in the epoch of the whole run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Row visits in one epoch of the whole run (every part's rows).
    pub epoch_rows: usize,
    /// Each held row's 0-based visit position in the epoch.
    pub positions: Positions,
}

/// The visit positions of the rows held, in increasing order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Positions {
    /// Row i is position `offset + i` (a contiguous block, or all rows).
    Offset(usize),
    /// Row i is position `list[i]`; strictly increasing.
    Listed(Vec<usize>),
}

impl Placement {
    /// All `rows` rows of the epoch, row i at position i.
    pub fn whole(rows: usize) -> Self {
        Placement {
            epoch_rows: rows,
            positions: Positions::Offset(0),
        }
    }

    /// The visit position of held row `i` (`i` may be the number of rows
    /// held: then the position after the last one).
    #[inline]
    pub fn position(&self, i: usize) -> usize {
        match &self.positions {
            Positions::Offset(o) => o + i,
            Positions::Listed(list) => match list.get(i) {
                Some(&p) => p,
                None => list.last().map_or(0, |&p| p + 1 + (i - list.len())),
            },
        }
    }

    /// The first held row whose position is `position` or later (the
    /// number of rows held, `held`, if none).
    pub fn first_at_or_after(&self, position: usize, held: usize) -> usize {
        match &self.positions {
            Positions::Offset(o) => position.saturating_sub(*o).min(held),
            Positions::Listed(list) => list.partition_point(|&p| p < position),
        }
    }

    /// How many rows from held row `i` on hold consecutive positions (a
    /// stretch that one process can walk alone), up to row `held`.
    pub fn consecutive_from(&self, i: usize, held: usize) -> usize {
        match &self.positions {
            Positions::Offset(_) => held.saturating_sub(i),
            Positions::Listed(list) => {
                let mut n = 0;
                while i + n < held && list[i + n] == list[i] + n {
                    n += 1;
                }
                n
            }
        }
    }
}

/// Quantities over the whole training set, for a loop that holds only part
/// of it.
pub trait OtherRows<F> {
    /// The training mistakes (y·s <= 0) of `weights` over every row of the
    /// training set, given `held`, those over the rows this loop holds.
    fn total_mistakes(&mut self, weights: &[F], held: u64) -> Result<u64>;
}

/// The peers of a loop that holds every row: there are none.
pub struct AllRowsHere;

impl<F> OtherRows<F> for AllRowsHere {
    fn total_mistakes(&mut self, _weights: &[F], held: u64) -> Result<u64> {
        Ok(held)
    }
}
