//! Stream decoding: each SSE message, or a whole body, into an event of the record (with
//! the `<think>` split and the record's error when the response says so).

use inferbench_core::record::{ErrorKind, Event, EventKind, EventKindOpt, Record, RecordError};
use inferbench_protocol::text::excerpt;

use super::EngineConfig;
use super::request::err;
use crate::decode::{self, DecodeError, Decoded};
use crate::sse::SseMessage;
use crate::think::ThinkSplitter;

pub(super) fn append(field: &mut Option<String>, text: &str) {
    if !text.is_empty() {
        field.get_or_insert_with(String::new).push_str(text);
    }
}

/// Moves a decoded message's parts into its event (taking them out of `d`).
pub(super) fn fill_event(ev: &mut Event, d: &mut Decoded, think: &mut Option<ThinkSplitter>) {
    ev.content = d.content.take();
    ev.reasoning = d.reasoning.take();
    if let Some(sp) = think.as_mut()
        && let Some(c) = ev.content.take()
    {
        let (content, reasoning) = sp.push(&c);
        // An empty piece stays as sent (`Some("")`); a piece that was all reasoning leaves
        // no content behind.
        ev.content = (!content.is_empty() || c.is_empty()).then_some(content);
        append(&mut ev.reasoning, &reasoning);
    }
    ev.tool = d.tool.take();
    ev.usage = d.usage.take();
    ev.finish_reason = d.finish_reason.take();
}

/// Handle one SSE message. Returns true when reading should stop (the response is invalid).
pub(super) fn on_message(
    decoder: &mut decode::StreamDecoder<'_>,
    cfg: &EngineConfig,
    rec: &mut Record,
    m: &SseMessage,
    frame: u32,
    t: u64,
    think: &mut Option<ThinkSplitter>,
) -> bool {
    // The event is filled where it lies: an `Event` is 208 bytes, and pushing a finished one
    // was a `memcpy` call a token.
    rec.events.push(Event {
        frame,
        t_ns: t,
        ..Default::default()
    });
    let ev = rec.events.last_mut().expect("just pushed");
    if cfg.keep_raw {
        ev.raw = Some(m.data.clone());
    }
    if m.event.as_deref() == Some("error") {
        ev.kind = EventKindOpt(EventKind::Error);
        // AIPerf reports an SSE error event as code 502.
        rec.error = Some(err(
            ErrorKind::Protocol,
            Some(502),
            "SSEErrorEvent",
            excerpt(&m.data),
        ));
        return true;
    }
    if decode::is_done(&m.data) {
        ev.kind = EventKindOpt(EventKind::Done);
        return false;
    }
    // Decoded in place: a returned `Decoded` was copied at each call level.
    let mut d = Decoded::default();
    match decoder.message_into(m.event.as_deref(), &m.data, &mut d) {
        Ok(()) => {
            let error = d.error.take();
            fill_event(ev, &mut d, think);
            if let Some(msg) = error {
                ev.kind = EventKindOpt(EventKind::Error);
                rec.error = Some(err(ErrorKind::Protocol, None, "StreamError", msg));
                return true;
            }
            false
        }
        Err(e) => {
            ev.kind = EventKindOpt(EventKind::Other);
            if ev.raw.is_none() {
                ev.raw = Some(excerpt(&m.data));
            }
            rec.error = Some(decode_error(e));
            true
        }
    }
}

pub(super) fn decode_error(e: DecodeError) -> RecordError {
    err(ErrorKind::Protocol, None, "InvalidResponse", e.to_string())
}

/// A non-streamed body (or an error body): one `Body` event at the last frame's time.
pub(super) fn on_body(
    decoder: &decode::Decoder,
    cfg: &EngineConfig,
    rec: &mut Record,
    body: &[u8],
    status: http::StatusCode,
    think: &mut Option<ThinkSplitter>,
) {
    let (frame, t) = match rec.frames.last() {
        Some(f) => (rec.frames.len() as u32 - 1, f.t_ns),
        None => (0, rec.ack_ns.unwrap_or(rec.end_ns)),
    };
    let text = String::from_utf8_lossy(body);
    if !status.is_success() {
        rec.error = Some(err(
            ErrorKind::Http,
            Some(status.as_u16()),
            "HTTPError",
            http_error_message(status, &text),
        ));
        if !text.is_empty() {
            rec.events.push(Event {
                frame,
                t_ns: t,
                kind: EventKindOpt(EventKind::Error),
                raw: Some(excerpt(&text)),
                ..Default::default()
            });
        }
        return;
    }
    let mut ev = Event {
        frame,
        t_ns: t,
        kind: EventKindOpt(EventKind::Body),
        ..Default::default()
    };
    if cfg.keep_raw {
        ev.raw = Some(text.to_string());
    }
    let decoded = decoder.body(&text);
    match decoded {
        Ok(mut d) => {
            let error = d.error.take();
            fill_event(&mut ev, &mut d, think);
            rec.events.push(ev);
            if let Some(msg) = error {
                rec.error = Some(err(ErrorKind::Protocol, None, "ResponseError", msg));
            }
        }
        Err(e) => {
            if ev.raw.is_none() {
                ev.raw = Some(excerpt(&text));
            }
            ev.kind = EventKindOpt(EventKind::Other);
            rec.events.push(ev);
            rec.error = Some(decode_error(e));
        }
    }
}

/// `HTTP 500: <error.message>` when the body is an OpenAI-style error, else an excerpt.
pub(super) fn http_error_message(status: http::StatusCode, body: &str) -> String {
    let msg = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            let e = v.get("error")?;
            Some(
                e.get("message")
                    .and_then(|m| m.as_str())
                    .map(str::to_string)
                    .unwrap_or_else(|| e.to_string()),
            )
        })
        .unwrap_or_else(|| excerpt(body));
    format!("HTTP {}: {}", status.as_u16(), msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_error_message_prefers_the_openai_error_message() {
        let m = http_error_message(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            r#"{"error":{"message":"boom","type":"server_error"}}"#,
        );
        assert_eq!(m, "HTTP 500: boom");
        let m = http_error_message(http::StatusCode::NOT_FOUND, "nope");
        assert_eq!(m, "HTTP 404: nope");
    }
}
