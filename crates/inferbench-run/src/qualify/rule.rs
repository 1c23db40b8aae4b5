//! The verdict (docs/qualify.md, "Verdicts and precedence"). In order, the first that
//! applies:
//!
//! 1. INCONCLUSIVE: τ not positive, no runs, a run without the server's tokens/s, fewer
//!    than 2 worker counts;
//! 2. INCONCLUSIVE: a run's client/server token counts disagree beyond §2.7's bound (or
//!    cannot be compared): the server counter itself is in doubt;
//! 3. a step within τ (the first, the plateau candidate k): CLIENT_SUFFICIENT or
//!    SERVER_SATURATED when the noise, equivalence, no-later-rise and gate conditions all
//!    hold at k−1 and k, else INCONCLUSIVE naming every condition that did not;
//! 4. no step within τ: CLIENT_LIMITED when a client gate FAILs at the largest w, or when
//!    the last step rises by ≥ τ with the noise condition passing; else INCONCLUSIVE.

use std::collections::BTreeMap;

use super::gates::{self, StepGates, trim};
use super::stats::{self, StepDelta};
use super::{
    CrossCheck, Detail, GateStatus, HostPressure, Plateau, Qualification, QualifySpec,
    SaturationRun, StepRun, Verdict,
};

/// The server queue is "high" at a time-weighted mean of this many waiting requests.
pub const WAITING_HIGH: f64 = 1.0;
/// KV-cache usage at or above this is "near 1".
pub const KV_HIGH: f64 = 0.95;
/// The cross-check's floor, percent.
pub const CROSS_CHECK_FLOOR_PCT: f64 = 2.0;

struct Out {
    verdict: Verdict,
    workers: Option<usize>,
    reasons: Vec<String>,
}

fn out(verdict: Verdict, workers: Option<usize>, reasons: Vec<String>) -> Out {
    Out {
        verdict,
        workers,
        reasons,
    }
}

pub fn decide(spec: &QualifySpec, runs: &[StepRun]) -> Qualification {
    let mut d = Detail::default();
    let o = judge(spec, runs, &mut d);
    Qualification {
        verdict: o.verdict,
        qualified_workers: o.workers,
        reasons: o.reasons,
        spec: spec.clone(),
        runs: runs.to_vec(),
        detail: serde_json::to_value(&d).expect("the detail serializes"),
    }
}

fn signed(v: f64) -> String {
    format!("{v:+.2} %")
}

fn measured(r: &StepRun) -> Option<f64> {
    r.server_tokens_per_s.filter(|v| v.is_finite() && *v > 0.0)
}

/// The §2.7 cross-check of one run.
pub fn cross_check(r: &StepRun) -> CrossCheck {
    let mut c = CrossCheck {
        workers: r.workers,
        repeat: r.repeat,
        dir: r.dir.clone(),
        status: GateStatus::NotMeasured,
        gap_pct: None,
        bound_pct: None,
        note: String::new(),
    };
    let (Some(client), Some(server)) = (r.client_output_tokens, r.server_output_tokens) else {
        c.note = "client or server output tokens over the window not recorded".into();
        return c;
    };
    if server <= 0.0 || !client.is_finite() || !server.is_finite() {
        c.note = format!("server output tokens {server}: no ratio");
        return c;
    }
    let gap = 100.0 * (client - server).abs() / server;
    c.gap_pct = Some(gap);
    let window = r
        .window_s
        .or_else(|| Some(server / measured(r)?))
        .filter(|w| *w > 0.0);
    let edge = match (r.concurrency, r.mean_osl_tokens, measured(r), window) {
        (Some(cc), Some(osl), Some(rate), Some(w)) => Some(100.0 * 2.0 * cc * osl / (rate * w)),
        _ => None,
    };
    c.bound_pct = edge.map(|e| e.max(CROSS_CHECK_FLOOR_PCT));
    let bound = c.bound_pct.unwrap_or(CROSS_CHECK_FLOOR_PCT);
    if gap <= bound {
        c.status = GateStatus::Pass;
        c.note = format!("gap {} % ≤ bound {} %", trim(gap), trim(bound));
    } else if c.bound_pct.is_some() {
        c.status = GateStatus::Fail;
        c.note = format!(
            "gap {} % > bound {} %: tokens miscounted or the windows misaligned",
            trim(gap),
            trim(bound)
        );
    } else {
        c.note = format!(
            "gap {} % > {} % and the edge bound's inputs (concurrency, mean OSL, window) are not recorded",
            trim(gap),
            trim(CROSS_CHECK_FLOOR_PCT)
        );
    }
    c
}

