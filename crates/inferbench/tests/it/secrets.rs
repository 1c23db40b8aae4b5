//! Secrets planted through every route (the key by flag and by environment, `--header` in
//! each spelling, `-H` attached, a JSON header object, URL credentials with and without a
//! scheme, metrics-target credentials, secret header names such as `X-Authorization` and
//! `Password`) never reach a file, stdout or stderr: every file under each output directory
//! is read, recursively, with the ledger packet's evidence decompressed. A mock that records
//! the heads it got and answers 401 without the expected headers proves they were sent, the
//! `/v1/models` probe included (the manifest's server identity is filled).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{bin, read_json, run, stderr, tmpdir, wait_bounded};

/// One request as the mock saw it: method, path and headers (names lower-cased).
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == &name.to_ascii_lowercase())
            .map(|(_, v)| v.as_str())
    }
}

/// An OpenAI-compatible server on 127.0.0.1:0 (non-streaming chat and `/v1/models`) that
/// answers 401 unless every required header has its value, and records every request head.
struct AuthMock {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

const MODELS: &str =
    r#"{"object":"list","data":[{"id":"probe-saw-auth","object":"model","owned_by":"t"}]}"#;
const CHAT: &str = r#"{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello world"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#;

impl AuthMock {
    fn start(required: &[(&str, &str)]) -> AuthMock {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let required: Vec<(String, String)> = required
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let s = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                let (s, required) = (s.clone(), required.clone());
                std::thread::spawn(move || serve(conn, &s, &required));
            }
        });
        AuthMock { url, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Requests on one keep-alive connection until the client closes it.
fn serve(conn: TcpStream, seen: &Mutex<Vec<Seen>>, required: &[(String, String)]) {
    conn.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let mut w = conn.try_clone().unwrap();
    let mut r = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let path = parts.next().unwrap_or_default().to_string();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((n, v)) = h.split_once(':') {
                headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let req = Seen {
            method,
            path,
            headers,
        };
        let len: usize = req
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0u8; len];
        if r.read_exact(&mut body).is_err() {
            return;
        }
        let authorized = required
            .iter()
            .all(|(n, v)| req.header(n) == Some(v.as_str()));
        let (status, text) = if !authorized {
            ("401 Unauthorized", r#"{"error":"unauthorized"}"#)
        } else if req.path.ends_with("/v1/models") {
            ("200 OK", MODELS)
        } else if req.path.ends_with("/metrics") {
            // A Prometheus counter, so that the server-metrics exports are written (and
            // grepped) with each target's URL in them.
            (
                "200 OK",
                "# TYPE vllm:num_requests counter\nvllm:num_requests_total 1\n",
            )
        } else {
            ("200 OK", CHAT)
        };
        seen.lock().unwrap().push(req);
        let resp = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
            text.len()
        );
        if w.write_all(resp.as_bytes()).is_err() {
            return;
        }
    }
}

/// Run the binary with extra environment variables, bounded like `common::run`.
fn run_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = bin();
    cmd.args(args)
        .env_remove("INFERBENCH_API_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn inferbench");
    wait_bounded(&mut child, Duration::from_secs(120));
    child.wait_with_output().expect("output")
}

/// Everything a command printed.
fn printed(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &stderr(o)
}

/// Every file under `dir`, recursively, as text (a ledger packet's `.zst` evidence read
/// through the ledger's own reader).
fn every_file(dir: &Path, all: &mut String, files: &mut usize) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            every_file(&p, all, files);
            continue;
        }
        *files += 1;
        if p.extension().is_some_and(|x| x == "zst") {
            let mut b = Vec::new();
            inferbench_ledger::packet::open_records(&p)
                .unwrap()
                .read_to_end(&mut b)
                .unwrap();
            all.push_str(&String::from_utf8_lossy(&b));
        } else {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
        }
    }
}

/// Every run directory under `dir` (each sweep cell has its own manifest).
fn run_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if dir.join("inferbench_manifest.json").is_file() {
        out.push(dir.to_path_buf());
    }
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(run_dirs(&p));
        }
    }
    out.sort();
    out
}

