//! Reading large files in parallel, every corruption without a panic,
//! reading from bytes, and memory mapping.

use super::*;
use crate::data::matrix::DenseMatrix;
use crate::data::options::Format;
use crate::data::source::mmap_allowed_by;

#[test]
fn large_sections_read_in_parallel_pieces_round_trip() {
    // Over 16 MiB of values, so the reader splits them across threads; the
    // pieces must land in order.
    let (rows, cols) = (70_001, 64);
    let values: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.25 - 3.0).collect();
    let mut table = LabelTable::default();
    let class_ids: Vec<u32> = (0..rows)
        .map(|i| table.intern(if i % 3 == 0 { "a" } else { "b" }, 0).unwrap())
        .collect();
    let raw = RawData {
        features: Features::Dense(DenseMatrix {
            rows,
            cols,
            values: values.into(),
        }),
        class_ids,
        table,
        format: Format::Csv,
        csv: None,
        libsvm: None,
    };
    let bytes = to_bytes(&raw);
    assert!(bytes.len() > 17 << 20);
    let (_d, back) = read_bytes::<f32>(&bytes);
    assert_same(&raw, &back.unwrap());
    let (_d, wide) = read_bytes::<f64>(&bytes);
    assert_same(&raw, &wide.unwrap());
}

#[test]
fn no_corruption_or_truncation_panics() {
    // Every byte flipped three ways, and every truncation, of a dense and a
    // CSR file: each read must return (an error or, for harmless bytes such
    // as padding, the data), never panic or allocate wildly.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pbin");
    for good in [good_dense(), good_csr()] {
        let mut ok = 0;
        for at in 0..good.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut b = good.clone();
                b[at] ^= mask;
                std::fs::write(&path, &b).unwrap();
                if read::<f64>(&path).is_ok() {
                    ok += 1;
                }
                let _ = read::<f32>(&path);
            }
        }
        for cut in 0..good.len() {
            std::fs::write(&path, &good[..cut]).unwrap();
            assert!(read::<f64>(&path).is_err(), "cut at {cut}");
        }
        // Only padding and value bits that stay finite can change unnoticed.
        assert!(ok < good.len() * 3 / 2, "{ok}");
    }
}

#[test]
fn reading_from_bytes_matches_reading_the_file() {
    // Same data or the same message, for good files, every truncation and
    // a byte flipped at every offset.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pbin");
    let same = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        let from_file = read::<f64>(&path);
        let from_bytes = read_from_bytes::<f64>(bytes, &path);
        let unmapped = read_with::<f64>(&path, false);
        match (from_file, from_bytes, unmapped) {
            (Ok(a), Ok(b), Ok(c)) => {
                assert_same(&a, &b);
                assert_same(&a, &c);
            }
            (Err(a), Err(b), Err(c)) => {
                assert_eq!(a.to_string(), b.to_string());
                assert_eq!(a.to_string(), c.to_string());
            }
            (a, b, c) => panic!("file: {a:?}\nbytes: {b:?}\nunmapped: {c:?}"),
        }
        let narrowed = read_from_bytes::<f32>(bytes, &path).map(|r| bits(&r.features));
        let from_file = read::<f32>(&path).map(|r| bits(&r.features));
        assert_eq!(
            narrowed.map_err(|e| e.to_string()),
            from_file.map_err(|e| e.to_string())
        );
    };
    let stored_f32 = [to_bytes(&dense::<f32>()), to_bytes(&sparse::<f32>())];
    for good in [good_dense(), good_csr()].into_iter().chain(stored_f32) {
        same(&good);
        for cut in 0..good.len() {
            same(&good[..cut]);
        }
        for at in 0..good.len() {
            let mut b = good.clone();
            b[at] ^= 0x81;
            same(&b);
        }
    }
}

#[test]
fn files_are_mapped_in_place_unless_converted_or_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pbin");
    let files = [
        (to_bytes(&dense::<f32>()), Precision::F32, false),
        (to_bytes(&dense::<f64>()), Precision::F64, false),
        (to_bytes(&sparse::<f32>()), Precision::F32, true),
        (to_bytes(&sparse::<f64>()), Precision::F64, true),
    ];
    for (bytes, stored, sparse) in files {
        std::fs::write(&path, &bytes).unwrap();
        let dense_mask = |m: [bool; 3]| if sparse { m } else { [m[0], false, false] };
        let f32s = read::<f32>(&path).unwrap();
        let f64s = read::<f64>(&path).unwrap();
        // Values are used in place only in their stored precision; the rest
        // of the sparse structure either way.
        let conv = |same: bool| dense_mask([MAPPED[0] && same, MAPPED[1], MAPPED[2]]);
        assert_eq!(mapped(&f32s.features), conv(stored == Precision::F32));
        assert_eq!(mapped(&f64s.features), conv(stored == Precision::F64));
        // Turned off, everything is owned; the data is the same bit for bit,
        // and the same as from the bytes in memory.
        for (map, raw) in [
            (true, &f64s),
            (false, &read_with::<f64>(&path, false).unwrap()),
        ] {
            if !map {
                assert_eq!(mapped(&raw.features), [false; 3]);
            }
            assert_same(raw, &read_from_bytes::<f64>(&bytes, &path).unwrap());
        }
        assert_same(&f32s, &read_with::<f32>(&path, false).unwrap());
        // The data outlives the file's name, and a clone shares the mapping.
        let clone = f64s.clone();
        std::fs::remove_file(&path).unwrap();
        assert_same(&clone, &read_from_bytes::<f64>(&bytes, &path).unwrap());
        assert_eq!(mapped(&clone.features), mapped(&f64s.features));
    }
}

#[test]
fn the_environment_variable_turns_mapping_off() {
    use std::ffi::OsStr;
    for on in [
        None,
        Some(""),
        Some("0"),
        Some("false"),
        Some("No"),
        Some(" off "),
    ] {
        assert!(mmap_allowed_by(on.map(OsStr::new)), "{on:?}");
    }
    for off in ["1", "yes", "true", "ON"] {
        assert!(!mmap_allowed_by(Some(OsStr::new(off))), "{off}");
    }
}
