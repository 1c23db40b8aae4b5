//! AIPerf's `dag_jsonl`: one conversation per line (`session_id`, `turns`), whose turns may
//! start other conversations of the file when they end. `spawns` start children with a
//! fresh context that the parent joins on its next turn (or on `join_at`; a spawn from the
//! last turn runs in the background); `forks` start children that continue the parent's
//! conversation (its messages and live replies), either on the last turn or, with
//! `background: true`, anywhere. Conversations no branch names are the roots.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use inferbench_core::workload::Branch;
use serde_json::{Map, Value};

use super::error::DatasetError;
use super::mooncake::check_messages;
use super::row::{Row, kind, parse_jsonl, read_text};
use super::{Conv, TurnSpec};

const CONV_FIELDS: &[&str] = &["session_id", "turns", "context_mode"];
/// AIPerf's orchestrator conversations and pre-session spawns: refused by name.
const UNBUILT_CONV_FIELDS: &[&str] = &[
    "orchestrator",
    "spawns",
    "rounds",
    "think_time_ms",
    "think_time_sigma",
    "think_time_min_ms",
    "think_time_max_ms",
    "pre_session_spawns",
];
const TURN_FIELDS: &[&str] = &[
    "messages",
    "model",
    "max_tokens",
    "tools",
    "extra",
    "forks",
    "spawns",
    "delay",
];

struct Parsed {
    line: usize,
    conv: Conv,
    isolated: bool,
    /// Per turn: (fork children, background) and (spawn children, join_at).
    forks: Vec<Vec<(String, bool)>>,
    spawns: Vec<Vec<(Vec<String>, Option<u64>)>>,
}

/// Reads a DAG JSONL file into its conversations, roots and children alike.
pub(crate) fn load(path: &Path) -> Result<Vec<Conv>, DatasetError> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    from_text(&file, &text)
}

