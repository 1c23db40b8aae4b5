//! One record rebuilt from AIPerf's lines: token counts, the error, and the timeline (from
//! the raw export's responses, or placeholders from the per-record metrics).

use super::*;

/// An integer-valued metric of a records-level line.
pub(super) fn metric_u64(ms: &[RecordMetric], tag: &str) -> Option<u64> {
    ms.iter()
        .find(|m| m.tag == tag)
        .and_then(|m| match m.value {
            RecordMetricValue::Int(i) => u64::try_from(i).ok(),
            RecordMetricValue::Float(f) if f >= 0.0 && f.fract() == 0.0 && f < 9.0e15 => {
                Some(f as u64)
            }
            _ => None,
        })
}

pub(super) fn tokens_from_metrics(ms: &[RecordMetric], is_error: bool) -> TokenCounts {
    if is_error {
        TokenCounts {
            input: metric_u64(ms, "error_isl"),
            ..Default::default()
        }
    } else {
        TokenCounts {
            input: metric_u64(ms, "input_sequence_length"),
            output: metric_u64(ms, "output_token_count"),
            reasoning: metric_u64(ms, "reasoning_token_count"),
        }
    }
}

/// Client counts made on import, as AIPerf makes them: input texts joined with a space;
/// all content and tool-call text concatenated; all reasoning text concatenated.
pub(super) fn count_record_tokens(
    rec: &Record,
    body: Option<&serde_json::Map<String, Value>>,
    endpoint: EndpointType,
    is_error: bool,
    count: &(dyn Fn(&str) -> u64 + Sync),
) -> TokenCounts {
    let input = body.map(|b| count(&inferbench_protocol::body::input_texts(endpoint, b).join(" ")));
    if is_error {
        return TokenCounts {
            input,
            ..Default::default()
        };
    }
    let mut output = String::new();
    let mut reasoning = String::new();
    for e in &rec.events {
        output.push_str(e.content.as_deref().unwrap_or(""));
        output.push_str(e.tool.as_deref().unwrap_or(""));
        reasoning.push_str(e.reasoning.as_deref().unwrap_or(""));
    }
    TokenCounts {
        input,
        output: Some(count(&output)),
        reasoning: (!reasoning.is_empty()).then(|| count(&reasoning)),
    }
}

/// `max_tokens` recovered from `osl_mismatch_diff_pct = (OSL − requested) / requested × 100`
/// when `inputs.json` is absent: requested = OSL / (1 + pct/100), rounded.
pub(super) fn requested_from_mismatch(ms: &[RecordMetric]) -> Option<u64> {
    let osl = metric_u64(ms, "output_sequence_length")? as f64;
    let pct = ms
        .iter()
        .find(|m| m.tag == "osl_mismatch_diff_pct")
        .and_then(|m| match m.value {
            RecordMetricValue::Float(f) => Some(f),
            RecordMetricValue::Int(i) => Some(i as f64),
            RecordMetricValue::List(_) => None,
        })?;
    let req = (osl / (1.0 + pct / 100.0)).round();
    (1.0..9.0e15).contains(&req).then_some(req as u64)
}

pub(super) fn record_error(e: &ErrorIn, rec: &Record) -> RecordError {
    let ty = e.error_type.to_ascii_lowercase();
    let kind = if rec.cancelled || ty.contains("cancel") {
        ErrorKind::Cancelled
    } else if ty.contains("timeout") {
        ErrorKind::Timeout
    } else if rec.events.iter().any(|ev| ev.kind() == EventKind::Error) {
        ErrorKind::Protocol
    } else if e.code.is_some() {
        ErrorKind::Http
    } else {
        ErrorKind::Transport
    };
    RecordError {
        kind,
        code: e.code,
        error_type: e.error_type.clone(),
        message: e.message.clone(),
    }
}

pub(super) fn fill(ev: &mut Event, d: Decoded) -> Option<String> {
    ev.content = d.content;
    ev.reasoning = d.reasoning;
    ev.tool = d.tool;
    ev.usage = d.usage;
    ev.finish_reason = d.finish_reason;
    d.error
}

