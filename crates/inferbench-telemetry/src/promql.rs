//! PromQL's range functions over one float series, exactly as Prometheus 3 computes them
//! (`extrapolatedRate`, `instantValue`), and the exact reset-aware increase between two
//! scrapes that inferbench reports first (docs/telemetry.md, "Counters").
//! (Skeleton: being written.)

use serde::{Deserialize, Serialize};

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
    let _ = (points, start_ns, end_ns);
    None
}

/// `rate(x[R])`: [`increase`] divided by the range in seconds.
pub fn rate(points: &[Point], start_ns: i64, end_ns: i64) -> Option<f64> {
    let _ = (points, start_ns, end_ns);
    None
}

/// `delta(x[R])` (gauges): no reset correction, no zero floor.
pub fn delta(points: &[Point], start_ns: i64, end_ns: i64) -> Option<f64> {
    let _ = (points, start_ns, end_ns);
    None
}

/// `irate(x[R])`: the last two samples in range, per second; a reset uses the last value.
pub fn irate(points: &[Point], start_ns: i64, end_ns: i64) -> Option<f64> {
    let _ = (points, start_ns, end_ns);
    None
}

/// `idelta(x[R])`.
pub fn idelta(points: &[Point], start_ns: i64, end_ns: i64) -> Option<f64> {
    let _ = (points, start_ns, end_ns);
    None
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
    let _ = points;
    ExactIncrease::default()
}
