//! `mlperf-loadgen` on small hand-built records; every expected value is worked out by hand
//! in the comments (times in ms unless said).

use inferbench_core::evidence::{EvidenceHeader, PhaseWindow};
use inferbench_core::{
    ErrorKind, Event, Evidence, Phase, Record, RecordError, Summary, TokenCounts,
};
use inferbench_metrics::mlperf::{NAME, Settings, compute, compute_with};

const MS: u64 = 1_000_000;

#[track_caller]
fn close(a: Option<f64>, b: f64) {
    let a = a.expect("value missing");
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        "got {a}, expected {b}"
    );
}

fn header() -> EvidenceHeader {
    EvidenceHeader {
        schema_version: 1,
        tool: "inferbench".into(),
        tool_version: "test".into(),
        anchor_unix_ns: 0,
        benchmark_id: "t".into(),
        endpoint_type: "chat".into(),
        streaming: true,
        tokenizer: "test".into(),
        use_server_token_count: false,
        per_chunk_usage: false,
    }
}

fn rec(
    id: u64,
    planned: u64,
    start: u64,
    first: u64,
    end: u64,
    out: u64,
    reasoning: u64,
) -> Record {
    Record {
        id,
        streaming: true,
        planned_ns: planned * MS,
        start_ns: start * MS,
        end_ns: end * MS,
        events: vec![Event {
            t_ns: first * MS,
            content: Some("t".into()),
            ..Default::default()
        }],
        tokens: TokenCounts {
            input: Some(4),
            output: Some(out),
            reasoning: (reasoning > 0).then_some(reasoning),
        },
        ..Default::default()
    }
}

/// Four samples from a phase starting at 0, latencies from the *scheduled* time:
/// - s0 planned 0, sent 5, first token 25, done 60, 6 tokens: latency 60, TTFT 25, TPOT 35/5 = 7.
/// - s1 planned 100, sent 130 (late), first 150, done 200, 3 tokens: latency 100, TTFT 50,
///   TPOT 50/2 = 25.
/// - s2 planned 200, sent 200, first 210, done 215, 1 token: latency 15, TTFT 10, no TPOT.
/// - s3 planned 300, sent 300, first 330, done 400, 8 output + 2 reasoning = 10 tokens:
///   latency 100, TTFT 30, TPOT 70/9.
fn evidence() -> Evidence {
    Evidence {
        header: header(),
        records: vec![
            rec(0, 0, 5, 25, 60, 6, 0),
            rec(1, 100, 130, 150, 200, 3, 0),
            rec(2, 200, 200, 210, 215, 1, 0),
            rec(3, 300, 300, 330, 400, 8, 2),
        ],
        phases: vec![PhaseWindow {
            phase: Phase::Profiling,
            start_ns: 0,
            sent_end_ns: 300 * MS,
            requests_end_ns: 400 * MS,
            scheduled: 4,
            completed: 4,
            errors: 0,
            cancelled: false,
        }],
        end: None,
    }
}

fn scalar(s: &Summary, tag: &str) -> Option<f64> {
    s.get(tag).and_then(|m| m.scalar())
}

#[test]
fn rates_from_the_schedule_and_the_final_query() {
    let s = compute(&evidence(), Phase::Profiling).summary;
    assert_eq!(s.definitions, NAME);
    close(scalar(&s, "samples_issued"), 4.0);
    close(scalar(&s, "samples_completed"), 4.0);
    // The last scheduled sample (s3) is scheduled at 0.3 s and done at 0.4 s.
    close(scalar(&s, "final_query_scheduled_time"), 0.3);
    close(scalar(&s, "final_query_done_time"), 0.4);
    // (n − 1) / 0.3 = 10; (n − 1) / 0.4 = 7.5; tokens 6 + 3 + 1 + 10 = 20 → 20 / 0.4 = 50.
    close(scalar(&s, "scheduled_samples_per_second"), 10.0);
    close(scalar(&s, "completed_samples_per_second"), 7.5);
    close(scalar(&s, "completed_tokens_per_second"), 50.0);
    // 7.5 < 10 × 0.99: the schedule was not kept.
    close(scalar(&s, "schedule_kept"), 0.0);
}

