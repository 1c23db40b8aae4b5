//! `--public-dataset sharegpt`, read from a local copy of
//! `ShareGPT_V3_unfiltered_cleaned_split.json` (never downloaded), filtered as vLLM's
//! benchmark filters it.

use std::path::Path;

use inferbench_core::plan::RunPlan;
use rand::seq::SliceRandom;
use serde_json::Value;

use super::error::DatasetError;
use super::row::{kind, read_text};
use super::synth::OslDraws;
use super::{Conv, NamedText, TurnSpec, purpose, session_id};
use crate::error::WorkloadError;
use crate::synthetic::rng_for;
use crate::tokenizer::Tokenizer;

/// vLLM's filter: prompt ≥ 4 tokens; completion ≥ 4 unless `--osl` fixes it; prompt ≤ 1024;
/// prompt + completion ≤ 2048.
pub(crate) fn keep(prompt_len: usize, completion_len: usize, osl_given: bool) -> bool {
    prompt_len >= 4
        && (osl_given || completion_len >= 4)
        && prompt_len <= 1024
        && prompt_len + completion_len <= 2048
}

/// Entries with at least two messages give one single-turn conversation each: the first
/// message is the prompt, the second's token count is `max_tokens` (or the `--osl` draw).
/// The entries are taken in a seeded shuffled order (`dataset.sharegpt`, as vLLM shuffles),
/// until `num_dataset_entries` passed the filter.
pub(crate) fn load(
    path: &Path,
    plan: &RunPlan,
    tok: &Tokenizer,
    seed: u64,
) -> Result<Vec<Conv>, WorkloadError> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        DatasetError::line(
            &file,
            e.line(),
            format!("not valid JSON (column {}): {e}", e.column()),
        )
    })?;
    let Value::Array(entries) = doc else {
        return Err(DatasetError::file(
            &file,
            format!("expected a list of conversations, got {}", kind(&doc)),
        )
        .into());
    };
    // Validate every entry's shape before using any.
    let mut pairs: Vec<Option<(&str, &str)>> = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let at = |f: String, m: String| DatasetError::field(&file, None, f, m);
        let conv = match e.get("conversations") {
            Some(Value::Array(c)) => c,
            Some(v) => {
                return Err(at(
                    format!("[{i}].conversations"),
                    format!("expected a list, got {}", kind(v)),
                )
                .into());
            }
            None => return Err(at(format!("[{i}].conversations"), "missing".into()).into()),
        };
        if conv.len() < 2 {
            pairs.push(None);
            continue;
        }
        let value = |j: usize| -> Result<&str, DatasetError> {
            conv[j].get("value").and_then(Value::as_str).ok_or_else(|| {
                at(
                    format!("[{i}].conversations[{j}].value"),
                    "expected a string".into(),
                )
            })
        };
        pairs.push(Some((value(0)?, value(1)?)));
    }
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.shuffle(&mut rng_for(seed, purpose::SHAREGPT));
    let want = plan.num_dataset_entries.max(1);
    let mut osl = OslDraws::new(plan, seed)?;
    let osl_given = plan.osl.is_some();
    let mut convs = Vec::with_capacity(want);
    for i in order {
        if convs.len() >= want {
            break;
        }
        let Some((prompt, completion)) = pairs[i] else {
            continue;
        };
        let prompt_len = tok.count(prompt);
        let completion_len = match osl.next() {
            Some(o) => o as usize,
            None => tok.count(completion),
        };
        if !keep(prompt_len, completion_len, osl_given) {
            continue;
        }
        convs.push(Conv {
            id: session_id(convs.len()),
            history: false,
            turns: vec![TurnSpec {
                texts: vec![NamedText::plain(prompt)],
                max_tokens: Some(completion_len as u64),
                ..Default::default()
            }],
        });
    }
    if convs.is_empty() {
        return Err(
            DatasetError::file(&file, "no conversation passed the ShareGPT filters").into(),
        );
    }
    Ok(convs)
}

#[cfg(test)]
mod tests {
    use super::keep;

    #[test]
    fn vllm_filter_bounds() {
        assert!(keep(4, 4, false));
        assert!(!keep(3, 100, false));
        assert!(!keep(100, 3, false));
        assert!(keep(100, 3, true));
        assert!(keep(1024, 1024, false));
        assert!(!keep(1025, 4, false));
        assert!(!keep(1024, 1025, false));
    }
}
