//! Unit tests of the evaluator on hand-built observations, against hand-computed numbers
//! and the reference's worked examples (`ledger-gate.md` §2.3, §2.4, seed 000's goodput).

use std::cell::RefCell;
use std::path::PathBuf;

use inferbench_core::{Phase, PhaseWindow, Summary};
use serde_json::json;

use super::GateInput;
use super::observe::{Observations, RecordObs, RunObs};
use super::rules::{Ctx, delivery, goodput, latency};
use super::spec::*;
use super::verdict::{Outcome, Overall, RuleVerdict};

const TTFT: &str = "time_to_first_token";
const TPOT: &str = "time_per_output_token";

pub(super) fn spec(rules: Vec<Rule>) -> GateSpec {
    GateSpec {
        file: "test.toml".into(),
        digest: "sha256:test".into(),
        name: "t".into(),
        version: 1,
        epoch: None,
        definition_set: "aiperf-0.13".into(),
        profile: None,
        alpha: 0.05,
        burden: Burden::DemonstratePass,
        on_missing: OnMissing::Fail,
        multiplicity: MultiplicityMethod::None,
        evidence: EvidenceRequirements {
            min_runs: 1,
            min_requests_per_run: 0,
            resamples: 2000,
        },
        rules,
    }
}

fn rec(id: u64, failed: bool, values: Vec<Option<f64>>) -> RecordObs {
    RecordObs {
        id,
        failed,
        planned_ns: id * 1_000_000,
        start_ns: id * 1_000_000,
        end_ns: id * 1_000_000 + 500_000,
        values,
    }
}

pub(super) fn run(records: Vec<RecordObs>, seconds: f64) -> RunObs {
    RunObs {
        id: "sha256:run".into(),
        path: PathBuf::from("/nonexistent"),
        identity: None,
        summary: Summary {
            definitions: "aiperf-0.13".into(),
            metrics: Vec::new(),
            error_summary: Vec::new(),
        },
        window: Some(PhaseWindow {
            phase: Phase::Profiling,
            start_ns: 0,
            sent_end_ns: 0,
            requests_end_ns: (seconds * 1e9) as u64,
            scheduled: records.len() as u64,
            completed: 0,
            errors: 0,
            cancelled: false,
        }),
        records,
        violations: Default::default(),
        samples: Vec::new(),
        client: None,
        rate_ceiling: None,
        workers_max: None,
    }
}

pub(super) fn obs(tags: &[&str], runs: Vec<RunObs>) -> Observations {
    Observations {
        tags: tags.iter().map(|t| t.to_string()).collect(),
        candidate: runs,
        baseline: Vec::new(),
    }
}

pub(super) fn with_ctx<T>(spec: &GateSpec, obs: &Observations, f: impl FnOnce(&Ctx) -> T) -> T {
    let input = GateInput::default();
    let ctx = Ctx {
        spec,
        input: &input,
        obs,
        seed: 1,
        gaps: RefCell::default(),
    };
    f(&ctx)
}

fn goodput_rule(slo: &[(&str, f64)], min: f64) -> (Rule, GoodputRule) {
    let g = GoodputRule {
        slo: slo.iter().map(|(t, l)| (t.to_string(), *l)).collect(),
        denominator: Denominator::Attempted,
        min_fraction: min,
        bound: FractionBound::WilsonLower,
    };
    let r = Rule {
        id: "goodput.attainment".into(),
        line: 1,
        body: RuleBody::Goodput(g.clone()),
    };
    (r, g)
}

