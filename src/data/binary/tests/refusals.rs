//! One crafted bad file per rule of the reader, and the writer's refusals.

use super::*;

#[test]
fn wrong_magic_is_refused() {
    let mut b = good_dense();
    b[1] = b'X';
    let e = error_of(&b);
    assert!(
        e.starts_with("not a perceptron binary (.pbin) file: it starts with bytes [89 58 42"),
        "{e}"
    );
    assert!(error_of(b"").starts_with("not a perceptron binary"));
    assert!(error_of(b"1,2,3\n").starts_with("not a perceptron binary"));
}

#[test]
fn truncated_files_are_refused() {
    let b = good_csr();
    assert!(
        error_of(&b[..100])
            .starts_with("truncated: the file has 100 bytes, fewer than the 192-byte header")
    );
    // Cut inside the last section, and anywhere else past the header.
    for cut in [b.len() - 1, b.len() - 20, 300, 193] {
        let e = error_of(&b[..cut]);
        assert!(e.starts_with("truncated: the "), "{cut}: {e}");
        assert!(
            e.contains(&format!("but the file has only {cut} bytes")),
            "{e}"
        );
    }
}

#[test]
fn trailing_bytes_are_refused() {
    let mut b = good_dense();
    b.extend_from_slice(&[0; 3]);
    assert!(error_of(&b).starts_with("3 unexpected bytes after the last section"));
}

#[test]
fn versions_other_than_the_known_ones_are_refused() {
    let mut b = good_dense();
    put_u32(&mut b, 8, 2);
    assert_eq!(
        error_of(&b),
        "format version 2 is newer than this version of perceptron can read (version 1 and \
         older); upgrade perceptron to read it"
    );
    put_u32(&mut b, 8, 0);
    assert_eq!(error_of(&b), "invalid format version 0");
    let mut b = good_dense();
    put_u32(&mut b, 12, 256);
    assert!(error_of(&b).starts_with("header size 256 is wrong"));
}

#[test]
fn unknown_codes_and_reserved_bytes_are_refused() {
    let mut b = good_dense();
    put_u32(&mut b, 16, 2);
    assert_eq!(error_of(&b), "unknown layout code 2 (0 = dense, 1 = CSR)");
    let mut b = good_dense();
    put_u32(&mut b, 20, 2);
    assert_eq!(error_of(&b), "unknown value type code 2 (4 = f32, 8 = f64)");
    let mut b = good_dense();
    b[150] = 1;
    assert!(error_of(&b).starts_with("reserved header byte 150 is 0x01"));
}

#[test]
fn sizes_inconsistent_with_the_shape_are_refused() {
    // Dense: nnz must be rows * cols.
    let mut b = good_dense();
    put_u64(&mut b, NNZ, 15);
    assert!(error_of(&b).starts_with(
        "a dense file stores rows * cols = 4 * 4 = 16 values, but the header says nnz = 15"
    ));
    // A section length that does not fit the shape.
    let mut b = good_dense();
    put_u64(&mut b, COLS, 3);
    put_u64(&mut b, NNZ, 12);
    assert!(error_of(&b).starts_with(
        "the values section is 128 bytes, but rows = 4, cols = 3, nnz = 12 (dense f64) need 96"
    ));
    let mut b = good_csr();
    put_u64(&mut b, len(3), 16);
    assert!(error_of(&b).starts_with("the row-pointer section is 16 bytes"));
    // No rows, too many columns, no or too many classes.
    let mut b = good_dense();
    put_u64(&mut b, ROWS, 0);
    assert!(error_of(&b).starts_with("no data rows"));
    let mut b = good_csr();
    put_u64(&mut b, COLS, 1 << 31);
    assert!(error_of(&b).contains("feature columns is more than the supported"));
    let mut b = good_dense();
    put_u64(&mut b, CLASSES, 0);
    assert!(error_of(&b).starts_with("the header claims 0 label values"));
    put_u64(&mut b, CLASSES, 70000);
    assert!(error_of(&b).starts_with("the header claims 70000 label values"));
}

