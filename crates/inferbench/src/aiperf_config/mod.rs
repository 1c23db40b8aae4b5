//! AIPerf 0.13 YAML configs (`aiperf profile --config FILE.yaml`, `schemaVersion: "2.0"`)
//! → `inferbench profile` flags. Used by `plan` profiles (`aiperf_config = "FILE.yaml"`);
//! issue 14's `profile --config` can reuse it.
//!
//! The file is validated against AIPerf's own JSON Schema (copied unchanged in
//! `aiperf-config.schema.json`), a `sweep: {type: scenarios}` run is merged over the base
//! `benchmark`, and the result is mapped part by part ([`map`]). Every part that is not
//! mapped is refused by name (`FILE: benchmark.artifacts: not built …`), never skipped.

mod map;
mod media;
mod subst;
pub mod sweep;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::LazyLock;

use serde_json::{Map, Value};

/// AIPerf 0.13.0's schema for its YAML configs, unchanged.
const SCHEMA: &str = include_str!("aiperf-config.schema.json");

static VALIDATOR: LazyLock<Result<jsonschema::Validator, String>> = LazyLock::new(|| {
    let v: Value = serde_json::from_str(SCHEMA).map_err(|e| e.to_string())?;
    jsonschema::validator_for(&v).map_err(|e| e.to_string())
});

/// How a config is read.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Selects one run of a `sweep: {type: scenarios}` by name.
    pub scenario: Option<String>,
    /// Benchmark the built-in simulated server instead of the config's endpoint URL (AIPerf's
    /// schema requires one): the URL, and the path it carries, are not mapped.
    pub simulated: bool,
    /// `profile --config` (not a plan): `multiRun` and `benchmark.artifacts` map to flags.
    pub cli: bool,
}

/// The flags `path` stands for (file values resolved against the YAML file's directory).
/// Errors are one line, `FILE: FIELD: message`.
pub fn profile_flags(path: &Path, opts: &Options) -> Result<Vec<String>, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let base = path.parent().unwrap_or(Path::new(""));
    flags_from_str(&file, &text, base, opts)
}

/// [`profile_flags`] over YAML text; `file` names it in messages, `base` resolves its paths.
pub fn flags_from_str(
    file: &str,
    text: &str,
    base: &Path,
    opts: &Options,
) -> Result<Vec<String>, String> {
    let doc = read(file, text)?;
    let sweep = doc.get("sweep").cloned();
    let ty = sweep
        .as_ref()
        .map(|s| s.get("type").and_then(Value::as_str).unwrap_or("grid"));
    // A plan profile is one workload: a sweep other than `scenarios` is refused first.
    if let Some(t) = ty
        && t != "scenarios"
        && !opts.cli
    {
        return Err(format!(
            "{file}: sweep.type \"{t}\": not built in inferbench plans (a plan profile is one workload; only `scenarios` selects one)"
        ));
    }
    let (Some(sweep), Some("grid" | "zip")) = (&sweep, ty) else {
        let benchmark = resolve_scenario(file, &doc, opts.scenario.as_deref())?;
        return map::flags_for(file, &doc, &benchmark, base, opts.simulated, opts.cli);
    };
    if let Some(s) = &opts.scenario {
        return Err(format!(
            "{file}: sweep: scenario \"{s}\" selected, but the sweep is a {}",
            ty.unwrap_or_default()
        ));
    }
    let lists = sweep::list_flags(file, sweep)?;
    let benchmark = doc
        .get("benchmark")
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(|| format!("{file}: benchmark: missing"))?;
    let mut out = map::flags_for(file, &doc, &benchmark, base, opts.simulated, opts.cli)?;
    for (flags, values) in lists {
        out = without(out, &flags);
        out.extend([flags[0].to_string(), values]);
    }
    if ty == Some("zip") {
        out.extend(["--sweep-type".into(), "zip".into()]);
    }
    let mut rest = sweep.as_object().cloned().unwrap_or_default();
    for k in ["type", "parameters"] {
        rest.shift_remove(k);
    }
    if let Some(c) = rest
        .shift_remove("cooldownSeconds")
        .filter(|v| !v.is_null())
    {
        let Some(x) = c.as_f64() else {
            return Err(refused(file, "sweep.cooldownSeconds", &c));
        };
        out.extend(["--parameter-sweep-cooldown-seconds".into(), format!("{x}")]);
    }
    // inferbench's cells share one seed (42 unless given): AIPerf's `sameSeed: true`.
    if rest.get("sameSeed").and_then(Value::as_bool) == Some(true) {
        rest.shift_remove("sameSeed");
    }
    if let Some((k, v)) = rest.iter().find(|(_, v)| !v.is_null()) {
        return Err(refused(file, &join("sweep", k), v));
    }
    Ok(out)
}

