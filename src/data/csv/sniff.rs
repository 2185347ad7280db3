//! What marks CSV text: its extensions, the delimiter a line uses, whether
//! the first line is a header, and which lines are skipped.

use crate::data::options::HeaderMode;

use super::fields::Field;

/// File extensions (`.gz` stripped, lowercase) that name CSV files.
pub(crate) const EXTENSIONS: [&str; 2] = ["csv", "tsv"];

/// The delimiters detected, in tie-breaking order.
const DELIMITERS: [u8; 3] = [b',', b';', b'\t'];

/// Blank lines and comments (`#` first, after spaces) hold no data.
pub(crate) fn is_skipped(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Whether a data line (trimmed, not a comment) looks like CSV: it holds
/// `,` `;` or a tab.
pub(crate) fn looks_like_csv(line: &str) -> bool {
    line.contains([',', ';', '\t'])
}

/// Whether the first line is a header under `mode`: with `Auto`, when none
/// of its non-empty fields other than the label is a number, and there is at
/// least one. One text field among numbers is rather a typo in the first
/// data row, which must be an error, not a row silently skipped. A line
/// whose label is text and whose other fields count 0, 1, 2, ..., at least
/// [`NUMBERED_NAMES`] of them, is a header too: pandas names a frame's
/// columns so (`y,0,1,2,...`). Counting from 1 is not taken for names:
/// `x,1,2,3,4` is as likely a row of small counts.
pub(crate) fn header_by_content(
    mode: HeaderMode,
    fields: &[Field<'_>],
    label: Option<usize>,
) -> bool {
    match mode {
        HeaderMode::Present => true,
        HeaderMode::Absent => false,
        HeaderMode::Auto => {
            let others = fields
                .iter()
                .enumerate()
                .filter(|(k, f)| Some(*k) != label && !f.text.is_empty())
                .map(|(_, f)| f.text.as_ref());
            let label = label.and_then(|k| fields.get(k)).map(|f| f.text.as_ref());
            looks_like_header(label, others)
        }
    }
}

/// Whether a first line whose label field is `label` and whose other
/// non-empty fields are `others` (in order) is a header: none of them is a
/// number, or they are the integers 0, 1, 2, ... written plainly after a label that
/// is text, at least [`NUMBERED_NAMES`] of them. Reads
/// `others` once and stops as soon as both are ruled out, so a line of
/// millions of fields is decided without holding them.
pub(crate) fn looks_like_header<S: AsRef<str>>(
    label: Option<&str>,
    others: impl Iterator<Item = S>,
) -> bool {
    let text_label = label.is_some_and(|l| !l.is_empty() && l.parse::<f64>().is_err());
    let (mut count, mut none_numeric, mut numbered) = (0usize, true, text_label);
    for t in others {
        let t = t.as_ref();
        none_numeric = none_numeric && t.parse::<f64>().is_err();
        numbered = numbered && t == count.to_string();
        count += 1;
        if !none_numeric && !numbered {
            return false;
        }
    }
    count > 0 && (none_numeric || (numbered && count >= NUMBERED_NAMES))
}

/// Fewest numbered column names that make a header of a line whose label is
/// text: `cat,0,1` may well be data, `y,0,1,2` hardly.
pub(crate) const NUMBERED_NAMES: usize = 3;

/// The candidate delimiter occurring most often outside quotes (ties go to
/// `,` then `;` then tab); `,` when none occurs, which leaves a single field.
pub(crate) fn detect_delimiter(line: &str) -> u8 {
    let mut counts = [0usize; DELIMITERS.len()];
    let mut quoted = false;
    for b in line.bytes() {
        if b == b'"' {
            quoted = !quoted;
        } else if !quoted {
            for (c, &d) in counts.iter_mut().zip(&DELIMITERS) {
                if b == d {
                    *c += 1;
                }
            }
        }
    }
    let mut best = 0;
    for k in 1..DELIMITERS.len() {
        if counts[k] > counts[best] {
            best = k;
        }
    }
    DELIMITERS[best]
}
