//! Verbatim replay: `raw_payload` (JSONL request bodies), AIPerf's `inputs.json` and
//! GenAI-Perf's `inputs.json`. Bodies are sent exactly as written (compact JSON, key order
//! kept); nothing is merged into them and no history is added.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::error::DatasetError;
use inferbench_core::inputs_json::{self, InputsJson, InputsJsonError};

use super::row::{parse_jsonl, read_text};
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

/// AIPerf's `inputs.json` (one conversation per entry) or GenAI-Perf's (one turn per body;
/// entries sharing a session id are one conversation), read by
/// [`inferbench_core::inputs_json::read`]. The form is read from the first entry, whichever
/// type was named.
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
    let read = inputs_json::read(&text).map_err(|e| match e {
        InputsJsonError::Syntax {
            line,
            column,
            message,
        } => DatasetError::line(
            &file,
            line,
            format!("not valid JSON (column {column}): {message}"),
        ),
        InputsJsonError::Field { path, message } => DatasetError::field(&file, None, path, message),
    })?;
    let entries = match read {
        InputsJson::Aiperf(sessions) => {
            return Ok(sessions
                .into_iter()
                .enumerate()
                .map(|(i, s)| Conv {
                    id: s.session_id.unwrap_or_else(|| session_id(i)),
                    history: false,
                    turns: s
                        .payloads
                        .into_iter()
                        .map(|b| verbatim_turn(b, None))
                        .collect(),
                })
                .collect());
        }
        InputsJson::GenaiPerf(entries) => entries,
    };

    let mut convs: Vec<Conv> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for t in entries.into_iter().flat_map(|e| e.turns) {
        let mut turn = verbatim_turn(t.body, None);
        turn.delay_ms = t.delay_ms;
        turn.timestamp_ms = t.timestamp_ms;
        let ci = match t.session_id {
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
    Ok(convs)
}
