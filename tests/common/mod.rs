//! Shared test helpers: an independent textbook perceptron, data
//! generators, and the binary under test with the repository's data files.

use perceptron::Real;
use perceptron::data::{CsrMatrix, Dataset, DenseMatrix, Features, Format, LabelMap};

/// The textbook algorithm, written out independently of the crate's loop.
/// Returns (w~, mistakes per epoch).
pub fn textbook<F: Real>(data: &Dataset<F>, bias: bool, max_epochs: usize) -> (Vec<F>, Vec<u64>) {
    let d = data.cols();
    let mut w = vec![F::ZERO; d + bias as usize];
    let mut per_epoch = Vec::new();
    for _ in 0..max_epochs {
        let mut mistakes = 0;
        for i in 0..data.rows() {
            let (idx, val): (Vec<usize>, Vec<F>) = match data.features.row(i) {
                perceptron::data::Row::Dense(x) => (0..x.len()).zip(x.iter().copied()).unzip(),
                perceptron::data::Row::Sparse(ix, v) => {
                    (ix.iter().map(|&k| k as usize).zip(v.iter().copied())).unzip()
                }
            };
            let mut s = F::ZERO;
            for (&k, &v) in idx.iter().zip(&val) {
                s = s + w[k] * v;
            }
            if bias {
                s = s + w[d];
            }
            let y = data.labels[i];
            let ys = if y > 0 { s } else { -s };
            if ys <= F::ZERO {
                mistakes += 1;
                for (&k, &v) in idx.iter().zip(&val) {
                    w[k] = if y > 0 { w[k] + v } else { w[k] - v };
                }
                if bias {
                    w[d] = if y > 0 { w[d] + F::ONE } else { w[d] - F::ONE };
                }
            }
        }
        per_epoch.push(mistakes);
        if mistakes == 0 {
            break;
        }
    }
    (w, per_epoch)
}

/// xorshift64*: a small deterministic generator for test data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

pub fn labels_map() -> LabelMap {
    LabelMap {
        positive: "1".into(),
        negative: Some("-1".into()),
    }
}

/// A dataset of dense rows of `cols` values each, one per label.
pub fn dense_dataset<F: Real>(cols: usize, values: Vec<F>, labels: Vec<i8>) -> Dataset<F> {
    dataset(
        Features::Dense(DenseMatrix {
            rows: labels.len(),
            cols,
            values: values.into(),
        }),
        labels,
    )
}

pub fn dataset<F: Real>(features: Features<F>, labels: Vec<i8>) -> Dataset<F> {
    Dataset {
        features,
        labels,
        label_map: labels_map(),
        classes: vec![],
        class_ids: vec![],
        source: "generated".into(),
        format: Format::Csv,
        facts: Default::default(),
    }
}

/// Dense data labelled by a random hyperplane, with a fraction `noise` of
/// labels flipped. Values are drawn with `scale` spread of magnitudes.
pub fn random_dense<F: Real>(rng: &mut Rng, rows: usize, cols: usize, noise: f64) -> Dataset<F> {
    let plane: Vec<f64> = (0..cols).map(|_| rng.unit() - 0.5).collect();
    let offset = rng.unit() - 0.5;
    let mut values = Vec::with_capacity(rows * cols);
    let mut labels = Vec::with_capacity(rows);
    for _ in 0..rows {
        let mut s = offset * 0.3;
        for &p in &plane {
            let v = F::from_f64((rng.unit() - 0.5) * 4.0);
            s += p * v.to_f64();
            values.push(v);
        }
        let mut y = if s > 0.0 { 1 } else { -1 };
        if rng.unit() < noise {
            y = -y;
        }
        labels.push(y);
    }
    dense_dataset(cols, values, labels)
}

