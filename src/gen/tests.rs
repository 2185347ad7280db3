//! The planted bounds, noise, determinism and format agreement.

use std::path::{Path, PathBuf};

use super::*;
use crate::data::write::OutputFormat;
use crate::data::{Dataset, Features, LabelTable, LoadOptions, load_raw};
use crate::float::Real;
use crate::train::{TrainParams, fit_reference};

fn gen_of(opts: GenOptions) -> Generator {
    Generator::new(opts).unwrap()
}

fn dense(rows: u64, features: u64, seed: u64) -> GenOptions {
    GenOptions {
        rows,
        features,
        seed,
        ..Default::default()
    }
}

fn sparse(rows: u64, features: u64, nnz: u64, seed: u64) -> GenOptions {
    GenOptions {
        density: Density::Sparse { nnz },
        ..dense(rows, features, seed)
    }
}

/// Checks y * u·x~ >= gamma and ||x~|| <= R for every row, in f64, with
/// the planted labels; returns the smallest margin and largest norm seen.
fn check_bounds<F: Real>(g: &Generator, data: &Generated<F>) -> (f64, f64) {
    let u = g.planted_vector();
    let bias = g.options().bias;
    let d = g.options().features as usize;
    assert_eq!(u.len(), d + bias as usize);
    let unit_norm: f64 = u.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!((unit_norm - 1.0).abs() < 1e-12, "{unit_norm}");
    let (mut min_margin, mut max_norm) = (f64::INFINITY, 0.0f64);
    let f = &data.raw.features;
    assert_eq!(f.rows() as u64, g.options().rows);
    for i in 0..f.rows() {
        let mut s = if bias { u[d] } else { 0.0 };
        let mut q = if bias { 1.0 } else { 0.0 };
        f.row(i).for_each(|k, v| {
            s += u[k] * v.to_f64();
            q += v.to_f64() * v.to_f64();
        });
        let y = data.labels[i].planted as f64;
        assert!(
            y * s >= g.margin(),
            "row {i}: margin {} < {}",
            y * s,
            g.margin()
        );
        assert!(
            q.sqrt() <= g.radius(),
            "row {i}: norm {} > {}",
            q.sqrt(),
            g.radius()
        );
        // Also summed in the other order.
        let mut back = 0.0;
        let mut entries = Vec::new();
        f.row(i).for_each(|k, v| entries.push((k, v.to_f64())));
        for &(k, v) in entries.iter().rev() {
            back += u[k] * v;
        }
        if bias {
            back += u[d];
        }
        assert!(y * back >= g.margin(), "row {i}");
        min_margin = min_margin.min(y * s);
        max_norm = max_norm.max(q.sqrt());
    }
    (min_margin, max_norm)
}

#[test]
fn every_row_meets_the_planted_margin_and_radius() {
    let cases = [
        dense(3000, 20, 1),
        dense(500, 1, 2),
        dense(2000, 3, 3),
        sparse(3000, 1000, 8, 4),
        sparse(1000, 300, 100, 5),
        sparse(300, 2000, 300, 10),
        GenOptions {
            bias: false,
            ..dense(2000, 5, 6)
        },
        GenOptions {
            margin: Some(0.5),
            radius: Some(3.0),
            ..dense(2000, 10, 7)
        },
        GenOptions {
            margin: Some(0.002),
            radius: Some(1.5),
            bias: false,
            ..sparse(2000, 100_000, 16, 8)
        },
    ];
    for opts in cases {
        let g = gen_of(opts.clone());
        let (a, b) = (g.generate::<f32>().unwrap(), g.generate::<f64>().unwrap());
        let both_classes = a.labels.iter().any(|l| l.planted != a.labels[0].planted);
        for (min_margin, max_norm) in [check_bounds(&g, &a), check_bounds(&g, &b)] {
            // When the hyperplane crosses the ball, points near it were
            // pushed onto the margin, so it is attained (up to the slack);
            // and some point lies close to the sphere.
            if both_classes {
                assert!(
                    min_margin < g.margin() * (1.0 + 1e-4) + 1e-5,
                    "{opts:?}: {min_margin}"
                );
            }
            assert!(max_norm > g.radius() * 0.9, "{opts:?}: {max_norm}");
        }
    }
}

