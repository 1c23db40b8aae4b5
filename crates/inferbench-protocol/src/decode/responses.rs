//! OpenAI Responses API (`/v1/responses`), following AIPerf 0.13's parser.
//!
//! Streamed events are told apart by their JSON `type` (the SSE `event:` name when the data
//! has none): `response.output_text.delta` → content, `response.reasoning_text.delta` →
//! reasoning, `response.function_call_arguments.delta` → tool text, `response.completed`
//! (and `response.incomplete`) → `response.usage`. `response.output_text.done` repeats the
//! text its deltas carried, so it counts only for a part that had no deltas (see
//! [`super::StreamDecoder`]). A whole body (`"object": "response"`) is walked item by item.

use serde_json::Value;

use super::common::{append, error_decoded, error_of, parse, text, usage};
use super::{DecodeError, Decoded, excerpt};

/// What one streamed event holds, before the `output_text.done` bookkeeping.
pub(super) enum StreamItem {
    Decoded(Decoded),
    /// `response.output_text.done`: the part `(output_index, content_index)` and its text.
    TextDone {
        part: (Option<u64>, Option<u64>),
        text: Option<String>,
    },
    /// A delta that carried text for a part (recorded, so its `done` is not counted again).
    TextDelta {
        part: (Option<u64>, Option<u64>),
        decoded: Decoded,
    },
}

pub(super) fn decode_event(event: Option<&str>, data: &str) -> Result<StreamItem, DecodeError> {
    let v = parse(data)?;
    if !v.is_object() {
        return Err(not_responses(data));
    }
    if let Some(e) = error_of(&v) {
        return Ok(StreamItem::Decoded(error_decoded(e)));
    }
    let ty = v.get("type").and_then(Value::as_str).or(event);
    let part = || {
        (
            v.get("output_index").and_then(Value::as_u64),
            v.get("content_index").and_then(Value::as_u64),
        )
    };
    let mut d = Decoded::default();
    match ty {
        Some("response.output_text.delta") => {
            d.content = text(v.get("delta"));
            if d.content.is_some() {
                return Ok(StreamItem::TextDelta {
                    part: part(),
                    decoded: d,
                });
            }
        }
        Some("response.output_text.done") => {
            return Ok(StreamItem::TextDone {
                part: part(),
                text: text(v.get("text")),
            });
        }
        Some("response.reasoning_text.delta") => d.reasoning = text(v.get("delta")),
        Some("response.function_call_arguments.delta") => d.tool = text(v.get("delta")),
        Some("response.completed" | "response.incomplete") => {
            let r = v.get("response");
            d.usage = usage(r.and_then(|r| r.get("usage")));
            d.finish_reason = r
                .and_then(|r| r.get("incomplete_details"))
                .and_then(|i| text(i.get("reason")))
                .or_else(|| r.and_then(|r| text(r.get("status"))));
        }
        // A whole response object sent as one event (some servers do this when asked to
        // stream a cached answer).
        None if v.get("object").and_then(Value::as_str) == Some("response") => {
            return Ok(StreamItem::Decoded(walk_response(&v)));
        }
        // Lifecycle and structural events (created, in_progress, output_item.*,
        // content_part.*, *.done) carry nothing to count.
        _ => {}
    }
    Ok(StreamItem::Decoded(d))
}

/// A whole (non-streamed) Responses body.
pub(super) fn decode_body(data: &str) -> Result<Decoded, DecodeError> {
    let v = parse(data)?;
    if let Some(e) = error_of(&v) {
        return Ok(error_decoded(e));
    }
    let is_response = v.get("object").and_then(Value::as_str) == Some("response")
        || v.get("output").is_some_and(Value::is_array)
        || v.get("output_text").is_some_and(Value::is_string);
    if !is_response {
        return Err(not_responses(data));
    }
    Ok(walk_response(&v))
}

/// Walks `output[]`: `message` items' `output_text` parts → content; `reasoning` items'
/// `summary_text` summaries and `reasoning_text` content → reasoning; `function_call` items'
/// `name` + `arguments` → tool text. Without `output[]`, the `output_text` convenience field.
fn walk_response(v: &Value) -> Decoded {
    let mut d = Decoded {
        usage: usage(v.get("usage")),
        finish_reason: v
            .get("incomplete_details")
            .and_then(|i| text(i.get("reason")))
            .or_else(|| text(v.get("status"))),
        ..Decoded::default()
    };
    if let Some(items) = v.get("output").and_then(Value::as_array) {
        for item in items {
            match item.get("type").and_then(Value::as_str) {
                Some("message") => {
                    for p in parts(item, "content", "output_text") {
                        append(&mut d.content, p);
                    }
                }
                Some("reasoning") => {
                    for p in parts(item, "summary", "summary_text").chain(parts(
                        item,
                        "content",
                        "reasoning_text",
                    )) {
                        append(&mut d.reasoning, p);
                    }
                }
                Some("function_call") => {
                    for k in ["name", "arguments"] {
                        if let Some(s) = text(item.get(k)) {
                            append(&mut d.tool, &s);
                        }
                    }
                }
                _ => {}
            }
        }
    } else {
        d.content = text(v.get("output_text"));
    }
    d
}

/// The non-empty `text` of the parts of `item[key]` whose `type` is `ty`.
fn parts<'a>(item: &'a Value, key: &str, ty: &'a str) -> impl Iterator<Item = &'a str> {
    item.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(move |p| p.get("type").and_then(Value::as_str) == Some(ty))
        .filter_map(|p| p.get("text")?.as_str())
        .filter(|s| !s.is_empty())
}

