//! `server_metrics_export.json` in AIPerf 0.13's shape (`ServerMetricsExportData`, schema
//! 1.1): its key order, its `exclude_none` omissions, its series order, its naive local
//! (here UTC) ISO times. One key differs: AIPerf's optional `aiperf_version` (no reader needs
//! it; legacy exports lack it) is replaced by `inferbench_version`, so a file never claims
//! to come from a program that did not write it.

use serde_json::{Map, Value, json};

use super::Meta;
use super::series::Kind;
use super::stats::{EndpointOut, Info, Results, Stats};
use super::units::infer_unit;

pub(crate) const SCHEMA_VERSION: &str = "1.1";

pub(crate) fn export(r: &Results, meta: &Meta<'_>) -> Value {
    let mut summary = Map::new();
    summary.insert("endpoints_configured".into(), json!(r.endpoints));
    summary.insert("endpoints_successful".into(), json!(r.endpoints));
    summary.insert("start_time".into(), json!(iso_local(r.start_ns)));
    summary.insert("end_time".into(), json!(iso_local(r.end_ns)));
    let mut infos: Vec<(&str, &Info)> = r
        .profiling
        .iter()
        .map(|e| (e.url.as_str(), &e.info))
        .collect();
    infos.sort_by(|a, b| a.0.cmp(b.0));
    infos.dedup_by(|a, b| a.0 == b.0);
    if !infos.is_empty() {
        let m: Map<String, Value> = infos
            .into_iter()
            .map(|(u, i)| (u.to_string(), info_json(i)))
            .collect();
        summary.insert("endpoint_info".into(), Value::Object(m));
    }
    let mut ranges = Map::new();
    if r.start_ns < r.end_ns {
        ranges.insert(
            "profiling".into(),
            json!({"start_ns": r.start_ns, "end_ns": r.end_ns}),
        );
    }
    if let Some(w) = r.warmup_range {
        ranges.insert(
            "warmup".into(),
            json!({"start_ns": w.start, "end_ns": w.end}),
        );
    }
    summary.insert("phase_time_ranges".into(), Value::Object(ranges));

    let mut top = Map::new();
    top.insert("schema_version".into(), json!(SCHEMA_VERSION));
    top.insert(
        "inferbench_version".into(),
        json!(env!("CARGO_PKG_VERSION")),
    );
    top.insert("benchmark_id".into(), json!(meta.benchmark_id));
    top.insert("summary".into(), Value::Object(summary));
    top.insert("metrics_phase".into(), json!("profiling"));
    top.insert("metrics".into(), metrics_json(&r.profiling));
    let warmup = metrics_json(&r.warmup);
    if warmup.as_object().is_some_and(|m| !m.is_empty()) {
        top.insert("warmup_metrics".into(), warmup);
    }
    top.insert("input_config".into(), meta.input_config.clone());
    Value::Object(top)
}

fn info_json(i: &Info) -> Value {
    let mut m = Map::new();
    m.insert("total_fetches".into(), json!(i.total_fetches));
    m.insert("first_fetch_ns".into(), json!(i.first_fetch_ns));
    m.insert("last_fetch_ns".into(), json!(i.last_fetch_ns));
    m.insert("avg_fetch_latency_ms".into(), num(i.avg_fetch_latency_ms));
    m.insert("unique_updates".into(), json!(i.unique_updates));
    m.insert("first_update_ns".into(), json!(i.first_update_ns));
    m.insert("last_update_ns".into(), json!(i.last_update_ns));
    m.insert("duration_seconds".into(), num(i.duration_seconds));
    m.insert(
        "avg_update_interval_ms".into(),
        num(i.avg_update_interval_ms),
    );
    if let Some(x) = i.median_update_interval_ms {
        m.insert("median_update_interval_ms".into(), num(x));
    }
    Value::Object(m)
}

