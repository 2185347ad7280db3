//! Which rows each rank holds: the dataset, one file or several in order,
//! cut into one contiguous block per rank.
//!
//! Every file has a *measure*: its length in bytes on disk. The files'
//! measures laid end to end are cut into K equal spans, rank r taking span
//! r; within a file, a span stands for the rows of the same fraction of the
//! file: for a `.pbin`, rows `rows·a/size .. rows·b/size`; for plain text,
//! the lines that start in bytes `a..b`; for gzip text, lines
//! `lines·a/size .. lines·b/size`. Fractions are taken in exact integer
//! arithmetic, and each cut depends only on where it falls, so the blocks
//! of consecutive ranks meet exactly and together hold every row once, in
//! dataset order. Parsing then scales with the ranks too (except gzip,
//! which each rank must decompress from the start).

/// Rank `rank`'s span of `0..total` when cut into `ranks` equal spans.
pub fn span(total: u64, ranks: usize, rank: usize) -> (u64, u64) {
    let cut = |r: usize| (total as u128 * r as u128 / ranks.max(1) as u128) as u64;
    (cut(rank), cut(rank + 1))
}

/// The part of each file that rank `rank` of `ranks` takes, as a span of
/// the file's own measure (`sizes[f]`): `(file, lo, hi)` for the files it
/// takes anything of, in order.
pub fn pieces(sizes: &[u64], ranks: usize, rank: usize) -> Vec<(usize, u64, u64)> {
    let total: u64 = sizes.iter().sum();
    let (lo, hi) = span(total, ranks, rank);
    let mut out = Vec::new();
    let mut base = 0u64;
    for (f, &size) in sizes.iter().enumerate() {
        let (a, b) = (lo.max(base), hi.min(base + size));
        if a < b {
            out.push((f, a - base, b - base));
        }
        base += size;
    }
    out
}

/// The place `at` of `0..size` stands for in `0..n` (rows or lines).
pub fn scaled(at: u64, size: u64, n: u64) -> u64 {
    if size == 0 {
        return 0;
    }
    (n as u128 * at as u128 / size as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_tile_the_files_in_order() {
        let sizes = [100, 0, 37, 1, 500];
        for k in 1..=7 {
            let mut next = (0usize, 0u64);
            for r in 0..k {
                for (f, lo, hi) in pieces(&sizes, k, r) {
                    assert!(lo < hi && hi <= sizes[f]);
                    // Continues exactly where the last piece ended.
                    if next.0 == f {
                        assert_eq!(lo, next.1);
                    } else {
                        assert_eq!(lo, 0);
                        assert_eq!(next.1, sizes[next.0], "{k} ranks");
                    }
                    next = (f, hi);
                }
            }
            assert_eq!(next, (4, 500));
        }
        assert_eq!(span(10, 3, 0), (0, 3));
        assert_eq!(span(10, 3, 2), (6, 10));
        assert_eq!(scaled(50, 100, 7), 3);
        assert_eq!(scaled(100, 100, 7), 7);
    }
}
