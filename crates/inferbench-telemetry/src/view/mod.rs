//! The views a reader wants from a window's analysis: the server's own work, queue and
//! latency by its known names; each GPU's power, energy, utilisation, memory, temperature
//! and clocks; and energy per token (docs/telemetry.md, "Server view", "GPU telemetry").
//! Every count is each series' own window increase, summed after (D4).

use serde::{Deserialize, Serialize};

use crate::names::ServerKind;
use crate::window::TargetAnalysis;

mod gpu;
mod server;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_server;

/// A gauge over the window, summed across its series (per-series time-weighted means add).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GaugeBrief {
    pub time_weighted_mean: Option<f64>,
    pub max: Option<f64>,
    /// Last minus first sample in the window.
    pub change: Option<f64>,
}

/// A server-side histogram over the window, in ms: its exact mean and
/// `histogram_quantile` estimates (never a percentile of the client's requests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistBrief {
    pub count: f64,
    pub mean_ms: Option<f64>,
    pub p50_estimate_ms: Option<f64>,
    pub p90_estimate_ms: Option<f64>,
    pub p99_estimate_ms: Option<f64>,
    /// The largest finite bucket bound, ms: no estimate can exceed it.
    pub top_bound_ms: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerView {
    pub target: u32,
    pub url: String,
    pub server: ServerKind,
    /// Exact window increase of the output-token counter, summed over its series.
    pub output_tokens: Option<f64>,
    pub output_tokens_per_s: Option<f64>,
    pub prompt_tokens: Option<f64>,
    pub prompt_tokens_per_s: Option<f64>,
    pub running: Option<GaugeBrief>,
    pub waiting: Option<GaugeBrief>,
    /// 0–1.
    pub kv_usage: Option<GaugeBrief>,
    pub preemptions: Option<f64>,
    pub requests_finished: Option<f64>,
    pub ttft: Option<HistBrief>,
    pub itl: Option<HistBrief>,
    pub tpot: Option<HistBrief>,
    pub e2e: Option<HistBrief>,
    /// Counter resets seen in any series this view uses.
    pub resets: u32,
}

/// The server view of a server target (None when no known server names are there).
/// Roles come from `names::detect` over the family names and that server's known names
/// (the first of a role's names, in catalogue order, that the target has). Counts are exact
/// bracket increases (TGI's output tokens: its generated-tokens histogram's `_sum`, finished
/// requests only), per second over the bracket. Histograms are converted to ms by their
/// known unit; a percent KV usage is scaled to 0–1.
pub fn server_view(t: &TargetAnalysis) -> Option<ServerView> {
    server::view(t)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuSummary {
    pub uuid: Option<String>,
    /// The `gpu` label (index on its host).
    pub index: Option<String>,
    pub model: Option<String>,
    pub hostname: Option<String>,
    pub power_w: Option<GaugeBrief>,
    /// From the energy counter's exact window increase (mJ → J), or power's trapezoid
    /// integral when a GPU of the target lacks the counter (`GpuView::energy_source`).
    pub energy_j: Option<f64>,
    pub util_pct: Option<GaugeBrief>,
    pub mem_copy_util_pct: Option<GaugeBrief>,
    pub fb_used_mib: Option<GaugeBrief>,
    pub temp_c: Option<GaugeBrief>,
    pub sm_clock_mhz: Option<GaugeBrief>,
    pub mem_clock_mhz: Option<GaugeBrief>,
    /// The XID field changed inside the window: the run is suspect.
    pub xid_changed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnergySource {
    /// `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`, differenced per GPU.
    Counter,
    /// Power integrated by the trapezoid rule over the samples.
    PowerIntegral,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuView {
    pub target: u32,
    pub url: String,
    pub gpus: Vec<GpuSummary>,
    /// Summed over the GPUs listed.
    pub energy_j: Option<f64>,
    pub energy_source: Option<EnergySource>,
    /// The exporter repeated identical bodies (its collect interval is slower than our
    /// scrapes): energy and utilisation are coarser than the scrape interval.
    pub duplicate_fraction: f64,
}

/// The GPU view of a DCGM target (None when no DCGM fields are there).
/// GPUs are grouped by the `UUID` label (else `gpu`). Energy is the counter's exact bracket
/// increase when every GPU has the counter, else (for every GPU, so that the sum is of one
/// kind) power integrated by the trapezoid rule over the window's samples.
pub fn gpu_view(t: &TargetAnalysis) -> Option<GpuView> {
    gpu::view(t)
}

/// What the client measured over the same window, for energy per token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientWork {
    pub duration_s: f64,
    pub output_tokens: f64,
    pub input_tokens: f64,
    pub requests: f64,
    pub output_tokens_per_s: f64,
    /// The server's own output-token count over the window, when a server view has it.
    pub server_output_tokens: Option<f64>,
}

/// Energy efficiency (AIPerf's definitions, and the server-token variant).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Efficiency {
    pub energy_j: f64,
    pub mean_power_w: f64,
    pub energy_per_output_token_mj: Option<f64>,
    pub energy_per_total_token_mj: Option<f64>,
    pub output_tokens_per_joule: Option<f64>,
    pub energy_per_request_j: Option<f64>,
    pub output_tps_per_watt: Option<f64>,
    /// Energy per output token by the server's own token counter.
    pub energy_per_server_output_token_mj: Option<f64>,
    /// The GPU UUIDs summed.
    pub gpus: Vec<String>,
}

/// Energy per token (reference §3 steps 1–5), None without energy. `mean_power_w` is
/// energy / `work.duration_s` (0 without a duration, and then no per-watt figure).
pub fn efficiency(gpus: &[GpuView], work: &ClientWork) -> Option<Efficiency> {
    gpu::efficiency(gpus, work)
}
