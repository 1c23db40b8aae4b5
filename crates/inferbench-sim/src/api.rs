//! Rendering for every route: the chat and completions renderers of `render`, plus the
//! OpenAI Responses API, the Anthropic Messages API, Hugging Face TGI, embeddings and the
//! three rankings APIs. A response is a prelude (events sent at arrival), token events (at
//! their deadlines) and an epilogue (events sent right after the last token).

use std::ops::Range;

use bytes::{BufMut, BytesMut};
use serde_json::{Value, json};

use crate::render::{self, Event, Shape, Words, push_u64};
use crate::request::{Endpoint, body_hash};

/// What every event of one response shares, fixed at arrival.
pub(crate) struct Req {
    pub shape: Shape,
    /// Chat and completions: the constant start of every JSON object (see `render::head`).
    pub head: Vec<u8>,
    /// The response id (`resp_sim_7`, `msg_sim_7`, …).
    pub id: String,
    /// The model, as a quoted JSON string.
    pub model_json: Vec<u8>,
    pub created: u64,
    /// Embeddings: inputs; rankings: passages.
    pub items: u64,
    /// Hash of the request body, for deterministic vectors and scores.
    pub hash: u64,
    /// The answer's tokens, sent in place of the filler words (an answer key).
    pub answer: Option<Words>,
}

impl Req {
    /// The token texts of this response: the answer's, else the server's filler words.
    pub(crate) fn words<'a>(&'a self, filler: &'a Words) -> &'a Words {
        self.answer.as_ref().unwrap_or(filler)
    }
}

/// Running state of one stream: the Responses API numbers its events.
#[derive(Default)]
pub(crate) struct StreamState {
    pub seq: u64,
    /// Token events sent so far (TGI's `index`).
    pub events: u64,
}

/// Whether the stream begins with events sent at arrival.
pub(crate) fn has_prelude(req: &Req, role_first_chunk: bool) -> bool {
    match req.shape.endpoint {
        Endpoint::Chat => role_first_chunk,
        Endpoint::Responses | Endpoint::Messages => true,
        _ => false,
    }
}

/// Whether the stream ends with closing events after the last token (besides `[DONE]`).
pub(crate) fn has_epilogue(req: &Req, include_usage: bool) -> bool {
    match req.shape.endpoint {
        Endpoint::Chat | Endpoint::Completions => include_usage,
        Endpoint::Responses | Endpoint::Messages => true,
        _ => false,
    }
}

/// Whether the stream ends with `data: [DONE]` (the OpenAI chunk APIs only).
pub(crate) fn ends_with_done(req: &Req) -> bool {
    matches!(req.shape.endpoint, Endpoint::Chat | Endpoint::Completions)
}

fn sse(out: &mut BytesMut, event: &str, data: &[u8]) {
    out.put_slice(b"event: ");
    out.put_slice(event.as_bytes());
    out.put_slice(b"\ndata: ");
    out.put_slice(data);
    out.put_slice(b"\n\n");
}

/// The events sent at arrival.
pub(crate) fn push_prelude(out: &mut BytesMut, req: &Req, words: &Words, st: &mut StreamState) {
    let s = &req.shape;
    match s.endpoint {
        Endpoint::Chat => render::push_event(out, &req.head, words, s, &Event::RoleOnly),
        Endpoint::Responses => {
            let mut d = Vec::with_capacity(200);
            d.extend_from_slice(b"{\"type\":\"response.created\",\"sequence_number\":");
            push_u64(&mut d, next(st));
            d.extend_from_slice(b",\"response\":");
            push_response_head(&mut d, req, "in_progress");
            d.extend_from_slice(b",\"output\":[],\"usage\":null}}");
            sse(out, "response.created", &d);
        }
        Endpoint::Messages => {
            let mut d = Vec::with_capacity(240);
            d.extend_from_slice(b"{\"type\":\"message_start\",\"message\":{\"id\":\"");
            d.extend_from_slice(req.id.as_bytes());
            d.extend_from_slice(
                b"\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":",
            );
            d.extend_from_slice(&req.model_json);
            d.extend_from_slice(
                b",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":",
            );
            push_u64(&mut d, s.prompt_tokens);
            // Anthropic reports one output token at the start; the total comes in message_delta.
            d.extend_from_slice(b",\"output_tokens\":1}}}");
            sse(out, "message_start", &d);
            let first = if s.separate_reasoning() {
                &br#"{"type":"thinking","thinking":"","signature":""}"#[..]
            } else {
                &br#"{"type":"text","text":""}"#[..]
            };
            block_start(out, 0, first);
        }
        _ => {}
    }
}

