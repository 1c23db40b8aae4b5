//! Writing every export of a run in a safe order: data files first, the manifest, then the
//! results-ready marker last, so that the marker's presence means the set is complete.

use std::path::Path;

use inferbench_core::manifest::Manifest;
use inferbench_core::plan::ExportLevel;
use inferbench_core::summary::RecordMetric;
use inferbench_core::workload::Workload;
use inferbench_core::{Evidence, Phase, Record, RunPlan, StopReason, Summary};

use crate::names::FileNames;
use crate::summary_json::SummaryInfo;
use crate::{Result, atomic, console, raw, records, small, summary_csv, summary_json};

/// Completion flags shared by the summary JSON and the results-ready marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExportStatus {
    /// Stopped early (Ctrl-C), failed, or killed (no end line).
    pub was_cancelled: bool,
    /// Not every scheduled request finished: `is_complete` is its negation.
    pub partial: bool,
}

impl ExportStatus {
    pub fn from_evidence(evidence: &Evidence) -> Self {
        let stop = evidence.end.as_ref().map(|e| e.stop_reason);
        ExportStatus {
            was_cancelled: stop != Some(StopReason::Completed),
            partial: evidence.is_partial(),
        }
    }
}

/// Everything a run's exports are made from.
pub struct RunArtifacts<'a> {
    pub dir: &'a Path,
    pub names: &'a FileNames,
    pub export_level: ExportLevel,
    pub evidence: &'a Evidence,
    /// Profiling-phase results (the headline).
    pub profiling: &'a Summary,
    /// Warmup-phase results, when there was a warmup.
    pub warmup: Option<&'a Summary>,
    /// Per-record metrics of the profiling records, by record id.
    pub record_metrics: &'a [(u64, Vec<RecordMetric>)],
    pub plan: &'a RunPlan,
    pub workload: &'a Workload,
    /// `inputs.json` as the workload crate built it.
    pub inputs: &'a serde_json::Value,
    /// Headers sent with a record (for the raw export; redacted there).
    pub headers: &'a dyn Fn(&Record) -> Vec<(String, String)>,
    /// The manifest; its `files` is replaced by the list of files written.
    pub manifest: &'a Manifest,
}

/// What [`write_run_artifacts`] wrote.
#[derive(Clone, Debug)]
pub struct Written {
    /// File names relative to the run directory, in writing order.
    pub files: Vec<String>,
    /// The console text (also saved to the console file), for the binary to print.
    pub console: String,
}

/// Write every export of a run. Summary files appear atomically; the results-ready marker is
/// written last. An interrupted run (Ctrl-C: evidence end `interrupted`, or no end line)
/// gets the same files with `was_cancelled: true`, `is_complete: false`, `partial: true`.
pub fn write_run_artifacts(a: &RunArtifacts<'_>) -> Result<Written> {
    let n = a.names;
    let status = ExportStatus::from_evidence(a.evidence);
    let mut files = Vec::new();

    small::write_inputs_json(a.dir, a.inputs)?;
    files.push(n.inputs_json.clone());
    if matches!(a.export_level, ExportLevel::Records | ExportLevel::Raw) {
        records::write_records_jsonl(
            a.dir,
            &n.records_jsonl,
            a.evidence,
            Phase::Profiling,
            a.record_metrics,
        )?;
        files.push(n.records_jsonl.clone());
    }
    if a.export_level == ExportLevel::Raw {
        raw::write_raw_jsonl(
            a.dir,
            &n.raw_jsonl,
            a.evidence,
            Phase::Profiling,
            a.workload,
            a.headers,
        )?;
        files.push(n.raw_jsonl.clone());
    }

    let anchor = a.evidence.header.anchor_unix_ns;
    let (start, end) = a
        .evidence
        .window(Phase::Profiling)
        .map_or((anchor, anchor), |w| {
            (anchor + w.start_ns, anchor + w.requests_end_ns)
        });
    let info = SummaryInfo {
        benchmark_id: &a.evidence.header.benchmark_id,
        plan: a.plan,
        start_unix_ns: start,
        end_unix_ns: end,
        was_cancelled: status.was_cancelled,
        is_complete: !status.partial,
    };
    summary_json::write_summary_json(a.dir, &n.summary_json, a.profiling, a.warmup, &info)?;
    files.push(n.summary_json.clone());
    summary_csv::write_summary_csv(a.dir, &n.summary_csv, a.profiling)?;
    files.push(n.summary_csv.clone());
    let console = console::render_console(a.profiling);
    atomic::write_atomic(a.dir, &n.console_txt, console.as_bytes())?;
    files.push(n.console_txt.clone());

    if a.dir.join(&n.evidence).exists() {
        files.push(n.evidence.clone());
    }
    files.push(n.manifest.clone());
    files.push(n.results_ready.clone());
    let mut manifest = a.manifest.clone();
    manifest.files = files.clone();
    small::write_manifest(a.dir, &manifest)?;
    small::write_results_ready(a.dir, status.was_cancelled, status.partial)?;
    Ok(Written { files, console })
}
