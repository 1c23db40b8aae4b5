//! The one reader of each tool's `inputs.json` (the request bodies a run sent), shared by
//! verbatim replay, the importers and re-scoring. Pure: it takes the file's text; errors name
//! the JSON path (`data[1].payloads[0]`), and the caller adds the file name.
//!
//! - AIPerf: `{"data": [{"session_id", "payloads": [body…]}]}`, one conversation per entry.
//! - GenAI-Perf: `{"data": [{"payload": [body…], "session_id"?: […], "delay"?: […],
//!   "timestamp"?: […]}]}`, one turn per body, the metadata lists one value per body (a
//!   single value applies to every body of the entry).

use serde_json::{Map, Value};

use crate::workload::{Payload, Workload};

/// Why an `inputs.json` cannot be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InputsJsonError {
    /// The text is not JSON; `message` is the parser's (it repeats line and column).
    #[error("not valid JSON (column {column}): {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// A value is not what the format holds there.
    #[error("field '{path}': {message}")]
    Field { path: String, message: String },
}

/// One AIPerf session: its turns' bodies in order.
#[derive(Clone, Debug, PartialEq)]
pub struct AiperfSession {
    /// `None` when the entry has none (AIPerf always writes one).
    pub session_id: Option<String>,
    pub payloads: Vec<Map<String, Value>>,
}

/// One body of a GenAI-Perf entry, with its metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct GenaiPerfTurn {
    pub body: Map<String, Value>,
    pub session_id: Option<String>,
    /// `delay` (ms after the previous turn of the session).
    pub delay_ms: Option<f64>,
    /// `timestamp` (ms from the trace's zero).
    pub timestamp_ms: Option<f64>,
}

/// One GenAI-Perf `data` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct GenaiPerfEntry {
    pub turns: Vec<GenaiPerfTurn>,
}

/// Either tool's file, as [`read`] found it.
#[derive(Clone, Debug, PartialEq)]
pub enum InputsJson {
    Aiperf(Vec<AiperfSession>),
    GenaiPerf(Vec<GenaiPerfEntry>),
}

fn field(path: impl Into<String>, message: impl Into<String>) -> InputsJsonError {
    InputsJsonError::Field {
        path: path.into(),
        message: message.into(),
    }
}

/// "a number", "an object", … for messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The `data` entries, each checked to be an object.
fn entries(text: &str) -> Result<Vec<Map<String, Value>>, InputsJsonError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| InputsJsonError::Syntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let data = match doc {
        Value::Object(mut o) => match o.remove("data") {
            Some(Value::Array(d)) => d,
            _ => return Err(field("data", "expected {\"data\": [ ... ]}")),
        },
        _ => return Err(field("data", "expected {\"data\": [ ... ]}")),
    };
    if data.is_empty() {
        return Err(field("data", "no entries"));
    }
    data.into_iter()
        .enumerate()
        .map(|(i, e)| match e {
            Value::Object(m) => Ok(m),
            other => Err(field(
                format!("data[{i}]"),
                format!("expected an object, got {}", kind(&other)),
            )),
        })
        .collect()
}

/// The bodies under `data[i].key`: a non-empty list of objects.
fn bodies(
    i: usize,
    key: &str,
    e: &Map<String, Value>,
) -> Result<Vec<Map<String, Value>>, InputsJsonError> {
    let items = match e.get(key) {
        None => return Err(field(format!("data[{i}].{key}"), "missing")),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(field(
                format!("data[{i}].{key}"),
                "expected a list of request bodies",
            ));
        }
    };
    if items.is_empty() {
        return Err(field(format!("data[{i}].{key}"), "no request bodies"));
    }
    items
        .iter()
        .enumerate()
        .map(|(j, b)| match b {
            Value::Object(m) => Ok(m.clone()),
            other => Err(field(
                format!("data[{i}].{key}[{j}]"),
                format!("expected a request body (an object), got {}", kind(other)),
            )),
        })
        .collect()
}

