//! Families 3 and 4: the load the spec asked for was delivered, and the client was not the
//! bottleneck.

use serde_json::{Value, json};

use super::{Ctx, check, from_checks, gap, num};
use crate::gate::observe::RunObs;
use crate::gate::spec::{ClientHeadroomRule, LoadDeliveryRule, Rule, Throttle};
use crate::gate::verdict::{Check, RuleVerdict};

/// Backlog: the median schedule lag of the last tenth of a run's records (in planned order)
/// exceeds that of the first tenth by more than this many ms. A client that keeps up has a
/// flat lag; one that falls behind accumulates it, so the difference grows with the run.
pub const BACKLOG_GROWTH_MS: f64 = 10.0;

/// Fewer records than this make the backlog check INCONCLUSIVE (a tenth would be < 2).
pub const BACKLOG_MIN_RECORDS: usize = 20;

fn summary_value(run: &RunObs, tag: &str) -> Option<f64> {
    let m = run.summary.get(tag)?;
    m.scalar().or_else(|| m.avg()).filter(|v| v.is_finite())
}

fn lag_p99(run: &RunObs) -> Option<f64> {
    run.summary
        .get("schedule_lag")
        .and_then(|m| m.stats())
        .and_then(|s| s.p99)
        .filter(|v| v.is_finite())
}

/// Requests that waited for a slot: at their planned send time, the profiling requests
/// planned before them and not yet ended (in flight, or themselves queued for a slot) were
/// at least `ceiling`. Counting by planned rather than actual start also catches a wait
/// behind a request the client started late. Warmup requests still in flight are not
/// counted (the profiling phase starts after them).
pub fn throttled(run: &RunObs, ceiling: u64) -> u64 {
    let mut planned: Vec<u64> = run.records.iter().map(|r| r.planned_ns).collect();
    let mut ends: Vec<u64> = run
        .records
        .iter()
        .map(|r| r.end_ns.max(r.planned_ns))
        .collect();
    planned.sort_unstable();
    ends.sort_unstable();
    run.records
        .iter()
        .filter(|r| {
            let t = r.planned_ns;
            let ahead = planned.partition_point(|&p| p < t) as u64;
            let ended = ends.partition_point(|&e| e <= t) as u64;
            ahead.saturating_sub(ended) >= ceiling
        })
        .count() as u64
}

/// Median lag (ms) of the last tenth minus the first tenth, records in planned order.
pub fn backlog_growth_ms(run: &RunObs) -> Option<f64> {
    let n = run.records.len();
    if n < BACKLOG_MIN_RECORDS {
        return None;
    }
    let mut by_plan: Vec<(u64, f64)> = run
        .records
        .iter()
        .map(|r| {
            (
                r.planned_ns,
                r.start_ns.saturating_sub(r.planned_ns) as f64 * 1e-6,
            )
        })
        .collect();
    by_plan.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let tenth = n / 10;
    let median = |s: &[(u64, f64)]| {
        let mut v: Vec<f64> = s.iter().map(|x| x.1).collect();
        v.sort_unstable_by(f64::total_cmp);
        inferbench_metrics::stats::percentile_linear(&v, 50.0)
    };
    Some(median(&by_plan[n - tenth..]) - median(&by_plan[..tenth]))
}

fn arrival_checks(ctx: &Ctx, rule: &LoadDeliveryRule, checks: &mut Vec<Check>) {
    let Some(a) = &rule.arrival else { return };
    let want = json!({"mode": a.mode, "rate_rps": a.rate_rps, "concurrency": a.concurrency, "process": a.process});
    for run in &ctx.obs.candidate {
        let Some(pin) = run
            .identity
            .as_ref()
            .and_then(|i| i.get("arrival_policy"))
            .map(|p| &p.value)
        else {
            checks.push(gap(
                "arrival",
                Some(want.clone()),
                format!("run {} records no arrival_policy pin", run.id),
            ));
            return;
        };
        let mut bad = Vec::new();
        if pin["mode"].as_str() != Some(a.mode.as_str()) {
            bad.push(format!("mode {} (spec {})", pin["mode"], a.mode));
        }
        if let Some(r) = a.rate_rps
            && pin["rate"]
                .as_f64()
                .is_none_or(|x| (x - r).abs() > 1e-9 * r.abs().max(1.0))
        {
            bad.push(format!("rate {} (spec {r})", pin["rate"]));
        }
        if let Some(c) = a.concurrency
            && pin["concurrency"].as_u64() != Some(c)
        {
            bad.push(format!("concurrency {} (spec {c})", pin["concurrency"]));
        }
        if let Some(p) = &a.process
            && pin["distribution"].as_str() != Some(p.as_str())
        {
            bad.push(format!("process {} (spec {p})", pin["distribution"]));
        }
        if !bad.is_empty() {
            checks.push(check(
                "arrival",
                false,
                pin.clone(),
                Some(want),
                format!("run {} planned {}", run.id, bad.join(", ")),
            ));
            return;
        }
    }
    checks.push(check(
        "arrival",
        true,
        Value::Null,
        Some(want),
        "every run planned the specified arrivals".into(),
    ));
}

