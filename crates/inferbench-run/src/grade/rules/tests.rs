use inferbench_core::grade::Tier;
use inferbench_core::identity::{CATALOGUE, Identity, Provenance};
use serde_json::json;

use super::*;

/// Every catalogue pin measured, with digests where the table wants them: a reference.
fn full() -> Identity {
    let mut id = Identity::default();
    for s in CATALOGUE {
        id.set(s.name, json!("x"), Provenance::Measured);
    }
    id.set(
        "arrival_policy",
        json!({"mode": "concurrency", "concurrency": 4}),
        Provenance::Measured,
    );
    id.finish("test");
    id
}

fn good() -> Evidence {
    Evidence {
        per_request_records: true,
        error_counts: true,
        rescoring: Ok(vec![]),
        reasoning_seen: false,
        client_resources: true,
    }
}

fn grade_of(tag: &str, id: &Identity, ev: &Evidence) -> MetricGrade {
    MetricGrade::new(tag, downgrades(classify(tag), id, ev))
}

fn fields(m: &MetricGrade) -> Vec<(&str, Tier)> {
    m.downgrades
        .iter()
        .map(|d| (d.field.as_str(), d.tier))
        .collect()
}

#[test]
fn tags_of_every_set_fall_into_their_classes() {
    for (tag, class) in [
        ("request_latency", Class::RequestLatency),
        ("e2el", Class::RequestLatency),
        ("time_to_first_token", Class::FirstToken),
        ("ttft", Class::FirstToken),
        ("time_to_second_token", Class::FirstToken),
        ("time_to_first_output_token", Class::FirstToken),
        ("inter_token_latency", Class::InterToken),
        ("inter_chunk_latency", Class::InterToken),
        ("tpot", Class::InterToken),
        ("itl", Class::InterToken),
        ("output_sequence_length", Class::TokenCounts),
        ("num_output_token", Class::TokenCounts),
        ("usage_prompt_tokens", Class::TokenCounts),
        ("output_token_throughput", Class::TokenThroughput),
        ("completed_tokens_per_second", Class::TokenThroughput),
        ("max_output_tokens_per_s", Class::TokenThroughput),
        ("request_throughput", Class::RequestThroughput),
        ("completed_samples_per_second", Class::RequestThroughput),
        ("request_goodput", Class::Goodput),
        ("good_request_count", Class::Goodput),
        ("error_request_count", Class::Counts),
        ("request_count", Class::Counts),
        ("samples_failed", Class::Counts),
        ("result_valid", Class::Other),
    ] {
        assert_eq!(classify(tag), class, "{tag}");
    }
}

#[test]
fn a_fully_pinned_run_with_records_is_a_reference() {
    let id = full();
    for tag in [
        "request_latency",
        "output_token_throughput",
        "time_to_first_token",
    ] {
        let m = grade_of(tag, &id, &good());
        assert_eq!(m.tier, Tier::Reference, "{tag}: {:?}", m.downgrades);
    }
    let (_, flags) = grade_tags(&["request_latency".into()], &id, &good());
    assert!(flags.is_empty());
}

#[test]
fn a_missing_tokenizer_lowers_token_metrics_and_leaves_e2e_latency() {
    let mut id = full();
    id.pins.remove("tokenizer_digest");
    id.pins.remove("tokenizer_revision");
    let itl = grade_of("inter_token_latency", &id, &good());
    assert_eq!(fields(&itl), vec![("tokenizer_digest", Tier::Insufficient)]);
    assert_eq!(
        grade_of("output_sequence_length", &id, &good()).tier,
        Tier::Insufficient
    );
    assert_eq!(
        grade_of("output_token_throughput", &id, &good()).tier,
        Tier::Insufficient
    );
    assert_eq!(
        grade_of("request_latency", &id, &good()).tier,
        Tier::Reference
    );
    // Either tokenizer pin will do.
    id.set("tokenizer_revision", json!("abc"), Provenance::Measured);
    assert_eq!(
        grade_of("inter_token_latency", &id, &good()).tier,
        Tier::Reference
    );
}

#[test]
fn a_declared_pin_lifts_to_comparable_and_a_declared_digest_to_reference() {
    let mut id = full();
    let declared = Provenance::Declared {
        route: "--declare".into(),
    };
    id.set("model_revision", json!("main"), declared.clone());
    let m = grade_of("request_latency", &id, &good());
    assert_eq!(fields(&m), vec![("model_revision", Tier::Comparable)]);
    id.set(
        "model_revision",
        json!(format!("sha256:{}", "b".repeat(64))),
        declared,
    );
    assert_eq!(
        grade_of("request_latency", &id, &good()).tier,
        Tier::Reference
    );
}

