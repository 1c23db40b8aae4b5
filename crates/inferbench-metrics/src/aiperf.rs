//! The `aiperf-0.13` definition set: AIPerf 0.13.0's metrics, computed from records.
//!
//! Formulas, populations and float64 conversion points follow AIPerf's own code paths (see
//! `docs/metrics.md`); they were checked bit for bit against real AIPerf 0.13.0 summaries.
//! Not computed yet: the sweep-line `effective_*` / `active_*` / `tokens_in_flight` metrics,
//! the `http_req_*` trace metrics, goodput.

use std::collections::HashMap;

use inferbench_core::summary::{
    ErrorGroup, MetricResult, MetricValue, RecordMetric, RecordMetricValue, Summary,
};
use inferbench_core::{EventKind, Evidence, EvidenceHeader, Phase, PhaseWindow, Record};
use serde_json::Value;

use crate::stats::{adj_stats, scaled, stats, stats_std_in_order};
use crate::sweepline::{SweepRecord, sweepline_metrics};
use crate::{Computed, PerRecord};

pub const NAME: &str = "aiperf-0.13";

/// AIPerf converts ns to display units by multiplying (`ns × 1e-6`), not dividing; the two
/// differ in the last bit for about a quarter of the values.
const NS_TO_MS: f64 = 1e-6;
const NS_TO_S: f64 = 1e-9;
/// `AIPERF_METRICS_USAGE_PCT_DIFF_THRESHOLD`.
const USAGE_DIFF_THRESHOLD_PCT: f64 = 10.0;
/// `AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD` and `..._MAX_TOKEN_THRESHOLD`.
const OSL_MISMATCH_PCT: f64 = 5.0;
const OSL_MISMATCH_MAX_TOKENS: f64 = 50.0;

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
];

/// Per-record distribution metrics, in the order written per record. Values are kept in the
/// base unit (ns for times) and converted after the statistics, as AIPerf does.
const RECORD_METRICS: &[&str] = &[
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
    "error_isl",
];

/// Metrics flagged PERCENTILE_INCLUDES_FAILED_REQUESTS, in AIPerf's `adj_*` output order.
const ADJ_METRICS: &[&str] = &[
    "request_latency",
    "time_to_first_token",
    "decode_duration",
    "inter_token_latency",
];

/// (header, unit) of a tag of this set.
pub fn describe(tag: &str) -> Option<(&'static str, &'static str)> {
    // Looked up for every metric of every record: a map, not a scan of the table.
    static BY_TAG: std::sync::OnceLock<HashMap<&'static str, (&'static str, &'static str)>> =
        std::sync::OnceLock::new();
    BY_TAG
        .get_or_init(|| METRICS.iter().map(|(t, h, u)| (*t, (*h, *u))).collect())
        .get(tag)
        .copied()
}

fn order_of(tag: &str) -> usize {
    METRICS
        .iter()
        .position(|(t, _, _)| *t == tag)
        .unwrap_or(usize::MAX)
}

fn is_ms(tag: &str) -> bool {
    describe(tag).is_some_and(|(_, u)| u == "ms")
}

/// Endpoints that return no generated tokens (AIPerf's PRODUCES_TOKENS_ONLY flag excludes
/// them from every output-token metric).
fn produces_tokens(endpoint_type: &str) -> bool {
    !matches!(
        endpoint_type,
        "embeddings" | "rankings" | "nim_rankings" | "hf_tei_rankings" | "cohere_rankings"
    )
}

#[derive(Clone, Copy)]
struct Ctx {
    streaming: bool,
    tokens: bool,
    server_tokens: bool,
}

/// A content response: an event with text; for an endpoint that returns no tokens
/// (embeddings, rankings), every parsed response (its vectors or scores are the content).
fn is_content(e: &inferbench_core::Event, ctx: Ctx) -> bool {
    if ctx.tokens {
        e.has_text()
    } else {
        matches!(e.kind(), EventKind::Data | EventKind::Body)
    }
}

/// Why a record is not valid, grouped into the error summary as AIPerf would.
type ErrorKey = (Option<u16>, String, String);

