//! Stratified, seeded partitions of a dataset's rows: a held-out part
//! (`split --stratify`, `train --validation-fraction`), k folds
//! (`perceptron cv`), and the test part of `perceptron split`
//! ([`test_rows`]). All start from the permutation of `train --shuffle
//! --seed S` ([`crate::train::shuffle::permutation`]: SplitMix64 and
//! Fisher-Yates), so they are the same on every machine and in every
//! version.
//!
//! A row's *stratum* is its label value (its class id), so each part has
//! about the data's share of every label.
//!
//! **Held-out part** of fraction f of n rows: t = round(f·n) rows in all
//! (f64, halves away from zero). Class c with n_c rows gets floor(f·n_c)
//! of them, and the t - Σ floor(f·n_c) left over go one each to the
//! classes with the largest fractional parts f·n_c - floor(f·n_c) (ties to
//! the class seen first in the file). Class c's held-out rows are its first
//! rows in the permutation's order.
//!
//! **k folds**: the rows ordered by class (in order of first appearance),
//! and within a class in the permutation's order; the j-th row of that
//! order (from 0) goes to fold j mod k. Fold sizes differ by at most one,
//! and so do a class's rows in any two folds.

use crate::data::split::SplitParams;
use crate::data::{Dataset, FactsCache};
use crate::float::Real;
use crate::train::shuffle::permutation;

/// Each row's stratum (class id), and the number of strata: the class ids
/// when the data has them, else the -1/+1 labels.
pub fn strata<F: Real>(data: &Dataset<F>) -> (Vec<u32>, usize) {
    if data.class_ids.len() == data.rows() && !data.classes.is_empty() {
        (data.class_ids.clone(), data.classes.len())
    } else {
        (data.labels.iter().map(|&y| (y > 0) as u32).collect(), 2)
    }
}

/// The first class of `data` that holding out the rows `held` marks
/// leaves without a row to train on, and its rows: any class when
/// `each_class` (one-vs-rest, where each class is a perceptron's +1),
/// else the -1 or the +1 label. A small class (a single row) can be held
/// out whole by a large enough fraction.
pub fn class_held_whole<F: Real>(
    data: &Dataset<F>,
    held: &[bool],
    each_class: bool,
) -> Option<(String, usize)> {
    let by_class = each_class && data.class_ids.len() == data.rows() && !data.classes.is_empty();
    let (strata, names): (Vec<u32>, Vec<&str>) = match by_class {
        true => (
            data.class_ids.clone(),
            data.classes.iter().map(|c| c.text.as_str()).collect(),
        ),
        false => (
            data.labels.iter().map(|&y| (y > 0) as u32).collect(),
            vec![data.label_map.text_of(-1), data.label_map.text_of(1)],
        ),
    };
    let (mut rows, mut kept) = (vec![0usize; names.len()], vec![0usize; names.len()]);
    for (&s, &out) in strata.iter().zip(held) {
        rows[s as usize] += 1;
        kept[s as usize] += usize::from(!out);
    }
    (0..names.len())
        .find(|&c| rows[c] > 0 && kept[c] == 0)
        .map(|c| (names[c].to_owned(), rows[c]))
}

/// Which of `strata.len()` rows are held out (true), for a fraction
/// `fraction` in (0, 1) and `seed`; see the module documentation.
pub fn holdout(strata: &[u32], classes: usize, fraction: f64, seed: u64) -> Vec<bool> {
    let n = strata.len();
    let mut count = vec![0usize; classes];
    for &c in strata {
        count[c as usize] += 1;
    }
    let total = (n as f64 * fraction).round() as usize;
    let quota: Vec<f64> = count.iter().map(|&c| c as f64 * fraction).collect();
    let mut take: Vec<usize> = quota.iter().map(|q| q.floor() as usize).collect();
    let mut left = total.saturating_sub(take.iter().sum());
    let mut by_remainder: Vec<usize> = (0..classes).collect();
    // Largest fractional part first; the sort is stable, so ties keep the
    // class order.
    by_remainder.sort_by(|&a, &b| {
        let (ra, rb) = (quota[a] - quota[a].floor(), quota[b] - quota[b].floor());
        rb.total_cmp(&ra)
    });
    for c in by_remainder {
        if left == 0 {
            break;
        }
        if take[c] < count[c] {
            take[c] += 1;
            left -= 1;
        }
    }
    let mut held = vec![false; n];
    for i in permutation(n, seed) {
        let c = strata[i] as usize;
        if take[c] > 0 {
            take[c] -= 1;
            held[i] = true;
        }
    }
    held
}

/// Which of `rows` rows are the test part's (true), `tests` of them
/// ([`SplitParams::test_count`]): with `stratify`, each class's share of a
/// held-out part ([`holdout`], by each row's class id in `class_ids`, of
/// `classes` classes); else the first `tests` rows of the seeded
/// permutation.
pub fn test_rows(
    rows: usize,
    class_ids: &[u32],
    classes: usize,
    params: &SplitParams,
    tests: usize,
) -> Vec<bool> {
    if params.stratify {
        return holdout(class_ids, classes, params.test_fraction, params.seed);
    }
    let mut is_test = vec![false; rows];
    for &i in &permutation(rows, params.seed)[..tests] {
        is_test[i] = true;
    }
    is_test
}

