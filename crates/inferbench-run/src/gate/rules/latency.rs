//! Family 5: an absolute SLO on one statistic of one per-request metric, pooled over the
//! candidate runs' profiling records.
//!
//! Decision (`b_pass` is the one-sided bound on the limit's far side: the upper bound for a
//! ceiling `<=`, the lower for a floor `>=`; `b_fail` the other one):
//! - `demonstrate_pass`: PASS iff `b_pass` meets the limit; FAIL iff the **point estimate**
//!   is beyond it (the sample itself shows the breach); else INCONCLUSIVE;
//! - `demonstrate_fail`: FAIL iff `b_fail` is beyond the limit; PASS iff the point meets it;
//!   else INCONCLUSIVE.
//!
//! Fewer samples than the bound needs (or than `min_samples`) is INCONCLUSIVE with that n.

use inferbench_metrics::inference::bootstrap::{self, Statistic};
use inferbench_metrics::inference::order_stat::{self, Side};
use inferbench_metrics::stats::percentile_linear;
use serde_json::json;

use super::{Ctx, base, missing, num};
use crate::Failure;
use crate::gate::observe::latency_tag;
use crate::gate::spec::{BoundMethod, Burden, LatencyRule, Rule, StatSpec};
use crate::gate::verdict::{BoundRef, Interval, Outcome, RuleVerdict};

/// Largest sample size the planner looks at for `needed`.
const MAX_NEEDED: usize = 100_000_000;

struct Bounds {
    lower: Option<f64>,
    upper: Option<f64>,
    method: &'static str,
}

pub fn latency(ctx: &Ctx, rule: &Rule, l: &LatencyRule) -> Result<RuleVerdict, Failure> {
    let spec = ctx.spec;
    let tag = latency_tag(&l.metric, l.timing_origin);
    let mut values = super::pooled(ctx.obs, &tag, l.include_errors).unwrap_or_default();
    if values.is_empty() {
        let mut v = missing(
            rule,
            spec,
            &format!("no samples of {tag} under {}", spec.definition_set),
        );
        describe(&mut v, ctx, l, &tag, 0);
        return Ok(v);
    }
    values.sort_unstable_by(f64::total_cmp);
    let n = values.len();
    let c = ctx.confidence();
    let upper_op = l.op.is_upper();
    let (point, bounds, min_n) = match (l.stat, l.method) {
        (StatSpec::Max, BoundMethod::Point) => (values[n - 1], None, 1),
        (StatSpec::Max, _) => {
            return Err(Failure::input(format!(
                "rule {}: stat max has no confidence bound: use method = \"point\"",
                rule.id
            )));
        }
        (StatSpec::Mean, BoundMethod::OrderStatistic) => {
            return Err(Failure::input(format!(
                "rule {}: an order-statistic bound is for percentiles: use method = \"bootstrap\" or \"point\" for avg",
                rule.id
            )));
        }
        (StatSpec::Mean, m) => {
            let mean = values.iter().sum::<f64>() / n as f64;
            let boots = m == BoundMethod::Bootstrap;
            let b = boots
                .then(|| boot(ctx, rule, &values, Statistic::Mean))
                .flatten();
            (mean, b, if boots { 2 } else { 1 })
        }
        (StatSpec::Percentile(p), m) => {
            let q = p / 100.0;
            let point = percentile_linear(&values, p);
            match m {
                BoundMethod::Point => (point, None, 1),
                BoundMethod::Bootstrap => {
                    (point, boot(ctx, rule, &values, Statistic::Percentile(p)), 2)
                }
                BoundMethod::OrderStatistic => {
                    // The bound this decision needs: a ceiling is shown by the upper bound
                    // (demonstrate_pass) or breached by the lower (demonstrate_fail).
                    let need_upper = upper_op == (spec.burden == Burden::DemonstratePass);
                    let min_n = if need_upper {
                        order_stat::min_n_for_upper_bound(q, c, false)
                    } else {
                        order_stat::min_n_for_upper_bound(1.0 - q, c, false)
                    }
                    .unwrap_or(usize::MAX);
                    let b = Bounds {
                        upper: order_stat::upper_bound_rank(n, q, c).map(|s| values[s - 1]),
                        lower: order_stat::lower_bound_rank(n, q, c).map(|r| values[r - 1]),
                        method: "order_statistic",
                    };
                    (point, Some(b), min_n)
                }
            }
        }
    };
    let min_n = l.min_samples.map_or(min_n, |m| (m as usize).max(min_n));
    let holds = |v: f64| l.op.holds(v, l.limit);
    let unit = unit_of(ctx, &tag);
    let mut v = base(rule, spec, Outcome::Inconclusive, String::new());
    describe(&mut v, ctx, l, &tag, n);
    v.unit = Some(unit.clone());
    v.observed = num(point);
    v.bound = Some(BoundRef {
        op: l.op.as_str().into(),
        value: l.limit,
    });
    let lim = format!("{} {} {unit}", l.op.as_str(), l.limit);
    if n < min_n {
        v.needed = Some(json!({"requests_for_decision": min_n}));
        v.reason = format!(
            "{n} samples: a one-sided {:.0}% bound on {} needs n >= {min_n}",
            c * 100.0,
            l.stat.label()
        );
        return Ok(v);
    }
    if bounds.is_none() && l.method != BoundMethod::Point && l.stat != StatSpec::Max {
        // The bootstrap refuses non-finite values: errors counted as +inf latency.
        v.reason = format!(
            "no bootstrap bound over {n} samples (errors counted as +inf latency have none): use method = \"order_statistic\""
        );
        return Ok(v);
    }
    let Some(b) = bounds else {
        v.verdict = if holds(point) {
            Outcome::Pass
        } else {
            Outcome::Fail
        };
        v.interval = Some(Interval {
            method: "point".into(),
            confidence: c,
            sided: "two".into(),
            lower: None,
            upper: None,
            n_eff: None,
        });
        v.reason = format!(
            "point estimate {point:.3} {unit} {} {lim} (no uncertainty: point mode)",
            if holds(point) { "meets" } else { "breaks" }
        );
        return Ok(v);
    };
    let (pass_b, fail_b) = if upper_op {
        (b.upper, b.lower)
    } else {
        (b.lower, b.upper)
    };
    let pass_side = if upper_op { "upper" } else { "lower" };
    let fail_side = if upper_op { "lower" } else { "upper" };
    let pct = c * 100.0;
    let (decisive, side_name) = match spec.burden {
        Burden::DemonstratePass => (pass_b, pass_side),
        Burden::DemonstrateFail => (fail_b, fail_side),
    };
    v.interval = Some(Interval {
        method: b.method.into(),
        confidence: c,
        sided: side_name.into(),
        lower: if side_name == "lower" {
            decisive.filter(|x| x.is_finite())
        } else {
            None
        },
        upper: if side_name == "upper" {
            decisive.filter(|x| x.is_finite())
        } else {
            None
        },
        n_eff: None,
    });
    let fmt = |x: Option<f64>| x.map_or("none".to_string(), |x| format!("{x:.3} {unit}"));
    match spec.burden {
        Burden::DemonstratePass => {
            if pass_b.is_some_and(holds) {
                v.verdict = Outcome::Pass;
                v.reason = format!("{pass_side} {pct:.0}% bound {} {lim}", fmt(pass_b));
            } else if !holds(point) {
                v.verdict = Outcome::Fail;
                v.reason = format!("point {} is beyond {lim}", fmt(Some(point)));
            } else {
                v.reason = format!(
                    "point {} meets {lim} but the {pass_side} {pct:.0}% bound {} does not",
                    fmt(Some(point)),
                    fmt(pass_b)
                );
            }
        }
        Burden::DemonstrateFail => {
            if fail_b.is_some_and(|x| !holds(x)) {
                v.verdict = Outcome::Fail;
                v.reason = format!(
                    "{fail_side} {pct:.0}% bound {} is beyond {lim}",
                    fmt(fail_b)
                );
            } else if holds(point) {
                v.verdict = Outcome::Pass;
                v.reason = format!("point {} meets {lim}", fmt(Some(point)));
            } else {
                v.reason = format!(
                    "point {} is beyond {lim} but the {fail_side} {pct:.0}% bound {} is not",
                    fmt(Some(point)),
                    fmt(fail_b)
                );
            }
        }
    }
    if v.verdict == Outcome::Inconclusive {
        v.needed = needed(l, &values, c, spec.burden, point, decisive)
            .map(|n| json!({"requests_for_decision": n}));
    }
    Ok(v)
}

