//! Every branch of every gate (PASS / WARN / FAIL / NOT_MEASURED, NOT_APPLICABLE where a
//! mode has none), at the default thresholds, and the worst run of a step.

use super::gates::{run_gate, step_gates};
use super::tests::clean;
use super::*;

fn status(gate: &str, e: &RunEvidence) -> GateStatus {
    run_gate(gate, e, &GateThresholds::default()).status
}

fn with(f: impl FnOnce(&mut RunEvidence)) -> RunEvidence {
    let mut e = clean();
    f(&mut e);
    e
}

use GateStatus::{Fail, NotApplicable, NotMeasured, Pass, Warn};

#[test]
fn clean_evidence_passes_every_gate() {
    for g in gates::GATES {
        assert_eq!(status(g, &clean()), Pass, "{g}");
    }
}

#[test]
fn dispatch_lag() {
    let g = "dispatch_lag";
    // p99 1.0 ms ≤ 1 ms and ≤ 5 % of 20 ms; max 50 ms: the pass limits, inclusive.
    assert_eq!(
        status(
            g,
            &with(|e| {
                e.lag_p99_ms = Some(1.0);
                e.lag_max_ms = Some(50.0)
            })
        ),
        Pass
    );
    // p99 0.8 ms but the gap is 10 ms: 5 % of it is 0.5 ms → WARN (p99 ≤ 5 ms).
    assert_eq!(
        status(
            g,
            &with(|e| {
                e.lag_p99_ms = Some(0.8);
                e.mean_interarrival_ms = Some(10.0)
            })
        ),
        Warn
    );
    assert_eq!(status(g, &with(|e| e.lag_max_ms = Some(51.0))), Warn);
    assert_eq!(status(g, &with(|e| e.lag_p99_ms = Some(5.0))), Warn);
    assert_eq!(status(g, &with(|e| e.lag_p99_ms = Some(5.1))), Fail);
    // A rising lag fails even when small; a flat or insignificant slope does not.
    assert_eq!(
        status(
            g,
            &with(|e| {
                e.lag_slope_ms_per_s = Some(0.01);
                e.lag_slope_p = Some(0.01)
            })
        ),
        Fail
    );
    assert_eq!(
        status(
            g,
            &with(|e| {
                e.lag_slope_ms_per_s = Some(0.01);
                e.lag_slope_p = Some(0.2)
            })
        ),
        Pass
    );
    let o = run_gate(
        g,
        &with(|e| e.lag_slope_p = None),
        &GateThresholds::default(),
    );
    assert_eq!(o.status, NotMeasured);
    assert!(o.note.contains("lag slope p-value"), "{}", o.note);
    assert_eq!(status(g, &with(|e| e.rate_mode = false)), NotApplicable);
}

#[test]
fn achieved_rate() {
    let g = "achieved_rate";
    assert_eq!(status(g, &with(|e| e.achieved_pct = Some(99.5))), Pass);
    assert_eq!(status(g, &with(|e| e.achieved_pct = Some(100.4))), Pass);
    assert_eq!(status(g, &with(|e| e.achieved_pct = Some(98.0))), Warn);
    assert_eq!(status(g, &with(|e| e.achieved_pct = Some(97.9))), Fail);
    assert_eq!(status(g, &with(|e| e.achieved_pct = None)), NotMeasured);
    assert_eq!(
        status(
            g,
            &with(|e| {
                e.achieved_pct = None;
                e.rate_mode = false
            })
        ),
        NotApplicable
    );
}

#[test]
fn three_level_gates() {
    for (g, set, pass, warn) in [
        ("cpu_util", 0usize, 0.70, 0.85),
        ("cpu_pressure", 1, 0.05, 0.20),
        ("runq_wait", 2, 0.05, 0.15),
    ] {
        let e = |v: Option<f64>| {
            with(|e| match set {
                0 => e.cpu_util = v,
                1 => e.cpu_pressure_some = v,
                _ => e.runq_wait_max = v,
            })
        };
        assert_eq!(status(g, &e(Some(pass))), Pass, "{g}");
        assert_eq!(status(g, &e(Some(pass + 0.001))), Warn, "{g}");
        assert_eq!(status(g, &e(Some(warn))), Warn, "{g}");
        assert_eq!(status(g, &e(Some(warn + 0.001))), Fail, "{g}");
        assert_eq!(status(g, &e(None)), NotMeasured, "{g}");
    }
    // The worked example's 30 % cpu.pressure.
    assert_eq!(
        status("cpu_pressure", &with(|e| e.cpu_pressure_some = Some(0.30))),
        Fail
    );
}

