//! Dense rows whose every value is a whole number from 0 to 255, kept a
//! second time as one byte a value: the walk on the host reads 8 times
//! fewer bytes (4 in f32) from memory, with the same arithmetic.
//!
//! Image data (Fashion-MNIST, MNIST, most pictures) is stored as bytes and
//! handed to us as f64 or f32 whole numbers. A shuffled walk over it reads
//! each row from main memory once an epoch, and on a 14,000 x 784 pair of
//! Fashion-MNIST in f64 that read took about 60% of the epoch. The byte is
//! the value exactly (`F::from_f64(byte as f64)` has the same bits as the
//! stored value: checked for every value, so -0.0, 0.5 or 256 keep the data
//! off this path), so every product w_k·x_k, and hence every sum in any
//! order, is what the stored row gives.

use crate::float::Real;

use super::matrix::Features;

/// The rows of a dense matrix, one byte a value, row-major.
#[derive(Debug, PartialEq, Eq)]
pub struct ByteRows {
    cols: usize,
    codes: Vec<u8>,
}

/// Rows checked and copied per task.
const ROWS_PER_PART: usize = 1024;

impl ByteRows {
    /// The byte form of `features`, if they are dense and every value is a
    /// whole number in 0..=255 with the bits of that number (so not -0.0).
    /// Stops at the first value that is not (on scaled data, the first row).
    /// `None` too when the memory for the copy is not available: it only
    /// saves time.
    pub fn of<F: Real>(features: &Features<F>) -> Option<ByteRows> {
        use rayon::prelude::*;
        let Features::Dense(m) = features else {
            return None;
        };
        let (rows, cols) = (m.rows, m.cols);
        if cols == 0
            || rows == 0
            || crate::memory::check(crate::memory::bytes_of::<u8>(rows * cols)).is_err()
        {
            return None;
        }
        // The first row alone first: data that is not bytes is refused
        // there, without a pass over the rest.
        byte_of_each(&m.values[..cols])?;
        let parts: Option<Vec<Vec<u8>>> = (0..rows.div_ceil(ROWS_PER_PART))
            .into_par_iter()
            .map(|p| {
                let first = p * ROWS_PER_PART;
                let last = rows.min(first + ROWS_PER_PART);
                byte_of_each(&m.values[first * cols..last * cols])
            })
            .collect();
        Some(ByteRows {
            cols,
            codes: parts?.concat(),
        })
    }

    /// Row `i`'s bytes.
    #[inline]
    pub fn row(&self, i: usize) -> &[u8] {
        &self.codes[i * self.cols..(i + 1) * self.cols]
    }

    /// Starts loading row `i` (nothing past the last row).
    #[inline]
    pub fn prefetch_row(&self, i: usize) {
        if let Some(row) = self.codes.get(i * self.cols..(i + 1) * self.cols) {
            super::matrix::prefetch(row.as_ptr(), row.len());
        }
    }
}

/// Each value as its byte, or `None` if one is not exactly a byte.
fn byte_of_each<F: Real>(values: &[F]) -> Option<Vec<u8>> {
    let mut out = vec![0u8; values.len()];
    let mut all = true;
    // One test a value and no early exit inside a block, so the loop stays
    // tight; the answer is looked at once a block.
    for (o, v) in out.chunks_mut(4096).zip(values.chunks(4096)) {
        for (b, &x) in o.iter_mut().zip(v) {
            let e = exact_byte(x);
            all &= e.is_some();
            *b = e.unwrap_or(0);
        }
        if !all {
            return None;
        }
    }
    Some(out)
}

/// `v` as a byte, if `v` is exactly one (bits included). The cast
/// saturates (and takes NaN to 0), so a value out of range, negative,
/// fractional, NaN or -0.0 comes back as a byte whose value has other bits.
#[inline]
pub fn exact_byte<F: Real>(v: F) -> Option<u8> {
    let x = v.to_f64();
    let b = x as u8;
    (F::from_f64(b as f64).to_f64().to_bits() == x.to_bits()).then_some(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::matrix::DenseMatrix;

    fn dense(values: Vec<f64>, cols: usize) -> Features<f64> {
        Features::Dense(DenseMatrix {
            rows: values.len() / cols,
            cols,
            values: values.into(),
        })
    }

    #[test]
    fn whole_numbers_from_0_to_255_are_kept_as_bytes() {
        let f = dense(vec![0.0, 1.0, 255.0, 17.0, 3.0, 128.0], 3);
        let b = ByteRows::of(&f).expect("bytes");
        assert_eq!(b.row(0), &[0, 1, 255]);
        assert_eq!(b.row(1), &[17, 3, 128]);
    }

    #[test]
    fn anything_else_keeps_the_data_off_the_byte_path() {
        for bad in [256.0, 0.5, -1.0, -0.0, f64::NAN, 1e-300] {
            // In the first row and in a later part.
            assert_eq!(ByteRows::of(&dense(vec![1.0, bad], 2)), None, "{bad}");
            let mut v = vec![1.0; 2 * (ROWS_PER_PART + 5)];
            v[2 * ROWS_PER_PART + 3] = bad;
            assert_eq!(ByteRows::of(&dense(v, 2)), None, "{bad}");
        }
        assert_eq!(exact_byte(-0.0f32), None);
        assert_eq!(exact_byte(200.0f32), Some(200));
    }
}
