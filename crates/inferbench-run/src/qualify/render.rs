//! A qualification as text: the console table, `qualification.json`
//! (docs/schemas/qualification.schema.json) and the Markdown of an acceptance packet.

use serde_json::Value;

use super::gates::{StepGates, trim};
use super::{Detail, GateStatus, Qualification};

/// The `schema` tag of `qualification.json`.
pub const SCHEMA: &str = "inferbench.qualification/1";

/// `qualification.json`: the schema tag, then the qualification's fields in declaration
/// order (deterministic: the same runs and spec give the same bytes).
pub fn to_json(q: &Qualification) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("schema".into(), Value::String(SCHEMA.into()));
    if let Value::Object(fields) = serde_json::to_value(q).expect("a qualification serializes") {
        m.extend(fields);
    }
    Value::Object(m)
}

/// Reads `qualification.json` back; the message names what is wrong.
pub fn from_json(v: &Value) -> Result<Qualification, String> {
    match v.get("schema").and_then(Value::as_str) {
        Some(SCHEMA) => {}
        Some(other) => return Err(format!("schema \"{other}\", expected \"{SCHEMA}\"")),
        None => return Err(format!("no \"schema\": \"{SCHEMA}\"")),
    }
    let mut v = v.clone();
    if let Value::Object(m) = &mut v {
        m.remove("schema");
    }
    serde_json::from_value(v).map_err(|e| format!("not a qualification: {e}"))
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or("-".into(), f)
}

/// The step rows: workers, runs, mean server tokens/s, CV, δ, flat.
fn step_rows(d: &Detail) -> Vec<[String; 6]> {
    d.steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let x = i.checked_sub(1).and_then(|j| d.deltas.get(j));
            [
                s.workers.to_string(),
                s.runs.to_string(),
                format!("{:.1}", s.mean),
                opt(s.cv_pct, |c| format!("{c:.3} %")),
                x.map_or("-".into(), |x| format!("{:+.2} %", x.delta_pct)),
                x.map_or("-".into(), |x| {
                    let flat = if x.flat {
                        "yes"
                    } else if x.within_tolerance {
                        "within τ, noisy"
                    } else {
                        "no"
                    };
                    format!("{flat} (equivalence {})", x.equivalence.status.as_str())
                }),
            ]
        })
        .collect()
}

/// The gate pair shown: the plateau pair, else the two largest worker counts.
fn shown_gates(d: &Detail) -> Vec<&StepGates> {
    match &d.plateau {
        Some(p) => d
            .gates
            .iter()
            .filter(|g| g.workers == p.from_workers || g.workers == p.to_workers)
            .collect(),
        None => d.gates.iter().rev().take(2).rev().collect(),
    }
}

/// The status, with the note unless `terse` and the gate passed.
fn gate_cell(g: &StepGates, name: &str, terse: bool) -> String {
    g.get(name).map_or("-".into(), |o| {
        let quiet = terse && matches!(o.status, GateStatus::Pass | GateStatus::NotApplicable);
        if o.note.is_empty() || quiet {
            o.status.as_str().into()
        } else {
            format!("{} ({})", o.status.as_str(), o.note)
        }
    })
}

fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            if i > 0 {
                s.push_str("  ");
            }
            s.push_str(c);
            s.push_str(&" ".repeat(pad));
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(head.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

fn verdict_line(q: &Qualification) -> String {
    let at = q
        .qualified_workers
        .map_or(String::new(), |w| format!(" at {w} workers"));
    format!(
        "{}{at} (τ = {} % declared; the server's output tokens/s)",
        q.verdict.as_str(),
        trim(q.spec.tolerance_pct)
    )
}

/// The console: the step table, the gates at the plateau pair (or the two largest worker
/// counts), the verdict with its reasons and the declared τ.
pub fn render_console(q: &Qualification) -> String {
    let d = Detail::of(q).unwrap_or_default();
    let mut s = String::from("Client-saturation qualification\n");
    let rows: Vec<Vec<String>> = step_rows(&d).into_iter().map(Vec::from).collect();
    if !rows.is_empty() {
        s.push_str(&table(
            &["workers", "runs", "server tok/s", "CV", "δ", "flat"],
            &rows,
        ));
    }
    let shown = shown_gates(&d);
    if !shown.is_empty() {
        let ws: Vec<String> = shown.iter().map(|g| format!("w = {}", g.workers)).collect();
        s.push_str(&format!("\nGates at {} (worst run):\n", ws.join(" and ")));
        let mut head = vec!["gate"];
        head.extend(ws.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = super::gates::GATES
            .iter()
            .map(|&name| {
                let mut r = vec![name.to_string()];
                r.extend(shown.iter().map(|g| gate_cell(g, name, true)));
                r
            })
            .collect();
        s.push_str(&table(&head, &rows));
    }
    s.push_str(&format!("\nVerdict: {}\n", verdict_line(q)));
    for r in &q.reasons {
        s.push_str(&format!("  - {r}\n"));
    }
    s
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

fn md_table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!("| {} |\n", head.join(" | "));
    s.push_str(&format!("|{}\n", "---|".repeat(head.len())));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| md_escape(c)).collect();
        s.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    s
}

/// Markdown for an acceptance packet: the verdict, the declared rule, the steps, the gates
/// with their thresholds, the cross-check and the runs.
pub fn render_markdown(q: &Qualification) -> String {
    let d = Detail::of(q).unwrap_or_default();
    let mut s = String::from("## Client-saturation qualification\n\n");
    s.push_str(&format!("**Verdict: {}**\n\n", verdict_line(q)));
    for r in &q.reasons {
        s.push_str(&format!("- {}\n", md_escape(r)));
    }
    s.push_str(&format!(
        "\nDeclared before the runs: τ = {} %; qualified count: the {} worker count of the plateau pair. Definitions and thresholds: docs/qualify.md.\n",
        trim(q.spec.tolerance_pct),
        if q.spec.prefer_headroom { "larger" } else { "smaller" }
    ));
    let rows: Vec<Vec<String>> = step_rows(&d).into_iter().map(Vec::from).collect();
    if !rows.is_empty() {
        s.push_str("\n### Steps\n\n");
        s.push_str(&md_table(
            &["workers", "runs", "server tok/s", "CV", "δ", "flat"],
            &rows,
        ));
    }
    let shown = shown_gates(&d);
    if !shown.is_empty() {
        s.push_str("\n### Evidence gates (worst run of each step)\n\n");
        let ws: Vec<String> = shown.iter().map(|g| format!("w = {}", g.workers)).collect();
        let mut head = vec!["gate"];
        head.extend(ws.iter().map(String::as_str));
        head.push("rule");
        let rows: Vec<Vec<String>> = super::gates::GATES
            .iter()
            .map(|&name| {
                let mut r = vec![name.to_string()];
                r.extend(shown.iter().map(|g| gate_cell(g, name, false)));
                r.push(
                    shown[0]
                        .get(name)
                        .map_or(String::new(), |o| o.threshold.clone()),
                );
                r
            })
            .collect();
        s.push_str(&md_table(&head, &rows));
    }
    if !d.cross_check.is_empty() {
        s.push_str("\n### Client↔server output tokens (telemetry.md §2.7)\n\n");
        let rows: Vec<Vec<String>> = d
            .cross_check
            .iter()
            .map(|c| {
                vec![
                    c.workers.to_string(),
                    c.repeat.to_string(),
                    c.dir.clone(),
                    c.status.as_str().into(),
                    c.note.clone(),
                ]
            })
            .collect();
        s.push_str(&md_table(
            &["workers", "repeat", "run", "status", "gap / bound"],
            &rows,
        ));
    }
    let host: Vec<String> = d
        .host_cpu_pressure
        .iter()
        .filter_map(|h| {
            h.cpu_some_max
                .map(|p| format!("w = {}: {} %", h.workers, trim(100.0 * p)))
        })
        .collect();
    if !host.is_empty() {
        s.push_str(&format!(
            "\nHost PSI cpu some (informational, explains noise only): {}.\n",
            host.join(", ")
        ));
    }
    s
}
