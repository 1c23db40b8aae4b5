//! `comparison.record` entries (`compare --ledger DIR`): which runs of the ledger were
//! compared, under which definition set and margins, each metric's verdict, the overall
//! verdict and the digest of the report, so the ledger alone can say what was shown.
//!
//! Sides are named by run entry cids: a side given as a directory is found in the ledger
//! ([`run_of_dir`]), and one that is not there is refused.

use std::path::Path;

use inferbench_core::canonical;
use inferbench_run::Failure;
use inferbench_run::compare::{Report, Verdict};
use serde_json::{Map, Value, json};

use crate::entry::{Entry, Stamp};
use crate::epochs::RUN_KINDS;
use crate::packet::{self, IMPORT_DIR, PacketFile};
use crate::store::Ledger;

pub const KIND: &str = "comparison.record";

/// `sha256:` of the canonical form of the report's JSON document (`compare --json`).
pub fn report_digest(report: &Report) -> Result<String, Failure> {
    // Through the JSON text: the document a reader has is what the digest covers.
    let doc: Value = serde_json::from_str(&report.to_json())
        .map_err(|e| Failure::run(format!("compare report: {e}")))?;
    canonical::digest(&doc).map_err(Failure::run)
}

/// The overall verdict: `worse` if any metric is, else `inconclusive` if any is (or there
/// is none), else `better` when every metric is, else `equivalent`.
pub fn overall(report: &Report) -> &'static str {
    let vs: Vec<Verdict> = report.metrics.iter().map(|m| m.verdict).collect();
    if vs.contains(&Verdict::Worse) {
        "worse"
    } else if vs.is_empty() || vs.contains(&Verdict::Inconclusive) {
        "inconclusive"
    } else if vs.iter().all(|v| *v == Verdict::Better) {
        "better"
    } else {
        "equivalent"
    }
}

/// The entry body for `report`, whose sides are the run entries `baseline` and `candidate`.
pub fn comparison_body(
    report: &Report,
    baseline: &[String],
    candidate: &[String],
) -> Result<Value, Failure> {
    let mut margins = Map::new();
    let mut verdicts = Map::new();
    for m in &report.metrics {
        margins.insert(m.key.clone(), json!(m.margin.text));
        verdicts.insert(m.key.clone(), json!(m.verdict.as_str()));
    }
    Ok(json!({
        "baseline": baseline,
        "candidate": candidate,
        "definition_set": report.definition_set,
        "margins": {"source": report.margins, "by_metric": margins},
        "alpha": report.alpha,
        "verdicts": verdicts,
        "overall": overall(report),
        "worse": report.worse,
        "epoch_matched": report.epoch.matched,
        "report_digest": report_digest(report)?,
    }))
}

/// Appends the comparison; every side cid must be a run entry of the ledger.
pub fn record(
    ledger: &Ledger,
    report: &Report,
    baseline: &[String],
    candidate: &[String],
    stamp: &Stamp,
) -> Result<Entry, Failure> {
    let body = comparison_body(report, baseline, candidate)?;
    let sides: Vec<String> = baseline.iter().chain(candidate).cloned().collect();
    let check = move |entries: &[Entry]| -> Result<(), Failure> {
        for cid in &sides {
            if !entries
                .iter()
                .any(|e| &e.cid == cid && RUN_KINDS.contains(&e.kind.as_str()))
            {
                return Err(Failure::input(format!(
                    "{cid}: not a run entry of the ledger"
                )));
            }
        }
        Ok(())
    };
    ledger.append(Some(&check), KIND, body, stamp)
}

fn file_digest(p: &Path) -> Result<String, Failure> {
    packet::file_digest(p)
        .map(|(d, _)| d)
        .map_err(|e| Failure::input(format!("{}: {e}", p.display())))
}

fn files_below(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) -> Result<(), Failure> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?
        .filter_map(Result::ok)
        .collect();
    names.sort_by_key(|e| e.file_name());
    for e in names {
        let name = e.file_name().to_string_lossy().into_owned();
        let r = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let p = e.path();
        if p.is_dir() {
            files_below(&p, &r, out)?;
        } else if p.is_file() {
            out.push((r, file_digest(&p)?));
        }
    }
    Ok(())
}

/// The run entry of a directory: a packet of this ledger (by its id, the digest of its
/// manifest), a run of ours (by the digest of its evidence file, which its packet records),
/// or an imported artifact directory (by the digests of its files, which the `run.import`
/// entry lists). Anything else is a one-line error.
pub fn run_of_dir<'a>(
    ledger: &Ledger,
    entries: &'a [Entry],
    dir: &Path,
) -> Result<&'a Entry, Failure> {
    let runs = || {
        entries
            .iter()
            .filter(|e| RUN_KINDS.contains(&e.kind.as_str()))
    };
    let packet_id = |e: &Entry| {
        e.body
            .get("packet")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let manifest = dir.join(packet::MANIFEST);
    let evidence = inferbench_artifacts::evidence_file_in(dir);
    let hits: Vec<&Entry> = if manifest.is_file() && evidence.is_none() {
        let id = file_digest(&manifest)?;
        runs().filter(|e| packet_id(e) == id).collect()
    } else if let Some(evidence) = evidence {
        let digest = packet::evidence_digest(&evidence)
            .map(|(d, _)| d)
            .map_err(|e| Failure::input(format!("{}: {e}", evidence.display())))?;
        runs()
            .filter(|e| e.kind == "run.record")
            .filter(|e| {
                packet::read_manifest(ledger, &packet_id(e))
                    .is_ok_and(|m| m["evidence"]["sha256"] == digest.as_str())
            })
            .collect()
    } else if dir.is_dir() {
        let mut have = Vec::new();
        files_below(dir, "", &mut have)?;
        runs()
            .filter(|e| e.kind == "run.import")
            .filter(|e| {
                let listed: Vec<(String, String)> = serde_json::from_value::<Vec<PacketFile>>(
                    e.body["source"]["artifacts"].clone(),
                )
                .unwrap_or_default()
                .into_iter()
                .map(|f| {
                    let rel = f.path[IMPORT_DIR.len() + 1..].to_string();
                    (rel, f.sha256)
                })
                .collect();
                !listed.is_empty() && listed == have
            })
            .collect()
    } else {
        return Err(Failure::input(format!(
            "{}: no such directory",
            dir.display()
        )));
    };
    match hits.as_slice() {
        [e] => Ok(e),
        [] => Err(Failure::input(format!(
            "{}: not in the ledger {} (record it with `ledger add` or `ledger import` first, or give a run cid)",
            dir.display(),
            ledger.dir.display()
        ))),
        many => Err(Failure::input(format!(
            "{}: {} run entries of the ledger hold this run (lines {}): give the run cid",
            dir.display(),
            many.len(),
            many.iter()
                .map(|e| e.seq.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