#[test]
fn goodput_matches_seed_000_exactly() {
    // 920 good, 40 that missed the SLO, 40 errors of 1 000 attempted, in 60 s.
    let mut records = Vec::new();
    for i in 0..1000u64 {
        let r = match i {
            0..920 => rec(i, false, vec![Some(100.0)]),
            920..960 => rec(i, false, vec![Some(3000.0)]),
            _ => rec(i, true, vec![None]),
        };
        records.push(r);
    }
    let o = obs(&[TTFT], vec![run(records, 60.0)]);
    let (rule, g) = goodput_rule(&[(TTFT, 2000.0)], 0.90);
    let s = spec(vec![rule.clone()]);
    let v = with_ctx(&s, &o, |c| goodput::goodput(c, &rule, &g));
    let ob = &v.observed;
    assert_eq!(ob["good"], json!(920));
    assert_eq!(ob["attempted"], json!(1000));
    assert_eq!(ob["completed"], json!(960));
    // 960 / 60 = 16.00 req/s completed, 920 / 60 = 15.33 goodput, 92.00 % attainment.
    assert!((ob["completed_rps"].as_f64().unwrap() - 16.0).abs() < 1e-9);
    assert!((ob["goodput_rps"].as_f64().unwrap() - 15.3333333).abs() < 1e-6);
    assert!((ob["fraction"].as_f64().unwrap() - 0.92).abs() < 1e-12);
    // Wilson 95 % two-sided 90.15 %–93.53 % (design note: 0.90153, 0.93525).
    let two = &ob["wilson_two_sided"];
    assert!(
        (two["lower"].as_f64().unwrap() - 0.90153).abs() < 5e-6,
        "{two}"
    );
    assert!(
        (two["upper"].as_f64().unwrap() - 0.93525).abs() < 5e-6,
        "{two}"
    );
    // The decision: one-sided 95 % lower bound 0.90473 ≥ 0.90.
    let lower = v.interval.as_ref().unwrap().lower.unwrap();
    assert!((lower - 0.90473).abs() < 5e-6, "{lower}");
    assert_eq!(v.verdict, Outcome::Pass);
    // At 0.915 the lower bound 0.90473 does not reach it, the point 0.92 does.
    let (rule2, g2) = goodput_rule(&[(TTFT, 2000.0)], 0.915);
    let v2 = with_ctx(&s, &o, |c| goodput::goodput(c, &rule2, &g2));
    assert_eq!(v2.verdict, Outcome::Inconclusive);
    assert!(
        v2.needed.unwrap()["attempted_for_decision"]
            .as_u64()
            .unwrap()
            > 1000
    );
    // Above the point: FAIL.
    let (rule3, g3) = goodput_rule(&[(TTFT, 2000.0)], 0.95);
    let v3 = with_ctx(&s, &o, |c| goodput::goodput(c, &rule3, &g3));
    assert_eq!(v3.verdict, Outcome::Fail);
}

#[test]
fn goodput_is_joint_per_request_not_marginal() {
    // TTFT ≤ 100, TPOT ≤ 10. Each metric alone is met by 3 of 4 requests; both at once by
    // only 2 (requests 1 and 2 each miss a different one), so attainment is 2/4, not 3/4.
    let records = vec![
        rec(0, false, vec![Some(50.0), Some(5.0)]),
        rec(1, false, vec![Some(50.0), Some(20.0)]),
        rec(2, false, vec![Some(150.0), Some(5.0)]),
        rec(3, false, vec![Some(90.0), Some(9.0)]),
    ];
    let runs = vec![run(records, 1.0)];
    let joint = goodput::count_good(&runs, &[(0, 100.0, false), (1, 10.0, false)]);
    assert_eq!((joint.good, joint.attempted), (2, 4));
    assert_eq!(goodput::count_good(&runs, &[(0, 100.0, false)]).good, 3);
    assert_eq!(goodput::count_good(&runs, &[(1, 10.0, false)]).good, 3);
    let o = obs(&[TTFT, TPOT], runs);
    let (rule, g) = goodput_rule(&[(TTFT, 100.0), (TPOT, 10.0)], 0.5);
    let s = spec(vec![rule.clone()]);
    let v = with_ctx(&s, &o, |c| goodput::goodput(c, &rule, &g));
    assert_eq!(v.observed["good"], json!(2));
    assert_eq!(v.observed["fraction"], json!(0.5));
}

#[test]
fn goodput_without_the_metric_is_on_missing() {
    let o = obs(&[TTFT], vec![run(vec![rec(0, false, vec![None])], 1.0)]);
    let (rule, g) = goodput_rule(&[(TTFT, 100.0)], 0.5);
    let mut s = spec(vec![rule.clone()]);
    let v = with_ctx(&s, &o, |c| goodput::goodput(c, &rule, &g));
    assert_eq!(v.verdict, Outcome::Fail);
    s.on_missing = OnMissing::Inconclusive;
    let v = with_ctx(&s, &o, |c| goodput::goodput(c, &rule, &g));
    assert_eq!(v.verdict, Outcome::Inconclusive);
}

