//! The fault matrix (docs/faults.md): a profile run against `mock-server` with each fault;
//! every scheduled request is exactly one record with the expected error, and nothing else
//! fails. Then connections the server closes, the resend rule, and a server restart.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{MockServer, bin, evidence_records, jsonl, stderr, tmpdir, wait_bounded};

/// A profile run against `url`: streaming chat, `count` requests, `extra` flags; the child is
/// killed (and the test fails) if it has not finished in a minute.
fn profile(url: &str, dir: &Path, count: u64, concurrency: u64, extra: &[&str]) -> Vec<Value> {
    let count_s = count.to_string();
    let conc = concurrency.to_string();
    let mut child = bin()
        .args([
            "profile",
            "-m",
            "mock-model",
            "-u",
            url,
            "--streaming",
            "--concurrency",
            &conc,
            "--request-count",
            &count_s,
            "--isl",
            "8",
            "--osl",
            "6",
            "--ui",
            "none",
            "--artifact-dir",
            dir.to_str().unwrap(),
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn profile");
    wait_bounded(&mut child, Duration::from_secs(60));
    let out = child.wait_with_output().unwrap();
    // Finished by itself: 0, or 1 when its records say the run failed; never killed.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}: {}",
        out.status,
        stderr(&out)
    );
    let recs = evidence_records(dir);
    // Every scheduled request is exactly one record, in the evidence and in the export.
    let mut ids: Vec<u64> = recs.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, (0..count).collect::<Vec<_>>(), "{}", stderr(&out));
    assert_eq!(jsonl(&dir.join("profile_export.jsonl")).len() as u64, count);
    recs
}

fn failed(recs: &[Value]) -> Vec<&Value> {
    recs.iter().filter(|r| !r["error"].is_null()).collect()
}

fn has_event(r: &Value, kind: &str) -> bool {
    r["events"]
        .as_array()
        .is_some_and(|e| e.iter().any(|e| e["kind"] == kind))
}

fn has_usage(r: &Value) -> bool {
    r["events"]
        .as_array()
        .is_some_and(|e| e.iter().any(|e| !e["usage"].is_null()))
}

/// One fault at 25 %: of 24 consecutive arrivals exactly 6 are hit (floor(24·25/100), for
/// any seed phase), and none of these faults leads to a resend (each either answers with a
/// status or sends bytes first), so the 24 requests are the server's 24 arrivals.
fn matrix_case(fault: &str, extra: &[&str]) -> (Vec<Value>, usize) {
    let f = format!("{fault}=25");
    let server = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "1", "--fault", &f]);
    let dir = tmpdir(&format!("fault-{fault}"));
    let recs = profile(&server.url, &dir, 24, 4, extra);
    (recs, 6)
}

fn assert_errors(recs: &[Value], n: usize, kind: &str, ty: &str) {
    let bad = failed(recs);
    assert_eq!(bad.len(), n, "{bad:#?}");
    for r in bad {
        assert_eq!(r["error"]["kind"], kind, "{r}");
        assert_eq!(r["error"]["type"], ty, "{r}");
    }
}

#[test]
fn status_faults_are_http_errors() {
    for (fault, code) in [("http-500", 500), ("http-429", 429)] {
        let (recs, n) = matrix_case(fault, &[]);
        assert_errors(&recs, n, "http", "HTTPError");
        for r in failed(&recs) {
            assert_eq!(r["error"]["code"], code);
        }
    }
}

#[test]
fn broken_streams_are_typed_errors() {
    let (recs, n) = matrix_case("cut-mid-event", &[]);
    assert_errors(&recs, n, "transport", "ResponsePayloadError");
    let (recs, n) = matrix_case("reset", &[]);
    assert_errors(&recs, n, "transport", "ResponsePayloadError");
    let (recs, n) = matrix_case("malformed-json", &[]);
    assert_errors(&recs, n, "protocol", "InvalidResponse");
    // A stall (head and two frames, then nothing) ends at the request timeout.
    let (recs, n) = matrix_case("stall", &["--request-timeout-seconds", "1"]);
    assert_errors(&recs, n, "timeout", "RequestTimeout");
    for r in failed(&recs) {
        let d = r["end_ns"].as_u64().unwrap() - r["start_ns"].as_u64().unwrap();
        assert!(d >= 1_000_000_000, "{d}");
    }
}

