//! `runs::resolve` (a run cid or a packet id to the packet directory) and the bridge
//! report's sections that need no run packet: gate verdicts, new epochs, counts, the
//! `bridge.record` entry, and the same bytes twice. Entries are appended by hand here; the
//! whole report over real packets is tested through the binary (`tests/bridge_report.rs`).

use std::path::PathBuf;

use inferbench_ledger::{Ledger, Stamp, bridge, runs};
use serde_json::json;

/// A path that does not exist yet (the ledger's directory, made by `Ledger::init`) in a fresh
/// directory; that directory is removed, with all under it, when the guard drops.
fn tmpdir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::Builder::new()
        .prefix(&format!("inferbench-ledger-bridge-{name}-"))
        .tempdir()
        .unwrap();
    let d = root.path().join(name);
    (root, d)
}

fn at(s: &str) -> Stamp {
    Stamp {
        at: s.into(),
        by: "tester".into(),
    }
}

const T: &str = "2026-12-01T10:00:00Z";

#[test]
fn resolve_takes_a_run_cid_or_a_packet_id_and_names_what_is_wrong() {
    let (_tmp, d) = tmpdir("resolve");
    let l = Ledger::init(&d, &at(T)).unwrap();
    let id = format!("sha256:{}", "ab".repeat(32));
    let dir = l.packets().join(id.replacen(':', "-", 1));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("manifest.json"), "{}").unwrap();
    let run = l
        .append(None, "run.record", json!({"packet": id}), &at(T))
        .unwrap();
    let hex = &run.cid["sha256:".len()..];
    assert_eq!(runs::resolve(&l, &run.cid).unwrap(), dir);
    assert_eq!(runs::resolve(&l, &hex[..8]).unwrap(), dir);
    // The packet id, whole, as a directory name, or by 8 hex digits.
    assert_eq!(runs::resolve(&l, &id).unwrap(), dir);
    assert_eq!(
        runs::resolve(&l, &format!("sha256-{}", "ab".repeat(32))).unwrap(),
        dir
    );
    assert_eq!(runs::resolve(&l, "abababab").unwrap(), dir);
    // Too short, unknown, not a run, a packet that is gone.
    let e = runs::resolve(&l, "abab").unwrap_err().message;
    assert!(e.contains("at least 8 hex digits"), "{e}");
    let e = runs::resolve(&l, "cdcdcdcd").unwrap_err().message;
    assert!(e.contains("unknown cid 'cdcdcdcd'"), "{e}");
    let other = l
        .append(None, "run.classify", json!({"note": 1}), &at(T))
        .unwrap();
    let e = runs::resolve(&l, &other.cid).unwrap_err().message;
    assert!(e.contains("is a run.classify entry"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    let e = runs::resolve(&l, &run.cid).unwrap_err().message;
    assert!(e.contains("is missing"), "{e}");
}

#[test]
fn the_report_lists_gate_verdicts_and_new_epochs_and_records_its_digest() {
    let (_tmp, d) = tmpdir("gates");
    let l = Ledger::init(&d, &at(T)).unwrap();
    let run = format!("sha256:{}", "12".repeat(32));
    let gate = l
        .append(
            None,
            "gate.verdict",
            json!({
                "gate": {"name": "nightly", "version": 3, "digest": format!("sha256:{}", "9".repeat(64))},
                "verdict": "FAIL",
                "runs": {"candidate": [run], "baseline": []},
            }),
            &at(T),
        )
        .unwrap();
    let epoch = l
        .append(
            None,
            "epoch.declare",
            json!({
                "epoch": "e2",
                "decision": "new-epoch",
                "decided_by": [{"name": "workload_digest", "before": "a", "after": "b"}],
                "decision_reason": "the contract changed: workload_digest",
                "parent": "e1",
                "reason": "new dataset",
                "evidence": [run],
            }),
            &at(T),
        )
        .unwrap();
    let bridged = l
        .append(
            None,
            "epoch.declare",
            json!({"epoch": "e3", "decision": "bridge", "decided_by": [{"name": "harness"}],
                   "decision_reason": "only the harness changed", "parent": "e2", "reason": null,
                   "evidence": [run]}),
            &at(T),
        )
        .unwrap();
    let r = bridge::report(&l).unwrap();
    assert_eq!(r.gates.len(), 1);
    assert_eq!(r.gates[0].cid, gate.cid);
    assert_eq!(r.gates[0].verdict, "FAIL");
    assert_eq!(r.gates[0].gate["name"], "nightly");
    assert_eq!(r.gates[0].gate["version"], 3);
    assert_eq!(r.gates[0].runs["candidate"][0], run.as_str());
    assert_eq!(r.new_epochs.len(), 1, "only the new-epoch declaration");
    let n = &r.new_epochs[0];
    assert_eq!(
        (n.epoch.as_str(), n.cid.as_str()),
        ("e2", epoch.cid.as_str())
    );
    assert_eq!(n.parent.as_deref(), Some("e1"));
    assert_eq!(n.decided_by[0]["name"], "workload_digest");
    // The bridge decision is conditional, with its deciding pin.
    assert_eq!(r.conditional.decisions.len(), 1);
    let d = &r.conditional.decisions[0];
    assert_eq!((d.epoch.as_str(), d.outcome.as_str()), ("e3", "bridge"));
    assert_eq!(
        (d.source, d.pins.clone()),
        ("epoch.declare", vec!["harness".to_string()])
    );
    assert_eq!(r.counts.gates, 1);
    assert_eq!(r.counts.new_epochs, 1);
    assert_eq!(r.counts.conditional, 1);
    assert_eq!(r.ledger.head, bridged.hash);
    assert_eq!(r.ledger.entries, 4);
    let md = r.markdown();
    assert!(
        md.contains(&format!("| `{}` **FAIL** | nightly | 3 |", &gate.cid[..19])),
        "{md}"
    );
    assert!(md.contains("| e2 |"), "{md}");
    // Same ledger, same bytes.
    let again = bridge::report(&l).unwrap();
    assert_eq!(again.to_json().unwrap(), r.to_json().unwrap());
    assert_eq!(again.markdown(), md);
    // The record: the digest of the canonical JSON, the counts; stale reports refused.
    let rec = bridge::record(&l, &r, &at(T)).unwrap();
    assert_eq!(rec.kind, "bridge.record");
    let json = r.to_json().unwrap();
    assert_eq!(
        rec.body["report_digest"],
        inferbench_core::canonical::sha256_id(json.trim_end().as_bytes())
    );
    assert_eq!(rec.body["counts"]["gates"], 1);
    let e = bridge::record(&l, &r, &at(T)).unwrap_err().message;
    assert!(e.contains("the ledger changed"), "{e}");
}