/// The server's saturation signals in one run.
pub fn saturation(r: &StepRun) -> SaturationRun {
    let e = &r.evidence;
    let mut signals = Vec::new();
    let mut any = false;
    if let Some(m) = e.server_waiting_mean {
        any = true;
        let change = e.server_waiting_change.unwrap_or(0.0);
        if m >= WAITING_HIGH {
            signals.push(format!(
                "waiting requests mean {} ≥ {WAITING_HIGH}",
                trim(m)
            ));
        } else if m > 0.0 && change > 0.0 {
            signals.push(format!(
                "waiting requests mean {} > 0 and growing (+{})",
                trim(m),
                trim(change)
            ));
        }
    }
    if let Some(kv) = e.server_kv_usage_max {
        any = true;
        if kv >= KV_HIGH {
            signals.push(format!("KV-cache usage max {} ≥ {KV_HIGH}", trim(kv)));
        }
    }
    if let Some(p) = e.server_preemptions {
        any = true;
        if p > 0.0 {
            signals.push(format!("{} preemptions in the window", trim(p)));
        }
    }
    SaturationRun {
        workers: r.workers,
        repeat: r.repeat,
        dir: r.dir.clone(),
        saturated: any.then_some(!signals.is_empty()),
        signals,
    }
}

fn judge(spec: &QualifySpec, runs: &[StepRun], d: &mut Detail) -> Out {
    let tau = spec.tolerance_pct;
    let inconclusive = |r: String| out(Verdict::Inconclusive, None, vec![r]);
    if !(tau.is_finite() && tau > 0.0) {
        return inconclusive(format!(
            "the declared tolerance τ = {tau} % is not a positive number"
        ));
    }
    if runs.is_empty() {
        return inconclusive("no runs".into());
    }
    let mut by: BTreeMap<usize, Vec<&StepRun>> = BTreeMap::new();
    for r in runs {
        by.entry(r.workers).or_default().push(r);
    }
    for v in by.values_mut() {
        v.sort_by_key(|r| r.repeat);
    }
    d.gates = by
        .iter()
        .map(|(&w, rs)| gates::step_gates(w, rs, &spec.gates))
        .collect();
    d.host_cpu_pressure = by
        .iter()
        .map(|(&w, rs)| HostPressure {
            workers: w,
            cpu_some_max: rs
                .iter()
                .filter_map(|r| r.evidence.host_cpu_pressure_some)
                .reduce(f64::max),
        })
        .collect();
    d.cross_check = runs.iter().map(cross_check).collect();
    let unmeasured: Vec<&str> = runs
        .iter()
        .filter(|r| measured(r).is_none())
        .map(|r| r.dir.as_str())
        .collect();
    if !unmeasured.is_empty() {
        return inconclusive(format!(
            "the server's output tokens/s was not measured in {}: the plateau rule reads only the server's counter",
            unmeasured.join(", ")
        ));
    }
    d.steps = by
        .iter()
        .map(|(&w, rs)| stats::step_stat(w, rs.iter().filter_map(|r| measured(r)).collect()))
        .collect();
    if d.steps.len() < 2 {
        return inconclusive(format!(
            "one worker count (w = {}): a plateau needs at least two",
            d.steps[0].workers
        ));
    }
    d.deltas = d
        .steps
        .windows(2)
        .map(|p| stats::step_delta(&p[0], &p[1], tau))
        .collect();
    let bad: Vec<String> = d
        .cross_check
        .iter()
        .filter(|c| c.status != GateStatus::Pass)
        .map(|c| {
            format!(
                "client/server output tokens at w = {} (repeat {}, {}): {} {}",
                c.workers,
                c.repeat,
                c.dir,
                c.status.as_str(),
                c.note
            )
        })
        .collect();
    if !bad.is_empty() {
        let mut r = vec![
            "the server counter cannot be trusted: the client↔server token cross-check (telemetry.md §2.7) does not pass".to_string(),
        ];
        r.extend(bad);
        return out(Verdict::Inconclusive, None, r);
    }
    match d.deltas.iter().position(|x| x.within_tolerance) {
        Some(i) => plateau(spec, by, d, i),
        None => no_plateau(tau, d),
    }
}

