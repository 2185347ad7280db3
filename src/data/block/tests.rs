use std::io::Write;
use std::path::PathBuf;

use super::*;
use crate::data::binary;
use crate::data::shards::concat;
use crate::data::{format::infer_format, load_raw};

fn data_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

fn format_of(path: &Path) -> Format {
    infer_format(path, b"").unwrap()
}

/// The whole file read as `k` parts cut at equal byte offsets.
fn in_parts(path: &Path, k: u64) -> Result<RawData<f32>> {
    let opts = LoadOptions::default();
    let format = format_of(path);
    let size = std::fs::metadata(path).unwrap().len();
    let start = match format {
        Format::Csv => csv_start(path, &opts, false)?,
        _ => None,
    };
    let cuts: Vec<u64> = (0..=k)
        .map(|r| line_start_at_or_after(path, size, size * r / k).unwrap())
        .collect();
    let mut pieces = Vec::new();
    let mut before = 0;
    for w in cuts.windows(2) {
        let part = read_text::<f32>(path, format, &opts, (w[0], w[1]), before, start.as_ref())?;
        before += count_newlines(path, (w[0], w[1]))?;
        pieces.push((path.to_path_buf(), part));
    }
    concat(pieces)
}

fn same(a: &RawData<f32>, b: &RawData<f32>) {
    assert_eq!(a.features, b.features);
    assert_eq!(a.class_ids, b.class_ids);
    let t = |r: &RawData<f32>| {
        r.table
            .classes()
            .iter()
            .map(|c| (c.text.clone(), c.count))
            .collect::<Vec<_>>()
    };
    assert_eq!(t(a), t(b));
    assert_eq!(a.csv, b.csv);
}

#[test]
fn parts_of_text_join_to_the_whole_file() {
    for name in [
        "heart_scale.svm",
        "digits_3v5.csv",
        "iris_setosa.csv",
        "breast_cancer.csv",
    ] {
        let path = data_file(name);
        let whole = load_raw::<f32>(&path, &LoadOptions::default()).unwrap();
        for k in [1, 2, 3, 7, 50] {
            same(&in_parts(&path, k).unwrap(), &whole);
        }
    }
}

#[test]
fn a_bad_line_in_a_part_gives_the_whole_files_message() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(data_file("iris_setosa.csv")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let n = lines.len();
    lines[n - 5] = lines[n - 5].replacen(',', ",x", 1);
    let path = dir.path().join("bad.csv");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let want = load_raw::<f32>(&path, &LoadOptions::default())
        .unwrap_err()
        .to_string();
    for k in [2, 3, 9] {
        let got = in_parts(&path, k).unwrap_err().to_string();
        assert_eq!(got, want, "{k} parts");
    }
}

#[test]
fn a_header_and_comments_are_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.csv");
    let mut body = String::from("# a comment\n\n# another\ny,a,b\n");
    for i in 0..200 {
        body.push_str(&format!("{},{}.5,{}\n", i % 2, i, 3 * i));
    }
    std::fs::write(&path, &body).unwrap();
    let whole = load_raw::<f32>(&path, &LoadOptions::default()).unwrap();
    assert_eq!(whole.csv.as_ref().unwrap().header_line, Some(4));
    // So many parts that the first ones hold only comments.
    for k in [2, 5, 40, 300] {
        same(&in_parts(&path, k).unwrap(), &whole);
    }
}

#[test]
fn gzip_parts_by_lines_join_to_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["heart_scale.svm", "digits_3v5.csv"] {
        let text = std::fs::read(data_file(name)).unwrap();
        let path = dir.path().join(format!("{name}.gz"));
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&text).unwrap();
        std::fs::write(&path, enc.finish().unwrap()).unwrap();
        let opts = LoadOptions::default();
        let whole = load_raw::<f32>(&path, &opts).unwrap();
        let lines = count_gzip_lines(&path).unwrap();
        assert_eq!(lines, memchr::memchr_iter(b'\n', &text).count() as u64);
        let format = format_of(&path);
        let start = match format {
            Format::Csv => csv_start(&path, &opts, true).unwrap(),
            _ => None,
        };
        for k in [1u64, 2, 5] {
            let pieces = (0..k)
                .map(|r| {
                    let range = (lines * r / k, lines * (r + 1) / k);
                    let part = read_gzip_lines::<f32>(&path, format, &opts, range, start.as_ref());
                    (path.clone(), part.unwrap())
                })
                .collect();
            same(&concat(pieces).unwrap(), &whole);
        }
    }
}

#[test]
fn pbin_rows_join_to_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["heart_scale.svm", "digits_3v5.csv"] {
        let raw = load_raw::<f64>(&data_file(name), &LoadOptions::default()).unwrap();
        let path = dir.path().join("x.pbin");
        let file = std::fs::File::create(&path).unwrap();
        binary::write_raw(std::io::BufWriter::new(file), &raw).unwrap();
        let whole = load_raw::<f32>(&path, &LoadOptions::default()).unwrap();
        let rows = binary::block::rows_of(&path).unwrap();
        for k in [1u64, 2, 3, 10] {
            let pieces = (0..k)
                .map(|r| {
                    let (lo, hi) = (rows * r / k, rows * (r + 1) / k);
                    let (part, counts) = binary::block::read_rows::<f32>(&path, lo, hi).unwrap();
                    assert_eq!(counts.class_rows.iter().sum::<u64>(), hi - lo);
                    (path.clone(), part)
                })
                .collect();
            let joined = concat(pieces).unwrap();
            assert_eq!(joined.features, whole.features, "{name} in {k}");
            assert_eq!(joined.class_ids, whole.class_ids);
        }
    }
}
