//! `perceptron plot` and `train --plot` end to end: the files are valid (SVG
//! parses as XML with one mark per row, PNG and GIF decode at the requested
//! size), what is drawn matches the model (the boundary's pixels map back
//! onto w·x + b = 0 through the mapping the point marks define), and the
//! trace replays exactly the updates training makes.

use std::path::{Path, PathBuf};

use perceptron::data::{self, Dataset, LoadOptions};
use perceptron::model::{self, AnyModel, Model};
use perceptron::plot::trace;
use perceptron::train::{self, TrainParams};
use predicates::prelude::*;

use crate::common::{self, cmd, data_file};

const POSITIVE: &str = "#0072B2";
const NEGATIVE: &str = "#D55E00";
const REFERENCE: &str = "#009E73";
const INK: &str = "#000000";
const BAND: &str = "#CCCCCC";
const MIN_BAND: f64 = perceptron::plot::boundary::MIN_BAND_PIXELS;

/// A separable 2-D set that needs the bias, from a fixed LCG: `n` points in
/// [0,10] x [0,8], +1 above the line x2 = 1.2 x1 - 3 (with a gap of 0.6).
fn generated_csv(dir: &Path, n: usize) -> PathBuf {
    generated_csv_named(dir, n, "generated.csv")
}

fn generated_csv_named(dir: &Path, n: usize, name: &str) -> PathBuf {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::new();
    let mut rows = 0;
    while rows < n {
        let (x1, x2) = (10.0 * next(), 8.0 * next());
        let d = x2 - (1.2 * x1 - 3.0);
        if d.abs() < 0.6 {
            continue;
        }
        text.push_str(&format!(
            "{},{:.3},{:.3}\n",
            if d > 0.0 { 1 } else { -1 },
            x1,
            x2
        ));
        rows += 1;
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn train_model(dir: &Path, csv: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    cmd(dir)
        .arg("train")
        .arg(csv)
        .arg("-o")
        .arg(&out)
        .args(["--backend", "reference"])
        .args(extra)
        .assert()
        .code(predicate::in_iter([0, 3]));
    out
}

fn plot(dir: &Path, args: &[&str]) {
    cmd(dir).arg("plot").args(args).assert().success();
}

fn read_svg(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn attr(node: roxmltree::Node<'_, '_>, name: &str) -> f64 {
    node.attribute(name)
        .unwrap_or_else(|| panic!("no {name} on {node:?}"))
        .parse()
        .unwrap()
}

fn points_attr(node: roxmltree::Node<'_, '_>) -> Vec<(f64, f64)> {
    node.attribute("points")
        .unwrap()
        .split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

/// Elements `tag` whose `key` attribute is `value`, in document order.
fn elements<'a, 'i>(
    doc: &'a roxmltree::Document<'i>,
    tag: &str,
    key: &str,
    value: &str,
) -> Vec<roxmltree::Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.has_tag_name(tag) && n.attribute(key) == Some(value))
        .collect()
}

/// Least squares pixel = a·value + c; returns (a, c, largest residual).
fn fit_axis(values: &[f64], pixels: &[f64]) -> (f64, f64, f64) {
    let n = values.len() as f64;
    let (mv, mp) = (
        values.iter().sum::<f64>() / n,
        pixels.iter().sum::<f64>() / n,
    );
    let cov: f64 = values
        .iter()
        .zip(pixels)
        .map(|(v, p)| (v - mv) * (p - mp))
        .sum();
    let var: f64 = values.iter().map(|v| (v - mv) * (v - mv)).sum();
    let a = cov / var;
    let c = mp - a * mv;
    let worst = values
        .iter()
        .zip(pixels)
        .map(|(v, p)| (a * v + c - p).abs())
        .fold(0.0, f64::max);
    (a, c, worst)
}

/// The longest polyline with this stroke colour and width.
fn longest_polyline(doc: &roxmltree::Document<'_>, stroke: &str, width: &str) -> Vec<(f64, f64)> {
    elements(doc, "polyline", "stroke", stroke)
        .into_iter()
        .filter(|n| n.attribute("stroke-width") == Some(width))
        .map(points_attr)
        .max_by(|a, b| {
            let len =
                |p: &Vec<(f64, f64)>| (p[0].0 - p[p.len() - 1].0).hypot(p[0].1 - p[p.len() - 1].1);
            len(a).total_cmp(&len(b))
        })
        .expect("a boundary polyline")
}

fn load_f64(path: &Path) -> Dataset<f64> {
    data::load::<f64>(path, &LoadOptions::default()).unwrap()
}

fn model_f64(path: &Path) -> Model<f64> {
    match model::load(path).unwrap() {
        AnyModel::F64(m) => m,
        _ => panic!("expected a binary f64 model"),
    }
}

/// How far, in pixels, the drawn segment is from the line w·x + b = 0 under
/// the pixel mapping (ax, cx), (ay, cy): the larger of its two ends.
fn pixel_distance(segment: &[(f64, f64)], map: [(f64, f64); 2], w: [f64; 2], b: f64) -> f64 {
    let [(ax, cx), (ay, cy)] = map;
    segment
        .iter()
        .map(|&(px, py)| {
            let (x, y) = ((px - cx) / ax, (py - cy) / ay);
            // Distance in data units, then in pixels (equal aspect: |ax| = |ay|).
            (w[0] * x + w[1] * y + b).abs() / w[0].hypot(w[1]) * ax.abs()
        })
        .fold(0.0, f64::max)
}

#[test]
fn boundary_svg_has_one_mark_per_row_and_the_line_of_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let csv = generated_csv(dir.path(), 50);
    let m = train_model(dir.path(), &csv, "m.json", &["--precision", "f64"]);
    let svg_path = dir.path().join("b.svg");
    plot(
        dir.path(),
        &[
            "boundary",
            m.to_str().unwrap(),
            csv.to_str().unwrap(),
            "-o",
            "b.svg",
        ],
    );
    let text = read_svg(&svg_path);
    let doc = roxmltree::Document::parse(&text).expect("the SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");

    let ds = load_f64(&csv);
    let model = model_f64(&m);
    let (pos, neg): (Vec<usize>, Vec<usize>) = (0..ds.rows()).partition(|&i| ds.labels[i] > 0);
    // One mark per row, plus one key in the legend for each class.
    let circles = elements(&doc, "circle", "fill", POSITIVE);
    let triangles = elements(&doc, "polygon", "fill", NEGATIVE);
    assert_eq!(circles.len(), pos.len() + 1);
    assert_eq!(triangles.len(), neg.len() + 1);

    // The marks of the rows (the legend's key is drawn first) define the
    // pixel mapping; every mark must sit where its row is.
    let row = |i: usize, k: usize| match ds.features.row(i) {
        perceptron::data::Row::Dense(x) => x[k],
        _ => unreachable!(),
    };
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let mut px = Vec::new();
    let mut py = Vec::new();
    for (&i, c) in pos.iter().zip(&circles[1..]) {
        xs.push(row(i, 0));
        ys.push(row(i, 1));
        px.push(attr(*c, "cx"));
        py.push(attr(*c, "cy"));
    }
    for (&i, t) in neg.iter().zip(&triangles[1..]) {
        let p = points_attr(*t);
        xs.push(row(i, 0));
        ys.push(row(i, 1));
        px.push(p.iter().map(|q| q.0).sum::<f64>() / 3.0);
        py.push(p.iter().map(|q| q.1).sum::<f64>() / 3.0);
    }
    let (ax, cx, rx) = fit_axis(&xs, &px);
    let (ay, cy, ry) = fit_axis(&ys, &py);
    assert!(rx < 1.5 && ry < 1.5, "marks off their rows: {rx} {ry}");
    assert!(ay < 0.0, "y grows upwards");
    assert!(
        (ax.abs() - ay.abs()).abs() < 0.02 * ax.abs(),
        "one unit is as long on both axes: {ax} {ay}"
    );

    // The boundary: both ends of the drawn segment lie on w·x + b = 0.
    let segment = longest_polyline(&doc, INK, "3");
    let w = [model.weights(0)[0], model.weights(0)[1]];
    let d = pixel_distance(&segment, [(ax, cx), (ay, cy)], w, model.bias(0));
    assert!(d < 1.5, "the drawn line is {d} px off w·x + b = 0");
    // ... and the check can fail: a line shifted by 4 pixels is caught.
    let shift = 4.0 / ax.abs() * w[0].hypot(w[1]);
    let off = pixel_distance(&segment, [(ax, cx), (ay, cy)], w, model.bias(0) + shift);
    assert!(off > 3.0, "{off}");
    // The segment crosses the plot: at least a third of its width.
    let plot_width = (px.iter().cloned().fold(f64::MIN, f64::max)
        - px.iter().cloned().fold(f64::MAX, f64::min))
    .abs();
    let length = (segment[0].0 - segment[1].0).hypot(segment[0].1 - segment[1].1);
    assert!(length > plot_width / 3.0, "{length} {plot_width}");

    // The margin band: its edges (the band polygon's outermost vertices)
    // are gamma from the line, or MIN_BAND pixels when that is less, which
    // the legend then says.
    let gamma = (0..ds.rows())
        .map(|i| ds.labels[i] as f64 * (w[0] * row(i, 0) + w[1] * row(i, 1) + model.bias(0)))
        .fold(f64::INFINITY, f64::min)
        / w[0].hypot(w[1]);
    let true_px = gamma * ax.abs();
    let band = elements(&doc, "polygon", "fill", BAND);
    assert_eq!(band.len(), 1, "one band");
    let edge = pixel_distance(
        &points_attr(band[0]),
        [(ax, cx), (ay, cy)],
        w,
        model.bias(0),
    );
    assert!(
        (edge - true_px.max(MIN_BAND)).abs() < 1.5,
        "band edge {edge} px from the line, gamma is {true_px} px"
    );
    assert_eq!(text.contains("not to scale"), true_px < MIN_BAND);

    // The normal vector w is drawn (green) and the title names the model.
    assert!(!elements(&doc, "polyline", "stroke", REFERENCE).is_empty());
    assert!(text.contains("Decision boundary: m.json on generated.csv"));
    assert!(text.contains("all 50 rows classified correctly"));
}

#[test]
fn large_data_is_thinned_and_the_title_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let small = generated_csv(dir.path(), 50);
    let m = train_model(dir.path(), &small, "m.json", &[]);
    let big = generated_csv_named(dir.path(), 30_000, "big.csv");
    plot(
        dir.path(),
        &[
            "boundary",
            m.to_str().unwrap(),
            big.to_str().unwrap(),
            "-o",
            "big.svg",
        ],
    );
    let text = read_svg(&dir.path().join("big.svg"));
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert!(
        text.contains("every 2nd row drawn (15000 of 30000)"),
        "{text:.2000}"
    );
    let marks = elements(&doc, "circle", "fill", POSITIVE).len()
        + elements(&doc, "polygon", "fill", NEGATIVE).len();
    assert_eq!(marks, 15_000 + 2);
}

