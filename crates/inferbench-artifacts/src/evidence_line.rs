//! The evidence file's record line, written by hand: the same bytes as serde's
//! `{"line":"record", ...Record}` (the writer's `LineRef::Record`), at a fraction of the cost.
//! A streamed request's line is mostly its frames and events, a few dozen small objects;
//! the rare nested parts (an error, the connection, media, a usage object) still go through
//! serde_json. The destructuring below names every field, so a field added to `Record` or
//! `Event` does not compile until it is written here too; the tests compare with serde on
//! arbitrary records.

use inferbench_core::record::{ConnectionEvidence, RecordError, TokenCounts};
use inferbench_core::{Event, Frame, Record};

use crate::json_out::{field_bool, field_int, field_str, int, key, opt_int, opt_serde, opt_str};

/// Appends `{"line":"record",...}` for `r` (no newline).
pub(crate) fn write_record_line(out: &mut Vec<u8>, r: &Record) {
    let Record {
        id,
        phase,
        request_id,
        correlation_id,
        conversation_id,
        session_num,
        turn_index,
        payload_index,
        worker,
        streaming,
        planned_ns,
        start_ns,
        sent_ns,
        ack_ns,
        end_ns,
        status,
        request_bytes,
        requested_output_tokens,
        frames,
        events,
        tokens,
        error,
        cancelled,
        cancel_ns,
        sent_body,
        connection,
        url_index,
        model,
        agent_depth,
        parent_session_num,
        parent_correlation_id,
        root_correlation_id,
        media,
    } = r;
    out.extend_from_slice(b"{\"line\":\"record\"");
    field_int(out, "id", *id);
    field_str(out, "phase", phase.0.as_str());
    field_str(out, "request_id", request_id);
    field_str(out, "correlation_id", correlation_id);
    field_str(out, "conversation_id", conversation_id);
    field_int(out, "session_num", *session_num);
    field_int(out, "turn_index", *turn_index);
    field_int(out, "payload_index", *payload_index);
    field_int(out, "worker", *worker);
    field_bool(out, "streaming", *streaming);
    field_int(out, "planned_ns", *planned_ns);
    field_int(out, "start_ns", *start_ns);
    opt_int(out, "sent_ns", *sent_ns);
    opt_int(out, "ack_ns", *ack_ns);
    field_int(out, "end_ns", *end_ns);
    opt_int(out, "status", *status);
    field_int(out, "request_bytes", *request_bytes);
    opt_int(out, "requested_output_tokens", *requested_output_tokens);
    key(out, false, "frames");
    write_frames(out, frames);
    key(out, false, "events");
    out.push(b'[');
    for (i, e) in events.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_event(out, e);
    }
    out.push(b']');
    key(out, false, "tokens");
    write_tokens(out, tokens);
    opt_serde::<RecordError>(out, "error", error.as_ref());
    field_bool(out, "cancelled", *cancelled);
    opt_int(out, "cancel_ns", *cancel_ns);
    opt_str(out, "sent_body", sent_body.as_deref());
    opt_serde::<ConnectionEvidence>(out, "connection", connection.as_ref());
    opt_int(out, "url_index", *url_index);
    opt_str(out, "model", model.as_deref());
    if *agent_depth != 0 {
        field_int(out, "agent_depth", *agent_depth);
    }
    opt_int(out, "parent_session_num", *parent_session_num);
    opt_str(
        out,
        "parent_correlation_id",
        parent_correlation_id.as_deref(),
    );
    opt_str(out, "root_correlation_id", root_correlation_id.as_deref());
    opt_serde(out, "media", media.as_ref());
    out.push(b'}');
}

fn write_frames(out: &mut Vec<u8>, frames: &[Frame]) {
    out.push(b'[');
    for (i, Frame { t_ns, bytes }) in frames.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"t_ns\":");
        int(out, *t_ns);
        out.extend_from_slice(b",\"bytes\":");
        int(out, *bytes);
        out.push(b'}');
    }
    out.push(b']');
}

