//! Several URLs and several models (docs/routing.md): round robin over two mock servers,
//! each record's `url_index` and `model`, the model strategies, the breakdown, bad input.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;

use serde_json::Value;

use crate::common::{MockServer, evidence_records, read_json, run, stderr, tmpdir};

/// Requests the mock server at `url` answered (its `/sim/stats`).
fn served(url: &str) -> u64 {
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET /sim/stats HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let body = out.split("\r\n\r\n").nth(1).unwrap_or("");
    let v: Value = serde_json::from_str(body).expect("stats json");
    v["requests"].as_u64().expect("requests")
}

fn profile(dir: &Path, extra: &[&str]) -> std::process::Output {
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "profile",
        "--artifact-dir",
        d,
        "--synthetic-input-tokens-mean",
        "8",
        "--output-tokens-mean",
        "4",
        "--ui-type",
        "none",
    ];
    if !extra.contains(&"--random-seed") {
        args.extend_from_slice(&["--random-seed", "7"]);
    }
    args.extend_from_slice(extra);
    run(&args)
}

fn two_url_run(concurrency: &str, name: &str) -> (u64, u64, Vec<Value>, std::path::PathBuf) {
    let a = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let b = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let dir = tmpdir(name);
    let o = profile(
        &dir,
        &[
            "--url",
            &a.url,
            "-u",
            &b.url,
            "--url-strategy",
            "round_robin",
            "-m",
            "mock-model",
            "--streaming",
            "--concurrency",
            concurrency,
            "--request-count",
            "10",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    (served(&a.url), served(&b.url), evidence_records(&dir), dir)
}

/// Session k goes to URL k mod 2: 10 single-turn sessions split 5 and 5, whatever the
/// concurrency (the assignment follows issue order, not which slot is free).
#[test]
fn round_robin_splits_ten_requests_five_and_five() {
    for (c, name) in [("1", "route_rr_c1"), ("3", "route_rr_c3")] {
        let (na, nb, recs, dir) = two_url_run(c, name);
        assert_eq!((na, nb), (5, 5), "concurrency {c}");
        assert_eq!(recs.len(), 10);
        for r in &recs {
            let k = r["session_num"].as_u64().unwrap();
            assert_eq!(r["url_index"].as_u64(), Some(k % 2), "{r}");
        }
        // The breakdown's counts add up to the run's.
        let b = read_json(&dir.join("inferbench_breakdown.json"));
        let urls = b["breakdown"]["by_url"].as_array().unwrap();
        assert_eq!(urls.len(), 2);
        let counts: Vec<u64> = urls
            .iter()
            .map(|u| u["request_count"].as_u64().unwrap())
            .collect();
        assert_eq!(counts, [5, 5]);
        assert_eq!(urls[0]["error_count"], 0);
        assert!(urls[0]["time_to_first_token"]["avg"].as_f64().unwrap() > 0.0);
        let summary = read_json(&dir.join("profile_export_aiperf.json"));
        assert!(
            summary.get("breakdown").is_none(),
            "AIPerf's file keeps its shape"
        );
        let console = std::fs::read_to_string(dir.join("profile_export_console.txt")).unwrap();
        assert!(console.contains("By endpoint"), "{console}");
        // Each URL's /metrics is scraped.
        let scrapes = std::fs::read_to_string(dir.join("inferbench_scrapes.jsonl")).unwrap();
        let header: Value = serde_json::from_str(scrapes.lines().next().unwrap()).unwrap();
        let targets: Vec<&str> = header["header"]["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["url"].as_str().unwrap())
            .collect();
        assert_eq!(targets.len(), 2, "{targets:?}");
        assert!(targets.iter().all(|t| t.ends_with("/metrics")));
        assert_ne!(targets[0], targets[1]);
        assert_eq!(
            b["breakdown"]["by_model"][0]["model"], "mock-model",
            "one model: its name"
        );
        let manifest = read_json(&dir.join("inferbench_manifest.json"));
        assert!(
            manifest["files"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == "inferbench_breakdown.json")
        );
    }
}

/// Offline re-scoring gives the same breakdown bytes.
#[test]
fn metrics_write_rebuilds_the_same_breakdown() {
    let (_, _, _, dir) = two_url_run("2", "route_offline");
    let before = std::fs::read(dir.join("inferbench_breakdown.json")).unwrap();
    let o = run(&["metrics", dir.to_str().unwrap(), "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = std::fs::read(dir.join("inferbench_breakdown.json")).unwrap();
    assert_eq!(before, after);
}

/// The model named in each frozen body, in workload order (inputs.json).
fn body_models(dir: &Path) -> Vec<String> {
    let v = read_json(&dir.join("inputs.json"));
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["payloads"].as_array().unwrap().clone())
        .map(|p| p["model"].as_str().unwrap().to_string())
        .collect()
}

fn model_run(name: &str, extra: &[&str]) -> (Vec<String>, Vec<Value>, std::path::PathBuf) {
    let dir = tmpdir(name);
    let mut args = vec![
        "-m",
        "alpha,beta",
        "--num-dataset-entries",
        "40",
        "--request-count",
        "40",
        "--concurrency",
        "4",
        "--sim-ttft-ms",
        "0",
        "--sim-itl-ms",
        "0",
    ];
    args.extend_from_slice(extra);
    let o = profile(&dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    (body_models(&dir), evidence_records(&dir), dir)
}

#[test]
fn models_round_robin_over_turns_and_records_say_which() {
    let (models, recs, dir) = model_run("route_models_rr", &[]);
    assert_eq!(models.len(), 40);
    for (j, m) in models.iter().enumerate() {
        assert_eq!(m, if j % 2 == 0 { "alpha" } else { "beta" }, "turn {j}");
    }
    for r in &recs {
        let i = r["payload_index"].as_u64().unwrap() as usize;
        assert_eq!(r["model"].as_str(), Some(models[i].as_str()), "{r}");
        assert!(r.get("url_index").is_none(), "one URL: no index");
    }
    let b = read_json(&dir.join("inferbench_breakdown.json"));
    let by_model = b["breakdown"]["by_model"].as_array().unwrap();
    let total: u64 = by_model
        .iter()
        .map(|m| m["request_count"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 40);
}

#[test]
fn random_models_follow_the_seed() {
    let r = ["--model-selection-strategy", "random"];
    let (a, _, _) = model_run("route_models_rand_a", &r);
    let (b, _, _) = model_run("route_models_rand_b", &r);
    assert_eq!(a, b, "same seed, same bodies");
    let (c, _, _) = model_run(
        "route_models_rand_c",
        &["--model-selection-strategy", "random", "--random-seed", "8"],
    );
    assert_ne!(a, c, "another seed draws another assignment");
    assert!(a.iter().any(|m| m == "alpha") && a.iter().any(|m| m == "beta"));
}

/// 0.8 / 0.2 over 400 turns: alpha's count is binomial (mean 320, sd 8); a fixed seed
/// lands within 4 sd of the mean.
#[test]
fn weighted_models_come_in_proportion() {
    let dir = tmpdir("route_models_weighted");
    let o = profile(
        &dir,
        &[
            "-m",
            "alpha",
            "-m",
            "beta",
            "--model-selection-strategy",
            "weighted",
            "--model-weights",
            "0.8,0.2",
            "--num-dataset-entries",
            "400",
            "--request-count",
            "1",
            "--sim-ttft-ms",
            "0",
            "--sim-itl-ms",
            "0",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let models = body_models(&dir);
    assert_eq!(models.len(), 400);
    let alpha = models.iter().filter(|m| *m == "alpha").count() as i64;
    assert!((alpha - 320).abs() <= 32, "alpha {alpha} of 400");
}

#[test]
fn bad_input_names_the_entry() {
    let dir = tmpdir("route_bad");
    let d = dir.to_str().unwrap();
    let o = run(&[
        "profile",
        "--artifact-dir",
        d,
        "-m",
        "x",
        "--url",
        "http://127.0.0.1:1",
        "--url",
        "ftp://nope",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("--url #2 of 2"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");

    let o = run(&[
        "profile",
        "--artifact-dir",
        d,
        "--model-selection-strategy",
        "shuffle",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("round_robin, random, weighted"), "{e}");

    let o = run(&["profile", "--artifact-dir", d, "--url-strategy", "fastest"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("valid: round_robin"), "{}", stderr(&o));
    assert!(!dir.join("profile_export_aiperf.json").exists());
}

/// AIPerf 0.13 makes one URL sampler for the whole run (`PhaseOrchestrator.__init__` in
/// `src/aiperf/timing/phase_orchestrator.py`) and hands it to every phase's credit issuer,
/// which advances it once per session start (`src/aiperf/credit/issuer.py`): warmup sessions take the
/// first ticks. One warmup request and four profiling ones over two URLs: warmup → URL 0,
/// profiling sessions → URLs 1, 0, 1, 0; so URL 0 answers 3, URL 1 answers 2.
#[test]
fn warmup_sessions_take_the_first_round_robin_ticks() {
    let a = MockServer::start(&[]);
    let b = MockServer::start(&[]);
    let dir = tmpdir("route_warmup");
    let o = profile(
        &dir,
        &[
            "-u",
            &a.url,
            "-u",
            &b.url,
            "-m",
            "mock-model",
            "--streaming",
            "--concurrency",
            "1",
            "--warmup-request-count",
            "1",
            "--request-count",
            "4",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!((served(&a.url), served(&b.url)), (3, 2));
    let recs = evidence_records(&dir);
    let mut got: Vec<(String, u64, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["phase"].as_str().unwrap_or("profiling").to_string(),
                r["session_num"].as_u64().unwrap(),
                r["url_index"].as_u64().unwrap(),
            )
        })
        .collect();
    got.sort_by_key(|g| g.1);
    let want: Vec<(String, u64, u64)> = [
        ("warmup", 0, 0),
        ("profiling", 1, 1),
        ("profiling", 2, 0),
        ("profiling", 3, 1),
        ("profiling", 4, 0),
    ]
    .iter()
    .map(|(p, s, u)| (p.to_string(), *s, *u))
    .collect();
    assert_eq!(got, want);
}

/// A base URL written as OpenAI clients take it (`…/v1`) reaches `/v1/chat/completions`, as
/// AIPerf joins them, on one URL and on several; it went to `/v1/v1/chat/completions` (404).
#[test]
fn a_base_url_ending_in_v1_is_joined_without_a_second_v1() {
    let a = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let b = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let (va, vb) = (format!("{}/v1", a.url), format!("{}/v1/", b.url));
    let dir = tmpdir("routing-v1-base");
    let o = profile(
        &dir,
        &["-u", &va, "-m", "mock-model", "--request-count", "3"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tmpdir("routing-v1-base-two");
    let o = profile(
        &dir,
        &[
            "-u",
            &va,
            "-u",
            &vb,
            "-m",
            "mock-model",
            "--request-count",
            "4",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = evidence_records(&dir);
    assert_eq!(recs.len(), 4);
    assert!(recs.iter().all(|r| r["status"] == 200), "{recs:#?}");
    assert_eq!((served(&a.url), served(&b.url)), (5, 2));
}