#[test]
fn projected_boundary_puts_rows_at_their_projection_onto_w() {
    let dir = tempfile::tempdir().unwrap();
    let csv = data_file("digits_3v5.csv");
    let m = train_model(dir.path(), &csv, "d.json", &["--precision", "f64"]);
    plot(
        dir.path(),
        &[
            "boundary",
            m.to_str().unwrap(),
            csv.to_str().unwrap(),
            "-o",
            "d.svg",
        ],
    );
    let text = read_svg(&dir.path().join("d.svg"));
    let doc = roxmltree::Document::parse(&text).unwrap();
    let ds = load_f64(&csv);
    let model = model_f64(&m);
    let norm = model.weights(0).iter().map(|v| v * v).sum::<f64>().sqrt();
    let along = |i: usize| {
        let mut s = 0.0;
        ds.features
            .row(i)
            .for_each(|k, v| s += model.weights(0)[k] * v);
        s / norm
    };
    let pos: Vec<usize> = (0..ds.rows()).filter(|&i| ds.labels[i] > 0).collect();
    let circles = elements(&doc, "circle", "fill", POSITIVE);
    assert_eq!(circles.len(), pos.len() + 1);
    assert_eq!(
        elements(&doc, "polygon", "fill", NEGATIVE).len(),
        ds.rows() - pos.len() + 1
    );
    let values: Vec<f64> = pos.iter().map(|&i| along(i)).collect();
    let pixels: Vec<f64> = circles[1..].iter().map(|c| attr(*c, "cx")).collect();
    let (a, c, worst) = fit_axis(&values, &pixels);
    assert!(worst < 1.5, "rows are not at w·x/||w||: {worst} px");
    // The boundary is the vertical line w·x/||w|| = -b/||w||.
    let segment = longest_polyline(&doc, INK, "3");
    assert!((segment[0].0 - segment[1].0).abs() <= 1.0, "{segment:?}");
    let at = (segment[0].0 - c) / a;
    let want = -model.bias(0) / norm;
    assert!(
        ((at - want) * a).abs() < 1.5,
        "boundary at {at}, expected {want}"
    );
    assert!(text.contains("64 features, projected onto w"));
    // The margin band, gamma = 0.237 on each side, is under 4 pixels here:
    // it is drawn MIN_BAND pixels on each side, and the legend says so
    // after the true width.
    let gamma = (0..ds.rows())
        .map(|i| ds.labels[i] as f64 * (along(i) + model.bias(0) / norm))
        .fold(f64::INFINITY, f64::min);
    assert!(gamma * a.abs() < 4.0, "{gamma}");
    let band = elements(&doc, "polygon", "fill", BAND);
    assert_eq!(band.len(), 1, "one band");
    let xs: Vec<f64> = points_attr(band[0]).iter().map(|p| p.0).collect();
    let (lo, hi) = (
        xs.iter().cloned().fold(f64::MAX, f64::min),
        xs.iter().cloned().fold(f64::MIN, f64::max),
    );
    let line = segment[0].0;
    assert!(
        (line - lo - MIN_BAND).abs() <= 1.0 && (hi - line - MIN_BAND).abs() <= 1.0,
        "band {lo}..{hi} around the line at {line}"
    );
    assert!(text.contains(&format!(
        "margin band, {} wide on each side: no row inside (drawn {MIN_BAND} px each side: not to scale)",
        perceptron::plot::style::fmt_sig(gamma, 3)
    )));
}