/// Sparse data with about `nnz` entries per row out of `cols`.
pub fn random_sparse<F: Real>(
    rng: &mut Rng,
    rows: usize,
    cols: usize,
    nnz: usize,
    noise: f64,
) -> Dataset<F> {
    let plane: Vec<f64> = (0..cols).map(|_| rng.unit() - 0.5).collect();
    let mut m = CsrMatrix {
        cols,
        row_ptr: vec![0].into(),
        ..Default::default()
    };
    let mut labels = Vec::with_capacity(rows);
    for _ in 0..rows {
        let mut idx: Vec<u32> = (0..nnz).map(|_| rng.below(cols) as u32).collect();
        idx.sort_unstable();
        idx.dedup();
        let mut s = 0.0;
        for &k in &idx {
            let v = F::from_f64(rng.unit() * 2.0 - 0.5);
            s += plane[k as usize] * v.to_f64();
            m.indices.to_mut().push(k);
            m.values.to_mut().push(v);
        }
        m.row_ptr.to_mut().push(m.indices.len());
        let mut y = if s > 0.0 { 1 } else { -1 };
        if rng.unit() < noise {
            y = -y;
        }
        labels.push(y);
    }
    dataset(Features::Sparse(m), labels)
}

/// The variants written out from their specification (src/train/variant.rs),
/// independently of the crate's loop. Returns (returned weights, mistakes
/// per epoch, pocket epoch and mistakes).
pub fn textbook_variant<F: Real>(
    data: &Dataset<F>,
    bias: bool,
    max_epochs: usize,
    variant: perceptron::train::Variant,
    tau: F,
) -> (Vec<F>, Vec<u64>, Option<(usize, u64)>) {
    use perceptron::data::Row;
    use perceptron::train::Variant;
    let (n, d) = (data.rows(), data.cols());
    let dim = d + bias as usize;
    let entries = |i: usize| -> Vec<(usize, F)> {
        match data.features.row(i) {
            Row::Dense(x) => x.iter().copied().enumerate().collect(),
            Row::Sparse(ix, v) => ix
                .iter()
                .map(|&k| k as usize)
                .zip(v.iter().copied())
                .collect(),
        }
    };
    let dot = |w: &[F], i: usize| {
        let mut s = F::ZERO;
        for (k, v) in entries(i) {
            s = s + w[k] * v;
        }
        if bias {
            s = s + w[d];
        }
        s
    };
    let signed = |y: i8, s: F| if y > 0 { s } else { -s };
    let count = |w: &[F]| {
        (0..n)
            .filter(|&i| signed(data.labels[i], dot(w, i)) <= F::ZERO)
            .count() as u64
    };
    let mut w = vec![F::ZERO; dim];
    let mut u = vec![F::ZERO; dim];
    let (mut pw, mut pm, mut prun, mut pepoch) = (w.clone(), count(&w), 0u64, 0usize);
    let (mut run, mut evaluated) = (0u64, true);
    let mut per_epoch = Vec::new();
    for epoch in 0..max_epochs {
        let mut m = 0;
        for i in 0..n {
            let y = data.labels[i];
            let c = (epoch * n + i + 1) as u64;
            if signed(y, dot(&w, i)) <= tau {
                m += 1;
                let k = F::from_f64((c - 1) as f64);
                for (j, v) in entries(i) {
                    w[j] = if y > 0 { w[j] + v } else { w[j] - v };
                    let kv = k * v;
                    u[j] = if y > 0 { u[j] + kv } else { u[j] - kv };
                }
                if bias {
                    w[d] = if y > 0 { w[d] + F::ONE } else { w[d] - F::ONE };
                    u[d] = if y > 0 { u[d] + k } else { u[d] - k };
                }
                run = 0;
                evaluated = false;
            } else {
                run += 1;
                if !evaluated && run > prun {
                    evaluated = true;
                    let mc = count(&w);
                    if mc < pm {
                        (pw, pm, prun, pepoch) = (w.clone(), mc, run, epoch);
                    }
                }
            }
        }
        per_epoch.push(m);
        if m == 0 {
            break;
        }
    }
    let visits = F::from_f64((per_epoch.len() * n).max(1) as f64);
    match variant {
        Variant::Classic => (w, per_epoch, None),
        Variant::Averaged => (
            w.iter().zip(&u).map(|(&a, &b)| a - b / visits).collect(),
            per_epoch,
            None,
        ),
        Variant::Pocket => (pw, per_epoch, Some((pepoch, pm))),
    }
}

