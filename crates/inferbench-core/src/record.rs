//! The record: one per scheduled request, the raw evidence every metric is computed from.
//!
//! Schema version [`EVIDENCE_SCHEMA_VERSION`]; documented in `docs/evidence.md` and
//! `docs/schemas/evidence-record.schema.json`. Every `*_ns` field is u64 nanoseconds since the
//! run anchor (a monotonic `Instant`), paired once with the wall clock in the evidence header.

use serde::{Deserialize, Serialize};

/// Version of the evidence file format (header, record, phase and end lines).
pub const EVIDENCE_SCHEMA_VERSION: u32 = 1;

/// Which phase a request belongs to. Warmup records are kept apart from the results.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Warmup,
    Profiling,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Warmup => "warmup",
            Phase::Profiling => "profiling",
        }
    }
}

/// One body frame as the transport returned it: arrival time (taken right after the read
/// returned, before any parsing) and its size in bytes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub t_ns: u64,
    pub bytes: u32,
}

/// What kind of message an event is.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// An SSE `data:` message holding JSON (the usual streamed chunk).
    Data,
    /// The SSE `data: [DONE]` terminator.
    Done,
    /// An SSE message with `event: error`, or a data message whose JSON is an error object.
    Error,
    /// A whole non-streaming response body, parsed as one event.
    Body,
    /// An SSE message whose data is not JSON (kept, counted as text by nobody).
    Other,
}

impl EventKind {
    /// The serialized name (`rename_all = "snake_case"`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Data => "data",
            EventKind::Done => "done",
            EventKind::Error => "error",
            EventKind::Body => "body",
            EventKind::Other => "other",
        }
    }
}

/// One parsed message of the response: an SSE event, or the whole body when not streaming.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Event {
    /// Index into [`Record::frames`] of the frame in which this event's last byte arrived.
    /// Several events completed in one frame share the index (and so the timestamp): a zero
    /// gap between them is coalescing by the network, not a real zero gap.
    pub frame: u32,
    /// Arrival time of that frame (duplicated here so that a reader needs no join).
    pub t_ns: u64,
    pub kind: EventKindOpt,
    /// Output text (`delta.content`, `choices[0].text`, `message.content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Reasoning text (`reasoning_content` or `reasoning`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Tool-call text (function name + arguments), counted as output like AIPerf does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The `usage` object exactly as the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<serde_json::Value>,
    /// `finish_reason` when the event carried one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The raw `data:` payload (or body), kept only at `--export-level raw`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
}

/// Wrapper so that `Event` can derive `Default` (the kind defaults to `data`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(transparent)]
pub struct EventKindOpt(pub EventKind);

impl Default for EventKindOpt {
    fn default() -> Self {
        EventKindOpt(EventKind::Data)
    }
}

impl Event {
    pub fn kind(&self) -> EventKind {
        self.kind.0
    }

    /// True when the event carries any output or reasoning text (empty strings do not count).
    pub fn has_text(&self) -> bool {
        non_empty(&self.content) || non_empty(&self.reasoning) || non_empty(&self.tool)
    }

    /// True when the event carries output text (content or tool call), not only reasoning.
    pub fn has_output_text(&self) -> bool {
        non_empty(&self.content) || non_empty(&self.tool)
    }
}

fn non_empty(s: &Option<String>) -> bool {
    s.as_deref().is_some_and(|s| !s.is_empty())
}

/// How a request failed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The server answered with a non-2xx status.
    Http,
    /// Connect, write or read failed (refused, reset, stream cut before its end).
    Transport,
    /// `--request-timeout-seconds` elapsed.
    Timeout,
    /// The request was cancelled (Ctrl-C, or `--request-cancellation-rate`).
    Cancelled,
    /// The response could not be understood (not OpenAI-shaped, malformed SSE, error event).
    Protocol,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Http => "http",
            ErrorKind::Transport => "transport",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Protocol => "protocol",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    pub kind: ErrorKind,
    /// HTTP status (or the code AIPerf would report, e.g. 502 for an SSE error event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// A short type name, e.g. `HTTPError`, `ConnectionReset`, `Timeout`.
    #[serde(rename = "type")]
    pub error_type: String,
    pub message: String,
}

/// Client-side token counts, made with the run's tokenizer (named in the manifest).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TokenCounts {
    /// Tokens of the input texts of the payload actually sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    /// Tokens of all output text (content + tool calls), concatenated then encoded once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    /// Tokens of all reasoning text, concatenated then encoded once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
}

/// One scheduled request and everything observed about it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Record {
    /// Position in the schedule (0-based, per run, warmup first). Unique within a run.
    pub id: u64,
    pub phase: PhaseOpt,
    /// `X-Request-ID` sent with the request.
    pub request_id: String,
    /// `X-Correlation-ID` (one per session).
    pub correlation_id: String,
    /// Dataset conversation id, e.g. `session_000003`.
    pub conversation_id: String,
    /// Index of the session in the schedule.
    pub session_num: u64,
    pub turn_index: u32,
    /// Index of the payload in the frozen workload (`inputs.json` order).
    pub payload_index: u64,
    pub worker: u32,
    pub streaming: bool,
    /// When the schedule meant the request to go (from the anchor).
    pub planned_ns: u64,
    /// Right before the request was handed to the transport (includes connection set-up).
    pub start_ns: u64,
    /// When the transport finished writing the request body, if observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_ns: Option<u64>,
    /// When the response head (status line and headers) arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_ns: Option<u64>,
    /// When the request ended: last body byte, error, timeout or cancellation.
    pub end_ns: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Bytes of the request body sent.
    pub request_bytes: u64,
    /// `max_completion_tokens` / `max_tokens` requested, when the payload set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_output_tokens: Option<u64>,
    pub frames: Vec<Frame>,
    pub events: Vec<Event>,
    pub tokens: TokenCounts,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RecordError>,
    #[serde(default)]
    pub cancelled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_ns: Option<u64>,
    /// The body as sent, when it is not the payload's (a turn sent with the conversation's
    /// history in front), kept at `--export-level raw` only: history bodies grow with every
    /// turn, and the payload plus the earlier records' replies rebuild them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_body: Option<String>,
    /// The connection this request went out on: reused or opened for it, with the set-up
    /// phases when opened (docs/timing.md, "HTTP phases").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<ConnectionEvidence>,
    /// Which of the run's URLs the request went to (index into the plan's URL list), when
    /// the run had several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_index: Option<u32>,
    /// The model the request named, when the run had several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A child session's depth below its root (1: started by a root's turn); 0 for a root
    /// (docs/load-shapes.md "Child sessions").
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub agent_depth: u32,
    /// The session that started this child session: its `session_num` and correlation id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_num: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_correlation_id: Option<String>,
    /// The correlation id of the root session of this child's tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_correlation_id: Option<String>,
    /// The images, audio and video the body carried (counts and sizes, never the data), when
    /// it carried any; a body sent with history counts the earlier turns' media too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<crate::media::MediaSent>,
}

