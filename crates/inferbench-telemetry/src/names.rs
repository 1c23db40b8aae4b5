//! What the metric names of each inference server mean: which counter is the server's
//! output-token work, which gauges are its running and waiting requests and KV-cache use,
//! which histograms are its TTFT, ITL and end-to-end latency (docs/telemetry.md, "Known
//! names"). (Skeleton: the catalogue is being written.)

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownName {
    pub server: ServerKind,
    /// The family name as exposed (the TYPE line's name).
    pub name: &'static str,
    pub kind: MetricType,
    pub role: Role,
    pub unit: Unit,
}

/// Every known name (several per role where servers renamed them across releases).
pub const KNOWN: &[KnownName] = &[];

/// The known metric of this family name, if any.
pub fn lookup(family: &str) -> Option<&'static KnownName> {
    KNOWN.iter().find(|k| k.name == family)
}

/// The server whose names a set of family names uses most (None when none is known).
pub fn detect<'a>(families: impl IntoIterator<Item = &'a str>) -> Option<ServerKind> {
    let _ = families.into_iter().count();
    None
}
