//! Writing LIBSVM lines: the label, then `index:value` for every stored
//! entry, 1-based.

use crate::data::matrix::Row;
use crate::data::message::quote;
use crate::data::number::push_value;
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

/// Appends ` index:`, the index in decimal. The text is made in a buffer
/// of fixed size and appended whole, then cut to its length: a fixed-size
/// copy, cheaper than copying a few bytes of variable length.
#[inline]
fn push_index(out: &mut Vec<u8>, mut index: u64) {
    let digits = index.checked_ilog10().unwrap_or(0) as usize + 1;
    let mut text = [0u8; 24];
    text[0] = b' ';
    for at in (1..=digits).rev() {
        text[at] = b'0' + (index % 10) as u8;
        index /= 10;
    }
    text[digits + 1] = b':';
    let start = out.len();
    out.extend_from_slice(&text);
    out.truncate(start + digits + 2);
}

/// Appends a LIBSVM line: the label, then `index:value` for every stored
/// entry (1-based indices). Returns its length without the newline.
pub fn libsvm_line<F: Real>(out: &mut Vec<u8>, label: &str, row: Row<'_, F>) -> usize {
    let start = out.len();
    out.extend_from_slice(label.as_bytes());
    row.for_each(|k, v| {
        push_index(out, k as u64 + 1);
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
        let mut out = b"+1".to_vec();
        let mut want = "+1".to_owned();
        for k in powers {
            push_index(&mut out, k);
            want.push_str(&format!(" {k}:"));
        }
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }
}
