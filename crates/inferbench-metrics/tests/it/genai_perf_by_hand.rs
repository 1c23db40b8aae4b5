//! The `genai-perf-*` sets on small hand-built timelines; every expected value is worked out
//! by hand in the comments (times in ns unless said; 1 ms = 1_000_000 ns).

use inferbench_core::evidence::EvidenceHeader;
use inferbench_core::record::EventKindOpt;
use inferbench_core::{
    ErrorKind, Event, EventKind, Evidence, Frame, Phase, Record, RecordError, Summary, TokenCounts,
};
use inferbench_metrics::genai_perf::{self as gp, GoodputSlo};

const MS: u64 = 1_000_000;

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

/// A record from (frame time, [event texts]) groups: each group is one frame (one PA
/// response); `None` is `[DONE]`, `Some("")` a role-only delta.
fn record(id: u64, start: u64, isl: u64, frames: &[(u64, &[Option<&str>])]) -> Record {
    let mut r = Record {
        id,
        start_ns: start,
        planned_ns: start,
        streaming: true,
        tokens: TokenCounts {
            input: Some(isl),
            ..Default::default()
        },
        ..Default::default()
    };
    for (i, (t, events)) in frames.iter().enumerate() {
        r.frames.push(Frame { t_ns: *t, bytes: 1 });
        for e in *events {
            r.events.push(Event {
                frame: i as u32,
                t_ns: *t,
                kind: EventKindOpt(if e.is_some() {
                    EventKind::Data
                } else {
                    EventKind::Done
                }),
                content: e.map(str::to_string),
                ..Default::default()
            });
        }
    }
    r.end_ns = frames.last().map_or(start, |f| f.0);
    r
}

fn evidence(records: Vec<Record>) -> Evidence {
    Evidence {
        header: header(),
        records,
        phases: Vec::new(),
        end: None,
    }
}

fn words(t: &str) -> u64 {
    t.split_whitespace().count() as u64
}

fn chars(t: &str) -> u64 {
    t.chars().count() as u64
}

/// Four records:
/// 1. start 0: role-only at 10 ms (dropped), "a" at 20 ms, " b" + " c" in one frame at 25 ms,
///    " d e" at 40 ms, [DONE] at 41 ms (dropped). Kept 20, 25, 40 ms; text "a b c d e".
/// 2. start 5 ms: " x y" at 30 ms, [DONE] in the same frame. One response, OSL 2 words.
/// 3. start 10 ms: role-only and [DONE] only: skipped, but counted in request throughput.
/// 4. an HTTP error: left out of everything.
fn sample() -> Evidence {
    let r1 = record(
        0,
        0,
        5,
        &[
            (10 * MS, &[Some("")]),
            (20 * MS, &[Some("a")]),
            (25 * MS, &[Some(" b"), Some(" c")]),
            (40 * MS, &[Some(" d e")]),
            (41 * MS, &[None]),
        ],
    );
    let r2 = record(1, 5 * MS, 3, &[(30 * MS, &[Some(" x y"), None])]);
    let r3 = record(2, 10 * MS, 4, &[(12 * MS, &[Some("")]), (13 * MS, &[None])]);
    let mut r4 = record(3, 0, 9, &[(90 * MS, &[Some("z z z")])]);
    r4.error = Some(RecordError {
        kind: ErrorKind::Http,
        code: Some(500),
        error_type: "HTTPError".into(),
        message: "boom".into(),
    });
    evidence(vec![r1, r2, r3, r4])
}

fn summary(set: &str, ev: &Evidence, count: &dyn Fn(&str) -> u64) -> Summary {
    gp::compute(set, ev, Phase::Profiling, count)
        .expect("known set")
        .summary
}

fn scalar(s: &Summary, tag: &str) -> f64 {
    s.get(tag)
        .and_then(|m| m.scalar())
        .unwrap_or_else(|| panic!("{tag} missing"))
}

fn stat(s: &Summary, tag: &str, name: &str) -> Option<f64> {
    s.get(tag)
        .and_then(|m| m.stats())
        .unwrap_or_else(|| panic!("{tag} missing"))
        .get(name)
}

#[track_caller]
fn close(a: Option<f64>, b: f64) {
    let a = a.expect("value missing");
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        "got {a}, expected {b}"
    );
}

