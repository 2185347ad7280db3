//! The bitmap backend with text laid out glyph by glyph, side bearings and
//! kerning included, and wide lines of an even width at every slope.
//!
//! plotters' own ab_glyph text drawing places each glyph at the pen position
//! without its left side bearing, which spreads "digits.json" into
//! "digits. json". [`Pixels`] wraps plotters' `BitMapBackend`, passes every
//! shape through, and draws text itself with the embedded DejaVu Sans at the
//! same scale plotters measures it with, so layouts (legend boxes, label
//! areas) still fit.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use plotters::backend::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

use super::style::DEJAVU_SANS;

/// The compiled-in font, parsed once; a defect in it (which the plot tests
/// would catch) is a drawing error, not a panic.
fn font() -> Result<&'static FontRef<'static>, ab_glyph::InvalidFont> {
    static FONT: OnceLock<Result<FontRef<'static>, ab_glyph::InvalidFont>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(DEJAVU_SANS))
        .as_ref()
        .map_err(|e| *e)
}

/// An RGB bitmap backend that draws text properly.
pub struct Pixels<'a> {
    inner: BitMapBackend<'a>,
}

impl<'a> Pixels<'a> {
    pub fn with_buffer(buffer: &'a mut [u8], size: (u32, u32)) -> Self {
        Pixels {
            inner: BitMapBackend::with_buffer(buffer, size),
        }
    }
}

type Failure<'a> = DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>;

/// Largest area (pixels) a wide stroke is rasterised over in one piece.
const STROKE_AREA: usize = 1 << 24;

impl<'a> Pixels<'a> {
    /// Draws a polyline `style.stroke_width()` wide with antialiased edges.
    ///
    /// plotters turns a wide line into a polygon with truncated corners,
    /// so its apparent width jumps between 1 and 2 pixels with the slope.
    /// Here each pixel is covered by how far its centre lies from the
    /// nearest segment, so every slope looks equally wide, and joints are
    /// not blended twice.
    fn stroke<S: BackendStyle>(
        &mut self,
        points: &[BackendCoord],
        style: &S,
    ) -> Result<(), Failure<'a>> {
        let color = style.color();
        if color.alpha == 0.0 || points.len() < 2 {
            return Ok(());
        }
        let r = style.stroke_width() as f64 / 2.0;
        let (w, h) = self.get_size();
        let pad = r + 1.0;
        let xs = points.iter().map(|p| p.0 as f64);
        let ys = points.iter().map(|p| p.1 as f64);
        let x0 = (xs.clone().fold(f64::INFINITY, f64::min) - pad)
            .floor()
            .max(0.0);
        let x1 = (xs.fold(f64::NEG_INFINITY, f64::max) + pad)
            .ceil()
            .min(w as f64 - 1.0);
        let y0 = (ys.clone().fold(f64::INFINITY, f64::min) - pad)
            .floor()
            .max(0.0);
        let y1 = (ys.fold(f64::NEG_INFINITY, f64::max) + pad)
            .ceil()
            .min(h as f64 - 1.0);
        if x0 > x1 || y0 > y1 {
            return Ok(());
        }
        let (x0, y0) = (x0 as i32, y0 as i32);
        let (bw, bh) = ((x1 as i32 - x0 + 1) as usize, (y1 as i32 - y0 + 1) as usize);
        if bw * bh > STROKE_AREA {
            return self.inner.draw_path(points.iter().copied(), style);
        }
        let mut coverage = vec![0f32; bw * bh];
        for seg in points.windows(2) {
            let (a, b) = (
                (seg[0].0 as f64, seg[0].1 as f64),
                (seg[1].0 as f64, seg[1].1 as f64),
            );
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let len2 = dx * dx + dy * dy;
            let sx0 = ((a.0.min(b.0) - pad).floor() as i32).max(x0);
            let sx1 = ((a.0.max(b.0) + pad).ceil() as i32).min(x0 + bw as i32 - 1);
            let sy0 = ((a.1.min(b.1) - pad).floor() as i32).max(y0);
            let sy1 = ((a.1.max(b.1) + pad).ceil() as i32).min(y0 + bh as i32 - 1);
            for py in sy0..=sy1 {
                for px in sx0..=sx1 {
                    let (qx, qy) = (px as f64, py as f64);
                    let t = if len2 > 0.0 {
                        (((qx - a.0) * dx + (qy - a.1) * dy) / len2).clamp(0.0, 1.0)
                    } else {
                        0.0
                    };
                    let d = (qx - (a.0 + t * dx)).hypot(qy - (a.1 + t * dy));
                    let c = (r + 0.5 - d).clamp(0.0, 1.0) as f32;
                    let cell = &mut coverage[(py - y0) as usize * bw + (px - x0) as usize];
                    *cell = cell.max(c);
                }
            }
        }
        for (k, &c) in coverage.iter().enumerate() {
            if c > 0.0 {
                let (px, py) = (x0 + (k % bw) as i32, y0 + (k / bw) as i32);
                self.inner.draw_pixel(
                    (px, py),
                    BackendColor {
                        alpha: color.alpha * c as f64,
                        rgb: color.rgb,
                    },
                )?;
            }
        }
        Ok(())
    }
}

