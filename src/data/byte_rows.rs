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
//! order, is what the stored row gives: the certified margins read the
//! bytes ([`crate::engine::cpu::byte_rows`]), and the reference arithmetic
//! reads a row widened back into the precision ([`ByteRows::widen_into`]),
//! a few kilobytes that stay in cache.

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
    /// `None` too when memory for twice the copy is not available.
    pub fn of<F: Real>(features: &Features<F>) -> Option<ByteRows> {
        use rayon::prelude::*;
        let Features::Dense(m) = features else {
            return None;
        };
        let (rows, cols) = (m.rows, m.cols);
        // Half of what is available at most: the copy only saves time, and
        // must not take the memory a run was checked to fit in.
        let bytes = crate::memory::bytes_of::<u8>(rows * cols);
        if cols == 0 || rows == 0 || crate::memory::check(bytes.saturating_mul(2)).is_err() {
            return None;
        }
        // The first row alone first: data that is not bytes is refused
        // there, without a pass over the rest.
        let mut codes = vec![0u8; rows * cols];
        if !bytes_of_each(&m.values[..cols], &mut codes[..cols]) {
            return None;
        }
        let all = codes[cols..]
            .par_chunks_mut(ROWS_PER_PART * cols)
            .zip(m.values[cols..].par_chunks(ROWS_PER_PART * cols))
            .all(|(out, values)| bytes_of_each(values, out));
        all.then_some(ByteRows { cols, codes })
    }

    /// The rows reordered so that new row `p` is old row `order[p]` (as
    /// [`crate::data::Dataset::permuted`] reorders the stored rows).
    pub fn permuted(&self, order: &[usize]) -> ByteRows {
        let mut codes = Vec::with_capacity(order.len() * self.cols);
        for &i in order {
            codes.extend_from_slice(self.row(i));
        }
        ByteRows {
            cols: self.cols,
            codes,
        }
    }

    /// How many rows.
    pub fn rows(&self) -> usize {
        self.codes.len() / self.cols
    }

    /// Row `i`'s bytes.
    #[inline]
    pub fn row(&self, i: usize) -> &[u8] {
        &self.codes[i * self.cols..(i + 1) * self.cols]
    }

    /// Row `i`'s values in the precision `F`, into `out` (replacing what it
    /// held): each byte widened, exactly, so the stored row's values.
    pub fn widen_into<F: Real>(&self, i: usize, out: &mut Vec<F>) {
        out.clear();
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2, checked just above.
            unsafe { widen_avx2(self.row(i), out) };
            return;
        }
        widen(self.row(i), out);
    }

    /// Starts loading row `i` (nothing past the last row).
    #[inline]
    pub fn prefetch_row(&self, i: usize) {
        if let Some(row) = self.codes.get(i * self.cols..(i + 1) * self.cols) {
            super::matrix::prefetch(row.as_ptr(), row.len());
        }
    }
}

/// Appends each byte of `x` to `out` as a value of `F` (exactly).
#[inline(always)]
fn widen<F: Real>(x: &[u8], out: &mut Vec<F>) {
    out.extend(x.iter().map(|&b| F::from_f64(b as f64)));
}

/// [`widen`] compiled for AVX2 (eight bytes a step rather than two): the
/// same values, as a conversion is exact either way.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn widen_avx2<F: Real>(x: &[u8], out: &mut Vec<F>) {
    widen(x, out);
}

/// Writes each value's byte into `out`; whether every value was exactly
/// a byte (one test a value and no early exit inside a block, so the loop
/// stays tight; the answer is looked at once a block).
fn bytes_of_each<F: Real>(values: &[F], out: &mut [u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { bytes_of_each_avx2(values, out) };
    }
    each_byte(values, out)
}

/// [`each_byte`] compiled for AVX2: the same tests, four values a step.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn bytes_of_each_avx2<F: Real>(values: &[F], out: &mut [u8]) -> bool {
    each_byte(values, out)
}

/// [`bytes_of_each`] on any target.
#[inline(always)]
fn each_byte<F: Real>(values: &[F], out: &mut [u8]) -> bool {
    for (o, v) in out.chunks_mut(4096).zip(values.chunks(4096)) {
        let mut all = true;
        for (b, &x) in o.iter_mut().zip(v) {
            let e = exact_byte(x);
            all &= e.is_some();
            *b = e.unwrap_or(0);
        }
        if !all {
            return false;
        }
    }
    true
}

/// `v` as a byte, if `v` is exactly one (bits included). The cast
/// saturates (and takes NaN to 0), so a value out of range, negative,
/// fractional, NaN or -0.0 comes back as a byte whose value has other bits.
#[inline(always)]
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
        // Widened, they are the stored values, bit for bit.
        let mut out: Vec<f64> = vec![9.0; 7];
        b.widen_into(1, &mut out);
        assert_eq!(
            out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            [17.0f64, 3.0, 128.0].map(f64::to_bits)
        );
        let mut out32: Vec<f32> = Vec::new();
        b.widen_into(0, &mut out32);
        assert_eq!(out32, [0.0f32, 1.0, 255.0]);
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
