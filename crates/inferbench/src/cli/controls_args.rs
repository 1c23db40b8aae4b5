//! `profile` flags: Server controls and extra exports (docs/controls.md), and their checks.

use clap::Args;
use inferbench_core::controls_plan::{
    ControlsPlan, DEFAULT_RESET_PATH, DEFAULT_RESET_TIMEOUT_S, DEFAULT_WAIT_INTERVAL_S,
    ResetKvCachePlan, WaitMode,
};

#[derive(Args, Debug, Clone, Default)]
pub struct ControlsArgs {
    /// Seconds to wait for the server to be ready before the run (0 = do not wait).
    #[arg(long = "wait-for-model-timeout", default_value_t = 0.0)]
    pub wait_for_model_timeout: f64,
    /// How readiness is probed: `models` (GET /v1/models lists the model), `inference` (a
    /// one-token request answers 2xx), `both` (models, then inference).
    #[arg(long = "wait-for-model-mode", value_parser = super::values::named(["models", "inference", "both"]), ignore_case = true, default_value = "inference")]
    pub wait_for_model_mode: String,
    /// Seconds between readiness probes.
    #[arg(long = "wait-for-model-interval", default_value_t = DEFAULT_WAIT_INTERVAL_S)]
    pub wait_for_model_interval: f64,
    /// POST the server's KV-cache reset route once before each run of a sweep cell.
    #[arg(long = "reset-kv-cache")]
    pub reset_kv_cache: bool,
    /// Timeout of one reset attempt (default 30). Enables `--reset-kv-cache`.
    #[arg(long = "reset-kv-cache-timeout-seconds")]
    pub reset_kv_cache_timeout_seconds: Option<f64>,
    /// The reset route, relative to the URL's origin (default `/reset_prefix_cache`).
    /// Enables `--reset-kv-cache`.
    #[arg(long = "reset-kv-cache-path")]
    pub reset_kv_cache_path: Option<String>,
    /// Send the per-session id under this header instead of `X-Correlation-ID`.
    #[arg(long = "session-header")]
    pub session_header: Option<String>,
    /// Write `outputs.json`: every profiling response's text (AIPerf's format).
    #[arg(long = "export-outputs-json")]
    pub export_outputs_json: bool,
}

/// The plan these flags give (every value checked; an error names the flag).
pub fn controls_plan(a: &ControlsArgs) -> Result<ControlsPlan, String> {
    let t = a.wait_for_model_timeout;
    if !t.is_finite() || t < 0.0 {
        return Err(format!("--wait-for-model-timeout {t}: must be 0 or more"));
    }
    let i = a.wait_for_model_interval;
    if !i.is_finite() || i <= 0.0 {
        return Err(format!(
            "--wait-for-model-interval {i}: must be more than 0"
        ));
    }
    let mode = WaitMode::parse(&a.wait_for_model_mode).ok_or_else(|| {
        format!(
            "--wait-for-model-mode {}: must be models, inference or both",
            a.wait_for_model_mode
        )
    })?;
    // As in AIPerf, a path or timeout override enables the reset.
    let reset = if a.reset_kv_cache
        || a.reset_kv_cache_path.is_some()
        || a.reset_kv_cache_timeout_seconds.is_some()
    {
        let timeout_s = a
            .reset_kv_cache_timeout_seconds
            .unwrap_or(DEFAULT_RESET_TIMEOUT_S);
        if !timeout_s.is_finite() || timeout_s <= 0.0 {
            return Err(format!(
                "--reset-kv-cache-timeout-seconds {timeout_s}: must be more than 0"
            ));
        }
        let path = a
            .reset_kv_cache_path
            .clone()
            .unwrap_or_else(|| DEFAULT_RESET_PATH.to_string());
        if !path.starts_with('/') || path.contains("://") {
            return Err(format!(
                "--reset-kv-cache-path {path:?}: must be a path relative to the URL's origin, starting with /"
            ));
        }
        Some(ResetKvCachePlan { path, timeout_s })
    } else {
        None
    };
    let session_header = match &a.session_header {
        None => None,
        Some(n) => {
            if n.is_empty() || http::HeaderName::from_bytes(n.as_bytes()).is_err() {
                return Err(format!("--session-header {n:?}: not a valid header name"));
            }
            Some(n.clone())
        }
    };
    Ok(ControlsPlan {
        wait_for_model_timeout_s: t,
        wait_for_model_mode: mode,
        wait_for_model_interval_s: i,
        reset_kv_cache: reset,
        session_header,
        server_profiler: None,
        export_outputs_json: a.export_outputs_json,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> ControlsArgs {
        ControlsArgs {
            wait_for_model_mode: "inference".into(),
            wait_for_model_interval: 5.0,
            ..Default::default()
        }
    }

    #[test]
    fn a_path_alone_enables_the_reset_with_the_default_timeout() {
        let mut a = args();
        a.reset_kv_cache_path = Some("/flush_cache".into());
        let p = controls_plan(&a).unwrap();
        let r = p.reset_kv_cache.unwrap();
        assert_eq!(r.path, "/flush_cache");
        assert_eq!(r.timeout_s, 30.0);
    }

    #[test]
    fn bad_values_name_their_flag() {
        let mut a = args();
        a.reset_kv_cache_path = Some("http://x/reset".into());
        assert!(
            controls_plan(&a)
                .unwrap_err()
                .starts_with("--reset-kv-cache-path")
        );
        let mut a = args();
        a.wait_for_model_interval = 0.0;
        assert!(
            controls_plan(&a)
                .unwrap_err()
                .starts_with("--wait-for-model-interval")
        );
        let mut a = args();
        a.session_header = Some("bad header".into());
        assert!(
            controls_plan(&a)
                .unwrap_err()
                .starts_with("--session-header")
        );
    }
}
