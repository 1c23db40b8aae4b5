//! `analyze turn-messages`: the messages each request sent, from the raw export
//! (`profile_export_raw.jsonl` or AIPerf's `raw_records/*.jsonl` shards), as one HTML page of
//! collapsible conversation → turn → message. AIPerf 0.13's rules: a conversation per
//! `conversation_id` (a second session replaying it becomes "replay 2"), roots first then by
//! earliest request, at most N conversations and M turns each, every distinct
//! `(role, body)` kept once and capped at a number of characters.
//!
//! The page holds each distinct message once, HTML-escaped inside a `<template>`; a turn
//! lists message numbers and a few lines of inline script copy them in when the turn is
//! opened, so the page stays small and the DOM light however much history repeats.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::Value;

use crate::svg::esc;

/// One raw record: one turn's request.
#[derive(Clone, Debug, Default)]
pub struct RawTurn {
    pub conv: String,
    pub turn: Option<i64>,
    pub depth: i64,
    pub parent_corr: Option<String>,
    pub x_corr: Option<String>,
    pub model: Option<String>,
    pub max_tokens: Option<String>,
    pub phase: Option<String>,
    pub cancelled: bool,
    pub error: bool,
    pub messages: Vec<Value>,
    pub start_ns: i64,
}

fn text(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

/// One raw record, tolerant of missing or mistyped parts as AIPerf is.
pub fn raw_turn(r: &Value) -> RawTurn {
    let md = &r["metadata"];
    let pl = &r["payload"];
    let max_tokens = [&pl["max_completion_tokens"], &pl["max_tokens"]]
        .into_iter()
        .find(|v| !v.is_null() && v.as_u64() != Some(0))
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string));
    RawTurn {
        conv: text(&md["conversation_id"]).unwrap_or_else(|| "(none)".into()),
        turn: md["turn_index"].as_i64(),
        depth: md["agent_depth"].as_i64().unwrap_or(0),
        parent_corr: text(&md["parent_correlation_id"]),
        x_corr: text(&md["x_correlation_id"]),
        model: text(&pl["model"]),
        max_tokens,
        phase: text(&md["benchmark_phase"]),
        cancelled: md["was_cancelled"].as_bool().unwrap_or(false),
        error: !r["error"].is_null() && r["error"] != Value::Bool(false),
        messages: pl["messages"].as_array().cloned().unwrap_or_default(),
        start_ns: md["request_start_ns"].as_i64().unwrap_or(0),
    }
}

/// The records of one raw jsonl file; `label` names it in errors (`label:line: …`).
/// Lines that are JSON but not objects are skipped.
pub fn parse_raw(jsonl: &str, label: &str) -> Result<Vec<RawTurn>, String> {
    let mut out = Vec::new();
    for v in crate::jsonl::json_lines(jsonl) {
        let v = v.map_err(|(n, e)| format!("{label}:{n}: {e}"))?;
        if v.is_object() {
            out.push(raw_turn(&v));
        }
    }
    Ok(out)
}

/// How much to show.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub conversations: usize,
    pub turns: usize,
    pub chars: usize,
}

/// One distinct message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub role: String,
    /// Characters of the whole body.
    pub len: usize,
    /// At most `Limits::chars` characters.
    pub body: String,
    /// Characters cut off.
    pub cut: usize,
}

#[derive(Clone, Debug)]
pub struct TurnView {
    pub turn: Option<i64>,
    pub phase: Option<String>,
    pub max_tokens: Option<String>,
    pub cancelled: bool,
    pub error: bool,
    /// Indices into `Page::messages`.
    pub ids: Vec<usize>,
}

#[derive(Clone, Debug)]
pub struct Conversation {
    pub id: String,
    pub replay: Option<usize>,
    pub depth: i64,
    pub parent: Option<String>,
    pub lane: Option<String>,
    pub models: String,
    /// Turns it has, shown or not.
    pub turn_count: usize,
    pub hidden_turns: usize,
    pub turns: Vec<TurnView>,
}

