//! AIPerf's Jinja substitution of a config, done on the parsed YAML after `${VAR}`
//! substitution (AIPerf 0.13's `config/loader/jinja.py`, rebuilt on `minijinja`):
//!
//! - **Context:** every key of the file at the top level (`benchmark`, `variables`,
//!   `multiRun`, …), then every key of `benchmark` lifted to the top (`{{ model }}`,
//!   `{{ phases.profiling.rate }}`: a list of named tables is addressed by name), then the
//!   `variables`, each rendered first, in dependency order (a variable may use another, in
//!   any order in the file; a cycle is an error naming them).
//! - **Values:** every string holding `{{ … }}` or `{% … %}` is rendered with strict
//!   undefined names; the text becomes `true`/`false` (any case), else an integer, else a
//!   float, else stays text. So `"{{ base * 4 }}"` is the number 64. The values the context
//!   holds are the file's own (a template is rendered once, not again inside another).
//! - Not rendered: fields named `template`, `body`, `payload_template` (AIPerf renders those
//!   per request) and `benchmark.artifacts.userFiles` (rendered when the files are written).

use minijinja::{Environment, UndefinedBehavior};
use serde_json::{Map, Number, Value};

const SKIP_FIELDS: &[&str] = &["template", "body", "payload_template"];
const SKIP_PATHS: &[&str] = &[
    "artifacts.user_files",
    "benchmark.artifacts.user_files",
    "artifacts.userFiles",
    "benchmark.artifacts.userFiles",
];

fn env() -> Environment<'static> {
    let mut e = Environment::new();
    e.set_undefined_behavior(UndefinedBehavior::Strict);
    e.set_keep_trailing_newline(true);
    e
}

/// Whether any string in `v` is a template (so the file needs rendering at all).
pub fn has_templates(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("{{") || s.contains("{%"),
        Value::Array(a) => a.iter().any(has_templates),
        Value::Object(m) => m.values().any(has_templates),
        _ => false,
    }
}

/// `doc` with every template rendered, AIPerf's way. Errors are one line, `FILE: FIELD: …`.
pub fn render_doc(file: &str, doc: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    let e = env();
    let ctx = context(file, &e, doc)?;
    let mut out = Map::new();
    for (k, v) in doc {
        out.insert(k.clone(), render(file, &e, v, &ctx, k, k)?);
    }
    Ok(out)
}

