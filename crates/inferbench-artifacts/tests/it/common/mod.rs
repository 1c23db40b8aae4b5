//! Test helpers: fixture loading and hand-built inputs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use inferbench_core::manifest::{
    DatasetIdentity, HostIdentity, MANIFEST_SCHEMA_VERSION, Manifest, ServerIdentity,
    TokenizerIdentity, ToolIdentity,
};
use inferbench_core::plan::{
    ArtifactPlan, EndpointType, ExportLevel, HeaderValue, LengthDist, LoadPlan, Secret, Target,
    TokenizerSpec, UiKind,
};
use inferbench_core::summary::ErrorGroup;
use inferbench_core::{MetricResult, MetricValue, RunPlan, Stats, StopReason, Summary};
use serde_json::Value;

pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

pub fn read(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

/// A fresh directory and its path; the directory is removed when the guard drops.
pub fn tmpdir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::Builder::new()
        .prefix(&format!("ib-art-it-{name}-"))
        .tempdir()
        .unwrap();
    let p = d.path().to_path_buf();
    (d, p)
}

/// Metric headers (human names) of AIPerf 0.13.0, transcribed from the fixtures' CSV files.
pub const HEADERS: &[(&str, &str)] = &[
    ("active_decode_throughput", "Active Decode Throughput"),
    (
        "active_decode_throughput_per_user",
        "Active Decode Throughput Per User",
    ),
    ("active_prefill_throughput", "Active Prefill Throughput"),
    (
        "active_prefill_throughput_per_user",
        "Active Prefill Throughput Per User",
    ),
    ("active_total_throughput", "Active Total Throughput"),
    ("adj_decode_duration", "Decode Duration (error-adjusted)"),
    (
        "adj_inter_token_latency",
        "Inter Token Latency (error-adjusted)",
    ),
    ("adj_request_latency", "Request Latency (error-adjusted)"),
    (
        "adj_time_to_first_token",
        "Time to First Token (error-adjusted)",
    ),
    ("benchmark_duration", "Benchmark Duration"),
    (
        "completed_request_count",
        "Completed Requests (Success + Error)",
    ),
    ("context_overflow_count", "Context Overflow Count"),
    ("credit_to_start_latency", "Credit-to-Start Latency"),
    ("decode_duration", "Decode Duration"),
    ("e2e_output_token_throughput", "E2E Output Token Throughput"),
    ("effective_concurrency", "Effective Concurrency"),
    (
        "effective_decode_concurrency",
        "Effective Decode Concurrency",
    ),
    ("effective_decode_throughput", "Effective Decode Throughput"),
    (
        "effective_decode_throughput_per_user",
        "Effective Decode Throughput Per User",
    ),
    ("effective_latency", "Effective Latency (CO-aware)"),
    (
        "effective_prefill_concurrency",
        "Effective Prefill Concurrency",
    ),
    (
        "effective_prefill_throughput",
        "Effective Prefill Throughput",
    ),
    (
        "effective_prefill_throughput_per_user",
        "Effective Prefill Throughput Per User",
    ),
    ("effective_total_throughput", "Effective Total Throughput"),
    ("error_isl", "Error Input Sequence Length"),
    ("error_request_count", "Error Request Count"),
    ("http_req_blocked", "HTTP Blocked"),
    ("http_req_chunks_received", "HTTP Chunks Received"),
    ("http_req_chunks_sent", "HTTP Chunks Sent"),
    ("http_req_connecting", "HTTP Connecting"),
    ("http_req_connection_overhead", "HTTP Connection Overhead"),
    ("http_req_connection_reused", "HTTP Connection Reused"),
    ("http_req_data_received", "HTTP Data Received"),
    ("http_req_data_sent", "HTTP Data Sent"),
    ("http_req_dns_lookup", "HTTP DNS Lookup"),
    ("http_req_duration", "HTTP Duration (excl. conn)"),
    ("http_req_receiving", "HTTP Receiving"),
    ("http_req_sending", "HTTP Sending"),
    ("http_req_total", "HTTP Total Time"),
    ("http_req_waiting", "HTTP Waiting (TTFB)"),
    ("input_sequence_length", "Input Sequence Length"),
    ("input_token_throughput", "Input Token Throughput"),
    ("inter_chunk_latency", "Inter Chunk Latency"),
    ("inter_token_latency", "Inter Token Latency"),
    ("osl_mismatch_count", "OSL Mismatch Count"),
    ("osl_mismatch_diff_pct", "OSL Mismatch Diff %"),
    ("output_sequence_length", "Output Sequence Length"),
    ("output_token_count", "Output Token Count"),
    ("output_token_throughput", "Output Token Throughput"),
    (
        "output_token_throughput_per_user",
        "Output Token Throughput Per User",
    ),
    ("prefill_throughput_per_user", "Prefill Throughput Per User"),
    ("reasoning_token_count", "Reasoning Token Count"),
    ("request_count", "Request Count"),
    ("request_error_rate", "Request Error Rate"),
    ("request_latency", "Request Latency"),
    ("request_throughput", "Request Throughput"),
    ("time_to_first_output_token", "Time to First Output Token"),
    ("time_to_first_token", "Time to First Token"),
    ("time_to_second_token", "Time to Second Token"),
    ("tokens_in_flight", "Tokens In Flight"),
    ("total_error_isl", "Total Error Input Sequence Length"),
    ("total_isl", "Total Input Sequence Length"),
    ("total_osl", "Total Output Sequence Length"),
    ("total_output_tokens", "Total Output Tokens"),
    ("total_reasoning_tokens", "Total Reasoning Tokens"),
    ("total_token_throughput", "Total Token Throughput"),
    (
        "total_usage_completion_tokens",
        "Total Usage Completion Tokens",
    ),
    ("total_usage_prompt_tokens", "Total Usage Prompt Tokens"),
    (
        "total_usage_reasoning_tokens",
        "Total Usage Reasoning Tokens",
    ),
    ("total_usage_total_tokens", "Total Usage Total Tokens"),
    ("usage_completion_tokens", "Usage Completion Tokens"),
    (
        "usage_completion_tokens_diff_pct",
        "Usage Completion Diff %",
    ),
    ("usage_discrepancy_count", "Usage Discrepancy Count"),
    ("usage_prompt_tokens", "Usage Prompt Tokens"),
    ("usage_prompt_tokens_diff_pct", "Usage Prompt Diff %"),
    ("usage_reasoning_tokens", "Usage Reasoning Tokens"),
    ("usage_reasoning_tokens_diff_pct", "Usage Reasoning Diff %"),
    ("usage_total_tokens", "Usage Total Tokens"),
];

