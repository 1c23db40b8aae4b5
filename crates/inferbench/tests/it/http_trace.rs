//! AIPerf's `http_req_*` metrics on a real profile against the built-in simulated server,
//! `--export-http-trace`, and their offline rewrite; the import of AIPerf's own values.

use crate::common;

use std::path::Path;

use common::{jsonl, read_json, run, stderr, tmpdir};
use serde_json::Value;

const TAGS: [&str; 14] = [
    "http_req_blocked",
    "http_req_chunks_received",
    "http_req_chunks_sent",
    "http_req_connecting",
    "http_req_connection_overhead",
    "http_req_connection_reused",
    "http_req_data_received",
    "http_req_data_sent",
    "http_req_dns_lookup",
    "http_req_duration",
    "http_req_receiving",
    "http_req_sending",
    "http_req_total",
    "http_req_waiting",
];

fn profile(dir: &Path, extra: &[&str]) {
    let mut args = vec![
        "profile",
        "--streaming",
        "--request-count",
        "10",
        "--concurrency",
        "2",
        "--isl",
        "24",
        "--osl",
        "6",
        "--random-seed",
        "5",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "1",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

fn value(line: &Value, tag: &str) -> f64 {
    line["metrics"][tag]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("{tag} missing in {line}"))
}

#[test]
fn a_profile_reports_the_fourteen_and_reuse_per_connection() {
    let dir = tmpdir("http-trace");
    profile(&dir, &["--export-http-trace"]);
    let summary = read_json(&dir.join("profile_export_aiperf.json"));
    for tag in TAGS {
        assert_eq!(summary[tag]["count"], 10, "{tag}: {}", summary[tag]);
    }
    assert_eq!(summary["http_req_data_received"]["unit"], "KB");
    assert_eq!(summary["http_req_connection_reused"]["unit"], "ratio");
    let lines = jsonl(&dir.join("profile_export.jsonl"));
    assert_eq!(lines.len(), 10);
    // Two workers, each opening one connection and keeping it: 2 new, 8 reused.
    let reused: Vec<f64> = lines
        .iter()
        .map(|l| value(l, "http_req_connection_reused"))
        .collect();
    assert_eq!(
        reused.iter().filter(|r| **r == 0.0).count(),
        2,
        "{reused:?}"
    );
    assert_eq!(
        reused.iter().filter(|r| **r == 1.0).count(),
        8,
        "{reused:?}"
    );
    assert_eq!(summary["http_req_connection_reused"]["avg"], 0.8);
    // The first request on each connection is the one that opened it.
    let evidence = common::evidence_records(&dir);
    let mut seen = std::collections::HashSet::new();
    for r in &evidence {
        let c = &r["connection"];
        let id = c["id"].as_u64().unwrap();
        assert_eq!(c["reused"].as_bool().unwrap(), !seen.insert(id), "{c}");
    }
    assert_eq!(seen.len(), 2);
    for l in &lines {
        let t = &l["trace_data"];
        let new = value(l, "http_req_connection_reused") == 0.0;
        // Reused: no set-up. New: the set-up took time, and it is the whole overhead.
        assert_eq!(value(l, "http_req_connecting") > 0.0, new, "{l}");
        assert_eq!(
            value(l, "http_req_connection_overhead"),
            value(l, "http_req_connecting")
        );
        assert_eq!(value(l, "http_req_blocked"), 0.0);
        assert_eq!(value(l, "http_req_chunks_sent"), 1.0);
        // trace_data: AIPerf's shape, ns, consistent with the per-record values.
        assert_eq!(t["trace_type"], "inferbench");
        let ns = |k: &str| t[k].as_u64().unwrap_or_else(|| panic!("{k} in {t}"));
        assert_eq!(ns("sending_ns") as f64 * 1e-6, value(l, "http_req_sending"));
        assert_eq!(ns("waiting_ns") as f64 * 1e-6, value(l, "http_req_waiting"));
        assert_eq!(
            ns("duration_ns"),
            ns("response_receive_end_ns") - ns("request_send_start_ns")
        );
        let chunks = t["response_chunks"].as_array().unwrap();
        assert_eq!(chunks.len() as f64, value(l, "http_req_chunks_received"));
        let bytes: u64 = chunks.iter().map(|c| c[1].as_u64().unwrap()).sum();
        assert_eq!(bytes as f64 / 1024.0, value(l, "http_req_data_received"));
        assert_eq!(t.get("connection_reused_ns").is_some(), !new, "{t}");
    }
    // The CSV has the rows, named as AIPerf names them.
    let csv = std::fs::read_to_string(dir.join("profile_export_aiperf.csv")).unwrap();
    assert!(csv.contains("\r\nHTTP Data Sent (KB),"), "{csv}");
    assert!(csv.contains("\r\nHTTP Chunks Received,"), "{csv}");
    assert!(
        csv.contains("\r\nHTTP Duration (excl. conn) (ms),"),
        "{csv}"
    );

    // The offline rewrite gives the same files, byte for byte.
    let before: Vec<(String, Vec<u8>)> = [
        "profile_export.jsonl",
        "profile_export_aiperf.json",
        "profile_export_aiperf.csv",
    ]
    .iter()
    .map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap()))
    .collect();
    let o = run(&["metrics", dir.to_str().unwrap(), "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (f, bytes) in before {
        assert!(
            std::fs::read(dir.join(&f)).unwrap() == bytes,
            "{f} differs after --write"
        );
    }
}