impl<'a> DrawingBackend for Pixels<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), Failure<'a>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), Failure<'a>> {
        self.inner.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Failure<'a>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Failure<'a>> {
        if style.stroke_width() >= 2 {
            return self.stroke(&[from, to], style);
        }
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure<'a>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Failure<'a>> {
        if style.stroke_width() >= 2 {
            let points: Vec<BackendCoord> = path.into_iter().collect();
            return self.stroke(&points, style);
        }
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Failure<'a>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Failure<'a>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Failure<'a>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), Failure<'a>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let font = font().map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        // plotters measures text with the font scaled to `size` pixels from
        // descender to ascender; draw at the same scale.
        let scaled = font.as_scaled(PxScale::from(style.size() as f32));
        let mut glyphs = Vec::with_capacity(text.len());
        let mut pen = 0.0f32;
        let mut previous = None;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = previous {
                pen += scaled.kern(p, id);
            }
            glyphs.push(id.with_scale_and_position(scaled.scale(), point(pen, 0.0)));
            pen += scaled.h_advance(id);
            previous = Some(id);
        }
        let dx = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -pen / 2.0,
            HPos::Right => -pen,
        };
        // The baseline, below the anchor point.
        let baseline = match style.anchor().v_pos {
            VPos::Top => scaled.ascent(),
            VPos::Center => 0.5 * (scaled.ascent() + scaled.descent()),
            VPos::Bottom => scaled.descent(),
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        for glyph in glyphs {
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            let mut result = Ok(());
            outline.draw(|gx, gy, coverage| {
                if result.is_err() || coverage <= 0.0 {
                    return;
                }
                let x = (bounds.min.x + dx).round() as i32 + gx as i32;
                let y = (bounds.min.y + baseline).round() as i32 + gy as i32;
                let (x, y) = transform.transform(x, y);
                let (x, y) = (pos.0 + x, pos.1 + y);
                if x >= 0 && y >= 0 && (x as u32) < w && (y as u32) < h {
                    result = self.inner.draw_pixel(
                        (x, y),
                        BackendColor {
                            alpha: color.alpha * coverage.min(1.0) as f64,
                            rgb: color.rgb,
                        },
                    );
                }
            });
            result?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::*;

    /// Total ink (0..1 per pixel) of a black line from `a` to `b`.
    fn ink(a: (i32, i32), b: (i32, i32), width: u32) -> f64 {
        let mut rgb = vec![255u8; 120 * 120 * 3];
        {
            let mut canvas = Pixels::with_buffer(&mut rgb, (120, 120));
            canvas
                .draw_line(a, b, &plotters::style::Color::stroke_width(&BLACK, width))
                .unwrap();
            canvas.present().unwrap();
        }
        rgb.iter().map(|&v| (255 - v) as f64 / 255.0).sum::<f64>() / 3.0
    }

    #[test]
    fn wide_lines_are_equally_wide_at_every_slope() {
        let length = 80f64;
        for width in [2u32, 3] {
            let flat = ink((20, 20), (100, 20), width);
            let steep = ink((20, 20), (20, 100), width);
            let (dx, dy) = (length / 2f64.sqrt(), length / 2f64.sqrt());
            let diagonal = ink((20, 20), (20 + dx as i32, 20 + dy as i32), width);
            for (name, v) in [("flat", flat), ("steep", steep), ("diagonal", diagonal)] {
                let per_pixel = v / length;
                assert!(
                    (per_pixel - width as f64).abs() < 0.35 * width as f64,
                    "{name} line of width {width}: {per_pixel} px wide"
                );
            }
        }
    }
}
