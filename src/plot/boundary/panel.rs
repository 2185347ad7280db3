//! One panel of a boundary picture: the rows placed in the plane (as they
//! are, projected, or against the row number), the line w·x + b = 0, the
//! normal vector and the margin band, and the geometry they need.

use crate::text::Quoted;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::data::{Features, LabelMap};
use crate::engine::reference;
use crate::error::{Error, Result};
use crate::float::Real;
use crate::plot::DrawResult;
use crate::plot::geometry::{self, Line, Span};
use crate::plot::style::{self, AXIS, BAND, GHOST, INK, Key, NEGATIVE, POSITIVE, REFERENCE};

/// A chart of plot coordinates on a drawing area.
type ChartOn<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A chart, its view (x and y spans) and its plotting area in pixels.
type Framed<'a, DB> = (ChartOn<'a, DB>, Span, Span, (u32, u32));

/// How the rows were placed in the plane.
#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    /// Two features, drawn as they are.
    Plane,
    /// One feature, against the row number.
    Line,
    /// More features, projected onto w and a principal direction.
    Projected { features: usize },
}

/// One plot of rows and a hyperplane (also a frame of `trace`).
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// A line above the plot.
    pub caption: Option<String>,
    pub points: Vec<(f64, f64)>,
    pub labels: Vec<i8>,
    /// Rows ringed as misclassified.
    pub misclassified: Vec<bool>,
    /// The decision boundary in plot coordinates: value = w·x + b.
    pub line: Option<Line>,
    /// A second line drawn dashed for comparison (trace: before the update).
    pub previous: Option<Line>,
    /// The band |w·x + b| < m, with m the smallest y (w·x + b).
    pub band: Option<f64>,
    /// A row to single out, with its label (trace: the mistake that caused
    /// the update).
    pub highlight: Option<((f64, f64), i8)>,
    /// Rows of the data (`points` may hold only every `stride`-th).
    pub rows: usize,
    pub stride: usize,
    /// Rows misclassified, of all `rows`.
    pub wrong: usize,
    /// Rows of the +1 and of the -1 class, of all `rows`.
    pub class_rows: [usize; 2],
    pub x_desc: String,
    pub y_desc: String,
    pub placement: Placement,
    /// Keep the origin in view (without the bias, the line passes through it).
    pub include_origin: bool,
    /// A fixed view instead of one fitted to the points.
    pub view: Option<(Span, Span)>,
}

/// A margin band narrower than this many pixels on each side of the
/// boundary (which is drawn 3 pixels wide) would hide under the line: it is
/// drawn this wide instead, and the legend says so next to its true width.
pub const MIN_BAND_PIXELS: f64 = 7.0;

/// At most this many rows are drawn; larger data is thinned to every k-th
/// row (the title says so), so that an SVG stays a reasonable size.
pub const MAX_POINTS: usize = 20_000;

/// The look of a panel: full size, or small for small multiples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look {
    pub compact: bool,
}

impl Look {
    fn label_size(&self) -> f64 {
        if self.compact {
            13.0
        } else {
            style::LABEL_SIZE
        }
    }
    fn desc_size(&self) -> f64 {
        if self.compact { 14.0 } else { style::DESC_SIZE }
    }
    fn caption_size(&self) -> f64 {
        if self.compact {
            15.0
        } else {
            style::SUBTITLE_SIZE
        }
    }
}

/// The feature weights and bias of a model, as f64 (exact).
pub(super) fn as_f64<F: Real>(w: &[F]) -> Vec<f64> {
    w.iter().map(|v| v.to_f64()).collect()
}

