//! AIPerf's `weka_trace`: WEKA's kv-cache-tester recordings of Claude Code sessions. A file
//! is one JSON document (`id`, `models`, `block_size`, `hash_id_scope: "local"`,
//! `tool_tokens`, `system_tokens`, `requests`); a directory holds one per `*.json` file.
//! `requests` interleaves API calls (`type` `n` normal, `s` streaming: `t` seconds from the
//! conversation's start, `model`, `in`, `out`, `hash_ids`, `api_time`, `think_time`, …) and
//! `subagent` entries, each with its own inner calls. Every field is checked, and an error
//! names the file, the line of the request and the field.

use std::path::Path;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::DatasetError;
use super::row::{Row, as_u64, kind, read_text};

/// The JSON document's top-level fields (AIPerf's `WekaTrace`, extra fields forbidden).
const TRACE_FIELDS: &[&str] = &[
    "id",
    "models",
    "block_size",
    "hash_id_scope",
    "tool_tokens",
    "system_tokens",
    "requests",
    "totals",
];
/// An API call's fields (`ttft` only on streaming calls).
const CALL_FIELDS: &[&str] = &[
    "t",
    "model",
    "in",
    "out",
    "hash_ids",
    "input_types",
    "output_types",
    "stop",
    "api_time",
    "think_time",
];
const SUBAGENT_FIELDS: &[&str] = &[
    "t",
    "agent_id",
    "subagent_type",
    "duration_ms",
    "total_tokens",
    "tool_use_count",
    "status",
    "requests",
    "models",
    "tool_tokens",
    "system_tokens",
];

/// One API call of a trace (a parent's or a subagent's).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Call {
    /// Where it is written: (file, line).
    pub file: String,
    pub line: usize,
    /// Seconds from the conversation's start.
    pub t: f64,
    pub model: String,
    pub input: u64,
    pub output: u64,
    pub hash_ids: Vec<i64>,
    /// Server time of the call (s): the idle gap before the next call starts at its end.
    pub api_time: Option<f64>,
    /// The client's delay before this call (s), for `--use-think-time-only`.
    pub think_time: Option<f64>,
}

/// A `subagent` entry: a child conversation started by the parent.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Subagent {
    pub line: usize,
    pub t: f64,
    pub agent_id: String,
    pub duration_ms: Option<f64>,
    pub calls: Vec<Call>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Item {
    Call(Call),
    Subagent(Subagent),
}

/// One trace: a root conversation with its subagents.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Trace {
    pub file: String,
    pub id: String,
    pub block_size: u64,
    pub items: Vec<Item>,
}

