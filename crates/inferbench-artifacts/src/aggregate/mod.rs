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

mod sweep;

pub use sweep::{SweepCell, SweepMeta, sweep_csv, sweep_json, write_sweep};

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
        Value::String(s) => inferbench_core::py::str_repr(s),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", inferbench_core::py::str_repr(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
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
