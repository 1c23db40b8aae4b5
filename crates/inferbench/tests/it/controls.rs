//! Server controls and extra exports (docs/controls.md): `--wait-for-model-timeout`,
//! `--reset-kv-cache`, `--session-header`, `--export-outputs-json`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{MockServer, bin, evidence_records, jsonl, read_json, run, stderr, tmpdir};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on its own connection; the body.
fn get(url: &str, path: &str) -> String {
    let addr = url.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    raw.split_once("\r\n\r\n").unwrap().1.to_string()
}

/// The simulated server as its own process on a given port (killed when dropped).
struct LateServer(Child);

impl LateServer {
    fn start(port: u16) -> LateServer {
        let mut child = bin()
            .args(["mock-server", "--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mock-server");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let _ = lines.next();
        std::thread::spawn(move || for _ in lines {});
        LateServer(child)
    }
}

impl Drop for LateServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn base_args<'a>(url: &'a str, dir: &'a str) -> Vec<&'a str> {
    vec![
        "profile",
        "-m",
        "mock-model",
        "-u",
        url,
        "--endpoint-type",
        "chat",
        "--request-count",
        "3",
        "--concurrency",
        "1",
        "--isl",
        "8",
        "--osl",
        "4",
        "--random-seed",
        "5",
        "--ui",
        "none",
        "--artifact-dir",
        dir,
    ]
}

#[test]
fn the_run_waits_for_a_server_that_comes_up_late() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let dir = tmpdir("wait-late");
    let (u, d) = (url.clone(), dir.to_str().unwrap().to_string());
    let started = Instant::now();
    let runner = std::thread::spawn(move || {
        let mut a = base_args(&u, &d);
        a.extend([
            "--wait-for-model-timeout",
            "30",
            "--wait-for-model-mode",
            "both",
            "--wait-for-model-interval",
            "0.2",
        ]);
        run(&a)
    });
    // The server comes up 1.5 s after the client started waiting.
    std::thread::sleep(Duration::from_millis(1500));
    let _server = LateServer::start(port);
    let o = runner.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(started.elapsed() >= Duration::from_millis(1500));
    // The probes are not records: exactly the 3 requests of the run.
    assert_eq!(evidence_records(&dir).len(), 3);
    // The server saw the 3 and the one inference probe (both mode: models, then one
    // request); no probe reached it before it was up.
    let stats: serde_json::Value = serde_json::from_str(&get(&url, "/sim/stats")).unwrap();
    assert_eq!(stats["requests"], 4, "{stats}");
}

#[test]
fn a_server_that_never_comes_up_is_one_line_naming_the_url_and_the_mode() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let dir = tmpdir("wait-never");
    let mut a = base_args(&url, dir.to_str().unwrap());
    a.extend([
        "--wait-for-model-timeout",
        "1",
        "--wait-for-model-interval",
        "0.25",
    ]);
    let started = Instant::now();
    let o = run(&a);
    let err = stderr(&o);
    // The unreachable-server code (exit::FAILED).
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--wait-for-model-timeout 1"), "{err}");
    assert!(err.contains(&url), "{err}");
    assert!(err.contains("inference mode"), "{err}");
    assert!(err.contains("/v1/chat/completions"), "{err}");
    // 1 s of waiting at 0.25 s: at least 4 attempts, and it gave up in time.
    let n: u32 = err
        .split(" attempts")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    assert!(n >= 4, "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!dir.join("profile_export_aiperf.json").exists());
}

#[test]
fn the_kv_cache_is_reset_once_per_sweep_cell_and_the_manifest_says_so() {
    let server = MockServer::start(&[]);
    let dir = tmpdir("reset-cells");
    let mut a = base_args(&server.url, dir.to_str().unwrap());
    let i = a.iter().position(|x| *x == "--concurrency").unwrap();
    a[i + 1] = "1,2";
    a.push("--reset-kv-cache");
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let stats: serde_json::Value = serde_json::from_str(&get(&server.url, "/sim/stats")).unwrap();
    assert_eq!(stats["prefix_cache_resets"], 2, "{stats}");
    let manifests: Vec<_> = walk(&dir)
        .into_iter()
        .filter(|p| p.ends_with("inferbench_manifest.json"))
        .collect();
    assert_eq!(manifests.len(), 2, "{manifests:?}");
    for m in manifests {
        let r = &read_json(&m)["server"]["kv_cache_reset"];
        assert_eq!(r["status"], 200, "{r}");
        assert_eq!(r["attempts"], 1);
        assert_eq!(
            r["url"],
            format!("{}/reset_prefix_cache", server.url).as_str()
        );
    }
}