#[test]
fn png_decodes_with_the_requested_size() {
    let dir = tempfile::tempdir().unwrap();
    let csv = data_file("iris_petals.csv");
    let m = train_model(dir.path(), &csv, "i.json", &[]);
    plot(
        dir.path(),
        &[
            "boundary",
            m.to_str().unwrap(),
            csv.to_str().unwrap(),
            "-o",
            "i.png",
            "--size",
            "640x480",
        ],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(dir.path().join("i.png")).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (640, 480));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let pixels = &buf[..info.buffer_size()];
    assert_eq!(&pixels[..3], &[255, 255, 255], "white background");
    let count = |rgb: [u8; 3]| pixels.chunks(3).filter(|p| *p == rgb).count();
    // Both classes are drawn in their colours.
    assert!(count([0x00, 0x72, 0xB2]) > 200);
    assert!(count([0xD5, 0x5E, 0x00]) > 200);
}

#[test]
fn curve_shows_every_epoch_the_total_and_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let m = train_model(dir.path(), &data_file("digits_3v5.csv"), "d.json", &[]);
    plot(dir.path(), &["curve", m.to_str().unwrap(), "-o", "c.svg"]);
    let text = read_svg(&dir.path().join("c.svg"));
    let doc = roxmltree::Document::parse(&text).unwrap();
    let info = match model::load(&m).unwrap() {
        AnyModel::F32(m) => m.training,
        _ => panic!("expected a binary f32 model"),
    };
    assert_eq!(info.mistakes_per_epoch, vec![19, 10, 4, 2, 2, 0]);
    // One dot per epoch with mistakes, one in the legend; the mistake-free
    // epoch is a ring on the axis (and one in the legend).
    assert_eq!(elements(&doc, "circle", "fill", POSITIVE).len(), 5 + 1);
    let rings = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("stroke") == Some(INK))
        .count();
    assert_eq!(rings, 1 + 1);
    assert!(text.contains("M = 37 mistakes in 6 epochs, converged"));
    assert!(text.contains("bound (D/γ)² = 84963"), "{text}");
    // The bound is a dashed line: many short green segments.
    assert!(elements(&doc, "polyline", "stroke", REFERENCE).len() > 10);
}