/// A record's error, or the error AIPerf would give an invalid record. AIPerf turns a record
/// without an error but without a content response (or with bad timestamps) into an error
/// record, so that valid + errors = completed.
fn error_of(r: &Record, ctx: Ctx) -> Option<ErrorKey> {
    if let Some(e) = &r.error {
        return Some((e.code, e.error_type.clone(), e.message.clone()));
    }
    if r.cancelled {
        return Some((
            None,
            "RequestCancelledError".into(),
            "request was cancelled".into(),
        ));
    }
    if !r.events.iter().any(|e| is_content(e, ctx)) {
        return Some((
            None,
            "InvalidInferenceResultError".into(),
            "no content responses".into(),
        ));
    }
    if r.start_ns >= r.end_ns {
        return Some((
            None,
            "InvalidInferenceResultError".into(),
            "request end is not after its start".into(),
        ));
    }
    None
}

fn json_u64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 9.0e15)
            .map(|f| f as u64)
    })
}

/// The last non-null value of a usage field over the record's events. `paths` lists the
/// field's aliases (chat/completions names, then Responses API names).
fn usage_field(r: &Record, paths: &[&[&str]]) -> Option<u64> {
    r.events.iter().rev().find_map(|e| {
        let u = e.usage.as_ref()?;
        paths.iter().find_map(|path| {
            let mut v = u;
            for key in *path {
                v = v.get(key)?;
            }
            json_u64(v)
        })
    })
}

#[derive(Default)]
struct Usage {
    prompt: Option<u64>,
    completion: Option<u64>,
    total: Option<u64>,
    reasoning: Option<u64>,
}

fn usage_of(r: &Record) -> Usage {
    Usage {
        prompt: usage_field(r, &[&["prompt_tokens"], &["input_tokens"]]),
        completion: usage_field(r, &[&["completion_tokens"], &["output_tokens"]]),
        total: usage_field(r, &[&["total_tokens"]]),
        reasoning: usage_field(
            r,
            &[
                &["completion_tokens_details", "reasoning_tokens"],
                &["output_tokens_details", "reasoning_tokens"],
            ],
        ),
    }
}

/// Per-record values in base units (ns, tokens, tokens/s, %).
#[derive(Default)]
struct Values {
    latency_ns: Option<u64>,
    ttft_ns: Option<u64>,
    ttst_ns: Option<u64>,
    ttfo_ns: Option<u64>,
    itl_ns: Option<f64>,
    icl_ns: Vec<u64>,
    decode_ns: Option<u64>,
    isl: Option<u64>,
    output: Option<u64>,
    reasoning: Option<u64>,
    osl: Option<u64>,
    ottpu: Option<f64>,
    e2e: Option<f64>,
    prefill: Option<f64>,
    usage: Usage,
    prompt_diff: Option<f64>,
    completion_diff: Option<f64>,
    reasoning_diff: Option<f64>,
    osl_diff: Option<f64>,
    osl_mismatch: Option<bool>,
}

fn diff_pct(api: Option<u64>, client: Option<u64>) -> Option<f64> {
    let (api, client) = (api?, client?);
    // A zero client count has no relative difference (AIPerf would divide by zero).
    (client > 0).then(|| (api as f64 - client as f64).abs() / client as f64 * 100.0)
}