impl Panel {
    /// Places the rows and the hyperplane w·x + b = 0 (`weights` are the
    /// feature weights, `bias` is 0 without one). Misclassified rows are
    /// found with the reference arithmetic in F, as `predict` finds them.
    pub fn new<F: Real>(
        weights: &[F],
        bias: F,
        has_bias: bool,
        features: &Features<F>,
        labels: &[i8],
    ) -> Result<Panel> {
        let d = weights.len().max(features.cols());
        let w = {
            let mut w = as_f64(weights);
            w.resize(d, 0.0);
            w
        };
        let b = bias.to_f64();
        let rows = features.rows();
        let (misclassified, smallest) = score_rows(weights, bias, has_bias, features, labels, &w);
        let separated = !misclassified.iter().any(|&m| m) && smallest > 0.0;
        let unit = geometry::unit(&w);
        let placed = place(features, &w, b, unit.as_deref())?;
        let wrong = misclassified.iter().filter(|&&m| m).count();
        let mut panel = Panel {
            caption: None,
            points: placed.points,
            labels: labels[..rows].to_vec(),
            misclassified,
            line: unit.is_some().then_some(placed.line),
            previous: None,
            band: separated.then_some(smallest),
            highlight: None,
            rows,
            stride: 1,
            wrong,
            class_rows: class_rows(&labels[..rows]),
            x_desc: placed.x_desc,
            y_desc: placed.y_desc,
            placement: placed.placement,
            include_origin: !has_bias,
            view: None,
        };
        panel.thin(MAX_POINTS);
        Ok(panel)
    }

