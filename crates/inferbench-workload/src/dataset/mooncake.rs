//! AIPerf's `mooncake_trace`: one request per row, given by exactly one of `input_length`
//! (a synthetic prompt, optionally built from cached `hash_ids` blocks), `text_input`,
//! `messages` (+ `tools`) or `payload` (verbatim).

use std::collections::HashMap;
use std::path::Path;

use inferbench_core::plan::RunPlan;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use super::error::DatasetError;
use super::row::{MEDIA_FIELDS, Row, as_u64, kind, parse_jsonl, read_text};
use super::synth::OslDraws;
use super::{Conv, DEFAULT_BLOCK_SIZE, NamedText, TurnSpec, plan_err, purpose, session_id};
use crate::corpus::Corpus;
use crate::error::WorkloadError;
use crate::sim_vocab::single_token_words;
use crate::synthetic::{PromptGenerator, rng_for};
use crate::tokenizer::Tokenizer;

const FIELDS: &[&str] = &[
    "input_length",
    "text_input",
    "messages",
    "tools",
    "payload",
    "output_length",
    "hash_ids",
    "timestamp",
    "delay",
    "session_id",
    "extra",
];

/// Largest `input_length` synthesized: a guard against a typo that would exhaust memory.
pub(crate) const MAX_INPUT_LENGTH: u64 = 10_000_000;

/// Distinct single-token words taken for block texts (the most common corpus words come
/// first, so this covers nearly all of the corpus's running text).
const BLOCK_VOCAB: usize = 4096;

/// Texts for `hash_ids`: each id is a block of `block` tokens, made once and reused, so rows
/// sharing leading ids share a byte-identical prefix.
///
/// A block is a run of consecutive corpus words, keeping only words that are one token on
/// their own and next to each other (`sim_vocab::single_token_words`), so any concatenation
/// of blocks encodes to exactly the sum of their lengths: the prompt length is exact and a
/// block's tokens do not depend on its neighbours.
pub(crate) struct BlockTexts {
    words: Vec<String>,
    /// The corpus's running text as indices into `words`.
    stream: Vec<u32>,
    block: usize,
    cache: HashMap<i64, Vec<u32>>,
    rng: ChaCha8Rng,
}

impl BlockTexts {
    pub fn new(
        tok: &Tokenizer,
        corpus: &Corpus,
        block: usize,
        seed: u64,
    ) -> Result<Self, WorkloadError> {
        let words = single_token_words(tok, corpus, BLOCK_VOCAB);
        let index: HashMap<&str, u32> = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.trim_start(), i as u32))
            .collect();
        let stream: Vec<u32> = corpus
            .text()
            .split_whitespace()
            .filter_map(|w| index.get(w).copied())
            .collect();
        if stream.is_empty() {
            return Err(WorkloadError::EmptyCorpus {
                tokenizer: tok.name().to_string(),
            });
        }
        Ok(BlockTexts {
            words,
            stream,
            block,
            cache: HashMap::new(),
            rng: rng_for(seed, purpose::HASH_BLOCKS),
        })
    }

    fn fresh(&mut self, n: usize) -> Vec<u32> {
        let start = self.rng.random_range(0..self.stream.len());
        (0..n)
            .map(|k| self.stream[(start + k) % self.stream.len()])
            .collect()
    }

    fn push_words(&self, ids: &[u32], out: &mut String) {
        for &i in ids {
            out.push_str(&self.words[i as usize]);
        }
    }

    pub fn block_size(&self) -> usize {
        self.block
    }

    /// Starts a new id namespace (`hash_id_scope: "local"`: one per WEKA trace): the same
    /// id in another scope is another block, drawn from the generator named after `scope`.
    pub fn new_scope(&mut self, seed: u64, scope: &str) {
        self.cache.clear();
        self.rng = rng_for(seed, &format!("{}:{scope}", purpose::HASH_BLOCKS));
    }

    /// Like [`Self::prompt`], but never an error: blocks are taken in order until
    /// `input_length` tokens are written (a trace whose `in` is shorter than its ids cuts
    /// the last ones), and fresh tokens pad a longer one.
    pub fn prompt_capped(&mut self, hash_ids: &[i64], input_length: u64) -> String {
        let mut out = String::new();
        let mut left = input_length as usize;
        for id in hash_ids {
            if left == 0 {
                break;
            }
            if !self.cache.contains_key(id) {
                let ids = self.fresh(self.block);
                self.cache.insert(*id, ids);
            }
            let take = left.min(self.block);
            self.push_words(&self.cache[id][..take], &mut out);
            left -= take;
        }
        if left > 0 {
            let pad = self.fresh(left);
            self.push_words(&pad, &mut out);
        }
        out
    }

    /// The prompt of `input_length` tokens for `hash_ids` (AIPerf §3.1): every block but the
    /// last is full; the last holds `input_length - (n-1)·block` tokens (the first ones of
    /// that id's block); when `input_length` exceeds `n·block`, all blocks are full and fresh
    /// tokens pad the tail. Err(message) when `input_length` is too short for the ids.
    pub fn prompt(&mut self, hash_ids: &[i64], input_length: u64) -> Result<String, String> {
        let n = hash_ids.len() as u64;
        let block = self.block as u64;
        let full_len = n.saturating_mul(block);
        let before_last = (n - 1).saturating_mul(block);
        if input_length <= before_last {
            return Err(format!(
                "input_length {input_length} is too short for {n} hash_ids of {block} tokens \
                 (it must be more than {before_last})"
            ));
        }
        let mut out = String::new();
        for (k, id) in hash_ids.iter().enumerate() {
            if !self.cache.contains_key(id) {
                let ids = self.fresh(self.block);
                self.cache.insert(*id, ids);
            }
            let ids = &self.cache[id];
            let take = if k as u64 + 1 == n {
                (input_length.min(full_len) - before_last) as usize
            } else {
                self.block
            };
            self.push_words(&ids[..take], &mut out);
        }
        if input_length > full_len {
            let pad = self.fresh((input_length - full_len) as usize);
            self.push_words(&pad, &mut out);
        }
        Ok(out)
    }
}