#[test]
fn without_the_flag_no_trace_data_and_summary_level_refuses_it() {
    let dir = tmpdir("http-trace-off");
    profile(&dir, &[]);
    let lines = jsonl(&dir.join("profile_export.jsonl"));
    assert!(lines.iter().all(|l| l.get("trace_data").is_none()));
    assert!(
        lines
            .iter()
            .all(|l| l["metrics"].get("http_req_total").is_some())
    );
    let o = run(&[
        "profile",
        "--export-level",
        "summary",
        "--export-http-trace",
        "--ui",
        "none",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--export-http-trace"), "{}", stderr(&o));
}

#[test]
fn an_aiperf_import_rescores_every_value_of_its_summary() {
    // S1: 65 metrics with 653 values in profile_export_aiperf.json, the 14 http_req_* included.
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../inferbench-import/tests/data/aiperf/s1");
    let o = run(&["metrics", dir.to_str().unwrap()]);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("all 653 compared values of the original summary reproduced under aiperf-0.13; the file holds 653 values"),
        "{e}"
    );
}

/// A copy of AIPerf fixture S1 whose summary records SLOs, as a run made with `--goodput`
/// keeps them in its input config.
fn s1_with_slos(slos: Value) -> std::path::PathBuf {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../inferbench-import/tests/data/aiperf/s1");
    let dst = tmpdir("aiperf-slos");
    std::fs::create_dir_all(dst.join("logs")).unwrap();
    for f in [
        "profile_export.jsonl",
        "profile_export_raw.jsonl",
        "inputs.json",
        "logs/aiperf.log",
    ] {
        std::fs::copy(src.join(f), dst.join(f)).unwrap();
    }
    let mut summary = read_json(&src.join("profile_export_aiperf.json"));
    summary["input_config"]["slos"] = slos;
    std::fs::write(dst.join("profile_export_aiperf.json"), summary.to_string()).unwrap();
    dst
}

#[test]
fn an_import_is_rescored_with_its_own_slos_unless_told_otherwise() {
    let dir = s1_with_slos(serde_json::json!({"time_to_first_token": 22.0}));
    // AIPerf's own per-record TTFTs: the good requests are those at or under 22 ms.
    let lines = jsonl(&dir.join("profile_export.jsonl"));
    let good = lines
        .iter()
        .filter(|l| value(l, "time_to_first_token") <= 22.0)
        .count();
    assert!(good > 0 && good < 60, "{good}: the bound splits the run");
    let out = tmpdir("aiperf-slos-out");
    let o = run(&[
        "metrics",
        dir.to_str().unwrap(),
        "--format",
        "aiperf",
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert!(
        e.contains("the run's own SLOs \"time_to_first_token:22\""),
        "{e}"
    );
    let s = read_json(&out.join("profile_export_aiperf.json"));
    assert_eq!(s["good_request_count"]["avg"], good as f64, "{e}");
    // --goodput replaces them, and says so.
    let o = run(&[
        "metrics",
        dir.to_str().unwrap(),
        "--goodput",
        "time_to_first_token:1000",
        "--format",
        "aiperf",
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert!(e.contains("replaces the run's own SLOs"), "{e}");
    let s = read_json(&out.join("profile_export_aiperf.json"));
    assert_eq!(s["good_request_count"]["avg"], 60.0, "{e}");
}