/// Every trace of `path` (a file, or a directory's `*.json` files in name order). Trace ids
/// must be unique.
pub(crate) fn read(path: &Path) -> Result<Vec<Trace>, DatasetError> {
    let shown = path.display().to_string();
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        let mut v: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| DatasetError::file(&shown, format!("cannot read the directory: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
            .collect();
        v.sort();
        if v.is_empty() {
            return Err(DatasetError::file(
                &shown,
                "no *.json trace file in the directory",
            ));
        }
        v
    } else {
        vec![path.to_path_buf()]
    };
    let mut traces: Vec<Trace> = Vec::with_capacity(files.len());
    for f in &files {
        let file = f.display().to_string();
        let t = parse(&file, &read_text(f)?)?;
        if let Some(prev) = traces.iter().find(|p| p.id == t.id) {
            return Err(DatasetError::field(
                &file,
                Some(1),
                "id",
                format!("trace id {:?} is also the id of {}", t.id, prev.file),
            ));
        }
        traces.push(t);
    }
    Ok(traces)
}

/// Whether `text` looks like a WEKA trace document (for detection without a type).
pub(crate) fn looks_weka(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('{')
        && serde_json::from_str::<Map<String, Value>>(t).is_ok_and(|m| {
            m.contains_key("hash_id_scope") && m.contains_key("requests") && m.contains_key("id")
        })
}

/// Whether the directory's first `*.json` file (by name) is a WEKA trace (AIPerf probes one).
pub(crate) fn dir_holds_traces(dir: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut v: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v.first()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .is_some_and(|t| looks_weka(&t))
}

/// Parses one trace document.
pub(crate) fn parse(file: &str, text: &str) -> Result<Trace, DatasetError> {
    let doc: raw_fields::Fields<'_> = serde_json::from_str(text).map_err(|e| {
        DatasetError::line(
            file,
            e.line().max(1),
            format!("not a WEKA trace JSON object (column {}): {e}", e.column()),
        )
    })?;
    let fields = doc.0;
    let top: Map<String, Value> = fields
        .iter()
        .filter(|(k, _)| k.as_str() != "requests")
        .map(|(k, v)| {
            let value = serde_json::from_str(v.get()).unwrap_or(Value::Null);
            (k.clone(), value)
        })
        .collect();
    let r = Row::new(file, 1, &top);
    for (k, raw) in &fields {
        if !TRACE_FIELDS.contains(&k.as_str()) {
            return Err(DatasetError::field(
                file,
                Some(line_of(text, raw.get())),
                k.as_str(),
                "unknown field for weka_trace",
            ));
        }
    }
    let id = r.opt_str("id")?.ok_or_else(|| r.err("id", "required"))?;
    strings(&r, "models")?.ok_or_else(|| r.err("models", "required"))?;
    let block_size = match r.opt_u64("block_size")? {
        Some(b) if b > 0 => b,
        Some(_) => return Err(r.err("block_size", "must be at least 1")),
        None => return Err(r.err("block_size", "required")),
    };
    match r.opt_str("hash_id_scope")? {
        Some("local") => {}
        Some(other) => {
            return Err(r.err(
                "hash_id_scope",
                format!("{other:?} is not supported: only \"local\" (ids scoped to this trace)"),
            ));
        }
        None => return Err(r.err("hash_id_scope", "required")),
    }
    for k in ["tool_tokens", "system_tokens"] {
        r.opt_u64(k)?;
    }
    r.opt_object("totals")?;
    let requests = fields
        .iter()
        .find(|(k, _)| k == "requests")
        .map(|(_, v)| *v)
        .ok_or_else(|| r.err("requests", "required"))?;
    let list: Vec<&RawValue> = serde_json::from_str(requests.get()).map_err(|_| {
        DatasetError::field(
            file,
            Some(line_of(text, requests.get())),
            "requests",
            "expected a list of requests",
        )
    })?;
    let mut items = Vec::with_capacity(list.len());
    for (i, raw) in list.iter().enumerate() {
        items.push(item(file, text, raw, &format!("requests[{i}]."))?);
    }
    Ok(Trace {
        file: file.to_string(),
        id: id.to_string(),
        block_size,
        items,
    })
}

/// A JSON object's fields in order, each left unparsed (its text keeps its place in the
/// document, so its line can be found).
mod raw_fields {
    use serde::de::{Deserializer, MapAccess, Visitor};
    use serde_json::value::RawValue;

    pub struct Fields<'a>(pub Vec<(String, &'a RawValue)>);

    impl<'de: 'a, 'a> serde::Deserialize<'de> for Fields<'a> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<'a>(std::marker::PhantomData<&'a ()>);
            impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
                type Value = Fields<'a>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Fields<'a>, M::Error> {
                    let mut v = Vec::new();
                    while let Some((k, raw)) = m.next_entry::<String, &'de RawValue>()? {
                        v.push((k, raw));
                    }
                    Ok(Fields(v))
                }
            }
            d.deserialize_map(V(std::marker::PhantomData))
        }
    }
}

fn item(file: &str, text: &str, raw: &RawValue, prefix: &str) -> Result<Item, DatasetError> {
    let line = line_of(text, raw.get());
    let obj = match serde_json::from_str::<Value>(raw.get()) {
        Ok(Value::Object(m)) => m,
        Ok(other) => {
            return Err(DatasetError::field(
                file,
                Some(line),
                prefix.trim_end_matches('.'),
                format!("expected an object, got {}", kind(&other)),
            ));
        }
        Err(e) => return Err(DatasetError::line(file, line, e.to_string())),
    };
    let mut r = Row::new(file, line, &obj);
    r.prefix = prefix.to_string();
    match r.opt_str("type")? {
        Some("n" | "s") => call(&r, &obj).map(Item::Call),
        Some("subagent") => subagent(file, text, raw, &r).map(Item::Subagent),
        Some(other) => Err(r.err(
            "type",
            format!("{other:?} is not a request type (n, s or subagent)"),
        )),
        None => Err(r.err("type", "required (n, s or subagent)")),
    }
}

