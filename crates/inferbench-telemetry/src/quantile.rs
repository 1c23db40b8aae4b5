//! `histogram_quantile` over classic buckets, exactly as Prometheus computes it
//! (`bucketQuantile`). A value from it is a "server histogram estimate", never a percentile
//! of the requests.

use serde::{Deserialize, Serialize};

#[cfg(test)]
mod tests;

/// One cumulative bucket: upper bound (`le`, `+Inf` allowed) and count.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    pub le: f64,
    pub count: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    /// The counts were not monotonic and were forced (Prometheus does the same, and flags it).
    pub forced_monotonic: bool,
}

/// Prometheus's `smallDeltaTolerance`: adjacent counts this close are float noise.
const SMALL_DELTA: f64 = 1e-12;

fn estimate(value: f64, forced_monotonic: bool) -> Estimate {
    Estimate {
        value,
        forced_monotonic,
    }
}

/// φ ∈ [0, 1] of the buckets (in any order; equal bounds are merged).
pub fn histogram_quantile(phi: f64, buckets: &[Bucket]) -> Estimate {
    if phi.is_nan() {
        return estimate(f64::NAN, false);
    }
    if phi < 0.0 {
        return estimate(f64::NEG_INFINITY, false);
    }
    if phi > 1.0 {
        return estimate(f64::INFINITY, false);
    }
    let mut b: Vec<Bucket> = buckets.to_vec();
    b.sort_by(|x, y| x.le.total_cmp(&y.le));
    if b.last().is_none_or(|last| last.le != f64::INFINITY) {
        return estimate(f64::NAN, false);
    }
    // Equal bounds (from different label sets) are one bucket.
    b.dedup_by(|later, kept| {
        let same = later.le == kept.le;
        if same {
            kept.count += later.count;
        }
        same
    });
    let forced = monotonic(&mut b);
    let n = b.len();
    let total = b[n - 1].count;
    if n < 2 || total == 0.0 {
        return estimate(f64::NAN, forced);
    }
    let mut rank = phi * total;
    // The first bucket (the +Inf one excluded) whose count reaches the rank.
    let i = b[..n - 1].partition_point(|x| x.count < rank);
    if i == n - 1 {
        // The tail is clamped to the highest finite bound.
        return estimate(b[n - 2].le, forced);
    }
    if i == 0 && b[0].le <= 0.0 {
        return estimate(b[0].le, forced);
    }
    let (mut start, end, mut count) = (0.0, b[i].le, b[i].count);
    if i > 0 {
        start = b[i - 1].le;
        count -= b[i - 1].count;
        rank -= b[i - 1].count;
    }
    estimate(start + (end - start) * (rank / count), forced)
}

/// Prometheus's `ensureMonotonicAndIgnoreSmallDeltas`: a count within 1e-12 (relative) of
/// the one before is set equal to it silently; a lower count is raised to it and flagged.
/// Returns whether a count was forced.
fn monotonic(b: &mut [Bucket]) -> bool {
    let Some(first) = b.first() else {
        return false;
    };
    let mut prev = first.count;
    let mut forced = false;
    for x in b.iter_mut().skip(1) {
        let curr = x.count;
        if curr == prev {
            continue;
        }
        if almost_equal(prev, curr) {
            x.count = prev;
            continue;
        }
        if curr < prev {
            x.count = prev;
            forced = true;
            continue;
        }
        prev = curr;
    }
    forced
}

/// Prometheus's `almost.Equal` at [`SMALL_DELTA`].
fn almost_equal(a: f64, b: f64) -> bool {
    if a.is_nan() && b.is_nan() || a == b {
        return true;
    }
    let abs_sum = a.abs() + b.abs();
    let diff = (a - b).abs();
    if a == 0.0 || b == 0.0 || abs_sum < f64::MIN_POSITIVE {
        return diff < SMALL_DELTA * f64::MIN_POSITIVE;
    }
    diff / abs_sum.min(f64::MAX) < SMALL_DELTA
}
