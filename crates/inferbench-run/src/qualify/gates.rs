//! The client evidence gates (telemetry.md §5.3 step 7; docs/qualify.md, "Evidence gates"):
//! one run's outcome of each gate, and a step's outcome as its worst run.
//!
//! Missing evidence is NOT_MEASURED, never a pass. The gates marked needed make the verdict
//! INCONCLUSIVE when NOT_MEASURED at the plateau pair; throttling and memory are not
//! needed (their counters exist only where the cgroup controllers are enabled), so their
//! NOT_MEASURED is named beside the verdict without blocking it.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{GateStatus, GateThresholds, RunEvidence, StepRun};

/// Every gate, in the order shown.
pub const GATES: [&str; 9] = [
    "dispatch_lag",
    "achieved_rate",
    "cpu_util",
    "cpu_pressure",
    "throttling",
    "memory",
    "runq_wait",
    "recv_q",
    "backlog",
];

/// One gate at one worker count: the worst of its runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateOutcome {
    pub gate: String,
    pub status: GateStatus,
    /// NOT_MEASURED here makes a plateau verdict INCONCLUSIVE.
    pub needed: bool,
    /// The worst run's figures (null when not measured or not applicable).
    pub value: Value,
    pub threshold: String,
    /// The worst run's directory.
    pub run: Option<String>,
    pub note: String,
}

/// The gates of one worker count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepGates {
    pub workers: usize,
    pub gates: Vec<GateOutcome>,
}

impl StepGates {
    pub fn get(&self, gate: &str) -> Option<&GateOutcome> {
        self.gates.iter().find(|g| g.gate == gate)
    }
}

/// One run's outcome of one gate.
#[derive(Clone, Debug, PartialEq)]
pub struct RunGate {
    pub status: GateStatus,
    pub value: Value,
    pub note: String,
    /// Orders runs of the same status: larger is worse.
    pub badness: f64,
}

fn outcome(status: GateStatus, value: Value, badness: f64, note: String) -> RunGate {
    RunGate {
        status,
        value,
        note,
        badness,
    }
}

fn not_measured(what: &str) -> RunGate {
    outcome(
        GateStatus::NotMeasured,
        Value::Null,
        0.0,
        format!("{what} not recorded"),
    )
}

/// PASS ≤ pass, WARN ≤ warn, FAIL above, for a fraction shown in percent.
fn three_level(v: Option<f64>, pass: f64, warn: f64, what: &str) -> RunGate {
    let Some(v) = v else {
        return not_measured(what);
    };
    let (status, cmp) = if v <= pass {
        (GateStatus::Pass, format!("≤ {}", pct(pass)))
    } else if v <= warn {
        (
            GateStatus::Warn,
            format!("> {}, ≤ {}", pct(pass), pct(warn)),
        )
    } else {
        (GateStatus::Fail, format!("> {}", pct(warn)))
    };
    outcome(status, json!(v), v, format!("{what} {} {cmp}", pct(v)))
}

fn pct(f: f64) -> String {
    format!("{} %", trim(100.0 * f))
}

/// A number with at most 3 decimals, trailing zeros dropped.
pub fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// True when NOT_MEASURED for this gate blocks a plateau verdict.
pub fn needed(gate: &str, rate_mode: bool) -> bool {
    match gate {
        "dispatch_lag" | "achieved_rate" => rate_mode,
        "throttling" | "memory" => false,
        _ => true,
    }
}

