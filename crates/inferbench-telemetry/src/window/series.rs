//! Counters and histograms over the bracket: exact reset-aware increases (with the
//! `_created` restart rule) and Prometheus's extrapolated `increase`/`rate` beside them.

use super::collect::Track;
use super::interim::{exact_increase, histogram_quantile};
use super::{CounterStats, HistogramStats, Window};
use crate::promql::{self, Point};
use crate::quantile::Bucket;

/// The quantiles every histogram gets.
pub(crate) const PHIS: [f64; 4] = [0.5, 0.9, 0.95, 0.99];

/// The usable-scrape indices `a..=b` of the bracket.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    pub a: usize,
    pub b: usize,
}

impl Span {
    fn points<'t>(&self, track: &'t Track) -> impl Iterator<Item = (usize, f64)> + 't {
        let (a, b) = (self.a, self.b);
        track
            .iter()
            .copied()
            .filter(move |&(i, v)| i >= a && i <= b && v.is_finite())
    }
}

fn value_at(track: &Track, at: usize) -> Option<f64> {
    track
        .binary_search_by_key(&at, |x| x.0)
        .ok()
        .map(|i| track[i].1)
}

/// Whether any `_created` track changed value between scrapes `p` and `q` (both present).
fn created_between(created: &[&Track], p: usize, q: usize) -> bool {
    created
        .iter()
        .any(|c| match (value_at(c, p), value_at(c, q)) {
            (Some(x), Some(y)) => x != y,
            _ => false,
        })
}

/// A counter over the bracket. `created` are its `_created` tracks: the OpenMetrics sample of
/// the series itself and prometheus_client 0.0.4's separate `<name minus _total>_created`
/// gauge family (same labels). **The restart rule:** a step where a `_created` value changed is
/// a restart even when the value did not drop, so it counts as a reset and contributes the
/// post-restart value, exactly as a drop does (the counter restarted from zero); the steps
/// between restarts use `promql::exact_increase`.
pub(crate) fn counter_stats(
    t: impl Fn(usize) -> u64,
    values: &Track,
    created: &[&Track],
    span: Span,
    bracket_s: f64,
    w: Window,
) -> CounterStats {
    let pts: Vec<(usize, f64)> = span.points(values).collect();
    let as_point = |&(i, v): &(usize, f64)| Point {
        t_ns: t(i) as i64,
        v,
    };
    let mut out = CounterStats::default();
    let mut seg = 0;
    let close = |from: usize, to: usize, out: &mut CounterStats| {
        let p: Vec<Point> = pts[from..to].iter().map(as_point).collect();
        let e = exact_increase(&p);
        out.increase += e.increase;
        out.resets += e.resets;
    };
    for i in 1..pts.len() {
        if created_between(created, pts[i - 1].0, pts[i].0) {
            close(seg, i, &mut out);
            out.increase += pts[i].1;
            out.resets += 1;
            out.created_changed = true;
            seg = i;
        }
    }
    close(seg, pts.len(), &mut out);
    if bracket_s > 0.0 {
        out.rate_per_s = out.increase / bracket_s;
    }
    let all: Vec<Point> = values
        .iter()
        .filter(|x| x.1.is_finite())
        .map(as_point)
        .collect();
    out.prom_increase = promql::increase(&all, w.start_ns as i64, w.end_ns as i64);
    out.prom_rate_per_s = promql::rate(&all, w.start_ns as i64, w.end_ns as i64);
    out
}

/// The window increase of one histogram track given the histogram's restart steps
/// (`restarts`: scrape indices where `_count` dropped or `_created` changed). A step over a
/// restart contributes the post-restart value; otherwise the difference. Returns the increase
/// and whether the track dropped at a step with no restart (an inconsistent histogram: such a
/// step is counted as a restart, as Prometheus would).
fn hist_increase(span: Span, track: &Track, restarts: &[usize], may_fall: bool) -> (f64, bool) {
    let pts: Vec<(usize, f64)> = span.points(track).collect();
    let (mut inc, mut bad) = (0.0, false);
    for w in pts.windows(2) {
        let ((p, vp), (q, vq)) = (w[0], w[1]);
        if restarts.iter().any(|&r| r > p && r <= q) {
            inc += vq;
        } else if vq < vp && !may_fall {
            bad = true;
            inc += vq;
        } else {
            inc += vq - vp;
        }
    }
    (inc, bad)
}

/// What a histogram series has per scrape.
pub(crate) struct HistTracks<'a> {
    pub buckets: &'a [(f64, Track)],
    pub count: &'a Track,
    pub sum: &'a Track,
    pub created: Vec<&'a Track>,
}

/// A histogram over the bracket; a warning when its quantiles were dropped or not defined.
pub(crate) fn histogram_stats(h: &HistTracks, span: Span) -> (HistogramStats, Option<String>) {
    let cpts: Vec<(usize, f64)> = span.points(h.count).collect();
    let restarts: Vec<usize> = cpts
        .windows(2)
        .filter(|w| w[1].1 < w[0].1 || created_between(&h.created, w[0].0, w[1].0))
        .map(|w| w[1].0)
        .collect();
    let mut out = HistogramStats {
        resets: restarts.len() as u32,
        ..HistogramStats::default()
    };
    out.count = hist_increase(span, h.count, &restarts, false).0;
    // A sum may fall without a restart (negative observations are legal).
    out.sum = hist_increase(span, h.sum, &restarts, true).0;
    let mut inconsistent = false;
    for (le, track) in h.buckets {
        let (inc, bad) = hist_increase(span, track, &restarts, false);
        inconsistent |= bad;
        out.buckets.push(Bucket {
            le: *le,
            count: inc,
        });
    }
    out.buckets.sort_by(|x, y| x.le.total_cmp(&y.le));
    if out.count > 0.0 {
        out.mean = Some(out.sum / out.count);
    }
    if inconsistent {
        return (
            out,
            Some(
                "a bucket fell while its _count did not: the histogram's quantiles are left out"
                    .into(),
            ),
        );
    }
    if out.count <= 0.0 {
        return (out, None);
    }
    let mut note = None;
    for phi in PHIS {
        let e = histogram_quantile(phi, &out.buckets);
        if e.value.is_nan() {
            note = Some("no +Inf bucket: histogram_quantile is not defined".into());
        } else {
            out.quantiles.push((phi, e));
        }
    }
    (out, note)
}
