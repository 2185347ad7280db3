//! Good files: written and read back, by hand from the documented layout,
//! and recognised by name and content.

use std::io::Write as _;

use super::*;
use crate::data::matrix::DenseMatrix;
use crate::data::options::{Format, LoadOptions};
use crate::data::write::{OutputFormat, write_raw as write_file};
use crate::data::{Dataset, load_raw};
use crate::train::{TrainParams, fit_reference};

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
        }
        .check()
        .unwrap();
        let fa = fit_reference(&a, &params).unwrap();
        let fb = fit_reference(&b, &params).unwrap();
        let fc = fit_reference(&c, &params).unwrap();
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
                &params,
                crate::train::State::initial(d.cols() + 1),
                Box::new(crate::engine::cpu::CpuEngine::new(d, true)),
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
            w(&fit_reference(&pa, &params).unwrap()),
            w(&fit_reference(&pb, &params).unwrap())
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
