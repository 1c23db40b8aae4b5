//! Families 6 and 7, both fractions of requests with a Wilson bound: goodput (a request is
//! good when every SLO metric **of that request** meets its limit, errors and cut streams
//! count as not good) and correctness (accuracy of the scored answers).

use inferbench_metrics::confidence::wilson_interval;
use inferbench_metrics::inference::proportions::{
    wilson_lower_bound, wilson_trials_to_decide, wilson_upper_bound,
};
use serde_json::json;

use super::{Ctx, base, check, from_checks, gap, missing, num, opt};
use crate::gate::observe::RunObs;
use crate::gate::spec::{Burden, CorrectnessRule, Denominator, FractionBound, GoodputRule, Rule};
use crate::gate::verdict::{BoundRef, Check, Interval, Outcome, RuleVerdict};

/// An SLO limit is a ceiling, except for a throughput-per-user metric (a floor).
pub fn slo_is_floor(tag: &str) -> bool {
    tag.contains("throughput")
}

/// Goodput counts over the candidate runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GoodCounts {
    pub good: u64,
    pub attempted: u64,
    pub completed: u64,
    /// Completed records lacking an SLO metric (not good, named in the verdict).
    pub missing_metric: u64,
    /// Summed profiling window durations, s (None when a run has no window).
    pub seconds: Option<f64>,
}

/// Counts good requests jointly: `indices` are the SLO tags' positions in each record's
/// values, with their limits.
pub fn count_good(runs: &[RunObs], slo: &[(usize, f64, bool)]) -> GoodCounts {
    let mut c = GoodCounts {
        seconds: Some(0.0),
        ..GoodCounts::default()
    };
    for run in runs {
        for r in &run.records {
            c.attempted += 1;
            if r.failed {
                continue;
            }
            c.completed += 1;
            let mut good = true;
            for &(i, limit, floor) in slo {
                match r.values[i] {
                    Some(v) if floor => good &= v >= limit,
                    Some(v) => good &= v <= limit,
                    None => {
                        good = false;
                        c.missing_metric += 1;
                        break;
                    }
                }
            }
            c.good += u64::from(good);
        }
        c.seconds = match (c.seconds, run.window) {
            (Some(s), Some(w)) if w.requests_end_ns > w.start_ns => {
                Some(s + (w.requests_end_ns - w.start_ns) as f64 * 1e-9)
            }
            _ => None,
        };
    }
    c
}

/// A fraction `x / n` against a minimum (`at_least`) or maximum, under the burden: the
/// outcome, the one-sided bounds (lower, upper) at `c` and the reason.
pub fn judge_fraction(
    x: u64,
    n: u64,
    limit: f64,
    at_least: bool,
    burden: Burden,
    point_only: bool,
    c: f64,
) -> (Outcome, Option<f64>, Option<f64>, String) {
    let p = x as f64 / n as f64;
    let lo = wilson_lower_bound(x, n, c);
    let hi = wilson_upper_bound(x, n, c);
    let meets = |v: f64| if at_least { v >= limit } else { v <= limit };
    let op = if at_least { ">=" } else { "<=" };
    let pct = c * 100.0;
    if point_only {
        let o = if meets(p) {
            Outcome::Pass
        } else {
            Outcome::Fail
        };
        return (
            o,
            lo,
            hi,
            format!(
                "point {p:.4} {op} {limit} is {} (point mode: no uncertainty)",
                meets(p)
            ),
        );
    }
    // The bound on the limit's far side shows a pass; the near one shows a breach.
    let (pass_b, fail_b) = if at_least { (lo, hi) } else { (hi, lo) };
    let f = |b: Option<f64>| b.map_or("none".into(), |b| format!("{b:.4}"));
    let (o, reason) = match burden {
        Burden::DemonstratePass if pass_b.is_some_and(meets) => (
            Outcome::Pass,
            format!("one-sided {pct:.0}% bound {} {op} {limit}", f(pass_b)),
        ),
        Burden::DemonstratePass if !meets(p) => {
            (Outcome::Fail, format!("point {p:.4} is not {op} {limit}"))
        }
        Burden::DemonstratePass => (
            Outcome::Inconclusive,
            format!(
                "point {p:.4} {op} {limit} but the one-sided {pct:.0}% bound {} is not",
                f(pass_b)
            ),
        ),
        Burden::DemonstrateFail if fail_b.is_some_and(|b| !meets(b)) => (
            Outcome::Fail,
            format!(
                "one-sided {pct:.0}% bound {} is not {op} {limit}",
                f(fail_b)
            ),
        ),
        Burden::DemonstrateFail if meets(p) => {
            (Outcome::Pass, format!("point {p:.4} {op} {limit}"))
        }
        Burden::DemonstrateFail => (
            Outcome::Inconclusive,
            format!(
                "point {p:.4} is not {op} {limit} but the one-sided {pct:.0}% bound {} is",
                f(fail_b)
            ),
        ),
    };
    (o, lo, hi, reason)
}

