//! `margins`: a histogram of the normalised margins y (w·x + b) / ||(w, b)||
//! of a model on a dataset, marking gamma (the smallest) and showing the
//! misclassified rows, which fall on the negative side.
//!
//! The margins are those of the convergence theorem, with the bias as a
//! weight (w~ = [w, b], x~ = [x, 1]), computed in f64 as the training
//! report computes gamma, so on the training data the marked gamma is the
//! model file's `margin`. Whether a row is misclassified is decided by the
//! model's own arithmetic, as `predict` decides it.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{self, AXIS, INK, Key, NEGATIVE, POSITIVE, REFERENCE};
use super::{DrawResult, Figure};
use crate::data::Features;
use crate::float::Real;
use crate::model::Model;

/// The margins of every row, ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Margins {
    pub model: String,
    pub data: String,
    pub has_bias: bool,
    /// y w~·x~ / ||w~|| per row.
    pub margins: Vec<f64>,
    /// Whether the model predicts the row's class wrongly.
    pub misclassified: Vec<bool>,
}

/// Approximate number of histogram bins.
const BINS: f64 = 40.0;

impl Margins {
    /// None when the weights are all zero (every margin is 0/0).
    pub fn compute<F: Real>(
        model: &Model<F>,
        features: &Features<F>,
        labels: &[i8],
        model_name: &str,
        data_name: &str,
    ) -> Option<Margins> {
        let w = model.head(0);
        // Everything in units of the largest |w_k|: the margin y·s/||w|| does
        // not change, and weights as small as 1e-297 (whose squares
        // underflow to 0) or as large as 1e300 still have a norm.
        let unit = w.iter().map(|v| v.to_f64().abs()).fold(0.0, f64::max);
        if unit == 0.0 || !unit.is_finite() {
            return None;
        }
        let norm = w
            .iter()
            .map(|v| (v.to_f64() / unit) * (v.to_f64() / unit))
            .sum::<f64>()
            .sqrt();
        let mut margins = Vec::with_capacity(labels.len());
        let mut misclassified = Vec::with_capacity(labels.len());
        for (i, &y) in labels.iter().enumerate() {
            let row = features.row(i);
            let predicted = crate::engine::reference::predicted_sign(
                crate::engine::reference::dot(w, row, model.has_bias()),
            );
            misclassified.push(predicted != y);
            let mut s = 0.0f64;
            row.for_each(|k, v| s += (w[k].to_f64() / unit) * v.to_f64());
            if model.has_bias() {
                s += model.bias(0).to_f64() / unit;
            }
            margins.push(y as f64 * s / norm);
        }
        Some(Margins {
            model: style::short_name(model_name),
            data: style::short_name(data_name),
            has_bias: model.has_bias(),
            margins,
            misclassified,
        })
    }

    pub fn misclassified_count(&self) -> usize {
        self.misclassified.iter().filter(|&&m| m).count()
    }

    /// The smallest margin.
    pub fn smallest(&self) -> f64 {
        self.margins.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// gamma: the smallest margin, when the model classifies every row
    /// correctly with a positive margin (as in the training report).
    pub fn gamma(&self) -> Option<f64> {
        let m = self.smallest();
        (self.misclassified_count() == 0 && m > 0.0 && !self.margins.is_empty()).then_some(m)
    }

    /// The histogram: bin width and, per bin k (covering (k·width, (k+1)·width]
    /// so that a margin of exactly 0 falls on the negative side), the counts
    /// of correct and misclassified rows. Returns (width, first k, counts).
    pub fn histogram(&self) -> (f64, i64, Vec<(u64, u64)>) {
        let lo = self.smallest().min(0.0);
        let hi = self.margins.iter().copied().fold(0.0, f64::max);
        let span = if hi > lo { hi - lo } else { 1.0 };
        let width = span / BINS;
        let bin = |v: f64| (v / width).ceil() as i64 - 1;
        let (k0, k1) = (bin(lo), bin(hi).max(bin(lo)));
        let mut counts = vec![(0u64, 0u64); (k1 - k0 + 1) as usize];
        for (&m, &bad) in self.margins.iter().zip(&self.misclassified) {
            let c = &mut counts[(bin(m) - k0) as usize];
            if bad {
                c.1 += 1;
            } else {
                c.0 += 1;
            }
        }
        (width, k0, counts)
    }

    pub fn axis_description(&self) -> &'static str {
        if self.has_bias {
            "normalised margin  y (w·x + b) / ‖(w, b)‖"
        } else {
            "normalised margin  y w·x / ‖w‖"
        }
    }

    pub fn title(&self) -> (String, String) {
        let rows = self.margins.len();
        let bad = self.misclassified_count();
        let verdict = match self.gamma() {
            Some(g) => format!(
                "{rows} rows, all classified correctly; γ = smallest margin = {}",
                style::fmt_sig(g, 4)
            ),
            None => format!(
                "{rows} rows, {bad} misclassified (margin ≤ 0, drawn left of 0); no γ: not separated"
            ),
        };
        (
            format!("Normalised margins: {} on {}", self.model, self.data),
            verdict,
        )
    }
}

impl Margins {
    fn legend(&self) -> Vec<(Key, String)> {
        let bad = self.misclassified_count();
        let mut keys = vec![(
            Key::Patch(POSITIVE),
            format!("rows classified correctly ({})", self.margins.len() - bad),
        )];
        if bad > 0 {
            keys.push((Key::Patch(NEGATIVE), format!("rows misclassified ({bad})")));
        }
        keys.push((
            Key::Dashed(INK, 2),
            "margin 0: the decision boundary".into(),
        ));
        let smallest = self.smallest();
        keys.push((
            Key::Line(REFERENCE, 3),
            match self.gamma() {
                Some(g) => format!("γ = {}, the smallest margin", style::fmt_sig(g, 4)),
                None => format!("the smallest margin, {}", style::fmt_sig(smallest, 4)),
            },
        ));
        keys
    }
}