#[test]
fn harmless_faults_fail_nothing() {
    let (recs, n) = matrix_case("no-done", &[]);
    assert_errors(&recs, 0, "", "");
    assert_eq!(recs.iter().filter(|r| !has_event(r, "done")).count(), n);
    let (recs, n) = matrix_case("no-usage", &[]);
    assert_errors(&recs, 0, "", "");
    assert_eq!(recs.iter().filter(|r| !has_usage(r)).count(), n);
    let (recs, n) = matrix_case("slow-head", &[]);
    assert_errors(&recs, 0, "", "");
    let slow = recs
        .iter()
        .filter(|r| r["ack_ns"].as_u64().unwrap() - r["start_ns"].as_u64().unwrap() >= 300_000_000)
        .count();
    assert_eq!(slow, n);
    let (recs, _) = matrix_case("trickle", &[]);
    assert_errors(&recs, 0, "", "");
}

fn conn(r: &Value) -> (u64, bool, u64) {
    let c = &r["connection"];
    (
        c["id"].as_u64().unwrap(),
        c["reused"].as_bool().unwrap(),
        c["reconnects"].as_u64().unwrap_or(0),
    )
}

fn by_id(mut recs: Vec<Value>) -> Vec<Value> {
    recs.sort_by_key(|r| r["id"].as_u64().unwrap());
    recs
}

/// llama.cpp's way: closed after every response while advertising keep-alive. The FIN comes
/// with the response's last bytes, so the idle check sees every close before the next
/// request: 40 fresh connections, none reused, no resend.
#[test]
fn close_after_response_all_succeed_without_resends() {
    let server = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "1", "--close-after-response"]);
    let dir = tmpdir("close-after");
    let recs = by_id(profile(&server.url, &dir, 40, 1, &[]));
    assert_errors(&recs, 0, "", "");
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(conn(r), (i as u64, false, 0), "{}", r["connection"]);
    }
}

/// `drop` at 50 % with seed 0 hits even arrivals. At concurrency 1: request 0 is arrival 1
/// (kept) on a fresh connection; every later request goes out on the reused connection as
/// an even arrival (dropped, no byte), is resent once on a fresh connection as the next odd
/// arrival, and succeeds: reconnects 0, then 1 × 9; the server saw 1 + 2 × 9 = 19 requests.
#[test]
fn a_dropped_reused_connection_is_resent_once() {
    let server = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "1", "--fault", "drop=50"]);
    let dir = tmpdir("drop-resend");
    let recs = by_id(profile(&server.url, &dir, 10, 1, &[]));
    assert_errors(&recs, 0, "", "");
    assert_eq!(conn(&recs[0]), (0, false, 0));
    for (i, r) in recs.iter().enumerate().skip(1) {
        assert_eq!(conn(r), (i as u64, false, 1), "{}", r["connection"]);
    }
    assert_eq!(sim_requests(&server.url), 19);
}

/// A fresh connection's failure stands (drop at 100 %), and an HTTP status on a reused
/// connection is the server's answer (500 at 100 %): neither is resent.
#[test]
fn the_resend_never_hides_a_server_error() {
    let server = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "1", "--fault", "drop=100"]);
    let dir = tmpdir("drop-all");
    let recs = by_id(profile(&server.url, &dir, 6, 1, &[]));
    assert_errors(&recs, 6, "transport", "TransportError");
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(conn(r), (i as u64, false, 0), "{}", r["connection"]);
    }
    assert_eq!(sim_requests(&server.url), 6);

    let server = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "1", "--fault", "http-500=100"]);
    let dir = tmpdir("500-reused");
    let recs = by_id(profile(&server.url, &dir, 6, 1, &[]));
    assert_errors(&recs, 6, "http", "HTTPError");
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(conn(r), (0, i > 0, 0), "{}", r["connection"]);
    }
    assert_eq!(sim_requests(&server.url), 6);
}

/// `never`: a fresh connection per request; `sticky-user-sessions` with single-turn
/// conversations: also one per request (each conversation's last turn closes it); `pooled`:
/// one connection per slot.
#[test]
fn reuse_strategies() {
    let server = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    for (strategy, fresh) in [
        ("never", true),
        ("sticky-user-sessions", true),
        ("pooled", false),
    ] {
        let dir = tmpdir(&format!("reuse-{strategy}"));
        let recs = by_id(profile(
            &server.url,
            &dir,
            8,
            1,
            &["--connection-reuse-strategy", strategy],
        ));
        assert_errors(&recs, 0, "", "");
        for (i, r) in recs.iter().enumerate() {
            let want = if fresh {
                (i as u64, false, 0)
            } else {
                (0, i > 0, 0)
            };
            assert_eq!(conn(r), want, "{strategy}: {}", r["connection"]);
        }
    }
}

