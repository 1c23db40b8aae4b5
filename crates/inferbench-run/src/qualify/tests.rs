//! The verdicts, the arithmetic and the worked example (telemetry.md §5.4), against numbers
//! computed by hand; the renderings and the schema.

use super::stats::{equivalence, pooled_cv_pct, step_stat};
use super::*;

/// t_{0.975, 4} from the Student t table (4 degrees of freedom: two steps of 3 equal-spread
/// runs).
const T975_DF4: f64 = 2.776_445_105_197_799;

/// Evidence that passes every gate (rate mode).
pub fn clean() -> RunEvidence {
    RunEvidence {
        rate_mode: true,
        lag_p99_ms: Some(0.4),
        lag_max_ms: Some(3.0),
        lag_slope_ms_per_s: Some(0.0),
        lag_slope_p: Some(0.5),
        mean_interarrival_ms: Some(20.0),
        achieved_pct: Some(99.9),
        cpu_util: Some(0.40),
        cpu_pressure_some: Some(0.01),
        nr_throttled: Some(0),
        throttle_fraction: Some(0.0),
        memory_pressure_some: Some(0.0),
        memory_events: Some(0),
        memory_oom_events: Some(0),
        runq_wait_max: Some(0.01),
        recvq_nonzero_fraction: Some(0.0),
        recvq_max_bytes: Some(0),
        recvq_growing: Some(false),
        backlog_growing: Some(false),
        host_cpu_pressure_some: Some(0.02),
        ..Default::default()
    }
}

/// One run at `w` workers with server tokens/s `tps`, client and server agreeing, 120 s,
/// concurrency 64, mean OSL 512 (the reference's cross-check inputs).
fn run(w: usize, repeat: usize, tps: f64) -> StepRun {
    StepRun {
        workers: w,
        repeat,
        dir: format!("runs/w{w}-r{repeat}"),
        server_tokens_per_s: Some(tps),
        client_tokens_per_s: Some(tps),
        client_output_tokens: Some(tps * 120.0),
        server_output_tokens: Some(tps * 120.0),
        concurrency: Some(64.0),
        mean_osl_tokens: Some(512.0),
        window_s: Some(120.0),
        evidence: clean(),
    }
}

/// A ladder: (workers, per-repeat tokens/s), interleaved as run.
fn ladder(steps: &[(usize, &[f64])]) -> Vec<StepRun> {
    let reps = steps.iter().map(|s| s.1.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    for r in 0..reps {
        for (w, v) in steps {
            if let Some(&x) = v.get(r) {
                out.push(run(*w, r, x));
            }
        }
    }
    out
}

/// The worked example's three steps with ±10 tokens/s around each mean.
fn worked() -> Vec<StepRun> {
    ladder(&[
        (2, &[7990.0, 8000.0, 8010.0]),
        (4, &[8390.0, 8400.0, 8410.0]),
        (8, &[8432.0, 8442.0, 8452.0]),
    ])
}

fn detail(q: &Qualification) -> Detail {
    Detail::of(q).expect("a detail")
}

fn close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol, "{a} vs {b}");
}

fn has(q: &Qualification, needle: &str) -> bool {
    q.reasons.iter().any(|r| r.contains(needle))
}

#[test]
fn defaults_are_the_references() {
    let s = QualifySpec::default();
    assert_eq!(s.tolerance_pct, 1.0);
    assert!(!s.prefer_headroom);
    let g = s.gates;
    assert_eq!(
        (g.lag_p99_pass_ms, g.lag_p99_warn_ms, g.lag_max_ms),
        (1.0, 5.0, 50.0)
    );
    assert_eq!(g.lag_p99_gap_fraction, 0.05);
    assert_eq!((g.achieved_pass_pct, g.achieved_warn_pct), (0.5, 2.0));
    assert_eq!((g.cpu_util_pass, g.cpu_util_warn), (0.70, 0.85));
    assert_eq!((g.cpu_pressure_pass, g.cpu_pressure_warn), (0.05, 0.20));
    assert_eq!((g.throttle_warn, g.memory_pressure_pass), (0.01, 0.01));
    assert_eq!((g.runq_wait_pass, g.runq_wait_warn), (0.05, 0.15));
    assert_eq!((g.recvq_nonzero_pass, g.recvq_nonzero_warn), (0.01, 0.05));
    assert_eq!(g.recvq_max_bytes, 65536);
    assert_eq!(g.lag_slope_alpha, 0.05);
}

