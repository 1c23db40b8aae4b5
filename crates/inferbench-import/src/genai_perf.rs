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

use inferbench_client::decode::{self, Decoded};
use inferbench_client::sse::{SseMessage, SseParser};
use inferbench_core::evidence::{EvidenceEnd, EvidenceHeader, PhaseWindow, StopReason};
use inferbench_core::plan::EndpointType;
use inferbench_core::record::{EventKindOpt, PhaseOpt};
use inferbench_core::{
    ErrorKind, Event, EventKind, Evidence, Frame, Phase, Record, RecordError, TokenCounts,
};
use serde_json::Value;

use crate::{ImportError, ImportedRun, SourceTool};

/// Perf Analyzer's export file name (GenAI-Perf's default `--profile-export-file`).
pub const PA_EXPORT: &str = "profile_export.json";
/// Suffix GenAI-Perf adds to the export's stem for its summary files.
pub const SUMMARY_SUFFIX: &str = "_genai_perf";

pub const SET_0_0_13: &str = "genai-perf-0.0.13";
pub const SET_0_0_10: &str = "genai-perf-0.0.10";
pub const SET_0_0_4: &str = "genai-perf-0.0.4";
pub const SET_0_0_1: &str = "genai-perf-0.0.1";

/// The files of one GenAI-Perf run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFiles {
    pub dir: PathBuf,
    /// Perf Analyzer's export (`profile_export.json`, or `X.json` next to `X_genai_perf.json`).
    pub export: PathBuf,
    pub summary_json: Option<PathBuf>,
    pub summary_csv: Option<PathBuf>,
    pub inputs: Option<PathBuf>,
}

fn files_in(dir: &Path) -> Option<RunFiles> {
    let mut stem = None;
    if dir.join(PA_EXPORT).is_file() {
        stem = Some("profile_export".to_string());
    } else if let Ok(entries) = std::fs::read_dir(dir) {
        // A renamed export: find `X_genai_perf.json` whose `X.json` exists.
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        stem = names.iter().find_map(|n| {
            let s = n.strip_suffix(".json")?.strip_suffix(SUMMARY_SUFFIX)?;
            dir.join(format!("{s}.json"))
                .is_file()
                .then(|| s.to_string())
        });
    }
    let stem = stem?;
    let opt = |p: PathBuf| p.is_file().then_some(p);
    Some(RunFiles {
        dir: dir.to_path_buf(),
        export: dir.join(format!("{stem}.json")),
        summary_json: opt(dir.join(format!("{stem}{SUMMARY_SUFFIX}.json"))),
        summary_csv: opt(dir.join(format!("{stem}{SUMMARY_SUFFIX}.csv"))),
        inputs: opt(dir.join("inputs.json")),
    })
}

/// The run's files in `dir`, or in its single subfolder holding a run (GenAI-Perf's
/// `<model>-openai-chat-concurrency4/`).
pub fn locate(dir: &Path) -> Option<RunFiles> {
    if let Some(f) = files_in(dir) {
        return Some(f);
    }
    let mut found = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter_map(|p| files_in(&p));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// True when `dir` (or its single run subfolder) holds this tool's artifacts.
pub fn looks_like(dir: &Path) -> bool {
    locate(dir).is_some()
}

/// The GenAI-Perf release that wrote a run, as far as its files tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DetectedVersion {
    /// A release (`0.0.12`), a range the files cannot split (`0.0.15-0.0.16`), or `unknown`.
    pub version: String,
    /// The definition set that reproduces that release's numbers.
    pub set: &'static str,
    /// Caveats of the detection, for `losses`.
    pub notes: Vec<String>,
}

fn detected(version: &str, set: &'static str) -> DetectedVersion {
    DetectedVersion {
        version: version.to_string(),
        set,
        notes: Vec::new(),
    }
}