fn values_of(r: &Record, ctx: Ctx) -> Values {
    let mut v = Values {
        usage: usage_of(r),
        ..Default::default()
    };
    let times: Vec<u64> = r
        .events
        .iter()
        .filter(|e| is_content(e, ctx))
        .map(|e| e.t_ns)
        .collect();
    let (first, last) = (times[0], times[times.len() - 1]);
    let latency = last.saturating_sub(r.start_ns);
    v.latency_ns = Some(latency);

    let reasoning_seen = r
        .events
        .iter()
        .any(|e| e.reasoning.as_deref().is_some_and(|s| !s.is_empty()));
    if ctx.server_tokens {
        v.isl = v.usage.prompt;
        if ctx.tokens {
            v.reasoning = v.usage.reasoning;
            v.output = v
                .usage
                .completion
                .map(|c| c.saturating_sub(v.reasoning.unwrap_or(0)));
        }
    } else {
        v.isl = r.tokens.input;
        if ctx.tokens {
            v.output = r.tokens.output;
            v.reasoning = r.tokens.reasoning.filter(|_| reasoning_seen);
        }
    }
    v.osl = v.output.map(|o| o + v.reasoning.unwrap_or(0));

    if ctx.streaming && ctx.tokens {
        let ttft = first.saturating_sub(r.start_ns);
        v.ttft_ns = Some(ttft);
        if times.len() >= 2 {
            v.ttst_ns = Some(times[1] - times[0]);
            v.icl_ns = times.windows(2).map(|w| w[1] - w[0]).collect();
        }
        v.ttfo_ns = r
            .events
            .iter()
            .find(|e| e.has_output_text())
            .map(|e| e.t_ns.saturating_sub(r.start_ns));
        let decode = latency.saturating_sub(ttft);
        v.decode_ns = Some(decode);
        if let Some(osl) = v.osl.filter(|o| *o >= 2) {
            let itl = decode as f64 / (osl - 1) as f64;
            v.itl_ns = Some(itl);
            if itl > 0.0 {
                v.ottpu = Some(1.0 / (itl * NS_TO_S));
            }
        }
        if let Some(isl) = v.isl.filter(|_| ttft > 0) {
            v.prefill = Some(isl as f64 / (ttft as f64 * NS_TO_S));
        }
    }
    if let Some(osl) = v.osl.filter(|_| latency > 0) {
        v.e2e = Some(osl as f64 / (latency as f64 * NS_TO_S));
    }
    // Diff metrics compare the client's tokenizer with the server; with server counts there
    // is nothing to compare (AIPerf's USAGE_DIFF_ONLY).
    if !ctx.server_tokens {
        v.prompt_diff = diff_pct(v.usage.prompt, v.isl);
        if ctx.tokens {
            v.completion_diff = diff_pct(v.usage.completion, v.osl);
            v.reasoning_diff = diff_pct(v.usage.reasoning, v.reasoning);
        }
    }
    if let (Some(osl), Some(req)) = (v.osl, r.requested_output_tokens.filter(|q| *q > 0)) {
        let (osl, req) = (osl as f64, req as f64);
        v.osl_diff = Some((osl - req) / req * 100.0);
        v.osl_mismatch =
            Some((osl - req).abs() > (req * OSL_MISMATCH_PCT / 100.0).min(OSL_MISMATCH_MAX_TOKENS));
    }
    v
}

