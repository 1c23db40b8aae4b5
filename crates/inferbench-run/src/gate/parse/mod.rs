//! TOML → [`GateSpec`](super::spec::GateSpec), every field checked (`docs/gate.md`). Errors
//! are one line, `FILE:LINE: WHERE: MESSAGE`, exit 2: an unknown family, metric, unit or
//! definition set, a bound without a unit, a unit of the wrong dimension, an unknown field.

pub mod catalogue;
mod reader;
mod rules;
#[cfg(test)]
mod tests;
mod thresholds;
pub mod units;

use std::collections::BTreeSet;
use std::path::Path;

use toml::de::DeTable;

use super::spec::{Burden, EvidenceRequirements, GateSpec, MultiplicityMethod, OnMissing, Rule};
use crate::Failure;
use reader::{Source, Table, array_spans, sub_spans};

pub const PROFILES: &[&str] = &["regression", "service-load", "trace-replay"];

/// Reads and parses a spec file.
pub fn parse_file(path: &Path) -> Result<GateSpec, Failure> {
    let bytes = std::fs::read(path).map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::NotFound {
            "no such file".to_string()
        } else {
            e.to_string()
        };
        Failure::input(format!("{}: {why}", path.display()))
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Failure::input(format!("{}: not UTF-8 text", path.display())))?;
    parse_str(&path.display().to_string(), &text)
}

/// Parses spec text; `file` names it in messages (never in the verdict).
pub fn parse_str(file: &str, text: &str) -> Result<GateSpec, Failure> {
    let src = Source { file, text };
    let values: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        let msg = e.message().lines().next().unwrap_or("not TOML").to_string();
        src.error(at, "TOML", msg)
    })?;
    let spans = DeTable::parse(text)
        .map_err(|e| src.error(e.span().map_or(0, |s| s.start), "TOML", e.message()))?;
    let spans = spans.get_ref();
    let root = Table::new(&src, "top level", &values, Some(spans), 0);

    let Some(gate) = table_at(&root, spans, "gate")? else {
        return Err(src.error(0, "[gate]", "a [gate] table is required"));
    };
    let name = gate.required_string("name")?;
    if name.trim().is_empty() {
        return Err(gate.err("name", "must not be empty"));
    }
    let version = gate.integer("version")?.unwrap_or(1);
    let epoch = gate.string("epoch")?;
    let definition_set = gate
        .string("definition_set")?
        .unwrap_or_else(|| inferbench_metrics::aiperf::NAME.to_string());
    if inferbench_metrics::find(&definition_set).is_err() {
        return Err(gate.err(
            "definition_set",
            format!(
                "unknown definition set \"{definition_set}\" (known: {})",
                inferbench_metrics::registry::names().join(", ")
            ),
        ));
    }
    let profile = gate.choice("profile", PROFILES)?;
    let alpha = gate.number("alpha")?.unwrap_or(0.05);
    if !(alpha > 0.0 && alpha < 0.5) {
        return Err(gate.err(
            "alpha",
            format!("{alpha}: must be between 0 and 0.5, exclusive"),
        ));
    }
    let burden = match gate
        .choice("burden", &["demonstrate_pass", "demonstrate_fail"])?
        .as_deref()
    {
        Some("demonstrate_fail") => Burden::DemonstrateFail,
        _ => Burden::DemonstratePass,
    };
    let on_missing = match gate
        .choice("on_missing", &["fail", "inconclusive"])?
        .as_deref()
    {
        Some("fail") => OnMissing::Fail,
        _ => OnMissing::Inconclusive,
    };
    let multiplicity = match gate.choice("multiplicity", &["holm", "none"])?.as_deref() {
        Some("none") => MultiplicityMethod::None,
        _ => MultiplicityMethod::Holm,
    };
    let evidence = match gate.table("evidence")? {
        Some(t) => evidence(&t)?,
        None => EvidenceRequirements {
            min_runs: 1,
            min_requests_per_run: 0,
            resamples: 2000,
        },
    };
    gate.finish(
        "name, version, epoch, definition_set, profile, alpha, burden, on_missing, multiplicity, evidence",
    )?;

    let ctx = rules::Ctx {
        set: definition_set.clone(),
    };
    let mut out: Vec<Rule> = Vec::new();
    if let Some(v) = root.raw("rule") {
        let Some(items) = v.as_array() else {
            return Err(root.err("rule", "write rules as [[rule]] tables"));
        };
        let places = array_spans(spans, "rule");
        for (i, item) in items.iter().enumerate() {
            let (at, sp) = places
                .get(i)
                .copied()
                .unwrap_or((root.offset("rule"), None));
            let Some(t) = item.as_table() else {
                return Err(src.error(at, "[[rule]]", "each rule is a table"));
            };
            let label = format!("rule {}", i + 1);
            let table = Table::new(&src, label, t, sp, at);
            out.push(rules::rule(&ctx, &table, src.line_of(at))?);
        }
    }
    root.mark("rule");
    if let Some(t) = table_at(&root, spans, "thresholds")? {
        out.extend(thresholds::rules(&ctx, &t)?);
    }
    root.finish("gate, rule, thresholds")?;
    if out.is_empty() {
        return Err(src.error(
            text.len(),
            "[[rule]]",
            "the spec has no rule: a gate with nothing to check would pass anything",
        ));
    }
    let mut seen = BTreeSet::new();
    for r in &out {
        if !seen.insert(r.id.clone()) {
            return Err(Failure::input(format!(
                "{file}:{}: rule \"{}\": id: used twice",
                r.line, r.id
            )));
        }
    }
    Ok(GateSpec {
        file: file.to_string(),
        digest: inferbench_core::canonical::sha256_id(text.as_bytes()),
        name,
        version,
        epoch,
        definition_set,
        profile,
        alpha,
        burden,
        on_missing,
        multiplicity,
        evidence,
        rules: out,
    })
}

