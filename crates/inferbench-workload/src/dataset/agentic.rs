//! WEKA traces (read by `weka`, or converted from TraceLab by `tracelab`) into
//! conversations: a root from each trace's own calls and a child conversation per
//! subagent, started when the parent's preceding call ends and joined by the first later
//! parent call recorded at or after the subagent's end (AIPerf 0.13's reconstruction, with
//! its agent-chain splitting off; docs/datasets.md "Agentic traces").

use std::collections::HashMap;

use inferbench_core::plan::RunPlan;
use inferbench_core::workload::Branch;

use super::error::DatasetError;
use super::mooncake::BlockTexts;
use super::weka::{Call, Item, Subagent, Trace};
use super::{Conv, NamedText, TurnSpec, plan_err};
use crate::corpus::Corpus;
use crate::error::WorkloadError;
use crate::synthetic::PromptGenerator;
use crate::tokenizer::Tokenizer;

/// A later parent call joins a subagent recorded as ending up to this much after it (s).
const JOIN_EPSILON_S: f64 = 1e-6;

/// How the conversations are built.
pub(crate) struct Options {
    /// Tokens per `hash_ids` block: None takes each trace's own `block_size` (weka_trace).
    pub block_size: Option<u64>,
    pub think_time_only: bool,
    pub max_context_length: Option<u64>,
}

/// The conversations of `traces`, roots first in trace order, then each trace's children.
pub(crate) fn conversations(
    traces: Vec<Trace>,
    plan: &RunPlan,
    opts: &Options,
    tok: &Tokenizer,
    corpus: &Corpus,
    seed: u64,
) -> Result<Vec<Conv>, WorkloadError> {
    let total = traces.len();
    let traces: Vec<Trace> = match opts.max_context_length {
        None => traces,
        Some(max) => traces
            .into_iter()
            .filter(|t| peak_context(t) <= max)
            .collect(),
    };
    if traces.is_empty() {
        return Err(plan_err(
            "dataset.max_context_length",
            format!(
                "--max-context-length: none of the {total} traces fits (each has a request whose input plus output tokens exceed it)"
            ),
        ));
    }
    let mut plain = PromptGenerator::new(tok, corpus, seed)?;
    let mut blocks: Option<BlockTexts> = None;
    let mut roots = Vec::with_capacity(traces.len());
    let mut children = Vec::new();
    for t in &traces {
        let block = opts.block_size.unwrap_or(t.block_size) as usize;
        let b = match &mut blocks {
            Some(b) if b.block_size() == block => b,
            slot => slot.insert(BlockTexts::new(tok, corpus, block, seed)?),
        };
        // `hash_id_scope: "local"`: ids name blocks of this trace only, its subagents included.
        b.new_scope(seed, &t.id);
        let mut prompts = Prompts {
            plain: &mut plain,
            blocks: b,
        };
        let models = model_map(t, &plan.models);
        let (root, kids) = trace_conversations(t, opts, &models, &mut prompts)?;
        roots.push(root);
        children.extend(kids);
    }
    roots.extend(children);
    Ok(roots)
}

struct Prompts<'a, 'b> {
    plain: &'a mut PromptGenerator<'b>,
    blocks: &'a mut BlockTexts,
}

impl Prompts<'_, '_> {
    fn text(&mut self, c: &Call) -> Result<String, WorkloadError> {
        if c.hash_ids.is_empty() {
            self.plain.prompt(c.input as usize)
        } else {
            Ok(self.blocks.prompt_capped(&c.hash_ids, c.input))
        }
    }
}

/// The largest input plus output of any call, parent or subagent (an output of 0 is sent
/// as 1): `--max-context-length` drops a trace above it.
fn peak_context(t: &Trace) -> u64 {
    let cost = |c: &Call| c.input.saturating_add(c.output.max(1));
    t.items
        .iter()
        .flat_map(|i| match i {
            Item::Call(c) => vec![cost(c)],
            Item::Subagent(s) => s.calls.iter().map(cost).collect(),
        })
        .max()
        .unwrap_or(0)
}

/// AIPerf's model mapping: the trace's main model (its first parent call's, else its first
/// subagent call's) becomes the first `--model`, the others the next ones in order of first
/// use, wrapping around.
fn model_map(t: &Trace, configured: &[String]) -> HashMap<String, String> {
    let mut order: Vec<&str> = Vec::new();
    let first_parent = t.items.iter().find_map(|i| match i {
        Item::Call(c) => Some(c.model.as_str()),
        Item::Subagent(_) => None,
    });
    let first_child = || {
        t.items.iter().find_map(|i| match i {
            Item::Subagent(s) => s.calls.first().map(|c| c.model.as_str()),
            Item::Call(_) => None,
        })
    };
    if let Some(main) = first_parent.or_else(first_child) {
        order.push(main);
    }
    for i in &t.items {
        let calls: Vec<&Call> = match i {
            Item::Call(c) => vec![c],
            Item::Subagent(s) => s.calls.iter().collect(),
        };
        for c in calls {
            if !order.contains(&c.model.as_str()) {
                order.push(&c.model);
            }
        }
    }
    if configured.is_empty() {
        return HashMap::new();
    }
    order
        .iter()
        .enumerate()
        .map(|(i, m)| (m.to_string(), configured[i % configured.len()].clone()))
        .collect()
}

/// The idle gap before a call: its start minus the previous call's end (start plus
/// `api_time`), at least 0 (AIPerf always replays end-to-start gaps).
fn end_to_start_ms(t_ms: f64, prev: &Call) -> f64 {
    let api_ms = prev
        .api_time
        .filter(|a| a.is_finite())
        .map_or(0.0, |a| a * 1000.0);
    (t_ms - prev.t * 1000.0 - api_ms).max(0.0)
}

