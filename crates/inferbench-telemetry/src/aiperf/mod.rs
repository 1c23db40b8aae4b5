//! AIPerf 0.13's own summary of the same scrapes (its reference-sample deltas, unweighted
//! gauge statistics, its polynomial-histogram percentile estimator) and its export files
//! `server_metrics_export.json` / `.csv` / `.jsonl` and `gpu_telemetry_export.jsonl`, so that AIPerf
//! users find what they expect; where AIPerf's arithmetic differs from the reset-correct
//! numbers, each difference is listed (docs/telemetry.md, "AIPerf's summary").
//!
//! The arithmetic is AIPerf 0.13.0's, read from its source (`server_metrics/`), including
//! its quirks: a counter's total is `last − reference` clamped at 0 (a restart under-counts),
//! histogram buckets are dropped when any bucket went down, and the scrape a phase starts
//! from is the last one *before* the first scrape tagged with that phase.
//!
//! Which phase a scrape belongs to: its `phase` field when the scraper set one (AIPerf tags
//! each scrape with the phase active when it arrived, and the phase-boundary scrapes with
//! their phase); otherwise `end` scrapes and anything sent at or after the profiling start
//! are profiling, and anything sent inside the warmup window is warmup.

use serde::{Deserialize, Serialize};

use crate::scrape::ScrapeLog;
use crate::window::{Analysis, Windows};

mod csv;
mod differences;
mod energy;
mod gpu;
mod json;
mod jsonl;
mod numpy;
mod polynomial;
mod series;
mod stats;
mod units;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_jsonl;

pub use energy::{ClientTotals, EnergyMetric, energy_efficiency};
pub use polynomial::{BucketStatistics, accumulate_bucket_statistics, estimated_percentiles};
pub use units::infer_unit;

/// The version of AIPerf whose summary and file layout this module reproduces.
pub const AIPERF_VERSION: &str = "0.13.0";

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
    let endpoints = series::build(log, meta, crate::scrape::TargetKind::Server);
    let results = stats::results(&endpoints, meta)?;
    let json = json::export(&results, meta);
    let csv = csv::export(&results, meta.benchmark_id);
    let differences = differences::find(&results, analysis, log);
    Some(ServerMetricsExport {
        json,
        csv,
        differences,
    })
}

/// `server_metrics_export.jsonl` (text): one line per server scrape AIPerf would have
/// recorded (`jsonl.rs` says which), computed from the raw scrapes alone. None when no scrape
/// gives a line (AIPerf leaves no file then).
pub fn server_metrics_jsonl(log: &ScrapeLog, meta: &Meta<'_>) -> Option<String> {
    jsonl::export(log, meta)
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
    let _ = analysis;
    gpu::export(log, meta)
}
