//! The SPEED-Bench matrix (AIPerf 0.13's `speed-bench-report`): one row per model, one
//! column per benchmark category, read from run directories that each ran one category.
//!
//! Rules, as AIPerf's report applies them (docs/reports.md, "speed-bench-report"):
//! - a run directory holds `profile_export_aiperf.json`; a path without one is searched one
//!   level down (its sub-directories, in name order);
//! - the category is the first `input_config.datasets[]` entry whose `format` (or, failing
//!   that, `dataset`) starts with `speed_bench_` or `spec_al_`, with the prefix removed;
//! - the model is the first non-empty `input_config.models.items[].name`, else `unknown`;
//! - `accept_length` and `accept_rate` come from `server_metrics_export.json` (engine gauges
//!   by name, else vLLM's counters: accepted / drafts + 1, accepted / draft tokens), and
//!   `throughput` from the summary's `output_token_throughput.avg`;
//! - a later run of the same model and category replaces an earlier one; `Overall` is the
//!   mean of a row's present values.
//!
//! Library code: it returns the matrix, its CSV and its text table; the binary prints.

use std::path::{Path, PathBuf};

use serde_json::Value;

const PROFILE_JSON: &str = "profile_export_aiperf.json";
const SERVER_METRICS_JSON: &str = "server_metrics_export.json";

const QUALITATIVE: [&str; 11] = [
    "coding",
    "humanities",
    "math",
    "multilingual",
    "qa",
    "rag",
    "reasoning",
    "roleplay",
    "stem",
    "summarization",
    "writing",
];
const THROUGHPUT_TIERS: [&str; 3] = ["low_entropy", "mixed", "high_entropy"];
// Math, then chat, then code: the paper's order, not the alphabet's.
const SPEC_AL: [&str; 5] = ["gsm8k", "math500", "mtbench", "humaneval", "mbpp"];
const PREFIXES: [&str; 2] = ["speed_bench_", "spec_al_"];

const ACCEPT_LENGTH_GAUGES: [&str; 3] = [
    "sglang:spec_accept_length",
    "vllm:spec_decode_mean_accepted_length",
    "trtllm:spec_accept_length",
];
const ACCEPT_RATE_GAUGES: [&str; 3] = [
    "sglang:spec_accept_rate",
    "vllm:spec_decode_draft_acceptance_rate",
    "trtllm:spec_accept_rate",
];

/// What a matrix cell holds (`--metric`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpeedMetric {
    AcceptLength,
    AcceptRate,
    Throughput,
}

impl SpeedMetric {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "accept_length" => Some(Self::AcceptLength),
            "accept_rate" => Some(Self::AcceptRate),
            "throughput" => Some(Self::Throughput),
            _ => None,
        }
    }

    /// The table's title line.
    pub fn title(self) -> &'static str {
        match self {
            Self::AcceptLength => "Acceptance Length Report",
            Self::AcceptRate => "Acceptance Rate Report",
            Self::Throughput => "Throughput Report (tokens/sec)",
        }
    }
}

/// One model's row: a value per column (None: no value), and the mean of those present.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedRow {
    pub model: String,
    pub values: Vec<Option<f64>>,
    pub overall: Option<f64>,
}

/// The matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedReport {
    pub run_dirs: usize,
    pub columns: Vec<String>,
    pub rows: Vec<SpeedRow>,
}

/// One model's cells: (category, value), in first-seen order.
type Cells = Vec<(String, Option<f64>)>;

/// The run directories under `paths`: each path that holds `profile_export_aiperf.json`,
/// else its sub-directories that do, in name order. A path that is not a directory is a
/// warning, as in AIPerf.
pub fn find_run_dirs(paths: &[PathBuf], warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            warnings.push(format!("{} is not a directory, skipping", p.display()));
            continue;
        }
        if p.join(PROFILE_JSON).exists() {
            out.push(p.clone());
            continue;
        }
        let mut kids: Vec<PathBuf> = std::fs::read_dir(p)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        kids.sort();
        out.extend(
            kids.into_iter()
                .filter(|k| k.is_dir() && k.join(PROFILE_JSON).exists()),
        );
    }
    out
}

