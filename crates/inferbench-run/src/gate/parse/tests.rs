use super::*;
use crate::gate::spec::*;

const REFERENCE_LIKE: &str = r#"
[gate]
name = "chat-512-128-acceptance"
version = 3
epoch = "e-2026-11-aiperf-bridge"
definition_set = "aiperf-0.13"
profile = "service-load"
alpha = 0.05
burden = "demonstrate_pass"
on_missing = "fail"
multiplicity = "holm"

[gate.evidence]
min_runs = 3
min_requests_per_run = 1000
bootstrap = { resamples = 5000, block = "none", seed_from = "packet_ids" }

[[rule]]
id = "serialization.contract"
family = "serialization"
frozen_workload = "sha256:4be1000000000000000000000000000000000000000000000000000000000000"
inspect_sample = 16
require = ["reasoning_separated", "usage_in_final_chunk", "streaming", "no_unparsed_events"]

[[rule]]
id = "workload.lengths"
family = "workload"
token_source = "server_usage"
isl = { mean = 512, exact_fraction_min = 0.99 }
osl = { mean = 128, exact_fraction_min = 0.99, mean_band = [0.9, 1.1] }
generation = { ignore_eos = true, min_tokens = 128 }

[[rule]]
id = "load.delivered"
family = "load_delivery"
arrival = { mode = "rate", rate_rps = 16.0, process = "poisson" }
achieved_rate_band = [0.98, 1.02]
send_lag_p99_ms_max = 5.0
dispatched_fraction_min = 0.999
unapproved_throttle = "forbid"

[[rule]]
id = "latency.ttft.p99"
family = "latency"
metric = "time_to_first_token"
population = "per_request"
timing_origin = "planned_send"
stat = "p99"
op = "<="
limit = 2
unit = "s"
method = "order_statistic"
include_errors = false

[[rule]]
id = "goodput.attainment"
family = "goodput"
slo = { time_to_first_output_token = "2000 ms", inter_token_latency = "80 ms" }
denominator = "attempted"
min_fraction = 0.90
bound = "wilson_lower"

[[rule]]
id = "repro.equivalence"
family = "reproducibility"
compare = "self"
method = "tost_welch_log"
margins = { output_token_throughput = "3%", "time_to_first_token.p95" = "5%" }

[[rule]]
id = "regression.throughput"
family = "throughput"
compare = "baseline"
metric = "output_token_throughput"
non_inferiority = "-2%"
"#;

fn err(text: &str) -> String {
    parse_str("g.toml", text).unwrap_err().message
}

const HEAD: &str = "[gate]\nname = \"g\"\n\n";

#[test]
fn the_reference_spec_reads_field_by_field() {
    let s = parse_str("g.toml", REFERENCE_LIKE).unwrap();
    assert_eq!(s.name, "chat-512-128-acceptance");
    assert_eq!(s.version, 3);
    assert_eq!(s.epoch.as_deref(), Some("e-2026-11-aiperf-bridge"));
    assert_eq!(s.profile.as_deref(), Some("service-load"));
    assert_eq!(s.on_missing, OnMissing::Fail);
    assert_eq!(s.evidence.min_runs, 3);
    assert_eq!(s.evidence.resamples, 5000);
    assert_eq!(s.rules.len(), 7);
    assert!(s.digest.starts_with("sha256:"));
    // The [[rule]] headers' lines: the latency rule is the fourth.
    let lat = &s.rules[3];
    assert_eq!(
        REFERENCE_LIKE.lines().nth(lat.line - 1),
        Some("[[rule]]"),
        "line {}",
        lat.line
    );
    let RuleBody::Latency(l) = &lat.body else {
        panic!("{:?}", lat.body)
    };
    // 2 s in the metric's unit, ms.
    assert_eq!(l.limit, 2000.0);
    assert_eq!(l.stat, StatSpec::Percentile(99.0));
    assert_eq!(l.timing_origin, TimingOrigin::PlannedSend);
    let RuleBody::Goodput(g) = &s.rules[4].body else {
        panic!()
    };
    assert_eq!(
        g.slo,
        vec![
            ("inter_token_latency".to_string(), 80.0),
            ("time_to_first_output_token".to_string(), 2000.0)
        ]
    );
    let RuleBody::Throughput(t) = &s.rules[6].body else {
        panic!()
    };
    assert_eq!(t.non_inferiority, Some(-0.02));
    let RuleBody::Workload(w) = &s.rules[1].body else {
        panic!()
    };
    assert_eq!(w.osl.as_ref().unwrap().mean_band, Some((0.9, 1.1)));
    assert_eq!(w.min_tokens, Some(128));
}

