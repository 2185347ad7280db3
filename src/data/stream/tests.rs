//! Row streams: the same rows and messages as the batch parsers, from
//! files, pipes and gzip, handed out as they arrive.

use std::io::{Cursor, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use super::*;
use crate::data::load_raw;
use crate::data::matrix::Features;
use crate::data::options::HeaderMode;
use crate::data::raw::RawData;

fn data_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// A row as owned values: (line, label, label column, indices, values, features).
type Owned<F> = (u64, String, u64, Vec<u32>, Vec<F>, usize);

fn own<F: Real>(r: StreamRow<'_, F>) -> Owned<F> {
    let (idx, val) = match r.row {
        Row::Dense(x) => ((0..x.len() as u32).collect(), x.to_vec()),
        Row::Sparse(i, v) => (i.to_vec(), v.to_vec()),
    };
    (
        r.line,
        r.label.to_owned(),
        r.label_column,
        idx,
        val,
        r.features,
    )
}

/// Every row of `stream`, or the first error's message.
fn drain<F: Real>(stream: &mut RowStream<'_, F>) -> std::result::Result<Vec<Owned<F>>, String> {
    let mut out = Vec::new();
    loop {
        match stream.next_row() {
            Ok(Some(r)) => out.push(own(r)),
            Ok(None) => return Ok(out),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// A stream over `bytes` as if read from a pipe named `name` (no format
/// from the name unless `named`).
fn stream_of<'p, F: Real>(
    name: &'p Path,
    bytes: &[u8],
    named: Option<Format>,
    opts: &LoadOptions,
    max_features: u64,
) -> Result<RowStream<'p, F>> {
    RowStream::from_reader(
        name,
        Box::new(Cursor::new(bytes.to_vec())),
        false,
        named,
        false,
        opts,
        max_features,
        None,
    )
}

fn rows_of<F: Real>(text: &[u8], opts: &LoadOptions) -> std::result::Result<Vec<Owned<F>>, String> {
    let name = Path::new(STDIN_NAME);
    let mut s = stream_of::<F>(name, text, None, opts, u64::MAX).map_err(|e| e.to_string())?;
    drain(&mut s)
}

/// The stream of a file holds exactly the batch parser's rows and labels.
fn same_as_batch<F: Real>(path: &Path) {
    let opts = LoadOptions::default();
    let raw: RawData<F> = load_raw(path, &opts).unwrap();
    let mut s = RowStream::<F>::open(StreamSource::File(path), &opts, u64::MAX, None).unwrap();
    assert_eq!(s.format(), raw.format);
    let rows = drain(&mut s).unwrap();
    assert_eq!(rows.len(), raw.features.rows(), "{}", path.display());
    for (i, (_, label, _, idx, val, features)) in rows.iter().enumerate() {
        let class = &raw.table.classes()[raw.class_ids[i] as usize];
        assert_eq!(label, &class.text);
        match (&raw.features, raw.features.row(i)) {
            (Features::Dense(m), Row::Dense(x)) => {
                assert_eq!(val[..], x[..]);
                assert_eq!(*features, m.cols);
            }
            (Features::Sparse(_), Row::Sparse(ix, v)) => {
                assert_eq!((&idx[..], &val[..]), (ix, v));
                assert_eq!(*features, ix.last().map_or(0, |&k| k as usize + 1));
            }
            _ => unreachable!(),
        }
    }
}

#[test]
fn every_bundled_file_streams_like_the_batch_parser() {
    for name in [
        "iris_setosa.csv",
        "iris_setosa.csv.gz",
        "iris_setosa.svm",
        "digits_3v5.csv",
        "digits_3v5.svm",
        "breast_cancer.csv",
        "heart_scale.svm",
    ] {
        same_as_batch::<f32>(&data_file(name));
        same_as_batch::<f64>(&data_file(name));
    }
}

#[test]
fn bad_lines_give_the_batch_parsers_messages() {
    let csv = [
        "1,2,3\n-1,4,abc\n",
        "y,a,b\n1,2,abc\n",
        "1,2\n1,NaN\n",
        "1,2\n1,1e999\n",
        "1,2,3\n1,2\n",
        "1,2,3\n\n1,2,3,4,5\n",
        "1,\"abc\n",
        "\"a\"b,1\n",
        "1,2\n ,3\n",
        "1,2\n1,\u{e9}x\n",
        "1\n2\n",
        "y,x\r\n1,abc\r\n",
        // One text field among numbers: a typo, not a header.
        "1,2,abc\n-1,4,5\n1,6,7\n",
    ];
    let svm = [
        "1 1:2\n1 0:1\n",
        "1 2:1 1:3\n",
        "1 1:1 2:1 2:3\n",
        "1 2147483648:1\n",
        "1 3:\n",
        "1 a:b\n",
        "1 1:2\n1:2 3:4\n",
        "1 qid:x 1:2\n",
        "1 1:nan\n",
        // Labels are numbers; a CSV file is not LIBSVM.
        "1,2\n-1,3\n",
        "+1 1:2\nyes 1:3\n",
        "1 1:2\ninf 1:3\n",
    ];
    let dir = tempfile::tempdir().unwrap();
    for (ext, cases) in [("csv", &csv[..]), ("svm", &svm[..])] {
        for (k, text) in cases.iter().enumerate() {
            let path = dir.path().join(format!("t{k}.{ext}"));
            std::fs::write(&path, text).unwrap();
            // A stream is one-based unless asked (it cannot look ahead for
            // an index 0); the batch reader, so told, refuses index 0 alike.
            let opts = LoadOptions {
                index_base: Some(crate::data::IndexBase::One),
                ..LoadOptions::default()
            };
            let batch = load_raw::<f64>(&path, &opts).unwrap_err().to_string();
            let streamed = RowStream::<f64>::open(
                StreamSource::File(&path),
                &LoadOptions::default(),
                u64::MAX,
                None,
            )
            .map_err(|e| e.to_string())
            .and_then(|mut s| drain(&mut s).map(|_| ()))
            .unwrap_err();
            assert_eq!(streamed, batch, "{text:?}");
        }
    }
    // Bytes that are not UTF-8.
    let path = dir.path().join("u.csv");
    std::fs::write(&path, b"1,2\n1,\xff\n").unwrap();
    let mut s = RowStream::<f32>::open(StreamSource::File(&path), &LoadOptions::default(), 9, None)
        .unwrap();
    assert_eq!(
        drain(&mut s).unwrap_err(),
        format!(
            "{}:2:3: invalid UTF-8 (byte 0xff); data files must be UTF-8 text",
            path.display()
        )
    );
}

#[test]
fn standard_input_is_named_in_messages_and_sniffed_from_its_first_line() {
    assert_eq!(
        rows_of::<f64>(b"# c\n\n1 1:2 3:4\n-1\n", &LoadOptions::default()).unwrap(),
        vec![
            (3, "1".into(), 1, vec![0, 2], vec![2.0, 4.0], 3),
            (4, "-1".into(), 1, vec![], vec![], 0),
        ]
    );
    assert_eq!(
        rows_of::<f64>(b"y;x\n 1;2.5\n", &LoadOptions::default()).unwrap(),
        vec![(2, "1".into(), 2, vec![0], vec![2.5], 1)]
    );
    assert_eq!(
        rows_of::<f64>(b"1,2\n-1,x\n", &LoadOptions::default()).unwrap_err(),
        "<stdin>:2:4: expected a number in column 2, found \"x\" (the label is read from column 1 by default; if column 2 holds the labels, take the last column as the label)"
    );
    assert_eq!(
        rows_of::<f64>(b"hello\n", &LoadOptions::default()).unwrap_err(),
        "<stdin>:1: cannot tell the format from the first data line \"hello\"; use --format \
         csv or --format libsvm"
    );
    assert_eq!(
        rows_of::<f64>(b"\n# only a comment\n", &LoadOptions::default()).unwrap_err(),
        "<stdin>: no data rows: the file is empty or holds only comments and blank lines"
    );
    // --format wins over the content; CSV options apply.
    let forced = LoadOptions {
        format: Some(Format::Csv),
        header: HeaderMode::Absent,
        label_column: Some(crate::data::LabelColumn::Index(2)),
        ..Default::default()
    };
    assert_eq!(
        rows_of::<f32>(b"3,a\n4,b\n", &forced).unwrap(),
        vec![
            (1, "a".into(), 3, vec![0], vec![3.0], 1),
            (2, "b".into(), 3, vec![0], vec![4.0], 1)
        ]
    );
}

#[test]
fn gzip_is_recognised_by_its_magic_bytes_even_multi_member() {
    let mut gz = gzip(b"1 1:2\n");
    gz.extend(gzip(b"-1 2:3\n"));
    let rows = rows_of::<f64>(&gz, &LoadOptions::default()).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1], (2, "-1".into(), 1, vec![1], vec![3.0], 2));
    let e = rows_of::<f64>(&gz[..gz.len() - 30], &LoadOptions::default()).unwrap_err();
    assert!(
        e.starts_with("<stdin>: cannot read: the gzip data is truncated or corrupt"),
        "{e}"
    );
    assert!(e.ends_with(", after line 1"), "{e}");
}