fn next(st: &mut StreamState) -> u64 {
    let n = st.seq;
    st.seq += 1;
    n
}

/// `{"id":…,"object":"response","created_at":…,"model":…,"status":STATUS` (left open).
fn push_response_head(d: &mut Vec<u8>, req: &Req, status: &str) {
    d.extend_from_slice(b"{\"id\":\"");
    d.extend_from_slice(req.id.as_bytes());
    d.extend_from_slice(b"\",\"object\":\"response\",\"created_at\":");
    push_u64(d, req.created);
    d.extend_from_slice(b",\"model\":");
    d.extend_from_slice(&req.model_json);
    d.extend_from_slice(b",\"status\":\"");
    d.extend_from_slice(status.as_bytes());
    d.push(b'"');
}

fn block_start(out: &mut BytesMut, index: u64, block: &[u8]) {
    let mut d = Vec::with_capacity(96);
    d.extend_from_slice(b"{\"type\":\"content_block_start\",\"index\":");
    push_u64(&mut d, index);
    d.extend_from_slice(b",\"content_block\":");
    d.extend_from_slice(block);
    d.push(b'}');
    sse(out, "content_block_start", &d);
}

fn block_stop(out: &mut BytesMut, index: u64) {
    let mut d = Vec::with_capacity(48);
    d.extend_from_slice(b"{\"type\":\"content_block_stop\",\"index\":");
    push_u64(&mut d, index);
    d.push(b'}');
    sse(out, "content_block_stop", &d);
}

/// Escaped text of `range` into a fresh buffer.
fn text_of(s: &Shape, words: &Words, range: Range<usize>) -> BytesMut {
    let mut b = BytesMut::new();
    s.push_text(&mut b, words, range);
    b
}

