//! The manifest's plain-language lines: how requests arrive, the warmup, the stop rule.

use inferbench_core::RunPlan;
use inferbench_core::plan::ArrivalKind;

use crate::sessions::FixedSchedule;

/// How requests arrive, e.g. `concurrency 4 (burst: …)` or `request rate 50 /s, poisson`.
pub fn arrival(plan: &RunPlan, fixed: Option<&FixedSchedule>) -> String {
    if let Some(f) = fixed {
        let fs = plan.load.fixed_schedule;
        return format!(
            "fixed schedule: {} sessions at their trace times (trace time {} ms is offset 0{}{}){}",
            f.offsets_ns.len(),
            f.zero_ms,
            fs.start_offset_ms
                .map_or(String::new(), |s| format!(", from {s} ms")),
            fs.end_offset_ms
                .map_or(String::new(), |e| format!(", to {e} ms")),
            fs.ceiling
                .map_or(String::new(), |c| format!(", at most {c} sessions at once")),
        );
    }
    if let Some(u) = plan.load.user_centric {
        return format!(
            "user-centric: {} users, {} requests/s together (each user {:.3} s apart, waiting for its previous request)",
            u.users,
            u.rate,
            u.users as f64 / u.rate
        );
    }
    let cancellation = plan.load.cancellation.map_or(String::new(), |c| {
        format!(", {}% cancelled {} s after sending", c.rate_pct, c.delay_s)
    });
    match &plan.load.request_rate {
        Some(r) => format!(
            "request rate {} /s, {}{}{}{cancellation}",
            r.rate,
            match r.pattern {
                ArrivalKind::Constant => "constant".to_string(),
                ArrivalKind::Poisson => "poisson".to_string(),
                ArrivalKind::Gamma => format!("gamma (smoothness {})", r.smoothness.unwrap_or(1.0)),
            },
            r.ramp_s.map_or(String::new(), |d| format!(", ramp {d} s")),
            r.ceiling
                .map_or(String::new(), |c| format!(", at most {c} in flight")),
        ),
        None => format!(
            "concurrency {} (burst: a new request as soon as a slot frees){cancellation}",
            plan.load.concurrency,
        ),
    }
}

/// The warmup: none, or its limits (a count, sessions, a duration; the first reached ends
/// it).
pub fn warmup(plan: &RunPlan) -> String {
    let l = &plan.load;
    let mut limits = Vec::new();
    if l.warmup_request_count > 0 {
        limits.push(format!("{} requests", l.warmup_request_count));
    }
    if let Some(n) = l.warmup_sessions {
        limits.push(format!("{n} sessions"));
    }
    if let Some(d) = l.warmup_duration_s {
        limits.push(format!("{d} s"));
    }
    match limits.len() {
        0 => "none".into(),
        1 => limits.remove(0),
        _ => format!("{}, whichever first", limits.join(" or ")),
    }
}

/// What ends the profiling phase.
pub fn stop_rule(plan: &RunPlan) -> String {
    let l = &plan.load;
    let main = match (l.benchmark_duration_s, l.profiling_sessions) {
        (Some(d), _) => format!(
            "duration {d} s, then a grace period of {}",
            l.benchmark_grace_period_s
                .map_or("inf".to_string(), |g| format!("{g} s"))
        ),
        (None, Some(_)) if !l.request_count_given => return sessions(l.profiling_sessions),
        (None, _) => format!("request count {}", l.request_count),
    };
    match l.profiling_sessions {
        Some(_) => format!(
            "{main}, or {}, whichever first",
            sessions(l.profiling_sessions)
        ),
        None => main,
    }
}

fn sessions(n: Option<u64>) -> String {
    format!("{} sessions (each with all its turns)", n.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_warmup_and_count_read_as_written() {
        let mut p = crate::test_plan::plan();
        p.load.concurrency = 4;
        p.load.request_count = 100;
        assert_eq!(
            arrival(&p, None),
            "concurrency 4 (burst: a new request as soon as a slot frees)"
        );
        assert_eq!(warmup(&p), "none");
        p.load.warmup_request_count = 8;
        p.load.warmup_duration_s = Some(2.5);
        assert_eq!(warmup(&p), "8 requests or 2.5 s, whichever first");
        p.load.warmup_sessions = Some(3);
        assert_eq!(
            warmup(&p),
            "8 requests or 3 sessions or 2.5 s, whichever first"
        );
        p.load.warmup_request_count = 0;
        p.load.warmup_duration_s = None;
        assert_eq!(warmup(&p), "3 sessions");
        assert_eq!(stop_rule(&p), "request count 100");
        p.load.benchmark_duration_s = Some(60.0);
        assert_eq!(stop_rule(&p), "duration 60 s, then a grace period of inf");
    }
}
