//! Repeated runs and sweeps: AIPerf 0.13's `aggregate/profile_export_aiperf_aggregate.{json,csv}`
//! (confidence statistics across `--num-profile-runs N`) and
//! `sweep_aggregate/profile_export_aiperf_sweep.{json,csv}` (one row per swept parameter
//! combination). Shapes, key orders and number formats follow real 0.13.0 files; see
//! `docs/file-formats.md`, "Repeated runs and sweeps", for the rules and the differences.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use inferbench_core::{MetricValue, Summary};
use inferbench_metrics::confidence::{AggregateEntry, InvalidConfidenceLevel, aggregate};
use serde_json::{Map, Value, json};

use crate::atomic::write_atomic;
use crate::summary_json::tool_version_string;
use crate::{ArtifactError, Result};

/// `schema_version` of the confidence aggregate JSON (AIPerf versions it apart from the
/// per-run summary).
pub const CONFIDENCE_SCHEMA_VERSION: &str = "1.0";
pub const CONFIDENCE_JSON: &str = "profile_export_aiperf_aggregate.json";
pub const CONFIDENCE_CSV: &str = "profile_export_aiperf_aggregate.csv";
pub const SWEEP_JSON: &str = "profile_export_aiperf_sweep.json";
pub const SWEEP_CSV: &str = "profile_export_aiperf_sweep.csv";

/// AIPerf's `STAT_KEYS` order. Its multi-run files list `<tag>_<stat>` keys in set (hash)
/// order, which no writer can reproduce; its one-run files use metric order × this order, so
/// we use that everywhere and the one-run files come out byte for byte.
const STAT_ORDER: [&str; 14] = [
    "avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std",
];

const PERCENTILES: [&str; 9] = ["p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"];

/// Run-level facts of a confidence aggregate (the `metadata` object and the CSV's last
/// section).
#[derive(Clone, Debug, PartialEq)]
pub struct ConfidenceMeta {
    /// Runs attempted, failed ones included.
    pub num_profile_runs: usize,
    pub num_successful_runs: usize,
    /// Labels of the failed runs.
    pub failed_runs: Vec<String>,
    pub confidence_level: f64,
    /// Labels of the successful runs, e.g. `run_0001`.
    pub run_labels: Vec<String>,
    pub cooldown_seconds: f64,
    /// Written after `cooldown_seconds`, in order (AIPerf's sweeps add `variation_label`,
    /// `variation_values`, `sweep_mode`, `model` here).
    pub extra: Map<String, Value>,
}

/// The JSON key of an aggregated statistic: `<tag>_<stat>`, a scalar's value being `avg`
/// (AIPerf exports scalars as `{unit, avg}` and aggregates that `avg`).
pub fn entry_key(e: &AggregateEntry) -> String {
    format!("{}_{}", e.tag, stat_name(&e.stat))
}

fn stat_name(stat: &str) -> &str {
    if stat == "value" { "avg" } else { stat }
}

/// `entries` grouped by tag (first-appearance order) and, within a tag, in [`STAT_ORDER`].
fn ordered(entries: &[AggregateEntry]) -> Vec<&AggregateEntry> {
    let mut tags: Vec<&str> = Vec::new();
    let mut keyed: Vec<((usize, usize), &AggregateEntry)> = entries
        .iter()
        .map(|e| {
            let t = match tags.iter().position(|t| *t == e.tag) {
                Some(i) => i,
                None => {
                    tags.push(&e.tag);
                    tags.len() - 1
                }
            };
            let s = STAT_ORDER
                .iter()
                .position(|s| *s == stat_name(&e.stat))
                .unwrap_or(STAT_ORDER.len());
            ((t, s), e)
        })
        .collect();
    // Stable: entries with an unknown stat name keep their relative order at the end.
    keyed.sort_by_key(|(k, _)| *k);
    keyed.into_iter().map(|(_, e)| e).collect()
}

