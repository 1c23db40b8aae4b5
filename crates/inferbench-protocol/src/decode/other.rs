//! Embeddings, the three rankings APIs, Hugging Face TGI, and the auto-detecting decoder of
//! the `raw` and `template` endpoints (with its field path).

use inferbench_core::plan::EndpointType;
use serde_json::Value;

use super::common::{error_decoded, error_of, parse, text, usage};
use super::{DecodeError, Decoded, excerpt};

/// Embeddings and rankings bodies carry no text: a body of the right shape decodes to an
/// empty [`Decoded`] (with `usage` when sent), anything else is an error.
pub(super) fn decode_vectors(endpoint: EndpointType, data: &str) -> Result<Decoded, DecodeError> {
    let v = parse(data)?;
    if let Some(e) = error_of(&v) {
        return Ok(error_decoded(e));
    }
    let (ok, expected) = match endpoint {
        EndpointType::Embeddings | EndpointType::NimEmbeddings | EndpointType::ChatEmbeddings => (
            v.get("data")
                .and_then(Value::as_array)
                .is_some_and(|items| {
                    !items.is_empty()
                        && items
                            .iter()
                            .all(|i| i.get("object").and_then(Value::as_str) == Some("embedding"))
                }),
            "data[] of objects with \"object\": \"embedding\"",
        ),
        EndpointType::NimRankings => (non_empty_list(v.get("rankings")), "a non-empty rankings[]"),
        // AIPerf takes any truthy `data`.
        EndpointType::ImageRetrieval => (
            match v.get("data") {
                Some(Value::Array(a)) => !a.is_empty(),
                Some(Value::Object(o)) => !o.is_empty(),
                Some(Value::String(s)) => !s.is_empty(),
                _ => false,
            },
            "a non-empty data",
        ),
        EndpointType::HfTeiRankings => (
            v.as_array().is_some_and(|a| !a.is_empty()) || non_empty_list(v.get("results")),
            "a non-empty list, or results[]",
        ),
        _ => (non_empty_list(v.get("results")), "a non-empty results[]"),
    };
    if !ok {
        return Err(DecodeError::Unexpected {
            endpoint: endpoint.as_str(),
            expected,
            excerpt: excerpt(data),
        });
    }
    Ok(Decoded {
        usage: usage(v.get("usage")),
        ..Decoded::default()
    })
}

fn non_empty_list(v: Option<&Value>) -> bool {
    v.and_then(Value::as_array).is_some_and(|a| !a.is_empty())
}

/// One TGI `/generate_stream` event: `token.text` is the output (never `generated_text`,
/// which repeats the whole text on the last event); `details.finish_reason` when present.
pub(super) fn decode_tgi_event(data: &str) -> Result<Decoded, DecodeError> {
    let v = parse(data)?;
    if let Some(e) = error_of(&v) {
        return Ok(error_decoded(e));
    }
    if !v.is_object() {
        return Err(not_tgi(data));
    }
    Ok(Decoded {
        content: text(v.get("token").and_then(|t| t.get("text"))),
        finish_reason: text(v.get("details").and_then(|d| d.get("finish_reason"))),
        ..Decoded::default()
    })
}

/// A TGI `/generate` body: `{"generated_text": …}` or `[{"generated_text": …}]`.
pub(super) fn decode_tgi_body(data: &str) -> Result<Decoded, DecodeError> {
    let v = parse(data)?;
    if let Some(e) = error_of(&v) {
        return Ok(error_decoded(e));
    }
    let obj = match &v {
        Value::Array(items) => items.first().unwrap_or(&Value::Null),
        other => other,
    };
    if !obj.is_object() || obj.get("generated_text").is_none() {
        return Err(not_tgi(data));
    }
    Ok(Decoded {
        content: text(obj.get("generated_text")),
        finish_reason: text(obj.get("details").and_then(|d| d.get("finish_reason"))),
        ..Decoded::default()
    })
}

fn not_tgi(data: &str) -> DecodeError {
    DecodeError::Unexpected {
        endpoint: "huggingface_generate",
        expected: "a TGI object with token.text or generated_text",
        excerpt: excerpt(data),
    }
}

