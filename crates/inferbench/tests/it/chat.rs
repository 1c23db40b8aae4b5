//! `inferbench chat` through the binary: `--quick` against the built-in simulated server, the
//! REPL over piped stdin (history on and off, a failing turn), bad URLs, and the API key
//! never printed. Every server here listens on 127.0.0.1 port 0.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::common::{MockServer, bin, stderr, wait_bounded};

/// Runs `inferbench chat ARGS` with `input` on stdin and `env` set (OPENAI_API_KEY cleared
/// unless given), killed after a minute.
fn chat(args: &[&str], input: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = bin();
    cmd.arg("chat")
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn inferbench chat");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let feed = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    wait_bounded(&mut child, Duration::from_secs(60));
    let status = child.wait().unwrap();
    let _ = feed.join();
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The number after `label` on each stdout line that starts with it.
fn values(o: &Output, label: &str) -> Vec<f64> {
    stdout(o)
        .lines()
        .filter_map(|l| l.split_once(label).map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect()
}

#[test]
fn quick_against_the_built_in_server_prints_the_reply_and_its_stats() {
    let o = chat(&["-q", "hello there"], "", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The simulated server sends 16 one-token words when no max_tokens is asked for, and
    // waits 20 ms before the first.
    assert!(out.contains("(16 tokens in "), "{out}");
    let ttft = values(&o, "TTFT: ");
    assert_eq!(ttft.len(), 1, "{out}");
    assert!(ttft[0] >= 19.0, "{out}");
    assert_eq!(values(&o, "ITL:  ").len(), 1, "{out}");
    assert_eq!(values(&o, "ISL:  ").len(), 1, "{out}");
    assert!(!out.contains("> "), "--quick shows no prompt: {out}");
    let err = stderr(&o);
    assert!(err.contains("built-in simulated server"), "{err}");
}

#[test]
fn history_grows_the_prompt_and_no_history_does_not() {
    // The second message is shorter than the first: only history can make its ISL larger.
    let input = "one two three four five six\nseven\n";
    let with = chat(&[], input, &[]);
    assert!(with.status.success(), "{}", stderr(&with));
    let isl = values(&with, "ISL:  ");
    assert_eq!(isl.len(), 2, "{}", stdout(&with));
    assert!(isl[1] > isl[0] + 10.0, "history resent: {isl:?}");

    let without = chat(&["--no-history"], input, &[]);
    assert!(without.status.success(), "{}", stderr(&without));
    let isl = values(&without, "ISL:  ");
    assert_eq!(isl.len(), 2, "{}", stdout(&without));
    assert!(isl[1] < isl[0], "stateless turns: {isl:?}");
    // The prompt, and the end of the session on EOF.
    assert!(stdout(&without).contains("> "), "{}", stdout(&without));
}

/// A server that answers every request with `reply` (an SSE body) and `Connection: close`,
/// keeping each request's head and body.
struct FakeServer {
    url: String,
    seen: Arc<Mutex<Vec<(String, Value)>>>,
}

impl FakeServer {
    fn start(reply: &'static str) -> FakeServer {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let keep = seen.clone();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(s) = s else { break };
                if let Some(req) = answer(s, reply) {
                    keep.lock().unwrap().push(req);
                }
            }
        });
        FakeServer { url, seen }
    }

    fn requests(&self) -> Vec<(String, Value)> {
        self.seen.lock().unwrap().clone()
    }
}

fn answer(s: TcpStream, reply: &str) -> Option<(String, Value)> {
    let mut r = BufReader::new(s.try_clone().ok()?);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    let mut w = s;
    let _ = write!(
        w,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{reply}"
    );
    let _ = w.flush();
    Some((head, serde_json::from_slice(&body).ok()?))
}

const OK_REPLY: &str = "data: {\"choices\":[{\"delta\":{\"content\":\"fine\"}}]}\n\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":3}}}\n\n\
data: [DONE]\n\n";

