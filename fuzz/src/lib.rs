//! The fuzz targets' bodies: each feeds the bytes libFuzzer hands it to one
//! of perceptron's readers and checks what comes back. A reader may refuse
//! any input (that is an error value, not a crash); a crash is a panic, an
//! abort, a hang (libFuzzer's `-timeout`), or an allocation over
//! [`MAX_ALLOC_BYTES`].
//!
//! When a reader accepts an input, cheap properties are checked:
//! - data: the fast path (in blocks small enough to be crossed) reads what
//!   the line reader reads, or fails with its message; the shapes agree (rows, class ids, row pointers, indices below
//!   `cols`), every value is finite, class ids index the label table whose
//!   counts add up; an f32 read succeeds only where the f64 read does, with
//!   the same shape; the data written as `.pbin`, and text data written
//!   back in its own format (as `perceptron convert` would), read back bit
//!   for bit.
//! - models and checkpoints: what loads saves and loads back to the same
//!   value.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Cursor;
use std::path::{Path, PathBuf};

use perceptron::Real;
use perceptron::data::blocks::Reading;
use perceptron::data::{
    Dataset, Features, Format, HeaderMode, LabelColumn, LabelMap, LoadOptions, RawData, binary,
    csv, format, libsvm, source,
};
use perceptron::model::{self, AnyModel};
use perceptron::train::{RunDescription, State, Variant, checkpoint};

/// The largest single allocation allowed while fuzzing. Inputs are at most
/// a few tens of KiB (`-max_len`), so anything near this is an allocation
/// sized by a hostile number rather than by the input. libFuzzer's own
/// `-malloc_limit_mb` needs a sanitizer's allocator hooks, so without a
/// sanitizer this allocator is what catches such allocations, even ones that
/// would never be touched (and so never show in the RSS limit).
pub const MAX_ALLOC_BYTES: usize = 256 << 20;

/// The system allocator, aborting on any allocation over [`MAX_ALLOC_BYTES`].
pub struct CappedAlloc;

#[inline]
fn check_size(size: usize) {
    if size > MAX_ALLOC_BYTES {
        // Small allocations from here on are fine; the backtrace names the
        // culprit, and abort() is what libFuzzer reports as a crash.
        eprintln!(
            "==fuzz== allocation of {size} bytes exceeds the fuzzing limit of \
             {MAX_ALLOC_BYTES} bytes\n{}",
            std::backtrace::Backtrace::force_capture()
        );
        std::process::abort();
    }
}