#[test]
fn the_example_spec_in_the_repository_parses() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/gate.toml");
    let s = parse_file(&p).unwrap();
    assert!(s.rules.len() >= 5);
    let families: BTreeSet<Family> = s.rules.iter().map(Rule::family).collect();
    for f in [Family::Latency, Family::Goodput, Family::LoadDelivery] {
        assert!(families.contains(&f), "{f:?}");
    }
}

#[test]
fn the_same_text_gives_the_same_digest_and_an_edit_another() {
    let a = parse_str("a.toml", REFERENCE_LIKE).unwrap();
    let b = parse_str("b.toml", REFERENCE_LIKE).unwrap();
    assert_eq!(a.digest, b.digest);
    let c = parse_str(
        "a.toml",
        &REFERENCE_LIKE.replace("version = 3", "version = 4"),
    )
    .unwrap();
    assert_ne!(a.digest, c.digest);
}

#[test]
fn an_unknown_family_names_the_file_line_and_field() {
    let e = err(&format!("{HEAD}[[rule]]\nid = \"x\"\nfamily = \"vibes\"\n"));
    assert!(
        e.starts_with("g.toml:6: rule 1 family: unknown family \"vibes\""),
        "{e}"
    );
}

#[test]
fn an_unknown_metric_lists_the_known_ones() {
    let e = err(&format!(
        "{HEAD}[[rule]]\nid = \"x\"\nfamily = \"latency\"\nmetric = \"ttft\"\nstat = \"p99\"\nlimit = 1\nunit = \"ms\"\n"
    ));
    assert!(
        e.starts_with("g.toml:7: rule \"x\" metric: unknown metric \"ttft\" under aiperf-0.13"),
        "{e}"
    );
    assert!(e.contains("time_to_first_token"), "{e}");
}

#[test]
fn a_bound_without_a_unit_is_refused() {
    let e = err(&format!(
        "{HEAD}[[rule]]\nid = \"x\"\nfamily = \"latency\"\nmetric = \"request_latency\"\nstat = \"p99\"\nlimit = 2000\n"
    ));
    assert!(
        e.starts_with("g.toml:9: rule \"x\" limit: a bound without a unit"),
        "{e}"
    );
    let e = err(&format!(
        "{HEAD}[[rule]]\nid = \"x\"\nfamily = \"goodput\"\nslo = {{ request_latency = \"2000\" }}\nmin_fraction = 0.9\n"
    ));
    assert!(
        e.contains("rule \"x\" slo request_latency: \"2000\": no unit"),
        "{e}"
    );
}

#[test]
fn a_unit_of_another_dimension_is_refused() {
    let e = err(&format!(
        "{HEAD}[[rule]]\nid = \"x\"\nfamily = \"latency\"\nmetric = \"request_latency\"\nstat = \"p99\"\nlimit = 5\nunit = \"tokens/s\"\n"
    ));
    assert!(e.starts_with("g.toml:10: rule \"x\" unit:"), "{e}");
    assert!(e.contains("does not match the metric's unit \"ms\""), "{e}");
    let e = err(&format!(
        "{HEAD}[[rule]]\nid = \"x\"\nfamily = \"latency\"\nmetric = \"request_latency\"\nstat = \"p99\"\nlimit = 5\nunit = \"parsecs\"\n"
    ));
    assert!(e.contains("unknown unit \"parsecs\""), "{e}");
}

#[test]
fn an_unknown_definition_set_and_an_unknown_field_are_refused() {
    let e = err("[gate]\nname = \"g\"\ndefinition_set = \"aiperf-9\"\n");
    assert!(
        e.starts_with("g.toml:3: [gate] definition_set: unknown definition set \"aiperf-9\""),
        "{e}"
    );
    let e = err(&format!(
        "{HEAD}[[rule]]\nid = \"x\"\nfamily = \"goodput\"\nslo = {{ request_latency = \"2 s\" }}\nmin_fraction = 0.9\nmin_fractoin = 0.8\n"
    ));
    assert!(
        e.starts_with("g.toml:9: rule \"x\" min_fractoin: unknown field"),
        "{e}"
    );
    let e = err("[gate]\nname = \"g\"\nalhpa = 0.1\n");
    assert!(
        e.starts_with("g.toml:3: [gate] alhpa: unknown field"),
        "{e}"
    );
}

