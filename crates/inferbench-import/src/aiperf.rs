//! Importer of AIPerf (0.13) artifact directories.
//!
//! - `profile_export_raw.jsonl` (`--export-level raw`), when present, gives each request's
//!   full timeline: every response message with its arrival time, the request body, the
//!   status and the error. Records get frames and parsed events, as a live run would.
//! - Otherwise `profile_export.jsonl` (records level) gives metadata and per-record metric
//!   values only: content responses are rebuilt from TTFT and the inter-chunk gaps as
//!   placeholder events, and everything else of the stream is lost (see `losses`).
//! - Token counts are AIPerf's own when `profile_export.jsonl` is there (joined on
//!   `x_request_id`), else counted with the caller's tokenizer.
//! - The per-record metric values of `profile_export.jsonl` are kept as they are
//!   ([`AiperfImport::record_metrics`]), so that what cannot be recomputed (HTTP trace
//!   metrics) can still be aggregated.
//! - Phase windows (the throughput denominator) come from `logs/aiperf.log` (exact), else
//!   `phase_manifest.json`, else the summary's µs `start_time`/`end_time`, else the records.
//!
//! Times become ns from an anchor: the earliest wall-clock instant of the run, so that
//! `anchor_unix_ns + t_ns` is AIPerf's wall-clock value exactly (AIPerf's float64 rounding
//! of wall-clock instants is part of its definitions).

mod files;
mod identity;
mod json;
mod lines;
mod timeline;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use inferbench_core::evidence::{EvidenceEnd, EvidenceHeader, PhaseWindow, StopReason};
use inferbench_core::plan::EndpointType;
use inferbench_core::record::{ConnectionEvidence, EventKindOpt, PhaseOpt, ReportedHttpTrace};
use inferbench_core::summary::{RecordMetric, RecordMetricValue};
use inferbench_core::{
    ErrorKind, Event, EventKind, Evidence, Frame, Phase, Record, RecordError, TokenCounts,
};
use inferbench_protocol::decode::{self, Decoded};
use serde_json::Value;

use files::{RunFiles, WallWindow};
use json::At;
use lines::{ErrorIn, Meta, MetricsLine, RawLine, RawResponse};
use timeline::*;

use crate::{ImportError, ImportedRun, SourceTool};

/// The definition set that reproduces AIPerf 0.13's summaries.
pub const NATIVE_DEFINITIONS: &str = "aiperf-0.13";

/// Text of a content response rebuilt from records-level metrics (the real text is not in
/// `profile_export.jsonl`); non-empty so that the event counts as a content response.
pub const PLACEHOLDER_TEXT: &str = "\u{2026}";

/// The per-record metric values AIPerf wrote for one record (`profile_export.jsonl`), in
/// display units, as written.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportedRecordMetrics {
    /// [`Record::id`] of the record in [`ImportedRun::evidence`].
    pub id: u64,
    pub phase: Phase,
    pub metrics: Vec<RecordMetric>,
}

/// An imported AIPerf run, with the per-record metric values AIPerf exported.
#[derive(Clone, Debug)]
pub struct AiperfImport {
    pub run: ImportedRun,
    /// One entry per line of `profile_export.jsonl` (empty without that file), in record
    /// order: the values as AIPerf computed them, including those no definition set can
    /// recompute from the files (`http_req_*`).
    pub record_metrics: Vec<ImportedRecordMetrics>,
}

/// True when `dir` (or its single run subfolder) holds AIPerf artifacts.
pub fn looks_like(dir: &Path) -> bool {
    RunFiles::find(dir).is_some()
}

/// Imports an AIPerf run directory (see the module documentation).
pub fn import(
    dir: &Path,
    count_tokens: &(dyn Fn(&str) -> u64 + Sync),
) -> Result<ImportedRun, ImportError> {
    import_full(dir, count_tokens).map(|i| i.run)
}

/// One request as read from the files, before times are made relative to the anchor.
struct Pending {
    meta: Meta,
    error: Option<ErrorIn>,
    source: Source,
    metrics: Option<MetricsLine>,
}

enum Source {
    Raw {
        start_perf_ns: u64,
        status: Option<u16>,
        responses: Vec<RawResponse>,
        payload: Option<Value>,
        line: usize,
    },
    Metrics,
}