fn call(r: &Row<'_>, obj: &Map<String, Value>) -> Result<Call, DatasetError> {
    let streaming = r.opt_str("type")? == Some("s");
    for k in obj.keys() {
        let known = k == "type" || CALL_FIELDS.contains(&k.as_str()) || (streaming && k == "ttft");
        if !known {
            return Err(r.err(k, "unknown field for a weka_trace request"));
        }
    }
    if streaming {
        seconds(r, "ttft")?;
    }
    for k in ["input_types", "output_types"] {
        strings(r, k)?;
    }
    r.opt_str("stop")?;
    Ok(Call {
        file: r.file.to_string(),
        line: r.line.unwrap_or(0),
        t: seconds(r, "t")?.ok_or_else(|| r.err("t", "required"))?,
        model: r
            .opt_str("model")?
            .ok_or_else(|| r.err("model", "required"))?
            .to_string(),
        input: r.opt_u64("in")?.ok_or_else(|| r.err("in", "required"))?,
        output: r.opt_u64("out")?.ok_or_else(|| r.err("out", "required"))?,
        hash_ids: hash_ids(r)?,
        api_time: seconds(r, "api_time")?,
        think_time: seconds(r, "think_time")?,
    })
}

fn subagent(file: &str, text: &str, raw: &RawValue, r: &Row<'_>) -> Result<Subagent, DatasetError> {
    r.check_keys(SUBAGENT_FIELDS, "a weka_trace subagent")?;
    let agent_id = r
        .opt_str("agent_id")?
        .ok_or_else(|| r.err("agent_id", "required"))?;
    r.opt_str("subagent_type")?
        .ok_or_else(|| r.err("subagent_type", "required"))?;
    r.opt_str("status")?
        .ok_or_else(|| r.err("status", "required"))?;
    strings(r, "models")?.ok_or_else(|| r.err("models", "required"))?;
    for k in [
        "total_tokens",
        "tool_use_count",
        "tool_tokens",
        "system_tokens",
    ] {
        r.opt_u64(k)?;
    }
    let duration_ms =
        match r.get("duration_ms") {
            None => None,
            Some(v) => Some(v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                r.err("duration_ms", format!("expected a number of ms, got {v}"))
            })?),
        };
    let fields: raw_fields::Fields<'_> =
        serde_json::from_str(raw.get()).map_err(|e| r.err("requests", e.to_string()))?;
    let inner = fields
        .0
        .iter()
        .find(|(k, _)| k == "requests")
        .map(|(_, v)| *v)
        .ok_or_else(|| r.err("requests", "required"))?;
    let list: Vec<&RawValue> = serde_json::from_str(inner.get())
        .map_err(|_| r.err("requests", "expected a list of requests"))?;
    let mut calls = Vec::with_capacity(list.len());
    for (i, raw) in list.iter().enumerate() {
        match item(file, text, raw, &format!("{}requests[{i}].", r.prefix))? {
            Item::Call(c) => calls.push(c),
            Item::Subagent(s) => {
                return Err(DatasetError::field(
                    file,
                    Some(s.line),
                    format!("{}requests[{i}].type", r.prefix),
                    "a subagent's requests are n or s calls, not subagents",
                ));
            }
        }
    }
    Ok(Subagent {
        line: r.line.unwrap_or(0),
        t: seconds(r, "t")?.ok_or_else(|| r.err("t", "required"))?,
        agent_id: agent_id.to_string(),
        duration_ms,
        calls,
    })
}

/// A finite number of seconds (negative values are AIPerf's business: kept, then clamped
/// where they are used).
fn seconds(r: &Row<'_>, key: &str) -> Result<Option<f64>, DatasetError> {
    match r.get(key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(r.err(key, format!("expected a number of seconds, got {v}"))),
        },
    }
}

fn strings<'a>(r: &Row<'a>, key: &str) -> Result<Option<Vec<&'a str>>, DatasetError> {
    match r.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(Value::as_str)
            .collect::<Option<Vec<&str>>>()
            .map(Some)
            .ok_or_else(|| r.err(key, "expected a list of strings")),
        Some(v) => Err(r.err(key, format!("expected a list of strings, got {}", kind(v)))),
    }
}

fn hash_ids(r: &Row<'_>) -> Result<Vec<i64>, DatasetError> {
    match r.get("hash_ids") {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_i64()
                    .or_else(|| as_u64(v).and_then(|u| i64::try_from(u).ok()))
            })
            .collect::<Option<Vec<i64>>>()
            .ok_or_else(|| r.err("hash_ids", "expected a list of integers")),
        Some(v) => Err(r.err(
            "hash_ids",
            format!("expected a list of integers, got {}", kind(v)),
        )),
    }
}

/// The 1-based line of `part`, a slice of `text` (a raw JSON value borrowed from it).
pub(crate) fn line_of(text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