/// The record's metrics as (tag, base-unit values) pairs, in [`RECORD_METRICS`] order.
/// `inter_chunk_latency` is the only list; every other entry has one value.
fn base_values(v: &Values) -> Vec<(&'static str, Vec<f64>)> {
    let one = |x: Option<f64>| x.map(|x| vec![x]);
    let int = |x: Option<u64>| x.map(|x| vec![x as f64]);
    let icl = (!v.icl_ns.is_empty()).then(|| v.icl_ns.iter().map(|x| *x as f64).collect());
    let all: [(&'static str, Option<Vec<f64>>); 22] = [
        ("request_latency", int(v.latency_ns)),
        ("time_to_first_token", int(v.ttft_ns)),
        ("time_to_second_token", int(v.ttst_ns)),
        ("time_to_first_output_token", int(v.ttfo_ns)),
        ("inter_token_latency", one(v.itl_ns)),
        ("inter_chunk_latency", icl),
        ("decode_duration", int(v.decode_ns)),
        ("input_sequence_length", int(v.isl)),
        ("output_token_count", int(v.output)),
        ("reasoning_token_count", int(v.reasoning)),
        ("output_sequence_length", int(v.osl)),
        ("output_token_throughput_per_user", one(v.ottpu)),
        ("e2e_output_token_throughput", one(v.e2e)),
        ("prefill_throughput_per_user", one(v.prefill)),
        ("usage_prompt_tokens", int(v.usage.prompt)),
        ("usage_completion_tokens", int(v.usage.completion)),
        ("usage_total_tokens", int(v.usage.total)),
        ("usage_reasoning_tokens", int(v.usage.reasoning)),
        ("usage_prompt_tokens_diff_pct", one(v.prompt_diff)),
        ("usage_completion_tokens_diff_pct", one(v.completion_diff)),
        ("usage_reasoning_tokens_diff_pct", one(v.reasoning_diff)),
        ("osl_mismatch_diff_pct", one(v.osl_diff)),
    ];
    all.into_iter()
        .filter_map(|(t, x)| x.map(|x| (t, x)))
        .collect()
}

/// A per-record value in display units: ms for times, integers for token counts.
fn record_metric(tag: &'static str, base: &[f64]) -> RecordMetric {
    // One table lookup per value: this runs for every metric of every record.
    let unit = describe(tag).map(|(_, u)| u).unwrap_or("");
    let value = if tag == "inter_chunk_latency" {
        RecordMetricValue::List(base.iter().map(|x| x * NS_TO_MS).collect())
    } else if unit == "ms" {
        RecordMetricValue::Float(base[0] * NS_TO_MS)
    } else if unit == "tokens" {
        RecordMetricValue::Int(base[0] as i64)
    } else {
        RecordMetricValue::Float(base[0])
    };
    RecordMetric {
        tag: std::borrow::Cow::Borrowed(tag),
        unit: std::borrow::Cow::Borrowed(unit),
        value,
    }
}

fn result(tag: &str, value: MetricValue) -> MetricResult {
    let (header, unit) = describe(tag).unwrap_or(("", ""));
    MetricResult {
        tag: tag.to_string(),
        header: header.to_string(),
        unit: unit.to_string(),
        value,
    }
}

fn scalar(tag: &str, value: f64) -> MetricResult {
    result(tag, MetricValue::Scalar { value })
}

/// Wall-clock ns as float64, the way AIPerf's column store holds them: the integer sum is
/// rounded once (to 256 ns at today's epoch). This quantization is part of the definition.
fn wall_f64(anchor_unix_ns: u64, t_ns: u64) -> f64 {
    anchor_unix_ns.saturating_add(t_ns) as f64
}

/// Folds records of one phase, one at a time, into the `aiperf-0.13` metrics. A live run
/// pushes each record as it completes and keeps nothing else of it, so memory grows only by
/// the metric columns (a few hundred bytes a request), never by the records themselves.
pub struct Accumulator {
    ctx: Ctx,
    anchor: u64,
    /// Base-unit values per tag, in record order (the order matters for pairwise sums).
    pooled: HashMap<&'static str, Vec<f64>>,
    errors: Vec<(ErrorKey, u64)>,
    n_valid: u64,
    n_errors: u64,
    min_start: f64,
    max_end: f64,
    osl_mismatches: Option<u64>,
    discrepancies: Option<u64>,
    credit_to_start: Vec<f64>,
    effective: Vec<f64>,
    /// (start, first token, end, ISL, OSL, chunk gaps) of every record, wall clock, for the
    /// time-weighted sweep-line metrics.
    sweep: Vec<SweepRecord>,
    /// `--goodput` SLOs, in display units, and the count of requests that met them all.
    slos: Vec<Slo>,
    good: u64,
    /// Confidence level of the good-fraction's Wilson interval.
    confidence_level: f64,
}

/// One service-level objective of `--goodput`: a per-request metric, a bound in the metric's
/// display unit, and its direction (throughputs must reach it, everything else stay under).
#[derive(Clone, Debug, PartialEq)]
pub struct Slo {
    pub tag: String,
    pub bound: f64,
    pub larger_is_better: bool,
}

/// Per-request metrics an SLO may name (AIPerf: record metrics of one value).
pub const SLO_METRICS: &[&str] = &[
    "request_latency",
    "time_to_first_token",
    "time_to_second_token",
    "time_to_first_output_token",
    "inter_token_latency",
    "decode_duration",
    "output_token_throughput_per_user",
    "e2e_output_token_throughput",
    "prefill_throughput_per_user",
    "output_sequence_length",
    "input_sequence_length",
    "output_token_count",
];

/// Parse `--goodput "tag:value tag:value"` (values in display units: ms, tokens/sec/user).
pub fn parse_slos(spec: &str) -> Result<Vec<Slo>, String> {
    let mut out: Vec<Slo> = Vec::new();
    for item in spec.split_whitespace() {
        let (tag, value) = item
            .split_once(':')
            .ok_or_else(|| format!("--goodput {item:?}: expected metric:value"))?;
        if !SLO_METRICS.contains(&tag) {
            return Err(format!(
                "--goodput: unknown metric {tag:?} (valid: {})",
                SLO_METRICS.join(", ")
            ));
        }
        let bound: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("--goodput {item:?}: {value:?} is not a number"))?;
        out.retain(|s| s.tag != tag);
        out.push(Slo {
            tag: tag.to_string(),
            bound,
            larger_is_better: tag.contains("throughput"),
        });
    }
    if out.is_empty() {
        return Err("--goodput: no metric:value given".into());
    }
    Ok(out)
}

