//! Byte-level JSON rendering of responses. The word texts are JSON-escaped once at start-up and
//! each response's constant head (`{"id":...,"model":...,"choices":[`) once per request, so
//! a chunk is a handful of `memcpy`s into a reusable buffer with no serde on the hot path.

use std::ops::Range;

use bytes::{BufMut, BytesMut};

use crate::request::Endpoint;

/// The token texts, JSON-escaped (without quotes) and laid end to end.
pub(crate) struct Words {
    text: Vec<u8>,
    spans: Vec<(usize, usize)>,
    max_len: usize,
}

impl Words {
    pub(crate) fn new(words: &[String]) -> Words {
        let mut text = Vec::new();
        let mut spans = Vec::with_capacity(words.len());
        let mut max_len = 0;
        for w in words {
            let start = text.len();
            push_json_str_body(&mut text, w);
            spans.push((start, text.len()));
            max_len = max_len.max(text.len() - start);
        }
        Words {
            text,
            spans,
            max_len,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Longest escaped word, for buffer sizing.
    pub(crate) fn max_len(&self) -> usize {
        self.max_len
    }

    /// Appends the escaped texts of output tokens `range`, for a cycle starting at `offset`.
    pub(crate) fn push(&self, out: &mut BytesMut, offset: usize, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        let mut idx = (offset + range.start) % self.spans.len();
        for _ in range {
            let (s, e) = self.spans[idx];
            out.put_slice(&self.text[s..e]);
            idx += 1;
            if idx == self.spans.len() {
                idx = 0;
            }
        }
    }
}

/// Appends `s` JSON-escaped, without the surrounding quotes.
fn push_json_str_body(out: &mut Vec<u8>, s: &str) {
    // serde_json's escaping is the reference; strip the quotes it adds.
    let quoted = serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""));
    out.extend_from_slice(&quoted.as_bytes()[1..quoted.len() - 1]);
}

/// Appends `s` as a quoted JSON string.
pub(crate) fn push_json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    push_json_str_body(out, s);
    out.push(b'"');
}

pub(crate) fn push_u64(out: &mut impl BufMut, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.put_slice(&buf[i..]);
}

/// The constant start of every JSON object of one response:
/// `{"id":"<id>","object":"<object>","created":<created>,"model":<model>,"choices":[`.
/// `model_json` is already a quoted JSON string.
pub(crate) fn head(
    id: &str,
    id_num: Option<u64>,
    object: &str,
    created: u64,
    model_json: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + model_json.len());
    out.extend_from_slice(b"{\"id\":\"");
    out.extend_from_slice(id.as_bytes());
    if let Some(n) = id_num {
        push_u64(&mut out, n);
    }
    out.extend_from_slice(b"\",\"object\":\"");
    out.extend_from_slice(object.as_bytes());
    out.extend_from_slice(b"\",\"created\":");
    push_u64(&mut out, created);
    out.extend_from_slice(b",\"model\":");
    out.extend_from_slice(model_json);
    out.extend_from_slice(b",\"choices\":[");
    out
}

/// What one response contains, fixed at arrival.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    pub endpoint: Endpoint,
    /// Index of the first word of the cycle.
    pub offset: usize,
    /// Output tokens, reasoning included.
    pub tokens: usize,
    /// Leading tokens that are reasoning (chat only; `<= tokens`).
    pub reasoning: usize,
    pub finish: &'static str,
    pub prompt_tokens: u64,
    /// JSON key of the reasoning text.
    pub reasoning_key: &'static str,
    /// Reasoning is sent inside the content, wrapped in `<think>…</think>`, instead of in a
    /// field of its own.
    pub think_tags: bool,
    /// `stream_options.continuous_usage_stats` (vLLM): every chunk event carries the usage
    /// so far (cumulative `completion_tokens`), not only the closing usage event.
    pub continuous_usage: bool,
}