#[derive(Clone, Debug)]
pub struct Page {
    pub total_conversations: usize,
    pub total_turns: usize,
    pub message_refs: usize,
    pub files: usize,
    /// Messages per role over every record, most frequent first.
    pub roles: Vec<(String, usize)>,
    pub messages: Vec<Message>,
    pub conversations: Vec<Conversation>,
}

/// A message as `(role, body)`: plain string content stays readable; anything else
/// (multimodal parts, tool calls, extra fields) is shown as the JSON that was sent.
pub fn display(m: &Value) -> (String, String) {
    let Some(o) = m.as_object() else {
        return match m {
            Value::Null => ("?".into(), String::new()),
            Value::String(s) => ("?".into(), s.clone()),
            v => ("?".into(), v.to_string()),
        };
    };
    let role = match o.get("role") {
        None => "?".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    let rest: serde_json::Map<String, Value> = o
        .iter()
        .filter(|(k, _)| *k != "role")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let plain = rest.keys().all(|k| k == "content")
        && matches!(
            rest.get("content"),
            None | Some(Value::Null) | Some(Value::String(_))
        );
    if plain {
        let body = rest.get("content").and_then(Value::as_str).unwrap_or("");
        return (role, body.to_string());
    }
    (role, Value::Object(rest).to_string())
}

/// The page's data: conversations ordered and cut, messages interned.
pub fn build(mut recs: Vec<RawTurn>, files: usize, lim: Limits) -> Page {
    let corr_conv: HashMap<String, String> = recs
        .iter()
        .filter_map(|r| Some((r.x_corr.clone()?, r.conv.clone())))
        .collect();
    // A conversation replayed by several sessions: each session (x_correlation_id) is
    // numbered by first arrival; without correlation ids, by a turn index seen again.
    let mut by_time: Vec<usize> = (0..recs.len()).collect();
    by_time.sort_by_key(|&i| recs[i].start_ns);
    let mut lanes: HashMap<(String, String), usize> = HashMap::new();
    let mut lane_count: HashMap<String, usize> = HashMap::new();
    let mut seen_turn: HashMap<(String, Option<i64>), usize> = HashMap::new();
    let mut replay = vec![0; recs.len()];
    for i in by_time {
        let r = &recs[i];
        replay[i] = match &r.x_corr {
            Some(x) => {
                let n = lane_count.entry(r.conv.clone()).or_default();
                *lanes.entry((r.conv.clone(), x.clone())).or_insert_with(|| {
                    *n += 1;
                    *n - 1
                })
            }
            None => {
                let n = seen_turn.entry((r.conv.clone(), r.turn)).or_default();
                *n += 1;
                *n - 1
            }
        };
    }
    let mut order: Vec<(String, usize)> = Vec::new();
    let mut groups: HashMap<(String, usize), Vec<RawTurn>> = HashMap::new();
    for (r, rp) in recs.drain(..).zip(replay) {
        let key = (r.conv.clone(), rp);
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(r);
    }
    let sort_key = |k: &(String, usize)| {
        let g = &groups[k];
        (
            g.iter().map(|r| r.depth).min().unwrap_or(0),
            g.iter().map(|r| r.start_ns).min().unwrap_or(0),
            replay_name(&k.0, k.1),
        )
    };
    order.sort_by_cached_key(sort_key);
    let total_turns = groups.values().map(Vec::len).sum();
    let mut message_refs = 0;
    let mut roles: Vec<(String, usize)> = Vec::new();
    for g in groups.values() {
        for m in g.iter().flat_map(|r| &r.messages) {
            message_refs += 1;
            let role = match m.get("role") {
                Some(Value::String(s)) => s.clone(),
                Some(v) if m.is_object() => v.to_string(),
                _ => "?".into(),
            };
            match roles.iter_mut().find(|r| r.0 == role) {
                Some(r) => r.1 += 1,
                None => roles.push((role, 1)),
            }
        }
    }
    roles.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));

    let mut intern: HashMap<(String, String), usize> = HashMap::new();
    let mut messages: Vec<Message> = Vec::new();
    let mut conversations = Vec::new();
    for key in order.iter().take(lim.conversations) {
        let mut turns = groups.remove(key).unwrap_or_default();
        turns.sort_by_key(|r| (r.turn.unwrap_or(0), r.start_ns));
        let depth = turns.iter().map(|r| r.depth).min().unwrap_or(0);
        let parent = turns
            .iter()
            .find_map(|r| r.parent_corr.as_ref())
            .and_then(|p| corr_conv.get(p).cloned());
        let mut models: Vec<&str> = turns
            .iter()
            .map(|r| r.model.as_deref().unwrap_or("?"))
            .collect();
        models.sort_unstable();
        models.dedup();
        let models = models.join(",");
        let turn_count = turns.len();
        let hidden_turns = turn_count.saturating_sub(lim.turns);
        turns.truncate(lim.turns);
        let lane = turns.iter().find_map(|r| r.x_corr.clone());
        let views = turns
            .into_iter()
            .map(|r| {
                let ids = r
                    .messages
                    .iter()
                    .map(|m| {
                        let (role, body) = display(m);
                        let next = messages.len();
                        *intern
                            .entry((role.clone(), body.clone()))
                            .or_insert_with(|| {
                                let len = body.chars().count();
                                messages.push(Message {
                                    role,
                                    len,
                                    body: body.chars().take(lim.chars).collect(),
                                    cut: len.saturating_sub(lim.chars),
                                });
                                next
                            })
                    })
                    .collect();
                TurnView {
                    turn: r.turn,
                    phase: r.phase,
                    max_tokens: r.max_tokens,
                    cancelled: r.cancelled,
                    error: r.error,
                    ids,
                }
            })
            .collect();
        conversations.push(Conversation {
            id: key.0.clone(),
            replay: (key.1 > 0).then_some(key.1 + 1),
            depth,
            parent,
            lane,
            models,
            turn_count,
            hidden_turns,
            turns: views,
        });
    }
    Page {
        total_conversations: order.len(),
        total_turns,
        message_refs,
        files,
        roles,
        messages,
        conversations,
    }
}