#[test]
fn defaults_follow_the_documented_formulas() {
    let g = gen_of(dense(10, 256, 0));
    assert_eq!(g.radius(), 2f64.sqrt());
    assert!((g.margin() - 0.1 * (256.0f64 / 257.0).sqrt()).abs() < 1e-15);
    let g = gen_of(GenOptions {
        bias: false,
        ..sparse(10, 1_000_000, 64, 0)
    });
    assert_eq!(g.radius(), 1.0);
    assert!((g.margin() - 0.1 * (64e-6f64).sqrt()).abs() < 1e-15);
}

#[test]
fn training_converges_within_the_theorem_bound() {
    for opts in [dense(2000, 10, 11), sparse(2000, 200, 10, 12)] {
        let g = gen_of(opts);
        let data = g.generate::<f64>().unwrap();
        let ds = Dataset::from_raw(data.raw, Path::new("gen"), None).unwrap();
        let fit = fit_reference(&ds, &(TrainParams::default()).check_ref().unwrap()).unwrap();
        assert!(fit.converged());
        let bound = (g.radius() / g.margin()).powi(2);
        assert!(
            (fit.total_mistakes() as f64) <= bound,
            "{} > {bound}",
            fit.total_mistakes()
        );
    }
}

#[test]
fn noise_flips_about_p_of_the_labels_and_keeps_the_points() {
    let clean = gen_of(dense(20_000, 5, 9)).generate::<f32>().unwrap();
    for p in [0.1, 0.3] {
        let noisy = gen_of(GenOptions {
            noise: p,
            ..dense(20_000, 5, 9)
        })
        .generate::<f32>()
        .unwrap();
        assert_eq!(noisy.raw.features, clean.raw.features);
        let planted: Vec<i8> = noisy.labels.iter().map(|l| l.planted).collect();
        let clean_labels: Vec<i8> = clean.labels.iter().map(|l| l.label).collect();
        assert_eq!(planted, clean_labels);
        let flipped = noisy.labels.iter().filter(|l| l.label != l.planted).count();
        let rate = flipped as f64 / 20_000.0;
        // Five standard deviations.
        let sd = (p * (1.0 - p) / 20_000.0).sqrt();
        assert!((rate - p).abs() < 5.0 * sd, "{rate} vs {p}");
    }
    assert!(clean.labels.iter().all(|l| l.label == l.planted));
    let all = gen_of(GenOptions {
        noise: 1.0,
        ..dense(100, 5, 9)
    })
    .generate::<f32>()
    .unwrap();
    assert!(all.labels.iter().all(|l| l.label == -l.planted));
}

fn files_of(opts: &GenOptions, dir: &Path, stem: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let g = gen_of(opts.clone());
    [
        ("csv", OutputFormat::Csv),
        ("svm", OutputFormat::Libsvm),
        ("pbin", OutputFormat::Binary),
    ]
    .into_iter()
    .map(|(ext, fmt)| {
        let path = dir.join(format!("{stem}.{ext}"));
        let s = g.write::<f32>(&path, fmt).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(s.bytes, bytes.len() as u64, "{ext}");
        (path, bytes)
    })
    .collect()
}

#[test]
fn output_is_deterministic_per_seed() {
    let dir = tempfile::tempdir().unwrap();
    for opts in [dense(700, 6, 5), sparse(700, 50, 5, 5)] {
        let a = files_of(&opts, dir.path(), "a");
        let b = files_of(&opts, dir.path(), "b");
        let c = files_of(&GenOptions { seed: 6, ..opts }, dir.path(), "c");
        for ((a, b), c) in a.iter().zip(&b).zip(&c) {
            assert_eq!(a.1, b.1, "same seed, same bytes: {}", a.0.display());
            assert_ne!(a.1, c.1, "another seed, other bytes: {}", a.0.display());
        }
    }
}