/// A JSON number, or `null` when not finite: AIPerf scrubs NaN/inf to `null` and keeps the
/// key.
fn num(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// AIPerf's `failed_runs` items are `{label, error}`; we only know the label.
fn failed_runs_json(labels: &[String]) -> Value {
    Value::Array(
        labels
            .iter()
            .map(|l| json!({"label": l, "error": null}))
            .collect(),
    )
}

fn confidence_metadata(meta: &ConfidenceMeta) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("aggregation_type".into(), json!("confidence"));
    m.insert("num_profile_runs".into(), json!(meta.num_profile_runs));
    m.insert(
        "num_successful_runs".into(),
        json!(meta.num_successful_runs),
    );
    m.insert("failed_runs".into(), failed_runs_json(&meta.failed_runs));
    m.insert("confidence_level".into(), num(meta.confidence_level));
    m.insert("run_labels".into(), json!(meta.run_labels));
    // AIPerf's degraded one-run mode flags itself so readers do not show a zero-width CI.
    if meta.num_successful_runs == 1 {
        m.insert("single_run".into(), json!(true));
    }
    m.insert("cooldown_seconds".into(), num(meta.cooldown_seconds));
    for (k, v) in &meta.extra {
        m.insert(k.clone(), v.clone());
    }
    m
}

/// `profile_export_aiperf_aggregate.json` as a value: `{schema_version, aiperf_version,
/// metadata, metrics}`, each metric `<tag>_<stat>` → `{mean, std, min, max, cv, se, ci_low,
/// ci_high, t_critical, unit}`, non-finite values as `null`.
pub fn confidence_json(entries: &[AggregateEntry], meta: &ConfidenceMeta) -> Value {
    let mut metrics = Map::new();
    for e in ordered(entries) {
        let s = &e.stats;
        metrics.insert(
            entry_key(e),
            json!({
                "mean": num(s.mean),
                "std": num(s.std),
                "min": num(s.min),
                "max": num(s.max),
                "cv": num(s.cv),
                "se": num(s.se),
                "ci_low": num(s.ci_low),
                "ci_high": num(s.ci_high),
                "t_critical": num(s.t_critical),
                "unit": e.unit,
            }),
        );
    }
    json!({
        "schema_version": CONFIDENCE_SCHEMA_VERSION,
        "aiperf_version": tool_version_string(),
        "metadata": confidence_metadata(meta),
        "metrics": metrics,
    })
}

/// The confidence CSV's number format: fixed decimals, `inf`/`-inf` kept, NaN empty.
fn conf_num(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        String::new()
    } else if x == f64::INFINITY {
        "inf".into()
    } else if x == f64::NEG_INFINITY {
        "-inf".into()
    } else {
        format!("{x:.decimals$}")
    }
}

/// `profile_export_aiperf_aggregate.csv`: the metric table (mean/std/min/max/ci with 2
/// decimals, cv/se/t_critical with 4), a blank line, then the metadata rows. CRLF line ends.
/// Takes `meta` because AIPerf writes the metadata section into the CSV too.
pub fn confidence_csv(entries: &[AggregateEntry], meta: &ConfidenceMeta) -> String {
    let mut out = String::new();
    row(
        &mut out,
        [
            "metric",
            "mean",
            "std",
            "min",
            "max",
            "cv",
            "se",
            "ci_low",
            "ci_high",
            "t_critical",
            "unit",
        ]
        .map(String::from),
    );
    for e in ordered(entries) {
        let s = &e.stats;
        row(
            &mut out,
            [
                entry_key(e),
                conf_num(s.mean, 2),
                conf_num(s.std, 2),
                conf_num(s.min, 2),
                conf_num(s.max, 2),
                conf_num(s.cv, 4),
                conf_num(s.se, 4),
                conf_num(s.ci_low, 2),
                conf_num(s.ci_high, 2),
                conf_num(s.t_critical, 4),
                e.unit.clone(),
            ],
        );
    }
    out.push_str("\r\n");
    // AIPerf writes these three from the result's fields and then every key of its metadata
    // dict title-cased (`failed_runs` is a field, not metadata, so it is not in the CSV).
    let meta_json = confidence_metadata(meta);
    row(&mut out, ["Aggregation Type".into(), "confidence".into()]);
    row(
        &mut out,
        ["Total Runs".into(), meta.num_profile_runs.to_string()],
    );
    row(
        &mut out,
        [
            "Successful Runs".into(),
            meta.num_successful_runs.to_string(),
        ],
    );
    for (k, v) in meta_json.iter().skip(4) {
        row(&mut out, [py_title(&k.replace('_', " ")), py_csv_str(v)]);
    }
    out
}

