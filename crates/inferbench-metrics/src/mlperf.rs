//! The `mlperf-loadgen` definition set: MLPerf Inference LoadGen's Server-scenario LLM
//! metrics and validity checks, computed from records. Definitions are in
//! `docs/definitions/mlperf-loadgen.md`; in short:
//!
//! - every latency is measured from the **scheduled** issue time (`Record::planned_ns`), so a
//!   client that falls behind its schedule is charged for it (no coordinated omission);
//! - sample latency: scheduled → end of the response; TTFT: scheduled → first token (first
//!   content response, reasoning included); TPOT per sample: (latency − TTFT) / (tokens − 1);
//! - percentiles as LoadGen takes them: the sorted values at index ⌊n · p⌋ (no interpolation),
//!   for p = 50, 90, 95, 97, 99, 99.9 %;
//! - scheduled samples/s = (n − 1) / last scheduled time; completed samples/s = (n − 1) / the
//!   time the last-scheduled sample completed; completed tokens/s = tokens / that time; all
//!   times from the phase start;
//! - verdicts (1 = met, 0 = not): p99 TTFT and p99 TPOT within the limits, minimum duration
//!   (last scheduled time), minimum query count, every sample completed, and the overall
//!   result (VALID only when all hold); the scheduled-vs-completed rate comparison is
//!   reported next to them.

use inferbench_core::summary::{
    ErrorGroup, MetricResult, MetricValue, RecordMetric, RecordMetricValue, Summary,
};
use inferbench_core::{Evidence, Phase, Record, Stats};
use serde_json::Value;

use crate::{Computed, PerRecord};

pub const NAME: &str = "mlperf-loadgen";

const NS_TO_MS: f64 = 1e-6;
const NS_TO_S: f64 = 1e-9;

/// Published Server latency limits (p99 TTFT ms, p99 TPOT ms) of `loadgen/mlperf.conf`.
pub const PUBLISHED_LIMITS: &[(&str, f64, f64)] = &[
    ("llama2-70b", 2000.0, 200.0),
    ("llama2-70b-interactive", 450.0, 40.0),
    ("mixtral-8x7b", 2000.0, 200.0),
    ("llama3_1-405b", 6000.0, 175.0),
    ("llama3_1-405b-interactive", 4500.0, 80.0),
    ("llama3_1-8b", 2000.0, 100.0),
    ("llama3_1-8b-interactive", 500.0, 30.0),
    ("deepseek-r1", 2000.0, 80.0),
    ("deepseek-r1-interactive", 1500.0, 15.0),
    ("gpt-oss-120b", 3000.0, 80.0),
    ("gpt-oss-120b-interactive", 2000.0, 15.0),
];

/// The limits of a published benchmark, by its `mlperf.conf` name.
pub fn published_limits(benchmark: &str) -> Option<(f64, f64)> {
    PUBLISHED_LIMITS
        .iter()
        .find(|(n, _, _)| *n == benchmark)
        .map(|(_, t, p)| (*t, *p))
}

/// What the checks compare against.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// p99 TTFT limit (ms); without it (or the TPOT one) the latency verdict, and so the
    /// overall verdict, is not given.
    pub ttft_limit_ms: Option<f64>,
    pub tpot_limit_ms: Option<f64>,
    /// The percentile the limits apply to (LoadGen: 0.99).
    pub target_percentile: f64,
    /// Minimum duration (s) the last scheduled sample must reach (Server: 600 s).
    pub min_duration_s: f64,
    /// Minimum number of queries issued (LoadGen's `TestSettings` default: 100).
    pub min_query_count: u64,
    /// Relative shortfall of the completed rate below the scheduled rate still counted as
    /// keeping the schedule (inferbench's reading of the two rates LoadGen prints).
    pub qps_tolerance: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            ttft_limit_ms: None,
            tpot_limit_ms: None,
            target_percentile: 0.99,
            min_duration_s: 600.0,
            min_query_count: 100,
            qps_tolerance: 0.01,
        }
    }
}

/// LoadGen's reported percentiles (fractions) and their tag suffixes.
const REPORTED: [(f64, &str); 6] = [
    (0.50, "p50"),
    (0.90, "p90"),
    (0.95, "p95"),
    (0.97, "p97"),
    (0.99, "p99"),
    (0.999, "p99_9"),
];