impl Figure for Margins {
    fn default_size(&self) -> (u32, u32) {
        (800, 560)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<(), DB> {
        root.fill(&WHITE)?;
        let (t1, t2) = self.title();
        let area = style::titled(
            root,
            &[(&t1, style::TITLE_SIZE), (&t2, style::SUBTITLE_SIZE)],
        )?;
        let area = style::legend_below(&area, &self.legend())?;
        let (width, k0, counts) = self.histogram();
        let x_lo = k0 as f64 * width;
        let x_hi = (k0 + counts.len() as i64) as f64 * width;
        let pad = 0.03 * (x_hi - x_lo);
        let top = counts.iter().map(|c| c.0 + c.1).max().unwrap_or(1).max(1) as f64 * 1.08;
        let span = x_hi - x_lo;
        let x_fmt = |v: &f64| style::tick(*v, span);
        let y_fmt = |v: &f64| format!("{v:.0}");
        let mut chart = ChartBuilder::on(&area)
            .margin(12)
            .margin_right(28)
            .x_label_area_size(52)
            .y_label_area_size(70)
            .build_cartesian_2d((x_lo - pad)..(x_hi + pad), 0.0..top)?;
        chart
            .configure_mesh()
            .x_desc(self.axis_description())
            .y_desc("rows")
            .axis_desc_style(style::font(style::DESC_SIZE))
            .label_style(style::font(style::LABEL_SIZE))
            .axis_style(AXIS)
            .light_line_style(style::GRID_LIGHT)
            .bold_line_style(style::GRID)
            .max_light_lines(1)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .draw()?;

        // Correct rows at the bottom of each bar, misclassified ones on top,
        // with a thin white edge so that neighbouring bars stay apart.
        let bars = counts.iter().enumerate().flat_map(|(k, &(good, bad))| {
            let left = (k0 + k as i64) as f64 * width;
            let mut parts = Vec::with_capacity(3);
            if good > 0 {
                parts.push(Rectangle::new(
                    [(left, 0.0), (left + width, good as f64)],
                    POSITIVE.filled(),
                ));
            }
            if bad > 0 {
                parts.push(Rectangle::new(
                    [(left, good as f64), (left + width, (good + bad) as f64)],
                    NEGATIVE.filled(),
                ));
            }
            if good + bad > 0 {
                parts.push(Rectangle::new(
                    [(left, 0.0), (left + width, (good + bad) as f64)],
                    WHITE.stroke_width(1),
                ));
            }
            parts
        });
        chart.draw_series(bars)?;
        chart.draw_series(DashedLineSeries::new(
            [(0.0, 0.0), (0.0, top)],
            8,
            5,
            INK.stroke_width(2),
        ))?;
        let smallest = self.smallest();
        chart.draw_series(LineSeries::new(
            [(smallest, 0.0), (smallest, top)],
            REFERENCE.stroke_width(3),
        ))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn margins(values: &[f64], bad: &[bool]) -> Margins {
        Margins {
            model: "m.json".into(),
            data: "d.csv".into(),
            has_bias: true,
            margins: values.to_vec(),
            misclassified: bad.to_vec(),
        }
    }

    #[test]
    fn zero_margins_fall_on_the_negative_side() {
        let m = margins(&[0.0, 0.5, 1.0, -0.25], &[true, false, false, true]);
        let (width, k0, counts) = m.histogram();
        assert!(width > 0.0);
        let total: u64 = counts.iter().map(|c| c.0 + c.1).sum();
        assert_eq!(total, 4);
        // Every bin left of 0 holds only the misclassified rows.
        for (k, c) in counts.iter().enumerate() {
            let right_edge = (k0 + k as i64 + 1) as f64 * width;
            if right_edge <= 0.0 {
                assert_eq!(c.0, 0);
            } else {
                assert_eq!(c.1, 0, "bin {k}");
            }
        }
        assert_eq!(m.gamma(), None);
        let ok = margins(&[0.25, 0.5], &[false, false]);
        assert_eq!(ok.gamma(), Some(0.25));
    }

    #[test]
    fn tiny_and_huge_weights_still_have_margins() {
        use crate::data::{DenseMatrix, Features, LabelMap};
        let training: crate::model::TrainingInfo = serde_json::from_value(serde_json::json!({
            "epochs": 1, "max_epochs": 1, "mistakes_per_epoch": [0], "total_mistakes": 0,
            "converged": true, "radius": 1.0, "margin": null, "mistake_bound": null,
            "backend": "reference", "seed": null, "data": "x.csv", "rows": 2,
            "training_accuracy": 1.0, "seconds": 0.0
        }))
        .unwrap();
        let labels = LabelMap {
            positive: "1".into(),
            negative: Some("-1".into()),
        };
        let features = Features::Dense(DenseMatrix {
            rows: 2,
            cols: 1,
            values: vec![1.3, -1.3].into(),
        });
        for scale in [2e-297, 1.0, 1e300] {
            // w = (scale, 0): every margin is ±1.3, whatever the scale.
            let model = crate::model::Model::binary(
                vec![scale, 0.0],
                true,
                labels.clone(),
                training.clone(),
            );
            let m = Margins::compute(&model, &features, &[1, -1], "m.json", "d.csv")
                .unwrap_or_else(|| panic!("weights of {scale} are not zero"));
            assert_eq!(m.margins, vec![1.3, 1.3], "{scale}");
        }
        let zero = crate::model::Model::binary(vec![0.0, 0.0], true, labels, training);
        assert!(Margins::compute(&zero, &features, &[1, -1], "m.json", "d.csv").is_none());
    }
}