#[test]
fn huge_claims_in_a_small_file_fail_without_allocating() {
    // 10^15 rows in a file of about 1 KB: either the section lengths do not
    // fit the shape, or they run past the file's end; nothing is allocated
    // (allocating 4 PB would abort the test).
    let mut b = good_csr();
    assert!(b.len() < 1024);
    put_u64(&mut b, ROWS, 1_000_000_000_000_000);
    assert!(
        error_of(&b).starts_with("the class-id section is 16 bytes, but rows = 1000000000000000")
    );
    put_u64(&mut b, len(0), 4_000_000_000_000_000);
    put_u64(&mut b, len(3), 8_000_000_000_000_008);
    let e = error_of(&b);
    assert!(
        e.starts_with("truncated: the class-id section ends at byte 4000000000000192"),
        "{e}"
    );
    // Sizes whose products overflow.
    let mut b = good_dense();
    put_u64(&mut b, ROWS, u64::MAX / 2);
    put_u64(&mut b, COLS, 5);
    assert!(error_of(&b).starts_with("the header's sizes overflow: rows * cols is too large"));
    let mut b = good_csr();
    put_u64(&mut b, ROWS, u64::MAX);
    assert!(
        error_of(&b).starts_with("the header's sizes overflow: the class-id section is too large")
    );
    let mut b = good_csr();
    put_u64(&mut b, len(4), 1 << 40);
    assert!(
        error_of(&b).starts_with("the label table is 1099511627776 bytes, more than the limit")
    );
}

#[test]
fn misaligned_overlapping_and_misplaced_sections_are_refused() {
    let mut b = good_csr();
    let v = get_u64(&b, off(1));
    put_u64(&mut b, off(1), v + 8);
    assert_eq!(
        error_of(&b),
        format!(
            "the values section starts at byte {}, not a multiple of 64",
            v + 8
        )
    );
    let mut b = good_csr();
    put_u64(&mut b, off(2), v);
    assert_eq!(error_of(&b), "the values and indices sections overlap");
    let mut b = good_csr();
    put_u64(&mut b, off(0), 128);
    assert!(
        error_of(&b)
            .starts_with("the class-id section starts at byte 128, inside the 192-byte header")
    );
    let mut b = good_dense();
    put_u64(&mut b, off(2), 64);
    assert!(error_of(&b).starts_with("the indices section is empty but has offset 64"));
}

/// Offsets of a section's first byte in a good file.
fn at(b: &[u8], section: usize) -> usize {
    get_u64(b, off(section)) as usize
}

#[test]
fn broken_row_pointers_are_refused() {
    // SVM rows hold 3, 1, 0, 4 entries: row_ptr = 0 3 4 4 8.
    let b = good_csr();
    let rp = at(&b, 3);
    let mut c = b.clone();
    put_u64(&mut c, rp + 8 * 2, 2);
    assert_eq!(
        error_of(&c),
        "row 2: row_ptr decreases from 3 to 2; it must not decrease"
    );
    let mut c = b.clone();
    put_u64(&mut c, rp + 8 * 4, 7);
    assert_eq!(
        error_of(&c),
        "row_ptr ends at 7, but nnz is 8; the last entry must equal nnz"
    );
    let mut c = b.clone();
    put_u64(&mut c, rp, 1);
    assert_eq!(error_of(&c), "row_ptr[0] is 1, not 0");
    let mut c = b.clone();
    put_u64(&mut c, rp + 8 * 3, u64::MAX);
    assert!(error_of(&c).starts_with("row 4: row_ptr decreases"));
}

#[test]
fn bad_indices_are_refused() {
    let b = good_csr();
    let ix = at(&b, 2);
    let mut c = b.clone();
    put_u32(&mut c, ix + 4 * 2, 7); // row 1: 0 3 7 with cols = 7
    assert_eq!(
        error_of(&c),
        "row 1: stored index 7 (0-based) is not below cols = 7"
    );
    let mut c = b.clone();
    put_u32(&mut c, ix + 4, 0); // row 1: 0 0 6
    assert_eq!(
        error_of(&c),
        "row 1: stored index 0 follows 0; indices must strictly increase within a row"
    );
    let mut c = b.clone();
    put_u32(&mut c, ix + 4 * 6, 1); // row 4: 0 1 1 6
    assert!(error_of(&c).starts_with("row 4: stored index 1 follows 1"));
}

