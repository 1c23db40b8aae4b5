//! AIPerf's token-count traces besides `mooncake_trace`: `bailian_trace` (Alibaba Bailian
//! JSONL, sessions linked by `parent_chat_id`) and `burst_gpt_trace` (BurstGPT CSV). Both
//! give lengths only: prompts are synthesized, from `hash_ids` blocks when a row has them.
//! Timestamps are seconds in both files and milliseconds on the payloads.

use std::collections::HashMap;
use std::path::Path;

use inferbench_core::plan::RunPlan;
use serde_json::{Map, Value};

use super::error::DatasetError;
use super::mooncake::{BlockTexts, MAX_INPUT_LENGTH};
use super::row::{Row, kind, parse_jsonl, read_text};
use super::synthesis::{self, SynthRow};
use super::{Conv, NamedText, TurnSpec, plan_err, session_id};
use crate::corpus::Corpus;
use crate::error::WorkloadError;
use crate::synthetic::PromptGenerator;
use crate::synthetic::rng_for;
use crate::tokenizer::Tokenizer;

/// Bailian's block size: 16 tokens per salted SipHash block (AIPerf applies it without
/// `--isl-block-size`).
pub const BAILIAN_BLOCK_SIZE: u64 = 16;

const BAILIAN_FIELDS: &[&str] = &[
    "chat_id",
    "parent_chat_id",
    "timestamp",
    "input_length",
    "output_length",
    "turn",
    "hash_ids",
];

/// BurstGPT's columns that are read; any other column is ignored (as AIPerf does).
pub(crate) const BURST_COLUMNS: [&str; 3] = ["Timestamp", "Request tokens", "Response tokens"];

/// One trace row reduced to what the prompt needs.
struct LengthRow {
    line: usize,
    timestamp_ms: f64,
    input_length: u64,
    output_length: u64,
    hash_ids: Vec<i64>,
}

/// Synthesizes prompts of exact length: plain corpus windows, or `hash_ids` blocks.
struct Prompts<'a> {
    file: String,
    plain: PromptGenerator<'a>,
    blocks: Option<BlockTexts>,
    /// Synthesis ran: its ids may cover more tokens than a capped length.
    capped: bool,
    tok: &'a Tokenizer,
    corpus: &'a Corpus,
    block: usize,
    seed: u64,
}

impl<'a> Prompts<'a> {
    fn new(
        file: &str,
        tok: &'a Tokenizer,
        corpus: &'a Corpus,
        block: u64,
        seed: u64,
    ) -> Result<Self, WorkloadError> {
        if block == 0 {
            return Err(plan_err("dataset.isl_block_size", "must be at least 1"));
        }
        Ok(Prompts {
            file: file.to_string(),
            plain: PromptGenerator::new(tok, corpus, seed)?,
            blocks: None,
            capped: false,
            tok,
            corpus,
            block: block as usize,
            seed,
        })
    }

    fn turn(&mut self, r: &LengthRow) -> Result<TurnSpec, WorkloadError> {
        let text = if r.hash_ids.is_empty() {
            self.plain.prompt(r.input_length as usize)?
        } else {
            let b = match &mut self.blocks {
                Some(b) => b,
                None => self.blocks.insert(BlockTexts::new(
                    self.tok,
                    self.corpus,
                    self.block,
                    self.seed,
                )?),
            };
            if self.capped {
                b.prompt_capped(&r.hash_ids, r.input_length)
            } else {
                b.prompt(&r.hash_ids, r.input_length)
                    .map_err(|m| DatasetError::field(&self.file, Some(r.line), "hash_ids", m))?
            }
        };
        Ok(TurnSpec {
            texts: vec![NamedText::plain(text)],
            timestamp_ms: Some(r.timestamp_ms),
            max_tokens: Some(r.output_length),
            origin: Some((self.file.clone(), r.line)),
            ..Default::default()
        })
    }
}

