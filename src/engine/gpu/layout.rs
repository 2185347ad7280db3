//! How a dataset and the kernels' parameters are laid out on the device:
//! rows split into chunks so that every buffer fits one storage binding
//! (lavapipe: 128 MiB), and the structs the host shares with the kernels,
//! whose byte layout build.rs checks against the WGSL structs at compile
//! time (the assertions included at the end of this file).

use std::ops::Range;

use crate::data::Features;
use crate::engine::certify::Bound;
use crate::float::Real;

/// common.wgsl `Params`: the rows and shape of one margin dispatch.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Params {
    pub row_begin: u32,
    pub row_count: u32,
    pub pos_offset: u32,
    pub cols: u32,
    pub bias: u32,
    pub heads: u32,
    pub _pad: [u32; 2],
}

/// walk_common.wgsl `WalkParams`: the bound's four numbers, then the
/// chunk's shape, for one chunk and one run of the walk.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WalkParams<F> {
    pub rel: F,
    pub abs: F,
    pub flush: F,
    pub tau: F,
    pub cols: u32,
    pub bias: u32,
    /// Rows of this chunk.
    pub rows: u32,
    /// Values per entry: the longest row's stored terms plus the bias.
    pub stride: u32,
}

// SAFETY: `WalkParams<F>` is `repr(C)`, its fields are `Pod` (F: Real is),
// and it has no padding: four F then four u32 take 4·size_of::<F>() + 16
// bytes, a multiple of any float's alignment, and the u32s start at a
// multiple of 4. The assertions below confirm it for f32 and f64.
unsafe impl<F: Real> bytemuck::Zeroable for WalkParams<F> {}
unsafe impl<F: Real> bytemuck::Pod for WalkParams<F> {}
const _: () = assert!(size_of::<WalkParams<f32>>() == 4 * 4 + 16);
const _: () = assert!(size_of::<WalkParams<f64>>() == 4 * 8 + 16);

impl<F: Real> WalkParams<F> {
    pub fn new(bound: &Bound<F>, cols: usize, bias: bool, rows: usize, stride: usize) -> Self {
        WalkParams {
            rel: bound.rel,
            abs: bound.abs,
            flush: bound.flush,
            tau: bound.tau,
            cols: cols as u32,
            bias: bias as u32,
            rows: rows as u32,
            stride: stride as u32,
        }
    }

    /// The bound the four numbers make.
    pub fn bound(&self) -> Bound<F> {
        Bound {
            rel: self.rel,
            abs: self.abs,
            flush: self.flush,
            tau: self.tau,
        }
    }
}

/// walk_common.wgsl `NONE`: no row found.
pub const NONE: u32 = 0xffff_ffff;

/// walk_common.wgsl `WalkState`: where the walk is, shared by every batch
/// of a run.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WalkState {
    pub p: u32,
    pub limit: u32,
    pub stop: u32,
    pub stop_row: u32,
    pub updates_left: u32,
    /// Steps that walked, fresh dots, searches (cumulative over the run).
    pub iterations: u32,
    pub dots: u32,
    pub searches: u32,
    /// An upper bound of ||w~|| for the device's weights (may be +inf).
    pub wnorm: f32,
    pub _pad: [u32; 3],
}

impl WalkState {
    /// A run from chunk-local row `p` to `limit`, with weights of norm at
    /// most `wnorm`.
    pub fn start(p: usize, limit: usize, updates_left: u64, wnorm: f32) -> Self {
        WalkState {
            p: p as u32,
            limit: limit as u32,
            updates_left: updates_left.clamp(1, u32::MAX as u64) as u32,
            wnorm,
            ..Default::default()
        }
    }
}

/// walk_common.wgsl `BatchParams`: what one batch of the walk may do.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BatchParams {
    /// Rows each iteration's scan covers.
    pub window: u32,
    /// Entries the batch may record.
    pub capacity: u32,
    /// Fresh dots one step may find correct before it ends.
    pub waste: u32,
    pub _pad: u32,
}

/// An upper bound of ||w||, in f32 (+inf when it does not fit), for the
/// walk's drift.
pub fn norm_bound<F: Real>(w: &[F]) -> f32 {
    let sq: f64 = w.iter().map(|v| v.to_f64() * v.to_f64()).sum();
    let norm = (sq * (1.0 + (w.len() as f64 + 4.0) * 2f64.powi(-50))).sqrt() * (1.0 + 1e-9);
    let r = norm as f32;
    if (r as f64) < norm {
        // One ulp up (the values are finite and non-negative here; f32::MAX
        // becomes +inf).
        f32::from_bits(r.to_bits() + 1)
    } else {
        r
    }
}

// Written by build.rs from the WGSL modules: for each struct above, its
// size, and each field's offset and type, as in WGSL. A difference fails
// the build here, naming the struct and the field.
include!(concat!(env!("OUT_DIR"), "/wgsl_layout.rs"));