#[test]
fn unlabeled_streams_have_one_placeholder_label() {
    let un = LoadOptions {
        unlabeled: true,
        ..Default::default()
    };
    let svm = LoadOptions {
        format: Some(Format::Libsvm),
        ..un.clone()
    };
    assert_eq!(
        rows_of::<f64>(b"1:2 3:4\n5 2:1\n", &svm).unwrap(),
        vec![
            (1, NO_LABEL.into(), 1, vec![0, 2], vec![2.0, 4.0], 3),
            (2, NO_LABEL.into(), 1, vec![1], vec![1.0], 2),
        ]
    );
    assert_eq!(
        rows_of::<f64>(b"x,y\n1,2\n", &un).unwrap(),
        vec![(2, NO_LABEL.into(), 1, vec![0, 1], vec![1.0, 2.0], 2)]
    );
}

#[test]
fn feature_indices_beyond_the_limit_are_refused_where_they_appear() {
    let name = Path::new("t.svm");
    let mut s =
        stream_of::<f64>(name, b"1 4:1\n1 2:1 5:1\n", None, &Default::default(), 4).unwrap();
    assert_eq!(
        drain(&mut s).unwrap_err(),
        "t.svm:2:7: feature index 5 in \"5:1\" exceeds the limit of 4 (--max-features): the \
         weight vector grows to the largest feature index seen"
    );
    let e = stream_of::<f64>(name, b"1,2,3\n", None, &Default::default(), 1)
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "t.svm:1:1: 2 feature columns exceed the limit of 1 (--max-features): the weight \
         vector grows to the largest feature index seen"
    );
}