/// Write `dir/profile_export_aiperf_aggregate.json` (2-space indent, no final newline, as
/// AIPerf's orjson) and `.csv`, each atomically. Returns both paths.
pub fn write_confidence(
    dir: &Path,
    entries: &[AggregateEntry],
    meta: &ConfidenceMeta,
) -> Result<Vec<PathBuf>> {
    let json_path = dir.join(CONFIDENCE_JSON);
    let bytes = serde_json::to_vec_pretty(&confidence_json(entries, meta))
        .map_err(|e| ArtifactError::json(&json_path, e))?;
    let a = write_atomic(dir, CONFIDENCE_JSON, &bytes)?;
    let b = write_atomic(
        dir,
        CONFIDENCE_CSV,
        confidence_csv(entries, meta).as_bytes(),
    )?;
    Ok(vec![a, b])
}

// ---------------------------------------------------------------- sweep

/// One swept parameter combination and the successful runs made with it.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepCell {
    /// Display name → value, e.g. `("concurrency", 1)`. AIPerf's order is sorted by the full
    /// (dotted) parameter name.
    pub parameters: Vec<(String, Value)>,
    /// Successful runs only; a cell without any is left out of `per_combination_metrics`.
    pub runs: Vec<Summary>,
}

/// Sweep-wide facts besides the cells.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepMeta {
    /// `repeated` or `independent` (AIPerf's iteration order).
    pub sweep_mode: String,
    /// Runs attempted over the whole sweep, failed ones included.
    pub num_profile_runs: usize,
    pub num_successful_runs: usize,
    /// Labels of the failed runs.
    pub failed_runs: Vec<String>,
    /// Written into `metadata` after `num_trials_per_value` (where AIPerf puts e.g.
    /// `pareto_axes`).
    pub extra: Map<String, Value>,
}

/// The per-cell metric objects, `None` for a cell without runs.
fn cell_metrics(
    cell: &SweepCell,
    level: f64,
) -> Result<Option<Map<String, Value>>, InvalidConfidenceLevel> {
    match cell.runs.as_slice() {
        [] => Ok(None),
        [run] => Ok(Some(one_run_metrics(run))),
        runs => {
            let entries = aggregate(runs, level)?;
            let mut m = Map::new();
            for e in ordered(&entries) {
                let s = &e.stats;
                m.insert(
                    entry_key(e),
                    json!({
                        "mean": num(s.mean),
                        "std": num(s.std),
                        "min": num(s.min),
                        "max": num(s.max),
                        "cv": num(s.cv),
                        "ci_low": num(s.ci_low),
                        "ci_high": num(s.ci_high),
                        "unit": e.unit,
                    }),
                );
            }
            Ok(Some(m))
        }
    }
}

/// AIPerf's one-trial projection of a run's metric, keyed by tag: `mean` = `avg` = the
/// run's average (0 when absent), `min`/`max` the distribution's own (the average for a
/// scalar), `std` = `cv` = 0 and `ci_low` = `ci_high` = the average (one sample has no
/// spread), then the percentiles, `count` and `sum` the metric has.
fn one_run_metrics(run: &Summary) -> Map<String, Value> {
    let mut out = Map::new();
    for m in &run.metrics {
        let avg = m.avg().filter(|v| v.is_finite()).unwrap_or(0.0);
        let stats = m.stats();
        let own = |name: &str| stats.and_then(|s| s.get(name)).filter(|v| v.is_finite());
        let mut o = Map::new();
        o.insert("mean".into(), num(avg));
        o.insert("avg".into(), num(avg));
        o.insert("std".into(), json!(0.0));
        o.insert("min".into(), num(own("min").unwrap_or(avg)));
        o.insert("max".into(), num(own("max").unwrap_or(avg)));
        o.insert("cv".into(), json!(0.0));
        o.insert("ci_low".into(), num(avg));
        o.insert("ci_high".into(), num(avg));
        o.insert("unit".into(), json!(m.unit));
        if let MetricValue::Distribution { stats } = &m.value {
            for p in PERCENTILES {
                if let Some(v) = own(p) {
                    o.insert(p.into(), num(v));
                }
            }
            // A count of 0 means "no sample count" (time-weighted metrics), as in
            // `summary_json::metric_json`.
            if stats.count > 0 {
                o.insert("count".into(), json!(stats.count));
            }
            if let Some(v) = own("sum") {
                o.insert("sum".into(), num(v));
            }
        }
        out.insert(m.tag.clone(), Value::Object(o));
    }
    out
}

