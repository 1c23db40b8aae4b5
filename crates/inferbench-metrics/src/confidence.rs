//! Statistics across repeated profiling runs (`--num-profile-runs N`), as AIPerf 0.13's
//! `orchestrator/aggregation/confidence.py` computes them for
//! `aggregate/profile_export_aiperf_aggregate.{json,csv}`, plus the Wilson score interval for
//! proportions. Definitions and caveats: `docs/repeated-runs.md`.
//!
//! The population of [`repeat_stats`] is the N per-run values of one statistic of one metric
//! (e.g. the `p99` of `time_to_first_token` in each run), not the pooled requests.
//!
//! A confidence level must lie strictly inside (0, 1): [`repeat_stats`] and
//! [`wilson_interval`] return `None` otherwise, [`aggregate`] returns
//! [`InvalidConfidenceLevel`], and [`check_confidence_level`] lets a caller (the CLI) reject
//! it up front.

use inferbench_core::summary::{MetricValue, Summary};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The confidence level given was not strictly between 0 and 1 (or was NaN).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InvalidConfidenceLevel(pub f64);

impl std::fmt::Display for InvalidConfidenceLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invalid confidence level {}: it must be between 0 and 1, exclusive (e.g. 0.95)",
            self.0
        )
    }
}

impl std::error::Error for InvalidConfidenceLevel {}

/// `Ok(level)` when `0 < level < 1`.
pub fn check_confidence_level(level: f64) -> Result<f64, InvalidConfidenceLevel> {
    // Written so that NaN fails too.
    if level > 0.0 && level < 1.0 {
        Ok(level)
    } else {
        Err(InvalidConfidenceLevel(level))
    }
}

/// Statistics of one value observed once per run, over `n` runs.
///
/// Fields that can be non-finite (exported as `null`, as AIPerf writes them; see
/// [`RepeatStats::named`]):
/// - `t_critical` is NaN when `n == 1` (no degrees of freedom);
/// - `cv` is +∞ when `n >= 2` and `mean == 0`, as AIPerf defines it.
///
/// With `n == 1` AIPerf does not report NumPy's NaN sample std; it degrades to a point
/// estimate, and so does this: `std = se = cv = 0`, `ci_low = ci_high = mean`.
#[derive(Clone, Debug, PartialEq)]
pub struct RepeatStats {
    /// Number of runs.
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (ddof = 1); 0 when `n == 1`.
    pub std: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation `std / mean`, a ratio (not %).
    pub cv: f64,
    /// Standard error of the mean `std / √n`.
    pub se: f64,
    /// Student-t quantile `t(1 − α/2, n − 1)`, `α = 1 − confidence_level`.
    pub t_critical: f64,
    /// `mean − t_critical · se`.
    pub ci_low: f64,
    /// `mean + t_critical · se`.
    pub ci_high: f64,
    pub confidence_level: f64,
}

impl RepeatStats {
    /// (name, value) of every field in AIPerf's aggregate key order, a non-finite value as
    /// `None` (written as `null`). `n` and `confidence_level` are metadata and not listed.
    pub fn named(&self) -> [(&'static str, Option<f64>); 9] {
        let finite = |v: f64| v.is_finite().then_some(v);
        [
            ("mean", finite(self.mean)),
            ("std", finite(self.std)),
            ("min", finite(self.min)),
            ("max", finite(self.max)),
            ("cv", finite(self.cv)),
            ("se", finite(self.se)),
            ("ci_low", finite(self.ci_low)),
            ("ci_high", finite(self.ci_high)),
            ("t_critical", finite(self.t_critical)),
        ]
    }
}

/// Statistics of `values` (one per run) with a Student-t confidence interval for the mean.
///
/// `None` when `values` is empty, holds a non-finite value (the caller decides what an
/// absent statistic means; silently dropping it would change `n`), or `confidence_level` is
/// not in (0, 1).
pub fn repeat_stats(values: &[f64], confidence_level: f64) -> Option<RepeatStats> {
    check_confidence_level(confidence_level).ok()?;
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = values.len();
    let nf = n as f64;
    let mean = values.iter().sum::<f64>() / nf;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);

    if n == 1 {
        // AIPerf's single-observation shape: a point estimate, no interval.
        return Some(RepeatStats {
            n,
            mean,
            std: 0.0,
            min,
            max,
            cv: 0.0,
            se: 0.0,
            t_critical: f64::NAN,
            ci_low: mean,
            ci_high: mean,
            confidence_level,
        });
    }

