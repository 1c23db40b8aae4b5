//! PromQL's range functions over one float series, exactly as Prometheus 3 computes them
//! (`extrapolatedRate`, `instantValue`), and the exact reset-aware increase between two
//! scrapes that inferbench reports first (docs/telemetry.md, "Counters").
//!
//! Points must be in ascending time. Durations are taken in seconds from the ns differences;
//! Prometheus works in ms, and every step here is a ratio of durations (or a division by the
//! range in seconds), so the unit does not change a result.

use serde::{Deserialize, Serialize};

#[cfg(test)]
mod tests;

/// One sample of a series: time (ns on any one clock; may be negative for test windows) and
/// value.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub t_ns: i64,
    pub v: f64,
}

/// `increase(x[R])` evaluated at `end_ns` with `R = end_ns - start_ns` (the range is
/// left-open). None with fewer than two samples in range.
pub fn increase(points: &[Point], start_ns: i64, end_ns: i64) -> Option<f64> {
    extrapolated(points, start_ns, end_ns, true, false)
}

/// `rate(x[R])`: [`increase`] divided by the range in seconds.
pub fn rate(points: &[Point], start_ns: i64, end_ns: i64) -> Option<f64> {
    extrapolated(points, start_ns, end_ns, true, true)
}

/// `delta(x[R])` (gauges): no reset correction, no zero floor.
pub fn delta(points: &[Point], start_ns: i64, end_ns: i64) -> Option<f64> {
    extrapolated(points, start_ns, end_ns, false, false)
}

/// `irate(x[R])`: the last two samples in range, per second; a reset uses the last value.
pub fn irate(points: &[Point], start_ns: i64, end_ns: i64) -> Option<f64> {
    instant(points, start_ns, end_ns, true)
}

/// `idelta(x[R])`.
pub fn idelta(points: &[Point], start_ns: i64, end_ns: i64) -> Option<f64> {
    instant(points, start_ns, end_ns, false)
}

fn seconds(later: i64, earlier: i64) -> f64 {
    (i128::from(later) - i128::from(earlier)) as f64 / 1e9
}

/// The samples with `start < t ≤ end` (Prometheus 3's left-open range).
fn in_range(points: &[Point], start_ns: i64, end_ns: i64) -> &[Point] {
    let lo = points.partition_point(|p| p.t_ns <= start_ns);
    let hi = points.partition_point(|p| p.t_ns <= end_ns);
    &points[lo..hi.max(lo)]
}

/// §1.3's seven steps.
fn extrapolated(
    points: &[Point],
    start_ns: i64,
    end_ns: i64,
    counter: bool,
    per_second: bool,
) -> Option<f64> {
    let s = in_range(points, start_ns, end_ns);
    if s.len() < 2 {
        return None;
    }
    let (first, last) = (s[0], s[s.len() - 1]);
    let mut result = last.v - first.v;
    if counter {
        // A drop is a restart from zero after reaching the previous value.
        for w in s.windows(2) {
            if w[1].v < w[0].v {
                result += w[0].v;
            }
        }
    }
    let mut to_start = seconds(first.t_ns, start_ns);
    let mut to_end = seconds(end_ns, last.t_ns);
    let sampled = seconds(last.t_ns, first.t_ns);
    let avg = sampled / (s.len() - 1) as f64;
    let threshold = avg * 1.1;
    if to_start >= threshold {
        to_start = avg / 2.0;
    }
    if counter && result > 0.0 && first.v >= 0.0 {
        // Never extrapolate a counter below zero.
        let to_zero = sampled * (first.v / result);
        if to_zero < to_start {
            to_start = to_zero;
        }
    }
    if to_end >= threshold {
        to_end = avg / 2.0;
    }
    let mut factor = (sampled + to_start + to_end) / sampled;
    if per_second {
        factor /= seconds(end_ns, start_ns);
    }
    Some(result * factor)
}

/// `instantValue`: the last two samples in range, no extrapolation.
fn instant(points: &[Point], start_ns: i64, end_ns: i64, per_second: bool) -> Option<f64> {
    let s = in_range(points, start_ns, end_ns);
    if s.len() < 2 {
        return None;
    }
    let (a, b) = (s[s.len() - 2], s[s.len() - 1]);
    // irate on a reset keeps the last value; idelta (gauges) never corrects.
    let mut result = if per_second && b.v < a.v {
        b.v
    } else {
        b.v - a.v
    };
    let dt = seconds(b.t_ns, a.t_ns);
    if dt == 0.0 {
        return None;
    }
    if per_second {
        result /= dt;
    }
    Some(result)
}

/// The exact reset-aware increase over consecutive samples: the sum of each step's rise,
/// where a drop counts as a restart from zero (the step contributes the new value).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExactIncrease {
    pub increase: f64,
    /// Steps where the value dropped.
    pub resets: u32,
}

pub fn exact_increase(points: &[Point]) -> ExactIncrease {
    let mut out = ExactIncrease::default();
    for w in points.windows(2) {
        if w[1].v < w[0].v {
            out.increase += w[1].v;
            out.resets += 1;
        } else {
            out.increase += w[1].v - w[0].v;
        }
    }
    out
}