fn replay_name(conv: &str, replay: usize) -> String {
    if replay == 0 {
        conv.to_string()
    } else {
        format!("{conv} \u{b7} replay {}", replay + 1)
    }
}

/// A long id shortened for a heading, keeping what tells ids apart: ids of one trace share
/// a long prefix before `::`, so the part after it is kept whole.
pub fn short_id(id: &str) -> String {
    let cut = |s: &str, n: usize| {
        if s.chars().count() > n {
            format!("{}\u{2026}", s.chars().take(n).collect::<String>())
        } else {
            s.to_string()
        }
    };
    match id.split_once("::") {
        Some((base, rest)) => format!("{}::{rest}", cut(base, 10)),
        None => cut(id, 20),
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 turn`, `3 turns`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{} {word}s", thousands(n))
    }
}

const STYLE: &str = "body{font-family:sans-serif;margin:16px;color:#222}\
details{margin:2px 0 2px 14px}summary{cursor:pointer}\
details.conv>summary{font-weight:600}.sub>summary{color:#6a3d9a}\
.meta{color:#666;font-weight:normal}.msg{border-left:3px solid #ccc;margin:4px 0 4px 14px;padding:2px 8px}\
.role{font-size:12px;color:#555}.r-system{border-color:#999}.r-user{border-color:#1f77b4}\
.r-assistant{border-color:#2ca02c}.r-tool{border-color:#ff7f0e}\
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font-size:13px}\
.cut,.more{color:#a33;font-size:12px}.bad{color:#a33}";

/// Copies a turn's messages from their templates the first time it is opened.
const SCRIPT: &str = "document.querySelectorAll('details.turn').forEach(function(d){\
d.addEventListener('toggle',function(){if(!d.open||d.dataset.done)return;d.dataset.done='1';\
var box=d.querySelector('.msgs');d.dataset.ids.split(' ').forEach(function(id){\
if(id){box.appendChild(document.getElementById('m'+id).content.cloneNode(true));}});});});";

/// The page, every user string HTML-escaped.
pub fn html(page: &Page, title: &str) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>Turn messages: {t}</title><style>{STYLE}</style></head><body>\
<h1>Turn messages: {t}</h1><p>{} conversations ({} shown) \u{b7} {} turns \u{b7} {} message \
references ({} distinct) \u{b7} from {} raw file(s)</p><p class=\"meta\">",
        thousands(page.total_conversations),
        thousands(page.conversations.len()),
        thousands(page.total_turns),
        thousands(page.message_refs),
        thousands(page.messages.len()),
        page.files,
        t = esc(title),
    );
    let roles: Vec<String> = page
        .roles
        .iter()
        .map(|(r, n)| format!("{} {}", esc(r), thousands(*n)))
        .collect();
    let _ = write!(o, "messages by role: {}</p>", roles.join(" \u{b7} "));
    for c in &page.conversations {
        let kind = if c.depth == 0 {
            "root".to_string()
        } else {
            format!("subagent (depth {})", c.depth)
        };
        let mut meta = vec![kind, plural(c.turn_count, "turn")];
        if let Some(r) = c.replay {
            meta.push(format!("replay {r}"));
        }
        if let Some(p) = &c.parent {
            meta.push(format!("parent {}", short_id(p)));
        }
        if let Some(l) = &c.lane {
            meta.push(format!("session {}", l.chars().take(8).collect::<String>()));
        }
        meta.push(format!("model {}", c.models));
        let _ = write!(
            o,
            "<details class=\"conv{}\"><summary title=\"{}\">{} <span class=\"meta\">{}</span></summary>",
            if c.depth > 0 { " sub" } else { "" },
            esc(&c.id),
            esc(&short_id(&c.id)),
            esc(&meta.join(" \u{b7} ")),
        );
        for t in &c.turns {
            let mut meta = vec![plural(t.ids.len(), "message")];
            if let Some(p) = &t.phase {
                meta.push(p.clone());
            }
            if let Some(m) = &t.max_tokens {
                meta.push(format!("max tokens {m}"));
            }
            let ids: Vec<String> = t.ids.iter().map(usize::to_string).collect();
            let _ = write!(
                o,
                "<details class=\"turn\" data-ids=\"{}\"><summary>turn {} <span class=\"meta\">{}</span>{}{}</summary><div class=\"msgs\"></div></details>",
                ids.join(" "),
                t.turn.map_or_else(|| "?".into(), |t| t.to_string()),
                esc(&meta.join(" \u{b7} ")),
                if t.cancelled {
                    " <span class=\"bad\">cancelled</span>"
                } else {
                    ""
                },
                if t.error {
                    " <span class=\"bad\">error</span>"
                } else {
                    ""
                },
            );
        }
        if c.hidden_turns > 0 {
            let _ = write!(
                o,
                "<p class=\"more\">{} more turns not shown (--max-turns)</p>",
                thousands(c.hidden_turns)
            );
        }
        o.push_str("</details>");
    }
    for (i, m) in page.messages.iter().enumerate() {
        let class: String = m
            .role
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        let _ = write!(
            o,
            "<template id=\"m{i}\"><div class=\"msg r-{class}\"><div class=\"role\">{} \u{b7} {} characters</div><pre>{}</pre>",
            esc(&m.role),
            thousands(m.len),
            esc(&m.body),
        );
        if m.cut > 0 {
            let _ = write!(
                o,
                "<p class=\"cut\">{} more characters not shown (--content-cap)</p>",
                thousands(m.cut)
            );
        }
        o.push_str("</div></template>");
    }
    let _ = writeln!(o, "<script>{SCRIPT}</script></body></html>");
    o
}

#[cfg(test)]
#[path = "turn_messages_tests.rs"]
mod tests;
