//! The gate's evaluator (`inferbench_run::gate::evaluate`) over real runs of the built-in
//! simulated server (127.0.0.1:0), with specs built in code: a clean run passes, a run with
//! 10 % errors fails on goodput, a run that could not keep its schedule is INVALID with the
//! performance rules not judged, a p99 over 50 requests is INCONCLUSIVE needing 299, and the
//! verdict is byte-identical when evaluated twice.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::*;
use inferbench_run::gate::spec::*;
use inferbench_run::gate::{GateInput, Outcome, Overall, evaluate};

fn profile(dir: &Path, extra: &[&str]) {
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "profile",
        "--isl",
        "32",
        "--osl",
        "16",
        "--random-seed",
        "7",
        "--sim-itl-ms",
        "1",
        "--ui",
        "none",
        "--artifact-dir",
        d,
    ];
    if !extra.contains(&"--sim-ttft-ms") {
        args.extend_from_slice(&["--sim-ttft-ms", "2"]);
    }
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

fn made(cell: &'static OnceLock<PathBuf>, name: &str, extra: &[&str]) -> PathBuf {
    cell.get_or_init(|| {
        let d = tmpdir(name);
        profile(&d, extra);
        d
    })
    .clone()
}

/// 200 requests at 100/s under a ceiling of 50 (never reached at ~20 ms a request).
const RATE_RUN: &[&str] = &[
    "--request-count",
    "200",
    "--request-rate",
    "100",
    "--concurrency",
    "50",
];

fn clean() -> PathBuf {
    static C: OnceLock<PathBuf> = OnceLock::new();
    made(&C, "gate-clean", RATE_RUN)
}

fn errors() -> PathBuf {
    static C: OnceLock<PathBuf> = OnceLock::new();
    let mut a = RATE_RUN.to_vec();
    a.extend_from_slice(&["--sim-error-rate", "10"]);
    made(&C, "gate-errors", &a)
}

fn spec(rules: Vec<Rule>) -> GateSpec {
    GateSpec {
        file: "gate.toml".into(),
        digest: "sha256:0000000000000000000000000000000000000000000000000000000000000000".into(),
        name: "it".into(),
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
            resamples: 500,
        },
        rules,
    }
}

fn rule(id: &str, body: RuleBody) -> Rule {
    Rule {
        id: id.into(),
        line: 1,
        body,
    }
}

fn latency(id: &str, q: f64, limit: f64) -> Rule {
    rule(
        id,
        RuleBody::Latency(LatencyRule {
            metric: "time_to_first_token".into(),
            population: "per_request".into(),
            timing_origin: TimingOrigin::Sent,
            stat: StatSpec::Percentile(q),
            op: Op::Le,
            limit,
            unit: "ms".into(),
            method: BoundMethod::OrderStatistic,
            include_errors: false,
            min_samples: None,
        }),
    )
}

/// Latency p50/p95 with generous limits, goodput ≥ 95 % (a 10 % error rate cannot reach
/// it), and load delivery with limits a shared 2-core machine keeps.
fn acceptance() -> GateSpec {
    spec(vec![
        rule(
            "load.delivered",
            RuleBody::LoadDelivery(LoadDeliveryRule {
                arrival: Some(ArrivalSpec {
                    mode: "rate".into(),
                    rate_rps: Some(100.0),
                    concurrency: Some(50),
                    process: Some("poisson".into()),
                }),
                achieved_rate_band: Some((0.5, 1.5)),
                send_lag_p99_ms_max: Some(1000.0),
                dispatched_fraction_min: Some(0.999),
                unapproved_throttle: Throttle::Forbid,
            }),
        ),
        latency("latency.ttft.p50", 50.0, 2000.0),
        latency("latency.ttft.p95", 95.0, 5000.0),
        rule(
            "goodput.attainment",
            RuleBody::Goodput(GoodputRule {
                slo: vec![
                    ("time_to_first_token".into(), 5000.0),
                    ("request_latency".into(), 10000.0),
                ],
                denominator: Denominator::Attempted,
                min_fraction: 0.95,
                bound: FractionBound::WilsonLower,
            }),
        ),
    ])
}

/// The verdict is valid against `docs/schemas/gate-verdict.schema.json`.
fn assert_schema(v: &inferbench_run::gate::Verdict) {
    static S: OnceLock<serde_json::Value> = OnceLock::new();
    let schema = S.get_or_init(|| {
        read_json(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../docs/schemas/gate-verdict.schema.json"),
        )
    });
    let doc: serde_json::Value = serde_json::from_str(&v.to_json()).unwrap();
    let validator = jsonschema::validator_for(schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

fn input(dir: PathBuf) -> GateInput {
    GateInput {
        candidate: vec![dir],
        ..GateInput::default()
    }
}

fn rule_of<'a>(
    v: &'a inferbench_run::gate::Verdict,
    id: &str,
) -> &'a inferbench_run::gate::verdict::RuleVerdict {
    v.rules
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no rule {id}"))
}

