//! The verdict for people: console lines, and the Markdown acceptance packet a reviewer
//! reads (deterministic, like the JSON: no paths or times of its own).

use std::fmt::Write;

use serde_json::Value;

use super::verdict::{Outcome, RuleVerdict, Verdict};

impl Verdict {
    /// One line per rule, then the overall verdict.
    pub fn console(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "gate {} v{} ({}) under {}",
            self.gate.name,
            self.gate.version,
            short(&self.gate.digest),
            self.definition_set
        );
        for r in &self.rules {
            let judged = if r.judged { "" } else { " (not judged)" };
            let _ = writeln!(
                s,
                "  {:<12} {:<28} {}{judged}",
                r.verdict.as_str(),
                r.id,
                r.reason
            );
        }
        for g in &self.evidence_gaps {
            let _ = writeln!(s, "  evidence gap: {g}");
        }
        let _ = writeln!(
            s,
            "verdict: {} (preconditions {}; exit {})",
            self.verdict.as_str(),
            self.preconditions.as_str(),
            self.exit_code
        );
        s
    }

    /// The acceptance packet: what was judged, against what, with which evidence, and why
    /// each rule came out as it did.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Acceptance gate: {} (version {})\n",
            self.gate.name, self.gate.version
        );
        let _ = writeln!(s, "**Verdict: {}**\n", self.verdict.as_str());
        let _ = writeln!(s, "| | |\n|---|---|");
        let _ = writeln!(s, "| gate spec | `{}` |", self.gate.digest);
        let _ = writeln!(s, "| definition set | `{}` |", self.definition_set);
        if let Some(p) = &self.profile {
            let _ = writeln!(s, "| traffic profile | {p} |");
        }
        if let Some(e) = &self.epoch {
            let fp = e
                .fingerprint
                .as_deref()
                .map_or("unresolved".to_string(), |f| format!("`{f}`"));
            let _ = writeln!(
                s,
                "| epoch | {} ({fp}); runs match: {} |",
                e.id,
                if e.matches { "yes" } else { "**no**" }
            );
        }
        let _ = writeln!(s, "| preconditions | {} |", self.preconditions.as_str());
        let _ = writeln!(s, "| candidate runs | {} |", ids(&self.runs.candidate));
        if !self.runs.baseline.is_empty() {
            let _ = writeln!(s, "| baseline runs | {} |", ids(&self.runs.baseline));
        }
        if let Some(m) = &self.multiplicity {
            let _ = writeln!(
                s,
                "| multiplicity | {} over {} rule(s) |",
                m.method, m.family_size
            );
        }
        let _ = writeln!(s, "| exit code | {} |", self.exit_code);
        s.push('\n');
        s.push_str(
            "Preconditions (serialization, workload, load delivery, client headroom) decide whether the runs are valid evidence at all; when one does not pass, the performance rules are computed and shown but not judged.\n\n",
        );

        let (pre, perf): (Vec<&RuleVerdict>, Vec<&RuleVerdict>) =
            self.rules.iter().partition(|r| r.family.is_precondition());
        for (title, rules) in [("Preconditions", pre), ("Performance", perf)] {
            if rules.is_empty() {
                continue;
            }
            let _ = writeln!(s, "## {title}\n");
            let _ = writeln!(s, "| rule | family | verdict | observed | bound | reason |");
            let _ = writeln!(s, "|---|---|---|---|---|---|");
            for r in &rules {
                let verdict = if r.judged {
                    bold_unless_pass(r.verdict)
                } else {
                    format!("{} (not judged)", r.verdict.as_str())
                };
                let bound = r
                    .bound
                    .as_ref()
                    .map(|b| format!("{} {}{}", b.op, num(b.value), unit(r)))
                    .unwrap_or_default();
                let _ = writeln!(
                    s,
                    "| `{}` | {} | {} | {} | {} | {} |",
                    r.id,
                    r.family.as_str(),
                    verdict,
                    cell(&observed(&r.observed)),
                    bound,
                    cell(&r.reason)
                );
            }
            s.push('\n');
            for r in &rules {
                detail(&mut s, r);
            }
        }
        if !self.evidence_gaps.is_empty() {
            let _ = writeln!(s, "## Evidence gaps\n");
            s.push_str("What the evidence could not show. A gap is never read as healthy.\n\n");
            for g in &self.evidence_gaps {
                let _ = writeln!(s, "- {g}");
            }
            s.push('\n');
        }
        let _ = writeln!(s, "## Reproducing this verdict\n");
        let _ = writeln!(
            s,
            "The verdict JSON is deterministic: the same runs and the same spec (digest `{}`) give the same bytes, its digest `{}`. Re-run `inferbench gate --spec SPEC RUN...` on the runs above (ledger packets by cid with `--ledger`).",
            self.gate.digest,
            self.digest()
        );
        s
    }
}

