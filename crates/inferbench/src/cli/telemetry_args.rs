//! `profile` flags of server metrics, GPU telemetry, the client's worker threads and the
//! simulated server's capacity and faults (docs/telemetry.md), and their checks.

use clap::{ArgAction, Args};
use inferbench_core::plan::{Secret, SimServing, TelemetryPlan};

#[derive(Args, Debug, Clone, Default)]
pub struct TelemetryArgs {
    // ---- Server metrics (AIPerf §1.12)
    /// More Prometheus endpoints to scrape during the run, besides the base URL's /metrics
    /// (on by default): a full URL, or host:port (then /metrics); several after the flag or
    /// a comma list, as AIPerf takes them.
    #[arg(long = "server-metrics", value_name = "URL", num_args = 1.., action = ArgAction::Append, value_delimiter = ',')]
    pub server_metrics: Vec<String>,
    /// Scrape no server metrics at all.
    #[arg(long = "no-server-metrics")]
    pub no_server_metrics: bool,
    /// AIPerf's export files of the scrapes: json, csv (the default: both) and jsonl (one
    /// line per scrape). parquet is refused by name.
    #[arg(long = "server-metrics-formats", value_name = "FORMAT", num_args = 1.., value_delimiter = ',', action = ArgAction::Append)]
    pub server_metrics_formats: Vec<String>,
    /// Seconds between scrapes of each server-metrics target (default 1; AIPerf's variable
    /// AIPERF_SERVER_METRICS_COLLECTION_INTERVAL sets it too).
    #[arg(
        long = "server-metrics-interval",
        value_name = "SECONDS",
        env = "AIPERF_SERVER_METRICS_COLLECTION_INTERVAL"
    )]
    pub server_metrics_interval: Option<f64>,

    // ---- GPU telemetry (AIPerf §1.12)
    /// DCGM exporter endpoints to scrape (full URL, or host:port). Without this flag,
    /// AIPerf's defaults are tried (localhost:9400 and :9401) and dropped quietly when they
    /// do not answer; with the simulated server, its own exporter is scraped. `pynvml`,
    /// `amdsmi` and `dashboard` are refused: they need a local GPU library (docs/telemetry.md).
    #[arg(long = "gpu-telemetry", value_name = "URL", num_args = 0.., action = ArgAction::Append, value_delimiter = ',')]
    pub gpu_telemetry: Option<Vec<String>>,
    /// Scrape no GPU telemetry.
    #[arg(long = "no-gpu-telemetry")]
    pub no_gpu_telemetry: bool,
    /// Seconds between scrapes of each GPU-telemetry target (default 1; AIPerf's variable
    /// AIPERF_GPU_COLLECTION_INTERVAL sets it too).
    #[arg(
        long = "gpu-telemetry-interval",
        value_name = "SECONDS",
        env = "AIPERF_GPU_COLLECTION_INTERVAL"
    )]
    pub gpu_telemetry_interval: Option<f64>,

    // ---- Client (AIPerf §1.13)
    /// The client's worker threads (AIPerf's worker processes; default 1: one thread drives
    /// every connection, docs/timing.md).
    #[arg(long = "workers-max", visible_alias = "max-workers", value_name = "N")]
    pub workers_max: Option<usize>,

    // ---- The built-in simulated server's capacity and faults (inferbench only)
    /// Requests the simulated server runs at once; later ones wait in its queue (default:
    /// no limit; only without --url).
    #[arg(long = "sim-max-running", value_name = "N")]
    pub sim_max_running: Option<u32>,
    /// Output tokens per second the simulated server's whole running batch shares (default:
    /// no limit, each stream at --sim-itl-ms; only without --url).
    #[arg(long = "sim-decode-tokens-per-s", value_name = "TOKENS")]
    pub sim_decode_tokens_per_s: Option<f64>,
    /// Prefill cost of the simulated server per input token, µs, added to the first token
    /// (default 0; only without --url).
    #[arg(long = "sim-prefill-us-per-token", value_name = "US")]
    pub sim_prefill_us_per_token: Option<f64>,
    /// The simulated server's counters restart from zero this many seconds after it emitted
    /// its first token, as after a process restart (a fault for testing reset handling).
    #[arg(long = "sim-metrics-reset-after", value_name = "SECONDS")]
    pub sim_metrics_reset_after: Option<f64>,
    /// GPUs behind the simulated server's DCGM exporter endpoint (default 1).
    #[arg(long = "sim-gpus", value_name = "N")]
    pub sim_gpus: Option<u32>,
    /// Let the simulated server gather ready SSE events into one socket write (default:
    /// each event is its own write, as vLLM and llama.cpp flush every token; only without
    /// --url).
    #[arg(long = "sim-coalesce")]
    pub sim_coalesce: bool,
}

