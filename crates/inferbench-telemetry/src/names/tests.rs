use super::*;

fn known(name: &str) -> &'static KnownName {
    lookup(name).unwrap_or_else(|| panic!("{name} not known"))
}

#[test]
fn names_are_unique_and_each_server_has_an_output_or_request_counter() {
    for (i, a) in KNOWN.iter().enumerate() {
        assert!(
            KNOWN[i + 1..].iter().all(|b| b.name != a.name),
            "{} twice",
            a.name
        );
    }
    for s in ORDER {
        let work = for_role(s, Role::OutputTokens)
            .chain(for_role(s, Role::RequestsFinished))
            .count();
        assert!(work > 0, "{s:?}");
    }
}

#[test]
fn vllm_names_old_and_new() {
    let g = known("vllm:generation_tokens_total");
    assert_eq!(
        (g.server, g.kind, g.role, g.unit),
        (
            ServerKind::Vllm,
            MetricType::Counter,
            Role::OutputTokens,
            Unit::Tokens
        )
    );
    assert_eq!(known("vllm:gpu_cache_usage_perc").role, Role::KvUsage);
    assert_eq!(known("vllm:kv_cache_usage_perc").unit, Unit::Ratio);
    assert_eq!(known("vllm:time_per_output_token_seconds").role, Role::Itl);
    assert_eq!(
        known("vllm:request_time_per_output_token_seconds").role,
        Role::Tpot
    );
    // A histogram named `_total`, not a counter, and not a known role.
    assert!(lookup("vllm:iteration_tokens_total").is_none());
    let kv: Vec<&str> = for_role(ServerKind::Vllm, Role::KvUsage)
        .map(|k| k.name)
        .collect();
    assert_eq!(
        kv,
        ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"]
    );
}

#[test]
fn openmetrics_counter_family_names_find_the_total_name() {
    assert_eq!(
        lookup("vllm:generation_tokens").map(|k| k.name),
        Some("vllm:generation_tokens_total")
    );
    // Only counters: a gauge's name plus `_total` is not it.
    assert!(lookup("vllm:num_requests").is_none());
}

#[test]
fn trtllm_both_prefixes() {
    for name in [
        "trtllm_generation_tokens_total",
        "trtllm:generation_tokens_total",
    ] {
        let k = known(name);
        assert_eq!((k.server, k.role), (ServerKind::TrtLlm, Role::OutputTokens));
    }
}

#[test]
fn triton_counters_in_microseconds() {
    let q = known("nv_inference_queue_duration_us");
    assert_eq!(
        (q.kind, q.role, q.unit),
        (MetricType::Counter, Role::QueueTime, Unit::Microseconds)
    );
    assert_eq!(
        known("nv_inference_request_success").kind,
        MetricType::Counter
    );
}

#[test]
fn tgi_output_tokens_are_a_histogram_sum() {
    let t = known("tgi_request_generated_tokens");
    assert_eq!(
        (t.kind, t.role, t.unit),
        (MetricType::Histogram, Role::OutputTokens, Unit::Tokens)
    );
    assert_eq!(
        for_role(ServerKind::Tgi, Role::OutputTokens).count(),
        1,
        "TGI has no token counter"
    );
}

#[test]
fn detect_per_server() {
    let cases: [(&[&str], ServerKind); 7] = [
        (
            &[
                "vllm:num_requests_running",
                "vllm:generation_tokens_total",
                "vllm:generation_tokens_created",
                "process_cpu_seconds_total",
            ],
            ServerKind::Vllm,
        ),
        (
            &["sglang:num_running_reqs", "sglang:generation_tokens_total"],
            ServerKind::Sglang,
        ),
        (
            &["trtllm:num_requests_waiting", "trtllm_kv_cache_utilization"],
            ServerKind::TrtLlm,
        ),
        (
            &[
                "nv_inference_request_success",
                "nv_inference_queue_duration_us",
                "nv_gpu_utilization",
            ],
            ServerKind::Triton,
        ),
        (
            &[
                "llamacpp:tokens_predicted_total",
                "llamacpp:requests_deferred",
            ],
            ServerKind::LlamaCpp,
        ),
        (
            &[
                "tgi_request_count",
                "tgi_queue_size",
                "tgi_request_duration",
            ],
            ServerKind::Tgi,
        ),
        (
            // A frontend passing vLLM's names through: more vLLM names, still Dynamo.
            &[
                "dynamo_frontend_inflight_requests",
                "vllm:num_requests_running",
                "vllm:num_requests_waiting",
                "vllm:generation_tokens_total",
            ],
            ServerKind::Dynamo,
        ),
    ];
    for (names, want) in cases {
        assert_eq!(detect(names.iter().copied()), Some(want), "{names:?}");
    }
}

#[test]
fn detect_dynamo_worker_is_the_engine_and_ties_go_in_fixed_order() {
    let worker = [
        "dynamo_component_requests_total",
        "dynamo_component_inflight_requests",
        "sglang:num_queue_reqs",
    ];
    assert_eq!(detect(worker), Some(ServerKind::Sglang));
    // One name each: vLLM before SGLang before llama.cpp.
    assert_eq!(
        detect([
            "llamacpp:requests_deferred",
            "sglang:token_usage",
            "vllm:num_requests_waiting"
        ]),
        Some(ServerKind::Vllm)
    );
    assert_eq!(
        detect(["llamacpp:requests_deferred", "sglang:token_usage"]),
        Some(ServerKind::Sglang)
    );
    // Most wins over order; repeats count once.
    assert_eq!(
        detect([
            "vllm:num_requests_waiting",
            "vllm:num_requests_waiting",
            "sglang:token_usage",
            "sglang:num_queue_reqs"
        ]),
        Some(ServerKind::Sglang)
    );
    assert_eq!(detect(["up", "process_cpu_seconds_total"]), None);
    assert_eq!(detect([]), None);
}
