//! Importer of GenAI-Perf artifact directories.
//!
//! Perf Analyzer's `profile_export.json` is the evidence: per request its start
//! (`timestamp`), the payload it sent, and one timestamp and raw text per *response* (one
//! libcurl read callback). Each response becomes one [`Frame`]; its text is fed to the same
//! SSE parser and decoders the engine uses, so each event carries the frame that completed it,
//! exactly as a live record would. `profile_export_genai_perf.json` is kept as the original
//! summary and, with the CSV, tells the GenAI-Perf release (see [`detect_version`]).
//!
//! Times: the anchor is the earliest timestamp in the file (Perf Analyzer's clock is the wall
//! clock), so `anchor_unix_ns` is that instant and every `t_ns` is relative to it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use inferbench_core::evidence::{EvidenceEnd, EvidenceHeader, PhaseWindow, StopReason};
use inferbench_core::inputs_json::{self, InputsJsonError};
use inferbench_core::plan::EndpointType;
use inferbench_core::record::{EventKindOpt, PhaseOpt};
use inferbench_core::{
    ErrorKind, Event, EventKind, Evidence, Frame, Phase, Record, RecordError, TokenCounts,
};
use inferbench_protocol::decode::{self, Decoded};
use inferbench_protocol::sse::{SseMessage, SseParser};
use serde_json::Value;

use crate::{ImportError, ImportedRun, SourceTool};

mod files;
mod identity;
mod record;

use files::*;
pub use files::{DetectedVersion, RunFiles, detect_version, locate, looks_like};
use record::*;

/// Perf Analyzer's export file name (GenAI-Perf's default `--profile-export-file`).
pub const PA_EXPORT: &str = "profile_export.json";
/// Suffix GenAI-Perf adds to the export's stem for its summary files.
pub const SUMMARY_SUFFIX: &str = "_genai_perf";

pub const SET_0_0_13: &str = "genai-perf-0.0.13";
pub const SET_0_0_10: &str = "genai-perf-0.0.10";
pub const SET_0_0_4: &str = "genai-perf-0.0.4";
pub const SET_0_0_1: &str = "genai-perf-0.0.1";

fn read_text(path: &Path) -> Result<String, ImportError> {
    std::fs::read_to_string(path).map_err(|e| ImportError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn format_err(path: &Path, location: impl Into<String>, message: impl Into<String>) -> ImportError {
    ImportError::Format {
        path: path.to_path_buf(),
        location: Some(location.into()),
        message: message.into(),
    }
}

fn parse_json(path: &Path, text: &str) -> Result<Value, ImportError> {
    serde_json::from_str(text).map_err(|e| {
        format_err(
            path,
            format!("line {} column {}", e.line(), e.column()),
            format!("not valid JSON: {e}"),
        )
    })
}

/// One Perf Analyzer request, checked.
struct PaRequest<'a> {
    timestamp: u64,
    inputs: Option<&'a serde_json::Map<String, Value>>,
    responses: Vec<(u64, &'a str)>,
}

fn parse_request<'a>(path: &Path, at: &str, v: &'a Value) -> Result<PaRequest<'a>, ImportError> {
    let obj = v
        .as_object()
        .ok_or_else(|| format_err(path, at, "expected an object"))?;
    let timestamp = obj
        .get("timestamp")
        .and_then(Value::as_u64)
        .ok_or_else(|| {
            format_err(
                path,
                format!("{at}.timestamp"),
                "expected an unsigned integer (ns)",
            )
        })?;
    let inputs = match obj.get("request_inputs") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => {
            return Err(format_err(
                path,
                format!("{at}.request_inputs"),
                "expected an object",
            ));
        }
    };
    let ts = obj
        .get("response_timestamps")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            format_err(
                path,
                format!("{at}.response_timestamps"),
                "expected an array",
            )
        })?;
    let outs = obj
        .get("response_outputs")
        .and_then(Value::as_array)
        .ok_or_else(|| format_err(path, format!("{at}.response_outputs"), "expected an array"))?;
    if ts.len() != outs.len() {
        return Err(format_err(
            path,
            format!("{at}.response_outputs"),
            format!(
                "{} outputs for {} response_timestamps",
                outs.len(),
                ts.len()
            ),
        ));
    }
    let mut responses = Vec::with_capacity(ts.len());
    for (j, (t, o)) in ts.iter().zip(outs).enumerate() {
        let t = t.as_u64().ok_or_else(|| {
            format_err(
                path,
                format!("{at}.response_timestamps[{j}]"),
                "expected an unsigned integer (ns)",
            )
        })?;
        let text = match o.get("response") {
            Some(Value::String(s)) => s.as_str(),
            _ => {
                return Err(format_err(
                    path,
                    format!("{at}.response_outputs[{j}].response"),
                    "expected a string (only OpenAI-kind exports are supported)",
                ));
            }
        };
        responses.push((t, text));
    }
    Ok(PaRequest {
        timestamp,
        inputs,
        responses,
    })
}