#[test]
fn clean_run_passes() {
    let v = evaluate(&acceptance(), &input(clean())).unwrap();
    assert_schema(&v);
    assert_eq!(v.verdict, Overall::Pass, "{}", v.to_json());
    assert_eq!(v.exit_code, 0);
    assert_eq!(v.preconditions, Overall::Pass);
    let g = rule_of(&v, "goodput.attainment");
    assert_eq!(g.observed["attempted"], 200);
    assert_eq!(g.observed["good"], 200);
    // 200 of 200: the one-sided 95 % Wilson lower bound is n/(n + z²) = 200/202.7055.
    let lower = g.interval.as_ref().unwrap().lower.unwrap();
    assert!((lower - 200.0 / 202.705543).abs() < 1e-6, "{lower}");
    let l = rule_of(&v, "load.delivered");
    assert_eq!(l.observed["dispatched_fraction"], 1.0);
    assert_eq!(l.observed["throttled_requests"], 0);
    assert_eq!(rule_of(&v, "latency.ttft.p95").n, Some(200));
    // The run id is the evidence file's sha256.
    assert!(v.runs.candidate[0].starts_with("sha256:"));
}

#[test]
fn errors_fail_the_goodput_rule() {
    let run_dir = errors();
    let failed = evidence_records(&run_dir)
        .iter()
        .filter(|r| r.get("error").is_some())
        .count();
    assert_eq!(
        failed, 20,
        "--sim-error-rate 10 (percent) should fail 20 of 200 requests"
    );
    let v = evaluate(&acceptance(), &input(run_dir)).unwrap();
    assert_schema(&v);
    assert_eq!(v.verdict, Overall::Fail, "{}", v.to_json());
    assert_eq!(v.exit_code, 1);
    let g = rule_of(&v, "goodput.attainment");
    assert_eq!(g.verdict, Outcome::Fail);
    // Exactly 10 % of 200 fail (the simulated server spreads its faults evenly).
    assert_eq!(g.observed["attempted"], 200);
    assert_eq!(g.observed["errors"], 20);
    assert_eq!(g.observed["good"], 180);
    assert!(g.judged);
    // Latency is over the completed requests only: it still passes.
    assert_eq!(rule_of(&v, "latency.ttft.p50").verdict, Outcome::Pass);
    assert_eq!(rule_of(&v, "latency.ttft.p50").n, Some(180));
}

#[test]
fn a_schedule_not_kept_is_invalid_and_not_judged() {
    // 2 000 requests/s through one slot against a server taking ~40 ms a request.
    let d = tmpdir("gate-throttled");
    profile(
        &d,
        &[
            "--request-count",
            "40",
            "--request-rate",
            "2000",
            "--concurrency",
            "1",
            "--sim-ttft-ms",
            "20",
        ],
    );
    let mut s = acceptance();
    if let RuleBody::LoadDelivery(l) = &mut s.rules[0].body {
        l.arrival = None;
    }
    let v = evaluate(&s, &input(d)).unwrap();
    assert_schema(&v);
    assert_eq!(v.verdict, Overall::Invalid, "{}", v.to_json());
    assert_eq!(v.exit_code, 4);
    assert_eq!(v.preconditions, Overall::Invalid);
    let l = rule_of(&v, "load.delivered");
    assert_eq!(l.verdict, Outcome::Fail);
    assert!(l.reason.contains("unapproved_throttle"), "{}", l.reason);
    // All but the first request planned while the single slot was busy.
    assert!(
        l.observed["throttled_requests"].as_u64().unwrap() >= 30,
        "{}",
        l.observed
    );
    for r in v.rules.iter().filter(|r| !r.family.is_precondition()) {
        assert!(!r.judged, "{} judged", r.id);
    }
    assert!(l.judged);
}

#[test]
fn p99_over_50_requests_is_inconclusive_needing_299() {
    let d = tmpdir("gate-small");
    profile(&d, &["--request-count", "50", "--concurrency", "4"]);
    let s = spec(vec![latency("latency.ttft.p99", 99.0, 5000.0)]);
    let v = evaluate(&s, &input(d)).unwrap();
    assert_schema(&v);
    assert_eq!(v.verdict, Overall::Inconclusive, "{}", v.to_json());
    assert_eq!(v.exit_code, 5);
    let r = rule_of(&v, "latency.ttft.p99");
    assert_eq!(r.n, Some(50));
    assert_eq!(
        r.needed,
        Some(serde_json::json!({"requests_for_decision": 299}))
    );
}