/// A top-level table with its own spans (so its keys get their lines).
fn table_at<'s, 'v>(
    root: &Table<'s, 'v>,
    spans: &'v DeTable<'v>,
    key: &str,
) -> Result<Option<Table<'s, 'v>>, Failure> {
    let Some(v) = root.raw(key) else {
        return Ok(None);
    };
    root.mark(key);
    let Some(t) = v.as_table() else {
        return Err(root.err(key, format!("[{key}] must be a table")));
    };
    let (at, sp) = match sub_spans(spans, key) {
        Some((at, sp)) => (at, Some(sp)),
        None => (root.offset(key), None),
    };
    Ok(Some(Table::new(root.src, format!("[{key}]"), t, sp, at)))
}

fn evidence(t: &Table) -> Result<EvidenceRequirements, Failure> {
    let min_runs = t.integer("min_runs")?.unwrap_or(1);
    if min_runs == 0 || min_runs > 1000 {
        return Err(t.err("min_runs", format!("{min_runs}: between 1 and 1000")));
    }
    let min_requests_per_run = t.integer("min_requests_per_run")?.unwrap_or(0);
    let mut resamples = 2000usize;
    if let Some(b) = t.table("bootstrap")? {
        if let Some(r) = b.integer("resamples")? {
            if !(100..=1_000_000).contains(&r) {
                return Err(b.err("resamples", format!("{r}: between 100 and 1000000")));
            }
            resamples = r as usize;
        }
        if let Some(block) = b.string("block")?
            && block != "none"
        {
            return Err(b.err(
                "block",
                format!(
                    "\"{block}\": a block bootstrap is not built in inferbench yet; write \"none\" (requests resampled independently; the verdict names the gap)"
                ),
            ));
        }
        b.choice("seed_from", &["run_ids", "packet_ids"])?;
        b.finish("resamples, block, seed_from")?;
    }
    t.finish("min_runs, min_requests_per_run, bootstrap")?;
    Ok(EvidenceRequirements {
        min_runs: min_runs as u32,
        min_requests_per_run,
        resamples,
    })
}