fn detail(s: &mut String, r: &RuleVerdict) {
    let mut lines = Vec::new();
    if let Some(m) = &r.metric {
        let mut what = format!("metric `{m}`");
        if let Some(st) = &r.stat {
            what.push_str(&format!(", {st}"));
        }
        if let Some(p) = &r.population {
            what.push_str(&format!(", population {p}"));
        }
        if let Some(d) = &r.definition_set {
            what.push_str(&format!(", under {d}"));
        }
        if let Some(n) = r.n {
            what.push_str(&format!(", n = {n}"));
        }
        lines.push(what);
    }
    if let Some(i) = &r.interval {
        let mut t = format!(
            "interval: {} at {}% ({}-sided)",
            i.method,
            num(i.confidence * 100.0),
            i.sided
        );
        if let Some(l) = i.lower {
            t.push_str(&format!(", lower {}", num(l)));
        }
        if let Some(u) = i.upper {
            t.push_str(&format!(", upper {}", num(u)));
        }
        if let Some(n) = i.n_eff {
            t.push_str(&format!(", effective n {}", num(n)));
        }
        lines.push(t);
    }
    // What `inspect` says of the sample pairs (serialization rules): each distinct warning once.
    let mut seen = std::collections::BTreeSet::new();
    for run in r.observed["inspect_sample"]
        .as_array()
        .into_iter()
        .flatten()
    {
        for pair in run["pairs"].as_array().into_iter().flatten() {
            for w in pair["inspect_warnings"].as_array().into_iter().flatten() {
                if let Some(w) = w.as_str()
                    && seen.insert(w.to_string())
                {
                    lines.push(format!("inspect, on a sample pair: {w}"));
                }
            }
        }
    }
    if let Some(n) = &r.needed {
        lines.push(format!("to decide: {}", observed(n)));
    }
    lines.push(format!(
        "burden: {}",
        match r.burden {
            super::spec::Burden::DemonstratePass => "the runs must demonstrate the bound is met",
            super::spec::Burden::DemonstrateFail => "the runs must demonstrate the bound is broken",
        }
    ));
    if lines.is_empty() && r.checks.is_empty() {
        return;
    }
    let _ = writeln!(s, "### `{}`\n", r.id);
    for l in lines {
        let _ = writeln!(s, "- {l}");
    }
    if !r.checks.is_empty() {
        let _ = writeln!(s, "\n| check | verdict | observed | limit | reason |");
        let _ = writeln!(s, "|---|---|---|---|---|");
        for c in &r.checks {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                c.name,
                bold_unless_pass(c.verdict),
                cell(&observed(&c.observed)),
                cell(&c.limit.as_ref().map(observed).unwrap_or_default()),
                cell(&c.reason)
            );
        }
    }
    s.push('\n');
}

fn bold_unless_pass(o: Outcome) -> String {
    match o {
        Outcome::Pass => "PASS".into(),
        other => format!("**{}**", other.as_str()),
    }
}

fn unit(r: &RuleVerdict) -> String {
    r.unit
        .as_deref()
        .map(|u| format!(" {u}"))
        .unwrap_or_default()
}

fn ids(v: &[String]) -> String {
    v.iter()
        .map(|i| format!("`{}`", short(i)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `sha256:` and 12 hex digits, as `ledger log` prints them.
fn short(id: &str) -> String {
    match id.strip_prefix("sha256:") {
        Some(h) => format!("sha256:{}", &h[..h.len().min(12)]),
        None => id.to_string(),
    }
}

fn num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// A JSON observation in one line: numbers rounded for reading, objects as `k: v, …`.
fn observed(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Number(n) => n.as_f64().map(num).unwrap_or_else(|| n.to_string()),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Array(a) => a.iter().map(observed).collect::<Vec<_>>().join(", "),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| match v {
                Value::Object(_) | Value::Array(_) => format!("{k}: […]"),
                _ => format!("{k}: {}", observed(v)),
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A Markdown table cell: no pipes or newlines.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
