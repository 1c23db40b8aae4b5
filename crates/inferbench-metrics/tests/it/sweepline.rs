//! Sweep-line metrics (`inferbench_metrics::sweepline`): small cases computed by hand, and
//! the real AIPerf 0.13.0 run S1 (copied under `tests/data/sweepline/`) rebuilt from its
//! raw export and compared with its `profile_export_aiperf.json`.

use inferbench_core::summary::{MetricResult, Stats};
use inferbench_metrics::sweepline::{SweepRecord, sweepline_metrics};
use serde_json::Value;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sweepline/");

const TAGS: [&str; 14] = [
    "effective_concurrency",
    "effective_decode_throughput",
    "effective_prefill_throughput",
    "effective_decode_concurrency",
    "effective_prefill_concurrency",
    "effective_total_throughput",
    "effective_decode_throughput_per_user",
    "effective_prefill_throughput_per_user",
    "tokens_in_flight",
    "active_decode_throughput",
    "active_prefill_throughput",
    "active_decode_throughput_per_user",
    "active_prefill_throughput_per_user",
    "active_total_throughput",
];

const KEYS: [&str; 8] = ["avg", "p50", "p90", "p95", "p99", "min", "max", "std"];

fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{DATA}{name}")).unwrap()
}

fn stats<'a>(m: &'a [MetricResult], tag: &str) -> &'a Stats {
    m.iter()
        .find(|r| r.tag == tag)
        .unwrap_or_else(|| panic!("{tag} missing"))
        .stats()
        .unwrap()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    a == b || (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// Records from S1's raw export: instants in wall clock (metadata `request_start_ns` plus
/// perf-clock offsets, which are exact ns), token counts from the per-record export.
fn s1_records() -> Vec<SweepRecord> {
    let per_record: Vec<Value> = read("s1_profile_export.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id = |id: &str| {
        per_record
            .iter()
            .find(|r| r["metadata"]["x_request_id"] == id)
            .unwrap()
    };
    let ms_to_ns = |v: &Value| (v.as_f64().unwrap() * 1e6).round() as u64;
    read("s1_profile_export_raw.jsonl")
        .lines()
        .map(|l| {
            let raw: Value = serde_json::from_str(l).unwrap();
            let md = &raw["metadata"];
            let start_perf = raw["start_perf_ns"].as_u64().unwrap();
            // Content responses: a data packet whose delta carries text (not usage-only, not
            // `[DONE]`).
            let content: Vec<u64> = raw["responses"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| {
                    let data = r["packets"][0]["value"].as_str().unwrap();
                    let Ok(v) = serde_json::from_str::<Value>(data) else {
                        return false;
                    };
                    let d = &v["choices"][0]["delta"];
                    ["content", "reasoning_content"]
                        .iter()
                        .any(|k| d[k].as_str().is_some_and(|s| !s.is_empty()))
                })
                .map(|r| r["perf_ns"].as_u64().unwrap())
                .collect();
            let ttft = content[0] - start_perf;
            let icl: Vec<u64> = content.windows(2).map(|w| w[1] - w[0]).collect();
            let s = md["request_start_ns"].as_u64().unwrap();
            let m = &by_id(md["x_request_id"].as_str().unwrap())["metrics"];
            // The rebuilt per-record values agree with AIPerf's own (µs-rounded ms, 6 places).
            assert_eq!(ttft, ms_to_ns(&m["time_to_first_token"]["value"]));
            let want_icl: Vec<u64> = m["inter_chunk_latency"]["value"]
                .as_array()
                .unwrap()
                .iter()
                .map(ms_to_ns)
                .collect();
            assert_eq!(icl, want_icl);
            SweepRecord {
                s,
                g: Some(s + ttft),
                e: md["request_end_ns"].as_u64().unwrap(),
                i: m["input_sequence_length"]["value"].as_u64(),
                o: m["output_sequence_length"]["value"].as_u64(),
                icl,
            }
        })
        .collect()
}

/// Records from a run's per-record export alone: TTFT and ICL are ms with 6 decimals there,
/// so ×1e6 rounded gives back AIPerf's integer ns (checked against the raw export on S1).
/// Error records have no TTFT, ISL or OSL.
fn export_records(run: &str) -> Vec<SweepRecord> {
    let ms_to_ns = |v: &Value| (v.as_f64().unwrap() * 1e6).round() as u64;
    read(&format!("{run}_profile_export.jsonl"))
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            let (md, m) = (&r["metadata"], &r["metrics"]);
            let s = md["request_start_ns"].as_u64().unwrap();
            let icl = m["inter_chunk_latency"]["value"]
                .as_array()
                .map(|v| v.iter().map(ms_to_ns).collect())
                .unwrap_or_default();
            SweepRecord {
                s,
                g: m.get("time_to_first_token")
                    .map(|t| s + ms_to_ns(&t["value"])),
                e: md["request_end_ns"].as_u64().unwrap(),
                i: m["input_sequence_length"]["value"].as_u64(),
                o: m["output_sequence_length"]["value"].as_u64(),
                icl,
            }
        })
        .collect()
}