pub fn goodput(ctx: &Ctx, rule: &Rule, g: &GoodputRule) -> RuleVerdict {
    let spec = ctx.spec;
    let mut slo = Vec::new();
    for (tag, limit) in &g.slo {
        let Some(i) = ctx.obs.tag_index(tag) else {
            return missing(
                rule,
                spec,
                &format!("{tag} is not a per-request metric here"),
            );
        };
        let any = ctx
            .obs
            .candidate
            .iter()
            .flat_map(|r| &r.records)
            .any(|r| r.values[i].is_some());
        if !any {
            return missing(
                rule,
                spec,
                &format!("no samples of {tag} under {}", spec.definition_set),
            );
        }
        slo.push((i, *limit, slo_is_floor(tag)));
    }
    if slo.is_empty() {
        return missing(rule, spec, "the rule names no SLO");
    }
    let c = count_good(&ctx.obs.candidate, &slo);
    let n = match g.denominator {
        Denominator::Attempted => c.attempted,
        Denominator::Completed => c.completed,
    };
    if n == 0 {
        return missing(rule, spec, "no profiling requests");
    }
    let conf = ctx.confidence();
    let point_only = g.bound == FractionBound::Point;
    let (outcome, lo, hi, reason) = judge_fraction(
        c.good,
        n,
        g.min_fraction,
        true,
        spec.burden,
        point_only,
        conf,
    );
    let fraction = c.good as f64 / n as f64;
    let two = wilson_interval(c.good, n, conf);
    let rate = |x: u64| c.seconds.filter(|s| *s > 0.0).map(|s| x as f64 / s);
    let mut v = base(rule, spec, outcome, reason);
    v.metric = Some("goodput".into());
    v.definition_set = Some(spec.definition_set.clone());
    v.population = Some(match g.denominator {
        Denominator::Attempted => "attempted".into(),
        Denominator::Completed => "completed".into(),
    });
    v.unit = Some("fraction".into());
    v.n = Some(n);
    v.observed = json!({
        "good": c.good,
        "attempted": c.attempted,
        "completed": c.completed,
        "errors": c.attempted - c.completed,
        "completed_missing_metric": c.missing_metric,
        "fraction": num(fraction),
        "goodput_rps": opt(rate(c.good)),
        "completed_rps": opt(rate(c.completed)),
        "wilson_two_sided": {"confidence": conf, "lower": opt(two.map(|t| t.0)), "upper": opt(two.map(|t| t.1))},
    });
    if !point_only {
        let lower_side = spec.burden == Burden::DemonstratePass;
        v.interval = Some(Interval {
            method: "wilson".into(),
            confidence: conf,
            sided: if lower_side { "lower" } else { "upper" }.into(),
            lower: if lower_side { lo } else { None },
            upper: if lower_side { None } else { hi },
            n_eff: Some(n as f64),
        });
    }
    v.bound = Some(BoundRef {
        op: ">=".into(),
        value: g.min_fraction,
    });
    if outcome == Outcome::Inconclusive {
        v.needed = wilson_trials_to_decide(fraction, g.min_fraction, conf)
            .map(|n| json!({"attempted_for_decision": n}));
    }
    v
}