fn describe(x: &StepDelta, tau: f64) -> String {
    format!(
        "δ({}→{}) = {} (τ = {} %)",
        x.from_workers,
        x.to_workers,
        signed(x.delta_pct),
        trim(tau)
    )
}

/// Gate reasons at one step: FAIL always, NOT_MEASURED when needed; WARN and unneeded
/// NOT_MEASURED as notes.
fn gate_lines(g: &StepGates, blocking: &mut Vec<String>, notes: &mut Vec<String>) {
    for o in &g.gates {
        let line = format!(
            "w = {}: {} {} ({}; {})",
            g.workers,
            o.gate,
            o.status.as_str(),
            o.note,
            o.run.as_deref().unwrap_or("-")
        );
        match o.status {
            GateStatus::Fail => blocking.push(line),
            GateStatus::NotMeasured if o.needed => blocking.push(line),
            GateStatus::NotMeasured => notes.push(format!("{line}: not needed, not judged")),
            GateStatus::Warn => notes.push(format!("{line}: passes with a warning")),
            _ => {}
        }
    }
}

fn plateau(
    spec: &QualifySpec,
    by: BTreeMap<usize, Vec<&StepRun>>,
    d: &mut Detail,
    i: usize,
) -> Out {
    let tau = spec.tolerance_pct;
    let x = d.deltas[i].clone();
    let (lo_w, hi_w) = (x.from_workers, x.to_workers);
    let mut blocking = Vec::new();
    let mut notes = Vec::new();
    match x.noise {
        GateStatus::NotMeasured => {
            let single: Vec<String> = [&d.steps[i], &d.steps[i + 1]]
                .iter()
                .filter(|s| s.runs < 2)
                .map(|s| format!("w = {}", s.workers))
                .collect();
            blocking.push(format!(
                "one run at {}: the run-to-run CV cannot be measured, so the noise condition τ ≥ 2·CV_pooled is NOT_MEASURED (and so is the equivalence interval); run at least 3 repeats per step",
                single.join(" and ")
            ));
        }
        GateStatus::Fail => blocking.push(format!(
            "noise: CV_pooled = {} % > τ/2 = {} %; add repeats or extend the window",
            trim(x.cv_pooled_pct.unwrap_or(f64::NAN)),
            trim(tau / 2.0)
        )),
        _ => {}
    }
    let eq = &x.equivalence;
    let interval = match (eq.low, eq.high) {
        (Some(l), Some(h)) => format!("[{:+.1}, {:+.1}]", l, h),
        _ => "(none)".into(),
    };
    match eq.status {
        GateStatus::Fail => blocking.push(format!(
            "equivalence: the 95 % interval of the difference of step means {interval} tokens/s is not inside ±τ·R/100 = ±{:.1}: the flat step may be luck; add repeats or extend the window",
            eq.margin
        )),
        GateStatus::NotMeasured if x.noise != GateStatus::NotMeasured => blocking.push(
            "equivalence: no interval (the steps' spread cannot be estimated); add repeats".into(),
        ),
        _ => {}
    }
    for later in &d.deltas[i + 1..] {
        if later.delta_pct >= tau {
            blocking.push(format!(
                "the server rate rose again after the flat step: {}; the flat step was not a plateau",
                describe(later, tau)
            ));
        }
    }
    for g in d
        .gates
        .iter()
        .filter(|g| g.workers == lo_w || g.workers == hi_w)
    {
        gate_lines(g, &mut blocking, &mut notes);
    }
    let head = format!(
        "plateau candidate {} with CV_pooled = {} and the 95 % interval {interval} tokens/s against ±{:.1}",
        describe(&x, tau),
        x.cv_pooled_pct
            .map_or("not measured".into(), |c| format!("{} %", trim(c))),
        eq.margin
    );
    if !blocking.is_empty() {
        d.plateau = Some(Plateau {
            from_workers: lo_w,
            to_workers: hi_w,
            confirmed: false,
        });
        let mut r = vec![format!("{head}, but:")];
        r.extend(blocking);
        r.extend(notes);
        return out(Verdict::Inconclusive, None, r);
    }
    d.plateau = Some(Plateau {
        from_workers: lo_w,
        to_workers: hi_w,
        confirmed: true,
    });
    let mut r = vec![
        format!("{head}: flat (τ ≥ 2·CV_pooled) and equivalent"),
        format!("every needed client gate passes at w = {lo_w} and w = {hi_w}"),
    ];
    r.extend(notes);
    // Workers beyond the plateau pair are reported, not judged: more threads than the
    // client's CPUs can contend without making the smaller count insufficient.
    for g in d.gates.iter().filter(|g| g.workers > hi_w) {
        for o in g.gates.iter().filter(|o| o.status == GateStatus::Fail) {
            r.push(format!(
                "beyond the plateau, w = {}: {} FAIL ({}): not used for the verdict",
                g.workers, o.gate, o.note
            ));
        }
    }
    let qualified = if spec.prefer_headroom { hi_w } else { lo_w };
    r.insert(
        0,
        format!(
            "qualified at {qualified} workers{}",
            if spec.prefer_headroom {
                " (headroom preferred)"
            } else {
                ""
            }
        ),
    );
    d.server_saturation = by[&hi_w].iter().map(|r| saturation(r)).collect();
    let sat = &d.server_saturation;
    if !sat.is_empty() && sat.iter().all(|s| s.saturated == Some(true)) {
        let signals: Vec<String> = sat
            .iter()
            .map(|s| format!("{}: {}", s.dir, s.signals.join(", ")))
            .collect();
        r.push(format!(
            "the server is saturated at w = {hi_w} in every run ({}): the limit is the server",
            signals.join("; ")
        ));
        return out(Verdict::ServerSaturated, Some(qualified), r);
    }
    if sat.iter().all(|s| s.saturated.is_none()) {
        r.push(format!(
            "server saturation signals (waiting queue, KV usage, preemptions) not measured at w = {hi_w}"
        ));
    }
    out(Verdict::ClientSufficient, Some(qualified), r)
}

