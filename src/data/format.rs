//! Which format a data file is in: the `.pbin` magic bytes, else the file
//! name, else its first data line, each format saying what is its own.

use std::path::Path;

use crate::error::{Error, Result};

use super::message::{NO_DATA_ROWS, quote};
use super::options::Format;
use super::source::HEAD_BYTES;
use super::{binary, csv, libsvm, npy};

/// Picks the format from the magic bytes of a binary file, else the file
/// name (`.gz` stripped first), or else from the first data line of `head`.
pub fn infer_format(path: &Path, head: &[u8]) -> Result<Format> {
    // No text file starts with these bytes, so they win over the name.
    if binary::is_binary(head) {
        return Ok(Format::Binary);
    }
    if npy::is_npy(head) {
        return Ok(Format::Npy);
    }
    if let Some(format) = format_from_name(path) {
        return Ok(format);
    }
    let complete = head.len() < HEAD_BYTES;
    let mut lines = head.split(|&b| b == b'\n').peekable();
    while let Some(raw) = lines.next() {
        // Only the last piece can lack its newline; when the head was cut
        // short of the file's end, that piece may end mid-token.
        let cut = lines.peek().is_none() && !complete;
        let line = String::from_utf8_lossy(raw);
        let line = line.trim_start_matches('\u{feff}').trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(format) = format_from_line(line, cut) {
            return Ok(format);
        }
        let spaced = line.contains([' ', '\t']);
        return Err(Error::data(
            path,
            format!(
                "cannot tell the format from the file name or from its first data line {}; \
                 use --format csv or --format libsvm{}",
                quote(line),
                if spaced {
                    " (or --delimiter whitespace for columns separated by spaces, as \
                     numpy.savetxt writes them)"
                } else {
                    ""
                }
            ),
        ));
    }
    if complete {
        Err(Error::data(path, NO_DATA_ROWS))
    } else {
        Err(Error::data(
            path,
            "cannot tell the format: the first bytes hold no data line; \
             use --format csv or --format libsvm",
        ))
    }
}

/// The format a file name says (`.gz` stripped first): `.csv .tsv`, `.svm
/// .libsvm .svmlight` or `.pbin`.
pub(crate) fn format_from_name(path: &Path) -> Option<Format> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let ext = name.rsplit_once('.').map(|(_, e)| e)?;
    if csv::EXTENSIONS.contains(&ext) {
        Some(Format::Csv)
    } else if libsvm::EXTENSIONS.contains(&ext) {
        Some(Format::Libsvm)
    } else if ext == binary::EXTENSION {
        Some(Format::Binary)
    } else if ext == npy::EXTENSION {
        Some(Format::Npy)
    } else {
        None
    }
}

/// The format a data line (trimmed, not a comment) looks like: LIBSVM when
/// it is a label and `index:value` tokens, CSV when it holds `,` `;` or a
/// tab. `cut` says the line may end mid-token.
pub(crate) fn format_from_line(line: &str, cut: bool) -> Option<Format> {
    if libsvm::looks_like_libsvm(line, cut) {
        Some(Format::Libsvm)
    } else if csv::looks_like_csv(line) {
        Some(Format::Csv)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn format_follows_the_extension_without_gz() {
        let cases = [
            ("a.csv", Format::Csv),
            ("a.TSV", Format::Csv),
            ("a.csv.gz", Format::Csv),
            ("a.svm", Format::Libsvm),
            ("dir.csv/a.libsvm", Format::Libsvm),
            ("a.svmlight.gz", Format::Libsvm),
        ];
        for (name, want) in cases {
            // The content says otherwise: the name wins.
            let head: &[u8] = if want == Format::Csv {
                b"1 1:2\n"
            } else {
                b"1,2\n"
            };
            assert_eq!(infer_format(Path::new(name), head).unwrap(), want, "{name}");
        }
    }

    #[test]
    fn format_follows_the_content_otherwise() {
        let f = |head: &str| infer_format(Path::new("d/data.txt.gz"), head.as_bytes());
        assert_eq!(f("# c\n\n+1 1:0.5 3:-1 \n").unwrap(), Format::Libsvm);
        assert_eq!(f("1\tqid:3\t2:1e-3 # note\n").unwrap(), Format::Libsvm);
        assert_eq!(f("1,2,3\n").unwrap(), Format::Csv);
        assert_eq!(f("  \r\n1;2\r\n").unwrap(), Format::Csv);
        assert_eq!(f("y\tx\n1\t2\n").unwrap(), Format::Csv);
        assert_eq!(f("1 2:3,4 5\n").unwrap(), Format::Csv);
        assert_eq!(f("\u{feff}1 1:2\n").unwrap(), Format::Libsvm);
        // Unlabeled LIBSVM: features alone.
        assert_eq!(f("1:0.5 3:2\n").unwrap(), Format::Libsvm);
        assert_eq!(f("a:1,b:2\n").unwrap(), Format::Csv);
        let e = f("\n1 2 3\n").unwrap_err().to_string();
        assert_eq!(
            e,
            "d/data.txt.gz: cannot tell the format from the file name or from its first data \
             line \"1 2 3\"; use --format csv or --format libsvm (or --delimiter whitespace for \
             columns separated by spaces, as numpy.savetxt writes them)"
        );
        let e = f("").unwrap_err().to_string();
        assert_eq!(e, format!("d/data.txt.gz: {NO_DATA_ROWS}"));
        let e = f("# only\n\n# comments\n").unwrap_err().to_string();
        assert!(e.contains("no data rows"), "{e}");
        let e = f(&"#".repeat(HEAD_BYTES)).unwrap_err().to_string();
        assert!(e.contains("--format csv or --format libsvm"), "{e}");
        // A head cut mid-token still reads as LIBSVM.
        let mut long = "1".to_owned();
        while long.len() < HEAD_BYTES {
            long.push_str(&format!(" {}:1", long.len()));
        }
        long.truncate(HEAD_BYTES);
        long.pop();
        long.push(':');
        assert_eq!(f(&long).unwrap(), Format::Libsvm);
    }
}
