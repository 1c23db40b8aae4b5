//! AIPerf 0.13 YAML configs (`aiperf profile --config FILE.yaml`, `schemaVersion: "2.0"`)
//! → `inferbench profile` flags. Used by `plan` profiles (`aiperf_config = "FILE.yaml"`);
//! issue 14's `profile --config` can reuse it.
//!
//! The file is validated against AIPerf's own JSON Schema (copied unchanged in
//! `aiperf-config.schema.json`), a `sweep: {type: scenarios}` run is merged over the base
//! `benchmark`, and the result is mapped part by part ([`map`]). Every part that is not
//! mapped is refused by name (`FILE: benchmark.artifacts: not built …`), never skipped.

mod map;
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
    let doc: Value = serde_saphyr::from_str(text).map_err(|e| {
        format!(
            "{file}: not YAML: {}",
            e.to_string().lines().next().unwrap_or_default()
        )
    })?;
    let doc = match doc {
        Value::Object(m) => m,
        _ => return Err(format!("{file}: not a YAML mapping")),
    };
    // A sweep other than `scenarios` is refused first: the file is not one workload at all.
    if let Some(ty) = doc
        .get("sweep")
        .map(|s| s.get("type").and_then(Value::as_str).unwrap_or("grid"))
        && ty != "scenarios"
    {
        return Err(format!(
            "{file}: sweep.type \"{ty}\": not built in inferbench plans (a plan profile is one workload; only `scenarios` selects one)"
        ));
    }
    no_substitution(file, "", &Value::Object(doc.clone()))?;
    let mut doc = Value::Object(doc);
    durations_as_seconds(&mut doc);
    validate(file, &doc)?;
    let Value::Object(doc) = doc else {
        return Err(format!("{file}: not a YAML mapping"));
    };
    let benchmark = resolve_scenario(file, &doc, opts.scenario.as_deref())?;
    map::flags(file, &doc, &benchmark, base, opts.simulated)
}

/// AIPerf expands `${VAR:default}` and Jinja `{{ … }}` before reading the file; inferbench
/// does not, so such a value would be read literally.
fn no_substitution(file: &str, at: &str, v: &Value) -> Result<(), String> {
    match v {
        Value::String(s) if s.contains("${") || s.contains("{{") || s.contains("{%") => {
            Err(format!(
                "{file}: {at}: \"{s}\": environment and template substitution is not built in inferbench plans"
            ))
        }
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
            e.to_string().replace('\n', " ")
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