#[test]
fn latencies_are_measured_from_the_scheduled_time() {
    let s = compute(&evidence(), Phase::Profiling).summary;
    let st = |tag: &str| s.get(tag).and_then(|m| m.stats()).cloned().unwrap();
    // Latency [60, 100, 15, 100], sorted [15, 60, 100, 100]: index ⌊4 · 0.5⌋ = 2 → 100;
    // ⌊3.6⌋ = 3 → 100; mean 275 / 4.
    let lat = st("latency");
    assert_eq!(lat.count, 4);
    close(lat.avg, 68.75);
    close(lat.min, 15.0);
    close(lat.max, 100.0);
    close(lat.p50, 100.0);
    close(lat.p90, 100.0);
    // TTFT sorted [10, 25, 30, 50]: p50 index 2 → 30, p99 index ⌊3.96⌋ = 3 → 50, mean 28.75.
    let ttft = st("ttft");
    close(ttft.p50, 30.0);
    close(ttft.p99, 50.0);
    close(ttft.avg, 28.75);
    close(scalar(&s, "ttft_p99_9"), 50.0);
    // s1's TTFT from its scheduled time is 50, not the 20 from when it was sent.
    // TPOT sorted [7, 70/9, 25]: p50 index ⌊1.5⌋ = 1 → 70/9, p99 index 2 → 25.
    let tpot = st("tpot");
    // s2 (one token) has no TPOT.
    assert_eq!(tpot.count, 3);
    close(tpot.p50, 70.0 / 9.0);
    close(tpot.p99, 25.0);
    close(scalar(&s, "tpot_p97"), 25.0);
    // Issue delay [5, 30, 0, 0]: mean 8.75.
    close(st("issue_delay").avg, 8.75);
}

#[test]
fn verdicts_follow_loadgen_gates() {
    let ev = evidence();
    // Defaults: no latency limits (no latency or overall verdict), 600 s minimum → not met,
    // 100 queries minimum → not met.
    let s = compute(&ev, Phase::Profiling).summary;
    assert!(s.get("ttft_limit_met").is_none());
    assert!(s.get("result_valid").is_none());
    close(scalar(&s, "min_duration_met"), 0.0);
    close(scalar(&s, "min_queries_met"), 0.0);
    close(scalar(&s, "all_samples_completed"), 1.0);

    // p99 TTFT 50 ≤ 50 holds; p99 TPOT 25 > 20 fails → INVALID.
    let mut set = Settings {
        ttft_limit_ms: Some(50.0),
        tpot_limit_ms: Some(20.0),
        min_duration_s: 0.25,
        min_query_count: 4,
        ..Settings::default()
    };
    let s = compute_with(&ev, Phase::Profiling, &set).summary;
    close(scalar(&s, "ttft_limit_met"), 1.0);
    close(scalar(&s, "tpot_limit_met"), 0.0);
    close(scalar(&s, "min_duration_met"), 1.0);
    close(scalar(&s, "min_queries_met"), 1.0);
    close(scalar(&s, "result_valid"), 0.0);
    // TPOT limit 25 → every gate holds → VALID.
    set.tpot_limit_ms = Some(25.0);
    let s = compute_with(&ev, Phase::Profiling, &set).summary;
    close(scalar(&s, "result_valid"), 1.0);

    // A failed sample makes the result INVALID and leaves the distributions.
    let mut ev = ev;
    let mut bad = rec(4, 310, 310, 0, 320, 0, 0);
    bad.events.clear();
    bad.error = Some(RecordError {
        kind: ErrorKind::Http,
        code: Some(503),
        error_type: "HTTPError".into(),
        message: "busy".into(),
    });
    ev.records.push(bad);
    set.min_query_count = 5;
    let c = compute_with(&ev, Phase::Profiling, &set);
    let s = &c.summary;
    close(scalar(s, "samples_issued"), 5.0);
    close(scalar(s, "samples_failed"), 1.0);
    close(scalar(s, "all_samples_completed"), 0.0);
    close(scalar(s, "result_valid"), 0.0);
    assert_eq!(s.get("latency").and_then(|m| m.stats()).unwrap().count, 4);
    // The failed sample, scheduled last (310), is the final query: done at 320.
    close(scalar(s, "final_query_done_time"), 0.32);
    assert!(c.per_record[4].metrics.is_empty());
    assert_eq!(s.error_summary[0].code, Some(503));
}
