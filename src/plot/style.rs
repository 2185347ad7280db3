//! The look shared by every picture: colour-blind-safe colours, the embedded
//! font, text sizes, titles, legends and number formatting.
//!
//! Colours are from the Okabe-Ito palette, which stays distinguishable under
//! the common colour-vision deficiencies; the two classes also differ in
//! shape (circle and triangle), so the pictures read in greyscale too.

use std::sync::Once;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::DrawResult;

/// The +1 class (Okabe-Ito blue), drawn as circles.
pub const POSITIVE: RGBColor = RGBColor(0x00, 0x72, 0xB2);
/// The -1 class (Okabe-Ito vermillion), drawn as triangles.
pub const NEGATIVE: RGBColor = RGBColor(0xD5, 0x5E, 0x00);
/// Reference quantities: gamma, the normal vector w (Okabe-Ito green).
pub const REFERENCE: RGBColor = RGBColor(0x00, 0x9E, 0x73);
/// A second series (Okabe-Ito orange).
pub const SECOND: RGBColor = RGBColor(0xE6, 0x9F, 0x00);
/// The decision boundary and highlighted rows.
pub const INK: RGBColor = RGBColor(0x00, 0x00, 0x00);
/// Axes, grid and secondary text.
pub const AXIS: RGBColor = RGBColor(0x44, 0x44, 0x44);
/// A line shown for comparison (the hyperplane before an update).
pub const GHOST: RGBColor = RGBColor(0x88, 0x88, 0x88);
/// The margin band.
pub const BAND: RGBColor = RGBColor(0xCC, 0xCC, 0xCC);

/// Grid lines.
pub const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
pub const GRID_LIGHT: RGBColor = RGBColor(0xF0, 0xF0, 0xF0);

/// The family every text uses; [`register_fonts`] maps it to DejaVu Sans.
pub const FAMILY: &str = "sans-serif";

/// DejaVu Sans (see `assets/fonts/README.md` for its provenance and licence).
pub(crate) static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// Makes the embedded font the one plotters measures and rasterises text
/// with. Idempotent; every render calls it.
pub fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for style in [FontStyle::Normal, FontStyle::Bold] {
            if plotters::style::register_font(FAMILY, style, DEJAVU_SANS).is_err() {
                // The bytes are compiled in and checked by a test; a failure
                // here would surface as a font error when drawing.
            }
        }
    });
}

/// Text sizes (plotters' font size; SVG's font-size is this / 1.24).
pub const TITLE_SIZE: f64 = 24.0;
pub const SUBTITLE_SIZE: f64 = 17.0;
pub const DESC_SIZE: f64 = 19.0;
pub const LABEL_SIZE: f64 = 16.0;
pub const LEGEND_SIZE: f64 = 16.0;

pub fn font(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&INK)
}

/// Draws lines of text (each with its size) centred at the top of `area`,
/// wrapping at spaces where a line is wider than the area, and returns the
/// area below them.
pub fn titled<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lines: &[(&str, f64)],
) -> DrawResult<DrawingArea<DB, Shift>, DB> {
    titled_min(area, lines, 0)
}

/// The wrapped parts of title lines with their tops, and the height used.
#[allow(clippy::type_complexity)]
fn title_layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lines: &[(&str, f64)],
) -> DrawResult<(Vec<(String, f64, i32)>, i32), DB> {
    let (w, _) = area.dim_in_pixel();
    let mut parts = Vec::new();
    let mut y = 8i32;
    for &(line, size) in lines {
        let style = font(size);
        for part in wrap(area, line, &style, w.saturating_sub(24))? {
            parts.push((part, size, y));
            y += (size * 1.05) as i32 + 3;
        }
        y += 2;
    }
    Ok((parts, y + 4))
}

/// The height [`titled`] would take for `lines` on `area`.
pub fn title_height<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lines: &[(&str, f64)],
) -> DrawResult<i32, DB> {
    Ok(title_layout(area, lines)?.1)
}

/// [`titled`], taking at least `min_height` pixels (so that side-by-side
/// panels with captions of different lengths keep plots of one size).
pub fn titled_min<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lines: &[(&str, f64)],
    min_height: i32,
) -> DrawResult<DrawingArea<DB, Shift>, DB> {
    let (w, _) = area.dim_in_pixel();
    let (parts, height) = title_layout(area, lines)?;
    for (part, size, y) in parts {
        let style = font(size).pos(Pos::new(HPos::Center, VPos::Top));
        area.draw(&Text::new(part, (w as i32 / 2, y), style))?;
    }
    Ok(area.split_vertically(height.max(min_height)).1)
}