/// [`import`], also returning the per-record metric values of `profile_export.jsonl`.
pub fn import_full(
    dir: &Path,
    count_tokens: &(dyn Fn(&str) -> u64 + Sync),
) -> Result<AiperfImport, ImportError> {
    let files = RunFiles::find(dir).ok_or_else(|| ImportError::Unrecognized {
        path: dir.to_path_buf(),
    })?;
    let mut losses: Vec<String> = Vec::new();

    let summary = files.summary.as_deref().map(files::read_json).transpose()?;
    let summary_obj = summary.as_ref().filter(|s| s.is_object());

    // Per-record metrics (records level).
    let mut metric_lines: Vec<MetricsLine> = Vec::new();
    if let Some(p) = &files.records {
        let cut = lines::read_json_lines(p, |n, v| {
            metric_lines.push(lines::metrics_line(p, n, v)?);
            Ok(())
        })?;
        if cut {
            losses.push(cut_line_loss(p));
        }
    }
    // Full timelines (raw level).
    let mut raw_lines: Vec<RawLine> = Vec::new();
    if let Some(p) = &files.raw {
        let cut = lines::read_json_lines(p, |n, v| {
            raw_lines.push(lines::raw_line(p, n, v)?);
            Ok(())
        })?;
        if cut {
            losses.push(cut_line_loss(p));
        }
    }
    if files.records.is_none() && files.raw.is_none() {
        return Err(ImportError::Format {
            path: files.dir.clone(),
            location: None,
            message: "no per-request file (profile_export.jsonl or profile_export_raw.jsonl): \
                      a summary alone cannot be re-scored"
                .into(),
        });
    }

    let version = detect_version(summary_obj, &raw_lines);
    if !version.starts_with("0.13") {
        losses.push(format!(
            "AIPerf version {version}: scored with the {NATIVE_DEFINITIONS} definitions, \
             which reproduce 0.13.0 only"
        ));
    }
    let endpoint = endpoint_type(summary_obj, files.summary.as_deref(), &raw_lines)?;
    let streaming = is_streaming(summary_obj, &raw_lines, &metric_lines);
    let server_tokens = summary_obj.is_some_and(files::server_token_count);
    let per_chunk_usage = summary_obj.is_some_and(files::per_chunk_usage);
    let inputs = match &files.inputs {
        Some(p) => Some(files::read_inputs(p)?),
        None => None,
    };

    // Pair each request's raw line with its metrics line (same x_request_id).
    let use_raw = files.raw.is_some();
    let mut pending: Vec<Pending> = Vec::new();
    if use_raw {
        let mut by_id: HashMap<String, MetricsLine> = HashMap::new();
        for m in metric_lines.iter().cloned() {
            by_id.insert(m.meta.request_id.clone(), m);
        }
        for r in raw_lines {
            let metrics = by_id.remove(&r.meta.request_id);
            pending.push(Pending {
                meta: r.meta,
                error: r.error,
                metrics,
                source: Source::Raw {
                    start_perf_ns: r.start_perf_ns,
                    status: r.status,
                    responses: r.responses,
                    payload: r.payload,
                    line: r.line,
                },
            });
        }
        if !by_id.is_empty() {
            losses.push(format!(
                "{} record(s) of {} have no line in {}: they are left out",
                by_id.len(),
                file_name(files.records.as_deref()),
                file_name(files.raw.as_deref())
            ));
        }
    } else {
        for m in metric_lines.iter().cloned() {
            pending.push(Pending {
                meta: m.meta.clone(),
                error: m.error.clone(),
                metrics: Some(m),
                source: Source::Metrics,
            });
        }
    }
    // Warmup first (ids follow the schedule); file order within a phase.
    pending.sort_by_key(|p| p.meta.phase);

    // Phase windows, in wall-clock ns.
    let mut windows: Vec<WallWindow> = Vec::new();
    if let Some(p) = &files.log {
        windows = files::windows_from_log(&files::read_text(p)?);
    }
    if windows.is_empty()
        && let Some(p) = &files.phase_manifest
    {
        windows = files::windows_from_phase_manifest(&files::read_json(p)?);
        if !windows.is_empty() {
            losses.push(
                "phase windows from phase_manifest.json (end_ns taken as the last request's \
                 end; not checked against a real run)"
                    .into(),
            );
        }
    }
    if windows.is_empty()
        && let Some(w) = summary_obj.and_then(files::window_from_summary)
    {
        windows.push(w);
        losses.push(
            "profiling window from the summary's start_time/end_time (µs; logs/aiperf.log \
             absent): throughputs agree with AIPerf's to about 1e-6 relative, not bit for bit"
                .into(),
        );
    }
    let has_phase = |ph: Phase| pending.iter().any(|p| p.meta.phase == ph);
    for ph in [Phase::Warmup, Phase::Profiling] {
        if has_phase(ph) && !windows.iter().any(|w| w.phase == ph) {
            losses.push(format!(
                "no {} window in the files: derived from the records (first credit to last \
                 end), which is not AIPerf's throughput denominator",
                ph.as_str()
            ));
        }
    }

    // The anchor: the earliest instant, so that every time is a u64 offset from it.
    let anchor = pending
        .iter()
        .flat_map(|p| [p.meta.credit_ns.unwrap_or(p.meta.start_ns), p.meta.start_ns])
        .chain(windows.iter().map(|w| w.start_ns))
        .min()
        .unwrap_or(0);

    let mut workers: HashMap<String, u32> = HashMap::new();
    let mut records: Vec<Record> = Vec::with_capacity(pending.len());
    let mut record_metrics: Vec<ImportedRecordMetrics> = Vec::new();
    let mut counted_tokens = false;
    let mut rebuilt_without_gaps = 0usize;
    for (i, p) in pending.into_iter().enumerate() {
        let id = i as u64;
        let n_workers = workers.len() as u32;
        let worker = *workers.entry(p.meta.worker.clone()).or_insert(n_workers);
        let rel = |t: u64| t - anchor;
        let m = &p.meta;
        let mut rec = Record {
            id,
            phase: PhaseOpt(m.phase),
            request_id: m.request_id.clone(),
            correlation_id: m.correlation_id.clone(),
            conversation_id: m.conversation_id.clone(),
            session_num: m.session_num,
            turn_index: m.turn_index,
            payload_index: id,
            worker,
            streaming,
            planned_ns: rel(m.credit_ns.unwrap_or(m.start_ns).max(anchor)),
            start_ns: rel(m.start_ns),
            sent_ns: None,
            ack_ns: m.ack_ns.filter(|t| *t >= anchor).map(rel),
            end_ns: m.end_ns.saturating_sub(anchor),
            cancelled: m.cancelled,
            cancel_ns: m.cancel_ns.filter(|t| *t >= anchor).map(rel),
            ..Default::default()
        };
        let turn_payload = inputs
            .as_ref()
            .and_then(|inp| inp.by_turn.get(&(m.conversation_id.clone(), m.turn_index)));
        if let Some((index, _)) = turn_payload {
            rec.payload_index = *index;
        }
        let metrics = p.metrics.as_ref().map(|l| l.metrics.as_slice());
        match &p.source {
            Source::Raw {
                start_perf_ns,
                status,
                responses,
                payload,
                line,
            } => {
                let raw_path = files.raw.as_deref().unwrap_or(&files.dir);
                let at = At::line(raw_path, *line);
                rec.status = *status;
                timeline_from_raw(at, &mut rec, endpoint, *start_perf_ns, responses)?;
                let body = payload
                    .as_ref()
                    .or(turn_payload.map(|(_, b)| b))
                    .and_then(Value::as_object);
                if let Some(b) = body {
                    rec.request_bytes = serde_json::to_string(b).map_or(0, |s| s.len() as u64);
                    rec.requested_output_tokens =
                        inferbench_protocol::body::max_output_tokens(endpoint, b);
                }
                if !server_tokens {
                    match metrics {
                        Some(ms) => rec.tokens = tokens_from_metrics(ms, p.error.is_some()),
                        None => {
                            counted_tokens = true;
                            rec.tokens = count_record_tokens(
                                &rec,
                                body,
                                endpoint,
                                p.error.is_some(),
                                count_tokens,
                            )
                        }
                    }
                }
            }
            Source::Metrics => {
                let ms = metrics.unwrap_or(&[]);
                let records_path = files.records.as_deref().unwrap_or(&files.dir);
                let line = p.metrics.as_ref().map_or(0, |l| l.line);
                if p.error.is_none() {
                    let gaps = timeline_from_metrics(At::line(records_path, line), &mut rec, ms)?;
                    rebuilt_without_gaps += usize::from(!gaps && streaming);
                }
                if let Some(b) = turn_payload.and_then(|(_, b)| b.as_object()) {
                    rec.request_bytes = serde_json::to_string(b).map_or(0, |s| s.len() as u64);
                    rec.requested_output_tokens =
                        inferbench_protocol::body::max_output_tokens(endpoint, b);
                } else {
                    rec.requested_output_tokens = requested_from_mismatch(ms);
                }
                if !server_tokens {
                    rec.tokens = tokens_from_metrics(ms, p.error.is_some());
                }
            }
        }
        rec.error = p.error.as_ref().map(|e| record_error(e, &rec));
        if let (None, Some(l)) = (&rec.error, &p.metrics) {
            let records_path = files.records.as_deref().unwrap_or(&files.dir);
            if let Some(h) = reported_http(At::line(records_path, l.line), &l.metrics)? {
                // The connection's number is not in the files; reuse is.
                rec.connection = Some(ConnectionEvidence {
                    reused: h.connection_reused == Some(1),
                    reported: Some(h),
                    ..Default::default()
                });
            }
        }
        if let Some(l) = p.metrics {
            record_metrics.push(ImportedRecordMetrics {
                id,
                phase: l.meta.phase,
                metrics: l.metrics,
            });
        }
        records.push(rec);
    }

    if use_raw {
        losses.push(
            "read boundaries are approximated: response messages with the same perf_ns form \
             one frame, and frame sizes are estimated from the SSE message lengths \
             (`data: …` plus the blank line)"
                .into(),
        );
        losses.push(
            "request body write times (sent_ns) and the HTTP trace timestamps behind the \
             http_req_* metrics are not exported: their per-record values \
             (profile_export.jsonl) are kept as reported, and connection numbers are unknown"
                .into(),
        );
        if files.records.is_none() {
            losses.push(
                "profile_export.jsonl absent: AIPerf's per-record metrics (http_req_* \
                 included) are lost"
                    .into(),
            );
        }
    } else {
        losses.push(
            "exported at records level (no profile_export_raw.jsonl): content responses are \
             rebuilt as placeholder events at the times TTFT and the inter-chunk gaps give, \
             reasoning before the first output token; response texts, role-only, usage-only \
             and [DONE] messages, error events, read boundaries and frame sizes are lost, so \
             definitions that count empty chunks or parse texts cannot be recomputed"
                .into(),
        );
        losses.push(
            "error records keep no timeline (partial streams of failed requests are lost)".into(),
        );
    }
    if rebuilt_without_gaps > 0 {
        losses.push(format!(
            "{rebuilt_without_gaps} streamed record(s) have no inter_chunk_latency: only their \
             first and last content responses are known, so chunk-gap metrics (ICL, the \
             ICL-aware sweep-line curves) cannot be recomputed for them"
        ));
    }
    if counted_tokens {
        losses.push(
            "token counts were made with the importing tokenizer, not AIPerf's (no \
             profile_export.jsonl values)"
                .into(),
        );
    }
    if records.iter().any(|r| r.error.is_some()) {
        losses.push("the cause and cause_chain of errors are not kept".into());
    }

    let mut phases: Vec<PhaseWindow> = windows
        .iter()
        .filter(|w| w.start_ns >= anchor && w.requests_end_ns >= w.start_ns)
        .map(|w| {
            let recs = records.iter().filter(|r| r.phase() == w.phase);
            let (mut n, mut errors, mut last_start) = (0u64, 0u64, None::<u64>);
            for r in recs {
                n += 1;
                errors += u64::from(r.error.is_some());
                last_start = Some(last_start.map_or(r.start_ns, |s| s.max(r.start_ns)));
            }
            PhaseWindow {
                phase: w.phase,
                start_ns: w.start_ns - anchor,
                sent_end_ns: w
                    .sent_end_ns
                    .filter(|t| *t >= anchor)
                    .map(|t| t - anchor)
                    .or(last_start)
                    .unwrap_or(w.start_ns - anchor),
                requests_end_ns: w.requests_end_ns - anchor,
                scheduled: w.expected.unwrap_or(n),
                completed: n,
                errors,
                cancelled: w.cancelled,
            }
        })
        .collect();
    phases.sort_by_key(|w| w.phase);

    let cancelled = summary_obj
        .and_then(|s| s.get("was_cancelled"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
        || windows.iter().any(|w| w.cancelled);
    let partial = match &files.results_ready {
        Some(p) => files::read_json(p)?
            .get("partial")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        None => false,
    };
    let end_ns = records.iter().map(|r| r.end_ns).max().unwrap_or(0);
    let n_records = records.len() as u64;
    let header = EvidenceHeader {
        schema_version: inferbench_core::record::EVIDENCE_SCHEMA_VERSION,
        tool: SourceTool::Aiperf.as_str().to_string(),
        tool_version: version.clone(),
        anchor_unix_ns: anchor,
        benchmark_id: summary_obj
            .and_then(|s| s.get("benchmark_id"))
            .and_then(Value::as_str)
            .unwrap_or("imported")
            .to_string(),
        endpoint_type: endpoint.as_str().to_string(),
        streaming,
        tokenizer: tokenizer_name(summary_obj, counted_tokens),
        use_server_token_count: server_tokens,
        per_chunk_usage,
    };
    let identity = identity::recover(&files, summary_obj, &version, server_tokens, &records);
    let evidence = Evidence {
        header,
        records,
        phases,
        end: Some(EvidenceEnd {
            stop_reason: if cancelled || partial {
                StopReason::Interrupted
            } else {
                StopReason::Completed
            },
            end_ns,
            records: n_records,
        }),
    };
    Ok(AiperfImport {
        run: ImportedRun {
            tool: SourceTool::Aiperf,
            version,
            native_definitions: NATIVE_DEFINITIONS.to_string(),
            dir: files.dir.clone(),
            evidence,
            original_summary: summary,
            losses,
            identity,
        },
        record_metrics,
    })
}

fn file_name(p: Option<&Path>) -> String {
    p.and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn cut_line_loss(p: &Path) -> String {
    format!(
        "the last line of {} was cut short (the run was killed mid-write) and is ignored",
        p.display()
    )
}

/// `aiperf_version` of the summary, else the `User-Agent: aiperf/X` sent with the requests.
fn detect_version(summary: Option<&Value>, raw: &[RawLine]) -> String {
    if let Some(v) = summary
        .and_then(|s| s.get("aiperf_version"))
        .and_then(Value::as_str)
    {
        return v.to_string();
    }
    raw.iter()
        .find_map(|r| r.user_agent.as_deref()?.strip_prefix("aiperf/"))
        .map_or_else(|| "unknown".to_string(), str::to_string)
}

/// `input_config.endpoint.type` (GenAI-Perf-style flat configs have `endpoint_type`), else
/// inferred from a request body (`messages` is chat, `prompt` completions).
fn endpoint_type(
    summary: Option<&Value>,
    summary_path: Option<&Path>,
    raw: &[RawLine],
) -> Result<EndpointType, ImportError> {
    let named = summary.and_then(|s| {
        s.pointer("/input_config/endpoint/type")
            .or_else(|| s.pointer("/input_config/endpoint_type"))
            .and_then(Value::as_str)
    });
    if let Some(name) = named {
        return EndpointType::parse(name).ok_or_else(|| {
            At::file(summary_path.unwrap_or(Path::new("profile_export_aiperf.json"))).err(
                "input_config.endpoint.type",
                format!("unknown endpoint type {name:?}"),
            )
        });
    }
    let body = raw.iter().find_map(|r| r.payload.as_ref());
    Ok(match body {
        Some(b) if b.get("prompt").is_some() => EndpointType::Completions,
        _ => EndpointType::Chat,
    })
}

fn is_streaming(summary: Option<&Value>, raw: &[RawLine], metrics: &[MetricsLine]) -> bool {
    if let Some(s) = summary
        .and_then(|s| s.pointer("/input_config/endpoint/streaming"))
        .and_then(Value::as_bool)
    {
        return s;
    }
    if let Some(r) = raw.iter().find(|r| !r.responses.is_empty()) {
        return matches!(r.responses[0], RawResponse::Sse { .. });
    }
    metrics
        .iter()
        .any(|m| m.metrics.iter().any(|x| x.tag == "time_to_first_token"))
}

fn tokenizer_name(summary: Option<&Value>, counted: bool) -> String {
    if counted {
        return "import:count_tokens".into();
    }
    let name = summary
        .and_then(|s| {
            s.pointer("/input_config/tokenizer/name")
                .or_else(|| s.pointer("/input_config/tokenizer"))
        })
        .and_then(Value::as_str);
    match name {
        Some(n) => format!("aiperf:{n}"),
        None => "aiperf".into(),
    }
}

/// Where the import read its records from; for callers that report it.
pub fn run_dir(dir: &Path) -> Option<PathBuf> {
    RunFiles::find(dir).map(|f| f.dir)
}
