//! The swim-lane chart as a list of shapes, drawn once and rendered twice: to PNG through
//! `png`'s canvas, and to SVG for the HTML viewer (where each request bar carries a hover
//! title). Top panel: one band of rows per session slot, a bar per request (the part
//! before the first token darker than the rest). Bottom panel: requests in flight and
//! sessions idle between requests over time.

use std::fmt::Write;

use crate::png::{Anchor, Canvas, hex};
use crate::svg::{esc, label, nice_ticks};
use crate::swim_lane::{SwimLane, first_token_ns};

const W: f64 = 1200.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 74.0;
const CONC_H: f64 = 170.0;
const GAP: f64 = 34.0;
const BOTTOM: f64 = 84.0;
const BAR: f64 = 0.7;

/// `tab20`-like lane colours, cycled: neighbouring lanes stay distinguishable.
const LANE_COLORS: [&str; 20] = [
    "#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896",
    "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7",
    "#bcbd22", "#dbdb8d", "#17becf", "#9edae5",
];
const ACTIVE: &str = "#2196f3";
const IDLE: &str = "#999999";
const RAMP: &str = "#ff9800";
const END: &str = "#d62728";
const TARGET: &str = "#2e7d32";

/// `c` moved toward `to` by `t` (0 keeps `c`): stands in for transparency over white or
/// a darker shade, so the PNG needs no alpha compositing of overlapping fills.
fn mix(c: &str, to: [u8; 3], t: f64) -> String {
    let c = hex(c);
    let m = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * t).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        m(c[0], to[0]),
        m(c[1], to[1]),
        m(c[2], to[2])
    )
}
const WHITE: [u8; 3] = [255, 255, 255];
const BLACK: [u8; 3] = [0, 0, 0];

#[derive(Clone, Debug)]
pub(crate) enum Shape {
    Rect {
        x: f64,
        y: f64,
        w: f64,
        h: f64,
        fill: String,
    },
    Line {
        pts: Vec<(f64, f64)>,
        width: f64,
        color: String,
        dashed: bool,
    },
    Text {
        x: f64,
        y: f64,
        size: f64,
        s: String,
        anchor: Anchor,
        rotate: bool,
    },
    /// Shapes that share a hover title (one request's bar).
    Tip { title: String, shapes: Vec<Shape> },
}

#[derive(Clone, Debug)]
pub(crate) struct Scene {
    pub w: f64,
    pub h: f64,
    pub shapes: Vec<Shape>,
}

fn text(x: f64, y: f64, size: f64, s: impl Into<String>, anchor: Anchor) -> Shape {
    Shape::Text {
        x,
        y,
        size,
        s: s.into(),
        anchor,
        rotate: false,
    }
}

fn line(a: (f64, f64), b: (f64, f64), width: f64, color: &str, dashed: bool) -> Shape {
    Shape::Line {
        pts: vec![a, b],
        width,
        color: color.into(),
        dashed,
    }
}

fn rect(x: f64, y: f64, w: f64, h: f64, fill: impl Into<String>) -> Shape {
    Shape::Rect {
        x,
        y,
        w,
        h,
        fill: fill.into(),
    }
}

fn opt(v: Option<f64>, digits: usize, unit: &str) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{v:.digits$}{unit}"))
}

