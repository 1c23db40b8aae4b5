//! Welch's unequal-variance t test on per-run statistics, TOST equivalence and
//! non-inferiority (design note §2.2).
//!
//! Population: one value per run (e.g. each run's output token throughput or p99 TTFT), the
//! run being the unit of replication. For ratio metrics (throughput, latency) pass
//! [`log_values`] so that the difference is a log ratio and a relative margin applies
//! ([`super::Margin::relative`]); `exp` of an interval bound is then a ratio
//! candidate/baseline.

use super::{Margin, level};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Welch's comparison of `candidate − baseline` means.
#[derive(Clone, Debug, PartialEq)]
pub struct Welch {
    pub n_baseline: usize,
    pub n_candidate: usize,
    pub mean_baseline: f64,
    pub mean_candidate: f64,
    /// Sample variances (ddof = 1).
    pub var_baseline: f64,
    pub var_candidate: f64,
    /// `d = ȳ − x̄` (candidate minus baseline), in the values' unit.
    pub difference: f64,
    /// `SE = √(s₁²/n₁ + s₂²/n₂)`.
    pub se: f64,
    /// Welch–Satterthwaite degrees of freedom ν.
    pub df: f64,
    /// `t = d / SE`.
    pub t: f64,
    /// Two-sided p-value of H₀: equal means, `2·P(T_ν > |t|)`.
    pub p_two_sided: f64,
}

/// Welch's test of `candidate` against `baseline` (values per run). `None` with fewer than
/// two values on a side, a non-finite value, or both variances zero (no interval exists).
pub fn welch(baseline: &[f64], candidate: &[f64]) -> Option<Welch> {
    let (n1, m1, v1) = moments(baseline)?;
    let (n2, m2, v2) = moments(candidate)?;
    let a = v1 / n1 as f64;
    let b = v2 / n2 as f64;
    let se2 = a + b;
    if se2 <= 0.0 || !se2.is_finite() {
        return None;
    }
    let se = se2.sqrt();
    let df = se2 * se2 / (a * a / (n1 - 1) as f64 + b * b / (n2 - 1) as f64);
    let d = m2 - m1;
    let t = d / se;
    let p = 2.0 * student(df)?.sf(t.abs());
    Some(Welch {
        n_baseline: n1,
        n_candidate: n2,
        mean_baseline: m1,
        mean_candidate: m2,
        var_baseline: v1,
        var_candidate: v2,
        difference: d,
        se,
        df,
        t,
        p_two_sided: p.min(1.0),
    })
}

/// Natural logs of `values`; `None` if any is not strictly positive and finite.
pub fn log_values(values: &[f64]) -> Option<Vec<f64>> {
    values
        .iter()
        .map(|&v| (v > 0.0 && v.is_finite()).then(|| v.ln()))
        .collect()
}

impl Welch {
    /// Two-sided `confidence` interval of the difference, `d ± t_{1−α/2,ν}·SE`: it covers the
    /// true difference of means with that probability over repeated experiments. `None` for a
    /// level outside (0, 1).
    pub fn interval(&self, confidence: f64) -> Option<(f64, f64)> {
        let c = level(confidence)?;
        let h = self.t_quantile(1.0 - (1.0 - c) / 2.0)? * self.se;
        Some((self.difference - h, self.difference + h))
    }

    /// One-sided lower `confidence` bound of the difference, `d − t_{1−α,ν}·SE`: the
    /// non-inferiority bound when higher is better (non-inferior at margin Δ iff it exceeds
    /// −Δ). For lower-is-better use [`Welch::upper_bound`] against +Δ.
    pub fn lower_bound(&self, confidence: f64) -> Option<f64> {
        Some(self.difference - self.t_quantile(level(confidence)?)? * self.se)
    }

    /// One-sided upper `confidence` bound of the difference, `d + t_{1−α,ν}·SE`.
    pub fn upper_bound(&self, confidence: f64) -> Option<f64> {
        Some(self.difference + self.t_quantile(level(confidence)?)? * self.se)
    }

    /// One-sided p-value of H₀: `difference ≤ bound` against H₁: `difference > bound`,
    /// `P(T_ν > (d − bound)/SE)`.
    pub fn p_greater(&self, bound: f64) -> f64 {
        match student(self.df) {
            Some(t) => t.sf((self.difference - bound) / self.se),
            None => f64::NAN,
        }
    }

    /// One-sided p-value of H₀: `difference ≥ bound` against H₁: `difference < bound`.
    pub fn p_less(&self, bound: f64) -> f64 {
        match student(self.df) {
            Some(t) => t.cdf((self.difference - bound) / self.se),
            None => f64::NAN,
        }
    }

    /// Two one-sided tests of equivalence within `margin` at level `alpha`.
    pub fn tost(&self, margin: Margin, alpha: f64) -> Option<Tost> {
        let a = level(alpha)?;
        if a >= 0.5 {
            return None;
        }
        let (low, high) = self.interval(1.0 - 2.0 * a)?;
        // An infinite margin side is never rejected against: its p is 0.
        let p_lower = self.p_greater(margin.lower);
        let p_upper = self.p_less(margin.upper);
        let p = p_lower.max(p_upper);
        Some(Tost {
            margin,
            alpha: a,
            low,
            high,
            p_tost: p,
            equivalent: p < a,
        })
    }

    fn t_quantile(&self, p: f64) -> Option<f64> {
        Some(student(self.df)?.inverse_cdf(p))
    }
}

/// Result of [`Welch::tost`].
#[derive(Clone, Debug, PartialEq)]
pub struct Tost {
    pub margin: Margin,
    pub alpha: f64,
    /// The (1 − 2α) two-sided interval of the difference (90 % for α = 0.05).
    pub low: f64,
    pub high: f64,
    /// `max(P(T > t_L), P(T < t_U))`, `t_L = (d − lower)/SE`, `t_U = (d − upper)/SE`.
    pub p_tost: f64,
    /// `p_tost < α`, equivalently the (1 − 2α) interval lies inside the margin.
    pub equivalent: bool,
}

/// (n, mean, sample variance); two passes so large values with small spread keep precision.
fn moments(v: &[f64]) -> Option<(usize, f64, f64)> {
    if v.len() < 2 || v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let ss = v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    Some((v.len(), m, ss / (n - 1.0)))
}

pub(crate) fn student(df: f64) -> Option<StudentsT> {
    StudentsT::new(0.0, 1.0, df).ok()
}

/// One-sided `confidence` bounds `(lower, upper)` of the mean of per-run values,
/// `x̄ ∓ t_{confidence, k−1}·s/√k` (the repeat-run interval of a run-level metric). `None`
/// with fewer than two values, a non-finite value or a level outside (0, 1).
pub fn mean_bounds(values: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let c = level(confidence)?;
    let (n, m, v) = moments(values)?;
    let h = student((n - 1) as f64)?.inverse_cdf(c) * (v / n as f64).sqrt();
    Some((m - h, m + h))
}
