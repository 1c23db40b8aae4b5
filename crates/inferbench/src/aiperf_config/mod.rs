//! AIPerf 0.13 YAML configs (`aiperf profile --config FILE.yaml`, `schemaVersion: "2.0"`)
//! → `inferbench profile` flags, for `profile --config`, `plan` profiles (`aiperf_config =
//! "FILE.yaml"`) and `config validate | expand | init`.
//!
//! The file is read as AIPerf reads it ([`read`]: `${VAR}`, YAML, Jinja, the schema), a
//! sweep is expanded into its cells ([`sweep`]), and each cell is mapped part by part
//! ([`map`]). Every part that is not mapped is refused by name (`FILE: benchmark.artifacts:
//! not built …`), never skipped.

mod dataset;
mod hooks;
pub mod init;
mod inline;
pub mod jinja;
mod map;
mod media;
mod outputs;
mod part;
mod read;
mod replay;
mod subst;
pub mod sweep;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_parts;
mod variant_sweep;

pub use hooks::{RunHooks, read_plot_file};

use std::path::Path;

use serde_json::{Map, Value};

use read::{benchmark_of, finish, read_raw, resolve_scenario};

/// How a config is read.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Selects one run of a `sweep: {type: scenarios}` by name.
    pub scenario: Option<String>,
    /// Benchmark the built-in simulated server instead of the config's endpoint URL (AIPerf's
    /// schema requires one): the URL, and the path it carries, are not mapped.
    pub simulated: bool,
    /// `profile --config` (not a plan): `multiRun`, `benchmark.artifacts` and the telemetry
    /// map to flags.
    pub cli: bool,
}

/// The scenario names of a `sweep: {type: scenarios}` file, in order (empty for any other
/// file): `profile --config` without `--scenario` runs each as a cell.
pub fn scenario_names(path: &Path) -> Result<Vec<String>, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let raw = read_raw(&file, &text)?;
    let Some(sweep) = raw.get("sweep") else {
        return Ok(Vec::new());
    };
    if sweep.get("type").and_then(Value::as_str) != Some("scenarios") {
        return Ok(Vec::new());
    }
    Ok(sweep
        .get("runs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("name").and_then(Value::as_str).map(str::to_string))
        .collect())
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
    let raw = read_raw(file, text)?;
    let doc = finish(file, raw.clone())?;
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
    if let Some(s) = &opts.scenario
        && ty != Some("scenarios")
    {
        return Err(match ty {
            None => format!(
                "{file}: sweep: scenario \"{s}\" selected, but the file has no `sweep: {{type: scenarios}}`"
            ),
            Some(t) => format!("{file}: sweep: scenario \"{s}\" selected, but the sweep is a {t}"),
        });
    }
    let ty = ty.map(str::to_string);
    match ty.as_deref() {
        None => {
            let b = benchmark_of(file, &doc)?;
            map::flags_for(file, &doc, &b, base, opts.simulated, opts.cli)
        }
        Some("scenarios") => {
            let doc = finish(
                file,
                resolve_scenario(file, &raw, opts.scenario.as_deref())?,
            )?;
            let b = benchmark_of(file, &doc)?;
            let out = map::flags_for(file, &doc, &b, base, opts.simulated, opts.cli)?;
            sweep_keys(file, true, sweep.as_ref(), out)
        }
        Some("grid" | "zip") => {
            let sweep = sweep.unwrap_or_default();
            let b = benchmark_of(file, &doc)?;
            let base_flags = map::flags_for(file, &doc, &b, base, opts.simulated, opts.cli)?;
            if !sweep::listable(file, &sweep)? {
                sweep::combos(
                    file,
                    ty.as_deref().unwrap_or("grid"),
                    &sweep::parameters(file, &sweep)?
                        .iter()
                        .map(|(_, v)| v.len())
                        .collect::<Vec<_>>(),
                )?;
                let out =
                    variant_sweep::variant_flags(file, &raw, &sweep, base, opts, &base_flags)?;
                return sweep_keys(file, false, Some(&sweep), out);
            }
            let lists = sweep::list_flags(file, &sweep)?;
            let mut out = base_flags.clone();
            for (flags, values) in &lists {
                out = without(out, flags);
                out.extend([flags[0].to_string(), values.clone()]);
            }
            if ty.as_deref() == Some("zip") {
                out.extend(["--sweep-type".into(), "zip".into()]);
            }
            if jinja::has_templates(&Value::Object(raw.clone())) {
                same_cells_as_lists(file, &raw, base, opts, &base_flags, &lists)?;
            }
            sweep_keys(file, false, Some(&sweep), out)
        }
        Some(other) => Err(format!(
            "{file}: sweep.type \"{other}\": not built in inferbench ({})",
            sweep::unbuilt_reason(other)
        )),
    }
}

