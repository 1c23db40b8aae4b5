//! The dataset type of a file given without `--custom-dataset-type`, from its shape.

use std::path::Path;

use serde_json::Value;

use super::{
    DatasetError, DatasetKind, columnar, dag, row, sagemaker, tracelab, traces, verbatim, weka,
};
use crate::error::WorkloadError;

/// The custom dataset type of a file without `--custom-dataset-type`, from its shape (AIPerf
/// probes its loaders the same way): a Parquet or Arrow IPC file (by its magic bytes, or
/// named `.parquet`, `.arrow` or `.ipc`) is a `baseten_trace`; a directory is a `random_pool`, unless its `.jsonl`
/// files hold capture records (`sagemaker_data_capture`) or chat bodies (`raw_payload`); a
/// JSON document with a `data` list is an `inputs.json` (AIPerf's or GenAI-Perf's); a CSV
/// header naming BurstGPT's columns is a `burst_gpt_trace`; otherwise the first row decides:
/// `captureData` and `eventMetadata` → sagemaker_data_capture; `chat_id`, `parent_chat_id`
/// and `turn` → bailian_trace; `turns` → multi_turn; `input_length`, `text_input`, `hash_ids` or `payload` → mooncake_trace;
/// `messages` alone → raw_payload; `text`/`texts` → single_turn.
pub fn detect(path: &Path) -> Result<DatasetKind, WorkloadError> {
    let shown = path.display().to_string();
    if path.is_dir() {
        if dir_holds_captures(path) {
            return Ok(DatasetKind::SagemakerDataCapture);
        }
        if weka::dir_holds_traces(path) {
            return Ok(DatasetKind::WekaTrace);
        }
        return Ok(if verbatim::dir_holds_chat_bodies(path) {
            DatasetKind::RawPayload
        } else {
            DatasetKind::RandomPool
        });
    }
    if columnar::format_of(path).is_some() || columnar::has_columnar_suffix(path) {
        return Ok(DatasetKind::BasetenTrace);
    }
    let text = tracelab::read_maybe_gz(path)?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('{')
        && let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(trimmed)
        && let Some(Value::Array(data)) = doc.get("data")
    {
        let genai = data.first().is_some_and(|e| e.get("payload").is_some());
        return Ok(if genai {
            DatasetKind::GenaiPerfInputs
        } else {
            DatasetKind::InputsJson
        });
    }
    if traces::is_burst_gpt_header(&text) {
        return Ok(DatasetKind::BurstGptTrace);
    }
    if weka::looks_weka(&text) {
        return Ok(DatasetKind::WekaTrace);
    }
    let rows = row::parse_jsonl(&shown, &text)?;
    let (_, first) = &rows[0];
    if sagemaker::looks_sagemaker(first) {
        return Ok(DatasetKind::SagemakerDataCapture);
    }
    if traces::looks_bailian(first) {
        return Ok(DatasetKind::BailianTrace);
    }
    if tracelab::looks_tracelab(first) {
        return Ok(DatasetKind::Tracelab);
    }
    if dag::looks_dag(first) {
        return Ok(DatasetKind::DagJsonl);
    }
    let has = |k: &str| first.get(k).is_some_and(|v| !v.is_null());
    if let Some(Value::String(t)) = first.get("type")
        && let Some(k) = DatasetKind::parse_custom(t)
    {
        return Ok(k);
    }
    Ok(if has("turns") {
        DatasetKind::MultiTurn
    } else if has("input_length") || has("text_input") || has("hash_ids") || has("payload") {
        DatasetKind::MooncakeTrace
    } else if has("messages") && !has("text") && !has("texts") {
        if has("output_length") || has("timestamp") || has("session_id") {
            DatasetKind::MooncakeTrace
        } else {
            DatasetKind::RawPayload
        }
    } else if has("text") || has("texts") {
        DatasetKind::SingleTurn
    } else {
        return Err(DatasetError::line(
            &shown,
            rows[0].0,
            "cannot tell the dataset type from this row: give --custom-dataset-type",
        )
        .into());
    })
}

/// A directory whose first `.jsonl` file (in path order, searched recursively as the
/// loader reads them) starts with a capture record.
fn dir_holds_captures(dir: &Path) -> bool {
    let mut files = Vec::new();
    if sagemaker::jsonl_files(dir, &mut files).is_err() {
        return false;
    }
    files.sort();
    let Some(first) = files.first() else {
        return false;
    };
    let Ok(text) = std::fs::read_to_string(first) else {
        return false;
    };
    text.lines()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|v| v.as_object().map(sagemaker::looks_sagemaker))
        .unwrap_or(false)
}