/// AIPerf's trace pipeline around its synthesizer, on rows in grouped order (sessions in
/// order, each session's rows in order): `--synthesis-*` transforms (when any multiplier or
/// the speed-up is set), then `--synthesis-max-osl` caps the outputs. (`--synthesis-max-isl`
/// drops rows before grouping: [`synthesis::keep_row`].) True when the synthesizer ran.
fn synthesize_rows(
    rows: &mut [&mut LengthRow],
    plan: &RunPlan,
    block: u64,
    seed: u64,
    file: &str,
) -> Result<bool, WorkloadError> {
    let syn = &plan.dataset.replay.synthesis;
    let ran = syn.transforms();
    if ran {
        let mut srows: Vec<SynthRow> = rows
            .iter()
            .map(|r| SynthRow {
                hash_ids: (!r.hash_ids.is_empty()).then(|| r.hash_ids.clone()),
                input_length: Some(r.input_length),
                timestamp_ms: Some(r.timestamp_ms),
                output_length: Some(r.output_length),
            })
            .collect();
        let mut rng = rng_for(seed, super::purpose::SYNTHESIS);
        synthesis::synthesize(&mut srows, syn, block, &mut rng)
            .map_err(|(i, m)| DatasetError::field(file, Some(rows[i].line), "input_length", m))?;
        for (r, s) in rows.iter_mut().zip(srows) {
            r.hash_ids = s.hash_ids.unwrap_or_default();
            r.input_length = s.input_length.unwrap_or(r.input_length);
            r.timestamp_ms = s.timestamp_ms.unwrap_or(r.timestamp_ms);
            r.output_length = s.output_length.unwrap_or(r.output_length);
        }
    }
    for r in rows.iter_mut() {
        r.output_length =
            synthesis::cap_output(syn, Some(r.output_length)).unwrap_or(r.output_length);
    }
    Ok(ran)
}

fn int(r: &Row<'_>, key: &str) -> Result<Option<i64>, DatasetError> {
    match r.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_i64()
            .or_else(|| {
                v.as_f64()
                    .filter(|f| f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15)
                    .map(|f| f as i64)
            })
            .map(Some)
            .ok_or_else(|| r.err(key, format!("expected an integer, got {v}"))),
    }
}

fn required<T>(r: &Row<'_>, key: &str, v: Option<T>) -> Result<T, DatasetError> {
    v.ok_or_else(|| r.err(key, "required"))
}

fn seconds_to_ms(r: &Row<'_>, key: &str) -> Result<f64, DatasetError> {
    match r.get(key) {
        None => Err(r.err(key, "required")),
        Some(v) => match v.as_f64() {
            Some(s) if s >= 0.0 && (s * 1000.0).is_finite() => Ok(s * 1000.0),
            _ => Err(r.err(key, format!("expected a number of seconds >= 0, got {v}"))),
        },
    }
}

fn length(r: &Row<'_>, key: &str) -> Result<u64, DatasetError> {
    let n = required(r, key, r.opt_u64(key)?)?;
    if key == "input_length" && n > MAX_INPUT_LENGTH {
        return Err(r.err(
            key,
            format!("{n} tokens is more than this client synthesizes ({MAX_INPUT_LENGTH})"),
        ));
    }
    Ok(n)
}

/// One parsed Bailian row.
struct BailianRow {
    chat_id: i64,
    parent: i64,
    turn: i64,
    len: LengthRow,
}

fn parse_bailian(r: &Row<'_>) -> Result<BailianRow, DatasetError> {
    r.check_keys(BAILIAN_FIELDS, "bailian_trace")?;
    // `type` is Bailian's request type (text, search, image, file), not a dataset type.
    if let Some(v) = r.get("type")
        && !v.is_string()
    {
        return Err(r.err("type", format!("expected a string, got {}", kind(v))));
    }
    let hash_ids = match r.get("hash_ids") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(Value::as_i64)
            .collect::<Option<Vec<i64>>>()
            .ok_or_else(|| r.err("hash_ids", "expected a list of integers"))?,
        Some(_) => return Err(r.err("hash_ids", "expected a list of integers")),
    };
    Ok(BailianRow {
        chat_id: required(r, "chat_id", int(r, "chat_id")?)?,
        parent: int(r, "parent_chat_id")?.unwrap_or(-1),
        turn: int(r, "turn")?.unwrap_or(1),
        len: LengthRow {
            line: r.line.unwrap_or(0),
            timestamp_ms: seconds_to_ms(r, "timestamp")?,
            input_length: length(r, "input_length")?,
            output_length: length(r, "output_length")?,
            hash_ids,
        },
    })
}

/// The session root of every row, as AIPerf finds it: follow `parent_chat_id` while the
/// parent is a row of the file, stopping at a root (`-1`), a missing parent, a self-parent
/// or a cycle. The session is named after the root's `chat_id`.
fn bailian_roots(rows: &[BailianRow]) -> Vec<i64> {
    // A later row with the same chat_id replaces an earlier one in the lookup (AIPerf's dict).
    let by_id: HashMap<i64, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.chat_id, i))
        .collect();
    rows.iter()
        .map(|r| {
            let mut current = r.chat_id;
            let mut seen = std::collections::HashSet::new();
            while let Some(&i) = by_id.get(&current) {
                let parent = rows[i].parent;
                if parent == -1 || !seen.insert(current) || parent == current {
                    break;
                }
                if !by_id.contains_key(&parent) {
                    break;
                }
                current = parent;
            }
            current
        })
        .collect()
}

