//! Pictures of a model and of its training, as SVG, PNG or (for `trace`) GIF.
//!
//! Each kind is a figure computed from a model, a dataset or a replayed run
//! ([`curve`], [`margins`], [`boundary`], [`trace`]; a saved model's on the
//! data read for it in [`on_data`], a training run's in [`training`]) and
//! drawn with
//! `plotters` on any of its backends. [`save`] picks the file format from the
//! extension and writes the file atomically ([`crate::output::write_atomic`]),
//! so a failed run never leaves half a picture behind. Text is measured and
//! rasterised with an embedded DejaVu Sans ([`style`]): no system fonts are
//! needed.

pub mod boundary;
pub mod curve;
pub mod geometry;
pub mod margins;
pub mod on_data;
pub mod pixels;
pub mod style;
pub mod trace;
pub mod training;

use std::io::Write;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{Error, Result};
use pixels::Pixels;

/// The result of drawing on a backend `DB`.
pub type DrawResult<T, DB> =
    std::result::Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A picture that can be drawn on any plotters backend.
pub trait Figure {
    /// The size used when the caller does not ask for one, in pixels.
    fn default_size(&self) -> (u32, u32);

    /// Draws the whole picture on `area` (filled white first).
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<(), DB>;
}

/// A picture made of frames, for an animated GIF.
pub trait Animation {
    fn frame_count(&self) -> usize;
    /// The size of one frame when the caller does not ask for one.
    fn default_frame_size(&self) -> (u32, u32);
    /// Draws frame `i` on `area` (filled white first).
    fn draw_frame<DB: DrawingBackend>(
        &self,
        i: usize,
        area: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB>;
}

/// The picture formats, chosen by the output file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    Svg,
    Png,
    Gif,
}

impl ImageFormat {
    /// The format named by `path`'s extension (case-insensitive); SVG, the
    /// text one, for standard output (`-`).
    pub fn from_path(path: &Path) -> Result<Self> {
        if crate::output::is_stdout(path) {
            return Ok(ImageFormat::Svg);
        }
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(ImageFormat::Svg),
            Some("png") => Ok(ImageFormat::Png),
            Some("gif") => Ok(ImageFormat::Gif),
            _ => Err(Error::Usage(format!(
                "{}: the picture's format comes from its extension: use .svg, .png (or .gif for an animated trace)",
                path.display()
            ))),
        }
    }
}

/// The smallest and largest accepted picture sides, in pixels.
pub const MIN_SIDE: u32 = 100;
pub const MAX_SIDE: u32 = 8000;

/// Checks a requested size.
pub fn check_size(size: (u32, u32)) -> Result<()> {
    let ok = |v: u32| (MIN_SIDE..=MAX_SIDE).contains(&v);
    if ok(size.0) && ok(size.1) {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "a picture of {}x{} pixels was asked for; each side must be between {MIN_SIDE} and {MAX_SIDE}",
            size.0, size.1
        )))
    }
}

fn draw_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::io(
        path,
        "cannot draw the picture",
        std::io::Error::other(e.to_string()),
    )
}

/// Draws `figure` as an SVG document (`path` names it in errors).
pub fn render_svg<Fig: Figure>(figure: &Fig, size: (u32, u32), path: &Path) -> Result<String> {
    style::register_fonts();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        figure.draw(&root).map_err(|e| draw_error(path, e))?;
        root.present().map_err(|e| draw_error(path, e))?;
    }
    Ok(svg)
}

/// Draws on an RGB buffer of `size` (row-major, 3 bytes a pixel).
fn render_rgb<DrawFn>(size: (u32, u32), path: &Path, draw: DrawFn) -> Result<Vec<u8>>
where
    DrawFn: for<'a> FnOnce(&DrawingArea<Pixels<'a>, Shift>) -> DrawResult<(), Pixels<'a>>,
{
    style::register_fonts();
    let mut rgb = vec![255u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = Pixels::with_buffer(&mut rgb, size).into_drawing_area();
        draw(&root).map_err(|e| draw_error(path, e))?;
        root.present().map_err(|e| draw_error(path, e))?;
    }
    Ok(rgb)
}

/// Draws `figure` as RGB pixels.
pub fn render_pixels<Fig: Figure>(figure: &Fig, size: (u32, u32), path: &Path) -> Result<Vec<u8>> {
    render_rgb(size, path, |root| figure.draw(root))
}

/// Encodes RGB pixels as a PNG.
pub fn encode_png(rgb: &[u8], size: (u32, u32), out: &mut dyn Write) -> std::io::Result<()> {
    let mut encoder = png::Encoder::new(out, size.0, size.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::High);
    let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
    writer
        .write_image_data(rgb)
        .map_err(std::io::Error::other)?;
    writer.finish().map_err(std::io::Error::other)
}

/// Encodes RGB frames as an animated GIF that loops forever, showing each
/// frame for `delay_ms` (rounded to the format's hundredths of a second).
pub fn encode_gif(
    frames: &[Vec<u8>],
    size: (u32, u32),
    delay_ms: u32,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let (w, h) = (
        u16::try_from(size.0).map_err(std::io::Error::other)?,
        u16::try_from(size.1).map_err(std::io::Error::other)?,
    );
    let mut encoder = gif::Encoder::new(out, w, h, &[]).map_err(std::io::Error::other)?;
    encoder
        .set_repeat(gif::Repeat::Infinite)
        .map_err(std::io::Error::other)?;
    let delay = u16::try_from(delay_ms.div_ceil(10)).unwrap_or(u16::MAX);
    for rgb in frames {
        let (palette, indices) = palette_of(rgb);
        let mut frame = gif::Frame::from_palette_pixels(w, h, indices, palette, None);
        frame.delay = delay;
        encoder.write_frame(&frame).map_err(std::io::Error::other)?;
    }
    // Writes the trailer, reporting a failure instead of panicking in drop.
    encoder.into_inner().map_err(std::io::Error::other)?;
    Ok(())
}