/// `flags` without every occurrence of the flags in `drop` (each with its value).
fn without(flags: Vec<String>, drop: &[&str]) -> Vec<String> {
    let mut out = Vec::with_capacity(flags.len());
    let mut it = flags.into_iter().peekable();
    while let Some(f) = it.next() {
        if drop.contains(&f.as_str()) {
            if it.peek().is_some_and(|v| !v.starts_with("--")) {
                it.next();
            }
            continue;
        }
        out.push(f);
    }
    out
}

/// The file read as AIPerf reads it: environment substitution, YAML, durations as seconds,
/// then the schema. Templates (`{{ … }}`) are refused by name.
fn read(file: &str, text: &str) -> Result<Map<String, Value>, String> {
    let text = subst::env(file, text, &|k| std::env::var(k).ok())?;
    let doc: Value = serde_saphyr::from_str(&text).map_err(|e| {
        format!(
            "{file}: not YAML: {}",
            e.to_string().lines().next().unwrap_or_default()
        )
    })?;
    if !doc.is_object() {
        return Err(format!("{file}: not a YAML mapping"));
    }
    no_substitution(file, "", &doc)?;
    let mut doc = doc;
    durations_as_seconds(&mut doc);
    validate(file, &doc)?;
    match doc {
        Value::Object(m) => Ok(m),
        _ => Err(format!("{file}: not a YAML mapping")),
    }
}

/// A cell of `config expand` with the flags it maps to (or the part refused).
pub type ExpandedCell = (sweep::ConfigCell, Result<Vec<String>, String>);

/// `config expand`: the cells the file's sweep would run (one without a sweep), each with
/// the flags it maps to or the reason it is refused.
pub fn expand_file(path: &Path, simulated: bool) -> Result<Vec<ExpandedCell>, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let base_dir = path.parent().unwrap_or(Path::new(""));
    let doc = read(&file, &text)?;
    let benchmark = doc
        .get("benchmark")
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(|| format!("{file}: benchmark: missing"))?;
    let mut root = doc.clone();
    root.shift_remove("sweep");
    let cells: Vec<sweep::ConfigCell> = match doc.get("sweep") {
        None => vec![sweep::ConfigCell {
            name: "(no sweep)".into(),
            benchmark,
        }],
        Some(s) if s.get("type").and_then(Value::as_str) == Some("scenarios") => {
            let names: Vec<String> = s
                .get("runs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.get("name").and_then(Value::as_str).map(str::to_string))
                .collect();
            let mut v = Vec::new();
            for n in names {
                let b = resolve_scenario(&file, &doc, Some(&n))?;
                v.push(sweep::ConfigCell {
                    name: n,
                    benchmark: b,
                });
            }
            v
        }
        Some(s) => sweep::expand(&file, s, &benchmark)?,
    };
    Ok(cells
        .into_iter()
        .map(|c| {
            let flags = map::flags_for(&file, &root, &c.benchmark, base_dir, simulated, true);
            (c, flags)
        })
        .collect())
}

/// AIPerf expands Jinja `{{ … }}` before reading the file; inferbench does not, so such a
/// value would be read literally.
fn no_substitution(file: &str, at: &str, v: &Value) -> Result<(), String> {
    match v {
        Value::String(s) if s.contains("{{") || s.contains("{%") => Err(format!(
            "{file}: {at}: \"{s}\": Jinja template substitution is not built in inferbench"
        )),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| no_substitution(file, &format!("{at}[{i}]"), x)),
        Value::Object(m) => m
            .iter()
            .try_for_each(|(k, x)| no_substitution(file, &join(at, k), x)),
        _ => Ok(()),
    }
}

/// Fields whose AIPerf description says "Supports: 30, '30s', '2m'" while the schema's type
/// is a number: AIPerf reads the strings (its own templates use them), so they are turned
/// into seconds before validation.
const DURATION_KEYS: &[&str] = &[
    "duration",
    "gracePeriod",
    "rateRamp",
    "concurrencyRamp",
    "prefillRamp",
    "sliceDuration",
];

