//! AIPerf's `tracelab`: the TraceLab agentic-coding corpus (JSON Lines, gzipped or not), one
//! row per LLM round, converted to WEKA traces as AIPerf converts them: rounds grouped by
//! `session_id` and ordered by submission time, block ids minted from the engine-reported
//! `prefix_tokens` (the previous round's first `prefix_tokens / block` ids are kept), and
//! subagent sessions nested under the session whose `Agent`/`Task` tool call (or codex
//! spawn/wait window) contains their whole span. The result replays through `agentic`.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::error::DatasetError;
use super::gz;
use super::row::{Row, kind};
use super::weka::{Call, Item, Subagent, Trace};

/// The fields that together tell a TraceLab row (AIPerf's detection set).
pub(crate) const DETECT_KEYS: [&str; 6] = [
    "session_id",
    "round_index",
    "input_tokens_total",
    "prefix_tokens",
    "newly_append_tokens",
    "timing_events",
];
/// A spawning tool call shorter than this (ms) is not taken for a subagent's run.
const MIN_SPAWN_MS: f64 = 10_000.0;
const INPUT_EVENTS: [&str; 2] = ["user_message", "tool_result"];
const OUTPUT_EVENTS: [&str; 3] = ["text", "reasoning", "tool_call"];

/// One round, with what the conversion reads.
struct Round {
    line: usize,
    round_index: i64,
    model: Option<String>,
    input: i64,
    prefix: i64,
    output: i64,
    /// Submission (the latest input event) and api time (to the last output event), s.
    submitted: Option<f64>,
    api: Option<f64>,
    /// Every event and tool stamp, for the session's span.
    stamps: Vec<f64>,
    /// `Agent`/`Task` calls: (emitted, returned, wall latency ms).
    spawn_calls: Vec<(f64, f64, f64)>,
    codex_spawns: Vec<f64>,
    codex_waits: Vec<f64>,
}

struct Session {
    id: String,
    ident: (Value, Value),
    codex: bool,
    rounds: Vec<Round>,
}

#[derive(Clone, Copy)]
struct Spawn {
    start: f64,
    end: f64,
    duration_ms: f64,
}

/// The file's text, inflated when it is gzipped.
pub(crate) fn read_maybe_gz(path: &Path) -> Result<String, DatasetError> {
    let shown = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| DatasetError::file(&shown, format!("cannot read: {e}")))?;
    if !gz::is_gzip(&bytes) {
        return super::row::read_text(path);
    }
    let bytes = gz::gunzip(&bytes).map_err(|m| DatasetError::file(&shown, m))?;
    String::from_utf8(bytes).map_err(|e| {
        DatasetError::file(
            &shown,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// Whether a row looks like TraceLab's.
pub(crate) fn looks_tracelab(row: &Map<String, Value>) -> bool {
    DETECT_KEYS.iter().all(|k| row.contains_key(*k))
}

/// The traces of a TraceLab file with `block`-token block ids.
pub(crate) fn read(path: &Path, block: u64) -> Result<Vec<Trace>, DatasetError> {
    let file = path.display().to_string();
    let text = read_maybe_gz(path)?;
    from_text(&file, &text, block)
}

/// The traces of a TraceLab file's text (named `file` in errors).
pub(crate) fn from_text(file: &str, text: &str, block: u64) -> Result<Vec<Trace>, DatasetError> {
    let file = file.to_string();
    let sessions = sessions(&file, text)?;
    if sessions.is_empty() {
        return Err(DatasetError::file(
            &file,
            "no TraceLab session (no row has a session_id)",
        ));
    }
    let links = join_index(&sessions);
    // Children nest one level: a child whose parent is itself a child stays its own trace.
    let mut children: HashMap<usize, Vec<(usize, Spawn)>> = HashMap::new();
    for &(child, parent, spawn) in &links {
        if links.iter().any(|l| l.0 == parent) {
            continue;
        }
        children.entry(parent).or_default().push((child, spawn));
    }
    let nested: Vec<usize> = children.values().flatten().map(|c| c.0).collect();
    let mut placed = Vec::new();
    let mut traces: Vec<Trace> = Vec::new();
    let push = |traces: &mut Vec<Trace>, t: Option<Trace>| -> Result<(), DatasetError> {
        let Some(t) = t else { return Ok(()) };
        if traces.iter().any(|p| p.id == t.id) {
            return Err(DatasetError::file(
                &file,
                format!(
                    "two sessions make the trace id {:?} (after replacing unsafe characters)",
                    t.id
                ),
            ));
        }
        traces.push(t);
        Ok(())
    };
    for (i, s) in sessions.iter().enumerate() {
        if nested.contains(&i) {
            continue;
        }
        let kids = children.get(&i).map(Vec::as_slice).unwrap_or(&[]);
        let t = build_trace(&file, s, block, kids, &sessions, &mut placed);
        push(&mut traces, t)?;
    }
    // A child that found no place under its parent is replayed on its own.
    for (i, s) in sessions.iter().enumerate() {
        if nested.contains(&i) && !placed.contains(&i) {
            let t = build_trace(&file, s, block, &[], &sessions, &mut placed);
            push(&mut traces, t)?;
        }
    }
    if traces.is_empty() {
        return Err(DatasetError::file(
            &file,
            "no TraceLab round has a timestamp",
        ));
    }
    Ok(traces)
}

fn sessions(file: &str, text: &str) -> Result<Vec<Session>, DatasetError> {
    let mut out: Vec<Session> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let row = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(m)) => m,
            // AIPerf skips a row that is not an object.
            Ok(_) => continue,
            Err(e) => {
                return Err(DatasetError::line(
                    file,
                    line_no,
                    format!("not valid JSON (column {}): {e}", e.column()),
                ));
            }
        };
        let r = Row::new(file, line_no, &row);
        let Some(sid) = r.opt_str("session_id")?.filter(|s| !s.is_empty()) else {
            continue;
        };
        let round = round(&r)?;
        let n = match index.get(sid) {
            Some(&n) => n,
            None => {
                index.insert(sid.to_string(), out.len());
                out.push(Session {
                    id: sid.to_string(),
                    ident: (
                        row.get("user").cloned().unwrap_or(Value::Null),
                        row.get("project").cloned().unwrap_or(Value::Null),
                    ),
                    codex: r.opt_str("provider")? == Some("codex"),
                    rounds: Vec::new(),
                });
                out.len() - 1
            }
        };
        out[n].rounds.push(round);
    }
    Ok(out)
}

