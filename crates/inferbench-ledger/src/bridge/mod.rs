//! The bridge report (`inferbench bridge report LEDGER`): the migration packet, built from
//! the ledger alone. What was preserved (the legacy runs, their grades, the epochs they
//! anchor), which mappings were validated (the crosswalk of each legacy run's native set to
//! `aiperf-0.13`, and `comparison.record`s of legacy against our runs on the same
//! deployment), where comparison stays conditional and why, what needed a new epoch, and
//! the gate verdicts recorded. The same ledger gives the same bytes: everything is read in
//! ledger order or sorted, and nothing depends on the clock or the paths.
//!
//! JSON schema: `docs/schemas/bridge-report.schema.json`; Markdown: [`render::markdown`].

pub mod render;

use std::collections::BTreeMap;

use inferbench_core::grade::{Grade, Tier};
use inferbench_core::identity::{CATALOGUE, Identity, PinClass};
use inferbench_core::{Phase, canonical};
use inferbench_run::Failure;
use serde::Serialize;
use serde_json::{Value, json};

use crate::entry::{Entry, Stamp};
use crate::epochs;
use crate::packet::{self, PacketFile};
use crate::store::Ledger;

pub const SCHEMA: &str = "inferbench.bridge-report/1";
/// The definition set legacy runs are mapped to.
pub const TARGET_SET: &str = "aiperf-0.13";
pub const RECORD_KIND: &str = "bridge.record";

/// `sha256:` and 12 hex digits, as `ledger log` prints a cid.
pub fn short(cid: &str) -> String {
    cid.get(..19).unwrap_or(cid).to_string()
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    /// The ledger state reported on: its last entry's hash and the number of entries.
    pub ledger: LedgerState,
    pub preserved: Vec<LegacyRun>,
    /// Our runs in the ledger (named by the other sections).
    pub ours: Vec<OurRun>,
    pub mappings: Vec<RunMapping>,
    pub equivalence: Vec<Equivalence>,
    pub conditional: Conditional,
    pub new_epochs: Vec<NewEpoch>,
    pub gates: Vec<GateVerdict>,
    pub counts: Counts,
}