/// Splits `text` at spaces into lines no wider than `width` pixels (a single
/// word wider than that gets a line of its own).
fn wrap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    width: u32,
) -> DrawResult<Vec<String>, DB> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split(' ') {
        let candidate = if current.is_empty() {
            word.to_owned()
        } else {
            format!("{current} {word}")
        };
        if !current.is_empty() && area.estimate_text_size(&candidate, style)?.0 > width {
            lines.push(std::mem::replace(&mut current, word.to_owned()));
        } else {
            current = candidate;
        }
    }
    lines.push(current);
    Ok(lines)
}

/// Formats `v` with `sig` significant figures, without trailing zeros, in
/// scientific notation outside [1e-3, 1e7).
pub fn fmt_sig(v: f64, sig: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    if v.abs() >= 1e7 || v.abs() < 1e-3 {
        let s = format!("{:.*e}", sig.saturating_sub(1), v);
        return match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        };
    }
    let decimals = (sig as i32 - 1 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A tick label: short, and "0" for values that are zero up to rounding of
/// the axis range.
pub fn tick(v: f64, span: f64) -> String {
    if v.abs() < span * 1e-9 {
        "0".into()
    } else {
        fmt_sig(v, 4)
    }
}

/// A tick label of a log axis: powers of ten from 10⁴ up as 10 with a
/// superscript exponent, so that the labels stay narrow.
pub fn log_tick(v: f64) -> String {
    let e = v.log10().round();
    if e >= 4.0 && (v - 10f64.powf(e)).abs() <= 1e-9 * v {
        const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
        let digits: String = (e as u32)
            .to_string()
            .chars()
            .map(|d| SUPERSCRIPT[d.to_digit(10).unwrap_or(0) as usize])
            .collect();
        format!("10{digits}")
    } else {
        fmt_sig(v, 3)
    }
}

/// The file name of a path, for titles (the whole path is in the model).
pub fn short_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty() && !path.starts_with('<'))
        .unwrap_or_else(|| path.to_owned())
}

/// What a legend entry shows next to its text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Key {
    /// A filled circle (the +1 class).
    Circle(RGBColor),
    /// A filled triangle (the -1 class).
    Triangle(RGBColor),
    /// A solid line of this width.
    Line(RGBColor, u32),
    /// A dashed line of this width.
    Dashed(RGBColor, u32),
    /// An open ring (misclassified or highlighted rows).
    Ring(RGBColor, u32),
    /// A filled patch (the margin band).
    Patch(RGBColor),
    /// An arrow (the normal vector w).
    Arrow(RGBColor),
    /// A line through a dot (a series of values joined by lines).
    LineDot(RGBColor),
}

/// Marker sizes of the two classes, in pixels.
pub const POINT_RADIUS: u32 = 4;
pub const TRIANGLE_SIZE: u32 = 6;

const KEY_WIDTH: i32 = 30;
const KEY_GAP: i32 = 8;
const ENTRY_GAP: i32 = 26;
const LEGEND_ROW: i32 = 26;

/// Draws the key of an entry centred vertically at (x, y), KEY_WIDTH wide.
fn draw_key<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    key: Key,
    x: i32,
    y: i32,
) -> DrawResult<(), DB> {
    let mid = x + KEY_WIDTH / 2;
    match key {
        Key::Circle(c) => area.draw(&Circle::new((mid, y), POINT_RADIUS + 1, c.filled())),
        Key::Triangle(c) => area.draw(&TriangleMarker::new(
            (mid, y),
            TRIANGLE_SIZE + 1,
            c.filled(),
        )),
        Key::Line(c, w) => area.draw(&PathElement::new(
            [(x, y), (x + KEY_WIDTH, y)],
            c.stroke_width(w),
        )),
        Key::Dashed(c, w) => area.draw(&DashedPathElement::new(
            [(x, y), (x + KEY_WIDTH, y)],
            7,
            4,
            c.stroke_width(w),
        )),
        Key::Ring(c, w) => area.draw(&Circle::new((mid, y), 8, c.stroke_width(w))),
        Key::Patch(c) => area.draw(&Rectangle::new(
            [(x, y - 7), (x + KEY_WIDTH, y + 7)],
            c.filled(),
        )),
        Key::LineDot(c) => {
            area.draw(&PathElement::new(
                [(x, y), (x + KEY_WIDTH, y)],
                c.stroke_width(2),
            ))?;
            area.draw(&Circle::new((mid, y), POINT_RADIUS, c.filled()))
        }
        Key::Arrow(c) => {
            area.draw(&PathElement::new(
                [(x, y), (x + KEY_WIDTH, y)],
                c.stroke_width(3),
            ))?;
            area.draw(&PathElement::new(
                [
                    (x + KEY_WIDTH - 9, y - 5),
                    (x + KEY_WIDTH, y),
                    (x + KEY_WIDTH - 9, y + 5),
                ],
                c.stroke_width(3),
            ))
        }
    }
}