#[test]
fn throttling() {
    let g = "throttling";
    let t = |n: Option<u64>, f: Option<f64>| {
        with(|e| {
            e.nr_throttled = n;
            e.throttle_fraction = f
        })
    };
    assert_eq!(status(g, &t(Some(0), None)), Pass);
    assert_eq!(status(g, &t(Some(3), Some(0.01))), Warn);
    assert_eq!(status(g, &t(Some(3), Some(0.011))), Fail);
    assert_eq!(status(g, &t(Some(3), None)), NotMeasured);
    assert_eq!(status(g, &t(None, Some(0.0))), NotMeasured);
}

#[test]
fn memory() {
    let g = "memory";
    let m = |p: Option<f64>, ev: Option<u64>, oom: Option<u64>| {
        with(|e| {
            e.memory_pressure_some = p;
            e.memory_events = ev;
            e.memory_oom_events = oom
        })
    };
    assert_eq!(status(g, &m(Some(0.01), Some(0), Some(0))), Pass);
    assert_eq!(status(g, &m(Some(0.02), Some(0), Some(0))), Warn);
    assert_eq!(status(g, &m(Some(0.0), Some(2), Some(0))), Warn);
    assert_eq!(status(g, &m(Some(0.0), Some(2), Some(1))), Fail);
    // An increase not separated from oom is not waved through.
    assert_eq!(status(g, &m(Some(0.0), Some(2), None)), Fail);
    assert_eq!(status(g, &m(None, Some(0), Some(0))), NotMeasured);
    // Pressure alone cannot show there was no high/max/oom.
    assert_eq!(status(g, &m(Some(0.0), None, None)), NotMeasured);
}

#[test]
fn recv_q() {
    let g = "recv_q";
    let q = |f: Option<f64>, max: Option<u64>, grow: Option<bool>| {
        with(|e| {
            e.recvq_nonzero_fraction = f;
            e.recvq_max_bytes = max;
            e.recvq_growing = grow
        })
    };
    assert_eq!(status(g, &q(Some(0.009), Some(65535), None)), Pass);
    assert_eq!(status(g, &q(Some(0.01), Some(100), None)), Warn);
    assert_eq!(status(g, &q(Some(0.0), Some(65536), None)), Warn);
    assert_eq!(status(g, &q(Some(0.049), Some(100), None)), Warn);
    assert_eq!(status(g, &q(Some(0.05), Some(100), None)), Fail);
    assert_eq!(status(g, &q(Some(0.0), Some(0), Some(true))), Fail);
    assert_eq!(status(g, &q(None, Some(0), None)), NotMeasured);
    assert_eq!(status(g, &q(Some(0.0), None, None)), NotMeasured);
}

#[test]
fn backlog() {
    let g = "backlog";
    assert_eq!(status(g, &with(|e| e.backlog_growing = Some(false))), Pass);
    assert_eq!(status(g, &with(|e| e.backlog_growing = Some(true))), Fail);
    assert_eq!(status(g, &with(|e| e.backlog_growing = None)), NotMeasured);
    // The evidence writer falling behind fails the gate too, naming the writer.
    let w = with(|e| {
        e.backlog_growing = Some(false);
        e.writer_backlog_growing = Some(true);
    });
    assert_eq!(status(g, &w), Fail);
    assert!(
        run_gate(g, &w, &GateThresholds::default())
            .note
            .contains("evidence writer fell behind")
    );
    assert_eq!(
        status(
            g,
            &with(|e| {
                e.backlog_growing = Some(false);
                e.writer_backlog_growing = Some(false);
            })
        ),
        Pass
    );
}

#[test]
fn a_step_is_its_worst_run() {
    let run = |dir: &str, e: RunEvidence| StepRun {
        workers: 4,
        dir: dir.into(),
        evidence: e,
        ..Default::default()
    };
    let a = run("a", with(|e| e.cpu_util = Some(0.75)));
    let b = run("b", with(|e| e.cpu_util = Some(0.80)));
    let c = run("c", with(|e| e.cpu_util = Some(0.10)));
    let s = step_gates(4, &[&a, &b, &c], &GateThresholds::default());
    let u = s.get("cpu_util").unwrap();
    // Two WARNs: the larger value is the worse.
    assert_eq!((u.status, u.run.as_deref()), (Warn, Some("b")));
    assert_eq!(u.value, serde_json::json!(0.80));
    // A NOT_MEASURED run is worse than a WARN, a FAIL worse than both.
    let d = run("d", with(|e| e.cpu_util = None));
    let s = step_gates(4, &[&a, &d], &GateThresholds::default());
    assert_eq!(s.get("cpu_util").unwrap().status, NotMeasured);
    let f = run("f", with(|e| e.cpu_util = Some(0.9)));
    let s = step_gates(4, &[&d, &f, &a], &GateThresholds::default());
    let u = s.get("cpu_util").unwrap();
    assert_eq!((u.status, u.run.as_deref()), (Fail, Some("f")));
    assert!(u.needed);
    assert!(!s.get("throttling").unwrap().needed);
    assert!(u.threshold.contains("PASS ≤ 70 %"), "{}", u.threshold);
}