/// Each entry's first body (compact JSON) → the entry's index, read with core's reader.
fn inputs_index(path: &Path, text: &str) -> Result<HashMap<String, u64>, ImportError> {
    let entries = inputs_json::read_genai_perf(text).map_err(|e| match e {
        InputsJsonError::Syntax {
            line,
            column,
            message,
        } => format_err(
            path,
            format!("line {line} column {column}"),
            format!("not valid JSON: {message}"),
        ),
        InputsJsonError::Field { path: at, message } => format_err(path, at, message),
    })?;
    let mut map = HashMap::new();
    for (i, entry) in entries.into_iter().enumerate() {
        // OpenAI inputs: `{"payload": [body]}`; one turn per entry.
        if let Some(t) = entry.turns.into_iter().next() {
            map.entry(Value::Object(t.body).to_string())
                .or_insert(i as u64);
        }
    }
    Ok(map)
}

fn tokenizer_name(summary: Option<&Value>) -> Option<String> {
    let cfg = summary?.get("input_config")?;
    let t = cfg.get("tokenizer")?;
    t.as_str()
        .or_else(|| t.get("name").and_then(Value::as_str))
        .map(str::to_string)
}

/// Imports the GenAI-Perf run in `dir` (or its single run subfolder). `count_tokens` counts
/// tokens as GenAI-Perf's tokenizer wrapper does (no special tokens); load the tokenizer the
/// run used (`input_config` names it) to reproduce its numbers.
pub fn import(
    dir: &Path,
    count_tokens: &(dyn Fn(&str) -> u64 + Sync),
) -> Result<ImportedRun, ImportError> {
    let files = locate(dir).ok_or_else(|| ImportError::Unrecognized {
        path: dir.to_path_buf(),
    })?;
    let summary = match &files.summary_json {
        Some(p) => {
            let v = parse_json(p, &read_text(p)?)?;
            if !v.is_object() {
                return Err(format_err(p, "$", "expected an object"));
            }
            Some(v)
        }
        None => None,
    };
    let csv = match &files.summary_csv {
        Some(p) => Some(read_text(p)?),
        None => None,
    };
    let det = detect_version(summary.as_ref(), csv.as_deref());
    let all_messages = minor(&det.version).is_none_or(|m| m >= 12);

    let path = files.export.as_path();
    let root = parse_json(path, &read_text(path)?)?;
    let root_obj = root
        .as_object()
        .ok_or_else(|| format_err(path, "$", "expected an object"))?;
    if let Some(kind) = root_obj.get("service_kind").and_then(Value::as_str)
        && kind != "openai"
    {
        return Err(format_err(
            path,
            "service_kind",
            format!("service kind '{kind}' is not supported (only openai)"),
        ));
    }
    let experiments = root_obj
        .get("experiments")
        .and_then(Value::as_array)
        .ok_or_else(|| format_err(path, "experiments", "expected an array"))?;
    let mut requests = Vec::new();
    for (k, exp) in experiments.iter().enumerate() {
        let list = exp
            .get("requests")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                format_err(
                    path,
                    format!("experiments[{k}].requests"),
                    "expected an array",
                )
            })?;
        for (i, r) in list.iter().enumerate() {
            let at = format!("experiments[{k}].requests[{i}]");
            let req = parse_request(path, &at, r)?;
            requests.push((at, req));
        }
    }
    let anchor = requests
        .iter()
        .flat_map(|(_, r)| std::iter::once(r.timestamp).chain(r.responses.iter().map(|x| x.0)))
        .min()
        .unwrap_or(0);
    let first_response = requests
        .iter()
        .flat_map(|(_, r)| r.responses.iter().map(|x| x.1))
        .find(|t| !t.trim().is_empty());
    let endpoint = endpoint_type(
        path,
        root_obj.get("endpoint").and_then(Value::as_str),
        summary.as_ref().and_then(|s| s.get("input_config")),
        first_response,
    )?;
    let (payload_index, have_inputs) = match &files.inputs {
        Some(p) => (inputs_index(p, &read_text(p)?)?, true),
        None => (HashMap::new(), false),
    };
    let mut ctx = Context {
        endpoint,
        all_messages,
        anchor,
        payload_index,
        count_tokens,
    };
    let mut tally = Tally::default();
    let mut records = Vec::with_capacity(requests.len());
    for (id, (at, req)) in requests.iter().enumerate() {
        records.push(build_record(
            &mut ctx, &mut tally, path, at, id as u64, req,
        )?);
    }

    let streaming = summary
        .as_ref()
        .and_then(|s| s.get("input_config"))
        .and_then(|c| {
            c.get("streaming")
                .or_else(|| c.get("endpoint").and_then(|e| e.get("streaming")))
        })
        .and_then(Value::as_bool)
        .unwrap_or_else(|| records.iter().any(|r| r.streaming));
    let tokenizer = tokenizer_name(summary.as_ref());
    let phases = match (
        records.iter().map(|r| r.start_ns).min(),
        records.iter().map(|r| r.start_ns).max(),
        records.iter().map(|r| r.end_ns).max(),
    ) {
        (Some(start), Some(sent_end), Some(end)) => vec![PhaseWindow {
            phase: Phase::Profiling,
            start_ns: start,
            sent_end_ns: sent_end,
            requests_end_ns: end,
            scheduled: records.len() as u64,
            completed: records.len() as u64,
            errors: records.iter().filter(|r| r.is_error()).count() as u64,
            cancelled: false,
        }],
        _ => Vec::new(),
    };
    let end_ns = phases.first().map_or(0, |p| p.requests_end_ns);

    let mut losses = det.notes.clone();
    losses.extend([
        "Perf Analyzer keeps one timestamp per read callback (response), not per SSE event: \
         events delivered in one callback share its time"
            .to_string(),
        "frame sizes are the byte lengths of the kept response texts; no send time, response \
         head time or HTTP status is kept (200 is assumed: Perf Analyzer stops a run at its \
         first failed request, so every exported request succeeded)"
            .to_string(),
        "no worker, connection or request id is exported (worker 0; request_id = the JSON \
         path of the request)"
            .to_string(),
        "no schedule: planned_ns = start_ns; warmup requests are not exported by Perf Analyzer"
            .to_string(),
        "timestamps are Perf Analyzer's wall clock (system_clock), not a monotonic clock"
            .to_string(),
        format!(
            "token counts were made by the importing tokenizer{}",
            tokenizer
                .as_deref()
                .map(|t| format!("; the run's GenAI-Perf used '{t}'"))
                .unwrap_or_default()
        ),
    ]);
    if experiments.len() > 1 {
        losses.push(format!(
            "{} experiments (load levels) are merged into one profiling phase; GenAI-Perf \
             scores each on its own",
            experiments.len()
        ));
    }
    if tally.fragments > 0 {
        losses.push(format!(
            "{} responses began inside an SSE event split across read callbacks: the evidence \
             puts such an event at the response where it ended, GenAI-Perf's re-stitch at the \
             one where it began, so those requests' GenAI-Perf times can differ",
            tally.fragments
        ));
    }
    if tally.unterminated > 0 {
        losses.push(format!(
            "{} SSE events had no terminating blank line; they were parsed at their request's \
             last response, as GenAI-Perf does",
            tally.unterminated
        ));
    }
    if !have_inputs {
        losses.push(
            "no inputs.json: payload_index numbers distinct payloads in order of first use"
                .to_string(),
        );
    } else if tally.unmatched_payloads > 0 {
        losses.push(format!(
            "{} payloads were not found in inputs.json; they are numbered after its entries",
            tally.unmatched_payloads
        ));
    }

    // The bodies as sent, for the generation controls when inputs.json is gone.
    let sent: Vec<serde_json::Map<String, Value>> = requests
        .iter()
        .filter_map(|(_, r)| r.inputs?.get("payload")?.as_str())
        .filter_map(|p| serde_json::from_str::<Value>(p).ok())
        .filter_map(|v| match v {
            Value::Object(o) => Some(o),
            _ => None,
        })
        .collect();
    let identity = identity::recover(&files, summary.as_ref(), &det, &sent, &records);
    let evidence = Evidence {
        header: EvidenceHeader {
            schema_version: inferbench_core::record::EVIDENCE_SCHEMA_VERSION,
            tool: SourceTool::GenaiPerf.as_str().to_string(),
            tool_version: det.version.clone(),
            anchor_unix_ns: anchor,
            benchmark_id: format!("{:012x}", anchor & 0xffff_ffff_ffff),
            endpoint_type: endpoint.as_str().to_string(),
            streaming,
            tokenizer: tokenizer.unwrap_or_else(|| "import".to_string()),
            use_server_token_count: false,
            per_chunk_usage: false,
        },
        records,
        phases,
        end: Some(EvidenceEnd {
            stop_reason: StopReason::Completed,
            end_ns,
            records: requests.len() as u64,
        }),
    };
    Ok(ImportedRun {
        tool: SourceTool::GenaiPerf,
        version: det.version,
        native_definitions: det.set.to_string(),
        dir: files.dir,
        evidence,
        original_summary: summary,
        losses,
        identity,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_from_summary_keys() {
        let v = json!({"output_token_throughput_per_user": {}, "request_latency": {"p1": 1.0}});
        assert_eq!(detect_version(Some(&v), None).version, "0.0.15-0.0.16");
        let v = json!({"output_token_throughput_per_user": {}});
        assert_eq!(detect_version(Some(&v), None).set, SET_0_0_13);
        let v = json!({"output_token_throughput_per_request": {},
                       "input_config": {"model": ["m"], "num_sessions": 0}});
        assert_eq!(
            detect_version(Some(&v), None),
            detected("0.0.12", SET_0_0_10)
        );
        let v = json!({"input_config": {"model": ["m"], "header": null}});
        assert_eq!(detect_version(Some(&v), None).version, "0.0.10-0.0.11");
        let v = json!({"input_config": {"model": ["m"], "request_count": 0}});
        assert_eq!(detect_version(Some(&v), None), detected("0.0.9", SET_0_0_4));
        let v = json!({"output_sequence_length": {"unit": "requests/sec"},
                       "input_config": {"model": ["m"]}});
        assert_eq!(detect_version(Some(&v), None), detected("0.0.8", SET_0_0_4));
        let v = json!({"num_output_token": {}});
        assert_eq!(detect_version(Some(&v), None).set, SET_0_0_1);
    }

    #[test]
    fn versions_from_csv_alone() {
        let csv = "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\r\n\r\nMetric,Value\r\n\
                   Output Token Throughput (per sec),1.00\r\nRequest Count (count),1.00\r\n";
        assert_eq!(detect_version(None, Some(csv)).set, SET_0_0_10);
        assert_eq!(detect_version(None, None).version, "unknown");
    }

    #[test]
    fn prompt_text_per_release() {
        let p = json!({"messages": [{"role": "system", "content": "a b"},
                                    {"role": "user", "content": "c"}]});
        assert_eq!(prompt_text(&p, true).as_deref(), Some("a b c"));
        assert_eq!(prompt_text(&p, false).as_deref(), Some("a b"));
        let p = json!({"prompt": ["x", "y"]});
        assert_eq!(prompt_text(&p, true).as_deref(), Some("x y"));
    }

    #[test]
    fn minor_reads_the_lower_bound() {
        assert_eq!(minor("0.0.10-0.0.11"), Some(10));
        assert_eq!(minor("0.0.12"), Some(12));
        assert_eq!(minor("unknown"), None);
    }
}
