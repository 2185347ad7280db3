//! Decoding a `.pbin` header and checking it against the file's length,
//! before anything sized by it is allocated.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::data::labels::MAX_DISTINCT_LABELS;
use crate::data::matrix::MAX_FEATURE_INDEX;
use crate::data::message::NO_DATA_ROWS;
use crate::data::source;
use crate::error::{Error, Result};
use crate::float::Precision;

use super::{
    ALIGN, HEADER_BYTES, Header, Layout, MAX_TABLE_BYTES, SECTION_NAMES, Section, TABLE, VERSION,
    is_binary, value_bytes,
};

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// Decodes and checks a header against the file's length; the message says
/// what is wrong. Allocates nothing sized by the header.
pub fn decode_header(head: &[u8], file_len: u64) -> std::result::Result<Header, String> {
    let header = decode_fields(head, file_len)?;
    check_sizes(&header)?;
    check_placement(&header, file_len)?;
    Ok(header)
}

/// The header's fields, read after its magic bytes, version, size, codes
/// and reserved bytes are checked.
fn decode_fields(head: &[u8], file_len: u64) -> std::result::Result<Header, String> {
    if !is_binary(head) {
        let shown: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return Err(format!(
            "not a perceptron binary (.pbin) file: it starts with bytes [{}], not the magic \
             bytes [89 50 42 4e 0d 0a 1a 0a]",
            shown.join(" ")
        ));
    }
    if (head.len() as u64) < HEADER_BYTES || file_len < HEADER_BYTES {
        return Err(format!(
            "truncated: the file has {file_len} bytes, fewer than the {HEADER_BYTES}-byte header"
        ));
    }
    let version = u32_at(head, 8);
    if version == 0 {
        return Err("invalid format version 0".into());
    }
    if version > VERSION {
        return Err(format!(
            "format version {version} is newer than this version of perceptron can read \
             (version {VERSION} and older); upgrade perceptron to read it"
        ));
    }
    let header_bytes = u32_at(head, 12);
    if u64::from(header_bytes) != HEADER_BYTES {
        return Err(format!(
            "header size {header_bytes} is wrong for format version {version} (expected \
             {HEADER_BYTES})"
        ));
    }
    let layout = match u32_at(head, 16) {
        0 => Layout::Dense,
        1 => Layout::Csr,
        other => {
            return Err(format!("unknown layout code {other} (0 = dense, 1 = CSR)"));
        }
    };
    let precision = match u32_at(head, 20) {
        4 => Precision::F32,
        8 => Precision::F64,
        other => {
            return Err(format!(
                "unknown value type code {other} (4 = f32, 8 = f64)"
            ));
        }
    };
    let (rows, cols, nnz, classes) = (
        u64_at(head, 24),
        u64_at(head, 32),
        u64_at(head, 40),
        u64_at(head, 48),
    );
    let mut sections = [Section::default(); 5];
    for (k, s) in sections.iter_mut().enumerate() {
        s.offset = u64_at(head, 56 + 16 * k);
        s.len = u64_at(head, 64 + 16 * k);
    }
    if let Some(at) = (136..HEADER_BYTES as usize).find(|&i| head[i] != 0) {
        return Err(format!(
            "reserved header byte {at} is {:#04x}, not zero; the file is corrupt or from an \
             incompatible writer",
            head[at]
        ));
    }
    Ok(Header {
        version,
        layout,
        precision,
        rows,
        cols,
        nnz,
        classes,
        sections,
    })
}

