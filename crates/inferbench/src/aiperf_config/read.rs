//! Reading a config as AIPerf reads it: `${VAR}` substitution on the text, YAML, Jinja,
//! durations as seconds, then AIPerf's own JSON Schema; and the scenario merge.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::{jinja, refused, subst};

/// AIPerf 0.13.0's schema for its YAML configs, unchanged.
const SCHEMA: &str = include_str!("aiperf-config.schema.json");

static VALIDATOR: LazyLock<Result<jsonschema::Validator, String>> = LazyLock::new(|| {
    let v: Value = serde_json::from_str(SCHEMA).map_err(|e| e.to_string())?;
    jsonschema::validator_for(&v).map_err(|e| e.to_string())
});

/// The file as AIPerf first reads it: environment substitution, then YAML (a mapping).
pub(super) fn read_raw(file: &str, text: &str) -> Result<Map<String, Value>, String> {
    let text = subst::env(file, text, &|k| std::env::var(k).ok())?;
    let doc: Value = serde_saphyr::from_str(&text).map_err(|e| {
        format!(
            "{file}: not YAML: {}",
            e.to_string().lines().next().unwrap_or_default()
        )
    })?;
    match doc {
        Value::Object(m) => Ok(m),
        _ => Err(format!("{file}: not a YAML mapping")),
    }
}

/// A read file (or one cell of it) made ready to map: Jinja rendered, durations as
/// seconds, then the schema.
pub(super) fn finish(file: &str, raw: Map<String, Value>) -> Result<Map<String, Value>, String> {
    let doc = if jinja::has_templates(&Value::Object(raw.clone())) {
        jinja::render_doc(file, &raw)?
    } else {
        raw
    };
    let mut doc = Value::Object(doc);
    camel_keys(&mut doc);
    durations_as_seconds(&mut doc);
    validate(file, &doc)?;
    match doc {
        Value::Object(m) => Ok(m),
        _ => Err(format!("{file}: not a YAML mapping")),
    }
}

/// Every property name in AIPerf's schema: AIPerf's models take each field by its
/// snake_case name too (pydantic's `populate_by_name`), while the schema lists only the
/// camelCase aliases.
static PROPERTY_NAMES: LazyLock<std::collections::HashSet<String>> = LazyLock::new(|| {
    fn walk(v: &Value, out: &mut std::collections::HashSet<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(p)) = m.get("properties") {
                    out.extend(p.keys().cloned());
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = std::collections::HashSet::new();
    if let Ok(v) = serde_json::from_str::<Value>(SCHEMA) {
        walk(&v, &mut out);
    }
    out
});

/// Tables whose keys are the user's own (names, metric tags, body fields, sweep paths):
/// never renamed.
const FREE_FORM: &[&str] = &[
    "variables",
    "slos",
    "extra",
    "headers",
    "content",
    "records",
    "plot",
    "parameters",
    "filters",
    "template",
    "sla",
    "values",
];

/// `snake_case` keys renamed to the schema's `camelCase` name where the schema has one.
fn camel_keys(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                let camel = to_camel(&k);
                let name =
                    if camel != k && PROPERTY_NAMES.contains(&camel) && !m.contains_key(&camel) {
                        let x = m.shift_remove(&k).unwrap_or(Value::Null);
                        m.insert(camel.clone(), x);
                        camel
                    } else {
                        k
                    };
                if !FREE_FORM.contains(&name.as_str())
                    && let Some(x) = m.get_mut(&name)
                {
                    camel_keys(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(camel_keys),
        _ => {}
    }
}

/// `user_files` → `userFiles` (pydantic's `to_camel`).
fn to_camel(k: &str) -> String {
    let mut out = String::with_capacity(k.len());
    let mut up = false;
    for (i, c) in k.chars().enumerate() {
        if c == '_' && i > 0 {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The `benchmark` table of a config.
pub(super) fn benchmark_of(
    file: &str,
    doc: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    doc.get("benchmark")
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(|| format!("{file}: benchmark: missing"))
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
                    && let Some(secs) = super::part::duration(s)
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

fn validate(file: &str, doc: &Value) -> Result<(), String> {
    let v = VALIDATOR
        .as_ref()
        .map_err(|e| format!("the embedded AIPerf schema does not load: {e}"))?;
    if let Some(e) = v.iter_errors(doc).next() {
        let at = pointer_to_path(&e.instance_path().to_string());
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

/// The config of one run of a `sweep: {type: scenarios}`: the run's `benchmark` and
/// `variables` deep-merged over the file's (before Jinja, which then renders the merged
/// config as AIPerf renders each variation), without the sweep.
pub(super) fn resolve_scenario(
    file: &str,
    doc: &Map<String, Value>,
    scenario: Option<&str>,
) -> Result<Map<String, Value>, String> {
    let Some(sweep) = doc.get("sweep") else {
        return match scenario {
            Some(s) => Err(format!(
                "{file}: sweep: scenario \"{s}\" selected, but the file has no `sweep: {{type: scenarios}}`"
            )),
            None => Ok(doc.clone()),
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
            "{file}: sweep.type \"scenarios\": select one with --scenario NAME (a plan: scenario = \"NAME\") ({})",
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
    let mut merged = doc.clone();
    merged.shift_remove("sweep");
    let mut merged = Value::Object(merged);
    for (k, v) in run {
        match k.as_str() {
            "name" | "values" => {}
            "benchmark" | "variables" => merge(
                &mut merged,
                &Value::Object(Map::from_iter([(k.clone(), v)])),
            ),
            _ => return Err(refused(file, &format!("sweep.runs[{i}].{k}"), &v)),
        }
    }
    Ok(merged.as_object().cloned().unwrap_or_default())
}

/// The keys that tell a length distribution's kind (AIPerf's discriminators).
const DIST_KEYS: &[&str] = &["peaks", "points", "value", "median", "stddev"];

/// Whether `over` changes the kind of the distribution `base` (AIPerf then replaces it
/// whole, so that normal and log-normal keys never mix).
fn distribution_swap(base: &Map<String, Value>, over: &Map<String, Value>) -> bool {
    let kinds = |m: &Map<String, Value>| -> Vec<&str> {
        DIST_KEYS
            .iter()
            .copied()
            .filter(|k| m.contains_key(*k))
            .collect()
    };
    let (b, o) = (kinds(base), kinds(over));
    !b.is_empty() && !o.is_empty() && b != o
}

/// Deep merge of a scenario's override: maps key by key (a distribution of another kind
/// replaced whole); lists of named maps (phases, datasets) by `name`, the single-entry
/// shorthand included; any other value replaced.
fn merge(base: &mut Value, over: &Value) {
    if let (Value::Object(b), Value::Object(o)) = (&base, over)
        && distribution_swap(b, o)
    {
        *base = over.clone();
        return;
    }
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
