//! In-memory feature storage: dense row-major or compressed sparse rows (CSR).

use crate::float::Real;

use super::storage::Storage;

/// The largest accepted LIBSVM feature index (1-based): indices are stored as
/// u32 and the bias takes one more slot.
pub const MAX_FEATURE_INDEX: u64 = (1 << 31) - 1;

/// One row's features, as stored. The bias feature is never stored: the
/// trainer appends the constant 1 itself.
#[derive(Clone, Copy, Debug)]
pub enum Row<'a, F> {
    Dense(&'a [F]),
    /// Column indices (strictly increasing, 0-based) and their values.
    Sparse(&'a [u32], &'a [F]),
}

impl<'a, F: Real> Row<'a, F> {
    /// Number of stored entries (the terms a dot product sums, bias excluded).
    pub fn stored(&self) -> usize {
        self.values().len()
    }

    /// The stored values, in increasing column order.
    pub fn values(&self) -> &'a [F] {
        match *self {
            Row::Dense(x) => x,
            Row::Sparse(_, v) => v,
        }
    }

    /// Calls `f(column, value)` for every stored entry in increasing column order.
    pub fn for_each(&self, mut f: impl FnMut(usize, F)) {
        match *self {
            Row::Dense(x) => x.iter().enumerate().for_each(|(k, &v)| f(k, v)),
            Row::Sparse(idx, val) => idx.iter().zip(val).for_each(|(&k, &v)| f(k as usize, v)),
        }
    }

    /// Squared Euclidean norm, accumulated in f64 (for reports, not decisions).
    pub fn norm_sq_f64(&self) -> f64 {
        let mut s = 0.0;
        self.for_each(|_, v| s += v.to_f64() * v.to_f64());
        s
    }

    /// Sum of absolute values, accumulated in f64 and rounded up slightly so it
    /// is an upper bound of the exact value.
    pub fn l1_upper_f64(&self) -> f64 {
        let mut s = 0.0;
        self.for_each(|_, v| s += v.to_f64().abs());
        s * (1.0 + 1e-12)
    }
}

/// A dense row-major matrix.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DenseMatrix<F> {
    pub rows: usize,
    pub cols: usize,
    /// `rows * cols` values, row after row.
    pub values: Storage<F>,
}

/// A compressed-sparse-row matrix: row `i` owns entries
/// `row_ptr[i]..row_ptr[i + 1]` of `indices` and `values`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CsrMatrix<F> {
    pub cols: usize,
    pub row_ptr: Storage<usize>,
    pub indices: Storage<u32>,
    pub values: Storage<F>,
}

/// How many positions ahead a walk in a shuffled order asks for a row
/// (beyond the next one): in such an order each row is a fresh trip to
/// memory, which the hardware's prefetcher cannot guess, so several are
/// kept on their way while one is decided.
pub const ROW_LEAD: usize = 3;
/// How many positions ahead it asks where a sparse row lies (its row
/// pointers, themselves a miss), so that the row's own request, made
/// [`ROW_LEAD`] ahead, need not wait for them.
pub const PLACE_LEAD: usize = 8;

impl<F: Real> CsrMatrix<F> {
    /// [`Features::prefetch_row`] for sparse rows.
    #[inline(always)]
    pub fn prefetch_row(&self, i: usize) {
        if i < self.rows() {
            let (a, b) = (self.row_ptr[i], self.row_ptr[i + 1]);
            let (idx, val) = (&self.indices[a..b], &self.values[a..b]);
            prefetch(idx.as_ptr().cast(), std::mem::size_of_val(idx));
            prefetch(val.as_ptr().cast(), std::mem::size_of_val(val));
        }
    }

    /// Starts loading where row `i` lies (its two row pointers): see
    /// [`Features::prefetch_row_place`] and [`PLACE_LEAD`].
    #[inline]
    pub fn prefetch_row_place(&self, i: usize) {
        if let Some(p) = self.row_ptr.get(i..i + 2) {
            prefetch(p.as_ptr().cast(), std::mem::size_of_val(p));
        }
    }

