//! The turns of `inferbench chat` (AIPerf 0.13's `aiperf chat`; docs/chat.md): one streamed
//! chat-completions request per user message, its text handed to a callback as it arrives,
//! and the turn's stats under the same definitions as `profile`. Nothing here prints: the
//! binary reads the messages and prints what comes back.
//!
//! The request goes over the project's own transport (reads stamped as the engine stamps
//! them), its stream through the project's SSE parser and `chat` response decoder.

mod stats;
mod url;

pub use stats::{TurnStats, cached_prompt_tokens, prompt_tokens, stats_lines, turn_stats};
pub use url::chat_completions_url;

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http_body_util::BodyExt;
use inferbench_client::Clock;
use inferbench_client::decode::{self, Decoder};
use inferbench_client::headers::{ConfiguredHeader, USER_AGENT};
use inferbench_client::sse::{SseMessage, SseParser};
use inferbench_client::transport::{self, Conn, TimedBody, error_chain};
use inferbench_core::plan::EndpointType;
use inferbench_core::{Event, Record, TokenCounts};
use inferbench_workload::Tokenizer;
use serde::Serialize;
use serde_json::Value;

/// AIPerf's `AIPERF_CHAT_CONNECT_TIMEOUT` default: an unreachable URL fails fast.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// AIPerf's `AIPERF_CHAT_READ_TIMEOUT` default: the longest wait for the response head or the
/// next piece of the body. There is no cap on the whole reply, so a long one is never cut.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(300);
/// How much of an error response's body a failed turn quotes (AIPerf's bound).
pub const ERROR_BODY_CHARS: usize = 500;