/// Lays the chart out.
pub(crate) fn scene(lane: &SwimLane) -> Scene {
    let pw = W - LEFT - RIGHT;
    let row_h = (1400.0 / lane.total_rows as f64).min(18.0);
    let swim_h = (lane.total_rows as f64 * row_h).max(160.0);
    let row_h = swim_h / lane.total_rows as f64;
    let conc_top = TOP + swim_h + GAP;
    let h = conc_top + CONC_H + BOTTOM;
    let s = |ns: i64| ns as f64 / 1e9;
    let x_max = (s(lane.t_max_ns) * 1.01).max(1.0);
    let sx = |t: f64| LEFT + t.clamp(0.0, x_max) / x_max * pw;
    let row_y = |row: f64| TOP + row * row_h;
    let mut out: Vec<Shape> = Vec::new();

    out.push(text(
        W / 2.0,
        24.0,
        15.0,
        format!(
            "{} \u{2014} {} across {} slots",
            lane.title,
            lane.counts(),
            lane.slots
        ),
        Anchor::Middle,
    ));
    let mut legend = vec![
        (LANE_COLORS[0].to_string(), "Request (decode)".to_string()),
        (
            mix(LANE_COLORS[0], BLACK, 0.45),
            "Request before first token".into(),
        ),
    ];
    if lane.subagent_sessions > 0 {
        legend.push((mix(LANE_COLORS[0], WHITE, 0.45), "Subagent request".into()));
    }
    legend.push((
        mix(LANE_COLORS[0], WHITE, 0.75),
        "Wait between turns".into(),
    ));
    legend.push(("#000000".into(), "New session in slot".into()));
    legend_row(&mut out, 50.0, &legend);

    // Frames, time grid and axes.
    let ticks = nice_ticks(0.0, x_max, 8);
    for (top, height) in [(TOP, swim_h), (conc_top, CONC_H)] {
        for &t in &ticks {
            out.push(line(
                (sx(t), top),
                (sx(t), top + height),
                0.6,
                "#e6e6e6",
                false,
            ));
        }
    }
    for (slot, &o) in lane.slot_offset.iter().enumerate() {
        for (a, b) in lane.empty_slot_spans(slot) {
            let y = row_y(o as f64 + (1.0 - BAR) / 2.0);
            let hh = (lane.slot_rows[slot] as f64 - (1.0 - BAR)) * row_h;
            out.push(rect(sx(s(a)), y, sx(s(b)) - sx(s(a)), hh, "#f0f0f0"));
        }
    }
    for (ci, g) in lane.groups.iter().enumerate() {
        let color = LANE_COLORS[ci % LANE_COLORS.len()];
        let base = lane.slot_offset[g.slot];
        for m in &g.members {
            let sub = m.is_sub;
            let wait = mix(color, WHITE, if sub { 0.85 } else { 0.75 });
            let rows = m.rows as f64;
            for (a, b) in lane.waits(m.session) {
                let y = row_y((base + m.row0) as f64 + (1.0 - BAR) / 2.0);
                let hh = (rows - (1.0 - BAR)) * row_h;
                out.push(rect(sx(s(a)), y, sx(s(b)) - sx(s(a)), hh, wait.clone()));
            }
            let decode = if sub {
                mix(color, WHITE, 0.45)
            } else {
                color.to_string()
            };
            let prefill = mix(&decode, BLACK, 0.45);
            let session = &lane.sessions[m.session];
            for (r, &d) in session.requests.iter().zip(&m.depths) {
                let y = row_y((base + m.row0 + d) as f64 + (1.0 - BAR) / 2.0);
                let (x0, xf, x1) = (sx(s(r.start_ns)), sx(s(first_token_ns(r))), sx(s(r.end_ns)));
                let title = format!(
                    "request {}\nsession {} turn {}\nstart {:.3} s\nTTFT {}\nlatency {}\nISL {} / OSL {}",
                    r.request_id.as_deref().unwrap_or("?"),
                    session.id,
                    r.turn_index,
                    s(r.start_ns),
                    opt(r.ttft_ms, 1, " ms"),
                    opt(
                        r.latency_ms.or(Some((r.end_ns - r.start_ns) as f64 / 1e6)),
                        1,
                        " ms"
                    ),
                    opt(r.isl, 0, ""),
                    opt(r.osl, 0, ""),
                );
                out.push(Shape::Tip {
                    title,
                    shapes: vec![
                        rect(x0, y, xf - x0, BAR * row_h, prefill.clone()),
                        rect(xf, y, x1 - xf, BAR * row_h, decode.clone()),
                    ],
                });
            }
        }
    }
    for (slot, t) in lane.reuse_marks() {
        let o = lane.slot_offset[slot] as f64;
        let (a, b) = (
            row_y(o + (1.0 - BAR) / 2.0),
            row_y(o + lane.slot_rows[slot] as f64 - (1.0 - BAR) / 2.0),
        );
        out.push(line((sx(s(t)), a), (sx(s(t)), b), 1.5, "#000000", false));
    }
    if lane.total_rows > lane.slots {
        for &o in lane.slot_offset.iter().skip(1) {
            let y = row_y(o as f64);
            out.push(line((LEFT, y), (LEFT + pw, y), 0.5, "#bbbbbb", false));
        }
    }
    let stride = match lane.slots {
        0..=30 => 1,
        31..=60 => 2,
        _ => 5,
    };
    for slot in (0..lane.slots).step_by(stride) {
        let c = lane.slot_offset[slot] as f64 + lane.slot_rows[slot] as f64 / 2.0;
        out.push(text(
            LEFT - 6.0,
            row_y(c) + 4.0,
            11.0,
            slot.to_string(),
            Anchor::End,
        ));
    }
    out.push(Shape::Text {
        x: 18.0,
        y: TOP + swim_h / 2.0,
        size: 12.0,
        s: "Session slot".into(),
        anchor: Anchor::Middle,
        rotate: true,
    });

    // Concurrency panel.
    let y_max = [
        lane.peak_active() as f64 * 1.15,
        lane.slots as f64 * 1.15,
        lane.target.unwrap_or(0) as f64 * 1.15,
        1.0,
    ]
    .into_iter()
    .fold(0.0, f64::max);
    let sy = |v: f64| conc_top + CONC_H - v.clamp(0.0, y_max) / y_max * CONC_H;
    for t in nice_ticks(0.0, y_max, 4) {
        out.push(line(
            (LEFT, sy(t)),
            (LEFT + pw, sy(t)),
            0.6,
            "#e6e6e6",
            false,
        ));
        out.push(text(LEFT - 6.0, sy(t) + 4.0, 11.0, label(t), Anchor::End));
    }
    let end_s = s(lane.t_max_ns);
    let steps = |curve: &[(i64, i64)]| -> Vec<(f64, f64, f64)> {
        curve
            .iter()
            .enumerate()
            .map(|(i, &(t, v))| {
                let next = curve.get(i + 1).map_or(end_s, |p| s(p.0));
                (s(t), next, v as f64)
            })
            .collect()
    };
    let active = steps(&lane.active);
    for &(a, b, v) in &active {
        if v > 0.0 {
            out.push(rect(
                sx(a),
                sy(v),
                sx(b) - sx(a),
                sy(0.0) - sy(v),
                mix(ACTIVE, WHITE, 0.7),
            ));
        }
    }
    out.push(step_line(&active, &sx, &sy, ACTIVE));
    out.push(step_line(&steps(&lane.idle), &sx, &sy, IDLE));
    let hline = |v: f64, color: &str, dashed: bool| {
        line((LEFT, sy(v)), (LEFT + pw, sy(v)), 1.2, color, dashed)
    };
    out.push(hline(lane.slots as f64, END, true));
    let mut legend = vec![
        (
            ACTIVE.to_string(),
            format!("Active requests (peak {})", lane.peak_active()),
        ),
        (IDLE.into(), "Idle sessions (between turns)".into()),
        (END.into(), format!("Slot count ({})", lane.slots)),
    ];
    if let Some(c) = lane.target {
        out.push(hline(c as f64, TARGET, true));
        legend.push((TARGET.into(), format!("Target concurrency ({c})")));
    }
    for (v, color, name) in [
        (lane.marks.ramp_s, RAMP, "Ramp done"),
        (lane.marks.bench_end_s, END, "Benchmark end"),
    ] {
        let Some(v) = v.filter(|v| v.is_finite()) else {
            continue;
        };
        // Past the axis (records cut from a longer run) the line is left out, not the
        // legend entry: the value is still stated.
        for (top, height) in [(TOP, swim_h), (conc_top, CONC_H)] {
            if (0.0..=x_max).contains(&v) {
                out.push(line((sx(v), top), (sx(v), top + height), 1.5, color, true));
            }
        }
        // Whole seconds hide a short run's marks: one decimal below 10 s.
        let v_txt = if v < 10.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.0}")
        };
        legend.push((color.into(), format!("{name} ({v_txt}s)")));
    }
    for &t in &ticks {
        out.push(text(
            sx(t),
            conc_top + CONC_H + 16.0,
            11.0,
            label(t),
            Anchor::Middle,
        ));
    }
    out.push(text(
        LEFT + pw / 2.0,
        conc_top + CONC_H + 36.0,
        12.0,
        "Time (seconds)",
        Anchor::Middle,
    ));
    out.push(Shape::Text {
        x: 18.0,
        y: conc_top + CONC_H / 2.0,
        size: 12.0,
        s: "Sessions".into(),
        anchor: Anchor::Middle,
        rotate: true,
    });
    legend_row(&mut out, conc_top + CONC_H + 62.0, &legend);
    for (top, height) in [(TOP, swim_h), (conc_top, CONC_H)] {
        let (l, r, b) = (LEFT, LEFT + pw, top + height);
        out.push(Shape::Line {
            pts: vec![(l, top), (r, top), (r, b), (l, b), (l, top)],
            width: 0.8,
            color: "#444444".into(),
            dashed: false,
        });
    }
    Scene {
        w: W,
        h,
        shapes: out,
    }
}