#[test]
fn margins_mark_gamma_and_put_misclassified_rows_left_of_zero() {
    let dir = tempfile::tempdir().unwrap();
    let csv = data_file("iris_petals.csv");
    let m = train_model(dir.path(), &csv, "i.json", &["--precision", "f64"]);
    plot(
        dir.path(),
        &[
            "margins",
            m.to_str().unwrap(),
            csv.to_str().unwrap(),
            "-o",
            "g.svg",
        ],
    );
    let text = read_svg(&dir.path().join("g.svg"));
    roxmltree::Document::parse(&text).unwrap();
    let gamma = model_f64(&m).training.margin.unwrap();
    let shown = format!(
        "γ = smallest margin = {}",
        perceptron::plot::style::fmt_sig(gamma, 4)
    );
    assert!(text.contains(&shown), "{shown} not in the title");
    assert!(!text.contains(NEGATIVE), "no misclassified row");

    // A model that misclassifies: trained without the bias for a few epochs.
    let bad = train_model(
        dir.path(),
        &csv,
        "nb.json",
        &["--no-bias", "--max-epochs", "3"],
    );
    plot(
        dir.path(),
        &[
            "margins",
            bad.to_str().unwrap(),
            csv.to_str().unwrap(),
            "-o",
            "n.svg",
        ],
    );
    let text = read_svg(&dir.path().join("n.svg"));
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert!(text.contains("misclassified"));
    // The dashed black line is margin 0 (its dashes share one x; the
    // legend's key has a few at others); every misclassified bar is left of it.
    let mut dashes = std::collections::HashMap::new();
    for n in elements(&doc, "polyline", "stroke", INK) {
        if n.attribute("stroke-width") == Some("2") {
            *dashes.entry(points_attr(n)[0].0 as i64).or_insert(0) += 1;
        }
    }
    let zero = *dashes.iter().max_by_key(|e| e.1).unwrap().0 as f64;
    let bars = elements(&doc, "rect", "fill", NEGATIVE);
    assert!(bars.len() > 1, "misclassified bars and a legend key");
    // The legend's key is drawn first, below the plot; skip it.
    for bar in &bars[1..] {
        let right = attr(*bar, "x") + attr(*bar, "width");
        assert!(
            right <= zero + 1.0,
            "a misclassified bar right of 0: {right} > {zero}"
        );
    }
}