impl Accumulator {
    pub fn new(h: &EvidenceHeader) -> Self {
        Accumulator {
            ctx: Ctx {
                streaming: h.streaming,
                tokens: produces_tokens(&h.endpoint_type),
                server_tokens: h.use_server_token_count,
            },
            anchor: h.anchor_unix_ns,
            pooled: HashMap::new(),
            errors: Vec::new(),
            n_valid: 0,
            n_errors: 0,
            min_start: f64::INFINITY,
            max_end: f64::NEG_INFINITY,
            osl_mismatches: None,
            discrepancies: None,
            credit_to_start: Vec::new(),
            effective: Vec::new(),
            sweep: Vec::new(),
            slos: Vec::new(),
            good: 0,
            confidence_level: 0.95,
        }
    }

    /// Count requests meeting every SLO (`--goodput`); the fraction's Wilson interval is at
    /// `confidence_level`.
    pub fn with_slos(mut self, slos: Vec<Slo>, confidence_level: f64) -> Self {
        self.slos = slos;
        self.confidence_level = confidence_level;
        self
    }

    /// Fold one record in; returns its per-record metrics (display units).
    pub fn push(&mut self, r: &Record) -> Vec<RecordMetric> {
        let (ctx, anchor) = (self.ctx, self.anchor);
        // Derived latencies include every record, errors too. AIPerf divides by 1e6 here
        // (its derived-latency code), unlike the record metrics' × 1e-6.
        let planned = wall_f64(anchor, r.planned_ns);
        self.credit_to_start
            .push((wall_f64(anchor, r.start_ns) - planned).max(0.0) / 1e6);
        self.effective
            .push((wall_f64(anchor, r.end_ns) - planned).max(0.0) / 1e6);

        let mut metrics = Vec::new();
        if let Some(key) = error_of(r, ctx) {
            self.n_errors += 1;
            match self.errors.iter_mut().find(|(k, _)| *k == key) {
                Some((_, c)) => *c += 1,
                None => self.errors.push((key, 1)),
            }
            let isl = if ctx.server_tokens {
                usage_of(r).prompt
            } else {
                r.tokens.input
            };
            if let Some(isl) = isl {
                let base = [isl as f64];
                self.pooled.entry("error_isl").or_default().push(base[0]);
                metrics.push(record_metric("error_isl", &base));
            }
            // An error record counts only in the concurrency curve.
            self.sweep.push(SweepRecord {
                s: anchor.saturating_add(r.start_ns),
                g: None,
                e: anchor.saturating_add(r.end_ns),
                i: None,
                o: None,
                icl: Vec::new(),
            });
        } else {
            self.n_valid += 1;
            let mut v = values_of(r, ctx);
            let latency = v.latency_ns.unwrap_or(0);
            self.min_start = self.min_start.min(wall_f64(anchor, r.start_ns));
            self.max_end = self
                .max_end
                .max(wall_f64(anchor, r.start_ns.saturating_add(latency)));
            if let Some(m) = v.osl_mismatch {
                *self.osl_mismatches.get_or_insert(0) += m as u64;
            }
            let diffs = [v.prompt_diff, v.completion_diff, v.reasoning_diff];
            if diffs.iter().any(Option::is_some) {
                let over = diffs
                    .iter()
                    .flatten()
                    .any(|d| *d > USAGE_DIFF_THRESHOLD_PCT);
                *self.discrepancies.get_or_insert(0) += over as u64;
            }
            for (tag, base) in base_values(&v) {
                metrics.push(record_metric(tag, &base));
                self.pooled.entry(tag).or_default().extend(base);
            }
            if !self.slos.is_empty() {
                // Good only if every SLO holds; a metric the request lacks fails it.
                let good = self.slos.iter().all(|slo| {
                    metrics
                        .iter()
                        .find(|m| m.tag == slo.tag)
                        .and_then(|m| match m.value {
                            RecordMetricValue::Int(i) => Some(i as f64),
                            RecordMetricValue::Float(f) => Some(f),
                            RecordMetricValue::List(_) => None,
                        })
                        .is_some_and(|v| {
                            if slo.larger_is_better {
                                v >= slo.bound
                            } else {
                                v <= slo.bound
                            }
                        })
                });
                self.good += u64::from(good);
                metrics.push(RecordMetric {
                    tag: std::borrow::Cow::Borrowed("good_request_count"),
                    unit: std::borrow::Cow::Borrowed("requests"),
                    value: RecordMetricValue::Int(i64::from(good)),
                });
            }
            let s = anchor.saturating_add(r.start_ns);
            self.sweep.push(SweepRecord {
                s,
                g: v.ttft_ns.map(|t| s + t),
                // AIPerf's curves end at the record's end, not at the last content response.
                e: anchor.saturating_add(r.end_ns),
                i: v.isl,
                o: v.osl,
                icl: std::mem::take(&mut v.icl_ns),
            });
        }
        metrics
    }

