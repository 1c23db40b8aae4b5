//! `profile_export_aiperf.json`: AIPerf's summary JSON (schema 1.4).

use std::path::{Path, PathBuf};

use inferbench_core::time::iso_utc_micros;
use inferbench_core::{MetricResult, MetricValue, RunPlan, Summary, TOOL_NAME, TOOL_VERSION};
use serde_json::{Map, Value, json};

use crate::atomic::write_atomic;
use crate::{ArtifactError, Result};

pub const SCHEMA_VERSION: &str = "1.4";

/// Metrics that AIPerf's `JsonExportData` declares as fields, in its order. Pydantic writes
/// these first, then its other declared fields (`input_config` … `end_time`), then every other
/// metric (its `extra` fields) in result order; the fixtures show exactly that layout.
pub const DECLARED_METRICS: [&str; 25] = [
    "request_throughput",
    "request_latency",
    "request_count",
    "time_to_first_token",
    "time_to_second_token",
    "inter_token_latency",
    "output_token_throughput",
    "output_token_throughput_per_user",
    "output_sequence_length",
    "input_sequence_length",
    "goodput",
    "good_request_count",
    "output_token_count",
    "reasoning_token_count",
    "min_request_timestamp",
    "max_response_timestamp",
    "inter_chunk_latency",
    "total_output_tokens",
    "total_reasoning_tokens",
    "benchmark_duration",
    "total_isl",
    "total_osl",
    "error_request_count",
    "error_isl",
    "total_error_isl",
];

/// Run-level facts of a live run's summary JSON besides the metrics.
#[derive(Clone, Copy, Debug)]
pub struct SummaryInfo<'a> {
    pub benchmark_id: &'a str,
    pub plan: &'a RunPlan,
    /// Wall clock (Unix ns) of the profiling phase's start and of its last request's end.
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    /// True when the run was stopped early (Ctrl-C) or failed.
    pub was_cancelled: bool,
    pub is_complete: bool,
}

/// Where `input_config` and the plan's parts of `run_info` come from.
#[derive(Clone, Copy, Debug)]
pub enum RunConfig<'a> {
    /// A live run: `input_config` is the plan in AIPerf's shape (`input_config.rs`); `run_info`
    /// takes its seed and command line.
    Plan(&'a RunPlan),
    /// A run with no plan (imported): the tool's own `input_config` when it kept one, written
    /// as it was; without one the key is left out. `run_info` then has no `random_seed` or
    /// `cli_command` (they come from the plan).
    Imported(Option<&'a Value>),
}

/// Run-level facts of AIPerf's summary JSON, for a run with or without a [`RunPlan`].
#[derive(Clone, Copy, Debug)]
pub struct AiperfSummaryInfo<'a> {
    pub benchmark_id: &'a str,
    pub config: RunConfig<'a>,
    /// Wall clock (Unix ns) of the profiling phase's start and of its last request's end;
    /// `start_time` / `end_time` are left out when unknown.
    pub start_unix_ns: Option<u64>,
    pub end_unix_ns: Option<u64>,
    pub was_cancelled: bool,
    pub is_complete: bool,
}

impl<'a> From<&SummaryInfo<'a>> for AiperfSummaryInfo<'a> {
    fn from(i: &SummaryInfo<'a>) -> Self {
        AiperfSummaryInfo {
            benchmark_id: i.benchmark_id,
            config: RunConfig::Plan(i.plan),
            start_unix_ns: Some(i.start_unix_ns),
            end_unix_ns: Some(i.end_unix_ns),
            was_cancelled: i.was_cancelled,
            is_complete: i.is_complete,
        }
    }
}

/// `aiperf_version` value: the key is kept for parsers, the value names this tool.
pub fn tool_version_string() -> String {
    format!("{TOOL_NAME}-{TOOL_VERSION}")
}

fn num(x: f64) -> Option<Value> {
    // A non-finite statistic is left out, as AIPerf does (JSON has no inf/NaN).
    x.is_finite().then(|| json!(x))
}