/// One message of the conversation, as sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Message {
    fn new(role: &str, content: &str) -> Message {
        Message {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// What a turn sends: the system prompt, the history (kept only with history on), the new
/// user message.
#[derive(Clone, Debug, Default)]
pub struct Conversation {
    system: Option<Message>,
    history: Vec<Message>,
    keep_history: bool,
}

impl Conversation {
    /// An empty system prompt is none, as in AIPerf.
    pub fn new(system_prompt: Option<&str>, keep_history: bool) -> Conversation {
        Conversation {
            system: system_prompt
                .filter(|s| !s.is_empty())
                .map(|s| Message::new("system", s)),
            history: Vec::new(),
            keep_history,
        }
    }

    /// The messages of the turn that sends `user`.
    pub fn messages(&self, user: &str) -> Vec<Message> {
        let mut m: Vec<Message> = self.system.iter().cloned().collect();
        m.extend(self.history.iter().cloned());
        m.push(Message::new("user", user));
        m
    }

    /// After a successful turn: with history on, its user message and reply are resent with
    /// every later turn. A failed turn is not remembered (the user may retry it).
    pub fn remember(&mut self, user: &str, reply: &str) {
        if self.keep_history {
            self.history.push(Message::new("user", user));
            self.history.push(Message::new("assistant", reply));
        }
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }
}

/// A piece of the reply, as it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delta<'a> {
    Reasoning(&'a str),
    Content(&'a str),
}

/// A finished turn.
#[derive(Clone, Debug)]
pub struct TurnResult {
    /// What history keeps as the assistant's message: the content, or the reasoning when the
    /// reply had no content (so that a reasoning-only reply is not an empty message). The
    /// reasoning of a reply with content is not resent, as chat APIs replay turns.
    pub reply: String,
    pub stats: TurnStats,
    /// The last non-empty usage object of the stream, as sent.
    pub usage: Option<Value>,
}

/// Where and how the turns go.
#[derive(Clone, Debug)]
pub struct ChatTarget {
    /// The chat-completions URL ([`chat_completions_url`]).
    pub url: String,
    pub model: String,
    /// Sent with every request after ours: the API key's `Authorization`, each `--header`.
    pub headers: Vec<ConfiguredHeader>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
}

/// A chat client: one HTTP/1.1 connection, kept across turns while the server keeps it (as
/// AIPerf's pooled session does), and opened again when it was closed.
pub struct ChatClient {
    target: ChatTarget,
    transport: transport::Target,
    clock: Clock,
    conn: Option<Conn>,
    decoder: Decoder,
}

/// Why a wait ended without its result.
enum Waited {
    TimedOut,
}

/// Waits for `fut` while driving the connection in the same task (as the engine does, so
/// that a frame's read stamp is that of the read that completed it), for at most `limit`.
async fn drive<F: Future>(
    io: &mut (impl Future + Unpin),
    done: &mut bool,
    limit: Duration,
    fut: F,
) -> Result<F::Output, Waited> {
    let timer = tokio::time::sleep(limit);
    tokio::pin!(timer);
    tokio::pin!(fut);
    loop {
        tokio::select! {
            biased;
            _ = &mut *io, if !*done => *done = true,
            r = &mut fut => return Ok(r),
            _ = &mut timer => return Err(Waited::TimedOut),
        }
    }
}

impl ChatClient {
    pub fn new(target: ChatTarget) -> Result<ChatClient, String> {
        let uri: hyper::Uri = target
            .url
            .parse()
            .map_err(|e| format!("--url {}: not a valid URL: {e}", target.url))?;
        Ok(ChatClient {
            transport: transport::Target::from_uri(&uri),
            target,
            clock: Clock::start(),
            conn: None,
            decoder: Decoder::plain(EndpointType::Chat),
        })
    }

    pub fn target(&self) -> &ChatTarget {
        &self.target
    }

    /// The request body: AIPerf's fields, in its order.
    pub fn body(&self, messages: &[Message]) -> Bytes {
        let v = serde_json::json!({
            "messages": messages,
            "model": self.target.model,
            "stream": true,
            // The trailing usage chunk gives the ISL and cache lines; the reply is the same.
            "stream_options": {"include_usage": true},
        });
        Bytes::from(serde_json::to_vec(&v).expect("a JSON value serializes"))
    }

    fn request(&self, body: Bytes) -> Result<hyper::Request<TimedBody>, String> {
        let t = &self.transport;
        let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut req = hyper::Request::post(t.path.clone())
            .header(header::HOST, t.host_header.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::USER_AGENT, USER_AGENT)
            .header(header::ACCEPT, "text/event-stream")
            .body(TimedBody::new(body, self.clock, sent))
            .map_err(|e| e.to_string())?;
        for h in &self.target.headers {
            let name = HeaderName::from_bytes(h.name().as_bytes())
                .map_err(|_| format!("--header: invalid name {:?}", h.name()))?;
            let mut value = HeaderValue::from_str(h.value())
                .map_err(|_| format!("--header {}: invalid value", h.name()))?;
            value.set_sensitive(h.sensitive());
            req.headers_mut().insert(name, value);
        }
        Ok(req)
    }

    async fn connect(&mut self) -> Result<(), String> {
        let at = &self.target.url;
        match tokio::time::timeout(
            self.target.connect_timeout,
            transport::connect(&self.transport, self.clock),
        )
        .await
        {
            Ok(Ok(c)) => {
                self.conn = Some(c);
                Ok(())
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(format!(
                "cannot connect to {at}: no connection within {:?}",
                self.target.connect_timeout
            )),
        }
    }

    /// One turn: `messages` sent, the reply streamed to `on_delta` (reasoning before content
    /// within a chunk, as AIPerf prints them), its tokens counted with `tok`. An error is one
    /// line: an HTTP status with the start of its body, a connection that failed or was cut,
    /// no data within the read timeout, or an error the stream itself reported.
    pub async fn turn(
        &mut self,
        messages: &[Message],
        tok: &Tokenizer,
        on_delta: &mut dyn FnMut(Delta<'_>),
    ) -> Result<TurnResult, String> {
        let body = self.body(messages);
        let request_bytes = body.len() as u64;
        let read_timeout = self.target.read_timeout;
        // The start is taken before the connection is opened (AIPerf starts its clock before
        // the POST, whose connection comes from the pool or is opened then).
        let start_ns = self.clock.now_ns();
        let mut reused = self
            .conn
            .as_ref()
            .is_some_and(|c| !c.done && !c.sender.is_closed());
        if !reused {
            self.conn = None;
            self.connect().await?;
        }
        let resp = loop {
            let req = self.request(body.clone())?;
            let Conn {
                sender, io, done, ..
            } = self.conn.as_mut().expect("connected above");
            let sent = match drive(io, done, read_timeout, async {
                sender.ready().await?;
                sender.send_request(req).await
            })
            .await
            {
                Ok(r) => r,
                Err(Waited::TimedOut) => {
                    self.conn = None;
                    return Err(format!("no response within {read_timeout:?}"));
                }
            };
            match sent {
                Ok(r) => break r,
                // A kept connection the server had closed meanwhile: once more, on a new one.
                Err(_) if reused => {
                    reused = false;
                    self.conn = None;
                    self.connect().await?;
                }
                Err(e) => {
                    self.conn = None;
                    return Err(error_chain(&e));
                }
            }
        };
        let status = resp.status();
        let Conn {
            io, done, stamp, ..
        } = self.conn.as_mut().expect("connected above");
        let clock = self.clock;
        // A frame's time is that of the socket read that completed it, never before the start.
        let stamp_now = || {
            stamp
                .get()
                .map_or_else(|| clock.now_ns(), |t| t.max(start_ns))
        };
        let mut body = resp.into_body();
        if !status.is_success() {
            let mut text = Vec::new();
            // The body is only quoted: its start is enough. A body not read to its end leaves
            // the connection unusable for the next turn.
            loop {
                match drive(io, done, read_timeout, body.frame()).await {
                    Ok(Some(Ok(f))) => {
                        if let Ok(d) = f.into_data() {
                            text.extend_from_slice(&d);
                        }
                        if text.len() > 4 * ERROR_BODY_CHARS {
                            *done = true;
                            break;
                        }
                    }
                    Ok(None) => break,
                    _ => {
                        *done = true;
                        break;
                    }
                }
            }
            return Err(http_error(status, &String::from_utf8_lossy(&text)));
        }
        let mut rec = Record {
            streaming: true,
            start_ns,
            status: Some(status.as_u16()),
            request_bytes,
            model: Some(self.target.model.clone()),
            ..Default::default()
        };
        let mut parser = SseParser::new();
        let mut msgs: Vec<SseMessage> = Vec::new();
        let mut stream = self.decoder.stream();
        let (mut content, mut reasoning) = (String::new(), String::new());
        let mut usage: Option<Value> = None;
        loop {
            let frame = match drive(io, done, read_timeout, body.frame()).await {
                Ok(f) => f,
                Err(Waited::TimedOut) => {
                    *done = true;
                    return Err(format!("the stream stalled: nothing for {read_timeout:?}"));
                }
            };
            let t = stamp_now();
            let data = match frame {
                None => {
                    rec.end_ns = t;
                    break;
                }
                Some(Err(e)) => {
                    *done = true;
                    return Err(format!("the response was cut: {}", error_chain(&e)));
                }
                Some(Ok(f)) => match f.into_data() {
                    Ok(d) => d,
                    Err(_) => continue,
                },
            };
            parser.push(&data, &mut msgs);
            for m in msgs.drain(..) {
                if m.event
                    .as_deref()
                    .is_some_and(|e| e.eq_ignore_ascii_case("error"))
                {
                    *done = true;
                    return Err(format!(
                        "the server sent an error event: {}",
                        bounded(&m.data)
                    ));
                }
                if decode::is_done(&m.data) {
                    continue;
                }
                // Keep-alives and frames that are not JSON are skipped, as AIPerf skips them.
                let Ok(d) = stream.message(m.event.as_deref(), &m.data) else {
                    continue;
                };
                if let Some(e) = d.error {
                    *done = true;
                    return Err(format!("the server reported an error: {}", bounded(&e)));
                }
                if let Some(u) = d.usage.filter(non_empty_usage) {
                    usage = Some(u);
                }
                let r = d.reasoning.filter(|s| !s.is_empty());
                let c = d.content.filter(|s| !s.is_empty());
                if r.is_none() && c.is_none() {
                    continue;
                }
                if let Some(r) = &r {
                    on_delta(Delta::Reasoning(r));
                    reasoning.push_str(r);
                }
                if let Some(c) = &c {
                    on_delta(Delta::Content(c));
                    content.push_str(c);
                }
                rec.events.push(Event {
                    t_ns: t,
                    content: c,
                    reasoning: r,
                    ..Default::default()
                });
            }
        }
        // The usage rides on an event of its own, after the text: it moves no timing.
        if let Some(u) = &usage {
            rec.events.push(Event {
                t_ns: rec.end_ns,
                usage: Some(u.clone()),
                ..Default::default()
            });
        }
        // The content and the reasoning are each joined, then encoded once (profile's way).
        rec.tokens = TokenCounts {
            input: usage.as_ref().and_then(prompt_tokens),
            output: Some(tok.count(&content) as u64),
            reasoning: (!reasoning.is_empty()).then(|| tok.count(&reasoning) as u64),
        };
        let stats = turn_stats(&rec, usage.as_ref());
        let reply = if content.is_empty() {
            reasoning
        } else {
            content
        };
        Ok(TurnResult {
            reply,
            stats,
            usage,
        })
    }
}

/// `usage: {}` is as good as none (AIPerf keeps only a truthy usage).
fn non_empty_usage(u: &Value) -> bool {
    u.as_object().is_some_and(|o| !o.is_empty())
}

/// At most [`ERROR_BODY_CHARS`] characters, on one line, trimmed.
fn bounded(s: &str) -> String {
    let one_line: String = s
        .trim()
        .chars()
        .take(ERROR_BODY_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    one_line.trim_end().to_string()
}

/// `HTTP 404 Not Found: <the start of the body>`.
fn http_error(status: http::StatusCode, body: &str) -> String {
    let mut s = format!("HTTP {}", status.as_u16());
    if let Some(reason) = status.canonical_reason() {
        s.push(' ');
        s.push_str(reason);
    }
    let detail = bounded(body);
    if !detail.is_empty() {
        s.push_str(": ");
        s.push_str(&detail);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_is_kept_and_resent_only_when_asked() {
        let mut on = Conversation::new(Some("be brief"), true);
        on.remember("hi", "hello");
        let m = on.messages("and?");
        let roles: Vec<&str> = m.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert_eq!(m[1].content, "hi");
        assert_eq!(m[2].content, "hello");
        assert_eq!(m[3].content, "and?");

        let mut off = Conversation::new(Some(""), false);
        off.remember("hi", "hello");
        assert_eq!(off.messages("and?"), [Message::new("user", "and?")]);
        assert!(off.history().is_empty());
    }

    #[test]
    fn the_body_has_aiperfs_fields_in_its_order() {
        let c = ChatClient::new(ChatTarget {
            url: "http://127.0.0.1:9/v1/chat/completions".into(),
            model: "m".into(),
            headers: Vec::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            read_timeout: DEFAULT_READ_TIMEOUT,
        })
        .unwrap();
        let b = c.body(&[Message::new("user", "hi")]);
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"messages":[{"role":"user","content":"hi"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}"#
        );
    }

    #[test]
    fn an_http_error_quotes_a_bounded_single_line_of_its_body() {
        assert_eq!(
            http_error(http::StatusCode::NOT_FOUND, "  no such model\n  'x'\n"),
            "HTTP 404 Not Found: no such model   'x'"
        );
        assert_eq!(
            http_error(http::StatusCode::INTERNAL_SERVER_ERROR, ""),
            "HTTP 500 Internal Server Error"
        );
        let long = "é".repeat(2000);
        let e = http_error(http::StatusCode::BAD_REQUEST, &long);
        assert_eq!(e.chars().count(), "HTTP 400 Bad Request: ".len() + 500);
    }
}