/// The rule of a gate, as printed with the verdict.
pub fn threshold(gate: &str, t: &GateThresholds) -> String {
    match gate {
        "dispatch_lag" => format!(
            "PASS p99 ≤ {} ms and ≤ {} of the mean inter-arrival gap, max ≤ {} ms; WARN p99 ≤ {} ms; FAIL otherwise or a lag slope > 0 with p < {} (rate modes only)",
            trim(t.lag_p99_pass_ms),
            pct(t.lag_p99_gap_fraction),
            trim(t.lag_max_ms),
            trim(t.lag_p99_warn_ms),
            trim(t.lag_slope_alpha)
        ),
        "achieved_rate" => format!(
            "|achieved − target|: PASS ≤ {} %, WARN ≤ {} %, FAIL above",
            trim(t.achieved_pass_pct),
            trim(t.achieved_warn_pct)
        ),
        "cpu_util" => format!(
            "client cgroup CPU U of N_eff: PASS ≤ {}, WARN ≤ {}, FAIL above",
            pct(t.cpu_util_pass),
            pct(t.cpu_util_warn)
        ),
        "cpu_pressure" => format!(
            "client cgroup cpu.pressure some Δtotal/Δt: PASS ≤ {}, WARN ≤ {}, FAIL above",
            pct(t.cpu_pressure_pass),
            pct(t.cpu_pressure_warn)
        ),
        "throttling" => format!(
            "PASS Δnr_throttled = 0; WARN throttled time ≤ {} of the window; FAIL above",
            pct(t.throttle_warn)
        ),
        "memory" => format!(
            "PASS memory.pressure some ≤ {} and no memory.events increase; WARN otherwise; FAIL any oom/oom_kill",
            pct(t.memory_pressure_pass)
        ),
        "runq_wait" => format!(
            "worst worker thread's run-queue wait / wall: PASS ≤ {}, WARN ≤ {}, FAIL above",
            pct(t.runq_wait_pass),
            pct(t.runq_wait_warn)
        ),
        "recv_q" => format!(
            "PASS non-zero in < {} of samples and max < {} B; WARN non-zero in < {}; FAIL otherwise or growing",
            pct(t.recvq_nonzero_pass),
            t.recvq_max_bytes,
            pct(t.recvq_nonzero_warn)
        ),
        "backlog" => {
            "PASS neither the planned-send queue nor the evidence writer's backlog grew through the window; FAIL either grew".into()
        }
        _ => String::new(),
    }
}

fn dispatch_lag(e: &RunEvidence, t: &GateThresholds) -> RunGate {
    if !e.rate_mode {
        return outcome(
            GateStatus::NotApplicable,
            Value::Null,
            0.0,
            "concurrency mode: a request is sent when a slot frees, there is no schedule to lag"
                .into(),
        );
    }
    let (Some(p99), Some(max), Some(gap), Some(slope), Some(p)) = (
        e.lag_p99_ms,
        e.lag_max_ms,
        e.mean_interarrival_ms,
        e.lag_slope_ms_per_s,
        e.lag_slope_p,
    ) else {
        let missing: Vec<&str> = [
            ("lag p99", e.lag_p99_ms.is_none()),
            ("lag max", e.lag_max_ms.is_none()),
            ("mean inter-arrival gap", e.mean_interarrival_ms.is_none()),
            ("lag slope", e.lag_slope_ms_per_s.is_none()),
            ("lag slope p-value", e.lag_slope_p.is_none()),
        ]
        .iter()
        .filter(|x| x.1)
        .map(|x| x.0)
        .collect();
        return not_measured(&missing.join(", "));
    };
    let value = json!({"p99_ms": p99, "max_ms": max, "mean_interarrival_ms": gap, "slope_ms_per_s": slope, "slope_p": p});
    let fig = format!(
        "lag p99 {} ms, max {} ms, mean gap {} ms, slope {} ms/s (p {})",
        trim(p99),
        trim(max),
        trim(gap),
        trim(slope),
        trim(p)
    );
    let (status, why) = if slope > 0.0 && p < t.lag_slope_alpha {
        (GateStatus::Fail, "the lag trends up over the window")
    } else if p99 <= t.lag_p99_pass_ms && p99 <= t.lag_p99_gap_fraction * gap && max <= t.lag_max_ms
    {
        (GateStatus::Pass, "within the pass limits")
    } else if p99 <= t.lag_p99_warn_ms {
        (GateStatus::Warn, "p99 within the warn limit")
    } else {
        (GateStatus::Fail, "p99 above the warn limit")
    };
    outcome(status, value, p99, format!("{fig}: {why}"))
}