/// A fraction check of correctness (accuracy or degenerate share).
fn fraction_check(ctx: &Ctx, name: &str, x: u64, n: u64, limit: f64, at_least: bool) -> Check {
    let (o, lo, hi, reason) = judge_fraction(
        x,
        n,
        limit,
        at_least,
        ctx.spec.burden,
        false,
        ctx.confidence(),
    );
    Check {
        name: name.into(),
        verdict: o,
        observed: json!({"count": x, "of": n, "fraction": num(x as f64 / n as f64), "lower": opt(lo), "upper": opt(hi)}),
        limit: Some(json!({"op": if at_least { ">=" } else { "<=" }, "value": limit})),
        reason,
    }
}

fn tallies(runs: &[RunObs]) -> Result<Option<Vec<crate::correctness::Tally>>, crate::Failure> {
    let mut out = Vec::new();
    for r in runs {
        let dir = crate::RunDir::single(&r.path)?;
        match crate::correctness::tally(&dir)? {
            Some(t) => out.push(t),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

pub fn correctness(
    ctx: &Ctx,
    rule: &Rule,
    cr: &CorrectnessRule,
) -> Result<RuleVerdict, crate::Failure> {
    let spec = ctx.spec;
    let Some(cand) = tallies(&ctx.obs.candidate)? else {
        return Ok(missing(
            rule,
            spec,
            "a candidate run carries no expected answers",
        ));
    };
    let scored: u64 = cand.iter().map(|t| t.scored).sum();
    let correct: u64 = cand.iter().map(|t| t.correct).sum();
    let degenerate: u64 = cand.iter().map(|t| t.degenerate).sum();
    if scored == 0 {
        return Ok(missing(rule, spec, "no response was scored"));
    }
    let mut checks = Vec::new();
    if let Some(a) = &cr.answers {
        let ok = cand.iter().all(|t| &t.answers_digest == a);
        let seen: Vec<&str> = cand.iter().map(|t| t.answers_digest.as_str()).collect();
        checks.push(check(
            "answers",
            ok,
            json!(seen),
            Some(json!(a)),
            format!("expected-answer sets {}", seen.join(", ")),
        ));
    }
    if let Some(m) = cr.min_score {
        checks.push(fraction_check(ctx, "min_score", correct, scored, m, true));
    }
    if let Some(rel) = cr.min_score_relative {
        let reference = match cr.reference_score {
            Some(r) => Some(r),
            None if ctx.obs.baseline.is_empty() => None,
            None => tallies(&ctx.obs.baseline)?.and_then(|b| {
                let s: u64 = b.iter().map(|t| t.scored).sum();
                let c: u64 = b.iter().map(|t| t.correct).sum();
                (s > 0).then(|| c as f64 / s as f64)
            }),
        };
        match reference {
            Some(r) => checks.push(fraction_check(
                ctx,
                "min_score_relative",
                correct,
                scored,
                rel * r,
                true,
            )),
            None => checks.push(gap(
                "min_score_relative",
                Some(json!(rel)),
                "no reference score (reference_score, or baseline runs with scored answers)".into(),
            )),
        }
    }
    if let Some(max) = cr.degenerate_output_max {
        checks.push(fraction_check(
            ctx,
            "degenerate_output",
            degenerate,
            scored,
            max,
            false,
        ));
    }
    let mut v = from_checks(
        rule,
        spec,
        checks,
        json!({"scored": scored, "correct": correct, "degenerate": degenerate, "accuracy": num(correct as f64 / scored as f64)}),
    );
    v.n = Some(scored);
    Ok(v)
}