/// One metric as AIPerf's `JsonMetricResult`: `{unit, avg, p1 … p99, min, max, std, count,
/// sum}` with missing statistics left out; scalars are `{unit, avg}`. `count` is left out when
/// 0 (time-weighted metrics have no sample count, and AIPerf leaves it out for them).
pub fn metric_json(m: &MetricResult) -> Value {
    let mut o = Map::new();
    o.insert("unit".into(), json!(m.unit));
    match &m.value {
        MetricValue::Scalar { value } => {
            if let Some(v) = num(*value) {
                o.insert("avg".into(), v);
            }
        }
        MetricValue::Distribution { stats } => {
            for (name, v) in stats.named() {
                // AIPerf's order puts `count` between `std` and `sum`.
                if name == "sum" && stats.count > 0 {
                    o.insert("count".into(), json!(stats.count));
                }
                if let Some(v) = v.and_then(num) {
                    o.insert(name.into(), v);
                }
            }
        }
    }
    Value::Object(o)
}

fn metrics_object<'a>(metrics: impl Iterator<Item = &'a MetricResult>) -> Map<String, Value> {
    metrics.map(|m| (m.tag.clone(), metric_json(m))).collect()
}

/// Build a live run's summary JSON value. `warmup` is the warmup phase's summary, if there
/// was one (written as `warmup_metrics`; the key is absent otherwise, as in AIPerf runs
/// without one).
pub fn render_summary_json(
    summary: &Summary,
    warmup: Option<&Summary>,
    info: &SummaryInfo<'_>,
) -> Result<Value, serde_json::Error> {
    render_aiperf_summary(summary, warmup, &info.into())
}

/// AIPerf's summary JSON (`profile_export_aiperf.json`) for any run: a live one
/// ([`RunConfig::Plan`]) or one without a plan, such as an imported run re-scored by
/// `metrics --format aiperf` ([`RunConfig::Imported`]). The key order is AIPerf's.
pub fn render_aiperf_summary(
    summary: &Summary,
    warmup: Option<&Summary>,
    info: &AiperfSummaryInfo<'_>,
) -> Result<Value, serde_json::Error> {
    let mut o = Map::new();
    o.insert("schema_version".into(), json!(SCHEMA_VERSION));
    o.insert("aiperf_version".into(), json!(tool_version_string()));
    o.insert("benchmark_id".into(), json!(info.benchmark_id));
    for tag in DECLARED_METRICS {
        if let Some(m) = summary.get(tag) {
            o.insert(tag.into(), metric_json(m));
        }
    }
    let mut run_info = Map::new();
    run_info.insert("benchmark_id".into(), json!(info.benchmark_id));
    match info.config {
        RunConfig::Plan(plan) => {
            o.insert(
                "input_config".into(),
                crate::input_config::aiperf_input_config(plan),
            );
            run_info.insert("random_seed".into(), json!(plan.random_seed));
            run_info.insert("trial".into(), json!(0));
            run_info.insert("cli_command".into(), json!(plan.cli_command));
        }
        RunConfig::Imported(config) => {
            if let Some(c) = config {
                o.insert("input_config".into(), c.clone());
            }
            run_info.insert("trial".into(), json!(0));
        }
    }
    o.insert("run_info".into(), Value::Object(run_info));
    o.insert("was_cancelled".into(), json!(info.was_cancelled));
    o.insert("is_complete".into(), json!(info.is_complete));
    let errors: Vec<Value> = summary
        .error_summary
        .iter()
        .map(|g| {
            let mut d = Map::new();
            if let Some(code) = g.code {
                d.insert("code".into(), json!(code));
            }
            d.insert("type".into(), json!(g.error_type));
            d.insert("message".into(), json!(g.message));
            json!({"error_details": d, "count": g.count})
        })
        .collect();
    o.insert("error_summary".into(), Value::Array(errors));
    if let Some(t) = info.start_unix_ns {
        o.insert("start_time".into(), json!(iso_utc_micros(t)));
    }
    if let Some(t) = info.end_unix_ns {
        o.insert("end_time".into(), json!(iso_utc_micros(t)));
    }
    if let Some(w) = warmup {
        o.insert(
            "warmup_metrics".into(),
            Value::Object(metrics_object(w.metrics.iter())),
        );
    }
    o.extend(metrics_object(
        summary
            .metrics
            .iter()
            .filter(|m| !DECLARED_METRICS.contains(&m.tag.as_str())),
    ));
    Ok(Value::Object(o))
}