fn latency_rule(q: f64, limit: f64) -> (Rule, LatencyRule) {
    let l = LatencyRule {
        metric: TTFT.into(),
        population: "per_request".into(),
        timing_origin: TimingOrigin::Sent,
        stat: StatSpec::Percentile(q),
        op: Op::Le,
        limit,
        unit: "ms".into(),
        method: BoundMethod::OrderStatistic,
        include_errors: false,
        min_samples: None,
    };
    let r = Rule {
        id: "latency.ttft".into(),
        line: 1,
        body: RuleBody::Latency(l.clone()),
    };
    (r, l)
}

/// Values 1, 2, …, n ms: X₍ᵢ₎ = i, so a bound's value is its rank.
fn ramp(n: u64) -> Observations {
    let records = (1..=n)
        .map(|i| rec(i, false, vec![Some(i as f64)]))
        .collect();
    obs(&[TTFT], vec![run(records, 1.0)])
}

fn judge(s: &GateSpec, o: &Observations, q: f64, limit: f64) -> RuleVerdict {
    let (rule, l) = latency_rule(q, limit);
    with_ctx(s, o, |c| latency::latency(c, &rule, &l)).unwrap()
}

#[test]
fn latency_bounds_are_the_reference_ranks() {
    // Reference §2.3, n = 1 000, two-sided 95 % CI of p95: X₍₉₃₆₎ … X₍₉₆₄₎; each end is a
    // one-sided 97.5 % bound, so alpha = 0.025 reads those ranks.
    let o = ramp(1000);
    let mut s = spec(Vec::new());
    s.alpha = 0.025;
    let v = judge(&s, &o, 95.0, 964.0);
    assert_eq!(v.interval.as_ref().unwrap().upper, Some(964.0));
    assert_eq!(v.verdict, Outcome::Pass);
    // Just under the bound: the point p95 (950.05) meets it, the bound does not.
    let v = judge(&s, &o, 95.0, 963.5);
    assert_eq!(v.verdict, Outcome::Inconclusive);
    assert!(v.needed.is_some());
    // Below the point: FAIL under demonstrate_pass.
    assert_eq!(judge(&s, &o, 95.0, 900.0).verdict, Outcome::Fail);
    // demonstrate_fail reads the lower bound X₍₉₃₆₎ = 936: beyond 935 → FAIL; 936 is not
    // beyond 936, and the point 950.05 is → INCONCLUSIVE; above the point → PASS.
    s.burden = Burden::DemonstrateFail;
    let v = judge(&s, &o, 95.0, 935.0);
    assert_eq!(v.interval.as_ref().unwrap().lower, Some(936.0));
    assert_eq!(v.verdict, Outcome::Fail);
    assert_eq!(judge(&s, &o, 95.0, 936.0).verdict, Outcome::Inconclusive);
    assert_eq!(judge(&s, &o, 95.0, 960.0).verdict, Outcome::Pass);
    // n = 100, p99 (table: X₍₉₇₎ … none): demonstrate_fail needs only the lower bound
    // X₍₉₇₎, which exists; under demonstrate_pass the missing upper bound (s = 101) makes
    // 100 requests too few.
    let v = judge(&s, &ramp(100), 99.0, 1e9);
    assert_eq!(v.verdict, Outcome::Pass, "the point meets a huge limit");
    s.burden = Burden::DemonstratePass;
    let v = judge(&s, &ramp(100), 99.0, 1e9);
    assert_eq!(v.verdict, Outcome::Inconclusive);
}

#[test]
fn p99_over_too_few_requests_needs_299() {
    let s = spec(Vec::new());
    // 298 values: 0.99^298 = 0.0500 > 0.05, no one-sided 95 % bound yet.
    for n in [50, 298] {
        let v = judge(&s, &ramp(n), 99.0, 1e9);
        assert_eq!(v.verdict, Outcome::Inconclusive, "n = {n}");
        assert_eq!(v.needed, Some(json!({"requests_for_decision": 299})));
        assert_eq!(v.n, Some(n));
    }
    // At 299 the bound is the maximum, 299 ms.
    let v = judge(&s, &ramp(299), 99.0, 299.0);
    assert_eq!(v.verdict, Outcome::Pass);
    assert_eq!(v.interval.unwrap().upper, Some(299.0));
}

