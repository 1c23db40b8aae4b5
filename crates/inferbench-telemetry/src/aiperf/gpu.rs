//! AIPerf 0.13's GPU telemetry from a DCGM exporter (`gpu_telemetry/dcgm_collector.py`,
//! `accumulator.py`, `telemetry_models.py`): one `gpu_telemetry_export.jsonl` line per
//! non-duplicate scrape per GPU (fields renamed and scaled as AIPerf does, through
//! `dcgm::FIELDS`' `aiperf_tag`/`aiperf_scale`), and the `TelemetryExportData` block its
//! summary JSON carries (key `telemetry_data` in 0.13's `profile_export_aiperf.json`): per
//! GPU, each gauge's nan-aware statistics (ddof = 1) over the profiling window and each
//! counter's clamped `last − reference` delta, the window ending 666 ms after the profiling
//! end as AIPerf's does. AIPerf stamps a DCGM sample with the time it
//! parsed the body, so the sample time here is the scrape's end. DCGM "blank" sentinels are
//! kept as values, as AIPerf keeps them.

use serde_json::{Map, Value, json};

use crate::dcgm;
use crate::expo;
use crate::scrape::{ScrapeLog, TargetKind};

use super::json::iso_local;
use super::numpy;
use super::series::ok;
use super::{GpuTelemetryExport, Meta};

pub(crate) const FINAL_SCRAPE_GRACE_NS: u64 = 666_000_000;

/// AIPerf's NVIDIA metrics in its table order: (tag, unit, counter?).
const METRICS: &[(&str, &str, bool)] = &[
    ("nvidia_power_usage", "W", false),
    ("nvidia_energy_consumption", "MJ", true),
    ("nvidia_gpu_utilization", "%", false),
    ("nvidia_memory_utilization", "%", false),
    ("nvidia_memory_used", "GB", false),
    ("nvidia_temperature", "°C", false),
    ("nvidia_sm_utilization", "%", false),
    ("nvidia_decoder_utilization", "%", false),
    ("nvidia_encoder_utilization", "%", false),
    ("nvidia_jpg_utilization", "%", false),
    ("nvidia_xid_errors", "count", true),
    ("nvidia_power_violation", "us", true),
];

#[derive(Clone, Debug, Default, PartialEq)]
struct GpuMeta {
    index: i64,
    uuid: Option<String>,
    model: Option<String>,
    pci_bus_id: Option<String>,
    device: Option<String>,
    hostname: Option<String>,
    namespace: Option<String>,
    pod: Option<String>,
}

/// One GPU's samples: timestamps and, per tag, one value per timestamp (NaN where absent).
#[derive(Debug)]
pub(crate) struct Gpu {
    meta: GpuMeta,
    uuid: String,
    ts: Vec<i64>,
    fields: Vec<(&'static str, Vec<f64>)>,
}

impl Gpu {
    /// AIPerf's result for one tag over `[start, end]` (a counter's clamped delta in
    /// `avg`), as JSON.
    pub(crate) fn result(&self, tag: &str, start: i64, end: i64) -> Option<Value> {
        let (_, unit, counter) = METRICS.iter().find(|(t, _, _)| *t == tag)?;
        let (_, col) = self.fields.iter().find(|(n, _)| *n == tag)?;
        metric(&self.ts, col, start, end, unit, *counter)
    }

