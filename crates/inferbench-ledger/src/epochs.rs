//! Epochs and baselines: `epoch declare` (the pins of a run, the fingerprint, the decision
//! against the parent epoch), `baseline pin` (only runs of the epoch's fingerprint whose
//! grade can gate) and `decide` (a candidate against the pinned baseline).

use std::collections::BTreeMap;

use inferbench_core::identity::{
    CATALOGUE, Decision, DecisionReport, Identity, PinClass, Provenance, decide as decide_pins,
    diff,
};
use inferbench_run::Failure;
use serde_json::{Map, Value, json};

use crate::entry::{Entry, Stamp};
use crate::packet;
use crate::store::Ledger;

pub const RUN_KINDS: &[&str] = &["run.record", "run.import"];

/// The entry a cid (or a unique prefix of its hex, 8 digits or more) names.
pub fn find<'a>(entries: &'a [Entry], cid: &str) -> Result<&'a Entry, Failure> {
    let hex = cid.strip_prefix("sha256:").unwrap_or(cid);
    if hex.len() < 8 {
        return Err(Failure::input(format!(
            "cid '{cid}': give the full sha256:… id or at least 8 hex digits of it"
        )));
    }
    let hits: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.cid["sha256:".len()..].starts_with(hex))
        .collect();
    match hits.as_slice() {
        [e] => Ok(e),
        [] => Err(Failure::input(format!(
            "unknown cid '{cid}': no ledger entry has it"
        ))),
        _ => Err(Failure::input(format!(
            "cid '{cid}' is ambiguous: {} entries start with it",
            hits.len()
        ))),
    }
}

/// A run entry by cid.
pub fn find_run<'a>(entries: &'a [Entry], cid: &str) -> Result<&'a Entry, Failure> {
    let e = find(entries, cid)?;
    if !RUN_KINDS.contains(&e.kind.as_str()) {
        return Err(Failure::input(format!(
            "cid {} is a {} entry (line {}), not a run",
            e.cid, e.kind, e.seq
        )));
    }
    Ok(e)
}

fn packet_of(e: &Entry) -> Result<&str, Failure> {
    e.body
        .get("packet")
        .and_then(Value::as_str)
        .ok_or_else(|| Failure::input(format!("line {}: body.packet: missing", e.seq)))
}

/// The identity stored in a run's packet.
pub fn run_identity(ledger: &Ledger, e: &Entry) -> Result<Identity, Failure> {
    let id = packet_of(e)?;
    let m = packet::read_manifest(ledger, id)?;
    serde_json::from_value(m["identity"].clone()).map_err(|err| {
        Failure::input(format!(
            "packet {id}: {}: identity: {err}",
            packet::MANIFEST
        ))
    })
}

/// `{contract: {...}, sut: {...}}`: the known pins of the two classes that matter, apart.
pub fn pins_of(identity: &Identity) -> Value {
    let mut contract = Map::new();
    let mut sut = Map::new();
    for s in CATALOGUE {
        if let Some(p) = identity.get(s.name) {
            match s.class {
                PinClass::Contract => contract.insert(s.name.into(), p.value.clone()),
                PinClass::Sut => sut.insert(s.name.into(), p.value.clone()),
                _ => None,
            };
        }
    }
    json!({"contract": contract, "sut": sut})
}

/// An identity back from stored pins (values only: diff and decide look at nothing else).
pub fn identity_from_pins(pins: &Value) -> Identity {
    let mut id = Identity::default();
    for class in ["contract", "sut"] {
        if let Some(o) = pins.get(class).and_then(Value::as_object) {
            for (k, v) in o {
                id.set(k, v.clone(), Provenance::Measured);
            }
        }
    }
    id
}

/// The latest `epoch.declare` entry of `name`.
pub fn find_epoch<'a>(entries: &'a [Entry], name: &str) -> Option<&'a Entry> {
    entries
        .iter()
        .rev()
        .find(|e| e.kind == "epoch.declare" && e.body["epoch"] == name)
}

fn epoch_or_err<'a>(entries: &'a [Entry], name: &str) -> Result<&'a Entry, Failure> {
    find_epoch(entries, name)
        .ok_or_else(|| Failure::input(format!("unknown epoch '{name}': no epoch.declare names it")))
}

fn valid_epoch_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Drops nulls (TOML has none), recursively.
fn tomlable(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Array(a) => Some(Value::Array(a.iter().filter_map(tomlable).collect())),
        Value::Object(o) => Some(Value::Object(
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), tomlable(v)?)))
                .collect(),
        )),
        other => Some(other.clone()),
    }
}