fn step_line(
    steps: &[(f64, f64, f64)],
    sx: &dyn Fn(f64) -> f64,
    sy: &dyn Fn(f64) -> f64,
    color: &str,
) -> Shape {
    let mut pts = Vec::with_capacity(steps.len() * 2);
    for &(a, b, v) in steps {
        pts.push((sx(a), sy(v)));
        pts.push((sx(b), sy(v)));
    }
    Shape::Line {
        pts,
        width: 1.0,
        color: color.into(),
        dashed: false,
    }
}

/// A centred row of colour swatches with their names (text width estimated).
fn legend_row(out: &mut Vec<Shape>, y: f64, items: &[(String, String)]) {
    let widths: Vec<f64> = items
        .iter()
        .map(|(_, n)| 22.0 + n.chars().count() as f64 * 6.2 + 18.0)
        .collect();
    let mut x = (W - widths.iter().sum::<f64>()) / 2.0;
    for ((color, name), w) in items.iter().zip(widths) {
        out.push(rect(x, y - 8.0, 16.0, 8.0, color.clone()));
        out.push(text(x + 22.0, y, 11.0, name.clone(), Anchor::Start));
        x += w;
    }
}

/// A dashed polyline as its dash pieces (6 on, 4 off, in chart units).
fn dashes(pts: &[(f64, f64)]) -> Vec<((f64, f64), (f64, f64))> {
    let mut out = Vec::new();
    for w in pts.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        let len = ((x1 - x0).powi(2) + (y1 - y0).powi(2)).sqrt();
        let mut at = 0.0;
        while at < len {
            let end = (at + 6.0).min(len);
            let p = |d: f64| (x0 + (x1 - x0) * d / len, y0 + (y1 - y0) * d / len);
            out.push((p(at), p(end)));
            at += 10.0;
        }
    }
    out
}