/// The conversations of a DAG file's text (named `file` in errors).
pub(crate) fn from_text(file: &str, text: &str) -> Result<Vec<Conv>, DatasetError> {
    let file = file.to_string();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rows = parse_jsonl(&file, text)?;
    let mut parsed: Vec<Parsed> = Vec::with_capacity(rows.len());
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for (line, row) in &rows {
        let p = parse_conv(&Row::new(&file, *line, row))?;
        if let Some(&first) = by_id.get(&p.conv.id) {
            return Err(DatasetError::field(
                &file,
                Some(*line),
                "session_id",
                format!(
                    "{:?} is also the session_id on line {}",
                    p.conv.id, parsed[first].line
                ),
            ));
        }
        by_id.insert(p.conv.id.clone(), parsed.len());
        parsed.push(p);
    }
    // Branches: targets exist, a fork target has one parent, no foreground fork before the
    // last turn, a fork target keeps its context (not isolated).
    let mut fork_parent: HashMap<String, usize> = HashMap::new();
    let mut referenced: HashSet<String> = HashSet::new();
    for p in &parsed {
        let last = p.conv.turns.len() - 1;
        let at = |turn: usize, field: &str| format!("turns[{turn}].{field}");
        for (t, forks) in p.forks.iter().enumerate() {
            for (child, background) in forks {
                let Some(&c) = by_id.get(child) else {
                    return Err(DatasetError::field(
                        &file,
                        Some(p.line),
                        at(t, "forks"),
                        format!("no conversation has the session_id {child:?}"),
                    ));
                };
                if !background && t != last {
                    return Err(DatasetError::field(
                        &file,
                        Some(p.line),
                        at(t, "forks"),
                        format!(
                            "a fork of {child:?} before the last turn needs \"background\": true (the parent ends with a foreground fork)"
                        ),
                    ));
                }
                if let Some(first) = fork_parent.insert(child.clone(), p.line) {
                    return Err(DatasetError::field(
                        &file,
                        Some(p.line),
                        at(t, "forks"),
                        format!(
                            "{child:?} is also forked on line {first}: a fork child has one parent"
                        ),
                    ));
                }
                if parsed[c].isolated {
                    return Err(DatasetError::field(
                        &file,
                        Some(parsed[c].line),
                        "context_mode",
                        "a fork child continues its parent's conversation: it cannot be message_array_with_responses",
                    ));
                }
                referenced.insert(child.clone());
            }
        }
        for (t, groups) in p.spawns.iter().enumerate() {
            for (children, join_at) in groups {
                for child in children {
                    if !by_id.contains_key(child) {
                        return Err(DatasetError::field(
                            &file,
                            Some(p.line),
                            at(t, "spawns"),
                            format!("no conversation has the session_id {child:?}"),
                        ));
                    }
                    referenced.insert(child.clone());
                }
                if let Some(j) = *join_at
                    && (j <= t as u64 || j > last as u64)
                {
                    return Err(DatasetError::field(
                        &file,
                        Some(p.line),
                        at(t, "spawns"),
                        format!(
                            "join_at {j} must be after this turn ({t}) and a turn of the conversation (0..={last})"
                        ),
                    ));
                }
            }
        }
    }
    // System messages: only on a root's first turn (an isolated turn's list may start with one).
    for p in &parsed {
        for (t, turn) in p.conv.turns.iter().enumerate() {
            let msgs = turn.messages.as_deref().unwrap_or(&[]);
            for (m, msg) in msgs.iter().enumerate() {
                let system = msg.get("role").and_then(Value::as_str) == Some("system");
                let allowed = if p.isolated {
                    m == 0
                } else {
                    t == 0 && !fork_parent.contains_key(&p.conv.id)
                };
                if system && !allowed {
                    return Err(DatasetError::field(
                        &file,
                        Some(p.line),
                        format!("turns[{t}].messages[{m}]"),
                        "a system message goes first, on a root conversation's first turn only (chat templates drop it elsewhere)",
                    ));
                }
            }
        }
    }
    check_acyclic(&file, &parsed, &by_id)?;
    let mut out = Vec::with_capacity(parsed.len());
    for mut p in parsed {
        let last = p.conv.turns.len() - 1;
        for (t, forks) in p.forks.iter().enumerate() {
            for background in [false, true] {
                let children: Vec<String> = forks
                    .iter()
                    .filter(|f| f.1 == background)
                    .map(|f| f.0.clone())
                    .collect();
                if !children.is_empty() {
                    p.conv.turns[t].branches.push(Branch {
                        children,
                        fork: true,
                        join_turn: None,
                        start_ms: None,
                    });
                }
            }
        }
        for (t, groups) in p.spawns.iter().enumerate() {
            for (children, join_at) in groups {
                let join = join_at.unwrap_or(t as u64 + 1);
                p.conv.turns[t].branches.push(Branch {
                    children: children.clone(),
                    fork: false,
                    join_turn: (join <= last as u64).then_some(join as u32),
                    start_ms: None,
                });
            }
        }
        out.push(p.conv);
    }
    if out.iter().all(|c| referenced.contains(&c.id)) {
        return Err(DatasetError::file(
            &file,
            "every conversation is some branch's child: there is no root to start",
        ));
    }
    Ok(out)
}

