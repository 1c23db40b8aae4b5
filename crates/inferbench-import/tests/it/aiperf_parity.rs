//! Importing the real AIPerf 0.13.0 runs S1–S6 (copied from the shared fixtures into
//! `tests/data/aiperf/`) and scoring them with `aiperf-0.13` reproduces every value of their
//! `profile_export_aiperf.json` bit for bit: from the raw timeline, and from the records-level
//! export alone (the same directory without `profile_export_raw.jsonl`). The HTTP trace
//! metrics, which no set recomputes, are re-aggregated from the kept per-record values.

use std::path::{Path, PathBuf};

use inferbench_core::summary::{MetricValue, RecordMetricValue};
use inferbench_core::{EventKind, Phase, Stats};
use inferbench_import::aiperf::{AiperfImport, import_full, looks_like};
use inferbench_import::{SourceTool, detect};
use inferbench_metrics::compute;
use inferbench_metrics::stats::stats;
use serde_json::Value;

const SCENARIOS: [&str; 6] = ["s1", "s2", "s3", "s4", "s5", "s6"];

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/aiperf")
        .join(name)
}

/// Word count: the parity path never calls it (AIPerf's own counts are in the export).
fn words(s: &str) -> u64 {
    s.split_whitespace().count() as u64
}

/// A copy of scenario `name` without its raw file, as a records-level export leaves it.
fn records_level_copy(name: &str) -> PathBuf {
    let dst = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("aiperf-records-{name}"));
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(dst.join("logs")).unwrap();
    let src = data(name);
    for f in [
        "profile_export.jsonl",
        "profile_export_aiperf.json",
        "inputs.json",
        "logs/aiperf.log",
    ] {
        std::fs::copy(src.join(f), dst.join(f)).unwrap();
    }
    dst
}

fn same(tag: &str, stat: &str, ours: f64, theirs: f64) {
    assert!(
        ours == theirs,
        "{tag}.{stat}: ours {ours:e}, AIPerf {theirs:e}"
    );
}

fn assert_stats(tag: &str, ours: &Stats, theirs: &Value, exact: bool) {
    assert_eq!(
        ours.count,
        theirs.get("count").and_then(Value::as_u64).unwrap_or(0),
        "{tag}.count"
    );
    for (name, v) in ours.named() {
        let t = theirs.get(name).and_then(Value::as_f64);
        match (v, t) {
            (Some(a), Some(b)) if exact => same(tag, name, a, b),
            (Some(a), Some(b)) => assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1e-300),
                "{tag}.{name}: ours {a:e}, AIPerf {b:e}"
            ),
            (None, None) => {}
            _ => panic!("{tag}.{name}: ours {v:?}, AIPerf {t:?}"),
        }
    }
}

