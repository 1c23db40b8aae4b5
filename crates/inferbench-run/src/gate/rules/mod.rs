//! The rule families: each turns the observations into one [`RuleVerdict`].
//!
//! - [`precondition`]: serialization and workload;
//! - [`delivery`]: load delivery and client headroom ([`headroom`]: its qualification checks);
//! - [`latency`]: absolute SLOs on one statistic of one per-request metric;
//! - [`goodput`]: joint per-request SLOs (and correctness, a fraction too);
//! - [`runs`]: reproducibility and throughput, the run-level families (through `compare`).

pub mod delivery;
pub mod goodput;
pub mod headroom;
pub mod latency;
pub mod precondition;
pub mod runs;

use serde_json::{Value, json};

use super::GateInput;
use super::observe::Observations;
use super::spec::{GateSpec, OnMissing, Rule};
use super::verdict::{Check, Outcome, RuleVerdict};

/// What every rule reads.
pub struct Ctx<'a> {
    pub spec: &'a GateSpec,
    pub input: &'a GateInput,
    pub obs: &'a Observations,
    /// From the candidate run ids: every seeded draw starts here.
    pub seed: u64,
    /// Evidence gaps the rules found (named in the verdict, never assumed healthy).
    pub gaps: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

impl Ctx<'_> {
    /// One-sided confidence of every bound.
    pub fn confidence(&self) -> f64 {
        1.0 - self.spec.alpha
    }

    pub fn gap(&self, what: impl Into<String>) {
        self.gaps.borrow_mut().insert(what.into());
    }

    /// The seed of one rule's draws: the runs' seed mixed with the rule id.
    pub fn rule_seed(&self, rule: &Rule) -> u64 {
        let mut h = self.seed ^ 0x9e37_79b9_7f4a_7c15;
        for b in rule.id.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }
}

/// A JSON number, `null` when not finite (the verdict never holds NaN or ∞).
pub fn num(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

pub fn opt(v: Option<f64>) -> Value {
    v.map_or(Value::Null, num)
}

/// A finite value, or None.
pub fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

/// A rule verdict with the common fields filled and the rest empty.
pub fn base(rule: &Rule, spec: &GateSpec, verdict: Outcome, reason: String) -> RuleVerdict {
    RuleVerdict {
        id: rule.id.clone(),
        family: rule.family(),
        verdict,
        judged: true,
        burden: spec.burden,
        metric: None,
        definition_set: None,
        population: None,
        stat: None,
        unit: None,
        n: None,
        observed: Value::Null,
        interval: None,
        bound: None,
        needed: None,
        checks: Vec::new(),
        reason,
    }
}

/// The `on_missing` outcome (never PASS).
pub fn missing_outcome(spec: &GateSpec) -> Outcome {
    match spec.on_missing {
        OnMissing::Fail => Outcome::Fail,
        OnMissing::Inconclusive => Outcome::Inconclusive,
    }
}

/// A rule with no data: `on_missing`, the reason naming what was missing.
pub fn missing(rule: &Rule, spec: &GateSpec, what: &str) -> RuleVerdict {
    let mut v = base(
        rule,
        spec,
        missing_outcome(spec),
        format!("no data: {what} (on_missing = {:?})", spec.on_missing).to_lowercase(),
    );
    v.observed = json!({"no_data": what});
    v
}

pub fn check(name: &str, ok: bool, observed: Value, limit: Option<Value>, reason: String) -> Check {
    Check {
        name: name.into(),
        verdict: if ok { Outcome::Pass } else { Outcome::Fail },
        observed,
        limit,
        reason,
    }
}

/// A check whose evidence is missing: INCONCLUSIVE (a precondition not shown is not met).
pub fn gap(name: &str, limit: Option<Value>, reason: String) -> Check {
    Check {
        name: name.into(),
        verdict: Outcome::Inconclusive,
        observed: Value::Null,
        limit,
        reason,
    }
}

/// The worst of the checks: FAIL, else INCONCLUSIVE, else PASS (none → INCONCLUSIVE:
/// nothing was checked).
pub fn worst(checks: &[Check]) -> Outcome {
    if checks.is_empty() {
        Outcome::Inconclusive
    } else if checks.iter().any(|c| c.verdict == Outcome::Fail) {
        Outcome::Fail
    } else if checks.iter().any(|c| c.verdict == Outcome::Inconclusive) {
        Outcome::Inconclusive
    } else {
        Outcome::Pass
    }
}

/// A rule made of checks: its outcome is the worst, its reason lists what did not pass.
pub fn from_checks(
    rule: &Rule,
    spec: &GateSpec,
    checks: Vec<Check>,
    observed: Value,
) -> RuleVerdict {
    let verdict = worst(&checks);
    let bad: Vec<String> = checks
        .iter()
        .filter(|c| c.verdict != Outcome::Pass)
        .map(|c| format!("{}: {}", c.name, c.reason))
        .collect();
    let reason = if checks.is_empty() {
        "the rule states no check".to_string()
    } else if bad.is_empty() {
        match checks.len() {
            1 => "its one check passes".to_string(),
            n => format!("all {n} checks pass"),
        }
    } else {
        bad.join("; ")
    };
    let mut v = base(rule, spec, verdict, reason);
    v.observed = observed;
    v.checks = checks;
    v
}

/// Per-request values of `tag` over the candidate runs' profiling records, pooled in run
/// then evidence order (None when the set has no such per-request metric).
pub fn pooled(obs: &Observations, tag: &str, include_failed: bool) -> Option<Vec<f64>> {
    let i = obs.tag_index(tag)?;
    let mut out = Vec::new();
    for run in &obs.candidate {
        for r in &run.records {
            match r.values[i] {
                Some(v) if !r.failed => out.push(v),
                _ if r.failed && include_failed => out.push(f64::INFINITY),
                _ => {}
            }
        }
    }
    Some(out)
}
