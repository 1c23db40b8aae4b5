//! A small hand-built run: evidence header, records of both phases, a workload.
#![allow(dead_code)]

use inferbench_core::record::{ErrorKind, EventKind, EventKindOpt, PhaseOpt, RecordError};
use inferbench_core::summary::{RecordMetric, RecordMetricValue};
use inferbench_core::workload::{Payload, Workload};
use inferbench_core::{Event, EvidenceHeader, Frame, Phase, PhaseWindow, Record, TokenCounts};

pub const ANCHOR: u64 = 1_795_978_684_000_000_000;

pub fn header() -> EvidenceHeader {
    EvidenceHeader {
        schema_version: 1,
        tool: "inferbench".into(),
        tool_version: "0.1.0".into(),
        anchor_unix_ns: ANCHOR,
        benchmark_id: "0a564b70635e".into(),
        endpoint_type: "chat".into(),
        streaming: true,
        tokenizer: "builtin:o200k_base".into(),
        use_server_token_count: false,
        per_chunk_usage: false,
    }
}

fn ev(t_ns: u64, kind: EventKind, content: Option<&str>, raw: &str) -> Event {
    Event {
        frame: 0,
        t_ns,
        kind: EventKindOpt(kind),
        content: content.map(Into::into),
        raw: Some(raw.into()),
        ..Default::default()
    }
}

pub fn records() -> Vec<Record> {
    let base = |id: u64, phase: Phase| Record {
        id,
        phase: PhaseOpt(phase),
        request_id: format!("req-{id}"),
        correlation_id: format!("corr-{id}"),
        conversation_id: format!("session_{id:06}"),
        session_num: id,
        payload_index: id,
        worker: (id % 2) as u32,
        streaming: true,
        planned_ns: 1_000 * id,
        start_ns: 1_000 * id + 100,
        end_ns: 1_000 * id + 900,
        request_bytes: 300,
        ..Default::default()
    };
    let mut ok = base(1, Phase::Profiling);
    ok.sent_ns = Some(1_150);
    ok.ack_ns = Some(1_200);
    ok.status = Some(200);
    ok.requested_output_tokens = Some(16);
    ok.frames = vec![
        Frame {
            t_ns: 1_300,
            bytes: 120,
        },
        Frame {
            t_ns: 1_800,
            bytes: 90,
        },
    ];
    let mut usage = ev(
        1_800,
        EventKind::Data,
        None,
        r#"{"choices":[],"usage":{"prompt_tokens":3}}"#,
    );
    usage.usage = Some(serde_json::json!({"prompt_tokens": 3}));
    usage.frame = 1;
    ok.events = vec![
        ev(
            1_300,
            EventKind::Data,
            Some(" the"),
            r#"{"choices":[{"delta":{"content":" the"}}]}"#,
        ),
        usage,
        Event {
            frame: 1,
            ..ev(1_800, EventKind::Done, None, "[DONE]")
        },
    ];
    ok.events[0].finish_reason = Some("length".into());
    ok.tokens = TokenCounts {
        input: Some(32),
        output: Some(1),
        reasoning: None,
    };

    let mut err = base(2, Phase::Profiling);
    err.status = Some(500);
    err.error = Some(RecordError {
        kind: ErrorKind::Http,
        code: Some(500),
        error_type: "Internal Server Error".into(),
        message: "{\"error\":\"boom\"}".into(),
    });

    let mut cut = base(3, Phase::Profiling);
    cut.ack_ns = Some(3_200);
    cut.status = Some(200);
    cut.cancelled = true;
    cut.cancel_ns = Some(3_500);
    cut.error = Some(RecordError {
        kind: ErrorKind::Cancelled,
        code: None,
        error_type: "Cancelled".into(),
        message: "cancelled by Ctrl-C".into(),
    });

    let warm = base(0, Phase::Warmup);
    vec![warm, ok, err, cut]
}

pub fn window(phase: Phase) -> PhaseWindow {
    PhaseWindow {
        phase,
        start_ns: 0,
        sent_end_ns: 3_100,
        requests_end_ns: 3_900,
        scheduled: 3,
        completed: 3,
        errors: 2,
        cancelled: false,
    }
}

pub fn workload() -> Workload {
    Workload {
        payloads: (0..4)
            .map(|i| Payload {
                conversation_id: format!("session_{i:06}"),
                turn_index: 0,
                body: format!(r#"{{"messages":[{{"role":"user","content":"hi {i}"}}],"model":"mock-model","stream":true}}"#),
                input_tokens: Some(3),
                requested_output_tokens: None,
                ..Default::default()
            })
            .collect(),
    }
}

pub fn record_metrics() -> Vec<(u64, Vec<RecordMetric>)> {
    vec![
        (
            1,
            vec![
                RecordMetric {
                    tag: "request_latency".into(),
                    unit: "ms".into(),
                    value: RecordMetricValue::Float(0.0008),
                },
                RecordMetric {
                    tag: "output_sequence_length".into(),
                    unit: "tokens".into(),
                    value: RecordMetricValue::Int(1),
                },
                RecordMetric {
                    tag: "inter_chunk_latency".into(),
                    unit: "ms".into(),
                    value: RecordMetricValue::List(vec![0.5, 0.25]),
                },
            ],
        ),
        (
            2,
            vec![RecordMetric {
                tag: "error_isl".into(),
                unit: "tokens".into(),
                value: RecordMetricValue::Int(32),
            }],
        ),
    ]
}
