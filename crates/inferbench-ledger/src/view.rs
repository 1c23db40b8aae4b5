//! `ledger show` and `ledger log`, rendered to text.

use serde_json::Value;

use crate::entry::Entry;
use crate::epochs::{RUN_KINDS, pinned};

fn short(id: &str) -> &str {
    // `sha256:` and 12 hex digits: enough to tell entries apart by eye and to pass to `decide`.
    id.get(..19).unwrap_or(id)
}

/// One line per entry: `seq at by kind cid what`.
pub fn log(entries: &[Entry]) -> String {
    let mut s = String::new();
    for e in entries {
        let b = &e.body;
        let what = match e.kind.as_str() {
            "ledger.init" => format!("format {}", b["format"]),
            "run.record" | "run.import" => format!(
                "packet {} grade {}",
                short(b["packet"].as_str().unwrap_or("?")),
                b["grade"]["overall"].as_str().unwrap_or("?")
            ),
            "epoch.declare" => format!(
                "epoch {} {} fingerprint {}",
                b["epoch"].as_str().unwrap_or("?"),
                b["decision"].as_str().unwrap_or("?"),
                short(b["fingerprint"].as_str().unwrap_or("?"))
            ),
            "baseline.pin" => format!(
                "epoch {} runs {}",
                b["epoch"].as_str().unwrap_or("?"),
                b["runs"].as_array().map_or(0, Vec::len)
            ),
            "comparison.record" => format!(
                "{} runs against {} under {}: {}",
                b["candidate"].as_array().map_or(0, Vec::len),
                b["baseline"].as_array().map_or(0, Vec::len),
                b["definition_set"].as_str().unwrap_or("?"),
                b["overall"].as_str().unwrap_or("?")
            ),
            "bridge.record" => format!(
                "report {}",
                short(b["report_digest"].as_str().unwrap_or("?"))
            ),
            _ => String::new(),
        };
        s.push_str(&format!(
            "{:>4} {} {} {:<17} {} {what}\n",
            e.seq,
            e.at,
            e.by,
            e.kind,
            short(&e.cid)
        ));
    }
    s
}

/// The head, the epochs, the pinned baselines and the runs with their tiers.
pub fn show(entries: &[Entry]) -> String {
    let mut s = String::new();
    match entries.last() {
        Some(h) => s.push_str(&format!("head: line {} hash {}\n", h.seq, h.hash)),
        None => s.push_str("head: (empty)\n"),
    }
    s.push_str("\nepochs:\n");
    let pins = pinned(entries);
    for e in entries.iter().filter(|e| e.kind == "epoch.declare") {
        let b = &e.body;
        let name = b["epoch"].as_str().unwrap_or("?");
        s.push_str(&format!(
            "  {name}: {} (parent {}), fingerprint {}, cid {}\n",
            b["decision"].as_str().unwrap_or("?"),
            b["parent"].as_str().unwrap_or("none"),
            short(b["fingerprint"].as_str().unwrap_or("?")),
            short(&e.cid)
        ));
        match pins.get(name) {
            Some(runs) => {
                s.push_str("    baseline:");
                for r in runs {
                    s.push_str(&format!(" {}", short(r)));
                }
                s.push('\n');
            }
            None => s.push_str("    baseline: none pinned\n"),
        }
    }
    s.push_str("\nruns:\n");
    for e in entries
        .iter()
        .filter(|e| RUN_KINDS.contains(&e.kind.as_str()))
    {
        let g = &e.body["grade"];
        let mut counts: Vec<(String, usize)> = Vec::new();
        if let Some(m) = g["metrics"].as_object() {
            for t in m.values().filter_map(Value::as_str) {
                match counts.iter_mut().find(|(k, _)| k == t) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((t.to_string(), 1)),
                }
            }
        }
        counts.sort();
        let tiers: Vec<String> = counts.iter().map(|(t, n)| format!("{n} {t}")).collect();
        let epoch = entries
            .iter()
            .rev()
            .find(|x| x.kind == "epoch.declare" && x.body["fingerprint"] == e.body["fingerprint"])
            .and_then(|x| x.body["epoch"].as_str())
            .unwrap_or("-");
        s.push_str(&format!(
            "  {} line {} {} epoch {epoch}: {} ({})\n",
            short(&e.cid),
            e.seq,
            e.kind,
            g["overall"].as_str().unwrap_or("?"),
            tiers.join(", ")
        ));
    }
    s
}