/// The counts are within the limits and agree with each other and with
/// every section's length.
fn check_sizes(h: &Header) -> std::result::Result<(), String> {
    let Header {
        layout,
        precision,
        rows,
        cols,
        nnz,
        classes,
        sections,
        ..
    } = *h;
    if rows == 0 {
        return Err(NO_DATA_ROWS.into());
    }
    if cols > MAX_FEATURE_INDEX {
        return Err(format!(
            "{cols} feature columns is more than the supported {MAX_FEATURE_INDEX}"
        ));
    }
    if classes == 0 || classes > MAX_DISTINCT_LABELS as u64 {
        return Err(format!(
            "the header claims {classes} label values; expected 1 to {MAX_DISTINCT_LABELS}"
        ));
    }
    let overflow = |what: &str| format!("the header's sizes overflow: {what} is too large");
    if layout == Layout::Dense {
        let cells = rows
            .checked_mul(cols)
            .ok_or_else(|| overflow("rows * cols"))?;
        if nnz != cells {
            return Err(format!(
                "a dense file stores rows * cols = {rows} * {cols} = {cells} values, but the \
                 header says nnz = {nnz}"
            ));
        }
    }
    let vb = value_bytes(precision);
    let csr = layout == Layout::Csr;
    let expected: [Option<u64>; 4] = [
        rows.checked_mul(4),
        nnz.checked_mul(vb),
        if csr { nnz.checked_mul(4) } else { Some(0) },
        if csr {
            rows.checked_add(1).and_then(|r| r.checked_mul(8))
        } else {
            Some(0)
        },
    ];
    for (k, want) in expected.iter().enumerate() {
        let want = want.ok_or_else(|| overflow(&format!("the {} section", SECTION_NAMES[k])))?;
        if sections[k].len != want {
            return Err(format!(
                "the {} section is {} bytes, but rows = {rows}, cols = {cols}, nnz = {nnz} \
                 ({} {}) need {want}",
                SECTION_NAMES[k],
                sections[k].len,
                layout.name(),
                precision
            ));
        }
    }
    let table = sections[TABLE].len;
    if table > MAX_TABLE_BYTES {
        return Err(format!(
            "the label table is {table} bytes, more than the limit of {MAX_TABLE_BYTES}"
        ));
    }
    if table < classes.saturating_mul(5) {
        return Err(format!(
            "the label table is {table} bytes, too short for {classes} labels"
        ));
    }
    Ok(())
}

/// Every section is aligned, past the header, within the file and apart
/// from the others, and nothing follows the last.
fn check_placement(h: &Header, file_len: u64) -> std::result::Result<(), String> {
    let sections = &h.sections;
    let overflow = |what: &str| format!("the header's sizes overflow: {what} is too large");
    let mut end = HEADER_BYTES;
    for (k, s) in sections.iter().enumerate() {
        let name = SECTION_NAMES[k];
        if s.offset % ALIGN != 0 {
            return Err(format!(
                "the {name} section starts at byte {}, not a multiple of {ALIGN}",
                s.offset
            ));
        }
        if s.len == 0 {
            if s.offset != 0 {
                return Err(format!(
                    "the {name} section is empty but has offset {} (empty sections have \
                     offset 0)",
                    s.offset
                ));
            }
            continue;
        }
        if s.offset < HEADER_BYTES {
            return Err(format!(
                "the {name} section starts at byte {}, inside the {HEADER_BYTES}-byte header",
                s.offset
            ));
        }
        let section_end = s
            .offset
            .checked_add(s.len)
            .ok_or_else(|| overflow(&format!("the {name} section's end")))?;
        if section_end > file_len {
            return Err(format!(
                "truncated: the {name} section ends at byte {section_end} but the file has \
                 only {file_len} bytes"
            ));
        }
        for (j, t) in sections.iter().enumerate().take(k) {
            if t.len > 0 && s.offset < t.end() && t.offset < section_end {
                return Err(format!(
                    "the {} and {name} sections overlap",
                    SECTION_NAMES[j]
                ));
            }
        }
        end = end.max(section_end);
    }
    if file_len > end {
        return Err(format!(
            "{} unexpected bytes after the last section (which ends at byte {end}); the file \
             is corrupt",
            file_len - end
        ));
    }
    Ok(())
}

/// Reads the header of a `.pbin` file.
pub fn read_header(path: &Path) -> Result<Header> {
    open_checked(path).map(|(_, h, _)| h)
}

/// Opens a `.pbin` file and reads its header, checked against the file's
/// length; also returns that length.
pub(crate) fn open_checked(path: &Path) -> Result<(File, Header, u64)> {
    let (mut file, meta) = source::open_file(path)?;
    let mut head = Vec::with_capacity(HEADER_BYTES as usize);
    Read::by_ref(&mut file)
        .take(HEADER_BYTES)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, "cannot read", e))?;
    let h = decode_header(&head, meta.len()).map_err(|m| Error::data(path, m))?;
    Ok((file, h, meta.len()))
}