/// A path into a response's JSON: fields and list indexes, e.g. `output.text`,
/// `choices[0].message.content`, `data[-1].embedding`, `"odd.key".x`. This is the plain-path
/// subset of JMESPath (no projections, filters, functions or pipes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    steps: Vec<Step>,
    source: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(i64),
}

impl FieldPath {
    /// Parses a path; the error names what is not supported and where.
    pub fn parse(path: &str) -> Result<FieldPath, DecodeError> {
        let bad = |at: usize, why: &str| DecodeError::BadFieldPath {
            path: path.to_owned(),
            message: format!("{why} at character {}", at + 1),
        };
        let b = path.as_bytes();
        let mut steps = Vec::new();
        let mut i = 0;
        // Whether a `.` is needed (or allowed) before the next key.
        let mut after_step = false;
        while i < b.len() {
            match b[i] {
                b'.' if after_step => {
                    i += 1;
                    after_step = false;
                    if i == b.len() {
                        return Err(bad(i - 1, "a path cannot end with '.'"));
                    }
                }
                b'[' if after_step => {
                    let end = path[i..]
                        .find(']')
                        .map(|e| i + e)
                        .ok_or_else(|| bad(i, "unclosed '['"))?;
                    let n: i64 = path[i + 1..end]
                        .trim()
                        .parse()
                        .map_err(|_| bad(i, "only integer indexes are supported inside [...]"))?;
                    steps.push(Step::Index(n));
                    i = end + 1;
                }
                b'"' if !after_step => {
                    let end = path[i + 1..]
                        .find('"')
                        .map(|e| i + 1 + e)
                        .ok_or_else(|| bad(i, "unclosed '\"'"))?;
                    steps.push(Step::Key(path[i + 1..end].to_owned()));
                    i = end + 1;
                    after_step = true;
                }
                c if !after_step && (c == b'_' || c.is_ascii_alphabetic()) => {
                    let end = path[i..]
                        .find(|ch: char| !(ch == '_' || ch.is_ascii_alphanumeric()))
                        .map_or(path.len(), |e| i + e);
                    steps.push(Step::Key(path[i..end].to_owned()));
                    i = end;
                    after_step = true;
                }
                _ => {
                    let ch = path[i..].chars().next().unwrap_or(' ');
                    return Err(bad(
                        i,
                        &format!("unexpected {ch:?} (supported: a.b, a[0], \"key\")"),
                    ));
                }
            }
        }
        if steps.is_empty() {
            return Err(DecodeError::BadFieldPath {
                path: path.to_owned(),
                message: "empty path".to_owned(),
            });
        }
        Ok(FieldPath {
            steps,
            source: path.to_owned(),
        })
    }

    /// The path as given.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The value at this path, if every step exists.
    pub fn lookup<'a>(&self, v: &'a Value) -> Option<&'a Value> {
        let mut cur = v;
        for s in &self.steps {
            cur = match s {
                Step::Key(k) => cur.get(k)?,
                Step::Index(n) => {
                    let a = cur.as_array()?;
                    let i = if *n < 0 {
                        a.len().checked_sub(n.unsigned_abs() as usize)?
                    } else {
                        *n as usize
                    };
                    a.get(i)?
                }
            };
        }
        Some(cur)
    }
}

/// What the auto-detection found in one JSON value.
enum Found {
    Text(String),
    /// A valid answer with no text to count (embeddings, rankings, an empty text field).
    NoText,
}