/// A GIF palette for RGB pixels: the 256 most frequent colours exactly (so
/// the Okabe-Ito colours of marks and legend stay exact), every other
/// colour (antialiased edges) mapped to its nearest palette entry.
/// Returns the palette (r, g, b, ...) and one index per pixel.
pub fn palette_of(rgb: &[u8]) -> (Vec<u8>, Vec<u8>) {
    use std::collections::HashMap;
    let mut counts: HashMap<[u8; 3], u32> = HashMap::new();
    for p in rgb.chunks_exact(3) {
        *counts.entry([p[0], p[1], p[2]]).or_default() += 1;
    }
    let mut colours: Vec<([u8; 3], u32)> = counts.into_iter().collect();
    colours.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let palette: Vec<[u8; 3]> = colours.iter().take(256).map(|c| c.0).collect();
    let mut index: HashMap<[u8; 3], u8> = palette
        .iter()
        .enumerate()
        .map(|(i, c)| (*c, i as u8))
        .collect();
    let nearest = |c: [u8; 3]| {
        let d = |p: &[u8; 3]| {
            (0..3)
                .map(|k| (p[k] as i32 - c[k] as i32).pow(2))
                .sum::<i32>()
        };
        (0..palette.len())
            .min_by_key(|&i| d(&palette[i]))
            .unwrap_or(0) as u8
    };
    let indices = rgb
        .chunks_exact(3)
        .map(|p| {
            let c = [p[0], p[1], p[2]];
            *index.entry(c).or_insert_with(|| nearest(c))
        })
        .collect();
    (palette.concat(), indices)
}

/// Writes `figure` to `path` as SVG or PNG (by the extension), atomically.
/// `size` defaults to the figure's own.
pub fn save<Fig: Figure>(figure: &Fig, path: &Path, size: Option<(u32, u32)>) -> Result<()> {
    let size = size.unwrap_or_else(|| figure.default_size());
    check_size(size)?;
    match ImageFormat::from_path(path)? {
        ImageFormat::Svg => {
            let svg = render_svg(figure, size, path)?;
            crate::output::write_atomic(path, |w| w.write_all(svg.as_bytes()))
        }
        ImageFormat::Png => {
            let rgb = render_pixels(figure, size, path)?;
            crate::output::write_atomic(path, |w| encode_png(&rgb, size, w))
        }
        ImageFormat::Gif => Err(Error::Usage(format!(
            "{}: only `plot trace` makes animated GIFs; use .svg or .png for this picture",
            path.display()
        ))),
    }
}

/// Writes every frame of `animation` to `path` as an animated GIF, atomically.
pub fn save_gif<A: Animation>(
    animation: &A,
    path: &Path,
    size: Option<(u32, u32)>,
    delay_ms: u32,
) -> Result<()> {
    let size = size.unwrap_or_else(|| animation.default_frame_size());
    check_size(size)?;
    if size.0 > u16::MAX as u32 || size.1 > u16::MAX as u32 {
        return Err(Error::Usage(
            "a GIF's sides are at most 65535 pixels".into(),
        ));
    }
    let frames = (0..animation.frame_count())
        .map(|i| render_rgb(size, path, |root| animation.draw_frame(i, root)))
        .collect::<Result<Vec<_>>>()?;
    crate::output::write_atomic(path, |w| encode_gif(&frames, size, delay_ms, w))
}

/// Parses `WIDTHxHEIGHT` (e.g. `800x500`).
pub fn parse_size(s: &str) -> std::result::Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{s}` is not WIDTHxHEIGHT (for example 800x500)"))?;
    let side = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("`{s}` is not WIDTHxHEIGHT (for example 800x500)"))
    };
    Ok((side(w)?, side(h)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gif_palettes_keep_frequent_colours_exact() {
        let mut rgb = Vec::new();
        for i in 0..300u32 {
            // 300 distinct greys once each, and the class blue 1000 times.
            rgb.extend([(i % 256) as u8, (i / 256) as u8, 7]);
        }
        for _ in 0..1000 {
            rgb.extend([0x00, 0x72, 0xB2]);
        }
        let (palette, indices) = palette_of(&rgb);
        assert_eq!(palette.len(), 256 * 3);
        assert_eq!(&palette[..3], &[0x00, 0x72, 0xB2]);
        assert_eq!(indices.len(), 1300);
        assert!(indices[300..].iter().all(|&i| i == 0));
    }

    #[test]
    fn format_and_size_parsing() {
        assert_eq!(
            ImageFormat::from_path(Path::new("a/b.SVG")).unwrap(),
            ImageFormat::Svg
        );
        assert_eq!(
            ImageFormat::from_path(Path::new("b.png")).unwrap(),
            ImageFormat::Png
        );
        assert!(ImageFormat::from_path(Path::new("b.jpg")).is_err());
        assert!(ImageFormat::from_path(Path::new("b")).is_err());
        assert_eq!(parse_size("800x500"), Ok((800, 500)));
        assert!(parse_size("800").is_err());
        assert!(parse_size("ax5").is_err());
        assert!(check_size((50, 500)).is_err());
        assert!(check_size((800, 500)).is_ok());
    }
}