impl Shape {
    /// The reasoning and content tokens of `range`. With `think_tags` every token is content
    /// (the reasoning ones are written between the tags by [`Shape::push_text`]).
    pub(crate) fn split(&self, range: Range<usize>) -> (Range<usize>, Range<usize>) {
        if self.think_tags {
            return (range.start..range.start, range);
        }
        let r = range.start.min(self.reasoning)..range.end.min(self.reasoning);
        let c = range.start.max(self.reasoning)..range.end.max(self.reasoning);
        (r, c)
    }

    /// Whether reasoning goes in a field (or item, or block) of its own.
    pub(crate) fn separate_reasoning(&self) -> bool {
        self.reasoning > 0 && !self.think_tags
    }

    /// Appends the escaped text of output tokens `range`; with `think_tags`, `<think>` goes
    /// before token 0 and `</think>` after the last reasoning token.
    pub(crate) fn push_text(&self, out: &mut BytesMut, words: &Words, range: Range<usize>) {
        if !self.think_tags || self.reasoning == 0 || range.is_empty() {
            words.push(out, self.offset, range);
            return;
        }
        let r = self.reasoning;
        if range.start == 0 {
            out.put_slice(b"<think>");
        }
        let mid = range.end.min(r).max(range.start);
        words.push(out, self.offset, range.start..mid);
        if range.start < r && range.end >= r {
            out.put_slice(b"</think>");
        }
        words.push(out, self.offset, mid..range.end);
    }
}

/// What one SSE event holds.
#[derive(Debug, Clone)]
pub(crate) enum Event {
    /// `{"role":"assistant","content":""}`.
    RoleOnly,
    /// Output tokens `range`; `role` puts the role on this event; `last` adds the finish reason.
    Tokens {
        range: Range<usize>,
        role: bool,
        last: bool,
    },
}

/// Appends one `data: {...}\n\n` chunk event.
pub(crate) fn push_event(
    out: &mut BytesMut,
    head: &[u8],
    words: &Words,
    shape: &Shape,
    ev: &Event,
) {
    out.put_slice(b"data: ");
    out.put_slice(head);
    match shape.endpoint {
        Endpoint::Chat => {
            out.put_slice(b"{\"index\":0,\"delta\":{");
            let (role, reasoning, content, last) = match ev {
                Event::RoleOnly => (true, 0..0, 0..0, false),
                Event::Tokens { range, role, last } => {
                    let (r, c) = shape.split(range.clone());
                    (*role, r, c, *last)
                }
            };
            let mut sep = false;
            if role {
                out.put_slice(b"\"role\":\"assistant\"");
                sep = true;
            }
            if !reasoning.is_empty() {
                if sep {
                    out.put_u8(b',');
                }
                out.put_u8(b'"');
                out.put_slice(shape.reasoning_key.as_bytes());
                out.put_slice(b"\":\"");
                words.push(out, shape.offset, reasoning.clone());
                out.put_u8(b'"');
                sep = true;
            }
            // A reasoning-only event has no `content` key (as vLLM does).
            if !content.is_empty() || reasoning.is_empty() {
                if sep {
                    out.put_u8(b',');
                }
                out.put_slice(b"\"content\":\"");
                shape.push_text(out, words, content);
                out.put_u8(b'"');
            }
            out.put_slice(b"},");
            push_finish(out, shape, last);
        }
        Endpoint::Completions => {
            out.put_slice(b"{\"index\":0,\"text\":\"");
            let (range, last) = match ev {
                Event::RoleOnly => (0..0, false),
                Event::Tokens { range, last, .. } => (range.clone(), *last),
            };
            shape.push_text(out, words, range);
            out.put_slice(b"\",\"logprobs\":null,");
            push_finish(out, shape, last);
        }
        // Routed to `api::push_tokens` before reaching here.
        _ => {}
    }
    out.put_slice(b"}]");
    if shape.continuous_usage {
        let done = match ev {
            Event::RoleOnly => 0,
            Event::Tokens { range, .. } => range.end,
        };
        out.put_u8(b',');
        push_usage_upto(out, shape, done);
    }
    out.put_slice(b"}\n\n");
}