/// Reads either tool's file; the form is taken from the first entry (`payloads`: AIPerf,
/// `payload`: GenAI-Perf). Triton-format GenAI-Perf inputs (`text_input`) are refused.
pub fn read(text: &str) -> Result<InputsJson, InputsJsonError> {
    let data = entries(text)?;
    let first = &data[0];
    if first.contains_key("payloads") {
        aiperf_sessions(data).map(InputsJson::Aiperf)
    } else if first.contains_key("payload") {
        genai_perf_entries(data).map(InputsJson::GenaiPerf)
    } else if first.contains_key("text_input") {
        Err(field(
            "data[0].text_input",
            "Triton-format inputs.json (GenAI-Perf's kserve/tensorrtllm) is not supported: \
             only OpenAI bodies",
        ))
    } else {
        Err(field(
            "data[0]",
            "expected \"payloads\" (AIPerf) or \"payload\" (GenAI-Perf)",
        ))
    }
}

/// Reads AIPerf's `inputs.json`.
pub fn read_aiperf(text: &str) -> Result<Vec<AiperfSession>, InputsJsonError> {
    aiperf_sessions(entries(text)?)
}

/// Reads GenAI-Perf's (OpenAI-kind) `inputs.json`.
pub fn read_genai_perf(text: &str) -> Result<Vec<GenaiPerfEntry>, InputsJsonError> {
    genai_perf_entries(entries(text)?)
}

fn aiperf_sessions(data: Vec<Map<String, Value>>) -> Result<Vec<AiperfSession>, InputsJsonError> {
    data.iter()
        .enumerate()
        .map(|(i, e)| {
            let session_id = match e.get("session_id") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(v) => {
                    return Err(field(
                        format!("data[{i}].session_id"),
                        format!("expected a string, got {}", kind(v)),
                    ));
                }
            };
            Ok(AiperfSession {
                session_id,
                payloads: bodies(i, "payloads", e)?,
            })
        })
        .collect()
}

fn genai_perf_entries(
    data: Vec<Map<String, Value>>,
) -> Result<Vec<GenaiPerfEntry>, InputsJsonError> {
    let mut out = Vec::with_capacity(data.len());
    for (i, e) in data.iter().enumerate() {
        let meta = |key: &str, j: usize| -> Option<&Value> {
            match e.get(key) {
                Some(Value::Array(a)) => a.get(j),
                Some(Value::Null) | None => None,
                Some(v) => Some(v),
            }
        };
        let mut turns = Vec::new();
        for (j, body) in bodies(i, "payload", e)?.into_iter().enumerate() {
            let ms = |key: &str| -> Result<Option<f64>, InputsJsonError> {
                match meta(key, j) {
                    None | Some(Value::Null) => Ok(None),
                    Some(v) => match v.as_f64() {
                        Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                        _ => Err(field(
                            format!("data[{i}].{key}[{j}]"),
                            format!("expected a number of ms >= 0, got {v}"),
                        )),
                    },
                }
            };
            let session_id = match meta("session_id", j) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                Some(v) => {
                    return Err(field(
                        format!("data[{i}].session_id[{j}]"),
                        format!("expected a string, got {}", kind(v)),
                    ));
                }
            };
            turns.push(GenaiPerfTurn {
                delay_ms: ms("delay")?,
                timestamp_ms: ms("timestamp")?,
                body,
                session_id,
            });
        }
        out.push(GenaiPerfEntry { turns });
    }
    Ok(out)
}