/// Several URLs: the reset goes to every origin (AIPerf resets each replica), and the
/// readiness wait checks every URL, as AIPerf does. Both went to the first URL only.
#[test]
fn every_url_is_reset_and_waited_for() {
    let (a, b) = (MockServer::start(&[]), MockServer::start(&[]));
    let dir = tmpdir("reset-two-urls");
    let mut args = base_args(&a.url, dir.to_str().unwrap());
    args.extend([
        "-u",
        &b.url,
        "--reset-kv-cache",
        "--wait-for-model-timeout",
        "10",
    ]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let stats =
        |url: &str| -> serde_json::Value { serde_json::from_str(&get(url, "/sim/stats")).unwrap() };
    let (sa, sb) = (stats(&a.url), stats(&b.url));
    assert_eq!(sa["prefix_cache_resets"], 1, "{sa}");
    assert_eq!(sb["prefix_cache_resets"], 1, "{sb}");
    // Three requests, round robin (sessions 0 and 2 on the first URL), and one inference
    // probe on each URL.
    assert_eq!(
        (sa["requests"].clone(), sb["requests"].clone()),
        (3.into(), 2.into())
    );
    let server = &read_json(&dir.join("inferbench_manifest.json"))["server"];
    let reset = |url: &str| format!("{url}/reset_prefix_cache");
    assert_eq!(server["kv_cache_reset"]["url"], reset(&a.url).as_str());
    let all: Vec<&str> = server["kv_cache_resets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].as_str().unwrap())
        .collect();
    assert_eq!(all, [reset(&a.url), reset(&b.url)]);
    crate::common::assert_manifest_schema(&read_json(&dir.join("inferbench_manifest.json")));

    // The second URL never up: the wait fails naming it, and nothing is sent.
    let down = format!("http://127.0.0.1:{}", free_port());
    let dir = tmpdir("wait-second-url");
    let mut args = base_args(&a.url, dir.to_str().unwrap());
    args.extend([
        "-u",
        &down,
        "--wait-for-model-timeout",
        "1",
        "--wait-for-model-interval",
        "0.25",
    ]);
    let o = run(&args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("last: POST {down}/v1/chat/completions")),
        "{err}"
    );
    assert!(!dir.join("profile_export_aiperf.json").exists());
}

#[test]
fn a_refused_reset_fails_the_run_before_it_sends_anything() {
    let server = MockServer::start(&[]);
    let dir = tmpdir("reset-404");
    let mut a = base_args(&server.url, dir.to_str().unwrap());
    a.extend(["--reset-kv-cache-path", "/no_such_route"]);
    let o = run(&a);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--reset-kv-cache") && err.contains("/no_such_route") && err.contains("404"),
        "{err}"
    );
    let stats: serde_json::Value = serde_json::from_str(&get(&server.url, "/sim/stats")).unwrap();
    assert_eq!(stats["requests"], 0, "{stats}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A server that answers every request (keep-alive) with a fixed non-streaming chat
/// completion, and keeps every request head it read.
fn recording_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 65536];
                loop {
                    // One request = head + Content-Length body.
                    let Some(h) = find(&buf, b"\r\n\r\n") else {
                        match s.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..h]).to_string();
                    let len = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if buf.len() < h + 4 + len {
                        match s.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    }
                    buf.drain(..h + 4 + len);
                    let body = if head.starts_with("GET /v1/models") {
                        r#"{"object":"list","data":[{"id":"mock-model","object":"model"}]}"#
                    } else {
                        r#"{"id":"x","object":"chat.completion","model":"mock-model","choices":[{"index":0,"message":{"role":"assistant","content":"hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}"#
                    };
                    seen.lock().unwrap().push(head);
                    let _ = write!(
                        s,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                }
            });
        }
    });
    (format!("http://{addr}"), heads)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn the_session_header_replaces_x_correlation_id_on_the_wire() {
    let (url, heads) = recording_server();
    let dir = tmpdir("session-header");
    let mut a = base_args(&url, dir.to_str().unwrap());
    a.extend(["--session-header", "X-Session-ID"]);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let records = evidence_records(&dir);
    let heads = heads.lock().unwrap();
    let posts: Vec<&String> = heads.iter().filter(|h| h.starts_with("POST")).collect();
    assert_eq!(posts.len(), 3, "{heads:?}");
    for (head, r) in posts.iter().zip(&records) {
        let lower = head.to_ascii_lowercase();
        assert!(!lower.contains("x-correlation-id"), "{head}");
        let want = format!(
            "x-session-id: {}",
            r["correlation_id"].as_str().unwrap().to_ascii_lowercase()
        );
        assert!(lower.contains(&want), "{head}\nwanted {want}");
    }
}

