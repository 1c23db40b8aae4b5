//! Checks against real AIPerf 0.13.0 output (copied from the shared fixtures S1 and S6).
//!
//! 1. `stats()` over the per-record values in `profile_export.jsonl` reproduces the summary
//!    statistics of `profile_export_aiperf.json` (numpy's output) to 1e-9 relative.
//! 2. Records rebuilt from `profile_export.jsonl` (timestamps back in ns) and run through
//!    `compute("aiperf-0.13")` reproduce every summary value we compute, bit for bit.

use inferbench_core::evidence::{EvidenceHeader, PhaseWindow};
use inferbench_core::summary::MetricValue;
use inferbench_core::{ErrorKind, Event, Evidence, Phase, Record, RecordError, Stats, TokenCounts};
use inferbench_metrics::aiperf::METRICS;
use inferbench_metrics::stats::{stats, stats_std_in_order};
use inferbench_metrics::{compute, stats::scaled};
use serde_json::Value;

struct Fixture {
    records: Vec<Value>,
    summary: serde_json::Map<String, Value>,
    /// Profiling window (wall-clock ns) from the run's `logs/aiperf.log`.
    window: (u64, u64),
}

fn load(name: &str, window: (u64, u64)) -> Fixture {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");
    let jsonl = std::fs::read_to_string(format!("{dir}{name}_profile_export.jsonl")).unwrap();
    let summary =
        std::fs::read_to_string(format!("{dir}{name}_profile_export_aiperf.json")).unwrap();
    Fixture {
        records: jsonl
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        summary: serde_json::from_str::<Value>(&summary)
            .unwrap()
            .as_object()
            .unwrap()
            .clone(),
        window,
    }
}

fn s1() -> Fixture {
    load("s1", (1795978615923685456, 1795978617457700776))
}

fn s6() -> Fixture {
    load("s6", (1795978684962456384, 1795978686777644046))
}

/// The values of one per-record metric, lists flattened, in record order.
fn column(f: &Fixture, tag: &str) -> Vec<f64> {
    let mut out = Vec::new();
    for r in &f.records {
        match r["metrics"].get(tag).map(|m| &m["value"]) {
            Some(Value::Array(a)) => out.extend(a.iter().map(|x| x.as_f64().unwrap())),
            Some(v) => out.push(v.as_f64().unwrap()),
            None => {}
        }
    }
    out
}

fn assert_stats_match(tag: &str, ours: &Stats, theirs: &Value, rel: f64) {
    // Time-weighted (sweep-line) metrics have no count in AIPerf's export; ours is 0.
    assert_eq!(
        ours.count,
        theirs.get("count").and_then(Value::as_u64).unwrap_or(0),
        "{tag} count"
    );
    for (name, v) in ours.named() {
        let t = theirs.get(name).and_then(Value::as_f64);
        match (v, t) {
            (Some(a), Some(b)) => {
                let ok = if rel == 0.0 {
                    a == b
                } else {
                    (a - b).abs() <= rel * b.abs().max(1e-300)
                };
                assert!(ok, "{tag}.{name}: ours {a:e}, AIPerf {b:e}");
            }
            (None, None) => {}
            _ => panic!("{tag}.{name}: ours {v:?}, AIPerf {t:?}"),
        }
    }
}

#[test]
fn stats_over_exported_values_match_numpy() {
    for f in [s1(), s6()] {
        for tag in [
            "time_to_first_token",
            "time_to_second_token",
            "request_latency",
            "inter_token_latency",
            "inter_chunk_latency",
            "decode_duration",
            "output_token_throughput_per_user",
            "e2e_output_token_throughput",
            "prefill_throughput_per_user",
            "usage_prompt_tokens",
            "usage_prompt_tokens_diff_pct",
        ] {
            let values = column(&f, tag);
            assert!(!values.is_empty(), "{tag}");
            assert_stats_match(tag, &stats(&values), &f.summary[tag], 1e-9);
        }
    }
}

#[test]
fn stats_in_ns_reproduce_numpy_bit_for_bit() {
    // AIPerf computes in ns and multiplies each statistic by 1e-6; the exported ms values
    // are ns × 1e-6, so ns = round(ms / 1e-6) exactly for integer-ns metrics.
    let f = s1();
    for tag in [
        "time_to_first_token",
        "request_latency",
        "inter_chunk_latency",
        "time_to_second_token",
    ] {
        let ns: Vec<f64> = column(&f, tag)
            .iter()
            .map(|ms| (ms / 1e-6).round())
            .collect();
        assert_stats_match(tag, &scaled(stats(&ns), 1e-6), &f.summary[tag], 0.0);
    }
    // Derived latencies: per record (f64(start) − f64(credit)) / 1e6, std in record order.
    let cts: Vec<f64> = f
        .records
        .iter()
        .map(|r| {
            let m = &r["metadata"];
            let start = m["request_start_ns"].as_u64().unwrap() as f64;
            let credit = m["credit_issued_ns"].as_u64().unwrap() as f64;
            (start - credit).max(0.0) / 1e6
        })
        .collect();
    assert_stats_match(
        "credit_to_start_latency",
        &stats_std_in_order(&cts),
        &f.summary["credit_to_start_latency"],
        0.0,
    );
}

fn ns(ms: &Value) -> u64 {
    (ms.as_f64().unwrap() / 1e-6).round() as u64
}