#[test]
fn non_finite_values_are_refused() {
    for (v, shown) in [
        (f64::NAN, "NaN"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
    ] {
        let mut b = good_dense();
        let vals = at(&b, 1);
        b[vals + 8 * 6..vals + 8 * 7].copy_from_slice(&v.to_le_bytes());
        assert_eq!(
            error_of(&b),
            format!("row 2, feature 3: value {shown} is not finite; values must be finite numbers")
        );
        let mut b = good_csr();
        let vals = at(&b, 1);
        b[vals + 8 * 5..vals + 8 * 6].copy_from_slice(&v.to_le_bytes());
        assert!(error_of(&b).starts_with("row 4, feature 2: value"));
        // Also when converting to the other precision.
        let (_d, r) = read_bytes::<f32>(&b);
        assert!(
            r.unwrap_err()
                .to_string()
                .contains("row 4, feature 2: value")
        );
    }
}

#[test]
fn bad_class_ids_and_label_tables_are_refused() {
    let b = good_dense();
    let ids = at(&b, 0);
    let mut c = b.clone();
    put_u32(&mut c, ids + 4 * 2, 2);
    assert_eq!(
        error_of(&c),
        "row 3: class id 2 is out of range: the label table has 2 entries"
    );
    let mut c = b.clone();
    put_u32(&mut c, ids + 4, 0);
    put_u32(&mut c, ids + 12, 0);
    assert_eq!(
        error_of(&c),
        "label table entry 1 (\"other\") is used by no row"
    );

    // Table: [6]"setosa" [5]"other".
    let tab = at(&b, 4);
    let mut c = b.clone();
    c[tab + 4] = 0xff;
    assert_eq!(
        error_of(&c),
        "label table entry 0 is not valid UTF-8 (at byte 0)"
    );
    let mut c = b.clone();
    put_u32(&mut c, tab, 0);
    assert!(error_of(&c).starts_with("label table entry 0 is 0 bytes long"));
    let mut c = b.clone();
    put_u32(&mut c, tab + 10, 6);
    assert_eq!(
        error_of(&c),
        "label table entry 1 (6 bytes) runs past the table's end"
    );
    let mut c = b.clone();
    put_u32(&mut c, tab + 10, 4);
    assert_eq!(
        error_of(&c),
        "the label table has 1 bytes after its 2 entries"
    );
    let mut c = b.clone();
    put_u64(&mut c, CLASSES, 3);
    assert_eq!(error_of(&c), "the label table ends inside entry 2 of 3");
    put_u64(&mut c, CLASSES, 4);
    assert!(error_of(&c).starts_with("the label table is 19 bytes, too short for 4 labels"));
    let mut c = b.clone();
    put_u64(&mut c, CLASSES, 1);
    assert!(error_of(&c).starts_with("the label table has 9 bytes after its 1 entries"));

    // Two spellings of one label.
    let raw = libsvm::parse::<f64, _>("1 1:1\n2 1:2\n".as_bytes(), Path::new("t.svm")).unwrap();
    let mut c = to_bytes(&raw);
    let tab = at(&c, 4);
    assert_eq!(&c[tab + 4..tab + 5], b"1");
    assert_eq!(&c[tab + 9..tab + 10], b"2");
    c[tab + 9] = b'1';
    assert_eq!(
        error_of(&c),
        "label table entries 0 and 1 are the same label"
    );
}

#[test]
fn the_writer_refuses_incomplete_or_mismatched_data() {
    let mut w = Writer::new(
        io::Cursor::new(Vec::new()),
        Layout::Csr,
        Precision::F32,
        2,
        3,
        2,
    )
    .unwrap();
    w.class_ids(&[0, 0]).unwrap();
    assert!(
        w.values(&[1.0f64])
            .unwrap_err()
            .to_string()
            .contains("f64 values given for a file planned as f32")
    );
    assert!(
        w.values(&[f32::NAN])
            .unwrap_err()
            .to_string()
            .contains("not finite")
    );
    w.values(&[1.0f32, 2.0]).unwrap();
    assert!(
        w.values(&[3.0f32])
            .unwrap_err()
            .to_string()
            .contains("more data than planned")
    );
    w.indices(&[0, 2]).unwrap();
    assert!(
        w.row_ends([1, 0])
            .unwrap_err()
            .to_string()
            .contains("decreases")
    );
    let e = w.finish(&["a"]).unwrap_err().to_string();
    assert!(
        e.contains("the row-pointer section holds 8 of its 24 bytes"),
        "{e}"
    );

    let mut w = Writer::new(
        io::Cursor::new(Vec::new()),
        Layout::Dense,
        Precision::F64,
        1,
        1,
        1,
    )
    .unwrap();
    w.class_ids(&[0]).unwrap();
    w.values(&[1.0f64]).unwrap();
    let long = "x".repeat(MAX_LABEL_BYTES as usize + 1);
    assert!(
        w.finish(&[&long])
            .unwrap_err()
            .to_string()
            .contains("labels are 1 to 65536 bytes")
    );
    assert!(
        Writer::new(
            io::Cursor::new(Vec::new()),
            Layout::Dense,
            Precision::F64,
            0,
            1,
            0
        )
        .is_err()
    );
    assert!(
        Writer::new(
            io::Cursor::new(Vec::new()),
            Layout::Dense,
            Precision::F64,
            2,
            2,
            3
        )
        .is_err()
    );
}

#[test]
fn reading_a_directory_or_missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = read::<f32>(dir.path()).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e:?}");
    let e = read::<f32>(&dir.path().join("none.pbin")).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e:?}");
}