#[test]
fn trace_replays_exactly_the_training_run() {
    for name in ["points_2d.csv", "iris_petals.csv"] {
        for bias in [true, false] {
            let d32 = data::load::<f32>(&data_file(name), &LoadOptions::default()).unwrap();
            let d64 = load_f64(&data_file(name));
            let params = TrainParams {
                max_epochs: 60,
                bias,
                ..TrainParams::default()
            };
            let r32 = trace::replay(&d32, bias, 60, None).unwrap();
            let f32fit = train::fit_reference(&d32, &params.check_ref().unwrap()).unwrap();
            assert_eq!(r32.weights, f32fit.weights, "{name} bias={bias}");
            assert_eq!(r32.mistakes_per_epoch, f32fit.mistakes_per_epoch);
            assert_eq!(r32.converged, f32fit.converged());
            let r64 = trace::replay(&d64, bias, 60, None).unwrap();
            let (w, per_epoch) = common::textbook(&d64, bias, 60);
            assert_eq!(r64.weights, w, "{name} bias={bias}");
            assert_eq!(r64.mistakes_per_epoch, per_epoch);
            // Each update is w~ <- w~ + y x~ on the row it names.
            let total: u64 = r64.mistakes_per_epoch.iter().sum();
            assert_eq!(r64.updates.len() as u64, total);
            for (k, u) in r64.updates.iter().enumerate() {
                assert_eq!(u.number, k + 1);
                let mut expect = u.before.clone();
                d64.features
                    .row(u.row)
                    .for_each(|j, v| expect[j] += u.y as f64 * v);
                if bias {
                    expect[2] += u.y as f64;
                }
                assert_eq!(u.after, expect);
                let next = r64.updates.get(k + 1).map(|n| &n.before);
                if let Some(next) = next {
                    assert_eq!(next, &u.after, "updates chain");
                }
            }
        }
    }
}

