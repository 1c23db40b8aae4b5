//! The simulated server's serving model through the binary: `mock-server`'s capacity, GPU and
//! fault flags, its `/metrics` and `/dcgm/metrics` pages read by hand, the generation-token
//! counter against the usage of a real `profile` run's records, and `profile --sim-*`.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{MockServer, evidence_records, run, stderr, tmpdir};

/// One HTTP/1.1 exchange on its own connection (`Connection: close`, read to the end).
fn http(url: &str, method: &str, path: &str, body: &str) -> (String, String) {
    let addr = url.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: sim\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.to_owned(), body.to_owned())
}

/// The page's sample lines named `name` whose labels hold every `with`, summed (the value is
/// the last token of the line; the body may be chunked, so chunk-size lines never match).
fn sum(page: &str, name: &str, with: &[&str]) -> f64 {
    let mut total = 0.0;
    let mut seen = false;
    for line in page.lines().filter(|l| !l.starts_with('#')) {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let (n, labels) = series.split_once('{').unwrap_or((series, ""));
        if n == name && with.iter().all(|w| labels.contains(w)) {
            total += value.parse::<f64>().unwrap();
            seen = true;
        }
    }
    assert!(seen, "no {name} {with:?} in\n{page}");
    total
}

fn metrics(url: &str) -> String {
    let (head, body) = http(url, "GET", "/metrics", "");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    body
}

/// `usage.completion_tokens` summed over a run's records (the last usage of each).
fn reported_completion_tokens(dir: &Path) -> u64 {
    evidence_records(dir)
        .iter()
        .map(|r| {
            r["events"]
                .as_array()
                .unwrap()
                .iter()
                .rev()
                .find_map(|e| e["usage"]["completion_tokens"].as_u64())
                .unwrap_or_else(|| panic!("a record without usage: {r}"))
        })
        .sum()
}

fn profile(url: &str, dir: &Path, extra: &[&str]) {
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "profile",
        "-m",
        "mock-model",
        "-u",
        url,
        "--endpoint-type",
        "chat",
        "--request-count",
        "24",
        "--concurrency",
        "4",
        "--isl",
        "16",
        "--osl",
        "9",
        "--random-seed",
        "3",
        "--ui",
        "none",
        "--artifact-dir",
        d,
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_generation_counter_grows_by_the_completion_tokens_of_a_runs_records() {
    let server = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "0"]);
    for (name, extra) in [
        ("streamed", &["--streaming"][..]),
        ("unary", &[][..]),
        // Output lengths drawn per request, so the sum is not a product.
        ("varied", &["--streaming", "--osl-stddev", "4"][..]),
    ] {
        let before = sum(&metrics(&server.url), "vllm:generation_tokens_total", &[]);
        let dir = tmpdir(&format!("sim-gen-{name}"));
        profile(&server.url, &dir, extra);
        let after = sum(&metrics(&server.url), "vllm:generation_tokens_total", &[]);
        let reported = reported_completion_tokens(&dir);
        assert!(reported > 0);
        assert_eq!(after - before, reported as f64, "{name}");
    }
}