fn paint(c: &mut Canvas, shape: &Shape) {
    match shape {
        Shape::Rect { x, y, w, h, fill } => {
            // At least a pixel wide: a short request stays visible on a long run.
            c.fill_rect(*x, *y, w.max(0.5), *h, hex(fill));
        }
        Shape::Line {
            pts,
            width,
            color,
            dashed,
        } => {
            let col = hex(color);
            if *dashed {
                for (a, b) in dashes(pts) {
                    c.line(a, b, *width, col, 1.0);
                }
            } else {
                for w in pts.windows(2) {
                    c.line(w[0], w[1], *width, col, 1.0);
                }
            }
        }
        Shape::Text {
            x,
            y,
            size,
            s,
            anchor,
            rotate,
        } => c.text(s, *x, *y, *size, *anchor, *rotate),
        Shape::Tip { shapes, .. } => shapes.iter().for_each(|s| paint(c, s)),
    }
}

/// The chart as a PNG (8-bit RGB, 2 pixels per chart unit).
pub(crate) fn to_png(scene: &Scene) -> Vec<u8> {
    let mut c = Canvas::sized(scene.w, scene.h);
    for s in &scene.shapes {
        paint(&mut c, s);
    }
    c.encode()
}

fn svg_shape(out: &mut String, shape: &Shape) {
    match shape {
        Shape::Rect { x, y, w, h, fill } => {
            let _ = write!(
                out,
                r#"<rect x="{x:.2}" y="{y:.2}" width="{:.2}" height="{h:.2}" fill="{fill}"/>"#,
                w.max(0.3)
            );
        }
        Shape::Line {
            pts,
            width,
            color,
            dashed,
        } => {
            let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.2},{y:.2}")).collect();
            let dash = if *dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = write!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="{width}"{dash}/>"#,
                p.join(" ")
            );
        }
        Shape::Text {
            x,
            y,
            size,
            s,
            anchor,
            rotate,
        } => {
            let a = match anchor {
                Anchor::Start => "start",
                Anchor::Middle => "middle",
                Anchor::End => "end",
            };
            let rot = if *rotate {
                format!(r#" transform="rotate(-90 {x:.2} {y:.2})""#)
            } else {
                String::new()
            };
            let _ = write!(
                out,
                r##"<text x="{x:.2}" y="{y:.2}" font-size="{size}" text-anchor="{a}" fill="#222"{rot}>{}</text>"##,
                esc(s)
            );
        }
        Shape::Tip { title, shapes } => {
            let _ = write!(out, r#"<g class="req"><title>{}</title>"#, esc(title));
            shapes.iter().for_each(|s| svg_shape(out, s));
            out.push_str("</g>");
        }
    }
}