fn params_object(cell: &SweepCell) -> Map<String, Value> {
    cell.parameters.iter().cloned().collect()
}

/// `[{name, values}]`: names and values in first-seen order over all cells.
fn sweep_parameters(cells: &[SweepCell]) -> Vec<(String, Vec<Value>)> {
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    for cell in cells {
        for (name, value) in &cell.parameters {
            let i = match out.iter().position(|(n, _)| n == name) {
                Some(i) => i,
                None => {
                    out.push((name.clone(), Vec::new()));
                    out.len() - 1
                }
            };
            if !out[i].1.contains(value) {
                out[i].1.push(value.clone());
            }
        }
    }
    out
}

/// Everything both sweep files are rendered from.
struct SweepModel {
    params: Vec<(String, Vec<Value>)>,
    /// (parameters, metrics) of the cells that have runs, in input order.
    rows: Vec<(Map<String, Value>, Map<String, Value>)>,
    metadata: Map<String, Value>,
    best: Map<String, Value>,
    pareto: Vec<Map<String, Value>>,
}

fn sweep_model(
    cells: &[SweepCell],
    meta: &SweepMeta,
    level: f64,
) -> Result<SweepModel, InvalidConfidenceLevel> {
    let params = sweep_parameters(cells);
    let mut rows = Vec::new();
    for cell in cells {
        if let Some(m) = cell_metrics(cell, level)? {
            rows.push((params_object(cell), m));
        }
    }
    let mut metadata = Map::new();
    metadata.insert(
        "sweep_parameters".into(),
        Value::Array(
            params
                .iter()
                .map(|(n, v)| json!({"name": n, "values": v}))
                .collect(),
        ),
    );
    metadata.insert(
        "num_combinations".into(),
        json!(params.iter().map(|(_, v)| v.len()).product::<usize>()),
    );
    metadata.insert("sweep_mode".into(), json!(meta.sweep_mode));
    metadata.insert("confidence_level".into(), num(level));
    metadata.insert(
        "num_trials_per_value".into(),
        json!(cells.iter().map(|c| c.runs.len()).max().unwrap_or(0)),
    );
    for (k, v) in &meta.extra {
        metadata.insert(k.clone(), v.clone());
    }
    metadata.insert("aggregation_type".into(), json!("sweep"));
    let best = best_configurations(&rows);
    let pareto = pareto_optimal(&rows);
    Ok(SweepModel {
        params,
        rows,
        metadata,
        best,
        pareto,
    })
}

const THROUGHPUT_KEY: &str = "request_throughput_avg";
/// AIPerf prefers TTFT p99 and falls back to request latency p99 (non-streaming).
const LATENCY_KEYS: [&str; 2] = ["time_to_first_token_p99", "request_latency_p99"];

type Row = (Map<String, Value>, Map<String, Value>);

fn mean_of(metrics: &Map<String, Value>, key: &str) -> Option<f64> {
    metrics.get(key)?.get("mean")?.as_f64()
}

/// AIPerf's rule: a key counts only when every row has it. Its keys are the flattened
/// `<tag>_<stat>` ones, which only multi-run cells have (one-run cells are keyed by tag), so
/// a sweep with one run per cell gets `{}` and `[]`, as the real files show.
fn all_have(rows: &[Row], key: &str) -> bool {
    !rows.is_empty() && rows.iter().all(|(_, m)| mean_of(m, key).is_some())
}

fn latency_key(rows: &[Row]) -> Option<&'static str> {
    LATENCY_KEYS.into_iter().find(|k| all_have(rows, k))
}

fn best_entry(row: &Row, key: &str, default_unit: &str) -> Value {
    let unit = row
        .1
        .get(key)
        .and_then(|m| m.get("unit"))
        .cloned()
        .unwrap_or_else(|| json!(default_unit));
    json!({"parameters": row.0, "metric": mean_of(&row.1, key), "unit": unit})
}

