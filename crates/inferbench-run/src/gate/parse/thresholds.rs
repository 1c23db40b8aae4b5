//! k6's threshold shorthand (reference §4.4): `[thresholds]` with
//! `"METRIC{population=per_request}" = ["p(99)<2000", "avg<500"]`, each expression a latency
//! rule with `method = "point"` (k6 compares the point estimate, without uncertainty; the
//! verdict says so). Limits are in the metric's display unit (ms for times, as in k6).

use super::catalogue;
use super::reader::Table;
use super::rules::{Ctx, metric};
use crate::Failure;
use crate::gate::spec::*;

pub fn rules(ctx: &Ctx, t: &Table) -> Result<Vec<Rule>, Failure> {
    let mut out = Vec::new();
    for key in t.keys() {
        let (name, tags) = match key.split_once('{') {
            Some((n, rest)) => {
                let Some(tags) = rest.strip_suffix('}') else {
                    return Err(t.err(&key, "unclosed {…} after the metric"));
                };
                (n.trim().to_string(), tags.trim().to_string())
            }
            None => (key.trim().to_string(), String::new()),
        };
        if !tags.is_empty() && tags != "population=per_request" {
            return Err(t.err(
                &key,
                format!("{{{tags}}}: the only tag read is population=per_request"),
            ));
        }
        let k = metric(ctx, t, &key, &name, true)?;
        if catalogue::is_pooled(&name) {
            return Err(t.err(&key, format!("\"{name}\" has no per-request population")));
        }
        let exprs = match t.raw(&key) {
            Some(toml::Value::Array(a)) => a.clone(),
            Some(toml::Value::String(s)) => vec![toml::Value::String(s.clone())],
            _ => {
                return Err(t.err(
                    &key,
                    "an array of expressions is needed, e.g. [\"p(99)<2000\"]",
                ));
            }
        };
        for e in exprs {
            let Some(e) = e.as_str() else {
                return Err(t.err(&key, "each expression is a string, e.g. \"p(95)<500\""));
            };
            let (stat, op, limit) = expression(e).map_err(|m| t.err(&key, m))?;
            out.push(Rule {
                id: format!("threshold.{name}.{}", stat.label()),
                line: t.src.line_of(t.offset(&key)),
                body: RuleBody::Latency(LatencyRule {
                    metric: name.clone(),
                    population: "per_request".into(),
                    timing_origin: TimingOrigin::Sent,
                    stat,
                    op,
                    limit,
                    unit: k.unit.clone(),
                    method: BoundMethod::Point,
                    include_errors: false,
                    min_samples: None,
                }),
            });
        }
    }
    t.take_all();
    Ok(out)
}

/// `p(99)<2000`, `avg<=500`, `med<300`, `max<1000`.
fn expression(e: &str) -> Result<(StatSpec, Op, f64), String> {
    let s: String = e.chars().filter(|c| !c.is_whitespace()).collect();
    let at = s
        .find(['<', '>'])
        .ok_or_else(|| format!("\"{e}\": expected STAT<VALUE, e.g. p(99)<2000"))?;
    let (lhs, rest) = s.split_at(at);
    let (op, num) = if let Some(n) = rest.strip_prefix("<=") {
        (Op::Le, n)
    } else if let Some(n) = rest.strip_prefix(">=") {
        (Op::Ge, n)
    } else if let Some(n) = rest.strip_prefix('<') {
        (Op::Lt, n)
    } else {
        (Op::Gt, &rest[1..])
    };
    let stat = match lhs {
        "avg" => StatSpec::Mean,
        "max" => StatSpec::Max,
        "med" => StatSpec::Percentile(50.0),
        _ => {
            let q = lhs
                .strip_prefix("p(")
                .and_then(|x| x.strip_suffix(')'))
                .and_then(|x| x.parse::<f64>().ok())
                .filter(|q| *q > 0.0 && *q < 100.0)
                .ok_or_else(|| format!("\"{e}\": the statistic is p(N), avg, med or max"))?;
            StatSpec::Percentile(q)
        }
    };
    let limit: f64 = num
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("\"{e}\": the limit is a number"))?;
    Ok((stat, op, limit))
}
