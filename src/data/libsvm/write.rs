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

/// Appends a LIBSVM line: the label, then `index:value` for every stored
/// entry (1-based indices). Returns its length without the newline.
pub fn libsvm_line<F: Real>(out: &mut Vec<u8>, label: &str, row: Row<'_, F>) -> usize {
    let start = out.len();
    out.extend_from_slice(label.as_bytes());
    let mut index = itoa::Buffer::new();
    row.for_each(|k, v| {
        out.push(b' ');
        out.extend_from_slice(index.format(k + 1).as_bytes());
        out.push(b':');
        push_value(out, v);
    });
    let len = out.len() - start;
    out.push(b'\n');
    len
}