/// `best_throughput` (highest mean of `request_throughput_avg`) and `best_latency_p99`
/// (lowest mean of the latency key); ties go to the first row, as Python's `max`/`min`.
fn best_configurations(rows: &[Row]) -> Map<String, Value> {
    let mut best = Map::new();
    let pick = |key: &str, better: Ordering| {
        let mut it = rows.iter();
        let mut b = it.next()?;
        for r in it {
            let (x, y) = (mean_of(&r.1, key)?, mean_of(&b.1, key)?);
            if x.partial_cmp(&y) == Some(better) {
                b = r;
            }
        }
        Some(b)
    };
    let top = all_have(rows, THROUGHPUT_KEY)
        .then(|| pick(THROUGHPUT_KEY, Ordering::Greater))
        .flatten();
    if let Some(r) = top {
        best.insert(
            "best_throughput".into(),
            best_entry(r, THROUGHPUT_KEY, "requests/sec"),
        );
    }
    if let Some((key, r)) = latency_key(rows).and_then(|k| Some((k, pick(k, Ordering::Less)?))) {
        best.insert("best_latency_p99".into(), best_entry(r, key, "ms"));
    }
    best
}

/// Rows no other row dominates on (throughput ↑, latency ↓), sorted by their sorted
/// (name, value) pairs as AIPerf does.
fn pareto_optimal(rows: &[Row]) -> Vec<Map<String, Value>> {
    let Some(lat) = latency_key(rows) else {
        return Vec::new();
    };
    if !all_have(rows, THROUGHPUT_KEY) {
        return Vec::new();
    }
    let point = |r: &Row| {
        (
            mean_of(&r.1, THROUGHPUT_KEY).unwrap_or(f64::NAN),
            mean_of(&r.1, lat).unwrap_or(f64::NAN),
        )
    };
    // Better-or-equal on both and strictly better on one; NaN compares false, as in Python.
    let dominates =
        |a: (f64, f64), b: (f64, f64)| a.0 >= b.0 && a.1 <= b.1 && (a.0 > b.0 || a.1 < b.1);
    let mut out: Vec<Map<String, Value>> = rows
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            !rows
                .iter()
                .enumerate()
                .any(|(j, o)| j != *i && o.0 != r.0 && dominates(point(o), point(r)))
        })
        .map(|(_, r)| r.0.clone())
        .collect();
    out.sort_by(cmp_params);
    out
}

