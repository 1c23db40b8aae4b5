//! A grid or zip sweep over a field that has no comma-list flag (a dataset's `format`, a
//! phase's `gracePeriod`, …) runs as `--variant` cells: each cell is mapped on its own, and
//! the flags where it differs from the base become that cell's `KEY=VALUE` pairs. The cells
//! and their order are the sweep's own (`config expand` lists the same ones).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::{Options, cells_of, flag_values};

/// `--flag` → its values in order (a flag without a value has one empty value).
fn by_flag(flags: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (f, v) in flag_values(flags) {
        out.entry(f).or_default().push(v);
    }
    out
}

/// `--flag` → its one default value, for every `profile` flag that has one.
fn profile_defaults() -> BTreeMap<String, String> {
    let cmd = crate::cli::command_with_unbuilt();
    let Some(p) = cmd.find_subcommand("profile") else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for a in p.get_arguments() {
        let [d] = a.get_default_values() else {
            continue;
        };
        let d = d.to_string_lossy().into_owned();
        // The mapping writes some flags by an alias (`--isl-stddev`).
        let names = a
            .get_long()
            .into_iter()
            .chain(a.get_all_aliases().unwrap_or_default());
        for n in names {
            out.insert(format!("--{n}"), d.clone());
        }
    }
    out
}

/// A cell's name as a directory can hold it: the swept fields' last parts with their
/// values, `format_speed_bench_coding`, for one parameter; joined with `_` for several.
fn cell_name(cell: &super::sweep::ConfigCell, params: &[(String, Vec<Value>)]) -> String {
    let mut parts = Vec::new();
    for ((path, values), &i) in params.iter().zip(&cell.indices) {
        let field = path.rsplit('.').next().unwrap_or(path);
        let v = match &values[i] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        parts.push(format!("{field}_{v}"));
    }
    crate::plot_cmd::file_safe(&parts.join("_"))
}

/// The base flags followed by one `--variant` per cell of the sweep.
pub(super) fn variant_flags(
    file: &str,
    raw: &Map<String, Value>,
    sweep: &Value,
    base: &Path,
    opts: &Options,
    base_flags: &[String],
) -> Result<Vec<String>, String> {
    let params = super::sweep::parameters(file, sweep)?;
    let want = by_flag(base_flags);
    let mut out = base_flags.to_vec();
    let cells = cells_of(file, raw, base, opts.simulated)?;
    if cells.len() < 2 {
        return Err(format!(
            "{file}: sweep.parameters: one cell: give its values directly, not as a sweep"
        ));
    }
    let mut mapped = Vec::new();
    for (cell, flags) in cells {
        mapped.push((by_flag(&flags?), cell));
    }
    let defaults = profile_defaults();
    for (have, cell) in &mut mapped {
        // A flag of the base that the cell does not give is the flag's default in the cell
        // (a swept plain ISL drops the base's stddev: its default, 0).
        let gone_flags: Vec<&String> = want.keys().filter(|f| !have.contains_key(*f)).collect();
        for gone in gone_flags {
            let Some(d) = defaults.get(gone.as_str()) else {
                return Err(format!(
                    "{file}: sweep: cell {}: the base's {gone} is not in the cell and has no default: not built in inferbench (a --variant cannot take a flag away)",
                    cell.name
                ));
            };
            have.insert(gone.clone(), vec![d.clone()]);
        }
    }
    let varying: Vec<String> = mapped
        .iter()
        .flat_map(|(have, _)| have.iter().filter(|(f, v)| want.get(*f) != Some(*v)))
        .map(|(f, _)| f.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    // The flags some cell sets otherwise than the base: every cell gives its own value of
    // each (the cell equal to the base included), so no cell inherits another's.
    if varying.is_empty() {
        return Err(format!(
            "{file}: sweep.parameters: every cell maps to the same flags: the swept fields change nothing inferbench sends"
        ));
    }
    for (have, cell) in &mapped {
        let mut pairs = Vec::new();
        for flag in &varying {
            let Some(values) = have.get(flag) else {
                continue;
            };
            let cant = |why: &str| {
                format!(
                    "{file}: sweep: cell {}: {flag}: {why}: not built in inferbench (the cell runs as a --variant, which sets one value per flag)",
                    cell.name
                )
            };
            let [v] = values.as_slice() else {
                return Err(cant("a repeated flag differs from the base's"));
            };
            if v.contains(',') {
                return Err(cant("its value holds a comma"));
            }
            let v = if v.is_empty() { "true" } else { v.as_str() };
            pairs.push(format!("{}={v}", flag.trim_start_matches("--")));
        }
        if pairs.is_empty() {
            return Err(format!(
                "{file}: sweep: cell {}: it sets none of the flags the other cells change: not built in inferbench (a --variant cannot take a flag away)",
                cell.name
            ));
        }
        let name = cell_name(cell, &params);
        out.extend(["--variant".into(), format!("{name}: {}", pairs.join(", "))]);
    }
    Ok(out)
}