// SAFETY: forwards to the system allocator unchanged.
unsafe impl GlobalAlloc for CappedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check_size(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check_size(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check_size(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc;

// ---------------------------------------------------------------------------
// Data

/// The CSV options a selector byte picks: header mode, delimiter, label
/// column, --positive and, from 192 up, unlabeled reading (byte 0 is the
/// defaults).
pub fn csv_options(sel: u8) -> LoadOptions {
    let sel = sel as usize;
    LoadOptions {
        format: Some(Format::Csv),
        header: [HeaderMode::Auto, HeaderMode::Present, HeaderMode::Absent][sel % 3],
        delimiter: [None, Some(b','), Some(b';'), Some(b'\t')][sel / 3 % 4],
        label_column: [
            None,
            Some(LabelColumn::Index(2)),
            Some(LabelColumn::Name("label".into())),
            Some(LabelColumn::Index(1)),
        ][sel / 12 % 4]
            .clone(),
        positive: [None, Some("1".into()), Some("b".into()), None][sel / 48 % 4].clone(),
        unlabeled: sel >= 192,
        label_column_from: None,
        labels: None,
        index_base: None,
        index_base_from: None,
        ignore_columns: Vec::new(),
        ignore_columns_from: None,
    }
}

/// CSV: the first byte picks the options ([`csv_options`]), the rest is the
/// file's content.
pub fn csv(data: &[u8]) {
    let Some((&sel, text)) = data.split_first() else {
        return;
    };
    let opts = csv_options(sel);
    let path = Path::new("fuzz.csv");
    infer_format(text);
    let wide = csv::parse_sized::<f64, _>(text, path, &opts, Some(text.len() as u64));
    let narrow = csv::parse::<f32, _>(text, path, &opts);
    // The fast path, in blocks small enough that these inputs cross them,
    // reads what the line reader reads.
    let slow = csv::parse_with::<f32, _>(text, path, &opts, None, Reading::line_by_line());
    let tiny = Reading {
        fast: true,
        block_bytes: 1 + usize::from(sel % 61),
    };
    let fast = csv::parse_with::<f32, _>(text, path, &opts, None, tiny);
    same_reading(&fast, &slow, &narrow);
    check_pair(wide, narrow, path, &opts);
}

/// Two readings of one input agree: the same data, bit for bit, with the
/// same labels (counts and first lines), or the same error message; and
/// both agree with `default`, the production reading.
fn same_reading<F: Real>(
    fast: &perceptron::Result<RawData<F>>,
    slow: &perceptron::Result<RawData<F>>,
    default: &perceptron::Result<RawData<F>>,
) {
    for r in [fast, default] {
        match (r, slow) {
            (Ok(a), Ok(b)) => {
                same_data(a, b);
                let lines = |r: &RawData<F>| -> Vec<u64> {
                    r.table.classes().iter().map(|c| c.first_line).collect()
                };
                assert_eq!(lines(a), lines(b));
                assert_eq!(a.csv, b.csv);
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!(
                "the fast path and the line reader disagree: {:?} against {:?}",
                a.as_ref().err().map(ToString::to_string),
                b.as_ref().err().map(ToString::to_string)
            ),
        }
    }
}

/// Format detection from a file's first bytes (for a name that does not
/// tell): any answer but a panic.
fn infer_format(text: &[u8]) {
    let head = &text[..text.len().min(source::HEAD_BYTES)];
    let _ = format::infer_format(Path::new("fuzz.txt"), head);
}

/// LIBSVM: the bytes are the file's content.
pub fn libsvm(text: &[u8]) {
    let path = Path::new("fuzz.svm");
    infer_format(text);
    let wide = libsvm::parse_sized::<f64, _>(text, path, Some(text.len() as u64));
    let narrow = libsvm::parse::<f32, _>(text, path);
    let slow = libsvm::parse_with::<f32, _>(text, path, false, None, Reading::line_by_line());
    let tiny = Reading {
        fast: true,
        block_bytes: 1 + text.len() % 61,
    };
    let fast = libsvm::parse_with::<f32, _>(text, path, false, None, tiny);
    same_reading(&fast, &slow, &narrow);
    check_pair(wide, narrow, path, &LoadOptions::default());
}

/// `.pbin`: the bytes are the whole file, read in both precisions.
pub fn pbin(bytes: &[u8]) {
    let path = Path::new("fuzz.pbin");
    let wide = binary::read_from_bytes::<f64>(bytes, path);
    let narrow = binary::read_from_bytes::<f32>(bytes, path);
    if let Ok(raw) = &wide {
        assert_eq!(raw.format, Format::Binary);
    }
    check_pair(wide, narrow, path, &LoadOptions::default());
}

/// Checks the f64 and f32 readings of one input.
fn check_pair(
    wide: perceptron::Result<RawData<f64>>,
    narrow: perceptron::Result<RawData<f32>>,
    path: &Path,
    opts: &LoadOptions,
) {
    if let Ok(raw) = &wide {
        check_raw(raw);
    }
    if let Ok(raw) = &narrow {
        check_raw(raw);
        // Every f32 value is an f64 value: what reads as f32 reads as f64.
        let Ok(w) = &wide else {
            panic!("read as f32 but not as f64: {}", wide.as_ref().unwrap_err());
        };
        assert_eq!(shape(&w.features), shape(&raw.features));
        assert_eq!(w.class_ids, raw.class_ids);
        assert_eq!(w.table.classes(), raw.table.classes());
    }
    if let Ok(raw) = wide {
        round_trip(&raw);
        text_round_trip(&raw);
        let _ = Dataset::from_raw(raw.clone(), path, opts.positive.as_deref());
        let _ = Dataset::from_raw_classes(raw, path);
    }
    if let Ok(raw) = narrow {
        round_trip(&raw);
        text_round_trip(&raw);
    }
}

type Shape = (usize, usize, usize, Option<(Vec<usize>, Vec<u32>)>);

fn shape<F>(f: &Features<F>) -> Shape {
    match f {
        Features::Dense(m) => (m.rows, m.cols, m.values.len(), None),
        Features::Sparse(m) => (
            m.rows(),
            m.cols,
            m.values.len(),
            Some((m.row_ptr.to_vec(), m.indices.to_vec())),
        ),
    }
}

/// The invariants of parsed data.
pub fn check_raw<F: Real>(raw: &RawData<F>) {
    let rows = raw.features.rows();
    assert!(rows > 0, "accepted data without rows");
    assert_eq!(raw.class_ids.len(), rows);
    let values = match &raw.features {
        Features::Dense(m) => {
            assert_eq!(Some(m.values.len()), m.rows.checked_mul(m.cols));
            &m.values
        }
        Features::Sparse(m) => {
            assert_eq!(m.row_ptr.first(), Some(&0));
            assert_eq!(m.row_ptr.last(), Some(&m.values.len()));
            assert_eq!(m.indices.len(), m.values.len());
            for w in m.row_ptr.windows(2) {
                assert!(w[0] <= w[1], "row_ptr decreases");
                let idx = &m.indices[w[0]..w[1]];
                assert!(
                    idx.windows(2).all(|p| p[0] < p[1]),
                    "indices not increasing"
                );
                assert!(idx.iter().all(|&i| (i as usize) < m.cols), "index >= cols");
            }
            &m.values
        }
    };
    assert!(
        values.iter().all(|v| v.is_finite()),
        "a stored value is not finite"
    );
    let classes = raw.table.classes();
    assert!(!classes.is_empty());
    let mut counts = vec![0u64; classes.len()];
    for &c in &raw.class_ids {
        counts[c as usize] += 1;
    }
    for (class, n) in classes.iter().zip(counts) {
        assert_eq!(class.count, n, "label {:?} miscounted", class.text);
        assert!(n > 0, "label {:?} used by no row", class.text);
    }
}

/// Parsed data written as `.pbin` reads back bit for bit.
fn round_trip<F: Real>(raw: &RawData<F>) {
    let mut out = Cursor::new(Vec::new());
    if binary::write_raw(&mut out, raw).is_err() {
        return;
    }
    let bytes = out.into_inner();
    let back = binary::read_from_bytes::<F>(&bytes, Path::new("round-trip.pbin"))
        .unwrap_or_else(|e| panic!("a written .pbin does not read back: {e}"));
    same_data(&back, raw);
}

/// The same values (bit for bit), shape, class ids and labels.
fn same_data<F: Real>(back: &RawData<F>, raw: &RawData<F>) {
    let bits = |f: &Features<F>| -> (Shape, Vec<u64>) {
        let v = match f {
            Features::Dense(m) => &m.values,
            Features::Sparse(m) => &m.values,
        };
        (shape(f), v.iter().map(|x| x.to_f64().to_bits()).collect())
    };
    assert_eq!(bits(&back.features), bits(&raw.features));
    assert_eq!(back.class_ids, raw.class_ids);
    let labels = |r: &RawData<F>| -> Vec<(String, Option<u64>, u64)> {
        r.table
            .classes()
            .iter()
            .map(|c| (c.text.clone(), c.number.map(f64::to_bits), c.count))
            .collect()
    };
    assert_eq!(labels(back), labels(raw));
}

/// Text data written back in its own format with the writer's line
/// functions (label first; LIBSVM stores the same entries) reads back bit
/// for bit with the default options.
fn text_round_trip<F: Real>(raw: &RawData<F>) {
    let csv = match raw.format {
        Format::Csv => true,
        Format::Libsvm => false,
        Format::Binary | Format::Npy => return,
    };
    let label = |t: &str| {
        if csv {
            csv::csv_label(t)
        } else {
            libsvm::libsvm_label(t)
        }
    };
    // Labels the writer refuses (a line break; spaces in LIBSVM) are fine.
    let Ok(labels) = raw
        .table
        .classes()
        .iter()
        .map(|c| label(&c.text))
        .collect::<Result<Vec<String>, String>>()
    else {
        return;
    };
    let cols = raw.features.cols();
    let mut text = Vec::new();
    for (i, &c) in raw.class_ids.iter().enumerate() {
        let row = raw.features.row(i);
        if csv {
            let start = text.len();
            csv::csv_line(&mut text, &labels[c as usize], row, cols);
            if i == 0 {
                csv::first_line_as_data(&mut text, start, b',', 0);
            }
        } else {
            libsvm::libsvm_line(&mut text, &labels[c as usize], row);
        }
    }
    let path = Path::new("round-trip");
    let back = if csv {
        csv::parse::<F, _>(&text[..], path, &LoadOptions::default())
    } else {
        libsvm::parse::<F, _>(&text[..], path)
    };
    let back = back.unwrap_or_else(|e| {
        panic!(
            "written text does not read back: {e}\n{}",
            String::from_utf8_lossy(&text)
        )
    });
    same_data(&back, raw);
}

// ---------------------------------------------------------------------------
// Models and checkpoints

/// A file of this process under a RAM-backed directory when there is one.
fn scratch(name: &str) -> PathBuf {
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("perceptron-fuzz-{}-{name}", std::process::id()))
}

/// Model files: whatever loads saves and loads back to the same model.
pub fn model(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let Ok(m) = model::parse(Path::new("fuzz-model.json"), text) else {
        return;
    };
    let path = scratch("model.json");
    match &m {
        AnyModel::F32(x) => x.save(&path),
        AnyModel::F64(x) => x.save(&path),
    }
    .unwrap_or_else(|e| panic!("a loaded model does not save: {e}"));
    let back = model::load(&path).unwrap_or_else(|e| panic!("a saved model does not load: {e}"));
    let _ = std::fs::remove_file(&path);
    assert_eq!(back, m);
}

/// The run a fuzzed checkpoint is checked against: its own `identity` when
/// that is plausible for a real run (so the fuzzer reaches past the identity
/// check), else a fixed one.
fn identity_of(text: &str) -> RunDescription {
    let own = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("identity").cloned())
        .and_then(|v| serde::Deserialize::deserialize(v).ok())
        .filter(|i: &RunDescription| {
            // A real run has fewer than 2^31 features and 65,536 heads.
            i.features <= perceptron::data::MAX_FEATURE_INDEX as usize
                && (1..=1 << 16).contains(&i.heads)
        });
    own.unwrap_or_else(|| RunDescription {
        precision: perceptron::Precision::F32,
        bias: true,
        max_epochs: 1000,
        seed: None,
        shuffle_every_epoch: None,
        labels: LabelMap {
            positive: "1".into(),
            negative: Some("-1".into()),
        },
        rows: 150,
        features: 4,
        fingerprint: "a588694bebd4c865".into(),
        variant: Variant::Classic,
        margin: None,
        init: None,
        multiclass: false,
        heads: 1,
        settings: Default::default(),
        scale: None,
        class_weight: None,
        early_stop: None,
        intercept_decay: None,
    })
}

/// Checkpoints: a state that loads is consistent with its run, and saves
/// and loads back to the same state.
pub fn checkpoint(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let identity = identity_of(text);
    checkpoint_in::<f32>(text, &identity);
    checkpoint_in::<f64>(text, &identity);
}

fn checkpoint_in<F: Real>(text: &str, identity: &RunDescription) {
    let Ok(state) = checkpoint::parse::<F>(Path::new("fuzz.ckpt"), text, identity) else {
        return;
    };
    let dim = (identity.features + identity.bias as usize) * identity.heads;
    check_state(&state, dim, identity);
    let path = scratch("checkpoint.json");
    checkpoint::save(&path, identity, &state)
        .unwrap_or_else(|e| panic!("a loaded checkpoint does not save: {e}"));
    let back = checkpoint::load::<F>(&path, identity)
        .unwrap_or_else(|e| panic!("a saved checkpoint does not load: {e}"));
    let _ = std::fs::remove_file(&path);
    assert_eq!(back, state);
}

fn check_state<F: Real>(s: &State<F>, dim: usize, identity: &RunDescription) {
    assert_eq!(s.weights.len(), dim);
    assert!(s.weights.iter().all(|w| w.is_finite()));
    if let Some(u) = &s.average {
        assert_eq!(u.len(), dim);
    }
    if let Some(p) = &s.pocket {
        assert_eq!(p.weights.len(), dim);
    }
    assert_eq!(s.epoch, s.mistakes_per_epoch.len());
    assert!(s.position <= identity.rows);
    assert!(s.epoch <= identity.max_epochs);
    // The counts a run on these rows can make (see check_against_rows).
    let heads = identity.heads as u64;
    assert!(
        s.mistakes_per_epoch
            .iter()
            .all(|&m| m <= identity.rows as u64 * heads)
    );
    assert!(s.mistakes_in_epoch <= s.position as u64 * heads);
    if identity.shuffle_every_epoch.is_none() && s.epoch > 1 {
        assert!(s.mistakes_per_epoch[..s.epoch - 1].iter().all(|&m| m > 0));
    }
    if identity.variant != perceptron::train::Variant::Pocket {
        assert!(s.pocket.is_none());
    } else if s.epoch > 0 || s.position > 0 {
        assert!(s.pocket.is_some());
    }
}