#[derive(Clone, Debug, Serialize)]
pub struct LedgerState {
    pub head: String,
    pub entries: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LegacyRun {
    pub run: String,
    pub short: String,
    pub line: u64,
    pub tool: String,
    pub version: String,
    pub importer: String,
    pub packet: String,
    pub artifacts: Vec<PacketFile>,
    pub definition_set: String,
    pub overall: String,
    /// Metric → tier.
    pub tiers: BTreeMap<String, String>,
    /// Epochs whose declaration rests on this run, or that pin it as baseline.
    pub epochs: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct OurRun {
    pub run: String,
    pub short: String,
    pub line: u64,
    pub harness: Value,
    pub definition_set: String,
    pub overall: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunMapping {
    pub run: String,
    pub short: String,
    pub from: String,
    pub to: String,
    /// Profiling requests without an error the evidence facts were read from.
    pub records: u64,
    pub rows: Vec<MappingRow>,
}

/// One metric pair of the crosswalk (values are not reported: for a GenAI-Perf set they
/// rest on the run's tokenizer, which the ledger does not hold; `crosswalk DIR` shows them).
#[derive(Clone, Debug, Serialize)]
pub struct MappingRow {
    pub from_metric: String,
    pub to_metric: String,
    pub comparable: bool,
    pub reasons: Vec<String>,
    pub conditions: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Equivalence {
    pub comparison: String,
    pub short: String,
    pub line: u64,
    pub baseline: Vec<String>,
    pub candidate: Vec<String>,
    pub definition_set: String,
    pub overall: String,
    /// Metric key → verdict.
    pub verdicts: BTreeMap<String, String>,
    /// SUT pin → value, known and equal on every side (the deployment pins among them).
    pub sut: BTreeMap<String, Value>,
    /// SUT pins known on some sides only: not shown equal.
    pub sut_one_sided: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Conditional {
    /// Metrics of a run graded `comparable` or below, with the fields behind the downgrades.
    pub grades: Vec<ConditionalGrade>,
    /// `decide` outcomes `bridge` or `insufficient`: our runs against the epochs legacy runs
    /// anchor, and epoch declarations so decided.
    pub decisions: Vec<ConditionalDecision>,
    /// Inconclusive metrics of recorded comparisons.
    pub inconclusive: Vec<InconclusiveMetric>,
    /// Legacy-against-ours comparisons not shown to be on the same deployment: a
    /// [`DEPLOYMENT_PINS`] pin unknown on a side, or a SUT pin that differs.
    pub sut: Vec<SutProblem>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ConditionalGrade {
    pub run: String,
    pub short: String,
    pub metric: String,
    pub tier: String,
    pub downgrades: Vec<Downgrade>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Downgrade {
    pub field: String,
    pub tier: String,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ConditionalDecision {
    /// The run decided (our run), or the epoch's evidence run for a declaration.
    pub run: String,
    pub short: String,
    pub epoch: String,
    /// `decide` (computed now against the epoch) or `epoch.declare` (as recorded).
    pub source: &'static str,
    pub outcome: String,
    pub reason: String,
    /// The deciding pins.
    pub pins: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct InconclusiveMetric {
    pub comparison: String,
    pub short: String,
    pub metric: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct SutProblem {
    pub comparison: String,
    pub short: String,
    /// `unknown` or `differs`.
    pub status: &'static str,
    /// The SUT pins unknown on a side, or differing.
    pub pins: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct NewEpoch {
    pub epoch: String,
    pub cid: String,
    pub short: String,
    pub line: u64,
    pub parent: Option<String>,
    pub reason: Option<String>,
    pub decision_reason: String,
    /// The deciding pin changes as recorded (`name`, `class`, `group`, `before`, `after`).
    pub decided_by: Vec<Value>,
    pub evidence: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GateVerdict {
    pub cid: String,
    pub short: String,
    pub line: u64,
    pub gate: Value,
    pub verdict: String,
    pub runs: Value,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Counts {
    pub legacy_runs: usize,
    pub our_runs: usize,
    pub mappings_comparable: usize,
    pub mappings_not_comparable: usize,
    pub equivalence: usize,
    pub conditional: usize,
    pub new_epochs: usize,
    pub gates: usize,
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect()
}

/// A word count: the crosswalk's decisions never rest on it (only the multi-token fact does,
/// and no mapping checks that), and the report shows no values.
fn words(t: &str) -> u64 {
    t.split_whitespace().count() as u64
}

/// The crosswalk of a legacy run from its native set to [`TARGET_SET`].
fn mapping(ledger: &Ledger, e: &Entry) -> Result<RunMapping, Failure> {
    let id = s(&e.body["packet"]);
    let from = s(&e.body["definition_set"]);
    // The import's records as rebuilt (and counted) when it was imported.
    let ev = inferbench_run::rundir::collect_evidence(inferbench_run::rundir::packet_records(
        &packet::packet_dir(ledger, &id),
    )?)?;
    let score = |set: &str| {
        inferbench_metrics::compute_set(set, &ev, Phase::Profiling, &words, None, 0.95)
            .map(|c| c.summary)
            .map_err(|err| Failure::input(format!("packet {id}: {set}: {err}")))
    };
    let (a, b) = (score(&from)?, score(TARGET_SET)?);
    let fx = inferbench_metrics::crosswalk::facts(&ev, &words);
    let skipped = ev
        .records_of(Phase::Profiling)
        .filter(|r| !r.is_error() && !r.events.iter().any(|x| x.has_text()))
        .count() as u64;
    let records = fx.records;
    let c = inferbench_metrics::crosswalk::crosswalk(&from, &a, TARGET_SET, &b, fx, skipped)
        .map_err(|err| Failure::input(format!("packet {id}: {err}")))?;
    let mut rows: Vec<MappingRow> = Vec::new();
    for m in c.mappings {
        if rows
            .iter()
            .any(|r| r.from_metric == m.from_metric && r.to_metric == m.to_metric)
        {
            continue;
        }
        rows.push(MappingRow {
            from_metric: m.from_metric,
            to_metric: m.to_metric,
            comparable: m.comparable,
            reasons: m.reasons,
            conditions: m.conditions,
        });
    }
    Ok(RunMapping {
        run: e.cid.clone(),
        short: short(&e.cid),
        from,
        to: TARGET_SET.into(),
        records,
        rows,
    })
}

/// The SUT pins of an identity, known ones only.
fn sut_pins(id: &Identity) -> BTreeMap<String, Value> {
    CATALOGUE
        .iter()
        .filter(|p| p.class == PinClass::Sut)
        .filter_map(|p| {
            id.get(p.name)
                .map(|v| (p.name.to_string(), v.value.clone()))
        })
        .collect()
}

/// The SUT pins that name the deployment: a comparison shows the same deployment only when
/// they are known on every side (the server image by digest and the weights).
pub const DEPLOYMENT_PINS: &[&str] = &["image_digest", "model_revision"];

/// What the SUT pins of every run of both sides show.
struct SutCheck {
    /// `equal`, `unknown` or `differs`.
    status: &'static str,
    /// The pins behind `unknown` (deployment pins missing on a side) or `differs`.
    pins: Vec<String>,
    /// Pins known and equal on every side.
    equal: BTreeMap<String, Value>,
    /// Pins known on some sides only: not shown equal, listed with the evidence.
    one_sided: Vec<String>,
}

/// `differs` when a pin known on two sides differs; `unknown` when a deployment pin is
/// missing on a side; else `equal`.
fn sut_check(sides: &[BTreeMap<String, Value>]) -> SutCheck {
    let mut c = SutCheck {
        status: "equal",
        pins: Vec::new(),
        equal: BTreeMap::new(),
        one_sided: Vec::new(),
    };
    let mut differs = Vec::new();
    let mut missing = Vec::new();
    for p in CATALOGUE.iter().filter(|p| p.class == PinClass::Sut) {
        let known: Vec<&Value> = sides.iter().filter_map(|m| m.get(p.name)).collect();
        if known.windows(2).any(|w| w[0] != w[1]) {
            differs.push(p.name.to_string());
        } else if known.len() == sides.len() && !known.is_empty() {
            c.equal.insert(p.name.to_string(), known[0].clone());
        } else {
            if DEPLOYMENT_PINS.contains(&p.name) {
                missing.push(p.name.to_string());
            }
            if !known.is_empty() {
                c.one_sided.push(p.name.to_string());
            }
        }
    }
    if !differs.is_empty() {
        (c.status, c.pins) = ("differs", differs);
    } else if !missing.is_empty() {
        (c.status, c.pins) = ("unknown", missing);
    }
    c
}

fn tier_at_most_comparable(t: Tier) -> bool {
    !matches!(t, Tier::Reference)
}

fn grades_of(ledger: &Ledger, e: &Entry, out: &mut Vec<ConditionalGrade>) -> Result<(), Failure> {
    let id = s(&e.body["packet"]);
    let g: Grade = serde_json::from_value(packet::read_json(ledger, &id, packet::GRADE)?)
        .map_err(|err| Failure::input(format!("packet {id}: {}: {err}", packet::GRADE)))?;
    for m in g.metrics.iter().filter(|m| tier_at_most_comparable(m.tier)) {
        out.push(ConditionalGrade {
            run: e.cid.clone(),
            short: short(&e.cid),
            metric: m.metric.clone(),
            tier: m.tier.as_str().to_string(),
            downgrades: m
                .downgrades
                .iter()
                .map(|d| Downgrade {
                    field: d.field.clone(),
                    tier: d.tier.as_str().to_string(),
                    reason: d.reason.clone(),
                })
                .collect(),
        });
    }
    Ok(())
}

/// Builds the report from the ledger in `ledger`.
pub fn report(ledger: &Ledger) -> Result<Report, Failure> {
    let entries = ledger.entries()?;
    let kind = |k: &'static str| entries.iter().filter(move |e| e.kind == k);
    let imports: Vec<&Entry> = kind("run.import").collect();
    let ours_e: Vec<&Entry> = kind("run.record").collect();
    let is_import = |cid: &str| imports.iter().any(|e| e.cid == cid);
    let is_ours = |cid: &str| ours_e.iter().any(|e| e.cid == cid);

    // Epochs a run anchors: declared from it, or pinned as its baseline.
    let mut anchors: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in kind("epoch.declare") {
        for r in strings(&e.body["evidence"]) {
            anchors.entry(r).or_default().push(s(&e.body["epoch"]));
        }
    }
    for e in kind("baseline.pin") {
        for r in strings(&e.body["runs"]) {
            anchors.entry(r).or_default().push(s(&e.body["epoch"]));
        }
    }
    for v in anchors.values_mut() {
        v.sort();
        v.dedup();
    }

    let mut preserved = Vec::new();
    let mut mappings = Vec::new();
    let mut conditional = Conditional::default();
    for e in &imports {
        let b = &e.body;
        preserved.push(LegacyRun {
            run: e.cid.clone(),
            short: short(&e.cid),
            line: e.seq,
            tool: s(&b["source"]["tool"]),
            version: s(&b["source"]["version"]),
            importer: s(&b["importer"]),
            packet: s(&b["packet"]),
            artifacts: serde_json::from_value(b["source"]["artifacts"].clone()).unwrap_or_default(),
            definition_set: s(&b["definition_set"]),
            overall: s(&b["grade"]["overall"]),
            tiers: b["grade"]["metrics"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), s(v)))
                .collect(),
            epochs: anchors.get(&e.cid).cloned().unwrap_or_default(),
        });
        mappings.push(mapping(ledger, e)?);
        grades_of(ledger, e, &mut conditional.grades)?;
    }
    let mut ours = Vec::new();
    for e in &ours_e {
        ours.push(OurRun {
            run: e.cid.clone(),
            short: short(&e.cid),
            line: e.seq,
            harness: e.body["harness"].clone(),
            definition_set: s(&e.body["definition_set"]),
            overall: s(&e.body["grade"]["overall"]),
        });
        grades_of(ledger, e, &mut conditional.grades)?;
    }

    // decide: each of our runs against each epoch a legacy run anchors.
    let legacy_epochs: Vec<String> = {
        let mut v: Vec<String> = imports
            .iter()
            .flat_map(|e| anchors.get(&e.cid).cloned().unwrap_or_default())
            .collect();
        v.sort();
        v.dedup();
        v
    };
    for e in &ours_e {
        for ep in &legacy_epochs {
            let d = epochs::decide(ledger, &e.cid, Some(ep))?;
            let outcome = d.report.decision.as_str();
            if matches!(outcome, "bridge" | "insufficient") {
                conditional.decisions.push(ConditionalDecision {
                    run: e.cid.clone(),
                    short: short(&e.cid),
                    epoch: ep.clone(),
                    source: "decide",
                    outcome: outcome.to_string(),
                    reason: d.report.reason.clone(),
                    pins: d.report.deciding.iter().map(|c| c.name.clone()).collect(),
                });
            }
        }
    }
    let mut new_epochs = Vec::new();
    for e in kind("epoch.declare") {
        let b = &e.body;
        let decision = s(&b["decision"]);
        let decided_by: Vec<Value> = b["decided_by"].as_array().cloned().unwrap_or_default();
        let evidence = strings(&b["evidence"]);
        if matches!(decision.as_str(), "bridge" | "insufficient") {
            let run = evidence.first().cloned().unwrap_or_default();
            conditional.decisions.push(ConditionalDecision {
                short: short(&run),
                run,
                epoch: s(&b["epoch"]),
                source: "epoch.declare",
                outcome: decision.clone(),
                reason: s(&b["decision_reason"]),
                pins: decided_by.iter().map(|c| s(&c["name"])).collect(),
            });
        }
        if decision == "new-epoch" {
            new_epochs.push(NewEpoch {
                epoch: s(&b["epoch"]),
                cid: e.cid.clone(),
                short: short(&e.cid),
                line: e.seq,
                parent: b["parent"].as_str().map(str::to_string),
                reason: b["reason"].as_str().map(str::to_string),
                decision_reason: s(&b["decision_reason"]),
                decided_by,
                evidence,
            });
        }
    }

    let identity = |cid: &str| -> Result<Identity, Failure> {
        epochs::run_identity(ledger, epochs::find_run(&entries, cid)?)
    };
    let mut equivalence = Vec::new();
    for e in kind("comparison.record") {
        let b = &e.body;
        let (base, cand) = (strings(&b["baseline"]), strings(&b["candidate"]));
        let verdicts: BTreeMap<String, String> = b["verdicts"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), s(v)))
            .collect();
        for (k, v) in &verdicts {
            if v == "inconclusive" {
                conditional.inconclusive.push(InconclusiveMetric {
                    comparison: e.cid.clone(),
                    short: short(&e.cid),
                    metric: k.clone(),
                });
            }
        }
        // Legacy (imported) baseline against our candidate: evidence for the bridge.
        let bridging = !base.is_empty()
            && !cand.is_empty()
            && base.iter().all(|c| is_import(c))
            && cand.iter().all(|c| is_ours(c));
        if !bridging {
            continue;
        }
        let mut sides = Vec::new();
        for c in base.iter().chain(&cand) {
            sides.push(sut_pins(&identity(c)?));
        }
        let sut = sut_check(&sides);
        if sut.status != "equal" {
            conditional.sut.push(SutProblem {
                comparison: e.cid.clone(),
                short: short(&e.cid),
                status: sut.status,
                pins: sut.pins,
            });
            continue;
        }
        equivalence.push(Equivalence {
            comparison: e.cid.clone(),
            short: short(&e.cid),
            line: e.seq,
            baseline: base,
            candidate: cand,
            definition_set: s(&b["definition_set"]),
            overall: s(&b["overall"]),
            verdicts,
            sut: sut.equal,
            sut_one_sided: sut.one_sided,
        });
    }
    let gates: Vec<GateVerdict> = kind("gate.verdict")
        .map(|e| GateVerdict {
            cid: e.cid.clone(),
            short: short(&e.cid),
            line: e.seq,
            gate: e.body["gate"].clone(),
            verdict: s(&e.body["verdict"]),
            runs: e.body["runs"].clone(),
        })
        .collect();
    let rows = || mappings.iter().flat_map(|m: &RunMapping| &m.rows);
    let counts = Counts {
        legacy_runs: preserved.len(),
        our_runs: ours.len(),
        mappings_comparable: rows().filter(|r| r.comparable).count(),
        mappings_not_comparable: rows().filter(|r| !r.comparable).count(),
        equivalence: equivalence.len(),
        conditional: conditional.grades.len()
            + conditional.decisions.len()
            + conditional.inconclusive.len()
            + conditional.sut.len(),
        new_epochs: new_epochs.len(),
        gates: gates.len(),
    };
    let last = entries.last();
    Ok(Report {
        schema: SCHEMA,
        ledger: LedgerState {
            head: last.map(|e| e.hash.clone()).unwrap_or_default(),
            entries: last.map_or(0, |e| e.seq),
        },
        preserved,
        ours,
        mappings,
        equivalence,
        conditional,
        new_epochs,
        gates,
        counts,
    })
}

impl Report {
    /// The JSON document: canonical (sorted keys, RFC 8785), so the same ledger gives the
    /// same bytes, with a trailing newline.
    pub fn to_json(&self) -> Result<String, Failure> {
        let mut s = canonical::to_string(self).map_err(Failure::run)?;
        s.push('\n');
        Ok(s)
    }

    /// `sha256:` of the canonical JSON.
    pub fn digest(&self) -> Result<String, Failure> {
        canonical::digest(self).map_err(Failure::run)
    }

    pub fn markdown(&self) -> String {
        render::markdown(self)
    }
}

/// `--record`: appends a `bridge.record` entry with the report's digest and counts, and the
/// ledger head it was built from.
pub fn record(ledger: &Ledger, r: &Report, stamp: &Stamp) -> Result<Entry, Failure> {
    let body = json!({
        "schema": r.schema,
        "report_digest": r.digest()?,
        "ledger_head": r.ledger.head,
        "ledger_entries": r.ledger.entries,
        "counts": r.counts,
    });
    let head = r.ledger.head.clone();
    // Recorded only against the ledger it describes: a later append makes it stale.
    let check = move |es: &[Entry]| match es.last() {
        Some(e) if e.hash == head => Ok(()),
        _ => Err(Failure::input(
            "the ledger changed while the bridge report was built: run it again",
        )),
    };
    ledger.append(Some(&check), RECORD_KIND, body, stamp)
}
