//! Families 1 and 2: the serialization contract and the achieved workload.

use serde_json::{Value, json};

use super::{Ctx, check, from_checks, gap, num};
use crate::gate::observe::{ISL, OSL, RunObs};
use crate::gate::spec::{LengthSpec, Rule, SerializationRule, WorkloadRule};
use crate::gate::verdict::{Check, RuleVerdict};

/// A pin of every candidate run: the distinct values (`None` for a run without it).
fn pin_values(runs: &[RunObs], name: &str) -> Vec<Option<Value>> {
    let mut out: Vec<Option<Value>> = Vec::new();
    for r in runs {
        let v = r
            .identity
            .as_ref()
            .and_then(|i| i.get(name))
            .map(|p| p.value.clone());
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// A pin that must equal `want` on every run.
fn pin_check(runs: &[RunObs], name: &str, pin: &str, want: &Value) -> Check {
    let vals = pin_values(runs, pin);
    if vals.iter().any(Option::is_none) {
        return gap(
            name,
            Some(want.clone()),
            format!("a run records no {pin} pin"),
        );
    }
    let vals: Vec<Value> = vals.into_iter().flatten().collect();
    let ok = vals.iter().all(|v| v == want);
    let observed = if vals.len() == 1 {
        vals[0].clone()
    } else {
        Value::Array(vals)
    };
    let reason = if ok {
        format!("{pin} is {want}")
    } else {
        format!("{pin} is {observed}, the spec wants {want}")
    };
    check(name, ok, observed, Some(want.clone()), reason)
}

pub fn serialization(ctx: &Ctx, rule: &Rule, s: &SerializationRule) -> RuleVerdict {
    let runs = &ctx.obs.candidate;
    let mut checks = Vec::new();
    if let Some(w) = &s.frozen_workload {
        checks.push(pin_check(
            runs,
            "frozen_workload",
            "workload_digest",
            &json!(w),
        ));
    }
    if let Some(t) = &s.chat_template {
        checks.push(pin_check(
            runs,
            "chat_template",
            "chat_template_digest",
            &json!(t),
        ));
    }
    for req in &s.require {
        let (mut count, mut checked, mut first) = (0u64, 0u64, None);
        for (i, run) in runs.iter().enumerate() {
            let v = run.violations.get(req).copied().unwrap_or_default();
            count += v.count;
            checked += v.checked;
            if first.is_none()
                && let Some(id) = v.first
            {
                first = Some((i, id));
            }
        }
        let observed = json!({"broken": count, "checked": checked});
        let name = req.as_str();
        if checked == 0 {
            checks.push(gap(name, None, "no record it applies to".into()));
            continue;
        }
        let reason = match first {
            None => format!("held by all {checked} records"),
            Some((run, id)) => format!(
                "broken by {count} of {checked} records (first: record {id} of run {})",
                runs[run].id
            ),
        };
        checks.push(check(name, count == 0, observed, None, reason));
    }
    let samples: Vec<Value> = runs
        .iter()
        .map(|r| json!({"run": r.id, "pairs": r.samples}))
        .collect();
    let observed = if s.inspect_sample > 0 {
        json!({"inspect_sample": samples})
    } else {
        json!({})
    };
    from_checks(rule, ctx.spec, checks, observed)
}

/// The lengths of one side (`tag`) over the completed records of every candidate run.
fn lengths(ctx: &Ctx, tag: &str) -> Vec<f64> {
    super::pooled(ctx.obs, tag, false).unwrap_or_default()
}

/// The default band when a length spec names only its mean (MLPerf's 0.9–1.1 ×).
const DEFAULT_BAND: (f64, f64) = (0.9, 1.1);

fn length_checks(name: &str, values: &[f64], spec: &LengthSpec, checks: &mut Vec<Check>) -> Value {
    if values.is_empty() {
        checks.push(gap(
            name,
            Some(num(spec.mean)),
            "no completed record has a length".into(),
        ));
        return Value::Null;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let exact = values.iter().filter(|v| **v == spec.mean).count() as f64 / n;
    let ratio = mean / spec.mean;
    if let Some(min) = spec.exact_fraction_min {
        checks.push(check(
            &format!("{name}.exact_fraction"),
            exact >= min,
            num(exact),
            Some(json!({"op": ">=", "value": min})),
            format!(
                "{:.4} of {} records have exactly {} tokens (minimum {min})",
                exact,
                values.len(),
                spec.mean
            ),
        ));
    }
    let band = match (spec.mean_band, spec.exact_fraction_min) {
        (Some(b), _) => Some((b, false)),
        (None, None) => Some((DEFAULT_BAND, true)),
        (None, Some(_)) => None,
    };
    if let Some(((lo, hi), default)) = band {
        checks.push(check(
            &format!("{name}.mean_ratio"),
            ratio >= lo && ratio <= hi,
            num(ratio),
            Some(json!([lo, hi])),
            format!(
                "mean {mean:.2} tokens is {ratio:.4} x the specified {} ({}band {lo}-{hi})",
                spec.mean,
                if default { "default " } else { "" }
            ),
        ));
    }
    json!({"n": values.len(), "mean": num(mean), "exact_fraction": num(exact), "mean_ratio": num(ratio)})
}

/// Whether a `token_count_source` pin satisfies the spec's `token_source`: `tokenizer`
/// accepts any local tokenizer, otherwise the values must be equal.
fn source_matches(want: &str, pin: &str) -> bool {
    match want {
        "tokenizer" => pin.starts_with("tokenizer"),
        w => w == pin,
    }
}

pub fn workload(ctx: &Ctx, rule: &Rule, w: &WorkloadRule) -> RuleVerdict {
    let runs = &ctx.obs.candidate;
    let mut checks = Vec::new();
    let mut observed = serde_json::Map::new();
    if let Some(src) = &w.token_source {
        let vals = pin_values(runs, "token_count_source");
        let c = if vals.iter().any(Option::is_none) {
            gap(
                "token_source",
                Some(json!(src)),
                "a run records no token_count_source pin".into(),
            )
        } else {
            let vals: Vec<String> = vals
                .into_iter()
                .flatten()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect();
            let ok = vals.len() == 1 && source_matches(src, &vals[0]);
            let reason = if vals.len() > 1 {
                format!("mixed token sources across runs: {}", vals.join(", "))
            } else {
                format!("counts came from {}, the spec wants {src}", vals[0])
            };
            check("token_source", ok, json!(vals), Some(json!(src)), reason)
        };
        checks.push(c);
    }
    if let Some(isl) = &w.isl {
        let v = length_checks("isl", &lengths(ctx, ISL), isl, &mut checks);
        observed.insert("isl".into(), v);
    }
    if let Some(osl) = &w.osl {
        let v = length_checks("osl", &lengths(ctx, OSL), osl, &mut checks);
        observed.insert("osl".into(), v);
    }
    if let Some(e) = w.ignore_eos {
        checks.push(pin_check(runs, "ignore_eos", "ignore_eos", &json!(e)));
    }
    if let Some(m) = w.min_tokens {
        checks.push(pin_check(runs, "min_tokens", "min_tokens", &json!(m)));
    }
    from_checks(rule, ctx.spec, checks, Value::Object(observed))
}
