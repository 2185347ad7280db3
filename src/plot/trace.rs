//! `trace`: the updates of a real run on 2-D data, as small multiples or an
//! animated GIF. Each frame shows the hyperplane before the update (dashed),
//! the misclassified row that caused it (ringed) and the hyperplane after.
//!
//! The run is replayed with the crate's own definition
//! ([`reference::dot`], [`reference::is_mistake`], [`reference::apply_update`])
//! in the chosen precision, so the frames are exactly the updates training
//! makes: the replay ends with the weights of [`crate::train::fit_reference`],
//! bit for bit (a test checks it).

use crate::text::Quoted;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::boundary::{Look, Panel, Placement};
use super::geometry::{Line, Span};
use super::style::{self, GHOST, INK, Key, NEGATIVE, POSITIVE, REFERENCE};
use super::{Animation, DrawResult, Figure};
use crate::data::{Dataset, LabelMap};
use crate::engine::reference;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::text::count;

/// One update of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// 1-based count of updates so far.
    pub number: usize,
    /// 1-based epoch.
    pub epoch: usize,
    /// 0-based position of the row in the training order.
    pub position: usize,
    /// 0-based row of the data file.
    pub row: usize,
    pub y: i8,
    /// w~ before and after the update, as f64 (exactly the trained values).
    pub before: Vec<f64>,
    pub after: Vec<f64>,
}

/// A replayed run.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay<F> {
    pub updates: Vec<Update>,
    /// The final w~ (bias last when trained with one).
    pub weights: Vec<F>,
    pub mistakes_per_epoch: Vec<u64>,
    pub converged: bool,
    pub bias: bool,
}

/// Replays the classic perceptron on `data` (already in training order;
/// `file_rows[p]` is the file row at position p, identity when None).
pub fn replay<F: Real>(
    data: &Dataset<F>,
    bias: bool,
    max_epochs: usize,
    file_rows: Option<&[usize]>,
) -> Result<Replay<F>> {
    let dim = data.cols() + bias as usize;
    let mut w = vec![F::ZERO; dim];
    let mut updates = Vec::new();
    let mut mistakes_per_epoch = Vec::new();
    let mut converged = false;
    for epoch in 1..=max_epochs {
        let mut mistakes = 0u64;
        for p in 0..data.rows() {
            let row = data.features.row(p);
            let y = data.labels[p];
            let s = reference::dot(&w, row, bias);
            if reference::is_mistake(y, s) {
                let before = w.iter().map(|v| v.to_f64()).collect();
                reference::apply_update(&mut w, row, y, bias).map_err(|o| {
                    Error::Train(format!(
                        "a weight overflowed (coordinate {}) in epoch {epoch}: the data's scale does not fit {}",
                        o.coordinate,
                        F::PRECISION
                    ))
                })?;
                mistakes += 1;
                updates.push(Update {
                    number: updates.len() + 1,
                    epoch,
                    position: p,
                    row: file_rows.map_or(p, |r| r[p]),
                    y,
                    before,
                    after: w.iter().map(|v| v.to_f64()).collect(),
                });
            }
        }
        mistakes_per_epoch.push(mistakes);
        if mistakes == 0 {
            converged = true;
            break;
        }
    }
    Ok(Replay {
        updates,
        weights: w,
        mistakes_per_epoch,
        converged,
        bias,
    })
}

/// The hyperplane of w~ in the plane, or None for w~ = 0 (no hyperplane yet).
fn line_of(w: &[f64], bias: bool) -> Option<Line> {
    if w.iter().all(|v| *v == 0.0) {
        return None;
    }
    Some(Line {
        a: w[0],
        b: w[1],
        c: if bias { w[2] } else { 0.0 },
    })
}

fn frames_note(stride: usize, drawn: usize, rows: usize) -> Option<String> {
    (stride > 1).then(|| {
        format!(
            "every {} row drawn ({drawn} of {rows})",
            super::boundary::ordinal(stride)
        )
    })
}

/// Which updates to show: all when they fit, else the first `max - 1` and
/// the last (the final boundary).
pub fn chosen(total: usize, max: usize) -> Vec<usize> {
    if total <= max {
        (0..total).collect()
    } else if max <= 1 {
        vec![total - 1]
    } else {
        (0..max - 1).chain(std::iter::once(total - 1)).collect()
    }
}

/// `trace` draws 2-D data only.
pub fn check_two_features<F: Real>(data: &Dataset<F>) -> Result<()> {
    if data.cols() == 2 {
        return Ok(());
    }
    Err(Error::Data {
        path: data.source.clone(),
        message: format!(
            "`plot trace` draws 2-D data and this file has {} feature{}; `plot boundary` projects any data",
            data.cols(),
            if data.cols() == 1 { "" } else { "s" }
        ),
    })
}