/// Reads a Bailian trace: rows grouped into sessions by their root `chat_id` (in order of
/// first appearance), each session ordered by `turn` (ties keep file order). Every row is a
/// self-contained request (its `input_length` already includes the history), so turns are
/// sent without history, one after the other.
pub(crate) fn load_bailian(
    path: &Path,
    plan: &RunPlan,
    tok: &Tokenizer,
    corpus: &Corpus,
    seed: u64,
) -> Result<Vec<Conv>, WorkloadError> {
    let file = one_file(path, "bailian_trace")?;
    let text = read_text(path)?;
    let rows = parse_jsonl(&file, &text)?;
    let mut parsed = rows
        .iter()
        .map(|(no, obj)| parse_bailian(&Row::new(&file, *no, obj)))
        .collect::<Result<Vec<_>, _>>()?;
    // `--synthesis-max-isl`: longer rows are dropped before the sessions are linked (AIPerf).
    let syn = &plan.dataset.replay.synthesis;
    parsed.retain(|r| synthesis::keep_row(syn, Some(r.len.input_length)));
    let roots = bailian_roots(&parsed);
    let mut order: Vec<i64> = Vec::new();
    let mut members: HashMap<i64, Vec<usize>> = HashMap::new();
    for (i, root) in roots.iter().enumerate() {
        members
            .entry(*root)
            .or_insert_with(|| {
                order.push(*root);
                Vec::new()
            })
            .push(i);
    }
    let block = plan.dataset.isl_block_size.unwrap_or(BAILIAN_BLOCK_SIZE);
    let mut prompts = Prompts::new(&file, tok, corpus, block, seed)?;
    let sessions: Vec<(i64, Vec<usize>)> = order
        .into_iter()
        .map(|root| {
            let mut idx = members.remove(&root).unwrap_or_default();
            idx.sort_by_key(|&i| parsed[i].turn);
            (root, idx)
        })
        .collect();
    // Synthesis sees the rows in this grouped order; each row is listed once.
    let mut slots: Vec<Option<&mut LengthRow>> =
        parsed.iter_mut().map(|r| Some(&mut r.len)).collect();
    let mut grouped: Vec<&mut LengthRow> = sessions
        .iter()
        .flat_map(|(_, idx)| idx.iter())
        .filter_map(|&i| slots[i].take())
        .collect();
    prompts.capped = synthesize_rows(&mut grouped, plan, block, seed, &file)?;
    let mut convs = Vec::with_capacity(sessions.len());
    for (root, idx) in sessions {
        let mut turns = Vec::with_capacity(idx.len());
        for i in idx {
            turns.push(prompts.turn(&parsed[i].len)?);
        }
        convs.push(Conv {
            id: root.to_string(),
            history: false,
            turns,
        });
    }
    Ok(convs)
}

/// Splits one CSV record (RFC 4180 quoting, no newline inside a field). Err names the column.
pub(crate) fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if at_start => {
                quoted = true;
                at_start = false;
            }
            ',' => {
                out.push(std::mem::take(&mut field));
                at_start = true;
            }
            _ => {
                field.push(c);
                at_start = false;
            }
        }
    }
    if quoted {
        return Err(format!("column {}: unclosed quote", out.len() + 1));
    }
    out.push(field);
    Ok(out)
}

/// A BurstGPT row by column name (the header's), for errors that name the column.
fn burst_row(
    file: &str,
    line: usize,
    cols: &[usize; 3],
    fields: &[String],
) -> Result<LengthRow, DatasetError> {
    let get = |k: usize| -> Result<&str, DatasetError> {
        fields.get(cols[k]).map(|s| s.trim()).ok_or_else(|| {
            DatasetError::field(
                file,
                Some(line),
                BURST_COLUMNS[k],
                "missing (the row is short)",
            )
        })
    };
    let bad = |k: usize, what: &str, v: &str| {
        DatasetError::field(
            file,
            Some(line),
            BURST_COLUMNS[k],
            format!("expected {what}, got {v:?}"),
        )
    };
    let ts = get(0)?;
    let seconds: f64 = ts
        .parse()
        .ok()
        .filter(|s: &f64| *s >= 0.0 && (s * 1000.0).is_finite())
        .ok_or_else(|| bad(0, "a number of seconds >= 0", ts))?;
    let isl = get(1)?;
    let input_length: u64 = isl
        .parse()
        .ok()
        .filter(|n| *n <= MAX_INPUT_LENGTH)
        .ok_or_else(|| bad(1, "an integer >= 0 (at most 10000000)", isl))?;
    let osl = get(2)?;
    let output_length: u64 = osl.parse().map_err(|_| bad(2, "an integer >= 0", osl))?;
    Ok(LengthRow {
        line,
        timestamp_ms: seconds * 1000.0,
        input_length,
        output_length,
        hash_ids: Vec::new(),
    })
}