/// The TLS-free URL forms a target may be given in: a full `http://` URL, or `host:port`;
/// as AIPerf 0.13 normalizes them, trailing `/` removed and `/metrics` appended unless the
/// path already ends with it (`http://h:9400/x` is `http://h:9400/x/metrics`). Credentials in
/// it (`user:pw@`) are removed here, so that the plan never holds them: metrics targets are
/// scraped without authentication.
pub fn target_url(flag: &str, given: &str) -> Result<String, String> {
    // With or without a scheme (`bob:pw@node1:9400` too).
    let stripped = super::values::without_url_credentials(given.trim());
    let g = stripped.as_str();
    if g.is_empty() {
        return Err(format!("{flag}: an empty URL"));
    }
    let full = if g.contains("://") {
        g.to_string()
    } else {
        format!("http://{g}")
    };
    let rest = full.strip_prefix("http://").ok_or_else(|| {
        format!("{flag} {g}: only http:// targets are supported (HTTPS is not built yet)")
    })?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("{flag} {g}: no host"));
    }
    let uri: http::Uri = full
        .parse()
        .map_err(|e| format!("{flag} {g}: not a valid URL: {e}"))?;
    super::values::port_is_a_port(&uri).map_err(|e| format!("{flag} {g}: {e}"))?;
    let full = full.trim_end_matches('/');
    Ok(if full.ends_with("/metrics") {
        full.to_string()
    } else {
        format!("{full}/metrics")
    })
}

fn interval(flag: &str, v: Option<f64>) -> Result<f64, String> {
    let v = v.unwrap_or(1.0);
    if !(v.is_finite() && (0.01..=3600.0).contains(&v)) {
        return Err(format!("{flag} {v}: seconds between 0.01 and 3600"));
    }
    Ok(v)
}

pub fn telemetry_plan(a: &TelemetryArgs) -> Result<TelemetryPlan, String> {
    if a.no_server_metrics && !a.server_metrics.is_empty() {
        return Err("--server-metrics and --no-server-metrics: give one".into());
    }
    if a.no_gpu_telemetry && a.gpu_telemetry.is_some() {
        return Err("--gpu-telemetry and --no-gpu-telemetry: give one".into());
    }
    let mut formats = Vec::new();
    for f in &a.server_metrics_formats {
        let f = f.trim().to_ascii_lowercase();
        match f.as_str() {
            "json" | "csv" | "jsonl" => {
                if !formats.contains(&f) {
                    formats.push(f)
                }
            }
            "parquet" => {
                return Err(
                    "--server-metrics-formats parquet: not built in inferbench (no Parquet writer; json, csv and jsonl are, and every raw scrape is kept in inferbench_scrapes.jsonl)".into(),
                );
            }
            _ => return Err(format!("--server-metrics-formats {f}: json, csv or jsonl")),
        }
    }
    if formats.is_empty() {
        formats = TelemetryPlan::default().server_metrics_formats;
    }
    let mut gpu = Vec::new();
    for u in a.gpu_telemetry.iter().flatten() {
        match u.trim() {
            m @ ("pynvml" | "amdsmi" | "dashboard") => {
                return Err(format!(
                    "--gpu-telemetry {m}: not built in inferbench (it reads a local GPU library; give the DCGM exporter's URL instead, docs/telemetry.md)"
                ));
            }
            u if u.ends_with(".csv") => {
                return Err(format!(
                    "--gpu-telemetry {u}: custom metric CSV files are not built in inferbench"
                ));
            }
            u => gpu.push(target_url("--gpu-telemetry", u)?),
        }
    }
    // A target's own `user:password@` becomes Basic auth on its scrapes (as for --url).
    let mut target_authorization = Vec::new();
    for (flag, given) in a
        .server_metrics
        .iter()
        .map(|u| ("--server-metrics", u))
        .chain(
            a.gpu_telemetry
                .iter()
                .flatten()
                .map(|u| ("--gpu-telemetry", u)),
        )
    {
        if let (_, Some(auth)) = super::values::split_url_credentials(given.trim()) {
            target_authorization.push((target_url(flag, given)?, Secret::new(auth)));
        }
    }
    Ok(TelemetryPlan {
        server_metrics_disabled: a.no_server_metrics,
        server_metrics_urls: a
            .server_metrics
            .iter()
            .map(|u| target_url("--server-metrics", u))
            .collect::<Result<_, _>>()?,
        server_metrics_formats: formats,
        server_metrics_interval_s: interval(
            "--server-metrics-interval",
            a.server_metrics_interval,
        )?,
        gpu_telemetry_disabled: a.no_gpu_telemetry,
        gpu_telemetry_urls: gpu,
        gpu_telemetry_interval_s: interval("--gpu-telemetry-interval", a.gpu_telemetry_interval)?,
        target_authorization,
    })
}

pub fn workers_max(a: &TelemetryArgs) -> Result<Option<usize>, String> {
    match a.workers_max {
        Some(0) => Err("--workers-max 0: at least 1".into()),
        Some(n) if n > 1024 => Err(format!("--workers-max {n}: at most 1024")),
        w => Ok(w),
    }
}