    // Two passes (mean first) rather than Σx² − n·mean², which cancels catastrophically for
    // large values with small spread (e.g. token counts).
    let ss = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
    let std = (ss / (nf - 1.0)).sqrt();
    let cv = if mean != 0.0 {
        std / mean
    } else {
        f64::INFINITY
    };
    let se = std / nf.sqrt();
    let t_critical = t_quantile(1.0 - (1.0 - confidence_level) / 2.0, nf - 1.0);
    let margin = t_critical * se;
    Some(RepeatStats {
        n,
        mean,
        std,
        min,
        max,
        cv,
        se,
        t_critical,
        ci_low: mean - margin,
        ci_high: mean + margin,
        confidence_level,
    })
}

/// Student-t quantile; `p` in (0.5, 1) and `df > 0` by construction of the callers.
fn t_quantile(p: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(p),
        Err(_) => f64::NAN,
    }
}

/// Wilson score interval for a binomial proportion `successes / trials` at
/// `confidence_level`, with `z = Φ⁻¹(1 − α/2)`, `p = k/n`:
///
/// ```text
/// (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n)
/// ```
///
/// Assumes independent Bernoulli trials. `None` when `trials == 0`,
/// `successes > trials`, or `confidence_level` is not in (0, 1).
pub fn wilson_interval(successes: u64, trials: u64, confidence_level: f64) -> Option<(f64, f64)> {
    check_confidence_level(confidence_level).ok()?;
    if trials == 0 || successes > trials {
        return None;
    }
    let z = Normal::standard().inverse_cdf(1.0 - (1.0 - confidence_level) / 2.0);
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = p + z2 / (2.0 * n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At k = 0 (k = n) the lower (upper) bound is exactly 0 (1) algebraically; pin it so
    // rounding cannot leave a 1e-17 or a value just outside [0, 1].
    let low = if successes == 0 {
        0.0
    } else {
        ((center - half) / denom).max(0.0)
    };
    let high = if successes == trials {
        1.0
    } else {
        ((center + half) / denom).min(1.0)
    };
    Some((low, high))
}

/// One aggregated statistic of one metric across runs.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregateEntry {
    pub tag: String,
    /// From the first run.
    pub header: String,
    /// From the first run.
    pub unit: String,
    /// A [`inferbench_core::summary::Stats::named`] name (`avg`, `p50`, …), or `value` for a
    /// scalar metric.
    pub stat: String,
    pub stats: RepeatStats,
}

/// [`repeat_stats`] of every statistic of every metric across `runs`.
///
/// A (metric, statistic) pair is aggregated only when the metric (same tag, same kind) is in
/// every run and the statistic is present and finite in every run, so each entry's `n` is
/// `runs.len()`. Entries follow the first run's metric order and, within a distribution
/// metric, [`inferbench_core::summary::Stats::named`] order (`count` is not aggregated).
/// Empty when `runs` is empty.
///
/// Note: AIPerf aggregates the union instead (a pair present in only some runs gets a
/// smaller `n`); see `docs/repeated-runs.md`.
pub fn aggregate(
    runs: &[Summary],
    confidence_level: f64,
) -> Result<Vec<AggregateEntry>, InvalidConfidenceLevel> {
    check_confidence_level(confidence_level)?;
    let Some(first) = runs.first() else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for metric in &first.metrics {
        let Some(all) = runs
            .iter()
            .map(|r| r.get(&metric.tag))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let mut push = |stat: &str, values: Option<Vec<f64>>| {
            if let Some(stats) = values.and_then(|v| repeat_stats(&v, confidence_level)) {
                out.push(AggregateEntry {
                    tag: metric.tag.clone(),
                    header: metric.header.clone(),
                    unit: metric.unit.clone(),
                    stat: stat.to_string(),
                    stats,
                });
            }
        };
        match &metric.value {
            MetricValue::Scalar { .. } => {
                push("value", all.iter().map(|m| m.scalar()).collect());
            }
            MetricValue::Distribution { stats } => {
                for (name, _) in stats.named() {
                    push(
                        name,
                        all.iter()
                            .map(|m| m.stats().and_then(|s| s.get(name)))
                            .collect(),
                    );
                }
            }
        }
    }
    Ok(out)
}