/// The server is killed mid-run and a new one starts on the same port: requests during the
/// gap fail as transport errors, later ones succeed, and the run goes on to the end.
#[test]
fn server_killed_and_restarted_mid_run() {
    let mut first = spawn_mock("0");
    let url = read_url(&mut first);
    let port = url.rsplit(':').next().unwrap().to_string();
    let dir = tmpdir("restart");
    let mut run = bin()
        .args([
            "profile",
            "-m",
            "mock-model",
            "-u",
            &url,
            "--streaming",
            "--request-rate",
            "20",
            "--request-count",
            "120",
            "--isl",
            "8",
            "--osl",
            "4",
            "--ui",
            "none",
            "--artifact-dir",
            dir.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed once a few records are on disk (the run is under way).
    let start = Instant::now();
    while records_on_disk(&dir) < 5 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the run did not start"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = first.kill();
    let _ = first.wait();
    std::thread::sleep(Duration::from_millis(300));
    let mut second = spawn_mock(&port);
    let _ = read_url(&mut second);
    // The moment the new server listens (its first line), on the wall clock.
    let back_unix_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    wait_bounded(&mut run, Duration::from_secs(60));
    let out = run.wait_with_output().unwrap();
    let _ = second.kill();
    let _ = second.wait();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let recs = by_id(evidence_records(&dir));
    assert_eq!(recs.len(), 120);
    let anchor = crate::common::evidence_lines(&dir)[0]["anchor_unix_ns"]
        .as_u64()
        .unwrap();
    let back_ns = back_unix_ns.saturating_sub(anchor);
    let bad = failed(&recs);
    assert!(!bad.is_empty(), "the gap failed nothing");
    for r in &bad {
        assert_eq!(r["error"]["kind"], "transport", "{r}");
    }
    // The run went on: every request started after the new server was listening was
    // answered (on a new connection: the old ones died with the first server).
    let after: Vec<&Value> = recs
        .iter()
        .filter(|r| r["start_ns"].as_u64().unwrap() > back_ns)
        .collect();
    assert!(
        after.len() >= 3,
        "only {} requests after the restart",
        after.len()
    );
    for r in after {
        assert!(r["error"].is_null(), "{r}");
    }
}

fn records_on_disk(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("inferbench_evidence.jsonl"))
        .map(|t| {
            t.lines()
                .filter(|l| l.contains("\"line\":\"record\""))
                .count()
        })
        .unwrap_or(0)
}

fn spawn_mock(port: &str) -> Child {
    bin()
        .args([
            "mock-server",
            "--port",
            port,
            "--ttft-ms",
            "1",
            "--itl-ms",
            "1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn read_url(c: &mut Child) -> String {
    let mut lines = BufReader::new(c.stderr.take().unwrap()).lines();
    let line = lines.next().unwrap().unwrap();
    std::thread::spawn(move || for _ in lines {});
    line.split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string()
}

/// The server's count of inference requests (`GET /sim/stats`).
fn sim_requests(url: &str) -> u64 {
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /sim/stats HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let start = Instant::now();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    assert!(start.elapsed() < Duration::from_secs(5));
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"));
    v["requests"].as_u64().unwrap()
}

/// Several kinds at once share the arrivals out (docs/faults.md): `--error-rate 25` takes 6
/// of 24 arrivals, then http-429 and reset take 6 each of the rest, none on one request; they
/// used to hit the same arrivals at seed 0, the first listed winning, so only the 500s showed.
#[test]
fn several_faults_at_once_each_take_their_share() {
    let server = MockServer::start(&[
        "--ttft-ms",
        "1",
        "--itl-ms",
        "1",
        "--error-rate",
        "25",
        "--fault",
        "http-429=25",
        "--fault",
        "reset=25",
    ]);
    let dir = tmpdir("fault-several");
    let recs = profile(&server.url, &dir, 24, 4, &[]);
    let bad = failed(&recs);
    let count = |pred: &dyn Fn(&Value) -> bool| bad.iter().filter(|r| pred(r)).count();
    assert_eq!(count(&|r| r["error"]["code"] == 500), 6, "{bad:#?}");
    assert_eq!(count(&|r| r["error"]["code"] == 429), 6, "{bad:#?}");
    assert_eq!(
        count(&|r| r["error"]["type"] == "ResponsePayloadError"),
        6,
        "{bad:#?}"
    );
    assert_eq!(bad.len(), 18, "{bad:#?}");
}

#[test]
fn fault_percentages_over_100_are_one_line_errors() {
    let o = bin()
        .args([
            "mock-server",
            "--port",
            "0",
            "--error-rate",
            "60",
            "--fault",
            "reset=50",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("the fault percentages (error_rate and every fault) add up to 110, over 100"),
        "{e}"
    );
    // The built-in server's flags: an input error before any set-up, no run directory.
    let dir = tmpdir("fault-over-100").join("run");
    let o = bin()
        .args([
            "profile",
            "--sim-error-rate",
            "60",
            "--sim-fault",
            "reset=50",
        ])
        .args(["--request-count", "4", "--ui", "none", "--artifact-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("--sim-* options: the fault percentages"), "{e}");
    assert!(!dir.exists());
}
