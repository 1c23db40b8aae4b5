//! Distribution-free (order-statistic) confidence intervals of a quantile from one sample
//! (design note §2.3; Hahn–Meeker, asv's `quantile_ci`).
//!
//! Population: the requests of one run, assumed independent draws from one latency
//! distribution. With sorted values `X₍₁₎ ≤ … ≤ X₍ₙ₎` and `K ~ Binomial(n, q)`,
//! `P(X₍ᵣ₎ < ξ_q < X₍ₛ₎) = P(r ≤ K ≤ s − 1)` whatever the distribution: the interval covers
//! the true quantile `ξ_q` with at least the stated confidence. Ranks are 1-based.

use super::level;
use statrs::distribution::{Binomial, DiscreteCDF};

/// The ranks of a two-sided interval `X₍ᵣ₎ … X₍ₛ₎`, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantileRanks {
    /// `r = 1 +` the largest `k` with `P(K ≤ k) ≤ α/2`; `None` when there is none (the
    /// sample is too small for a finite lower bound, e.g. a low quantile of few values).
    pub lower: Option<usize>,
    /// `s = 1 +` the smallest `k` with `P(K ≤ k) ≥ 1 − α/2`; `None` when `s > n` (no finite
    /// upper bound, e.g. p99 of 100 values).
    pub upper: Option<usize>,
}

/// Ranks of the two-sided `confidence` interval of quantile `q` (a fraction, 0.99 for p99)
/// from `n` values. `None` when `n == 0`, `q` is not in (0, 1) or the level is outside (0, 1).
pub fn quantile_ranks(n: usize, q: f64, confidence: f64) -> Option<QuantileRanks> {
    let a = 1.0 - level(confidence)?;
    let cdf = binomial_cdf(n, q)?;
    // Largest k with cdf(k) ≤ α/2: one below the smallest k with cdf(k) > α/2.
    let first_above = smallest_k(n, |k| cdf(k) > a / 2.0);
    // r = 1 + (k − 1); none when even k = 0 is above α/2.
    let lower = first_above.filter(|&k| k > 0);
    let upper = smallest_k(n, |k| cdf(k) >= 1.0 - a / 2.0)
        .map(|k| k + 1)
        .filter(|&s| s <= n);
    Some(QuantileRanks { lower, upper })
}

/// Rank `s` of the one-sided upper `confidence` bound of quantile `q` from `n` values (the
/// smallest `s` with `P(K ≤ s − 1) ≥ confidence`): `P(ξ_q < X₍ₛ₎) ≥ confidence`, the bound
/// an SLO is judged on. `None` when `s > n` or an argument is out of range.
pub fn upper_bound_rank(n: usize, q: f64, confidence: f64) -> Option<usize> {
    let c = level(confidence)?;
    let cdf = binomial_cdf(n, q)?;
    smallest_k(n, |k| cdf(k) >= c)
        .map(|k| k + 1)
        .filter(|&s| s <= n)
}

/// The smallest `n` with a finite upper bound on quantile `q`: two-sided at `confidence`
/// (`q^n ≤ α/2`) or one-sided (`q^n ≤ α`). For p99 at 95 %: 368 two-sided, 299 one-sided.
pub fn min_n_for_upper_bound(q: f64, confidence: f64, two_sided: bool) -> Option<usize> {
    let a = 1.0 - level(confidence)?;
    if !(q > 0.0 && q < 1.0) {
        return None;
    }
    let tail = if two_sided { a / 2.0 } else { a };
    // The bound X₍ₙ₎ exists iff P(K ≤ n − 1) = 1 − qⁿ ≥ 1 − tail.
    let mut n = (tail.ln() / q.ln()).ceil().max(1.0) as usize;
    // Guard the rounding of the closed form both ways.
    while n > 1 && q.powi(n as i32 - 1) <= tail {
        n -= 1;
    }
    while q.powi(n as i32) > tail {
        n += 1;
    }
    Some(n)
}

/// A quantile's two-sided interval as values: `(X₍ᵣ₎, X₍ₛ₎)` from `sorted` (ascending), a
/// missing bound as `None`. `None` for an empty sample or arguments out of range.
pub fn quantile_interval(
    sorted: &[f64],
    q: f64,
    confidence: f64,
) -> Option<(Option<f64>, Option<f64>)> {
    let r = quantile_ranks(sorted.len(), q, confidence)?;
    Some((
        r.lower.map(|i| sorted[i - 1]),
        r.upper.map(|i| sorted[i - 1]),
    ))
}

/// Which one-sided order-statistic bound a planner asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The upper bound `X₍ₛ₎` (rank from [`upper_bound_rank`]).
    Upper,
    /// The lower bound `X₍ᵣ₎`, `r` the lower rank of the two-sided `2c − 1` interval.
    Lower,
}

/// The one-sided lower bound's rank `r` (`P(X₍ᵣ₎ < ξ_q) ≥ confidence`), `None` when the
/// sample is too small for one.
pub fn lower_bound_rank(n: usize, q: f64, confidence: f64) -> Option<usize> {
    let c = level(confidence)?;
    quantile_ranks(n, q, 2.0 * c - 1.0)?.lower
}

/// The smallest sample size whose one-sided bound of quantile `q` would clear a limit, if
/// the values kept their observed distribution. `frac` is the observed fraction of values on
/// the side the bound must reach: for [`Side::Upper`] the fraction at or below the limit
/// (the bound `X₍ₛ₎` is below it once `s/n ≤ frac`), for [`Side::Lower`] the fraction above
/// it (`X₍ᵣ₎` is above once `(n − r + 1)/n ≤ frac`). `None` when no size up to `max_n` does.
pub fn requests_to_decide(
    q: f64,
    confidence: f64,
    frac: f64,
    side: Side,
    max_n: usize,
) -> Option<usize> {
    if !(0.0..=1.0).contains(&frac) {
        return None;
    }
    let decided = |n: usize| -> bool {
        match side {
            Side::Upper => {
                upper_bound_rank(n, q, confidence).is_some_and(|s| s as f64 <= frac * n as f64)
            }
            Side::Lower => lower_bound_rank(n, q, confidence)
                .is_some_and(|r| (n - r + 1) as f64 <= frac * n as f64),
        }
    };
    // Roughly monotone in n (ranks are integers): double to a deciding size, then bisect.
    let mut hi = 1usize;
    while !decided(hi) {
        hi = hi.checked_mul(2)?;
        if hi > max_n {
            return None;
        }
    }
    let mut lo = hi / 2;
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

fn binomial_cdf(n: usize, q: f64) -> Option<impl Fn(usize) -> f64> {
    if n == 0 || !(q > 0.0 && q < 1.0) {
        return None;
    }
    let b = Binomial::new(q, n as u64).ok()?;
    Some(move |k: usize| b.cdf(k as u64))
}

/// The smallest `k` in `0..=n` with `pred(k)`, `pred` monotone (false … true); `None` if none.
fn smallest_k(n: usize, pred: impl Fn(usize) -> bool) -> Option<usize> {
    if !pred(n) {
        return None;
    }
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}