fn write_event(out: &mut Vec<u8>, e: &Event) {
    let Event {
        frame,
        t_ns,
        kind,
        content,
        reasoning,
        tool,
        usage,
        finish_reason,
        raw,
    } = e;
    out.extend_from_slice(b"{\"frame\":");
    int(out, *frame);
    field_int(out, "t_ns", *t_ns);
    field_str(out, "kind", kind.0.as_str());
    opt_str(out, "content", content.as_deref());
    opt_str(out, "reasoning", reasoning.as_deref());
    opt_str(out, "tool", tool.as_deref());
    opt_serde(out, "usage", usage.as_ref());
    opt_str(out, "finish_reason", finish_reason.as_deref());
    opt_str(out, "raw", raw.as_deref());
    out.push(b'}');
}

fn write_tokens(out: &mut Vec<u8>, t: &TokenCounts) {
    let TokenCounts {
        input,
        output,
        reasoning,
    } = t;
    out.push(b'{');
    let mut first = true;
    for (k, v) in [
        ("input", input),
        ("output", output),
        ("reasoning", reasoning),
    ] {
        if let Some(v) = v {
            key(out, first, k);
            int(out, *v);
            first = false;
        }
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::media::MediaSent;
    use inferbench_core::record::{
        ErrorKind, EventKind, EventKindOpt, PhaseOpt, ReportedHttpTrace,
    };
    use inferbench_core::{Phase, Record};
    use proptest::option::of;
    use proptest::prelude::*;

    /// serde's bytes for the same line: the core type the reader parses.
    fn by_serde(r: &Record) -> String {
        serde_json::to_string(&inferbench_core::EvidenceLine::Record(Box::new(r.clone()))).unwrap()
    }

    fn by_hand(r: &Record) -> String {
        let mut out = Vec::new();
        write_record_line(&mut out, r);
        String::from_utf8(out).unwrap()
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![any::<String>(), "[ a-z\"\\\\\\n\\t\\x01]{0,12}"]
    }

    fn event() -> impl Strategy<Value = Event> {
        let kinds = prop_oneof![
            Just(EventKind::Data),
            Just(EventKind::Done),
            Just(EventKind::Error),
            Just(EventKind::Body),
            Just(EventKind::Other),
        ];
        let usage = prop_oneof![
            Just(serde_json::json!({"prompt_tokens": 30, "completion_tokens": 16})),
            Just(serde_json::json!({})),
            Just(serde_json::json!({"x": [1.5, null, "a\"b"]})),
        ];
        (
            (any::<u32>(), any::<u64>(), kinds),
            (of(text()), of(text()), of(text())),
            (of(usage), of(text()), of(text())),
        )
            .prop_map(
                |((frame, t_ns, kind), (content, reasoning, tool), (usage, finish_reason, raw))| {
                    Event {
                        frame,
                        t_ns,
                        kind: EventKindOpt(kind),
                        content,
                        reasoning,
                        tool,
                        usage,
                        finish_reason,
                        raw,
                    }
                },
            )
    }

    fn connection() -> impl Strategy<Value = ConnectionEvidence> {
        (
            any::<u64>(),
            any::<bool>(),
            of(any::<u64>()),
            of(text()),
            any::<u32>(),
        )
            .prop_map(|(id, reused, t, version, reconnects)| ConnectionEvidence {
                id,
                reused,
                connect_start_ns: t,
                connect_end_ns: t.map(|t| t / 2),
                tls_version: version,
                reported: t.map(|t| ReportedHttpTrace {
                    total_ns: Some(t),
                    ..Default::default()
                }),
                reconnects,
                ..Default::default()
            })
    }

    fn record() -> impl Strategy<Value = Record> {
        let ids = (
            any::<u64>(),
            any::<bool>(),
            text(),
            text(),
            text(),
            any::<u64>(),
            any::<u32>(),
            any::<u64>(),
            any::<u32>(),
            any::<bool>(),
        );
        let times = (
            any::<u64>(),
            any::<u64>(),
            of(any::<u64>()),
            of(any::<u64>()),
            any::<u64>(),
            of(any::<u16>()),
            any::<u64>(),
            of(any::<u64>()),
        );
        let body = (
            proptest::collection::vec((any::<u64>(), any::<u32>()), 0..5),
            proptest::collection::vec(event(), 0..5),
            (of(any::<u64>()), of(any::<u64>()), of(any::<u64>())),
            of((any::<u16>(), of(any::<u16>()), text(), text())),
            any::<bool>(),
            of(any::<u64>()),
            of(text()),
        );
        let tail = (
            of(connection()),
            of(any::<u32>()),
            of(text()),
            prop_oneof![Just(0u32), any::<u32>()],
            of(any::<u64>()),
            of(text()),
            of(text()),
            of((any::<u32>(), any::<u64>(), of(any::<f64>()))),
        );
        (ids, times, body, tail).prop_map(|(ids, times, body, tail)| {
            let (
                id,
                warmup,
                request_id,
                correlation_id,
                conversation_id,
                session_num,
                turn_index,
                payload_index,
                worker,
                streaming,
            ) = ids;
            let (
                planned_ns,
                start_ns,
                sent_ns,
                ack_ns,
                end_ns,
                status,
                request_bytes,
                requested_output_tokens,
            ) = times;
            let (
                frames,
                events,
                (input, output, reasoning),
                error,
                cancelled,
                cancel_ns,
                sent_body,
            ) = body;
            let (
                connection,
                url_index,
                model,
                agent_depth,
                parent_session_num,
                parent_correlation_id,
                root_correlation_id,
                media,
            ) = tail;
            Record {
                id,
                phase: PhaseOpt(if warmup {
                    Phase::Warmup
                } else {
                    Phase::Profiling
                }),
                request_id,
                correlation_id,
                conversation_id,
                session_num,
                turn_index,
                payload_index,
                worker,
                streaming,
                planned_ns,
                start_ns,
                sent_ns,
                ack_ns,
                end_ns,
                status,
                request_bytes,
                requested_output_tokens,
                frames: frames
                    .into_iter()
                    .map(|(t_ns, bytes)| Frame { t_ns, bytes })
                    .collect(),
                events,
                tokens: TokenCounts {
                    input,
                    output,
                    reasoning,
                },
                error: error.map(|(k, code, error_type, message)| RecordError {
                    kind: if k % 2 == 0 {
                        ErrorKind::Http
                    } else {
                        ErrorKind::Transport
                    },
                    code,
                    error_type,
                    message,
                }),
                cancelled,
                cancel_ns,
                sent_body,
                connection,
                url_index,
                model,
                agent_depth,
                parent_session_num,
                parent_correlation_id,
                root_correlation_id,
                media: media.map(|(images, bytes, audio_seconds)| MediaSent {
                    images,
                    bytes,
                    audio_seconds,
                    ..Default::default()
                }),
            }
        })
    }

    #[test]
    fn a_streamed_record_is_serdes_line() {
        // The shape of nearly every line of a streaming run.
        let r = Record {
            id: 7,
            request_id: "965db6b1".into(),
            streaming: true,
            sent_ns: Some(3),
            ack_ns: Some(4),
            status: Some(200),
            requested_output_tokens: Some(16),
            frames: vec![
                Frame {
                    t_ns: 5,
                    bytes: 203,
                },
                Frame { t_ns: 6, bytes: 14 },
            ],
            events: vec![
                Event {
                    frame: 0,
                    t_ns: 5,
                    content: Some(" forty".into()),
                    finish_reason: Some("length".into()),
                    ..Default::default()
                },
                Event {
                    frame: 1,
                    t_ns: 6,
                    kind: EventKindOpt(EventKind::Done),
                    ..Default::default()
                },
            ],
            tokens: TokenCounts {
                input: Some(32),
                output: Some(16),
                reasoning: Some(0),
            },
            ..Default::default()
        };
        let line = by_hand(&r);
        assert_eq!(line, by_serde(&r));
        assert!(line.starts_with("{\"line\":\"record\",\"id\":7,\"phase\":\"profiling\","));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn any_record_is_serdes_line(r in record()) {
            prop_assert_eq!(by_hand(&r), by_serde(&r));
        }
    }
}
