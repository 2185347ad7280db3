//! The convergence theorem's figures over blocks held by different ranks:
//! each rank tallies its rows ([`crate::train::theory::Tally`]) and the
//! tallies combine exactly (the largest radius and the smallest margin as
//! order-keyed integers, the counts as sums), so every rank gets the
//! single-process figures.

use crate::data::Dataset;
use crate::float::Real;
use crate::train::theory::{self, Tally, Theory};

use super::transport::{Reduce, Transport, f64_key, f64_of_key};

/// Every rank's tally, combined.
pub fn combine(t: &dyn Transport, mine: Tally) -> Tally {
    let mut max = [f64_key(mine.radius)];
    t.all_reduce(Reduce::Max, &mut max);
    let mut min = [f64_key(mine.min_margin)];
    t.all_reduce(Reduce::Min, &mut min);
    let mut sums = [mine.correct as u64, mine.rows as u64];
    t.all_reduce(Reduce::Sum, &mut sums);
    Tally {
        radius: f64_of_key(max[0]),
        min_margin: f64_of_key(min[0]),
        correct: sums[0] as usize,
        rows: sums[1] as usize,
    }
}

/// The figures of weights `w` (`heads` perceptrons, bias last when `bias`)
/// over the whole dataset, on every rank: overall, and per head for
/// one-vs-rest (as [`crate::train::fit`] reports them).
pub fn analyse<F: Real>(
    t: &dyn Transport,
    block: &Dataset<F>,
    w: &[F],
    bias: bool,
    heads: usize,
) -> (Theory, Vec<Theory>) {
    if heads == 1 {
        let tally = combine(t, theory::tally_head(block, w, bias, 0, 1));
        return (tally.theory(w), Vec::new());
    }
    let dim = block.cols() + bias as usize;
    let per_head = (0..heads)
        .map(|h| {
            let wh = &w[h * dim..(h + 1) * dim];
            combine(t, theory::tally_head(block, wh, bias, h, heads)).theory(wh)
        })
        .collect();
    let all = combine(t, theory::tally_ovr(block, w, bias, heads));
    let overall = Theory {
        radius: all.radius,
        margin: None,
        mistake_bound: None,
        correct: all.correct,
        rows: all.rows,
    };
    (overall, per_head)
}