pub fn header_of(tag: &str) -> String {
    HEADERS
        .iter()
        .find(|(t, _)| *t == tag)
        .unwrap_or_else(|| panic!("no header for {tag}"))
        .1
        .to_string()
}

/// A `Summary` holding the fixture summary JSON's own values, in the file's key order: a
/// metric object with only `{unit, avg}` is a scalar, anything else a distribution.
pub fn summary_from_fixture(json_text: &str) -> Summary {
    let v: Value = serde_json::from_str(json_text).unwrap();
    let mut metrics = Vec::new();
    for (tag, m) in v.as_object().unwrap() {
        let Some(o) = m.as_object() else { continue };
        let Some(unit) = o.get("unit").and_then(Value::as_str) else {
            continue;
        };
        let f = |k: &str| o.get(k).and_then(Value::as_f64);
        let value = if o.keys().all(|k| k == "unit" || k == "avg") {
            MetricValue::Scalar {
                value: f("avg").unwrap(),
            }
        } else {
            MetricValue::Distribution {
                stats: Stats {
                    avg: f("avg"),
                    p1: f("p1"),
                    p5: f("p5"),
                    p10: f("p10"),
                    p25: f("p25"),
                    p50: f("p50"),
                    p75: f("p75"),
                    p90: f("p90"),
                    p95: f("p95"),
                    p99: f("p99"),
                    min: f("min"),
                    max: f("max"),
                    std: f("std"),
                    count: o.get("count").and_then(Value::as_u64).unwrap_or(0),
                    sum: f("sum"),
                },
            }
        };
        metrics.push(MetricResult {
            tag: tag.clone(),
            header: header_of(tag),
            unit: unit.to_string(),
            value,
        });
    }
    let error_summary = v["error_summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| ErrorGroup {
            code: e["error_details"]["code"].as_u64().map(|c| c as u16),
            error_type: e["error_details"]["type"].as_str().unwrap().to_string(),
            message: e["error_details"]["message"].as_str().unwrap().to_string(),
            count: e["count"].as_u64().unwrap(),
        })
        .collect();
    Summary {
        definitions: "aiperf-0.13".into(),
        metrics,
        error_summary,
    }
}