    /// Keeps every k-th row, with k the smallest that leaves at most `max`.
    pub fn thin(&mut self, max: usize) {
        let n = self.points.len();
        if n <= max || max == 0 {
            return;
        }
        let stride = n.div_ceil(max);
        fn every<T>(v: &mut Vec<T>, stride: usize) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                (i - 1) % stride == 0
            });
        }
        every(&mut self.points, stride);
        every(&mut self.labels, stride);
        every(&mut self.misclassified, stride);
        self.stride = stride;
    }

    /// Says how many rows are drawn when not all are.
    pub fn thinning_note(&self) -> Option<String> {
        (self.stride > 1).then(|| {
            format!(
                "every {} row drawn ({} of {})",
                ordinal(self.stride),
                self.points.len(),
                self.rows
            )
        })
    }

    pub fn misclassified_count(&self) -> usize {
        self.wrong
    }

    /// The view fitted to the points (and the origin when asked).
    pub fn fitted_view(&self) -> (Span, Span) {
        let origin = self.include_origin.then_some(0.0);
        let x = Span::covering(self.points.iter().map(|p| p.0).chain(origin), 0.08);
        let y = Span::covering(self.points.iter().map(|p| p.1).chain(origin), 0.08);
        (x, y)
    }

    /// 2-D data keeps one unit the same length on both axes, so that w
    /// looks normal to the line. Projected and 1-D data need not: their
    /// boundary is vertical and w horizontal at any scale, and their axes
    /// may span very different ranges.
    fn equal_aspect(&self) -> bool {
        self.placement == Placement::Plane
    }

    /// The legend entries this panel needs.
    /// `band_widened`: the band was drawn [`MIN_BAND_PIXELS`] wide on each
    /// side because it is narrower (see [`Panel::draw`]).
    pub fn legend(&self, labels: &LabelMap, band_widened: bool) -> Vec<(Key, String)> {
        let count = |s: i8| self.class_rows[if s > 0 { 0 } else { 1 }];
        let rows = |n: usize| crate::text::count(n, "row");
        let mut keys = vec![
            (
                Key::Circle(POSITIVE),
                format!("+1 = {} ({})", Quoted(&labels.positive), rows(count(1))),
            ),
            (
                Key::Triangle(NEGATIVE),
                format!(
                    "-1 = {} ({})",
                    Quoted(labels.negative_text()),
                    rows(count(-1))
                ),
            ),
        ];
        if self.previous.is_some() {
            keys.push((Key::Dashed(GHOST, 2), "before the update".into()));
        }
        if self.line.is_some() {
            let what = if self.previous.is_some() {
                "after the update"
            } else {
                "decision boundary"
            };
            keys.push((Key::Line(INK, 3), what.into()));
            keys.push((Key::Arrow(REFERENCE), "w (points to the +1 side)".into()));
        }
        if let (Some(m), Some(line)) = (self.band, self.line) {
            let note = if band_widened {
                format!(" (drawn {MIN_BAND_PIXELS} px each side: not to scale)")
            } else {
                String::new()
            };
            keys.push((
                Key::Patch(BAND),
                format!(
                    "margin band, {} wide on each side: no row inside{note}",
                    style::fmt_sig(m / line.normal_length(), 3)
                ),
            ));
        }
        if self.highlight.is_some() {
            keys.push((
                Key::Ring(INK, 3),
                "the mistake that caused the update".into(),
            ));
        } else if self.misclassified_count() > 0 {
            keys.push((
                Key::Ring(INK, 2),
                format!("misclassified ({})", self.misclassified_count()),
            ));
        }
        keys
    }

    /// The height of the caption on `area`.
    pub fn caption_height<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        look: Look,
    ) -> DrawResult<i32, DB> {
        match &self.caption {
            Some(c) => style::title_height(area, &[(c, look.caption_size())]),
            None => Ok(0),
        }
    }

    /// The chart of the panel on `area` (below the caption), its view and
    /// the plotting area's size in pixels. Lays out only: draws nothing.
    fn chart<'a, DB: DrawingBackend>(
        &self,
        area: &'a DrawingArea<DB, Shift>,
        look: Look,
    ) -> DrawResult<Framed<'a, DB>, DB> {
        let (x_area, y_area, margin) = if look.compact {
            (44, 56, 6)
        } else {
            (56, 72, 12)
        };
        let builder = |x: Span, y: Span| {
            ChartBuilder::on(area)
                .margin(margin)
                .margin_right(margin + 10)
                .x_label_area_size(x_area)
                .y_label_area_size(y_area)
                .build_cartesian_2d(x.lo..x.hi, y.lo..y.hi)
        };
        let (mut x, mut y) = self.view.unwrap_or_else(|| self.fitted_view());
        let pixels = builder(x, y)?.plotting_area().dim_in_pixel();
        if self.equal_aspect() {
            (x, y) = geometry::equal_aspect(x, y, pixels);
        }
        Ok((builder(x, y)?, x, y, pixels))
    }

    /// The part of `area` below the caption (which takes at least
    /// `caption_height` pixels), without drawing the caption.
    fn below_caption<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        look: Look,
        caption_height: i32,
    ) -> DrawResult<DrawingArea<DB, Shift>, DB> {
        let height = self.caption_height(area, look)?.max(caption_height);
        Ok(area.split_vertically(height).1)
    }

    /// The margin band's half-width as drawn in `view` on `pixels`: its
    /// true one m, or one [`MIN_BAND_PIXELS`] wide when m is narrower; and
    /// whether it was widened.
    fn drawn_band(&self, (x, y): (Span, Span), pixels: (u32, u32)) -> Option<(f64, bool)> {
        let (line, m) = (self.line?, self.band?);
        let half = band_pixels(&line, m, (x, y), pixels);
        Some(if half < MIN_BAND_PIXELS {
            (m * MIN_BAND_PIXELS / half, true)
        } else {
            (m, false)
        })
    }

    /// Whether [`Panel::draw`] on the same `area` will draw the margin band
    /// wider than to scale (the legend must then say so). Draws nothing.
    pub fn band_widened<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        look: Look,
        caption_height: i32,
    ) -> DrawResult<bool, DB> {
        let below = self.below_caption(area, look, caption_height)?;
        let (_, x, y, pixels) = self.chart(&below, look)?;
        Ok(self.drawn_band((x, y), pixels).is_some_and(|b| b.1))
    }

    /// Draws the panel on `area`, its caption taking at least
    /// `caption_height` pixels. Returns whether the margin band was drawn
    /// wider than to scale ([`MIN_BAND_PIXELS`] on each side, because it is
    /// narrower than that here), which the legend must then say.
    pub fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        look: Look,
        caption_height: i32,
    ) -> DrawResult<bool, DB> {
        let area = match &self.caption {
            Some(c) => style::titled_min(area, &[(c, look.caption_size())], caption_height)?,
            None => area.split_vertically(caption_height).1,
        };
        let (mut chart, x, y, pixels) = self.chart(&area, look)?;
        self.draw_axes(&mut chart, (x, y), look)?;

        let mut band_widened = false;
        if let (Some(line), Some((drawn, widened))) = (self.line, self.drawn_band((x, y), pixels)) {
            band_widened = widened;
            draw_band(&mut chart, line, (drawn, widened), (x, y))?;
        }
        if let Some(prev) = self.previous
            && let Some((p, q)) = prev.clip(x, y)
        {
            chart.draw_series(DashedLineSeries::new([p, q], 9, 6, GHOST.stroke_width(2)))?;
        }
        let marks = self.marks(look);
        self.draw_rows(&mut chart, marks)?;
        let notes = self.draw_boundary(&mut chart, (x, y), pixels)?;
        let note_style = style::font(look.label_size()).color(&AXIS);
        for (k, note) in notes.iter().enumerate() {
            let at = (
                x.lo + 0.03 * x.width(),
                y.hi - 0.03 * y.width()
                    - k as f64 * (look.label_size() + 4.0) * y.width() / pixels.1.max(1) as f64,
            );
            chart
                .plotting_area()
                .draw(&Text::new(*note, at, note_style.clone()))?;
        }

        if let Some((p, label)) = self.highlight {
            let Marks { r, t, .. } = marks;
            if label > 0 {
                chart.draw_series(std::iter::once(Circle::new(p, r + 1, POSITIVE.filled())))?;
            } else {
                chart.draw_series(std::iter::once(TriangleMarker::new(
                    p,
                    t + 1,
                    NEGATIVE.filled(),
                )))?;
            }
            chart.draw_series(std::iter::once(Circle::new(p, r + 7, INK.stroke_width(3))))?;
        }
        Ok(band_widened)
    }

    /// The axes, grid and tick labels of the chart, in the view's spans.
    fn draw_axes<DB: DrawingBackend>(
        &self,
        chart: &mut ChartOn<'_, DB>,
        (x, y): (Span, Span),
        look: Look,
    ) -> DrawResult<(), DB> {
        let (xs, ys) = (x.width(), y.width());
        let x_fmt = |v: &f64| style::tick(*v, xs);
        let y_fmt = |v: &f64| style::tick(*v, ys);
        let ticks = if look.compact { 5 } else { 9 };
        chart
            .configure_mesh()
            .x_desc(self.x_desc.as_str())
            .y_desc(self.y_desc.as_str())
            .axis_desc_style(style::font(look.desc_size()))
            .label_style(style::font(look.label_size()))
            .axis_style(AXIS)
            .light_line_style(style::GRID_LIGHT)
            .bold_line_style(style::GRID)
            .max_light_lines(1)
            .x_labels(ticks)
            .y_labels(ticks)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .draw()?;
        Ok(())
    }

    /// The sizes and opacity of the row markers: smaller and translucent
    /// for many rows, smaller in compact panels, faded behind a highlight.
    fn marks(&self, look: Look) -> Marks {
        let small = self.points.len() > 2000;
        let (r, t) = if small {
            (2, 3)
        } else if look.compact {
            (3, 5)
        } else {
            (style::POINT_RADIUS, style::TRIANGLE_SIZE)
        };
        let opacity = if small { 0.6 } else { 1.0 };
        let faded = self.highlight.is_some();
        let alpha = if faded { 0.55 } else { opacity };
        Marks { r, t, alpha }
    }

    /// The rows: triangles for -1, circles for +1 drawn over them, and
    /// rings around the misclassified ones (unless a highlight is the
    /// point of the picture).
    fn draw_rows<DB: DrawingBackend>(
        &self,
        chart: &mut ChartOn<'_, DB>,
        Marks { r, t, alpha }: Marks,
    ) -> DrawResult<(), DB> {
        chart.draw_series(
            self.points
                .iter()
                .zip(&self.labels)
                .filter(|(_, y)| **y < 0)
                .map(|(&p, _)| TriangleMarker::new(p, t, NEGATIVE.mix(alpha).filled())),
        )?;
        chart.draw_series(
            self.points
                .iter()
                .zip(&self.labels)
                .filter(|(_, y)| **y > 0)
                .map(|(&p, _)| Circle::new(p, r, POSITIVE.mix(alpha).filled())),
        )?;
        if self.highlight.is_none() {
            chart.draw_series(
                self.points
                    .iter()
                    .zip(&self.misclassified)
                    .filter(|(_, m)| **m)
                    .map(|(&p, _)| Circle::new(p, r + 5, INK.stroke_width(2))),
            )?;
        }
        Ok(())
    }

    /// The boundary and its normal vector where they are in view; returns
    /// the notes to write in the corner for the lines that are not (or,
    /// with a highlight, that do not exist).
    fn draw_boundary<DB: DrawingBackend>(
        &self,
        chart: &mut ChartOn<'_, DB>,
        (x, y): (Span, Span),
        pixels: (u32, u32),
    ) -> DrawResult<Vec<&'static str>, DB> {
        let mut notes = Vec::new();
        if let Some(line) = self.line {
            match line.clip(x, y) {
                Some((p, q)) => {
                    chart.draw_series(LineSeries::new([p, q], INK.stroke_width(3)))?;
                    self.draw_normal(chart, line, (p, q), (x, y), pixels)?;
                }
                None if self.previous.is_some() || self.highlight.is_some() => {
                    notes.push("the boundary after is outside this view")
                }
                None => notes.push("the boundary is outside this view"),
            }
        } else if self.highlight.is_some() {
            notes.push("w = 0 after the update: no boundary");
        }
        if self.highlight.is_some() {
            match self.previous {
                None => notes.push("before: w = 0, no boundary"),
                Some(prev) if prev.clip(x, y).is_none() => {
                    notes.push("the boundary before is outside this view")
                }
                Some(_) => {}
            }
        }
        Ok(notes)
    }

    /// Draws w as an arrow from a point of the visible boundary segment.
    fn draw_normal<DB: DrawingBackend>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
        line: Line,
        (p, q): ((f64, f64), (f64, f64)),
        (x, y): (Span, Span),
        pixels: (u32, u32),
    ) -> DrawResult<(), DB> {
        let (sx, sy) = (
            pixels.0.max(1) as f64 / x.width(),
            pixels.1.max(1) as f64 / y.width(),
        );
        // The direction of w in pixels (y grows downwards there).
        let (px, py) = (line.a * sx, -line.b * sy);
        let n = px.hypot(py);
        if n == 0.0 || !n.is_finite() {
            return Ok(());
        }
        let (ux, uy) = (px / n, py / n);
        let inside = |v: (f64, f64)| {
            let (ix, iy) = (0.02 * x.width(), 0.02 * y.width());
            v.0 >= x.lo + ix && v.0 <= x.hi - ix && v.1 >= y.lo + iy && v.1 <= y.hi - iy
        };
        let mut length = 0.16 * pixels.0.min(pixels.1) as f64;
        let mut chosen = None;
        'search: for _ in 0..4 {
            for f in [0.5, 0.35, 0.65, 0.2, 0.8] {
                let a = (p.0 + f * (q.0 - p.0), p.1 + f * (q.1 - p.1));
                let tip = (a.0 + ux * length / sx, a.1 - uy * length / sy);
                if inside(tip) {
                    chosen = Some((a, tip));
                    break 'search;
                }
            }
            length *= 0.5;
        }
        let Some((a, tip)) = chosen else {
            return Ok(());
        };
        let style = REFERENCE.stroke_width(3);
        chart.draw_series(std::iter::once(PathElement::new([a, tip], style)))?;
        let head = |turn: f64| {
            let (c, s) = (turn.cos(), turn.sin());
            let (bx, by) = (-ux, -uy);
            (
                ((bx * c - by * s) * 11.0).round() as i32,
                ((bx * s + by * c) * 11.0).round() as i32,
            )
        };
        let spread = 28f64.to_radians();
        chart.draw_series(std::iter::once(
            EmptyElement::at(tip)
                + PathElement::new([head(spread), (0, 0), head(-spread)], style)
                + Text::new(
                    "w",
                    (
                        (ux * 14.0).round() as i32 - 5,
                        (uy * 14.0).round() as i32 - 9,
                    ),
                    style::font(style::LABEL_SIZE + 2.0).color(&REFERENCE),
                ),
        ))?;
        Ok(())
    }
}

