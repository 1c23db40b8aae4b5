//! Families 8 and 9, the run-level rules: reproducibility (runs equivalent within declared
//! margins) and throughput (an absolute floor, and/or non-inferiority to the baseline),
//! both through `inferbench compare` for the comparisons.
//!
//! `compare = "self"` splits the candidate runs in their expanded order: four or more, the
//! first half (the baseline side) against the second; two or three, run 1 against the rest.

use std::path::PathBuf;

use inferbench_metrics::inference::welch::mean_bounds;
use serde_json::{Value, json};

use super::{Ctx, base, missing, missing_outcome, num, opt};
use crate::Failure;
use crate::compare::margins::Direction;
use crate::compare::report::MetricReport;
use crate::compare::{self, CompareSpec, MarginEntry, Verdict as CmpVerdict};
use crate::gate::spec::{Burden, CompareWith, ReproducibilityRule, Rule, ThroughputRule};
use crate::gate::verdict::{BoundRef, Interval, Outcome, RuleVerdict};

/// A run-level rule's verdict, and its p-value for Holm (a `compare = "baseline"` rule).
pub struct Judged {
    pub verdict: RuleVerdict,
    pub p_value: Option<f64>,
}

fn paths(runs: &[crate::gate::observe::RunObs]) -> Vec<PathBuf> {
    runs.iter().map(|r| r.path.clone()).collect()
}

/// The two sides of a comparison: (baseline, candidate), or what is missing.
fn sides(ctx: &Ctx, with: CompareWith) -> Result<(Vec<PathBuf>, Vec<PathBuf>), (String, Value)> {
    let cand = paths(&ctx.obs.candidate);
    let min = ctx.spec.evidence.min_runs.max(1) as usize;
    match with {
        CompareWith::SelfRuns => {
            let k = cand.len();
            if k < 2 || k < 2 * min {
                let need = (2 * min).max(2);
                return Err((
                    format!("{k} candidate runs: a self comparison needs {need}"),
                    json!({"runs": need}),
                ));
            }
            let split = if k >= 4 { k / 2 } else { 1 };
            Ok((cand[..split].to_vec(), cand[split..].to_vec()))
        }
        CompareWith::Baseline => {
            let base = paths(&ctx.obs.baseline);
            if base.len() < min || cand.len() < min {
                return Err((
                    format!(
                        "{} baseline and {} candidate runs (min_runs = {min} per side)",
                        base.len(),
                        cand.len()
                    ),
                    json!({"runs_per_side": min}),
                ));
            }
            Ok((base, cand))
        }
    }
}

fn run_compare(
    ctx: &Ctx,
    rule: &Rule,
    base: Vec<PathBuf>,
    cand: Vec<PathBuf>,
    margins: Vec<MarginEntry>,
) -> Result<compare::Report, Failure> {
    let spec = CompareSpec {
        baseline: base,
        candidate: cand,
        definitions: Some(ctx.spec.definition_set.clone()),
        margins,
        goodput: None,
        allow_epoch_change: false,
        alpha: ctx.spec.alpha,
        resamples: ctx.spec.evidence.resamples,
        tokenizer: ctx.input.tokenizer.clone(),
    };
    compare::compare(&spec).map_err(|f| Failure::input(format!("rule {}: {}", rule.id, f.message)))
}

fn metric_json(m: &MetricReport) -> Value {
    json!({
        "key": m.key,
        "verdict": m.verdict.as_str(),
        "estimate": opt(m.difference.as_ref().map(|d| d.estimate)),
        "low": opt(m.difference.as_ref().map(|d| d.low)),
        "high": opt(m.difference.as_ref().map(|d| d.high)),
        "margin": m.margin.text,
        "reason": m.reason,
    })
}

/// The smallest p-value of "worse" over the compared metrics (after compare's own Holm):
/// the rule's evidence of a regression.
fn p_worse(r: &compare::Report) -> Option<f64> {
    r.metrics
        .iter()
        .filter_map(|m| m.p_worse_holm.or(m.p_worse))
        .filter(|p| p.is_finite())
        .min_by(f64::total_cmp)
}

fn no_runs(rule: &Rule, ctx: &Ctx, what: String, needed: Value) -> Judged {
    let mut v = missing(rule, ctx.spec, &what);
    v.needed = Some(needed);
    Judged {
        verdict: v,
        p_value: None,
    }
}

