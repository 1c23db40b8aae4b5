//! Anthropic Messages API (`/v1/messages`), following AIPerf 0.13's parser.
//!
//! Streamed events (by their JSON `type`, else the SSE `event:` name): `content_block_delta`
//! with `text_delta` → content, `thinking_delta` → reasoning, `input_json_delta` → tool text;
//! `message_start` → `message.usage` (input tokens); `message_delta` → `usage` (output
//! tokens) and `delta.stop_reason`. `ping`, `content_block_start/stop`, `message_stop` and
//! `signature_delta` carry nothing. A whole body (`"type": "message"`) is read block by block.

use serde_json::Value;

use super::common::{append, error_decoded, error_of, parse, text, usage};
use super::{DecodeError, Decoded, excerpt};

pub(super) fn decode_event(event: Option<&str>, data: &str) -> Result<Decoded, DecodeError> {
    let v = parse(data)?;
    if !v.is_object() {
        return Err(not_messages(data));
    }
    if let Some(e) = error_of(&v) {
        return Ok(error_decoded(e));
    }
    let mut d = Decoded::default();
    match v.get("type").and_then(Value::as_str).or(event) {
        Some("content_block_delta") => {
            let delta = v.get("delta");
            let field = |k: &str| text(delta.and_then(|x| x.get(k)));
            match delta.and_then(|x| x.get("type")).and_then(Value::as_str) {
                Some("text_delta") => d.content = field("text"),
                Some("thinking_delta") => d.reasoning = field("thinking"),
                Some("input_json_delta") => d.tool = field("partial_json"),
                _ => {}
            }
        }
        Some("message_start") => {
            d.usage = usage(v.get("message").and_then(|m| m.get("usage")));
        }
        Some("message_delta") => {
            d.usage = usage(v.get("usage"));
            d.finish_reason = text(v.get("delta").and_then(|x| x.get("stop_reason")));
        }
        Some("message") => return Ok(walk_message(&v)),
        _ => {}
    }
    Ok(d)
}

/// A whole (non-streamed) Messages body.
pub(super) fn decode_body(data: &str) -> Result<Decoded, DecodeError> {
    let v = parse(data)?;
    if let Some(e) = error_of(&v) {
        return Ok(error_decoded(e));
    }
    if v.get("type").and_then(Value::as_str) != Some("message")
        && !v.get("content").is_some_and(Value::is_array)
    {
        return Err(not_messages(data));
    }
    Ok(walk_message(&v))
}

/// `text` blocks → content, `thinking` blocks → reasoning, `tool_use` blocks → tool text
/// (`name`, then `input` as compact JSON when it is not empty).
fn walk_message(v: &Value) -> Decoded {
    let mut d = Decoded {
        usage: usage(v.get("usage")),
        finish_reason: text(v.get("stop_reason")),
        ..Decoded::default()
    };
    for block in v
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = text(block.get("text")) {
                    append(&mut d.content, &t);
                }
            }
            Some("thinking") => {
                if let Some(t) = text(block.get("thinking")) {
                    append(&mut d.reasoning, &t);
                }
            }
            Some("tool_use") => {
                if let Some(n) = text(block.get("name")) {
                    append(&mut d.tool, &n);
                }
                match block.get("input") {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(m)) if m.is_empty() => {}
                    Some(input) => append(&mut d.tool, &input.to_string()),
                }
            }
            _ => {}
        }
    }
    d
}

fn not_messages(data: &str) -> DecodeError {
    DecodeError::Unexpected {
        endpoint: "messages",
        expected: "an Anthropic Messages event or message object",
        excerpt: excerpt(data),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{decode_response_body, decode_stream_message};
    use super::*;
    use inferbench_core::plan::EndpointType::Messages;
    use serde_json::json;

    // Anthropic Messages streaming events, written by hand after the documented shapes.
    const START: &str = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}"#;
    const BLOCK_START: &str =
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#;
    const PING: &str = r#"{"type": "ping"}"#;
    const TEXT: &str =
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}"#;
    const THINK: &str = r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me see"}}"#;
    const SIG: &str = r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}"#;
    const JSON: &str = r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"loc"}}"#;
    const BLOCK_STOP: &str = r#"{"type":"content_block_stop","index":0}"#;
    const DELTA: &str = r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":15}}"#;
    const STOP: &str = r#"{"type":"message_stop"}"#;

    fn s(t: &str) -> Option<String> {
        Some(t.to_owned())
    }

    #[test]
    fn stream_events() {
        let dec = |ev: &str, d: &str| decode_stream_message(Messages, Some(ev), d).unwrap();
        assert_eq!(
            dec("message_start", START).usage,
            Some(json!({"input_tokens":25,"output_tokens":1}))
        );
        for (ev, d) in [
            ("content_block_start", BLOCK_START),
            ("ping", PING),
            ("content_block_delta", SIG),
            ("content_block_stop", BLOCK_STOP),
            ("message_stop", STOP),
        ] {
            assert_eq!(dec(ev, d), Decoded::default(), "{d}");
        }
        assert_eq!(dec("content_block_delta", TEXT).content, s("Hello"));
        assert_eq!(dec("content_block_delta", THINK).reasoning, s("Let me see"));
        assert_eq!(dec("content_block_delta", JSON).tool, s("{\"loc"));
        let d = dec("message_delta", DELTA);
        assert_eq!(d.usage, Some(json!({"output_tokens":15})));
        assert_eq!(d.finish_reason, s("max_tokens"));
        // Without the SSE event name, the data's type decides.
        assert_eq!(
            decode_stream_message(Messages, None, TEXT).unwrap().content,
            s("Hello")
        );
    }

    #[test]
    fn error_event_and_body() {
        let e = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            decode_stream_message(Messages, Some("error"), e)
                .unwrap()
                .error,
            s("Overloaded")
        );
        assert_eq!(
            decode_response_body(Messages, e).unwrap().error,
            s("Overloaded")
        );
    }

    #[test]
    fn whole_body_reads_blocks() {
        let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude",
            "content":[{"type":"thinking","thinking":"hmm","signature":"x"},
                       {"type":"text","text":"Hi"},
                       {"type":"tool_use","id":"t1","name":"get_weather","input":{"city":"Oslo"}},
                       {"type":"text","text":" there"}],
            "stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":20}}"#;
        let d = decode_response_body(Messages, body).unwrap();
        assert_eq!(d.content, s("Hi there"));
        assert_eq!(d.reasoning, s("hmm"));
        assert_eq!(d.tool, s("get_weather{\"city\":\"Oslo\"}"));
        assert_eq!(d.finish_reason, s("end_turn"));
        assert_eq!(d.usage.unwrap()["output_tokens"], json!(20));
        // An empty tool input adds nothing after the name.
        let d = decode_response_body(
            Messages,
            r#"{"type":"message","content":[{"type":"tool_use","name":"now","input":{}}]}"#,
        )
        .unwrap();
        assert_eq!(d.tool, s("now"));
        assert!(matches!(
            decode_response_body(Messages, r#"{"choices":[]}"#),
            Err(DecodeError::Unexpected {
                endpoint: "messages",
                ..
            })
        ));
    }
}