/// A float as AIPerf writes it: non-finite values become null (its `scrub_non_finite`).
fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// Python's `repr` of a label dict, AIPerf's series sort key (`str(labels)`).
pub(crate) fn labels_repr(labels: &[(String, String)]) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| {
            format!(
                "{}: {}",
                inferbench_core::py::str_repr(k),
                inferbench_core::py::str_repr(v)
            )
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

pub(crate) fn stats_json(s: &Stats) -> (Value, Option<Value>) {
    match s {
        Stats::Counter { total, rate, .. } => {
            (json!({"total": num(*total), "rate": num(*rate)}), None)
        }
        Stats::Gauge(v) => {
            let keys = [
                "avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95",
                "p99",
            ];
            let m: Map<String, Value> = keys
                .iter()
                .zip(v)
                .map(|(k, x)| (k.to_string(), num(*x)))
                .collect();
            (Value::Object(m), None)
        }
        Stats::Histogram {
            count,
            rest,
            buckets,
            ..
        } => {
            let mut m = Map::new();
            m.insert("count".into(), json!(count));
            if let Some(r) = rest {
                m.insert("sum".into(), num(r.sum));
                m.insert("avg".into(), num(r.avg));
                if let Some(x) = r.count_rate {
                    m.insert("count_rate".into(), num(x));
                }
                if let Some(x) = r.sum_rate {
                    m.insert("sum_rate".into(), num(x));
                }
                if let Some(e) = r.estimates {
                    for (p, x) in super::numpy::PERCENTILES.iter().zip(e) {
                        m.insert(format!("p{p}_estimate"), num(x));
                    }
                }
            }
            let b = buckets
                .as_ref()
                .map(|b| Value::Object(b.iter().map(|(l, c)| (l.clone(), json!(c))).collect()));
            (Value::Object(m), b)
        }
    }
}

/// Every endpoint's metrics merged by name (first endpoint's type, description and unit),
/// names sorted, series sorted by (endpoint, labels) as AIPerf sorts them.
fn metrics_json(endpoints: &[EndpointOut]) -> Value {
    struct Merged {
        kind: Kind,
        description: String,
        series: Vec<(String, String, Value)>,
    }
    let mut merged: Vec<(String, Merged)> = Vec::new();
    for ep in endpoints {
        for m in &ep.metrics {
            let i = match merged.iter().position(|(n, _)| *n == m.name) {
                Some(i) => i,
                None => {
                    merged.push((
                        m.name.clone(),
                        Merged {
                            kind: m.kind,
                            description: m.description.clone(),
                            series: Vec::new(),
                        },
                    ));
                    merged.len() - 1
                }
            };
            for s in &m.series {
                let (stats, buckets) = stats_json(&s.stats);
                let mut o = Map::new();
                o.insert("endpoint_url".into(), json!(ep.url));
                if !s.labels.is_empty() {
                    let l: Map<String, Value> = s
                        .labels
                        .iter()
                        .map(|(k, v)| (k.clone(), json!(v)))
                        .collect();
                    o.insert("labels".into(), Value::Object(l));
                }
                o.insert("stats".into(), stats);
                if let Some(b) = buckets {
                    o.insert("buckets".into(), b);
                }
                merged[i]
                    .1
                    .series
                    .push((ep.url.clone(), labels_repr(&s.labels), Value::Object(o)));
            }
        }
    }
    merged.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Map::new();
    for (name, mut m) in merged {
        m.series.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let mut o = Map::new();
        o.insert("type".into(), json!(m.kind.as_str()));
        o.insert("description".into(), json!(m.description));
        if let Some(u) = infer_unit(&name, &m.description) {
            o.insert("unit".into(), json!(u));
        }
        o.insert(
            "series".into(),
            Value::Array(m.series.into_iter().map(|(_, _, v)| v).collect()),
        );
        out.insert(name, Value::Object(o));
    }
    Value::Object(out)
}

/// Python's `datetime.fromtimestamp(ns / 1e9)` (microseconds rounded half-even from the
/// float, as CPython does) in pydantic's ISO form, on a UTC host.
pub(crate) fn iso_local(ns: i64) -> String {
    let t = ns as f64 / 1e9;
    let mut secs = t.trunc();
    let mut us = ((t - secs) * 1e6).round_ties_even();
    if us >= 1e6 {
        us -= 1e6;
        secs += 1.0;
    } else if us < 0.0 {
        us += 1e6;
        secs -= 1.0;
    }
    let secs = secs as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, mo, d) = inferbench_core::time::civil_from_days(days);
    let base = format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    if us == 0.0 {
        base
    } else {
        format!("{base}.{:06}", us as i64)
    }
}