/// AIPerf sessions as the workload that was sent: each body as compact JSON (key order kept),
/// the sessions' turns in file order; a session without an id gets an empty one.
pub fn aiperf_workload(sessions: &[AiperfSession]) -> Workload {
    let payloads = sessions
        .iter()
        .flat_map(|s| {
            s.payloads.iter().enumerate().map(|(turn, body)| Payload {
                conversation_id: s.session_id.clone().unwrap_or_default(),
                turn_index: u32::try_from(turn).unwrap_or(u32::MAX),
                body: Value::Object(body.clone()).to_string(),
                ..Default::default()
            })
        })
        .collect();
    Workload { payloads }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_err(text: &str) -> (String, String) {
        match read(text).unwrap_err() {
            InputsJsonError::Field { path, message } => (path, message),
            e => panic!("{e}"),
        }
    }

    #[test]
    fn aiperf_sessions_keep_ids_and_body_order() {
        let s = read_aiperf(
            r#"{"data":[{"session_id":"a","payloads":[{"z":1,"a":2},{"m":3}]},{"payloads":[{"x":0}]}]}"#,
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].session_id.as_deref(), Some("a"));
        assert_eq!(s[0].payloads.len(), 2);
        assert_eq!(s[1].session_id, None);
        let w = aiperf_workload(&s);
        // Key order is the file's, not sorted.
        assert_eq!(w.payloads[0].body, r#"{"z":1,"a":2}"#);
        assert_eq!(
            (
                w.payloads[1].conversation_id.as_str(),
                w.payloads[1].turn_index
            ),
            ("a", 1)
        );
        assert_eq!(w.payloads[2].conversation_id, "");
    }

    #[test]
    fn genai_perf_metadata_lists_give_one_value_per_body() {
        let e = read_genai_perf(
            r#"{"data":[{"payload":[{"a":1},{"b":2}],"session_id":["s",7],"delay":[null,250],"timestamp":5}]}"#,
        )
        .unwrap();
        let t = &e[0].turns;
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].session_id.as_deref(), Some("s"));
        assert_eq!(t[1].session_id.as_deref(), Some("7"));
        assert_eq!((t[0].delay_ms, t[1].delay_ms), (None, Some(250.0)));
        // A single value stands for every body of the entry.
        assert_eq!(
            (t[0].timestamp_ms, t[1].timestamp_ms),
            (Some(5.0), Some(5.0))
        );
    }

    #[test]
    fn the_form_comes_from_the_first_entry() {
        assert!(matches!(
            read(r#"{"data":[{"payloads":[{}]}]}"#),
            Ok(InputsJson::Aiperf(_))
        ));
        assert!(matches!(
            read(r#"{"data":[{"payload":[{}]}]}"#),
            Ok(InputsJson::GenaiPerf(_))
        ));
    }

    #[test]
    fn errors_name_the_json_path() {
        let cases = [
            (r#"{"x":1}"#, "data", "expected {\"data\": [ ... ]}"),
            (r#"{"data":[]}"#, "data", "no entries"),
            (
                r#"{"data":[3]}"#,
                "data[0]",
                "expected an object, got a number",
            ),
            (
                r#"{"data":[{"payloads":[{}]},{"payloads":[7]}]}"#,
                "data[1].payloads[0]",
                "expected a request body (an object), got a number",
            ),
            (
                r#"{"data":[{"payloads":[]}]}"#,
                "data[0].payloads",
                "no request bodies",
            ),
            (
                r#"{"data":[{"payloads":[{}],"session_id":1}]}"#,
                "data[0].session_id",
                "expected a string, got a number",
            ),
            (
                r#"{"data":[{"payload":[{}],"delay":[-1]}]}"#,
                "data[0].delay[0]",
                "expected a number of ms >= 0, got -1",
            ),
            (
                r#"{"data":[{"prompt":"x"}]}"#,
                "data[0]",
                "expected \"payloads\" (AIPerf) or \"payload\" (GenAI-Perf)",
            ),
        ];
        for (text, path, message) in cases {
            assert_eq!(
                field_err(text),
                (path.to_string(), message.to_string()),
                "{text}"
            );
        }
        let (path, message) = field_err(r#"{"data":[{"text_input":["x"]}]}"#);
        assert_eq!(path, "data[0].text_input");
        assert!(message.starts_with("Triton-format"), "{message}");
        match read("{\"data\": [\n  {\"payloads\": [}\n]}").unwrap_err() {
            InputsJsonError::Syntax { line, .. } => assert_eq!(line, 2),
            e => panic!("{e}"),
        }
    }
}
