//! Assembly of the verdict: the runs observed once, the gate's own requirements (epoch,
//! profile, evidence), every rule, the judged flags, Holm over the baseline comparisons,
//! the overall verdict and the evidence gaps.
//!
//! The gate's own requirements are rule verdicts with ids `gate.epoch`, `gate.profile` and
//! `gate.evidence`, family `serialization` (a precondition), placed before the spec's rules:
//! [`Overall::combine`] then makes any mismatch INVALID.

use std::cell::RefCell;

use inferbench_metrics::inference::multiplicity::holm;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::GateInput;
use super::observe::{self, Observations};
use super::rules::{self, Ctx, check, gap};
use super::spec::{CompareWith, Family, GateSpec, MultiplicityMethod, Rule, RuleBody};
use super::verdict::{
    Check, EpochMatch, GateRef, MultiplicityReport, Outcome, Overall, RuleVerdict, Runs,
    VERDICT_SCHEMA, Verdict,
};
use crate::Failure;

pub fn evaluate(spec: &GateSpec, input: &GateInput) -> Result<Verdict, Failure> {
    if input.candidate.is_empty() {
        return Err(Failure::input("gate: no candidate run given"));
    }
    let tags = observe::needed_tags(spec);
    let tok = input.tokenizer.as_deref();
    let candidate = observe::observe_side(
        "candidate",
        &input.candidate,
        &input.candidate_ids,
        spec,
        &tags,
        tok,
    )?;
    let baseline = if input.baseline.is_empty() {
        Vec::new()
    } else {
        observe::observe_side(
            "baseline",
            &input.baseline,
            &input.baseline_ids,
            spec,
            &tags,
            tok,
        )?
    };
    let obs = Observations {
        tags,
        candidate,
        baseline,
    };
    let ctx = Ctx {
        spec,
        input,
        obs: &obs,
        seed: seed_of(&obs),
        gaps: RefCell::default(),
    };
    let (epoch, mut verdicts) = gate_requirements(&ctx);
    let mut p_values: Vec<(usize, f64)> = Vec::new();
    let mut holm_family = 0usize;
    for rule in &spec.rules {
        let (v, p) = rule_verdict(&ctx, rule)?;
        if compares_with_baseline(rule) {
            holm_family += 1;
            if let Some(p) = p {
                p_values.push((verdicts.len(), p));
            }
        }
        verdicts.push(v);
    }
    let multiplicity = (spec.multiplicity == MultiplicityMethod::Holm).then(|| {
        apply_holm(&mut verdicts, &p_values, holm_family, spec.alpha);
        MultiplicityReport {
            method: "holm".into(),
            family_size: holm_family,
        }
    });
    let preconditions_ok = verdicts
        .iter()
        .all(|r| !r.family.is_precondition() || r.verdict == Outcome::Pass);
    if !preconditions_ok {
        for r in verdicts.iter_mut().filter(|r| !r.family.is_precondition()) {
            r.judged = false;
        }
    }
    let overall = Overall::combine(&verdicts);
    Ok(Verdict {
        schema: VERDICT_SCHEMA,
        gate: GateRef {
            name: spec.name.clone(),
            version: spec.version,
            digest: spec.digest.clone(),
        },
        epoch,
        runs: Runs {
            candidate: obs.candidate.iter().map(|r| r.id.clone()).collect(),
            baseline: obs.baseline.iter().map(|r| r.id.clone()).collect(),
        },
        definition_set: spec.definition_set.clone(),
        profile: spec.profile.clone(),
        verdict: overall,
        exit_code: overall.exit_code(),
        preconditions: if preconditions_ok {
            Overall::Pass
        } else {
            Overall::Invalid
        },
        rules: verdicts,
        multiplicity,
        evidence_gaps: ctx.gaps.into_inner().into_iter().collect(),
    })
}

/// Every seeded draw starts from the candidate run ids (the same runs, the same verdict).
fn seed_of(obs: &Observations) -> u64 {
    let mut h = Sha256::new();
    for r in &obs.candidate {
        h.update(r.id.as_bytes());
        h.update([0]);
    }
    let d = h.finalize();
    u64::from_le_bytes(d[..8].try_into().expect("8 bytes"))
}

fn compares_with_baseline(rule: &Rule) -> bool {
    match &rule.body {
        RuleBody::Reproducibility(r) => r.compare == CompareWith::Baseline,
        RuleBody::Throughput(t) => t.compare == Some(CompareWith::Baseline),
        _ => false,
    }
}

fn rule_verdict(ctx: &Ctx, rule: &Rule) -> Result<(RuleVerdict, Option<f64>), Failure> {
    use rules::{delivery, goodput, latency, precondition, runs};
    Ok(match &rule.body {
        RuleBody::Serialization(s) => (precondition::serialization(ctx, rule, s), None),
        RuleBody::Workload(w) => (precondition::workload(ctx, rule, w), None),
        RuleBody::LoadDelivery(l) => (delivery::load_delivery(ctx, rule, l), None),
        RuleBody::ClientHeadroom(c) => (delivery::client_headroom(ctx, rule, c), None),
        RuleBody::Latency(l) => (latency::latency(ctx, rule, l)?, None),
        RuleBody::Goodput(g) => (goodput::goodput(ctx, rule, g), None),
        RuleBody::Correctness(c) => (goodput::correctness(ctx, rule, c)?, None),
        RuleBody::Reproducibility(r) => {
            let j = runs::reproducibility(ctx, rule, r)?;
            (j.verdict, j.p_value)
        }
        RuleBody::Throughput(t) => {
            let j = runs::throughput(ctx, rule, t)?;
            (j.verdict, j.p_value)
        }
    })
}

