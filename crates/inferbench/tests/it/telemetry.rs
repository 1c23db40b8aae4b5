//! Server metrics and GPU telemetry in real runs against the simulated server: the raw
//! scrapes kept, the server's own token counter against the tokens the server reported to
//! the client, warmup kept out by the bracketing scrapes, a counter reset, a target that
//! does not answer, credentials in a target URL, and the offline recomputation.

use crate::common;

use std::path::Path;

use common::{jsonl, read_json, run, stderr, tmpdir};
use serde_json::Value;

fn profile(dir: &Path, extra: &[&str]) -> std::process::Output {
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "profile",
        "--streaming",
        "--isl",
        "16",
        "--osl",
        "6",
        "--extra-inputs",
        "ignore_eos:true",
        "--random-seed",
        "3",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "5",
        "--sim-itl-ms",
        "2",
        "--server-metrics-interval",
        "0.05",
        "--gpu-telemetry-interval",
        "0.05",
        "--artifact-dir",
        d,
    ];
    args.extend_from_slice(extra);
    run(&args)
}

/// Σ usage.completion_tokens the server reported in the profiling records.
fn reported_completion_tokens(dir: &Path) -> f64 {
    jsonl(&dir.join("profile_export.jsonl"))
        .iter()
        .map(|r| {
            r["metrics"]["usage_completion_tokens"]["value"]
                .as_f64()
                .expect("every record has the server's usage")
        })
        .sum()
}

fn server_view(dir: &Path) -> Value {
    let f = read_json(&dir.join("inferbench_server_metrics.json"));
    f["servers"][0].clone()
}

