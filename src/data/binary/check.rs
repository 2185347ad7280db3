//! The rules a `.pbin` file's sections must follow beyond their sizes: CSR
//! structure, the label table, finite values.

use crate::data::matrix::Features;
use crate::float::Real;

use super::MAX_LABEL_BYTES;

/// 1-based row and feature of value number `e` (0-based), for messages.
pub(crate) fn locate<F>(features: &Features<F>, e: usize) -> (usize, usize) {
    match features {
        Features::Dense(m) => (e / m.cols.max(1) + 1, e % m.cols.max(1) + 1),
        Features::Sparse(m) => {
            let row = m.row_ptr.partition_point(|&p| p <= e).saturating_sub(1);
            (row + 1, m.indices[e] as usize + 1)
        }
    }
}

/// Index of the first non-finite value, scanning in vectorisable blocks,
/// large arrays in parallel (for a mapped file, this scan is also what
/// brings its pages in).
pub(crate) fn first_non_finite<F: Real>(values: &[F]) -> Option<usize> {
    use rayon::prelude::*;
    const BLOCK: usize = 4096;
    let bad = |chunk: &[F]| !chunk.iter().fold(true, |ok, v| ok & v.is_finite());
    let b = if values.len() >= 256 * BLOCK && rayon::current_num_threads() > 1 {
        values.par_chunks(BLOCK).position_first(bad)
    } else {
        values.chunks(BLOCK).position(bad)
    }?;
    let k = values[b * BLOCK..]
        .iter()
        .position(|v| !v.is_finite())
        .unwrap_or(0);
    Some(b * BLOCK + k)
}

/// Checks the CSR structure; the message names the first broken rule.
pub(crate) fn check_csr(
    row_ptr: &[usize],
    indices: &[u32],
    cols: u64,
    nnz: u64,
) -> std::result::Result<(), String> {
    let last = row_ptr[row_ptr.len() - 1];
    check_csr_part(row_ptr, 0, last, nnz)?;
    check_csr_rows(row_ptr, indices, cols, 0)
}

/// Checks the row pointers of the rows from `lo` on (entries `lo..` of the
/// file's, at least one), `last` being the file's final entry: they start
/// at 0 (when `lo` is 0), never decrease, and the last equals nnz. Rows are
/// counted from the file's first in messages.
pub(crate) fn check_csr_part(
    row_ptr: &[usize],
    lo: u64,
    last: usize,
    nnz: u64,
) -> std::result::Result<(), String> {
    if lo == 0 && row_ptr[0] != 0 {
        return Err(format!("row_ptr[0] is {}, not 0", row_ptr[0]));
    }
    if let Some(i) = row_ptr.windows(2).position(|w| w[0] > w[1]) {
        return Err(format!(
            "row {}: row_ptr decreases from {} to {}; it must not decrease",
            lo + i as u64 + 1,
            row_ptr[i],
            row_ptr[i + 1]
        ));
    }
    if last as u64 != nnz {
        return Err(format!(
            "row_ptr ends at {last}, but nnz is {nnz}; the last entry must equal nnz"
        ));
    }
    if let Some(&p) = row_ptr.iter().find(|&&p| p as u64 > nnz) {
        // Only where the pointers decrease after these rows.
        return Err(format!("row_ptr holds {p}, beyond nnz = {nnz}"));
    }
    Ok(())
}

/// Checks that each row's stored indices strictly increase and stay below
/// `cols`; `row_ptr` starts at the first of `indices`, rows are counted
/// from row `lo` of the file.
pub(crate) fn check_csr_rows(
    row_ptr: &[usize],
    indices: &[u32],
    cols: u64,
    lo: u64,
) -> std::result::Result<(), String> {
    let base = row_ptr[0];
    for (i, w) in row_ptr.windows(2).enumerate() {
        let idx = &indices[w[0] - base..w[1] - base];
        let row = lo + i as u64 + 1;
        if let Some(k) = idx.windows(2).position(|p| p[0] >= p[1]) {
            return Err(format!(
                "row {row}: stored index {} follows {}; indices must strictly increase within a \
                 row",
                idx[k + 1],
                idx[k]
            ));
        }
        if let Some(&top) = idx.last()
            && u64::from(top) >= cols
        {
            return Err(format!(
                "row {row}: stored index {top} (0-based) is not below cols = {cols}"
            ));
        }
    }
    Ok(())
}

/// Splits the label table into its texts.
pub(crate) fn decode_table(bytes: &[u8], classes: u64) -> std::result::Result<Vec<String>, String> {
    let mut texts = Vec::with_capacity(classes as usize);
    let mut at = 0usize;
    for k in 0..classes {
        let Some(len) = bytes.get(at..at + 4) else {
            return Err(format!(
                "the label table ends inside entry {k} of {classes}"
            ));
        };
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as u64;
        at += 4;
        if len == 0 || len > MAX_LABEL_BYTES {
            return Err(format!(
                "label table entry {k} is {len} bytes long; labels are 1 to {MAX_LABEL_BYTES} \
                 bytes"
            ));
        }
        let Some(text) = bytes.get(at..at + len as usize) else {
            return Err(format!(
                "label table entry {k} ({len} bytes) runs past the table's end"
            ));
        };
        let text = std::str::from_utf8(text).map_err(|e| {
            format!(
                "label table entry {k} is not valid UTF-8 (at byte {})",
                e.valid_up_to()
            )
        })?;
        texts.push(text.to_owned());
        at += len as usize;
    }
    if at != bytes.len() {
        return Err(format!(
            "the label table has {} bytes after its {classes} entries",
            bytes.len() - at
        ));
    }
    Ok(texts)
}
