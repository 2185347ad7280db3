//! Reading blocks and agreeing on the whole (labels, features, rows, the
//! fingerprint, the theorem's figures) gives what one process finds; mix
//! mode is reproducible and converges on separable data.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::agree::plainly;
use super::local::run_ranks;
use super::*;
use crate::data::{self, Dataset, LoadOptions};
use crate::float::Real;

fn data_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

/// Each rank's block of `paths` read by `k` ranks.
fn blocks<F: Real>(
    paths: &[PathBuf],
    k: usize,
    opts: &LoadOptions,
    ovr: bool,
) -> Vec<load::Block<F>> {
    run_ranks(k, |t| {
        load::load::<F>(t, paths, opts, ovr, &plainly).unwrap()
    })
}

/// The blocks, one after another, are the single process's dataset.
fn assert_whole<F: Real>(blocks: &[load::Block<F>], want: &Dataset<F>) {
    let mut at = 0;
    for (r, b) in blocks.iter().enumerate() {
        let d = &b.data;
        assert_eq!(d.cols(), want.cols(), "rank {r}");
        assert_eq!(d.label_map, want.label_map);
        assert_eq!(d.classes, want.classes);
        assert_eq!(b.whole.first_row(r), at);
        for i in 0..d.rows() {
            let entries = |row: crate::data::Row<'_, F>| {
                let mut v = Vec::new();
                row.for_each(|k, x| v.push((k, x.to_f64().to_bits())));
                v
            };
            let (mine, theirs) = (d.features.row(i), want.features.row(at + i));
            assert_eq!(entries(mine), entries(theirs), "row {}", at + i);
            if !want.labels.is_empty() {
                assert_eq!(d.labels[i], want.labels[at + i]);
            }
            assert_eq!(d.class_ids[i], want.class_ids[at + i]);
        }
        at += d.rows();
        assert_eq!(b.whole.rows, want.rows());
    }
    assert_eq!(at, want.rows());
}

fn write_gzip(path: &Path, bytes: &[u8]) {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    std::fs::write(path, enc.finish().unwrap()).unwrap();
}