fn int(r: &Row<'_>, key: &str) -> Result<i64, DatasetError> {
    match r.get(key) {
        None => Ok(0),
        Some(v) => v
            .as_i64()
            .or_else(|| {
                v.as_f64()
                    .filter(|f| f.is_finite() && f.abs() < 9e15)
                    .map(|f| f as i64)
            })
            .ok_or_else(|| r.err(key, format!("expected an integer, got {v}"))),
    }
}

fn stamp(r: &Row<'_>, key: &str, v: Option<&Value>) -> Result<Option<f64>, DatasetError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => parse_ts(s)
            .map(Some)
            .ok_or_else(|| r.err(key, format!("{s:?} is not an ISO-8601 time"))),
        Some(v) => Err(r.err(key, format!("expected an ISO-8601 time, got {}", kind(v)))),
    }
}

fn list<'a>(r: &Row<'a>, key: &str) -> Result<Vec<&'a Map<String, Value>>, DatasetError> {
    match r.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_object()
                    .ok_or_else(|| r.err(&format!("{key}[{i}]"), "expected an object"))
            })
            .collect(),
        Some(v) => Err(r.err(key, format!("expected a list, got {}", kind(v)))),
    }
}

fn round(r: &Row<'_>) -> Result<Round, DatasetError> {
    let (mut ins, mut outs, mut stamps) = (Vec::new(), Vec::new(), Vec::new());
    for (i, e) in list(r, "timing_events")?.into_iter().enumerate() {
        let er = r.nested(format!("timing_events[{i}]."), e);
        let Some(ts) = stamp(&er, "timestamp", e.get("timestamp"))? else {
            continue;
        };
        stamps.push(ts);
        match er.opt_str("event_type")? {
            Some(t) if INPUT_EVENTS.contains(&t) => ins.push(ts),
            Some(t) if OUTPUT_EVENTS.contains(&t) => outs.push(ts),
            _ => {}
        }
    }
    let (mut spawn_calls, mut codex_spawns, mut codex_waits) = (Vec::new(), Vec::new(), Vec::new());
    for (i, tool) in list(r, "tools")?.into_iter().enumerate() {
        let tr = r.nested(format!("tools[{i}]."), tool);
        let emitted = stamp(&tr, "emitted_at", tool.get("emitted_at"))?;
        let returned = stamp(&tr, "result_at", tool.get("result_at"))?;
        stamps.extend(emitted.iter().chain(returned.iter()));
        let latency = match tr.get("tool_wall_latency_ms") {
            None => None,
            Some(v) => Some(v.as_f64().ok_or_else(|| {
                tr.err(
                    "tool_wall_latency_ms",
                    format!("expected a number, got {v}"),
                )
            })?),
        };
        match tr.opt_str("tool_name")? {
            Some("Agent" | "Task") => {
                if let (Some(l), Some(e), Some(x)) = (latency, emitted, returned)
                    && l >= MIN_SPAWN_MS
                {
                    spawn_calls.push((e, x, l));
                }
            }
            Some("spawn_agent") => codex_spawns.extend(emitted),
            Some("wait_agent") => codex_waits.extend(returned),
            _ => {}
        }
    }
    let max = |v: &[f64]| v.iter().copied().reduce(f64::max);
    let min = |v: &[f64]| v.iter().copied().reduce(f64::min);
    let submitted = max(&ins).or_else(|| min(&outs));
    let api = match (submitted, max(&outs)) {
        (Some(s), Some(o)) => Some((o - s).max(0.0)),
        _ => None,
    };
    r.opt_str("first_input_event_type")?;
    Ok(Round {
        line: r.line.unwrap_or(0),
        round_index: int(r, "round_index")?,
        model: r
            .opt_str("model")?
            .filter(|m| !m.is_empty())
            .map(str::to_string),
        input: int(r, "input_tokens_total")?,
        prefix: int(r, "prefix_tokens")?,
        output: int(r, "output_tokens")?.saturating_add(int(r, "reasoning_output_tokens")?),
        submitted,
        api,
        stamps,
        spawn_calls,
        codex_spawns,
        codex_waits,
    })
}

