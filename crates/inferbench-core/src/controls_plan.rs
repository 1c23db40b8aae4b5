//! Server controls and extra exports AIPerf users rely on: `--wait-for-model-timeout` (with its
//! mode and interval), `--reset-kv-cache`, `--session-header`, `--export-outputs-json`
//! (docs/controls.md).

use serde::{Deserialize, Serialize};

/// How the readiness wait probes the server (`--wait-for-model-mode`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum WaitMode {
    /// `GET /v1/models` lists the model (a 404 there falls back to any 2xx on the base URL).
    Models,
    /// A canned one-token request of the run's endpoint type answers 2xx (AIPerf's default).
    #[default]
    Inference,
    /// `models`, then `inference`.
    Both,
}

impl WaitMode {
    pub fn as_str(self) -> &'static str {
        match self {
            WaitMode::Models => "models",
            WaitMode::Inference => "inference",
            WaitMode::Both => "both",
        }
    }

    pub fn parse(s: &str) -> Option<WaitMode> {
        [WaitMode::Models, WaitMode::Inference, WaitMode::Both]
            .into_iter()
            .find(|m| m.as_str() == s)
    }
}

/// `--reset-kv-cache`: one `POST {origin}{path}` before each run of a sweep cell.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ResetKvCachePlan {
    /// Relative path (starts with `/`), vLLM's `/reset_prefix_cache` by default.
    pub path: String,
    /// Per-attempt timeout (`--reset-kv-cache-timeout-seconds`, 30 s when unset, as AIPerf).
    pub timeout_s: f64,
}

/// `--server-profiler`: `POST {origin}{start_path}` before the profiling phase and
/// `POST {origin}{stop_path}` after it, at every unique origin of the URLs (AIPerf's control
/// hook; vLLM's and SGLang's torch-profiler routes).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ServerProfilerPlan {
    /// Relative path, `/start_profile` by default.
    pub start_path: String,
    /// Relative path, `/stop_profile` by default.
    pub stop_path: String,
    /// Per-request timeout (`--server-profiler-timeout-seconds`, 30 s when unset, as AIPerf).
    pub timeout_s: f64,
}

/// AIPerf's default profiler routes and timeout.
pub const DEFAULT_PROFILER_START_PATH: &str = "/start_profile";
pub const DEFAULT_PROFILER_STOP_PATH: &str = "/stop_profile";
pub const DEFAULT_PROFILER_TIMEOUT_S: f64 = 30.0;

/// What the server profiler's control requests did, as the manifest records it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ServerProfilerRecord {
    /// One line per control request: `POST URL: STATUS` or `POST URL: ERROR`, in order.
    pub requests: Vec<String>,
    /// Every start answered 2xx (the profiling phase ran under the profiler).
    pub started: bool,
    /// Every stop answered 2xx.
    pub stopped: bool,
}

/// AIPerf's default reset path (vLLM's route).
pub const DEFAULT_RESET_PATH: &str = "/reset_prefix_cache";
/// AIPerf's per-attempt timeout when `--reset-kv-cache-timeout-seconds` is not given.
pub const DEFAULT_RESET_TIMEOUT_S: f64 = 30.0;
/// AIPerf's retry budget for a transient reset failure.
pub const RESET_RETRY_BUDGET_S: f64 = 60.0;
/// AIPerf's default `--wait-for-model-interval`.
pub const DEFAULT_WAIT_INTERVAL_S: f64 = 5.0;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ControlsPlan {
    /// `--wait-for-model-timeout`: seconds to wait for readiness before the run; 0 skips.
    #[serde(default)]
    pub wait_for_model_timeout_s: f64,
    #[serde(default)]
    pub wait_for_model_mode: WaitMode,
    #[serde(default = "default_interval")]
    pub wait_for_model_interval_s: f64,
    /// `--reset-kv-cache` (or one of its path/timeout flags, which enable it as in AIPerf).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_kv_cache: Option<ResetKvCachePlan>,
    /// `--session-header NAME`: the per-session id goes out under NAME instead of
    /// `X-Correlation-ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_header: Option<String>,
    /// `--server-profiler` (or one of its path/timeout flags, which enable it as in AIPerf).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_profiler: Option<ServerProfilerPlan>,
    /// `--export-outputs-json`: write AIPerf's `outputs.json` with each response's text.
    #[serde(default)]
    pub export_outputs_json: bool,
}

fn default_interval() -> f64 {
    DEFAULT_WAIT_INTERVAL_S
}

impl Default for ControlsPlan {
    fn default() -> Self {
        ControlsPlan {
            wait_for_model_timeout_s: 0.0,
            wait_for_model_mode: WaitMode::Inference,
            wait_for_model_interval_s: DEFAULT_WAIT_INTERVAL_S,
            reset_kv_cache: None,
            session_header: None,
            server_profiler: None,
            export_outputs_json: false,
        }
    }
}

/// What the reset before a run did, as the manifest records it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct KvCacheReset {
    /// The URL posted to.
    pub url: String,
    /// The last answer's HTTP status (None: no answer, only transport errors).
    pub status: Option<u16>,
    /// Attempts made (transient failures are retried, as AIPerf does).
    pub attempts: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_old_plan_without_controls_reads_as_the_defaults() {
        let p: ControlsPlan = serde_json::from_str("{}").unwrap();
        assert_eq!(p, ControlsPlan::default());
        assert_eq!(p.wait_for_model_interval_s, 5.0);
        assert_eq!(p.wait_for_model_mode, WaitMode::Inference);
    }

    #[test]
    fn modes_parse_by_name() {
        assert_eq!(WaitMode::parse("both"), Some(WaitMode::Both));
        assert_eq!(WaitMode::parse("model"), None);
    }
}