/// How a row gives its input.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Synthetic,
    Text,
    Messages,
    Payload,
}

struct Parsed {
    line: usize,
    session: Option<String>,
    mode: Mode,
    input_length: Option<u64>,
    hash_ids: Option<Vec<i64>>,
    turn: TurnSpec,
}

/// Chat messages as AIPerf accepts them: a non-empty list of objects with a `role`, text only
/// (an image, audio or video part is refused by its path).
pub(crate) fn check_messages(r: &Row<'_>, key: &str, ms: &[Value]) -> Result<(), DatasetError> {
    if ms.is_empty() {
        return Err(r.err(key, "must not be empty"));
    }
    for (i, m) in ms.iter().enumerate() {
        let Some(mo) = m.as_object() else {
            return Err(r.err(
                &format!("{key}[{i}]"),
                format!("expected an object, got {}", kind(m)),
            ));
        };
        if !mo.contains_key("role") {
            return Err(r.err(&format!("{key}[{i}]"), "a message needs a role"));
        }
        if let Some(Value::Array(parts)) = mo.get("content") {
            for (j, p) in parts.iter().enumerate() {
                let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
                if ty.contains("image")
                    || ty.contains("audio")
                    || ty.contains("video")
                    || MEDIA_FIELDS.iter().any(|f| p.get(*f).is_some())
                {
                    return Err(r.err(
                        &format!("{key}[{i}].content[{j}]"),
                        "image, audio and video parts in a trace's messages are not built (single_turn and multi_turn rows take media)",
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Checks one row as the loader would (for `inferbench validate mooncake-trace`).
pub(crate) fn check_row(r: &Row<'_>) -> Result<(), DatasetError> {
    parse_row(r).map(|_| ())
}

fn parse_row(r: &Row<'_>) -> Result<Parsed, DatasetError> {
    r.check_keys(FIELDS, "mooncake_trace")?;
    let modes = [
        ("input_length", Mode::Synthetic),
        ("text_input", Mode::Text),
        ("messages", Mode::Messages),
        ("payload", Mode::Payload),
    ];
    let present: Vec<&(&str, Mode)> = modes.iter().filter(|(k, _)| r.has(k)).collect();
    let mode = match present.as_slice() {
        [one] => one.1,
        [] => {
            return Err(r.err(
                "input_length",
                "exactly one of input_length, text_input, messages or payload is needed",
            ));
        }
        [_, second, ..] => {
            return Err(r.err(
                second.0,
                "input_length, text_input, messages and payload are mutually exclusive",
            ));
        }
    };
    let input_length = r.opt_u64("input_length")?;
    if let Some(n) = input_length
        && n > MAX_INPUT_LENGTH
    {
        return Err(r.err(
            "input_length",
            format!("{n} tokens is more than this client synthesizes ({MAX_INPUT_LENGTH})"),
        ));
    }
    let hash_ids = match r.get("hash_ids") {
        None => None,
        Some(Value::Array(items)) => {
            let ids: Option<Vec<i64>> = items.iter().map(Value::as_i64).collect();
            Some(ids.ok_or_else(|| r.err("hash_ids", "expected a list of integers"))?)
        }
        Some(_) => return Err(r.err("hash_ids", "expected a list of integers")),
    };
    if hash_ids.is_some() && mode != Mode::Synthetic {
        return Err(r.err("hash_ids", "only allowed with input_length"));
    }
    let mut turn = TurnSpec {
        timestamp_ms: r.opt_ms("timestamp")?,
        delay_ms: r.opt_ms("delay")?,
        extra: r.opt_object("extra")?.cloned(),
        origin: Some((r.file.to_string(), r.line.unwrap_or(0))),
        ..Default::default()
    };
    if let Some(v) = r.get("output_length") {
        turn.max_tokens =
            Some(as_u64(v).ok_or_else(|| r.err("output_length", "expected an integer >= 0"))?);
    }
    if r.has("tools") && mode != Mode::Messages {
        return Err(r.err("tools", "only allowed with messages"));
    }
    match mode {
        Mode::Synthetic => {}
        Mode::Text => {
            let t = r.opt_str("text_input")?.unwrap_or_default();
            turn.texts.push(NamedText::plain(t));
        }
        Mode::Messages => {
            let Some(Value::Array(ms)) = r.get("messages") else {
                return Err(r.err("messages", "expected a list of messages"));
            };
            check_messages(r, "messages", ms)?;
            turn.messages = Some(ms.clone());
            if let Some(tools) = r.get("tools") {
                match tools {
                    Value::Array(t) if !t.is_empty() => turn.tools = Some(tools.clone()),
                    _ => return Err(r.err("tools", "expected a non-empty list of tools")),
                }
            }
        }
        Mode::Payload => match r.get("payload") {
            Some(Value::Object(m)) if !m.is_empty() => {
                turn.payload = Some(Value::Object(m.clone()))
            }
            _ => return Err(r.err("payload", "expected a non-empty object (a request body)")),
        },
    }
    Ok(Parsed {
        line: r.line.unwrap_or(0),
        session: r.opt_session_id("session_id")?,
        mode,
        input_length,
        hash_ids,
        turn,
    })
}

/// Reads and validates the whole trace, then makes the prompts. Rows sharing a `session_id`
/// are the turns of one conversation in file order: incremental turns sent with history for
/// `input_length`/`text_input` rows; `messages`/`payload` rows are self-contained and sent as
/// written (a session may not mix the two kinds).
pub(crate) fn load(
    path: &Path,
    plan: &RunPlan,
    tok: &Tokenizer,
    corpus: &Corpus,
    seed: u64,
) -> Result<Vec<Conv>, WorkloadError> {
    if path.is_dir() {
        return Err(DatasetError::file(
            path.display().to_string(),
            "is a directory: mooncake_trace reads one file",
        )
        .into());
    }
    let block = plan.dataset.isl_block_size.unwrap_or(DEFAULT_BLOCK_SIZE);
    if block == 0 {
        return Err(plan_err("dataset.isl_block_size", "must be at least 1"));
    }
    let file = path.display().to_string();
    let text = read_text(path)?;
    let rows = parse_jsonl(&file, &text)?;
    let syn = &plan.dataset.replay.synthesis;
    let mut parsed = rows
        .iter()
        .map(|(no, obj)| parse_row(&Row::new(&file, *no, obj)))
        .collect::<Result<Vec<_>, _>>()?;
    // `--synthesis-max-isl`: longer rows are dropped before anything else (AIPerf).
    parsed.retain(|p| super::synthesis::keep_row(syn, p.input_length));

    // Group, and check that no session mixes self-contained and incremental rows.
    let mut convs: Vec<(Conv, bool)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut unnamed = 0usize;
    let mut order: Vec<(usize, usize)> = Vec::with_capacity(parsed.len());
    for (pi, p) in parsed.iter().enumerate() {
        let self_contained = matches!(p.mode, Mode::Messages | Mode::Payload);
        let ci = match &p.session {
            Some(id) => match index.get(id) {
                Some(&ci) => {
                    if convs[ci].1 != self_contained {
                        return Err(DatasetError::field(
                            &file,
                            Some(p.line),
                            "session_id",
                            format!(
                                "session {id:?} mixes messages/payload rows with \
                                 input_length/text_input rows"
                            ),
                        )
                        .into());
                    }
                    ci
                }
                None => {
                    index.insert(id.clone(), convs.len());
                    convs.push((
                        Conv {
                            id: id.clone(),
                            history: !self_contained,
                            turns: Vec::new(),
                        },
                        self_contained,
                    ));
                    convs.len() - 1
                }
            },
            None => {
                // Named like AIPerf's generated ids, skipping any a row already uses.
                let mut id = session_id(unnamed);
                while index.contains_key(&id) {
                    unnamed += 1;
                    id = session_id(unnamed);
                }
                unnamed += 1;
                convs.push((
                    Conv {
                        id,
                        history: false,
                        turns: Vec::new(),
                    },
                    self_contained,
                ));
                convs.len() - 1
            }
        };
        order.push((pi, ci));
    }

    synthesize(&mut parsed, &order, syn, block, seed, &file)?;

    // Prompts, in file order, after everything validated.
    let mut prompts = PromptGenerator::new(tok, corpus, seed)?;
    let mut blocks: Option<BlockTexts> = None;
    let mut osl = OslDraws::new(plan, seed)?;
    for (pi, ci) in order {
        let p = &parsed[pi];
        let mut turn = p.turn.clone();
        if p.mode == Mode::Synthetic {
            let len = p.input_length.unwrap_or(0);
            let text = match p.hash_ids.as_deref() {
                Some(ids) if !ids.is_empty() => {
                    let b = match &mut blocks {
                        Some(b) => b,
                        None => blocks.insert(BlockTexts::new(tok, corpus, block as usize, seed)?),
                    };
                    if syn.transforms() {
                        // Synthesized ids may cover more tokens than a capped length.
                        b.prompt_capped(ids, len)
                    } else {
                        b.prompt(ids, len)
                            .map_err(|m| DatasetError::field(&file, Some(p.line), "hash_ids", m))?
                    }
                }
                _ => prompts.prompt(len as usize)?,
            };
            turn.texts.push(NamedText::plain(text));
        }
        if turn.max_tokens.is_none() && turn.payload.is_none() {
            turn.max_tokens = osl.next();
        }
        convs[ci].0.turns.push(turn);
    }
    Ok(convs
        .into_iter()
        .map(|(mut c, _)| {
            // A conversation of one row has nothing to carry over.
            if c.turns.len() == 1 {
                c.history = false;
            }
            c
        })
        .collect())
}

/// `--synthesis-*` on the parsed rows, in AIPerf's grouped order (sessions in order of first
/// appearance, rows in file order), then `--synthesis-max-osl` on recorded output lengths.
fn synthesize(
    parsed: &mut [Parsed],
    order: &[(usize, usize)],
    syn: &inferbench_core::replay_plan::SynthesisPlan,
    block: u64,
    seed: u64,
    file: &str,
) -> Result<(), WorkloadError> {
    use super::synthesis::{SynthRow, cap_output};
    let mut grouped: Vec<(usize, usize)> = order.to_vec();
    grouped.sort_by_key(|&(pi, ci)| (ci, pi));
    if syn.transforms() {
        let mut rows: Vec<SynthRow> = grouped
            .iter()
            .map(|&(pi, _)| {
                let p = &parsed[pi];
                SynthRow {
                    hash_ids: p.hash_ids.clone(),
                    input_length: p.input_length,
                    timestamp_ms: p.turn.timestamp_ms,
                    output_length: p.turn.max_tokens,
                }
            })
            .collect();
        let mut rng = rng_for(seed, super::purpose::SYNTHESIS);
        super::synthesis::synthesize(&mut rows, syn, block, &mut rng).map_err(|(i, m)| {
            let p = &parsed[grouped[i].0];
            DatasetError::field(file, Some(p.line), "input_length", m)
        })?;
        for (r, &(pi, _)) in rows.into_iter().zip(&grouped) {
            let p = &mut parsed[pi];
            p.hash_ids = r.hash_ids;
            if p.mode == Mode::Synthetic {
                p.input_length = r.input_length;
            }
            p.turn.timestamp_ms = r.timestamp_ms;
            p.turn.max_tokens = r.output_length;
        }
    }
    for p in parsed.iter_mut() {
        p.turn.max_tokens = cap_output(syn, p.turn.max_tokens);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_share_prefixes_and_have_exact_lengths() {
        let tok = Tokenizer::builtin().unwrap();
        let mut b = BlockTexts::new(&tok, Corpus::shakespeare(), 8, 1).unwrap();
        // [1,2,3] with 20 tokens: 8 + 8 + 4.
        let a = b.prompt(&[1, 2, 3], 20).unwrap();
        // [1,2,4] with 24: 8 + 8 + 8.
        let c = b.prompt(&[1, 2, 4], 24).unwrap();
        // [1] with 11: 8 + 3 fresh tokens of padding.
        let d = b.prompt(&[1], 11).unwrap();
        assert_eq!(tok.count(&a), 20);
        assert_eq!(tok.count(&c), 24);
        assert_eq!(tok.count(&d), 11);
        let block1 = b.prompt(&[1], 8).unwrap();
        let block12 = b.prompt(&[1, 2], 16).unwrap();
        assert!(a.starts_with(&block12) && c.starts_with(&block12) && d.starts_with(&block1));
        // Different third ids: different texts after the shared prefix.
        assert!(!c[block12.len()..].starts_with(&a[block12.len()..]));
        // Too short: 2 ids of 8 need more than 8 tokens.
        let e = b.prompt(&[1, 2], 8).unwrap_err();
        assert!(e.contains("too short"), "{e}");
    }
}