#[test]
fn evaluating_twice_is_byte_identical_and_names_no_path() {
    let dir = clean();
    let mut s = acceptance();
    // A bootstrap rule too: its seed comes from the run ids.
    s.rules.push(rule(
        "latency.ttft.mean",
        RuleBody::Latency(LatencyRule {
            metric: "time_to_first_token".into(),
            population: "per_request".into(),
            timing_origin: TimingOrigin::PlannedSend,
            stat: StatSpec::Mean,
            op: Op::Le,
            limit: 5000.0,
            unit: "ms".into(),
            method: BoundMethod::Bootstrap,
            include_errors: false,
            min_samples: None,
        }),
    ));
    s.rules.push(rule(
        "serialization.contract",
        RuleBody::Serialization(SerializationRule {
            frozen_workload: None,
            chat_template: None,
            inspect_sample: 3,
            require: vec![
                Requirement::Streaming,
                Requirement::Terminated,
                Requirement::NoUnparsedEvents,
            ],
        }),
    ));
    let first = evaluate(&s, &input(dir.clone())).unwrap();
    assert_schema(&first);
    let a = first.to_json();
    let b = evaluate(&s, &input(dir.clone())).unwrap().to_json();
    assert_eq!(a, b);
    assert!(!a.contains(dir.to_str().unwrap()), "a path in the verdict");
    assert!(!a.contains("NaN") && !a.contains("Infinity"));
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    let ser = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "serialization.contract")
        .unwrap();
    assert_eq!(ser["verdict"], "PASS", "{ser}");
    let pairs = ser["observed"]["inspect_sample"][0]["pairs"]
        .as_array()
        .unwrap();
    assert_eq!(pairs.len(), 3);
    assert_eq!(pairs[0]["record"], 0);
}

#[test]
fn a_missing_directory_is_an_input_error() {
    let e = evaluate(
        &acceptance(),
        &input(PathBuf::from("/nonexistent/gate-run")),
    )
    .unwrap_err();
    assert_eq!(e.code, 2, "{}", e.message);
    assert!(e.message.contains("candidate"), "{}", e.message);
}

#[test]
fn gate_requirements_invalidate_a_mismatched_run() {
    // The clean run is rate-driven (profile service-load), has 200 requests and its own
    // fingerprint: a spec wanting another epoch, another profile and 300 requests is INVALID
    // on each, as a serialization-family rule.
    let mut s = acceptance();
    s.epoch =
        Some("sha256:00000000000000000000000000000000000000000000000000000000000000ff".into());
    s.profile = Some("regression".into());
    s.evidence.min_requests_per_run = 300;
    let v = evaluate(&s, &input(clean())).unwrap();
    assert_schema(&v);
    assert_eq!(v.verdict, Overall::Invalid, "{}", v.to_json());
    for id in ["gate.epoch", "gate.profile", "gate.evidence"] {
        let r = rule_of(&v, id);
        assert_eq!(r.verdict, Outcome::Fail, "{id}: {}", r.reason);
        assert_eq!(r.family, Family::Serialization);
    }
    let e = v.epoch.as_ref().unwrap();
    assert!(!e.matches);
    assert_eq!(
        e.fingerprint.as_deref(),
        Some("sha256:00000000000000000000000000000000000000000000000000000000000000ff")
    );
    assert!(!rule_of(&v, "goodput.attainment").judged);
    // The same spec with what the run carries passes again.
    let fp = {
        let m = read_json(&clean().join("inferbench_manifest.json"));
        let id: inferbench_core::identity::Identity =
            serde_json::from_value(m["identity"].clone()).unwrap();
        id.fingerprint()
    };
    s.epoch = Some(fp);
    s.profile = Some("service-load".into());
    s.evidence.min_requests_per_run = 200;
    let v = evaluate(&s, &input(clean())).unwrap();
    assert_schema(&v);
    assert_eq!(v.verdict, Overall::Pass, "{}", v.to_json());
    assert!(v.epoch.unwrap().matches);
}