#[test]
fn latency_without_samples_is_on_missing() {
    let o = obs(&[TTFT], vec![run(vec![rec(0, true, vec![None])], 1.0)]);
    let s = spec(Vec::new());
    let v = judge(&s, &o, 50.0, 10.0);
    assert_eq!(v.verdict, Outcome::Fail);
    assert_eq!(v.n, Some(0));
}

#[test]
fn throttled_counts_requests_that_waited_for_the_ceiling() {
    // Ceiling 1. B is planned at 10 while A (planned 0, ending 100) holds the only slot: it
    // waited. C is planned at 300, nothing in flight.
    let mut r = run(Vec::new(), 1.0);
    let span = |id, planned, start, end| RecordObs {
        id,
        failed: false,
        planned_ns: planned,
        start_ns: start,
        end_ns: end,
        values: Vec::new(),
    };
    r.records = vec![
        span(0, 0, 0, 100),
        span(1, 10, 100, 200),
        span(2, 300, 300, 400),
    ];
    assert_eq!(delivery::throttled(&r, 1), 1);
    assert_eq!(delivery::throttled(&r, 2), 0);
    // A started late (at 50, after B's planned 10): B still waited behind it.
    r.records[0].start_ns = 50;
    assert_eq!(delivery::throttled(&r, 1), 1);
    // Without A, nothing is ahead of B.
    r.records.remove(0);
    assert_eq!(delivery::throttled(&r, 1), 0);
}

#[test]
fn backlog_growth_is_last_tenth_minus_first_tenth() {
    // 20 records: the first two sent on time, the last two 50 ms late, the rest 5 ms late.
    let mut r = run(Vec::new(), 1.0);
    r.records = (0..20u64)
        .map(|i| {
            let lag = match i {
                0 | 1 => 0,
                18 | 19 => 50_000_000,
                _ => 5_000_000,
            };
            RecordObs {
                id: i,
                failed: false,
                planned_ns: i * 1_000_000_000,
                start_ns: i * 1_000_000_000 + lag,
                end_ns: i * 1_000_000_000 + lag + 1,
                values: Vec::new(),
            }
        })
        .collect();
    assert_eq!(delivery::backlog_growth_ms(&r), Some(50.0));
    r.records.truncate(19);
    assert_eq!(delivery::backlog_growth_ms(&r), None);
}

#[test]
fn combine_invalidates_on_a_failed_precondition() {
    let s = spec(Vec::new());
    let (rule, _) = latency_rule(50.0, 1.0);
    let mut perf = super::rules::base(&rule, &s, Outcome::Pass, String::new());
    let mut pre = perf.clone();
    pre.family = Family::LoadDelivery;
    pre.verdict = Outcome::Fail;
    assert_eq!(Overall::combine(&[perf.clone(), pre]), Overall::Invalid);
    perf.verdict = Outcome::Fail;
    assert_eq!(Overall::combine(&[perf]), Overall::Fail);
}

fn event(
    kind: inferbench_core::EventKind,
    content: Option<&str>,
) -> inferbench_core::record::Event {
    inferbench_core::record::Event {
        kind: inferbench_core::record::EventKindOpt(kind),
        content: content.map(str::to_string),
        ..Default::default()
    }
}

fn broken(r: &inferbench_core::Record, reasoning: bool) -> Vec<&'static str> {
    super::observe::requirement_checks(r, reasoning)
        .into_iter()
        .filter(|(_, b)| *b == Some(true))
        .map(|(req, _)| req.as_str())
        .collect()
}

