//! `gate.verdict` entries: a gate's verdict, recorded with the spec's digest, the runs it
//! judged and the whole verdict document (whose digest is its id).

use inferbench_run::Failure;
use inferbench_run::gate::Verdict;
use serde_json::{Value, json};

use crate::entry::{Entry, Stamp};
use crate::store::Ledger;

/// The entry body for `v`: the gate, the outcome, the runs, each rule's outcome, and the
/// verdict document itself (so the ledger alone can show why).
pub fn verdict_body(v: &Verdict) -> Value {
    let rules: Vec<Value> = v
        .rules
        .iter()
        .map(|r| json!({"id": r.id, "family": r.family, "verdict": r.verdict, "judged": r.judged}))
        .collect();
    json!({
        "gate": {"name": v.gate.name, "version": v.gate.version, "digest": v.gate.digest},
        "verdict": v.verdict,
        "exit_code": v.exit_code,
        "verdict_digest": v.digest(),
        "definition_set": v.definition_set,
        "profile": v.profile,
        "runs": {"candidate": v.runs.candidate, "baseline": v.runs.baseline},
        "rules": rules,
        "document": serde_json::to_value(v).map_err(|e| e.to_string()).unwrap_or(Value::Null),
    })
}

/// Appends `v` as a `gate.verdict` entry.
pub fn record_verdict(ledger: &Ledger, v: &Verdict, stamp: &Stamp) -> Result<Entry, Failure> {
    ledger.append(None, "gate.verdict", verdict_body(v), stamp)
}