#[test]
fn run_level_rules_on_one_run() {
    // Throughput: 200 requests at 100/s → about 100 requests/s, far above 10; one run is a
    // point value. Reproducibility against itself needs two runs: on_missing (fail), naming
    // the runs needed.
    let s = spec(vec![
        rule(
            "throughput.floor",
            RuleBody::Throughput(ThroughputRule {
                metric: "request_throughput".into(),
                compare: None,
                non_inferiority: None,
                min: Some(10.0),
                unit: None,
            }),
        ),
        rule(
            "repro.self",
            RuleBody::Reproducibility(ReproducibilityRule {
                compare: CompareWith::SelfRuns,
                margins: vec![("request_throughput".into(), "±5%".into())],
            }),
        ),
    ]);
    let v = evaluate(&s, &input(clean())).unwrap();
    assert_schema(&v);
    let t = rule_of(&v, "throughput.floor");
    assert_eq!(t.verdict, Outcome::Pass, "{}", t.reason);
    assert!(t.reason.contains("one run"), "{}", t.reason);
    let r = rule_of(&v, "repro.self");
    assert_eq!(r.verdict, Outcome::Fail, "{}", r.reason);
    assert_eq!(r.needed, Some(serde_json::json!({"runs": 2})));
    assert_eq!(v.verdict, Overall::Fail);
    // Two runs (the clean run twice): a run-level metric needs 3 runs per side in compare
    // (INCONCLUSIVE, naming them); a per-request one is bootstrapped over the requests and
    // the same requests on both sides are equivalent within ±50 %.
    let mut two = input(clean());
    two.candidate.push(clean());
    let v = evaluate(&s, &two).unwrap();
    assert_schema(&v);
    let r = rule_of(&v, "repro.self");
    assert_eq!(r.verdict, Outcome::Inconclusive, "{}", r.reason);
    assert_eq!(r.needed.as_ref().unwrap()["per_metric"][0]["value"], 3);
    let mut s2 = s.clone();
    s2.rules[1].body = RuleBody::Reproducibility(ReproducibilityRule {
        compare: CompareWith::SelfRuns,
        margins: vec![("time_to_first_token.p50".into(), "±50%".into())],
    });
    let v = evaluate(&s2, &two).unwrap();
    assert_schema(&v);
    let r = rule_of(&v, "repro.self");
    assert_eq!(r.verdict, Outcome::Pass, "{}", v.to_json());
}

#[test]
fn headroom_needs_a_qualification_and_baseline_throughput_needs_runs() {
    let mut s = spec(vec![
        rule(
            "client.headroom",
            RuleBody::ClientHeadroom(ClientHeadroomRule {
                worker_levels_min: Some(3),
                plateau_tolerance: Some(0.01),
                client_cpu_pressure_some_avg10_max: None,
                client_cpu_utilization_max: Some(10_000.0),
                backlog_growth: Throttle::Forbid,
                qualification: None,
            }),
        ),
        rule(
            "regression.throughput",
            RuleBody::Throughput(ThroughputRule {
                metric: "output_token_throughput".into(),
                compare: Some(CompareWith::Baseline),
                non_inferiority: Some(-0.02),
                min: None,
                unit: None,
            }),
        ),
        {
            let mut r = latency("latency.ttfo.planned", 50.0, 5000.0);
            if let RuleBody::Latency(l) = &mut r.body {
                l.metric = "time_to_first_output_token".into();
                l.timing_origin = TimingOrigin::PlannedSend;
            }
            r
        },
    ]);
    s.multiplicity = MultiplicityMethod::Holm;
    let mut inp = input(clean());
    inp.baseline = vec![clean()];
    let v = evaluate(&s, &inp).unwrap();
    assert_schema(&v);
    // The qualification does not exist yet: INCONCLUSIVE, named as a gap → INVALID.
    let h = rule_of(&v, "client.headroom");
    assert_eq!(h.verdict, Outcome::Inconclusive, "{}", h.reason);
    let names: Vec<&str> = h.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "client_saturation",
            "client_cpu_utilization",
            "backlog_growth"
        ]
    );
    assert_eq!(h.checks[1].verdict, Outcome::Pass);
    assert!(
        v.evidence_gaps
            .iter()
            .any(|g| g == "client-saturation qualification not run"),
        "{:?}",
        v.evidence_gaps
    );
    assert_eq!(v.verdict, Overall::Invalid);
    // One run a side: a run-level comparison needs 3 per side (compare's rule).
    let t = rule_of(&v, "regression.throughput");
    assert_eq!(t.verdict, Outcome::Inconclusive, "{}", t.reason);
    assert_eq!(t.needed, Some(serde_json::json!({"runs_per_side": 3})));
    assert!(!t.judged);
    assert_eq!(v.multiplicity.as_ref().unwrap().family_size, 1);
    assert_eq!(v.runs.baseline.len(), 1);
    // Output-only first token from the planned send: one value per completed request.
    assert_eq!(
        rule_of(&v, "latency.ttfo.planned").metric.as_deref(),
        Some("time_to_first_output_token_from_planned")
    );
    assert_eq!(rule_of(&v, "latency.ttfo.planned").n, Some(200));
}
