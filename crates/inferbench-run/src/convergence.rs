//! Convergence stopping (`--convergence-metric`): a cell's repeated runs stop before
//! `--num-profile-runs` once one statistic of one metric, taken per run, has settled
//! (`ci_width`, `cv`), or once the last run's requests are distributed like the earlier
//! runs' (`distribution`). AIPerf 0.13's criteria (docs/repeated-runs.md).

use std::io::BufRead;
use std::path::Path;

use inferbench_core::summary::{MetricValue, Summary};

/// `--convergence-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvergenceMode {
    /// Student-t interval width over |mean| below the threshold (default 0.10).
    CiWidth,
    /// Sample standard deviation over |mean| below the threshold (default 0.05).
    Cv,
    /// The two-sample Kolmogorov–Smirnov test of the last run's per-request values against
    /// the earlier runs' pooled: its p-value above the threshold (default 0.05).
    Distribution,
}

impl ConvergenceMode {
    pub fn default_threshold(self) -> f64 {
        match self {
            ConvergenceMode::CiWidth => 0.10,
            ConvergenceMode::Cv => 0.05,
            ConvergenceMode::Distribution => 0.05,
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
        // Judged on the requests, not on one number per run.
        ConvergenceMode::Distribution => return false,
    };
    ratio < threshold
}

/// `--convergence-mode distribution`: with `runs` the per-request values of each good run
/// so far (in order), whether the last run's values pass the two-sample KS test against
/// the earlier runs' pooled: at least `max(min_runs, 2)` runs, at least 2 values on each
/// side, and a p-value above the threshold (AIPerf's rule: a higher threshold is stricter).
pub fn distribution_converged(rule: &Convergence, runs: &[Vec<f64>]) -> bool {
    if runs.len() < rule.min_runs.max(2) {
        return false;
    }
    let Some((last, earlier)) = runs.split_last() else {
        return false;
    };
    let pooled: Vec<f64> = earlier.iter().flatten().copied().collect();
    if pooled.len() < 2 || last.len() < 2 {
        return false;
    }
    let threshold = rule.threshold.unwrap_or(rule.mode.default_threshold());
    inferbench_metrics::inference::ks::ks_2samp(&pooled, last)
        .is_some_and(|r| r.p_value > threshold)
}

/// One run's per-request values of `metric` as AIPerf's distribution criterion reads them
/// from the run's record export (`profile_export.jsonl`): profiling records without an
/// error, whose `metrics.<metric>.value` is a number. A missing file, or a line that is not
/// such a record, gives nothing.
pub fn request_values(path: &Path, metric: &str) -> Vec<f64> {
    let Ok(f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in std::io::BufReader::new(f).lines() {
        let Ok(line) = line else { break };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if v.pointer("/metadata/benchmark_phase")
            .and_then(|p| p.as_str())
            != Some("profiling")
            || v.get("error").is_some_and(|e| !e.is_null())
        {
            continue;
        }
        if let Some(x) = v
            .get("metrics")
            .and_then(|m| m.get(metric))
            .and_then(|m| m.get("value"))
            .and_then(serde_json::Value::as_f64)
        {
            out.push(x);
        }
    }
    out
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
    fn distribution_tests_the_last_run_against_the_earlier_ones_pooled() {
        let r = rule(ConvergenceMode::Distribution, None);
        // Earlier {1, 3} + {5}, pooled {1, 3, 5}, against the last {2, 4, 6}: D = 1/3 and
        // every ordering reaches it, p = 1 > 0.05: converged.
        let runs = vec![vec![1.0, 3.0], vec![5.0], vec![2.0, 4.0, 6.0]];
        assert!(distribution_converged(&r, &runs));
        // Earlier {1, 2}, last {3, 4}: D = 1, p = 2/6 = 0.333: above 0.05, below 0.5.
        let runs = vec![vec![1.0, 2.0], vec![3.0, 4.0]];
        assert!(distribution_converged(&r, &runs));
        let strict = rule(ConvergenceMode::Distribution, Some(0.5));
        assert!(!distribution_converged(&strict, &runs));
        // One run, or fewer than two values on a side: never.
        assert!(!distribution_converged(&r, &runs[..1]));
        assert!(!distribution_converged(&r, &[vec![1.0, 2.0], vec![3.0]]));
        // The per-run-number rule never fires for this mode.
        assert!(!converged(&r, &[1.0, 1.0, 1.0], 0.95));
    }

    #[test]
    fn request_values_are_the_profiling_records_without_errors() {
        let tmp = tempfile::Builder::new()
            .prefix("ib-conv-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let p = dir.join("profile_export.jsonl");
        std::fs::write(
            &p,
            concat!(
                r#"{"metadata":{"benchmark_phase":"warmup"},"metrics":{"ttft":{"value":9}},"error":null}"#,
                "\n",
                r#"{"metadata":{"benchmark_phase":"profiling"},"metrics":{"ttft":{"value":1.5}},"error":null}"#,
                "\n",
                r#"{"metadata":{"benchmark_phase":"profiling"},"metrics":{"ttft":{"value":7}},"error":{"code":500}}"#,
                "\n",
                "not json\n",
                r#"{"metadata":{"benchmark_phase":"profiling"},"metrics":{"other":{"value":3}}}"#,
                "\n",
                r#"{"metadata":{"benchmark_phase":"profiling"},"metrics":{"ttft":{"value":2}}}"#,
                "\n",
            ),
        )
        .unwrap();
        assert_eq!(request_values(&p, "ttft"), vec![1.5, 2.0]);
        assert!(request_values(&dir.join("missing.jsonl"), "ttft").is_empty());
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
