//! The metrics of the `aiperf-0.13` set, in summary order.

/// Every metric of the set: (tag, header, display unit), in summary order. The first block is
/// AIPerf's fixed order (GenAI-Perf's); AIPerf writes the rest in an order that varies from
/// run to run, so ours is fixed and grouped as AIPerf groups them (record metrics, aggregates,
/// derived, error-adjusted, derived latencies).
pub const METRICS: &[(&str, &str, &str)] = &[
    ("request_throughput", "Request Throughput", "requests/sec"),
    ("request_latency", "Request Latency", "ms"),
    ("request_count", "Request Count", "requests"),
    ("time_to_first_token", "Time to First Token", "ms"),
    ("time_to_second_token", "Time to Second Token", "ms"),
    ("inter_token_latency", "Inter Token Latency", "ms"),
    (
        "output_token_throughput",
        "Output Token Throughput",
        "tokens/sec",
    ),
    (
        "output_token_throughput_per_user",
        "Output Token Throughput Per User",
        "tokens/sec/user",
    ),
    ("output_sequence_length", "Output Sequence Length", "tokens"),
    ("input_sequence_length", "Input Sequence Length", "tokens"),
    ("goodput", "Goodput", "requests/sec"),
    ("good_request_count", "Good Request Count", "requests"),
    ("output_token_count", "Output Token Count", "tokens"),
    ("reasoning_token_count", "Reasoning Token Count", "tokens"),
    ("inter_chunk_latency", "Inter Chunk Latency", "ms"),
    ("total_output_tokens", "Total Output Tokens", "tokens"),
    ("total_reasoning_tokens", "Total Reasoning Tokens", "tokens"),
    ("benchmark_duration", "Benchmark Duration", "sec"),
    ("total_isl", "Total Input Sequence Length", "tokens"),
    ("total_osl", "Total Output Sequence Length", "tokens"),
    ("error_request_count", "Error Request Count", "requests"),
    ("error_isl", "Error Input Sequence Length", "tokens"),
    (
        "total_error_isl",
        "Total Error Input Sequence Length",
        "tokens",
    ),
    (
        "time_to_first_output_token",
        "Time to First Output Token",
        "ms",
    ),
    ("usage_prompt_tokens", "Usage Prompt Tokens", "tokens"),
    (
        "usage_completion_tokens",
        "Usage Completion Tokens",
        "tokens",
    ),
    ("usage_total_tokens", "Usage Total Tokens", "tokens"),
    ("usage_reasoning_tokens", "Usage Reasoning Tokens", "tokens"),
    ("decode_duration", "Decode Duration", "ms"),
    (
        "prefill_throughput_per_user",
        "Prefill Throughput Per User",
        "tokens/sec/user",
    ),
    (
        "e2e_output_token_throughput",
        "E2E Output Token Throughput",
        "tokens/sec/user",
    ),
    ("osl_mismatch_diff_pct", "OSL Mismatch Diff %", "%"),
    ("usage_prompt_tokens_diff_pct", "Usage Prompt Diff %", "%"),
    (
        "usage_completion_tokens_diff_pct",
        "Usage Completion Diff %",
        "%",
    ),
    (
        "usage_reasoning_tokens_diff_pct",
        "Usage Reasoning Diff %",
        "%",
    ),
    ("osl_mismatch_count", "OSL Mismatch Count", "requests"),
    // The media metrics (SUPPORTS_IMAGE_ONLY, SUPPORTS_AUDIO_ONLY).
    ("num_images", "Number of Images", "images"),
    ("image_throughput", "Image Throughput", "images/sec"),
    ("image_latency", "Image Latency", "ms/image"),
    ("audio_duration", "Audio Duration", "sec"),
    ("rtfx", "Inverse Real-Time Factor (RTFx)", "ratio"),
    (
        "usage_discrepancy_count",
        "Usage Discrepancy Count",
        "requests",
    ),
    (
        "context_overflow_count",
        "Context Overflow Count",
        "requests",
    ),
    (
        "total_usage_prompt_tokens",
        "Total Usage Prompt Tokens",
        "tokens",
    ),
    (
        "total_usage_completion_tokens",
        "Total Usage Completion Tokens",
        "tokens",
    ),
    (
        "total_usage_total_tokens",
        "Total Usage Total Tokens",
        "tokens",
    ),
    (
        "total_usage_reasoning_tokens",
        "Total Usage Reasoning Tokens",
        "tokens",
    ),
    ("request_error_rate", "Request Error Rate", "%"),
    // AIPerf's header for it really is the CamelCase tag.
    ("good_request_fraction", "GoodRequestFraction", "ratio"),
    // inferbench's own: the Wilson interval of the good-request fraction.
    (
        "good_request_fraction_ci_low",
        "Good Request Fraction CI Low (Wilson)",
        "ratio",
    ),
    (
        "good_request_fraction_ci_high",
        "Good Request Fraction CI High (Wilson)",
        "ratio",
    ),
    (
        "completed_request_count",
        "Completed Requests (Success + Error)",
        "requests",
    ),
    (
        "total_token_throughput",
        "Total Token Throughput",
        "tokens/sec",
    ),
    (
        "input_token_throughput",
        "Input Token Throughput",
        "tokens/sec",
    ),
    (
        "adj_request_latency",
        "Request Latency (error-adjusted)",
        "ms",
    ),
    (
        "adj_time_to_first_token",
        "Time to First Token (error-adjusted)",
        "ms",
    ),
    (
        "adj_decode_duration",
        "Decode Duration (error-adjusted)",
        "ms",
    ),
    (
        "adj_inter_token_latency",
        "Inter Token Latency (error-adjusted)",
        "ms",
    ),
    // The sweep-line metrics (`sweepline.rs`), in AIPerf's order.
    ("effective_concurrency", "Effective Concurrency", "requests"),
    (
        "effective_decode_throughput",
        "Effective Decode Throughput",
        "tokens/sec",
    ),
    (
        "effective_prefill_throughput",
        "Effective Prefill Throughput",
        "tokens/sec",
    ),
    (
        "effective_decode_concurrency",
        "Effective Decode Concurrency",
        "requests",
    ),
    (
        "effective_prefill_concurrency",
        "Effective Prefill Concurrency",
        "requests",
    ),
    (
        "effective_total_throughput",
        "Effective Total Throughput",
        "tokens/sec",
    ),
    (
        "effective_decode_throughput_per_user",
        "Effective Decode Throughput Per User",
        "tokens/sec/user",
    ),
    (
        "effective_prefill_throughput_per_user",
        "Effective Prefill Throughput Per User",
        "tokens/sec/user",
    ),
    ("tokens_in_flight", "Tokens In Flight", "tokens"),
    (
        "active_decode_throughput",
        "Active Decode Throughput",
        "tokens/sec",
    ),
    (
        "active_prefill_throughput",
        "Active Prefill Throughput",
        "tokens/sec",
    ),
    (
        "active_decode_throughput_per_user",
        "Active Decode Throughput Per User",
        "tokens/sec/user",
    ),
    (
        "active_prefill_throughput_per_user",
        "Active Prefill Throughput Per User",
        "tokens/sec/user",
    ),
    (
        "active_total_throughput",
        "Active Total Throughput",
        "tokens/sec",
    ),
    ("credit_to_start_latency", "Credit-to-Start Latency", "ms"),
    ("effective_latency", "Effective Latency (CO-aware)", "ms"),
    // The HTTP trace metrics, in tag order. They must stay the table's last fourteen rows:
    // `http_trace::HTTP_METRICS` is taken from here (checked when building).
    ("http_req_blocked", "HTTP Blocked", "ms"),
    ("http_req_chunks_received", "HTTP Chunks Received", "count"),
    ("http_req_chunks_sent", "HTTP Chunks Sent", "count"),
    ("http_req_connecting", "HTTP Connecting", "ms"),
    (
        "http_req_connection_overhead",
        "HTTP Connection Overhead",
        "ms",
    ),
    (
        "http_req_connection_reused",
        "HTTP Connection Reused",
        "ratio",
    ),
    ("http_req_data_received", "HTTP Data Received", "KB"),
    ("http_req_data_sent", "HTTP Data Sent", "KB"),
    ("http_req_dns_lookup", "HTTP DNS Lookup", "ms"),
    ("http_req_duration", "HTTP Duration (excl. conn)", "ms"),
    ("http_req_receiving", "HTTP Receiving", "ms"),
    ("http_req_sending", "HTTP Sending", "ms"),
    ("http_req_total", "HTTP Total Time", "ms"),
    ("http_req_waiting", "HTTP Waiting (TTFB)", "ms"),
];