/// Requests that would decide at the observed distribution: for a percentile, from the
/// order-statistic ranks (the fraction of values on the deciding side of the limit); for a
/// mean, the bound's half-width scaled as 1/√n until it clears the limit.
fn needed(
    l: &LatencyRule,
    sorted: &[f64],
    c: f64,
    burden: Burden,
    point: f64,
    bound: Option<f64>,
) -> Option<usize> {
    let n = sorted.len();
    match l.stat {
        StatSpec::Percentile(p) => {
            let ok = sorted.iter().filter(|v| l.op.holds(**v, l.limit)).count() as f64 / n as f64;
            let upper_op = l.op.is_upper();
            // demonstrate_pass: the far-side bound must reach the good side; demonstrate_fail:
            // the near-side bound must reach the bad side.
            let (side, frac) = match (burden, upper_op) {
                (Burden::DemonstratePass, true) => (Side::Upper, ok),
                (Burden::DemonstratePass, false) => (Side::Lower, ok),
                (Burden::DemonstrateFail, true) => (Side::Lower, 1.0 - ok),
                (Burden::DemonstrateFail, false) => (Side::Upper, 1.0 - ok),
            };
            order_stat::requests_to_decide(p / 100.0, c, frac, side, MAX_NEEDED)
        }
        StatSpec::Mean => {
            let half = (bound? - point).abs();
            let room = (l.limit - point).abs();
            (room > 0.0 && half.is_finite())
                .then(|| ((n as f64) * (half / room).powi(2)).ceil() as usize)
        }
        StatSpec::Max => None,
    }
}

fn boot(ctx: &Ctx, rule: &Rule, values: &[f64], stat: Statistic) -> Option<Bounds> {
    let c = ctx.confidence();
    let (lo, hi) = bootstrap::one_sample(
        values,
        stat,
        ctx.spec.evidence.resamples,
        ctx.rule_seed(rule),
        2.0 * c - 1.0,
    )?;
    Some(Bounds {
        lower: Some(lo),
        upper: Some(hi),
        method: "bootstrap",
    })
}

/// The metric's display unit from a candidate run's summary (ms for a latency).
fn unit_of(ctx: &Ctx, tag: &str) -> String {
    ctx.obs
        .candidate
        .iter()
        .find_map(|r| r.summary.get(tag).map(|m| m.unit.clone()))
        .unwrap_or_else(|| "ms".into())
}

fn describe(v: &mut RuleVerdict, ctx: &Ctx, l: &LatencyRule, tag: &str, n: usize) {
    v.metric = Some(tag.to_string());
    v.definition_set = Some(ctx.spec.definition_set.clone());
    v.population = Some(l.population.clone());
    v.stat = Some(l.stat.label());
    v.n = Some(n as u64);
    if v.bound.is_none() {
        v.bound = Some(BoundRef {
            op: l.op.as_str().into(),
            value: l.limit,
        });
    }
}
