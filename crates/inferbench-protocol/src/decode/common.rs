//! Helpers shared by the decoders of the non-OpenAI-chat APIs, which read a
//! `serde_json::Value` (their events are rarer or larger than chat chunks, and their shapes
//! vary more).

use serde_json::Value;

use super::{DecodeError, Decoded, excerpt};

/// Parses `data` as JSON; `NotJson` names an excerpt when it is not.
pub(super) fn parse(data: &str) -> Result<Value, DecodeError> {
    serde_json::from_str(data).map_err(|_| DecodeError::NotJson {
        excerpt: excerpt(data),
    })
}

/// The error message of an error object in any of the shapes the supported APIs use:
/// a top-level `error` (a string, or an object with `message`; `null`/`false` are no error),
/// Anthropic's and the Responses API's `{"type":"error",…}`, the Responses API's
/// `response.failed` event and `status: failed` body, and vLLM's `{"object":"error",…}`.
pub(super) fn error_of(v: &Value) -> Option<String> {
    match v.get("error") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => {}
        Some(Value::String(s)) => return Some(s.clone()),
        Some(e) => return Some(message_of(e)),
    }
    match v.get("type").and_then(Value::as_str) {
        Some("error") => return Some(message_of(v)),
        Some("response.failed") => {
            let e = v.get("response").and_then(|r| r.get("error"));
            return Some(match e {
                Some(e) if !e.is_null() => message_of(e),
                _ => "response failed".to_owned(),
            });
        }
        _ => {}
    }
    if v.get("status").and_then(Value::as_str) == Some("failed") {
        return Some("response failed".to_owned());
    }
    if v.get("object").and_then(Value::as_str) == Some("error") {
        return Some(message_of(v));
    }
    None
}

/// `message` of an error object, else its compact JSON (cut short).
fn message_of(e: &Value) -> String {
    e.get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| excerpt(&e.to_string()))
}

/// A string field, if it is a non-empty string (AIPerf's truthiness test on text).
pub(super) fn text(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// The `usage` object of `v`, if it is a non-empty object.
pub(super) fn usage(v: Option<&Value>) -> Option<Value> {
    match v {
        Some(u @ Value::Object(m)) if !m.is_empty() => Some(u.clone()),
        _ => None,
    }
}

/// Decoded holding only an error message.
pub(super) fn error_decoded(message: String) -> Decoded {
    Decoded {
        error: Some(message),
        ..Decoded::default()
    }
}

/// Appends `part` to an optional accumulated text.
pub(super) fn append(acc: &mut Option<String>, part: &str) {
    acc.get_or_insert_with(String::new).push_str(part);
}
