//! What AIPerf's `analyze-trace` and `validate mooncake-trace` compute for a Mooncake trace:
//! ISL/OSL statistics and the theoretical prefix-cache figures for one block size, and a
//! row-by-row check against the loader's rules. See docs/datasets.md ("Trace tools").

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::DatasetKind;
use super::error::DatasetError;
use super::mooncake::check_row;
use super::row::{Row, kind, read_text};

/// AIPerf's statistics of one list of values (numpy: population standard deviation,
/// percentiles by linear interpolation between closest ranks).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricStats {
    pub mean: f64,
    pub std_dev: f64,
    pub min: f64,
    pub p25: f64,
    pub median: f64,
    pub p75: f64,
    pub max: f64,
}

impl MetricStats {
    /// None for no values.
    pub fn of(values: &[f64]) -> Option<MetricStats> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Some(MetricStats {
            mean,
            std_dev: var.sqrt(),
            min: sorted[0],
            p25: linear_percentile(&sorted, 25.0),
            median: linear_percentile(&sorted, 50.0),
            p75: linear_percentile(&sorted, 75.0),
            max: sorted[sorted.len() - 1],
        })
    }
}

/// numpy's default percentile: rank `p/100·(n-1)`, interpolated between its neighbours.
fn linear_percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = p / 100.0 * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

/// AIPerf's `AnalysisStats` (same field names in the JSON report), plus the block size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceAnalysis {
    pub block_size: u64,
    pub total_requests: usize,
    /// Distinct `hash_ids` prefixes (every leading run of every row).
    pub unique_prefixes: usize,
    /// Distinct first blocks that start two rows or more.
    pub num_prefix_groups: usize,
    /// Mean of the per-request hit rates (0 when no row has `hash_ids`).
    pub cache_hit_rate: f64,
    pub min_isl: u64,
    pub max_isl: u64,
    pub avg_isl: f64,
    pub min_osl: u64,
    pub max_osl: u64,
    pub avg_osl: f64,
    /// Prefix occurrences whose prefix occurs more than once, over all prefix occurrences.
    pub prefix_reuse_ratio: f64,
    pub isl_stats: Option<MetricStats>,
    pub osl_stats: Option<MetricStats>,
    pub context_length_stats: Option<MetricStats>,
    pub unique_prompt_length_stats: Option<MetricStats>,
    pub hit_rate_stats: Option<MetricStats>,
}

struct TraceRow {
    isl: u64,
    osl: u64,
    hash_ids: Vec<i64>,
}

fn read_rows(path: &Path) -> Result<Vec<TraceRow>, DatasetError> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    let rows = super::row::parse_jsonl(&file, &text)?;
    rows.iter()
        .map(|(no, obj)| {
            let r = Row::new(&file, *no, obj);
            let hash_ids = match r.get("hash_ids") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(Value::as_i64)
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| r.err("hash_ids", "expected a list of integers"))?,
                Some(v) => {
                    return Err(r.err(
                        "hash_ids",
                        format!("expected a list of integers, got {}", kind(v)),
                    ));
                }
            };
            Ok(TraceRow {
                isl: r.opt_u64("input_length")?.unwrap_or(0),
                osl: r.opt_u64("output_length")?.unwrap_or(0),
                hash_ids,
            })
        })
        .collect()
}

/// Analyzes a Mooncake trace (`input_length`, `output_length`, `hash_ids`; a missing one
/// counts as 0 or none) for `block_size` tokens per block, as AIPerf's `analyze-trace`:
///
/// - context length of a row: its ISL when every (position, hash id) pair of the row occurs
///   in two rows or more, else (repeated pairs) × `block_size`; the unique prompt length is
///   ISL − context length (negative when the row's ISL is shorter than its repeated blocks,
///   as in AIPerf). A row without `hash_ids` has context 0 and unique length ISL.
/// - hit rate of a row with `hash_ids`, in file order with an unbounded cache: the index of
///   its first hash id not seen in any earlier row, over its number of hash ids.
pub fn analyze_trace(path: &Path, block_size: u64) -> Result<TraceAnalysis, DatasetError> {
    if block_size == 0 {
        return Err(DatasetError::file("--block-size", "must be at least 1"));
    }
    Ok(analyze_rows(&read_rows(path)?, block_size))
}

