//! Round trips and one crafted bad file per rule of the reader: shared
//! samples and helpers.

mod reading;
mod refusals;
mod round_trip;

use std::io;
use std::path::{Path, PathBuf};

use super::*;
use crate::data::labels::LabelTable;
use crate::data::options::LoadOptions;
use crate::data::raw::RawData;
use crate::data::{csv, libsvm};
use crate::error::{Error, Result};
use crate::float::Real;

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

/// A good dense file, the base of one crafted bad file per rule.
fn good_dense() -> Vec<u8> {
    to_bytes(&dense::<f64>())
}

/// A good CSR file.
fn good_csr() -> Vec<u8> {
    to_bytes(&sparse::<f64>())
}