/// Rows of one chunk and the byte sizes of its buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkPlan {
    pub rows: Range<usize>,
    /// Entries stored (dense: rows x cols; sparse: non-zeros).
    pub entries: usize,
}

/// Splits the rows into chunks whose value buffer (and, for CSR, index and
/// row-pointer buffers) each hold at most `max_bytes`. Returns `Err` with
/// the size of the first row that alone exceeds the limit.
pub fn plan<F: Real>(features: &Features<F>, max_bytes: u64) -> Result<Vec<ChunkPlan>, u64> {
    let elem = std::mem::size_of::<F>() as u64;
    let mut chunks = Vec::new();
    match features {
        Features::Dense(m) => {
            let row_bytes = (m.cols as u64 * elem).max(1);
            if row_bytes > max_bytes {
                return Err(row_bytes);
            }
            let per_chunk = ((max_bytes / row_bytes) as usize).max(1);
            let mut r = 0;
            while r < m.rows {
                let end = (r + per_chunk).min(m.rows);
                chunks.push(ChunkPlan {
                    rows: r..end,
                    entries: (end - r) * m.cols,
                });
                r = end;
            }
        }
        Features::Sparse(m) => {
            // Values are the widest entries per non-zero; indices are u32.
            let per_entry = elem.max(4);
            let max_entries = (max_bytes / per_entry) as usize;
            let max_rows = (max_bytes / 4) as usize - 1;
            let mut start = 0;
            while start < m.rows() {
                let mut end = start;
                while end < m.rows()
                    && end - start < max_rows
                    && m.row_ptr[end + 1] - m.row_ptr[start] <= max_entries
                {
                    end += 1;
                }
                if end == start {
                    return Err((m.row_ptr[start + 1] - m.row_ptr[start]) as u64 * per_entry);
                }
                chunks.push(ChunkPlan {
                    rows: start..end,
                    entries: m.row_ptr[end] - m.row_ptr[start],
                });
                start = end;
            }
        }
    }
    Ok(chunks)
}

/// Bitmask of +1 labels for rows `rows`: bit j of word j/32 is row start+j.
/// One-vs-rest data has no -1/+1 labels (the kernels read class ids
/// instead): then every bit is 0.
pub fn label_bits(labels: &[i8], rows: Range<usize>) -> Vec<u32> {
    let mut bits = vec![0u32; rows.len().div_ceil(32).max(1)];
    for (j, &y) in labels.get(rows).unwrap_or(&[]).iter().enumerate() {
        if y > 0 {
            bits[j / 32] |= 1 << (j % 32);
        }
    }
    bits
}

/// Chunk-local CSR row pointers (offsets from the chunk's first entry).
pub fn local_row_ptr(row_ptr: &[usize], rows: Range<usize>) -> Vec<u32> {
    let base = row_ptr[rows.start];
    row_ptr[rows.start..=rows.end]
        .iter()
        .map(|&p| (p - base) as u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CsrMatrix, DenseMatrix};

    #[test]
    fn dense_chunks_respect_the_limit_and_cover_every_row() {
        let f = Features::Dense(DenseMatrix {
            rows: 10,
            cols: 3,
            values: vec![1.0f32; 30].into(),
        });
        let chunks = plan(&f, 40).unwrap(); // 3 rows of 12 bytes per chunk
        assert_eq!(
            chunks.iter().map(|c| c.rows.clone()).collect::<Vec<_>>(),
            vec![0..3, 3..6, 6..9, 9..10]
        );
        assert_eq!(plan(&f, 8), Err(12));
    }

    #[test]
    fn sparse_chunks_split_on_entries() {
        let m = CsrMatrix {
            cols: 5,
            row_ptr: vec![0, 2, 5, 5, 9].into(),
            indices: vec![0, 1, 0, 2, 4, 0, 1, 2, 3].into(),
            values: vec![1.0f32; 9].into(),
        };
        let f = Features::Sparse(m.clone());
        let chunks = plan(&f, 16).unwrap(); // at most 4 entries, 3 rows
        assert_eq!(
            chunks.iter().map(|c| c.rows.clone()).collect::<Vec<_>>(),
            vec![0..1, 1..3, 3..4]
        );
        assert_eq!(local_row_ptr(&m.row_ptr, 1..3), vec![0, 3, 3]);
        assert_eq!(plan(&f, 12), Err(16));
    }

    #[test]
    fn label_bits_pack_positive_rows() {
        let labels: Vec<i8> = (0..40).map(|i| if i % 3 == 0 { 1 } else { -1 }).collect();
        let bits = label_bits(&labels, 3..40);
        assert_eq!(bits.len(), 2);
        assert_eq!(bits[0] & 0b1111, 0b1001); // rows 3 and 6
    }
}
