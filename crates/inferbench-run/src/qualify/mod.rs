//! `inferbench qualify`: is the client sufficient? The same frozen workload at a ladder of
//! client worker counts, repeated and interleaved against a fixed server; the plateau rule
//! on the *server's* output-token counter with a tolerance declared before the runs, then
//! the client evidence gates at the plateau step and the one below it (docs/qualify.md).
//!
//! This module decides from measurements ([`decide`]); running the ladder is the binary's
//! `qualify` command through the run library.
//!
//! - [`stats`]: per-step means, CVs, the step deltas, the pooled CV and the equivalence
//!   interval;
//! - [`gates`]: the client evidence gates of one run and the worst run of a step;
//! - `rule`: the plateau, the verdicts and their precedence ([`decide`]);
//! - [`render`]: the console table, `qualification.json` ([`to_json`]) and Markdown.

pub mod gates;
pub mod render;
mod rule;
pub mod stats;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_gates;

use serde::{Deserialize, Serialize};

pub use render::{SCHEMA, from_json, render_console, render_markdown, to_json};

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
    /// A lag slope > 0 with a p-value below this fails the lag gate (a trend, not noise).
    #[serde(default = "default_lag_slope_alpha")]
    pub lag_slope_alpha: f64,
}

fn default_lag_slope_alpha() -> f64 {
    0.05
}

impl Default for QualifySpec {
    /// τ = 1 % (the seed's example), the smaller worker count of the plateau pair, the
    /// reference's proposed gate thresholds.
    fn default() -> Self {
        QualifySpec {
            tolerance_pct: 1.0,
            prefer_headroom: false,
            gates: GateThresholds::default(),
        }
    }
}

impl Default for GateThresholds {
    /// The reference's proposed thresholds (telemetry.md §5.3 step 7). Fractions are of
    /// wall time (stall, run-queue wait), of the CPUs the client may use (U) or of samples
    /// (Recv-Q); `achieved_*_pct` bound |achieved − target| in percent of the target.
    fn default() -> Self {
        GateThresholds {
            lag_p99_pass_ms: 1.0,
            lag_p99_warn_ms: 5.0,
            lag_p99_gap_fraction: 0.05,
            lag_max_ms: 50.0,
            achieved_pass_pct: 0.5,
            achieved_warn_pct: 2.0,
            cpu_util_pass: 0.70,
            cpu_util_warn: 0.85,
            cpu_pressure_pass: 0.05,
            cpu_pressure_warn: 0.20,
            throttle_warn: 0.01,
            memory_pressure_pass: 0.01,
            runq_wait_pass: 0.05,
            runq_wait_warn: 0.15,
            recvq_nonzero_pass: 0.01,
            recvq_nonzero_warn: 0.05,
            recvq_max_bytes: 64 * 1024,
            lag_slope_alpha: default_lag_slope_alpha(),
        }
    }
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
    /// For the cross-check's edge bound 2·C·OSL/(R·W) (telemetry.md §2.7): C, requests in
    /// flight (the concurrency setting, or the mean in flight in rate modes) …
    #[serde(default)]
    pub concurrency: Option<f64>,
    /// … the mean output tokens per request …
    #[serde(default)]
    pub mean_osl_tokens: Option<f64>,
    /// … and W, the measured window, s (absent: server output tokens / server tokens/s,
    /// which is the bracket interval by construction).
    #[serde(default)]
    pub window_s: Option<f64>,
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
    /// memory.events oom + oom_kill increase alone (absent: not separated from high/max).
    #[serde(default)]
    pub memory_oom_events: Option<u64>,
    /// The worst worker thread's run-queue wait / wall time.
    pub runq_wait_max: Option<f64>,
    /// Fraction of connection samples with a non-zero receive queue, and the largest seen.
    pub recvq_nonzero_fraction: Option<f64>,
    pub recvq_max_bytes: Option<u64>,
    /// The receive queue grew through the window (absent: not judged, the fraction is).
    #[serde(default)]
    pub recvq_growing: Option<bool>,
    /// The planned-but-not-sent queue grew through the window.
    pub backlog_growing: Option<bool>,
    /// The evidence writer's backlog grew through the window (its records wait in memory).
    #[serde(default)]
    pub writer_backlog_growing: Option<bool>,
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

/// Decides from the runs of a ladder (docs/qualify.md: the definitions, the gates, the
/// verdicts and their precedence).
pub fn decide(spec: &QualifySpec, runs: &[StepRun]) -> Qualification {
    rule::decide(spec, runs)
}

/// The outcome of one gate, or of the noise and equivalence conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum GateStatus {
    /// Does not apply in this mode (dispatch lag and offered rate in concurrency modes).
    NotApplicable,
    Pass,
    /// Passes with a note (docs/qualify.md: WARN is the reference's "passes", named).
    Warn,
    NotMeasured,
    Fail,
}

impl GateStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            GateStatus::NotApplicable => "NOT_APPLICABLE",
            GateStatus::Pass => "PASS",
            GateStatus::Warn => "WARN",
            GateStatus::NotMeasured => "NOT_MEASURED",
            GateStatus::Fail => "FAIL",
        }
    }
}

/// The decision's working, as `Qualification::detail` holds it ([`Qualification::detail`]
/// is this serialized; [`Detail::of`] reads it back).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Detail {
    /// One per worker count, ascending.
    pub steps: Vec<stats::StepStat>,
    /// One per consecutive pair of steps.
    pub deltas: Vec<stats::StepDelta>,
    /// The first step within τ (the plateau candidate) and whether it was confirmed.
    pub plateau: Option<Plateau>,
    /// The gates at every worker count (worst run of the step).
    pub gates: Vec<gates::StepGates>,
    /// The client↔server token cross-check of every run.
    pub cross_check: Vec<CrossCheck>,
    /// The server saturation signals of the runs at the plateau step.
    pub server_saturation: Vec<SaturationRun>,
    /// Host PSI cpu some per worker count (largest over the step's runs): informational.
    pub host_cpu_pressure: Vec<HostPressure>,
}

impl Detail {
    /// The detail of a decided qualification (None for a document that does not hold one).
    pub fn of(q: &Qualification) -> Option<Detail> {
        serde_json::from_value(q.detail.clone()).ok()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    pub from_workers: usize,
    pub to_workers: usize,
    /// Every condition held (flat, equivalent, no later rise, the gates).
    pub confirmed: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrossCheck {
    pub workers: usize,
    pub repeat: usize,
    pub dir: String,
    pub status: GateStatus,
    /// 100·|client − server| / server.
    pub gap_pct: Option<f64>,
    /// max(2 %, 100·2·C·OSL/(R·W)); None when C, OSL or W is missing.
    pub bound_pct: Option<f64>,
    pub note: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SaturationRun {
    pub workers: usize,
    pub repeat: usize,
    pub dir: String,
    /// None: no server saturation signal was measured in this run.
    pub saturated: Option<bool>,
    /// The signals that held, e.g. "KV usage 0.97 ≥ 0.95".
    pub signals: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostPressure {
    pub workers: usize,
    pub cpu_some_max: Option<f64>,
}
