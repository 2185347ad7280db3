//! Round trips and one crafted bad file per rule of the reader.

use std::io::Write as _;
use std::path::PathBuf;

use super::*;
use crate::data::write::{OutputFormat, write_raw as write_file};
use crate::data::{Dataset, LoadOptions, csv, libsvm, load_raw};
use crate::train::{TrainParams, fit_reference};

const CSV: &str = "\
setosa,5.1,3.5,-0.0,0.2
other,4.9,3.0,1.4,1e-40
setosa,0.1,0.30000000000000004,1e30,-7
other,1,2,3,4
";

const SVM: &str = "\
+1 1:0.5 4:-1 7:0.1
-1 2:3
+1
-1 1:1e-300 2:-0 3:2.5 7:1e30
";

fn data_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

fn dense<F: Real>() -> RawData<F> {
    csv::parse(CSV.as_bytes(), Path::new("t.csv"), &LoadOptions::default()).unwrap()
}

fn sparse<F: Real>() -> RawData<F> {
    libsvm::parse(SVM.as_bytes(), Path::new("t.svm")).unwrap()
}

/// The features' stored values as bits, so that -0.0 != 0.0.
type Bits = (Vec<u64>, Option<(Vec<usize>, Vec<u32>)>, usize, usize);

fn bits<F: Real>(f: &Features<F>) -> Bits {
    let vals = |v: &[F]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
    match f {
        Features::Dense(m) => (vals(&m.values), None, m.rows, m.cols),
        Features::Sparse(m) => (
            vals(&m.values),
            Some((m.row_ptr.to_vec(), m.indices.to_vec())),
            m.rows(),
            m.cols,
        ),
    }
}

/// The label values with their row counts (not where they first appear: a
/// binary file has no lines).
pub(crate) fn classes_of(t: &LabelTable) -> Vec<(String, Option<f64>, u64)> {
    t.classes()
        .iter()
        .map(|c| (c.text.clone(), c.number, c.count))
        .collect()
}

fn assert_same<F: Real, G: Real>(a: &RawData<F>, b: &RawData<G>) {
    assert_eq!(bits(&a.features), bits(&b.features));
    assert_eq!(a.class_ids, b.class_ids);
    assert_eq!(classes_of(&a.table), classes_of(&b.table));
}

fn to_bytes<F: Real>(raw: &RawData<F>) -> Vec<u8> {
    let mut cur = io::Cursor::new(Vec::new());
    let n = write_raw(&mut cur, raw).unwrap();
    let v = cur.into_inner();
    assert_eq!(n, v.len() as u64);
    v
}

/// Writes `bytes` to a temporary `.pbin` file and reads it.
fn read_bytes<F: Real>(bytes: &[u8]) -> (tempfile::TempDir, Result<RawData<F>>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pbin");
    std::fs::write(&path, bytes).unwrap();
    let r = read::<F>(&path);
    (dir, r)
}

/// The error message for a bad file, checking it is a data error naming it.
fn error_of(bytes: &[u8]) -> String {
    let (dir, r) = read_bytes::<f64>(bytes);
    let e = r.expect_err("a bad file was accepted");
    assert!(matches!(e, Error::Data { .. }), "{e:?}");
    let msg = e.to_string();
    let prefix = format!("{}: ", dir.path().join("t.pbin").display());
    assert!(msg.starts_with(&prefix), "{msg}");
    msg[prefix.len()..].to_owned()
}

/// Whether the values, indices and row pointers are mapped (dense: the
/// values, and `false` for the two others).
fn mapped<F>(f: &Features<F>) -> [bool; 3] {
    match f {
        Features::Dense(m) => [m.values.is_mapped(), false, false],
        Features::Sparse(m) => [
            m.values.is_mapped(),
            m.indices.is_mapped(),
            m.row_ptr.is_mapped(),
        ],
    }
}

/// What a file in the precision it is read in is mapped as: everything on
/// 64-bit little-endian hosts; row pointers need 64-bit `usize`.
const MAPPED: [bool; 3] = [
    cfg!(target_endian = "little"),
    cfg!(target_endian = "little"),
    cfg!(all(target_endian = "little", target_pointer_width = "64")),
];

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Header field offsets, as documented in the module's table.
const ROWS: usize = 24;
const COLS: usize = 32;
const NNZ: usize = 40;
const CLASSES: usize = 48;
fn off(section: usize) -> usize {
    56 + 16 * section
}
fn len(section: usize) -> usize {
    64 + 16 * section
}