/// Write `dir/name` (`profile_export_aiperf.json`), pretty-printed with a 2-space indent and
/// no final newline, like AIPerf.
pub fn write_summary_json(
    dir: &Path,
    name: &str,
    summary: &Summary,
    warmup: Option<&Summary>,
    info: &SummaryInfo<'_>,
) -> Result<PathBuf> {
    write_aiperf_summary(dir, name, summary, warmup, &info.into())
}

/// Write `dir/name` from [`render_aiperf_summary`], as [`write_summary_json`] does.
pub fn write_aiperf_summary(
    dir: &Path,
    name: &str,
    summary: &Summary,
    warmup: Option<&Summary>,
    info: &AiperfSummaryInfo<'_>,
) -> Result<PathBuf> {
    let path = dir.join(name);
    let v =
        render_aiperf_summary(summary, warmup, info).map_err(|e| ArtifactError::json(&path, e))?;
    let bytes = serde_json::to_vec_pretty(&v).map_err(|e| ArtifactError::json(&path, e))?;
    write_atomic(dir, name, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::summary::ErrorGroup;

    fn summary() -> Summary {
        Summary {
            definitions: "aiperf-0.13".into(),
            metrics: vec![
                MetricResult {
                    tag: "effective_concurrency".into(),
                    header: "Effective Concurrency".into(),
                    unit: "requests".into(),
                    value: MetricValue::Scalar { value: 2.5 },
                },
                MetricResult {
                    tag: "request_count".into(),
                    header: "Request Count".into(),
                    unit: "requests".into(),
                    value: MetricValue::Scalar { value: 4.0 },
                },
            ],
            error_summary: vec![ErrorGroup {
                code: Some(500),
                error_type: "E".into(),
                message: "m".into(),
                count: 1,
            }],
        }
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn an_imported_run_keeps_its_own_input_config_in_aiperf_order() {
        let config = json!({"endpoint": {"type": "chat"}});
        let info = AiperfSummaryInfo {
            benchmark_id: "b",
            config: RunConfig::Imported(Some(&config)),
            start_unix_ns: Some(0),
            end_unix_ns: Some(1_000),
            was_cancelled: false,
            is_complete: true,
        };
        let v = render_aiperf_summary(&summary(), None, &info).unwrap();
        assert_eq!(
            keys(&v),
            [
                "schema_version",
                "aiperf_version",
                "benchmark_id",
                "request_count",
                "input_config",
                "run_info",
                "was_cancelled",
                "is_complete",
                "error_summary",
                "start_time",
                "end_time",
                "effective_concurrency",
            ]
        );
        assert_eq!(v["input_config"], config);
        // Without a plan, run_info has no seed or command line.
        assert_eq!(v["run_info"], json!({"benchmark_id": "b", "trial": 0}));
        assert_eq!(v["request_count"], json!({"unit": "requests", "avg": 4.0}));
        assert_eq!(v["start_time"], json!("1970-01-01T00:00:00.000000"));
    }

    #[test]
    fn without_a_config_or_times_their_keys_are_left_out() {
        let info = AiperfSummaryInfo {
            benchmark_id: "b",
            config: RunConfig::Imported(None),
            start_unix_ns: None,
            end_unix_ns: None,
            was_cancelled: true,
            is_complete: false,
        };
        let v = render_aiperf_summary(&summary(), None, &info).unwrap();
        for absent in ["input_config", "start_time", "end_time"] {
            assert!(v.get(absent).is_none(), "{absent}");
        }
        assert_eq!(v["was_cancelled"], json!(true));
        assert_eq!(
            v["error_summary"],
            json!([{"error_details": {"code": 500, "type": "E", "message": "m"}, "count": 1}])
        );
    }
}
