//! Proportions: Wilson bounds and Newcombe's interval of a difference (design note §2.4).
//!
//! Population: requests, error-inclusive: the denominator is every *attempted* request (an
//! error stays in it, as AIPerf counts goodput), the numerator the requests with the
//! property (good, or failed for an error rate). Requests are assumed independent Bernoulli
//! trials; a bursty trace makes the intervals too narrow (see `docs/compare.md`).

use super::level;
use crate::confidence::wilson_interval;

/// One-sided lower `confidence` bound of `successes / trials` (the Wilson lower limit with
/// `z = z_{1−α}`): the true proportion is at least this with that confidence.
pub fn wilson_lower_bound(successes: u64, trials: u64, confidence: f64) -> Option<f64> {
    let c = level(confidence)?;
    wilson_interval(successes, trials, 2.0 * c - 1.0).map(|(l, _)| l)
}

/// One-sided upper `confidence` bound of `successes / trials`.
pub fn wilson_upper_bound(successes: u64, trials: u64, confidence: f64) -> Option<f64> {
    let c = level(confidence)?;
    wilson_interval(successes, trials, 2.0 * c - 1.0).map(|(_, u)| u)
}

/// Newcombe's interval of `p₁ − p₂` (candidate minus baseline), fractions (not pp).
#[derive(Clone, Debug, PartialEq)]
pub struct ProportionDiff {
    pub p_candidate: f64,
    pub p_baseline: f64,
    /// `p₁ − p₂`.
    pub difference: f64,
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
}

/// Newcombe's hybrid score interval (his method 10, no continuity correction) of
/// `x₁/n₁ − x₂/n₂`, candidate (`x₁` of `n₁`) minus baseline (`x₂` of `n₂`), at two-sided
/// `confidence`, from the Wilson limits `(l, u)` of each side:
/// `d − √((p̂₁−l₁)² + (u₂−p̂₂)²)`, `d + √((u₁−p̂₁)² + (p̂₂−l₂)²)`. It covers the true
/// difference with about that probability for independent samples. `None` when a side has
/// no trials, more successes than trials, or the level is outside (0, 1).
pub fn newcombe(
    candidate: (u64, u64),
    baseline: (u64, u64),
    confidence: f64,
) -> Option<ProportionDiff> {
    let c = level(confidence)?;
    let (l1, u1) = wilson_interval(candidate.0, candidate.1, c)?;
    let (l2, u2) = wilson_interval(baseline.0, baseline.1, c)?;
    let p1 = candidate.0 as f64 / candidate.1 as f64;
    let p2 = baseline.0 as f64 / baseline.1 as f64;
    Some(combine(p1, (l1, u1), p2, (l2, u2), c))
}

pub(crate) fn combine(
    p1: f64,
    (l1, u1): (f64, f64),
    p2: f64,
    (l2, u2): (f64, f64),
    confidence: f64,
) -> ProportionDiff {
    let d = p1 - p2;
    ProportionDiff {
        p_candidate: p1,
        p_baseline: p2,
        difference: d,
        low: d - ((p1 - l1).powi(2) + (u2 - p2).powi(2)).sqrt(),
        high: d + ((u1 - p1).powi(2) + (p2 - l2).powi(2)).sqrt(),
        confidence,
    }
}

/// The Wilson interval of a proportion `p` observed over `n` trials, `n` real (a
/// sample-size search scales the observed counts), `confidence` already checked.
pub(crate) fn wilson_real(p: f64, n: f64, confidence: f64) -> (f64, f64) {
    let z = super::z(1.0 - (1.0 - confidence) / 2.0);
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = p + z2 / (2.0 * n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    (
        ((center - half) / denom).max(0.0),
        ((center + half) / denom).min(1.0),
    )
}

/// One-sided p-value that the difference exceeds `bound` (H₁: `p₁ − p₂ > bound`), by
/// inverting Newcombe's interval: the smallest α at which the one-sided (1 − α) lower limit
/// is above `bound`. Found by bisection on α to 1e-9; 1 when the point estimate is not above
/// `bound`.
pub fn newcombe_p_greater(candidate: (u64, u64), baseline: (u64, u64), bound: f64) -> Option<f64> {
    let d = newcombe(candidate, baseline, 0.5)?.difference;
    if d <= bound {
        return Some(1.0);
    }
    let lower_at = |alpha: f64| newcombe(candidate, baseline, 1.0 - 2.0 * alpha).map(|x| x.low);
    let (mut lo, mut hi) = (1e-12_f64, 0.5_f64);
    if lower_at(lo)? > bound {
        return Some(lo);
    }
    while hi - lo > 1e-9 {
        let mid = 0.5 * (lo + hi);
        if lower_at(mid)? > bound {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// One-sided p-value that the difference is below `bound` (H₁: `p₁ − p₂ < bound`).
pub fn newcombe_p_less(candidate: (u64, u64), baseline: (u64, u64), bound: f64) -> Option<f64> {
    if candidate.0 > candidate.1 || baseline.0 > baseline.1 {
        return None;
    }
    // Mirror: p₁ − p₂ < b  ⇔  (n₁−x₁)/n₁ − (n₂−x₂)/n₂ > −b, and Wilson is symmetric.
    newcombe_p_greater(
        (candidate.1 - candidate.0, candidate.1),
        (baseline.1 - baseline.0, baseline.1),
        -bound,
    )
}

/// The one-sided Wilson bound (lower when `lower`, else upper) of an observed fraction `p`
/// over `n` trials at `confidence` (`z = z_{confidence}`), `n` real so that a planner can ask
/// "at this fraction, how many trials?". `None` for `n ≤ 0`, `p` outside [0, 1] or a level
/// out of range.
pub fn wilson_bound_of_fraction(p: f64, n: f64, confidence: f64, lower: bool) -> Option<f64> {
    let c = level(confidence)?;
    if n.is_nan() || n <= 0.0 || !(0.0..=1.0).contains(&p) {
        return None;
    }
    let z = super::z(c);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(if lower { centre - half } else { centre + half })
}

/// The smallest number of trials at which a fraction staying at `p` would be decided
/// against `limit` at one-sided `confidence`: for `p > limit`, the n whose Wilson lower
/// bound reaches `limit`; for `p < limit`, the n whose upper bound falls below it. `None`
/// when `p == limit` (no n decides), an argument is out of range, or n would exceed 10¹².
pub fn wilson_trials_to_decide(p: f64, limit: f64, confidence: f64) -> Option<u64> {
    if p == limit || !(0.0..=1.0).contains(&limit) {
        return None;
    }
    let decided = |n: u64| -> Option<bool> {
        let n = n as f64;
        Some(if p > limit {
            wilson_bound_of_fraction(p, n, confidence, true)? >= limit
        } else {
            wilson_bound_of_fraction(p, n, confidence, false)? < limit
        })
    };
    // The bound tightens monotonically in n: double, then bisect.
    let mut hi = 1u64;
    while !decided(hi)? {
        hi = hi.checked_mul(2)?;
        if hi > 1_000_000_000_000 {
            return None;
        }
    }
    let mut lo = hi / 2;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if decided(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}
