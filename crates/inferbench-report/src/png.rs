//! The same charts as `svg`, rasterized to PNG with no system library: the layout is
//! `svg`'s (same axes, ticks, colours and legend), drawn at `SCALE`× with anti-aliased
//! lines, dots and text. Text uses DejaVu Sans, embedded from `fonts/` (Bitstream Vera
//! licence, `fonts/DejaVuSans-LICENSE.txt`), rasterized by `ab_glyph`; the image is
//! deflated by `miniz_oxide`. The chunks and their CRCs are written here.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};

use crate::svg::{BOTTOM, COLORS, Chart, H, LEFT, RIGHT, Style, TOP, W, axis, label};

/// Pixels per SVG unit: a 720×400 chart becomes a 1440×800 image.
pub const SCALE: f64 = 2.0;
/// The image's size in pixels.
pub const WIDTH: u32 = (W * SCALE) as u32;
pub const HEIGHT: u32 = (H * SCALE) as u32;

const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

pub(crate) type Rgb = [u8; 3];

pub(crate) fn hex(c: &str) -> Rgb {
    let v = u32::from_str_radix(c.trim_start_matches('#'), 16).unwrap_or(0);
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// An RGB pixel buffer in SVG units (every coordinate is multiplied by `SCALE`).
pub(crate) struct Canvas {
    w: usize,
    h: usize,
    px: Vec<Rgb>,
    font: Option<FontRef<'static>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Anchor {
    Start,
    Middle,
    End,
}

impl Canvas {
    fn new() -> Canvas {
        Canvas::sized(W, H)
    }

    /// A white canvas of `w`×`h` SVG units (other charts than the standard 720×400).
    pub(crate) fn sized(w: f64, h: f64) -> Canvas {
        let (w, h) = ((w * SCALE).ceil() as usize, (h * SCALE).ceil() as usize);
        Canvas {
            w,
            h,
            px: vec![[255, 255, 255]; w * h],
            font: FontRef::try_from_slice(FONT).ok(),
        }
    }

    pub(crate) fn blend(&mut self, x: i64, y: i64, c: Rgb, a: f32) {
        if x < 0 || y < 0 || x as usize >= self.w || y as usize >= self.h || a <= 0.0 {
            return;
        }
        let a = a.min(1.0);
        let p = &mut self.px[y as usize * self.w + x as usize];
        for (v, c) in p.iter_mut().zip(c) {
            *v = (*v as f32 * (1.0 - a) + c as f32 * a).round() as u8;
        }
    }

    /// A segment of width `wd` (SVG units): each pixel's coverage from its centre's
    /// distance to the segment, so lines are anti-aliased and joins are round.
    pub(crate) fn line(
        &mut self,
        (x0, y0): (f64, f64),
        (x1, y1): (f64, f64),
        wd: f64,
        c: Rgb,
        op: f32,
    ) {
        let (x0, y0, x1, y1) = (x0 * SCALE, y0 * SCALE, x1 * SCALE, y1 * SCALE);
        let r = wd * SCALE / 2.0;
        let (dx, dy) = (x1 - x0, y1 - y0);
        let len2 = dx * dx + dy * dy;
        let (lx, hx) = (
            (x0.min(x1) - r - 1.0).floor(),
            (x0.max(x1) + r + 1.0).ceil(),
        );
        let (ly, hy) = (
            (y0.min(y1) - r - 1.0).floor(),
            (y0.max(y1) + r + 1.0).ceil(),
        );
        let (lx, hx) = (lx.max(0.0) as i64, hx.min(self.w as f64) as i64);
        let (ly, hy) = (ly.max(0.0) as i64, hy.min(self.h as f64) as i64);
        for y in ly..hy {
            for x in lx..hx {
                let (px, py) = (x as f64 + 0.5, y as f64 + 0.5);
                let t = if len2 > 0.0 {
                    (((px - x0) * dx + (py - y0) * dy) / len2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let (qx, qy) = (x0 + t * dx - px, y0 + t * dy - py);
                let d = (qx * qx + qy * qy).sqrt();
                let cov = (r + 0.5 - d).clamp(0.0, 1.0) as f32;
                self.blend(x, y, c, cov * op);
            }
        }
    }

    pub(crate) fn dot(&mut self, x: f64, y: f64, r: f64, c: Rgb, op: f32) {
        self.line((x, y), (x, y), 2.0 * r, c, op);
    }

    pub(crate) fn fill_rect(&mut self, x: f64, y: f64, w: f64, h: f64, c: Rgb) {
        let (x0, y0) = ((x * SCALE).round() as i64, (y * SCALE).round() as i64);
        let (x1, y1) = (
            ((x + w) * SCALE).round() as i64,
            ((y + h) * SCALE).round() as i64,
        );
        for yy in y0..y1 {
            for xx in x0..x1 {
                self.blend(xx, yy, c, 1.0);
            }
        }
    }

    /// Text with its baseline at `y`; `rotate` turns it a quarter anticlockwise about
    /// (x, y), as the y-axis label's `rotate(-90)`.
    pub(crate) fn text(
        &mut self,
        s: &str,
        x: f64,
        y: f64,
        size: f64,
        anchor: Anchor,
        rotate: bool,
    ) {
        let Some(font) = self.font.clone() else {
            return;
        };
        let px = (size * SCALE) as f32;
        let sf = font.as_scaled(PxScale::from(px));
        let mut width = 0.0f32;
        let mut prev = None;
        let mut glyphs = Vec::new();
        for ch in s.chars() {
            let g = font.glyph_id(ch);
            if let Some(p) = prev {
                width += sf.kern(p, g);
            }
            glyphs.push((g, width));
            width += sf.h_advance(g);
            prev = Some(g);
        }
        let shift = match anchor {
            Anchor::Start => 0.0,
            Anchor::Middle => width / 2.0,
            Anchor::End => width,
        };
        let (ox, oy) = ((x * SCALE) as f32, (y * SCALE) as f32);
        let ink = [0x22, 0x22, 0x22];
        for (g, at) in glyphs {
            // Laid out along +x from (0, 0) on the baseline, then placed.
            let glyph = g.with_scale_and_position(px, point(at - shift, 0.0));
            let Some(og) = font.outline_glyph(glyph) else {
                continue;
            };
            let b = og.px_bounds();
            let mut hits = Vec::new();
            og.draw(|gx, gy, cov| {
                hits.push((b.min.x + gx as f32, b.min.y + gy as f32, cov));
            });
            for (gx, gy, cov) in hits {
                let (tx, ty) = if rotate { (gy, -gx) } else { (gx, gy) };
                self.blend((ox + tx) as i64, (oy + ty) as i64, ink, cov);
            }
        }
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut raw = Vec::with_capacity(self.h * (1 + 3 * self.w));
        for row in self.px.chunks(self.w) {
            raw.push(0); // filter: none
            for p in row {
                raw.extend_from_slice(p);
            }
        }
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&(self.w as u32).to_be_bytes());
        ihdr.extend_from_slice(&(self.h as u32).to_be_bytes());
        ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // 8-bit RGB, deflate, no interlace
        chunk(&mut out, b"IHDR", &ihdr);
        chunk(
            &mut out,
            b"IDAT",
            &miniz_oxide::deflate::compress_to_vec_zlib(&raw, 6),
        );
        chunk(&mut out, b"IEND", &[]);
        out
    }
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// CRC-32 (ISO 3309, polynomial 0xEDB88320 reflected), as PNG's chunks need.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// The chart as a PNG file (`WIDTH`×`HEIGHT`, 8-bit RGB).
pub fn render_png(chart: &Chart) -> Vec<u8> {
    let all = || chart.series.iter().flat_map(|s| s.points.iter());
    let (x0, x1, xt) = axis(all().map(|p| p.0), false);
    let (y0, y1, yt) = axis(all().map(|p| p.1), true);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| TOP + ph - (y - y0) / (y1 - y0) * ph;
    let mut c = Canvas::new();
    let grid = [0xe0, 0xe0, 0xe0];
    c.text(&chart.title, W / 2.0, 22.0, 15.0, Anchor::Middle, false);
    for &t in &xt {
        let x = sx(t);
        c.line((x, TOP), (x, TOP + ph), 1.0, grid, 1.0);
        c.text(&label(t), x, TOP + ph + 16.0, 12.0, Anchor::Middle, false);
    }
    for &t in &yt {
        let y = sy(t);
        c.line((LEFT, y), (LEFT + pw, y), 1.0, grid, 1.0);
        c.text(&label(t), LEFT - 6.0, y + 4.0, 12.0, Anchor::End, false);
    }
    let frame = [0x44, 0x44, 0x44];
    for (a, b) in [
        ((LEFT, TOP), (LEFT + pw, TOP)),
        ((LEFT + pw, TOP), (LEFT + pw, TOP + ph)),
        ((LEFT + pw, TOP + ph), (LEFT, TOP + ph)),
        ((LEFT, TOP + ph), (LEFT, TOP)),
    ] {
        c.line(a, b, 1.0, frame, 1.0);
    }
    c.text(
        &chart.x_label,
        LEFT + pw / 2.0,
        H - 14.0,
        12.0,
        Anchor::Middle,
        false,
    );
    c.text(
        &chart.y_label,
        16.0,
        TOP + ph / 2.0,
        12.0,
        Anchor::Middle,
        true,
    );
    for (i, s) in chart.series.iter().enumerate() {
        let col = hex(COLORS[i % COLORS.len()]);
        let mut pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        if s.style != Style::Points {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        match s.style {
            Style::Points => {
                for &(x, y) in &pts {
                    c.dot(sx(x), sy(y), 2.2, col, 0.6);
                }
            }
            Style::Line | Style::Step => {
                let mut v: Vec<(f64, f64)> = Vec::new();
                for (k, &(x, y)) in pts.iter().enumerate() {
                    if k > 0 && s.style == Style::Step {
                        v.push((sx(x), sy(pts[k - 1].1)));
                    }
                    v.push((sx(x), sy(y)));
                }
                for w in v.windows(2) {
                    c.line(w[0], w[1], 1.8, col, 1.0);
                }
            }
        }
        let ly = TOP + 14.0 + 16.0 * i as f64;
        let lx = LEFT + 10.0;
        c.fill_rect(lx, ly - 5.0, 12.0, 4.0, col);
        c.text(&s.name, lx + 16.0, ly, 12.0, Anchor::Start, false);
    }
    c.encode()
}

#[cfg(test)]
#[path = "png_tests.rs"]
mod tests;
