//! What the metric names of each inference server mean: which counter is the server's
//! output-token work, which gauges are its running and waiting requests and KV-cache use,
//! which histograms are its TTFT, ITL and end-to-end latency (docs/telemetry.md, "Known
//! names").
//!
//! Names are as the servers expose them in 0.0.4 text: Python servers' counters carry the
//! `_total` that prometheus_client appends; TGI, Triton and DCGM counters have none. Where a
//! server has several names for one role (renamed across releases, or two prefixes), every
//! one is listed, the preferred first ([`for_role`]); a body normally carries only one.

use serde::{Deserialize, Serialize};

use crate::expo::MetricType;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    Vllm,
    Sglang,
    TrtLlm,
    Triton,
    LlamaCpp,
    Dynamo,
    Tgi,
}

impl ServerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ServerKind::Vllm => "vllm",
            ServerKind::Sglang => "sglang",
            ServerKind::TrtLlm => "trtllm",
            ServerKind::Triton => "triton",
            ServerKind::LlamaCpp => "llamacpp",
            ServerKind::Dynamo => "dynamo",
            ServerKind::Tgi => "tgi",
        }
    }
}

/// What a known metric measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Output tokens generated (a counter, or a histogram's `_sum` for TGI).
    OutputTokens,
    PromptTokens,
    /// Requests in the running batch (gauge).
    Running,
    /// Requests queued (gauge).
    Waiting,
    /// KV-cache use as a fraction 0–1 (gauge).
    KvUsage,
    Preemptions,
    RequestsFinished,
    /// Server-side time to first token (histogram).
    Ttft,
    /// Server-side inter-token latency (histogram).
    Itl,
    /// Server-side per-request time per output token (histogram).
    Tpot,
    /// Server-side end-to-end request latency (histogram).
    E2eLatency,
    QueueTime,
}

/// The unit a known metric's values are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Seconds,
    Milliseconds,
    Microseconds,
    Tokens,
    Requests,
    /// 0–1.
    Ratio,
    /// 0–100.
    Percent,
}

/// A histogram with role `OutputTokens` or `PromptTokens` (TGI's `tgi_request_generated_tokens`,
/// Dynamo's `dynamo_frontend_input_sequence_tokens`) measures tokens per finished request:
/// the work is its `_sum`. A counter with a time role (Triton's `nv_inference_*_duration_us`)
/// is cumulative time: its increase over the matching request counter's is the mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownName {
    pub server: ServerKind,
    /// The family name as exposed (the TYPE line's name).
    pub name: &'static str,
    pub kind: MetricType,
    pub role: Role,
    pub unit: Unit,
}

const fn k(
    server: ServerKind,
    name: &'static str,
    kind: MetricType,
    role: Role,
    unit: Unit,
) -> KnownName {
    KnownName {
        server,
        name,
        kind,
        role,
        unit,
    }
}

use MetricType::{Counter as C, Gauge as G, Histogram as H};
use Role::*;
use ServerKind::*;
use Unit::{Microseconds as Us, Ratio, Requests as Req, Seconds as S, Tokens as Tok};