#[test]
fn requirements_on_one_record() {
    use inferbench_core::EventKind::{Data, Done, Other};
    let mut usage = event(Data, None);
    usage.usage = Some(json!({"completion_tokens": 2}));
    let mut r = inferbench_core::Record {
        streaming: true,
        events: vec![
            event(Data, None),
            event(Data, Some("hi")),
            usage.clone(),
            event(Done, None),
        ],
        ..Default::default()
    };
    // Role-only first chunk, usage last, [DONE]: everything holds.
    assert!(broken(&r, false).is_empty(), "{:?}", broken(&r, false));
    // <think> markup in the content breaks reasoning_separated, with or without reasoning.
    r.events[1].content = Some("<think>hmm</think>hi".into());
    assert_eq!(broken(&r, true), ["reasoning_separated"]);
    assert_eq!(broken(&r, false), ["reasoning_separated"]);
    // Text in the first chunk, no usage, an unparsed event, no [DONE].
    r.events = vec![event(Data, Some("hi")), event(Other, None)];
    assert_eq!(
        broken(&r, false),
        [
            "usage_in_final_chunk",
            "no_unparsed_events",
            "role_only_first_chunk",
            "terminated"
        ]
    );
    // A request not sent streaming breaks `streaming`.
    r.streaming = false;
    r.events = vec![event(inferbench_core::EventKind::Body, Some("hi"))];
    assert!(broken(&r, false).contains(&"streaming"));
}

#[test]
fn holm_turns_an_unshown_failure_inconclusive() {
    // Two baseline comparisons failed with p = 0.02 and 0.04; Holm at 0.05: 0.02·2 = 0.04
    // ≤ 0.05 rejected, then max(0.04, 0.04·1) = 0.04 ≤ 0.05 rejected: both stay FAIL. With
    // p = 0.03 and 0.2: 0.06 > 0.05, neither is shown: both INCONCLUSIVE.
    let s = spec(Vec::new());
    let (rule, _) = latency_rule(50.0, 1.0);
    let fail = {
        let mut v = super::rules::base(&rule, &s, Outcome::Fail, "worse".into());
        v.family = Family::Throughput;
        v
    };
    let mut vs = vec![fail.clone(), fail.clone()];
    super::evaluate::apply_holm(&mut vs, &[(0, 0.02), (1, 0.04)], 2, 0.05);
    assert!(vs.iter().all(|v| v.verdict == Outcome::Fail));
    let mut vs = vec![fail.clone(), fail];
    super::evaluate::apply_holm(&mut vs, &[(0, 0.03), (1, 0.2)], 2, 0.05);
    assert!(vs.iter().all(|v| v.verdict == Outcome::Inconclusive));
    assert!(vs[0].reason.contains("Holm"), "{}", vs[0].reason);
}

#[test]
fn workload_osl_below_spec_fails() {
    use super::observe::OSL;
    use super::rules::precondition;
    // OSL 128 specified; a server that ignored ignore_eos/min_tokens stopped at 100 on 3 of
    // 4 requests: exact fraction 1/4 < 0.99, mean (128 + 300) / 4 = 107 → ratio 0.8359 < 0.9.
    let records = vec![
        rec(0, false, vec![Some(128.0)]),
        rec(1, false, vec![Some(100.0)]),
        rec(2, false, vec![Some(100.0)]),
        rec(3, false, vec![Some(100.0)]),
        rec(4, true, vec![None]),
    ];
    let o = obs(&[OSL], vec![run(records, 1.0)]);
    let w = WorkloadRule {
        token_source: None,
        isl: None,
        osl: Some(LengthSpec {
            mean: 128.0,
            exact_fraction_min: Some(0.99),
            mean_band: Some((0.9, 1.1)),
        }),
        ignore_eos: None,
        min_tokens: None,
    };
    let rule = Rule {
        id: "workload.lengths".into(),
        line: 1,
        body: RuleBody::Workload(w.clone()),
    };
    let s = spec(vec![rule.clone()]);
    let v = with_ctx(&s, &o, |c| precondition::workload(c, &rule, &w));
    assert_eq!(v.verdict, Outcome::Fail);
    assert_eq!(v.observed["osl"]["n"], json!(4));
    assert_eq!(v.observed["osl"]["exact_fraction"], json!(0.25));
    let ratio = v.observed["osl"]["mean_ratio"].as_f64().unwrap();
    assert!((ratio - 107.0 / 128.0).abs() < 1e-12, "{ratio}");
    assert!(v.checks.iter().all(|c| c.verdict == Outcome::Fail));
    // Every request at 128: both checks pass.
    let o = obs(
        &[OSL],
        vec![run(
            (0..4).map(|i| rec(i, false, vec![Some(128.0)])).collect(),
            1.0,
        )],
    );
    let v = with_ctx(&s, &o, |c| precondition::workload(c, &rule, &w));
    assert_eq!(v.verdict, Outcome::Pass, "{}", v.reason);
}