/// The keys of a sweep besides its cells: `cooldownSeconds`, `sameSeed` and
/// `iterationOrder` map to flags (a scenario run is one cell per invocation, so there the
/// last two have nothing to act on); the others are refused by name.
fn sweep_keys(
    file: &str,
    one_cell: bool,
    sweep: Option<&Value>,
    mut out: Vec<String>,
) -> Result<Vec<String>, String> {
    let Some(sweep) = sweep else { return Ok(out) };
    let mut rest = sweep.as_object().cloned().unwrap_or_default();
    for k in ["type", "parameters", "runs"] {
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
    if let Some(v) = rest.shift_remove("sameSeed").filter(|v| !v.is_null()) {
        match v.as_bool() {
            Some(true) if !one_cell => out.push("--parameter-sweep-same-seed".into()),
            Some(_) => {}
            None => return Err(refused(file, "sweep.sameSeed", &v)),
        }
    }
    if let Some(v) = rest.shift_remove("iterationOrder").filter(|v| !v.is_null()) {
        match v.as_str() {
            Some(m @ ("repeated" | "independent")) => {
                if !one_cell {
                    out.extend(["--parameter-sweep-mode".into(), m.to_string()]);
                }
            }
            _ => return Err(refused(file, "sweep.iterationOrder", &v)),
        }
    }
    if let Some((k, v)) = rest.iter().find(|(_, v)| !v.is_null()) {
        return Err(refused(file, &join("sweep", k), v));
    }
    Ok(out)
}

/// With Jinja in a swept file, a template may read a swept value (AIPerf renders each cell
/// again): the cells run through comma lists only when each cell's own flags are the base's
/// with its swept values in place. Otherwise the sweep is refused, naming the cell.
fn same_cells_as_lists(
    file: &str,
    raw: &Map<String, Value>,
    base: &Path,
    opts: &Options,
    base_flags: &[String],
    lists: &[(Vec<&'static str>, String)],
) -> Result<(), String> {
    let swept: Vec<&str> = lists.iter().flat_map(|(f, _)| f.iter().copied()).collect();
    let kept = without(base_flags.to_vec(), &swept);
    for (cell, flags) in cells_of(file, raw, base, opts.simulated)? {
        let flags = flags?;
        let mut want = kept.clone();
        for ((f, values), &i) in lists.iter().zip(&cell.indices) {
            let v = values.split(',').nth(i).unwrap_or_default();
            want.extend([f[0].to_string(), v.to_string()]);
        }
        if pairs(&flags) != pairs(&want) {
            return Err(format!(
                "{file}: sweep: cell {}: a Jinja template reads a swept value, so the cells differ beyond the swept flags: not built in inferbench (inferbench runs a sweep through its comma-list flags)",
                cell.name
            ));
        }
    }
    Ok(())
}

/// `--flag [value]` groups, numbers compared as numbers, sorted.
fn pairs(flags: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = flag_values(flags)
        .into_iter()
        .map(|(f, v)| {
            let v = v.parse::<f64>().map(|x| x.to_string()).unwrap_or(v);
            (f, v)
        })
        .collect();
    out.sort();
    out
}

/// `--flag [value]` groups in order, as written (a flag without a value has an empty one).
fn flag_values(flags: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut it = flags.iter().peekable();
    while let Some(f) = it.next() {
        let v = match it.peek() {
            Some(v) if !v.starts_with("--") => it.next().cloned().unwrap_or_default(),
            _ => String::new(),
        };
        out.push((f.clone(), v));
    }
    out
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

/// A cell of `config expand` with the flags it maps to (or the part refused).
pub type ExpandedCell = (sweep::ConfigCell, Result<Vec<String>, String>);

/// `config expand`: the cells the file's sweep would run (one without a sweep), each with
/// the flags it maps to or the reason it is refused.
pub fn expand_file(path: &Path, simulated: bool) -> Result<Vec<ExpandedCell>, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let base_dir = path.parent().unwrap_or(Path::new(""));
    let raw = read_raw(&file, &text)?;
    // The whole file is checked first, as AIPerf loads it before expanding its sweep.
    finish(&file, raw.clone())?;
    cells_of(&file, &raw, base_dir, simulated)
}

/// Every cell of the file (`raw`: before Jinja), each rendered on its own as AIPerf renders
/// each variation, then mapped.
fn cells_of(
    file: &str,
    raw: &Map<String, Value>,
    base_dir: &Path,
    simulated: bool,
) -> Result<Vec<ExpandedCell>, String> {
    let mut docs: Vec<(sweep::ConfigCell, Map<String, Value>)> = Vec::new();
    let ty = raw
        .get("sweep")
        .map(|s| s.get("type").and_then(Value::as_str).unwrap_or("grid"));
    match (raw.get("sweep"), ty) {
        (None, _) => docs.push((sweep::ConfigCell::named("(no sweep)"), raw.clone())),
        (Some(s), Some("scenarios")) => {
            let names: Vec<String> = s
                .get("runs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.get("name").and_then(Value::as_str).map(str::to_string))
                .collect();
            for n in names {
                docs.push((
                    sweep::ConfigCell::named(&n),
                    resolve_scenario(file, raw, Some(&n))?,
                ));
            }
        }
        (Some(s), Some("grid" | "zip")) => {
            for cell in sweep::expand(file, s, raw)? {
                let mut d = cell.doc.clone();
                d.shift_remove("sweep");
                docs.push((cell, d));
            }
        }
        (Some(_), Some(other)) => {
            // The cells are not known: the sweep itself is refused, as one cell.
            return Ok(vec![(
                sweep::ConfigCell::named(&format!("({other} sweep)")),
                Err(format!(
                    "{file}: sweep.type \"{other}\": not built in inferbench ({})",
                    sweep::unbuilt_reason(other)
                )),
            )]);
        }
        (Some(_), None) => {}
    }
    let mut out = Vec::new();
    for (cell, doc) in docs {
        let mapped = finish(file, doc).and_then(|doc| {
            let b = benchmark_of(file, &doc)?;
            map::flags_for(file, &doc, &b, base_dir, simulated, true)
        });
        out.push((cell, mapped));
    }
    Ok(out)
}

/// `a.b` (or `b` at the root).
pub(crate) fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

/// `FILE: FIELD: not built in inferbench plans`, with a short view of the value.
pub(crate) fn refused(file: &str, at: &str, v: &Value) -> String {
    format!(
        "{file}: {at}{}: not built in inferbench plans",
        part::shown(v)
    )
}
