//! The bitmap backend with text laid out glyph by glyph, side bearings and
//! kerning included.
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

fn font() -> &'static FontRef<'static> {
    static FONT: OnceLock<FontRef<'static>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(DEJAVU_SANS).expect("the embedded font parses"))
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
        let font = font();
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
