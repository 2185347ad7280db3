//! Writing CSV lines: the label first (quoted when needed), then every
//! feature, zeros included.

use crate::data::matrix::Row;
use crate::data::message::quote;
use crate::data::number::push_value;
use crate::float::Real;

/// A label as a CSV field: quoted when it holds a delimiter, a quote, a
/// leading `#` or surrounding spaces.
pub fn csv_label(label: &str) -> std::result::Result<String, String> {
    if label.contains(['\n', '\r']) {
        return Err(format!(
            "label {} holds a line break and cannot be written as CSV",
            quote(label)
        ));
    }
    let plain = !label.is_empty()
        && !label.contains([',', ';', '\t', '"'])
        && !label.starts_with('#')
        && label.trim() == label;
    if plain {
        Ok(label.to_owned())
    } else {
        Ok(format!("\"{}\"", label.replace('"', "\"\"")))
    }
}

/// The shortest CSV line of `cols` features after a `label_bytes` label:
/// every feature is written, each with its comma.
pub fn shortest_csv_line(label_bytes: usize, cols: usize) -> u64 {
    (label_bytes as u64).saturating_add((cols as u64).saturating_mul(2))
}

/// Appends a CSV line: the label, then all `cols` features (zeros for
/// entries a sparse row does not store). Returns its length without the
/// newline.
pub fn csv_line<F: Real>(out: &mut Vec<u8>, label: &str, row: Row<'_, F>, cols: usize) -> usize {
    let start = out.len();
    out.extend_from_slice(label.as_bytes());
    match row {
        Row::Dense(x) => {
            for &v in x {
                out.push(b',');
                push_value(out, v);
            }
        }
        Row::Sparse(idx, val) => {
            let mut next = 0usize;
            for (&k, &v) in idx.iter().zip(val) {
                for _ in next..k as usize {
                    out.extend_from_slice(b",0");
                }
                out.push(b',');
                push_value(out, v);
                next = k as usize + 1;
            }
            for _ in next..cols {
                out.extend_from_slice(b",0");
            }
        }
    }
    let len = out.len() - start;
    out.push(b'\n');
    len
}