fn not_responses(data: &str) -> DecodeError {
    DecodeError::Unexpected {
        endpoint: "responses",
        expected: "a Responses API event or response object",
        excerpt: excerpt(data),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Decoder, decode_response_body, decode_stream_message};
    use super::*;
    use inferbench_core::plan::EndpointType::Responses;
    use serde_json::json;

    // Shapes of the OpenAI Responses streaming events, written by hand.
    const CREATED: &str = r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[],"usage":null}}"#;
    const DELTA_A: &str = r#"{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hello"}"#;
    const DELTA_B: &str = r#"{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":1,"content_index":0,"delta":" world"}"#;
    const DONE: &str = r#"{"type":"response.output_text.done","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"text":"Hello world"}"#;
    const REASONING: &str = r#"{"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0,"delta":"think"}"#;
    const ARGS: &str = r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":2,"delta":"{\"city\":"}"#;
    const COMPLETED: &str = r#"{"type":"response.completed","response":{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":12,"output_tokens":7,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":19}}}"#;

    fn s(t: &str) -> Option<String> {
        Some(t.to_owned())
    }

    #[test]
    fn stream_events() {
        let dec = |d: &str| decode_stream_message(Responses, None, d).unwrap();
        assert_eq!(dec(CREATED), Decoded::default());
        assert_eq!(dec(DELTA_A).content, s("Hello"));
        assert_eq!(dec(REASONING).reasoning, s("think"));
        assert_eq!(dec(ARGS).tool, s("{\"city\":"));
        let d = dec(COMPLETED);
        assert_eq!(
            d.usage.unwrap()["output_tokens_details"]["reasoning_tokens"],
            json!(3)
        );
        assert_eq!(d.finish_reason, s("completed"));
        // Stateless: the done event repeats the deltas and counts nothing.
        assert_eq!(dec(DONE), Decoded::default());
        // The type can come from the SSE event name when the data has none.
        let d = decode_stream_message(
            Responses,
            Some("response.output_text.delta"),
            r#"{"delta":"x","output_index":0,"content_index":0}"#,
        )
        .unwrap();
        assert_eq!(d.content, s("x"));
    }

    #[test]
    fn done_counts_only_for_a_part_without_deltas() {
        let decoder = Decoder::plain(Responses);
        let mut st = decoder.stream();
        assert_eq!(st.message(None, DELTA_A).unwrap().content, s("Hello"));
        assert_eq!(st.message(None, DELTA_B).unwrap().content, s(" world"));
        assert_eq!(st.message(None, DONE).unwrap().content, None);
        // Another part that only had its done event.
        let other = r#"{"type":"response.output_text.done","output_index":3,"content_index":0,"text":"solo"}"#;
        assert_eq!(st.message(None, other).unwrap().content, s("solo"));
        // A fresh stream has seen no deltas.
        assert_eq!(
            decoder.stream().message(None, DONE).unwrap().content,
            s("Hello world")
        );
    }

    #[test]
    fn errors_and_failures() {
        let dec = |d: &str| decode_stream_message(Responses, None, d).unwrap();
        assert_eq!(
            dec(r#"{"type":"error","code":"server_error","message":"boom","sequence_number":3}"#)
                .error,
            s("boom")
        );
        assert_eq!(
            dec(r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"x","message":"model crashed"}}}"#).error,
            s("model crashed")
        );
        assert!(matches!(
            decode_stream_message(Responses, None, "[1]"),
            Err(DecodeError::Unexpected { .. })
        ));
        assert!(matches!(
            decode_stream_message(Responses, None, "nope"),
            Err(DecodeError::NotJson { .. })
        ));
    }

    #[test]
    fn incomplete_carries_usage_and_reason() {
        let d = decode_stream_message(
            Responses,
            None,
            r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":16}}}"#,
        )
        .unwrap();
        assert_eq!(d.usage.unwrap()["output_tokens"], json!(16));
        assert_eq!(d.finish_reason, s("max_output_tokens"));
    }

    #[test]
    fn whole_body_walks_output_items() {
        let body = r#"{"id":"resp_1","object":"response","status":"completed","output":[
            {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"plan "}],"content":[{"type":"reasoning_text","text":"steps"}]},
            {"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[]},{"type":"refusal","refusal":"no"},{"type":"output_text","text":" there"}]},
            {"type":"function_call","name":"get_weather","arguments":"{\"city\":\"Oslo\"}","call_id":"c1"}
        ],"usage":{"input_tokens":3,"output_tokens":9,"total_tokens":12}}"#;
        let d = decode_response_body(Responses, body).unwrap();
        assert_eq!(d.content, s("Hi there"));
        assert_eq!(d.reasoning, s("plan steps"));
        assert_eq!(d.tool, s("get_weather{\"city\":\"Oslo\"}"));
        assert_eq!(d.usage.unwrap()["total_tokens"], json!(12));
        assert_eq!(d.finish_reason, s("completed"));
        // The output_text convenience field when there is no output list.
        let d =
            decode_response_body(Responses, r#"{"object":"response","output_text":"ok"}"#).unwrap();
        assert_eq!(d.content, s("ok"));
        let d = decode_response_body(
            Responses,
            r#"{"error":{"message":"bad model","type":"invalid_request_error"}}"#,
        )
        .unwrap();
        assert_eq!(d.error, s("bad model"));
        assert!(matches!(
            decode_response_body(Responses, r#"{"choices":[]}"#),
            Err(DecodeError::Unexpected {
                endpoint: "responses",
                ..
            })
        ));
    }
}