pub fn reproducibility(ctx: &Ctx, rule: &Rule, r: &ReproducibilityRule) -> Result<Judged, Failure> {
    let (base_dirs, cand) = match sides(ctx, r.compare) {
        Ok(s) => s,
        Err((what, needed)) => return Ok(no_runs(rule, ctx, what, needed)),
    };
    let margins = r
        .margins
        .iter()
        .map(|(k, v)| compare::parse_margin(&format!("{k}={v}"), &format!("rule {}", rule.id)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::input)?;
    let report = run_compare(ctx, rule, base_dirs, cand, margins)?;
    let verdicts: Vec<CmpVerdict> = report.metrics.iter().map(|m| m.verdict).collect();
    let (outcome, reason) = if verdicts.is_empty() {
        (missing_outcome(ctx.spec), "no metric compared".to_string())
    } else if verdicts.iter().all(|v| *v == CmpVerdict::Equivalent) {
        (
            Outcome::Pass,
            format!(
                "all {} metrics equivalent within their margins",
                verdicts.len()
            ),
        )
    } else if !report.worse.is_empty() {
        (
            Outcome::Fail,
            format!("worse beyond the margin: {}", report.worse.join(", ")),
        )
    } else {
        let open: Vec<&str> = report
            .metrics
            .iter()
            .filter(|m| m.verdict != CmpVerdict::Equivalent)
            .map(|m| m.key.as_str())
            .collect();
        (
            Outcome::Inconclusive,
            format!("not shown equivalent: {}", open.join(", ")),
        )
    };
    let mut v = base(rule, ctx.spec, outcome, reason);
    v.definition_set = Some(report.definition_set.clone());
    v.observed = json!({"metrics": report.metrics.iter().map(metric_json).collect::<Vec<_>>()});
    if outcome == Outcome::Inconclusive {
        let needs: Vec<Value> = report
            .metrics
            .iter()
            .filter_map(|m| {
                m.needed
                    .as_ref()
                    .map(|n| json!({"key": m.key, "value": n.value, "unit": n.unit}))
            })
            .collect();
        if !needs.is_empty() {
            v.needed = Some(json!({"per_metric": needs}));
        }
    }
    let p_value = (r.compare == CompareWith::Baseline)
        .then(|| p_worse(&report))
        .flatten();
    Ok(Judged {
        verdict: v,
        p_value,
    })
}

fn run_value(run: &crate::gate::observe::RunObs, tag: &str) -> Option<(f64, String)> {
    let m = run.summary.get(tag)?;
    let v = m.scalar().or_else(|| m.avg())?;
    v.is_finite().then(|| (v, m.unit.clone()))
}

pub fn throughput(ctx: &Ctx, rule: &Rule, t: &ThroughputRule) -> Result<Judged, Failure> {
    let spec = ctx.spec;
    let conf = ctx.confidence();
    let mut parts: Vec<(Outcome, String)> = Vec::new();
    let mut observed = serde_json::Map::new();
    let mut v = base(rule, spec, Outcome::Inconclusive, String::new());
    v.metric = Some(t.metric.clone());
    v.definition_set = Some(spec.definition_set.clone());
    v.population = Some("run".into());
    let mut p_value = None;
    if let Some(min) = t.min {
        let vals: Option<Vec<(f64, String)>> = ctx
            .obs
            .candidate
            .iter()
            .map(|r| run_value(r, &t.metric))
            .collect();
        match vals {
            Some(vals) if !vals.is_empty() && vals.len() >= spec.evidence.min_runs as usize => {
                let xs: Vec<f64> = vals.iter().map(|x| x.0).collect();
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                v.unit = Some(vals[0].1.clone());
                v.n = Some(xs.len() as u64);
                observed.insert("mean".into(), num(mean));
                observed.insert(
                    "runs".into(),
                    json!(xs.iter().map(|x| num(*x)).collect::<Vec<_>>()),
                );
                v.bound = Some(BoundRef {
                    op: ">=".into(),
                    value: min,
                });
                match mean_bounds(&xs, conf) {
                    Some((lo, hi)) => {
                        v.interval = Some(Interval {
                            method: "t_repeat_runs".into(),
                            confidence: conf,
                            sided: if spec.burden == Burden::DemonstratePass {
                                "lower"
                            } else {
                                "upper"
                            }
                            .into(),
                            lower: (spec.burden == Burden::DemonstratePass)
                                .then_some(lo)
                                .filter(|x| x.is_finite()),
                            upper: (spec.burden == Burden::DemonstrateFail)
                                .then_some(hi)
                                .filter(|x| x.is_finite()),
                            n_eff: None,
                        });
                        parts.push(match spec.burden {
                            Burden::DemonstratePass if lo >= min => (
                                Outcome::Pass,
                                format!("lower {:.0}% bound {lo:.3} >= {min}", conf * 100.0),
                            ),
                            Burden::DemonstratePass if mean < min => {
                                (Outcome::Fail, format!("mean {mean:.3} < {min}"))
                            }
                            Burden::DemonstrateFail if hi < min => (
                                Outcome::Fail,
                                format!("upper {:.0}% bound {hi:.3} < {min}", conf * 100.0),
                            ),
                            Burden::DemonstrateFail if mean >= min => {
                                (Outcome::Pass, format!("mean {mean:.3} >= {min}"))
                            }
                            _ => (
                                Outcome::Inconclusive,
                                format!(
                                    "mean {mean:.3} against {min}: the {:.0}% bound straddles it",
                                    conf * 100.0
                                ),
                            ),
                        });
                    }
                    None => parts.push(if mean >= min {
                        (
                            Outcome::Pass,
                            format!(
                                "{mean:.3} >= {min} (one run: point value, no repeat-run interval)"
                            ),
                        )
                    } else {
                        (
                            Outcome::Fail,
                            format!("{mean:.3} < {min} (one run: point value)"),
                        )
                    }),
                }
            }
            _ => parts.push((
                missing_outcome(spec),
                format!(
                    "no data: {} in every candidate run (min_runs {})",
                    t.metric, spec.evidence.min_runs
                ),
            )),
        }
    }
    if let Some(with) = t.compare {
        let delta = t.non_inferiority.map(f64::abs).unwrap_or(0.0);
        match sides(ctx, with) {
            Err((what, needed)) => {
                parts.push((missing_outcome(spec), format!("no data: {what}")));
                v.needed = Some(needed);
            }
            Ok((b, c)) => {
                let margin = compare::parse_margin(
                    &format!("{}=±{}%", t.metric, delta * 100.0),
                    &format!("rule {}", rule.id),
                )
                .map_err(Failure::input)?;
                let report = run_compare(ctx, rule, b, c, vec![margin])?;
                let m = report.metrics.iter().find(|m| m.metric == t.metric);
                match m.map(|m| (m, m.difference.as_ref())) {
                    None => parts.push((
                        missing_outcome(spec),
                        format!("no data: compare did not compare {}", t.metric),
                    )),
                    // Too few runs for an interval: compare says how many would do.
                    Some((m, None)) => {
                        observed.insert("versus_baseline".into(), metric_json(m));
                        if let Some(n) = &m.needed {
                            v.needed = Some(json!({n.unit: n.value}));
                        }
                        parts.push((
                            Outcome::Inconclusive,
                            format!("versus the baseline: {}", m.reason),
                        ));
                    }
                    Some((m, Some(d))) => {
                        observed.insert("versus_baseline".into(), metric_json(m));
                        // Non-inferiority: only the side where the candidate is worse counts.
                        let (ok, bad) = match m.direction {
                            Direction::LowerIsBetter => {
                                (d.high < m.margin.upper, d.low > m.margin.upper)
                            }
                            _ => (d.low > m.margin.lower, d.high < m.margin.lower),
                        };
                        parts.push(if ok {
                            (
                                Outcome::Pass,
                                format!("non-inferior to the baseline within {}", m.margin.text),
                            )
                        } else if bad {
                            (
                                Outcome::Fail,
                                format!("worse than the baseline beyond {}", m.margin.text),
                            )
                        } else {
                            (
                                Outcome::Inconclusive,
                                format!("non-inferiority within {} not shown", m.margin.text),
                            )
                        });
                        if with == CompareWith::Baseline {
                            p_value = m.p_worse_holm.or(m.p_worse).filter(|p| p.is_finite());
                        }
                    }
                }
            }
        }
    }
    if parts.is_empty() {
        parts.push((
            missing_outcome(spec),
            "no data: the rule states neither min nor compare".into(),
        ));
    }
    v.verdict = if parts.iter().any(|p| p.0 == Outcome::Fail) {
        Outcome::Fail
    } else if parts.iter().any(|p| p.0 == Outcome::Inconclusive) {
        Outcome::Inconclusive
    } else {
        Outcome::Pass
    };
    v.reason = parts
        .iter()
        .map(|p| p.1.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    v.observed = Value::Object(observed);
    Ok(Judged {
        verdict: v,
        p_value,
    })
}