/// The worst value over the runs (`worse(a, b)` true when `a` is worse), or a gap naming the
/// first run without it.
fn worst_of(
    runs: &[RunObs],
    f: impl Fn(&RunObs) -> Option<f64>,
    worse: impl Fn(f64, f64) -> bool,
) -> Result<f64, String> {
    let mut out: Option<f64> = None;
    for r in runs {
        let v = f(r).ok_or_else(|| format!("run {}", r.id))?;
        out = Some(match out {
            Some(o) if !worse(v, o) => o,
            _ => v,
        });
    }
    out.ok_or_else(|| "no run".to_string())
}

pub fn load_delivery(ctx: &Ctx, rule: &Rule, l: &LoadDeliveryRule) -> RuleVerdict {
    let runs = &ctx.obs.candidate;
    let mut checks = Vec::new();
    let mut observed = serde_json::Map::new();
    arrival_checks(ctx, l, &mut checks);
    if let Some((lo, hi)) = l.achieved_rate_band {
        // Against the target in rate mode, else against the schedule's own rate.
        let ratio = |r: &RunObs| {
            let achieved = summary_value(r, "achieved_request_rate")?;
            let target = summary_value(r, "target_request_rate")
                .or_else(|| summary_value(r, "scheduled_request_rate"))?;
            (target > 0.0).then(|| achieved / target)
        };
        let far = |a: f64, b: f64| (a - 1.0).abs() > (b - 1.0).abs();
        match worst_of(runs, ratio, far) {
            Ok(v) => {
                observed.insert("achieved_rate_ratio".into(), num(v));
                checks.push(check(
                    "achieved_rate_band",
                    v >= lo && v <= hi,
                    num(v),
                    Some(json!([lo, hi])),
                    format!("achieved rate {v:.4} x the target (band {lo}-{hi})"),
                ));
            }
            Err(w) => checks.push(gap(
                "achieved_rate_band",
                Some(json!([lo, hi])),
                format!("{w} has no achieved and target rate"),
            )),
        }
    }
    if let Some(max) = l.send_lag_p99_ms_max {
        match worst_of(runs, lag_p99, |a, b| a > b) {
            Ok(v) => {
                observed.insert("send_lag_p99_ms".into(), num(v));
                checks.push(check(
                    "send_lag_p99_ms",
                    v <= max,
                    num(v),
                    Some(json!({"op": "<=", "value": max})),
                    format!("schedule lag p99 {v:.3} ms (limit {max} ms)"),
                ));
            }
            Err(w) => checks.push(gap(
                "send_lag_p99_ms",
                Some(num(max)),
                format!("{w} has no schedule lag"),
            )),
        }
    }
    if let Some(min) = l.dispatched_fraction_min {
        let frac = |r: &RunObs| {
            let w = r.window?;
            (w.scheduled > 0).then(|| r.attempted() as f64 / w.scheduled as f64)
        };
        match worst_of(runs, frac, |a, b| a < b) {
            Ok(v) => {
                observed.insert("dispatched_fraction".into(), num(v));
                checks.push(check(
                    "dispatched_fraction",
                    v >= min,
                    num(v),
                    Some(json!({"op": ">=", "value": min})),
                    format!("{v:.4} of the scheduled requests were sent (minimum {min})"),
                ));
            }
            Err(w) => checks.push(gap(
                "dispatched_fraction",
                Some(num(min)),
                format!("{w} has no profiling window with a scheduled count"),
            )),
        }
    }
    if l.unapproved_throttle == Throttle::Forbid {
        let mut waited = 0u64;
        let mut rate_runs = 0;
        for r in runs {
            if let Some(c) = r.rate_ceiling {
                rate_runs += 1;
                waited += throttled(r, c);
            }
        }
        observed.insert("throttled_requests".into(), json!(waited));
        let reason = if rate_runs == 0 {
            "no run is rate-driven under a concurrency ceiling".to_string()
        } else {
            format!("{waited} requests waited for the concurrency ceiling at their planned time")
        };
        checks.push(check(
            "unapproved_throttle",
            waited == 0,
            json!(waited),
            Some(json!(0)),
            reason,
        ));
    }
    from_checks(rule, ctx.spec, checks, Value::Object(observed))
}