#[test]
fn worked_example_is_client_sufficient_at_4() {
    let q = decide(&QualifySpec::default(), &worked());
    assert_eq!(q.verdict, Verdict::ClientSufficient, "{:#?}", q.reasons);
    assert_eq!(q.qualified_workers, Some(4));
    let d = detail(&q);
    let means: Vec<f64> = d.steps.iter().map(|s| s.mean).collect();
    assert_eq!(means, [8000.0, 8400.0, 8442.0]);
    // δ(2→4) = 100·400/8000, δ(4→8) = 100·42/8400.
    close(d.deltas[0].delta_pct, 5.0, 1e-12);
    close(d.deltas[1].delta_pct, 0.5, 1e-12);
    assert!(!d.deltas[0].within_tolerance && !d.deltas[0].flat);
    assert!(d.deltas[1].flat);
    // sd = √((10² + 0 + 10²)/2) = 10 at every step.
    for s in &d.steps {
        close(s.sd.unwrap(), 10.0, 1e-9);
        close(s.cv_pct.unwrap(), 1000.0 / s.mean, 1e-12);
    }
    // CV_pooled(4, 8) = √((2·CV₄² + 2·CV₈²)/4), CV = 100·10/mean.
    let (c4, c8): (f64, f64) = (1000.0 / 8400.0, 1000.0 / 8442.0);
    close(
        d.deltas[1].cv_pooled_pct.unwrap(),
        ((c4 * c4 + c8 * c8) / 2.0).sqrt(),
        1e-12,
    );
    assert!(d.deltas[1].cv_pooled_pct.unwrap() <= 0.5);
    // Welch: d = 42, SE = √(100/3 + 100/3), ν = 4; 42 ± t·SE inside ±1 %·8400 = ±84.
    let eq = &d.deltas[1].equivalence;
    let half = T975_DF4 * (200.0f64 / 3.0).sqrt();
    close(eq.low.unwrap(), 42.0 - half, 1e-6);
    close(eq.high.unwrap(), 42.0 + half, 1e-6);
    close(eq.df.unwrap(), 4.0, 1e-9);
    close(eq.margin, 84.0, 1e-9);
    assert_eq!(eq.status, GateStatus::Pass);
    // δ(2→4): 400 ± t·SE is far outside ±80.
    assert_eq!(d.deltas[0].equivalence.status, GateStatus::Fail);
    assert_eq!(
        d.plateau,
        Some(Plateau {
            from_workers: 4,
            to_workers: 8,
            confirmed: true
        })
    );
    // The reference's edge bound for the w = 4 run at 8,400: 2·64·512/(8400·120) ≈ 6.5 %.
    let c = d
        .cross_check
        .iter()
        .find(|c| c.workers == 4 && c.repeat == 1)
        .unwrap();
    close(
        c.bound_pct.unwrap(),
        100.0 * 2.0 * 64.0 * 512.0 / (8400.0 * 120.0),
        1e-9,
    );
    assert_eq!(c.status, GateStatus::Pass);
}

#[test]
fn worked_example_with_headroom_is_8() {
    let spec = QualifySpec {
        prefer_headroom: true,
        ..QualifySpec::default()
    };
    let q = decide(&spec, &worked());
    assert_eq!(q.verdict, Verdict::ClientSufficient);
    assert_eq!(q.qualified_workers, Some(8));
}