fn achieved(e: &RunEvidence, t: &GateThresholds) -> RunGate {
    let Some(a) = e.achieved_pct else {
        if !e.rate_mode {
            return outcome(
                GateStatus::NotApplicable,
                Value::Null,
                0.0,
                "concurrency mode: no offered rate".into(),
            );
        }
        return not_measured("achieved issue rate / target");
    };
    let dev = (a - 100.0).abs();
    let status = if dev <= t.achieved_pass_pct {
        GateStatus::Pass
    } else if dev <= t.achieved_warn_pct {
        GateStatus::Warn
    } else {
        GateStatus::Fail
    };
    outcome(
        status,
        json!(a),
        dev,
        format!("achieved {} % of the target ({} % off)", trim(a), trim(dev)),
    )
}

fn throttling(e: &RunEvidence, t: &GateThresholds) -> RunGate {
    let Some(n) = e.nr_throttled else {
        return not_measured(
            "nr_throttled (cpu.stat has it only with the cpu controller enabled in the client's group)",
        );
    };
    if n == 0 {
        return outcome(
            GateStatus::Pass,
            json!({"nr_throttled": 0, "fraction": e.throttle_fraction}),
            0.0,
            "no period throttled".into(),
        );
    }
    let Some(f) = e.throttle_fraction else {
        return outcome(
            GateStatus::NotMeasured,
            json!({"nr_throttled": n}),
            n as f64,
            format!("{n} periods throttled, throttled time not recorded"),
        );
    };
    let status = if f <= t.throttle_warn {
        GateStatus::Warn
    } else {
        GateStatus::Fail
    };
    outcome(
        status,
        json!({"nr_throttled": n, "fraction": f}),
        f,
        format!("{n} periods throttled, {} of the window", pct(f)),
    )
}

fn memory(e: &RunEvidence, t: &GateThresholds) -> RunGate {
    let value = json!({"pressure_some": e.memory_pressure_some, "events": e.memory_events, "oom_events": e.memory_oom_events});
    let events = e.memory_events.unwrap_or(0);
    if let Some(oom) = e.memory_oom_events.filter(|&o| o > 0) {
        return outcome(
            GateStatus::Fail,
            value,
            f64::MAX,
            format!("{oom} oom/oom_kill events"),
        );
    }
    if events > 0 && e.memory_oom_events.is_none() {
        // An increase that may be an OOM kill is not let through as a warning.
        return outcome(
            GateStatus::Fail,
            value,
            events as f64,
            format!("memory.events rose by {events} and oom is not separated from high/max"),
        );
    }
    let Some(p) = e.memory_pressure_some else {
        return not_measured("memory.pressure some");
    };
    if events > 0 || p > t.memory_pressure_pass {
        return outcome(
            GateStatus::Warn,
            value,
            p,
            format!(
                "memory.pressure some {}, memory.events +{events} (no oom)",
                pct(p)
            ),
        );
    }
    if e.memory_events.is_none() {
        return outcome(
            GateStatus::NotMeasured,
            value,
            p,
            format!(
                "memory.pressure some {}, but memory.events not recorded (high/max/oom unchecked)",
                pct(p)
            ),
        );
    }
    outcome(
        GateStatus::Pass,
        value,
        p,
        format!("memory.pressure some {}, no memory.events increase", pct(p)),
    )
}

fn recv_q(e: &RunEvidence, t: &GateThresholds) -> RunGate {
    let (Some(f), Some(max)) = (e.recvq_nonzero_fraction, e.recvq_max_bytes) else {
        return not_measured("Recv-Q non-zero fraction and maximum");
    };
    let value = json!({"nonzero_fraction": f, "max_bytes": max, "growing": e.recvq_growing});
    let fig = format!("Recv-Q non-zero in {} of samples, max {max} B", pct(f));
    let (status, why) = if e.recvq_growing == Some(true) {
        (GateStatus::Fail, ", growing")
    } else if f >= t.recvq_nonzero_warn {
        (GateStatus::Fail, "")
    } else if f < t.recvq_nonzero_pass && max < t.recvq_max_bytes {
        (GateStatus::Pass, "")
    } else {
        (GateStatus::Warn, "")
    };
    outcome(status, value, f, format!("{fig}{why}"))
}