/// Every (child, parent, spawn window): a session whose whole span lies inside another
/// session's spawning window (same `user` and `project`); the tightest window wins.
fn join_index(sessions: &[Session]) -> Vec<(usize, usize, Spawn)> {
    let span = |s: &Session| {
        let all = s.rounds.iter().flat_map(|r| r.stamps.iter().copied());
        let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        (lo <= hi).then_some((lo, hi))
    };
    let mut windows: Vec<(usize, Spawn)> = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        if s.codex {
            let spawns = s.rounds.iter().flat_map(|r| r.codex_spawns.iter().copied());
            let waits = s.rounds.iter().flat_map(|r| r.codex_waits.iter().copied());
            if let (Some(a), Some(b)) = (spawns.reduce(f64::min), waits.reduce(f64::max))
                && b > a
            {
                let duration_ms = ((b - a) * 1000.0).trunc();
                windows.push((
                    i,
                    Spawn {
                        start: a,
                        end: b,
                        duration_ms,
                    },
                ));
            }
            continue;
        }
        for r in &s.rounds {
            for &(a, b, l) in &r.spawn_calls {
                windows.push((
                    i,
                    Spawn {
                        start: a,
                        end: b,
                        duration_ms: l.trunc(),
                    },
                ));
            }
        }
    }
    let mut links = Vec::new();
    for (c, cs) in sessions.iter().enumerate() {
        let Some((lo, hi)) = span(cs) else { continue };
        let best = windows
            .iter()
            .filter(|(p, w)| {
                *p != c && sessions[*p].ident == cs.ident && lo >= w.start && hi <= w.end
            })
            .min_by(|(pa, a), (pb, b)| {
                (a.end - a.start)
                    .total_cmp(&(b.end - b.start))
                    .then(a.start.total_cmp(&b.start))
                    .then(sessions[*pa].id.cmp(&sessions[*pb].id))
            });
        if let Some(&(p, w)) = best {
            links.push((c, p, w));
        }
    }
    links
}