fn no_plateau(tau: f64, d: &Detail) -> Out {
    let last = d.deltas.last().expect("two steps");
    let top = d.gates.last().expect("two steps");
    let fails: Vec<String> = top
        .gates
        .iter()
        .filter(|o| o.status == GateStatus::Fail)
        .map(|o| {
            format!(
                "{} FAIL ({}; {})",
                o.gate,
                o.note,
                o.run.as_deref().unwrap_or("-")
            )
        })
        .collect();
    if !fails.is_empty() {
        let mut r = vec![format!(
            "no step within τ = {} %, and at the largest worker count w = {} a client gate fails: add client capacity (hosts or shards) or lower the target",
            trim(tau),
            top.workers
        )];
        r.extend(fails);
        return out(Verdict::ClientLimited, None, r);
    }
    if last.delta_pct >= tau {
        if last.noise == GateStatus::Pass {
            return out(
                Verdict::ClientLimited,
                None,
                vec![format!(
                    "the server rate still rises at the largest worker count: {} with CV_pooled = {} %: add client capacity (hosts or shards) or lower the target",
                    describe(last, tau),
                    trim(last.cv_pooled_pct.unwrap_or(f64::NAN))
                )],
            );
        }
        return out(
            Verdict::Inconclusive,
            None,
            vec![format!(
                "the server rate rose at the largest worker count ({}), but the noise condition is {}: {}",
                describe(last, tau),
                last.noise.as_str(),
                match last.cv_pooled_pct {
                    Some(c) => format!("CV_pooled = {} % > τ/2; add repeats or extend the window", trim(c)),
                    None => "one run per step, so the run-to-run CV cannot be measured; run at least 3 repeats per step".into(),
                }
            )],
        );
    }
    out(
        Verdict::Inconclusive,
        None,
        vec![format!(
            "no step within τ and the server rate fell at the largest worker count ({}): server drift or client contention, not a plateau",
            describe(last, tau)
        )],
    )
}