fn durations_as_seconds(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if let Value::String(s) = x
                    && DURATION_KEYS.contains(&k.as_str())
                    && let Some(secs) = map::duration(s)
                    && let Some(n) = serde_json::Number::from_f64(secs)
                {
                    *x = Value::Number(n);
                } else {
                    durations_as_seconds(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(durations_as_seconds),
        _ => {}
    }
}

/// `a.b` (or `b` at the root).
pub(crate) fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

fn validate(file: &str, doc: &Value) -> Result<(), String> {
    let v = VALIDATOR
        .as_ref()
        .map_err(|e| format!("the embedded AIPerf schema does not load: {e}"))?;
    if let Some(e) = v.iter_errors(doc).next() {
        let at = pointer_to_path(&e.instance_path.to_string());
        return Err(format!(
            "{file}: {}: not valid against AIPerf 0.13's schema: {}",
            if at.is_empty() { "(root)" } else { &at },
            // Masked: the offending value may be an API key or a header's secret.
            e.masked().to_string().replace('\n', " ")
        ));
    }
    Ok(())
}

/// `/benchmark/phases/0/rate` → `benchmark.phases[0].rate`.
fn pointer_to_path(p: &str) -> String {
    let mut out = String::new();
    for seg in p.split('/').filter(|s| !s.is_empty()) {
        if seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg.replace("~1", "/").replace("~0", "~"));
        }
    }
    out
}

/// The `benchmark` to map: the file's own, or with `sweep: {type: scenarios}` the named run's
/// `benchmark` merged over it.
fn resolve_scenario(
    file: &str,
    doc: &Map<String, Value>,
    scenario: Option<&str>,
) -> Result<Map<String, Value>, String> {
    let base = doc
        .get("benchmark")
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(|| format!("{file}: benchmark: missing"))?;
    let Some(sweep) = doc.get("sweep") else {
        return match scenario {
            Some(s) => Err(format!(
                "{file}: sweep: scenario \"{s}\" selected, but the file has no `sweep: {{type: scenarios}}`"
            )),
            None => Ok(base),
        };
    };
    let runs = sweep
        .get("runs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.get("name").and_then(Value::as_str))
        .collect();
    let Some(want) = scenario else {
        return Err(format!(
            "{file}: sweep.type \"scenarios\": select one with the profile's scenario = \"NAME\" ({})",
            names.join(", ")
        ));
    };
    let Some((i, run)) = runs
        .iter()
        .enumerate()
        .find(|(_, r)| r.get("name").and_then(Value::as_str) == Some(want))
    else {
        return Err(format!(
            "{file}: sweep.runs: no scenario \"{want}\" ({})",
            names.join(", ")
        ));
    };
    let run = run.as_object().cloned().unwrap_or_default();
    for (k, v) in &sweep.as_object().cloned().unwrap_or_default() {
        if k != "type" && k != "runs" {
            return Err(refused(file, &join("sweep", k), v));
        }
    }
    let mut merged = Value::Object(base);
    for (k, v) in run {
        match k.as_str() {
            "name" => {}
            "benchmark" => merge(&mut merged, &v),
            _ => return Err(refused(file, &format!("sweep.runs[{i}].{k}"), &v)),
        }
    }
    Ok(merged.as_object().cloned().unwrap_or_default())
}

/// Deep merge of a scenario's override: maps key by key; lists of named maps (phases,
/// datasets) by `name`, the single-entry shorthand included; any other value replaced.
fn merge(base: &mut Value, over: &Value) {
    if let (Value::Object(b), Value::Object(o)) = (&mut *base, over) {
        for (k, v) in o {
            match b.get_mut(k) {
                Some(slot) => merge(slot, v),
                None => {
                    b.insert(k.clone(), v.clone());
                }
            }
        }
        return;
    }
    if let Value::Array(o) = over
        && o.iter().all(named)
    {
        if let Value::Array(items) = &mut *base {
            for v in o {
                let name = v.get("name");
                match items.iter_mut().find(|x| x.get("name") == name) {
                    Some(slot) => merge(slot, v),
                    None => items.push(v.clone()),
                }
            }
            return;
        }
        // The flat shorthand (`phases: {type: …}`) is the one phase named `profiling`.
        if base.is_object()
            && o.len() == 1
            && o[0].get("name").and_then(Value::as_str) == Some("profiling")
        {
            let mut o0 = o[0].clone();
            if let Value::Object(m) = &mut o0 {
                m.shift_remove("name");
            }
            merge(base, &o0);
            return;
        }
    }
    *base = over.clone();
}

fn named(v: &Value) -> bool {
    v.get("name").and_then(Value::as_str).is_some()
}

/// `FILE: FIELD: not built in inferbench plans`, with a short view of the value.
pub(crate) fn refused(file: &str, at: &str, v: &Value) -> String {
    let shown = match v {
        Value::String(s) => format!(" \"{s}\""),
        Value::Number(n) => format!(" {n}"),
        Value::Bool(b) => format!(" {b}"),
        _ => String::new(),
    };
    format!("{file}: {at}{shown}: not built in inferbench plans")
}
