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
use super::matrix::Features;

const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// The word-at-a-time hash state.
struct Hasher(u64);

impl Hasher {
    #[inline]
    fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w).rotate_left(29).wrapping_mul(K);
    }

    fn bytes(&mut self, b: &[u8]) {
        self.word(b.len() as u64);
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes([
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
            ]));
        }
        let mut last = [0u8; 8];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.word(u64::from_le_bytes(last));
    }

    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The dataset's fingerprint as 16 hex digits.
pub fn fingerprint<F: Real>(data: &Dataset<F>) -> String {
    let mut h = Hasher(0x7065_7263_6570_7472); // "perceptr"
    match &data.features {
        Features::Dense(m) => {
            h.word(1);
            h.word(m.rows as u64);
            h.word(m.cols as u64);
            h.bytes(bytemuck::cast_slice(&m.values));
        }
        Features::Sparse(m) => {
            h.word(2);
            h.word(m.rows() as u64);
            h.word(m.cols as u64);
            h.bytes(bytemuck::cast_slice(&m.values));
            h.bytes(bytemuck::cast_slice(&m.indices));
            for &p in &m.row_ptr {
                h.word(p as u64);
            }
        }
    }
    h.bytes(bytemuck::cast_slice(&data.labels));
    if !data.class_ids.is_empty() && data.labels.is_empty() {
        // One-vs-rest data: the classes instead of the -1/+1 labels.
        h.bytes(bytemuck::cast_slice(&data.class_ids));
        for c in &data.classes {
            h.bytes(c.text.as_bytes());
        }
    }
    h.bytes(data.label_map.positive.as_bytes());
    h.bytes(
        data.label_map
            .negative
            .as_deref()
            .unwrap_or("\u{0}rest")
            .as_bytes(),
    );
    format!("{:016x}", h.finish())
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
