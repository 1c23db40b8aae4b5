//! `sweep_aggregate/profile_export_aiperf_sweep.{json,csv}`: one row per swept parameter
//! combination.

use super::*;

/// One swept parameter combination and the successful runs made with it.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepCell {
    /// Display name → value, e.g. `("concurrency", 1)`. AIPerf's order is sorted by the full
    /// (dotted) parameter name.
    pub parameters: Vec<(String, Value)>,
    /// Successful runs only; a cell without any is left out of `per_combination_metrics`.
    pub runs: Vec<Summary>,
    /// The cell's aggregate across `runs` at the sweep's confidence level, when the caller
    /// has it already (it wrote the cell's confidence files from it): computed once, not
    /// twice. None: computed here.
    pub entries: Option<Vec<AggregateEntry>>,
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
            let entries = match &cell.entries {
                Some(e) => e.clone(),
                None => aggregate(runs, level)?,
            };
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