#[test]
fn worked_example_with_pressure_and_recvq_at_8_is_inconclusive() {
    let mut runs = worked();
    for r in runs.iter_mut().filter(|r| r.workers == 8) {
        r.evidence.cpu_pressure_some = Some(0.30);
        r.evidence.recvq_growing = Some(true);
    }
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert_eq!(q.qualified_workers, None);
    assert!(has(&q, "w = 8: cpu_pressure FAIL"), "{:#?}", q.reasons);
    assert!(has(&q, "w = 8: recv_q FAIL"), "{:#?}", q.reasons);
    // The arithmetic plateau held; it is named but not confirmed.
    assert!(!detail(&q).plateau.unwrap().confirmed);
}

#[test]
fn flat_but_not_equivalent_asks_for_repeats() {
    // sd 40 per step (CV ≈ 0.476 %, so τ ≥ 2·CV holds), but with 3 runs a side the
    // interval 42 ± t·√(1600/3·2) ≈ 42 ± 90.7 leaves ±84.
    let runs = ladder(&[
        (2, &[7960.0, 8000.0, 8040.0]),
        (4, &[8360.0, 8400.0, 8440.0]),
        (8, &[8402.0, 8442.0, 8482.0]),
    ]);
    let q = decide(&QualifySpec::default(), &runs);
    let d = detail(&q);
    assert_eq!(d.deltas[1].noise, GateStatus::Pass);
    assert!(d.deltas[1].flat);
    let eq = &d.deltas[1].equivalence;
    let half = T975_DF4 * (3200.0f64 / 3.0).sqrt();
    close(eq.low.unwrap(), 42.0 - half, 1e-6);
    close(eq.high.unwrap(), 42.0 + half, 1e-6);
    assert_eq!(eq.status, GateStatus::Fail);
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(
        has(&q, "add repeats or extend the window"),
        "{:#?}",
        q.reasons
    );
}

#[test]
fn noise_above_half_tau_is_inconclusive() {
    // sd 100 at 8400: CV ≈ 1.19 % > τ/2.
    let runs = ladder(&[
        (2, &[7900.0, 8000.0, 8100.0]),
        (4, &[8300.0, 8400.0, 8500.0]),
        (8, &[8342.0, 8442.0, 8542.0]),
    ]);
    let q = decide(&QualifySpec::default(), &runs);
    let d = detail(&q);
    assert!(d.deltas[1].within_tolerance && !d.deltas[1].flat);
    assert_eq!(d.deltas[1].noise, GateStatus::Fail);
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(has(&q, "noise: CV_pooled"), "{:#?}", q.reasons);
}

#[test]
fn one_repeat_cannot_measure_the_noise() {
    let runs = ladder(&[(2, &[8000.0]), (4, &[8400.0]), (8, &[8442.0])]);
    let q = decide(&QualifySpec::default(), &runs);
    let d = detail(&q);
    assert_eq!(d.steps[1].cv_pct, None);
    assert_eq!(d.deltas[1].noise, GateStatus::NotMeasured);
    assert_eq!(d.deltas[1].equivalence.status, GateStatus::NotMeasured);
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(has(&q, "CV cannot be measured"), "{:#?}", q.reasons);
}

#[test]
fn still_rising_is_client_limited() {
    // δ(4→8) = 100·420/8400 = +5 %.
    let runs = ladder(&[
        (2, &[7990.0, 8000.0, 8010.0]),
        (4, &[8390.0, 8400.0, 8410.0]),
        (8, &[8810.0, 8820.0, 8830.0]),
    ]);
    let q = decide(&QualifySpec::default(), &runs);
    close(detail(&q).deltas[1].delta_pct, 5.0, 1e-12);
    assert_eq!(q.verdict, Verdict::ClientLimited, "{:#?}", q.reasons);
    assert_eq!(q.qualified_workers, None);
    assert!(has(&q, "still rises"));
}

#[test]
fn rising_with_one_repeat_is_inconclusive() {
    let runs = ladder(&[(2, &[8000.0]), (4, &[8400.0]), (8, &[8820.0])]);
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(has(&q, "one run per step"), "{:#?}", q.reasons);
}