fn cmp_params(a: &Map<String, Value>, b: &Map<String, Value>) -> Ordering {
    let sorted = |m: &Map<String, Value>| {
        let mut v: Vec<(String, Value)> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        v.sort_by(|x, y| x.0.cmp(&y.0));
        v
    };
    let (a, b) = (sorted(a), sorted(b));
    for (x, y) in a.iter().zip(&b) {
        let o = x.0.cmp(&y.0).then_with(|| cmp_value(&x.1, &y.1));
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// Python's ordering for the values a sweep uses (numbers, strings); anything else by its
/// JSON text, where Python would raise.
fn cmp_value(a: &Value, b: &Value) -> Ordering {
    let n = |v: &Value| match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => v.as_f64(),
    };
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => match (n(a), n(b)) {
            (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
            _ => a.to_string().cmp(&b.to_string()),
        },
    }
}

/// `profile_export_aiperf_sweep.json` as a value: `{aggregation_type, num_profile_runs,
/// num_successful_runs, failed_runs, metadata, per_combination_metrics, best_configurations,
/// pareto_optimal}` (no schema or tool version: AIPerf writes none here).
///
/// A cell with one run gets AIPerf's one-trial projection keyed by metric tag; a cell with
/// more gets [`aggregate`]'s statistics keyed `<tag>_<stat>`. Errs only on an invalid
/// `level` (when some cell has two runs or more).
pub fn sweep_json(
    cells: &[SweepCell],
    meta: &SweepMeta,
    level: f64,
) -> Result<Value, InvalidConfidenceLevel> {
    let m = sweep_model(cells, meta, level)?;
    Ok(sweep_json_of(&m, meta))
}

fn sweep_json_of(m: &SweepModel, meta: &SweepMeta) -> Value {
    json!({
        "aggregation_type": "sweep",
        "num_profile_runs": meta.num_profile_runs,
        "num_successful_runs": meta.num_successful_runs,
        "failed_runs": failed_runs_json(&meta.failed_runs),
        "metadata": m.metadata,
        "per_combination_metrics": m.rows.iter()
            .map(|(p, ms)| json!({"parameters": p, "metrics": ms}))
            .collect::<Vec<_>>(),
        "best_configurations": m.best,
        "pareto_optimal": m.pareto,
    })
}

/// The sweep CSV's number format: fixed decimals for floats, integers as they are, empty
/// for missing or non-finite.
fn sweep_num(v: Option<&Value>, decimals: usize) -> String {
    match v {
        Some(Value::Number(n)) if n.is_f64() => match n.as_f64() {
            Some(x) if x.is_finite() => format!("{x:.decimals$}"),
            _ => String::new(),
        },
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// `profile_export_aiperf_sweep.csv`: parameter column(s) then `<key>_{mean,std,min,max,cv}`
/// for every metric key of any cell, sorted; one row per cell with runs; then the "Best
/// Configurations", "Pareto Optimal Points" and "Metadata" sections. CRLF line ends.
pub fn sweep_csv(
    cells: &[SweepCell],
    meta: &SweepMeta,
    level: f64,
) -> Result<String, InvalidConfidenceLevel> {
    let m = sweep_model(cells, meta, level)?;
    Ok(sweep_csv_of(&m, meta))
}

fn sweep_csv_of(m: &SweepModel, meta: &SweepMeta) -> String {
    let names: Vec<&String> = m.params.iter().map(|(n, _)| n).collect();
    let param_cells = |p: &Map<String, Value>| -> Vec<String> {
        names
            .iter()
            .map(|n| p.get(n.as_str()).map(py_csv_str).unwrap_or_default())
            .collect()
    };
    let mut out = String::new();
    if !m.rows.is_empty() {
        let mut keys: Vec<&String> = m.rows.iter().flat_map(|(_, ms)| ms.keys()).collect();
        keys.sort();
        keys.dedup();
        let mut header: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        for k in &keys {
            for s in ["mean", "std", "min", "max", "cv"] {
                header.push(format!("{k}_{s}"));
            }
        }
        row(&mut out, header);
        for (p, ms) in &m.rows {
            let mut r = param_cells(p);
            for k in &keys {
                let d = ms.get(k.as_str());
                let g = |s: &str| d.and_then(|d| d.get(s));
                r.push(sweep_num(g("mean"), 2));
                r.push(sweep_num(g("std"), 2));
                r.push(sweep_num(g("min"), 2));
                r.push(sweep_num(g("max"), 2));
                r.push(sweep_num(g("cv"), 4));
            }
            row(&mut out, r);
        }
    }
    out.push_str("\r\n");
    row(&mut out, ["Best Configurations".to_string()]);
    if !m.best.is_empty() {
        let mut header = vec!["Configuration".to_string()];
        header.extend(names.iter().map(|n| n.to_string()));
        header.extend(["Metric".into(), "Unit".into()]);
        row(&mut out, header);
        for (name, cfg) in &m.best {
            let mut r = vec![py_title(&name.replace('_', " "))];
            let p = cfg.get("parameters").and_then(Value::as_object);
            r.extend(
                p.map(param_cells)
                    .unwrap_or_else(|| vec![String::new(); names.len()]),
            );
            r.push(sweep_num(cfg.get("metric"), 2));
            r.push(cfg.get("unit").map(py_csv_str).unwrap_or_default());
            row(&mut out, r);
        }
    }
    out.push_str("\r\n");
    row(&mut out, ["Pareto Optimal Points".to_string()]);
    if m.pareto.is_empty() {
        row(&mut out, ["None".to_string()]);
    } else {
        row(&mut out, names.iter().map(|n| n.to_string()));
        for p in &m.pareto {
            row(&mut out, param_cells(p));
        }
    }
    out.push_str("\r\n");
    row(&mut out, ["Metadata".to_string()]);
    row(&mut out, ["Field".to_string(), "Value".into()]);
    row(&mut out, ["Aggregation Type".to_string(), "sweep".into()]);
    row(
        &mut out,
        [
            "Sweep Parameters".to_string(),
            names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        ],
    );
    let combos = m.metadata.get("num_combinations").map(py_csv_str);
    row(
        &mut out,
        [
            "Number of Combinations".to_string(),
            combos.unwrap_or_default(),
        ],
    );
    row(
        &mut out,
        [
            "Number of Profile Runs".to_string(),
            meta.num_profile_runs.to_string(),
        ],
    );
    row(
        &mut out,
        [
            "Number of Successful Runs".to_string(),
            meta.num_successful_runs.to_string(),
        ],
    );
    out
}

/// Write `dir/profile_export_aiperf_sweep.json` and `.csv`, each atomically. An invalid
/// `level` is reported against the JSON file.
pub fn write_sweep(
    dir: &Path,
    cells: &[SweepCell],
    meta: &SweepMeta,
    level: f64,
) -> Result<Vec<PathBuf>> {
    let json_path = dir.join(SWEEP_JSON);
    let m = sweep_model(cells, meta, level).map_err(|e| {
        ArtifactError::io(
            &json_path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
        )
    })?;
    let bytes = serde_json::to_vec_pretty(&sweep_json_of(&m, meta))
        .map_err(|e| ArtifactError::json(&json_path, e))?;
    let a = write_atomic(dir, SWEEP_JSON, &bytes)?;
    let b = write_atomic(dir, SWEEP_CSV, sweep_csv_of(&m, meta).as_bytes())?;
    Ok(vec![a, b])
}

// ---------------------------------------------------------------- Python text rules

/// One CSV row as Python's `csv.writer` writes it (QUOTE_MINIMAL, CRLF).
fn row(out: &mut String, fields: impl IntoIterator<Item = String>) {
    let fields: Vec<String> = fields.into_iter().collect();
    // Python quotes a lone empty field so the row is not mistaken for a blank line.
    if matches!(fields.as_slice(), [only] if only.is_empty()) {
        out.push_str("\"\"\r\n");
        return;
    }
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if f.contains([',', '"', '\r', '\n']) {
            out.push('"');
            out.push_str(&f.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(f);
        }
    }
    out.push_str("\r\n");
}

/// Python's `str.title()`: a letter is upper-cased when it follows a non-letter, lower-cased
/// otherwise.
fn py_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_letter = false;
    for c in s.chars() {
        if c.is_alphabetic() {
            if prev_letter {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            prev_letter = true;
        } else {
            out.push(c);
            prev_letter = false;
        }
    }
    out
}

/// What Python's `csv.writer` writes for a value: `None` as an empty field, a string as is,
/// anything else as `str(value)`.
fn py_csv_str(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python's `repr` of the JSON value's Python counterpart (`str` for everything but
/// strings, which are quoted inside lists and dicts).
fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (_, Some(u)) => u.to_string(),
            _ => py_float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => py_str_repr(s),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", py_str_repr(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Python's `repr(str)`: single quotes unless the text has a `'` and no `"`.
fn py_str_repr(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// Python's `repr(float)`: the shortest round-trip digits, positional for exponents in
/// [-4, 16) (with at least one decimal), scientific with a signed two-digit exponent
/// otherwise.
fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits, e.g. `-1.25e-5`.
    let s = format!("{x:e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mant) = match mant.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mant),
    };
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exp) {
        let body = if exp >= 0 {
            let point = exp as usize + 1;
            if digits.len() <= point {
                format!("{digits}{}.0", "0".repeat(point - digits.len()))
            } else {
                format!("{}.{}", &digits[..point], &digits[point..])
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        };
        format!("{sign}{body}")
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let es = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{es}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn py_float_matches_python_repr() {
        for (x, want) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (0.95, "0.95"),
            (20.0, "20.0"),
            (123456.789, "123456.789"),
            (1e-4, "0.0001"),
            (1.5e-5, "1.5e-05"),
            (1e16, "1e+16"),
            (9999999999999998.0, "9999999999999998.0"),
            (-2.5e-300, "-2.5e-300"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ] {
            assert_eq!(py_float(x), want, "{x}");
        }
    }

    #[test]
    fn py_repr_of_containers() {
        let v = json!({"a.b": 1, "s": ["x'y", "z"], "f": 0.5, "n": null, "t": true});
        assert_eq!(
            py_repr(&v),
            r#"{'a.b': 1, 's': ["x'y", 'z'], 'f': 0.5, 'n': None, 't': True}"#
        );
    }

    #[test]
    fn title_case_follows_python() {
        assert_eq!(py_title("cooldown seconds"), "Cooldown Seconds");
        assert_eq!(py_title("best latency p99"), "Best Latency P99");
        assert_eq!(py_title("a1b C"), "A1B C");
    }

    #[test]
    fn csv_quoting_is_minimal() {
        let mut s = String::new();
        row(&mut s, ["a,b".to_string(), "q\"".into(), "x".into()]);
        row(&mut s, [String::new()]);
        assert_eq!(s, "\"a,b\",\"q\"\"\",x\r\n\"\"\r\n");
    }
}
