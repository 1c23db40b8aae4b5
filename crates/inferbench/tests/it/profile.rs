//! Integration tests: the real binary against the built-in simulated server (in-process, or
//! as a separate `mock-server` process), and against deliberately broken servers. Every
//! server binds 127.0.0.1 on port 0.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::*;

#[test]
fn profile_without_url_benchmarks_the_simulated_server_and_writes_aiperf_artifacts() {
    let dir = tmpdir("sim");
    let d = dir.to_str().unwrap();
    let o = run(&[
        "profile",
        "--streaming",
        "--concurrency",
        "4",
        "--request-count",
        "20",
        "--warmup-request-count",
        "3",
        "--isl",
        "32",
        "--osl",
        "16",
        "--extra-inputs",
        "ignore_eos:true",
        "--random-seed",
        "7",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "2",
        "--sim-itl-ms",
        "0.5",
        "--artifact-dir",
        d,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("simulated server at http://127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("tokens counted with"), "{err}");
    let console = String::from_utf8_lossy(&o.stdout);
    assert!(console.contains("Time to First Token"), "{console}");

    // Every AIPerf file is there, plus our evidence and manifest.
    for f in [
        "profile_export.jsonl",
        "profile_export_aiperf.json",
        "profile_export_aiperf.csv",
        "profile_export_console.txt",
        "inputs.json",
        ".aiperf_results_ready.json",
        "inferbench_evidence.jsonl",
        "inferbench_manifest.json",
    ] {
        assert!(dir.join(f).exists(), "{f} missing");
    }
    assert!(!dir.join("profile_export_raw.jsonl").exists());

    // Each scheduled request is exactly one record: 3 warmup + 20 profiling.
    let recs = evidence_records(&dir);
    assert_eq!(recs.len(), 23);
    assert_eq!(recs.iter().filter(|r| r["phase"] == "warmup").count(), 3);
    let mut ids: Vec<u64> = recs.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, (0..23).collect::<Vec<_>>());
    assert_eq!(jsonl(&dir.join("profile_export.jsonl")).len(), 20);
    // The timeline is consistent: frames in arrival order, none before the request started,
    // each event stamped with the frame it completed in.
    for r in &recs {
        let start = r["start_ns"].as_u64().unwrap();
        let frames: Vec<u64> = r["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["t_ns"].as_u64().unwrap())
            .collect();
        assert!(!frames.is_empty());
        assert!(frames[0] >= start);
        assert!(frames.windows(2).all(|w| w[0] <= w[1]));
        for e in r["events"].as_array().unwrap() {
            let fi = e["frame"].as_u64().unwrap() as usize;
            assert_eq!(e["t_ns"].as_u64().unwrap(), frames[fi]);
        }
        assert!(r["end_ns"].as_u64().unwrap() >= *frames.last().unwrap());
        assert!(r["planned_ns"].as_u64().unwrap() <= start);
    }

    let s = read_json(&dir.join("profile_export_aiperf.json"));
    assert_eq!(s["request_count"]["avg"], 20.0);
    // Synthetic prompts have exactly the requested token count, and the simulated server
    // sends exactly max_tokens tokens, so both distributions are degenerate.
    for (tag, v) in [
        ("input_sequence_length", 32.0),
        ("output_sequence_length", 16.0),
    ] {
        assert_eq!(s[tag]["min"], v, "{tag}");
        assert_eq!(s[tag]["max"], v, "{tag}");
    }
    // TTFT cannot be below the server's 2 ms delay.
    assert!(s["time_to_first_token"]["min"].as_f64().unwrap() >= 2.0);
    assert_eq!(s["is_complete"], true);
    assert_eq!(s["was_cancelled"], false);
    let ready = read_json(&dir.join(".aiperf_results_ready.json"));
    assert_eq!(
        ready,
        serde_json::json!({"ready": true, "was_cancelled": false, "partial": false})
    );

    // inputs.json holds the frozen bodies; each asks for 16 tokens and streams with usage.
    let inputs = read_json(&dir.join("inputs.json"));
    let first = &inputs["data"][0]["payloads"][0];
    assert_eq!(first["max_completion_tokens"], 16);
    assert_eq!(first["stream"], true);
    assert_eq!(first["stream_options"]["include_usage"], true);
    assert_eq!(first["ignore_eos"], true);

    // The client's own resources, sampled during the run.
    let res = read_json(&dir.join("inferbench_client_resources.json"));
    assert!(res["samples"].as_array().unwrap().len() >= 2);
    assert!(res["summary"]["rss_max_bytes"].as_u64().unwrap() > 0);
    let m = read_json(&dir.join("inferbench_manifest.json"));
    assert_eq!(m["random_seed"], 7);
    assert!(
        m["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "inferbench_client_resources.json")
    );
    assert_eq!(m["stop_reason"], "completed");
    assert_eq!(m["server"]["kind"], "simulated");
    assert_eq!(m["dataset"]["workload_sha256"].as_str().unwrap().len(), 64);

    // The offline recomputation reproduces the live summary exactly.
    let o = run(&["metrics", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("identical"), "{}", stderr(&o));

    // Rewriting every export from the evidence file alone gives the same bytes as the live
    // run's streamed exports.
    let copy = tmpdir("sim-rewrite");
    crate::common::copy_tree(&dir, &copy);
    let o = run(&["metrics", copy.to_str().unwrap(), "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "profile_export.jsonl",
        "profile_export_aiperf.json",
        "profile_export_aiperf.csv",
        "profile_export_console.txt",
    ] {
        assert!(
            std::fs::read(dir.join(f)).unwrap() == std::fs::read(copy.join(f)).unwrap(),
            "{f} differs when rebuilt from the evidence"
        );
    }
}

#[test]
fn same_seed_gives_byte_identical_requests() {
    let a = tmpdir("seed-a");
    let b = tmpdir("seed-b");
    for d in [&a, &b] {
        let o = run(&[
            "profile",
            "--request-count",
            "10",
            "--isl",
            "40",
            "--osl",
            "8",
            "--random-seed",
            "42",
            "--ui",
            "none",
            "--sim-ttft-ms",
            "0",
            "--sim-itl-ms",
            "0",
            "--artifact-dir",
            d.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(
        std::fs::read(a.join("inputs.json")).unwrap(),
        std::fs::read(b.join("inputs.json")).unwrap()
    );
    let ma = read_json(&a.join("inferbench_manifest.json"));
    let mb = read_json(&b.join("inferbench_manifest.json"));
    assert_eq!(
        ma["dataset"]["workload_sha256"],
        mb["dataset"]["workload_sha256"]
    );
}

#[test]
fn errors_and_cut_streams_from_a_standalone_mock_server_are_records() {
    // The mock fails request k when floor(k·10/100) > floor((k−1)·10/100): k = 10, 20, …, 80
    // (8 HTTP 500s) and cuts k = 13, 33, 53, 73 (4 cut streams). 80 requests → 68 valid.
    let server = MockServer::start(&[
        "--ttft-ms",
        "1",
        "--itl-ms",
        "0.2",
        "--error-rate",
        "10",
        "--cut-rate",
        "5",
    ]);
    let dir = tmpdir("errors");
    let o = run(&[
        "profile",
        "-m",
        "mock-model",
        "-u",
        &server.url,
        "--streaming",
        "--concurrency",
        "4",
        "--request-count",
        "80",
        "--isl",
        "32",
        "--osl",
        "16",
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = evidence_records(&dir);
    assert_eq!(recs.len(), 80);
    let http = recs.iter().filter(|r| r["error"]["kind"] == "http").count();
    let cut = recs
        .iter()
        .filter(|r| r["error"]["kind"] == "transport")
        .count();
    assert_eq!((http, cut), (8, 4));
    let s = read_json(&dir.join("profile_export_aiperf.json"));
    assert_eq!(s["request_count"]["avg"], 68.0);
    assert_eq!(s["error_request_count"]["avg"], 12.0);
    assert_eq!(s["adj_request_latency"]["count"], 80);
    // Every request, failed or not, is a line of profile_export.jsonl.
    let lines = jsonl(&dir.join("profile_export.jsonl"));
    assert_eq!(lines.len(), 80);
    assert_eq!(
        lines.iter().filter(|l| l.get("error").is_some()).count(),
        12
    );
}

#[test]
fn completions_non_streaming_and_raw_export() {
    let dir = tmpdir("completions");
    let o = run(&[
        "profile",
        "--endpoint-type",
        "completions",
        // The simulated server streams by default; this test is about the other path.
        "--no-streaming",
        "--request-count",
        "6",
        "--isl",
        "16",
        "--osl",
        "5",
        "--export-level",
        "raw",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "0",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = read_json(&dir.join("profile_export_aiperf.json"));
    assert_eq!(s["request_count"]["avg"], 6.0);
    assert_eq!(s["output_sequence_length"]["avg"], 5.0);
    // No stream: no token-stream metrics are invented.
    assert!(s.get("time_to_first_token").is_none());
    assert!(s.get("inter_token_latency").is_none());
    let raw = jsonl(&dir.join("profile_export_raw.jsonl"));
    assert_eq!(raw.len(), 6);
    let inputs = read_json(&dir.join("inputs.json"));
    assert!(inputs["data"][0]["payloads"][0]["prompt"].is_string());
}

#[test]
fn secrets_never_reach_an_artifact_or_the_output() {
    let dir = tmpdir("secrets");
    let o = run(&[
        "profile",
        "--request-count",
        "3",
        "--isl",
        "8",
        "--osl",
        "2",
        "--ui",
        "none",
        "--api-key",
        "sk-TOPSECRET-1",
        "-H",
        "X-Api-Token:TOPSECRET-2",
        "--export-level",
        "raw",
        "--sim-ttft-ms",
        "0",
        "--sim-itl-ms",
        "0",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut all = String::from_utf8_lossy(&o.stdout).into_owned() + &stderr(&o);
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
        }
    }
    assert!(!all.contains("TOPSECRET"), "a secret leaked");
    assert!(all.contains("<redacted>"));
}

/// Credentials in the URL, a key and a secret header against a real server, then the offline
/// rewrite of the same directory: nothing written or printed holds any of them.
#[test]
fn url_credentials_and_keys_never_reach_an_artifact_even_after_a_rewrite() {
    let server = common::MockServer::start(&["--ttft-ms", "0", "--itl-ms", "0"]);
    let dir = tmpdir("secrets-url");
    let with_creds = server
        .url
        .replacen("http://", "http://alice:URLSECRET-1@", 1);
    let o = run(&[
        "profile",
        "-m",
        "mock-model",
        "-u",
        &with_creds,
        "--request-count",
        "3",
        "--ui",
        "none",
        "-H",
        "X-Api-Token:TOPSECRET-2",
        "--export-level",
        "raw",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let w = run(&["metrics", dir.to_str().unwrap(), "--write"]);
    assert!(w.status.success(), "{}", stderr(&w));
    let mut all = String::new();
    for out in [&o, &w] {
        all.push_str(&String::from_utf8_lossy(&out.stdout));
        all.push_str(&stderr(out));
    }
    // What the baselines commands write from the run: a ledger packet (the evidence inside
    // it decompressed), the grade and a comparison.
    let out = tmpdir("secrets-url-out");
    let l = out.join("ledger");
    let d = dir.to_str().unwrap();
    let cmds: [Vec<String>; 5] = [
        vec!["ledger".into(), "init".into(), l.display().to_string()],
        vec![
            "ledger".into(),
            "--ledger".into(),
            l.display().to_string(),
            "add".into(),
            d.into(),
        ],
        vec![
            "grade".into(),
            d.into(),
            "--json".into(),
            out.join("g.json").display().to_string(),
        ],
        vec![
            "compare".into(),
            d.into(),
            d.into(),
            "--json".into(),
            out.join("c.json").display().to_string(),
            "--markdown".into(),
            out.join("c.md").display().to_string(),
        ],
        vec![
            "ledger".into(),
            "--ledger".into(),
            l.display().to_string(),
            "show".into(),
        ],
    ];
    for c in &cmds {
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        let r = run(&args);
        assert!(r.status.success(), "{args:?}: {}", stderr(&r));
        all.push_str(&String::from_utf8_lossy(&r.stdout));
        all.push_str(&stderr(&r));
    }
    // A gate over the run, recorded in the ledger, and the bridge report of that ledger.
    let spec = out.join("gate.toml");
    std::fs::write(
        &spec,
        "[gate]\nname = \"g\"\n[[rule]]\nid = \"good\"\nfamily = \"goodput\"\nslo = { request_latency = \"10 s\" }\nmin_fraction = 0.5\n",
    )
    .unwrap();
    let (sp, lp) = (spec.display().to_string(), l.display().to_string());
    let (vj, vm) = (out.join("v.json"), out.join("v.md"));
    let (bj, bm) = (out.join("b.json"), out.join("b.md"));
    let gate = run(&[
        "gate",
        "--spec",
        &sp,
        d,
        "--ledger",
        &lp,
        "--json",
        vj.to_str().unwrap(),
        "--markdown",
        vm.to_str().unwrap(),
    ]);
    // Three requests: PASS or INCONCLUSIVE, never an input error.
    assert!(
        matches!(gate.status.code(), Some(0 | 5)),
        "{}",
        stderr(&gate)
    );
    let bridge = run(&[
        "bridge",
        "report",
        &lp,
        "--json",
        bj.to_str().unwrap(),
        "--markdown",
        bm.to_str().unwrap(),
        "--record",
    ]);
    assert!(bridge.status.success(), "{}", stderr(&bridge));
    // A plan whose profile carries the same credentials in its flags.
    // (Its input file holds the secret; only what the plan writes is searched.)
    let pd = tmpdir("secrets-plan");
    std::fs::write(
        pd.join("plan.toml"),
        format!(
            "[plan]\nname = \"p\"\nledger = \"ledger\"\noutput = \"out\"\n\n[[profile]]\nname = \"regression\"\nkind = \"regression\"\nargs = [\"-m\", \"mock-model\", \"-u\", \"{with_creds}\", \"-H\", \"X-Api-Token:TOPSECRET-2\", \"--ui\", \"none\", \"--concurrency\", \"1\", \"--request-count\", \"3\", \"--isl\", \"8\", \"--osl\", \"4\", \"--extra-inputs\", \"ignore_eos:true\", \"--extra-inputs\", \"min_tokens:4\"]\n"
        ),
    )
    .unwrap();
    let plan = run(&["plan", "run", pd.join("plan.toml").to_str().unwrap()]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    assert!(pd.join("out/plan_result.json").is_file());
    for r in [&gate, &bridge, &plan] {
        all.push_str(&String::from_utf8_lossy(&r.stdout));
        all.push_str(&stderr(r));
    }
    fn walk(p: &std::path::Path, all: &mut String) {
        for e in std::fs::read_dir(p).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, all);
            } else if p.extension().is_some_and(|x| x == "zst") {
                let mut b = Vec::new();
                std::io::Read::read_to_end(
                    &mut inferbench_ledger::packet::open_records(&p).unwrap(),
                    &mut b,
                )
                .unwrap();
                all.push_str(&String::from_utf8_lossy(&b));
            } else {
                all.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
            }
        }
    }
    walk(&dir, &mut all);
    walk(&out, &mut all);
    walk(&pd.join("out"), &mut all);
    walk(&pd.join("ledger"), &mut all);
    assert!(all.contains("sha256:"), "the packet was read");
    for secret in ["URLSECRET", "TOPSECRET", "alice:"] {
        assert!(!all.contains(secret), "{secret} leaked");
    }
    // The credentials did go out, as a Basic Authorization header (shown redacted).
    let raw = jsonl(&dir.join("profile_export_raw.jsonl"));
    assert_eq!(raw[0]["request_headers"]["Authorization"], "<redacted>");
}

#[test]
fn an_unreachable_url_is_one_clear_line_and_no_results() {
    // Bind then drop a listener, so that the port is closed.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tmpdir("unreachable");
    let url = format!("127.0.0.1:{port}");
    let o = run(&[
        "profile",
        "-m",
        "m",
        "-u",
        &url,
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot connect") && err.contains(&url),
        "{err}"
    );
    assert!(!dir.join(".aiperf_results_ready.json").exists());
    assert!(!dir.join("profile_export_aiperf.json").exists());
}

#[test]
fn bad_flags_and_files_are_named() {
    let cases: [(&[&str], &str); 4] = [
        (&["profile", "--concurrency", "abc"], "--concurrency"),
        (
            &["profile", "--tokenizer", "/nonexistent/tok.json"],
            "/nonexistent/tok.json",
        ),
        (&["profile", "--fixed-schedule"], "--fixed-schedule"),
        (&["profile", "--extra-inputs", "nocolon"], "--extra-inputs"),
    ];
    for (args, needle) in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

/// A server that answers every request with 200 and a body that is not OpenAI-shaped.
fn junk_server(body: &'static str, content_type: &'static str) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                let mut seen = Vec::new();
                loop {
                    let n = match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    seen.extend_from_slice(&buf[..n]);
                    // One request = head + Content-Length body; answer and close.
                    let text = String::from_utf8_lossy(&seen).to_string();
                    if let Some(h) = text.find("\r\n\r\n") {
                        let len = text[..h]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if seen.len() >= h + 4 + len {
                            let _ = write!(
                                s,
                                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                                body.len()
                            );
                            return;
                        }
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

#[test]
fn a_response_that_is_not_openai_shaped_fails_clearly() {
    for (body, ct, needle) in [
        (r#"{"foo": 1}"#, "application/json", "OpenAI"),
        ("data: {not json\n\n", "text/event-stream", "JSON"),
    ] {
        let url = junk_server(body, ct);
        let dir = tmpdir("junk");
        let o = run(&[
            "profile",
            "-m",
            "m",
            "-u",
            &url,
            "--streaming",
            "--request-count",
            "3",
            "--isl",
            "8",
            "--ui",
            "none",
            "--artifact-dir",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let err = stderr(&o);
        let last = err.trim().lines().last().unwrap_or("");
        assert!(
            last.contains("every request failed") && last.contains(needle),
            "{err}"
        );
        // The failures are records, with their errors.
        let recs = evidence_records(&dir);
        assert_eq!(recs.len(), 3);
        assert!(recs.iter().all(|r| r["error"]["kind"] == "protocol"));
    }
}

#[test]
fn request_timeout_ends_requests_as_timeout_records() {
    let server = MockServer::start(&["--ttft-ms", "3000", "--itl-ms", "1"]);
    let dir = tmpdir("timeout");
    let o = run(&[
        "profile",
        "-m",
        "mock-model",
        "-u",
        &server.url,
        "--streaming",
        "--concurrency",
        "2",
        "--request-count",
        "2",
        "--isl",
        "8",
        "--osl",
        "4",
        "--request-timeout-seconds",
        "0.3",
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let recs = evidence_records(&dir);
    assert_eq!(recs.len(), 2);
    for r in &recs {
        assert_eq!(r["error"]["kind"], "timeout");
        let dur = r["end_ns"].as_u64().unwrap() - r["start_ns"].as_u64().unwrap();
        assert!(dur >= 300_000_000, "ended after {dur} ns");
    }
}

#[test]
fn ctrl_c_leaves_valid_partial_artifacts() {
    let dir = tmpdir("ctrlc");
    // Once some records are on disk, interrupt twice: stop issuing, then cancel.
    let mut child = start_long_run(&dir);
    send_sigint(child.id());
    std::thread::sleep(Duration::from_millis(30));
    send_sigint(child.id());
    wait_bounded(&mut child, Duration::from_secs(60));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));

    let ready = read_json(&dir.join(".aiperf_results_ready.json"));
    assert_eq!(ready["partial"], true);
    assert_eq!(ready["was_cancelled"], true);
    let s = read_json(&dir.join("profile_export_aiperf.json"));
    assert_eq!(s["is_complete"], false);
    let recs = evidence_records(&dir);
    assert!(!recs.is_empty() && recs.len() < 100_000, "{}", recs.len());
    // Each issued request is one record, ids without gaps.
    let mut ids: Vec<u64> = recs.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, (0..recs.len() as u64).collect::<Vec<_>>());
    // A request cancelled by the second Ctrl-C is a record that says so.
    for r in recs.iter().filter(|r| r["cancelled"] == true) {
        assert_eq!(r["error"]["kind"], "cancelled");
        assert!(r["cancel_ns"].as_u64().unwrap() >= r["start_ns"].as_u64().unwrap());
    }
    let m = read_json(&dir.join("inferbench_manifest.json"));
    assert_eq!(m["stop_reason"], "interrupted");
    assert_eq!(m["partial"], true);
}

fn send_sigint(pid: u32) {
    let _ = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
}

/// Start a long run and wait until some records are on disk.
fn start_long_run(dir: &Path) -> Child {
    let child = bin()
        .args([
            "profile",
            "--streaming",
            "--concurrency",
            "2",
            "--request-count",
            "100000",
            "--isl",
            "8",
            "--osl",
            "50",
            "--ui",
            "none",
            "--sim-ttft-ms",
            "2",
            "--sim-itl-ms",
            "1",
            "--artifact-dir",
            dir.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ev = dir.join("inferbench_evidence.jsonl");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        if std::fs::read_to_string(&ev)
            .map(|t| t.lines().count())
            .unwrap_or(0)
            > 10
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

#[test]
fn a_killed_run_leaves_readable_evidence_that_scores_as_partial() {
    let dir = tmpdir("killed");
    let mut child = start_long_run(&dir);
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    // No results marker, and the manifest written at start says the run never finished.
    assert!(!dir.join(".aiperf_results_ready.json").exists());
    let m = read_json(&dir.join("inferbench_manifest.json"));
    assert_eq!(m["stop_reason"], "unfinished");
    assert_eq!(m["partial"], true);
    // The evidence is readable, and the exports can be rebuilt from it, marked partial.
    let n = evidence_records(&dir).len();
    assert!(n > 0);
    let o = run(&["metrics", dir.to_str().unwrap(), "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("partial"), "{}", stderr(&o));
    let ready = read_json(&dir.join(".aiperf_results_ready.json"));
    assert_eq!(ready["partial"], true);
    let s = read_json(&dir.join("profile_export_aiperf.json"));
    assert_eq!(s["is_complete"], false);
    let completed = s["request_count"]["avg"].as_f64().unwrap()
        + s.get("error_request_count")
            .map_or(0.0, |e| e["avg"].as_f64().unwrap());
    assert_eq!(completed as usize, n);
}

#[test]
fn sigterm_cancels_in_flight_requests_and_writes_partial_artifacts() {
    let dir = tmpdir("sigterm");
    let mut child = start_long_run(&dir);
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    wait_bounded(&mut child, Duration::from_secs(60));
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let ready = read_json(&dir.join(".aiperf_results_ready.json"));
    assert_eq!(ready["partial"], true);
    let m = read_json(&dir.join("inferbench_manifest.json"));
    assert_eq!(m["stop_reason"], "interrupted");
    let recs = evidence_records(&dir);
    let mut ids: Vec<u64> = recs.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, (0..recs.len() as u64).collect::<Vec<_>>());
}

#[test]
fn goodput_counts_requests_meeting_every_slo_with_errors_in_the_denominator() {
    // Every 10th request fails (HTTP 500): 40 requests → 36 valid, 4 errors.
    let server = MockServer::start(&["--ttft-ms", "5", "--itl-ms", "1", "--error-rate", "10"]);
    let dir = tmpdir("goodput");
    let o = run(&[
        "profile",
        "-m",
        "mock-model",
        "-u",
        &server.url,
        "--streaming",
        "--concurrency",
        "4",
        "--request-count",
        "40",
        "--isl",
        "8",
        "--osl",
        "8",
        "--ui",
        "none",
        "--goodput",
        "time_to_first_token:6 inter_token_latency:1.2",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Count by hand from the per-request values.
    let lines = jsonl(&dir.join("profile_export.jsonl"));
    let mut good = 0;
    for l in &lines {
        let m = &l["metrics"];
        if l.get("error").is_some() {
            assert!(m.get("good_request_count").is_none());
            continue;
        }
        let ttft = m["time_to_first_token"]["value"].as_f64().unwrap();
        let itl = m["inter_token_latency"]["value"].as_f64().unwrap();
        let expect = u64::from(ttft <= 6.0 && itl <= 1.2);
        assert_eq!(m["good_request_count"]["value"].as_u64(), Some(expect));
        good += expect;
    }
    let s = read_json(&dir.join("profile_export_aiperf.json"));
    assert_eq!(s["good_request_count"]["avg"].as_f64(), Some(good as f64));
    // The fraction keeps the 4 errors in its denominator: good / 40.
    assert_eq!(
        s["good_request_fraction"]["avg"].as_f64(),
        Some(good as f64 / 40.0)
    );
    assert_eq!(s["good_request_fraction"]["unit"], "ratio");
    // Goodput and request throughput share the window: goodput / good = throughput / valid.
    let goodput = s["goodput"]["avg"].as_f64().unwrap();
    let thr = s["request_throughput"]["avg"].as_f64().unwrap();
    assert!((goodput * 36.0 - thr * good as f64).abs() <= 1e-9 * thr * 36.0);
    let lo = s["good_request_fraction_ci_low"]["avg"].as_f64().unwrap();
    let hi = s["good_request_fraction_ci_high"]["avg"].as_f64().unwrap();
    assert!(lo <= good as f64 / 40.0 && good as f64 / 40.0 <= hi);
    let csv = std::fs::read_to_string(dir.join("profile_export_aiperf.csv")).unwrap();
    assert!(csv.contains("GoodRequestFraction (ratio),"), "{csv}");
    assert!(csv.contains("Goodput (requests/sec),"));
}

#[test]
fn a_bad_goodput_spec_is_named() {
    let o = run(&["profile", "--goodput", "ttft:5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--goodput") && stderr(&o).contains("time_to_first_token"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_failed_request_threshold_cancels_the_run_after_its_grace_floor() {
    // Every other request fails; the threshold 0.3 is armed after max(2, 10) = 10 records.
    let server = MockServer::start(&["--ttft-ms", "2", "--itl-ms", "1", "--error-rate", "50"]);
    let dir = tmpdir("threshold");
    let o = run(&[
        "profile",
        "-m",
        "mock-model",
        "-u",
        &server.url,
        "--streaming",
        "--concurrency",
        "2",
        "--request-count",
        "400",
        "--isl",
        "8",
        "--osl",
        "4",
        "--ui",
        "none",
        "--failed-request-threshold",
        "0.3",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--failed-request-threshold exceeded"),
        "{}",
        stderr(&o)
    );
    let recs = evidence_records(&dir);
    assert!(
        recs.len() >= 10 && recs.len() < 400,
        "{} records",
        recs.len()
    );
    let ready = read_json(&dir.join(".aiperf_results_ready.json"));
    assert_eq!(ready["partial"], true);
    let m = read_json(&dir.join("inferbench_manifest.json"));
    assert_eq!(m["stop_reason"], "failed");
}