/// Holm over the `compare = "baseline"` rules: a FAIL whose adjusted p-value of "worse" is
/// above alpha is not shown at the family level and becomes INCONCLUSIVE. A rule of the
/// family without a p-value counts in the family size with p = 1.
pub(super) fn apply_holm(
    verdicts: &mut [RuleVerdict],
    p: &[(usize, f64)],
    family: usize,
    alpha: f64,
) {
    if family == 0 {
        return;
    }
    let mut all: Vec<f64> = p.iter().map(|x| x.1).collect();
    all.resize(family, 1.0);
    let adjusted = holm(&all, alpha);
    for (k, &(i, _)) in p.iter().enumerate() {
        let v = &mut verdicts[i];
        if v.verdict == Outcome::Fail && !adjusted[k].rejected {
            v.verdict = Outcome::Inconclusive;
            v.reason = format!(
                "{} (Holm-adjusted p {:.4} > alpha {alpha} over {family} comparisons)",
                v.reason, adjusted[k].adjusted
            );
        }
    }
}

/// A gate requirement as a precondition rule.
fn requirement(ctx: &Ctx, id: &str, checks: Vec<Check>) -> RuleVerdict {
    let rule = Rule {
        id: id.into(),
        line: 0,
        body: RuleBody::Serialization(super::spec::SerializationRule {
            frozen_workload: None,
            chat_template: None,
            inspect_sample: 0,
            require: Vec::new(),
        }),
    };
    let v = rules::from_checks(&rule, ctx.spec, checks, json!(null));
    debug_assert_eq!(v.family, Family::Serialization);
    v
}

/// `gate.epoch`, `gate.profile`, `gate.evidence`, those the spec asks for.
fn gate_requirements(ctx: &Ctx) -> (Option<EpochMatch>, Vec<RuleVerdict>) {
    let spec = ctx.spec;
    let runs = &ctx.obs.candidate;
    let mut out = Vec::new();
    let mut epoch = None;
    if let Some(e) = &spec.epoch {
        let fingerprint = if e.starts_with("sha256:") {
            Some(e.clone())
        } else {
            ctx.input.epoch_fingerprint.clone()
        };
        let mut checks = Vec::new();
        let mut all = true;
        for r in runs {
            let fp = r.identity.as_ref().map(|i| i.fingerprint());
            let c = match (&fingerprint, fp) {
                (None, _) => gap(
                    &format!("run {}", r.id),
                    Some(json!(e)),
                    format!("epoch {e} was not resolved to a fingerprint"),
                ),
                (Some(_), None) => gap(
                    &format!("run {}", r.id),
                    fingerprint.clone().map(|f| json!(f)),
                    "the run records no identity".into(),
                ),
                (Some(want), Some(fp)) => check(
                    &format!("run {}", r.id),
                    &fp == want,
                    json!(fp),
                    Some(json!(want)),
                    if &fp == want {
                        "fingerprint matches".into()
                    } else {
                        format!("fingerprint {fp} is not the epoch's {want}")
                    },
                ),
            };
            all &= c.verdict == Outcome::Pass;
            checks.push(c);
        }
        epoch = Some(EpochMatch {
            id: e.clone(),
            fingerprint,
            matches: all,
        });
        out.push(requirement(ctx, "gate.epoch", checks));
    }
    if let Some(p) = &spec.profile {
        let checks = runs
            .iter()
            .map(|r| {
                let name = format!("run {}", r.id);
                match r
                    .identity
                    .as_ref()
                    .and_then(|i| i.get("profile"))
                    .map(|p| p.value.clone())
                {
                    None => gap(
                        &name,
                        Some(json!(p)),
                        "the run records no profile pin".into(),
                    ),
                    Some(v) => {
                        let ok = v.as_str() == Some(p.as_str());
                        check(
                            &name,
                            ok,
                            v.clone(),
                            Some(json!(p)),
                            format!("profile {v}, the spec wants {p}"),
                        )
                    }
                }
            })
            .collect();
        out.push(requirement(ctx, "gate.profile", checks));
    }
    let min = spec.evidence.min_requests_per_run;
    if min > 0 {
        let checks = runs
            .iter()
            .map(|r| {
                let n = r.attempted();
                check(
                    &format!("run {}", r.id),
                    n >= min,
                    json!(n),
                    Some(json!({"op": ">=", "value": min})),
                    format!("{n} profiling requests (minimum {min})"),
                )
            })
            .collect();
        out.push(requirement(ctx, "gate.evidence", checks));
    }
    (epoch, out)
}
