//! `boundary`: the data coloured by label with the line w·x + b = 0, the
//! normal vector w and the margin band; and `bias`, the same picture for
//! data trained without and with the bias, side by side.
//!
//! 2-D data is drawn as it is, with one unit the same length on both axes
//! so that w looks normal to the line. Data with more features is projected
//! onto w/||w|| (horizontal axis, where the boundary is the vertical line
//! w·x/||w|| = -b/||w||) and onto the data's first principal direction
//! orthogonal to w (vertical axis); the title says so. 1-D data is drawn
//! against the row number.

mod panel;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{self, INK, Key};
use super::{DrawResult, Figure};
use crate::data::{Dataset, Features, LabelMap};
use crate::error::{Error, Result};
use crate::float::Real;
use crate::model::Model;
use crate::train::{self, TrainParams};

use panel::as_f64;
pub use panel::{
    Look, MAX_POINTS, MIN_BAND_PIXELS, Panel, Placement, band_pixels, class_rows, ordinal,
    separable_through_origin,
};

/// A boundary picture: one panel, or two side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct Boundary {
    pub title: String,
    pub subtitle: String,
    pub labels: LabelMap,
    pub panels: Vec<Panel>,
}

fn placement_note(placement: &Placement) -> Option<String> {
    match placement {
        Placement::Projected { features } => Some(format!(
            "{features} features, projected onto w (across the boundary) and the data's first principal direction orthogonal to w"
        )),
        Placement::Line => Some("1 feature, drawn against the row number".into()),
        Placement::Plane => None,
    }
}

fn numbers(w: &[f64]) -> String {
    let parts: Vec<String> = w.iter().map(|v| style::fmt_sig(*v, 4)).collect();
    format!("({})", parts.join(", "))
}

impl Boundary {
    /// A model's boundary on a dataset (`labels` in the model's -1/+1).
    pub fn for_model<F: Real>(
        model: &Model<F>,
        features: &Features<F>,
        labels: &[i8],
        model_name: &str,
        data_name: &str,
    ) -> Result<Boundary> {
        let Some(label_map) = model.labels() else {
            return Err(Error::Usage(
                "a decision boundary is drawn for a binary model, not one-vs-rest".into(),
            ));
        };
        let panel = Panel::new(
            model.weights(0),
            model.bias(0),
            model.has_bias(),
            features,
            labels,
        )?;
        let rows = panel.rows;
        let bad = panel.misclassified_count();
        let mut fit = if bad == 0 {
            format!("all {rows} rows classified correctly")
        } else {
            format!("{bad} of {rows} rows misclassified (ringed)")
        };
        if let Some(note) = panel.thinning_note() {
            fit = format!("{fit}; {note}");
        }
        let equation = if panel.placement == Placement::Plane {
            let w = as_f64(model.weights(0));
            if model.has_bias() {
                format!(
                    "w = {}, b = {}; ",
                    numbers(&w),
                    style::fmt_sig(model.bias(0).to_f64(), 4)
                )
            } else {
                format!("w = {}, no bias; ", numbers(&w))
            }
        } else {
            String::new()
        };
        let subtitle = match placement_note(&panel.placement) {
            Some(note) => format!("{note}; {fit}"),
            None => format!("{equation}{fit}"),
        };
        Ok(Boundary {
            title: format!(
                "Decision boundary: {} on {}",
                style::short_name(model_name),
                style::short_name(data_name)
            ),
            subtitle,
            labels: label_map.clone(),
            panels: vec![panel],
        })
    }

    /// Trains on `data` without and with the bias (the reference loop, at
    /// most `max_epochs` each) and shows both boundaries side by side.
    pub fn compare_bias<F: Real>(data: &Dataset<F>, max_epochs: usize) -> Result<Boundary> {
        let mut panels = Vec::with_capacity(2);
        for bias in [false, true] {
            let params = TrainParams {
                max_epochs,
                bias,
                ..TrainParams::default()
            };
            let fit = train::fit_reference(data, &params.check()?)?;
            let mut panel = Panel::new(
                fit.feature_weights(),
                fit.intercept(),
                bias,
                &data.features,
                &data.labels,
            )?;
            panel.include_origin = true;
            let e = fit.epochs();
            let wrong = match panel.misclassified_count() {
                1 => "1 row misclassified (ringed)".to_owned(),
                n => format!("{n} rows misclassified (ringed)"),
            };
            let caption = match (bias, fit.converged()) {
                (false, true) => format!(
                    "without the bias: a line through the origin separates them too (converged in {e} epochs)"
                ),
                (false, false) => {
                    match separable_through_origin(&panel.points, &panel.labels, data.cols()) {
                        Some(false) => format!(
                            "without the bias: no line through the origin separates them; after {e} epochs, {wrong}"
                        ),
                        _ => format!("without the bias: not separated within {e} epochs; {wrong}"),
                    }
                }
                (true, true) => format!(
                    "with the bias: converged in {e} epochs after {} mistakes",
                    fit.total_mistakes()
                ),
                (true, false) => {
                    format!("with the bias: not separated within {e} epochs; {wrong}")
                }
            };
            panel.caption = Some(caption);
            panels.push(panel);
        }
        let note = placement_note(&panels[0].placement)
            .into_iter()
            .chain(panels[0].thinning_note())
            .map(|n| format!("{n}; "))
            .collect::<String>();
        Ok(Boundary {
            title: format!(
                "Why the bias: {} trained without and with it",
                style::short_name(&data.source.display().to_string())
            ),
            subtitle: format!(
                "{note}{} rows, {}; the classic perceptron, rows in file order, at most {max_epochs} epochs",
                data.rows(),
                F::PRECISION
            ),
            labels: data.label_map.clone(),
            panels,
        })
    }

