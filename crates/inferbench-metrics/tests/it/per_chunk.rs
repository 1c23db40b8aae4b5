//! `--per-chunk-usage` under `aiperf-0.13`: ITL's divisor is `OSL − first_chunk_tokens`, the
//! first chunk's count read from the cumulative usage on the first content chunk; an
//! inconsistent count falls back to `OSL − 1`. Every expected value is worked by hand.

use inferbench_core::evidence::EvidenceHeader;
use inferbench_core::{Event, Evidence, Phase, Record, TokenCounts};
use inferbench_metrics::compute;
use serde_json::json;

const MS: u64 = 1_000_000;

fn header(per_chunk_usage: bool) -> EvidenceHeader {
    EvidenceHeader {
        schema_version: 1,
        tool: "inferbench".into(),
        tool_version: "test".into(),
        anchor_unix_ns: 0,
        benchmark_id: "t".into(),
        endpoint_type: "chat".into(),
        streaming: true,
        tokenizer: "test".into(),
        use_server_token_count: true,
        per_chunk_usage,
    }
}

/// A content chunk at `t_ms` carrying the cumulative usage `completion` (or none).
fn chunk(t_ms: u64, text: &str, completion: Option<u64>) -> Event {
    Event {
        t_ns: t_ms * MS,
        content: Some(text.into()),
        usage: completion
            .map(|c| json!({"prompt_tokens": 4, "completion_tokens": c, "total_tokens": 4 + c})),
        ..Default::default()
    }
}

/// Start 0; content chunks at 10, 20 and 30 ms; the closing usage-only chunk says 7 tokens.
/// So OSL = 7 (server count), TTFT = 10 ms, latency = 30 ms (last content), decode = 20 ms.
fn record(first: Option<u64>, second: Option<u64>) -> Record {
    Record {
        id: 0,
        streaming: true,
        start_ns: 0,
        end_ns: 32 * MS,
        events: vec![
            chunk(10, "a b c", first),
            chunk(20, "d e", second),
            chunk(30, "f g", Some(7)),
            Event {
                t_ns: 31 * MS,
                usage: Some(
                    json!({"prompt_tokens": 4, "completion_tokens": 7, "total_tokens": 11}),
                ),
                ..Default::default()
            },
        ],
        tokens: TokenCounts {
            input: Some(4),
            output: Some(7),
            reasoning: None,
        },
        ..Default::default()
    }
}

fn itl_ms(per_chunk_usage: bool, r: Record) -> f64 {
    let ev = Evidence {
        header: header(per_chunk_usage),
        records: vec![r],
        phases: vec![],
        end: None,
    };
    let c = compute("aiperf-0.13", &ev, Phase::Profiling).unwrap();
    c.summary
        .get("inter_token_latency")
        .and_then(|m| m.avg())
        .expect("ITL")
}

#[track_caller]
fn assert_ms(got: f64, want: f64) {
    assert!(
        (got - want).abs() < 1e-9,
        "got {got} ms, expected {want} ms"
    );
}

#[test]
fn the_first_chunks_reported_count_sets_the_divisor() {
    // 3 tokens bundled into the first chunk: 20 ms over 7 − 3 = 4 decode tokens = 5 ms.
    assert_ms(itl_ms(true, record(Some(3), Some(5))), 5.0);
    // Without the flag the same stream is 20 ms / (7 − 1) = 3.333… ms.
    assert_ms(itl_ms(false, record(Some(3), Some(5))), 20.0 / 6.0);
}

#[test]
fn the_first_content_chunk_with_usage_counts() {
    // The first chunk has no usage; the second says 5 so far: 20 ms / (7 − 5) = 10 ms.
    assert_ms(itl_ms(true, record(None, Some(5))), 10.0);
    // No content chunk carries usage (only the closing chunk does): 20 ms / 6.
    let mut r = record(None, None);
    r.events[2].usage = None;
    assert_ms(itl_ms(true, r), 20.0 / 6.0);
}

#[test]
fn an_inconsistent_count_falls_back_to_osl_minus_one() {
    // 7 of 7 tokens in the first chunk leaves no decode token; 0 is not a count: 20 ms / 6.
    assert_ms(itl_ms(true, record(Some(7), Some(7))), 20.0 / 6.0);
    assert_ms(itl_ms(true, record(Some(9), Some(9))), 20.0 / 6.0);
    assert_ms(itl_ms(true, record(Some(0), Some(5))), 20.0 / 6.0);
    // 6 of 7 leaves exactly one decode token: 20 ms / 1.
    assert_ms(itl_ms(true, record(Some(6), Some(6))), 20.0);
}
