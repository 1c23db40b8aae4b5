//! The record sink: everything that happens to a record after the engine (or the evidence
//! file, offline) hands it over — the fold into the metrics, its `profile_export.jsonl` and
//! raw lines — plus the side files and, at the end, every summary file with the manifest
//! and the results-ready marker last. `profile` feeds it live; `metrics DIR --write`
//! replays the evidence file through it, so both write the same files by construction.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use inferbench_artifacts::{ExportStatus, FileNames, RecordExportStream};
use inferbench_core::manifest::Manifest;
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
    /// The configured headers, for the raw export (shown redacted).
    headers: Vec<inferbench_client::headers::ConfiguredHeader>,
    side: SideFiles,
    /// How reasoning reached the client, for the identity's `reasoning_accounting`.
    reasoning: crate::run_identity::ReasoningSeen,
    /// Scores responses against the run's frozen expected answers, when it has some.
    scorer: Option<crate::correctness::Scorer>,
    /// `--export-outputs-json`: one entry per profiling record, written at the end.
    outputs: Option<Vec<inferbench_artifacts::outputs_json::OutputEntry>>,
    /// Per URL and per model, when the run has several (docs/routing.md).
    breakdown: Option<crate::breakdown::Breakdown>,
    /// The `--goodput` SLOs, for the timeslices (they are scored again from the evidence).
    slos: Vec<Slo>,
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
    /// The "By endpoint" table, when the run had several URLs or models.
    pub breakdown_console: Option<String>,
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
        )?
        .with_http_trace(spec.plan.artifacts.export_http_trace);
        let headers = crate::prepare::plan_headers(spec.plan)?;
        // The frozen answers are read back from the directory, live and offline alike.
        let scorer = match crate::correctness::AnswerSet::read(spec.dir)? {
            Some(set) => Some(crate::correctness::Scorer::writing(set, spec.dir)?),
            None => None,
        };
        let mut side = SideFiles::default();
        if scorer.is_some() {
            side.mark(crate::side_files::EXPECTED_ANSWERS);
        }
        Ok(RecordSink {
            slos: spec.slos.to_vec(),
            breakdown: crate::breakdown::Breakdown::wanted(spec.plan)
                .then(|| crate::breakdown::Breakdown::for_plan(spec.plan)),
            scorer,
            outputs: spec.plan.controls.export_outputs_json.then(Vec::new),
            headers,
            dir: spec.dir.to_path_buf(),
            names,
            plan: spec.plan.clone(),
            anchor_unix_ns: spec.header.anchor_unix_ns,
            benchmark_id: spec.header.benchmark_id.clone(),
            fold: Fold::new(spec.header, spec.slos, spec.plan.confidence_level)?,
            exports,
            workload: spec.workload,
            side,
            reasoning: crate::run_identity::ReasoningSeen::new(
                spec.plan.endpoint.reasoning_tags.is_some(),
            ),
        })
    }

    /// One record, its tokens already counted.
    pub fn record(&mut self, r: &Record) -> Result<(), Failure> {
        self.reasoning.push(r);
        let Some(metrics) = self.fold.push(r) else {
            return Ok(());
        };
        if let Some(s) = &mut self.scorer {
            s.push(r)?;
        }
        if let Some(b) = &mut self.breakdown {
            b.push(r, &metrics);
        }
        let (headers, body) = if self.exports.wants_raw() {
            // The body as sent: with its history when it had one.
            let body = r.sent_body.as_deref().or_else(|| {
                usize::try_from(r.payload_index)
                    .ok()
                    .and_then(|i| self.workload.payloads.get(i))
                    .map(|p| p.body.as_str())
            });
            // The same function built the request head on the wire.
            let headers = inferbench_client::headers::request_headers(
                &self.headers,
                &r.request_id,
                &r.correlation_id,
                r.streaming,
                true,
            );
            (headers, body)
        } else {
            (Vec::new(), None)
        };
        if let Some(o) = &mut self.outputs {
            o.push(inferbench_artifacts::outputs_json::OutputEntry::of(
                self.anchor_unix_ns,
                r,
                &metrics,
            ));
        }
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
        mut self,
        end: Option<&EvidenceEnd>,
        manifest: &Manifest,
        inputs: &serde_json::Value,
    ) -> Result<Finished, Failure> {
        if let Some(o) = self.outputs.take() {
            let bytes = inferbench_artifacts::outputs_json::render(o);
            self.side_file(crate::side_files::OUTPUTS_JSON, &bytes)?;
        }
        let mut scores = self.fold.finish(&self.plan);
        let mut side = self.side;
        let correctness = match self.scorer {
            Some(s) => {
                let m = s.finish(&self.dir, self.plan.confidence_level)?;
                side.mark(crate::side_files::CORRECTNESS_RECORDS);
                side.mark(crate::side_files::CORRECTNESS);
                m
            }
            None => Vec::new(),
        };
        // Server metrics and GPU telemetry, from the raw scrape file (live and offline alike).
        let telemetry = crate::telemetry::derive(
            &self.dir,
            &self.plan,
            &self.benchmark_id,
            self.anchor_unix_ns,
            &scores,
        )?;
        let (telemetry_rows, summary_extra) = match telemetry {
            Some(d) => {
                for n in &d.written {
                    side.mark(n);
                }
                (d.console, d.summary_extra)
            }
            None => (Vec::new(), Vec::new()),
        };
        // Before the manifest's file list is made: the breakdown is a side file.
        let breakdown_table = match &self.breakdown {
            Some(b) => {
                let v = b.to_json(&self.plan, scores.profiling_window);
                let bytes = serde_json::to_vec_pretty(&v)
                    .map_err(|e| Failure::run(format!("breakdown: {e}")))?;
                let mut f = inferbench_artifacts::AtomicFile::create(
                    &self.dir,
                    crate::side_files::BREAKDOWN,
                )?;
                f.write_all(&bytes)?;
                f.commit()?;
                side.mark(crate::side_files::BREAKDOWN);
                Some(b.console(&self.plan))
            }
            None => None,
        };
        let mut console_extra = correctness;
        console_extra.extend(telemetry_rows);
        // The identity's end-of-run pins, from what this sink saw (the same records live and
        // offline, so a rewrite keeps the same identity).
        let mut manifest = manifest.clone();
        if let Some(id) = manifest.identity.as_mut() {
            crate::run_identity::finish_run(id, &self.reasoning, manifest.stop_reason);
        }
        let manifest = &manifest;
        let mut record_files = self.exports.commit()?;
        // From the evidence file, complete by now, live and offline alike.
        record_files.extend(crate::timeslices::write(
            &self.dir,
            &self.plan,
            &self.names,
            &self.slos,
        )?);
        record_files.extend(side.names());
        let stopped_early = end.map(|e| e.stop_reason) != Some(StopReason::Completed);
        let written = inferbench_artifacts::write_summary_artifacts(
            &inferbench_artifacts::SummaryArtifacts {
                dir: &self.dir,
                names: &self.names,
                benchmark_id: &self.benchmark_id,
                anchor_unix_ns: self.anchor_unix_ns,
                profiling_window: scores.profiling_window,
                warmup_window: scores.warmup_window,
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
                console_extra: &console_extra,
                summary_extra: &summary_extra,
                // After AIPerf's tables, in the console file too, written before the marker.
                console_tail: breakdown_table.as_deref().unwrap_or(""),
            },
        )?;
        let mut manifest = manifest.clone();
        manifest.files = written.files.clone();
        let console = written.console;
        // Accuracy goes next to the speed metrics on the console only: the AIPerf files keep
        // AIPerf's metrics (correctness has its own files), the console file already has it.
        scores.profiling.metrics.extend(console_extra);
        Ok(Finished {
            breakdown_console: breakdown_table,
            scores,
            console,
            files: written.files,
            manifest,
        })
    }
}
