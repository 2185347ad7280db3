//! Pieces of the readers' messages: a value quoted, the character column of
//! a byte offset, where a read stopped, and the wording several formats share.

use std::io;

/// The message for a file without a single data row.
pub(crate) const NO_DATA_ROWS: &str =
    "no data rows: the file is empty or holds only comments and blank lines";

/// Adds where reading stopped to a read error: `lines` complete lines were
/// read before it (nothing is added before the first).
pub(crate) fn after_lines(e: io::Error, lines: u64) -> io::Error {
    if lines == 0 {
        e
    } else {
        io::Error::new(e.kind(), format!("{e}, after line {lines}"))
    }
}

/// Number of characters in UTF-8 bytes (continuation bytes not counted).
pub(crate) fn count_chars(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b & 0xc0 != 0x80).count() as u64
}

/// The 1-based character column at byte offset `at` of `line`.
pub(crate) fn column_at(line: &str, at: usize) -> u64 {
    let at = at.min(line.len());
    count_chars(&line.as_bytes()[..at]).saturating_add(1)
}

/// Quotes a value for a message, escaping control characters and cutting
/// very long values short.
pub(crate) fn quote(text: &str) -> String {
    const MAX_CHARS: usize = 60;
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
        None => format!("{text:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn quotes_escape_and_cut_long_values() {
        assert_eq!(quote("a\"b\t"), "\"a\\\"b\\t\"");
        let long = "é".repeat(100);
        assert_eq!(quote(&long), format!("\"{}\"...", "é".repeat(60)));
        assert_eq!(column_at("éé,x", 5), 4);
        assert_eq!(column_at("ab", 99), 3);
    }
}