/// Which rows the model gets wrong, by the reference arithmetic in F as
/// `predict` decides, and the smallest y (w·x + b) in f64 (`w`: the
/// weights widened to every feature), the margin band's half-width when
/// no row is wrong.
fn score_rows<F: Real>(
    weights: &[F],
    bias: F,
    has_bias: bool,
    features: &Features<F>,
    labels: &[i8],
    w: &[f64],
) -> (Vec<bool>, f64) {
    let b = bias.to_f64();
    let rows = features.rows();
    let mut augmented = weights.to_vec();
    if has_bias {
        augmented.push(bias);
    }
    let mut misclassified = Vec::with_capacity(rows);
    let mut smallest = f64::INFINITY;
    for (i, &y) in labels.iter().enumerate().take(rows) {
        let row = features.row(i);
        let s = reference::dot(&augmented, row, has_bias);
        misclassified.push(crate::engine::reference::predicted_sign(s) != y);
        let mut v = b;
        row.for_each(|k, x| v += w[k] * x.to_f64());
        smallest = smallest.min(y as f64 * v);
    }
    (misclassified, smallest)
}

/// The rows placed in the plane, the boundary there, and the axes' names.
struct Placed {
    points: Vec<(f64, f64)>,
    line: Line,
    placement: Placement,
    x_desc: String,
    y_desc: String,
}