fn backlog(e: &RunEvidence) -> RunGate {
    let Some(planned) = e.backlog_growing else {
        return not_measured("planned-send queue depth");
    };
    // The writer's backlog is judged when recorded (older runs lack it).
    let writer = e.writer_backlog_growing.unwrap_or(false);
    let note = match (planned, writer) {
        (false, false) => "neither the planned-send queue nor the evidence writer's backlog grew",
        (true, false) => "the planned-send queue grew through the window",
        (false, true) => {
            "the evidence writer fell behind (its backlog grew through the window): the client's disk or CPU limited the run"
        }
        (true, true) => {
            "the planned-send queue and the evidence writer's backlog both grew through the window"
        }
    };
    let bad = planned || writer;
    outcome(
        if bad {
            GateStatus::Fail
        } else {
            GateStatus::Pass
        },
        json!({"planned_send": planned, "writer": e.writer_backlog_growing}),
        f64::from(u8::from(planned)) + f64::from(u8::from(writer)),
        note.into(),
    )
}

/// One run's outcome of `gate`.
pub fn run_gate(gate: &str, e: &RunEvidence, t: &GateThresholds) -> RunGate {
    match gate {
        "dispatch_lag" => dispatch_lag(e, t),
        "achieved_rate" => achieved(e, t),
        "cpu_util" => three_level(e.cpu_util, t.cpu_util_pass, t.cpu_util_warn, "CPU U"),
        "cpu_pressure" => three_level(
            e.cpu_pressure_some,
            t.cpu_pressure_pass,
            t.cpu_pressure_warn,
            "cpu.pressure some",
        ),
        "throttling" => throttling(e, t),
        "memory" => memory(e, t),
        "runq_wait" => three_level(
            e.runq_wait_max,
            t.runq_wait_pass,
            t.runq_wait_warn,
            "run-queue wait",
        ),
        "recv_q" => recv_q(e, t),
        "backlog" => backlog(e),
        _ => not_measured(gate),
    }
}

/// Severity order of the worst run: FAIL, NOT_MEASURED, WARN, PASS, NOT_APPLICABLE.
fn rank(s: GateStatus) -> u8 {
    match s {
        GateStatus::NotApplicable => 0,
        GateStatus::Pass => 1,
        GateStatus::Warn => 2,
        GateStatus::NotMeasured => 3,
        GateStatus::Fail => 4,
    }
}

/// Every gate at one worker count, each the worst of `runs` (non-empty).
pub fn step_gates(workers: usize, runs: &[&StepRun], t: &GateThresholds) -> StepGates {
    let rate_mode = runs.iter().any(|r| r.evidence.rate_mode);
    let gates = GATES
        .iter()
        .map(|&g| {
            let mut worst: Option<(RunGate, &StepRun)> = None;
            for r in runs {
                let o = run_gate(g, &r.evidence, t);
                let worse = match &worst {
                    None => true,
                    Some((w, _)) => {
                        (rank(o.status), o.badness).partial_cmp(&(rank(w.status), w.badness))
                            == Some(std::cmp::Ordering::Greater)
                    }
                };
                if worse {
                    worst = Some((o, r));
                }
            }
            let (o, r) = worst.expect("a step has runs");
            GateOutcome {
                gate: g.into(),
                status: o.status,
                needed: needed(g, rate_mode),
                value: o.value,
                threshold: threshold(g, t),
                run: Some(r.dir.clone()),
                note: o.note,
            }
        })
        .collect();
    StepGates { workers, gates }
}