/// Writes `epochs/<name>.toml` from an `epoch.declare` entry (derived: it can be rewritten
/// from the ledger at any time).
pub fn write_epoch_toml(ledger: &Ledger, e: &Entry) -> Result<(), Failure> {
    let name = e.body["epoch"].as_str().unwrap_or_default();
    let mut doc = json!({
        "epoch": name,
        "cid": e.cid,
        "line": e.seq,
        "declared_at": e.at,
        "declared_by": e.by,
    });
    if let (Some(d), Some(b)) = (doc.as_object_mut(), e.body.as_object()) {
        for (k, v) in b {
            if k != "epoch" {
                d.insert(k.clone(), v.clone());
            }
        }
    }
    let doc = tomlable(&doc).unwrap_or_default();
    let text =
        toml::to_string(&doc).map_err(|err| Failure::input(format!("epoch {name}: {err}")))?;
    let dir = ledger.epochs();
    std::fs::create_dir_all(&dir)
        .map_err(|err| Failure::run(format!("{}: {err}", dir.display())))?;
    let p = dir.join(format!("{name}.toml"));
    let header = "# Derived from ledger.jsonl (regenerable); the ledger entry is the record.\n";
    std::fs::write(&p, format!("{header}{text}"))
        .map_err(|err| Failure::run(format!("{}: {err}", p.display())))
}

pub fn render_decision(r: &DecisionReport) -> String {
    let mut s = format!("decision: {} ({})\n", r.decision.as_str(), r.reason);
    for c in &r.deciding {
        let show = |v: &Option<Value>| v.as_ref().map_or("unknown".to_string(), Value::to_string);
        s.push_str(&format!(
            "  {} [{:?}/{}]: {} -> {}\n",
            c.name,
            c.class,
            c.group,
            show(&c.before),
            show(&c.after)
        ));
    }
    s
}

/// `ledger epoch declare`.
pub fn declare(
    ledger: &Ledger,
    name: &str,
    from: &str,
    parent: Option<&str>,
    reason: Option<&str>,
    stamp: &Stamp,
) -> Result<(Entry, DecisionReport), Failure> {
    if !valid_epoch_name(name) {
        return Err(Failure::input(format!(
            "--name '{name}': an epoch id is letters, digits, '-', '_' and '.' (it names epochs/<id>.toml)"
        )));
    }
    let entries = ledger.entries()?;
    let run = find_run(&entries, from)?;
    let identity = run_identity(ledger, run)?;
    let pins = pins_of(&identity);
    let report = match parent {
        None => DecisionReport {
            decision: Decision::NewEpoch,
            deciding: Vec::new(),
            reason: "no parent epoch: the first of its line".into(),
        },
        Some(p) => {
            let pe = epoch_or_err(&entries, p)?;
            decide_pins(&diff(&identity_from_pins(&pe.body["pins"]), &identity))
        }
    };
    let body = json!({
        "epoch": name,
        "pins": pins,
        "fingerprint": identity.fingerprint(),
        "decision": report.decision.as_str(),
        "decided_by": report.deciding,
        "decision_reason": report.reason,
        "parent": parent,
        "reason": reason,
        "evidence": [run.cid],
    });
    let owned = name.to_string();
    let check = move |es: &[Entry]| match find_epoch(es, &owned) {
        Some(e) => Err(Failure::input(format!(
            "epoch '{owned}' is already declared: line {} (cid {})",
            e.seq, e.cid
        ))),
        None => Ok(()),
    };
    let entry = ledger.append(Some(&check), "epoch.declare", body, stamp)?;
    write_epoch_toml(ledger, &entry)?;
    Ok((entry, report))
}

/// Why a run's grade cannot gate (its worst downgrades), from its packet's `grade.json`.
fn why_not(ledger: &Ledger, run: &Entry) -> String {
    let Ok(id) = packet_of(run) else {
        return String::new();
    };
    let Ok(g) = packet::read_json(ledger, id, packet::GRADE) else {
        return String::new();
    };
    let overall = g["overall"].clone();
    let mut reasons: Vec<String> = Vec::new();
    for m in g["metrics"].as_array().into_iter().flatten() {
        if m["tier"] != overall {
            continue;
        }
        for d in m["downgrades"].as_array().into_iter().flatten() {
            if let Some(r) = d["reason"].as_str()
                && d["tier"] == overall
                && !reasons.iter().any(|x| x == r)
            {
                reasons.push(r.to_string());
            }
        }
    }
    let more = reasons.len().saturating_sub(3);
    reasons.truncate(3);
    let mut s = reasons.join("; ");
    if more > 0 {
        s.push_str(&format!("; and {more} more"));
    }
    s
}

