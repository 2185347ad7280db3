//! Writing LIBSVM lines: the label, then `index:value` for every stored
//! entry, 1-based (the LIBSVM standard) unless asked to count from 0.

use crate::data::matrix::Row;
use crate::data::message::quote;
use crate::data::number::push_value;
use crate::data::options::IndexBase;
use crate::float::Real;

/// A label as a LIBSVM token: a finite number (the reader refuses anything
/// else), with no spaces, `:` or `#`.
pub fn libsvm_label(label: &str) -> std::result::Result<String, String> {
    if label.is_empty() || label.contains(|c: char| c.is_whitespace() || c == ':' || c == '#') {
        return Err(format!(
            "label {} holds a space, `:` or `#` and cannot be written as LIBSVM",
            quote(label)
        ));
    }
    if !label.parse::<f64>().is_ok_and(f64::is_finite) {
        return Err(format!(
            "label {} is not a number and cannot be written as LIBSVM, whose labels are \
             numbers; write CSV or .pbin instead",
            quote(label)
        ));
    }
    Ok(label.to_owned())
}

/// The shortest LIBSVM line storing `nnz` values: ` k:v` is 4 bytes at least.
pub fn shortest_libsvm_line(label_bytes: usize, nnz: usize) -> u64 {
    (label_bytes as u64).saturating_add((nnz as u64).saturating_mul(4))
}

/// Appends ` index:`, the index in decimal. The text (up to eight digits)
/// is put together in a register and appended as two 8-byte words, then cut
/// to its length: cheaper than copying a few bytes of variable length, and
/// no load waits on narrower stores to the same place.
#[inline]
fn push_index(out: &mut Vec<u8>, index: u64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let digits = index.checked_ilog10().unwrap_or(0) as usize + 1;
    if digits > 8 {
        // Beyond a hundred million features: rare enough for the plain way.
        out.push(b' ');
        out.extend_from_slice(itoa::Buffer::new().format(index).as_bytes());
        out.push(b':');
        return;
    }
    let pair = |p: u64| {
        let p = 2 * p as usize;
        u64::from(PAIRS[p]) | u64::from(PAIRS[p + 1]) << 8
    };
    // Four independent pairs of digits, the leading zeros shifted out,
    // between the space and the colon.
    let (high, low) = (index / 10_000, index % 10_000);
    let eight =
        pair(high / 100) | pair(high % 100) << 16 | pair(low / 100) << 32 | pair(low % 100) << 48;
    let word = u128::from(b' ')
        | u128::from(eight >> (8 * (8 - digits))) << 8
        | u128::from(b':') << (8 * (digits + 1));
    let start = out.len();
    out.extend_from_slice(&(word as u64).to_le_bytes());
    out.extend_from_slice(&((word >> 64) as u64).to_le_bytes());
    out.truncate(start + digits + 2);
}

/// Appends a LIBSVM line: the label, then `index:value` for every stored
/// entry (1-based indices). Returns its length without the newline.
pub fn libsvm_line<F: Real>(out: &mut Vec<u8>, label: &str, row: Row<'_, F>) -> usize {
    libsvm_line_based(out, label, row, IndexBase::One)
}

/// [`libsvm_line`] with indices counted from `base`.
pub fn libsvm_line_based<F: Real>(
    out: &mut Vec<u8>,
    label: &str,
    row: Row<'_, F>,
    base: IndexBase,
) -> usize {
    let start = out.len();
    let first = base.first();
    out.extend_from_slice(label.as_bytes());
    row.for_each(|k, v| {
        push_index(out, k as u64 + first);
        push_value(out, v);
    });
    let len = out.len() - start;
    out.push(b'\n');
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_written_in_decimal() {
        let mut powers: Vec<u64> = (0..20).map(|e| 10u64.pow(e)).collect();
        powers.extend((1..20).map(|e| 10u64.pow(e) - 1));
        powers.extend([0, 7, 42, 65_535, u64::from(u32::MAX), u64::MAX]);
        powers.extend((0..5000u64).map(|i| i * 48_271 % 199_999_991));
        let mut out = b"+1".to_vec();
        let mut want = "+1".to_owned();
        for k in powers {
            push_index(&mut out, k);
            want.push_str(&format!(" {k}:"));
        }
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }
}