    /// The phase's results. `window` is the phase's issuing window (the throughput
    /// denominator); without one, no throughput is reported.
    pub fn finish(self, window: Option<PhaseWindow>) -> Summary {
        let Accumulator {
            pooled,
            mut errors,
            n_valid,
            n_errors,
            min_start,
            max_end,
            osl_mismatches,
            discrepancies,
            credit_to_start,
            effective,
            sweep,
            anchor,
            slos,
            good,
            confidence_level,
            ..
        } = self;
        let mut out: Vec<MetricResult> = Vec::new();
        for tag in RECORD_METRICS {
            if let Some(vals) = pooled.get(tag).filter(|v| !v.is_empty()) {
                let s = stats(vals);
                let s = if is_ms(tag) { scaled(s, NS_TO_MS) } else { s };
                out.push(result(tag, MetricValue::Distribution { stats: s }));
            }
        }

        let total = |tag: &str| -> Option<f64> {
            pooled
                .get(tag)
                .filter(|v| !v.is_empty())
                .map(|v| v.iter().sum())
        };
        let completed = n_valid + n_errors;
        out.push(scalar("request_count", n_valid as f64));
        out.push(scalar("completed_request_count", completed as f64));
        if completed > 0 {
            out.push(scalar(
                "request_error_rate",
                n_errors as f64 * 100.0 / completed as f64,
            ));
        }
        if !slos.is_empty() {
            out.push(scalar("good_request_count", good as f64));
            // Errors stay in the denominator: a failed request is not a good one.
            out.push(scalar(
                "good_request_fraction",
                if completed > 0 {
                    good as f64 / completed as f64
                } else {
                    0.0
                },
            ));
            if let Some((lo, hi)) =
                crate::confidence::wilson_interval(good, completed, confidence_level)
            {
                out.push(scalar("good_request_fraction_ci_low", lo));
                out.push(scalar("good_request_fraction_ci_high", hi));
            }
        }
        if n_errors > 0 {
            out.push(scalar("error_request_count", n_errors as f64));
            // No context-overflow flag exists in the records yet, so none is counted.
            out.push(scalar("context_overflow_count", 0.0));
        }
        if n_valid > 0 {
            out.push(scalar(
                "benchmark_duration",
                (max_end - min_start) * NS_TO_S,
            ));
        }
        let total_osl = total("output_sequence_length");
        let total_isl = total("input_sequence_length");
        for (tag, src) in [
            ("total_output_tokens", "output_token_count"),
            ("total_reasoning_tokens", "reasoning_token_count"),
            ("total_isl", "input_sequence_length"),
            ("total_osl", "output_sequence_length"),
            ("total_error_isl", "error_isl"),
            ("total_usage_prompt_tokens", "usage_prompt_tokens"),
            ("total_usage_completion_tokens", "usage_completion_tokens"),
            ("total_usage_total_tokens", "usage_total_tokens"),
            ("total_usage_reasoning_tokens", "usage_reasoning_tokens"),
        ] {
            if let Some(t) = total(src) {
                out.push(scalar(tag, t));
            }
        }
        if let Some(n) = osl_mismatches {
            out.push(scalar("osl_mismatch_count", n as f64));
        }
        if let Some(n) = discrepancies {
            out.push(scalar("usage_discrepancy_count", n as f64));
        }

        // Throughputs divide by the phase's issuing window, not by benchmark_duration.
        if let Some(w) = window.filter(|w| w.requests_end_ns > w.start_ns) {
            let secs = (w.requests_end_ns - w.start_ns) as f64 * NS_TO_S;
            out.push(scalar("request_throughput", n_valid as f64 / secs));
            if !slos.is_empty() {
                out.push(scalar("goodput", good as f64 / secs));
            }
            if let Some(osl) = total_osl {
                out.push(scalar("output_token_throughput", osl / secs));
            }
            if let Some(isl) = total_isl {
                out.push(scalar("input_token_throughput", isl / secs));
            }
            if let (Some(isl), Some(osl)) = (total_isl, total_osl) {
                out.push(scalar("total_token_throughput", (isl + osl) / secs));
            }
        }

        if n_errors > 0 {
            for tag in ADJ_METRICS {
                if let Some(vals) = pooled.get(tag).filter(|v| !v.is_empty()) {
                    let s = scaled(adj_stats(vals, n_errors), NS_TO_MS);
                    let adj = format!("adj_{tag}");
                    out.push(result(&adj, MetricValue::Distribution { stats: s }));
                }
            }
        }

        if !credit_to_start.is_empty() {
            out.push(result(
                "credit_to_start_latency",
                MetricValue::Distribution {
                    stats: stats_std_in_order(&credit_to_start),
                },
            ));
            out.push(result(
                "effective_latency",
                MetricValue::Distribution {
                    stats: stats_std_in_order(&effective),
                },
            ));
        }

        // Time-weighted metrics over the phase window; ICL-aware whenever any record has
        // chunk gaps (AIPerf's default list backend), for the whole run.
        if let Some(w) = window {
            let icl_aware = sweep.iter().any(|r| !r.icl.is_empty());
            out.extend(sweepline_metrics(
                &sweep,
                (anchor + w.start_ns, anchor + w.requests_end_ns),
                icl_aware,
            ));
        }

        out.sort_by_key(|m| order_of(&m.tag));

        // Most frequent first; ties keep first-seen order (stable sort).
        errors.sort_by_key(|e| std::cmp::Reverse(e.1));
        let error_summary = errors
            .into_iter()
            .map(|((code, error_type, message), count)| ErrorGroup {
                code,
                error_type,
                message,
                count,
            })
            .collect();

        Summary {
            definitions: NAME.to_string(),
            metrics: out,
            error_summary,
        }
    }
}

/// Compute the `aiperf-0.13` metrics of one phase.
pub fn compute(evidence: &Evidence, phase: Phase) -> Computed {
    let mut acc = Accumulator::new(&evidence.header);
    let per_record = evidence
        .records_of(phase)
        .map(|r| PerRecord {
            id: r.id,
            metrics: acc.push(r),
        })
        .collect();
    Computed {
        summary: acc.finish(evidence.window(phase)),
        per_record,
    }
}

#[cfg(test)]
mod slo_tests {
    use super::*;

    #[test]
    fn slos_parse_with_directions_and_name_bad_input() {
        let s = parse_slos("time_to_first_token:100 output_token_throughput_per_user:50").unwrap();
        assert_eq!(s.len(), 2);
        assert!(!s[0].larger_is_better && s[0].bound == 100.0);
        assert!(s[1].larger_is_better && s[1].bound == 50.0);
        // A repeated metric keeps the last bound.
        let s = parse_slos("request_latency:10 request_latency:20").unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].bound, 20.0);
        for bad in ["", "ttft:5", "time_to_first_token", "time_to_first_token:x"] {
            let e = parse_slos(bad).unwrap_err();
            assert!(e.starts_with("--goodput"), "{bad}: {e}");
        }
    }
}