/// (tag, header, unit), in summary order.
pub const METRICS: &[(&str, &str, &str)] = &[
    ("samples_issued", "Samples issued", "requests"),
    ("samples_completed", "Samples completed", "requests"),
    ("samples_failed", "Samples failed", "requests"),
    (
        "scheduled_samples_per_second",
        "Scheduled samples per second",
        "requests/sec",
    ),
    (
        "completed_samples_per_second",
        "Completed samples per second",
        "requests/sec",
    ),
    (
        "completed_tokens_per_second",
        "Completed tokens per second",
        "tokens/sec",
    ),
    (
        "final_query_scheduled_time",
        "Final query scheduled time",
        "sec",
    ),
    (
        "final_query_done_time",
        "Final query all samples done time",
        "sec",
    ),
    ("latency", "Latency (from scheduled)", "ms"),
    ("latency_p97", "Latency (from scheduled) p97", "ms"),
    ("latency_p99_9", "Latency (from scheduled) p99.9", "ms"),
    ("ttft", "First token latency (from scheduled)", "ms"),
    ("ttft_p97", "First token latency (from scheduled) p97", "ms"),
    (
        "ttft_p99_9",
        "First token latency (from scheduled) p99.9",
        "ms",
    ),
    ("tpot", "Time per output token", "ms"),
    ("tpot_p97", "Time per output token p97", "ms"),
    ("tpot_p99_9", "Time per output token p99.9", "ms"),
    ("issue_delay", "Issue delay (scheduled to sent)", "ms"),
    ("ttft_limit_met", "p99 TTFT within limit", "verdict"),
    ("tpot_limit_met", "p99 TPOT within limit", "verdict"),
    ("min_duration_met", "Min duration satisfied", "verdict"),
    ("min_queries_met", "Min queries satisfied", "verdict"),
    ("all_samples_completed", "Every sample completed", "verdict"),
    ("result_valid", "Result is VALID", "verdict"),
    (
        "schedule_kept",
        "Completed rate kept the scheduled rate",
        "verdict",
    ),
];

fn describe(tag: &str) -> (&'static str, &'static str) {
    crate::table::describe(METRICS, tag)
}

fn result(tag: &str, value: MetricValue) -> MetricResult {
    crate::table::result(METRICS, tag, value)
}

fn scalar(tag: &str, value: f64) -> MetricResult {
    result(tag, MetricValue::Scalar { value })
}

fn verdict(tag: &str, ok: bool) -> MetricResult {
    scalar(tag, if ok { 1.0 } else { 0.0 })
}

/// LoadGen's percentile: `sorted[⌊n · p⌋]` (the index truncated, clamped to the last).
pub fn loadgen_percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 * p) as usize).min(sorted.len() - 1);
    Some(sorted[i])
}