#[test]
fn unbuilt_statistics_are_refused_by_name() {
    let e = err(&format!(
        "{HEAD}[gate.evidence]\nbootstrap = {{ block = \"auto\" }}\n[[rule]]\nid = \"x\"\nfamily = \"goodput\"\nslo = {{ request_latency = \"2 s\" }}\nmin_fraction = 0.9\n"
    ));
    assert!(
        e.contains("block: \"auto\": a block bootstrap is not built"),
        "{e}"
    );
    let e = err(&format!(
        "{HEAD}[[rule]]\nid = \"x\"\nfamily = \"goodput\"\nslo = {{ request_latency = \"2 s\" }}\nmin_fraction = 0.9\neffective_n = \"block_bootstrap\"\n"
    ));
    assert!(e.contains("effective_n: \"block_bootstrap\""), "{e}");
}

#[test]
fn rules_are_checked_for_content_and_ids_for_uniqueness() {
    let e = err(HEAD);
    assert!(e.contains("the spec has no rule"), "{e}");
    let rule = "[[rule]]\nid = \"x\"\nfamily = \"goodput\"\nslo = { request_latency = \"2 s\" }\nmin_fraction = 0.9\n";
    let e = err(&format!("{HEAD}{rule}{rule}"));
    assert!(e.starts_with("g.toml:9: rule \"x\": id: used twice"), "{e}");
    let e = err(&format!(
        "{HEAD}[[rule]]\nid = \"s\"\nfamily = \"serialization\"\n"
    ));
    assert!(e.contains("checks nothing"), "{e}");
    let e = err(&format!(
        "{HEAD}[[rule]]\nid = \"x\"\nfamily = \"latency\"\nmetric = \"inter_chunk_latency\"\nstat = \"p99\"\nlimit = 5\nunit = \"ms\"\n"
    ));
    assert!(e.contains("pools every chunk gap"), "{e}");
    let e = err(&format!(
        "{HEAD}[[rule]]\nid = \"x\"\nfamily = \"throughput\"\nmetric = \"time_to_first_token\"\nmin = 5\nunit = \"ms\"\n"
    ));
    assert!(e.contains("is a per-request metric"), "{e}");
}

#[test]
fn metrics_are_checked_under_the_named_set() {
    // vLLM's set names TTFT `ttft`; AIPerf's name is unknown there.
    let spec = "[gate]\nname = \"g\"\ndefinition_set = \"vllm-bench\"\n[[rule]]\nid = \"x\"\nfamily = \"latency\"\nmetric = \"time_to_first_token\"\nstat = \"p99\"\nlimit = 5\nunit = \"ms\"\n";
    let set = inferbench_metrics::registry()
        .iter()
        .find(|s| s.name.starts_with("vllm"))
        .unwrap()
        .name;
    let e = err(&spec.replace("vllm-bench", set));
    assert!(
        e.contains(&format!(
            "unknown metric \"time_to_first_token\" under {set}"
        )),
        "{e}"
    );
}

#[test]
fn k6_thresholds_become_point_latency_rules() {
    let s = parse_str(
        "g.toml",
        &format!("{HEAD}[thresholds]\n\"time_to_first_token{{population=per_request}}\" = [\"p(99)<2000\", \"avg<=500\"]\n"),
    )
    .unwrap();
    assert_eq!(s.rules.len(), 2);
    let RuleBody::Latency(l) = &s.rules[0].body else {
        panic!()
    };
    assert_eq!(
        (l.stat, l.op, l.limit, l.method),
        (
            StatSpec::Percentile(99.0),
            Op::Lt,
            2000.0,
            BoundMethod::Point
        )
    );
    assert_eq!(s.rules[0].id, "threshold.time_to_first_token.p99");
    let RuleBody::Latency(l) = &s.rules[1].body else {
        panic!()
    };
    assert_eq!((l.stat, l.op), (StatSpec::Mean, Op::Le));
    let e = err(&format!(
        "{HEAD}[thresholds]\nrequest_latency = [\"p99<2000\"]\n"
    ));
    assert!(e.contains("the statistic is p(N), avg, med or max"), "{e}");
}

#[test]
fn not_toml_is_one_line_with_its_position() {
    let e = err("[gate\nname = 1\n");
    assert!(e.starts_with("g.toml:1: TOML:"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Any text is a spec or a one-line error naming the file; never a panic.
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
        if let Err(e) = parse_str("g.toml", &text) {
            proptest::prop_assert!(e.message.starts_with("g.toml"), "{}", e.message);
            proptest::prop_assert!(!e.message.contains('\n'), "{}", e.message);
        }
    }

    /// Mutations of the reference spec (a line dropped) parse or fail in one line.
    #[test]
    fn a_dropped_line_never_panics(drop in 0usize..90) {
        let text: String = REFERENCE_LIKE
            .lines()
            .enumerate()
            .filter(|(i, _)| *i != drop)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        if let Err(e) = parse_str("g.toml", &text) {
            proptest::prop_assert!(e.message.starts_with("g.toml:"), "{}", e.message);
        }
    }
}