pub fn plan() -> RunPlan {
    RunPlan {
        models: vec!["mock-model".into()],
        target: Target::Url {
            url: "http://127.0.0.1:18511".into(),
        },
        url: "http://127.0.0.1:18511".into(),
        endpoint_type: EndpointType::Chat,
        endpoint_path: "/v1/chat/completions".into(),
        streaming: true,
        api_key: Some(Secret::new("sk-test-secret")),
        headers: vec![
            ("X-Trace".into(), HeaderValue::for_header("X-Trace", "abc")),
            (
                "Authorization".into(),
                HeaderValue::for_header("Authorization", "Bearer sk-test-secret"),
            ),
        ],
        extra_inputs: serde_json::from_str(r#"{"ignore_eos":true,"min_tokens":16}"#).unwrap(),
        request_timeout_seconds: 21600.0,
        tokenizer: TokenizerSpec::Builtin,
        tokenizer_revision: None,
        use_server_token_count: false,
        use_legacy_max_tokens: false,
        isl: LengthDist {
            mean: 32.0,
            stddev: 0.0,
        },
        osl: Some(LengthDist {
            mean: 16.0,
            stddev: 0.0,
        }),
        num_dataset_entries: 100,
        random_seed: Some(1),
        load: LoadPlan {
            concurrency: 4,
            request_count: 60,
            warmup_request_count: 0,
            ..Default::default()
        },
        artifacts: ArtifactPlan {
            dir: "artifacts".into(),
            run_dir: "artifacts/mock-model-openai-chat-concurrency4".into(),
            prefix: "profile_export".into(),
            export_level: ExportLevel::Raw,
            export_http_trace: false,
            evidence_compression: Default::default(),
            slice_duration_s: None,
        },
        ui: UiKind::None,
        cli_command: "inferbench profile --model mock-model --api-key <redacted>".into(),
        goodput: None,
        confidence_level: 0.95,
        dataset: Default::default(),
        endpoint: Default::default(),
        telemetry: Default::default(),
        workers_max: None,
        tls: Default::default(),
        routing: Default::default(),
        connection: Default::default(),
        controls: Default::default(),
        shard: None,
    }
}

pub fn manifest() -> Manifest {
    Manifest {
        schema_version: MANIFEST_SCHEMA_VERSION,
        benchmark_id: "0a564b70635e".into(),
        tool: ToolIdentity {
            name: "inferbench".into(),
            version: "0.1.0".into(),
            binary_sha256: None,
            commit: None,
            build_profile: None,
        },
        host: HostIdentity {
            hostname: "h".into(),
            os: "linux".into(),
            kernel: Some("6.1".into()),
            arch: "x86_64".into(),
            cpus: 2,
            memory_bytes: Some(1 << 30),
            merged_hosts: None,
        },
        plan: plan(),
        tokenizer: TokenizerIdentity {
            chat_template: None,
            revision: None,
            name: "builtin:o200k_base".into(),
            sha256: "ab".repeat(32),
        },
        dataset: DatasetIdentity {
            kind: "synthetic".into(),
            entries: 100,
            workload_sha256: "cd".repeat(32),
            corpus_sha256: None,
            answers_sha256: None,
        },
        random_seed: Some(1),
        arrival: "concurrency 4 (burst)".into(),
        warmup: "none".into(),
        stop_rule: "request count 60".into(),
        stop_reason: StopReason::Completed,
        partial: false,
        started_at: "2026-11-29T18:58:04Z".into(),
        ended_at: Some("2026-11-29T18:58:06Z".into()),
        anchor_unix_ns: 1_795_978_684_962_456_000,
        server: ServerIdentity {
            models_response: Some(
                serde_json::json!({"object":"list","data":[{"id":"mock-model"}]}),
            ),
            kind: "url".into(),
            kv_cache_reset: None,
            kv_cache_resets: Vec::new(),
            server_profiler: None,
        },
        files: vec![],
        identity: None,
        shard: None,
        merge: None,
    }
}
