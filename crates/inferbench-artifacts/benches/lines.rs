//! The two lines written once per request, for a streamed 16-token chat response as the
//! simulated server sends it: the evidence record line (and the serde path it replaced) and
//! the `profile_export.jsonl` line with its 33 per-record metrics.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use inferbench_artifacts::{EvidenceWriter, PhaseIndices, render_record_line};
use inferbench_core::record::{EventKind, EventKindOpt};
use inferbench_core::summary::{RecordMetric, RecordMetricValue};
use inferbench_core::{Event, Frame, Phase, Record, TokenCounts};

fn record() -> Record {
    let words = [
        " forty",
        " winters",
        " shall",
        " brow",
        " dig",
        " deep",
        " trenches",
        " field",
        " Thy",
        " youths",
        " proud",
        " so",
        " on",
        " Will",
        " weed",
        " of",
    ];
    let t = 9_908_663;
    let mut events: Vec<Event> = words
        .iter()
        .enumerate()
        .map(|(i, w)| Event {
            frame: i as u32,
            t_ns: t + i as u64,
            content: Some((*w).to_string()),
            ..Default::default()
        })
        .collect();
    events[15].finish_reason = Some("length".into());
    events.push(Event {
        frame: 16,
        t_ns: t + 16,
        usage: Some(
            serde_json::json!({"prompt_tokens": 30, "completion_tokens": 16, "total_tokens": 46}),
        ),
        ..Default::default()
    });
    events.push(Event {
        frame: 17,
        t_ns: t + 17,
        kind: EventKindOpt(EventKind::Done),
        ..Default::default()
    });
    Record {
        request_id: "965db6b1-0545-49c1-94eb-28d6930794b3".into(),
        correlation_id: "48891390-7db0-4f4a-8ffa-116c02d5b8ba".into(),
        conversation_id: "session_000042".into(),
        payload_index: 42,
        streaming: true,
        planned_ns: 6_882_357,
        start_ns: 6_896_384,
        sent_ns: Some(9_921_710),
        ack_ns: Some(t),
        end_ns: t + 17,
        status: Some(200),
        request_bytes: 327,
        requested_output_tokens: Some(16),
        frames: (0..18)
            .map(|i| Frame {
                t_ns: t + i,
                bytes: 184,
            })
            .collect(),
        events,
        tokens: TokenCounts {
            input: Some(32),
            output: Some(16),
            reasoning: Some(0),
        },
        ..Default::default()
    }
}

fn metrics() -> Vec<RecordMetric> {
    let mut m: Vec<RecordMetric> = (0..32)
        .map(|i| RecordMetric {
            tag: format!("metric_number_{i}").into(),
            value: if i % 3 == 0 {
                RecordMetricValue::Int(i)
            } else {
                RecordMetricValue::Float(3.012279 * i as f64)
            },
            unit: "ms".into(),
        })
        .collect();
    m.push(RecordMetric {
        tag: "inter_chunk_latency".into(),
        value: RecordMetricValue::List((0..15).map(|i| 0.0123 * i as f64).collect()),
        unit: "ms".into(),
    });
    m
}

fn bench(c: &mut Criterion) {
    let r = record();
    let m = metrics();
    let idx = PhaseIndices {
        phase: Phase::Profiling,
        phase_index: 0,
        profiling_index: Some(0),
    };
    let mut out = Vec::with_capacity(8192);
    c.bench_function("profile_export_line", |b| {
        b.iter(|| {
            out.clear();
            render_record_line(&mut out, 1_796_428_699_402_236_901, idx, black_box(&r), &m);
            out.len()
        })
    });
    c.bench_function("evidence_record_line", |b| {
        b.iter(|| {
            out.clear();
            EvidenceWriter::render_record(&mut out, black_box(&r));
            out.len()
        })
    });
    // The serde path the evidence writer used before (its borrowing `LineRef::Record`).
    #[derive(serde::Serialize)]
    #[serde(tag = "line", rename_all = "snake_case")]
    enum LineRef<'a> {
        Record(&'a Record),
    }
    c.bench_function("evidence_record_line/serde", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut out, &LineRef::Record(black_box(&r))).expect("to memory");
            out.len()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