/// Dense data with `classes` classes: the label is the class whose random
/// plane scores highest, with a fraction `noise` relabelled at random.
pub fn random_multiclass<F: Real>(
    rng: &mut Rng,
    rows: usize,
    cols: usize,
    classes: usize,
    noise: f64,
) -> Dataset<F> {
    use perceptron::data::ClassLabel;
    let planes: Vec<Vec<f64>> = (0..classes)
        .map(|_| (0..cols).map(|_| rng.unit() - 0.5).collect())
        .collect();
    let mut values = Vec::with_capacity(rows * cols);
    let mut class_ids = Vec::with_capacity(rows);
    for _ in 0..rows {
        let x: Vec<F> = (0..cols)
            .map(|_| F::from_f64((rng.unit() - 0.5) * 4.0))
            .collect();
        let score = |p: &Vec<f64>| p.iter().zip(&x).map(|(a, b)| a * b.to_f64()).sum::<f64>();
        let mut c = (0..classes)
            .max_by(|&a, &b| score(&planes[a]).total_cmp(&score(&planes[b])))
            .unwrap_or(0);
        if rng.unit() < noise {
            c = rng.below(classes);
        }
        values.extend(x);
        class_ids.push(c as u32);
    }
    let classes = (0..classes)
        .map(|c| ClassLabel {
            text: format!("c{c}"),
            number: None,
            count: class_ids.iter().filter(|&&k| k as usize == c).count() as u64,
            first_line: 0,
        })
        .collect();
    Dataset {
        features: Features::Dense(DenseMatrix {
            rows,
            cols,
            values: values.into(),
        }),
        labels: Vec::new(),
        label_map: LabelMap {
            positive: String::new(),
            negative: None,
        },
        classes,
        class_ids,
        source: "generated".into(),
        format: Format::Csv,
        facts: Default::default(),
    }
}

/// Head `h`'s binary dataset of one-vs-rest data.
pub fn head_dataset<F: Real>(data: &Dataset<F>, h: usize) -> Dataset<F> {
    let labels = data
        .class_ids
        .iter()
        .map(|&c| if c as usize == h { 1 } else { -1 })
        .collect();
    dataset(data.features.clone(), labels)
}

/// The `perceptron` binary, run in `dir`.
pub fn cmd(dir: &std::path::Path) -> assert_cmd::Command {
    let mut c = assert_cmd::cargo::cargo_bin_cmd!("perceptron");
    c.current_dir(dir);
    c
}

/// The `perceptron` binary, run in `dir` with standard input from the null
/// device, as from a terminal: a command given no DATA uses its bundled
/// demo data (assert_cmd's own commands pipe standard input, which such a
/// command reads). Assert with `assert_cmd::prelude::OutputAssertExt`.
pub fn demo_cmd(dir: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new(bin());
    c.current_dir(dir).stdin(std::process::Stdio::null());
    c
}

/// The `perceptron` binary under test.
pub fn bin() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_perceptron"))
}

/// A path as a command-line argument.
pub fn p(path: &std::path::Path) -> &str {
    path.to_str().unwrap()
}

/// A file of the repository's `data/`.
pub fn data_file(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

/// A file of the repository's `data/` as a command-line argument.
pub fn data_str(name: &str) -> String {
    data_file(name).display().to_string()
}

/// The parts of a model file that training determines (not timings), bit
/// for bit: the weights, the bias and the mistakes per epoch.
pub fn essence(model: &std::path::Path) -> (Vec<u64>, u64, Vec<u64>) {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap();
    let bits = |x: &serde_json::Value| x.as_f64().unwrap().to_bits();
    let w = v["weights"].as_array().unwrap().iter().map(bits).collect();
    let m = v["training"]["mistakes_per_epoch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    (w, bits(&v["bias"]), m)
}