#[test]
fn mock_server_flags_set_the_capacity_the_gpus_and_the_reset() {
    let server = MockServer::start(&[
        "--max-running",
        "1",
        "--ttft-ms",
        "0",
        "--itl-ms",
        "60",
        "--gpus",
        "2",
        "--metrics-reset-after",
        "3",
    ]);
    let started = Instant::now();
    let body = r#"{"model":"m","messages":[{"role":"user","content":"a b"}],"max_tokens":4,"stream":true}"#;
    let clients: Vec<_> = (0..3)
        .map(|_| {
            let url = server.url.clone();
            std::thread::spawn(move || http(&url, "POST", "/v1/chat/completions", body))
        })
        .collect();
    // Each request runs 3 × 60 ms; while one runs, the other two wait.
    let t = Instant::now();
    let (running, waiting) = loop {
        let m = metrics(&server.url);
        let rw = (
            sum(&m, "vllm:num_requests_running", &[]),
            sum(&m, "vllm:num_requests_waiting", &[]),
        );
        if rw == (1.0, 2.0) || t.elapsed() > Duration::from_millis(150) {
            break rw;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    assert_eq!((running, waiting), (1.0, 2.0));
    let (_, gpus) = http(&server.url, "GET", "/dcgm/metrics", "");
    // One running of one slot: full load on both GPUs.
    for g in ["gpu=\"0\",", "gpu=\"1\","] {
        assert_eq!(sum(&gpus, "DCGM_FI_DEV_GPU_UTIL", &[g]), 100.0);
        assert_eq!(sum(&gpus, "DCGM_FI_DEV_POWER_USAGE", &[g]), 85.0);
    }
    assert!(gpus.contains("UUID=\"GPU-00000000-0000-0000-0000-000000000001\""));
    for c in clients {
        let (head, _) = c.join().unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    }
    let m = metrics(&server.url);
    assert_eq!(sum(&m, "vllm:generation_tokens_total", &[]), 12.0);
    assert_eq!(sum(&m, "vllm:request_queue_time_seconds_count", &[]), 3.0);
    // The third waited for two 180 ms runs, the second for one: at least 540 ms in all.
    assert!(sum(&m, "vllm:request_queue_time_seconds_sum", &[]) >= 0.5);
    let created = sum(&m, "vllm:generation_tokens_created", &[]);
    // After the reset (3 s from the first token, sent right after start), everything from
    // zero, and a new start time.
    if let Some(rest) = Duration::from_millis(3300).checked_sub(started.elapsed()) {
        std::thread::sleep(rest);
    }
    let m = metrics(&server.url);
    assert_eq!(sum(&m, "vllm:generation_tokens_total", &[]), 0.0);
    assert_eq!(sum(&m, "vllm:request_queue_time_seconds_count", &[]), 0.0);
    assert!(sum(&m, "vllm:generation_tokens_created", &[]) > created);
}

#[test]
fn bad_serving_flags_are_one_line_errors_naming_the_flag() {
    for (flag, value, says) in [
        ("--max-running", "0", "--max-running 0"),
        ("--gpus", "0", "--gpus 0"),
        ("--gpus", "65", "--gpus 65"),
        ("--decode-tokens-per-s", "-1", "--decode-tokens-per-s -1"),
        ("--prefill-us-per-token", "-2", "--prefill-us-per-token -2"),
        ("--metrics-reset-after", "0", "--metrics-reset-after 0"),
    ] {
        let arg = format!("{flag}={value}");
        let o = run(&["mock-server", "--port", "0", &arg]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(says), "{flag} {value}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn profile_sim_flags_reach_the_built_in_server() {
    // One slot, three clients: each request holds it 5 ms + 3 × 2 ms = 11 ms, so the one
    // that waits for two others has a TTFT of at least 22 ms + 5 ms.
    let dir = tmpdir("sim-profile-capacity");
    let d = dir.to_str().unwrap();
    let o = run(&[
        "profile",
        "--streaming",
        "--request-count",
        "9",
        "--concurrency",
        "3",
        "--isl",
        "8",
        "--osl",
        "4",
        "--extra-inputs",
        "ignore_eos:true",
        "--random-seed",
        "2",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "5",
        "--sim-itl-ms",
        "2",
        "--sim-max-running",
        "1",
        "--artifact-dir",
        d,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ttft_ms: Vec<f64> = evidence_records(&dir)
        .iter()
        .map(|r| {
            let first = r["events"][0]["t_ns"].as_u64().unwrap();
            (first - r["sent_ns"].as_u64().unwrap()) as f64 / 1e6
        })
        .collect();
    let max = ttft_ms.iter().cloned().fold(0.0, f64::max);
    assert!(max >= 27.0, "{ttft_ms:?}");
    // The same flag with a URL is refused.
    let o = run(&[
        "profile",
        "-m",
        "m",
        "-u",
        "http://127.0.0.1:9",
        "--sim-max-running",
        "2",
        "--request-count",
        "1",
        "--ui",
        "none",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not with --url"), "{}", stderr(&o));
}