#[test]
fn a_gate_failing_at_the_largest_w_without_plateau_is_client_limited() {
    // δ(4→8) = 100·(8000 − 8400)/8400 ≈ −4.76 %: no step within τ.
    let mut runs = ladder(&[
        (2, &[7990.0, 8000.0, 8010.0]),
        (4, &[8390.0, 8400.0, 8410.0]),
        (8, &[7990.0, 8000.0, 8010.0]),
    ]);
    let q = decide(&QualifySpec::default(), &runs);
    // Without the failing gate a fall is no verdict.
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(has(&q, "fell"));
    runs[2].evidence.cpu_util = Some(0.95);
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::ClientLimited, "{:#?}", q.reasons);
    assert!(has(&q, "cpu_util FAIL"));
}

#[test]
fn server_saturation_at_the_plateau() {
    let mut runs = worked();
    for r in runs.iter_mut().filter(|r| r.workers == 8) {
        r.evidence.server_waiting_mean = Some(5.0);
        r.evidence.server_waiting_change = Some(0.0);
    }
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::ServerSaturated, "{:#?}", q.reasons);
    assert_eq!(q.qualified_workers, Some(4));
    assert!(has(&q, "waiting requests mean 5"));
    // One run of the step without a signal: not shown in every run, so not saturated.
    let r = runs.iter_mut().find(|r| r.workers == 8).unwrap();
    r.evidence.server_waiting_mean = Some(0.0);
    r.evidence.server_kv_usage_max = Some(0.5);
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::ClientSufficient);
}

#[test]
fn saturation_signals() {
    let mut r = run(8, 0, 8442.0);
    assert_eq!(rule::saturation(&r).saturated, None);
    r.evidence.server_waiting_mean = Some(0.5);
    r.evidence.server_waiting_change = Some(0.0);
    assert_eq!(rule::saturation(&r).saturated, Some(false));
    r.evidence.server_waiting_change = Some(2.0);
    assert_eq!(rule::saturation(&r).saturated, Some(true));
    r.evidence.server_waiting_change = Some(0.0);
    r.evidence.server_kv_usage_max = Some(0.95);
    assert_eq!(rule::saturation(&r).saturated, Some(true));
    r.evidence.server_kv_usage_max = Some(0.9);
    r.evidence.server_preemptions = Some(3.0);
    assert_eq!(rule::saturation(&r).saturated, Some(true));
    r.evidence.server_preemptions = Some(0.0);
    assert_eq!(rule::saturation(&r).saturated, Some(false));
}

#[test]
fn fewer_than_two_worker_counts() {
    let runs = ladder(&[(4, &[8390.0, 8400.0, 8410.0])]);
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(has(&q, "at least two"));
    let q = decide(&QualifySpec::default(), &[]);
    assert_eq!(q.verdict, Verdict::Inconclusive);
}

#[test]
fn a_tolerance_that_is_not_positive() {
    let spec = QualifySpec {
        tolerance_pct: 0.0,
        ..QualifySpec::default()
    };
    let q = decide(&spec, &worked());
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(has(&q, "not a positive number"));
}

#[test]
fn a_run_without_the_server_rate() {
    let mut runs = worked();
    runs[4].server_tokens_per_s = None;
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(has(&q, &runs[4].dir));
}

#[test]
fn token_counts_that_disagree() {
    // A w = 4 run's client counts 10 % more tokens: beyond max(2 %, ≈6.5 %).
    let mut runs = worked();
    let r = runs.iter_mut().find(|r| r.workers == 4).unwrap();
    r.client_output_tokens = Some(r.server_output_tokens.unwrap() * 1.10);
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(has(&q, "cross-check"));
    let c = detail(&q)
        .cross_check
        .into_iter()
        .find(|c| c.status == GateStatus::Fail)
        .unwrap();
    close(c.gap_pct.unwrap(), 10.0, 1e-9);
}