/// Lays the entries out in centred rows that fit `width`: each row is a list
/// of (entry, its width in pixels).
fn legend_rows<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Key, String)],
    width: u32,
) -> DrawResult<Vec<Vec<(usize, i32)>>, DB> {
    let style = font(LEGEND_SIZE);
    let mut rows: Vec<Vec<(usize, i32)>> = Vec::new();
    let mut row: Vec<(usize, i32)> = Vec::new();
    let mut used = 0i32;
    for (i, (_, text)) in entries.iter().enumerate() {
        let (tw, _) = area.estimate_text_size(text, &style)?;
        let w = KEY_WIDTH + KEY_GAP + tw as i32;
        if !row.is_empty() && used + ENTRY_GAP + w > width as i32 - 16 {
            rows.push(std::mem::take(&mut row));
            used = 0;
        }
        used += if row.is_empty() { w } else { ENTRY_GAP + w };
        row.push((i, w));
    }
    rows.push(row);
    Ok(rows)
}

/// The height a legend of `entries` needs across `area`'s width.
pub fn legend_height<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Key, String)],
) -> DrawResult<u32, DB> {
    let rows = legend_rows(area, entries, area.dim_in_pixel().0)?;
    Ok((rows.len() as i32 * LEGEND_ROW + 14) as u32)
}

/// Splits `area` into the part above a legend of `entries` and the legend's
/// strip at the bottom, and draws the legend there.
pub fn legend_below<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Key, String)],
) -> DrawResult<DrawingArea<DB, Shift>, DB> {
    let height = legend_height(area, entries)?;
    let (_, h) = area.dim_in_pixel();
    let (above, strip) = area.split_vertically(h.saturating_sub(height + 6));
    draw_legend(&strip, entries)?;
    Ok(above)
}

/// Draws `entries` as centred rows across `area` (a strip reserved with
/// [`legend_height`]), inside a light frame.
pub fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Key, String)],
) -> DrawResult<(), DB> {
    let (w, _) = area.dim_in_pixel();
    let rows = legend_rows(area, entries, w)?;
    let widest = rows
        .iter()
        .map(|r| r.iter().map(|e| e.1).sum::<i32>() + ENTRY_GAP * (r.len() as i32 - 1))
        .max()
        .unwrap_or(0);
    let left = (w as i32 - widest) / 2 - 10;
    area.draw(&Rectangle::new(
        [
            (left, 2),
            (left + widest + 20, rows.len() as i32 * LEGEND_ROW + 10),
        ],
        AXIS.stroke_width(1),
    ))?;
    let style = font(LEGEND_SIZE).pos(Pos::new(HPos::Left, VPos::Center));
    for (r, row) in rows.iter().enumerate() {
        let row_width: i32 =
            row.iter().map(|e| e.1).sum::<i32>() + ENTRY_GAP * (row.len() as i32 - 1);
        let mut x = (w as i32 - row_width) / 2;
        let y = 6 + LEGEND_ROW / 2 + r as i32 * LEGEND_ROW;
        for &(i, width) in row {
            let (key, text) = &entries[i];
            draw_key(area, *key, x, y)?;
            area.draw(&Text::new(
                text.clone(),
                (x + KEY_WIDTH + KEY_GAP, y),
                style.clone(),
            ))?;
            x += width + ENTRY_GAP;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_font_parses() {
        register_fonts();
        let f = font(20.0);
        let ((x0, _), (x1, _)) = f.font.layout_box("γ = 0.25").expect("font registered");
        assert!(x1 - x0 > 40, "{x0} {x1}");
        // Every character the pictures use has a glyph of its own.
        let face = ab_glyph::FontRef::try_from_slice(DEJAVU_SANS).unwrap();
        for c in "γ²·‖⊥–≤w~".chars() {
            assert_ne!(ab_glyph::Font::glyph_id(&face, c).0, 0, "{c}");
        }
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(fmt_sig(0.237266, 4), "0.2373");
        assert_eq!(fmt_sig(84963.2, 4), "84963");
        assert_eq!(fmt_sig(2.5e-5, 3), "2.5e-5");
        assert_eq!(fmt_sig(1.0, 4), "1");
        assert_eq!(tick(1e-17, 2.0), "0");
        assert_eq!(log_tick(1000.0), "1000");
        assert_eq!(log_tick(1e6), "10⁶");
        assert_eq!(log_tick(1e12), "10¹²");
        assert_eq!(log_tick(0.5), "0.5");
        assert_eq!(short_name("data/x.csv"), "x.csv");
        assert_eq!(
            short_name("<bundled: digits 3 vs 5>"),
            "<bundled: digits 3 vs 5>"
        );
    }
}