/// One token event (several SSE messages for the Responses and Messages APIs when it spans
/// the end of the reasoning).
pub(crate) fn push_tokens(
    out: &mut BytesMut,
    req: &Req,
    words: &Words,
    ev: &Event,
    st: &mut StreamState,
) {
    let s = &req.shape;
    let Event::Tokens { range, last, .. } = ev else {
        return push_prelude(out, req, words, st);
    };
    match s.endpoint {
        Endpoint::Chat | Endpoint::Completions => render::push_event(out, &req.head, words, s, ev),
        Endpoint::Responses => {
            let (r, c) = s.split(range.clone());
            if !r.is_empty() {
                responses_delta(
                    out,
                    req,
                    st,
                    "response.reasoning_text.delta",
                    "rs_",
                    0,
                    &text_of(s, words, r),
                );
            }
            if !c.is_empty() {
                let oi = u64::from(s.separate_reasoning());
                responses_delta(
                    out,
                    req,
                    st,
                    "response.output_text.delta",
                    "msg_",
                    oi,
                    &text_of(s, words, c),
                );
            }
        }
        Endpoint::Messages => {
            let (r, c) = s.split(range.clone());
            if !r.is_empty() {
                messages_delta(out, 0, "thinking_delta", "thinking", &text_of(s, words, r));
            }
            if !c.is_empty() {
                let index = u64::from(s.separate_reasoning());
                if s.separate_reasoning() && c.start == s.reasoning {
                    block_stop(out, 0);
                    block_start(out, 1, br#"{"type":"text","text":""}"#);
                }
                messages_delta(out, index, "text_delta", "text", &text_of(s, words, c));
            }
        }
        Endpoint::Generate { .. } => {
            let mut d = Vec::with_capacity(160);
            d.extend_from_slice(b"{\"index\":");
            push_u64(&mut d, st.events);
            d.extend_from_slice(b",\"token\":{\"id\":");
            push_u64(&mut d, range.end as u64);
            d.extend_from_slice(b",\"text\":\"");
            d.extend_from_slice(&text_of(s, words, range.clone()));
            d.extend_from_slice(b"\",\"logprob\":0.0,\"special\":false},\"generated_text\":");
            if *last {
                d.push(b'"');
                d.extend_from_slice(&text_of(s, words, 0..s.tokens));
                d.extend_from_slice(b"\",\"details\":{\"finish_reason\":\"");
                d.extend_from_slice(tgi_finish(s.finish).as_bytes());
                d.extend_from_slice(b"\",\"generated_tokens\":");
                push_u64(&mut d, s.tokens as u64);
                d.extend_from_slice(b",\"seed\":null}}");
            } else {
                d.extend_from_slice(b"null,\"details\":null}");
            }
            out.put_slice(b"data: ");
            out.put_slice(&d);
            out.put_slice(b"\n\n");
        }
        _ => {}
    }
    st.events += 1;
}

fn responses_delta(
    out: &mut BytesMut,
    req: &Req,
    st: &mut StreamState,
    ty: &str,
    item_prefix: &str,
    output_index: u64,
    text: &[u8],
) {
    let mut d = Vec::with_capacity(160 + text.len());
    d.extend_from_slice(b"{\"type\":\"");
    d.extend_from_slice(ty.as_bytes());
    d.extend_from_slice(b"\",\"sequence_number\":");
    push_u64(&mut d, next(st));
    d.extend_from_slice(b",\"item_id\":\"");
    d.extend_from_slice(item_prefix.as_bytes());
    d.extend_from_slice(req.id.as_bytes());
    d.extend_from_slice(b"\",\"output_index\":");
    push_u64(&mut d, output_index);
    d.extend_from_slice(b",\"content_index\":0,\"delta\":\"");
    d.extend_from_slice(text);
    d.extend_from_slice(b"\"}");
    sse(out, ty, &d);
}

fn messages_delta(out: &mut BytesMut, index: u64, ty: &str, key: &str, text: &[u8]) {
    let mut d = Vec::with_capacity(100 + text.len());
    d.extend_from_slice(b"{\"type\":\"content_block_delta\",\"index\":");
    push_u64(&mut d, index);
    d.extend_from_slice(b",\"delta\":{\"type\":\"");
    d.extend_from_slice(ty.as_bytes());
    d.extend_from_slice(b"\",\"");
    d.extend_from_slice(key.as_bytes());
    d.extend_from_slice(b"\":\"");
    d.extend_from_slice(text);
    d.extend_from_slice(b"\"}}");
    sse(out, "content_block_delta", &d);
}

fn tgi_finish(finish: &str) -> &'static str {
    if finish == "length" {
        "length"
    } else {
        "eos_token"
    }
}

fn anthropic_stop(finish: &str) -> &'static str {
    if finish == "length" {
        "max_tokens"
    } else {
        "end_turn"
    }
}

/// `{"input_tokens":P,"output_tokens":N,"output_tokens_details":{"reasoning_tokens":R},"total_tokens":P+N}`.
fn push_responses_usage(d: &mut Vec<u8>, s: &Shape) {
    d.extend_from_slice(b"{\"input_tokens\":");
    push_u64(d, s.prompt_tokens);
    d.extend_from_slice(b",\"output_tokens\":");
    push_u64(d, s.tokens as u64);
    d.extend_from_slice(b",\"output_tokens_details\":{\"reasoning_tokens\":");
    push_u64(d, s.reasoning as u64);
    d.extend_from_slice(b"},\"total_tokens\":");
    push_u64(d, s.prompt_tokens + s.tokens as u64);
    d.push(b'}');
}

