//! Side files: what a run writes besides the evidence and the AIPerf exports (the client's
//! resources now; server-metric scrapes, GPU telemetry and correctness scores later). Each
//! is registered here once, so that a live run and an offline rewrite list the same files in
//! the same order, and a stale one from an earlier run is removed before a new run starts.

/// `{summary, samples}` of the client's own CPU, memory, threads and the machine's pressure.
pub const CLIENT_RESOURCES: &str = "inferbench_client_resources.json";

/// The run's expected answers, frozen with the workload (`docs/correctness.md`).
pub const EXPECTED_ANSWERS: &str = "expected_answers.jsonl";
/// One line per scored (or failed) profiling record that had an expected answer.
pub const CORRECTNESS_RECORDS: &str = "correctness.jsonl";
/// The run's accuracy, its Wilson interval and the counts.
pub const CORRECTNESS: &str = "correctness.json";

/// Every raw scrape of the server-metrics and GPU-telemetry targets (docs/telemetry.md).
pub const SCRAPES: &str = inferbench_telemetry::scrape::SCRAPES_FILE;
/// inferbench's analysis of the scrapes over the run's windows (exact, reset-aware).
pub const SERVER_METRICS: &str = "inferbench_server_metrics.json";
/// AIPerf's summary of the scrapes, in its file formats.
pub const AIPERF_SERVER_METRICS_JSON: &str = "server_metrics_export.json";
pub const AIPERF_SERVER_METRICS_CSV: &str = "server_metrics_export.csv";
/// AIPerf's per-scrape file (`--server-metrics-formats jsonl`).
pub const AIPERF_SERVER_METRICS_JSONL: &str = "server_metrics_export.jsonl";
/// AIPerf's GPU telemetry file.
pub const AIPERF_GPU_TELEMETRY: &str = "gpu_telemetry_export.jsonl";

/// AIPerf's `outputs.json` (`--export-outputs-json`): every profiling response's text.
pub const OUTPUTS_JSON: &str = inferbench_artifacts::outputs_json::OUTPUTS_JSON;
/// The per-URL and per-model breakdown of a run with several of either (docs/routing.md).
pub const BREAKDOWN: &str = "inferbench_breakdown.json";

/// Every side file, in the order the manifest lists them.
pub const SIDE_FILES: &[&str] = &[
    CLIENT_RESOURCES,
    EXPECTED_ANSWERS,
    CORRECTNESS_RECORDS,
    CORRECTNESS,
    SCRAPES,
    SERVER_METRICS,
    AIPERF_SERVER_METRICS_JSON,
    AIPERF_SERVER_METRICS_CSV,
    AIPERF_SERVER_METRICS_JSONL,
    AIPERF_GPU_TELEMETRY,
    OUTPUTS_JSON,
    BREAKDOWN,
];

/// The side files of one run directory: which were written (or found, offline).
#[derive(Clone, Debug, Default)]
pub struct SideFiles {
    present: Vec<&'static str>,
}

impl SideFiles {
    pub fn mark(&mut self, name: &'static str) {
        debug_assert!(SIDE_FILES.contains(&name), "{name} is not registered");
        if !self.present.contains(&name) {
            self.present.push(name);
        }
    }

    /// The side files already in `dir` (an offline rewrite keeps them as they are).
    pub fn found_in(dir: &std::path::Path) -> SideFiles {
        SideFiles {
            present: SIDE_FILES
                .iter()
                .copied()
                .filter(|n| dir.join(n).is_file())
                .collect(),
        }
    }

    /// The names present, in registry order.
    pub fn names(&self) -> Vec<String> {
        SIDE_FILES
            .iter()
            .filter(|n| self.present.contains(n))
            .map(|n| n.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_in_registry_order_once() {
        let mut s = SideFiles::default();
        s.mark(CLIENT_RESOURCES);
        s.mark(CLIENT_RESOURCES);
        assert_eq!(s.names(), vec![CLIENT_RESOURCES.to_string()]);
    }
}
