//! Writing CSV lines: the label first (quoted when needed), then every
//! feature, zeros included.

use crate::data::lines::MAX_LINE_BYTES;
use crate::data::matrix::Row;
use crate::data::message::quote;
use crate::data::number::push_value;
use crate::float::Real;

/// A label as a CSV field: quoted when it holds a delimiter, a quote, a
/// leading `#` or U+FEFF, or surrounding spaces. (A bare U+FEFF at the start
/// of the file would be read back as a byte-order mark and dropped.)
pub fn csv_label(label: &str) -> std::result::Result<String, String> {
    if label.contains(['\n', '\r']) {
        return Err(format!(
            "label {} holds a line break and cannot be written as CSV",
            quote(label)
        ));
    }
    let plain = !label.is_empty()
        && !label.contains([',', ';', '\t', '"'])
        && !label.starts_with(['#', '\u{feff}'])
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
    csv_line_in(out, label, row, cols, 0, b',')
}

/// Appends a CSV line in a file's own layout: the `cols` features
/// separated by `delimiter`, with the label as field `label_at` (0-based,
/// at most `cols`). Returns its length without the newline.
pub fn csv_line_in<F: Real>(
    out: &mut Vec<u8>,
    label: &str,
    row: Row<'_, F>,
    cols: usize,
    label_at: usize,
    delimiter: u8,
) -> usize {
    let start = out.len();
    // Field k of the line: the label at `label_at`, features elsewhere.
    let mut field = 0usize;
    let mut put = |out: &mut Vec<u8>, value: Option<F>| {
        if field == label_at {
            if field > 0 {
                out.push(delimiter);
            }
            out.extend_from_slice(label.as_bytes());
            field += 1;
        }
        if field > 0 {
            out.push(delimiter);
        }
        match value {
            Some(v) => push_value(out, v),
            None => out.push(b'0'),
        }
        field += 1;
    };
    // A line past the readers' limit is refused by the caller: stop
    // building it there, so a row of 10^8 features does not first take
    // gigabytes.
    let over = |out: &Vec<u8>| out.len() - start > MAX_LINE_BYTES;
    match row {
        Row::Dense(x) => {
            for &v in x {
                put(out, Some(v));
                if over(out) {
                    return out.len() - start;
                }
            }
        }
        Row::Sparse(idx, val) => {
            let mut next = 0usize;
            for (&k, &v) in idx.iter().zip(val) {
                for _ in next..k as usize {
                    put(out, None);
                    if over(out) {
                        return out.len() - start;
                    }
                }
                put(out, Some(v));
                next = k as usize + 1;
            }
            for _ in next..cols {
                put(out, None);
                if over(out) {
                    return out.len() - start;
                }
            }
        }
    }
    if field == label_at {
        // The label is the last field.
        if field > 0 {
            out.push(delimiter);
        }
        out.extend_from_slice(label.as_bytes());
    }
    let len = out.len() - start;
    out.push(b'\n');
    len
}

/// Makes the first line of CSV written without a header read back as data.
/// A text label followed by the features 0, 1, 2, ... reads as a header of
/// numbered names (pandas writes `y,0,1,2,...`), so that line's integral
/// features get a decimal point (`0.0`: the same values). `line[start..]`
/// is the line, its newline included; `label_at` is the label's field.
pub fn first_line_as_data(line: &mut Vec<u8>, start: usize, delimiter: u8, label_at: usize) {
    let Some(text) = line
        .get(start..)
        .and_then(|l| std::str::from_utf8(l).ok())
        .map(|l| l.trim_end_matches('\n'))
    else {
        return;
    };
    // The fields are walked, never collected: a line can have millions (a
    // sparse row written densely), and holding them took 50 bytes each.
    let fields = || super::fields::Fields::new(text, delimiter);
    if fields().any(|f| f.is_err()) {
        return;
    }
    let label = fields().nth(label_at).and_then(|f| f.ok());
    let others = fields()
        .enumerate()
        .filter_map(|(k, f)| f.ok().filter(|f| k != label_at && !f.text.is_empty()))
        .map(|f| f.text);
    if !super::sniff::looks_like_header(label.as_ref().map(|f| f.text.as_ref()), others) {
        return;
    }
    let integral = |t: &str| {
        let digits = t.strip_prefix('-').unwrap_or(t);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    // One pass, appending ".0" after each integral feature: a splice per
    // field would move the rest of the line each time.
    let mut out = Vec::with_capacity(line.len() + line.len() / 2);
    out.extend_from_slice(&line[..start]);
    let mut copied = start;
    for (k, f) in fields().enumerate() {
        let Ok(f) = f else { return };
        if k != label_at && integral(&f.text) {
            let end = start + f.start + f.text.len();
            out.extend_from_slice(&line[copied..end]);
            out.extend_from_slice(b".0");
            copied = end;
        }
    }
    out.extend_from_slice(&line[copied..]);
    *line = out;
}

/// Appends a header line of `names`, quoted as labels are, separated by
/// `delimiter`. Returns its length without the newline.
pub fn csv_header(
    out: &mut Vec<u8>,
    names: &[String],
    delimiter: u8,
) -> std::result::Result<usize, String> {
    let start = out.len();
    for (k, name) in names.iter().enumerate() {
        if k > 0 {
            out.push(delimiter);
        }
        out.extend_from_slice(csv_label(name)?.as_bytes());
    }
    let len = out.len() - start;
    out.push(b'\n');
    Ok(len)
}