/// The `raw` and `template` decoder (AIPerf's auto-detect): a body that is not JSON is
/// text; otherwise the `response_field` value if it is set and truthy, else embeddings
/// (`data[].object == "embedding"`, `embeddings`, `embedding`), rankings (`rankings` or
/// `results` lists), then text (`text`, `content`, `response`, `output`, `result` as a string
/// or a list of strings joined, then `choices[0].text`, `.message.content`,
/// `.delta.content`). `usage` is passed through. With `strict`, finding nothing is an error
/// (a whole body); otherwise it is an empty [`Decoded`] (a stream event such as a role-only
/// chunk).
pub(super) fn decode_auto(
    field: Option<&FieldPath>,
    data: &str,
    strict: bool,
) -> Result<Decoded, DecodeError> {
    let Ok(v) = serde_json::from_str::<Value>(data) else {
        return Ok(Decoded {
            content: Some(data.to_owned()).filter(|s| !s.is_empty()),
            ..Decoded::default()
        });
    };
    if let Some(e) = error_of(&v) {
        return Ok(error_decoded(e));
    }
    let found = field
        .and_then(|f| f.lookup(&v))
        .and_then(convert)
        .or_else(|| detect(&v));
    let mut d = Decoded {
        usage: usage(v.get("usage")),
        ..Decoded::default()
    };
    match found {
        Some(Found::Text(t)) => d.content = Some(t),
        Some(Found::NoText) => {}
        None if strict && d.usage.is_none() => {
            return Err(DecodeError::Unexpected {
                endpoint: "raw/template",
                expected: "text, embeddings or rankings (set a response field to point at the output)",
                excerpt: excerpt(data),
            });
        }
        None => {}
    }
    Ok(d)
}

/// AIPerf's `convert_to_response_data`: a list of number lists or numbers → embeddings, a
/// list of objects → rankings, a non-empty string → text; anything else (or a falsy value)
/// is not found.
fn convert(v: &Value) -> Option<Found> {
    match v {
        Value::String(s) if !s.is_empty() => Some(Found::Text(s.clone())),
        Value::Array(items) => match items.first()? {
            Value::Array(inner) if inner.first().is_some_and(Value::is_number) => {
                Some(Found::NoText)
            }
            Value::Number(_) | Value::Object(_) => Some(Found::NoText),
            _ => None,
        },
        _ => None,
    }
}

fn detect(v: &Value) -> Option<Found> {
    if !v.is_object() {
        return convert(v);
    }
    if let Some(first) = v
        .get("data")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        && first.get("object").and_then(Value::as_str) == Some("embedding")
        && first.get("embedding").is_some()
    {
        return Some(Found::NoText);
    }
    for k in ["embeddings", "embedding"] {
        if let Some(first) = v.get(k).and_then(Value::as_array).and_then(|a| a.first())
            && (first.is_number() || first.is_array())
        {
            return Some(Found::NoText);
        }
    }
    for k in ["rankings", "results"] {
        if v.get(k).is_some_and(Value::is_array) {
            return Some(Found::NoText);
        }
    }
    for k in ["text", "content", "response", "output", "result"] {
        match v.get(k) {
            Some(Value::String(s)) => return text_found(s.clone()),
            Some(Value::Array(items))
                if !items.is_empty() && items.iter().all(Value::is_string) =>
            {
                return text_found(items.iter().filter_map(Value::as_str).collect());
            }
            _ => {}
        }
    }
    let choice = v.get("choices")?.as_array()?.first()?;
    text(choice.get("text"))
        .or_else(|| text(choice.get("message")?.get("content")))
        .or_else(|| text(choice.get("delta")?.get("content")))
        .map(Found::Text)
}

