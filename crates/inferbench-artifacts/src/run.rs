//! Writing every export of a run in a safe order: data files first, the manifest, then the
//! results-ready marker last, so that the marker's presence means the set is complete.

use std::path::Path;

use inferbench_core::manifest::Manifest;
use inferbench_core::plan::ExportLevel;
use inferbench_core::summary::RecordMetric;
use inferbench_core::workload::Workload;
use inferbench_core::{Evidence, Phase, PhaseWindow, Record, RunPlan, StopReason, Summary};

use crate::atomic::AtomicFile;
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

/// The summary-level files of a run, once its records are folded into summaries.
pub struct SummaryArtifacts<'a> {
    pub dir: &'a Path,
    pub names: &'a FileNames,
    pub benchmark_id: &'a str,
    pub anchor_unix_ns: u64,
    /// The profiling phase's window (start of the summary's `start_time`/`end_time`).
    pub profiling_window: Option<PhaseWindow>,
    /// The warmup phase's window, when the run had one (its per-phase export's window).
    pub warmup_window: Option<PhaseWindow>,
    pub status: ExportStatus,
    pub plan: &'a RunPlan,
    pub profiling: &'a Summary,
    pub warmup: Option<&'a Summary>,
    pub inputs: &'a serde_json::Value,
    pub manifest: &'a Manifest,
    /// Files already written for this run (record exports), relative to `dir`.
    pub record_files: Vec<String>,
    /// Metrics shown on the console after the summary's own (answer accuracy), never in
    /// the AIPerf files; written with the console, before the marker.
    pub console_extra: &'a [inferbench_core::summary::MetricResult],
    /// Keys appended to the summary JSON after AIPerf's own (`telemetry_results`).
    pub summary_extra: &'a [(String, serde_json::Value)],
    /// Text appended to the console after its tables (the "By endpoint" breakdown), written
    /// with the console, before the marker; empty for none.
    pub console_tail: &'a str,
}

/// Streams the per-record exports (`profile_export.jsonl`, and `_raw.jsonl` at export level
/// raw) as records arrive, so that a live run never has to hold its records. Each file is
/// written under a temporary name and appears under its own name at [`Self::commit`].
pub struct RecordExportStream {
    records: Option<AtomicFile>,
    raw: Option<AtomicFile>,
    names: Vec<String>,
    anchor_unix_ns: u64,
    idx: records::PhaseIndices,
    line: Vec<u8>,
    /// `--export-http-trace`: `trace_data` on each records line.
    http_trace: bool,
}

impl RecordExportStream {
    /// `has_warmup`: whether the run has a warmup phase (it shifts the profiling phase's
    /// `phase_index`, as in AIPerf).
    pub fn create(
        dir: &Path,
        names: &FileNames,
        export_level: ExportLevel,
        anchor_unix_ns: u64,
        has_warmup: bool,
    ) -> Result<Self> {
        let mut out = RecordExportStream {
            records: None,
            raw: None,
            names: Vec::new(),
            anchor_unix_ns,
            idx: records::PhaseIndices {
                phase: Phase::Profiling,
                phase_index: u32::from(has_warmup),
                profiling_index: Some(0),
            },
            line: Vec::with_capacity(16 * 1024),
            http_trace: false,
        };
        if matches!(export_level, ExportLevel::Records | ExportLevel::Raw) {
            out.records = Some(AtomicFile::create(dir, &names.records_jsonl)?);
            out.names.push(names.records_jsonl.clone());
        }
        if export_level == ExportLevel::Raw {
            out.raw = Some(AtomicFile::create(dir, &names.raw_jsonl)?);
            out.names.push(names.raw_jsonl.clone());
        }
        Ok(out)
    }

    /// `--export-http-trace`: add AIPerf's `trace_data` to each records line.
    pub fn with_http_trace(mut self, on: bool) -> Self {
        self.http_trace = on;
        self
    }

    /// Append one profiling record: its metrics line, and at raw level its raw line with the
    /// headers it was sent with and its request body.
    pub fn push(
        &mut self,
        r: &Record,
        metrics: &[RecordMetric],
        headers: &[(String, String)],
        body: Option<&str>,
    ) -> Result<()> {
        if let Some(f) = self.records.as_mut() {
            self.line.clear();
            records::render_record_line_traced(
                &mut self.line,
                self.anchor_unix_ns,
                self.idx,
                r,
                metrics,
                self.http_trace,
            );
            f.write_all(&self.line)?;
        }
        if let Some(f) = self.raw.as_mut() {
            self.line.clear();
            raw::render_raw_line(
                &mut self.line,
                self.anchor_unix_ns,
                self.idx,
                r,
                headers,
                body,
            );
            f.write_all(&self.line)?;
        }
        Ok(())
    }

    /// Whether `push` needs headers and bodies (export level raw).
    pub fn wants_raw(&self) -> bool {
        self.raw.is_some()
    }