/// `ledger baseline pin`.
pub fn pin(
    ledger: &Ledger,
    epoch: &str,
    runs: &[String],
    purpose: Option<&str>,
    allow_comparable: bool,
    stamp: &Stamp,
) -> Result<Entry, Failure> {
    if runs.is_empty() {
        return Err(Failure::input("baseline pin: give at least one RUN_CID"));
    }
    let entries = ledger.entries()?;
    let ep = epoch_or_err(&entries, epoch)?;
    let fingerprint = ep.body["fingerprint"].as_str().unwrap_or_default();
    let epoch_id = identity_from_pins(&ep.body["pins"]);
    let mut cids = Vec::new();
    let mut tiers = Map::new();
    for c in runs {
        let run = find_run(&entries, c)?;
        let fp = run.body["fingerprint"].as_str().unwrap_or_default();
        if fp != fingerprint {
            let id = run_identity(ledger, run)?;
            let names: Vec<String> = diff(&epoch_id, &id)
                .into_iter()
                .filter(|p| p.class == PinClass::Contract)
                .map(|p| p.name)
                .collect();
            return Err(Failure::input(format!(
                "run {}: its fingerprint {fp} is not epoch {epoch}'s {fingerprint}: contract pins differ: {}",
                run.cid,
                names.join(", ")
            )));
        }
        let tier = run.body["grade"]["overall"].as_str().unwrap_or("unusable");
        match tier {
            "reference" => {}
            "comparable" if allow_comparable => {}
            "comparable" => {
                return Err(Failure::input(format!(
                    "run {} is graded comparable, not reference ({}); pass --allow-comparable to pin it anyway",
                    run.cid,
                    why_not(ledger, run)
                )));
            }
            other => {
                return Err(Failure::input(format!(
                    "run {} is graded {other} and cannot gate: {}",
                    run.cid,
                    why_not(ledger, run)
                )));
            }
        }
        tiers.insert(run.cid.clone(), json!(tier));
        cids.push(run.cid.clone());
    }
    let body = json!({
        "epoch": epoch,
        "epoch_cid": ep.cid,
        "runs": cids,
        "tiers": tiers,
        "purpose": purpose,
        "allow_comparable": allow_comparable,
    });
    ledger.append(None, "baseline.pin", body, stamp)
}

/// The latest `baseline.pin` of an epoch.
pub fn find_pin<'a>(entries: &'a [Entry], epoch: &str) -> Option<&'a Entry> {
    entries
        .iter()
        .rev()
        .find(|e| e.kind == "baseline.pin" && e.body["epoch"] == epoch)
}

/// What `decide` found.
#[derive(Clone, Debug)]
pub struct Decided {
    pub epoch: String,
    /// The baseline run it was decided against (None: the epoch's own pins).
    pub baseline: Option<String>,
    pub report: DecisionReport,
}

impl Decided {
    pub fn render(&self) -> String {
        let against = match &self.baseline {
            Some(b) => format!("pinned baseline run {b} of epoch {}", self.epoch),
            None => format!("epoch {}'s pins (no baseline pinned)", self.epoch),
        };
        format!("against {against}\n{}", render_decision(&self.report))
    }
}

/// `ledger decide RUN_CID [--against EPOCH]`: the candidate against the epoch's pinned
/// baseline (its first run), or the epoch's pins when none is pinned. Without `--against`,
/// the epoch whose fingerprint the run carries, else the latest declared.
pub fn decide(ledger: &Ledger, cid: &str, against: Option<&str>) -> Result<Decided, Failure> {
    let entries = ledger.entries()?;
    let run = find_run(&entries, cid)?;
    let cand = run_identity(ledger, run)?;
    let epoch = match against {
        Some(a) => epoch_or_err(&entries, a)?,
        None => entries
            .iter()
            .rev()
            .find(|e| e.kind == "epoch.declare" && e.body["fingerprint"] == run.body["fingerprint"])
            .or_else(|| entries.iter().rev().find(|e| e.kind == "epoch.declare"))
            .ok_or_else(|| Failure::input("no epoch declared yet: `ledger epoch declare` first"))?,
    };
    let name = epoch.body["epoch"].as_str().unwrap_or_default().to_string();
    let (base, baseline) = match find_pin(&entries, &name)
        .and_then(|p| p.body["runs"].get(0))
        .and_then(Value::as_str)
    {
        Some(b) => (
            run_identity(ledger, find_run(&entries, b)?)?,
            Some(b.to_string()),
        ),
        None => (identity_from_pins(&epoch.body["pins"]), None),
    };
    Ok(Decided {
        epoch: name,
        baseline,
        report: decide_pins(&diff(&base, &cand)),
    })
}

/// Per epoch: its latest pin's run cids (for `show`).
pub fn pinned(entries: &[Entry]) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for e in entries.iter().filter(|e| e.kind == "baseline.pin") {
        let runs = e.body["runs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        out.insert(
            e.body["epoch"].as_str().unwrap_or_default().to_string(),
            runs,
        );
    }
    out
}