    fn push(&mut self, t: i64, values: &[(&'static str, f64)]) {
        let i = self.ts.partition_point(|&x| x <= t);
        self.ts.insert(i, t);
        for (tag, _) in values {
            if !self.fields.iter().any(|(n, _)| n == tag) {
                self.fields.push((tag, vec![f64::NAN; self.ts.len() - 1]));
            }
        }
        for (tag, col) in self.fields.iter_mut() {
            let v = values
                .iter()
                .find(|(n, _)| n == tag)
                .map_or(f64::NAN, |(_, v)| *v);
            col.insert(i, v);
        }
    }
}

fn label<'a>(labels: &'a [(String, String)], key: &str) -> Option<&'a str> {
    labels
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// One scrape's records: (metadata, scaled values) per GPU, in AIPerf's order.
fn records(e: &expo::Exposition) -> Vec<(GpuMeta, Vec<(&'static str, f64)>)> {
    let mut metas: Vec<GpuMeta> = Vec::new();
    let mut data: Vec<(i64, Vec<(&'static str, f64)>)> = Vec::new();
    for f in &e.families {
        for s in &f.samples {
            if !s.value.is_finite() {
                continue;
            }
            let Some(index) = label(&s.labels, "gpu").and_then(|g| g.trim().parse::<i64>().ok())
            else {
                continue;
            };
            if !metas.iter().any(|m| m.index == index) {
                let get = |k: &str| label(&s.labels, k).map(str::to_string);
                metas.push(GpuMeta {
                    index,
                    uuid: get("UUID"),
                    model: get("modelName"),
                    pci_bus_id: get("pci_bus_id"),
                    device: get("device"),
                    hostname: get("Hostname"),
                    namespace: get("namespace"),
                    pod: get("pod"),
                });
            }
            let base = s.name.strip_suffix("_total").unwrap_or(&s.name);
            let Some((tag, scale)) =
                dcgm::field(base).and_then(|d| Some((d.aiperf_tag?, d.aiperf_scale)))
            else {
                continue;
            };
            let i = match data.iter().position(|(g, _)| *g == index) {
                Some(i) => i,
                None => {
                    data.push((index, Vec::new()));
                    data.len() - 1
                }
            };
            let v = s.value * scale;
            match data[i].1.iter_mut().find(|(t, _)| *t == tag) {
                Some(x) => x.1 = v,
                None => data[i].1.push((tag, v)),
            }
        }
    }
    data.into_iter()
        .filter_map(|(index, values)| {
            let m = metas.iter().find(|m| m.index == index)?.clone();
            // AIPerf's GPU metadata requires a UUID and a model name.
            (m.uuid.is_some() && m.model.is_some()).then_some((m, values))
        })
        .collect()
}

fn jsonl_line(m: &GpuMeta, t: i64, url: &str, values: &[(&'static str, f64)]) -> String {
    let mut o = Map::new();
    o.insert("gpu_index".into(), json!(m.index));
    o.insert("gpu_uuid".into(), json!(m.uuid));
    o.insert("gpu_model_name".into(), json!(m.model));
    for (k, v) in [
        ("pci_bus_id", &m.pci_bus_id),
        ("device", &m.device),
        ("hostname", &m.hostname),
        ("namespace", &m.namespace),
        ("pod_name", &m.pod),
    ] {
        if let Some(v) = v {
            o.insert(k.into(), json!(v));
        }
    }
    o.insert("platform".into(), json!("nvidia"));
    o.insert("timestamp_ns".into(), json!(t));
    o.insert("telemetry_source_url".into(), json!(url));
    let mut d = Map::new();
    for (tag, _, _) in METRICS {
        if let Some((_, v)) = values.iter().find(|(n, _)| n == tag) {
            d.insert(tag.to_string(), json!(v));
        }
    }
    o.insert("telemetry_data".into(), Value::Object(d));
    Value::Object(o).to_string()
}

/// Every GPU target's kept scrapes: the jsonl text and, per source URL, its GPUs.
pub(crate) struct Collected {
    pub jsonl: String,
    pub sources: Vec<(String, Vec<Gpu>)>,
}

pub(crate) fn collect(log: &ScrapeLog, meta: &Meta<'_>) -> Collected {
    let mut jsonl = String::new();
    // Per source URL, its GPUs by UUID in first-seen order.
    let mut sources: Vec<(String, Vec<Gpu>)> = Vec::new();
    for target in log
        .header
        .targets
        .iter()
        .filter(|t| t.kind == TargetKind::Gpu)
    {
        let mut last: Option<&str> = None;
        for s in log.of_target(target.index) {
            let Some(body) = log.body_of(s).filter(|_| ok(s)) else {
                continue;
            };
            // AIPerf drops a DCGM scrape identical to the one before.
            let duplicate = last == Some(body);
            last = Some(body);
            if duplicate || body.trim().is_empty() {
                continue;
            }
            let Ok(parsed) = expo::parse(body, s.content_type.as_deref()) else {
                continue;
            };
            let t = (meta.anchor_unix_ns + s.end_ns) as i64;
            for (m, values) in records(&parsed) {
                jsonl.push_str(&jsonl_line(&m, t, &target.url, &values));
                jsonl.push('\n');
                let i = match sources.iter().position(|(u, _)| *u == target.url) {
                    Some(i) => i,
                    None => {
                        sources.push((target.url.clone(), Vec::new()));
                        sources.len() - 1
                    }
                };
                let uuid = m.uuid.clone().unwrap_or_default();
                let gpus = &mut sources[i].1;
                let g = match gpus.iter().position(|g| g.uuid == uuid) {
                    Some(g) => g,
                    None => {
                        gpus.push(Gpu {
                            meta: m.clone(),
                            uuid,
                            ts: Vec::new(),
                            fields: Vec::new(),
                        });
                        gpus.len() - 1
                    }
                };
                if !values.is_empty() {
                    gpus[g].push(t, &values);
                }
            }
        }
    }
    Collected { jsonl, sources }
}

pub(crate) fn export(log: &ScrapeLog, meta: &Meta<'_>) -> Option<GpuTelemetryExport> {
    let Collected { jsonl, sources } = collect(log, meta);
    if sources.is_empty() {
        return None;
    }
    let start = (meta.anchor_unix_ns + meta.windows.profiling.start_ns) as i64;
    // AIPerf ends the GPU window 666 ms after the profiling end
    // (AIPERF_GPU_FINAL_SCRAPE_GRACE_NS), to take the trailing scrape.
    let end = (meta.anchor_unix_ns + meta.windows.profiling.end_ns + FINAL_SCRAPE_GRACE_NS) as i64;
    let urls: Vec<&String> = sources.iter().map(|(u, _)| u).collect();
    let mut endpoints = Map::new();
    for (url, gpus) in &sources {
        let mut by_gpu = Map::new();
        for g in gpus {
            let mut metrics = Map::new();
            for (tag, unit, counter) in METRICS {
                let Some((_, col)) = g.fields.iter().find(|(n, _)| n == tag) else {
                    continue;
                };
                if let Some(v) = metric(&g.ts, col, start, end, unit, *counter) {
                    metrics.insert(tag.to_string(), v);
                }
            }
            let mut o = Map::new();
            o.insert("gpu_index".into(), json!(g.meta.index));
            o.insert("gpu_name".into(), json!(g.meta.model));
            o.insert("gpu_uuid".into(), json!(g.uuid));
            o.insert("platform".into(), json!("nvidia"));
            if let Some(h) = &g.meta.hostname {
                o.insert("hostname".into(), json!(h));
            }
            if let Some(n) = &g.meta.namespace {
                o.insert("namespace".into(), json!(n));
            }
            if let Some(p) = &g.meta.pod {
                o.insert("pod_name".into(), json!(p));
            }
            o.insert("metrics".into(), Value::Object(metrics));
            by_gpu.insert(format!("gpu_{}", g.meta.index), Value::Object(o));
        }
        endpoints.insert(super::csv::endpoint_display(url), json!({ "gpus": by_gpu }));
    }
    let telemetry_results = json!({
        "summary": {
            "endpoints_configured": urls,
            "endpoints_successful": urls,
            "start_time": iso_local(start),
            "end_time": iso_local(end),
        },
        "endpoints": endpoints,
        // The run's client error summary: Meta does not carry it (docs/telemetry.md).
        "error_summary": [],
    });
    Some(GpuTelemetryExport {
        jsonl,
        telemetry_results,
    })
}

fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// One metric's result over `[start, end]`; None where AIPerf has no value.
fn metric(
    ts: &[i64],
    col: &[f64],
    start: i64,
    end: i64,
    unit: &str,
    counter: bool,
) -> Option<Value> {
    let a = ts.partition_point(|&t| t < start);
    let b = ts.partition_point(|&t| t <= end).max(a);
    let window = &col[a..b];
    if window.is_empty() {
        return None;
    }
    let valid: Vec<f64> = window.iter().copied().filter(|v| !v.is_nan()).collect();
    if counter {
        let last = *valid.last()?;
        // The last valid value at or before the sample preceding the window, else the
        // window's first valid value.
        let reference = a
            .checked_sub(1)
            .and_then(|r| col[..=r].iter().rev().find(|v| !v.is_nan()).copied())
            .unwrap_or(valid[0]);
        return Some(json!({"unit": unit, "avg": num((last - reference).max(0.0))}));
    }
    if valid.is_empty() {
        return None;
    }
    let p = numpy::percentiles(&valid);
    let std = if valid.len() > 1 {
        numpy::std(&valid, 1)
    } else {
        0.0
    };
    let mut o = Map::new();
    o.insert("unit".into(), json!(unit));
    o.insert("avg".into(), num(numpy::mean(&valid)));
    for (q, x) in numpy::PERCENTILES.iter().zip(p) {
        o.insert(format!("p{q}"), num(x));
    }
    o.insert("min".into(), num(numpy::min(&valid)));
    o.insert("max".into(), num(numpy::max(&valid)));
    o.insert("std".into(), num(std));
    o.insert("count".into(), json!(window.len()));
    o.insert("sum".into(), num(numpy::sum(&valid)));
    Some(Value::Object(o))
}