    /// The rows reordered so that new row `p` is old row `order[p]`, written
    /// over the buffers given (a spare matrix's, whose contents do not
    /// matter). A shuffled order reads each row
    /// from a fresh place in memory, so the copy waits on memory rather
    /// than on arithmetic: the rows are asked for `PERMUTE_LEAD` ahead,
    /// and the positions are split among the cores in pieces, each piece
    /// written to its own part of the output (where it goes is known from
    /// the rows' lengths alone).
    pub fn permuted_into(
        &self,
        order: &[usize],
        mut row_ptr: Vec<usize>,
        mut indices: Vec<u32>,
        mut values: Vec<F>,
    ) -> CsrMatrix<F> {
        use rayon::prelude::*;
        row_ptr.clear();
        row_ptr.reserve(order.len() + 1);
        row_ptr.push(0);
        let mut end = 0;
        for &i in order {
            end += self.row_ptr[i + 1] - self.row_ptr[i];
            row_ptr.push(end);
        }
        // Every entry below is written before it is read: the zeros only
        // size the buffers (and cost nothing when they are reused at the
        // same length).
        indices.resize(end, 0);
        values.resize(end, F::ZERO);
        let mut pieces = Vec::with_capacity(order.len().div_ceil(PERMUTE_PIECE));
        let (mut idx_rest, mut val_rest) = (&mut indices[..], &mut values[..]);
        for (k, rows) in order.chunks(PERMUTE_PIECE).enumerate() {
            let start = k * PERMUTE_PIECE;
            let len = row_ptr[start + rows.len()] - row_ptr[start];
            let (idx, i_tail) = std::mem::take(&mut idx_rest).split_at_mut(len);
            let (val, v_tail) = std::mem::take(&mut val_rest).split_at_mut(len);
            (idx_rest, val_rest) = (i_tail, v_tail);
            pieces.push((rows, idx, val));
        }
        pieces.into_par_iter().for_each(|(rows, idx, val)| {
            let mut at = 0;
            for (p, &i) in rows.iter().enumerate() {
                if let Some(&ahead) = rows.get(p + PERMUTE_LEAD) {
                    self.prefetch_row(ahead);
                }
                let (a, b) = (self.row_ptr[i], self.row_ptr[i + 1]);
                idx[at..at + b - a].copy_from_slice(&self.indices[a..b]);
                val[at..at + b - a].copy_from_slice(&self.values[a..b]);
                at += b - a;
            }
        });
        CsrMatrix {
            cols: self.cols,
            row_ptr: row_ptr.into(),
            indices: indices.into(),
            values: values.into(),
        }
    }

    /// Writes every stored value into `dense`, row-major with `cols`
    /// columns and zeros elsewhere.
    pub fn scatter_into(&self, dense: &mut [F]) {
        for i in 0..self.rows() {
            for e in self.row_ptr[i]..self.row_ptr[i + 1] {
                dense[i * self.cols + self.indices[e] as usize] = self.values[e];
            }
        }
    }
}

impl<F: Real> DenseMatrix<F> {
    /// Appends the rows in CSR form (exact zeros dropped): `row_ptr` gets
    /// the leading 0 and one end offset per row.
    pub fn push_csr(&self, row_ptr: &mut Vec<usize>, indices: &mut Vec<u32>, values: &mut Vec<F>) {
        row_ptr.push(0);
        for i in 0..self.rows {
            for (k, &v) in self.values[i * self.cols..(i + 1) * self.cols]
                .iter()
                .enumerate()
            {
                if v != F::ZERO {
                    indices.push(k as u32);
                    values.push(v);
                }
            }
            row_ptr.push(indices.len());
        }
    }
}

impl<F> CsrMatrix<F> {
    pub fn rows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }
}

/// The features of a dataset, in whichever layout the input had.
#[derive(Clone, Debug, PartialEq)]
pub enum Features<F> {
    Dense(DenseMatrix<F>),
    Sparse(CsrMatrix<F>),
}

impl<F: Real> Features<F> {
    /// The values stored: every one of a dense matrix, the non-zeros of a
    /// sparse one (the terms one pass of dots sums).
    pub fn stored(&self) -> usize {
        match self {
            Features::Dense(m) => m.values.len(),
            Features::Sparse(m) => m.values.len(),
        }
    }

    /// No rows and no columns: a placeholder while the features are lent out.
    pub fn empty() -> Self {
        Features::Dense(DenseMatrix {
            rows: 0,
            cols: 0,
            values: Default::default(),
        })
    }

