//! AIPerf's `sweep: {type: grid | zip}`: the cells (for `config expand`) and, for `profile`,
//! the comma-list flags that make the same cells.
//!
//! Parameter paths are rooted under `benchmark`: `phases.NAME.FIELD` picks a phase by name
//! (the flat `phases:` shorthand is the phase `profiling`), `datasets.NAME.…` a dataset by
//! name (the `dataset:` shorthand is `default`), and a bare field (`rate`, `concurrency`) is
//! a field of the one phase that is not a warmup.

use serde_json::{Map, Value};

use super::join;

/// One cell of a sweep: its name (`path=value, …`, or the scenario's), the whole config
/// with the cell's values set (before Jinja), and each parameter's value index.
#[derive(Clone, Debug)]
pub struct ConfigCell {
    pub name: String,
    pub doc: Map<String, Value>,
    pub indices: Vec<usize>,
}

impl ConfigCell {
    /// A cell that is not a point of a grid (no sweep, or a scenario).
    pub fn named(name: &str) -> ConfigCell {
        ConfigCell {
            name: name.to_string(),
            doc: Map::new(),
            indices: Vec::new(),
        }
    }
}

/// `sweep.parameters` as (path, values), sorted by path as AIPerf 0.13 sorts them (so the
/// first parameter by name is the outermost of a grid, whatever the file's order).
pub fn parameters(file: &str, sweep: &Value) -> Result<Vec<(String, Vec<Value>)>, String> {
    let Some(Value::Object(p)) = sweep.get("parameters") else {
        return Err(format!("{file}: sweep.parameters: missing"));
    };
    let mut out = p
        .iter()
        .map(|(k, v)| match v {
            Value::Array(a) if !a.is_empty() => Ok((k.clone(), a.clone())),
            _ => Err(format!(
                "{file}: sweep.parameters.{k}: expected a non-empty list of values"
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Why a sweep kind is not built (grid, zip and scenarios are).
pub fn unbuilt_reason(kind: &str) -> &'static str {
    match kind {
        "sobol" | "latin_hypercube" => {
            "AIPerf draws the points with scipy's scrambled QMC engines, which inferbench does not reproduce, and other points would not be the same run; list the points in a zip sweep"
        }
        "adaptive_search" => {
            "Bayesian optimisation (BoTorch, Optuna) chooses each next cell from the results so far; inferbench runs only sweeps whose cells are known before the run"
        }
        _ => "grid, zip and scenarios are built",
    }
}

/// The most cells a sweep may have (the command line's comma lists have the same limit).
pub const MAX_CELLS: usize = 1000;

/// Every combination of one index per list (`lens[k]` values in list k), the first list
/// outermost; None once there would be more than `cap` (stopped early, never built).
pub fn grid(lens: &[usize], cap: usize) -> Option<Vec<Vec<usize>>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new()];
    for &n in lens {
        out = out
            .into_iter()
            .flat_map(|c| {
                (0..n).map(move |i| {
                    let mut c = c.clone();
                    c.push(i);
                    c
                })
            })
            .collect();
        if out.len() > cap {
            return None;
        }
    }
    Some(out)
}

/// The index of each parameter's value, per cell: grid (first parameter outermost) or zip.
pub fn combos(file: &str, ty: &str, lens: &[usize]) -> Result<Vec<Vec<usize>>, String> {
    match ty {
        "grid" => grid(lens, MAX_CELLS).ok_or_else(|| {
            format!("{file}: sweep.parameters: more than {MAX_CELLS} cells: at most {MAX_CELLS}")
        }),
        "zip" => {
            let n = lens.first().copied().unwrap_or(1);
            if lens.iter().any(|m| *m != n) {
                return Err(format!(
                    "{file}: sweep.parameters: a zip sweep's lists must have one length (they have {})",
                    lens.iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            Ok((0..n).map(|i| vec![i; lens.len()]).collect())
        }
        other => Err(format!(
            "{file}: sweep.type \"{other}\": not built in inferbench ({})",
            unbuilt_reason(other)
        )),
    }
}

/// The cells of a grid or zip sweep over the whole config `doc`: a path is rooted under
/// `benchmark`, except `variables.NAME`, which sets a Jinja variable (AIPerf renders each
/// cell again with it).
pub fn expand(
    file: &str,
    sweep: &Value,
    doc: &Map<String, Value>,
) -> Result<Vec<ConfigCell>, String> {
    let ty = sweep.get("type").and_then(Value::as_str).unwrap_or("grid");
    let params = parameters(file, sweep)?;
    let lens: Vec<usize> = params.iter().map(|(_, v)| v.len()).collect();
    let mut out = Vec::new();
    for combo in combos(file, ty, &lens)? {
        let mut d = doc.clone();
        let mut parameters = Vec::new();
        for ((path, values), &i) in params.iter().zip(&combo) {
            if let Some(name) = path.strip_prefix("variables.") {
                let vars = d
                    .entry("variables".to_string())
                    .or_insert_with(|| Value::Object(Map::new()));
                let Value::Object(vars) = vars else {
                    return Err(format!("{file}: variables: not a table"));
                };
                vars.insert(name.to_string(), values[i].clone());
            } else {
                let b = d
                    .entry("benchmark".to_string())
                    .or_insert_with(|| Value::Object(Map::new()));
                set(file, b, path, values[i].clone())?;
            }
            parameters.push((path.clone(), values[i].clone()));
        }
        let name = parameters
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        out.push(ConfigCell {
            name,
            doc: d,
            indices: combo,
        });
    }
    Ok(out)
}

/// Sets `path` (rooted under `benchmark`) in `b`.
fn set(file: &str, b: &mut Value, path: &str, v: Value) -> Result<(), String> {
    let path = path.strip_prefix("benchmark.").unwrap_or(path);
    let segs: Vec<&str> = path.split('.').collect();
    let bad = |why: &str| format!("{file}: sweep.parameters.{path}: {why}");
    let mut at: &mut Value = b;
    let mut i = 0;
    if segs.len() == 1 && at.get(segs[0]).is_none() {
        // A bare name is a field of the one phase that is not a warmup.
        at = profiling_phase(at).ok_or_else(|| bad("no single profiling phase to set it in"))?;
    }
    while i < segs.len() {
        let k = segs[i];
        let last = i + 1 == segs.len();
        let Value::Object(m) = at else {
            return Err(bad(&format!("{} is not a table", segs[..i].join("."))));
        };
        if last {
            m.insert(k.to_string(), v);
            return Ok(());
        }
        // `phases.NAME` and `datasets.NAME` select by name.
        if matches!(k, "phases" | "datasets") {
            let name = segs[i + 1];
            let (list_key, short_key, short_name) = if k == "phases" {
                ("phases", "phases", "profiling")
            } else {
                ("datasets", "dataset", "default")
            };
            let has_list = m.get(list_key).is_some_and(Value::is_array);
            at = if has_list {
                m.get_mut(list_key)
                    .and_then(Value::as_array_mut)
                    .and_then(|a| {
                        a.iter_mut()
                            .find(|x| x.get("name").and_then(Value::as_str) == Some(name))
                    })
                    .ok_or_else(|| bad(&format!("no {k} entry named \"{name}\"")))?
            } else if name == short_name && m.get(short_key).is_some_and(Value::is_object) {
                m.get_mut(short_key).ok_or_else(|| bad("missing"))?
            } else {
                return Err(bad(&format!("no {k} entry named \"{name}\"")));
            };
            i += 2;
            continue;
        }
        at = m
            .entry(k.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        i += 1;
    }
    Err(bad("empty path"))
}

/// The one phase that is not a warmup (`excludeFromResults: true` or named `warmup`).
fn profiling_phase(b: &mut Value) -> Option<&mut Value> {
    let m = b.as_object_mut()?;
    if m.get("profiling").is_some_and(Value::is_object) {
        return m.get_mut("profiling");
    }
    match m.get_mut("phases")? {
        Value::Array(a) => {
            let mut it = a.iter_mut().filter(|p| {
                p.get("excludeFromResults").and_then(Value::as_bool) != Some(true)
                    && p.get("name").and_then(Value::as_str) != Some("warmup")
            });
            let first = it.next()?;
            it.next().is_none().then_some(first)
        }
        p @ Value::Object(_) => Some(p),
        _ => None,
    }
}

/// For `profile`: the comma-list flags of a grid or zip sweep, each replacing the base's own
/// value of that flag (and, for a length, its stddev: a swept scalar is a fixed length).
/// Parameters with no comma-list flag are refused by name.
pub fn list_flags(file: &str, sweep: &Value) -> Result<Vec<(Vec<&'static str>, String)>, String> {
    let ty = sweep.get("type").and_then(Value::as_str).unwrap_or("grid");
    let params = parameters(file, sweep)?;
    combos(
        file,
        ty,
        &params.iter().map(|(_, v)| v.len()).collect::<Vec<_>>(),
    )?;
    let mut out: Vec<(Vec<&'static str>, String)> = Vec::new();
    for (path, values) in &params {
        let flags = flag_of(path).ok_or_else(|| {
            format!(
                "{file}: {}: not built in inferbench (a swept field needs a comma-list flag: concurrency, rate, requests, duration, prefillConcurrency, users, isl, osl (and their mean, stddev), turns (and its mean))",
                join("sweep.parameters", path)
            )
        })?;
        let mut shown = Vec::new();
        for (i, v) in values.iter().enumerate() {
            match v {
                Value::Number(n) => shown.push(n.to_string()),
                other => {
                    return Err(super::refused(
                        file,
                        &format!("sweep.parameters.{path}[{i}]"),
                        other,
                    ));
                }
            }
        }
        out.push((flags, shown.join(",")));
    }
    Ok(out)
}

/// Whether every parameter of the sweep has a comma-list flag and numbers for values (then
/// [`list_flags`] runs it; otherwise its cells run as `--variant`s).
pub fn listable(file: &str, sweep: &Value) -> Result<bool, String> {
    Ok(parameters(file, sweep)?
        .iter()
        .all(|(path, values)| flag_of(path).is_some() && values.iter().all(Value::is_number)))
}

/// The flag a parameter path stands for, and the base flags it replaces (first = the flag).
fn flag_of(path: &str) -> Option<Vec<&'static str>> {
    let path = path.strip_prefix("benchmark.").unwrap_or(path);
    let segs: Vec<&str> = path.split('.').collect();
    let phase_field = match segs.as_slice() {
        [f] => Some(*f),
        ["phases", name, f] | [name @ "profiling", f] if *name != "warmup" => Some(*f),
        ["phases", f] => Some(*f),
        _ => None,
    };
    match phase_field {
        Some("concurrency") => return Some(vec!["--concurrency"]),
        Some("rate") => return Some(vec!["--request-rate"]),
        Some("requests") => return Some(vec!["--request-count"]),
        Some("duration") => return Some(vec!["--benchmark-duration"]),
        Some("prefillConcurrency") => return Some(vec!["--prefill-concurrency"]),
        Some("users") => return Some(vec!["--num-users"]),
        _ => {}
    }
    let rest = match segs.as_slice() {
        ["dataset", rest @ ..] | ["datasets", _, rest @ ..] => rest,
        _ => return None,
    };
    let rest = match rest {
        ["prompts", r @ ..] => r,
        r => r,
    };
    match rest {
        ["isl"] => Some(vec!["--isl", "--isl-stddev"]),
        ["osl"] => Some(vec!["--osl", "--osl-stddev"]),
        ["isl", "mean"] => Some(vec!["--isl"]),
        ["osl", "mean"] => Some(vec!["--osl"]),
        ["isl", "stddev"] => Some(vec!["--isl-stddev"]),
        ["osl", "stddev"] => Some(vec!["--osl-stddev"]),
        ["turns"] => Some(vec![
            "--conversation-turn-mean",
            "--conversation-turn-stddev",
        ]),
        ["turns", "mean"] => Some(vec!["--conversation-turn-mean"]),
        _ => None,
    }
}