/// The closing events (chat and completions: the usage-only chunk).
pub(crate) fn push_epilogue(out: &mut BytesMut, req: &Req, words: &Words, st: &mut StreamState) {
    let s = &req.shape;
    match s.endpoint {
        Endpoint::Chat | Endpoint::Completions => render::push_usage_event(out, &req.head, s),
        Endpoint::Responses => {
            let (_, c) = s.split(0..s.tokens);
            let text = text_of(s, words, c);
            let mut d = Vec::with_capacity(160 + text.len());
            d.extend_from_slice(b"{\"type\":\"response.output_text.done\",\"sequence_number\":");
            push_u64(&mut d, next(st));
            d.extend_from_slice(b",\"item_id\":\"msg_");
            d.extend_from_slice(req.id.as_bytes());
            d.extend_from_slice(b"\",\"output_index\":");
            push_u64(&mut d, u64::from(s.separate_reasoning()));
            d.extend_from_slice(b",\"content_index\":0,\"text\":\"");
            d.extend_from_slice(&text);
            d.extend_from_slice(b"\"}");
            sse(out, "response.output_text.done", &d);
            let mut d = Vec::with_capacity(320);
            d.extend_from_slice(b"{\"type\":\"response.completed\",\"sequence_number\":");
            push_u64(&mut d, next(st));
            d.extend_from_slice(b",\"response\":");
            push_response_head(&mut d, req, "completed");
            d.extend_from_slice(b",\"output\":[],\"usage\":");
            push_responses_usage(&mut d, s);
            d.extend_from_slice(b"}}");
            sse(out, "response.completed", &d);
        }
        Endpoint::Messages => {
            let has_text = !s.split(0..s.tokens).1.is_empty();
            let last_block = u64::from(s.separate_reasoning() && has_text);
            block_stop(out, last_block);
            let mut d = Vec::with_capacity(140);
            d.extend_from_slice(b"{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"");
            d.extend_from_slice(anthropic_stop(s.finish).as_bytes());
            d.extend_from_slice(b"\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":");
            push_u64(&mut d, s.tokens as u64);
            d.extend_from_slice(b"}}");
            sse(out, "message_delta", &d);
            sse(out, "message_stop", br#"{"type":"message_stop"}"#);
        }
        _ => {}
    }
}

/// A whole non-streaming answer.
pub(crate) fn full_body(req: &Req, words: &Words) -> BytesMut {
    let s = &req.shape;
    let (r, c) = s.split(0..s.tokens);
    let mut out = BytesMut::new();
    match s.endpoint {
        Endpoint::Chat | Endpoint::Completions => return render::full_body(&req.head, words, s),
        Endpoint::Responses => {
            let mut d = Vec::with_capacity(400 + s.tokens * words.max_len());
            push_response_head(&mut d, req, "completed");
            d.extend_from_slice(b",\"output\":[");
            if !r.is_empty() {
                // The reasoning as a summary, the part AIPerf reads from a whole body.
                d.extend_from_slice(b"{\"type\":\"reasoning\",\"id\":\"rs_");
                d.extend_from_slice(req.id.as_bytes());
                d.extend_from_slice(b"\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"");
                d.extend_from_slice(&text_of(s, words, r));
                d.extend_from_slice(b"\"}]},");
            }
            d.extend_from_slice(b"{\"type\":\"message\",\"id\":\"msg_");
            d.extend_from_slice(req.id.as_bytes());
            d.extend_from_slice(
                b"\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"",
            );
            d.extend_from_slice(&text_of(s, words, c));
            d.extend_from_slice(b"\",\"annotations\":[]}]}],\"usage\":");
            push_responses_usage(&mut d, s);
            d.push(b'}');
            out.put_slice(&d);
        }
        Endpoint::Messages => {
            let mut d = Vec::with_capacity(300 + s.tokens * words.max_len());
            d.extend_from_slice(b"{\"id\":\"");
            d.extend_from_slice(req.id.as_bytes());
            d.extend_from_slice(b"\",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
            d.extend_from_slice(&req.model_json);
            d.extend_from_slice(b",\"content\":[");
            if !r.is_empty() {
                d.extend_from_slice(b"{\"type\":\"thinking\",\"thinking\":\"");
                d.extend_from_slice(&text_of(s, words, r));
                d.extend_from_slice(b"\",\"signature\":\"\"}");
                if !c.is_empty() {
                    d.push(b',');
                }
            }
            if !c.is_empty() {
                d.extend_from_slice(b"{\"type\":\"text\",\"text\":\"");
                d.extend_from_slice(&text_of(s, words, c));
                d.extend_from_slice(b"\"}");
            }
            d.extend_from_slice(b"],\"stop_reason\":\"");
            d.extend_from_slice(anthropic_stop(s.finish).as_bytes());
            d.extend_from_slice(b"\",\"stop_sequence\":null,\"usage\":{\"input_tokens\":");
            push_u64(&mut d, s.prompt_tokens);
            d.extend_from_slice(b",\"output_tokens\":");
            push_u64(&mut d, s.tokens as u64);
            d.extend_from_slice(b"}}");
            out.put_slice(&d);
        }
        Endpoint::Generate { .. } => {
            out.put_slice(b"{\"generated_text\":\"");
            s.push_text(&mut out, words, 0..s.tokens);
            out.put_slice(b"\"}");
        }
        Endpoint::ImageRetrieval | Endpoint::Transcription | Endpoint::Images => {
            return crate::media::full_body(req, words, false);
        }
        Endpoint::Embeddings
        | Endpoint::NimRankings
        | Endpoint::TeiRankings
        | Endpoint::CohereRankings => {
            let v = vectors_body(req);
            out.put_slice(v.to_string().as_bytes());
        }
    }
    out
}

/// Length of the simulated embeddings.
pub(crate) const EMBEDDING_DIM: usize = 8;

/// A deterministic number in [0, 1) for the request and index `i`.
fn unit(hash: u64, i: u64) -> f64 {
    let h = body_hash(&(hash ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes());
    // 53 random bits, exactly representable; rounded to 4 decimals for short bodies.
    let x = (h >> 11) as f64 / (1u64 << 53) as f64;
    (x * 1e4).floor() / 1e4
}

fn vectors_body(req: &Req) -> Value {
    let s = &req.shape;
    let n = req.items;
    let model: Value = serde_json::from_slice(&req.model_json).unwrap_or(Value::Null);
    // Rankings: passages sorted by score, best first, as rerankers answer.
    let mut ranked: Vec<(u64, f64)> = (0..n).map(|i| (i, unit(req.hash, i))).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    match s.endpoint {
        Endpoint::Embeddings => {
            let data: Vec<Value> = (0..n)
                .map(|i| {
                    let e: Vec<f64> = (0..EMBEDDING_DIM as u64)
                        .map(|j| unit(req.hash, i * EMBEDDING_DIM as u64 + j) * 2.0 - 1.0)
                        .collect();
                    json!({"object": "embedding", "index": i, "embedding": e})
                })
                .collect();
            json!({
                "object": "list",
                "data": data,
                "model": model,
                "usage": {"prompt_tokens": s.prompt_tokens, "total_tokens": s.prompt_tokens}
            })
        }
        Endpoint::NimRankings => {
            let r: Vec<Value> = ranked
                .iter()
                .map(|(i, x)| json!({"index": i, "logit": x * 20.0 - 10.0}))
                .collect();
            json!({ "rankings": r })
        }
        Endpoint::TeiRankings => Value::Array(
            ranked
                .iter()
                .map(|(i, x)| json!({"index": i, "score": x}))
                .collect(),
        ),
        _ => {
            let r: Vec<Value> = ranked
                .iter()
                .map(|(i, x)| json!({"index": i, "relevance_score": x}))
                .collect();
            json!({
                "id": req.id,
                "results": r,
                "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}}
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(endpoint: Endpoint, tokens: usize, reasoning: usize, think_tags: bool) -> Req {
        Req {
            shape: Shape {
                endpoint,
                offset: 0,
                tokens,
                reasoning,
                finish: "length",
                prompt_tokens: 4,
                reasoning_key: "reasoning_content",
                think_tags,
                continuous_usage: false,
            },
            head: Vec::new(),
            id: "x1".into(),
            model_json: b"\"m\"".to_vec(),
            created: 7,
            items: 3,
            hash: 42,
            answer: None,
        }
    }

    fn words() -> Words {
        Words::new(&crate::config::default_words())
    }

    fn tokens(r: &Req, range: Range<usize>, last: bool, st: &mut StreamState) -> String {
        let mut b = BytesMut::new();
        push_tokens(
            &mut b,
            r,
            &words(),
            &Event::Tokens {
                range,
                role: false,
                last,
            },
            st,
        );
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn responses_events() {
        let r = req(Endpoint::Responses, 3, 1, false);
        let mut st = StreamState::default();
        let mut b = BytesMut::new();
        push_prelude(&mut b, &r, &words(), &mut st);
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"x1\",\"object\":\"response\",\"created_at\":7,\"model\":\"m\",\"status\":\"in_progress\",\"output\":[],\"usage\":null}}\n\n"
        );
        // Tokens 0..2: " the" is reasoning, " and" content.
        assert_eq!(
            tokens(&r, 0..2, false, &mut st),
            "event: response.reasoning_text.delta\ndata: {\"type\":\"response.reasoning_text.delta\",\"sequence_number\":1,\"item_id\":\"rs_x1\",\"output_index\":0,\"content_index\":0,\"delta\":\" the\"}\n\n\
             event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":2,\"item_id\":\"msg_x1\",\"output_index\":1,\"content_index\":0,\"delta\":\" and\"}\n\n"
        );
        let mut b = BytesMut::new();
        push_epilogue(&mut b, &r, &words(), &mut st);
        let s = String::from_utf8(b.to_vec()).unwrap();
        assert!(s.contains("\"text\":\" and to\""), "{s}");
        assert!(s.contains("\"usage\":{\"input_tokens\":4,\"output_tokens\":3,\"output_tokens_details\":{\"reasoning_tokens\":1},\"total_tokens\":7}"), "{s}");
        let body: Value = serde_json::from_slice(&full_body(&r, &words())).unwrap();
        assert_eq!(body["output"][0]["summary"][0]["text"], " the");
        assert_eq!(body["output"][1]["content"][0]["text"], " and to");
    }

    #[test]
    fn messages_blocks_switch_at_the_end_of_reasoning() {
        let r = req(Endpoint::Messages, 3, 1, false);
        let mut st = StreamState::default();
        assert_eq!(
            tokens(&r, 0..1, false, &mut st),
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\" the\"}}\n\n"
        );
        assert_eq!(
            tokens(&r, 1..2, false, &mut st),
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
             event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
             event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\" and\"}}\n\n"
        );
        let body: Value = serde_json::from_slice(&full_body(&r, &words())).unwrap();
        assert_eq!(body["content"][0]["thinking"], " the");
        assert_eq!(body["content"][1]["text"], " and to");
        assert_eq!(body["stop_reason"], "max_tokens");
    }

    #[test]
    fn think_tags_wrap_the_reasoning_tokens() {
        let r = req(Endpoint::Generate { stream: true }, 3, 2, true);
        let body: Value = serde_json::from_slice(&full_body(&r, &words())).unwrap();
        assert_eq!(body["generated_text"], "<think> the and</think> to");
        let mut st = StreamState::default();
        let first: Value = serde_json::from_str(
            tokens(&r, 0..1, false, &mut st)
                .strip_prefix("data: ")
                .unwrap()
                .trim(),
        )
        .unwrap();
        assert_eq!(first["token"]["text"], "<think> the");
        let last: Value = serde_json::from_str(
            tokens(&r, 1..3, true, &mut st)
                .strip_prefix("data: ")
                .unwrap()
                .trim(),
        )
        .unwrap();
        assert_eq!(last["token"]["text"], " and</think> to");
        assert_eq!(last["generated_text"], "<think> the and</think> to");
        assert_eq!(last["details"]["generated_tokens"], 3);
    }

    #[test]
    fn vectors_are_deterministic_and_ranked() {
        let r = req(Endpoint::TeiRankings, 0, 0, false);
        let a = full_body(&r, &words());
        assert_eq!(a, full_body(&r, &words()));
        let v: Value = serde_json::from_slice(&a).unwrap();
        let scores: Vec<f64> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["score"].as_f64().unwrap())
            .collect();
        assert_eq!(scores.len(), 3);
        assert!(scores.windows(2).all(|w| w[0] >= w[1]));
        let r = req(Endpoint::Embeddings, 0, 0, false);
        let v: Value = serde_json::from_slice(&full_body(&r, &words())).unwrap();
        assert_eq!(v["data"].as_array().unwrap().len(), 3);
        assert_eq!(
            v["data"][2]["embedding"].as_array().unwrap().len(),
            EMBEDDING_DIM
        );
    }
}