/// Per-record distribution metrics, in the order written per record. Values are kept in the
/// base unit (ns for times) and converted after the statistics, as AIPerf does.
pub(super) const RECORD_METRICS: &[&str] = &[
    "request_latency",
    "time_to_first_token",
    "time_to_second_token",
    "time_to_first_output_token",
    "inter_token_latency",
    "inter_chunk_latency",
    "decode_duration",
    "input_sequence_length",
    "output_token_count",
    "reasoning_token_count",
    "output_sequence_length",
    "output_token_throughput_per_user",
    "e2e_output_token_throughput",
    "prefill_throughput_per_user",
    "usage_prompt_tokens",
    "usage_completion_tokens",
    "usage_total_tokens",
    "usage_reasoning_tokens",
    "usage_prompt_tokens_diff_pct",
    "usage_completion_tokens_diff_pct",
    "usage_reasoning_tokens_diff_pct",
    "osl_mismatch_diff_pct",
    "num_images",
    "image_throughput",
    "image_latency",
    "audio_duration",
    "rtfx",
    "error_isl",
];

/// Metrics flagged PERCENTILE_INCLUDES_FAILED_REQUESTS, in AIPerf's `adj_*` output order.
pub(super) const ADJ_METRICS: &[&str] = &[
    "request_latency",
    "time_to_first_token",
    "decode_duration",
    "inter_token_latency",
];

/// Whether `tag` starts with `prefix`, at compile time (the const checks of the table's
/// rows; `str::starts_with` is not a const fn).
pub(super) const fn const_starts_with(tag: &str, prefix: &str) -> bool {
    let (t, p) = (tag.as_bytes(), prefix.as_bytes());
    if t.len() < p.len() {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if t[i] != p[i] {
            return false;
        }
        i += 1;
    }
    true
}
