//! Features that a caller holds in memory as arrays (a NumPy matrix, or a
//! SciPy CSR matrix's three arrays), often lent without a copy (see
//! [`Storage::lent`](super::Storage::lent)): the rules a file's reader
//! checks, said the way the `.pbin` reader says them.

use crate::float::Real;

use super::binary::{first_non_finite, locate, non_finite_message};
use super::matrix::Features;

/// Refuses the first value that is NaN or infinite, naming its 1-based row
/// and feature: `row 3, feature 2: value NaN is not finite; values must be
/// finite numbers`.
pub fn check_finite<F: Real>(features: &Features<F>) -> Result<(), String> {
    let values = match features {
        Features::Dense(m) => &m.values,
        Features::Sparse(m) => &m.values,
    };
    match first_non_finite(values) {
        None => Ok(()),
        Some(e) => {
            let (row, feature) = locate(features, e);
            Err(non_finite_message(row, feature, values[e].to_f64()))
        }
    }
}

/// Checks a CSR matrix's structure, in SciPy's names: `indptr` starts at 0,
/// never decreases and ends at the number of stored values (`nnz`); the
/// column indices of each row strictly increase (sorted, no duplicates) and
/// stay below `cols`. Rows are counted from 1 in messages, as everywhere.
pub fn check_csr(indptr: &[usize], indices: &[u32], nnz: usize, cols: usize) -> Result<(), String> {
    let Some(&first) = indptr.first() else {
        return Err("indptr is empty; it needs one entry per row plus one".into());
    };
    if first != 0 {
        return Err(format!("indptr[0] is {first}, not 0"));
    }
    if let Some(i) = indptr.windows(2).position(|w| w[0] > w[1]) {
        return Err(format!(
            "row {}: indptr decreases from {} to {}; it must not decrease",
            i + 1,
            indptr[i],
            indptr[i + 1]
        ));
    }
    let last = indptr[indptr.len() - 1];
    if last != nnz || indices.len() != nnz {
        return Err(format!(
            "indptr ends at {last}, with {} indices and {nnz} values; all three must agree",
            indices.len()
        ));
    }
    for (i, w) in indptr.windows(2).enumerate() {
        let row = &indices[w[0]..w[1]];
        if let Some(k) = row.windows(2).position(|p| p[0] >= p[1]) {
            return Err(format!(
                "row {}: column index {} follows {}; indices must strictly increase within \
                 a row (sum_duplicates() sorts them and merges duplicates)",
                i + 1,
                row[k + 1],
                row[k]
            ));
        }
        if let Some(&top) = row.last()
            && top as usize >= cols
        {
            return Err(format!(
                "row {}: column index {top} (0-based) is not below the {cols} columns",
                i + 1
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, DenseMatrix};

    #[test]
    fn the_first_non_finite_value_is_named_by_row_and_feature() {
        let dense = Features::Dense(DenseMatrix {
            rows: 2,
            cols: 3,
            values: vec![1.0f64, 2.0, 3.0, 4.0, f64::NAN, f64::INFINITY].into(),
        });
        assert_eq!(
            check_finite(&dense).unwrap_err(),
            "row 2, feature 2: value NaN is not finite; values must be finite numbers"
        );
        let sparse = Features::Sparse(CsrMatrix {
            cols: 9,
            row_ptr: vec![0, 1, 2].into(),
            indices: vec![4, 7].into(),
            values: vec![1.0f32, f32::NEG_INFINITY].into(),
        });
        assert_eq!(
            check_finite(&sparse).unwrap_err(),
            "row 2, feature 8: value -inf is not finite; values must be finite numbers"
        );
        assert_eq!(check_finite(&Features::<f32>::empty()), Ok(()));
    }

    #[test]
    fn every_csr_rule_is_checked_and_named() {
        assert_eq!(check_csr(&[0, 2, 3], &[0, 4, 1], 3, 5), Ok(()));
        let cases: [(&[usize], &[u32], usize, &str); 6] = [
            (&[], &[], 0, "indptr is empty"),
            (&[1, 2], &[0], 1, "indptr[0] is 1, not 0"),
            (
                &[0, 2, 1],
                &[0, 1],
                2,
                "row 2: indptr decreases from 2 to 1",
            ),
            (
                &[0, 2],
                &[0, 1],
                3,
                "indptr ends at 2, with 2 indices and 3 values",
            ),
            (&[0, 2], &[3, 3], 2, "row 1: column index 3 follows 3"),
            (
                &[0, 1],
                &[5],
                1,
                "row 1: column index 5 (0-based) is not below the 5 columns",
            ),
        ];
        for (indptr, indices, nnz, start) in cases {
            let e = check_csr(indptr, indices, nnz, 5).unwrap_err();
            assert!(e.starts_with(start), "{e}");
        }
    }
}
