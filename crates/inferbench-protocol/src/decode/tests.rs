//! Tests of the chat and completions decoders.

use super::*;
use serde_json::json;

// Literal `value` strings from /work/shared/fixtures/*/aiperf/profile_export_raw.jsonl.
pub(super) const S1_FIRST: &str = r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"role":"assistant","content":" the"},"finish_reason":null}]}"#;
const S1_LAST: &str = r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"content":" that"},"finish_reason":"length"}]}"#;
pub(super) const S1_USAGE: &str = r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[],"usage":{"prompt_tokens":23,"completion_tokens":16,"total_tokens":39}}"#;
const S2_ROLE: &str = r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#;
pub(super) const S2_REASONING: &str = r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"reasoning_content":" the"},"finish_reason":null}]}"#;
const S2_USAGE: &str = r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[],"usage":{"prompt_tokens":23,"completion_tokens":16,"total_tokens":39,"completion_tokens_details":{"reasoning_tokens":8}}}"#;
const S3_MULTI: &str = r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"content":" and to of"},"finish_reason":null}]}"#;
pub(super) const S4_TEXT: &str = r#"{"id":"cmpl-mock","object":"text_completion","created":0,"model":"mock-model","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null}]}"#;
const S4_LAST: &str = r#"{"id":"cmpl-mock","object":"text_completion","created":0,"model":"mock-model","choices":[{"index":0,"text":" that","logprobs":null,"finish_reason":"length"}]}"#;
const S4_USAGE: &str = r#"{"id":"cmpl-mock","object":"text_completion","created":0,"model":"mock-model","choices":[],"usage":{"prompt_tokens":23,"completion_tokens":16,"total_tokens":39}}"#;
pub(super) const S5_BODY: &str = r#"{"id":"chatcmpl-mock","object":"chat.completion","created":0,"model":"mock-model","choices":[{"index":0,"message":{"role":"assistant","content":" the and to of you my a that the and to of you my a that"},"finish_reason":"length"}],"usage":{"prompt_tokens":23,"completion_tokens":16,"total_tokens":39}}"#;
pub(super) const S6_ERROR: &str = r#"{"error":{"message":"mockllm: injected internal error","type":"InternalServerError","param":null,"code":500}}"#;

fn text(s: &str) -> Option<String> {
    Some(s.to_owned())
}

#[test]
fn s1_first_and_last_chunks() {
    let d = decode_chat_chunk(S1_FIRST).unwrap();
    assert_eq!(
        d,
        Decoded {
            content: text(" the"),
            ..Default::default()
        }
    );
    let d = decode_chat_chunk(S1_LAST).unwrap();
    assert_eq!(d.content, text(" that"));
    assert_eq!(d.finish_reason, text("length"));
    assert_eq!(d.usage, None);
}

#[test]
fn usage_only_chunk() {
    let d = decode_chat_chunk(S1_USAGE).unwrap();
    assert_eq!(
        d,
        Decoded {
            usage: Some(json!({"prompt_tokens":23,"completion_tokens":16,"total_tokens":39})),
            ..Default::default()
        }
    );
    let d = decode_chat_chunk(S2_USAGE).unwrap();
    assert_eq!(
        d.usage.unwrap()["completion_tokens_details"]["reasoning_tokens"],
        json!(8)
    );
}

#[test]
fn s2_role_only_and_reasoning_chunks() {
    let d = decode_chat_chunk(S2_ROLE).unwrap();
    // The empty content is kept as sent; it carries no text.
    assert_eq!(d.content, text(""));
    assert_eq!(d.reasoning, None);
    let d = decode_chat_chunk(S2_REASONING).unwrap();
    assert_eq!(d.content, None);
    assert_eq!(d.reasoning, text(" the"));
}

#[test]
fn s3_multi_token_chunk() {
    assert_eq!(
        decode_chat_chunk(S3_MULTI).unwrap().content,
        text(" and to of")
    );
}

#[test]
fn s4_completions_chunks() {
    let d = decode_completions_chunk(S4_TEXT).unwrap();
    assert_eq!(d.content, text(" the"));
    assert_eq!(d.finish_reason, None);
    let d = decode_completions_chunk(S4_LAST).unwrap();
    assert_eq!(d.content, text(" that"));
    assert_eq!(d.finish_reason, text("length"));
    let d = decode_completions_chunk(S4_USAGE).unwrap();
    assert_eq!(d.content, None);
    assert_eq!(d.usage.unwrap()["total_tokens"], json!(39));
}

#[test]
fn s5_chat_body() {
    let d = decode_chat_body(S5_BODY).unwrap();
    assert_eq!(
        d.content,
        text(" the and to of you my a that the and to of you my a that")
    );
    assert_eq!(d.finish_reason, text("length"));
    assert_eq!(d.usage.unwrap()["completion_tokens"], json!(16));
    assert_eq!(d.error, None);
}

#[test]
fn s6_error_body() {
    let d = decode_chat_body(S6_ERROR).unwrap();
    assert_eq!(d.error, text("mockllm: injected internal error"));
    assert_eq!(d.content, None);
    // The same object arriving as a stream chunk.
    assert_eq!(
        decode_chat_chunk(S6_ERROR).unwrap().error,
        text("mockllm: injected internal error")
    );
}