#[test]
fn blocks_make_the_whole_dataset_and_its_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let pbin = dir.path().join("digits.pbin");
    let raw = data::load_raw::<f32>(&data_file("digits_3v5.csv"), &LoadOptions::default());
    let file = std::fs::File::create(&pbin).unwrap();
    data::binary::write_raw(std::io::BufWriter::new(file), &raw.unwrap()).unwrap();
    let gz = dir.path().join("heart.svm.gz");
    write_gzip(&gz, &std::fs::read(data_file("heart_scale.svm")).unwrap());
    // Shards: the breast cancer CSV in three files, a header on each.
    let text = std::fs::read_to_string(data_file("breast_cancer.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let shards: Vec<PathBuf> = [(0, 100), (100, 101), (101, lines.len())]
        .iter()
        .enumerate()
        .map(|(s, &(a, b))| {
            let p = dir.path().join(format!("bc-{s}.csv"));
            std::fs::write(&p, lines[a..b].join("\n") + "\n").unwrap();
            p
        })
        .collect();
    let cases: Vec<Vec<PathBuf>> = vec![
        vec![data_file("heart_scale.svm")],
        vec![data_file("digits_3v5.csv")],
        vec![data_file("iris_setosa.csv.gz")],
        vec![pbin],
        vec![gz],
        shards,
    ];
    let opts = LoadOptions::default();
    for paths in cases {
        let raw = data::shards::load_raw_all::<f32>(&paths, &opts).unwrap();
        let want = Dataset::from_raw(raw, &paths[0], None).unwrap();
        let print = data::fingerprint::fingerprint(&want);
        for k in 1..=4 {
            let got = blocks::<f32>(&paths, k, &opts, false);
            assert_whole(&got, &want);
            let prints = run_ranks(k, |t| {
                let b = &got[t.rank()];
                fingerprint::fingerprint(t, &b.data, &b.whole, false)
            });
            assert!(prints.iter().all(|p| *p == print), "{paths:?} on {k}");
        }
    }
}

#[test]
fn one_vs_rest_blocks_agree_on_the_classes() {
    let paths = vec![data_file("digits.csv")];
    let opts = LoadOptions::default();
    let raw = data::load_raw::<f64>(&paths[0], &opts).unwrap();
    let want = Dataset::from_raw_classes(raw, &paths[0]).unwrap();
    let print = data::fingerprint::fingerprint(&want);
    for k in [2, 3] {
        let got = blocks::<f64>(&paths, k, &opts, true);
        assert_whole(&got, &want);
        let prints = run_ranks(k, |t| {
            let b = &got[t.rank()];
            fingerprint::fingerprint(t, &b.data, &b.whole, true)
        });
        assert!(prints.iter().all(|p| *p == print));
        // The theorem's figures over the blocks.
        let w: Vec<f64> = (0..(want.cols() + 1) * 10)
            .map(|i| (i % 7) as f64 - 3.0)
            .collect();
        let all = crate::train::theory::analyse_ovr(&want, &w, true, 10);
        let got_theory = run_ranks(k, |t| theory::analyse(t, &got[t.rank()].data, &w, true, 10));
        for (overall, per_head) in got_theory {
            assert_eq!(overall, all);
            let dim = want.cols() + 1;
            for (h, th) in per_head.iter().enumerate() {
                let one = crate::train::theory::analyse_head(
                    &want,
                    &w[h * dim..(h + 1) * dim],
                    true,
                    h,
                    10,
                );
                assert_eq!(*th, one);
            }
        }
    }
}

#[test]
fn a_bad_line_on_one_rank_gives_the_single_process_message() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(data_file("heart_scale.svm")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[200] = lines[200].replacen(":", ":z", 1);
    let path = dir.path().join("bad.svm");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let want = data::load_raw::<f32>(&path, &LoadOptions::default())
        .unwrap_err()
        .to_string();
    let paths = vec![path];
    let out = run_ranks(3, |t| {
        load::load::<f32>(t, &paths, &LoadOptions::default(), false, &plainly)
            .err()
            .unwrap()
    });
    for f in out {
        assert_eq!(f.message, want);
        assert_eq!(f.rank, 2);
    }
}

fn mix_run(
    k: usize,
    mixing: Mixing,
    max_epochs: usize,
) -> Vec<(Vec<u64>, Vec<u64>, crate::train::Stop, f64)> {
    let d = exact::tests::load::<f32>("digits_3v5.csv", false);
    let p = crate::train::TrainParams {
        max_epochs,
        ..Default::default()
    }
    .check()
    .unwrap();
    run_ranks(k, |t| {
        let net = MeteredTransport::new(t);
        let (block, _) = exact::tests::block_of(&d, k, t.rank(), None);
        let mut fb = || -> Box<dyn crate::engine::MarginEngine<f32>> {
            Box::new(crate::engine::ReferenceEngine)
        };
        let engine = Box::new(crate::engine::cpu::CpuEngine::new(&block, true));
        let start = crate::train::State::initial(d.cols() + 1);
        let r = mix::train(
            &net,
            &block,
            &p,
            start,
            Vec::new(),
            mixing,
            engine,
            &mut fb,
            &mut crate::train::Silent,
            &mut |_, _| Ok(()),
            &plainly,
        )
        .unwrap();
        let w = r
            .outcome
            .state
            .weights
            .iter()
            .map(|v| v.to_bits() as u64)
            .collect();
        (
            w,
            r.outcome.state.mistakes_per_epoch.clone(),
            r.outcome.stop,
            r.weighted_mistakes(mixing),
        )
    })
}

#[test]
fn mix_mode_is_reproducible_and_converges_on_separable_data() {
    let d = exact::tests::load::<f32>("digits_3v5.csv", false);
    for mixing in [Mixing::Uniform, Mixing::Errors] {
        let a = mix_run(3, mixing, 300);
        let b = mix_run(3, mixing, 300);
        assert_eq!(a, b, "{mixing:?}");
        // Every rank holds the same model.
        assert!(a.iter().all(|r| r.0 == a[0].0));
        let (w, per_epoch, stop, weighted) = &a[0];
        assert_eq!(
            *stop,
            crate::train::Stop::Converged,
            "{mixing:?}: {per_epoch:?}"
        );
        assert_eq!(per_epoch.last(), Some(&0));
        let w: Vec<f32> = w.iter().map(|&b| f32::from_bits(b as u32)).collect();
        let th = crate::train::theory::analyse(&d, &w, true);
        assert_eq!(th.correct, d.rows(), "separates the data");
        // The paper's bound holds.
        let bound = th.mistake_bound.unwrap();
        assert!(*weighted <= bound * (1.0 + 1e-9), "{weighted} > {bound}");
    }
    // One rank is the classic loop.
    let one = mix_run(1, Mixing::Uniform, 300);
    let p = crate::train::TrainParams {
        max_epochs: 300,
        ..Default::default()
    }
    .check()
    .unwrap();
    let want = exact::tests::single(&d, &p);
    let w: Vec<u64> = want.weights.iter().map(|v| v.to_bits() as u64).collect();
    assert_eq!(one[0].0, w);
}

/// The options one process needs are refused by rule and value, in the
/// library's words (each front end names its own flags); mix mode refuses
/// the averaged and pocket variants.
#[test]
fn options_that_need_one_process_are_refused_with_a_typed_error() {
    use crate::error::{OneProcessOption, ParamError};
    use crate::train::{ClassWeights, TrainParams};
    let check = |p: TrainParams, mode: Mode| check_params(&p.check().unwrap(), mode);
    let scaled = TrainParams {
        scale: Some(crate::data::scaling::ScaleKind::MaxAbs),
        ..Default::default()
    };
    match check(scaled, Mode::Exact) {
        Err(Error::Param(ParamError::OneProcessOnly { option, mode })) => {
            assert_eq!(option, OneProcessOption::Scale("maxabs"));
            assert_eq!(mode, "exact");
        }
        other => panic!("{other:?}"),
    }
    let weighted = TrainParams {
        class_weight: Some(ClassWeights::Balanced),
        ..Default::default()
    };
    let e = check(weighted, Mode::Mix).unwrap_err().to_string();
    assert!(
        e.contains("class weights (balanced)") && !e.contains("--"),
        "{e}"
    );
    let averaged = TrainParams {
        variant: Variant::Averaged,
        ..Default::default()
    };
    assert!(check(averaged.clone(), Mode::Exact).is_ok());
    assert!(matches!(
        check(averaged, Mode::Mix),
        Err(Error::Param(ParamError::MixVariant {
            variant: "averaged"
        }))
    ));
    assert!(check(TrainParams::default(), Mode::Mix).is_ok());
}

/// Zero-based LIBSVM across ranks: an index 0 in one rank's part makes
/// every part zero-based (a rank whose part has none reads it again), and
/// every rank says where it is, as a single process reading all the rows.
#[test]
fn ranks_settle_one_index_base() {
    let dir = tempfile::tempdir().unwrap();
    // Index 0 only near the end of the second file: most ranks see none.
    let mut a = String::new();
    for i in 0..300 {
        a.push_str(&format!("{} 1:{i} 3:1\n", i % 2));
    }
    let mut b = a.clone();
    b.push_str("1 0:5 2:1\n");
    let paths = vec![dir.path().join("a.svm"), dir.path().join("b.svm")];
    std::fs::write(&paths[0], &a).unwrap();
    std::fs::write(&paths[1], &b).unwrap();
    for opts in [
        LoadOptions::default(),
        LoadOptions {
            index_base: Some(data::IndexBase::Zero),
            ..LoadOptions::default()
        },
    ] {
        let raw = data::shards::load_raw_all::<f32>(&paths, &opts).unwrap();
        let info = raw.libsvm.clone().unwrap();
        assert_eq!(info.base, data::IndexBase::Zero);
        let want = Dataset::from_raw(raw, &paths[0], None).unwrap();
        assert_eq!(want.cols(), 4);
        for k in 1..=4 {
            let got = blocks::<f32>(&paths, k, &opts, false);
            assert_whole(&got, &want);
            assert!(got.iter().all(|b| b.libsvm.as_ref() == Some(&info)), "{k}");
        }
    }
    let one = LoadOptions {
        index_base: Some(data::IndexBase::One),
        ..LoadOptions::default()
    };
    let e = run_ranks(3, |t| {
        load::load::<f32>(t, &paths, &one, false, &plainly).err()
    });
    assert!(e.iter().all(|e| e.is_some()));
}

/// CSV shards whose headers name their columns in another order are
/// refused on every rank, before any row is read, as a single process
/// refuses them: each rank reads from byte offsets past the headers, so
/// nothing else would notice the swapped features.
#[test]
fn shards_whose_headers_differ_are_refused_on_every_rank() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = String::from("y,a,b\n");
    let mut b = String::from("y,b,a\n");
    for i in 0..200 {
        a.push_str(&format!("{},{i},1\n", i % 2));
        b.push_str(&format!("{},1,{i}\n", i % 2));
    }
    let paths = vec![dir.path().join("a.csv"), dir.path().join("b.csv")];
    std::fs::write(&paths[0], &a).unwrap();
    std::fs::write(&paths[1], &b).unwrap();
    let opts = LoadOptions::default();
    let single = data::shards::load_raw_all::<f32>(&paths, &opts)
        .unwrap_err()
        .to_string();
    assert!(single.contains("column 2 is named \"b\""), "{single}");
    for k in 1..=3 {
        let errors = run_ranks(k, |t| {
            load::load::<f32>(t, &paths, &opts, false, &plainly)
                .err()
                .map(|e| e.to_string())
        });
        for e in errors {
            let e = e.expect("every rank refuses the shards");
            assert!(e.contains("column 2 is named \"b\""), "{k} ranks: {e}");
        }
    }
    // The same names in the same order still join.
    std::fs::write(&paths[1], &a).unwrap();
    let got = blocks::<f32>(&paths, 2, &opts, false);
    assert_eq!(got.iter().map(|b| b.data.rows()).sum::<usize>(), 400);
}

/// The report's JSON and the model file give the mode and the mixing in
/// the words their `name` gives the text.
#[test]
fn modes_and_mixings_serialise_as_their_names() {
    for mode in [Mode::Exact, Mode::Mix] {
        let json = serde_json::to_string(&mode).unwrap();
        assert_eq!(json, format!("\"{}\"", mode.name()));
    }
    for mixing in [Mixing::Uniform, Mixing::Errors] {
        let json = serde_json::to_string(&mixing).unwrap();
        assert_eq!(json, format!("\"{}\"", mixing.name()));
    }
}