fn turn(
    c: &Call,
    t_s: f64,
    prev: Option<&Call>,
    opts: &Options,
    models: &HashMap<String, String>,
    prompts: &mut Prompts<'_, '_>,
) -> Result<TurnSpec, WorkloadError> {
    let t_ms = t_s * 1000.0;
    let delay_ms = prev.map(|p| match c.think_time {
        Some(think) if opts.think_time_only => think * 1000.0,
        _ => end_to_start_ms(t_ms, p),
    });
    Ok(TurnSpec {
        texts: vec![NamedText::plain(prompts.text(c)?)],
        max_tokens: Some(c.output.max(1)),
        model: Some(
            models
                .get(&c.model)
                .cloned()
                .unwrap_or_else(|| c.model.clone()),
        ),
        timestamp_ms: Some(t_ms),
        delay_ms,
        origin: Some((c.file.clone(), c.line)),
        ..Default::default()
    })
}

/// A subagent's calls in the root trace's time: a call recorded before the spawn is
/// relative to it (older captures), then ordered by time (ties keep the file's order).
fn child_calls(s: &Subagent) -> Vec<(f64, &Call)> {
    let mut v: Vec<(f64, &Call)> = s
        .calls
        .iter()
        .map(|c| {
            let t = if c.t + JOIN_EPSILON_S < s.t {
                s.t + c.t
            } else {
                c.t
            };
            (t, c)
        })
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// When a subagent ended (s): its `duration_ms` after the spawn (negative or not finite:
/// 0), else its last call's end, else the spawn.
fn subagent_end(s: &Subagent) -> f64 {
    if let Some(d) = s.duration_ms {
        let d = d / 1000.0;
        return s.t + if d.is_finite() && d >= 0.0 { d } else { 0.0 };
    }
    child_calls(s)
        .iter()
        .map(|(t, c)| t + c.api_time.filter(|a| a.is_finite()).unwrap_or(0.0).max(0.0))
        .reduce(f64::max)
        .unwrap_or(s.t)
}

/// A branch's spawning turn and joining turn (None: background).
type GroupKey = (usize, Option<u32>);

fn trace_conversations(
    t: &Trace,
    opts: &Options,
    models: &HashMap<String, String>,
    prompts: &mut Prompts<'_, '_>,
) -> Result<(Conv, Vec<Conv>), WorkloadError> {
    // Parent calls with their position in `requests`.
    let normals: Vec<(usize, &Call)> = t
        .items
        .iter()
        .enumerate()
        .filter_map(|(i, it)| match it {
            Item::Call(c) => Some((i, c)),
            Item::Subagent(_) => None,
        })
        .collect();
    let mut root = Conv {
        id: t.id.clone(),
        ..Default::default()
    };
    for (k, (_, c)) in normals.iter().enumerate() {
        let prev = k.checked_sub(1).map(|p| normals[p].1);
        let mut spec = turn(c, c.t, prev, opts, models, prompts)?;
        // A parent's negative think time is not a wait into the past.
        spec.delay_ms = spec.delay_ms.map(|d| d.max(0.0));
        root.turns.push(spec);
    }
    // Subagents grouped by (spawning turn, joining turn), in order of first appearance.
    let mut groups: Vec<(GroupKey, Vec<&Subagent>)> = Vec::new();
    let mut seen_ids: HashMap<&str, usize> = HashMap::new();
    let mut kids = Vec::new();
    for (i, it) in t.items.iter().enumerate() {
        let Item::Subagent(s) = it else { continue };
        if let Some(first) = seen_ids.insert(&s.agent_id, s.line) {
            return Err(DatasetError::field(
                &t.file,
                Some(s.line),
                "agent_id",
                format!(
                    "{:?} is also the agent_id of the subagent on line {first}",
                    s.agent_id
                ),
            )
            .into());
        }
        // No parent call before it: nothing can spawn it (AIPerf drops it too).
        let Some(spawn) = normals.iter().rposition(|(oi, _)| *oi < i) else {
            continue;
        };
        let end = subagent_end(s);
        let join = normals
            .iter()
            .position(|(oi, c)| *oi > i && c.t + JOIN_EPSILON_S >= end)
            .map(|p| p as u32);
        match groups.iter_mut().find(|(key, _)| *key == (spawn, join)) {
            Some((_, v)) => v.push(s),
            None => groups.push(((spawn, join), vec![s])),
        }
    }
    for ((spawn, join), subs) in groups {
        let mut ids = Vec::new();
        for s in &subs {
            let calls = child_calls(s);
            if calls.is_empty() {
                continue;
            }
            let mut conv = Conv {
                id: format!("{}::sa:{}", t.id, s.agent_id),
                ..Default::default()
            };
            for (k, (ts, c)) in calls.iter().enumerate() {
                let prev = k.checked_sub(1).map(|p| calls[p].1);
                let mut spec = turn(c, *ts, prev, opts, models, prompts)?;
                // The gap is between this call's start and the previous one's end, both in
                // the root's time.
                if let (Some(p), false) = (prev, opts.think_time_only && c.think_time.is_some()) {
                    let mut shifted = p.clone();
                    shifted.t = calls[k - 1].0;
                    spec.delay_ms = Some(end_to_start_ms(ts * 1000.0, &shifted));
                }
                conv.turns.push(spec);
            }
            ids.push(conv.id.clone());
            kids.push(conv);
        }
        if ids.is_empty() {
            continue;
        }
        let start_s = subs.iter().map(|s| s.t).fold(f64::INFINITY, f64::min);
        root.turns[spawn].branches.push(Branch {
            children: ids,
            fork: false,
            join_turn: join,
            start_ms: Some(start_s * 1000.0),
        });
    }
    Ok((root, kids))
}

#[cfg(test)]
mod tests;