/// The chart as SVG (no fonts embedded, nothing fetched).
pub(crate) fn to_svg(scene: &Scene) -> String {
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">"#,
        w = scene.w,
        h = scene.h
    );
    out.push_str(r#"<rect width="100%" height="100%" fill="white"/>"#);
    for s in &scene.shapes {
        svg_shape(&mut out, s);
    }
    out.push_str("</svg>");
    out
}

/// The viewer page: the SVG inline, one hover title per request bar, no script, nothing
/// fetched.
pub(crate) fn to_html(lane: &SwimLane, scene: &Scene) -> String {
    format!(
        concat!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
            "<title>Swim lanes: {t}</title><style>",
            "body{{font-family:sans-serif;margin:16px;color:#222}}",
            ".wrap{{overflow:auto;border:1px solid #ddd}}",
            "g.req:hover rect{{stroke:#000;stroke-width:0.8}}</style></head><body>",
            "<h1>Swim lanes: {t}</h1>",
            "<p>{counts} across {slots} slots; {n} requests; peak {peak} in flight; ",
            "hover a request bar for its id, turn, start, TTFT, latency and ISL/OSL.</p>",
            "<div class=\"wrap\">{svg}</div></body></html>\n"
        ),
        t = esc(&lane.title),
        counts = esc(&lane.counts()),
        slots = lane.slots,
        n = lane
            .sessions
            .iter()
            .map(|s| s.requests.len())
            .sum::<usize>(),
        peak = lane.peak_active(),
        svg = to_svg(scene),
    )
}

/// The swim-lane PNG of a run.
pub fn png(lane: &SwimLane) -> Vec<u8> {
    to_png(&scene(lane))
}

/// The swim-lane viewer page of a run (self-contained HTML).
pub fn html(lane: &SwimLane) -> String {
    to_html(lane, &scene(lane))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swim_lane::{Marks, Request, build};

    fn lane() -> SwimLane {
        let req = |s: &str, id: &str, a: i64, b: i64| Request {
            session: s.into(),
            request_id: Some(id.into()),
            start_ns: a,
            end_ns: b,
            ttft_ms: Some(100.0),
            ..Request::default()
        };
        build(
            "r<1>",
            vec![
                req("s1", "</script><b>", 0, 1_000_000_000),
                req("s2", "q2", 500_000_000, 2_000_000_000),
            ],
            Some(3),
            Marks {
                ramp_s: Some(0.5),
                bench_end_s: Some(2.0),
            },
        )
        .unwrap()
    }

    #[test]
    fn each_request_is_one_titled_bar_and_user_text_is_escaped() {
        let l = lane();
        let sc = scene(&l);
        let html = to_html(&l, &sc);
        assert_eq!(html.matches("<g class=\"req\">").count(), 2);
        assert!(html.contains("request &lt;/script&gt;&lt;b&gt;"));
        assert!(!html.contains("</script><b>"));
        assert!(html.contains("Swim lanes: r&lt;1&gt;"));
        assert!(html.contains("Target concurrency (3)"));
        assert!(html.contains("Ramp done (0.5s)") && html.contains("Benchmark end (2.0s)"));
        // The prefill part of the first bar: 100 ms of a 2.02 s axis over 1100 units.
        let Shape::Tip { shapes, .. } = sc
            .shapes
            .iter()
            .find(|s| matches!(s, Shape::Tip { .. }))
            .unwrap()
        else {
            unreachable!()
        };
        let Shape::Rect { w, .. } = &shapes[0] else {
            unreachable!()
        };
        assert!((w - 0.1 / 2.02 * 1100.0).abs() < 1e-9, "{w}");
    }

    #[test]
    fn png_has_the_scene_size() {
        let png = to_png(&scene(&lane()));
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
        assert_eq!(w, 2400);
    }

    #[test]
    fn dashes_cut_a_line_into_six_unit_pieces() {
        let d = dashes(&[(0.0, 0.0), (15.0, 0.0)]);
        assert_eq!(
            d,
            vec![((0.0, 0.0), (6.0, 0.0)), ((10.0, 0.0), (15.0, 0.0))]
        );
    }
}