fn check_acyclic(
    file: &str,
    parsed: &[Parsed],
    by_id: &HashMap<String, usize>,
) -> Result<(), DatasetError> {
    let edges = |p: &Parsed| -> Vec<usize> {
        let f = p.forks.iter().flatten().map(|f| &f.0);
        let s = p.spawns.iter().flatten().flat_map(|g| g.0.iter());
        f.chain(s).filter_map(|c| by_id.get(c).copied()).collect()
    };
    // 0 unseen, 1 on the path, 2 done.
    let mut state = vec![0u8; parsed.len()];
    for start in 0..parsed.len() {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, edges(&parsed[start]), 0usize)];
        state[start] = 1;
        while let Some((node, next, i)) = stack.last_mut() {
            if *i == next.len() {
                state[*node] = 2;
                stack.pop();
                continue;
            }
            let n = next[*i];
            *i += 1;
            match state[n] {
                1 => {
                    let p = &parsed[n];
                    return Err(DatasetError::field(
                        file,
                        Some(p.line),
                        "session_id",
                        format!(
                            "{:?} starts itself through its branches (a cycle)",
                            p.conv.id
                        ),
                    ));
                }
                0 => {
                    state[n] = 1;
                    let e = edges(&parsed[n]);
                    stack.push((n, e, 0));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn parse_conv(r: &Row<'_>) -> Result<Parsed, DatasetError> {
    for k in r.obj.keys() {
        if UNBUILT_CONV_FIELDS.contains(&k.as_str()) && r.has(k) {
            return Err(r.err(k, "is not built: orchestrator conversations, rounds, think times and pre-session spawns are refused (docs/datasets.md)"));
        }
    }
    r.check_keys(&[CONV_FIELDS, UNBUILT_CONV_FIELDS].concat(), "dag_jsonl")?;
    let id = r
        .opt_str("session_id")?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| r.err("session_id", "required (a non-empty string)"))?;
    let isolated = match r.opt_str("context_mode")? {
        None | Some("deltas_without_responses") => false,
        Some("message_array_with_responses") => true,
        Some(other) => return Err(r.err("context_mode", format!("{other:?} is not supported (deltas_without_responses, message_array_with_responses)"))),
    };
    let turns = match r.get("turns") {
        Some(Value::Array(t)) if !t.is_empty() => t,
        Some(Value::Array(_)) | None => return Err(r.err("turns", "required: a non-empty list")),
        Some(v) => return Err(r.err("turns", format!("expected a list, got {}", kind(v)))),
    };
    let mut conv = Conv {
        id: id.to_string(),
        history: !isolated,
        ..Default::default()
    };
    let (mut forks, mut spawns) = (Vec::new(), Vec::new());
    for (i, t) in turns.iter().enumerate() {
        let Value::Object(obj) = t else {
            return Err(r.err(
                &format!("turns[{i}]"),
                format!("expected an object, got {}", kind(t)),
            ));
        };
        let tr = r.nested(format!("turns[{i}]."), obj);
        let (spec, f, s) = parse_turn(&tr, obj)?;
        conv.turns.push(spec);
        forks.push(f);
        spawns.push(s);
    }
    Ok(Parsed {
        line: r.line.unwrap_or(0),
        conv,
        isolated,
        forks,
        spawns,
    })
}

type TurnParts = (
    TurnSpec,
    Vec<(String, bool)>,
    Vec<(Vec<String>, Option<u64>)>,
);

fn parse_turn(r: &Row<'_>, obj: &Map<String, Value>) -> Result<TurnParts, DatasetError> {
    r.check_keys(TURN_FIELDS, "a dag_jsonl turn")?;
    let messages = match r.get("messages") {
        Some(Value::Array(m)) if !m.is_empty() => m.clone(),
        Some(Value::Array(_)) | None => return Err(r.err("messages", "required: a non-empty list")),
        Some(v) => return Err(r.err("messages", format!("expected a list, got {}", kind(v)))),
    };
    check_messages(r, "messages", &messages)?;
    let max_tokens = match r.get("max_tokens") {
        Some(Value::Bool(_)) => {
            return Err(r.err("max_tokens", "expected an integer, not a boolean"));
        }
        _ => match r.opt_u64("max_tokens")? {
            Some(0) => return Err(r.err("max_tokens", "must be at least 1")),
            m => m,
        },
    };
    let tools = match r.get("tools") {
        None => None,
        Some(Value::Array(items)) if items.iter().all(Value::is_object) => {
            Some(Value::Array(items.clone()))
        }
        Some(_) => return Err(r.err("tools", "expected a list of objects")),
    };
    let delay = r.opt_ms("delay")?;
    let mut forks = Vec::new();
    for (i, f) in list(r, obj, "forks")?.iter().enumerate() {
        let key = format!("forks[{i}]");
        let entry = match f {
            Value::String(s) if !s.is_empty() => (s.clone(), false),
            Value::Object(m) => {
                let fr = r.nested(format!("{}{key}.", r.prefix), m);
                fr.check_keys(&["child", "background"], "a fork")?;
                let child = fr
                    .opt_str("child")?
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| fr.err("child", "required"))?;
                let bg = match fr.get("background") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(v) => {
                        return Err(
                            fr.err("background", format!("expected true or false, got {v}"))
                        );
                    }
                };
                (child.to_string(), bg)
            }
            _ => return Err(r.err(&key, "expected a session_id or {\"child\", \"background\"}")),
        };
        if forks.iter().any(|(c, _): &(String, bool)| *c == entry.0) {
            return Err(r.err(&key, format!("{:?} is forked twice by this turn", entry.0)));
        }
        forks.push(entry);
    }
    // Consecutive bare ids are one branch joined on the next turn; each object its own.
    let mut spawns: Vec<(Vec<String>, Option<u64>)> = Vec::new();
    let mut bare: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (i, s) in list(r, obj, "spawns")?.iter().enumerate() {
        let key = format!("spawns[{i}]");
        let children = match s {
            Value::String(c) if !c.is_empty() => {
                bare.push(c.clone());
                vec![c.clone()]
            }
            Value::Object(m) => {
                let sr = r.nested(format!("{}{key}.", r.prefix), m);
                sr.check_keys(&["children", "join_at"], "a spawn")?;
                let children: Vec<String> = match sr.get("children") {
                    Some(Value::Array(c)) if !c.is_empty() => c
                        .iter()
                        .map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_string))
                        .collect::<Option<_>>()
                        .ok_or_else(|| sr.err("children", "expected a list of session_ids"))?,
                    _ => {
                        return Err(sr.err("children", "required: a non-empty list of session_ids"));
                    }
                };
                if !bare.is_empty() {
                    spawns.push((std::mem::take(&mut bare), None));
                }
                spawns.push((children.clone(), sr.opt_u64("join_at")?));
                children
            }
            _ => return Err(r.err(&key, "expected a session_id or {\"children\", \"join_at\"}")),
        };
        for c in children {
            if !seen.insert(c.clone()) {
                return Err(r.err(&key, format!("{c:?} is spawned twice by this turn")));
            }
        }
    }
    if !bare.is_empty() {
        spawns.push((bare, None));
    }
    let spec = TurnSpec {
        messages: Some(messages),
        tools,
        max_tokens,
        extra: r.opt_object("extra")?.cloned(),
        model: r.opt_str("model")?.map(str::to_string),
        delay_ms: delay.filter(|d| *d > 0.0),
        origin: Some((r.file.to_string(), r.line.unwrap_or(0))),
        ..Default::default()
    };
    Ok((spec, forks, spawns))
}

fn list<'a>(
    r: &Row<'a>,
    _obj: &Map<String, Value>,
    key: &str,
) -> Result<&'a [Value], DatasetError> {
    match r.get(key) {
        None => Ok(&[]),
        Some(Value::Array(v)) => Ok(v),
        Some(v) => Err(r.err(key, format!("expected a list, got {}", kind(v)))),
    }
}

/// Whether a first row looks like a DAG conversation (AIPerf's probe): `session_id` and a
/// `turns` list whose turns carry `messages`, `forks` or `spawns`.
pub(crate) fn looks_dag(row: &Map<String, Value>) -> bool {
    row.get("session_id").is_some_and(Value::is_string)
        && row.get("turns").and_then(Value::as_array).is_some_and(|t| {
            !t.is_empty()
                && t.iter().all(Value::is_object)
                && t.iter().any(|x| {
                    x.get("messages").is_some_and(Value::is_array)
                        || x.get("forks").is_some()
                        || x.get("spawns").is_some()
                })
        })
}

#[cfg(test)]
mod tests;