#[test]
fn trace_small_multiples_say_when_frames_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let csv = data_file("points_2d.csv");
    plot(
        dir.path(),
        &[
            "trace",
            csv.to_str().unwrap(),
            "-o",
            "t.svg",
            "--max-frames",
            "5",
        ],
    );
    let text = read_svg(&dir.path().join("t.svg"));
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert!(
        text.contains("76 updates, converged in 16 epochs; showing updates 1–4 and the last, 76"),
        "{text}"
    );
    // One ring (the mistake used) per frame, and one in the legend.
    let rings = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("circle")
                && n.attribute("stroke") == Some(INK)
                && n.attribute("stroke-width") == Some("3")
        })
        .count();
    assert_eq!(rings, 5 + 1);
    for k in [1, 2, 3, 4, 76] {
        assert!(text.contains(&format!("update {k}: epoch")), "frame {k}");
    }
    assert!(!text.contains("update 5: epoch"));
    // Every row in every frame (faded behind the update): 29 circles, 5 times.
    let faded = elements(&doc, "circle", "fill", POSITIVE)
        .into_iter()
        .filter(|n| n.attribute("opacity") == Some("0.55"))
        .count();
    assert_eq!(faded, 5 * 29);
}

#[test]
fn trace_gif_has_one_frame_per_update_shown() {
    let dir = tempfile::tempdir().unwrap();
    let csv = data_file("iris_petals.csv");
    plot(
        dir.path(),
        &[
            "trace",
            csv.to_str().unwrap(),
            "-o",
            "t.gif",
            "--size",
            "320x300",
            "--precision",
            "f64",
        ],
    );
    let file = std::fs::File::open(dir.path().join("t.gif")).unwrap();
    let mut decoder = gif::DecodeOptions::new().read_info(file).unwrap();
    assert_eq!((decoder.width(), decoder.height()), (320, 300));
    let mut frames = 0;
    while let Some(frame) = decoder.read_next_frame().unwrap() {
        assert_eq!((frame.width, frame.height), (320, 300));
        assert_eq!(frame.delay, 150);
        frames += 1;
    }
    // iris petals, setosa vs the rest: 4 updates (2 + 2), all shown.
    assert_eq!(frames, 4);
}

#[test]
fn bias_comparison_says_no_line_through_the_origin_separates_the_petals() {
    let dir = tempfile::tempdir().unwrap();
    let csv = data_file("iris_petals.csv");
    plot(
        dir.path(),
        &[
            "bias",
            csv.to_str().unwrap(),
            "-o",
            "b.svg",
            "--max-epochs",
            "50",
        ],
    );
    let text = read_svg(&dir.path().join("b.svg"));
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert!(text.contains("without the bias: no line through the origin separates them"));
    assert!(text.contains("with the bias: converged in 3 epochs after 4 mistakes"));
    // Both panels show every row.
    assert_eq!(elements(&doc, "circle", "fill", POSITIVE).len(), 2 * 50 + 1);
    assert_eq!(
        elements(&doc, "polygon", "fill", NEGATIVE).len(),
        2 * 100 + 1
    );
}

#[test]
fn train_plot_writes_the_curve_and_the_margins() {
    let dir = tempfile::tempdir().unwrap();
    cmd(dir.path())
        .args(["train", "--plot", "pics/new", "-o", "m.json"])
        .arg(data_file("iris_petals.csv"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "pictures    pics/new/curve.svg, pics/new/margins.svg",
        ));
    for name in ["curve.svg", "margins.svg"] {
        let text = read_svg(&dir.path().join("pics/new").join(name));
        roxmltree::Document::parse(&text).unwrap();
    }
    let out = cmd(dir.path())
        .args(["train", "--json", "--plot", "pics", "-o", "m.json"])
        .arg(data_file("iris_petals.csv"))
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["plots"][0], "pics/curve.svg");
    // A file where the directory should be: refused before training.
    std::fs::write(dir.path().join("file"), "x").unwrap();
    cmd(dir.path())
        .args(["train", "--plot", "file", "-o", "other.json"])
        .arg(data_file("iris_petals.csv"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "file: cannot write pictures there",
        ));
    assert!(!dir.path().join("other.json").exists());
}