/// Reads the release from the summary JSON (metric keys, `input_config` shape and keys) or,
/// without it, from the CSV (header and row names). Rules in `docs/definitions/genai-perf.md`.
pub fn detect_version(summary: Option<&Value>, csv: Option<&str>) -> DetectedVersion {
    if let Some(s) = summary.and_then(Value::as_object) {
        let has_p1 = s.values().any(|m| m.get("p1").is_some());
        if s.contains_key("output_token_throughput_per_user") || has_p1 {
            return if has_p1 {
                detected("0.0.15-0.0.16", SET_0_0_13)
            } else {
                detected("0.0.13-0.0.14", SET_0_0_13)
            };
        }
        if s.contains_key("num_output_token") || s.contains_key("num_input_token") {
            let mut d = detected("0.0.1-0.0.3", SET_0_0_1);
            d.notes.push(
                "`num_output_token` marks a build from before mid-June 2024; ITL v1 assumed, \
                 though builds from 6 to 14 June 2024 already used ITL v2"
                    .into(),
            );
            return d;
        }
        let cfg = s.get("input_config").and_then(Value::as_object);
        let nested = cfg.is_some_and(|c| c.contains_key("model_names"));
        if nested {
            return detected("0.0.13-0.0.14", SET_0_0_13);
        }
        if let Some(c) = cfg {
            if c.contains_key("num_sessions") {
                return detected("0.0.12", SET_0_0_10);
            }
            if c.contains_key("header") {
                return detected("0.0.10-0.0.11", SET_0_0_10);
            }
            if c.contains_key("request_count") {
                return detected("0.0.9", SET_0_0_4);
            }
        }
        if s.contains_key("time_to_second_token") || s.contains_key("request_count") {
            return detected("0.0.10-0.0.12", SET_0_0_10);
        }
        let unit_bug = s
            .get("output_sequence_length")
            .and_then(|m| m.get("unit"))
            .and_then(Value::as_str)
            == Some("requests/sec");
        return if unit_bug {
            detected("0.0.8", SET_0_0_4)
        } else {
            detected("0.0.4-0.0.8", SET_0_0_4)
        };
    }
    if let Some(csv) = csv {
        let header = csv.lines().next().unwrap_or("").trim_end();
        if header.ends_with(",p1") {
            return detected("0.0.15-0.0.16", SET_0_0_13);
        }
        if csv.contains("(tokens/sec)") || csv.contains("Per User") {
            return detected("0.0.13-0.0.14", SET_0_0_13);
        }
        if csv.contains("Request Count") {
            return detected("0.0.10-0.0.12", SET_0_0_10);
        }
        return detected("0.0.4-0.0.9", SET_0_0_4);
    }
    let mut d = detected("unknown", SET_0_0_13);
    d.notes.push(
        "no profile_export_genai_perf.json or .csv: the GenAI-Perf release is unknown; the \
         newest definitions (genai-perf-0.0.13) are assumed"
            .into(),
    );
    d
}

/// The first release of a detected version or range (`0.0.10-0.0.11` → 10).
fn minor(version: &str) -> Option<u32> {
    version
        .split('-')
        .next()?
        .strip_prefix("0.0.")?
        .parse()
        .ok()
}

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