/// How one request used its connection. Instants are ns from the run anchor, like every other
/// time of the record; a phase that did not happen (a reused connection has no set-up) is None.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ConnectionEvidence {
    /// The run's connection number (per run, from 0, in opening order).
    pub id: u64,
    /// The request went out on a connection an earlier request had used.
    pub reused: bool,
    /// Connection set-up, on the request that opened the connection (docs/tls.md): the
    /// explicit name resolution (`tokio::net::lookup_host`), the TCP connect, and the TLS
    /// handshake on an `https://` URL. Each is None when that phase did not happen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_start_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_end_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_start_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_end_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_start_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_end_ns: Option<u64>,
    /// The negotiated TLS version (`"TLSv1.3"`, `"TLSv1.2"`) and cipher suite (IANA name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_cipher: Option<String>,
    /// Waiting for a free connection (AIPerf's `http_req_blocked`): None when the request
    /// never waited (ours take an idle connection or open one, so a live run has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_wait_start_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_wait_end_ns: Option<u64>,
    /// When the request head went to the connection (after the set-up): the start of
    /// `http_req_sending` and `http_req_duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_start_ns: Option<u64>,
    /// Body writes handed to the transport (the body goes as one frame: 1, or 0 when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks_sent: Option<u32>,
    /// The HTTP phases as another tool reported them, for an import whose files keep the
    /// values but not the instants behind them (AIPerf's `profile_export.jsonl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported: Option<ReportedHttpTrace>,
    /// Times the request was resent on a fresh connection because its reused connection
    /// failed before any response byte arrived (0 or 1; docs/faults.md, "The resend").
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub reconnects: u32,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// AIPerf's fourteen per-record `http_req_*` values in their base units (ns, bytes, counts),
/// as its `profile_export.jsonl` gave them; a value it did not write is None.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct ReportedHttpTrace {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_lookup_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connecting_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sending_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiving_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_overhead_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_reused: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_sent_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_received_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks_sent: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks_received: Option<u64>,
}

/// Wrapper so that `Record` can derive `Default` (the phase defaults to profiling).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(transparent)]
pub struct PhaseOpt(pub Phase);

impl Default for PhaseOpt {
    fn default() -> Self {
        PhaseOpt(Phase::Profiling)
    }
}

impl Record {
    pub fn phase(&self) -> Phase {
        self.phase.0
    }

    pub fn is_error(&self) -> bool {
        self.error.is_some()
    }

    /// Events that carry text (content, reasoning or tool call): AIPerf's "content responses"
    /// are the data events with a non-empty parsed payload.
    pub fn text_events(&self) -> impl Iterator<Item = &Event> {
        self.events.iter().filter(|e| e.has_text())
    }

    /// The last `usage` object seen in any event (AIPerf takes the last non-empty one).
    pub fn last_usage(&self) -> Option<&serde_json::Value> {
        self.events
            .iter()
            .rev()
            .filter_map(|e| e.usage.as_ref())
            .find(|u| u.as_object().is_some_and(|o| !o.is_empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trips_through_json() {
        let r = Record {
            id: 3,
            phase: PhaseOpt(Phase::Warmup),
            request_id: "r".into(),
            frames: vec![Frame { t_ns: 10, bytes: 5 }],
            events: vec![Event {
                frame: 0,
                t_ns: 10,
                content: Some("hi".into()),
                ..Default::default()
            }],
            error: Some(RecordError {
                kind: ErrorKind::Http,
                code: Some(500),
                error_type: "HTTPError".into(),
                message: "boom".into(),
            }),
            ..Default::default()
        };
        let s = serde_json::to_string(&r).unwrap();
        let back: Record = serde_json::from_str(&s).unwrap();
        assert_eq!(r, back);
        assert!(s.contains("\"phase\":\"warmup\""));
        assert!(s.contains("\"kind\":\"data\""));
    }

    #[test]
    fn event_kind_names_are_serdes() {
        use EventKind::*;
        for k in [Data, Done, Error, Body, Other] {
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.as_str())
            );
        }
    }

    #[test]
    fn text_events_skip_empty_and_role_only_chunks() {
        let r = Record {
            events: vec![
                Event {
                    content: Some(String::new()),
                    ..Default::default()
                },
                Event {
                    reasoning: Some("x".into()),
                    ..Default::default()
                },
                Event {
                    usage: Some(serde_json::json!({"prompt_tokens": 1})),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        assert_eq!(r.text_events().count(), 1);
        assert!(r.last_usage().is_some());
    }
}