/// What every frame of a trace shares: the rows, thinned for drawing,
/// and the view.
struct Backdrop {
    /// Every row's point (the row of each update is drawn whether kept or
    /// not).
    points: Vec<(f64, f64)>,
    /// The rows kept for drawing, and their labels.
    drawn: Vec<(f64, f64)>,
    drawn_labels: Vec<i8>,
    stride: usize,
    view: (Span, Span),
    class_rows: [usize; 2],
    bias: bool,
}

impl Backdrop {
    /// The rows of `data` (2-D) and a view of them, with the origin when
    /// trained without the bias (its lines pass through it).
    fn new<F: Real>(data: &Dataset<F>, bias: bool) -> Backdrop {
        let points: Vec<(f64, f64)> = (0..data.rows())
            .map(|i| {
                let mut p = [0.0; 2];
                data.features.row(i).for_each(|k, v| p[k] = v.to_f64());
                (p[0], p[1])
            })
            .collect();
        let origin = (!bias).then_some(0.0);
        let view = (
            Span::covering(points.iter().map(|p| p.0).chain(origin), 0.08),
            Span::covering(points.iter().map(|p| p.1).chain(origin), 0.08),
        );
        // Large data is thinned for drawing, as in `boundary`; the row of
        // each update is drawn whether kept or not.
        let rows = points.len();
        let stride = rows.div_ceil(super::boundary::MAX_POINTS).max(1);
        let kept: Vec<usize> = (0..rows).step_by(stride).collect();
        let drawn: Vec<(f64, f64)> = kept.iter().map(|&i| points[i]).collect();
        let drawn_labels: Vec<i8> = kept.iter().map(|&i| data.labels[i]).collect();
        Backdrop {
            points,
            drawn,
            drawn_labels,
            stride,
            view,
            class_rows: super::boundary::class_rows(&data.labels),
            bias,
        }
    }

    /// The frame of update `u`: the line before (dashed) and after, and
    /// the row that caused it.
    fn frame(&self, u: &Update) -> Panel {
        Panel {
            caption: Some(format!(
                "update {}: epoch {}, row {}, y = {}",
                u.number,
                u.epoch,
                u.row + 1,
                if u.y > 0 { "+1" } else { "-1" }
            )),
            points: self.drawn.clone(),
            labels: self.drawn_labels.clone(),
            misclassified: vec![false; self.drawn.len()],
            line: line_of(&u.after, self.bias),
            previous: line_of(&u.before, self.bias),
            band: None,
            highlight: Some((self.points[u.position], u.y)),
            rows: self.points.len(),
            stride: self.stride,
            wrong: 0,
            class_rows: self.class_rows,
            x_desc: "x1".into(),
            y_desc: "x2".into(),
            placement: Placement::Plane,
            include_origin: !self.bias,
            view: Some(self.view),
        }
    }
}

/// The subtitle's account of the run: its updates and epochs, and which
/// updates the `shown` frames are.
fn run_summary<F>(replay: &Replay<F>, shown: usize) -> String {
    let total = replay.updates.len();
    let epochs = replay.mistakes_per_epoch.len();
    let run = if replay.converged {
        format!(
            "{}, converged in {}",
            count(total, "update"),
            count(epochs, "epoch")
        )
    } else {
        format!(
            "{}, NOT converged within {}",
            count(total, "update"),
            count(epochs, "epoch")
        )
    };
    let shown = if shown == total {
        if total == 1 {
            "the update is shown".to_owned()
        } else {
            format!("all {total} are shown")
        }
    } else if shown == 1 {
        format!("only update {total} is shown (--max-frames 1)")
    } else {
        format!(
            "showing updates 1–{} and the last, {total} (--max-frames {})",
            shown - 1,
            shown
        )
    };
    format!("{run}; {shown}")
}

/// The frames of a replayed run, ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub title: String,
    pub subtitle: String,
    pub labels: LabelMap,
    /// Rows of the +1 and of the -1 class.
    pub class_rows: [usize; 2],
    pub frames: Vec<Panel>,
}

impl Trace {
    /// The trace of the classic run on `data` (2-D) with or without the
    /// `bias`, at most `max_epochs` epochs, rows visited in file order or,
    /// with a `seed`, in the order `train --shuffle` visits them with it:
    /// at most `max_frames` of its updates.
    pub fn of_run<F: Real>(
        mut data: Dataset<F>,
        bias: bool,
        max_epochs: usize,
        seed: Option<u64>,
        max_frames: usize,
    ) -> Result<Trace> {
        let order = seed.map(|s| crate::train::shuffle::permutation(data.rows(), s));
        if let Some(order) = &order {
            data = data.permuted(order);
        }
        check_two_features(&data)?;
        let replay = replay(&data, bias, max_epochs, order.as_deref())?;
        Trace::new(&data, &replay, max_frames)
    }

