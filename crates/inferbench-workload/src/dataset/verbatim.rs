//! Verbatim replay: `raw_payload` (JSONL request bodies), AIPerf's `inputs.json` and
//! GenAI-Perf's `inputs.json`. Bodies are sent exactly as written (compact JSON, key order
//! kept); nothing is merged into them and no history is added.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::error::DatasetError;
use super::row::{kind, parse_jsonl, read_text};
use super::{Conv, DatasetKind, TurnSpec, session_id};
use crate::error::WorkloadError;

fn verbatim_turn(body: Map<String, Value>, origin: Option<(String, usize)>) -> TurnSpec {
    TurnSpec {
        payload: Some(Value::Object(body)),
        origin,
        ..Default::default()
    }
}

/// A raw_payload row is the body itself; a row that is exactly `{"payload": {...}}` is
/// unwrapped (both spellings are in use).
fn unwrap_row(mut row: Map<String, Value>) -> Map<String, Value> {
    if row.len() == 1
        && let Some(Value::Object(_)) = row.get("payload")
        && let Some(Value::Object(inner)) = row.remove("payload")
    {
        return inner;
    }
    row
}

fn jsonl_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, DatasetError> {
    let shown = dir.display().to_string();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| DatasetError::file(&shown, format!("cannot list: {e}")))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// Whether a directory's first `.jsonl` file starts with a chat body (a `messages` list and
/// no `text`/`texts`): then it is a `raw_payload` directory rather than a `random_pool`.
pub(crate) fn dir_holds_chat_bodies(dir: &Path) -> bool {
    let Ok(files) = jsonl_files(dir) else {
        return false;
    };
    files.iter().any(|f| {
        let Ok(text) = std::fs::read_to_string(f) else {
            return false;
        };
        let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
            return false;
        };
        match serde_json::from_str::<Value>(first) {
            Ok(Value::Object(m)) => {
                let m = unwrap_row(m);
                m.get("messages").is_some_and(Value::is_array)
                    && !m.contains_key("text")
                    && !m.contains_key("texts")
            }
            _ => false,
        }
    })
}

/// `raw_payload`: a file is one single-turn conversation per row; a directory is one
/// conversation per `.jsonl` file (sorted by name, named by the file stem), its rows the
/// turns in order.
pub(crate) fn load_raw_payload(path: &Path) -> Result<Vec<Conv>, WorkloadError> {
    if path.is_dir() {
        let files = jsonl_files(path)?;
        if files.is_empty() {
            return Err(DatasetError::file(
                path.display().to_string(),
                "directory has no .jsonl files",
            )
            .into());
        }
        let mut convs = Vec::with_capacity(files.len());
        for f in files {
            let shown = f.display().to_string();
            let rows = parse_jsonl(&shown, &read_text(&f)?)?;
            let id = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| session_id(convs.len()));
            let turns = rows
                .into_iter()
                .map(|(no, row)| verbatim_turn(unwrap_row(row), Some((shown.clone(), no))))
                .collect();
            convs.push(Conv {
                id,
                history: false,
                turns,
            });
        }
        return Ok(convs);
    }
    let shown = path.display().to_string();
    let rows = parse_jsonl(&shown, &read_text(path)?)?;
    Ok(rows
        .into_iter()
        .enumerate()
        .map(|(i, (no, row))| Conv {
            id: session_id(i),
            history: false,
            turns: vec![verbatim_turn(unwrap_row(row), Some((shown.clone(), no)))],
        })
        .collect())
}