/// Frames and events from the raw responses. A response's time is the request's wall-clock
/// start plus its perf-counter offset from `start_perf_ns`.
pub(super) fn timeline_from_raw(
    at: At<'_>,
    rec: &mut Record,
    endpoint: EndpointType,
    start_perf_ns: u64,
    responses: &[RawResponse],
) -> Result<(), ImportError> {
    for (i, r) in responses.iter().enumerate() {
        let perf_ns = match r {
            RawResponse::Sse { perf_ns, .. } | RawResponse::Text { perf_ns, .. } => *perf_ns,
        };
        let offset = perf_ns.checked_sub(start_perf_ns).ok_or_else(|| {
            at.err(
                &format!("responses[{i}].perf_ns"),
                format!("{perf_ns} is before start_perf_ns {start_perf_ns}"),
            )
        })?;
        let t_ns = rec
            .start_ns
            .checked_add(offset)
            .ok_or_else(|| at.err(&format!("responses[{i}].perf_ns"), "out of range"))?;
        let bytes = match r {
            RawResponse::Sse { event, data, .. } => {
                event.as_ref().map_or(0, |e| "event: \n".len() + e.len())
                    + data.as_ref().map_or(0, |d| "data: \n\n".len() + d.len())
            }
            RawResponse::Text { text, .. } => text.len(),
        };
        let bytes = u32::try_from(bytes).unwrap_or(u32::MAX);
        match rec.frames.last_mut() {
            Some(f) if f.t_ns == t_ns => f.bytes = f.bytes.saturating_add(bytes),
            _ => rec.frames.push(Frame { t_ns, bytes }),
        }
        let mut ev = Event {
            frame: (rec.frames.len() - 1) as u32,
            t_ns,
            ..Default::default()
        };
        match r {
            RawResponse::Sse { event, data, .. } => {
                let Some(data) = data else {
                    // A message with no data field (only a comment or an id) is no event.
                    continue;
                };
                ev.raw = Some(data.clone());
                if event.as_deref() == Some("error") {
                    ev.kind = EventKindOpt(EventKind::Error);
                } else if decode::is_done(data) {
                    ev.kind = EventKindOpt(EventKind::Done);
                } else {
                    match decode::decode_stream_message(endpoint, event.as_deref(), data) {
                        Ok(d) => {
                            if fill(&mut ev, d).is_some() {
                                ev.kind = EventKindOpt(EventKind::Error);
                            }
                        }
                        Err(_) => ev.kind = EventKindOpt(EventKind::Other),
                    }
                }
            }
            RawResponse::Text { text, .. } => {
                ev.raw = Some(text.clone());
                ev.kind = EventKindOpt(EventKind::Body);
                match decode::decode_response_body(endpoint, text) {
                    Ok(d) => {
                        if fill(&mut ev, d).is_some() {
                            ev.kind = EventKindOpt(EventKind::Error);
                        }
                    }
                    Err(_) => ev.kind = EventKindOpt(EventKind::Other),
                }
            }
        }
        rec.events.push(ev);
    }
    Ok(())
}

/// A per-record time metric (ms, as AIPerf writes `ns × 1e-6`) back in integer ns.
pub(super) fn ms_to_ns(at: At<'_>, tag: &str, ms: f64) -> Result<u64, ImportError> {
    let ns = (ms / 1e-6).round();
    if !(ns.is_finite() && (0.0..1.8e19).contains(&ns)) {
        return Err(at.err(
            &format!("metrics.{tag}.value"),
            format!("{ms} ms is not a duration"),
        ));
    }
    Ok(ns as u64)
}

pub(super) fn metric_ms(
    at: At<'_>,
    ms: &[RecordMetric],
    tag: &str,
) -> Result<Option<u64>, ImportError> {
    match ms.iter().find(|m| m.tag == tag).map(|m| &m.value) {
        None => Ok(None),
        Some(RecordMetricValue::Int(i)) => ms_to_ns(at, tag, *i as f64).map(Some),
        Some(RecordMetricValue::Float(f)) => ms_to_ns(at, tag, *f).map(Some),
        Some(RecordMetricValue::List(_)) => Err(at.err(
            &format!("metrics.{tag}.value"),
            "expected a number, found a list",
        )),
    }
}