/// Places the rows by the number of features (`w`, widened to all of
/// them, and `b` the model's): one against the row number, two as they
/// are, more projected (which needs `unit`, w's direction).
fn place<F: Real>(
    features: &Features<F>,
    w: &[f64],
    b: f64,
    unit: Option<&[f64]>,
) -> Result<Placed> {
    let rows = features.rows();
    Ok(match w.len() {
        0 => return Err(Error::Usage("the data has no features to draw".into())),
        1 => Placed {
            points: (0..rows)
                .map(|i| (coordinate(features, i, 0), (i + 1) as f64))
                .collect(),
            line: Line {
                a: w[0],
                b: 0.0,
                c: b,
            },
            placement: Placement::Line,
            x_desc: "x1".into(),
            y_desc: "row".into(),
        },
        2 => Placed {
            points: (0..rows)
                .map(|i| (coordinate(features, i, 0), coordinate(features, i, 1)))
                .collect(),
            line: Line {
                a: w[0],
                b: w[1],
                c: b,
            },
            placement: Placement::Plane,
            x_desc: "x1".into(),
            y_desc: "x2".into(),
        },
        d => project(features, w, b, unit, d)?,
    })
}

/// Places rows of more than two features: along w's direction `unit`,
/// and across it along the first principal direction orthogonal to w.
fn project<F: Real>(
    features: &Features<F>,
    w: &[f64],
    b: f64,
    unit: Option<&[f64]>,
    d: usize,
) -> Result<Placed> {
    let Some(u) = unit else {
        return Err(Error::Usage(
            "the model's weights are all zero: there is no boundary to draw, and no direction to project the data onto".into(),
        ));
    };
    let along = geometry::row_dots(features, u);
    let across = match geometry::principal_direction(features, d, Some(u)) {
        Some(v) => geometry::row_dots(features, &v),
        None => vec![0.0; features.rows()],
    };
    let norm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
    let line = Line {
        a: norm,
        b: 0.0,
        c: b,
    };
    Ok(Placed {
        points: along.into_iter().zip(across).collect(),
        line,
        placement: Placement::Projected { features: d },
        x_desc: "w·x / ‖w‖  (projection onto w)".into(),
        y_desc: "first principal direction ⊥ w".into(),
    })
}