/// Builds the matrix; what is skipped on the way is a line in `warnings` (for stderr, also
/// when it fails). Errors are AIPerf's two: no run directory at all, or not one value.
pub fn build(
    paths: &[PathBuf],
    metric: SpeedMetric,
    warnings: &mut Vec<String>,
) -> Result<SpeedReport, String> {
    let dirs = find_run_dirs(paths, warnings);
    if dirs.is_empty() {
        return Err("no aiperf run directories found".into());
    }
    // model -> category -> value, in first-seen order; a later run replaces a cell.
    let mut cells: Vec<(String, Cells)> = Vec::new();
    for dir in &dirs {
        let Some(profile) = read_json(&dir.join(PROFILE_JSON), warnings) else {
            warnings.push(format!("no {PROFILE_JSON} in {}, skipping", dir.display()));
            continue;
        };
        let Some(category) = category(&profile) else {
            warnings.push(format!(
                "cannot determine category from {}, skipping",
                dir.display()
            ));
            continue;
        };
        let model = model(&profile);
        let value = match metric {
            SpeedMetric::Throughput => profile
                .pointer("/output_token_throughput/avg")
                .and_then(Value::as_f64),
            SpeedMetric::AcceptLength | SpeedMetric::AcceptRate => {
                let path = dir.join(SERVER_METRICS_JSON);
                if path.exists() {
                    read_json(&path, warnings).and_then(|m| {
                        if metric == SpeedMetric::AcceptLength {
                            accept_length(&m)
                        } else {
                            accept_rate(&m)
                        }
                    })
                } else {
                    warnings.push(format!("no {SERVER_METRICS_JSON} in {}", dir.display()));
                    None
                }
            }
        }
        .filter(|v| !v.is_nan());
        let row = match cells.iter().position(|(m, _)| *m == model) {
            Some(i) => &mut cells[i].1,
            None => {
                cells.push((model, Vec::new()));
                &mut cells.last_mut().expect("just pushed").1
            }
        };
        match row.iter_mut().find(|(c, _)| *c == category) {
            Some(cell) => cell.1 = value,
            None => row.push((category, value)),
        }
    }
    if !cells
        .iter()
        .any(|(_, r)| r.iter().any(|(_, v)| v.is_some()))
    {
        return Err("no SPEED-Bench results extracted".into());
    }
    let columns = columns(
        cells
            .iter()
            .flat_map(|(_, r)| r.iter().map(|(c, _)| c.as_str())),
    );
    cells.sort_by(|a, b| a.0.cmp(&b.0));
    let rows = cells
        .into_iter()
        .map(|(model, r)| {
            let values: Vec<Option<f64>> = columns
                .iter()
                .map(|c| r.iter().find(|(k, _)| k == c).and_then(|(_, v)| *v))
                .collect();
            let present: Vec<f64> = values.iter().flatten().copied().collect();
            let overall =
                (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64);
            SpeedRow {
                model,
                values,
                overall,
            }
        })
        .collect();
    Ok(SpeedReport {
        run_dirs: dirs.len(),
        columns,
        rows,
    })
}

/// The column order: a known set's own order when every category belongs to it, else sorted.
fn columns<'a>(cats: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut all: Vec<&str> = cats.collect();
    all.sort_unstable();
    all.dedup();
    for set in [&QUALITATIVE[..], &THROUGHPUT_TIERS[..], &SPEC_AL[..]] {
        if all.iter().all(|c| set.contains(c)) {
            return set
                .iter()
                .filter(|c| all.contains(c))
                .map(|c| c.to_string())
                .collect();
        }
    }
    all.into_iter().map(str::to_string).collect()
}

fn read_json(path: &Path, warnings: &mut Vec<String>) -> Option<Value> {
    let text = std::fs::read(path).ok()?;
    match serde_json::from_slice(&text) {
        Ok(v) => Some(v),
        Err(e) => {
            warnings.push(format!("failed to read {}: {e}", path.display()));
            None
        }
    }
}

fn category(profile: &Value) -> Option<String> {
    let datasets = profile.pointer("/input_config/datasets")?.as_array()?;
    datasets.iter().find_map(|d| {
        let name = d
            .get("format")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .or_else(|| d.get("dataset").and_then(Value::as_str))?;
        PREFIXES
            .iter()
            .find_map(|p| name.strip_prefix(p).map(str::to_string))
    })
}