/// Every known name (several per role where servers renamed them across releases), each
/// server's preferred name for a role first. Reference §2.1–§2.7.
pub const KNOWN: &[KnownName] = &[
    // vLLM (§2.1).
    k(Vllm, "vllm:generation_tokens_total", C, OutputTokens, Tok),
    k(Vllm, "vllm:prompt_tokens_total", C, PromptTokens, Tok),
    k(Vllm, "vllm:num_requests_running", G, Running, Req),
    k(Vllm, "vllm:num_requests_waiting", G, Waiting, Req),
    k(Vllm, "vllm:kv_cache_usage_perc", G, KvUsage, Ratio),
    // The older name of the same 0–1 fraction ("perc" notwithstanding).
    k(Vllm, "vllm:gpu_cache_usage_perc", G, KvUsage, Ratio),
    k(Vllm, "vllm:num_preemptions_total", C, Preemptions, Req),
    k(Vllm, "vllm:request_success_total", C, RequestsFinished, Req),
    k(Vllm, "vllm:time_to_first_token_seconds", H, Ttft, S),
    k(Vllm, "vllm:inter_token_latency_seconds", H, Itl, S),
    // Deprecated in 0.11 as a rename of inter_token_latency (vLLM observed the same per-token
    // gaps into both), gone by 0.30: an ITL histogram, not the per-request TPOT below.
    k(Vllm, "vllm:time_per_output_token_seconds", H, Itl, S),
    k(
        Vllm,
        "vllm:request_time_per_output_token_seconds",
        H,
        Tpot,
        S,
    ),
    k(Vllm, "vllm:e2e_request_latency_seconds", H, E2eLatency, S),
    k(Vllm, "vllm:request_queue_time_seconds", H, QueueTime, S),
    // SGLang (§2.2).
    k(
        Sglang,
        "sglang:generation_tokens_total",
        C,
        OutputTokens,
        Tok,
    ),
    k(Sglang, "sglang:prompt_tokens_total", C, PromptTokens, Tok),
    k(Sglang, "sglang:num_running_reqs", G, Running, Req),
    k(Sglang, "sglang:num_queue_reqs", G, Waiting, Req),
    k(Sglang, "sglang:token_usage", G, KvUsage, Ratio),
    // Retracted requests are SGLang's preemption analogue, and a gauge (not differenced).
    k(Sglang, "sglang:num_retracted_reqs", G, Preemptions, Req),
    k(
        Sglang,
        "sglang:num_requests_total",
        C,
        RequestsFinished,
        Req,
    ),
    k(Sglang, "sglang:time_to_first_token_seconds", H, Ttft, S),
    k(Sglang, "sglang:inter_token_latency_seconds", H, Itl, S),
    k(
        Sglang,
        "sglang:request_time_per_output_token_seconds",
        H,
        Tpot,
        S,
    ),
    k(
        Sglang,
        "sglang:e2e_request_latency_seconds",
        H,
        E2eLatency,
        S,
    ),
    k(Sglang, "sglang:queue_time_seconds", H, QueueTime, S),
    // TensorRT-LLM (§2.3): `trtllm_` from trtllm-serve, `trtllm:` as Dynamo re-exports it.
    k(
        TrtLlm,
        "trtllm_generation_tokens_total",
        C,
        OutputTokens,
        Tok,
    ),
    k(
        TrtLlm,
        "trtllm:generation_tokens_total",
        C,
        OutputTokens,
        Tok,
    ),
    k(TrtLlm, "trtllm_prompt_tokens_total", C, PromptTokens, Tok),
    k(TrtLlm, "trtllm:prompt_tokens_total", C, PromptTokens, Tok),
    k(TrtLlm, "trtllm_num_requests_running", G, Running, Req),
    k(TrtLlm, "trtllm:num_requests_running", G, Running, Req),
    k(TrtLlm, "trtllm_num_requests_waiting", G, Waiting, Req),
    k(TrtLlm, "trtllm:num_requests_waiting", G, Waiting, Req),
    k(TrtLlm, "trtllm_kv_cache_utilization", G, KvUsage, Ratio),
    k(TrtLlm, "trtllm:kv_cache_utilization", G, KvUsage, Ratio),
    k(
        TrtLlm,
        "trtllm_request_success_total",
        C,
        RequestsFinished,
        Req,
    ),
    k(
        TrtLlm,
        "trtllm:request_success_total",
        C,
        RequestsFinished,
        Req,
    ),
    k(
        TrtLlm,
        "trtllm_num_requests_completed_total",
        C,
        RequestsFinished,
        Req,
    ),
    k(
        TrtLlm,
        "trtllm:num_requests_completed_total",
        C,
        RequestsFinished,
        Req,
    ),
    k(TrtLlm, "trtllm_time_to_first_token_seconds", H, Ttft, S),
    k(TrtLlm, "trtllm:time_to_first_token_seconds", H, Ttft, S),
    k(TrtLlm, "trtllm_time_per_output_token_seconds", H, Tpot, S),
    k(TrtLlm, "trtllm:time_per_output_token_seconds", H, Tpot, S),
    k(
        TrtLlm,
        "trtllm_e2e_request_latency_seconds",
        H,
        E2eLatency,
        S,
    ),
    k(
        TrtLlm,
        "trtllm:e2e_request_latency_seconds",
        H,
        E2eLatency,
        S,
    ),
    k(TrtLlm, "trtllm_request_queue_time_seconds", H, QueueTime, S),
    k(TrtLlm, "trtllm:request_queue_time_seconds", H, QueueTime, S),
    // Triton (§2.3): counters without `_total`; durations are cumulative µs counters.
    k(
        Triton,
        "nv_inference_request_success",
        C,
        RequestsFinished,
        Req,
    ),
    k(
        Triton,
        "nv_inference_pending_request_count",
        G,
        Waiting,
        Req,
    ),
    k(
        Triton,
        "nv_inference_request_duration_us",
        C,
        E2eLatency,
        Us,
    ),
    k(Triton, "nv_inference_queue_duration_us", C, QueueTime, Us),
    // llama.cpp (§2.4): no histograms.
    k(
        LlamaCpp,
        "llamacpp:tokens_predicted_total",
        C,
        OutputTokens,
        Tok,
    ),
    k(
        LlamaCpp,
        "llamacpp:prompt_tokens_total",
        C,
        PromptTokens,
        Tok,
    ),
    k(LlamaCpp, "llamacpp:requests_processing", G, Running, Req),
    k(LlamaCpp, "llamacpp:requests_deferred", G, Waiting, Req),
    // Older builds only.
    k(LlamaCpp, "llamacpp:kv_cache_usage_ratio", G, KvUsage, Ratio),
    // Dynamo frontend (§2.5).
    k(
        Dynamo,
        "dynamo_frontend_output_tokens_total",
        C,
        OutputTokens,
        Tok,
    ),
    k(
        Dynamo,
        "dynamo_frontend_input_sequence_tokens",
        H,
        PromptTokens,
        Tok,
    ),
    k(Dynamo, "dynamo_frontend_inflight_requests", G, Running, Req),
    k(Dynamo, "dynamo_frontend_queued_requests", G, Waiting, Req),
    k(
        Dynamo,
        "dynamo_frontend_requests_total",
        C,
        RequestsFinished,
        Req,
    ),
    k(
        Dynamo,
        "dynamo_frontend_time_to_first_token_seconds",
        H,
        Ttft,
        S,
    ),
    k(
        Dynamo,
        "dynamo_frontend_inter_token_latency_seconds",
        H,
        Itl,
        S,
    ),
    k(
        Dynamo,
        "dynamo_frontend_request_duration_seconds",
        H,
        E2eLatency,
        S,
    ),
    // TGI (§2.6, the verified names only): no token counter; the generated-tokens
    // histogram's `_sum` is the output-token work, over finished requests.
    k(Tgi, "tgi_request_generated_tokens", H, OutputTokens, Tok),
    k(Tgi, "tgi_batch_current_size", G, Running, Req),
    k(Tgi, "tgi_queue_size", G, Waiting, Req),
    k(Tgi, "tgi_request_duration", H, E2eLatency, S),
];