/// A session's dated rounds in replay order: by submission time, then `round_index`.
fn ordered(s: &Session) -> Vec<&Round> {
    let mut v: Vec<&Round> = s.rounds.iter().filter(|r| r.submitted.is_some()).collect();
    v.sort_by(|a, b| {
        a.submitted
            .unwrap_or(0.0)
            .total_cmp(&b.submitted.unwrap_or(0.0))
            .then(a.round_index.cmp(&b.round_index))
    });
    v
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Calls of `rounds` with block ids: each keeps the previous round's first
/// `prefix / block` ids (at most its whole blocks) and takes fresh ids for the rest.
fn calls(file: &str, rounds: &[&Round], block: u64, next_id: &mut i64, t0: f64) -> Vec<Call> {
    let mut prev: Vec<i64> = Vec::new();
    let mut prev_end: Option<f64> = None;
    let mut out = Vec::with_capacity(rounds.len());
    for r in rounds {
        let total = r.input.max(0) as u64;
        let prefix = (r.prefix.max(0) as u64).min(total);
        let n = (total / block) as usize;
        let reuse = ((prefix / block) as usize).min(prev.len()).min(n);
        let mut ids: Vec<i64> = prev[..reuse].to_vec();
        for _ in reuse..n {
            ids.push(*next_id);
            *next_id += 1;
        }
        let t = round6(r.submitted.unwrap_or(t0) - t0);
        out.push(Call {
            file: file.to_string(),
            line: r.line,
            t,
            model: r.model.clone().unwrap_or_else(|| "unknown".into()),
            input: total.max(1),
            output: r.output.max(1) as u64,
            hash_ids: ids.clone(),
            api_time: r.api.map(round6),
            think_time: prev_end.map(|e: f64| round6((t - e).max(0.0))),
        });
        prev_end = Some(t + r.api.unwrap_or(0.0));
        prev = ids;
    }
    out
}

fn build_trace(
    file: &str,
    s: &Session,
    block: u64,
    kids: &[(usize, Spawn)],
    sessions: &[Session],
    placed: &mut Vec<usize>,
) -> Option<Trace> {
    let rounds = ordered(s);
    let t0 = rounds.first()?.submitted?;
    // One id namespace for the parent and its children (hash_id_scope "local").
    let mut next_id = 1i64;
    let parent = calls(file, &rounds, block, &mut next_id, t0);
    let mut pending: Vec<(usize, Subagent)> = Vec::new();
    for &(c, spawn) in kids {
        let child_rounds = ordered(&sessions[c]);
        if child_rounds.is_empty() {
            continue;
        }
        let mut inner = calls(file, &child_rounds, block, &mut next_id, t0);
        let entry_t = spawn.start - t0;
        for call in &mut inner {
            if call.t < entry_t {
                call.t = round6(entry_t);
            }
        }
        inner[0].think_time = None;
        // After the last parent call at or before the spawn.
        let Some(anchor) = parent.iter().rposition(|p| p.t <= entry_t) else {
            continue;
        };
        placed.push(c);
        pending.push((
            anchor,
            Subagent {
                line: child_rounds[0].line,
                t: round6(entry_t),
                agent_id: safe_id(&sessions[c].id),
                duration_ms: Some(spawn.duration_ms),
                calls: inner,
            },
        ));
    }
    // Each subagent goes after the last parent call at or before its spawn, in spawn order.
    let mut items = Vec::with_capacity(parent.len() + pending.len());
    for (i, p) in parent.into_iter().enumerate() {
        items.push(Item::Call(p));
        let mut here: Vec<Subagent> = Vec::new();
        let mut k = 0;
        while k < pending.len() {
            if pending[k].0 == i {
                here.push(pending.remove(k).1);
            } else {
                k += 1;
            }
        }
        here.sort_by(|a, b| a.t.total_cmp(&b.t));
        items.extend(here.into_iter().map(Item::Subagent));
    }
    Some(Trace {
        file: file.to_string(),
        id: safe_id(&s.id),
        block_size: block,
        items,
    })
}

/// A session id made safe as a trace or agent id (AIPerf's rule: runs of other characters
/// become `_`, at most 150 characters).
pub(crate) fn safe_id(id: &str) -> String {
    let mut out = String::new();
    let mut in_run = false;
    for ch in id.chars() {
        if ch.is_ascii_alphanumeric() || matches!(ch, '.' | '_' | '-') {
            out.push(ch);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    out.chars().take(150).collect()
}

/// ISO-8601 → POSIX seconds; a time without an offset is UTC (as AIPerf reads it).
pub(crate) fn parse_ts(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let (mut h, mut mi, mut sec, mut frac) = (0, 0, 0, 0.0);
    let mut i = 10;
    if i < b.len() {
        if !matches!(b[i], b'T' | b't' | b' ') {
            return None;
        }
        h = num(i + 1..i + 3)?;
        if b.get(i + 3) != Some(&b':') {
            return None;
        }
        mi = num(i + 4..i + 6)?;
        i += 6;
        if b.get(i) == Some(&b':') {
            sec = num(i + 1..i + 3)?;
            i += 3;
            if matches!(b.get(i), Some(b'.' | b',')) {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if j == start {
                    return None;
                }
                frac = format!("0.{}", &s[start..j]).parse().ok()?;
                i = j;
            }
        }
    }
    let offset_s = match &s[i..] {
        "" | "Z" | "z" => 0,
        rest => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let digits: String = rest[1..].chars().filter(|c| *c != ':').collect();
            if digits.len() != 4 || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let hh: i64 = digits[..2].parse().ok()?;
            let mm: i64 = digits[2..].parse().ok()?;
            sign * (hh * 3600 + mm * 60)
        }
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some((days * 86_400 + h * 3600 + mi * 60 + sec - offset_s) as f64 + frac)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests;