#[test]
fn cross_check_branches() {
    let mut r = run(4, 0, 8400.0);
    // 5 % is inside the edge bound of ≈ 6.5 % …
    r.client_output_tokens = Some(8400.0 * 120.0 * 1.05);
    assert_eq!(rule::cross_check(&r).status, GateStatus::Pass);
    // … but without the bound's inputs only 2 % is known to be fine.
    r.concurrency = None;
    assert_eq!(rule::cross_check(&r).status, GateStatus::NotMeasured);
    r.client_output_tokens = Some(8400.0 * 120.0 * 1.015);
    assert_eq!(rule::cross_check(&r).status, GateStatus::Pass);
    // W falls back to server tokens / server tokens/s = 120 s.
    let mut r = run(4, 0, 8400.0);
    r.window_s = None;
    let c = rule::cross_check(&r);
    close(
        c.bound_pct.unwrap(),
        100.0 * 2.0 * 64.0 * 512.0 / (8400.0 * 120.0),
        1e-9,
    );
    r.client_output_tokens = None;
    assert_eq!(rule::cross_check(&r).status, GateStatus::NotMeasured);
    // A long window: the edge term falls below 2 %, the floor holds.
    let mut r = run(4, 0, 8400.0);
    r.window_s = Some(1200.0);
    close(rule::cross_check(&r).bound_pct.unwrap(), 2.0, 0.0);
}

#[test]
fn a_needed_gate_not_measured_blocks_an_unneeded_one_does_not() {
    let mut runs = worked();
    for r in runs.iter_mut().filter(|r| r.workers == 8) {
        r.evidence.nr_throttled = None;
        r.evidence.memory_events = None;
    }
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::ClientSufficient, "{:#?}", q.reasons);
    assert!(has(&q, "throttling NOT_MEASURED"));
    assert!(has(&q, "not needed, not judged"));
    runs[2].evidence.runq_wait_max = None;
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(has(&q, "w = 8: runq_wait NOT_MEASURED"), "{:#?}", q.reasons);
}

#[test]
fn a_warning_passes_with_a_note() {
    let mut runs = worked();
    runs[1].evidence.cpu_util = Some(0.80);
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::ClientSufficient);
    assert!(has(&q, "w = 4: cpu_util WARN"));
    assert!(has(&q, "passes with a warning"));
}

#[test]
fn a_rise_after_the_flat_step_is_no_plateau() {
    // δ(2→4) = +0.5 %, then δ(4→8) = 100·402/8040 = +5 %.
    let runs = ladder(&[
        (2, &[7990.0, 8000.0, 8010.0]),
        (4, &[8030.0, 8040.0, 8050.0]),
        (8, &[8432.0, 8442.0, 8452.0]),
    ]);
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::Inconclusive);
    assert!(has(&q, "rose again"), "{:#?}", q.reasons);
}

#[test]
fn failures_beyond_the_plateau_are_reported_not_used() {
    let mut runs = ladder(&[
        (2, &[7990.0, 8000.0, 8010.0]),
        (4, &[8390.0, 8400.0, 8410.0]),
        (8, &[8432.0, 8442.0, 8452.0]),
        (16, &[8440.0, 8450.0, 8460.0]),
    ]);
    for r in runs.iter_mut().filter(|r| r.workers == 16) {
        r.evidence.cpu_pressure_some = Some(0.5);
    }
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::ClientSufficient);
    assert_eq!(q.qualified_workers, Some(4));
    assert!(has(&q, "beyond the plateau, w = 16: cpu_pressure FAIL"));
}

#[test]
fn concurrency_mode_has_no_lag_gate() {
    let mut runs = worked();
    for r in &mut runs {
        r.evidence.rate_mode = false;
        r.evidence.lag_p99_ms = None;
        r.evidence.achieved_pct = None;
    }
    let q = decide(&QualifySpec::default(), &runs);
    assert_eq!(q.verdict, Verdict::ClientSufficient, "{:#?}", q.reasons);
    let d = detail(&q);
    let g = d.gates[2].get("dispatch_lag").unwrap();
    assert_eq!(g.status, GateStatus::NotApplicable);
    assert!(!g.needed);
    assert!(g.note.contains("concurrency mode"));
}