fn roles_and_texts(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_server_receives_the_history_the_system_prompt_and_the_key() {
    let s = FakeServer::start(OK_REPLY);
    let o = chat(
        &["-u", &s.url, "-m", "m1", "--system-prompt", "be brief"],
        "hi\nagain\n",
        &[("OPENAI_API_KEY", "sk-env-key-1234")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let reqs = s.requests();
    assert_eq!(reqs.len(), 2);
    let (head, body) = &reqs[1];
    assert!(
        head.starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("authorization: bearer sk-env-key-1234"),
        "{head}"
    );
    assert_eq!(body["model"], "m1");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    let pair = |r: &str, t: &str| (r.to_string(), t.to_string());
    assert_eq!(
        roles_and_texts(body),
        [
            pair("system", "be brief"),
            pair("user", "hi"),
            pair("assistant", "fine"),
            pair("user", "again"),
        ]
    );
    // Usage: 3 of 7 prompt tokens cached.
    let out = stdout(&o);
    assert!(
        out.contains("Cache: 3/7 prompt tokens cached (42.9%)"),
        "{out}"
    );
    assert!(!out.contains("sk-env-key-1234") && !stderr(&o).contains("sk-env-key-1234"));

    let s = FakeServer::start(OK_REPLY);
    let o = chat(
        &["-u", &s.url, "-m", "m1", "--no-history"],
        "hi\nagain\n",
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let reqs = s.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        roles_and_texts(&reqs[1].1),
        [("user".to_string(), "again".to_string())]
    );
    assert!(!reqs[1].0.to_ascii_lowercase().contains("authorization"));
}

#[test]
fn url_credentials_go_out_as_basic_auth_and_nowhere_else() {
    let s = FakeServer::start(OK_REPLY);
    let url = s.url.replace("http://", "http://alice:s3cr%40t-pw@");
    let o = chat(&["-u", &url, "-m", "m1", "-q", "hi"], "", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reqs = s.requests();
    assert_eq!(reqs.len(), 1);
    let head = reqs[0].0.to_ascii_lowercase();
    // base64("alice:s3cr@t-pw"), the password percent-decoded.
    assert!(
        head.contains("authorization: basic ywxpy2u6cznjckb0lxb3"),
        "{head}"
    );
    assert!(!head.contains("alice") && !head.contains("s3cr"), "{head}");
    for out in [stdout(&o), stderr(&o)] {
        assert!(!out.contains("s3cr"), "{out}");
    }
    // With --api-key too, two sources of one header: refused by name.
    let o = chat(
        &["-u", &url, "-m", "m1", "--api-key", "k", "-q", "hi"],
        "",
        &[],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--url with user:password@"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("s3cr"), "{}", stderr(&o));
}

#[test]
fn a_port_that_is_no_port_is_refused_naming_it() {
    // It used to go to port 80 without a word (`Uri` reads no u16 from 99999).
    let o = chat(
        &[
            "-u",
            "http://bob:pw-s3cr@localhost:99999",
            "-m",
            "m1",
            "-q",
            "hi",
        ],
        "",
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim(),
        "inferbench: error: --url http://localhost:99999: port 99999 is not a port number (1 to 65535)"
    );
}

#[test]
fn an_http_error_fails_the_turn_and_the_session_goes_on() {
    // Seed 0 at 50 %: the server fails its 2nd request (and every 2nd after it).
    let server = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "0", "--fault", "http-500=50"]);
    let o = chat(&["-u", &server.url, "-m", "mock-model"], "a\nb\nc\n", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let failed: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("request failed: "))
        .collect();
    assert_eq!(failed.len(), 1, "{err}");
    assert!(failed[0].starts_with("request failed: HTTP 500"), "{err}");
    assert!(
        failed[0].contains("simulated failure"),
        "the body's start: {err}"
    );
    assert_eq!(
        values(&o, "TTFT: ").len(),
        2,
        "turns 1 and 3: {}",
        stdout(&o)
    );
}

#[test]
fn quick_fails_with_one_line_and_a_non_zero_exit() {
    let server = MockServer::start(&["--fault", "http-500=100"]);
    let o = chat(
        &["-u", &server.url, "-m", "mock-model", "-q", "hi"],
        "",
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("inferbench: error: request failed: HTTP 500"),
        "{err}"
    );
}

#[test]
fn a_stalled_stream_and_a_mid_stream_error_event_fail_the_turn() {
    let server = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "0", "--fault", "stall=100"]);
    let o = chat(
        &["-u", &server.url, "-m", "mock-model", "-q", "hi"],
        "",
        &[("AIPERF_CHAT_READ_TIMEOUT", "0.5")],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("request failed: the stream stalled"),
        "{}",
        stderr(&o)
    );

    let s = FakeServer::start(
        "data: {\"choices\":[{\"delta\":{\"content\":\"partial\"}}]}\n\n\
         event: error\ndata: {\"message\":\"overloaded\"}\n\n",
    );
    let o = chat(&["-u", &s.url, "-m", "m"], "hi\n", &[]);
    assert!(o.status.success(), "the REPL goes on: {}", stderr(&o));
    assert!(stdout(&o).contains("partial"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains(
            r#"request failed: the server sent an error event: {"message":"overloaded"}"#
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_urls_give_one_line_and_a_non_zero_exit() {
    let o = chat(
        &["-u", "ftp://example.invalid", "-m", "m", "-q", "hi"],
        "",
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--url ftp://example.invalid: only http:// and https://"),
        "{err}"
    );

    // A port nothing listens on: taken from the system, then released.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("127.0.0.1:{port}");
    let o = chat(&["-u", &url, "-m", "m", "-q", "hi"], "", &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("inferbench: error: request failed: cannot connect to"),
        "{err}"
    );

    let o = chat(&["-u", &url], "", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--model: required with --url"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_planted_api_key_is_never_printed() {
    const KEY: &str = "sk-planted-chat-secret-9c41";
    let check = |o: &Output| {
        let all = format!("{}{}", stdout(o), stderr(o));
        assert!(!all.contains(KEY), "{all}");
    };
    // Success, failure, the REPL, and help with the key in the environment.
    check(&chat(&["--api-key", KEY, "-q", "hi"], "", &[]));
    let server = MockServer::start(&["--fault", "http-500=100"]);
    check(&chat(
        &["-u", &server.url, "-m", "x", "--api-key", KEY, "-q", "hi"],
        "",
        &[],
    ));
    check(&chat(
        &["-u", &server.url, "-m", "x"],
        "a\nb\n",
        &[("OPENAI_API_KEY", KEY)],
    ));
    check(&chat(&["--help"], "", &[("OPENAI_API_KEY", KEY)]));
    // A bad header next to the key: the error names the flag, not the value.
    check(&chat(
        &["--api-key", KEY, "-H", "Authorization:Bearer x", "-q", "hi"],
        "",
        &[],
    ));
}

#[test]
fn reasoning_counts_in_the_tokens_and_is_named() {
    // 16 tokens in all (no max_tokens), the first 4 of them reasoning in `reasoning_content`.
    let server = MockServer::start(&["--ttft-ms", "1", "--itl-ms", "0", "--reasoning-tokens", "4"]);
    let o = chat(
        &["-u", &server.url, "-m", "mock-model", "-q", "think"],
        "",
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("(16 tokens, 4 reasoning in "),
        "{}",
        stdout(&o)
    );
}
