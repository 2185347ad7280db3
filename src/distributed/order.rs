//! The visit order of one rank's block: file order, or the rows of the
//! single-process `--shuffle` permutation that fall in the block, at the
//! positions the permutation gives them.

use crate::train::shuffle::permutation;
use crate::train::{Placement, Positions};

/// For the block of rows `lo..hi` of `rows`: the order to visit its rows in
/// (indices into the block; `None`: as they are) and where they sit in the
/// epoch. With a seed, the whole permutation is made (8 bytes per row of
/// the dataset, for a moment) and only the block's share kept.
pub fn block_order(
    rows: usize,
    lo: usize,
    hi: usize,
    seed: Option<u64>,
) -> (Option<Vec<usize>>, Placement) {
    let Some(seed) = seed else {
        return (
            None,
            Placement {
                epoch_rows: rows,
                positions: Positions::Offset(lo),
            },
        );
    };
    let mut order = Vec::with_capacity(hi - lo);
    let mut positions = Vec::with_capacity(hi - lo);
    for (p, &row) in permutation(rows, seed).iter().enumerate() {
        if (lo..hi).contains(&row) {
            positions.push(p);
            order.push(row - lo);
        }
    }
    (
        Some(order),
        Placement {
            epoch_rows: rows,
            positions: Positions::Listed(positions),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_share_the_permutation() {
        let (rows, seed) = (50, 9);
        let perm = permutation(rows, seed);
        let mut seen = vec![usize::MAX; rows];
        for (lo, hi) in [(0, 17), (17, 30), (30, 50)] {
            let (order, part) = block_order(rows, lo, hi, Some(seed));
            let order = order.unwrap();
            for (i, &r) in order.iter().enumerate() {
                let p = part.position(i);
                assert_eq!(perm[p], lo + r);
                seen[p] = lo + r;
            }
        }
        assert_eq!(seen, perm);
    }
}