fn model(profile: &Value) -> String {
    profile
        .pointer("/input_config/models/items")
        .and_then(Value::as_array)
        .and_then(|items| {
            items.iter().find_map(|i| {
                i.get("name")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
            })
        })
        .unwrap_or("unknown")
        .to_string()
}

/// A named metric's first series' statistic.
fn stat(metrics: &Value, name: &str, stat: &str) -> Option<f64> {
    metrics
        .get(name)?
        .get("series")?
        .as_array()?
        .first()?
        .get("stats")?
        .get(stat)?
        .as_f64()
}

/// Acceptance length: an engine's gauge by name; else vLLM's counters, where each draft
/// step verifies one token beyond the accepted ones: accepted / drafts + 1; else any metric
/// whose name holds "spec", "accept" and "length".
pub fn accept_length(server_metrics: &Value) -> Option<f64> {
    let m = server_metrics.get("metrics")?;
    if let Some(v) = ACCEPT_LENGTH_GAUGES.iter().find_map(|n| stat(m, n, "avg")) {
        return Some(v);
    }
    let accepted = stat(m, "vllm:spec_decode_num_accepted_tokens", "total");
    let drafts = stat(m, "vllm:spec_decode_num_drafts", "total");
    if let (Some(a), Some(d)) = (accepted, drafts)
        && d > 0.0
    {
        return Some(a / d + 1.0);
    }
    m.as_object()?.iter().find_map(|(name, _)| {
        let l = name.to_lowercase();
        (l.contains("spec") && l.contains("accept") && l.contains("length"))
            .then(|| stat(m, name, "avg"))
            .flatten()
    })
}

/// Acceptance rate: an engine's gauge by name; else vLLM's accepted / draft tokens.
pub fn accept_rate(server_metrics: &Value) -> Option<f64> {
    let m = server_metrics.get("metrics")?;
    if let Some(v) = ACCEPT_RATE_GAUGES.iter().find_map(|n| stat(m, n, "avg")) {
        return Some(v);
    }
    let accepted = stat(m, "vllm:spec_decode_num_accepted_tokens", "total")?;
    let draft = stat(m, "vllm:spec_decode_num_draft_tokens", "total")?;
    (draft > 0.0).then(|| accepted / draft)
}

fn cell(v: Option<f64>, missing: &str) -> String {
    v.map(|v| format!("{v:.2}"))
        .unwrap_or_else(|| missing.to_string())
}

/// The CSV: `Model`, the columns, `Overall`; two decimals; an empty cell for no value.
pub fn csv(r: &SpeedReport) -> String {
    let quote = |s: &str| {
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    let head: Vec<String> = std::iter::once("Model".to_string())
        .chain(r.columns.iter().map(|c| quote(c)))
        .chain(std::iter::once("Overall".to_string()))
        .collect();
    out.push_str(&head.join(","));
    out.push_str("\r\n");
    for row in &r.rows {
        let cells: Vec<String> = std::iter::once(quote(&row.model))
            .chain(row.values.iter().map(|v| cell(*v, "")))
            .chain(std::iter::once(cell(row.overall, "")))
            .collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}

/// The console table: a title, a right-aligned header, a rule, a row per model (`-` for no
/// value), columns at least 8 wide and the model column as wide as the longest name.
pub fn table(r: &SpeedReport, metric: SpeedMetric) -> String {
    let header: Vec<String> = std::iter::once("Model".to_string())
        .chain(r.columns.iter().cloned())
        .chain(std::iter::once("Overall".to_string()))
        .collect();
    let body: Vec<Vec<String>> = r
        .rows
        .iter()
        .map(|row| {
            std::iter::once(row.model.clone())
                .chain(row.values.iter().map(|v| cell(*v, "-")))
                .chain(std::iter::once(cell(row.overall, "-")))
                .collect()
        })
        .collect();
    let width = |i: usize| {
        body.iter()
            .map(|r| r[i].chars().count())
            .chain(std::iter::once(header[i].chars().count()))
            .max()
            .unwrap_or(0)
            .max(8)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let line = |cells: &[String]| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = format!("{}\n{}\n", metric.title(), line(&header));
    out.push_str(
        &widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  "),
    );
    out.push('\n');
    for row in &body {
        out.push_str(&line(row));
        out.push('\n');
    }
    out
}

#[cfg(test)]
#[path = "speed_bench_tests.rs"]
mod tests;