pub(crate) fn push_finish(out: &mut BytesMut, shape: &Shape, last: bool) {
    out.put_slice(b"\"finish_reason\":");
    if last {
        out.put_u8(b'"');
        out.put_slice(shape.finish.as_bytes());
        out.put_u8(b'"');
    } else {
        out.put_slice(b"null");
    }
}

fn push_usage(out: &mut BytesMut, shape: &Shape) {
    push_usage_upto(out, shape, shape.tokens);
}

/// The usage after the first `done` output tokens (the whole request at `shape.tokens`).
fn push_usage_upto(out: &mut BytesMut, shape: &Shape, done: usize) {
    let n = done as u64;
    out.put_slice(b"\"usage\":{\"prompt_tokens\":");
    push_u64(out, shape.prompt_tokens);
    out.put_slice(b",\"completion_tokens\":");
    push_u64(out, n);
    out.put_slice(b",\"total_tokens\":");
    push_u64(out, shape.prompt_tokens + n);
    if shape.reasoning > 0 {
        out.put_slice(b",\"completion_tokens_details\":{\"reasoning_tokens\":");
        push_u64(out, shape.reasoning.min(done) as u64);
        out.put_u8(b'}');
    }
    out.put_u8(b'}');
}

/// Appends the usage-only event (`"choices":[]`).
pub(crate) fn push_usage_event(out: &mut BytesMut, head: &[u8], shape: &Shape) {
    out.put_slice(b"data: ");
    out.put_slice(head);
    out.put_slice(b"],");
    push_usage(out, shape);
    out.put_slice(b"}\n\n");
}

pub(crate) const DONE: &[u8] = b"data: [DONE]\n\n";

/// A whole non-streaming body.
pub(crate) fn full_body(head: &[u8], words: &Words, shape: &Shape) -> BytesMut {
    let mut out = BytesMut::with_capacity(head.len() + 256 + shape.tokens * words.max_len());
    out.put_slice(head);
    let all = 0..shape.tokens;
    match shape.endpoint {
        Endpoint::Chat => {
            let (reasoning, content) = shape.split(all);
            out.put_slice(b"{\"index\":0,\"message\":{\"role\":\"assistant\",");
            if !reasoning.is_empty() {
                out.put_u8(b'"');
                out.put_slice(shape.reasoning_key.as_bytes());
                out.put_slice(b"\":\"");
                words.push(&mut out, shape.offset, reasoning);
                out.put_slice(b"\",");
            }
            out.put_slice(b"\"content\":\"");
            shape.push_text(&mut out, words, content);
            out.put_slice(b"\"},");
        }
        Endpoint::Completions => {
            out.put_slice(b"{\"index\":0,\"text\":\"");
            shape.push_text(&mut out, words, all);
            out.put_slice(b"\",\"logprobs\":null,");
        }
        // Routed to `api::full_body` before reaching here.
        _ => {}
    }
    push_finish(&mut out, shape, true);
    out.put_slice(b"}],");
    push_usage(&mut out, shape);
    out.put_u8(b'}');
    out
}

/// Token range of event `j` (0-based): the first holds one token, then `k` each, the last
/// the rest (vLLM `stream_interval` style).
pub(crate) fn event_range(j: usize, k: usize, tokens: usize) -> Range<usize> {
    if j == 0 {
        0..tokens.min(1)
    } else {
        let start = (1 + (j - 1) * k).min(tokens);
        start..(start + k).min(tokens)
    }
}