#[test]
fn the_stream_is_pinned() {
    // u's raw coordinates are SplitMix64's outputs in order.
    let mut r = SplitMix64::new(42);
    for k in 0..5 {
        assert_eq!(
            raw_u(42, k, Some(7)),
            2.0 * ((r.next_u64() >> 11) as f64 * EPS) - 1.0
        );
    }
    // Values pinned at the first release of the generator: a change here
    // changes every generated file.
    let g = gen_of(dense(2, 3, 1));
    let u = g.planted_vector();
    let data = g.generate::<f64>().unwrap();
    let Features::Dense(m) = &data.raw.features else {
        panic!()
    };
    let fingerprint: Vec<u64> = u.iter().chain(&m.values).map(|v| v.to_bits()).collect();
    assert_eq!(fingerprint, PINNED, "{fingerprint:#x?}");
    assert_eq!(
        data.labels.iter().map(|l| l.label).collect::<Vec<_>>(),
        PINNED_LABELS
    );
}

/// u (4 coordinates), then the 2 rows of 3 values, as f64 bits. Checked
/// against an independent Python transcription of the module documentation.
const PINNED: &[u64] = &[
    0x3fbfd058c95c7738,
    0x3fdd5e58a3356eee,
    0x3fec23dfd3cb6c9b,
    0xbf9a98197fd8ee8c,
    0x3f827f6e0a6cee64,
    0x3fd3cbaa5754f18a,
    0x3fbfed44f15586c4,
    0xbfe73cbdf05b1000,
    0xbfe42ebec283f77c,
    0x3fc74ab291d37330,
];
const PINNED_LABELS: &[i8] = &[1, -1];

#[test]
fn all_formats_load_to_the_same_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let opts = LoadOptions::default();
    for gopts in [
        dense(500, 7, 21),
        sparse(500, 20, 4, 22),
        sparse(100, 600, 400, 24),
        GenOptions {
            noise: 0.2,
            bias: false,
            ..sparse(400, 30, 30, 23)
        },
    ] {
        let files = files_of(&gopts, dir.path(), "x");
        let csv = load_raw::<f32>(&files[0].0, &opts).unwrap();
        let svm = load_raw::<f32>(&files[1].0, &opts).unwrap();
        let bin = load_raw::<f32>(&files[2].0, &opts).unwrap();
        let mem = gen_of(gopts.clone()).generate::<f32>().unwrap().raw;
        assert_eq!(bin.features, mem.features);
        assert_eq!(bin.features.cols(), gopts.features as usize);
        assert_eq!(
            svm.features.cols(),
            bin.features.cols(),
            "every column appears"
        );
        for other in [&csv, &svm, &mem] {
            assert_eq!(other.class_ids, bin.class_ids);
            let labels = |t: &LabelTable| {
                let c = t.classes();
                c.iter()
                    .map(|c| (c.text.clone(), c.count))
                    .collect::<Vec<_>>()
            };
            assert_eq!(labels(&other.table), labels(&bin.table));
            let (a, b) = (other.features.to_dense(), bin.features.to_dense());
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!((a.rows, a.cols), (b.rows, b.cols));
            assert_eq!(bits(&a.values), bits(&b.values));
        }
        // The sparse layouts agree exactly, not just densified.
        if let Density::Sparse { .. } = gopts.density {
            assert_eq!(svm.features, bin.features);
        }
    }
}