/// Every value we compute equals AIPerf's; every AIPerf metric is computed (the `http_req_*`
/// ones from the per-record values the import keeps).
fn check_parity(name: &str, imp: &AiperfImport) {
    let summary = imp.run.original_summary.as_ref().expect("summary kept");
    let summary = summary.as_object().unwrap();
    let c = compute("aiperf-0.13", &imp.run.evidence, Phase::Profiling).unwrap();
    let mut checked = 0;
    for m in &c.summary.metrics {
        let theirs = summary
            .get(&m.tag)
            .unwrap_or_else(|| panic!("{name}: {} not in AIPerf's summary", m.tag));
        assert_eq!(
            theirs["unit"].as_str(),
            Some(m.unit.as_str()),
            "{name} {} unit",
            m.tag
        );
        match &m.value {
            MetricValue::Scalar { value } => {
                same(&m.tag, "avg", *value, theirs["avg"].as_f64().unwrap())
            }
            MetricValue::Distribution { stats } => assert_stats(&m.tag, stats, theirs, true),
        }
        checked += 1;
    }
    let mut expected = 0;
    for (tag, v) in summary {
        if v.get("unit").is_none() {
            continue;
        }
        assert!(c.summary.get(tag).is_some(), "{name}: {tag} not computed");
        expected += 1;
    }
    // Each of AIPerf's metrics (57 in S5 to 73 in S6, the 14 http_req_* included) is
    // computed and equal.
    assert_eq!(checked, expected, "{name}");
    assert!(checked >= 57, "{name}: only {checked} metrics");
    let http = c
        .summary
        .metrics
        .iter()
        .filter(|m| m.tag.starts_with("http_req_"))
        .count();
    assert_eq!(http, 14, "{name}: http_req_* metrics");
    // The error summary: same groups, same counts, most frequent first.
    let theirs: Vec<(Option<u64>, String, u64)> = summary["error_summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let d = &g["error_details"];
            (
                d.get("code").and_then(Value::as_u64),
                d["type"].as_str().unwrap().to_string(),
                g["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let ours: Vec<(Option<u64>, String, u64)> = c
        .summary
        .error_summary
        .iter()
        .map(|g| (g.code.map(u64::from), g.error_type.clone(), g.count))
        .collect();
    assert_eq!(ours, theirs, "{name} error summary");
}

/// The kept per-record `http_req_*` values, summarized with numpy's rules, give AIPerf's
/// summary values (to 1e-9: AIPerf computes them in ns and converts after).
fn check_http_reaggregation(name: &str, imp: &AiperfImport) {
    let summary = imp.run.original_summary.as_ref().unwrap();
    let mut n = 0;
    for (tag, theirs) in summary.as_object().unwrap() {
        if !tag.starts_with("http_req_") || theirs.get("count").is_none() {
            continue;
        }
        let values: Vec<f64> = imp
            .record_metrics
            .iter()
            .filter(|r| r.phase == Phase::Profiling)
            .filter_map(|r| r.metrics.iter().find(|m| m.tag == *tag))
            .map(|m| match &m.value {
                RecordMetricValue::Int(i) => *i as f64,
                RecordMetricValue::Float(f) => *f,
                RecordMetricValue::List(_) => panic!("{tag} is not a list"),
            })
            .collect();
        // AIPerf's summary covers valid records only; error lines carry no http_req_*.
        assert_stats(tag, &stats(&values), theirs, false);
        n += 1;
    }
    assert!(n >= 10, "{name}: {n} http_req_* metrics");
}

#[test]
fn raw_timeline_reproduces_every_summary_value() {
    for name in SCENARIOS {
        let dir = data(name);
        assert!(looks_like(&dir));
        assert_eq!(detect(&dir), Some(SourceTool::Aiperf));
        let imp = import_full(&dir, &words).unwrap();
        assert_eq!(imp.run.version, "0.13.0");
        assert_eq!(imp.run.native_definitions, "aiperf-0.13");
        // AIPerf's own token counts were used: the tokenizer was never called.
        assert!(!imp.run.evidence.header.tokenizer.starts_with("import"));
        check_parity(name, &imp);
        check_http_reaggregation(name, &imp);
    }
}

#[test]
fn records_level_export_reproduces_every_summary_value() {
    for name in SCENARIOS {
        let dir = records_level_copy(name);
        let imp = import_full(&dir, &words).unwrap();
        assert!(
            imp.run.losses.iter().any(|l| l.contains("records level")),
            "{:?}",
            imp.run.losses
        );
        check_parity(name, &imp);
    }
}

#[test]
fn raw_import_keeps_the_stream_as_sent() {
    // S2: a role-only first event, 8 reasoning events, 8 content events, a usage-only chunk
    // and [DONE], each response in its own read.
    let imp = import_full(&data("s2"), &words).unwrap();
    let ev = &imp.run.evidence;
    assert!(ev.header.streaming);
    assert_eq!(ev.header.endpoint_type, "chat");
    assert_eq!(ev.records.len(), 60);
    let r = &ev.records[0];
    let kinds: Vec<EventKind> = r.events.iter().map(|e| e.kind()).collect();
    assert_eq!(kinds.len(), 19);
    assert_eq!(kinds[18], EventKind::Done);
    assert_eq!(r.events[0].content.as_deref(), Some(""));
    assert_eq!(r.events[1].reasoning.as_deref(), Some(" the"));
    assert!(r.events[17].usage.is_some());
    assert_eq!(r.text_events().count(), 16);
    assert_eq!(r.tokens.reasoning, Some(8));
    assert_eq!(r.tokens.output, Some(8));
    assert_eq!(r.requested_output_tokens, Some(16));
    assert_eq!(r.status, Some(200));
    // Times: the request's wall-clock start plus the perf-counter offset. Record 0 of S2
    // started at 1795978627717181897 (perf 3166651285578); its first response came at perf
    // 3166656722347, 5436769 ns later.
    assert_eq!(
        ev.header.anchor_unix_ns + r.start_ns,
        1_795_978_627_717_181_897
    );
    assert_eq!(r.events[0].t_ns - r.start_ns, 5_436_769);
    // S5 is not streamed: one body per request.
    let imp = import_full(&data("s5"), &words).unwrap();
    let r = &imp.run.evidence.records[0];
    assert!(!imp.run.evidence.header.streaming);
    assert_eq!(r.events.len(), 1);
    assert_eq!(r.events[0].kind(), EventKind::Body);
}

#[test]
fn errors_and_cut_streams_keep_their_kind() {
    let imp = import_full(&data("s6"), &words).unwrap();
    let recs = &imp.run.evidence.records;
    let http: Vec<_> = recs
        .iter()
        .filter(|r| r.error.as_ref().is_some_and(|e| e.code == Some(500)))
        .collect();
    assert_eq!(http.len(), 8);
    assert!(
        http.iter()
            .all(|r| r.tokens.input == Some(32) && r.events.is_empty())
    );
    let cut: Vec<_> = recs
        .iter()
        .filter(|r| {
            r.error
                .as_ref()
                .is_some_and(|e| e.error_type == "ClientPayloadError")
        })
        .collect();
    assert_eq!(cut.len(), 4);
    // A cut stream keeps what arrived before the cut, and no [DONE].
    assert!(
        cut.iter()
            .all(|r| !r.events.is_empty() && r.events.iter().all(|e| e.kind() != EventKind::Done))
    );
    assert!(imp.run.losses.iter().any(|l| l.contains("cause")));
}

#[test]
fn phase_window_comes_from_the_log_to_the_ns() {
    // S1's log: start_ns=1795978615923685456, requests_end_ns=1795978617457700776.
    let imp = import_full(&data("s1"), &words).unwrap();
    let ev = &imp.run.evidence;
    let w = ev.window(Phase::Profiling).unwrap();
    assert_eq!(
        ev.header.anchor_unix_ns + w.start_ns,
        1_795_978_615_923_685_456
    );
    assert_eq!(
        ev.header.anchor_unix_ns + w.requests_end_ns,
        1_795_978_617_457_700_776
    );
    assert_eq!(w.scheduled, 60);
}

#[test]
fn without_the_log_the_summary_times_give_the_window_to_the_microsecond() {
    let dir = records_level_copy("s1");
    std::fs::remove_dir_all(dir.join("logs")).unwrap();
    let imp = import_full(&dir, &words).unwrap();
    assert!(
        imp.run
            .losses
            .iter()
            .any(|l| l.contains("start_time/end_time"))
    );
    let ev = &imp.run.evidence;
    let w = ev.window(Phase::Profiling).unwrap();
    // start_time 2026-11-29T18:56:55.923686 (the ns value rounded to the µs).
    assert_eq!(
        ev.header.anchor_unix_ns + w.start_ns,
        1_795_978_615_923_686_000
    );
    let c = compute("aiperf-0.13", ev, Phase::Profiling).unwrap();
    let ours = c
        .summary
        .get("request_throughput")
        .unwrap()
        .scalar()
        .unwrap();
    let theirs = imp.run.original_summary.as_ref().unwrap()["request_throughput"]["avg"]
        .as_f64()
        .unwrap();
    assert!((ours - theirs).abs() <= 1e-6 * theirs);
    // Two decimals, as the CSV prints it, agree.
    assert_eq!(format!("{ours:.2}"), format!("{theirs:.2}"));
}

#[test]
fn a_single_run_subfolder_is_found() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("aiperf-nested");
    let _ = std::fs::remove_dir_all(&root);
    let run = root.join("mock-model-openai-chat-concurrency4");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::copy(
        data("s1").join("profile_export.jsonl"),
        run.join("profile_export.jsonl"),
    )
    .unwrap();
    assert!(looks_like(&root));
    let imp = import_full(&root, &words).unwrap();
    assert_eq!(imp.run.dir, run);
    assert_eq!(imp.run.evidence.records.len(), 60);
    // No summary, no log: version unknown, window from the records.
    assert_eq!(imp.run.version, "unknown");
    assert!(
        imp.run
            .losses
            .iter()
            .any(|l| l.contains("derived from the records"))
    );
    // Two run folders are ambiguous.
    std::fs::create_dir_all(root.join("other")).unwrap();
    std::fs::copy(
        data("s1").join("profile_export.jsonl"),
        root.join("other/profile_export.jsonl"),
    )
    .unwrap();
    assert!(!looks_like(&root));
}

/// A per-record value of a computed set, as f64.
fn per_record(c: &inferbench_metrics::Computed, i: usize, tag: &str) -> Vec<f64> {
    match c.per_record[i]
        .metrics
        .iter()
        .find(|m| m.tag == tag)
        .map(|m| &m.value)
    {
        Some(RecordMetricValue::Float(f)) => vec![*f],
        Some(RecordMetricValue::Int(n)) => vec![*n as f64],
        Some(RecordMetricValue::List(l)) => l.clone(),
        None => vec![],
    }
}

#[track_caller]
fn near(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs(), "got {a}, expected {b}");
}

#[test]
fn the_raw_timeline_rescores_under_other_definitions() {
    // S2 record 0 (perf offsets from its start, from profile_export_raw.jsonl): role-only
    // chunk at 5436769 ns, first reasoning token at 26164033, last content and the
    // usage-only chunk at 101467744; credit issued 935639 ns before the start; 8 + 8 tokens.
    let imp = import_full(&data("s2"), &words).unwrap();
    let ev = &imp.run.evidence;
    // vLLM: TTFT at the role chunk; TPOT (101467744 − 5436769) / 15 = 6402065 ns; first ITL
    // 26164033 − 5436769 = 20727264 ns.
    let v = inferbench_metrics::vllm_bench::compute(ev, Phase::Profiling);
    near(per_record(&v, 0, "ttft")[0], 5.436769);
    near(per_record(&v, 0, "e2el")[0], 101.467744);
    near(per_record(&v, 0, "tpot")[0], 6.402065);
    near(per_record(&v, 0, "itl")[0], 20.727264);
    // LoadGen: from the credit (the scheduled time): TTFT 26164033 + 935639 = 27099672 ns,
    // latency 101467744 + 935639 = 102403383 ns, TPOT (102403383 − 27099672) / 15.
    let m = inferbench_metrics::mlperf::compute(ev, Phase::Profiling);
    near(per_record(&m, 0, "ttft")[0], 27.099672);
    near(per_record(&m, 0, "latency")[0], 102.403383);
    near(per_record(&m, 0, "tpot")[0], 75.303711 / 15.0);
}