#[test]
fn other_error_shapes() {
    assert_eq!(
        decode_chat_chunk(r#"{"error":"overloaded"}"#)
            .unwrap()
            .error,
        text("overloaded")
    );
    let vllm = r#"{"object":"error","message":"bad request","type":"BadRequestError","code":400}"#;
    assert_eq!(decode_chat_body(vllm).unwrap().error, text("bad request"));
    assert_eq!(
        decode_chat_chunk(r#"{"error":{"code":1}}"#).unwrap().error,
        text(r#"{"code":1}"#)
    );
    // A null error is no error.
    let d = decode_chat_chunk(r#"{"choices":[],"error":null}"#).unwrap();
    assert_eq!(d, Decoded::default());
}

#[test]
fn reasoning_falls_back_to_reasoning_field() {
    let d = decode_chat_chunk(r#"{"choices":[{"delta":{"reasoning":"r"}}]}"#).unwrap();
    assert_eq!(d.reasoning, text("r"));
    // An empty reasoning_content falls through, like Python's `or`.
    let d =
        decode_chat_chunk(r#"{"choices":[{"delta":{"reasoning_content":"","reasoning":"r"}}]}"#)
            .unwrap();
    assert_eq!(d.reasoning, text("r"));
    let d =
        decode_chat_chunk(r#"{"choices":[{"delta":{"reasoning_content":"a","reasoning":"b"}}]}"#)
            .unwrap();
    assert_eq!(d.reasoning, text("a"));
}

#[test]
fn tool_calls_give_name_plus_arguments() {
    let first = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}"#;
    assert_eq!(decode_chat_chunk(first).unwrap().tool, text("get_weather"));
    let next = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}"#;
    assert_eq!(decode_chat_chunk(next).unwrap().tool, text("{\"city\":"));
    let body = r#"{"object":"chat.completion","choices":[{"message":{"content":null,"tool_calls":[{"function":{"name":"a","arguments":"{}"}},{"function":{"name":"b","arguments":"[1]"}}]},"finish_reason":"tool_calls"}]}"#;
    let d = decode_chat_body(body).unwrap();
    assert_eq!(d.tool, text("a{}b[1]"));
    assert_eq!(d.content, None);
    assert_eq!(d.finish_reason, text("tool_calls"));
}

#[test]
fn escapes_unknown_fields_and_nulls_are_tolerated() {
    let s = r#"{"id":null,"object":"chat.completion.chunk","system_fingerprint":{"x":[1,2]},"choices":[{"index":0,"delta":{"content":"a\"b\u00e9\n","role":null,"reasoning_content":null,"tool_calls":null,"extra":[{}]},"logprobs":{"content":[]},"finish_reason":null,"stop_reason":null}],"usage":null}"#;
    let d = decode_chat_chunk(s).unwrap();
    assert_eq!(
        d,
        Decoded {
            content: text("a\"bé\n"),
            ..Default::default()
        }
    );
    // Non-string content (e.g. a list of parts) is read as absent rather than failing.
    let d = decode_chat_chunk(r#"{"choices":[{"delta":{"content":[{"type":"text"}]}}]}"#).unwrap();
    assert_eq!(d.content, None);
    let d = decode_chat_chunk(r#"{"choices":[{"delta":{"content":"c","tool_calls":{"x":1}}}]}"#)
        .unwrap();
    assert_eq!((d.content, d.tool), (text("c"), None));
}

#[test]
fn only_the_first_choice_counts() {
    let s = r#"{"choices":[{"text":"a"},{"text":"b"},7]}"#;
    assert_eq!(decode_completions_chunk(s).unwrap().content, text("a"));
}

#[test]
fn chat_message_and_delta_fall_back_to_each_other() {
    let body_in_stream = r#"{"object":"chat.completion","choices":[{"message":{"content":"x"}}]}"#;
    assert_eq!(
        decode_chat_chunk(body_in_stream).unwrap().content,
        text("x")
    );
    let delta_in_body = r#"{"choices":[{"delta":{"content":"y"}}]}"#;
    assert_eq!(decode_chat_body(delta_in_body).unwrap().content, text("y"));
}

#[test]
fn completions_body() {
    let s = r#"{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" hi","finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}"#;
    let d = decode_completions_body(s).unwrap();
    assert_eq!(d.content, text(" hi"));
    assert_eq!(d.finish_reason, text("stop"));
    assert_eq!(d.usage.unwrap()["total_tokens"], json!(2));
}

#[test]
fn not_json_and_not_openai() {
    assert!(matches!(
        decode_chat_chunk("hello"),
        Err(DecodeError::NotJson { excerpt }) if excerpt == "hello"
    ));
    assert!(matches!(
        decode_chat_chunk(r#"{"choices":[{"delta""#),
        Err(DecodeError::NotJson { .. })
    ));
    for s in [r#"{"foo":1}"#, "[1,2]", "42", r#""str""#, "null", "{}"] {
        assert!(
            matches!(decode_chat_chunk(s), Err(DecodeError::NotOpenAi { .. })),
            "{s}"
        );
    }
    // JSON whose choices are the wrong type is also not OpenAI-shaped.
    assert!(matches!(
        decode_completions_chunk(r#"{"choices":{"text":"a"}}"#),
        Err(DecodeError::NotOpenAi { .. })
    ));
}

#[test]
fn excerpts_are_short_and_cut_on_char_boundaries() {
    let long = format!("{{\"x\":\"{}\"}}", "é".repeat(500));
    let Err(DecodeError::NotOpenAi { excerpt }) = decode_chat_chunk(&long) else {
        panic!("expected NotOpenAi");
    };
    // `{"x":"` is 6 bytes and each `é` 2: 300 bytes hold the 6 and 147 of them, whole.
    assert_eq!(excerpt, format!("{{\"x\":\"{}…", "é".repeat(147)));
}

#[test]
fn done_marker() {
    assert!(is_done("[DONE]"));
    assert!(is_done(" [DONE]\n"));
    assert!(!is_done("[DONE"));
    assert!(!is_done(S1_FIRST));
}
