//! `vllm-bench` on small hand-built records; every expected value is worked out by hand in
//! the comments (times in ms unless said).

use inferbench_core::evidence::{EvidenceHeader, PhaseWindow};
use inferbench_core::record::EventKindOpt;
use inferbench_core::summary::RecordMetricValue;
use inferbench_core::{
    ErrorKind, Event, EventKind, Evidence, Phase, Record, RecordError, Summary, TokenCounts,
};
use inferbench_metrics::vllm_bench::{Goodput, NAME, compute, compute_with_goodput};
use serde_json::json;

const MS: u64 = 1_000_000;

#[track_caller]
fn close(a: Option<f64>, b: f64) {
    let a = a.expect("value missing");
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        "got {a}, expected {b}"
    );
}

fn header(server_tokens: bool) -> EvidenceHeader {
    EvidenceHeader {
        schema_version: 1,
        tool: "inferbench".into(),
        tool_version: "test".into(),
        anchor_unix_ns: 0,
        benchmark_id: "t".into(),
        endpoint_type: "chat".into(),
        streaming: true,
        tokenizer: "test".into(),
        use_server_token_count: server_tokens,
        per_chunk_usage: false,
    }
}

fn text(t_ms: u64, s: &str) -> Event {
    Event {
        t_ns: t_ms * MS,
        content: Some(s.into()),
        ..Default::default()
    }
}

fn usage_only(t_ms: u64, completion: u64) -> Event {
    Event {
        t_ns: t_ms * MS,
        usage: Some(json!({"prompt_tokens": 9, "completion_tokens": completion})),
        raw: Some(format!(
            r#"{{"choices":[],"usage":{{"prompt_tokens":9,"completion_tokens":{completion}}}}}"#
        )),
        ..Default::default()
    }
}

fn done(t_ms: u64) -> Event {
    Event {
        t_ns: t_ms * MS,
        kind: EventKindOpt(EventKind::Done),
        ..Default::default()
    }
}

fn record(
    id: u64,
    start_ms: u64,
    end_ms: u64,
    events: Vec<Event>,
    input: u64,
    output: u64,
) -> Record {
    Record {
        id,
        streaming: true,
        planned_ns: start_ms * MS,
        start_ns: start_ms * MS,
        end_ns: end_ms * MS,
        events,
        tokens: TokenCounts {
            input: Some(input),
            output: Some(output),
            reasoning: None,
        },
        ..Default::default()
    }
}

/// Four requests in a 2 s window:
/// - r0 at 0: role-only chunk at 10 (content ""), tokens at 30, 40, 60, usage-only at 61,
///   [DONE] at 61; 3 output tokens, 10 input. TTFT 10 (the role chunk counts), ITL 20, 10,
///   20, E2EL 61 (the usage chunk moves the clock), TPOT (61 − 10) / 2 = 25.5.
/// - r1 at 100: tokens at 150, 170, [DONE] 171; 2 output, 20 input. TTFT 50, ITL 20, E2EL 70,
///   TPOT 20 / 1 = 20.
/// - r2 at 200: HTTP 500 at 201. Failed.
/// - r3 at 1500: one token at 1600; 1 output, 5 input. TTFT 100, E2EL 100, no ITL, no TPOT.
fn evidence(server_tokens: bool) -> Evidence {
    let r0 = record(
        0,
        0,
        62,
        vec![
            text(10, ""),
            text(30, "a"),
            text(40, "b"),
            text(60, "c"),
            usage_only(61, 7),
            done(61),
        ],
        10,
        3,
    );
    let r1 = record(
        1,
        100,
        172,
        vec![text(150, "x"), text(170, "y"), done(171)],
        20,
        2,
    );
    let mut r2 = record(2, 200, 201, vec![], 0, 0);
    r2.tokens = TokenCounts::default();
    r2.error = Some(RecordError {
        kind: ErrorKind::Http,
        code: Some(500),
        error_type: "HTTPError".into(),
        message: "boom".into(),
    });
    let r3 = record(3, 1500, 1601, vec![text(1600, "z")], 5, 1);
    Evidence {
        header: header(server_tokens),
        records: vec![r0, r1, r2, r3],
        phases: vec![PhaseWindow {
            phase: Phase::Profiling,
            start_ns: 0,
            sent_end_ns: 1500 * MS,
            requests_end_ns: 2000 * MS,
            scheduled: 4,
            completed: 4,
            errors: 1,
            cancelled: false,
        }],
        end: None,
    }
}

fn scalar(s: &Summary, tag: &str) -> Option<f64> {
    s.get(tag).and_then(|m| m.scalar())
}