/// The sizes of the row markers (circle radius, triangle size) and their
/// opacity, as [`Panel::draw`] draws the rows and the highlight.
#[derive(Clone, Copy)]
struct Marks {
    r: u32,
    t: u32,
    alpha: f64,
}

/// The margin band of half-width `drawn` around `line`: filled, with its
/// edges solid when to scale and dotted when `widened`.
fn draw_band<DB: DrawingBackend>(
    chart: &mut ChartOn<'_, DB>,
    line: Line,
    (drawn, widened): (f64, bool),
    (x, y): (Span, Span),
) -> DrawResult<(), DB> {
    let poly = geometry::band(&line, -drawn, drawn, x, y);
    if poly.len() >= 3 {
        chart.draw_series(std::iter::once(Polygon::new(poly, BAND.mix(0.85).filled())))?;
    }
    for level in [-drawn, drawn] {
        if let Some((p, q)) = line.at_level(level).clip(x, y) {
            if widened {
                // Dotted: these edges are not where the rows are.
                chart.draw_series(DashedLineSeries::new([p, q], 3, 3, GHOST.stroke_width(1)))?;
            } else {
                chart.draw_series(std::iter::once(PathElement::new(
                    [p, q],
                    GHOST.stroke_width(1),
                )))?;
            }
        }
    }
    Ok(())
}

