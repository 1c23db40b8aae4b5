//! `inferbench qualify`: is the client sufficient? The same frozen workload at a ladder of
//! client worker counts, repeated and interleaved against a fixed server; the plateau rule
//! on the *server's* output-token counter with a tolerance declared before the runs, then
//! the client evidence gates at the plateau step and the one below it (docs/qualify.md).
//!
//! This module decides from measurements ([`decide`]); running the ladder is the binary's
//! `qualify` command through the run library. (Skeleton: the decision is being written.)

use serde::{Deserialize, Serialize};

/// The declared rule: tolerance and gate thresholds, printed with every verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QualifySpec {
    /// τ, percent: a step is flat when |δ| < τ (and τ ≥ 2·CV_pooled).
    pub tolerance_pct: f64,
    /// Prefer the larger worker count of the plateau pair (headroom).
    pub prefer_headroom: bool,
    pub gates: GateThresholds,
}

/// The evidence gates' thresholds (docs/qualify.md; defaults are the reference's proposed
/// ones).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateThresholds {
    pub lag_p99_pass_ms: f64,
    pub lag_p99_warn_ms: f64,
    /// p99 lag at most this fraction of the mean inter-arrival gap (rate modes).
    pub lag_p99_gap_fraction: f64,
    pub lag_max_ms: f64,
    pub achieved_pass_pct: f64,
    pub achieved_warn_pct: f64,
    pub cpu_util_pass: f64,
    pub cpu_util_warn: f64,
    pub cpu_pressure_pass: f64,
    pub cpu_pressure_warn: f64,
    pub throttle_warn: f64,
    pub memory_pressure_pass: f64,
    pub runq_wait_pass: f64,
    pub runq_wait_warn: f64,
    pub recvq_nonzero_pass: f64,
    pub recvq_nonzero_warn: f64,
    pub recvq_max_bytes: u64,
}

/// What one run of the ladder measured. Every field is optional: a missing one makes its
/// gate NOT_MEASURED (named in the verdict), never a pass.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepRun {
    pub workers: usize,
    /// Repeat index at this worker count (0-based), in the interleaved order run.
    pub repeat: usize,
    /// The run directory.
    pub dir: String,
    /// The server's output tokens/s: exact window increase / bracket interval.
    pub server_tokens_per_s: Option<f64>,
    /// The client's output tokens/s over the same window.
    pub client_tokens_per_s: Option<f64>,
    /// Client output tokens and server output tokens over the window, for the gross check.
    pub client_output_tokens: Option<f64>,
    pub server_output_tokens: Option<f64>,
    pub evidence: RunEvidence,
}

/// The client evidence of one run (docs/qualify.md, "Evidence gates").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunEvidence {
    /// Rate modes only: dispatch lag (actual − planned send), ms.
    pub rate_mode: bool,
    pub lag_p99_ms: Option<f64>,
    pub lag_max_ms: Option<f64>,
    /// Slope of lag over time and its p-value (a lag that trends up fails).
    pub lag_slope_ms_per_s: Option<f64>,
    pub lag_slope_p: Option<f64>,
    pub mean_interarrival_ms: Option<f64>,
    /// Achieved issue rate / target, percent.
    pub achieved_pct: Option<f64>,
    /// Client CPU use as a fraction of the CPUs it may use (N_eff).
    pub cpu_util: Option<f64>,
    /// Client cgroup `cpu.pressure` some: Δtotal/Δt.
    pub cpu_pressure_some: Option<f64>,
    pub nr_throttled: Option<u64>,
    pub throttle_fraction: Option<f64>,
    pub memory_pressure_some: Option<f64>,
    /// memory.events high/max/oom/oom_kill increase.
    pub memory_events: Option<u64>,
    /// The worst worker thread's run-queue wait / wall time.
    pub runq_wait_max: Option<f64>,
    /// Fraction of connection samples with a non-zero receive queue, and the largest seen.
    pub recvq_nonzero_fraction: Option<f64>,
    pub recvq_max_bytes: Option<u64>,
    /// The planned-but-not-sent queue grew through the window.
    pub backlog_growing: Option<bool>,
    /// Server queue (waiting requests): time-weighted mean, max, change over the window.
    pub server_waiting_mean: Option<f64>,
    pub server_waiting_change: Option<f64>,
    pub server_kv_usage_max: Option<f64>,
    pub server_preemptions: Option<f64>,
    /// Host PSI cpu some over the window (informational only).
    pub host_cpu_pressure_some: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    ClientSufficient,
    ClientLimited,
    ServerSaturated,
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::ClientSufficient => "CLIENT_SUFFICIENT",
            Verdict::ClientLimited => "CLIENT_LIMITED",
            Verdict::ServerSaturated => "SERVER_SATURATED",
            Verdict::Inconclusive => "INCONCLUSIVE",
        }
    }
}

/// The decision with everything that led to it (the file `qualification.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Qualification {
    pub verdict: Verdict,
    /// The qualified worker count (CLIENT_SUFFICIENT / SERVER_SATURATED).
    pub qualified_workers: Option<usize>,
    pub reasons: Vec<String>,
    pub spec: QualifySpec,
    pub runs: Vec<StepRun>,
    /// Everything else the decision computed (steps, deltas, CVs, gate outcomes) as the
    /// decision module lays it out.
    pub detail: serde_json::Value,
}

/// Decides from the runs of a ladder.
pub fn decide(spec: &QualifySpec, runs: &[StepRun]) -> Qualification {
    Qualification {
        verdict: Verdict::Inconclusive,
        qualified_workers: None,
        reasons: vec!["the qualification rule is not written yet".into()],
        spec: spec.clone(),
        runs: runs.to_vec(),
        detail: serde_json::Value::Null,
    }
}