/// Standard base64, to name the Basic credential the mock expects (RFC 4648).
fn b64(s: &str) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = s.as_bytes();
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(A[(n >> (18 - 6 * k)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Checks every run directory's manifest and the mock's log: each request and the probe
/// carried `expected`, the probe's answer was recorded, and every chat request was answered.
fn assert_sent(mock: &AuthMock, dir: &Path, expected: &[(&str, &str)], chats: usize) {
    let seen = mock.seen();
    let probes = seen
        .iter()
        .filter(|r| r.path.ends_with("/v1/models"))
        .count();
    let posts = seen.iter().filter(|r| r.method == "POST").count();
    assert!(probes >= 1, "no probe: {seen:?}");
    assert_eq!(posts, chats, "{seen:?}");
    for r in &seen {
        // The default server-metrics scrape of the URL's /metrics is the same server: it
        // carries the run's secret headers, and only those (docs/secrets.md).
        if r.path.ends_with("/metrics") {
            for (n, v) in expected {
                let secret = inferbench_core::plan::is_sensitive_header(n);
                let want = secret.then_some(*v);
                assert_eq!(r.header(n), want, "{} {}: {n}", r.method, r.path);
            }
            continue;
        }
        for (n, v) in expected {
            assert_eq!(r.header(n), Some(*v), "{} {}: {n}", r.method, r.path);
        }
        // The Host header is the bare authority: no credentials in it.
        let host = r.header("host").unwrap();
        assert!(!host.contains('@'), "{host}");
        assert!(mock.url.ends_with(host), "{host}");
    }
    let dirs = run_dirs(dir);
    assert!(!dirs.is_empty());
    for d in dirs {
        let m = read_json(&d.join("inferbench_manifest.json"));
        assert_eq!(
            m["server"]["models_response"]["data"][0]["id"],
            "probe-saw-auth",
            "{}",
            d.display()
        );
    }
}

#[test]
fn secrets_from_every_route_reach_the_server_and_no_file() {
    // Distinct, random-looking values, one per route.
    let user = "alice-u7q2";
    let url_pw = "URLPW-7f3a9c";
    let x_auth = "XAUTH-b81d2e";
    let passwd = "PASSWD-5c0e77";
    let token = "TOKEN-e4a190";
    let key_header = "APIKEYH-93bd01";
    let session = "SESSION-2f6a88";
    let metrics_pw = "METRICPW-aa71c3";
    let gpu_pw = "GPUPW-6d2b90";
    let basic = format!("Basic {}", b64(&format!("{user}:{url_pw}")));
    let expected: Vec<(&str, &str)> = vec![
        ("Authorization", basic.as_str()),
        ("X-Authorization", x_auth),
        ("Password", passwd),
        ("X-My-Token", token),
        ("X-Api-Key", key_header),
        ("X-Session", session),
        ("X-Trace", "plain-visible-31"),
    ];
    let mock = AuthMock::start(&expected);
    let with_creds = mock
        .url
        .replacen("http://", &format!("http://{user}:{url_pw}@"), 1);
    let dir = tmpdir("secrets-routes");
    let d = dir.to_str().unwrap().to_string();
    let x_auth_arg = format!("--header=X-Authorization:{x_auth}");
    let passwd_arg = format!("-HPassword:{passwd}");
    let token_arg = format!("-H=X-My-Token:{token}");
    let key_arg = format!("X-Api-Key:{key_header}");
    let session_arg = format!(r#"{{"X-Session": "{session}"}}"#);
    // A metrics target of its own with credentials (Basic from them, nothing of the run's),
    // and one on another origin without any (nothing at all).
    let own = AuthMock::start(&[]);
    let other = AuthMock::start(&[]);
    let metrics_arg = own
        .url
        .replacen("http://", &format!("http://bob:{metrics_pw}@"), 1)
        + "/metrics";
    let other_arg = format!("{}/metrics", other.url);
    let gpu_arg = format!("carol:{gpu_pw}@127.0.0.1:1");
    let flags: Vec<&str> = vec![
        "-m",
        "m",
        "-u",
        &with_creds,
        &x_auth_arg,
        &passwd_arg,
        &token_arg,
        "--header",
        &key_arg,
        "-H",
        &session_arg,
        "-H",
        "X-Trace:plain-visible-31",
        "--server-metrics",
        &metrics_arg,
        "--server-metrics",
        &other_arg,
        // Every server-metrics file, the per-scrape JSON Lines one included, is grepped.
        "--server-metrics-formats",
        "json,csv,jsonl",
        "--gpu-telemetry",
        &gpu_arg,
        "--isl",
        "8",
        "--osl",
        "2",
        "--ui",
        "none",
    ];
    // A sweep: two cells, four requests each, each after a one-request warmup (so the
    // per-phase files are grepped too) and between the server profiler's start and stop
    // POSTs (which carry the run's headers, and whose answers the manifest records).
    let mut args = vec!["profile"];
    args.extend(&flags);
    args.extend([
        "--warmup-request-count",
        "1",
        "--server-profiler",
        "--concurrency",
        "1,2",
        "--request-count",
        "4",
        "--export-level",
        "raw",
        // The timeslice files are among the files grepped.
        "--slice-duration",
        "0.5",
        "--artifact-dir",
        &d,
    ]);
    let o = run_env(&args, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Per cell: 1 warmup + 4 profiling chats, a start and a stop POST.
    assert_sent(&mock, &dir, &expected, 2 * (1 + 4 + 2));
    for c in run_dirs(&dir) {
        assert!(c.join("phase_manifest.json").is_file(), "{}", c.display());
        assert!(
            c.join("server_metrics_export.jsonl").is_file(),
            "{}",
            c.display()
        );
    }
    let metrics_basic = format!("Basic {}", b64(&format!("bob:{metrics_pw}")));
    for (target, auth) in [(&own, Some(metrics_basic.as_str())), (&other, None)] {
        let seen = target.seen();
        assert!(!seen.is_empty(), "{} was not scraped", target.url);
        for r in &seen {
            assert_eq!(r.header("authorization"), auth, "{}", target.url);
            for (n, _) in &expected[1..] {
                assert_eq!(r.header(n), None, "{} got {n}", target.url);
            }
        }
    }
    let mut all = printed(&o);

    // The offline rewrite of a cell, a ledger packet made from it, and `inspect`.
    let cells = run_dirs(&dir);
    assert_eq!(cells.len(), 2, "{cells:?}");
    let cell = cells[0].to_str().unwrap();
    assert!(
        cells[0]
            .join("profile_export_aiperf_timeslices.json")
            .is_file()
    );
    let out = tmpdir("secrets-routes-out");
    let l = out.join("ledger");
    let l = l.to_str().unwrap();
    let plots = out.join("plots");
    for c in [
        vec!["metrics", cell, "--write"],
        vec!["plot", cell, "--out-dir", plots.to_str().unwrap()],
        vec!["ledger", "init", l],
        vec!["ledger", "--ledger", l, "add", cell],
        vec!["ledger", "--ledger", l, "show"],
    ] {
        let r = run_env(&c, &[]);
        assert!(r.status.success(), "{c:?}: {}", stderr(&r));
        all.push_str(&printed(&r));
    }
    let mut inspect = vec!["inspect"];
    inspect.extend(&flags);
    let r = run_env(&inspect, &[]);
    assert!(r.status.success(), "inspect: {}", stderr(&r));
    all.push_str(&printed(&r));
    // The sweep's POSTs and the one inspect sent, each with every header.
    assert_sent(&mock, &dir, &expected, 2 * (1 + 4 + 2) + 1);

    let mut files = 0;
    every_file(&dir, &mut all, &mut files);
    every_file(&out, &mut all, &mut files);
    assert!(files > 10, "{files} files");
    assert!(all.contains("sha256:"), "the ledger packet was read");
    // Plain values are not redacted wholesale: the plain header is in the files.
    assert!(all.contains("plain-visible-31"));
    assert!(all.contains("<redacted>"));
    let b64_creds = b64(&format!("{user}:{url_pw}"));
    for s in [
        user,
        url_pw,
        x_auth,
        passwd,
        token,
        key_header,
        session,
        metrics_pw,
        "bob:",
        metrics_basic.as_str(),
        gpu_pw,
        "carol:",
        b64_creds.as_str(),
    ] {
        assert!(!all.contains(s), "{s} leaked");
    }
}

#[test]
fn the_api_key_from_the_environment_and_the_flag_reach_the_server_and_no_file() {
    for (via_env, key) in [(true, "ENVKEY-41c9de"), (false, "FLAGKEY-0b7f52")] {
        let bearer = format!("Bearer {key}");
        let expected = [("Authorization", bearer.as_str())];
        let mock = AuthMock::start(&expected);
        let dir = tmpdir("secrets-key");
        let key_flag = format!("--api-key={key}");
        let mut args = vec![
            "profile",
            "-m",
            "m",
            "-u",
            &mock.url,
            "--request-count",
            "3",
            "--ui",
            "none",
            "--export-level",
            "raw",
            "--artifact-dir",
            dir.to_str().unwrap(),
        ];
        let env: Vec<(&str, &str)> = if via_env {
            vec![("INFERBENCH_API_KEY", key)]
        } else {
            args.push(&key_flag);
            vec![]
        };
        let o = run_env(&args, &env);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_sent(&mock, &dir, &expected, 3);
        let w = run_env(&["metrics", dir.to_str().unwrap(), "--write"], &[]);
        assert!(w.status.success(), "{}", stderr(&w));
        let mut all = printed(&o) + &printed(&w);
        let mut files = 0;
        every_file(&dir, &mut all, &mut files);
        assert!(!all.contains(key), "{key} leaked");
        let raw = crate::common::jsonl(&dir.join("profile_export_raw.jsonl"));
        assert_eq!(raw[0]["request_headers"]["Authorization"], "<redacted>");
        // Listed once, in wire order (last: it is a configured header).
        let names: Vec<&String> = raw[0]["request_headers"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(
            names
                .iter()
                .filter(|n| n.eq_ignore_ascii_case("authorization"))
                .count(),
            1
        );
    }
}

#[test]
fn refused_combinations_and_bad_urls_never_echo_a_secret() {
    for args in [
        vec![
            "profile",
            "--api-key",
            "KEYC-1",
            "-H",
            "Authorization:Bearer HDRC-2",
        ],
        vec![
            "profile",
            "-m",
            "m",
            "-u",
            "http://u:URLC-3@127.0.0.1:9",
            "--api-key=KEYC-1",
        ],
        vec![
            "profile",
            "-m",
            "m",
            "-u",
            "u:URLC-3@127.0.0.1:9",
            "-HAuthorization:HDRC-2",
        ],
        vec!["profile", "-m", "m", "-u", "ftp://u:URLC-3@h"],
    ] {
        let o = run_env(&args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let text = printed(&o);
        assert_eq!(text.trim().lines().count(), 1, "{text}");
        for s in ["KEYC-1", "HDRC-2", "URLC-3"] {
            assert!(!text.contains(s), "{s} in {text}");
        }
    }
}

#[test]
fn config_expand_never_prints_a_secret_of_the_yaml() {
    let dir = tmpdir("secrets-config");
    let f = dir.join("c.yaml");
    std::fs::write(
        &f,
        "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  endpoint:\n    url: http://yamluser:YAMLPW-71@127.0.0.1:1\n    apiKey: YAMLKEY-72\n    headers:\n      Authorization: Bearer YAMLTOK-73\n      X-Plain: visible-74\n  dataset:\n    type: synthetic\n    entries: 4\n    prompts:\n      isl: 8\n      osl: 2\n  phases:\n    type: concurrency\n    concurrency: 1\n    requests: 4\n",
    )
    .unwrap();
    let o = run(&["config", "expand", f.to_str().unwrap()]);
    let all = printed(&o);
    assert!(all.contains("cell 1"), "{all}");
    assert!(all.contains("visible-74"), "{all}");
    for s in ["YAMLPW-71", "YAMLKEY-72", "YAMLTOK-73", "yamluser"] {
        assert!(!all.contains(s), "{s} leaked: {all}");
    }
    // A file the schema rejects (no dataset, a bad phase) names the place, not the value.
    let yaml = std::fs::read_to_string(&f).unwrap();
    std::fs::write(
        &f,
        yaml.replace("    concurrency: 1\n", "    concurrency: many\n"),
    )
    .unwrap();
    for cmd in ["validate", "expand"] {
        let o = run(&["config", cmd, f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let all = printed(&o);
        assert!(
            all.contains("not valid against AIPerf 0.13's schema"),
            "{all}"
        );
        for s in ["YAMLPW-71", "YAMLKEY-72", "YAMLTOK-73", "yamluser"] {
            assert!(!all.contains(s), "config {cmd}: {s} leaked: {all}");
        }
    }
}

/// URL credentials in a comma list of URLs (AIPerf's `-u A,B` form): both servers get them
/// as Basic auth, and no file or printed line holds the password.
#[test]
fn credentials_in_a_comma_list_of_urls_reach_both_servers_and_no_file() {
    let pw = "COMMAPW-41c9e0";
    let basic = format!("Basic {}", b64(&format!("dave:{pw}")));
    let expected = [("Authorization", basic.as_str())];
    let (a, b) = (AuthMock::start(&expected), AuthMock::start(&expected));
    let cred = |u: &str| u.replacen("http://", &format!("http://dave:{pw}@"), 1);
    let list = format!("{},{}", cred(&a.url), cred(&b.url));
    let dir = tmpdir("secrets-comma-urls");
    let o = run_env(
        &[
            "profile",
            "-m",
            "m",
            "-u",
            &list,
            "--request-count",
            "4",
            "--isl",
            "8",
            "--osl",
            "2",
            "--export-level",
            "raw",
            "--export-http-trace",
            "--ui",
            "simple",
            "--artifact-dir",
            dir.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", printed(&o));
    // Round robin: two requests each, all carrying the credentials.
    assert_sent(&a, &dir, &expected, 2);
    assert_sent(&b, &dir, &expected, 2);
    let (mut all, mut files) = (printed(&o), 0);
    every_file(&dir, &mut all, &mut files);
    assert!(files > 5, "{files}");
    assert!(
        !all.contains(pw),
        "the password reached a file or the console"
    );
}