/// Min, max, mean (sum / n) and LoadGen's percentiles of values in ns, converted to ms; the
/// distribution holds p50/p90/p95/p99, the others are returned as (suffix, value) scalars.
fn loadgen_stats(ns: &[f64]) -> (Stats, Vec<(&'static str, f64)>) {
    let mut sorted = ns.to_vec();
    sorted.sort_by(f64::total_cmp);
    let pct = |p: f64| loadgen_percentile(&sorted, p).map(|v| v * NS_TO_MS);
    let sum: f64 = ns.iter().sum();
    let stats = Stats {
        avg: (!ns.is_empty()).then(|| sum / ns.len() as f64 * NS_TO_MS),
        p50: pct(0.50),
        p90: pct(0.90),
        p95: pct(0.95),
        p99: pct(0.99),
        min: sorted.first().map(|v| v * NS_TO_MS),
        max: sorted.last().map(|v| v * NS_TO_MS),
        count: ns.len() as u64,
        sum: (!ns.is_empty()).then_some(sum * NS_TO_MS),
        ..Default::default()
    };
    let extra = REPORTED
        .iter()
        .filter(|(_, s)| matches!(*s, "p97" | "p99_9"))
        .filter_map(|(p, s)| pct(*p).map(|v| (*s, v)))
        .collect();
    (stats, extra)
}

/// Tokens the SUT reports for a sample: every generated token (output + reasoning) from the
/// client counts, or `usage.completion_tokens` with `use_server_token_count`.
fn sample_tokens(r: &Record, server: bool) -> Option<u64> {
    if server {
        r.last_usage()?
            .get("completion_tokens")
            .and_then(Value::as_u64)
    } else {
        let o = r.tokens.output?;
        Some(o + r.tokens.reasoning.unwrap_or(0))
    }
}

/// A sample's values in ns from its scheduled time.
struct Sample {
    latency: u64,
    ttft: u64,
    tpot: Option<f64>,
    tokens: u64,
}

fn sample_of(r: &Record, server: bool) -> Option<Sample> {
    let first = r.text_events().next()?.t_ns;
    let latency = r.end_ns.saturating_sub(r.planned_ns);
    let ttft = first.saturating_sub(r.planned_ns);
    let tokens = sample_tokens(r, server).unwrap_or(0);
    let tpot = (tokens > 1).then(|| latency.saturating_sub(ttft) as f64 / (tokens - 1) as f64);
    Some(Sample {
        latency,
        ttft,
        tpot,
        tokens,
    })
}

fn record_metric(tag: &'static str, v: f64) -> RecordMetric {
    RecordMetric {
        tag: std::borrow::Cow::Borrowed(tag),
        unit: std::borrow::Cow::Borrowed(describe(tag).1),
        value: RecordMetricValue::Float(v),
    }
}

/// `mlperf-loadgen` metrics of one phase with the default settings (no latency limits: the
/// latency and overall verdicts are not given).
pub fn compute(evidence: &Evidence, phase: Phase) -> Computed {
    compute_with(evidence, phase, &Settings::default())
}

/// `mlperf-loadgen` metrics of one phase, checked against `settings`.
pub fn compute_with(evidence: &Evidence, phase: Phase, settings: &Settings) -> Computed {
    let server = evidence.header.use_server_token_count;
    let records: Vec<&Record> = evidence.records_of(phase).collect();
    let mut samples: Vec<Sample> = Vec::new();
    let mut per_record = Vec::with_capacity(records.len());
    let mut failed = 0u64;
    let mut errors: Vec<ErrorGroup> = Vec::new();
    let mut issue_delays: Vec<f64> = Vec::new();
    for r in &records {
        issue_delays.push(r.start_ns.saturating_sub(r.planned_ns) as f64);
        let sample = if r.error.is_some() || r.cancelled {
            None
        } else {
            sample_of(r, server)
        };
        let Some(s) = sample else {
            failed += 1;
            let (code, ty, msg) = match &r.error {
                Some(e) => (e.code, e.error_type.clone(), e.message.clone()),
                None if r.cancelled => (None, "Cancelled".into(), "request was cancelled".into()),
                None => (None, "NoTokens".into(), "no token was received".into()),
            };
            crate::table::count_error(&mut errors, code, ty, msg);
            per_record.push(PerRecord {
                id: r.id,
                metrics: Vec::new(),
            });
            continue;
        };
        let mut m = vec![
            record_metric("latency", s.latency as f64 * NS_TO_MS),
            record_metric("ttft", s.ttft as f64 * NS_TO_MS),
        ];
        if let Some(t) = s.tpot {
            m.push(record_metric("tpot", t * NS_TO_MS));
        }
        per_record.push(PerRecord {
            id: r.id,
            metrics: m,
        });
        samples.push(s);
    }

    let issued = records.len() as u64;
    let completed = samples.len() as u64;
    let mut out = vec![
        scalar("samples_issued", issued as f64),
        scalar("samples_completed", completed as f64),
        scalar("samples_failed", failed as f64),
    ];

    // Times from the start of the test: when the phase began issuing.
    let origin = evidence
        .window(phase)
        .map(|w| w.start_ns)
        .or_else(|| records.iter().map(|r| r.planned_ns.min(r.start_ns)).min());
    // The final query: the last one scheduled (ties: the later record).
    let last = records.iter().max_by_key(|r| (r.planned_ns, r.id));
    let mut sched_qps = None;
    let mut done_qps = None;
    let mut final_sched_s = None;
    if let (Some(origin), Some(last)) = (origin, last) {
        let sched_s = last.planned_ns.saturating_sub(origin) as f64 * NS_TO_S;
        let done_s = last.end_ns.saturating_sub(origin) as f64 * NS_TO_S;
        final_sched_s = Some(sched_s);
        out.push(scalar("final_query_scheduled_time", sched_s));
        out.push(scalar("final_query_done_time", done_s));
        let n1 = issued.saturating_sub(1) as f64;
        if sched_s > 0.0 {
            sched_qps = Some(n1 / sched_s);
        }
        if done_s > 0.0 {
            done_qps = Some(n1 / done_s);
            let tokens: u64 = samples.iter().map(|s| s.tokens).sum();
            out.push(scalar(
                "completed_tokens_per_second",
                tokens as f64 / done_s,
            ));
        }
    }
    if let Some(q) = sched_qps {
        out.push(scalar("scheduled_samples_per_second", q));
    }
    if let Some(q) = done_qps {
        out.push(scalar("completed_samples_per_second", q));
    }

    let latencies: Vec<f64> = samples.iter().map(|s| s.latency as f64).collect();
    let ttfts: Vec<f64> = samples.iter().map(|s| s.ttft as f64).collect();
    let tpots: Vec<f64> = samples.iter().filter_map(|s| s.tpot).collect();
    for (tag, values) in [("latency", &latencies), ("ttft", &ttfts), ("tpot", &tpots)] {
        if values.is_empty() {
            continue;
        }
        let (stats, extra) = loadgen_stats(values);
        out.push(result(tag, MetricValue::Distribution { stats }));
        for (suffix, v) in extra {
            let t = format!("{tag}_{suffix}");
            out.push(scalar(&t, v));
        }
    }
    if !issue_delays.is_empty() {
        let (stats, _) = loadgen_stats(&issue_delays);
        out.push(result("issue_delay", MetricValue::Distribution { stats }));
    }

    // Verdicts.
    let mut sorted_ttft = ttfts.clone();
    sorted_ttft.sort_by(f64::total_cmp);
    let mut sorted_tpot = tpots.clone();
    sorted_tpot.sort_by(f64::total_cmp);
    let within = |sorted: &[f64], limit: Option<f64>| -> Option<bool> {
        let limit = limit?;
        // No value (e.g. no sample with 2 tokens) cannot break the limit.
        Some(
            loadgen_percentile(sorted, settings.target_percentile)
                .is_none_or(|v| v * NS_TO_MS <= limit),
        )
    };
    let ttft_ok = within(&sorted_ttft, settings.ttft_limit_ms);
    let tpot_ok = within(&sorted_tpot, settings.tpot_limit_ms);
    if let Some(ok) = ttft_ok {
        out.push(verdict("ttft_limit_met", ok));
    }
    if let Some(ok) = tpot_ok {
        out.push(verdict("tpot_limit_met", ok));
    }
    let duration_ok = final_sched_s.is_some_and(|s| s >= settings.min_duration_s);
    let queries_ok = issued >= settings.min_query_count;
    let all_done = failed == 0 && issued > 0;
    out.push(verdict("min_duration_met", duration_ok));
    out.push(verdict("min_queries_met", queries_ok));
    out.push(verdict("all_samples_completed", all_done));
    if let (Some(t), Some(p)) = (ttft_ok, tpot_ok) {
        out.push(verdict(
            "result_valid",
            t && p && duration_ok && queries_ok && all_done,
        ));
    }
    if let (Some(s), Some(d)) = (sched_qps, done_qps) {
        out.push(verdict(
            "schedule_kept",
            d >= s * (1.0 - settings.qps_tolerance),
        ));
    }

    errors.sort_by_key(|g| std::cmp::Reverse(g.count));
    Computed {
        summary: Summary {
            definitions: NAME.to_string(),
            metrics: out,
            error_summary: errors,
        },
        per_record,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loadgen_percentile_truncates_the_index() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        // ⌊10 · 0.5⌋ = 5 → the 6th value; ⌊10 · 0.99⌋ = 9 → the last; ⌊10 · 0.95⌋ = 9.
        assert_eq!(loadgen_percentile(&v, 0.5), Some(6.0));
        assert_eq!(loadgen_percentile(&v, 0.99), Some(10.0));
        assert_eq!(loadgen_percentile(&v, 0.95), Some(10.0));
        assert_eq!(loadgen_percentile(&v, 0.9), Some(10.0));
        assert_eq!(loadgen_percentile(&v, 0.0), Some(1.0));
        assert_eq!(loadgen_percentile(&[], 0.5), None);
    }

    #[test]
    fn published_limits_are_looked_up_by_name() {
        assert_eq!(published_limits("llama2-70b"), Some((2000.0, 200.0)));
        assert_eq!(
            published_limits("deepseek-r1-interactive"),
            Some((1500.0, 15.0))
        );
        assert_eq!(published_limits("nope"), None);
    }
}