#[test]
fn bad_requests_fail_clearly_and_leave_files_alone() {
    let dir = tempfile::tempdir().unwrap();
    let m = train_model(dir.path(), &data_file("digits_3v5.csv"), "d.json", &[]);
    let m = m.to_str().unwrap();
    std::fs::write(dir.path().join("keep.svg"), "precious").unwrap();
    let digits = data_file("digits_3v5.csv");
    let digits = digits.to_str().unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["curve", m, "-o", "c.jpg"], 2, "use .svg, .png"),
        (
            &["curve", m, "-o", "c.gif"],
            2,
            "only `plot trace` makes animated GIFs",
        ),
        (
            &["curve", m, "-o", "keep.svg/c.svg"],
            1,
            "keep.svg is not a directory",
        ),
        (
            &["curve", m, "-o", "c.svg", "--size", "10x10"],
            2,
            "between 100 and 8000",
        ),
        (
            &["curve", m, "-o", "c.svg", "--size", "big"],
            2,
            "WIDTHxHEIGHT",
        ),
        (
            &["trace", digits, "-o", "keep.svg"],
            1,
            "draws 2-D data and this file has 64 features",
        ),
        (
            &["trace", digits, "-o", "keep.svg", "--max-frames", "0"],
            2,
            "--max-frames",
        ),
        (
            &["margins", m, "missing.csv", "-o", "keep.svg"],
            1,
            "missing.csv",
        ),
        (
            &["boundary", "missing.json", digits, "-o", "keep.svg"],
            1,
            "missing.json",
        ),
    ];
    for (args, code, message) in cases {
        cmd(dir.path())
            .arg("plot")
            .args(*args)
            .assert()
            .code(*code)
            .stderr(predicate::str::contains(*message));
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.svg")).unwrap(),
        "precious"
    );
    assert!(!dir.path().join("c.svg").exists());

    // One-vs-rest models have a curve but no single hyperplane.
    std::fs::write(
        dir.path().join("three.csv"),
        "a,1,1\nb,5,1\nc,1,5\na,1.5,1\nb,5,1.5\nc,1.5,5\n",
    )
    .unwrap();
    cmd(dir.path())
        .args([
            "train",
            "three.csv",
            "--multiclass",
            "ovr",
            "-o",
            "ovr.json",
        ])
        .assert()
        .success();
    plot(dir.path(), &["curve", "ovr.json", "-o", "ovr.svg"]);
    roxmltree::Document::parse(&read_svg(&dir.path().join("ovr.svg"))).unwrap();
    for kind in ["margins", "boundary"] {
        cmd(dir.path())
            .args(["plot", kind, "ovr.json", "three.csv", "-o", "keep.svg"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(format!(
                "is a one-vs-rest model of 3 classes; `plot {kind}` draws a binary model"
            )));
    }
    // train --plot draws a one-vs-rest run's curve (the margins are one
    // perceptron's).
    let out = cmd(dir.path())
        .args([
            "train",
            "three.csv",
            "--multiclass",
            "ovr",
            "--plot",
            "p",
            "--json",
        ])
        .args(["-o", "ovr2.json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["plots"], serde_json::json!(["p/curve.svg"]));
    roxmltree::Document::parse(&read_svg(&dir.path().join("p/curve.svg"))).unwrap();
    assert!(!dir.path().join("p/margins.svg").exists());
}

#[test]
fn every_plot_kind_has_examples_in_its_help() {
    let dir = tempfile::tempdir().unwrap();
    for kind in ["curve", "margins", "boundary", "bias", "trace"] {
        cmd(dir.path())
            .args(["plot", kind, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:"))
            .stdout(predicate::str::contains(format!("perceptron plot {kind} ")))
            .stdout(predicate::str::contains("Exit status:"));
    }
    cmd(dir.path())
        .args(["plot", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("perceptron train data.csv --plot"));
}

/// A margin of 1e-154 makes the convergence bound about 1.7e308: the curve's
/// axis scaled it by 3 to infinity, and drawing never ended (`plot curve`
/// and `train --plot` spun until killed). The axis now stays finite and an
/// unplottable bound is left out.
#[test]
fn a_bound_near_f64s_maximum_still_draws_the_curve() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("t.csv"), "1,1.3,1e-154\n-1,1.3,-1e-154\n").unwrap();
    cmd(d)
        .args([
            "train",
            "t.csv",
            "--precision",
            "f64",
            "--no-bias",
            "-o",
            "m.json",
        ])
        .assert()
        .success();
    cmd(d)
        .args(["plot", "curve", "m.json", "-o", "c.svg"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    assert!(read_svg(&d.join("c.svg")).contains("<svg"));
}

/// A picture never replaces an input of its command, also through a link:
/// `plot` lacked the check that `train`, `predict`, `convert` and `split`
/// have, and `train --plot DIR` followed a link in DIR onto its data.
#[test]
fn pictures_never_overwrite_their_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let csv = generated_csv(d, 40);
    let model = train_model(d, &csv, "m.json", &[]);
    // The model copied under a picture's name, then plotted onto itself.
    std::fs::copy(&model, d.join("m.svg")).unwrap();
    let before = std::fs::read(d.join("m.svg")).unwrap();
    cmd(d)
        .args(["plot", "curve", "m.svg", "-o", "m.svg"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is also an input of this command"));
    assert_eq!(std::fs::read(d.join("m.svg")).unwrap(), before);
    // A link named like the picture, pointing at the data.
    let data = std::fs::read(&csv).unwrap();
    std::os::unix::fs::symlink(&csv, d.join("pic.svg")).unwrap();
    cmd(d)
        .args(["plot", "trace"])
        .arg(&csv)
        .args(["-o", "pic.svg"])
        .assert()
        .code(2);
    std::fs::create_dir(d.join("pics")).unwrap();
    std::os::unix::fs::symlink(&csv, d.join("pics").join("margins.svg")).unwrap();
    cmd(d)
        .arg("train")
        .arg(&csv)
        .args(["-o", "m2.json", "--plot", "pics"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("margins.svg"));
    assert_eq!(std::fs::read(&csv).unwrap(), data);
    assert!(!d.join("m2.json").exists());
}

/// No two outputs of one `train` are one file: the model named like a
/// picture in the pictures' folder, or a picture's name linked to the
/// model, used to end with the picture in the model's place (exit 0, the
/// model lost). The checkpoint named like the model is refused too.
#[test]
fn a_runs_outputs_never_land_on_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let csv = generated_csv(d, 40);
    std::fs::create_dir(d.join("pd")).unwrap();
    cmd(d)
        .arg("train")
        .arg(&csv)
        .args(["-o", "pd/curve.svg", "--plot", "pd"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the model pd/curve.svg and the picture pd/curve.svg are the same file",
        ));
    assert!(!d.join("pd/curve.svg").exists());
    // A link in the pictures' folder onto the model's path, which does not
    // exist yet and then does.
    std::fs::create_dir(d.join("pl")).unwrap();
    std::os::unix::fs::symlink("../m.json", d.join("pl").join("curve.svg")).unwrap();
    for _ in 0..2 {
        cmd(d)
            .arg("train")
            .arg(&csv)
            .args(["-o", "m.json", "--plot", "pl"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("are the same file"));
        std::fs::write(d.join("m.json"), "old model").unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(d.join("m.json")).unwrap(),
        "old model"
    );
    cmd(d)
        .arg("train")
        .arg(&csv)
        .args(["-o", "new.json", "--checkpoint", "./new.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the model new.json and the checkpoint ./new.json are the same file",
        ));
}

/// Data near f64's largest value still gives finite axes: the span of
/// values from -1e308 to 1e308, padded, used to overflow to infinity, and
/// `plot trace` and `plot boundary` then looked for ticks forever.
#[test]
fn pictures_of_data_at_the_edge_of_f64_finish() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("big.csv"), "1,1e308,0\n-1,-1e308,0\n").unwrap();
    std::fs::write(d.join("small.csv"), "1,1,0\n-1,-1,0\n1,2,1\n-1,-2,1\n").unwrap();
    cmd(d)
        .args(["train", "small.csv", "--precision", "f64", "-o", "m.json"])
        .assert()
        .code(0);
    for args in [
        &[
            "plot",
            "trace",
            "big.csv",
            "--precision",
            "f64",
            "-o",
            "t.svg",
        ][..],
        &["plot", "boundary", "m.json", "big.csv", "-o", "b.svg"][..],
    ] {
        let out = cmd(d)
            .args(args)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(out.status.code().is_some(), "{args:?} did not finish");
        let svg = d.join(args[args.len() - 1]);
        if out.status.success() {
            let text = std::fs::read_to_string(&svg).unwrap();
            assert!(!text.contains("NaN"), "{args:?}");
        }
    }
}
