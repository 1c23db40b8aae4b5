//! The record sink: everything that happens to a record after the engine (or the evidence
//! file, offline) hands it over — the fold into the metrics, its `profile_export.jsonl` and
//! raw lines — plus the side files and, at the end, every summary file with the manifest
//! and the results-ready marker last. `profile` feeds it live; `metrics DIR --write`
//! replays the evidence file through it, so both write the same files by construction.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use inferbench_artifacts::{ExportStatus, FileNames, RecordExportStream};
use inferbench_core::manifest::Manifest;
use inferbench_core::plan::{REDACTED, is_sensitive_header};
use inferbench_core::workload::Workload;
use inferbench_core::{EvidenceEnd, EvidenceHeader, PhaseWindow, Record, RunPlan, StopReason};
use inferbench_metrics::aiperf::Slo;

use crate::Failure;
use crate::fold::{Fold, Scores};
use crate::side_files::SideFiles;

/// What the sink needs to know about the run.
pub struct SinkSpec<'a> {
    pub dir: &'a Path,
    pub plan: &'a RunPlan,
    pub header: &'a EvidenceHeader,
    /// The frozen bodies (the raw export's payload when a record kept none of its own).
    pub workload: Arc<Workload>,
    pub slos: &'a [Slo],
    /// Whether the run has a warmup phase (it shifts `phase_index`, as in AIPerf).
    pub has_warmup: bool,
}

pub struct RecordSink {
    dir: PathBuf,
    names: FileNames,
    plan: RunPlan,
    anchor_unix_ns: u64,
    benchmark_id: String,
    fold: Fold,
    exports: RecordExportStream,
    workload: Arc<Workload>,
    side: SideFiles,
}

/// What the sink wrote.
#[derive(Clone, Debug)]
pub struct Finished {
    pub scores: Scores,
    /// The console table (also in the console file).
    pub console: String,
    /// Every file of the run, relative to its directory, in the manifest's order.
    pub files: Vec<String>,
    pub manifest: Manifest,
}

impl RecordSink {
    pub fn open(spec: SinkSpec<'_>) -> Result<RecordSink, Failure> {
        let names = inferbench_artifacts::file_names(&spec.plan.artifacts.prefix);
        let exports = RecordExportStream::create(
            spec.dir,
            &names,
            spec.plan.artifacts.export_level,
            spec.header.anchor_unix_ns,
            spec.has_warmup,
        )?;
        Ok(RecordSink {
            dir: spec.dir.to_path_buf(),
            names,
            plan: spec.plan.clone(),
            anchor_unix_ns: spec.header.anchor_unix_ns,
            benchmark_id: spec.header.benchmark_id.clone(),
            fold: Fold::new(spec.header, spec.slos, spec.plan.confidence_level)?,
            exports,
            workload: spec.workload,
            side: SideFiles::default(),
        })
    }

    /// One record, its tokens already counted.
    pub fn record(&mut self, r: &Record) -> Result<(), Failure> {
        let Some(metrics) = self.fold.push(r) else {
            return Ok(());
        };
        let (headers, body) = if self.exports.wants_raw() {
            // The body as sent: with its history when it had one.
            let body = r.sent_body.as_deref().or_else(|| {
                usize::try_from(r.payload_index)
                    .ok()
                    .and_then(|i| self.workload.payloads.get(i))
                    .map(|p| p.body.as_str())
            });
            (sent_headers(&self.plan, r), body)
        } else {
            (Vec::new(), None)
        };
        self.exports.push(r, &metrics, &headers, body)?;
        Ok(())
    }

    pub fn phase(&mut self, w: PhaseWindow) {
        self.fold.phase(w);
    }

    /// Writes a registered side file (atomically) and lists it.
    pub fn side_file(&mut self, name: &'static str, bytes: &[u8]) -> Result<(), Failure> {
        let mut f = inferbench_artifacts::AtomicFile::create(&self.dir, name)?;
        f.write_all(bytes)?;
        f.commit()?;
        self.side.mark(name);
        Ok(())
    }

    /// Lists the registered side files already in the directory (an offline rewrite keeps
    /// them untouched).
    pub fn keep_side_files(&mut self) {
        self.side = SideFiles::found_in(&self.dir);
    }

    /// Finishes every file: the record exports, the summaries, the console, the manifest
    /// (with the list of files) and the results-ready marker, last. `end` is the evidence's
    /// end line (None for a run killed before writing it).
    pub fn finish(
        self,
        end: Option<&EvidenceEnd>,
        manifest: &Manifest,
        inputs: &serde_json::Value,
    ) -> Result<Finished, Failure> {
        let scores = self.fold.finish(&self.plan);
        let mut record_files = self.exports.commit()?;
        record_files.extend(self.side.names());
        let stopped_early = end.map(|e| e.stop_reason) != Some(StopReason::Completed);
        let written = inferbench_artifacts::write_summary_artifacts(
            &inferbench_artifacts::SummaryArtifacts {
                dir: &self.dir,
                names: &self.names,
                benchmark_id: &self.benchmark_id,
                anchor_unix_ns: self.anchor_unix_ns,
                profiling_window: scores.profiling_window,
                status: ExportStatus {
                    was_cancelled: stopped_early,
                    partial: stopped_early,
                },
                plan: &self.plan,
                profiling: &scores.profiling,
                warmup: scores.warmup.as_ref(),
                inputs,
                manifest,
                record_files,
            },
        )?;
        let mut manifest = manifest.clone();
        manifest.files = written.files.clone();
        Ok(Finished {
            scores,
            console: written.console,
            files: written.files,
            manifest,
        })
    }
}

/// The headers a record was sent with, as the raw export shows them (secrets redacted).
pub fn sent_headers(plan: &RunPlan, r: &Record) -> Vec<(String, String)> {
    let mut h = vec![
        (
            "User-Agent".to_string(),
            format!("inferbench/{}", inferbench_core::TOOL_VERSION),
        ),
        ("X-Request-ID".to_string(), r.request_id.clone()),
        ("X-Correlation-ID".to_string(), r.correlation_id.clone()),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    if r.streaming {
        h.push(("Accept".to_string(), "text/event-stream".to_string()));
    }
    if plan.api_key.is_some() {
        h.push(("Authorization".to_string(), REDACTED.to_string()));
    }
    for (name, value) in &plan.headers {
        let v = if is_sensitive_header(name) {
            REDACTED.to_string()
        } else {
            value.expose().to_string()
        };
        h.push((name.clone(), v));
    }
    h
}