    /// The same features without a copy (see [`Storage::borrowed`]).
    ///
    /// # Safety
    ///
    /// The result, and every clone of it, must be dropped before `self` is
    /// dropped, moved or written.
    pub unsafe fn borrowed(&self) -> Self {
        // SAFETY: passed on to the caller.
        unsafe {
            match self {
                Features::Dense(m) => Features::Dense(DenseMatrix {
                    rows: m.rows,
                    cols: m.cols,
                    values: m.values.borrowed(),
                }),
                Features::Sparse(m) => Features::Sparse(CsrMatrix {
                    cols: m.cols,
                    row_ptr: m.row_ptr.borrowed(),
                    indices: m.indices.borrowed(),
                    values: m.values.borrowed(),
                }),
            }
        }
    }

    pub fn rows(&self) -> usize {
        match self {
            Features::Dense(m) => m.rows,
            Features::Sparse(m) => m.rows(),
        }
    }

    /// Number of feature columns (the bias excluded).
    pub fn cols(&self) -> usize {
        match self {
            Features::Dense(m) => m.cols,
            Features::Sparse(m) => m.cols,
        }
    }

    pub fn is_sparse(&self) -> bool {
        matches!(self, Features::Sparse(_))
    }

    pub fn row(&self, i: usize) -> Row<'_, F> {
        match self {
            Features::Dense(m) => Row::Dense(&m.values[i * m.cols..(i + 1) * m.cols]),
            Features::Sparse(m) => {
                let (a, b) = (m.row_ptr[i], m.row_ptr[i + 1]);
                Row::Sparse(&m.indices[a..b], &m.values[a..b])
            }
        }
    }

    /// Starts loading row `i` into the caches, so that the row is there when
    /// a walk in row order reaches it (nothing happens past the last row).
    #[inline]
    pub fn prefetch_row(&self, i: usize) {
        match self {
            Features::Dense(m) if i < m.rows => {
                let row = &m.values[i * m.cols..(i + 1) * m.cols];
                prefetch(row.as_ptr().cast(), std::mem::size_of_val(row));
            }
            Features::Sparse(m) => m.prefetch_row(i),
            _ => {}
        }
    }

    /// Starts loading where sparse row `i` lies (its two row pointers), so
    /// that a later [`Features::prefetch_row`] of it need not wait for
    /// them: a walk in a shuffled order looks the row's place up from
    /// memory it has not read lately. Dense rows lie where their index
    /// says, so this does nothing for them.
    #[inline]
    pub fn prefetch_row_place(&self, i: usize) {
        if let Features::Sparse(m) = self {
            m.prefetch_row_place(i);
        }
    }

    /// Number of stored values that are not zero.
    pub fn nonzeros(&self) -> usize {
        match self {
            Features::Dense(m) => m.values.iter().filter(|v| **v != F::ZERO).count(),
            Features::Sparse(m) => m.values.iter().filter(|v| **v != F::ZERO).count(),
        }
    }

    /// Bytes the feature storage occupies.
    pub fn storage_bytes(&self) -> usize {
        let f = std::mem::size_of::<F>();
        match self {
            Features::Dense(m) => m.values.len() * f,
            Features::Sparse(m) => m.values.len() * f + m.indices.len() * 4 + m.row_ptr.len() * 8,
        }
    }

    /// The same features in CSR layout (exact zeros dropped).
    pub fn to_sparse(&self) -> CsrMatrix<F> {
        match self {
            Features::Sparse(m) => m.clone(),
            Features::Dense(m) => {
                let mut row_ptr = Vec::with_capacity(m.rows + 1);
                let (mut indices, mut values) = (Vec::new(), Vec::new());
                m.push_csr(&mut row_ptr, &mut indices, &mut values);
                CsrMatrix {
                    cols: m.cols,
                    row_ptr: row_ptr.into(),
                    indices: indices.into(),
                    values: values.into(),
                }
            }
        }
    }

    /// The same features in dense layout.
    pub fn to_dense(&self) -> DenseMatrix<F> {
        match self {
            Features::Dense(m) => m.clone(),
            Features::Sparse(m) => {
                let rows = m.rows();
                let mut values = vec![F::ZERO; rows * m.cols];
                m.scatter_into(&mut values);
                DenseMatrix {
                    rows,
                    cols: m.cols,
                    values: values.into(),
                }
            }
        }
    }

    /// The rows reordered so that new row `p` is old row `order[p]`, in
    /// owned memory (also when `self` is memory-mapped).
    /// The first `cols` features of every row (fewer than it has), and how
    /// many non-zero values were left out.
    pub fn first_features(&self, cols: usize) -> (Features<F>, u64) {
        match self {
            Features::Dense(m) => {
                let mut values = Vec::with_capacity(m.rows * cols);
                let mut dropped = 0u64;
                for r in 0..m.rows {
                    let row = &m.values.as_slice()[r * m.cols..(r + 1) * m.cols];
                    values.extend_from_slice(&row[..cols]);
                    dropped += row[cols..].iter().filter(|v| **v != F::ZERO).count() as u64;
                }
                let kept = DenseMatrix {
                    rows: m.rows,
                    cols,
                    values: values.into(),
                };
                (Features::Dense(kept), dropped)
            }
            Features::Sparse(m) => {
                let (mut row_ptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
                let ptr = m.row_ptr.as_slice();
                for r in 0..ptr.len() - 1 {
                    for k in ptr[r]..ptr[r + 1] {
                        if (m.indices.as_slice()[k] as usize) < cols {
                            indices.push(m.indices.as_slice()[k]);
                            values.push(m.values.as_slice()[k]);
                        }
                    }
                    row_ptr.push(indices.len());
                }
                let dropped = (m.indices.len() - indices.len()) as u64;
                let kept = CsrMatrix {
                    cols,
                    row_ptr: row_ptr.into(),
                    indices: indices.into(),
                    values: values.into(),
                };
                (Features::Sparse(kept), dropped)
            }
        }
    }

    pub fn permuted(&self, order: &[usize]) -> Features<F> {
        self.permuted_into(order, None)
    }

    /// [`Features::permuted`] into the buffers of `spare` (a matrix of the
    /// same kind this one was permuted into before), which saves a fresh
    /// allocation, and the kernel's zeroing of its pages, every epoch.
    pub fn permuted_into(&self, order: &[usize], spare: Option<Features<F>>) -> Features<F> {
        match self {
            Features::Dense(m) => {
                let spare = match spare {
                    Some(Features::Dense(d)) => d.values.into_owned_vec(),
                    _ => None,
                };
                let mut values = spare.unwrap_or_else(|| Vec::with_capacity(m.values.len()));
                values.clear();
                for &i in order {
                    values.extend_from_slice(&m.values[i * m.cols..(i + 1) * m.cols]);
                }
                Features::Dense(DenseMatrix {
                    rows: order.len(),
                    cols: m.cols,
                    values: values.into(),
                })
            }
            Features::Sparse(m) => {
                // Kept at their length: the copy overwrites every entry.
                let (row_ptr, indices, values) = match spare {
                    Some(Features::Sparse(c)) => (
                        c.row_ptr.into_owned_vec().unwrap_or_default(),
                        c.indices.into_owned_vec().unwrap_or_default(),
                        c.values.into_owned_vec().unwrap_or_default(),
                    ),
                    _ => Default::default(),
                };
                Features::Sparse(m.permuted_into(order, row_ptr, indices, values))
            }
        }
    }

    /// The columns reordered so that new column `j` is old column
    /// `order[j]` (`order` a permutation of the columns).
    pub fn with_columns(&self, order: &[usize]) -> Features<F> {
        match self {
            Features::Dense(m) => {
                let mut values = Vec::with_capacity(m.values.len());
                for row in m.values.chunks_exact(m.cols.max(1)).take(m.rows) {
                    values.extend(order.iter().map(|&k| row[k]));
                }
                Features::Dense(DenseMatrix {
                    rows: m.rows,
                    cols: order.len(),
                    values: values.into(),
                })
            }
            Features::Sparse(m) => {
                let mut new_index = vec![0u32; m.cols];
                for (j, &k) in order.iter().enumerate() {
                    new_index[k] = j as u32;
                }
                let mut indices = Vec::with_capacity(m.indices.len());
                let mut values = Vec::with_capacity(m.values.len());
                let mut entries = Vec::new();
                for i in 0..m.rows() {
                    let (a, b) = (m.row_ptr[i], m.row_ptr[i + 1]);
                    entries.clear();
                    entries.extend((a..b).map(|e| (new_index[m.indices[e] as usize], m.values[e])));
                    entries.sort_unstable_by_key(|&(k, _)| k);
                    indices.extend(entries.iter().map(|&(k, _)| k));
                    values.extend(entries.iter().map(|&(_, v)| v));
                }
                Features::Sparse(CsrMatrix {
                    cols: order.len(),
                    row_ptr: m.row_ptr.clone(),
                    indices: indices.into(),
                    values: values.into(),
                })
            }
        }
    }
}