/// The context AIPerf builds (module doc).
fn context(
    file: &str,
    e: &Environment<'_>,
    doc: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut ctx = Map::new();
    lift(doc, &mut ctx);
    if let Some(Value::Object(b)) = doc.get("benchmark") {
        lift(b, &mut ctx);
    }
    let Some(Value::Object(vars)) = doc.get("variables") else {
        return Ok(ctx);
    };
    // Variables see the rest of the file, not the names they define themselves.
    let mut base = ctx.clone();
    base.remove("variables");
    for k in vars.keys() {
        base.remove(k);
    }
    let mut pending: Vec<(String, Vec<String>)> = vars
        .iter()
        .map(|(k, v)| (k.clone(), refs(e, v, vars)))
        .collect();
    let mut resolved = Map::new();
    while !pending.is_empty() {
        let mut ready: Vec<String> = pending
            .iter()
            .filter(|(_, deps)| deps.is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        if ready.is_empty() {
            let mut names: Vec<&str> = pending.iter().map(|(k, _)| k.as_str()).collect();
            names.sort_unstable();
            return Err(format!(
                "{file}: variables: a circular reference among {}",
                names.join(", ")
            ));
        }
        ready.sort();
        for name in ready {
            let mut c = base.clone();
            c.extend(resolved.clone());
            let at = format!("variables.{name}");
            let v = render(file, e, &vars[&name], &c, &at, &at)?;
            resolved.insert(name.clone(), v);
            pending.retain(|(k, _)| *k != name);
            for (_, deps) in pending.iter_mut() {
                deps.retain(|d| *d != name);
            }
        }
    }
    ctx.extend(resolved);
    Ok(ctx)
}

/// The top-level names of a table: each key, with a list of named tables turned into a
/// table by name (so `phases.profiling` reaches the phase named `profiling`).
fn lift(m: &Map<String, Value>, ctx: &mut Map<String, Value>) {
    for (k, v) in m {
        let v = match v {
            Value::Array(items) => {
                let named: Map<String, Value> = items
                    .iter()
                    .filter_map(|x| {
                        x.get("name")
                            .and_then(Value::as_str)
                            .map(|n| (n.to_string(), x.clone()))
                    })
                    .collect();
                if named.is_empty() {
                    v.clone()
                } else {
                    Value::Object(named)
                }
            }
            other => other.clone(),
        };
        ctx.insert(k.clone(), v);
    }
}

/// The names among `vars` that the templates in `v` use.
fn refs(e: &Environment<'_>, v: &Value, vars: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    match v {
        Value::String(s) if s.contains("{{") => {
            if let Ok(t) = e.template_from_str(s) {
                for n in t.undeclared_variables(false) {
                    if vars.contains_key(&n) && !out.contains(&n) {
                        out.push(n);
                    }
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| {
            for n in refs(e, x, vars) {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }),
        Value::Object(m) => m.values().for_each(|x| {
            for n in refs(e, x, vars) {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }),
        _ => {}
    }
    out
}

/// `v` rendered; `aiperf_path` is AIPerf's dotted path (lists by index) for the skip rules,
/// `at` ours for messages.
fn render(
    file: &str,
    e: &Environment<'_>,
    v: &Value,
    ctx: &Map<String, Value>,
    aiperf_path: &str,
    at: &str,
) -> Result<Value, String> {
    if SKIP_PATHS
        .iter()
        .any(|p| aiperf_path == *p || aiperf_path.starts_with(&format!("{p}.")))
    {
        return Ok(v.clone());
    }
    match v {
        Value::String(s) => {
            let field = aiperf_path.rsplit('.').next().unwrap_or_default();
            if SKIP_FIELDS.contains(&field) {
                return Ok(v.clone());
            }
            render_string(file, e, s, ctx, at)
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                render(
                    file,
                    e,
                    x,
                    ctx,
                    &format!("{aiperf_path}.{i}"),
                    &format!("{at}[{i}]"),
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                out.insert(
                    k.clone(),
                    render(
                        file,
                        e,
                        x,
                        ctx,
                        &format!("{aiperf_path}.{k}"),
                        &format!("{at}.{k}"),
                    )?,
                );
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

fn render_string(
    file: &str,
    e: &Environment<'_>,
    s: &str,
    ctx: &Map<String, Value>,
    at: &str,
) -> Result<Value, String> {
    // An opener without its closer would otherwise pass through as text.
    if s.contains("{{") && !s.contains("}}") {
        return Err(format!(
            "{file}: {at}: \"{s}\": Jinja: \"{{{{\" without \"}}}}\""
        ));
    }
    if s.contains("{%") && !s.contains("%}") {
        return Err(format!(
            "{file}: {at}: \"{s}\": Jinja: \"{{%\" without \"%}}\""
        ));
    }
    if !(s.contains("{{") || s.contains("{%")) {
        return Ok(Value::String(s.to_string()));
    }
    let text = e.render_str(s, ctx).map_err(|err| {
        let mut msg = err.to_string();
        if let Some(i) = msg.find(" (in ") {
            msg.truncate(i);
        }
        format!("{file}: {at}: \"{s}\": Jinja: {}", msg.replace('\n', " "))
    })?;
    Ok(coerce(&text))
}

/// AIPerf's coercion of a rendered text: `true`/`false` in any case, else Python's `int()`,
/// else `float()`, else the text.
pub fn coerce(text: &str) -> Value {
    match text.to_ascii_lowercase().as_str() {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    if let Some(i) = py_int(text) {
        return Value::Number(i.into());
    }
    if let Some(x) = py_float(text)
        && let Some(n) = Number::from_f64(x)
    {
        return Value::Number(n);
    }
    Value::String(text.to_string())
}

/// Python's `int(text)` for base 10: surrounding whitespace, a sign, digits with single
/// underscores between them.
fn py_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let clean = underscored_digits(digits)?;
    let v: i64 = clean.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Python's `float(text)`: whitespace, sign, digits (underscores between them), a point,
/// an exponent, or inf/infinity/nan. Non-finite values have no JSON number and stay text.
fn py_float(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let body = t.trim_start_matches(['+', '-']);
    if t.len() - body.len() > 1 {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return None;
    }
    let (mantissa, exp) = match lower.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (lower.as_str(), None),
    };
    let (int_part, frac) = match mantissa.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (mantissa, None),
    };
    let int_clean = if int_part.is_empty() {
        String::new()
    } else {
        underscored_digits(int_part)?
    };
    let frac_clean = match frac {
        Some("") => Some(String::new()),
        Some(f) => Some(underscored_digits(f)?),
        None => None,
    };
    if int_clean.is_empty() && frac_clean.as_deref().is_none_or(str::is_empty) {
        return None;
    }
    let mut s = String::new();
    if t.starts_with('-') {
        s.push('-');
    }
    s.push_str(if int_clean.is_empty() {
        "0"
    } else {
        &int_clean
    });
    if let Some(f) = frac_clean {
        s.push('.');
        s.push_str(if f.is_empty() { "0" } else { &f });
    }
    if let Some(e) = exp {
        let (sign, d) = match e.as_bytes().first()? {
            b'-' => ("-", &e[1..]),
            b'+' => ("", &e[1..]),
            _ => ("", e),
        };
        s.push('e');
        s.push_str(sign);
        s.push_str(&underscored_digits(d)?);
    }
    s.parse().ok()
}

/// `1_000` → `1000`; None unless ASCII digits with single underscores between digits.
fn underscored_digits(s: &str) -> Option<String> {
    if s.is_empty() || s.starts_with('_') || s.ends_with('_') || s.contains("__") {
        return None;
    }
    if !s.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return None;
    }
    Some(s.replace('_', ""))
}

#[cfg(test)]
#[path = "jinja_tests.rs"]
mod tests;
