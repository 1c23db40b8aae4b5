//! Helpers of the end-to-end tests: a server on 127.0.0.1:0 and a tiny raw HTTP/1.1 client
//! that sees chunk arrival times and connection cuts directly.
#![allow(dead_code)] // each test file uses a different subset

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use inferbench_sim::{ReasoningField, SimConfig, SimServer, SimStats};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

pub const WORDS: [&str; 8] = [" the", " and", " to", " of", " you", " my", " a", " that"];
/// Bound on every test: the server is local, so anything slower is a hang.
pub const LIMIT: Duration = Duration::from_secs(20);

pub fn cfg() -> SimConfig {
    SimConfig {
        ttft: Duration::ZERO,
        itl: Duration::ZERO,
        tokens_per_chunk: 1,
        role_first_chunk: false,
        reasoning_tokens: 0,
        reasoning_field: ReasoningField::ReasoningContent,
        error_rate: 0.0,
        cut_rate: 0.0,
        seed: 0,
        model: "sim-model".to_owned(),
        default_output_tokens: 5,
        words: Arc::new(WORDS.iter().map(|w| (*w).to_owned()).collect()),
        answers: None,
        serving: Default::default(),
    }
}

pub async fn start(cfg: SimConfig) -> SimServer {
    SimServer::start(cfg, "127.0.0.1:0".parse().unwrap())
        .await
        .expect("server starts")
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// SSE `data:` payloads with the instant each was fully received.
    pub events: Vec<(Instant, String)>,
    /// The body ended properly (terminating chunk or full Content-Length).
    pub complete: bool,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
    /// The JSON events (everything but `[DONE]`).
    pub fn chunks(&self) -> Vec<Value> {
        self.events
            .iter()
            .filter(|(_, d)| d != "[DONE]")
            .map(|(_, d)| serde_json::from_str(d).expect("JSON event"))
            .collect()
    }
    pub fn done(&self) -> bool {
        self.events.last().is_some_and(|(_, d)| d == "[DONE]")
    }
}

/// A minimal HTTP/1.1 client: one request at a time on a keep-alive connection.
pub struct Client {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    pub async fn connect(addr: SocketAddr) -> Client {
        let s = TcpStream::connect(addr).await.expect("connect");
        s.set_nodelay(true).unwrap();
        Client { s, buf: Vec::new() }
    }

    pub async fn send(&mut self, method: &str, path: &str, body: &str) -> Instant {
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let t = Instant::now();
        self.s
            .write_all(req.as_bytes())
            .await
            .expect("write request");
        t
    }

    /// Reads more bytes; false at EOF or on a reset.
    pub async fn fill(&mut self) -> bool {
        let mut tmp = [0u8; 16384];
        match self.s.read(&mut tmp).await {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&tmp[..n]);
                true
            }
        }
    }

    pub async fn line(&mut self) -> Option<String> {
        loop {
            if let Some(p) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let l = String::from_utf8(self.buf[..p].to_vec()).unwrap();
                self.buf.drain(..p + 2);
                return Some(l);
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    pub async fn take(&mut self, n: usize) -> Option<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill().await {
                return None;
            }
        }
        Some(self.buf.drain(..n).collect())
    }

    pub async fn response(&mut self) -> Resp {
        let status_line = self.line().await.expect("status line");
        let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut headers = Vec::new();
        loop {
            let l = self.line().await.expect("header line");
            if l.is_empty() {
                break;
            }
            let (n, v) = l.split_once(':').unwrap();
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
        let mut r = Resp {
            status,
            headers,
            body: Vec::new(),
            events: Vec::new(),
            complete: false,
        };
        if r.header("transfer-encoding") == Some("chunked") {
            let mut pending = Vec::new();
            loop {
                let Some(size) = self.line().await else { break };
                let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
                if size == 0 {
                    r.complete = self.line().await.is_some();
                    break;
                }
                let Some(data) = self.take(size + 2).await else {
                    break;
                };
                let now = Instant::now();
                r.body.extend_from_slice(&data[..size]);
                pending.extend_from_slice(&data[..size]);
                while let Some(p) = pending.windows(2).position(|w| w == b"\n\n") {
                    let ev = String::from_utf8(pending[..p].to_vec()).unwrap();
                    pending.drain(..p + 2);
                    let payload = ev.strip_prefix("data: ").expect("SSE data line");
                    r.events.push((now, payload.to_owned()));
                }
            }
        } else {
            let n: usize = r.header("content-length").unwrap().parse().unwrap();
            if let Some(b) = self.take(n).await {
                r.body = b;
                r.complete = true;
            }
        }
        r
    }

    pub async fn call(&mut self, method: &str, path: &str, body: &str) -> Resp {
        self.send(method, path, body).await;
        self.response().await
    }
}

pub async fn call(addr: SocketAddr, method: &str, path: &str, body: &str) -> Resp {
    Client::connect(addr).await.call(method, path, body).await
}

/// Waits (briefly) for a stream's counters to be committed, which happens as its body ends.
pub async fn stats_when(server: &SimServer, pred: impl Fn(&SimStats) -> bool) -> SimStats {
    let t = Instant::now();
    loop {
        let s = server.stats();
        if pred(&s) || t.elapsed() > Duration::from_secs(2) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

pub fn delta_text(c: &Value, key: &str) -> Option<String> {
    c["choices"][0]["delta"][key].as_str().map(str::to_owned)
}

/// Checks that `tokens` continue the word cycle from wherever it started.
pub fn assert_cycles(tokens: &[String]) {
    let start = WORDS
        .iter()
        .position(|w| *w == tokens[0])
        .expect("a known word");
    for (i, t) in tokens.iter().enumerate() {
        assert_eq!(t, WORDS[(start + i) % WORDS.len()], "token {i}");
    }
}

pub fn split_tokens(text: &str) -> Vec<String> {
    // Every word starts with a space, so the first piece of the split is empty.
    text.split(' ').skip(1).map(|w| format!(" {w}")).collect()
}
