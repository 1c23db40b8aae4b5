//! AIPerf 0.13's own summary of the same scrapes (its reference-sample deltas, unweighted
//! gauge statistics, its polynomial-histogram percentile estimator) and its export files
//! `server_metrics_export.json` / `.csv` and `gpu_telemetry_export.jsonl`, so that AIPerf
//! users find what they expect; where AIPerf's arithmetic differs from the reset-correct
//! numbers, each difference is listed (docs/telemetry.md, "AIPerf's summary").
//! (Skeleton: being written.)

use serde::{Deserialize, Serialize};

use crate::scrape::ScrapeLog;
use crate::window::{Analysis, Windows};

/// What AIPerf's files carry about the run besides the scrapes.
pub struct Meta<'a> {
    pub benchmark_id: &'a str,
    /// The run's anchor: wall time = anchor + monotonic ns.
    pub anchor_unix_ns: u64,
    /// The `input_config` block the run's AIPerf summary carries.
    pub input_config: &'a serde_json::Value,
    pub windows: &'a Windows,
}

/// A number where AIPerf's summary and the reset-correct analysis disagree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    pub url: String,
    pub metric: String,
    pub labels: Vec<(String, String)>,
    pub aiperf: f64,
    pub exact: f64,
    pub reason: String,
}

/// `server_metrics_export.json` (as a value) and `.csv` (text).
#[derive(Clone, Debug, PartialEq)]
pub struct ServerMetricsExport {
    pub json: serde_json::Value,
    pub csv: String,
    pub differences: Vec<Difference>,
}

/// None when no server target gave a usable scrape (AIPerf writes no file then).
pub fn server_metrics_export(
    log: &ScrapeLog,
    analysis: &Analysis,
    meta: &Meta<'_>,
) -> Option<ServerMetricsExport> {
    let _ = (log, analysis, meta);
    None
}

/// `gpu_telemetry_export.jsonl` (text) and the summary JSON's `telemetry_results`.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuTelemetryExport {
    pub jsonl: String,
    pub telemetry_results: serde_json::Value,
}

/// None when no GPU target gave a usable scrape.
pub fn gpu_telemetry_export(
    log: &ScrapeLog,
    analysis: &Analysis,
    meta: &Meta<'_>,
) -> Option<GpuTelemetryExport> {
    let _ = (log, analysis, meta);
    None
}
