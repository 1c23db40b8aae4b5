//! How large a comparison would have to be to decide (design note §2.4): the size at which
//! the same interval, with the observed difference and spread held fixed, no longer contains
//! a margin boundary (it falls inside the margin, or wholly beyond it).
//!
//! These are planning figures, not guarantees: if the difference is on a boundary no size
//! decides (`None`), and the next run's difference will not be exactly this one.
//! Every function takes the two-sided `confidence` of the deciding interval (0.90 for a
//! TOST-style decision at α = 0.05) and searches sizes up to [`MAX_SIZE`].

use super::{Margin, Placement, level, place, proportions, welch::student};
use statrs::distribution::ContinuousCDF;

/// The largest size searched.
pub const MAX_SIZE: u64 = 1_000_000_000;

/// Runs per side for Welch/TOST: the smallest `n ≥ 3` at which
/// `d ± t_{1−α/2,ν(n)}·√((s₁² + s₂²)/n)` is decided, `s₁², s₂²` the per-run variances (in
/// the compared scale, log for ratios) and `ν(n)` the Welch–Satterthwaite degrees of freedom
/// with `n` runs per side.
pub fn runs_per_side(
    var_baseline: f64,
    var_candidate: f64,
    difference: f64,
    margin: Margin,
    confidence: f64,
) -> Option<u64> {
    let c = level(confidence)?;
    let (v1, v2) = (var_baseline, var_candidate);
    if !(v1 >= 0.0 && v2 >= 0.0 && v1 + v2 > 0.0 && difference.is_finite()) {
        return None;
    }
    let decided = |n: u64| {
        let nf = n as f64;
        let se = ((v1 + v2) / nf).sqrt();
        let df = (v1 + v2).powi(2) * (nf - 1.0) / (v1 * v1 + v2 * v2);
        let Some(t) = student(df) else { return false };
        let h = t.inverse_cdf(1.0 - (1.0 - c) / 2.0) * se;
        place(difference - h, difference + h, margin) != Placement::Straddles
    };
    smallest(3, decided)
}

/// Requests per side for a bootstrap (or any request-level) interval whose standard error
/// `se` was measured with `n` requests per side: the standard error is scaled by `√(n/m)`
/// and the smallest `m` is returned at which `d ± z_{1−α/2}·se·√(n/m)` is decided.
pub fn requests_per_side(
    se: f64,
    n: u64,
    difference: f64,
    margin: Margin,
    confidence: f64,
) -> Option<u64> {
    let c = level(confidence)?;
    if !(se > 0.0 && se.is_finite() && n > 0 && difference.is_finite()) {
        return None;
    }
    let z = super::z(1.0 - (1.0 - c) / 2.0);
    let decided = |m: u64| {
        let h = z * se * (n as f64 / m as f64).sqrt();
        place(difference - h, difference + h, margin) != Placement::Straddles
    };
    smallest(1, decided)
}

/// Requests per arm for Newcombe's interval of `p_candidate − p_baseline` (fractions in
/// [0, 1]) with both proportions held at their observed values: the smallest `m` at which the
/// interval from `m` trials per arm is decided. For 0.905 vs 0.920 against a −2 pp
/// non-inferiority margin (`Margin { lower: -0.02, upper: ∞ }`) at 90 % two-sided (α = 0.05
/// one-sided), about 17 300.
pub fn requests_per_arm(
    p_candidate: f64,
    p_baseline: f64,
    margin: Margin,
    confidence: f64,
) -> Option<u64> {
    let c = level(confidence)?;
    let ok = |p: f64| (0.0..=1.0).contains(&p);
    if !ok(p_candidate) || !ok(p_baseline) {
        return None;
    }
    let decided = |m: u64| {
        let n = m as f64;
        let w1 = proportions::wilson_real(p_candidate, n, c);
        let w2 = proportions::wilson_real(p_baseline, n, c);
        let d = proportions::combine(p_candidate, w1, p_baseline, w2, c);
        place(d.low, d.high, margin) != Placement::Straddles
    };
    smallest(1, decided)
}

/// The smallest `n ≥ start` with `decided(n)`, for `decided` monotone in `n` (an interval
/// only narrows with more data); `None` beyond [`MAX_SIZE`].
fn smallest(start: u64, decided: impl Fn(u64) -> bool) -> Option<u64> {
    if decided(start) {
        return Some(start);
    }
    let mut lo = start; // not decided
    let mut hi = start.max(1) * 2;
    while !decided(hi) {
        if hi >= MAX_SIZE {
            return None;
        }
        lo = hi;
        hi = (hi * 2).min(MAX_SIZE);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if decided(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}