fn analyze_rows(rows: &[TraceRow], block_size: u64) -> TraceAnalysis {
    let mut prefixes: HashMap<&[i64], usize> = HashMap::new();
    let mut pairs: HashMap<(usize, i64), usize> = HashMap::new();
    for r in rows {
        for i in 1..=r.hash_ids.len() {
            *prefixes.entry(&r.hash_ids[..i]).or_default() += 1;
        }
        for (pos, h) in r.hash_ids.iter().enumerate() {
            *pairs.entry((pos, *h)).or_default() += 1;
        }
    }
    let repeated = |pos: usize, h: i64| pairs.get(&(pos, h)).is_some_and(|&c| c > 1);
    let mut context = Vec::with_capacity(rows.len());
    let mut unique = Vec::with_capacity(rows.len());
    for r in rows {
        let n_rep = r
            .hash_ids
            .iter()
            .enumerate()
            .filter(|(p, h)| repeated(*p, **h))
            .count();
        let (c, u) = if r.hash_ids.is_empty() {
            (0i64, r.isl as i64)
        } else if n_rep == r.hash_ids.len() {
            (r.isl as i64, 0)
        } else {
            let c = (n_rep as u64 * block_size) as i64;
            (c, r.isl as i64 - c)
        };
        context.push(c as f64);
        unique.push(u as f64);
    }
    let mut seen: HashSet<i64> = HashSet::new();
    let mut hits = Vec::new();
    for r in rows.iter().filter(|r| !r.hash_ids.is_empty()) {
        let first_unseen = r
            .hash_ids
            .iter()
            .position(|h| !seen.contains(h))
            .unwrap_or(r.hash_ids.len());
        hits.push(first_unseen as f64 / r.hash_ids.len() as f64);
        seen.extend(r.hash_ids.iter().copied());
    }
    let mut firsts: HashMap<i64, usize> = HashMap::new();
    for r in rows {
        if let Some(h) = r.hash_ids.first() {
            *firsts.entry(*h).or_default() += 1;
        }
    }
    let total_prefixes: usize = prefixes.values().sum();
    let reused: usize = prefixes.values().filter(|&&c| c > 1).sum();
    let isls: Vec<f64> = rows.iter().map(|r| r.isl as f64).collect();
    let osls: Vec<f64> = rows.iter().map(|r| r.osl as f64).collect();
    let avg = |v: &[f64]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    TraceAnalysis {
        block_size,
        total_requests: rows.len(),
        unique_prefixes: prefixes.len(),
        num_prefix_groups: firsts.values().filter(|&&c| c > 1).count(),
        cache_hit_rate: avg(&hits),
        min_isl: rows.iter().map(|r| r.isl).min().unwrap_or(0),
        max_isl: rows.iter().map(|r| r.isl).max().unwrap_or(0),
        avg_isl: avg(&isls),
        min_osl: rows.iter().map(|r| r.osl).min().unwrap_or(0),
        max_osl: rows.iter().map(|r| r.osl).max().unwrap_or(0),
        avg_osl: avg(&osls),
        prefix_reuse_ratio: if total_prefixes == 0 {
            0.0
        } else {
            reused as f64 / total_prefixes as f64
        },
        isl_stats: MetricStats::of(&isls),
        osl_stats: MetricStats::of(&osls),
        context_length_stats: MetricStats::of(&context),
        unique_prompt_length_stats: MetricStats::of(&unique),
        hit_rate_stats: MetricStats::of(&hits),
    }
}

/// Checks every non-blank line of a Mooncake trace against the loader's rules (the same
/// check `--custom-dataset-type mooncake_trace` makes). Returns the number of rows and the
/// first `max_errors` errors, each naming the file, line and field (AIPerf stops at 10).
pub fn validate_mooncake_trace(
    path: &Path,
    max_errors: usize,
) -> Result<(usize, Vec<DatasetError>), DatasetError> {
    let file = path.display().to_string();
    if path.is_dir() {
        return Err(DatasetError::file(
            file,
            "is a directory: a mooncake trace is one file",
        ));
    }
    let text = read_text(path)?;
    let mut count = 0;
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        count += 1;
        let res = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(obj)) => check_row(&Row::new(&file, i + 1, &obj)),
            Ok(other) => Err(DatasetError::line(
                &file,
                i + 1,
                format!("expected a JSON object, got {}", kind(&other)),
            )),
            Err(e) => Err(DatasetError::line(
                &file,
                i + 1,
                format!("not valid JSON (column {}): {e}", e.column()),
            )),
        };
        if let Err(e) = res {
            errors.push(e);
            if errors.len() >= max_errors {
                break;
            }
        }
    }
    Ok((count, errors))
}

/// Parses and checks a trace's text as the loader of `kind` would, without making prompts:
/// the row count, or the first error (naming `file`, the line and the field). For the fuzz
/// targets and for callers that only validate. Kinds other than the traces
/// (`mooncake_trace`, `bailian_trace`, `burst_gpt_trace`, `sagemaker_data_capture`) are an
/// error.
pub fn check_trace_text(kind: DatasetKind, file: &str, text: &str) -> Result<usize, DatasetError> {
    match kind {
        DatasetKind::MooncakeTrace => {
            let rows = super::row::parse_jsonl(file, text)?;
            for (no, obj) in &rows {
                check_row(&Row::new(file, *no, obj))?;
            }
            Ok(rows.len())
        }
        DatasetKind::BailianTrace => super::traces::check_text(true, file, text),
        DatasetKind::BurstGptTrace => super::traces::check_text(false, file, text),
        DatasetKind::SagemakerDataCapture => super::sagemaker::check_text(file, text),
        // The agentic formats: how many conversations (traces, or DAG lines).
        DatasetKind::WekaTrace => super::weka::parse(file, text).map(|_| 1),
        DatasetKind::Tracelab => super::tracelab::from_text(file, text, 64).map(|t| t.len()),
        DatasetKind::DagJsonl => super::dag::from_text(file, text).map(|c| c.len()),
        other => Err(DatasetError::file(
            file,
            format!("{} is not a trace type", other.as_str()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_percentiles_by_hand() {
        // [1,2,3,4]: rank 0.75 → 1.75; median 2.5; rank 2.25 → 3.25; std sqrt(1.25).
        let s = MetricStats::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(
            (s.min, s.p25, s.median, s.p75, s.max),
            (1.0, 1.75, 2.5, 3.25, 4.0)
        );
        assert_eq!(s.mean, 2.5);
        assert!((s.std_dev - 1.25f64.sqrt()).abs() < 1e-12);
        assert!(MetricStats::of(&[]).is_none());
    }
}