/// An SSE field name at the start of a response (GenAI-Perf's test for a stream).
fn starts_like_sse(text: &str) -> bool {
    let t = text.trim_start();
    ["data:", "event:", "id:", "retry:", ":"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// A response that begins in the middle of an SSE event (GenAI-Perf re-stitches it).
fn is_fragment(text: &str) -> bool {
    !text.is_empty() && !starts_like_sse(text) && !text.trim().is_empty()
}

fn endpoint_type(
    path: &Path,
    pa_endpoint: Option<&str>,
    config: Option<&Value>,
    first_response: Option<&str>,
) -> Result<EndpointType, ImportError> {
    let cfg_type = config.and_then(|c| {
        c.get("endpoint_type")
            .or_else(|| c.get("endpoint").and_then(|e| e.get("type")))
            .and_then(Value::as_str)
    });
    let by_name = |s: &str| match s {
        "chat" | "multimodal" | "vision" => Some(EndpointType::Chat),
        "completions" => Some(EndpointType::Completions),
        _ => None,
    };
    if let Some(e) = pa_endpoint {
        if e.contains("chat/completions") {
            return Ok(EndpointType::Chat);
        }
        if e.contains("completions") {
            return Ok(EndpointType::Completions);
        }
    }
    if let Some(t) = cfg_type {
        return by_name(t).ok_or_else(|| {
            format_err(
                path,
                "input_config.endpoint_type",
                format!("endpoint type '{t}' is not supported (chat and completions are)"),
            )
        });
    }
    // As GenAI-Perf does for a custom endpoint: look at the first response.
    Ok(match first_response {
        Some(r) if r.contains("chat.completion") => EndpointType::Chat,
        _ => EndpointType::Completions,
    })
}

/// GenAI-Perf's prompt text for ISL: chat joins every message's `content` with a space
/// (0.0.12 on; before, `messages[0].content` only); completions joins the `prompt` list.
fn prompt_text(payload: &Value, all_messages: bool) -> Option<String> {
    fn content_text(c: &Value) -> Option<String> {
        match c {
            Value::String(s) => Some(s.clone()),
            Value::Array(parts) => Some(
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        }
    }
    if let Some(msgs) = payload.get("messages").and_then(Value::as_array) {
        let take = if all_messages { msgs.len() } else { 1 };
        let texts: Vec<String> = msgs
            .iter()
            .take(take)
            .filter_map(|m| m.get("content").and_then(content_text))
            .collect();
        return Some(texts.join(" "));
    }
    match payload.get("prompt")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

fn record_error(kind: ErrorKind, code: Option<u16>, ty: &str, message: String) -> RecordError {
    RecordError {
        kind,
        code,
        error_type: ty.to_string(),
        message,
    }
}

fn fill(ev: &mut Event, d: Decoded) {
    ev.content = d.content;
    ev.reasoning = d.reasoning;
    ev.tool = d.tool;
    ev.usage = d.usage;
    ev.finish_reason = d.finish_reason;
}

fn excerpt(s: &str) -> String {
    const MAX: usize = 300;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// One SSE message → one event, as the engine handles it (error event, `[DONE]`, JSON chunk).
fn sse_event(endpoint: EndpointType, rec: &mut Record, m: SseMessage, frame: u32, t: u64) {
    let mut ev = Event {
        frame,
        t_ns: t,
        ..Default::default()
    };
    let mut error = None;
    if m.event.as_deref() == Some("error") {
        ev.kind = EventKindOpt(EventKind::Error);
        ev.raw = Some(excerpt(&m.data));
        error = Some(record_error(
            ErrorKind::Protocol,
            Some(502),
            "SSEErrorEvent",
            excerpt(&m.data),
        ));
    } else if decode::is_done(&m.data) {
        ev.kind = EventKindOpt(EventKind::Done);
    } else {
        match decode::decode_stream_message(endpoint, m.event.as_deref(), &m.data) {
            Ok(d) => {
                let msg = d.error.clone();
                fill(&mut ev, d);
                if let Some(msg) = msg {
                    ev.kind = EventKindOpt(EventKind::Error);
                    error = Some(record_error(ErrorKind::Protocol, None, "StreamError", msg));
                }
            }
            Err(e) => {
                ev.kind = EventKindOpt(EventKind::Other);
                ev.raw = Some(excerpt(&m.data));
                error = Some(record_error(
                    ErrorKind::Protocol,
                    None,
                    "InvalidResponse",
                    e.to_string(),
                ));
            }
        }
    }
    rec.events.push(ev);
    if rec.error.is_none() {
        rec.error = error;
    }
}

fn body_event(endpoint: EndpointType, rec: &mut Record, body: &str, frame: u32, t: u64) {
    let mut ev = Event {
        frame,
        t_ns: t,
        kind: EventKindOpt(EventKind::Body),
        ..Default::default()
    };
    match decode::decode_response_body(endpoint, body) {
        Ok(d) => {
            let msg = d.error.clone();
            fill(&mut ev, d);
            if let Some(msg) = msg {
                rec.error = Some(record_error(
                    ErrorKind::Protocol,
                    None,
                    "ResponseError",
                    msg,
                ));
            }
        }
        Err(e) => {
            ev.kind = EventKindOpt(EventKind::Other);
            ev.raw = Some(excerpt(body));
            rec.error = Some(record_error(
                ErrorKind::Protocol,
                None,
                "InvalidResponse",
                e.to_string(),
            ));
        }
    }
    rec.events.push(ev);
}

/// Client token counts as the engine makes them (output = content + tool text concatenated,
/// reasoning likewise), for a record without error.
fn count_output(rec: &mut Record, count_tokens: &(dyn Fn(&str) -> u64 + Sync)) {
    if rec.error.is_some() {
        return;
    }
    let mut out = String::new();
    let mut reasoning = String::new();
    for e in &rec.events {
        out.push_str(e.content.as_deref().unwrap_or(""));
        out.push_str(e.tool.as_deref().unwrap_or(""));
        reasoning.push_str(e.reasoning.as_deref().unwrap_or(""));
    }
    rec.tokens.output = Some(count_tokens(&out));
    rec.tokens.reasoning = Some(if reasoning.is_empty() {
        0
    } else {
        count_tokens(&reasoning)
    });
}

/// What the files of a run hold besides the records.
struct Context<'a> {
    endpoint: EndpointType,
    all_messages: bool,
    anchor: u64,
    payload_index: HashMap<String, u64>,
    count_tokens: &'a (dyn Fn(&str) -> u64 + Sync),
}

/// Counts kept for the losses.
#[derive(Default)]
struct Tally {
    fragments: u64,
    unterminated: u64,
    unmatched_payloads: u64,
}

fn build_record(
    ctx: &mut Context<'_>,
    tally: &mut Tally,
    path: &Path,
    at: &str,
    id: u64,
    req: &PaRequest<'_>,
) -> Result<Record, ImportError> {
    let rel = |t: u64| t.saturating_sub(ctx.anchor);
    let payload_text = req
        .inputs
        .and_then(|m| m.get("payload"))
        .and_then(Value::as_str);
    let payload: Option<Value> = match payload_text {
        Some(p) => Some(serde_json::from_str(p).map_err(|e| {
            format_err(
                path,
                format!("{at}.request_inputs.payload"),
                format!("the payload is not JSON: {e}"),
            )
        })?),
        None => None,
    };
    let mut rec = Record {
        id,
        phase: PhaseOpt(Phase::Profiling),
        request_id: at.to_string(),
        start_ns: rel(req.timestamp),
        planned_ns: rel(req.timestamp),
        request_bytes: payload_text.map_or(0, |p| p.len() as u64),
        ..Default::default()
    };
    if let Some(sid) = req
        .inputs
        .and_then(|m| m.get("session_id"))
        .and_then(Value::as_str)
    {
        rec.conversation_id = sid.to_string();
        rec.correlation_id = sid.to_string();
    }
    if let Some(p) = &payload {
        rec.streaming = p.get("stream").and_then(Value::as_bool).unwrap_or(false);
        rec.requested_output_tokens = p
            .get("max_completion_tokens")
            .or_else(|| p.get("max_tokens"))
            .and_then(Value::as_u64);
        let key = p.to_string();
        let next = ctx.payload_index.len() as u64;
        rec.payload_index = match ctx.payload_index.get(&key) {
            Some(i) => *i,
            None => {
                tally.unmatched_payloads += 1;
                ctx.payload_index.insert(key, next);
                next
            }
        };
        rec.tokens = TokenCounts {
            input: prompt_text(p, ctx.all_messages).map(|t| (ctx.count_tokens)(&t)),
            ..Default::default()
        };
    }
    for (t, text) in &req.responses {
        rec.frames.push(Frame {
            t_ns: rel(*t),
            bytes: u32::try_from(text.len()).unwrap_or(u32::MAX),
        });
    }
    rec.end_ns = rec.frames.last().map_or(rec.start_ns, |f| f.t_ns);
    if !rec.frames.is_empty() {
        // Perf Analyzer exports only requests that succeeded (it stops at the first failure).
        rec.status = Some(200);
    }
    let sse = req
        .responses
        .iter()
        .find(|(_, r)| !r.trim().is_empty())
        .is_some_and(|(_, r)| starts_like_sse(r));
    if sse {
        let mut parser = SseParser::new();
        let mut msgs = Vec::new();
        for (i, (_, text)) in req.responses.iter().enumerate() {
            if i > 0 && is_fragment(text) {
                tally.fragments += 1;
            }
            parser.push(text.as_bytes(), &mut msgs);
            let frame = rec.frames[i];
            for m in msgs.drain(..) {
                sse_event(ctx.endpoint, &mut rec, m, i as u32, frame.t_ns);
            }
        }
        // GenAI-Perf splits on blank lines and parses a last event left without one; flush it
        // onto the last response.
        parser.push(b"\n\n", &mut msgs);
        if let Some(last) = rec.frames.len().checked_sub(1) {
            let t = rec.frames[last].t_ns;
            for m in msgs.drain(..) {
                tally.unterminated += 1;
                sse_event(ctx.endpoint, &mut rec, m, last as u32, t);
            }
        }
    } else if let Some(last) = rec.frames.len().checked_sub(1) {
        let body: String = req.responses.iter().map(|(_, r)| *r).collect();
        if !body.trim().is_empty() {
            let t = rec.frames[last].t_ns;
            body_event(ctx.endpoint, &mut rec, &body, last as u32, t);
        }
    }
    count_output(&mut rec, ctx.count_tokens);
    Ok(rec)
}

fn inputs_index(path: &Path, text: &str) -> Result<HashMap<String, u64>, ImportError> {
    let v = parse_json(path, text)?;
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| format_err(path, "data", "expected an array"))?;
    let mut map = HashMap::new();
    for (i, entry) in data.iter().enumerate() {
        // OpenAI inputs: `{"payload": [body]}`; one turn per entry.
        if let Some(body) = entry
            .get("payload")
            .and_then(Value::as_array)
            .and_then(|p| p.first())
        {
            map.entry(body.to_string()).or_insert(i as u64);
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
