//! The verdict document (`docs/schemas/gate-verdict.schema.json`; reference §4.3). Field
//! order is fixed by these structs and no field depends on paths, times or hash-map order,
//! so the same runs and the same spec give byte-identical JSON.

use serde::Serialize;

use super::spec::{Burden, Family};

pub const VERDICT_SCHEMA: &str = "inferbench.gate-verdict/1";

/// The overall verdict, and what the preconditions came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Overall {
    Pass,
    Fail,
    Inconclusive,
    Invalid,
}

impl Overall {
    pub fn as_str(self) -> &'static str {
        match self {
            Overall::Pass => "PASS",
            Overall::Fail => "FAIL",
            Overall::Inconclusive => "INCONCLUSIVE",
            Overall::Invalid => "INVALID",
        }
    }

    /// The exit code of `gate` (README's table).
    pub fn exit_code(self) -> u8 {
        match self {
            Overall::Pass => crate::exit::OK,
            Overall::Fail => crate::exit::FAILED,
            Overall::Invalid => crate::exit::GATE_INVALID,
            Overall::Inconclusive => crate::exit::GATE_INCONCLUSIVE,
        }
    }

    /// Reference §4.1: any precondition rule not passing → INVALID; else any FAIL → FAIL;
    /// else any INCONCLUSIVE → INCONCLUSIVE; else PASS. An empty rule list is INCONCLUSIVE
    /// (nothing was shown).
    pub fn combine(rules: &[RuleVerdict]) -> Overall {
        if rules.is_empty() {
            return Overall::Inconclusive;
        }
        if rules
            .iter()
            .any(|r| r.family.is_precondition() && r.verdict != Outcome::Pass)
        {
            return Overall::Invalid;
        }
        if rules.iter().any(|r| r.verdict == Outcome::Fail) {
            Overall::Fail
        } else if rules.iter().any(|r| r.verdict == Outcome::Inconclusive) {
            Overall::Inconclusive
        } else {
            Overall::Pass
        }
    }
}

/// One rule's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    Pass,
    Fail,
    Inconclusive,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Fail => "FAIL",
            Outcome::Inconclusive => "INCONCLUSIVE",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    pub schema: &'static str,
    pub gate: GateRef,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epoch: Option<EpochMatch>,
    pub runs: Runs,
    pub definition_set: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub verdict: Overall,
    pub exit_code: u8,
    /// PASS when every precondition rule passed, else INVALID (FAIL/INCONCLUSIVE inside
    /// preconditions both invalidate the run).
    pub preconditions: Overall,
    pub rules: Vec<RuleVerdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiplicity: Option<MultiplicityReport>,
    /// What the evidence could not show (named, never assumed healthy).
    pub evidence_gaps: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GateRef {
    pub name: String,
    pub version: u64,
    pub digest: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EpochMatch {
    /// What the spec named.
    pub id: String,
    /// The fingerprint that name resolves to (None when it could not be resolved).
    pub fingerprint: Option<String>,
    /// Every candidate run's fingerprint equals it.
    #[serde(rename = "match")]
    pub matches: bool,
}

/// Run ids: a ledger packet's cid, else `sha256:` of the run's evidence file.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Runs {
    pub candidate: Vec<String>,
    pub baseline: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleVerdict {
    pub id: String,
    pub family: Family,
    pub verdict: Outcome,
    /// False for a performance rule when a precondition failed: computed, shown, not judged.
    pub judged: bool,
    pub burden: Burden,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definition_set: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub population: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stat: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    /// A number, or an object of named observations.
    pub observed: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<BoundRef>,
    /// For INCONCLUSIVE: what would decide it, e.g. `{"requests_for_decision": 12100}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needed: Option<serde_json::Value>,
    /// The parts of a multi-part rule (a precondition's several checks), each with its own
    /// outcome; the rule's outcome is the worst of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// One sentence: why this outcome (`upper 95% bound 1798.0 ms <= 2000 ms`).
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// `order_statistic`, `bootstrap`, `wilson`, `tost_welch_log`, `point`, …
    pub method: String,
    pub confidence: f64,
    /// `upper`, `lower` or `two`.
    pub sided: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n_eff: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoundRef {
    pub op: String,
    pub value: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    pub name: String,
    pub verdict: Outcome,
    pub observed: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<serde_json::Value>,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MultiplicityReport {
    pub method: String,
    pub family_size: usize,
}

impl Verdict {
    /// Pretty JSON with a final newline: deterministic (struct order, no maps of our own).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a verdict serializes");
        s.push('\n');
        s
    }

    /// `sha256:` of the RFC 8785 form: the verdict's id in the ledger.
    pub fn digest(&self) -> String {
        let v = serde_json::to_value(self).expect("a verdict serializes");
        inferbench_core::canonical::digest(&v).expect("a verdict canonicalizes")
    }
}
