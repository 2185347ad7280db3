//! `curve`: the mistakes of each epoch of a training run on a log scale, with
//! the running total M and, for a converged run, the theorem's bound
//! (D/gamma)^2 that the total can never exceed.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordi64;
use plotters::prelude::*;

use super::style::{self, AXIS, INK, Key, POSITIVE, REFERENCE, SECOND};
use super::{DrawResult, Figure};
use crate::model::TrainingInfo;

/// The learning curve of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// What was trained on, for the title.
    pub data: String,
    pub mistakes_per_epoch: Vec<u64>,
    /// M, including any mistakes of an interrupted last epoch.
    pub total_mistakes: u64,
    pub converged: bool,
    pub max_epochs: usize,
    /// (D/gamma)^2, shown only for a converged run of the classic rule.
    pub bound: Option<f64>,
}

impl Curve {
    pub fn from_training(info: &TrainingInfo) -> Curve {
        Curve {
            data: style::short_name(&info.data),
            mistakes_per_epoch: info.mistakes_per_epoch.clone(),
            total_mistakes: info.total_mistakes,
            converged: info.converged,
            max_epochs: info.max_epochs,
            // Novikoff's bound is for the classic rule (update when
            // y w~·x~ <= 0); a margin run makes more updates.
            bound: info
                .mistake_bound
                .filter(|_| info.converged && info.margin_threshold.is_none()),
        }
    }

    fn epochs(&self) -> usize {
        self.mistakes_per_epoch.len()
    }

    /// The lines of the title.
    pub fn title(&self) -> (String, String) {
        let e = self.epochs();
        let epochs = if e == 1 { "epoch" } else { "epochs" };
        let run = if self.converged {
            format!(
                "M = {} mistakes in {e} {epochs}, converged",
                self.total_mistakes
            )
        } else {
            format!(
                "M = {} mistakes in {e} {epochs}, NOT converged (at most {} epochs)",
                self.total_mistakes, self.max_epochs
            )
        };
        let bound = match self.bound {
            Some(b) => format!("; the bound (D/γ)² = {}", style::fmt_sig(b, 6)),
            None if self.converged => {
                "; no bound drawn: Novikoff's bound is for the classic rule, not --margin".into()
            }
            None => "; no bound: the model does not separate the data".into(),
        };
        (
            format!("Mistakes per epoch: {}", self.data),
            format!("{run}{bound}"),
        )
    }
}

impl Curve {
    fn legend(&self) -> Vec<(Key, String)> {
        let mut keys = vec![
            (Key::LineDot(POSITIVE), "mistakes in the epoch".to_owned()),
            (
                Key::Line(SECOND, 2),
                format!("running total, ending at M = {}", self.total_mistakes),
            ),
        ];
        if let Some(b) = self.bound {
            keys.push((
                Key::Dashed(REFERENCE, 3),
                format!(
                    "bound (D/γ)² = {}: M can never exceed it",
                    style::fmt_sig(b, 6)
                ),
            ));
        }
        if self.mistakes_per_epoch.contains(&0) {
            keys.push((
                Key::Ring(INK, 2),
                "epoch without a mistake (on the axis: 0 is off a log scale)".into(),
            ));
        }
        keys
    }
}

impl Figure for Curve {
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
        let e = self.epochs();
        // The bound can be as large as f64 allows (a margin of 1e-154 makes
        // it about 1e308): the axis must stay finite, or drawing it never
        // ends, so the top is capped and an unplottable bound left out.
        let bound = self.bound.filter(|b| b.is_finite());
        let top = self.top(bound);
        let mut chart = ChartBuilder::on(&area)
            .margin(12)
            .margin_right(28)
            .x_label_area_size(52)
            .y_label_area_size(76)
            .build_cartesian_2d(0i64..(e as i64 + 1), (FLOOR..top).log_scale())?;
        let y_fmt = |v: &f64| style::log_tick(*v);
        chart
            .configure_mesh()
            .x_desc("epoch")
            .y_desc("mistakes (log scale)")
            .axis_desc_style(style::font(style::DESC_SIZE))
            .label_style(style::font(style::LABEL_SIZE))
            .axis_style(AXIS)
            .light_line_style(style::GRID_LIGHT)
            .bold_line_style(style::GRID)
            .max_light_lines(1)
            .x_labels(12)
            .y_label_formatter(&y_fmt)
            .draw()?;