    /// Finish the files; returns their names, relative to the run directory.
    pub fn commit(self) -> Result<Vec<String>> {
        if let Some(f) = self.records {
            f.commit()?;
        }
        if let Some(f) = self.raw {
            f.commit()?;
        }
        Ok(self.names)
    }
}

/// Write every export of a run from its whole evidence (used offline by `inferbench
/// metrics --write`). Summary files appear atomically; the results-ready marker is written
/// last. An interrupted run (Ctrl-C: evidence end `interrupted`, or no end line) gets the
/// same files with `was_cancelled: true`, `is_complete: false`, `partial: true`.
pub fn write_run_artifacts(a: &RunArtifacts<'_>) -> Result<Written> {
    let n = a.names;
    let mut record_files = Vec::new();
    if matches!(a.export_level, ExportLevel::Records | ExportLevel::Raw) {
        records::write_records_jsonl(
            a.dir,
            &n.records_jsonl,
            a.evidence,
            Phase::Profiling,
            a.record_metrics,
        )?;
        record_files.push(n.records_jsonl.clone());
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
        record_files.push(n.raw_jsonl.clone());
    }
    write_summary_artifacts(&SummaryArtifacts {
        dir: a.dir,
        names: n,
        benchmark_id: &a.evidence.header.benchmark_id,
        anchor_unix_ns: a.evidence.header.anchor_unix_ns,
        profiling_window: a.evidence.window(Phase::Profiling),
        warmup_window: a.evidence.window(Phase::Warmup),
        status: ExportStatus::from_evidence(a.evidence),
        plan: a.plan,
        profiling: a.profiling,
        warmup: a.warmup,
        inputs: a.inputs,
        manifest: a.manifest,
        record_files,
        console_extra: &[],
        summary_extra: &[],
        console_tail: "",
    })
}

/// Write the summary files, the manifest, then the results-ready marker (last).
pub fn write_summary_artifacts(a: &SummaryArtifacts<'_>) -> Result<Written> {
    let n = a.names;
    let status = a.status;
    let mut files = vec![n.inputs_json.clone()];
    small::write_inputs_json(a.dir, a.inputs)?;
    files.extend(a.record_files.iter().cloned());

    let anchor = a.anchor_unix_ns;
    let (start, end) = a.profiling_window.map_or((anchor, anchor), |w| {
        (anchor + w.start_ns, anchor + w.requests_end_ns)
    });
    let info = SummaryInfo {
        benchmark_id: a.benchmark_id,
        plan: a.plan,
        start_unix_ns: start,
        end_unix_ns: end,
        was_cancelled: status.was_cancelled,
        is_complete: !status.partial,
    };
    if a.summary_extra.is_empty() {
        summary_json::write_summary_json(a.dir, &n.summary_json, a.profiling, a.warmup, &info)?;
    } else {
        let path = a.dir.join(&n.summary_json);
        let mut v = summary_json::render_summary_json(a.profiling, a.warmup, &info)
            .map_err(|e| crate::ArtifactError::json(&path, e))?;
        if let serde_json::Value::Object(o) = &mut v {
            for (k, x) in a.summary_extra {
                o.insert(k.clone(), x.clone());
            }
        }
        let bytes =
            serde_json::to_vec_pretty(&v).map_err(|e| crate::ArtifactError::json(&path, e))?;
        atomic::write_atomic(a.dir, &n.summary_json, &bytes)?;
    }
    files.push(n.summary_json.clone());
    summary_csv::write_summary_csv(a.dir, &n.summary_csv, a.profiling)?;
    files.push(n.summary_csv.clone());
    let mut console = if a.console_extra.is_empty() {
        console::render_console(a.profiling)
    } else {
        let mut shown = a.profiling.clone();
        shown.metrics.extend(a.console_extra.iter().cloned());
        console::render_console(&shown)
    };
    console.push_str(a.console_tail);
    atomic::write_atomic(a.dir, &n.console_txt, console.as_bytes())?;
    files.push(n.console_txt.clone());
    // A run of more than one phase also gets AIPerf's per-phase summaries and their index.
    if let Some(w) = a.warmup {
        let phases = [
            crate::phases::PhaseExport {
                name: "warmup",
                window: a.warmup_window,
                summary: w,
            },
            crate::phases::PhaseExport {
                name: "profiling",
                window: a.profiling_window,
                summary: a.profiling,
            },
        ];
        files.extend(crate::phases::write_phase_exports(
            a.dir, n, anchor, &info, &phases,
        )?);
    }

    if a.dir.join(&n.evidence).exists() {
        files.push(n.evidence.clone());
    } else if a
        .dir
        .join(inferbench_core::evidence::EVIDENCE_FILE_ZST)
        .exists()
    {
        files.push(inferbench_core::evidence::EVIDENCE_FILE_ZST.into());
    }
    files.push(n.manifest.clone());
    files.push(n.results_ready.clone());
    let mut manifest = a.manifest.clone();
    manifest.files = files.clone();
    small::write_manifest(a.dir, &manifest)?;
    small::write_results_ready(a.dir, status.was_cancelled, status.partial)?;
    Ok(Written { files, console })
}