#[test]
fn dense_and_csr_round_trip_bit_for_bit_in_both_precisions() {
    fn check<F: Real>(raw: RawData<F>) {
        let bytes = to_bytes(&raw);
        let (_dir, back) = read_bytes::<F>(&bytes);
        let back = back.unwrap();
        assert_same(&raw, &back);
        assert_eq!(back.format, Format::Binary);
        assert_eq!(Layout::of(&back.features), Layout::of(&raw.features));
        let h = decode_header(&bytes, bytes.len() as u64).unwrap();
        assert_eq!(h.precision, F::PRECISION);
        for s in h.sections {
            assert_eq!(s.offset % ALIGN, 0);
        }
    }
    check(dense::<f32>());
    check(dense::<f64>());
    check(sparse::<f32>());
    check(sparse::<f64>());
    // The sample holds what matters: -0, subnormals, an empty sparse row.
    let d = dense::<f64>();
    assert!(bits(&d.features).0.contains(&(-0.0f64).to_bits()));
    assert!(sparse::<f64>().features.row(2).stored() == 0);
}

#[test]
fn f32_files_widen_exactly_and_f64_files_round_to_nearest() {
    let raw32 = sparse::<f32>();
    let (_d, wide) = read_bytes::<f64>(&to_bytes(&raw32));
    assert_same(&raw32, &wide.unwrap());

    // An f64 file read for f32: each value rounded once, to nearest.
    let raw64 = libsvm::parse::<f64, _>(
        "1 1:0.1 2:16777217 3:1.00000005960464477550\n-1 1:3\n".as_bytes(),
        Path::new("t.svm"),
    )
    .unwrap();
    let (_d, narrow) = read_bytes::<f32>(&to_bytes(&raw64));
    let narrow = narrow.unwrap();
    let Features::Sparse(m64) = &raw64.features else {
        panic!()
    };
    let Features::Sparse(m32) = &narrow.features else {
        panic!()
    };
    let want: Vec<f32> = m64.values.iter().map(|&v| v as f32).collect();
    assert_eq!(m32.values, want);
    assert_eq!(m32.values[1], 16777216.0, "ties go to even");

    // An f64 value beyond the f32 range cannot be read as f32.
    let big = libsvm::parse::<f64, _>("1 1:1\n-1 1:2 2:-1e300\n".as_bytes(), Path::new("t.svm"));
    let (_d, r) = read_bytes::<f32>(&to_bytes(&big.unwrap()));
    let e = r.unwrap_err().to_string();
    assert!(
        e.ends_with("row 2, feature 2: value -1e300 is too large for f32 (largest finite magnitude 3.4028235e38)"),
        "{e}"
    );
}

