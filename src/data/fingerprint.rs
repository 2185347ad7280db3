//! A fingerprint of a dataset's content, so a checkpoint is only ever
//! resumed on the data it was made from.
//!
//! The hash is specified here (not borrowed from std, whose hasher may change
//! between Rust releases) so a fingerprint means the same in every build:
//! each 8-byte little-endian word w updates h <- rotl(h ^ w, 29) * K with
//! K = 0x9E3779B97F4A7C15, over a tagged stream of the layout, shape, stored
//! values, indices, row pointers, labels and label texts; a final avalanche
//! (SplitMix64's) mixes the last words.

use crate::float::Real;

use super::dataset::Dataset;
use super::labels::LabelMap;
use super::matrix::Features;

const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// The hash state, fed word by word or as byte sections that may arrive
/// in pieces (from the processes that each hold part of a dataset, one
/// after another: [`Chain::to_bytes`] carries the state between them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    h: u64,
    /// Bytes of the section in progress not yet hashed as a word.
    pending: [u8; 8],
    pending_len: u8,
}

impl Default for Chain {
    fn default() -> Self {
        Chain::new()
    }
}

impl Chain {
    /// The state before anything is hashed.
    pub fn new() -> Self {
        Chain {
            h: 0x7065_7263_6570_7472, // "perceptr"
            pending: [0; 8],
            pending_len: 0,
        }
    }

    #[inline]
    pub fn word(&mut self, w: u64) {
        self.h = (self.h ^ w).rotate_left(29).wrapping_mul(K);
    }

    /// Starts a byte section of `len` bytes in all.
    pub fn begin(&mut self, len: u64) {
        self.word(len);
        self.pending_len = 0;
    }

    /// The next bytes of the section.
    pub fn feed(&mut self, mut b: &[u8]) {
        if self.pending_len > 0 {
            let n = (8 - self.pending_len as usize).min(b.len());
            let at = self.pending_len as usize;
            self.pending[at..at + n].copy_from_slice(&b[..n]);
            self.pending_len += n as u8;
            b = &b[n..];
            if self.pending_len < 8 {
                return;
            }
            self.word(u64::from_le_bytes(self.pending));
            self.pending_len = 0;
        }
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes([
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
            ]));
        }
        let rest = chunks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len() as u8;
    }

    /// Ends the section: its last bytes, padded with zeros, are one more
    /// word (a whole word of zeros when none are left).
    pub fn end(&mut self) {
        let mut last = [0u8; 8];
        last[..self.pending_len as usize]
            .copy_from_slice(&self.pending[..self.pending_len as usize]);
        self.word(u64::from_le_bytes(last));
        self.pending_len = 0;
    }

    /// A whole byte section.
    pub fn bytes(&mut self, b: &[u8]) {
        self.begin(b.len() as u64);
        self.feed(b);
        self.end();
    }

    /// The fingerprint as 16 hex digits.
    pub fn finish(&self) -> String {
        let mut z = self.h;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        format!("{:016x}", z ^ (z >> 31))
    }

    /// The state as bytes, to carry to the process that goes on.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = self.h.to_le_bytes().to_vec();
        b.extend_from_slice(&self.pending);
        b.push(self.pending_len);
        b
    }

    /// A state from [`Chain::to_bytes`]; `None` if the bytes are not one.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        if b.len() != 17 || b[16] > 7 {
            return None;
        }
        let mut h = [0u8; 8];
        h.copy_from_slice(&b[..8]);
        let mut pending = [0u8; 8];
        pending.copy_from_slice(&b[8..16]);
        Some(Chain {
            h: u64::from_le_bytes(h),
            pending,
            pending_len: b[16],
        })
    }
}

/// The sections of the fingerprint, in order, for data held in parts:
/// what each part feeds to each, and what the whole adds.
impl Chain {
    /// The layout and shape words that open the fingerprint.
    pub fn shape<F>(&mut self, features: &Features<F>, rows: usize) {
        match features {
            Features::Dense(m) => {
                self.word(1);
                self.word(rows as u64);
                self.word(m.cols as u64);
            }
            Features::Sparse(m) => {
                self.word(2);
                self.word(rows as u64);
                self.word(m.cols as u64);
            }
        }
    }

    /// The label map that closes the fingerprint.
    pub fn labels_map(&mut self, map: &LabelMap) {
        self.bytes(map.positive.as_bytes());
        self.bytes(map.negative.as_deref().unwrap_or("\u{0}rest").as_bytes());
    }
}

/// The dataset's fingerprint as 16 hex digits.
pub fn fingerprint<F: Real>(data: &Dataset<F>) -> String {
    let mut h = Chain::new();
    h.shape(&data.features, data.rows());
    match &data.features {
        Features::Dense(m) => {
            h.bytes(bytemuck::cast_slice(&m.values));
        }
        Features::Sparse(m) => {
            h.bytes(bytemuck::cast_slice(&m.values));
            h.bytes(bytemuck::cast_slice(&m.indices));
            for &p in &m.row_ptr {
                h.word(p as u64);
            }
        }
    }
    h.bytes(bytemuck::cast_slice(&data.labels));
    if one_vs_rest(data) {
        // One-vs-rest data: the classes instead of the -1/+1 labels.
        h.bytes(bytemuck::cast_slice(&data.class_ids));
        for c in &data.classes {
            h.bytes(c.text.as_bytes());
        }
    }
    h.labels_map(&data.label_map);
    h.finish()
}

/// Whether the fingerprint hashes `data`'s classes (one-vs-rest data)
/// rather than its -1/+1 labels alone.
pub fn one_vs_rest<F>(data: &Dataset<F>) -> bool {
    !data.class_ids.is_empty() && data.labels.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DenseMatrix, Format, LabelMap};

    fn data(values: Vec<f32>, labels: Vec<i8>) -> Dataset<f32> {
        Dataset {
            features: Features::Dense(DenseMatrix {
                rows: labels.len(),
                cols: 2,
                values: values.into(),
            }),
            labels,
            label_map: LabelMap {
                positive: "1".into(),
                negative: Some("-1".into()),
            },
            classes: vec![],
            class_ids: vec![],
            source: "x".into(),
            format: Format::Csv,
            facts: Default::default(),
        }
    }

    #[test]
    fn any_change_changes_the_fingerprint() {
        let a = fingerprint(&data(vec![1.0, 2.0, 3.0, 4.0], vec![1, -1]));
        assert_eq!(a, fingerprint(&data(vec![1.0, 2.0, 3.0, 4.0], vec![1, -1])));
        assert_ne!(a, fingerprint(&data(vec![1.0, 2.0, 3.0, 4.5], vec![1, -1])));
        assert_ne!(
            a,
            fingerprint(&data(vec![1.0, 2.0, 3.0, 4.0], vec![-1, -1]))
        );
        assert_ne!(
            a,
            fingerprint(&data(vec![1.0, 2.0, 3.0, -0.0], vec![1, -1]))
        );
        // A fixed value: the fingerprint is part of the checkpoint format.
        // Computed independently with a Python transcription of the spec.
        assert_eq!(a, "e9432f56610367cd");
    }
}