        if let Some(b) = bound {
            chart.draw_series(DashedLineSeries::new(
                [(0, b), (e as i64 + 1, b)],
                10,
                6,
                REFERENCE.stroke_width(3),
            ))?;
        }
        self.draw_mistakes(&mut chart)
    }
}

/// Epochs without a mistake cannot sit on a log scale: they are drawn
/// on the bottom edge, below 1, and the legend says so.
const FLOOR: f64 = 0.5;

/// The curve's chart: epochs across, mistakes up on a log scale.
type CurveChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordi64, LogCoord<f64>>>;

impl Curve {
    /// The top of the mistakes axis: room above the largest of the total,
    /// the (finite) `bound` and any epoch's mistakes, kept finite.
    fn top(&self, bound: Option<f64>) -> f64 {
        let top_value = [
            self.total_mistakes as f64,
            bound.unwrap_or(0.0),
            self.mistakes_per_epoch.iter().copied().max().unwrap_or(0) as f64,
            1.0,
        ]
        .into_iter()
        .fold(0.0, f64::max);
        (top_value * 3.0).min(f64::MAX / 4.0)
    }

    /// The running total, the mistakes of each epoch (dotted when few),
    /// and rings on the floor for the epochs without one.
    fn draw_mistakes<DB: DrawingBackend>(
        &self,
        chart: &mut CurveChart<'_, DB>,
    ) -> DrawResult<(), DB> {
        let e = self.epochs();
        let mut running = Vec::with_capacity(e);
        let mut sum = 0u64;
        for &m in &self.mistakes_per_epoch {
            sum += m;
            running.push(sum);
        }
        let total_points = running
            .iter()
            .enumerate()
            .filter(|(_, t)| **t > 0)
            .map(|(i, &t)| (i as i64 + 1, t as f64));
        chart.draw_series(LineSeries::new(total_points, SECOND.stroke_width(2)))?;

        let positive: Vec<(i64, f64)> = self
            .mistakes_per_epoch
            .iter()
            .enumerate()
            .filter(|(_, m)| **m > 0)
            .map(|(i, &m)| (i as i64 + 1, m as f64))
            .collect();
        chart.draw_series(LineSeries::new(
            positive.iter().copied(),
            POSITIVE.stroke_width(2),
        ))?;
        if e <= 60 {
            chart.draw_series(
                positive
                    .iter()
                    .map(|&p| Circle::new(p, style::POINT_RADIUS, POSITIVE.filled())),
            )?;
        }
        chart.draw_series(
            self.mistakes_per_epoch
                .iter()
                .enumerate()
                .filter(|(_, m)| **m == 0)
                .map(|(i, _)| Circle::new((i as i64 + 1, FLOOR), 7, INK.stroke_width(2))),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(per_epoch: Vec<u64>, converged: bool, bound: Option<f64>) -> Curve {
        Curve {
            data: "d.csv".into(),
            total_mistakes: per_epoch.iter().sum(),
            mistakes_per_epoch: per_epoch,
            converged,
            max_epochs: 1000,
            bound,
        }
    }

    #[test]
    fn the_title_says_what_happened() {
        let c = curve(vec![19, 10, 4, 2, 2, 0], true, Some(84963.2));
        assert_eq!(
            c.title().1,
            "M = 37 mistakes in 6 epochs, converged; the bound (D/γ)² = 84963.2"
        );
        let c = curve(vec![5, 5], false, None);
        assert!(c.title().1.contains("NOT converged (at most 1000 epochs)"));
    }
}