/// Content responses rebuilt from a valid record's metrics: the first at start + TTFT, the
/// next ones after each inter-chunk gap (or one at start + latency without TTFT).
/// Responses before the first output token carry reasoning. Usage goes on the last one.
/// Returns false when a streamed record had no gaps to rebuild from.
pub(super) fn timeline_from_metrics(
    at: At<'_>,
    rec: &mut Record,
    ms: &[RecordMetric],
) -> Result<bool, ImportError> {
    let latency = metric_ms(at, ms, "request_latency")?;
    let ttft = metric_ms(at, ms, "time_to_first_token")?;
    let ttfo = metric_ms(at, ms, "time_to_first_output_token")?;
    let gaps: Vec<u64> = match ms
        .iter()
        .find(|m| m.tag == "inter_chunk_latency")
        .map(|m| &m.value)
    {
        None => Vec::new(),
        Some(RecordMetricValue::List(v)) => v
            .iter()
            .map(|x| ms_to_ns(at, "inter_chunk_latency", *x))
            .collect::<Result<_, _>>()?,
        Some(RecordMetricValue::Int(i)) => vec![ms_to_ns(at, "inter_chunk_latency", *i as f64)?],
        Some(RecordMetricValue::Float(f)) => vec![ms_to_ns(at, "inter_chunk_latency", *f)?],
    };
    let start = rec.start_ns;
    let mut times = Vec::with_capacity(gaps.len() + 1);
    match ttft {
        Some(ttft) => {
            let mut t = start.saturating_add(ttft);
            times.push(t);
            for g in &gaps {
                t = t.saturating_add(*g);
                times.push(t);
            }
            // A last content response the gaps do not reach (no gaps exported).
            if let Some(l) = latency.map(|l| start.saturating_add(l))
                && l > t
            {
                times.push(l);
            }
        }
        None => {
            times.push(start.saturating_add(latency.unwrap_or(rec.end_ns.saturating_sub(start))))
        }
    }
    let reasoning_seen = metric_u64(ms, "reasoning_token_count").is_some_and(|r| r > 0);
    let has_output = metric_u64(ms, "output_token_count").is_none_or(|o| o > 0);
    // Index of the first output response: the first whose time is start + TTFO.
    let first_output = match ttfo {
        Some(t) => times.iter().position(|x| *x == start.saturating_add(t)),
        None if reasoning_seen && rec.streaming => None,
        None => Some(0),
    };
    let kind = if rec.streaming {
        EventKind::Data
    } else {
        EventKind::Body
    };
    let n = times.len();
    for (i, t_ns) in times.into_iter().enumerate() {
        if rec.frames.last().is_none_or(|f| f.t_ns != t_ns) {
            rec.frames.push(Frame { t_ns, bytes: 0 });
        }
        let output = has_output && first_output.is_some_and(|k| i >= k);
        // Reasoning before the first output response, or on the first response when both
        // arrive together (so that the reasoning count is kept).
        let reasoning =
            reasoning_seen && (first_output.is_none_or(|k| i < k) || (i == 0 && output));
        rec.events.push(Event {
            frame: (rec.frames.len() - 1) as u32,
            t_ns,
            kind: EventKindOpt(kind),
            content: (output || !reasoning).then(|| PLACEHOLDER_TEXT.to_string()),
            reasoning: reasoning.then(|| PLACEHOLDER_TEXT.to_string()),
            usage: (i + 1 == n).then(|| usage_from_metrics(ms)).flatten(),
            ..Default::default()
        });
    }
    Ok(!gaps.is_empty() || ttft.is_none())
}

/// The `usage` object rebuilt from the `usage_*` per-record metrics.
pub(super) fn usage_from_metrics(ms: &[RecordMetric]) -> Option<Value> {
    let mut u = serde_json::Map::new();
    for (tag, key) in [
        ("usage_prompt_tokens", "prompt_tokens"),
        ("usage_completion_tokens", "completion_tokens"),
        ("usage_total_tokens", "total_tokens"),
    ] {
        if let Some(v) = metric_u64(ms, tag) {
            u.insert(key.into(), Value::from(v));
        }
    }
    if let Some(r) = metric_u64(ms, "usage_reasoning_tokens") {
        u.insert(
            "completion_tokens_details".into(),
            serde_json::json!({ "reasoning_tokens": r }),
        );
    }
    (!u.is_empty()).then_some(Value::Object(u))
}

/// A per-record size metric (KB, AIPerf's 1024 bytes) back in integer bytes.
fn kb_to_bytes(at: At<'_>, tag: &str, v: &RecordMetricValue) -> Result<u64, ImportError> {
    let kb = match v {
        RecordMetricValue::Int(i) => *i as f64,
        RecordMetricValue::Float(f) => *f,
        RecordMetricValue::List(_) => {
            return Err(at.err(
                &format!("metrics.{tag}.value"),
                "expected a number, found a list",
            ));
        }
    };
    let b = (kb * 1024.0).round();
    if !(b.is_finite() && (0.0..1.8e19).contains(&b)) {
        return Err(at.err(
            &format!("metrics.{tag}.value"),
            format!("{kb} KB is not a size"),
        ));
    }
    Ok(b as u64)
}

/// AIPerf's per-record `http_req_*` values back in their base units (ns, bytes, counts);
/// None when the line has none (an error line, or a run without HTTP tracing).
pub(super) fn reported_http(
    at: At<'_>,
    ms: &[RecordMetric],
) -> Result<Option<ReportedHttpTrace>, ImportError> {
    if !ms.iter().any(|m| m.tag.starts_with("http_req_")) {
        return Ok(None);
    }
    let kb = |tag: &str| -> Result<Option<u64>, ImportError> {
        ms.iter()
            .find(|m| m.tag == tag)
            .map(|m| kb_to_bytes(at, tag, &m.value))
            .transpose()
    };
    let t = |tag: &str| metric_ms(at, ms, tag);
    let n = |tag: &str| metric_u64(ms, tag);
    Ok(Some(ReportedHttpTrace {
        blocked_ns: t("http_req_blocked")?,
        dns_lookup_ns: t("http_req_dns_lookup")?,
        connecting_ns: t("http_req_connecting")?,
        sending_ns: t("http_req_sending")?,
        waiting_ns: t("http_req_waiting")?,
        receiving_ns: t("http_req_receiving")?,
        duration_ns: t("http_req_duration")?,
        total_ns: t("http_req_total")?,
        connection_overhead_ns: t("http_req_connection_overhead")?,
        connection_reused: n("http_req_connection_reused"),
        data_sent_bytes: kb("http_req_data_sent")?,
        data_received_bytes: kb("http_req_data_received")?,
        chunks_sent: n("http_req_chunks_sent"),
        chunks_received: n("http_req_chunks_received"),
    }))
}