#[test]
fn outputs_json_holds_each_profiling_response_and_a_rewrite_gives_the_same_bytes() {
    let dir = tmpdir("outputs-json");
    let d = dir.to_str().unwrap();
    let mut a = vec![
        "profile",
        "-m",
        "mock-model",
        "--endpoint-type",
        "chat",
        "--streaming",
        "--request-count",
        "3",
        "--warmup-request-count",
        "1",
        "--concurrency",
        "1",
        "--isl",
        "8",
        "--osl",
        "5",
        "--random-seed",
        "7",
        "--ui",
        "none",
        "--artifact-dir",
        d,
    ];
    a.push("--export-outputs-json");
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = dir.join("outputs.json");
    let first = std::fs::read(&path).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(v["schema_version"], "1.0");
    let data = v["data"].as_array().unwrap();
    // The 3 profiling requests; the warmup one is not there.
    assert_eq!(data.len(), 3);
    let records = jsonl(&dir.join("profile_export.jsonl"));
    let evidence: Vec<_> = evidence_records(&dir)
        .into_iter()
        .filter(|r| r["phase"] == "profiling")
        .collect();
    assert_eq!(evidence.len(), 3);
    for e in data {
        let rid = e["x_request_id"].as_str().unwrap();
        let rec = records
            .iter()
            .find(|r| r["metadata"]["x_request_id"] == rid)
            .expect("a record of the same request");
        let md = &rec["metadata"];
        for k in [
            "session_num",
            "conversation_id",
            "turn_index",
            "request_start_ns",
            "request_end_ns",
        ] {
            assert_eq!(e[k], md[k], "{k}");
        }
        for k in [
            "output_token_count",
            "output_sequence_length",
            "request_latency",
        ] {
            assert_eq!(e["metrics"][k], rec["metrics"][k]["value"], "{k}");
        }
        assert_eq!(e["metrics"]["output_sequence_length"], 5);
        // The text is what the stream carried, joined.
        let ev = evidence.iter().find(|r| r["request_id"] == rid).unwrap();
        let text: String = ev["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| x["content"].as_str())
            .collect();
        assert!(!text.is_empty());
        assert_eq!(e["response_text"], text.as_str());
    }
    let sessions: Vec<u64> = data
        .iter()
        .map(|e| e["session_num"].as_u64().unwrap())
        .collect();
    let mut sorted = sessions.clone();
    sorted.sort();
    assert_eq!(sessions, sorted);
    let manifest = read_json(&dir.join("inferbench_manifest.json"));
    assert!(
        manifest["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "outputs.json"),
        "{}",
        manifest["files"]
    );
    // Offline, from the evidence alone: the same bytes.
    std::fs::remove_file(&path).unwrap();
    let o = run(&["metrics", d, "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read(&path).unwrap() == first,
        "outputs.json differs after --write"
    );
}
