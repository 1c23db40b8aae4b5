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

/// Run-level facts of the summary JSON besides the metrics.
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

/// Build the summary JSON value. `warmup` is the warmup phase's summary, if there was one
/// (written as `warmup_metrics`; the key is absent otherwise, as in AIPerf runs without one).
pub fn render_summary_json(
    summary: &Summary,
    warmup: Option<&Summary>,
    info: &SummaryInfo<'_>,
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
    o.insert("input_config".into(), serde_json::to_value(info.plan)?);
    o.insert(
        "run_info".into(),
        json!({
            "benchmark_id": info.benchmark_id,
            "random_seed": info.plan.random_seed,
            "trial": 0,
            "cli_command": info.plan.cli_command,
        }),
    );
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
    o.insert(
        "start_time".into(),
        json!(iso_utc_micros(info.start_unix_ns)),
    );
    o.insert("end_time".into(), json!(iso_utc_micros(info.end_unix_ns)));
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
    let path = dir.join(name);
    let v =
        render_summary_json(summary, warmup, info).map_err(|e| ArtifactError::json(&path, e))?;
    let bytes = serde_json::to_vec_pretty(&v).map_err(|e| ArtifactError::json(&path, e))?;
    write_atomic(dir, name, &bytes)
}