#[test]
fn set_0_0_13() {
    let s = summary(gp::SET_0_0_13, &sample(), &words);
    assert_eq!(s.definitions, "genai-perf-0.0.13");
    let tags: Vec<&str> = s.metrics.iter().map(|m| m.tag.as_str()).collect();
    assert_eq!(
        tags,
        [
            "request_throughput",
            "request_latency",
            "request_count",
            "time_to_first_token",
            "time_to_second_token",
            "inter_token_latency",
            "output_token_throughput",
            "output_token_throughput_per_user",
            "output_sequence_length",
            "input_sequence_length",
        ]
    );
    // Duration: kept requests 1 and 2, earliest start 0, latest kept response 40 ms: 0.04 s.
    // Numerator: 3 non-error records (the skipped one counts): 3 / 0.04 = 75.
    close(Some(scalar(&s, "request_throughput")), 75.0);
    assert_eq!(scalar(&s, "request_count"), 2.0);
    // OSL 5 + 2 = 7 tokens / 0.04 s.
    close(Some(scalar(&s, "output_token_throughput")), 175.0);
    // Latency [40, 25] ms: avg 32.5, p25 = 25 + 0.25·15 = 28.75, std 7.5.
    close(stat(&s, "request_latency", "avg"), 32.5);
    close(stat(&s, "request_latency", "p25"), 28.75);
    close(stat(&s, "request_latency", "p1"), 25.15);
    close(stat(&s, "request_latency", "std"), 7.5);
    assert_eq!(
        s.get("request_latency").map(|m| m.unit.as_str()),
        Some("ms")
    );
    // TTFT [20, 25] ms; TTST only request 1: 25 − 20 = 5 ms.
    close(stat(&s, "time_to_first_token", "avg"), 22.5);
    close(stat(&s, "time_to_second_token", "max"), 5.0);
    // ITL: request 1 only (request 2 has one response): (40 − 20) / (5 − 1) = 5 ms.
    assert_eq!(
        s.get("inter_token_latency")
            .and_then(|m| m.stats())
            .map(|x| x.count),
        Some(1)
    );
    close(stat(&s, "inter_token_latency", "avg"), 5.0);
    // 1 / (5e6 ns / 1e9) = 200 tokens/sec/user.
    close(stat(&s, "output_token_throughput_per_user", "avg"), 200.0);
    close(stat(&s, "output_sequence_length", "avg"), 3.5);
    close(stat(&s, "input_sequence_length", "avg"), 4.0);
}

#[test]
fn set_0_0_10_keeps_one_response_itl_and_per_request_throughput() {
    let s = summary(gp::SET_0_0_10, &sample(), &words);
    // ITL: request 2 (one response, OSL 2 > 1) gets round(0 / 1) = 0: [5, 0] ms → avg 2.5.
    close(stat(&s, "inter_token_latency", "avg"), 2.5);
    close(stat(&s, "inter_token_latency", "min"), 0.0);
    // OSL / latency_s: 5 / 0.04 = 125, 2 / 0.025 = 80 → avg 102.5.
    close(
        stat(&s, "output_token_throughput_per_request", "avg"),
        102.5,
    );
    assert_eq!(
        s.get("output_token_throughput_per_request")
            .map(|m| m.unit.as_str()),
        Some("tokens/sec")
    );
    assert!(s.get("output_token_throughput_per_user").is_none());
    // p1, p5, p10 only from 0.0.15 (set 0.0.13).
    assert_eq!(stat(&s, "request_latency", "p1"), None);
    assert_eq!(scalar(&s, "request_count"), 2.0);
    close(stat(&s, "time_to_second_token", "avg"), 5.0);
}

#[test]
fn set_0_0_4_has_no_ttst_or_request_count() {
    let s = summary(gp::SET_0_0_4, &sample(), &words);
    assert!(s.get("time_to_second_token").is_none());
    assert!(s.get("request_count").is_none());
    close(Some(scalar(&s, "request_throughput")), 75.0);
    close(stat(&s, "inter_token_latency", "avg"), 2.5);
}

#[test]
fn set_0_0_1_pools_chunk_gaps() {
    // One token per character; GenAI-Perf's "!" prefix is dropped again: "!a" → 2 − 1 = 1.
    let s = summary(gp::SET_0_0_1, &sample(), &chars);
    // Request 1 chunks: "a" 1, " b c" 4, " d e" 4 → num_output_token 9. Gaps: 25 − 20 = 5 ms
    // over 4 tokens = 1.25 ms; 40 − 25 = 15 ms over 4 = 3.75 ms. Request 2: one chunk, no gap.
    let itl = s
        .get("inter_token_latency")
        .and_then(|m| m.stats())
        .expect("itl");
    assert_eq!(itl.count, 2);
    close(itl.avg, 2.5);
    close(itl.min, 1.25);
    close(itl.max, 3.75);
    // num_output_token [9, 4 (" x y")]; 13 tokens / 0.04 s = 325.
    close(stat(&s, "num_output_token", "avg"), 6.5);
    close(stat(&s, "num_input_token", "avg"), 4.0);
    close(Some(scalar(&s, "output_token_throughput")), 325.0);
    assert!(s.get("output_sequence_length").is_none());
    assert!(s.get("time_to_second_token").is_none());
}