    fn legend(&self, band_widened: bool) -> Vec<(Key, String)> {
        let mut keys: Vec<(Key, String)> = Vec::new();
        for panel in &self.panels {
            for entry in panel.legend(&self.labels, band_widened) {
                if !keys.iter().any(|k| k.0 == entry.0) {
                    keys.push(entry);
                }
            }
        }
        // Each panel has its own count of misclassified rows: say it once.
        for k in &mut keys {
            if k.0 == Key::Ring(INK, 2) && self.panels.len() > 1 {
                k.1 = "misclassified".into();
            }
        }
        keys
    }
}

impl Figure for Boundary {
    fn default_size(&self) -> (u32, u32) {
        if self.panels.len() > 1 {
            (1300, 700)
        } else {
            (760, 720)
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<(), DB> {
        root.fill(&WHITE)?;
        let area = style::titled(
            root,
            &[
                (&self.title, style::TITLE_SIZE),
                (&self.subtitle, style::SUBTITLE_SIZE - 2.0),
            ],
        )?;
        // Whether a band is drawn wider than to scale depends on the panels'
        // size, which depends on the legend's height: reserve the strip for
        // the longer wording, lay the panels out, then draw the legend (at
        // the strip's foot) and the panels.
        let (plain, widened) = (self.legend(false), self.legend(true));
        let height =
            style::legend_height(&area, &plain)?.max(style::legend_height(&area, &widened)?);
        let (_, h) = area.dim_in_pixel();
        let (plots, strip) = area.split_vertically(h.saturating_sub(height + 6));
        let cells = plots.split_evenly((1, self.panels.len()));
        let look = Look { compact: false };
        let mut caption = 0;
        let mut band_widened = false;
        for (panel, cell) in self.panels.iter().zip(&cells) {
            caption = caption.max(panel.caption_height(cell, look)?);
        }
        for (panel, cell) in self.panels.iter().zip(&cells) {
            band_widened |= panel.band_widened(cell, look, caption)?;
        }
        let keys = if band_widened { widened } else { plain };
        let spare = height - style::legend_height(&strip, &keys)?;
        style::draw_legend(&strip.split_vertically(spare).1, &keys)?;
        for (panel, cell) in self.panels.iter().zip(&cells) {
            let drawn_wider = panel.draw(cell, look, caption)?;
            debug_assert!(!drawn_wider || band_widened, "the legend says otherwise");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_data_is_thinned_for_drawing_only() {
        use crate::data::DenseMatrix;
        let n = 50;
        let values: Vec<f64> = (0..n).flat_map(|i| [i as f64, 1.0]).collect();
        let labels: Vec<i8> = (0..n).map(|i| if i < 20 { 1 } else { -1 }).collect();
        let features = Features::Dense(DenseMatrix {
            rows: n,
            cols: 2,
            values: values.into(),
        });
        // w·x + b = -x1 + 19.5: every row on its side.
        let mut panel = Panel::new(&[-1.0, 0.0], 19.5, true, &features, &labels).unwrap();
        assert_eq!((panel.points.len(), panel.stride), (50, 1));
        assert_eq!(panel.thinning_note(), None);
        panel.thin(20);
        assert_eq!((panel.points.len(), panel.stride), (17, 3));
        assert_eq!(panel.points[1], (3.0, 1.0));
        assert_eq!(panel.labels.len(), 17);
        assert_eq!(
            panel.thinning_note().unwrap(),
            "every 3rd row drawn (17 of 50)"
        );
        // Counts are of all rows.
        assert_eq!(panel.class_rows, [20, 30]);
        assert_eq!(panel.band, Some(0.5));
    }

    #[test]
    fn origin_separability_in_two_dimensions() {
        // All in the upper half-plane after multiplying by y: separable.
        let pts = [(1.0, 1.0), (-1.0, 2.0), (1.0, -0.5)];
        assert_eq!(separable_through_origin(&pts, &[1, 1, -1], 2), Some(true));
        // XOR-like around the origin: not separable.
        let pts = [(1.0, 1.0), (-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0)];
        assert_eq!(
            separable_through_origin(&pts, &[1, 1, -1, -1], 2),
            Some(false)
        );
        // 1-D: positives at 1, 2 and negatives at 3: no threshold at 0 works.
        let pts = [(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)];
        assert_eq!(separable_through_origin(&pts, &[1, 1, -1], 1), Some(false));
        assert_eq!(separable_through_origin(&pts, &[1, 1, 1], 1), Some(true));
        assert_eq!(separable_through_origin(&pts, &[1, 1, 1], 5), None);
    }
}
