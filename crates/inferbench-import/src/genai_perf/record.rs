//! One Perf Analyzer request rebuilt as a record: its frames, parsed events, error and
//! token counts.

use super::*;
use inferbench_protocol::text::excerpt;

/// An SSE field name at the start of a response (GenAI-Perf's test for a stream).
pub(super) fn starts_like_sse(text: &str) -> bool {
    let t = text.trim_start();
    ["data:", "event:", "id:", "retry:", ":"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// A response that begins in the middle of an SSE event (GenAI-Perf re-stitches it).
pub(super) fn is_fragment(text: &str) -> bool {
    !text.is_empty() && !starts_like_sse(text) && !text.trim().is_empty()
}

pub(super) fn endpoint_type(
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
pub(super) fn prompt_text(payload: &Value, all_messages: bool) -> Option<String> {
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

pub(super) fn record_error(
    kind: ErrorKind,
    code: Option<u16>,
    ty: &str,
    message: String,
) -> RecordError {
    RecordError {
        kind,
        code,
        error_type: ty.to_string(),
        message,
    }
}

pub(super) fn fill(ev: &mut Event, d: Decoded) {
    ev.content = d.content;
    ev.reasoning = d.reasoning;
    ev.tool = d.tool;
    ev.usage = d.usage;
    ev.finish_reason = d.finish_reason;
}

/// One SSE message → one event, as the engine handles it (error event, `[DONE]`, JSON chunk).
pub(super) fn sse_event(
    endpoint: EndpointType,
    rec: &mut Record,
    m: SseMessage,
    frame: u32,
    t: u64,
) {
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

pub(super) fn body_event(endpoint: EndpointType, rec: &mut Record, body: &str, frame: u32, t: u64) {
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
pub(super) fn count_output(rec: &mut Record, count_tokens: &(dyn Fn(&str) -> u64 + Sync)) {
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
pub(super) struct Context<'a> {
    pub(super) endpoint: EndpointType,
    pub(super) all_messages: bool,
    pub(super) anchor: u64,
    pub(super) payload_index: HashMap<String, u64>,
    pub(super) count_tokens: &'a (dyn Fn(&str) -> u64 + Sync),
}

/// Counts kept for the losses.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) fragments: u64,
    pub(super) unterminated: u64,
    pub(super) unmatched_payloads: u64,
}

pub(super) fn build_record(
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