#[test]
fn bad_options_are_usage_errors() {
    let bad = [
        (dense(0, 5, 0), "--rows must be at least 1"),
        (dense(5, 0, 0), "--features must be between 1"),
        (
            sparse(5, 10, 11, 0),
            "--nnz must be between 1 and --features (10), not 11",
        ),
        (sparse(5, 10, 0, 0), "--nnz must be between 1"),
        (
            GenOptions {
                noise: 1.5,
                ..dense(5, 5, 0)
            },
            "--noise is a probability",
        ),
        (
            GenOptions {
                radius: Some(1.0),
                ..dense(5, 5, 0)
            },
            "the radius must exceed 1 (or use --no-bias)",
        ),
        (
            GenOptions {
                margin: Some(2.0),
                radius: Some(2.0),
                ..dense(5, 5, 0)
            },
            "must be smaller than --radius",
        ),
        (
            GenOptions {
                margin: Some(-1.0),
                ..dense(5, 5, 0)
            },
            "--planted-margin must be a positive number",
        ),
    ];
    for (opts, want) in bad {
        let e = Generator::new(opts).unwrap_err();
        assert!(matches!(e, Error::Usage(_)), "{e:?}");
        assert!(e.to_string().contains(want), "{e}");
    }
    // Feasible in principle, impossible for these rows: a clean error, and
    // no file left behind.
    let g = gen_of(GenOptions {
        margin: Some(0.5),
        ..sparse(10, 100_000, 4, 0)
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.pbin");
    let e = g.write::<f32>(&path, OutputFormat::Binary).unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e:?}");
    assert!(
        e.to_string()
            .contains("could not be placed with margin 0.5"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn both_classes_are_common() {
    for seed in 0..20 {
        for opts in [
            dense(2000, 8, seed),
            dense(1000, 256, seed),
            sparse(2000, 100_000, 5, seed),
        ] {
            let data = gen_of(opts.clone()).generate::<f32>().unwrap();
            let pos = data.labels.iter().filter(|l| l.planted > 0).count() as f64;
            let frac = pos / data.labels.len() as f64;
            assert!((0.2..=0.8).contains(&frac), "{opts:?}: {frac}");
        }
    }
}

#[test]
fn sparse_indices_follow_floyds_algorithm_as_documented() {
    // A plain transcription of the documented sampling, for both of the
    // generator's implementations (small and large K), the small one with
    // draws that rarely meet (1000, 10) and that often do (100, 60).
    for (d, k) in [(1000u64, 10u64), (100, 60), (5000, 300)] {
        let g = gen_of(sparse(20, d, k, 31));
        let data = g.generate::<f64>().unwrap();
        assert_eq!(data.redraws, 0, "every row accepted at its first draw");
        let Features::Sparse(m) = &data.raw.features else {
            panic!()
        };
        for i in 0..20 {
            let mut rng = g.row_rng(i as u64);
            unit(&mut rng); // the noise draw
            let mut taken: Vec<u32> = Vec::new();
            for j in d - k..d {
                let t = rng.below(j + 1) as u32;
                taken.push(if taken.contains(&t) { j as u32 } else { t });
            }
            taken.sort();
            assert_eq!(&m.indices[m.row_ptr[i]..m.row_ptr[i + 1]], &taken[..]);
        }
    }
}

fn params(output: &str) -> GenParams {
    GenParams {
        output: PathBuf::from(output),
        rows: 20,
        features: 30,
        sparse: false,
        nnz: None,
        planted_margin: None,
        radius: None,
        noise: 0.0,
        seed: 0,
        bias: true,
        precision: crate::float::Precision::F32,
    }
}

#[test]
fn params_give_the_density_and_its_values_per_row() {
    assert_eq!(params("a.csv").options().unwrap().density, Density::Dense);
    let sparse = GenParams {
        sparse: true,
        ..params("a.svm")
    };
    // 10, or D if smaller, unless told.
    assert_eq!(
        sparse.options().unwrap().density,
        Density::Sparse { nnz: 10 }
    );
    let narrow = GenParams {
        features: 4,
        ..sparse.clone()
    };
    assert_eq!(
        narrow.options().unwrap().density,
        Density::Sparse { nnz: 4 }
    );
    let told = GenParams {
        nnz: Some(3),
        ..sparse
    };
    assert_eq!(told.options().unwrap().density, Density::Sparse { nnz: 3 });
    let dense_nnz = GenParams {
        nnz: Some(3),
        ..params("a.csv")
    };
    assert!(matches!(dense_nnz.options(), Err(Error::Usage(m)) if m.contains("--density sparse")));
}

#[test]
fn a_checked_run_writes_and_reports_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.csv");
    assert!(params("g.txt").check().is_err(), "the format is checked");
    let run = params(path.to_str().unwrap()).check().unwrap();
    assert!(!run.writes_stdout());
    let report = run.run().unwrap();
    assert_eq!(report.summary.rows, 20);
    assert_eq!(report.summary.cols, 30);
    assert!(!report.sparse && report.bias);
    assert_eq!(
        report.mistake_bound,
        (report.radius / report.planted_margin).powi(2)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 20);
}