/// Number of token events for `tokens` output tokens.
pub(crate) fn event_count(k: usize, tokens: usize) -> usize {
    if tokens == 0 {
        0
    } else {
        1 + (tokens - 1).div_ceil(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_words() -> Words {
        Words::new(&crate::config::default_words())
    }

    fn shape(endpoint: Endpoint, tokens: usize, reasoning: usize) -> Shape {
        Shape {
            endpoint,
            offset: 0,
            tokens,
            reasoning,
            finish: "length",
            prompt_tokens: 23,
            reasoning_key: "reasoning_content",
            think_tags: false,
            continuous_usage: false,
        }
    }

    fn chat_head() -> Vec<u8> {
        head(
            "chatcmpl-mock",
            None,
            "chat.completion.chunk",
            0,
            b"\"mock-model\"",
        )
    }

    fn ev(out: &BytesMut) -> &str {
        let s = std::str::from_utf8(out).unwrap();
        s.strip_prefix("data: ")
            .unwrap()
            .strip_suffix("\n\n")
            .unwrap()
    }

    #[test]
    fn chat_events_match_the_fixtures_byte_for_byte() {
        // Strings copied from S1/S2/S3 profile_export_raw.jsonl.
        let w = fixture_words();
        let h = chat_head();
        let s = shape(Endpoint::Chat, 16, 8);
        let mut b = BytesMut::new();
        push_event(&mut b, &h, &w, &s, &Event::RoleOnly);
        assert_eq!(
            ev(&b),
            r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#
        );
        let mut b = BytesMut::new();
        push_event(
            &mut b,
            &h,
            &w,
            &s,
            &Event::Tokens {
                range: 1..2,
                role: false,
                last: false,
            },
        );
        assert_eq!(
            ev(&b),
            r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"reasoning_content":" and"},"finish_reason":null}]}"#
        );
        let mut b = BytesMut::new();
        push_event(
            &mut b,
            &h,
            &w,
            &s,
            &Event::Tokens {
                range: 15..16,
                role: false,
                last: true,
            },
        );
        assert_eq!(
            ev(&b),
            r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"content":" that"},"finish_reason":"length"}]}"#
        );
        let mut b = BytesMut::new();
        push_usage_event(&mut b, &h, &s);
        assert_eq!(
            ev(&b),
            r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[],"usage":{"prompt_tokens":23,"completion_tokens":16,"total_tokens":39,"completion_tokens_details":{"reasoning_tokens":8}}}"#
        );
        // S1: the role rides on the first token event.
        let s = shape(Endpoint::Chat, 16, 0);
        let mut b = BytesMut::new();
        push_event(
            &mut b,
            &h,
            &w,
            &s,
            &Event::Tokens {
                range: 0..1,
                role: true,
                last: false,
            },
        );
        assert_eq!(
            ev(&b),
            r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"role":"assistant","content":" the"},"finish_reason":null}]}"#
        );
        // S3: three tokens in one event.
        let mut b = BytesMut::new();
        push_event(
            &mut b,
            &h,
            &w,
            &s,
            &Event::Tokens {
                range: 1..4,
                role: false,
                last: false,
            },
        );
        assert_eq!(
            ev(&b),
            r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"content":" and to of"},"finish_reason":null}]}"#
        );
    }

    #[test]
    fn an_event_spanning_reasoning_and_content_carries_both() {
        let w = fixture_words();
        let mut s = shape(Endpoint::Chat, 16, 8);
        s.reasoning_key = "reasoning";
        let mut b = BytesMut::new();
        push_event(
            &mut b,
            b"{",
            &w,
            &s,
            &Event::Tokens {
                range: 7..10,
                role: false,
                last: false,
            },
        );
        assert_eq!(
            ev(&b),
            r#"{{"index":0,"delta":{"reasoning":" that","content":" the and"},"finish_reason":null}]}"#
        );
    }

    #[test]
    fn completions_match_the_fixture() {
        let w = fixture_words();
        let h = head("cmpl-mock", None, "text_completion", 0, b"\"mock-model\"");
        let s = shape(Endpoint::Completions, 16, 0);
        let mut b = BytesMut::new();
        push_event(
            &mut b,
            &h,
            &w,
            &s,
            &Event::Tokens {
                range: 15..16,
                role: false,
                last: true,
            },
        );
        assert_eq!(
            ev(&b),
            r#"{"id":"cmpl-mock","object":"text_completion","created":0,"model":"mock-model","choices":[{"index":0,"text":" that","logprobs":null,"finish_reason":"length"}]}"#
        );
        let mut b = BytesMut::new();
        push_usage_event(&mut b, &h, &s);
        assert_eq!(
            ev(&b),
            r#"{"id":"cmpl-mock","object":"text_completion","created":0,"model":"mock-model","choices":[],"usage":{"prompt_tokens":23,"completion_tokens":16,"total_tokens":39}}"#
        );
    }

    #[test]
    fn full_chat_body_matches_the_fixture() {
        // S5 profile_export_raw.jsonl, first record.
        let w = fixture_words();
        let h = head(
            "chatcmpl-mock",
            None,
            "chat.completion",
            0,
            b"\"mock-model\"",
        );
        let b = full_body(&h, &w, &shape(Endpoint::Chat, 16, 0));
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"id":"chatcmpl-mock","object":"chat.completion","created":0,"model":"mock-model","choices":[{"index":0,"message":{"role":"assistant","content":" the and to of you my a that the and to of you my a that"},"finish_reason":"length"}],"usage":{"prompt_tokens":23,"completion_tokens":16,"total_tokens":39}}"#
        );
        let b = full_body(&h, &w, &shape(Endpoint::Chat, 3, 2));
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["choices"][0]["message"]["reasoning_content"], " the and");
        assert_eq!(v["choices"][0]["message"]["content"], " to");
        assert_eq!(
            v["usage"]["completion_tokens_details"]["reasoning_tokens"],
            2
        );
    }

    #[test]
    fn words_are_escaped_and_cycled_from_the_offset() {
        let w = Words::new(&["a\"".to_owned(), "\n".to_owned(), "é".to_owned()]);
        let mut b = BytesMut::new();
        w.push(&mut b, 2, 0..5);
        // Word indexes 2, 0, 1, 2, 0.
        assert_eq!(std::str::from_utf8(&b).unwrap(), r#"éa\"\néa\""#);
    }

    #[test]
    fn event_ranges_follow_stream_interval() {
        let sizes: Vec<usize> = (0..event_count(3, 16))
            .map(|j| event_range(j, 3, 16).len())
            .collect();
        assert_eq!(sizes, vec![1, 3, 3, 3, 3, 3]);
        let sizes: Vec<usize> = (0..event_count(3, 17))
            .map(|j| event_range(j, 3, 17).len())
            .collect();
        assert_eq!(sizes, vec![1, 3, 3, 3, 3, 3, 1]);
        assert_eq!(event_count(1, 16), 16);
        assert_eq!(event_count(5, 1), 1);
        assert_eq!(event_range(1, 3, 16), 1..4);
        assert_eq!(event_count(4, 0), 0);
    }

    #[test]
    fn continuous_usage_puts_the_cumulative_count_on_every_chunk() {
        let h = chat_head();
        let w = fixture_words();
        let mut s = shape(Endpoint::Chat, 16, 8);
        s.continuous_usage = true;
        let mut b = BytesMut::new();
        push_event(&mut b, &h, &w, &s, &Event::RoleOnly);
        assert!(
            ev(&b).ends_with(r#"}],"usage":{"prompt_tokens":23,"completion_tokens":0,"total_tokens":23,"completion_tokens_details":{"reasoning_tokens":0}}}"#),
            "{}",
            ev(&b)
        );
        // Tokens 5..10 (reasoning is the first 8): 10 so far, 8 of them reasoning.
        let mut b = BytesMut::new();
        let t = Event::Tokens {
            range: 5..10,
            role: false,
            last: false,
        };
        push_event(&mut b, &h, &w, &s, &t);
        let v: serde_json::Value = serde_json::from_str(ev(&b)).unwrap();
        assert_eq!(
            v["usage"],
            serde_json::json!({"prompt_tokens": 23, "completion_tokens": 10, "total_tokens": 33,
                "completion_tokens_details": {"reasoning_tokens": 8}})
        );
    }
}
