//! AIPerf 0.13's per-phase exports of a run with more than one phase (a warmup, then the
//! profiling phase): `phases/<phase>/profile_export_aiperf.{json,csv}`, each phase summarized
//! alone as if it were the run, and `phase_manifest.json`, the index of the phases with their
//! counts, wall-clock window and files. AIPerf writes neither for a one-phase run, nor do we.

use std::path::Path;

use inferbench_core::{PhaseWindow, Summary};
use serde_json::{Map, Value, json};

use crate::names::FileNames;
use crate::summary_json::SummaryInfo;
use crate::{Result, atomic, summary_csv, summary_json};

/// The index file's name, in the run directory.
pub const PHASE_MANIFEST: &str = "phase_manifest.json";
/// The directory of the per-phase summaries, in the run directory.
pub const PHASES_DIR: &str = "phases";

/// One phase to export.
pub struct PhaseExport<'a> {
    /// `warmup` or `profiling`: both the phase's name and its kind, as AIPerf names the
    /// phases its command-line flags make.
    pub name: &'static str,
    /// The phase's window on the run clock, when it ran.
    pub window: Option<PhaseWindow>,
    pub summary: &'a Summary,
}

/// Writes each phase's summary JSON and CSV under `phases/<name>/` (the run's own file names,
/// so `--profile-export-prefix` applies), then `phase_manifest.json`. `info` is the run's
/// summary information; each phase's file gets its own window as `start_time`/`end_time`.
/// Returns the files written, relative to `dir`, the manifest last.
pub fn write_phase_exports(
    dir: &Path,
    names: &FileNames,
    anchor_unix_ns: u64,
    info: &SummaryInfo<'_>,
    phases: &[PhaseExport<'_>],
) -> Result<Vec<String>> {
    let mut files = Vec::new();
    let mut entries = Vec::new();
    let mut profiling_index = 0u64;
    for (i, p) in phases.iter().enumerate() {
        let sub = format!("{PHASES_DIR}/{}", p.name);
        let pdir = dir.join(&sub);
        std::fs::create_dir_all(&pdir).map_err(|e| crate::ArtifactError::io(&pdir, e))?;
        let (start, end) = p.window.map_or((None, None), |w| {
            (
                Some(anchor_unix_ns + w.start_ns),
                Some(anchor_unix_ns + w.requests_end_ns),
            )
        });
        let phase_info = SummaryInfo {
            start_unix_ns: start.unwrap_or(info.start_unix_ns),
            end_unix_ns: end.unwrap_or(info.end_unix_ns),
            ..*info
        };
        summary_json::write_summary_json(&pdir, &names.summary_json, p.summary, None, &phase_info)?;
        summary_csv::write_summary_csv(&pdir, &names.summary_csv, p.summary)?;
        let json_rel = format!("{sub}/{}", names.summary_json);
        let csv_rel = format!("{sub}/{}", names.summary_csv);
        files.push(json_rel.clone());
        files.push(csv_rel.clone());
        let profiling = (p.name != "warmup").then(|| {
            profiling_index += 1;
            profiling_index - 1
        });
        let window = (start, end);
        entries.push(entry(
            i,
            profiling,
            p,
            window,
            info.was_cancelled,
            (&json_rel, &csv_rel),
        ));
    }
    let doc = json!({"schema_version": 1, "phases": entries});
    // AIPerf writes this file with sorted keys, a 2-space indent and a final newline.
    let mut bytes = serde_json::to_vec_pretty(&sorted(doc))
        .map_err(|e| crate::ArtifactError::json(&dir.join(PHASE_MANIFEST), e))?;
    bytes.push(b'\n');
    atomic::write_atomic(dir, PHASE_MANIFEST, &bytes)?;
    files.push(PHASE_MANIFEST.to_string());
    Ok(files)
}

/// One phase's line of the index: `window` is its wall-clock start and end (Unix ns), `files`
/// its summary JSON and CSV relative to the run directory.
fn entry(
    index: usize,
    profiling_index: Option<u64>,
    p: &PhaseExport<'_>,
    (start, end): (Option<u64>, Option<u64>),
    was_cancelled: bool,
    (json_rel, csv_rel): (&str, &str),
) -> Value {
    let count = |tag: &str| {
        p.summary
            .get(tag)
            .and_then(|m| m.scalar())
            .map_or(0, |v| v.round() as u64)
    };
    let ok = count("request_count");
    let errors = count("error_request_count");
    let error_summary: Vec<Value> = p
        .summary
        .error_summary
        .iter()
        .map(|g| {
            // AIPerf dumps its whole error model here, unset fields as null.
            json!({
                "count": g.count,
                "error_details": {
                    "cause": null,
                    "cause_chain": null,
                    "code": g.code,
                    "details": null,
                    "message": g.message,
                    "type": g.error_type,
                }
            })
        })
        .collect();
    json!({
        "phase_index": index,
        "profiling_index": profiling_index,
        "phase_name": p.name,
        "phase_kind": p.name,
        "start_ns": start,
        "end_ns": end,
        "was_cancelled": was_cancelled,
        "successful_request_count": ok,
        "error_request_count": errors,
        "total_request_count": ok + errors,
        "error_summary": error_summary,
        "metrics_json": json_rel,
        "metrics_csv": csv_rel,
    })
}

/// `v` with every object's keys in sorted order (serde_json keeps insertion order here).
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut pairs: Vec<(String, Value)> = o.into_iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k, sorted(v)))
                    .collect::<Map<_, _>>(),
            )
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::summary::{ErrorGroup, MetricResult, MetricValue};

    fn summary(ok: f64, errors: f64, groups: Vec<ErrorGroup>) -> Summary {
        let m = |tag: &str, v: f64| MetricResult {
            tag: tag.into(),
            header: tag.into(),
            unit: "requests".into(),
            value: MetricValue::Scalar { value: v },
        };
        Summary {
            definitions: "aiperf-0.13".into(),
            metrics: vec![m("request_count", ok), m("error_request_count", errors)],
            error_summary: groups,
        }
    }

    #[test]
    fn keys_sort_at_every_level() {
        let v = sorted(json!({"b": 1, "a": [{"d": 1, "c": 2}]}));
        assert_eq!(v.to_string(), r#"{"a":[{"c":2,"d":1}],"b":1}"#);
    }

    #[test]
    fn an_entry_counts_and_indexes_its_phase() {
        let warm = summary(
            3.0,
            1.0,
            vec![ErrorGroup {
                code: Some(500),
                error_type: "Internal Server Error".into(),
                message: "boom".into(),
                count: 1,
            }],
        );
        let p = PhaseExport {
            name: "warmup",
            window: None,
            summary: &warm,
        };
        let e = entry(
            0,
            None,
            &p,
            (Some(10), Some(20)),
            false,
            ("a.json", "a.csv"),
        );
        // 3 successes + 1 error = 4 in all; a warmup has no profiling index.
        assert_eq!(e["total_request_count"], 4);
        assert_eq!(e["successful_request_count"], 3);
        assert_eq!(e["profiling_index"], Value::Null);
        assert_eq!(e["error_summary"][0]["error_details"]["code"], 500);
        assert_eq!(e["error_summary"][0]["error_details"]["cause"], Value::Null);
        assert_eq!(e["start_ns"], 10);
    }
}