    /// Frames for at most `max_frames` of `replay`'s updates on `data` (2-D).
    pub fn new<F: Real>(data: &Dataset<F>, replay: &Replay<F>, max_frames: usize) -> Result<Trace> {
        check_two_features(data)?;
        let backdrop = Backdrop::new(data, replay.bias);
        let total = replay.updates.len();
        let picked = chosen(total, max_frames.max(1));
        let frames = picked
            .iter()
            .map(|&k| backdrop.frame(&replay.updates[k]))
            .collect();
        let rows = backdrop.points.len();
        let summary = run_summary(replay, picked.len());
        Ok(Trace {
            title: format!(
                "Perceptron updates on {} ({}, {})",
                style::short_name(&data.source.display().to_string()),
                F::PRECISION,
                if replay.bias { "with bias" } else { "no bias" }
            ),
            subtitle: match frames_note(backdrop.stride, backdrop.drawn.len(), rows) {
                Some(note) => format!("{summary}; {note}"),
                None => summary,
            },
            labels: data.label_map.clone(),
            class_rows: super::boundary::class_rows(&data.labels),
            frames,
        })
    }

    fn legend(&self) -> Vec<(Key, String)> {
        let count = |s: i8| self.class_rows[if s > 0 { 0 } else { 1 }];
        vec![
            (
                Key::Circle(POSITIVE),
                format!("+1 = {} ({})", Quoted(&self.labels.positive), count(1)),
            ),
            (
                Key::Triangle(NEGATIVE),
                format!(
                    "-1 = {} ({})",
                    Quoted(self.labels.negative_text()),
                    count(-1)
                ),
            ),
            (Key::Ring(INK, 3), "the mistake used".into()),
            (Key::Dashed(GHOST, 2), "before the update".into()),
            (Key::Line(INK, 3), "after".into()),
            (Key::Arrow(REFERENCE), "w after".into()),
        ]
    }

    /// Columns and rows of the small-multiples grid.
    pub fn grid(&self) -> (usize, usize) {
        let n = self.frames.len().max(1);
        let cols = (n as f64).sqrt().ceil() as usize;
        let rows = n.div_ceil(cols);
        (cols, rows)
    }
}

impl Figure for Trace {
    fn default_size(&self) -> (u32, u32) {
        let (cols, rows) = self.grid();
        let side = if cols >= 4 { 320 } else { 360 };
        ((cols as u32 * side).max(760), 130 + rows as u32 * side + 70)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<(), DB> {
        root.fill(&WHITE)?;
        let area = style::titled(
            root,
            &[
                (&self.title, style::TITLE_SIZE),
                (&self.subtitle, style::SUBTITLE_SIZE),
            ],
        )?;
        let grid = style::legend_below(&area, &self.legend())?;
        let (cols, rows) = self.grid();
        let cells = grid.split_evenly((rows, cols));
        let look = Look { compact: true };
        let mut caption = 0;
        for (frame, cell) in self.frames.iter().zip(&cells) {
            caption = caption.max(frame.caption_height(cell, look)?);
        }
        for (frame, cell) in self.frames.iter().zip(&cells) {
            frame.draw(cell, look, caption)?;
        }
        Ok(())
    }
}

impl Animation for Trace {
    fn frame_count(&self) -> usize {
        self.frames.len()
    }

    fn default_frame_size(&self) -> (u32, u32) {
        (720, 760)
    }

    fn draw_frame<DB: DrawingBackend>(
        &self,
        i: usize,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB> {
        root.fill(&WHITE)?;
        let counter = format!(
            "frame {} of {}: {}",
            i + 1,
            self.frames.len(),
            self.subtitle
        );
        let area = style::titled(
            root,
            &[
                (&self.title, style::TITLE_SIZE - 2.0),
                (&counter, style::SUBTITLE_SIZE - 3.0),
            ],
        )?;
        let plot = style::legend_below(&area, &self.legend())?;
        // Frames have no margin band, so nothing is drawn wider than to scale.
        self.frames[i].draw(&plot, Look { compact: false }, 0)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_keep_the_first_updates_and_the_last() {
        assert_eq!(chosen(3, 12), vec![0, 1, 2]);
        assert_eq!(chosen(37, 4), vec![0, 1, 2, 36]);
        assert_eq!(chosen(37, 1), vec![36]);
        assert_eq!(chosen(0, 12), Vec::<usize>::new());
    }
}