#[test]
fn pooling_weights_by_degrees_of_freedom() {
    // CV_a = 100·10/1000 = 1 % (3 runs), CV_b = 100·√(2.5)/100 … by hand: values
    // 98, 99, 100, 101, 102: mean 100, sd = √(10/4), CV = √2.5 %.
    let a = step_stat(1, vec![990.0, 1000.0, 1010.0]);
    let b = step_stat(2, vec![98.0, 99.0, 100.0, 101.0, 102.0]);
    close(a.cv_pct.unwrap(), 1.0, 1e-12);
    close(b.cv_pct.unwrap(), 2.5f64.sqrt(), 1e-12);
    // √((2·1² + 4·2.5)/6) = √2.
    close(pooled_cv_pct(&a, &b).unwrap(), 2.0f64.sqrt(), 1e-12);
    let one = step_stat(3, vec![1000.0]);
    assert_eq!(pooled_cv_pct(&a, &one), None);
}

#[test]
fn zero_spread_is_a_point_interval() {
    let a = step_stat(4, vec![8400.0, 8400.0]);
    let b = step_stat(8, vec![8442.0, 8442.0]);
    let e = equivalence(&a, &b, 1.0);
    assert_eq!((e.low, e.high), (Some(42.0), Some(42.0)));
    assert_eq!(e.status, GateStatus::Pass);
    let c = step_stat(8, vec![8500.0, 8500.0]);
    assert_eq!(equivalence(&a, &c, 1.0).status, GateStatus::Fail);
}

#[test]
fn console_and_markdown() {
    let q = decide(&QualifySpec::default(), &worked());
    let c = render_console(&q);
    assert!(
        c.contains("Verdict: CLIENT_SUFFICIENT at 4 workers (τ = 1 % declared"),
        "{c}"
    );
    let row = c.lines().find(|l| l.starts_with("8 ")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..3], ["8", "3", "8442.0"], "{row}");
    assert!(row.contains("+0.50 %") && row.contains("yes"), "{row}");
    assert!(c.contains("Gates at w = 4 and w = 8"));
    assert!(
        c.lines()
            .any(|l| l.starts_with("cpu_pressure") && l.contains("PASS"))
    );
    let m = render_markdown(&q);
    assert!(m.contains("**Verdict: CLIENT_SUFFICIENT at 4 workers"));
    assert!(m.contains("| 4 | 3 | 8400.0 |"), "{m}");
    assert!(m.contains("| recv_q |"));
    assert!(m.contains("Host PSI cpu some (informational"));
}

#[test]
fn json_is_deterministic_and_reads_back() {
    let q = decide(&QualifySpec::default(), &worked());
    let a = serde_json::to_string(&to_json(&q)).unwrap();
    let b = serde_json::to_string(&to_json(&decide(&QualifySpec::default(), &worked()))).unwrap();
    assert_eq!(a, b);
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(v["schema"], SCHEMA);
    assert_eq!(v["verdict"], "CLIENT_SUFFICIENT");
    assert_eq!(from_json(&v).unwrap(), q);
    assert!(from_json(&serde_json::json!({"verdict": "X"})).is_err());
}

#[test]
fn every_verdict_is_valid_against_the_schema() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schemas/qualification.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let mut pressured = worked();
    pressured[2].evidence.cpu_pressure_some = Some(0.3);
    let mut saturated = worked();
    for r in &mut saturated {
        r.evidence.server_kv_usage_max = Some(0.99);
    }
    let cases = [
        worked(),
        pressured,
        saturated,
        ladder(&[(2, &[8000.0]), (4, &[8400.0]), (8, &[8820.0])]),
        ladder(&[
            (2, &[8000.0, 8010.0]),
            (4, &[8400.0, 8410.0]),
            (8, &[8820.0, 8830.0]),
        ]),
        Vec::new(),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for runs in cases {
        let q = decide(&QualifySpec::default(), &runs);
        seen.insert(q.verdict.as_str());
        let doc = to_json(&q);
        let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{:?}: {errors:?}", q.verdict);
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
    // The schema is not vacuous: a wrong verdict fails it.
    let mut bad = to_json(&decide(&QualifySpec::default(), &worked()));
    bad["verdict"] = "SUFFICIENT".into();
    assert!(!v.is_valid(&bad));
}