#[test]
fn counts_throughputs_and_peaks() {
    let c = compute(&evidence(false), Phase::Profiling);
    let s = &c.summary;
    assert_eq!(s.definitions, NAME);
    close(scalar(s, "completed"), 3.0);
    close(scalar(s, "failed"), 1.0);
    close(scalar(s, "duration"), 2.0);
    // Input of the successes only: 10 + 20 + 5; output 3 + 2 + 1.
    close(scalar(s, "total_input_tokens"), 35.0);
    close(scalar(s, "total_output_tokens"), 6.0);
    close(scalar(s, "request_throughput"), 1.5);
    close(scalar(s, "output_throughput"), 3.0);
    close(scalar(s, "total_token_throughput"), 20.5);
    // Buckets from 0 s: ceil(1.6) + 1 = 3. Bucket 0 holds r0's 4 chunks and r1's 2; bucket
    // 1 r3's one. r0 and r1 are both active in bucket 0.
    close(scalar(s, "max_output_tokens_per_s"), 6.0);
    close(scalar(s, "max_concurrent_requests"), 2.0);
    assert!(s.get("request_goodput").is_none());
    assert_eq!(s.error_summary.len(), 1);
    assert_eq!(s.error_summary[0].code, Some(500));
}

#[test]
fn latency_distributions_match_vllm_definitions() {
    let c = compute(&evidence(false), Phase::Profiling);
    let s = &c.summary;
    let st = |tag: &str| s.get(tag).and_then(|m| m.stats()).cloned().unwrap();
    // TTFT [10, 50, 100]: mean 160/3; median 50; population std √(4066.67/3) = 36.8179…;
    // p99 linear: index 1.98 → 50 + 0.98 · 50 = 99.
    let ttft = st("ttft");
    assert_eq!(ttft.count, 3);
    close(ttft.avg, 160.0 / 3.0);
    close(ttft.p50, 50.0);
    close(ttft.std, (12200.0f64 / 9.0).sqrt());
    close(ttft.p99, 99.0);
    // TPOT [25.5, 20]: r3 (1 token) is left out.
    let tpot = st("tpot");
    assert_eq!(tpot.count, 2);
    close(tpot.avg, 22.75);
    close(tpot.p50, 22.75);
    close(tpot.std, 2.75);
    // ITL pooled [20, 10, 20, 20]: mean 17.5, median 20, std √18.75.
    let itl = st("itl");
    assert_eq!(itl.count, 4);
    close(itl.avg, 17.5);
    close(itl.p50, 20.0);
    close(itl.std, 18.75f64.sqrt());
    close(itl.min, 10.0);
    // E2EL [61, 70, 100].
    let e2el = st("e2el");
    close(e2el.avg, 77.0);
    close(e2el.p50, 70.0);
    close(e2el.max, 100.0);
}

#[test]
fn per_record_values_and_failed_records() {
    let c = compute(&evidence(false), Phase::Profiling);
    assert_eq!(c.per_record.len(), 4);
    let get = |i: usize, tag: &str| {
        c.per_record[i]
            .metrics
            .iter()
            .find(|m| m.tag == tag)
            .map(|m| m.value.clone())
    };
    assert_eq!(get(0, "tpot"), Some(RecordMetricValue::Float(25.5)));
    assert_eq!(
        get(0, "itl"),
        Some(RecordMetricValue::List(vec![20.0, 10.0, 20.0]))
    );
    assert!(c.per_record[2].metrics.is_empty());
    assert_eq!(get(3, "tpot"), None);
}

#[test]
fn goodput_counts_requests_meeting_every_bound() {
    let ev = evidence(false);
    // ttft ≤ 60 and tpot ≤ 22: r0 fails on TPOT 25.5, r3 on TTFT 100; r1 is good → 1 / 2 s.
    let g = Goodput::parse("ttft:60 tpot:22").unwrap();
    let s = compute_with_goodput(&ev, Phase::Profiling, &g).summary;
    close(scalar(&s, "request_goodput"), 0.5);
    // E2EL ≤ 100: all three successes → 1.5.
    let g = Goodput::parse("e2el:100").unwrap();
    let s = compute_with_goodput(&ev, Phase::Profiling, &g).summary;
    close(scalar(&s, "request_goodput"), 1.5);
    // TPOT ≤ 0: only r3, whose TPOT counts as 0 (one token) → 0.5.
    let g = Goodput::parse("tpot:0").unwrap();
    let s = compute_with_goodput(&ev, Phase::Profiling, &g).summary;
    close(scalar(&s, "request_goodput"), 0.5);
}

#[test]
fn server_token_counts_come_from_usage() {
    // With server counts, r0's output is usage completion_tokens 7 (TPOT (61 − 10) / 6 = 8.5)
    // and its input prompt_tokens 9; r1 and r3 have no usage: 0 tokens.
    let c = compute(&evidence(true), Phase::Profiling);
    let s = &c.summary;
    close(scalar(s, "total_output_tokens"), 7.0);
    close(scalar(s, "total_input_tokens"), 9.0);
    let tpot = s.get("tpot").and_then(|m| m.stats()).unwrap();
    assert_eq!(tpot.count, 1);
    close(tpot.avg, 8.5);
}

#[test]
fn no_success_reports_zeros_like_numpy_of_zero() {
    let mut ev = evidence(false);
    ev.records.retain(|r| r.error.is_some());
    let s = compute(&ev, Phase::Profiling).summary;
    close(scalar(&s, "completed"), 0.0);
    close(scalar(&s, "request_throughput"), 0.0);
    let ttft = s.get("ttft").and_then(|m| m.stats()).unwrap();
    assert_eq!(ttft.count, 0);
    close(ttft.avg, 0.0);
    close(ttft.p99, 0.0);
}