/// The CPU pressure `some avg10` maximum: the client's cgroup when read, else the host's.
fn pressure(r: &RunObs) -> Option<f64> {
    let p = &r.client.as_ref()?.summary.pressure;
    p.cgroup_cpu
        .as_ref()
        .or(p.cpu.as_ref())
        .and_then(|f| f.some.as_ref())
        .map(|s| s.avg10_max)
}

fn utilization_pct(r: &RunObs) -> Option<f64> {
    r.client
        .as_ref()?
        .summary
        .cpu_utilization_max
        .map(|c| c * 100.0)
}

pub fn client_headroom(ctx: &Ctx, rule: &Rule, c: &ClientHeadroomRule) -> RuleVerdict {
    let runs = &ctx.obs.candidate;
    let mut checks = Vec::new();
    let mut observed = serde_json::Map::new();
    for r in runs.iter().filter(|r| r.client.is_none()) {
        ctx.gap(format!("client resources not recorded for run {}", r.id));
    }
    if let Some(q) = &c.qualification {
        checks.extend(super::headroom::qualification_checks(ctx, c, q));
    } else if c.worker_levels_min.is_some() || c.plateau_tolerance.is_some() {
        ctx.gap("client-saturation qualification not run");
        checks.push(gap(
            "client_saturation",
            Some(json!({"worker_levels_min": c.worker_levels_min, "plateau_tolerance": c.plateau_tolerance})),
            "client-saturation qualification not run".into(),
        ));
    }
    let mut bounded =
        |name: &str, max: Option<f64>, f: &dyn Fn(&RunObs) -> Option<f64>, what: &str| {
            let Some(max) = max else { return };
            match worst_of(runs, f, |a, b| a > b) {
                Ok(v) => {
                    observed.insert(name.into(), num(v));
                    checks.push(check(
                        name,
                        v <= max,
                        num(v),
                        Some(json!({"op": "<=", "value": max})),
                        format!("{what} {v:.2} % (limit {max} %)"),
                    ));
                }
                Err(w) => checks.push(gap(
                    name,
                    Some(num(max)),
                    format!("{w} has no client {what} evidence"),
                )),
            }
        };
    bounded(
        "client_cpu_pressure_some_avg10",
        c.client_cpu_pressure_some_avg10_max,
        &pressure,
        "CPU pressure some avg10 max",
    );
    bounded(
        "client_cpu_utilization",
        c.client_cpu_utilization_max,
        &utilization_pct,
        "CPU utilisation max",
    );
    if c.backlog_growth == Throttle::Forbid {
        match worst_of(runs, backlog_growth_ms, |a, b| a > b) {
            Ok(v) => {
                observed.insert("backlog_growth_ms".into(), num(v));
                checks.push(check(
                    "backlog_growth",
                    v <= BACKLOG_GROWTH_MS,
                    num(v),
                    Some(json!({"op": "<=", "value": BACKLOG_GROWTH_MS})),
                    format!(
                        "median schedule lag of the last tenth minus the first tenth: {v:.3} ms (limit {BACKLOG_GROWTH_MS} ms)"
                    ),
                ));
            }
            Err(w) => checks.push(gap(
                "backlog_growth",
                Some(num(BACKLOG_GROWTH_MS)),
                format!("{w} has fewer than {BACKLOG_MIN_RECORDS} records"),
            )),
        }
    }
    from_checks(rule, ctx.spec, checks, Value::Object(observed))
}
