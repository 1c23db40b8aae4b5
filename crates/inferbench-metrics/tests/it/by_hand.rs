//! `aiperf-0.13` on small hand-built records, every expected value worked out by hand in the
//! comments (times in ns unless said; 1 ms = 1_000_000 ns).

use inferbench_core::evidence::{EvidenceHeader, PhaseWindow};
use inferbench_core::record::{EventKindOpt, PhaseOpt};
use inferbench_core::summary::RecordMetricValue;
use inferbench_core::{
    ErrorKind, Event, EventKind, Evidence, Phase, Record, RecordError, Summary, TokenCounts,
};
use inferbench_metrics::{Computed, MetricsError, compute, definition_sets};
use serde_json::json;

const MS: u64 = 1_000_000;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[track_caller]
fn assert_close(a: Option<f64>, b: f64) {
    let a = a.expect("value missing");
    assert!(close(a, b), "got {a}, expected {b}");
}

fn header(streaming: bool, server_tokens: bool) -> EvidenceHeader {
    EvidenceHeader {
        schema_version: 1,
        tool: "inferbench".into(),
        tool_version: "test".into(),
        anchor_unix_ns: 0,
        benchmark_id: "t".into(),
        endpoint_type: "chat".into(),
        streaming,
        tokenizer: "test".into(),
        use_server_token_count: server_tokens,
        per_chunk_usage: false,
    }
}

fn content(t_ns: u64, text: &str) -> Event {
    Event {
        t_ns,
        content: Some(text.into()),
        ..Default::default()
    }
}

fn reasoning(t_ns: u64, text: &str) -> Event {
    Event {
        t_ns,
        reasoning: Some(text.into()),
        ..Default::default()
    }
}

fn usage(t_ns: u64, u: serde_json::Value) -> Event {
    Event {
        t_ns,
        usage: Some(u),
        ..Default::default()
    }
}

fn done(t_ns: u64) -> Event {
    Event {
        t_ns,
        kind: EventKindOpt(EventKind::Done),
        ..Default::default()
    }
}

fn record(id: u64, start: u64, end: u64, events: Vec<Event>, tokens: (u64, u64)) -> Record {
    Record {
        id,
        streaming: true,
        planned_ns: start,
        start_ns: start,
        end_ns: end,
        events,
        tokens: TokenCounts {
            input: Some(tokens.0),
            output: Some(tokens.1),
            reasoning: None,
        },
        ..Default::default()
    }
}

fn evidence(h: EvidenceHeader, records: Vec<Record>, window: Option<(u64, u64)>) -> Evidence {
    let n = records.len() as u64;
    Evidence {
        header: h,
        records,
        phases: window
            .map(|(s, e)| PhaseWindow {
                phase: Phase::Profiling,
                start_ns: s,
                sent_end_ns: s,
                requests_end_ns: e,
                scheduled: n,
                completed: n,
                errors: 0,
                cancelled: false,
            })
            .into_iter()
            .collect(),
        end: None,
    }
}

fn run(ev: &Evidence) -> Computed {
    compute("aiperf-0.13", ev, Phase::Profiling).unwrap()
}

fn avg(s: &Summary, tag: &str) -> Option<f64> {
    s.get(tag).and_then(|m| m.avg())
}

/// The reasoning record used by several tests:
/// start 1 ms; role-only chunk (empty content) at 2 ms; reasoning at 21 and 26 ms; content
/// at 31 ms and a multi-token content chunk at 41 ms; a usage-only chunk and [DONE] at 51 ms.
/// Client tokens: input 10, output 6, reasoning 4; usage 12 / 10 / 22, reasoning 4; max 8.
fn reasoning_record() -> Record {
    let mut r = record(
        0,
        MS,
        52 * MS,
        vec![
            content(2 * MS, ""),
            reasoning(21 * MS, "think"),
            reasoning(26 * MS, " more"),
            content(31 * MS, "Hello"),
            content(41 * MS, " there, a longer chunk"),
            usage(
                51 * MS,
                json!({"prompt_tokens": 12, "completion_tokens": 10, "total_tokens": 22,
                       "completion_tokens_details": {"reasoning_tokens": 4}}),
            ),
            done(51 * MS),
        ],
        (10, 6),
    );
    r.tokens.reasoning = Some(4);
    r.requested_output_tokens = Some(8);
    r.planned_ns = 0;
    r
}