/// Rebuild evidence from the exported records: content events at start + TTFT, then at each
/// inter-chunk gap; a usage-only event at the end; client token counts from the export.
fn rebuild(f: &Fixture) -> Evidence {
    let anchor = f.window.0;
    let mut records = Vec::new();
    for (i, r) in f.records.iter().enumerate() {
        let md = &r["metadata"];
        let rel = |k: &str| md[k].as_u64().unwrap() - anchor;
        let m = &r["metrics"];
        let int = |k: &str| m.get(k).map(|v| v["value"].as_u64().unwrap());
        let mut rec = Record {
            id: i as u64,
            request_id: md["x_request_id"].as_str().unwrap().into(),
            streaming: true,
            planned_ns: rel("credit_issued_ns"),
            start_ns: rel("request_start_ns"),
            end_ns: rel("request_end_ns"),
            requested_output_tokens: Some(16),
            ..Default::default()
        };
        if let Some(e) = r.get("error") {
            rec.error = Some(RecordError {
                kind: if e.get("code").is_some() {
                    ErrorKind::Http
                } else {
                    ErrorKind::Transport
                },
                code: e.get("code").and_then(Value::as_u64).map(|c| c as u16),
                error_type: e["type"].as_str().unwrap().into(),
                message: e["message"].as_str().unwrap().into(),
            });
            rec.tokens.input = int("error_isl");
        } else {
            let mut t = rec.start_ns + ns(&m["time_to_first_token"]["value"]);
            let mut times = vec![t];
            for gap in m["inter_chunk_latency"]["value"].as_array().unwrap() {
                t += ns(gap);
                times.push(t);
            }
            rec.events = times
                .iter()
                .map(|&t_ns| Event {
                    t_ns,
                    content: Some(" the".into()),
                    ..Default::default()
                })
                .collect();
            rec.events.push(Event {
                t_ns: t,
                usage: Some(serde_json::json!({
                    "prompt_tokens": int("usage_prompt_tokens"),
                    "completion_tokens": int("usage_completion_tokens"),
                    "total_tokens": int("usage_total_tokens"),
                })),
                ..Default::default()
            });
            rec.tokens = TokenCounts {
                input: int("input_sequence_length"),
                output: int("output_token_count"),
                reasoning: None,
            };
        }
        records.push(rec);
    }
    let n = records.len() as u64;
    Evidence {
        header: EvidenceHeader {
            schema_version: 1,
            tool: "inferbench".into(),
            tool_version: "test".into(),
            anchor_unix_ns: anchor,
            benchmark_id: "fixture".into(),
            endpoint_type: "chat".into(),
            streaming: true,
            tokenizer: "fixture".into(),
            use_server_token_count: false,
            per_chunk_usage: false,
        },
        records,
        phases: vec![PhaseWindow {
            phase: Phase::Profiling,
            start_ns: 0,
            sent_end_ns: 0,
            requests_end_ns: f.window.1 - anchor,
            scheduled: n,
            completed: n,
            errors: 0,
            cancelled: false,
        }],
        end: None,
    }
}

/// AIPerf metrics this set does not compute yet (see docs/metrics.md).
fn not_yet(tag: &str) -> bool {
    tag.starts_with("http_req_")
}

fn check_compute_matches(f: &Fixture, expected_metrics: usize) {
    let ev = rebuild(f);
    let c = compute("aiperf-0.13", &ev, Phase::Profiling).unwrap();
    // S1: 65 AIPerf metrics − 14 not yet computed (http_req_*) = 51; S6 adds 8 error
    // metrics (error count, error ISL and total, context overflow, 4 × adj_*).
    assert_eq!(c.summary.metrics.len(), expected_metrics);
    for m in &c.summary.metrics {
        let theirs = f
            .summary
            .get(&m.tag)
            .unwrap_or_else(|| panic!("{} not in the AIPerf summary", m.tag));
        assert_eq!(theirs["unit"].as_str().unwrap(), m.unit, "{} unit", m.tag);
        match &m.value {
            MetricValue::Scalar { value } => {
                assert_eq!(*value, theirs["avg"].as_f64().unwrap(), "{}", m.tag)
            }
            MetricValue::Distribution { stats } => assert_stats_match(&m.tag, stats, theirs, 0.0),
        }
    }
    // Every AIPerf metric is either computed or listed as not yet computed.
    for (tag, v) in &f.summary {
        if v.get("unit").is_none() || not_yet(tag) {
            continue;
        }
        assert!(c.summary.get(tag).is_some(), "{tag} missing");
    }
}

#[test]
fn compute_reproduces_s1_summary_bit_for_bit() {
    check_compute_matches(&s1(), 51);
}

#[test]
fn compute_reproduces_s6_summary_with_errors_bit_for_bit() {
    let f = s6();
    check_compute_matches(&f, 59);
    let c = compute("aiperf-0.13", &rebuild(&f), Phase::Profiling).unwrap();
    let groups: Vec<(Option<u16>, u64)> = c
        .summary
        .error_summary
        .iter()
        .map(|g| (g.code, g.count))
        .collect();
    assert_eq!(groups, vec![(Some(500), 8), (None, 4)]);
}

#[test]
fn summary_order_follows_aiperf_fixed_head() {
    // AIPerf writes these first, in this order (GenAI-Perf's); the rest varies per run.
    let head: Vec<&str> = METRICS.iter().take(21).map(|m| m.0).collect();
    for f in [s1(), s6()] {
        let theirs: Vec<&str> = f
            .summary
            .keys()
            .map(String::as_str)
            .filter(|k| head.contains(k))
            .collect();
        let ours: Vec<&str> = head
            .iter()
            .copied()
            .filter(|k| f.summary.contains_key(*k))
            .collect();
        assert_eq!(ours, theirs);
    }
}