/// The simulated server's serving options; `simulated` is false with --url, where any of
/// them is an error (they would silently do nothing).
pub fn sim_serving(a: &TelemetryArgs, simulated: bool) -> Result<SimServing, String> {
    let s = SimServing {
        max_running: a.sim_max_running,
        decode_tokens_per_s: a.sim_decode_tokens_per_s,
        prefill_us_per_token: a.sim_prefill_us_per_token,
        metrics_reset_after_s: a.sim_metrics_reset_after,
        gpus: a.sim_gpus,
        faults: Vec::new(),
        coalesce: a.sim_coalesce,
    };
    if !simulated {
        if !s.is_default() {
            return Err(
                "--sim-* flags configure the built-in simulated server: not with --url".into(),
            );
        }
        return Ok(s);
    }
    if s.max_running == Some(0) {
        return Err("--sim-max-running 0: at least 1".into());
    }
    if let Some(r) = s.decode_tokens_per_s
        && !(r.is_finite() && r > 0.0)
    {
        return Err(format!("--sim-decode-tokens-per-s {r}: a positive number"));
    }
    if let Some(p) = s.prefill_us_per_token
        && !(p.is_finite() && p >= 0.0)
    {
        return Err(format!("--sim-prefill-us-per-token {p}: zero or more"));
    }
    if let Some(t) = s.metrics_reset_after_s
        && !(t.is_finite() && t > 0.0)
    {
        return Err(format!("--sim-metrics-reset-after {t}: positive seconds"));
    }
    if let Some(g) = s.gpus
        && !(1..=64).contains(&g)
    {
        return Err(format!("--sim-gpus {g}: between 1 and 64"));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_urls_take_aiperf_forms() {
        assert_eq!(
            target_url("--gpu-telemetry", "node1:9400").unwrap(),
            "http://node1:9400/metrics"
        );
        assert_eq!(
            target_url("--server-metrics", "http://h:8002/metrics").unwrap(),
            "http://h:8002/metrics"
        );
        assert!(
            target_url("--server-metrics", "https://h/metrics")
                .unwrap_err()
                .contains("only http://")
        );
        // AIPerf's normalization: /metrics appended to any other path, trailing / removed.
        assert_eq!(
            target_url("--server-metrics", "http://h:9400/prometheus").unwrap(),
            "http://h:9400/prometheus/metrics"
        );
        assert_eq!(
            target_url("--server-metrics", "http://h:9400/metrics/").unwrap(),
            "http://h:9400/metrics"
        );
        assert_eq!(
            target_url("--gpu-telemetry", "h:9400/").unwrap(),
            "http://h:9400/metrics"
        );
        assert_eq!(
            target_url("--gpu-telemetry", "node1:99999"),
            Err("--gpu-telemetry node1:99999: port 99999 is not a port number (1 to 65535)".into())
        );
        assert_eq!(
            target_url("--server-metrics", "http://h:0/metrics"),
            Err(
                "--server-metrics http://h:0/metrics: port 0 is not a port number (1 to 65535)"
                    .into()
            )
        );
        assert!(
            target_url("--server-metrics", "h:8002 x")
                .unwrap_err()
                .starts_with("--server-metrics h:8002 x: not a valid URL")
        );
    }

    #[test]
    fn credentials_are_removed_from_a_target() {
        assert_eq!(
            target_url("--server-metrics", "http://bob:pw@h:9/metrics").unwrap(),
            "http://h:9/metrics"
        );
    }

    #[test]
    fn local_gpu_libraries_are_refused_by_name() {
        let a = TelemetryArgs {
            gpu_telemetry: Some(vec!["pynvml".into()]),
            ..Default::default()
        };
        assert!(
            telemetry_plan(&a)
                .unwrap_err()
                .contains("--gpu-telemetry pynvml")
        );
    }

    #[test]
    fn server_metrics_formats_take_jsonl_and_refuse_parquet_naming_why() {
        let with = |f: &[&str]| TelemetryArgs {
            server_metrics_formats: f.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        assert_eq!(
            telemetry_plan(&with(&["json", "JSONL", "jsonl"]))
                .unwrap()
                .server_metrics_formats,
            vec!["json", "jsonl"]
        );
        assert_eq!(
            telemetry_plan(&with(&[])).unwrap().server_metrics_formats,
            vec!["json", "csv"]
        );
        let e = telemetry_plan(&with(&["parquet"])).unwrap_err();
        assert!(
            e.starts_with("--server-metrics-formats parquet: not built")
                && e.contains("no Parquet writer"),
            "{e}"
        );
        assert_eq!(
            telemetry_plan(&with(&["xml"])).unwrap_err(),
            "--server-metrics-formats xml: json, csv or jsonl"
        );
    }

    #[test]
    fn sim_flags_with_a_url_are_an_error() {
        let a = TelemetryArgs {
            sim_max_running: Some(4),
            ..Default::default()
        };
        assert!(
            sim_serving(&a, false)
                .unwrap_err()
                .contains("not with --url")
        );
        assert_eq!(sim_serving(&a, true).unwrap().max_running, Some(4));
    }
}