/// True when `text`'s first line is a CSV header naming BurstGPT's three columns.
pub(crate) fn is_burst_gpt_header(text: &str) -> bool {
    let first = text
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches('\u{feff}');
    split_csv(first).is_ok_and(|cols| {
        BURST_COLUMNS
            .iter()
            .all(|c| cols.iter().any(|h| h.trim() == *c))
    })
}

/// Reads a BurstGPT CSV: a header naming `Timestamp`, `Request tokens` and `Response tokens`
/// (other columns ignored), then one independent request per row, each its own session.
/// AIPerf skips a row it cannot parse; this refuses it, naming the line and the column.
pub(crate) fn load_burst_gpt(
    path: &Path,
    plan: &RunPlan,
    tok: &Tokenizer,
    corpus: &Corpus,
    seed: u64,
) -> Result<Vec<Conv>, WorkloadError> {
    let file = one_file(path, "burst_gpt_trace")?;
    let text = read_text(path)?;
    let mut rows = parse_burst(&file, &text)?;
    let syn = &plan.dataset.replay.synthesis;
    rows.retain(|r| synthesis::keep_row(syn, Some(r.input_length)));
    // No hash ids: the block size is not used.
    let mut grouped: Vec<&mut LengthRow> = rows.iter_mut().collect();
    synthesize_rows(&mut grouped, plan, 1, seed, &file)?;
    let mut prompts = Prompts::new(&file, tok, corpus, 1, seed)?;
    rows.iter()
        .enumerate()
        .map(|(i, r)| {
            Ok(Conv {
                id: session_id(i),
                history: false,
                turns: vec![prompts.turn(r)?],
            })
        })
        .collect()
}

/// The rows of a BurstGPT CSV, validated (no prompt made yet).
fn parse_burst(file: &str, text: &str) -> Result<Vec<LengthRow>, DatasetError> {
    let mut lines = text.lines().enumerate();
    let header = match lines.next() {
        Some((_, h)) => h.trim_start_matches('\u{feff}'),
        None => return Err(DatasetError::file(file, "no rows (the file is empty)")),
    };
    let names = split_csv(header).map_err(|m| DatasetError::line(file, 1, m))?;
    let mut cols = [0usize; 3];
    for (k, want) in BURST_COLUMNS.iter().enumerate() {
        cols[k] = names
            .iter()
            .position(|h| h.trim() == *want)
            .ok_or_else(|| {
                DatasetError::line(
                    file,
                    1,
                    format!(
                        "the header has no {want:?} column (BurstGPT needs Timestamp, \
                     Request tokens, Response tokens)"
                    ),
                )
            })?;
    }
    let mut rows = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let fields = split_csv(line).map_err(|m| DatasetError::line(file, i + 1, m))?;
        rows.push(burst_row(file, i + 1, &cols, &fields)?);
    }
    if rows.is_empty() {
        return Err(DatasetError::file(file, "no rows after the header"));
    }
    Ok(rows)
}

/// Checks a Bailian or BurstGPT text row by row without making prompts; the row count.
pub(crate) fn check_text(bailian: bool, file: &str, text: &str) -> Result<usize, DatasetError> {
    if bailian {
        let rows = parse_jsonl(file, text)?;
        for (no, obj) in &rows {
            parse_bailian(&Row::new(file, *no, obj))?;
        }
        Ok(rows.len())
    } else {
        parse_burst(file, text).map(|r| r.len())
    }
}

fn one_file(path: &Path, kind_name: &str) -> Result<String, DatasetError> {
    let file = path.display().to_string();
    if path.is_dir() {
        return Err(DatasetError::file(
            file,
            format!("is a directory: {kind_name} reads one file"),
        ));
    }
    Ok(file)
}

/// True when a JSONL row has Bailian's linking fields (`chat_id`, `parent_chat_id`, `turn`).
pub(crate) fn looks_bailian(row: &Map<String, Value>) -> bool {
    ["chat_id", "parent_chat_id", "turn"]
        .iter()
        .all(|k| row.get(*k).is_some_and(|v| !v.is_null()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_and_commas() {
        assert_eq!(
            split_csv(r#"1.5,"a, ""b""",,x"#).unwrap(),
            vec!["1.5", r#"a, "b""#, "", "x"]
        );
        assert_eq!(split_csv("\"open").unwrap_err(), "column 1: unclosed quote");
        assert!(is_burst_gpt_header(
            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
        ));
        assert!(!is_burst_gpt_header("Timestamp,Request tokens\n"));
    }
}