#[test]
fn training_on_the_binary_copy_gives_the_identical_model() {
    let dir = tempfile::tempdir().unwrap();
    fn same_model<F: Real>(text: &Path, bin: &Path) {
        let opts = LoadOptions::default();
        let raw = load_raw::<F>(text, &opts).unwrap();
        write_file(bin, &raw, OutputFormat::Binary).unwrap();
        let a = Dataset::from_raw(raw, text, None).unwrap();
        let b = crate::data::load::<F>(bin, &opts).unwrap();
        assert_eq!(b.format, Format::Binary);
        let want = if b.features.is_sparse() {
            MAPPED
        } else {
            [MAPPED[0], false, false]
        };
        assert_eq!(mapped(&b.features), want);
        // Read into owned memory instead, as with PERCEPTRON_NO_MMAP=1.
        let c = read_with::<F>(bin, false).unwrap();
        assert_eq!(mapped(&c.features), [false; 3]);
        let c = Dataset::from_raw(c, bin, None).unwrap();
        assert_eq!(a.labels, b.labels);
        assert_eq!(a.label_map, b.label_map);
        assert_eq!(a.features, b.features);
        let params = TrainParams {
            max_epochs: 30,
            ..Default::default()
        };
        let fa = fit_reference(&a, &params.check_ref().unwrap()).unwrap();
        let fb = fit_reference(&b, &params.check_ref().unwrap()).unwrap();
        let fc = fit_reference(&c, &params.check_ref().unwrap()).unwrap();
        let w = |f: &crate::train::Fit<F>| {
            f.weights
                .iter()
                .map(|x| x.to_f64().to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(w(&fa), w(&fb));
        assert_eq!(w(&fa), w(&fc));
        assert_eq!(fa.mistakes_per_epoch, fb.mistakes_per_epoch);
        assert_eq!(fa.mistakes_per_epoch, fc.mistakes_per_epoch);
        assert!(fa.total_mistakes() > 0);
        // The CPU engine and the shuffled order (a copy in owned memory) too.
        let cpu = |d: &Dataset<F>| {
            let mut fb = || -> Box<dyn crate::train::MarginEngine<F>> {
                Box::new(crate::train::ReferenceEngine)
            };
            crate::train::fit(
                d,
                &params.check_ref().unwrap(),
                crate::train::State::initial(d.cols() + 1),
                Box::new(crate::cpu::CpuEngine::new(d, true)),
                &mut fb,
                &mut crate::train::Silent,
            )
            .unwrap()
        };
        assert_eq!(w(&cpu(&a)), w(&cpu(&b)));
        let order = crate::train::shuffle::permutation(a.rows(), 5);
        let (pa, pb) = (a.permuted(&order), b.permuted(&order));
        assert_eq!(mapped(&pb.features), [false; 3]);
        assert_eq!(pa.features, pb.features);
        assert_eq!(
            w(&fit_reference(&pa, &params.check_ref().unwrap()).unwrap()),
            w(&fit_reference(&pb, &params.check_ref().unwrap()).unwrap())
        );
    }
    for (name, out) in [
        ("heart_scale.svm", "h.pbin"),
        ("iris_setosa.csv", "i.pbin"),
        ("breast_cancer.csv", "b.pbin"),
    ] {
        same_model::<f32>(&data_file(name), &dir.path().join(out));
        same_model::<f64>(&data_file(name), &dir.path().join(out));
    }
}

#[test]
fn a_file_written_by_hand_from_the_documented_layout_loads() {
    // Mirrors the Python example of the module documentation.
    let x: [f32; 6] = [1.0, -2.0, 0.5, 3.0, 0.25, -1.5];
    let ids: [u32; 2] = [1, 0];
    let labels: [&[u8]; 2] = [b"-1", b"+1"];
    let mut table = Vec::new();
    for t in labels {
        table.extend_from_slice(&(t.len() as u32).to_le_bytes());
        table.extend_from_slice(t);
    }
    let al = |n: usize| n.div_ceil(64) * 64;
    let (o_ids, ids_len) = (192, 8);
    let o_val = al(o_ids + ids_len);
    let o_tab = al(o_val + 24);
    let mut f = vec![0u8; o_tab + table.len()];
    f[..8].copy_from_slice(b"\x89PBN\r\n\x1a\n");
    for (at, v) in [(8, 1u32), (12, 192), (16, 0), (20, 4)] {
        put_u32(&mut f, at, v);
    }
    for (at, v) in [
        (24, 2u64),
        (32, 3),
        (40, 6),
        (48, 2),
        (56, o_ids as u64),
        (64, ids_len as u64),
        (72, o_val as u64),
        (80, 24),
        (120, o_tab as u64),
        (128, table.len() as u64),
    ] {
        put_u64(&mut f, at, v);
    }
    for (k, id) in ids.iter().enumerate() {
        put_u32(&mut f, o_ids + 4 * k, *id);
    }
    for (k, v) in x.iter().enumerate() {
        f[o_val + 4 * k..o_val + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
    f[o_tab..].copy_from_slice(&table);
    let (_d, raw) = read_bytes::<f32>(&f);
    let raw = raw.unwrap();
    assert_eq!(
        raw.features,
        Features::Dense(DenseMatrix {
            rows: 2,
            cols: 3,
            values: x.to_vec().into()
        })
    );
    assert_eq!(raw.class_ids, ids);
    let texts: Vec<&str> = raw
        .table
        .classes()
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(texts, ["-1", "+1"]);
    // And this writer produces exactly those bytes for the same data.
    assert_eq!(to_bytes(&raw), f);
}

#[test]
fn format_is_recognised_by_extension_and_by_magic_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = to_bytes(&sparse::<f64>());
    for name in ["a.pbin", "a.PBIN", "a.bin", "looks_like.csv", "a.txt"] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let raw = load_raw::<f64>(&path, &LoadOptions::default()).unwrap();
        assert_eq!(raw.format, Format::Binary, "{name}");
    }
    // The name alone: a text file called .pbin is not taken for text.
    let path = dir.path().join("text.pbin");
    std::fs::write(&path, SVM).unwrap();
    let e = load_raw::<f64>(&path, &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a perceptron binary (.pbin) file"), "{e}");
    // Gzipped binary files are refused with a clear message.
    let gz = dir.path().join("a.pbin.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&bytes).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let e = load_raw::<f64>(&gz, &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("gzip-compressed binary (.pbin) files are not supported"),
        "{e}"
    );
}

// --- one crafted file per rule ----------------------------------------------

fn good_dense() -> Vec<u8> {
    to_bytes(&dense::<f64>())
}

fn good_csr() -> Vec<u8> {
    to_bytes(&sparse::<f64>())
}

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