/// The distance in pixels between the boundary (value 0) and the line of
/// value `m`, in a view of spans `(x, y)` drawn on `pixels`. A degenerate
/// line gives infinity (nothing to widen).
pub fn band_pixels(line: &Line, m: f64, (x, y): (Span, Span), pixels: (u32, u32)) -> f64 {
    let (sx, sy) = (
        pixels.0.max(1) as f64 / x.width(),
        pixels.1.max(1) as f64 / y.width(),
    );
    // value = a·x + b·y + c = (a/sx)·X + (b/sy)·Y + c in pixels X, Y.
    let n = (line.a / sx).hypot(line.b / sy);
    let d = m.abs() / n;
    if d.is_finite() { d } else { f64::INFINITY }
}

/// 2nd, 3rd, 4th, 11th, 21st, ...
pub fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Rows of the +1 and of the -1 class.
pub fn class_rows(labels: &[i8]) -> [usize; 2] {
    let positive = labels.iter().filter(|&&y| y > 0).count();
    [positive, labels.len() - positive]
}

/// Feature `k` of row `i` (0 when not stored).
fn coordinate<F: Real>(features: &Features<F>, i: usize, k: usize) -> f64 {
    let mut v = 0.0;
    features.row(i).for_each(|j, x| {
        if j == k {
            v = x.to_f64();
        }
    });
    v
}

/// Whether some line through the origin separates the rows (y w·x > 0 for
/// all): decidable exactly enough for 1-D and 2-D data, None otherwise or
/// when the answer is within rounding. In 2-D the points z = y x must lie in
/// an open half-plane: sorted by angle, some gap between neighbours exceeds
/// pi (Gordan's alternative).
pub fn separable_through_origin(points: &[(f64, f64)], labels: &[i8], dims: usize) -> Option<bool> {
    let z: Vec<(f64, f64)> = points
        .iter()
        .zip(labels)
        .map(|(&(a, b), &y)| (y as f64 * a, if dims == 2 { y as f64 * b } else { 0.0 }))
        .collect();
    if z.is_empty() {
        return None;
    }
    if z.iter().any(|&(a, b)| a == 0.0 && b == 0.0) {
        return Some(false);
    }
    match dims {
        1 => Some(z.iter().all(|p| p.0 > 0.0) || z.iter().all(|p| p.0 < 0.0)),
        2 => {
            let mut angles: Vec<f64> = z.iter().map(|&(a, b)| b.atan2(a)).collect();
            angles.sort_by(f64::total_cmp);
            let pi = std::f64::consts::PI;
            let mut gap = angles[0] + 2.0 * pi - angles[angles.len() - 1];
            for pair in angles.windows(2) {
                gap = gap.max(pair[1] - pair[0]);
            }
            if (gap - pi).abs() < 1e-12 {
                None
            } else {
                Some(gap > pi)
            }
        }
        _ => None,
    }
}