#[test]
fn missing_error_counts_make_rates_unusable_and_latencies_insufficient() {
    let id = full();
    let ev = Evidence {
        error_counts: false,
        ..good()
    };
    let rt = grade_of("request_throughput", &id, &ev);
    assert_eq!(fields(&rt), vec![("error_counts", Tier::Unusable)]);
    assert_eq!(grade_of("request_goodput", &id, &ev).tier, Tier::Unusable);
    assert_eq!(
        fields(&grade_of("time_to_first_token", &id, &ev)),
        vec![("error_counts", Tier::Insufficient)]
    );
    assert_eq!(
        grade_of("output_sequence_length", &id, &ev).tier,
        Tier::Reference
    );
}

#[test]
fn a_summary_only_run_is_comparable_with_no_interval() {
    let ev = Evidence {
        per_request_records: false,
        ..good()
    };
    let m = grade_of("request_latency", &full(), &ev);
    assert_eq!(fields(&m), vec![("per_request_records", Tier::Comparable)]);
    assert!(m.downgrades[0].reason.contains("no interval"));
}

#[test]
fn the_streaming_flag_and_generation_controls_lower_their_classes() {
    let mut id = full();
    id.pins.remove("streaming");
    id.pins.remove("ignore_eos");
    id.finish("not in the artifact");
    assert_eq!(
        fields(&grade_of("time_to_first_token", &id, &good())),
        vec![("streaming", Tier::Insufficient)]
    );
    assert_eq!(
        fields(&grade_of("output_token_throughput", &id, &good())),
        vec![("ignore_eos", Tier::Insufficient)]
    );
    assert_eq!(
        fields(&grade_of("output_sequence_length", &id, &good())),
        vec![("ignore_eos", Tier::Insufficient)]
    );
    assert_eq!(
        grade_of("request_latency", &id, &good()).tier,
        Tier::Reference
    );
}

#[test]
fn the_harness_version_lowers_itl_more_than_e2e_latency() {
    let mut id = full();
    id.pins.remove("harness");
    assert_eq!(
        fields(&grade_of("inter_token_latency", &id, &good())),
        vec![("harness", Tier::Insufficient)]
    );
    assert_eq!(
        fields(&grade_of("request_latency", &id, &good())),
        vec![("harness", Tier::Comparable)]
    );
}

#[test]
fn a_seed_matters_only_without_the_frozen_bodies() {
    let mut id = full();
    id.pins.remove("random_seed");
    assert_eq!(
        grade_of("request_latency", &id, &good()).tier,
        Tier::Reference
    );
    id.pins.remove("workload_digest");
    let m = grade_of("request_latency", &id, &good());
    let f = fields(&m);
    assert!(f.contains(&("random_seed", Tier::Insufficient)), "{f:?}");
    assert!(
        f.contains(&("workload_digest", Tier::Insufficient)),
        "{f:?}"
    );
}

#[test]
fn reasoning_accounting_matters_only_for_a_model_that_reasons() {
    let mut id = full();
    id.pins.remove("reasoning_accounting");
    assert_eq!(
        grade_of("time_to_first_token", &id, &good()).tier,
        Tier::Reference
    );
    let ev = Evidence {
        reasoning_seen: true,
        ..good()
    };
    assert_eq!(
        fields(&grade_of("time_to_first_token", &id, &ev)),
        vec![("reasoning_accounting", Tier::Insufficient)]
    );
    assert_eq!(grade_of("request_latency", &id, &ev).tier, Tier::Reference);
}

#[test]
fn an_unverified_rescoring_and_unlisted_contract_pins_give_comparable() {
    let mut id = full();
    id.pins.remove("profile");
    let m = grade_of("request_latency", &id, &good());
    assert_eq!(fields(&m), vec![("profile", Tier::Comparable)]);
    let ev = Evidence {
        rescoring: Ok(vec!["request_latency.avg: original 1, recomputed 2".into()]),
        ..good()
    };
    let m = grade_of("request_latency", &full(), &ev);
    assert_eq!(fields(&m), vec![("rescoring", Tier::Comparable)]);
    assert!(m.downgrades[0].reason.contains("1 values"));
}

#[test]
fn high_concurrency_without_client_resources_is_flagged() {
    let mut id = full();
    id.set(
        "arrival_policy",
        json!({"mode": "concurrency", "concurrency": 64}),
        Provenance::Measured,
    );
    let ev = Evidence {
        client_resources: false,
        ..good()
    };
    let (_, flags) = grade_tags(&["request_latency".into()], &id, &ev);
    assert_eq!(flags, vec!["client_bound_suspect".to_string()]);
    let (_, flags) = grade_tags(&["request_latency".into()], &id, &good());
    assert!(flags.is_empty());
    id.set(
        "arrival_policy",
        json!({"mode": "concurrency", "concurrency": 63}),
        Provenance::Measured,
    );
    let (_, flags) = grade_tags(&["request_latency".into()], &id, &ev);
    assert!(flags.is_empty());
}
