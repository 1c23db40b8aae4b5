//! Self-contained SVG charts: axes with round ticks, lines, step lines and points, a
//! legend. Text uses the viewer's generic `sans-serif` font, so nothing is embedded and
//! nothing is fetched.

use std::fmt::Write;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Points joined in x order.
    Line,
    /// A step function: each value holds until the next point.
    Step,
    /// Dots only.
    Points,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub style: Style,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>, style: Style) -> Series {
        Series {
            name: name.into(),
            points,
            style,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
}

/// Colour-blind-safe palette (Okabe–Ito).
pub(crate) const COLORS: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
];

pub(crate) const W: f64 = 720.0;
pub(crate) const H: f64 = 400.0;
pub(crate) const LEFT: f64 = 70.0;
pub(crate) const RIGHT: f64 = 20.0;
pub(crate) const TOP: f64 = 36.0;
pub(crate) const BOTTOM: f64 = 56.0;

/// Round tick values covering `[lo, hi]`: steps of 1, 2 or 5 × 10ᵏ, about `n` of them.
pub fn nice_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || n == 0 {
        return Vec::new();
    }
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 0.5, lo + 0.5)
    };
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// The data range padded out to the round ticks around it.
pub(crate) fn axis(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64, Vec<f64>) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0, vec![0.0, 1.0]);
    }
    if from_zero && lo > 0.0 {
        lo = 0.0;
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let ticks = nice_ticks(lo, hi, 6);
    let step = if ticks.len() > 1 {
        ticks[1] - ticks[0]
    } else {
        hi - lo
    };
    let lo2 = (lo / step).floor() * step;
    let hi2 = (hi / step).ceil() * step;
    (lo2, hi2, nice_ticks(lo2, hi2, 6))
}

/// XML text escape.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(crate) fn label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e6).contains(&a) {
        format!("{v:.1e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The chart as one `<svg>` element (no XML prolog, so it can be inlined in HTML too).
pub fn render(chart: &Chart) -> String {
    let all = || chart.series.iter().flat_map(|s| s.points.iter());
    let (x0, x1, xt) = axis(all().map(|p| p.0), false);
    let (y0, y1, yt) = axis(all().map(|p| p.1), true);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
    let sy = |y: f64| TOP + ph - (y - y0) / (y1 - y0) * ph;
    let mut o = String::new();
    let _ = write!(
        o,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="sans-serif" font-size="12" role="img"><title>{t}</title><rect width="{W}" height="{H}" fill="#ffffff"/>"##,
        t = esc(&chart.title)
    );
    let _ = write!(
        o,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        W / 2.0,
        esc(&chart.title)
    );
    for &t in &xt {
        let x = sx(t);
        let _ = write!(
            o,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e0e0e0"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + ph,
            TOP + ph + 16.0,
            label(t)
        );
    }
    for &t in &yt {
        let y = sy(t);
        let _ = write!(
            o,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e0e0e0"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            y + 4.0,
            label(t)
        );
    }
    let _ = write!(
        o,
        r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#444444"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"##,
        LEFT + pw / 2.0,
        H - 14.0,
        esc(&chart.x_label),
        TOP + ph / 2.0,
        esc(&chart.y_label)
    );
    for (i, s) in chart.series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
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
                for (x, y) in &pts {
                    let _ = write!(
                        o,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="2.2" fill="{c}" fill-opacity="0.6"/>"#,
                        sx(*x),
                        sy(*y)
                    );
                }
            }
            Style::Line | Style::Step => {
                let mut d = String::new();
                for (k, (x, y)) in pts.iter().enumerate() {
                    if k > 0 && s.style == Style::Step {
                        let _ = write!(d, "{:.1},{:.1} ", sx(*x), sy(pts[k - 1].1));
                    }
                    let _ = write!(d, "{:.1},{:.1} ", sx(*x), sy(*y));
                }
                let _ = write!(
                    o,
                    r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="1.8"/>"#,
                    d.trim_end()
                );
            }
        }
        let ly = TOP + 14.0 + 16.0 * i as f64;
        let lx = LEFT + 10.0;
        let _ = write!(
            o,
            r#"<rect x="{lx}" y="{:.1}" width="12" height="4" fill="{c}"/><text x="{:.1}" y="{ly:.1}">{}</text>"#,
            ly - 5.0,
            lx + 16.0,
            esc(&s.name)
        );
    }
    o.push_str("</svg>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_steps() {
        // 0 … 10 in about 5 steps: raw 2 → step 2: 0, 2, 4, 6, 8, 10.
        assert_eq!(
            nice_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        // 0 … 0.9 in about 6: raw 0.15 → step 0.2: 0, 0.2, 0.4, 0.6, 0.8.
        let t = nice_ticks(0.0, 0.9, 6);
        assert_eq!(t.len(), 5);
        assert!((t[4] - 0.8).abs() < 1e-12);
        // 13 … 87 in about 4: raw 18.5 → step 20: 20, 40, 60, 80.
        assert_eq!(nice_ticks(13.0, 87.0, 4), vec![20.0, 40.0, 60.0, 80.0]);
    }

    #[test]
    fn renders_every_series_and_escapes_text() {
        let c = Chart {
            title: "TTFT <p50>".into(),
            x_label: "time (s)".into(),
            y_label: "ms".into(),
            series: vec![
                Series::new("a", vec![(0.0, 1.0), (1.0, 2.0), (2.0, 1.5)], Style::Line),
                Series::new("b", vec![(0.5, 3.0)], Style::Points),
                Series::new("c", vec![(0.0, 0.0), (1.0, 1.0)], Style::Step),
            ],
        };
        let s = render(&c);
        assert!(s.starts_with("<svg ") && s.ends_with("</svg>"));
        assert!(s.contains("TTFT &lt;p50&gt;"));
        assert_eq!(s.matches("<polyline").count(), 2);
        assert_eq!(s.matches("<circle").count(), 1);
        // A step of two points has three vertices: (0,0), (1,0), (1,1).
        let step = s.rsplit("<polyline points=\"").next().unwrap();
        let pts = step.split('"').next().unwrap();
        assert_eq!(pts.split(' ').count(), 3);
    }

    #[test]
    fn an_empty_chart_still_draws_axes() {
        let s = render(&Chart::default());
        assert!(s.contains("<rect x=\"70\""));
    }
}
