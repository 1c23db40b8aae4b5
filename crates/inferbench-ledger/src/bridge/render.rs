//! The bridge report as Markdown, for a reviewer: one heading per section, tables, every run
//! named by its short cid.

use std::fmt::Write;

use super::Report;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn shorts(cids: &[String]) -> String {
    cids.iter()
        .map(|c| format!("`{}`", super::short(c)))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn markdown(r: &Report) -> String {
    let mut o = String::new();
    let c = &r.counts;
    let _ = writeln!(o, "# Bridge report\n");
    let _ = writeln!(
        o,
        "Ledger at entry {} (head `{}`): {} legacy run(s), {} run(s) of ours, {} comparable and {} non-comparable mapping(s), {} equivalence comparison(s), {} conditional item(s), {} new epoch(s), {} gate verdict(s).\n",
        r.ledger.entries,
        super::short(&r.ledger.head),
        c.legacy_runs,
        c.our_runs,
        c.mappings_comparable,
        c.mappings_not_comparable,
        c.equivalence,
        c.conditional,
        c.new_epochs,
        c.gates
    );

    let _ = writeln!(o, "## Preserved: the legacy runs\n");
    if r.preserved.is_empty() {
        let _ = writeln!(o, "No imported run in the ledger.\n");
    }
    for p in &r.preserved {
        let _ = writeln!(
            o,
            "### `{}`: {} {} (line {})\n\nImporter `{}`, native set `{}`, overall grade **{}**, packet `{}`. Epochs: {}.\n",
            p.short,
            p.tool,
            p.version,
            p.line,
            p.importer,
            p.definition_set,
            p.overall,
            super::short(&p.packet),
            if p.epochs.is_empty() {
                "none".to_string()
            } else {
                p.epochs.join(", ")
            }
        );
        let _ = writeln!(o, "| artifact | sha256 | bytes |\n|---|---|---:|");
        for a in &p.artifacts {
            let _ = writeln!(o, "| {} | `{}` | {} |", cell(&a.path), a.sha256, a.size);
        }
        let _ = writeln!(o, "\n| metric | tier |\n|---|---|");
        for (m, t) in &p.tiers {
            let _ = writeln!(o, "| {m} | {t} |");
        }
        o.push('\n');
    }
    if !r.ours.is_empty() {
        let _ = writeln!(
            o,
            "### Runs of ours\n\n| run | line | harness | set | grade |\n|---|---:|---|---|---|"
        );
        for u in &r.ours {
            let _ = writeln!(
                o,
                "| `{}` | {} | {} {} | {} | {} |",
                u.short,
                u.line,
                u.harness["tool"].as_str().unwrap_or("?"),
                u.harness["version"].as_str().unwrap_or("?"),
                u.definition_set,
                u.overall
            );
        }
        o.push('\n');
    }

    let _ = writeln!(o, "## Validated mappings\n");
    for m in &r.mappings {
        let _ = writeln!(
            o,
            "### Crosswalk of `{}`: {} → {} ({} successful requests)\n\n| {} | {} | holds | why not / conditions |\n|---|---|---|---|",
            m.short, m.from, m.to, m.records, m.from, m.to
        );
        for row in &m.rows {
            let why = if row.comparable {
                row.conditions.join("; ")
            } else {
                row.reasons.join("; ")
            };
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} |",
                row.from_metric,
                row.to_metric,
                if row.comparable { "yes" } else { "**no**" },
                cell(&why)
            );
        }
        o.push('\n');
    }
    let _ = writeln!(o, "### Equivalence on the same deployment\n");
    if r.equivalence.is_empty() {
        let _ = writeln!(
            o,
            "No recorded comparison of legacy runs against runs of ours with equal SUT pins.\n"
        );
    }
    for e in &r.equivalence {
        let sut: Vec<String> = e.sut.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(
            o,
            "Comparison `{}` (line {}), baseline {} against candidate {} under `{}`: **{}**. SUT pins equal: {}; known on one side only: {}.\n\n| metric | verdict |\n|---|---|",
            e.short,
            e.line,
            shorts(&e.baseline),
            shorts(&e.candidate),
            e.definition_set,
            e.overall,
            cell(&sut.join(", ")),
            if e.sut_one_sided.is_empty() {
                "none".to_string()
            } else {
                e.sut_one_sided.join(", ")
            }
        );
        for (k, v) in &e.verdicts {
            let _ = writeln!(o, "| {k} | {v} |");
        }
        o.push('\n');
    }

    let _ = writeln!(o, "## Conditional\n");
    let cd = &r.conditional;
    if !cd.grades.is_empty() {
        let _ = writeln!(
            o,
            "### Grades below reference\n\n| run | metric | tier | downgrades (field: tier) |\n|---|---|---|---|"
        );
        for g in &cd.grades {
            let d: Vec<String> = g
                .downgrades
                .iter()
                .map(|d| format!("{}: {}", d.field, d.tier))
                .collect();
            let _ = writeln!(
                o,
                "| `{}` | {} | {} | {} |",
                g.short,
                g.metric,
                g.tier,
                cell(&d.join(", "))
            );
        }
        o.push('\n');
    }
    if !cd.decisions.is_empty() {
        let _ = writeln!(
            o,
            "### Decisions\n\n| run | epoch | from | outcome | deciding pins | why |\n|---|---|---|---|---|---|"
        );
        for d in &cd.decisions {
            let _ = writeln!(
                o,
                "| `{}` | {} | {} | {} | {} | {} |",
                d.short,
                d.epoch,
                d.source,
                d.outcome,
                d.pins.join(", "),
                cell(&d.reason)
            );
        }
        o.push('\n');
    }
    if !cd.inconclusive.is_empty() {
        let _ = writeln!(
            o,
            "### Inconclusive comparisons\n\n| comparison | metric |\n|---|---|"
        );
        for i in &cd.inconclusive {
            let _ = writeln!(o, "| `{}` | {} |", i.short, i.metric);
        }
        o.push('\n');
    }
    if !cd.sut.is_empty() {
        let _ = writeln!(
            o,
            "### Not shown to be the same deployment\n\n| comparison | SUT pins | which |\n|---|---|---|"
        );
        for p in &cd.sut {
            let _ = writeln!(
                o,
                "| `{}` | {} | {} |",
                p.short,
                p.status,
                p.pins.join(", ")
            );
        }
        o.push('\n');
    }
    if c.conditional == 0 {
        let _ = writeln!(o, "Nothing is conditional.\n");
    }

    let _ = writeln!(o, "## New epochs\n");
    if r.new_epochs.is_empty() {
        let _ = writeln!(o, "No epoch was declared as new.\n");
    } else {
        let _ = writeln!(
            o,
            "| epoch | declared | parent | from run | deciding pin changes | reason |\n|---|---|---|---|---|---|"
        );
        for n in &r.new_epochs {
            let pins: Vec<String> = n
                .decided_by
                .iter()
                .map(|p| {
                    format!(
                        "{}: {} → {}",
                        p["name"].as_str().unwrap_or("?"),
                        p["before"],
                        p["after"]
                    )
                })
                .collect();
            let _ = writeln!(
                o,
                "| {} | `{}` (line {}) | {} | {} | {} | {} |",
                n.epoch,
                n.short,
                n.line,
                n.parent.as_deref().unwrap_or("–"),
                shorts(&n.evidence),
                cell(&if pins.is_empty() {
                    n.decision_reason.clone()
                } else {
                    pins.join("; ")
                }),
                cell(n.reason.as_deref().unwrap_or(""))
            );
        }
        o.push('\n');
    }

    let _ = writeln!(o, "## Gate verdicts\n");
    if r.gates.is_empty() {
        let _ = writeln!(o, "No gate verdict recorded.");
    } else {
        let _ = writeln!(
            o,
            "| verdict | gate | version | spec digest | candidate | baseline |\n|---|---|---|---|---|---|"
        );
        for g in &r.gates {
            let runs = |k: &str| -> String {
                let v: Vec<String> = g.runs[k]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect();
                shorts(&v)
            };
            let _ = writeln!(
                o,
                "| `{}` **{}** | {} | {} | `{}` | {} | {} |",
                g.short,
                g.verdict,
                g.gate["name"].as_str().unwrap_or("?"),
                g.gate["version"],
                super::short(g.gate["digest"].as_str().unwrap_or("")),
                runs("candidate"),
                runs("baseline")
            );
        }
    }
    o
}