/// Positions a core copies at a time in [`CsrMatrix::permuted_into`].
const PERMUTE_PIECE: usize = 4096;
/// How many positions ahead it asks for a row.
const PERMUTE_LEAD: usize = 8;

/// Asks the processor to start loading `bytes` bytes from `p` into its
/// caches. The host walks rows of a few kilobytes, each on pages of its own,
/// where the hardware prefetcher stops at every page boundary; asking for
/// the next row while deciding this one keeps the loads in flight.
#[inline]
pub(crate) fn prefetch(p: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        for off in (0..bytes).step_by(64) {
            // SAFETY: SSE is part of x86-64, and a prefetch never faults,
            // whatever the address (wrapping_add computes one without
            // claiming it is in bounds).
            unsafe { _mm_prefetch::<_MM_HINT_T1>(p.wrapping_add(off).cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (p, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CSR matrix of `rows` rows of 0 to 9 values (some rows empty).
    fn csr(rows: usize, cols: usize) -> CsrMatrix<f64> {
        let (mut row_ptr, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for i in 0..rows {
            for k in 0..(i * 7) % 10 {
                indices.push(((i * 31 + k * 17) % cols) as u32);
                values.push((i * 10 + k) as f64);
            }
            row_ptr.push(indices.len());
        }
        CsrMatrix {
            cols,
            row_ptr: row_ptr.into(),
            indices: indices.into(),
            values: values.into(),
        }
    }

    fn rows_of(m: &CsrMatrix<f64>) -> Vec<(Vec<u32>, Vec<f64>)> {
        (0..m.rows())
            .map(|i| {
                let (a, b) = (m.row_ptr[i], m.row_ptr[i + 1]);
                (m.indices[a..b].to_vec(), m.values[a..b].to_vec())
            })
            .collect()
    }

    #[test]
    fn permuted_rows_are_the_rows_in_the_order_given() {
        // Several pieces of PERMUTE_PIECE positions, the last one short,
        // into fresh buffers and into the buffers of larger and smaller
        // matrices.
        let rows = 3 * PERMUTE_PIECE + 123;
        let m = csr(rows, 50);
        let original = rows_of(&m);
        let mut order: Vec<usize> = (0..rows).collect();
        let mut s = 12345u64;
        for i in (1..rows).rev() {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            order.swap(i, (s >> 33) as usize % (i + 1));
        }
        let spares = [csr(rows + 999, 50), csr(5, 50)];
        let mut results = vec![m.permuted_into(&order, Vec::new(), Vec::new(), Vec::new())];
        for spare in spares {
            let (p, i, v) = (
                spare.row_ptr.into_owned_vec().unwrap(),
                spare.indices.into_owned_vec().unwrap(),
                spare.values.into_owned_vec().unwrap(),
            );
            results.push(m.permuted_into(&order, p, i, v));
        }
        // A part of the rows, as a run with rows held out visits them.
        let part: Vec<usize> = order.iter().copied().filter(|r| r % 3 != 0).collect();
        let some = m.permuted_into(&part, Vec::new(), Vec::new(), Vec::new());
        for p in results {
            assert_eq!(p.cols, 50);
            assert_eq!(p.indices.len(), m.indices.len());
            let got = rows_of(&p);
            assert_eq!(got.len(), rows);
            for (k, &r) in order.iter().enumerate() {
                assert_eq!(got[k], original[r], "position {k}, row {r}");
            }
        }
        let got = rows_of(&some);
        assert_eq!(got.len(), part.len());
        for (k, &r) in part.iter().enumerate() {
            assert_eq!(got[k], original[r]);
        }
    }
}