/// A text field that was found ends the search even when it is empty (no text then).
fn text_found(s: String) -> Option<Found> {
    if s.is_empty() {
        Some(Found::NoText)
    } else {
        Some(Found::Text(s))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Decoder, decode_response_body, decode_stream_message};
    use super::*;
    use inferbench_core::endpoint_plan::EndpointPlan;
    use serde_json::json;

    fn s(t: &str) -> Option<String> {
        Some(t.to_owned())
    }

    #[test]
    fn embeddings_succeed_without_text() {
        let body = r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2]},{"object":"embedding","index":1,"embedding":[0.3,0.4]}],"model":"e5","usage":{"prompt_tokens":8,"total_tokens":8}}"#;
        let d = decode_response_body(EndpointType::Embeddings, body).unwrap();
        assert_eq!(d.content, None);
        assert_eq!(d.usage, Some(json!({"prompt_tokens":8,"total_tokens":8})));
        // NIM answers in OpenAI's shape.
        let nim = decode_response_body(EndpointType::NimEmbeddings, body).unwrap();
        assert_eq!((nim.content, nim.usage), (None, d.usage.clone()));
        assert!(decode_response_body(EndpointType::NimEmbeddings, r#"{"data":[]}"#).is_err());
        for bad in [
            r#"{"data":[]}"#,
            r#"{"data":[{"object":"list"}]}"#,
            r#"{"choices":[]}"#,
        ] {
            assert!(
                matches!(
                    decode_response_body(EndpointType::Embeddings, bad),
                    Err(DecodeError::Unexpected {
                        endpoint: "embeddings",
                        ..
                    })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn rankings_shapes() {
        let ok = |e, b: &str| decode_response_body(e, b).unwrap();
        assert_eq!(
            ok(
                EndpointType::NimRankings,
                r#"{"rankings":[{"index":1,"logit":2.5},{"index":0,"logit":-1.0}]}"#
            ),
            Decoded::default()
        );
        ok(EndpointType::HfTeiRankings, r#"[{"index":0,"score":0.9}]"#);
        ok(
            EndpointType::HfTeiRankings,
            r#"{"results":[{"index":0,"score":0.9}]}"#,
        );
        let d = ok(
            EndpointType::CohereRankings,
            r#"{"id":"x","results":[{"index":0,"relevance_score":0.8}],"meta":{"billed_units":{"search_units":1}}}"#,
        );
        assert_eq!(d, Decoded::default());
        assert!(decode_response_body(EndpointType::NimRankings, r#"{"rankings":[]}"#).is_err());
        assert!(decode_response_body(EndpointType::CohereRankings, r#"[{"index":0}]"#).is_err());
        assert_eq!(
            decode_response_body(
                EndpointType::CohereRankings,
                r#"{"message":"x","error":"invalid model"}"#
            )
            .unwrap()
            .error,
            s("invalid model")
        );
    }

    #[test]
    fn tgi_stream_and_body() {
        let ev = r#"{"index":1,"token":{"id":5,"text":" the","logprob":-0.1,"special":false},"generated_text":null,"details":null}"#;
        let d = decode_stream_message(EndpointType::HuggingfaceGenerate, None, ev).unwrap();
        assert_eq!(d.content, s(" the"));
        // The last event repeats the whole text in generated_text: only token.text counts.
        let last = r#"{"index":2,"token":{"id":6,"text":" end","logprob":0.0,"special":false},"generated_text":" the end","details":{"finish_reason":"length","generated_tokens":2,"seed":null}}"#;
        let d = decode_stream_message(EndpointType::HuggingfaceGenerate, None, last).unwrap();
        assert_eq!(d.content, s(" end"));
        assert_eq!(d.finish_reason, s("length"));
        let d = decode_response_body(
            EndpointType::HuggingfaceGenerate,
            r#"{"generated_text":"abc"}"#,
        )
        .unwrap();
        assert_eq!(d.content, s("abc"));
        let d = decode_response_body(
            EndpointType::HuggingfaceGenerate,
            r#"[{"generated_text":"xyz","details":{"finish_reason":"eos_token"}}]"#,
        )
        .unwrap();
        assert_eq!((d.content, d.finish_reason), (s("xyz"), s("eos_token")));
        let d = decode_stream_message(
            EndpointType::HuggingfaceGenerate,
            None,
            r#"{"error":"Input validation error","error_type":"validation"}"#,
        )
        .unwrap();
        assert_eq!(d.error, s("Input validation error"));
        assert!(decode_response_body(EndpointType::HuggingfaceGenerate, r#"{"x":1}"#).is_err());
    }

    #[test]
    fn raw_auto_detect() {
        let body = |d: &str| decode_response_body(EndpointType::Raw, d).unwrap();
        assert_eq!(body("plain words").content, s("plain words"));
        assert_eq!(body(r#"{"text":"a"}"#).content, s("a"));
        assert_eq!(body(r#"{"output":["a","b"]}"#).content, s("ab"));
        assert_eq!(
            body(r#"{"choices":[{"message":{"content":"m"}}]}"#).content,
            s("m")
        );
        assert_eq!(
            body(r#"{"choices":[{"delta":{"content":"d"}}]}"#).content,
            s("d")
        );
        assert_eq!(
            body(r#"{"data":[{"object":"embedding","embedding":[1]}]}"#),
            Decoded::default()
        );
        assert_eq!(body(r#"{"embedding":[0.5,0.25]}"#), Decoded::default());
        assert_eq!(body(r#"{"results":[]}"#), Decoded::default());
        assert_eq!(body("[[1,2],[3,4]]"), Decoded::default());
        // Embeddings come before text: a body with both is an embeddings answer.
        assert_eq!(body(r#"{"embeddings":[[1]],"text":"t"}"#).content, None);
        let d = body(r#"{"content":"c","usage":{"prompt_tokens":1}}"#);
        assert_eq!(d.usage, Some(json!({"prompt_tokens":1})));
        assert!(matches!(
            decode_response_body(EndpointType::Raw, r#"{"foo":1}"#),
            Err(DecodeError::Unexpected { .. })
        ));
        // A stream event with nothing to count is not an error.
        assert_eq!(
            decode_stream_message(
                EndpointType::Raw,
                None,
                r#"{"choices":[{"delta":{"role":"assistant"}}]}"#
            )
            .unwrap(),
            Decoded::default()
        );
    }

    #[test]
    fn response_field_first_then_auto_detect() {
        let plan = EndpointPlan {
            response_field: Some("result.outputs[0].text".into()),
            ..Default::default()
        };
        let dec = Decoder::new(EndpointType::Template, &plan).unwrap();
        let d = dec
            .body(r#"{"text":"not this","result":{"outputs":[{"text":"this"}]}}"#)
            .unwrap();
        assert_eq!(d.content, s("this"));
        // A miss (or a falsy value) falls back to auto-detection, as in AIPerf's raw endpoint.
        assert_eq!(
            dec.body(r#"{"text":"fallback"}"#).unwrap().content,
            s("fallback")
        );
        assert_eq!(
            dec.body(r#"{"result":{"outputs":[{"text":""}]},"text":"fb"}"#)
                .unwrap()
                .content,
            s("fb")
        );
        let mut st = dec.stream();
        assert_eq!(
            st.message(None, r#"{"result":{"outputs":[{"text":"tok"}]}}"#)
                .unwrap()
                .content,
            s("tok")
        );
        // A field that holds vectors is a valid answer with no text.
        let plan = EndpointPlan {
            response_field: Some("out.vec".into()),
            ..Default::default()
        };
        let dec = Decoder::new(EndpointType::Raw, &plan).unwrap();
        assert_eq!(
            dec.body(r#"{"out":{"vec":[0.1,0.2]}}"#).unwrap(),
            Decoded::default()
        );
    }

    #[test]
    fn field_paths() {
        let v = json!({"a": {"b c": [10, 20, {"d": "x"}]}, "_k1": true});
        let get = |p: &str| FieldPath::parse(p).unwrap().lookup(&v).cloned();
        assert_eq!(get("a.\"b c\"[2].d"), Some(json!("x")));
        assert_eq!(get("a.\"b c\"[-3]"), Some(json!(10)));
        assert_eq!(get("a.\"b c\"[-4]"), None);
        assert_eq!(get("a.\"b c\"[7]"), None);
        assert_eq!(get("_k1"), Some(json!(true)));
        assert_eq!(get("a.missing"), None);
        assert_eq!(get("a[0]"), None);
        for bad in [
            "", "a.", ".a", "a[*]", "a[?x]", "a | b", "a..b", "[0]", "a[0", "1a",
        ] {
            assert!(
                matches!(FieldPath::parse(bad), Err(DecodeError::BadFieldPath { .. })),
                "{bad:?}"
            );
        }
        let e = FieldPath::parse("data[*].embedding")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("data[*].embedding") && e.contains("integer indexes"),
            "{e}"
        );
    }
}