#[test]
fn itl_is_rounded_half_to_even_in_ns() {
    // Responses at 10 and 13 ns, OSL 3: 3 / 2 = 1.5 → 2. At 10 and 15 ns: 5 / 2 = 2.5 → 2.
    let ev = evidence(vec![
        record(0, 0, 1, &[(10, &[Some(" a b")]), (13, &[Some(" c")])]),
        record(1, 0, 1, &[(10, &[Some(" a b")]), (15, &[Some(" c")])]),
    ]);
    let s = summary(gp::SET_0_0_13, &ev, &words);
    close(stat(&s, "inter_token_latency", "min"), 2e-6);
    close(stat(&s, "inter_token_latency", "max"), 2e-6);
}

#[test]
fn itl_that_sums_to_zero_is_dropped() {
    // One response each: ITL 0 under 0.0.10 for both → the metric is left out.
    let ev = evidence(vec![record(0, 0, 1, &[(10 * MS, &[Some(" a b")])])]);
    let s = summary(gp::SET_0_0_10, &ev, &words);
    assert!(s.get("inter_token_latency").is_none());
    assert!(s.get("request_latency").is_some());
}

#[test]
fn std_is_population_over_request_order() {
    // Latencies [1, 2, 3, 4] ms: mean 2.5, population std √1.25.
    let ev = evidence(
        (1..=4)
            .map(|i| record(i, 0, 1, &[(i * MS, &[Some("a")])]))
            .collect(),
    );
    let s = summary(gp::SET_0_0_13, &ev, &words);
    close(stat(&s, "request_latency", "std"), 1.25f64.sqrt());
    close(stat(&s, "request_latency", "p75"), 3.25);
}

#[test]
fn goodput_pairs_lists_by_position() {
    // A: start 0, one response at 10 ms, OSL 2: TTFT 10 ms, no ITL (one response).
    // B: start 0, responses at 50 and 60 ms, OSL 2: TTFT 50 ms, ITL 10 ms.
    // SLOs TTFT ≤ 20 ms, ITL ≤ 15 ms. Lists TTFT [10, 50], ITL [10] → zip [(10, 10)]: 1 good,
    // although B fails TTFT and A has no ITL. Duration 60 ms → 1 / 0.06.
    let ev = evidence(vec![
        record(0, 0, 1, &[(10 * MS, &[Some(" a b")])]),
        record(
            1,
            0,
            1,
            &[(50 * MS, &[Some(" a")]), (60 * MS, &[Some(" b")])],
        ),
    ]);
    let slos = [
        GoodputSlo {
            metric: "time_to_first_token".into(),
            value: 20.0,
        },
        GoodputSlo {
            metric: "inter_token_latency".into(),
            value: 15.0,
        },
    ];
    let c = gp::compute_with_goodput(gp::SET_0_0_13, &ev, Phase::Profiling, &words, &slos)
        .expect("set");
    close(Some(scalar(&c.summary, "request_goodput")), 1.0 / 0.06);
    assert_eq!(c.summary.metrics[2].tag, "request_goodput");
    // An unknown key makes GenAI-Perf report -1.
    let bad = [GoodputSlo {
        metric: "nope".into(),
        value: 1.0,
    }];
    let c =
        gp::compute_with_goodput(gp::SET_0_0_13, &ev, Phase::Profiling, &words, &bad).expect("set");
    assert_eq!(scalar(&c.summary, "request_goodput"), -1.0);
}

#[test]
fn a_non_streamed_body_is_one_response() {
    let mut r = record(0, 0, 2, &[(7 * MS, &[Some(" a b c")])]);
    r.events[0].kind = EventKindOpt(EventKind::Body);
    let s = summary(gp::SET_0_0_13, &evidence(vec![r]), &words);
    // TTFT = latency = 7 ms; no TTST, ITL or TPS/user.
    close(stat(&s, "time_to_first_token", "avg"), 7.0);
    close(stat(&s, "request_latency", "avg"), 7.0);
    assert!(s.get("time_to_second_token").is_none());
    assert!(s.get("inter_token_latency").is_none());
    assert!(s.get("output_token_throughput_per_user").is_none());
}

#[test]
fn unknown_set_lists_the_known_ones() {
    let err = gp::compute("genai-perf-9", &sample(), Phase::Profiling, &words).unwrap_err();
    assert!(err.to_string().contains("genai-perf-0.0.13"), "{err}");
}