/// Each row's fold in `0..k`; see the module documentation.
pub fn folds(strata: &[u32], classes: usize, k: usize, seed: u64) -> Vec<u32> {
    let n = strata.len();
    let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); classes];
    for i in permutation(n, seed) {
        by_class[strata[i] as usize].push(i);
    }
    let mut fold = vec![0u32; n];
    for (j, i) in by_class.into_iter().flatten().enumerate() {
        fold[i] = (j % k.max(1)) as u32;
    }
    fold
}

/// The rows `rows` of `data` (in the order given), with each class's row
/// count recounted (classes keep their order and ids, also with no rows).
pub fn subset<F: Real>(data: &Dataset<F>, rows: &[usize]) -> Dataset<F> {
    let mut part = data.permuted(rows);
    if part.class_ids.len() == rows.len() {
        for class in &mut part.classes {
            class.count = 0;
        }
        for &c in &part.class_ids {
            if let Some(class) = part.classes.get_mut(c as usize) {
                class.count += 1;
            }
        }
    }
    part.facts = FactsCache::default();
    part
}

/// `data` split into the rows kept and the rows held out (`held[i]`), each
/// in file order.
pub fn split<F: Real>(data: &Dataset<F>, held: &[bool]) -> (Dataset<F>, Dataset<F>) {
    let kept: Vec<usize> = (0..data.rows()).filter(|&i| !held[i]).collect();
    let out: Vec<usize> = (0..data.rows()).filter(|&i| held[i]).collect();
    (subset(data, &kept), subset(data, &out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holdout_takes_each_class_its_share() {
        // 10 of class 0, 5 of class 1, 3 of class 2: f = 0.25 -> t = round(4.5)
        // = 5 (halves away from zero); quotas 2.5, 1.25, 0.75, floors 2, 1, 0,
        // and the two left over go to class 2 (0.75) and class 0 (0.5).
        let strata: Vec<u32> = [vec![0; 10], vec![1; 5], vec![2; 3]].concat();
        let held = holdout(&strata, 3, 0.25, 7);
        let per = |c: u32| (0..18).filter(|&i| held[i] && strata[i] == c).count();
        assert_eq!((per(0), per(1), per(2)), (3, 1, 1));
        assert_eq!(held.iter().filter(|&&h| h).count(), 5);
        assert_eq!(held, holdout(&strata, 3, 0.25, 7), "seeded");
        assert_ne!(held, holdout(&strata, 3, 0.25, 8));
    }

    #[test]
    fn the_held_out_rows_are_the_first_of_the_permutation() {
        let strata = vec![0u32; 10];
        let held = holdout(&strata, 1, 0.3, 42);
        let order = permutation(10, 42);
        let want: Vec<usize> = order[..3].to_vec();
        for (i, &h) in held.iter().enumerate() {
            assert_eq!(h, want.contains(&i), "row {i}");
        }
    }

    #[test]
    fn folds_are_balanced_overall_and_per_class() {
        let strata: Vec<u32> = (0..103).map(|i| (i % 7 == 0) as u32).collect();
        for k in [2, 5, 10] {
            let f = folds(&strata, 2, k, 3);
            for c in 0..2u32 {
                let counts: Vec<usize> = (0..k as u32)
                    .map(|j| (0..103).filter(|&i| f[i] == j && strata[i] == c).count())
                    .collect();
                let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
                assert!(hi - lo <= 1, "k = {k}, class {c}: {counts:?}");
            }
            let sizes: Vec<usize> = (0..k as u32)
                .map(|j| f.iter().filter(|&&x| x == j).count())
                .collect();
            assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        }
        assert_eq!(folds(&strata, 2, 5, 3), folds(&strata, 2, 5, 3));
    }

    #[test]
    fn a_split_tests_the_first_rows_of_the_permutation_or_each_class_share() {
        let params = SplitParams {
            test_fraction: 0.3,
            seed: 42,
            stratify: false,
        };
        let class_ids = vec![0u32; 10];
        let is_test = test_rows(10, &class_ids, 1, &params, 3);
        let order = permutation(10, 42);
        for (i, &t) in is_test.iter().enumerate() {
            assert_eq!(t, order[..3].contains(&i), "row {i}");
        }
        let strata: Vec<u32> = [vec![0; 10], vec![1; 5], vec![2; 3]].concat();
        let stratified = SplitParams {
            test_fraction: 0.25,
            seed: 7,
            stratify: true,
        };
        assert_eq!(
            test_rows(18, &strata, 3, &stratified, 5),
            holdout(&strata, 3, 0.25, 7)
        );
    }
}