#[test]
fn reasoning_before_content_and_role_only_first_chunk() {
    let c = run(&evidence(
        header(true, false),
        vec![reasoning_record()],
        None,
    ));
    let s = &c.summary;
    // Content responses: 21, 26, 31, 41 ms (the role-only and usage-only chunks and [DONE]
    // carry no text).
    // request_latency = 41 − 1 = 40 ms.
    assert_close(avg(s, "request_latency"), 40.0);
    // TTFT counts reasoning: 21 − 1 = 20 ms. TTFO waits for output text: 31 − 1 = 30 ms.
    assert_close(avg(s, "time_to_first_token"), 20.0);
    assert_close(avg(s, "time_to_first_output_token"), 30.0);
    // TTST = 26 − 21 = 5 ms.
    assert_close(avg(s, "time_to_second_token"), 5.0);
    // ICL: gaps 5, 5, 10 ms → avg 20/3, min 5, max 10, sum 20, count 3.
    let icl = s.get("inter_chunk_latency").unwrap().stats().unwrap();
    assert_eq!(icl.count, 3);
    assert_close(icl.avg, 20.0 / 3.0);
    assert_close(icl.min, 5.0);
    assert_close(icl.max, 10.0);
    assert_close(icl.sum, 20.0);
    // decode = 40 − 20 = 20 ms.
    assert_close(avg(s, "decode_duration"), 20.0);
    // OSL = output 6 + reasoning 4 = 10; ITL = 20 ms / (10 − 1) = 2.2222… ms.
    assert_close(avg(s, "output_sequence_length"), 10.0);
    assert_close(avg(s, "output_token_count"), 6.0);
    assert_close(avg(s, "reasoning_token_count"), 4.0);
    assert_close(avg(s, "inter_token_latency"), 20.0 / 9.0);
    // Per user: 1 / (0.02/9 s) = 450 tokens/s; e2e: 10 / 0.04 s = 250; prefill: 10 / 0.02 = 500.
    assert_close(avg(s, "output_token_throughput_per_user"), 450.0);
    assert_close(avg(s, "e2e_output_token_throughput"), 250.0);
    assert_close(avg(s, "prefill_throughput_per_user"), 500.0);
    // Usage from the usage-only chunk.
    assert_close(avg(s, "usage_prompt_tokens"), 12.0);
    assert_close(avg(s, "usage_completion_tokens"), 10.0);
    assert_close(avg(s, "usage_total_tokens"), 22.0);
    assert_close(avg(s, "usage_reasoning_tokens"), 4.0);
    // Diffs: prompt |12 − 10| / 10 = 20 %; completion |10 − 10| = 0 %; reasoning 0 %.
    assert_close(avg(s, "usage_prompt_tokens_diff_pct"), 20.0);
    assert_close(avg(s, "usage_completion_tokens_diff_pct"), 0.0);
    assert_close(avg(s, "usage_reasoning_tokens_diff_pct"), 0.0);
    // 20 % > 10 % threshold → one discrepancy.
    assert_close(avg(s, "usage_discrepancy_count"), 1.0);
    // OSL 10 vs requested 8: +25 %; |2| > min(8 × 5 % = 0.4, 50) → mismatch.
    assert_close(avg(s, "osl_mismatch_diff_pct"), 25.0);
    assert_close(avg(s, "osl_mismatch_count"), 1.0);
    // Totals: OSL 10, output 6, reasoning 4, ISL 10.
    assert_close(avg(s, "total_osl"), 10.0);
    assert_close(avg(s, "total_output_tokens"), 6.0);
    assert_close(avg(s, "total_reasoning_tokens"), 4.0);
    assert_close(avg(s, "total_isl"), 10.0);
    assert_close(avg(s, "total_usage_reasoning_tokens"), 4.0);
    // benchmark_duration (anchor 0): last content 41 ms − start 1 ms = 0.04 s.
    assert_close(avg(s, "benchmark_duration"), 0.04);
    // credit_to_start = start 1 ms − planned 0; effective_latency = end 52 ms − planned 0.
    assert_close(avg(s, "credit_to_start_latency"), 1.0);
    assert_close(avg(s, "effective_latency"), 52.0);
    // No errors: no error metrics, no adj_*.
    assert_close(avg(s, "request_error_rate"), 0.0);
    assert!(s.get("error_request_count").is_none());
    assert!(s.get("adj_request_latency").is_none());
    assert!(s.error_summary.is_empty());
    // Header and unit come from AIPerf's display names.
    let m = s.get("output_token_throughput_per_user").unwrap();
    assert_eq!(m.header, "Output Token Throughput Per User");
    assert_eq!(m.unit, "tokens/sec/user");

    // Per record: display units, ICL as a list, token counts as integers.
    assert_eq!(c.per_record.len(), 1);
    let pr = &c.per_record[0].metrics;
    let get = |t: &str| pr.iter().find(|m| m.tag == t).map(|m| m.value.clone());
    match get("inter_chunk_latency") {
        Some(RecordMetricValue::List(v)) => {
            assert_eq!(v.len(), 3);
            assert!(close(v[2], 10.0));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        get("output_sequence_length"),
        Some(RecordMetricValue::Int(10))
    );
    match get("request_latency") {
        Some(RecordMetricValue::Float(v)) => assert!(close(v, 40.0)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_reasoning_no_reasoning_metrics_and_ttfo_equals_ttft() {
    // start 0; content at 10, 12, 15 ms (the middle chunk holds 3 tokens); 5 output tokens.
    let r = record(
        0,
        0,
        16 * MS,
        vec![
            content(10 * MS, "a"),
            content(12 * MS, "b c d"),
            content(15 * MS, "e"),
        ],
        (4, 5),
    );
    let s = run(&evidence(header(true, false), vec![r], None)).summary;
    assert_close(avg(&s, "time_to_first_token"), 10.0);
    assert_close(avg(&s, "time_to_first_output_token"), 10.0);
    // ITL = (15 − 10) / (5 − 1) = 1.25 ms, whatever the chunking.
    assert_close(avg(&s, "inter_token_latency"), 1.25);
    // ICL sees the chunks: 2 and 3 ms.
    assert_close(avg(&s, "inter_chunk_latency"), 2.5);
    assert!(s.get("reasoning_token_count").is_none());
    assert!(s.get("total_reasoning_tokens").is_none());
    // No usage at all: no usage or diff metrics, no discrepancy count.
    assert!(s.get("usage_prompt_tokens").is_none());
    assert!(s.get("usage_discrepancy_count").is_none());
    // No max_tokens requested: no OSL-mismatch metrics.
    assert!(s.get("osl_mismatch_count").is_none());
}

#[test]
fn itl_needs_two_output_tokens() {
    // One token: TTFT and latency exist, ITL and per-user throughput do not.
    let r = record(0, 0, 6 * MS, vec![content(5 * MS, "x")], (3, 1));
    let s = run(&evidence(header(true, false), vec![r], None)).summary;
    assert_close(avg(&s, "time_to_first_token"), 5.0);
    assert!(s.get("inter_token_latency").is_none());
    assert!(s.get("output_token_throughput_per_user").is_none());
    assert!(s.get("time_to_second_token").is_none());
    assert!(s.get("inter_chunk_latency").is_none());
}

/// Two valid records (latency 40 and 50 ms) and one HTTP 500.
fn with_error() -> Evidence {
    let a = record(
        0,
        0,
        41 * MS,
        vec![content(20 * MS, "a"), content(40 * MS, "b")],
        (8, 2),
    );
    let b = record(
        1,
        10 * MS,
        61 * MS,
        vec![content(30 * MS, "a"), content(60 * MS, "b")],
        (8, 2),
    );
    let mut e = record(2, 20 * MS, 25 * MS, vec![], (8, 0));
    e.tokens.output = None;
    e.error = Some(RecordError {
        kind: ErrorKind::Http,
        code: Some(500),
        error_type: "Internal Server Error".into(),
        message: "boom".into(),
    });
    evidence(header(true, false), vec![a, b, e], Some((0, 100 * MS)))
}

#[test]
fn error_record_is_excluded_and_adjusted_companions_appear() {
    let c = run(&with_error());
    let s = &c.summary;
    // Latencies: 40 − 0 = 40 ms and 60 − 10 = 50 ms; the error is not in the distribution.
    let lat = s.get("request_latency").unwrap().stats().unwrap();
    assert_eq!(lat.count, 2);
    assert_close(lat.avg, 45.0);
    assert_close(avg(s, "request_count"), 2.0);
    assert_close(avg(s, "error_request_count"), 1.0);
    assert_close(avg(s, "completed_request_count"), 3.0);
    // 100 × 1 / 3.
    assert_close(avg(s, "request_error_rate"), 100.0 / 3.0);
    assert_close(avg(s, "context_overflow_count"), 0.0);
    // The error's ISL (8) is its own metric.
    assert_close(avg(s, "error_isl"), 8.0);
    assert_close(avg(s, "total_error_isl"), 8.0);
    assert_close(avg(s, "total_isl"), 16.0);

    // adj_request_latency: samples [40, 50, +inf], nearest index = round_half_even(2q):
    // p1 → 0.02 → 0 → 40; p25 → 0.5 → 0 → 40; p50 → 1 → 50; p75 → 1.5 → 2 → inf (omitted).
    let adj = s.get("adj_request_latency").unwrap();
    assert_eq!(adj.header, "Request Latency (error-adjusted)");
    let st = adj.stats().unwrap();
    assert_eq!(st.count, 3);
    assert_close(st.p1, 40.0);
    assert_close(st.p25, 40.0);
    assert_close(st.p50, 50.0);
    assert_close(st.min, 40.0);
    for missing in [
        st.p75, st.p90, st.p95, st.p99, st.avg, st.max, st.std, st.sum,
    ] {
        assert_eq!(missing, None);
    }
    for tag in [
        "adj_time_to_first_token",
        "adj_decode_duration",
        "adj_inter_token_latency",
    ] {
        assert_eq!(s.get(tag).unwrap().stats().unwrap().count, 3, "{tag}");
    }
    // Derived latencies cover every record, the error too.
    assert_eq!(
        s.get("credit_to_start_latency")
            .unwrap()
            .stats()
            .unwrap()
            .count,
        3
    );
    // Error summary: one group.
    assert_eq!(s.error_summary.len(), 1);
    assert_eq!(s.error_summary[0].code, Some(500));
    assert_eq!(s.error_summary[0].count, 1);
    // The error record's per-record metrics: only error_isl.
    let tags: Vec<&str> = c.per_record[2]
        .metrics
        .iter()
        .map(|m| m.tag.as_ref())
        .collect();
    assert_eq!(tags, ["error_isl"]);
}

#[test]
fn throughputs_use_the_phase_window() {
    let s = run(&with_error()).summary;
    // Window 0 → 100 ms = 0.1 s (not benchmark_duration, which is 0 → 60 ms).
    assert_close(avg(&s, "benchmark_duration"), 0.06);
    // 2 valid / 0.1 s = 20 req/s.
    assert_close(avg(&s, "request_throughput"), 20.0);
    // OSL 2 + 2 = 4 → 40 tokens/s; ISL 8 + 8 = 16 → 160; total 200.
    assert_close(avg(&s, "output_token_throughput"), 40.0);
    assert_close(avg(&s, "input_token_throughput"), 160.0);
    assert_close(avg(&s, "total_token_throughput"), 200.0);
}

#[test]
fn window_derived_from_records_when_the_phase_line_is_missing() {
    let mut ev = with_error();
    ev.phases.clear();
    let s = run(&ev).summary;
    // Derived window: first planned send 0 → last end 61 ms; 2 / 0.061 s.
    assert_close(avg(&s, "request_throughput"), 2.0 / 0.061);
}

#[test]
fn cancelled_records_are_errors() {
    let mut ev = with_error();
    // A request cancelled mid-stream: it has content, but it is not a success.
    let mut c1 = record(3, 30 * MS, 45 * MS, vec![content(40 * MS, "a")], (8, 1));
    c1.cancelled = true;
    c1.cancel_ns = Some(45 * MS);
    c1.error = Some(RecordError {
        kind: ErrorKind::Cancelled,
        code: None,
        error_type: "RequestCancelled".into(),
        message: "cancelled".into(),
    });
    // Cancelled without an error object still counts as an error.
    let mut c2 = record(4, 30 * MS, 45 * MS, vec![content(40 * MS, "a")], (8, 1));
    c2.cancelled = true;
    ev.records.extend([c1, c2]);
    let s = run(&ev).summary;
    assert_close(avg(&s, "request_count"), 2.0);
    assert_close(avg(&s, "error_request_count"), 3.0);
    assert_close(avg(&s, "request_error_rate"), 60.0); // 100 × 3 / 5
    assert_eq!(s.get("request_latency").unwrap().stats().unwrap().count, 2);
    assert_eq!(
        s.get("adj_request_latency").unwrap().stats().unwrap().count,
        5
    );
    assert_eq!(s.error_summary.len(), 3);
}

#[test]
fn a_record_without_content_is_an_error() {
    // 200 OK but only a role-only chunk, a usage chunk and [DONE]: no content response.
    let r = record(
        0,
        0,
        5 * MS,
        vec![
            content(MS, ""),
            usage(4 * MS, json!({"prompt_tokens": 3, "completion_tokens": 0})),
            done(4 * MS),
        ],
        (3, 0),
    );
    let s = run(&evidence(header(true, false), vec![r], None)).summary;
    assert_close(avg(&s, "request_count"), 0.0);
    assert_close(avg(&s, "error_request_count"), 1.0);
    assert_eq!(s.error_summary[0].error_type, "InvalidInferenceResultError");
    assert!(s.get("request_latency").is_none());
    assert!(s.get("benchmark_duration").is_none());
}

#[test]
fn non_streaming_has_no_streaming_metrics() {
    // One whole body at 30 ms after a start at 2 ms: latency 28 ms, 7 output tokens.
    let body = Event {
        t_ns: 30 * MS,
        kind: EventKindOpt(EventKind::Body),
        content: Some("seven tokens of output text here".into()),
        usage: Some(json!({"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12})),
        ..Default::default()
    };
    let mut r = record(0, 2 * MS, 31 * MS, vec![body], (5, 7));
    r.streaming = false;
    let s = run(&evidence(header(false, false), vec![r], Some((0, 50 * MS)))).summary;
    assert_close(avg(&s, "request_latency"), 28.0);
    // 7 / 0.028 s = 250 tokens/s/user.
    assert_close(avg(&s, "e2e_output_token_throughput"), 250.0);
    assert_close(avg(&s, "output_sequence_length"), 7.0);
    assert_close(avg(&s, "usage_completion_tokens_diff_pct"), 0.0);
    // 7 / 0.05 s = 140 tokens/s.
    assert_close(avg(&s, "output_token_throughput"), 140.0);
    for tag in [
        "time_to_first_token",
        "time_to_second_token",
        "time_to_first_output_token",
        "inter_token_latency",
        "inter_chunk_latency",
        "output_token_throughput_per_user",
        "decode_duration",
        "prefill_throughput_per_user",
    ] {
        assert!(s.get(tag).is_none(), "{tag}");
    }
}

#[test]
fn server_token_count_mode_uses_usage() {
    // Client counts (10 in, 6 out, 4 reasoning) must be ignored; usage says prompt 30,
    // completion 12 of which reasoning 2 → ISL 30, output 12 − 2 = 10, reasoning 2, OSL 12.
    let mut r = reasoning_record();
    r.events[5].usage = Some(json!({
        "prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42,
        "completion_tokens_details": {"reasoning_tokens": 2}
    }));
    let s = run(&evidence(header(true, true), vec![r], None)).summary;
    assert_close(avg(&s, "input_sequence_length"), 30.0);
    assert_close(avg(&s, "output_token_count"), 10.0);
    assert_close(avg(&s, "reasoning_token_count"), 2.0);
    assert_close(avg(&s, "output_sequence_length"), 12.0);
    // ITL = decode 20 ms / (12 − 1).
    assert_close(avg(&s, "inter_token_latency"), 20.0 / 11.0);
    // Nothing to compare the server with.
    assert!(s.get("usage_prompt_tokens_diff_pct").is_none());
    assert!(s.get("usage_discrepancy_count").is_none());
}

#[test]
fn usage_fields_take_the_last_value_seen() {
    // Per-chunk usage: the last one (completion 2) wins over the earlier (completion 1).
    let r = record(
        0,
        0,
        10 * MS,
        vec![
            content(2 * MS, "a"),
            usage(2 * MS, json!({"prompt_tokens": 4, "completion_tokens": 1})),
            content(4 * MS, "b"),
            usage(4 * MS, json!({"prompt_tokens": 4, "completion_tokens": 2})),
        ],
        (4, 2),
    );
    let s = run(&evidence(header(true, false), vec![r], None)).summary;
    assert_close(avg(&s, "usage_completion_tokens"), 2.0);
    assert_close(avg(&s, "usage_prompt_tokens"), 4.0);
}

#[test]
fn benchmark_duration_is_quantized_like_float64_wall_clock() {
    // Anchor 2^60 ns: float64 spacing there is 256 ns. Start at 0, last content at
    // 1_000_000_100 ns: 1_000_000_100 = 3_906_250 × 256 + 100, and 100 < 128 rounds down,
    // so the duration is exactly 1_000_000_000 ns = 1.0 s, not 1.0000001 s.
    let mut ev = evidence(
        header(true, false),
        vec![record(
            0,
            0,
            1_000_000_200,
            vec![content(1_000_000_100, "a")],
            (1, 1),
        )],
        None,
    );
    ev.header.anchor_unix_ns = 1 << 60;
    // Planned 0, start 300 ns: 300 = 256 + 44 rounds to 256 → credit_to_start 0.000256 ms.
    ev.records[0].start_ns = 300;
    ev.records[0].planned_ns = 0;
    let s = run(&ev).summary;
    // Start now 300 → f64 256; end 1_000_000_100 → f64 1_000_000_000 (as above).
    assert_eq!(
        avg(&s, "benchmark_duration"),
        Some((1_000_000_000.0 - 256.0) * 1e-9)
    );
    assert_eq!(avg(&s, "credit_to_start_latency"), Some(256.0 / 1e6));
}

#[test]
fn warmup_records_are_kept_apart() {
    let mut ev = with_error();
    let mut w = record(9, 0, 5 * MS, vec![content(4 * MS, "w")], (1, 1));
    w.phase = PhaseOpt(Phase::Warmup);
    ev.records.push(w);
    let s = run(&ev).summary;
    assert_close(avg(&s, "completed_request_count"), 3.0);
    let warm = compute("aiperf-0.13", &ev, Phase::Warmup).unwrap().summary;
    assert_close(avg(&warm, "request_count"), 1.0);
    assert_close(avg(&warm, "request_latency"), 4.0);
}

#[test]
fn summary_is_in_the_defined_order() {
    let s = run(&with_error()).summary;
    let tags: Vec<&str> = s.metrics.iter().map(|m| m.tag.as_str()).collect();
    let order: Vec<&str> = inferbench_metrics::aiperf::METRICS
        .iter()
        .map(|m| m.0)
        .filter(|t| tags.contains(t))
        .collect();
    assert_eq!(tags, order);
    assert_eq!(
        &tags[..3],
        ["request_throughput", "request_latency", "request_count"]
    );
}

#[test]
fn unknown_definition_set_lists_the_known_ones() {
    assert_eq!(
        definition_sets(),
        [
            "aiperf-0.13",
            "genai-perf-0.0.13",
            "genai-perf-0.0.10",
            "genai-perf-0.0.4",
            "genai-perf-0.0.1",
            "vllm-bench",
            "mlperf-loadgen"
        ]
    );
    let err = compute("genai-perf-9", &with_error(), Phase::Profiling).unwrap_err();
    assert!(matches!(err, MetricsError::UnknownDefinitions { .. }));
    assert!(err.to_string().contains("aiperf-0.13"), "{err}");
    assert!(err.to_string().contains("vllm-bench"), "{err}");
}