#[test]
fn the_servers_token_counter_over_the_window_is_the_tokens_it_reported_and_warmup_stays_out() {
    let dir = tmpdir("telemetry-run");
    let o = profile(
        &dir,
        &[
            "--request-count",
            "24",
            "--warmup-request-count",
            "6",
            "--concurrency",
            "3",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("warning"),
        "no target failed: {}",
        stderr(&o)
    );
    for f in [
        "inferbench_scrapes.jsonl",
        "inferbench_server_metrics.json",
        "server_metrics_export.json",
        "server_metrics_export.csv",
        "gpu_telemetry_export.jsonl",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
        let manifest = read_json(&dir.join("inferbench_manifest.json"));
        assert!(
            manifest["files"].as_array().unwrap().iter().any(|x| x == f),
            "{f} not listed in the manifest"
        );
    }
    let s = server_view(&dir);
    assert_eq!(s["server"], "vllm");
    // 24 profiling requests of 6 tokens each; the 6 warmup requests' tokens are outside the
    // bracket (a scrape right before the first profiling request).
    let reported = reported_completion_tokens(&dir);
    assert_eq!(reported, 24.0 * 6.0);
    assert_eq!(s["output_tokens"].as_f64(), Some(reported));
    assert_eq!(s["resets"], 0);
    let f = read_json(&dir.join("inferbench_server_metrics.json"));
    assert_eq!(f["client"]["output_token_gap_pct"].as_f64(), Some(0.0));
    // The server's TTFT histogram has the profiling requests (observed at first token).
    assert_eq!(s["ttft"]["count"].as_f64(), Some(24.0));
    // The raw file: a header, the start scrapes, brackets at both phases' edges, an end line.
    let lines: Vec<Value> = std::fs::read_to_string(dir.join("inferbench_scrapes.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines[0]["header"]["targets"].as_array().unwrap().len() == 2);
    let triggers: Vec<String> = lines
        .iter()
        .filter_map(|l| l["scrape"]["trigger"].as_str().map(str::to_string))
        .collect();
    for t in ["start", "phase_start", "phase_end", "end"] {
        assert!(triggers.iter().any(|x| x == t), "no {t} scrape");
    }
    assert!(lines.last().unwrap()["end"].is_object());
    // The console shows the server's own table.
    let console = std::fs::read_to_string(dir.join("profile_export_console.txt")).unwrap();
    assert!(
        console.contains("Server Output Token Throughput (vllm)"),
        "{console}"
    );
    assert!(
        console.contains("Server TTFT p99 (histogram estimate)"),
        "{console}"
    );
    // GPU: the simulated exporter's energy, per output token.
    let g = &f["gpus"][0];
    assert!(g["energy_j"].as_f64().unwrap() > 0.0);
    assert!(
        f["efficiency"]["energy_per_output_token_mj"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // Both files validate against their schemas.
    let schema = |name: &str| {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/schemas")
            .join(name);
        jsonschema::validator_for(&read_json(&p)).unwrap()
    };
    let v = schema("server-metrics.schema.json");
    let errors: Vec<String> = v.iter_errors(&f).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let v = schema("scrape-line.schema.json");
    for l in &lines {
        let errors: Vec<String> = v.iter_errors(l).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}: {l}");
    }
    let summary = read_json(&dir.join("profile_export_aiperf.json"));
    assert!(summary["telemetry_data"].is_object());

    // Offline: the derived files come back from the raw scrapes alone.
    let before = std::fs::read(dir.join("inferbench_server_metrics.json")).unwrap();
    let aiperf_before = std::fs::read(dir.join("server_metrics_export.json")).unwrap();
    std::fs::remove_file(dir.join("inferbench_server_metrics.json")).unwrap();
    std::fs::remove_file(dir.join("server_metrics_export.json")).unwrap();
    let w = run(&["metrics", dir.to_str().unwrap(), "--write"]);
    assert!(w.status.success(), "{}", stderr(&w));
    assert_eq!(
        std::fs::read(dir.join("inferbench_server_metrics.json")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read(dir.join("server_metrics_export.json")).unwrap(),
        aiperf_before
    );
}

#[test]
fn scraping_off_writes_no_scrape_file() {
    let dir = tmpdir("telemetry-off");
    let o = profile(
        &dir,
        &[
            "--request-count",
            "4",
            "--no-server-metrics",
            "--no-gpu-telemetry",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dir.join("inferbench_scrapes.jsonl").exists());
    assert!(!dir.join("inferbench_server_metrics.json").exists());
    assert!(!dir.join("server_metrics_export.json").exists());
}

#[test]
fn a_target_that_does_not_answer_is_one_warning_and_its_credentials_go_nowhere() {
    let dir = tmpdir("telemetry-dead");
    // Port 1 on loopback refuses connections.
    let o = profile(
        &dir,
        &[
            "--request-count",
            "12",
            "--concurrency",
            "2",
            "--server-metrics",
            "http://bob:METRICSECRET@127.0.0.1:1/metrics",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(
        err.matches("warning: server metrics http://127.0.0.1:1/metrics")
            .count(),
        1,
        "{err}"
    );
    let mut all = String::from_utf8_lossy(&o.stdout).into_owned() + &err;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
        }
    }
    assert!(!all.contains("METRICSECRET"), "a credential leaked");
    assert!(!all.contains("bob:"), "a user name leaked");
    // The live target is still analysed; the dead one is kept as failures.
    let f = read_json(&dir.join("inferbench_server_metrics.json"));
    let targets = f["analysis"]["targets"].as_array().unwrap();
    let dead = targets
        .iter()
        .find(|t| t["target"]["url"] == "http://127.0.0.1:1/metrics")
        .expect("the dead target is listed");
    assert_eq!(dead["failed"], dead["scrapes"]);
    assert!(f["servers"][0]["output_tokens"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_counter_reset_mid_run_is_counted_and_aiperfs_undercount_is_flagged() {
    let dir = tmpdir("telemetry-reset");
    // The simulated server's counters restart 1.5 s after its first token, half-way through
    // the run (400 requests at 2 in flight × 15 ms each ≈ 3 s).
    let o = profile(
        &dir,
        &[
            "--request-count",
            "400",
            "--concurrency",
            "2",
            "--sim-metrics-reset-after",
            "1.5",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = server_view(&dir);
    assert!(s["resets"].as_u64().unwrap() >= 1, "{s}");
    let reported = reported_completion_tokens(&dir);
    assert_eq!(reported, 400.0 * 6.0);
    // The reset-aware increase counts both sides of the restart; it can miss only what was
    // generated between the last scrape before the restart and the restart itself (at most
    // one 50 ms scrape interval: 2 streams × 6 tokens per 15 ms × 0.05 s = 40 tokens).
    let exact = s["output_tokens"].as_f64().unwrap();
    assert!(
        exact <= reported && exact >= reported - 40.0,
        "{exact} vs {reported}"
    );
    // AIPerf's last − reference, clamped at 0, keeps only what came after the restart.
    let f = read_json(&dir.join("inferbench_server_metrics.json"));
    let d = f["aiperf_differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| {
            d["metric"]
                .as_str()
                .is_some_and(|m| m.starts_with("vllm:generation_tokens"))
        })
        .unwrap_or_else(|| panic!("no difference flagged: {}", f["aiperf_differences"]));
    assert!(d["aiperf"].as_f64().unwrap() < exact, "{d}");
    assert!(d["reason"].as_str().unwrap().contains("restarted"), "{d}");
    let console = std::fs::read_to_string(dir.join("profile_export_console.txt")).unwrap();
    assert!(console.contains("Server Counter Resets"), "{console}");
    assert!(
        console.contains("AIPerf server-metric numbers that differ"),
        "{console}"
    );
}

#[test]
fn the_jsonl_format_writes_aiperfs_per_scrape_file_and_it_comes_back_offline() {
    let dir = tmpdir("telemetry-jsonl");
    let o = profile(
        &dir,
        &[
            "--request-count",
            "24",
            "--warmup-request-count",
            "6",
            "--concurrency",
            "2",
            "--server-metrics-formats",
            "json,csv,jsonl",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest = read_json(&dir.join("inferbench_manifest.json"));
    for f in [
        "server_metrics_export.json",
        "server_metrics_export.csv",
        "server_metrics_export.jsonl",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
        assert!(
            manifest["files"].as_array().unwrap().iter().any(|x| x == f),
            "{f} not listed in the manifest"
        );
    }
    // The raw file says which scrapes AIPerf would have recorded: the server target's
    // answered ones whose body changed (no `same_as`); the GPU target's never.
    let raw: Vec<Value> = std::fs::read_to_string(dir.join("inferbench_scrapes.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let server = raw[0]["header"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["kind"] == "server")
        .expect("a server target")
        .clone();
    let recorded = raw
        .iter()
        .filter_map(|l| l.get("scrape"))
        .filter(|s| s["target"] == server["index"])
        .filter(|s| s["status"] == 200 && s["error"].is_null() && s["same_as"].is_null())
        .count();
    let lines = jsonl(&dir.join("server_metrics_export.jsonl"));
    assert_eq!(lines.len(), recorded);
    assert!(lines.len() >= 4, "{} lines", lines.len());
    let mut phases = Vec::new();
    for l in &lines {
        let keys: Vec<&str> = l.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys[..6],
            [
                "endpoint_url",
                "timestamp_ns",
                "endpoint_latency_ns",
                "metrics",
                "request_sent_ns",
                "first_byte_ns"
            ],
            "{l}"
        );
        assert_eq!(l["endpoint_url"], server["url"]);
        let sent = l["request_sent_ns"].as_u64().unwrap();
        let first = l["first_byte_ns"].as_u64().unwrap();
        assert_eq!(l["timestamp_ns"].as_u64(), Some(first));
        assert!(sent <= first && first < sent + l["endpoint_latency_ns"].as_u64().unwrap() + 1);
        // Wall-clock ns (after 2020), not ns since the run's anchor.
        assert!(sent > 1_577_836_800_000_000_000, "{sent}");
        let m = l["metrics"].as_object().unwrap();
        for name in m.keys() {
            assert!(
                !name.ends_with("_created") && !name.ends_with("_info"),
                "{name}"
            );
        }
        // The counter `vllm:generation_tokens_total` is named as prometheus_client names it
        // (a histogram keeps its `_total`, as vLLM's `vllm:iteration_tokens_total`).
        assert!(!m.contains_key("vllm:generation_tokens_total"));
        let tokens = &m["vllm:generation_tokens"][0];
        assert!(
            tokens["labels"].is_object() && tokens["value"].is_f64(),
            "{tokens}"
        );
        let ttft = &m["vllm:time_to_first_token_seconds"][0];
        assert!(
            ttft["buckets"]["+Inf"].is_f64() && ttft["count"].is_f64(),
            "{ttft}"
        );
        assert!(ttft["labels"].get("le").is_none());
        phases.push((
            l["benchmark_phase"].as_str().map(str::to_string),
            l["phase_index"].as_u64(),
            l["profiling_index"].as_u64(),
            l["phase_name"].clone(),
            l["phase_kind"].clone(),
        ));
    }
    for (phase, index, profiling, name, kind) in &phases {
        match phase.as_deref() {
            Some("warmup") => assert_eq!((*index, *profiling), (Some(0), None)),
            Some("profiling") => assert_eq!((*index, *profiling), (Some(1), Some(0))),
            None => assert!(index.is_none() && name.is_null() && kind.is_null()),
            Some(other) => panic!("phase {other}"),
        }
        if let Some(p) = phase {
            assert!(name == p && kind == p, "{name} {kind}");
        }
    }
    for p in ["warmup", "profiling"] {
        assert!(
            phases.iter().any(|x| x.0.as_deref() == Some(p)),
            "no {p} line: {phases:?}"
        );
    }
    // The last line is the end scrape (profiling): the server's counter has all 30
    // requests' tokens, warmup's included (6 each), as a float.
    let last = lines.last().unwrap();
    assert_eq!(last["benchmark_phase"], "profiling");
    let total = &last["metrics"]["vllm:generation_tokens"][0]["value"];
    assert_eq!(total.as_f64(), Some(30.0 * 6.0), "{last}");

    // Offline: the same file comes back from the raw scrapes alone.
    let before = std::fs::read(dir.join("server_metrics_export.jsonl")).unwrap();
    std::fs::remove_file(dir.join("server_metrics_export.jsonl")).unwrap();
    let w = run(&["metrics", dir.to_str().unwrap(), "--write"]);
    assert!(w.status.success(), "{}", stderr(&w));
    assert_eq!(
        std::fs::read(dir.join("server_metrics_export.jsonl")).unwrap(),
        before
    );
}

#[test]
fn an_unknown_or_parquet_server_metrics_format_is_one_line_naming_the_flag() {
    let dir = tmpdir("telemetry-formats");
    for (format, needle) in [
        ("xml", "--server-metrics-formats xml: json, csv or jsonl"),
        (
            "json,parquet",
            "--server-metrics-formats parquet: not built in inferbench (no Parquet writer",
        ),
    ] {
        let o = profile(
            &dir,
            &["--request-count", "2", "--server-metrics-formats", format],
        );
        assert!(!o.status.success(), "{format}");
        let e = stderr(&o);
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(e.contains(needle), "{e}");
    }
    // The default stays json and csv: no jsonl file.
    let o = profile(&dir, &["--request-count", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("server_metrics_export.json").is_file());
    assert!(!dir.join("server_metrics_export.jsonl").exists());
}
