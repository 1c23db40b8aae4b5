//! `inferbench crosswalk DIR [--from SET --to SET]`: score one run under two definition sets
//! and set each legacy metric next to its counterpart, with the evidence that decides whether
//! the mapping holds. Prints a table; writes `crosswalk.json` and `crosswalk.md`.

use inferbench_core::Phase;
use inferbench_metrics::crosswalk::{Crosswalk, crosswalk, facts, markdown};

use inferbench_run::Failure;
use inferbench_run::offline::load;

use crate::cli::CrosswalkArgs;

pub fn run(a: &CrosswalkArgs) -> Result<u8, Failure> {
    let from_set = inferbench_metrics::find(&a.from).map_err(|e| Failure::input(e.to_string()))?;
    let to_set = inferbench_metrics::find(&a.to).map_err(|e| Failure::input(e.to_string()))?;
    let loaded = load(&a.dir, a.tokenizer.as_deref())?;
    if a.output_dir.is_none() {
        loaded.run.writable("crosswalk without --output-dir")?;
    }
    for n in &loaded.notes {
        eprintln!("inferbench: {n}");
    }
    // No goodput: the crosswalk compares definitions, not SLOs (whose syntax differs by set).
    let score = |set: &inferbench_metrics::DefinitionSet| {
        inferbench_run::offline::score_set(&loaded, set.name, None)
            .map(|c| c.summary)
            .map_err(|e| Failure::input(format!("{}: {}", set.name, e.message)))
    };
    let from = score(from_set)?;
    let to = score(to_set)?;
    let tok = loaded.tokenizer.clone();
    let count = move |t: &str| tok.count(t) as u64;
    let fx = facts(&loaded.evidence, &count);
    // Requests without an error whose responses carry no text: GenAI-Perf skips them but
    // counts them in its throughput numerator.
    let skipped = loaded
        .evidence
        .records_of(Phase::Profiling)
        .filter(|r| !r.is_error() && !r.events.iter().any(|e| e.has_text()))
        .count() as u64;
    let c = crosswalk(&a.from, &from, &a.to, &to, fx, skipped).map_err(Failure::input)?;
    println!("{}", render(&c));
    let out = a.output_dir.clone().unwrap_or_else(|| a.dir.clone());
    std::fs::create_dir_all(&out)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", out.display())))?;
    let json = serde_json::to_vec_pretty(&c).map_err(|e| Failure::run(e.to_string()))?;
    for (name, bytes) in [
        ("crosswalk.json", json),
        ("crosswalk.md", markdown(&c).into_bytes()),
    ] {
        let p = crate::metrics_cmd::write_file(&out, name, &bytes)?;
        eprintln!("inferbench: wrote {}", p.display());
    }
    let not = c.mappings.iter().filter(|m| !m.comparable).count();
    if not > 0 {
        eprintln!(
            "inferbench: {not} of {} rows are not comparable (see the reasons)",
            c.mappings.len()
        );
    }
    Ok(0)
}

fn render(c: &Crosswalk) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
        .set_width(200);
    t.set_header(vec![
        c.from.as_str(),
        c.to.as_str(),
        "stat",
        "unit",
        "from",
        "to",
        "diff",
        "diff %",
        "comparable",
        "why not",
    ]);
    let f = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.4}"));
    for m in &c.mappings {
        t.add_row(vec![
            m.from_metric.clone(),
            m.to_metric.clone(),
            m.stat.clone(),
            m.unit.clone(),
            f(m.from_value),
            f(m.to_value),
            f(m.difference),
            m.difference_pct
                .map_or("–".to_string(), |p| format!("{p:+.2}")),
            if m.comparable { "yes" } else { "NO" }.to_string(),
            m.reasons.join("; "),
        ]);
    }
    format!(
        "inferbench | Crosswalk {} → {}\n{t}\n{}\n",
        c.from,
        c.to,
        c.facts.sentence()
    )
}