#[test]
fn binary_data_is_refused() {
    let mut bytes = crate::data::binary::MAGIC.to_vec();
    bytes.extend([0u8; 64]);
    let e = rows_of::<f32>(&bytes, &LoadOptions::default()).unwrap_err();
    assert!(
        e.starts_with("<stdin>: binary (.pbin) data cannot be read"),
        "{e}"
    );
    let e = stream_of::<f32>(
        Path::new("x.pbin"),
        b"1,2\n",
        Some(Format::Binary),
        &Default::default(),
        9,
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("cannot be read as a stream"), "{e}");
}

/// Yields `first`, then blocks until the test drops the sender.
struct Live {
    first: Option<Vec<u8>>,
    wait: mpsc::Receiver<()>,
}

impl Read for Live {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(b) = self.first.take() {
            buf[..b.len()].copy_from_slice(&b);
            return Ok(b.len());
        }
        let _ = self.wait.recv();
        Ok(0)
    }
}

#[test]
fn rows_are_handed_out_as_they_arrive_and_a_stop_ends_the_wait() {
    let (hold, wait) = mpsc::channel();
    let live = Live {
        first: Some(b"1,2\n".to_vec()),
        wait,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let name = Path::new(STDIN_NAME);
    let mut s = RowStream::<f64>::from_reader(
        name,
        Box::new(live),
        false,
        None,
        false,
        &LoadOptions::default(),
        9,
        Some(stop.clone()),
    )
    .unwrap();
    // The first row comes while the input is still open.
    let r = own(s.next_row().unwrap().unwrap());
    assert_eq!(r, (1, "1".into(), 1, vec![0], vec![2.0], 1));
    assert!(!s.stopped());
    let setter = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            stop.store(true, Ordering::Relaxed);
        })
    };
    let t0 = std::time::Instant::now();
    let e = s.next_row().err().unwrap();
    assert!(s.stopped());
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(
        e.to_string().contains("stopped while waiting for input"),
        "{e}"
    );
    setter.join().unwrap();
    drop(hold);
}