/// AIPerf's `inputs.json` (`{"data":[{"session_id", "payloads":[body…]}]}`: one conversation
/// per entry) or GenAI-Perf's (`{"data":[{"payload":[body…], "session_id"?:[…],
/// "delay"?:[…], "timestamp"?:[…]}]}`: one turn per body; entries sharing a session id are
/// one conversation). The form is read from the first entry, whichever type was named.
pub(crate) fn load_inputs_json(
    path: &Path,
    _named: DatasetKind,
) -> Result<Vec<Conv>, WorkloadError> {
    if path.is_dir() {
        return Err(DatasetError::file(
            path.display().to_string(),
            "is a directory: inputs.json is one file",
        )
        .into());
    }
    let file = path.display().to_string();
    let text = read_text(path)?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        DatasetError::line(
            &file,
            e.line(),
            format!("not valid JSON (column {}): {e}", e.column()),
        )
    })?;
    let at = |field: String, message: String| DatasetError::field(&file, None, field, message);
    let data = match doc.get("data") {
        Some(Value::Array(d)) => d,
        _ => {
            return Err(at("data".into(), "expected {\"data\": [ ... ]}".into()).into());
        }
    };
    if data.is_empty() {
        return Err(at("data".into(), "no entries".into()).into());
    }
    let entry = |i: usize| -> Result<&Map<String, Value>, DatasetError> {
        data[i].as_object().ok_or_else(|| {
            at(
                format!("data[{i}]"),
                format!("expected an object, got {}", kind(&data[i])),
            )
        })
    };
    let body_list =
        |i: usize, key: &str, items: &Value| -> Result<Vec<Map<String, Value>>, DatasetError> {
            let Value::Array(items) = items else {
                return Err(at(
                    format!("data[{i}].{key}"),
                    "expected a list of request bodies".into(),
                ));
            };
            if items.is_empty() {
                return Err(at(format!("data[{i}].{key}"), "no request bodies".into()));
            }
            items
                .iter()
                .enumerate()
                .map(|(j, b)| match b {
                    Value::Object(m) => Ok(m.clone()),
                    other => Err(at(
                        format!("data[{i}].{key}[{j}]"),
                        format!("expected a request body (an object), got {}", kind(other)),
                    )),
                })
                .collect()
        };
    let first = entry(0)?;
    let genai = if first.contains_key("payloads") {
        false
    } else if first.contains_key("payload") {
        true
    } else if first.contains_key("text_input") {
        return Err(at(
            "data[0].text_input".into(),
            "Triton-format inputs.json (GenAI-Perf's kserve/tensorrtllm) is not supported: \
             only OpenAI bodies"
                .into(),
        )
        .into());
    } else {
        return Err(at(
            "data[0]".into(),
            "expected \"payloads\" (AIPerf) or \"payload\" (GenAI-Perf)".into(),
        )
        .into());
    };

    let mut convs: Vec<Conv> = Vec::new();
    if !genai {
        for i in 0..data.len() {
            let e = entry(i)?;
            let id = match e.get("session_id") {
                None | Some(Value::Null) => session_id(i),
                Some(Value::String(s)) => s.clone(),
                Some(v) => {
                    return Err(at(
                        format!("data[{i}].session_id"),
                        format!("expected a string, got {}", kind(v)),
                    )
                    .into());
                }
            };
            let items = e
                .get("payloads")
                .ok_or_else(|| at(format!("data[{i}].payloads"), "missing".into()))?;
            let turns = body_list(i, "payloads", items)?
                .into_iter()
                .map(|b| verbatim_turn(b, None))
                .collect();
            convs.push(Conv {
                id,
                history: false,
                turns,
            });
        }
        return Ok(convs);
    }

    // GenAI-Perf: metadata arrays beside `payload`, one value per body.
    let mut index: HashMap<String, usize> = HashMap::new();
    for i in 0..data.len() {
        let e = entry(i)?;
        let items = e
            .get("payload")
            .ok_or_else(|| at(format!("data[{i}].payload"), "missing".into()))?;
        let bodies = body_list(i, "payload", items)?;
        let meta = |key: &str, j: usize| -> Option<&Value> {
            match e.get(key) {
                Some(Value::Array(a)) => a.get(j),
                Some(Value::Null) | None => None,
                Some(v) => Some(v),
            }
        };
        for (j, body) in bodies.into_iter().enumerate() {
            let ms = |key: &str| -> Result<Option<f64>, DatasetError> {
                match meta(key, j) {
                    None | Some(Value::Null) => Ok(None),
                    Some(v) => match v.as_f64() {
                        Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                        _ => Err(at(
                            format!("data[{i}].{key}[{j}]"),
                            format!("expected a number of ms >= 0, got {v}"),
                        )),
                    },
                }
            };
            let mut turn = verbatim_turn(body, None);
            turn.delay_ms = ms("delay")?;
            turn.timestamp_ms = ms("timestamp")?;
            let session = match meta("session_id", j) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                Some(v) => {
                    return Err(at(
                        format!("data[{i}].session_id[{j}]"),
                        format!("expected a string, got {}", kind(v)),
                    )
                    .into());
                }
            };
            let ci = match session {
                Some(id) => *index.entry(id.clone()).or_insert_with(|| {
                    convs.push(Conv {
                        id,
                        history: false,
                        turns: Vec::new(),
                    });
                    convs.len() - 1
                }),
                None => {
                    convs.push(Conv {
                        id: session_id(convs.len()),
                        history: false,
                        turns: Vec::new(),
                    });
                    convs.len() - 1
                }
            };
            convs[ci].turns.push(turn);
        }
    }
    Ok(convs)
}