/// The known metric of this family name, if any. An OpenMetrics counter family is named
/// without the `_total` its samples carry, so `vllm:generation_tokens` finds
/// `vllm:generation_tokens_total` too.
pub fn lookup(family: &str) -> Option<&'static KnownName> {
    KNOWN.iter().find(|k| k.name == family).or_else(|| {
        KNOWN.iter().find(|k| {
            k.kind == MetricType::Counter
                && k.name
                    .strip_suffix("_total")
                    .is_some_and(|base| base == family)
        })
    })
}

/// A server's names for a role, preferred first.
pub fn for_role(server: ServerKind, role: Role) -> impl Iterator<Item = &'static KnownName> {
    KNOWN
        .iter()
        .filter(move |k| k.server == server && k.role == role)
}

/// Tie order of [`detect`].
const ORDER: [ServerKind; 7] = [Vllm, Sglang, TrtLlm, Triton, LlamaCpp, Tgi, Dynamo];

/// The server whose names a set of family names uses most (None when none is known). Ties go
/// to the earlier of vLLM, SGLang, TRT-LLM, Triton, llama.cpp, TGI. Dynamo's frontend wins
/// whenever one of its names is present, since a Dynamo body also passes through the
/// engine's own (`vllm:*`, …); a worker body with only `dynamo_component_*` is the engine's.
pub fn detect<'a>(families: impl IntoIterator<Item = &'a str>) -> Option<ServerKind> {
    let mut counts = [0usize; ORDER.len()];
    let mut seen: Vec<&'static str> = Vec::new();
    for family in families {
        let Some(known) = lookup(family) else {
            continue;
        };
        // A family listed twice (two scrapes' names) counts once.
        if seen.contains(&known.name) {
            continue;
        }
        seen.push(known.name);
        if let Some(i) = ORDER.iter().position(|&s| s == known.server) {
            counts[i] += 1;
        }
    }
    if counts[ORDER.len() - 1] > 0 {
        return Some(Dynamo);
    }
    let mut best: Option<(usize, ServerKind)> = None;
    for (i, &server) in ORDER[..ORDER.len() - 1].iter().enumerate() {
        if counts[i] > 0 && best.is_none_or(|(n, _)| counts[i] > n) {
            best = Some((counts[i], server));
        }
    }
    best.map(|(_, s)| s)
}

#[cfg(test)]
mod tests;
