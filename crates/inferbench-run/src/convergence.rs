//! Convergence stopping (`--convergence-metric`): a cell's repeated runs stop before
//! `--num-profile-runs` once one statistic of one metric, taken per run, has settled.
//! AIPerf 0.13's `ci_width` and `cv` criteria (docs/repeated-runs.md).

use inferbench_core::summary::{MetricValue, Summary};

/// `--convergence-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvergenceMode {
    /// Student-t interval width over |mean| below the threshold (default 0.10).
    CiWidth,
    /// Sample standard deviation over |mean| below the threshold (default 0.05).
    Cv,
}

impl ConvergenceMode {
    pub fn default_threshold(self) -> f64 {
        match self {
            ConvergenceMode::CiWidth => 0.10,
            ConvergenceMode::Cv => 0.05,
        }
    }
}

/// The rule: which number of each run, how it is judged, and from how many runs on.
#[derive(Clone, Debug, PartialEq)]
pub struct Convergence {
    /// A metric tag of the summary (`time_to_first_token`, `request_latency`, …).
    pub metric: String,
    /// `avg`, `p50`, `p90`, `p95`, `p99`, `min` or `max`; a scalar metric's value is used
    /// whatever the stat.
    pub stat: String,
    pub mode: ConvergenceMode,
    /// None: the mode's default.
    pub threshold: Option<f64>,
    /// Runs needed before the rule is checked (AIPerf's `min_runs`, 2).
    pub min_runs: usize,
}

/// The statistics `--convergence-stat` takes (AIPerf's `ConvergenceStat`).
pub const STATS: [&str; 7] = ["avg", "p50", "p90", "p95", "p99", "min", "max"];

/// One run's number for the rule, or None when the run has no such metric or stat.
pub fn value_of(summary: &Summary, metric: &str, stat: &str) -> Option<f64> {
    let m = summary.get(metric)?;
    match &m.value {
        MetricValue::Scalar { .. } => m.scalar(),
        MetricValue::Distribution { .. } => m.stats().and_then(|s| s.get(stat)),
    }
    .filter(|v| v.is_finite())
}

/// Whether the runs so far (`values`, one per good run) have converged at
/// `confidence_level`: at least `max(min_runs, 2)` values, a non-zero mean, and the ratio
/// below the threshold.
pub fn converged(rule: &Convergence, values: &[f64], confidence_level: f64) -> bool {
    if values.len() < rule.min_runs.max(2) {
        return false;
    }
    let Some(s) = inferbench_metrics::confidence::repeat_stats(values, confidence_level) else {
        return false;
    };
    if s.mean == 0.0 || !s.mean.is_finite() {
        return false;
    }
    let threshold = rule.threshold.unwrap_or(rule.mode.default_threshold());
    let ratio = match rule.mode {
        ConvergenceMode::CiWidth => (s.ci_high - s.ci_low) / s.mean.abs(),
        ConvergenceMode::Cv => s.std / s.mean.abs(),
    };
    ratio < threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(mode: ConvergenceMode, threshold: Option<f64>) -> Convergence {
        Convergence {
            metric: "request_latency".into(),
            stat: "avg".into(),
            mode,
            threshold,
            min_runs: 2,
        }
    }

    #[test]
    fn cv_is_the_sample_std_over_the_mean() {
        // 99, 101: mean 100, std (ddof 1) = sqrt(2) = 1.414…, cv 0.01414.
        let v = [99.0, 101.0];
        assert!(converged(&rule(ConvergenceMode::Cv, Some(0.015)), &v, 0.95));
        assert!(!converged(
            &rule(ConvergenceMode::Cv, Some(0.014)),
            &v,
            0.95
        ));
        // 90, 110: cv 0.1414, above the default 0.05.
        assert!(!converged(
            &rule(ConvergenceMode::Cv, None),
            &[90.0, 110.0],
            0.95
        ));
        assert!(converged(&rule(ConvergenceMode::Cv, None), &v, 0.95));
    }

    #[test]
    fn ci_width_is_twice_t_times_se_over_the_mean() {
        // 99, 100, 101: mean 100, std 1, se 1/sqrt(3) = 0.57735; t(0.975, 2) = 4.302653;
        // width = 2 · 4.302653 · 0.57735 = 4.96828, ratio 0.0496828.
        let v = [99.0, 100.0, 101.0];
        assert!(converged(
            &rule(ConvergenceMode::CiWidth, Some(0.0497)),
            &v,
            0.95
        ));
        assert!(!converged(
            &rule(ConvergenceMode::CiWidth, Some(0.0496)),
            &v,
            0.95
        ));
        assert!(converged(&rule(ConvergenceMode::CiWidth, None), &v, 0.95));
        // Two runs 99, 101: t(0.975, 1) = 12.7062, se 1, ratio 0.254 > 0.10.
        assert!(!converged(
            &rule(ConvergenceMode::CiWidth, None),
            &[99.0, 101.0],
            0.95
        ));
    }

    #[test]
    fn too_few_runs_or_a_zero_mean_never_converge() {
        assert!(!converged(
            &rule(ConvergenceMode::Cv, Some(0.5)),
            &[100.0],
            0.95
        ));
        let mut r = rule(ConvergenceMode::Cv, Some(0.5));
        r.min_runs = 3;
        assert!(!converged(&r, &[100.0, 100.0], 0.95));
        assert!(converged(&r, &[100.0, 100.0, 100.0], 0.95));
        assert!(!converged(&r, &[0.0, 0.0, 0.0], 0.95));
    }
}