/// (`start_ns`, `requests_end_ns`) of the profiling phase, from the run's log.
fn window(run: &str) -> (u64, u64) {
    let log = read(&format!("{run}_aiperf.log"));
    let line = log
        .lines()
        .find(|l| l.contains("Phase complete: PhaseRecordsStats("))
        .unwrap();
    let field = |name: &str| -> u64 {
        let at = line.find(&format!(" {name}=")).unwrap() + name.len() + 2;
        line[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (field("start_ns"), field("requests_end_ns"))
}

/// Every one of the 14 metrics, in order, with AIPerf's unit and all eight statistics equal
/// bit for bit to the run's `profile_export_aiperf.json`.
fn assert_matches(run: &str, records: &[SweepRecord]) {
    // ICL-aware whenever any record has ICL values (AIPerf's default list backend).
    let icl_aware = records.iter().any(|r| !r.icl.is_empty());
    let got = sweepline_metrics(records, window(run), icl_aware);
    let tags: Vec<&str> = got.iter().map(|m| m.tag.as_str()).collect();
    assert_eq!(tags, TAGS, "{run}");
    let want: Value =
        serde_json::from_str(&read(&format!("{run}_profile_export_aiperf.json"))).unwrap();
    let mut off = Vec::new();
    for tag in TAGS {
        let (g, w) = (stats(&got, tag), &want[tag]);
        let m = got.iter().find(|m| m.tag == tag).unwrap();
        assert_eq!(m.unit, w["unit"].as_str().unwrap(), "{run} {tag}");
        assert_eq!(g.count, 0);
        for key in KEYS {
            let (a, b) = (g.get(key).unwrap(), w[key].as_f64().unwrap());
            if a != b {
                off.push(format!("{tag}.{key}: {a} vs {b}"));
            }
        }
    }
    assert!(off.is_empty(), "{run} not bit for bit: {off:#?}");
}

#[test]
fn s1_from_raw_export_matches_aiperf() {
    let records = s1_records();
    assert_eq!(records.len(), 60);
    assert_eq!(records, export_records("s1"));
    assert_matches("s1", &records);
}

#[test]
fn s2_to_s6_match_aiperf() {
    // S2 reasoning, S3 3 tokens per chunk, S4 completions, S5 non-streaming (no TTFT: 13
    // all-zero metrics, request-level), S6 with 12 error records (concurrency only).
    for run in ["s2", "s3", "s4", "s5", "s6"] {
        assert_matches(run, &export_records(run));
    }
}

#[test]
fn s1_request_level_is_close_to_icl_where_it_should_be() {
    // Request-level decode changes DT, DU and K (and their active_*) but nothing else.
    let records = s1_records();
    let window = window("s1");
    let icl = sweepline_metrics(&records, window, true);
    let req = sweepline_metrics(&records, window, false);
    for tag in [
        "effective_concurrency",
        "effective_prefill_throughput",
        "effective_decode_concurrency",
        "effective_prefill_concurrency",
        "effective_total_throughput",
        "effective_prefill_throughput_per_user",
        "active_prefill_throughput",
        "active_prefill_throughput_per_user",
        "active_total_throughput",
    ] {
        assert_eq!(stats(&icl, tag), stats(&req, tag), "{tag}");
    }
    assert_ne!(
        stats(&icl, "effective_decode_throughput"),
        stats(&req, "effective_decode_throughput")
    );
}

#[test]
fn headers_and_units() {
    let r = [SweepRecord {
        s: 0,
        g: Some(5),
        e: 10,
        i: Some(1),
        o: Some(2),
        icl: vec![],
    }];
    let m = sweepline_metrics(&r, (0, 10), true);
    let h: Vec<(&str, &str)> = m
        .iter()
        .map(|m| (m.header.as_str(), m.unit.as_str()))
        .collect();
    assert_eq!(h[0], ("Effective Concurrency", "requests"));
    assert_eq!(h[1], ("Effective Decode Throughput", "tokens/sec"));
    assert_eq!(
        h[6],
        ("Effective Decode Throughput Per User", "tokens/sec/user")
    );
    assert_eq!(h[8], ("Tokens In Flight", "tokens"));
    assert_eq!(h[13], ("Active Total Throughput", "tokens/sec"));
}

#[test]
fn no_records_no_metrics() {
    assert!(sweepline_metrics(&[], (0, 10), true).is_empty());
}

fn rec(s: u64, g: Option<u64>, e: u64, i: u64, o: u64, icl: Vec<u64>) -> SweepRecord {
    SweepRecord {
        s,
        g,
        e,
        i: Some(i),
        o: Some(o),
        icl,
    }
}

#[test]
fn two_overlapping_requests_by_hand() {
    // A: start 0, first token 2, end 6; B: start 4, first token 5, end 10. Window [0, 10].
    let r = [
        rec(0, Some(2), 6, 10, 5, vec![]),
        rec(4, Some(5), 10, 4, 6, vec![]),
    ];
    let m = sweepline_metrics(&r, (0, 10), false);
    // Concurrency: 1 on [0,4), 2 on [4,6), 1 on [6,10): avg = (4 + 4 + 4)/10 = 1.2.
    let c = stats(&m, "effective_concurrency");
    assert_eq!(c.avg, Some(1.2));
    assert_eq!((c.min, c.max), (Some(1.0), Some(2.0)));
    // By value: 1 holds 80 % of the time, 2 the rest; 0.8 < 0.9, so p90 is already 2.
    assert_eq!((c.p50, c.p90, c.p99), (Some(1.0), Some(2.0), Some(2.0)));
    let var: f64 = (8.0 * 0.2f64.powi(2) + 2.0 * 0.8f64.powi(2)) / 10.0;
    assert!(close(c.std.unwrap(), var.sqrt(), 1e-15));
    assert_eq!(c.count, 0);
    assert!(c.sum.is_none() && c.p1.is_none() && c.p75.is_none());

    // Decode concurrency: A on [2,6), B on [5,10): 1·3 + 2·1 + 1·4 = 9 → 0.9.
    assert!(close(
        stats(&m, "effective_decode_concurrency").avg.unwrap(),
        0.9,
        1e-15
    ));
    // Prefill concurrency: [0,2) and [4,5): 3 → 0.3.
    assert!(close(
        stats(&m, "effective_prefill_concurrency").avg.unwrap(),
        0.3,
        1e-15
    ));

    // Prefill throughput: A 10/2 = 5 tok/ns on [0,2), B 4/1 on [4,5): Σ = 14 tokens → 1.4e9/s.
    let pt = stats(&m, "effective_prefill_throughput");
    assert!(close(pt.avg.unwrap(), 1.4e9, 1e-15));
    assert_eq!(pt.max, Some(5e9));
    // Active prefill: only over the 3 ns of prefill: 14/3 tokens/ns.
    let apt = stats(&m, "active_prefill_throughput");
    assert!(close(apt.avg.unwrap(), 14.0 / 3.0 * 1e9, 1e-15));
    assert_eq!(apt.min, Some(4e9));

    // Request-level decode: A (5−1)/4 = 1 on [2,6), B (6−1)/5 = 1 on [5,10): 9 tokens.
    let dt = stats(&m, "effective_decode_throughput");
    assert!(close(dt.avg.unwrap(), 0.9e9, 1e-15));
    assert_eq!(dt.max, Some(2e9));
    // Per user: 1 whenever someone decodes ([2,10): 8 of 10 units).
    let du = stats(&m, "effective_decode_throughput_per_user");
    assert!(close(du.avg.unwrap(), 0.8e9, 1e-15));
    assert_eq!(
        stats(&m, "active_decode_throughput_per_user").avg,
        Some(1e9)
    );

    // Total: prefill 14 + decode 9 tokens over 10 → 2.3 tokens/ns; active over C's 10 units.
    let tt = stats(&m, "effective_total_throughput");
    assert!(close(tt.avg.unwrap(), 2.3e9, 1e-15));
    assert!(close(
        stats(&m, "active_total_throughput").avg.unwrap(),
        2.3e9,
        1e-15
    ));

    // Tokens in flight: A holds 10 from 0, +5 at 2, out at 6; B 4 from 4, +6 at 5, out at 10.
    // [0,2) 10, [2,4) 15, [4,5) 19, [5,6) 25, [6,10) 10 → (20+30+19+25+40)/10 = 13.4.
    let k = stats(&m, "tokens_in_flight");
    assert!(close(k.avg.unwrap(), 13.4, 1e-15));
    assert_eq!((k.min, k.max), (Some(10.0), Some(25.0)));
    assert_eq!(k.p50, Some(10.0));
}

#[test]
fn window_clips_and_counts_idle_time() {
    // One request [2, 4) in window [0, 10]: concurrency 1 for 20 % of the window.
    let r = [rec(2, None, 4, 1, 1, vec![])];
    let m = sweepline_metrics(&r, (0, 10), true);
    let c = stats(&m, "effective_concurrency");
    assert!(close(c.avg.unwrap(), 0.2, 1e-15));
    assert_eq!(
        (c.min, c.p50, c.p90, c.max),
        (Some(0.0), Some(0.0), Some(1.0), Some(1.0))
    );
    // No first token: every other metric is emitted, all zero.
    assert_eq!(m.len(), 14);
    for r in &m[1..] {
        let s = r.stats().unwrap();
        for key in KEYS {
            assert_eq!(s.get(key), Some(0.0), "{} {key}", r.tag);
        }
    }
    // A window cutting the request: [3, 10] sees 1 for 1 of 7 units.
    let m = sweepline_metrics(&r, (3, 10), true);
    assert!(close(
        stats(&m, "effective_concurrency").avg.unwrap(),
        1.0 / 7.0,
        1e-15
    ));
    // An empty window gives zeros.
    let m = sweepline_metrics(&r, (5, 5), true);
    assert_eq!(stats(&m, "effective_concurrency").avg, Some(0.0));
}

#[test]
fn icl_aware_decode_and_tokens_by_hand() {
    // G = 10, gaps 4, 0, 6 (chunks at 14, 14, 20), O = 5, E = 20. Z = 2 positive gaps:
    // each carries (5−1)/2 = 2 tokens: rate 2/4 on [10,14), 2/6 on [14,20).
    let r = [rec(0, Some(10), 20, 8, 5, vec![4, 0, 6])];
    let m = sweepline_metrics(&r, (0, 20), true);
    let dt = stats(&m, "effective_decode_throughput");
    assert!(close(dt.avg.unwrap(), 4.0 / 20.0 * 1e9, 1e-15));
    assert!(close(dt.max.unwrap(), 0.5e9, 1e-15));
    // Active decode: over D's 10 units: 4/10.
    assert!(close(
        stats(&m, "active_decode_throughput").avg.unwrap(),
        0.4e9,
        1e-15
    ));
    // Tokens in flight: K = 3 chunks of 4/3 tokens; the last (at 20 = E) moves just below E.
    // [0,10) 8, [10,14) 9, [14,20) 9 + 8/3, tiny piece before 20 at 8 + 5.
    let k = stats(&m, "tokens_in_flight");
    let want = (80.0 + 36.0 + 6.0 * (9.0 + 8.0 / 3.0)) / 20.0;
    assert!(close(k.avg.unwrap(), want, 1e-12));
    assert_eq!(k.min, Some(8.0));
    // Total throughput stays request-level: prefill 8 + decode 4 tokens over 20.
    assert!(close(
        stats(&m, "effective_total_throughput").avg.unwrap(),
        0.6e9,
        1e-15
    ));
}

#[test]
fn error_records_only_count_in_concurrency() {
    let r = [
        rec(0, Some(1), 4, 2, 3, vec![]),
        SweepRecord {
            s: 0,
            g: None,
            e: 4,
            i: None,
            o: None,
            icl: vec![],
        },
    ];
    let m = sweepline_metrics(&r, (0, 4), false);
    assert_eq!(stats(&m, "effective_concurrency").avg, Some(2.0));
    assert_eq!(stats(&m, "effective_decode_concurrency").avg, Some(0.75));
}
