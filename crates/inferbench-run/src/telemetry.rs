//! Server metrics and GPU telemetry in a run: which targets a plan scrapes, and what the
//! record sink derives from the raw scrape file at the end of a run (live) or of a rewrite
//! (offline): inferbench's own analysis (`inferbench_server_metrics.json`), AIPerf's files,
//! the console rows and AIPerf's GPU keys of the summary (docs/telemetry.md).

use std::path::Path;
use std::time::Duration;

use inferbench_client::ConfiguredHeader;
use inferbench_client::scrape::ScrapeTarget;
use inferbench_core::plan::{RunPlan, Target};
use inferbench_core::summary::{MetricResult, MetricValue};
use inferbench_telemetry::scrape::{ScrapeLog, TargetKind, TargetOrigin};
use inferbench_telemetry::view::{ClientWork, Efficiency, GpuView, ServerView};
use inferbench_telemetry::window::{Analysis, Window, Windows};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Failure;
use crate::fold::Scores;
use crate::side_files;

/// AIPerf's default DCGM exporter endpoints, tried when `--gpu-telemetry` names none.
pub const AIPERF_DEFAULT_DCGM: [&str; 2] = [
    "http://localhost:9400/metrics",
    "http://localhost:9401/metrics",
];

pub const SERVER_METRICS_SCHEMA_VERSION: u32 = 1;

/// The targets a run scrapes: the base URL's `/metrics` (AIPerf's default) and
/// `--server-metrics` URLs; `--gpu-telemetry` URLs, else the simulated server's exporter or
/// AIPerf's DCGM defaults. `base_url` is where requests go (the simulated server's address).
pub fn targets(plan: &RunPlan, base_url: &str) -> Vec<ScrapeTarget> {
    let t = &plan.telemetry;
    let simulated = matches!(plan.target, Target::Simulated { .. });
    let server_every = secs(t.server_metrics_interval_s);
    let gpu_every = secs(t.gpu_telemetry_interval_s);
    let run_urls = plan.routing.urls_or(base_url);
    let run_credentials = run_credentials(plan);
    let mut out = Vec::new();
    let mut push = |kind, origin, url: String, interval| {
        if !out
            .iter()
            .any(|o: &ScrapeTarget| o.url == url && o.kind == kind)
        {
            let headers = target_headers(t, &url, &run_urls, &run_credentials);
            out.push(ScrapeTarget {
                kind,
                origin,
                url,
                interval,
                headers,
            });
        }
    };
    if !t.server_metrics_disabled {
        let origin = if simulated {
            TargetOrigin::Simulated
        } else {
            TargetOrigin::Default
        };
        // With several --url, each URL's base `/metrics` (docs/routing.md).
        for base in plan.routing.urls_or(base_url) {
            push(
                TargetKind::Server,
                origin,
                format!("{}/metrics", base.trim_end_matches('/')),
                server_every,
            );
        }
        for u in &t.server_metrics_urls {
            push(
                TargetKind::Server,
                TargetOrigin::Flag,
                u.clone(),
                server_every,
            );
        }
    }
    if !t.gpu_telemetry_disabled {
        if !t.gpu_telemetry_urls.is_empty() {
            for u in &t.gpu_telemetry_urls {
                push(TargetKind::Gpu, TargetOrigin::Flag, u.clone(), gpu_every);
            }
        } else if simulated {
            push(
                TargetKind::Gpu,
                TargetOrigin::Simulated,
                format!("{}/dcgm/metrics", base_url.trim_end_matches('/')),
                gpu_every,
            );
        } else {
            for u in AIPERF_DEFAULT_DCGM {
                push(
                    TargetKind::Gpu,
                    TargetOrigin::Default,
                    u.to_string(),
                    gpu_every,
                );
            }
        }
    }
    out
}

/// The run's credentials: the configured headers whose names are secret (the `--api-key`'s
/// `Authorization`, `--url` credentials as Basic, a `--header` such as `X-Api-Key`). The plan's
/// headers were checked when it was prepared, so an invalid one cannot be left here.
fn run_credentials(plan: &RunPlan) -> Vec<ConfiguredHeader> {
    inferbench_client::configured_headers(plan.api_key.as_ref(), &plan.headers)
        .unwrap_or_default()
        .into_iter()
        .filter(ConfiguredHeader::sensitive)
        .collect()
}

/// `scheme://host:port` of a URL, lower case, the port made explicit.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let scheme = scheme.to_ascii_lowercase();
    let authority = authority.to_ascii_lowercase();
    // `[::1]` has colons of its own: a port follows the last `]` or, without one, the `:`.
    let host_end = authority.rfind(']').map_or(0, |i| i + 1);
    let has_port = authority[host_end..]
        .rsplit_once(':')
        .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let explicit = if has_port {
        authority
    } else {
        let port = if scheme == "https" { 443 } else { 80 };
        format!("{authority}:{port}")
    };
    Some(format!("{scheme}://{explicit}"))
}

/// What a target's scrapes send: its own URL credentials (Basic), else the run's credentials
/// when it is on the origin of a URL the run sends requests to (the same server), else
/// nothing (an explicit other-origin target never sees the run's key).
fn target_headers(
    t: &inferbench_core::plan::TelemetryPlan,
    url: &str,
    run_urls: &[&str],
    run_credentials: &[ConfiguredHeader],
) -> Vec<ConfiguredHeader> {
    if let Some((_, auth)) = t.target_authorization.iter().find(|(u, _)| u == url) {
        return ConfiguredHeader::new("Authorization", auth.expose(), true)
            .map(|h| vec![h])
            .unwrap_or_default();
    }
    let o = origin(url);
    if o.is_some() && run_urls.iter().any(|r| origin(r) == o) {
        run_credentials.to_vec()
    } else {
        Vec::new()
    }
}

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::from_secs(1))
}

/// The client's own numbers over the profiling window, beside the server's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientBeside {
    pub output_tokens: Option<f64>,
    pub ttft_mean_ms: Option<f64>,
    pub itl_mean_ms: Option<f64>,
    pub latency_mean_ms: Option<f64>,
    /// Client TTFT mean − server TTFT mean: network, queueing before the server's clock
    /// starts, and the client's own overhead.
    pub ttft_minus_server_ms: Option<f64>,
    /// (client − server) / server output tokens over the window, percent.
    pub output_token_gap_pct: Option<f64>,
}

/// `inferbench_server_metrics.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerMetricsFile {
    pub schema_version: u32,
    pub windows: Windows,
    pub servers: Vec<ServerView>,
    pub gpus: Vec<GpuView>,
    pub efficiency: Option<Efficiency>,
    pub client: ClientBeside,
    /// Where AIPerf's arithmetic and the reset-correct numbers disagree.
    pub aiperf_differences: Vec<inferbench_telemetry::aiperf::Difference>,
    pub analysis: Analysis,
}

/// What [`derive`] made.
#[derive(Clone, Debug)]
pub struct Derived {
    pub file: ServerMetricsFile,
    /// Rows for the console, after the client's own.
    pub console: Vec<MetricResult>,
    /// Keys appended to AIPerf's summary JSON (`telemetry_data` and AIPerf's `nvidia_*`
    /// energy metrics).
    pub summary_extra: Vec<(String, Value)>,
    /// Side files written, in registry order.
    pub written: Vec<&'static str>,
}

/// Reads the raw scrape file of `dir`, when there is one, and writes what derives from it.
pub fn derive(
    dir: &Path,
    plan: &RunPlan,
    benchmark_id: &str,
    anchor_unix_ns: u64,
    scores: &Scores,
) -> Result<Option<Derived>, Failure> {
    let path = dir.join(side_files::SCRAPES);
    let Ok(f) = std::fs::File::open(&path) else {
        return Ok(None);
    };
    let log = inferbench_telemetry::scrape::read_scrapes(std::io::BufReader::new(f))
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let Some(windows) = windows_of(scores) else {
        return Ok(None);
    };
    Ok(Some(derive_from(
        dir,
        plan,
        benchmark_id,
        anchor_unix_ns,
        scores,
        &log,
        windows,
    )?))
}

fn windows_of(scores: &Scores) -> Option<Windows> {
    let w = |p: &inferbench_core::PhaseWindow| Window {
        start_ns: p.start_ns,
        end_ns: p.requests_end_ns.max(p.start_ns),
    };
    Some(Windows {
        profiling: w(scores.profiling_window.as_ref()?),
        warmup: scores.warmup_window.as_ref().map(w),
    })
}

fn derive_from(
    dir: &Path,
    plan: &RunPlan,
    benchmark_id: &str,
    anchor_unix_ns: u64,
    scores: &Scores,
    log: &ScrapeLog,
    windows: Windows,
) -> Result<Derived, Failure> {
    let analysis = inferbench_telemetry::window::analyze(log, &windows);
    let servers: Vec<ServerView> = analysis
        .targets
        .iter()
        .filter(|t| t.target.kind == TargetKind::Server)
        .filter_map(inferbench_telemetry::view::server_view)
        .collect();
    let gpus: Vec<GpuView> = analysis
        .targets
        .iter()
        .filter(|t| t.target.kind == TargetKind::Gpu)
        .filter_map(inferbench_telemetry::view::gpu_view)
        .collect();
    let p = &scores.profiling;
    let sum = |tag: &str| {
        p.get(tag)
            .and_then(|m| m.stats().and_then(|s| s.sum).or(m.scalar()))
    };
    let avg = |tag: &str| p.get(tag).and_then(|m| m.avg());
    let duration_s = (windows.profiling.end_ns - windows.profiling.start_ns) as f64 / 1e9;
    let server_tokens = servers.iter().find_map(|s| s.output_tokens);
    let client_tokens = sum("total_osl");
    let work = ClientWork {
        duration_s,
        output_tokens: client_tokens.unwrap_or(0.0),
        input_tokens: sum("total_isl").unwrap_or(0.0),
        requests: avg("request_count").unwrap_or(0.0),
        output_tokens_per_s: avg("output_token_throughput").unwrap_or(0.0),
        server_output_tokens: server_tokens,
    };
    let efficiency = inferbench_telemetry::view::efficiency(&gpus, &work);
    let server_ttft = servers.iter().find_map(|s| s.ttft.and_then(|h| h.mean_ms));
    let client = ClientBeside {
        output_tokens: client_tokens,
        ttft_mean_ms: avg("time_to_first_token"),
        itl_mean_ms: avg("inter_token_latency"),
        latency_mean_ms: avg("request_latency"),
        ttft_minus_server_ms: avg("time_to_first_token")
            .zip(server_ttft)
            .map(|(c, s)| c - s),
        output_token_gap_pct: client_tokens
            .zip(server_tokens)
            .filter(|(_, s)| *s > 0.0)
            .map(|(c, s)| 100.0 * (c - s) / s),
    };
    let input_config = inferbench_artifacts::input_config::aiperf_input_config(plan);
    let meta = inferbench_telemetry::aiperf::Meta {
        benchmark_id,
        anchor_unix_ns,
        input_config: &input_config,
        windows: &windows,
    };
    let mut written = vec![side_files::SCRAPES];
    let mut differences = Vec::new();
    if let Some(x) = inferbench_telemetry::aiperf::server_metrics_export(log, &analysis, &meta) {
        let formats = &plan.telemetry.server_metrics_formats;
        if formats.iter().any(|f| f == "json") {
            let text =
                serde_json::to_string_pretty(&x.json).map_err(|e| Failure::run(e.to_string()))?;
            write(dir, side_files::AIPERF_SERVER_METRICS_JSON, text.as_bytes())?;
            written.push(side_files::AIPERF_SERVER_METRICS_JSON);
        }
        if formats.iter().any(|f| f == "csv") {
            write(dir, side_files::AIPERF_SERVER_METRICS_CSV, x.csv.as_bytes())?;
            written.push(side_files::AIPERF_SERVER_METRICS_CSV);
        }
        differences = x.differences;
    }
    if plan
        .telemetry
        .server_metrics_formats
        .iter()
        .any(|f| f == "jsonl")
        && let Some(text) = inferbench_telemetry::aiperf::server_metrics_jsonl(log, &meta)
    {
        write(
            dir,
            side_files::AIPERF_SERVER_METRICS_JSONL,
            text.as_bytes(),
        )?;
        written.push(side_files::AIPERF_SERVER_METRICS_JSONL);
    }
    let mut summary_extra = Vec::new();
    if let Some(g) = inferbench_telemetry::aiperf::gpu_telemetry_export(log, &analysis, &meta) {
        write(dir, side_files::AIPERF_GPU_TELEMETRY, g.jsonl.as_bytes())?;
        written.push(side_files::AIPERF_GPU_TELEMETRY);
        // AIPerf 0.13 writes the GPU block under `telemetry_data` in its summary.
        summary_extra.push(("telemetry_data".to_string(), g.telemetry_results));
        let totals = inferbench_telemetry::aiperf::ClientTotals {
            total_osl: sum("total_osl"),
            total_isl: sum("total_isl"),
            request_count: avg("request_count"),
            concurrency: (plan.load.request_rate.is_none() && plan.load.user_centric.is_none())
                .then_some(plan.load.concurrency as u64),
            request_latency_ms: avg("request_latency"),
            request_throughput: avg("request_throughput"),
            output_token_throughput: avg("output_token_throughput"),
            goodput: avg("goodput"),
        };
        for m in inferbench_telemetry::aiperf::energy_efficiency(log, &meta, &totals) {
            summary_extra.push((m.tag, json!({"unit": m.unit, "avg": m.value})));
        }
    }
    let file = ServerMetricsFile {
        schema_version: SERVER_METRICS_SCHEMA_VERSION,
        windows,
        servers,
        gpus,
        efficiency,
        client,
        aiperf_differences: differences,
        analysis,
    };
    let text = serde_json::to_vec_pretty(&file).map_err(|e| Failure::run(e.to_string()))?;
    write(dir, side_files::SERVER_METRICS, &text)?;
    written.push(side_files::SERVER_METRICS);
    Ok(Derived {
        console: console_rows(&file),
        file,
        summary_extra,
        written,
    })
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Failure> {
    let mut f = inferbench_artifacts::AtomicFile::create(dir, name)?;
    f.write_all(bytes)?;
    f.commit()?;
    Ok(())
}

fn row(tag: &str, header: String, unit: &str, v: Option<f64>) -> Option<MetricResult> {
    let value = v.filter(|v| v.is_finite())?;
    Some(MetricResult {
        tag: tag.into(),
        header,
        unit: unit.into(),
        value: MetricValue::Scalar { value },
    })
}

/// The server's and the GPUs' numbers for the console, each row saying whose number it is
/// (server counters, server histogram estimates, DCGM), never mixed with the client's.
pub fn console_rows(f: &ServerMetricsFile) -> Vec<MetricResult> {
    let mut out = Vec::new();
    if let Some(s) = f.servers.first() {
        let who = s.server.as_str();
        let hist = |tag: &str, name: &str, h: Option<inferbench_telemetry::view::HistBrief>| {
            let h = h?;
            Some([
                row(
                    &format!("server_{tag}_mean"),
                    format!("Server {name} mean ({who})"),
                    "ms",
                    h.mean_ms,
                ),
                row(
                    &format!("server_{tag}_p99_estimate"),
                    format!("Server {name} p99 (histogram estimate)"),
                    "ms",
                    h.p99_estimate_ms,
                ),
            ])
        };
        out.extend(
            [
                row(
                    "server_output_token_throughput",
                    format!("Server Output Token Throughput ({who})"),
                    "tokens/sec",
                    s.output_tokens_per_s,
                ),
                row(
                    "server_prompt_token_throughput",
                    format!("Server Prompt Token Throughput ({who})"),
                    "tokens/sec",
                    s.prompt_tokens_per_s,
                ),
                row(
                    "server_running_requests",
                    "Server Running Requests (time-weighted)".into(),
                    "requests",
                    s.running.and_then(|g| g.time_weighted_mean),
                ),
                row(
                    "server_waiting_requests",
                    "Server Waiting Requests (time-weighted)".into(),
                    "requests",
                    s.waiting.and_then(|g| g.time_weighted_mean),
                ),
                row(
                    "server_waiting_requests_max",
                    "Server Waiting Requests (max)".into(),
                    "requests",
                    s.waiting.and_then(|g| g.max),
                ),
                row(
                    "server_kv_cache_usage",
                    "Server KV Cache Usage (time-weighted)".into(),
                    "%",
                    s.kv_usage
                        .and_then(|g| g.time_weighted_mean)
                        .map(|v| v * 100.0),
                ),
            ]
            .into_iter()
            .flatten(),
        );
        for (tag, name, h) in [
            ("ttft", "TTFT", s.ttft),
            ("itl", "ITL", s.itl),
            ("e2e", "Request Latency", s.e2e),
        ] {
            out.extend(hist(tag, name, h).into_iter().flatten().flatten());
        }
        if s.resets > 0 {
            out.extend(row(
                "server_counter_resets",
                "Server Counter Resets (see inferbench_server_metrics.json)".into(),
                "resets",
                Some(s.resets as f64),
            ));
        }
    }
    out.extend(row(
        "client_minus_server_ttft",
        "Client TTFT − Server TTFT (network + client)".into(),
        "ms",
        f.client.ttft_minus_server_ms,
    ));
    let power: Option<f64> = {
        let v: Vec<f64> = f
            .gpus
            .iter()
            .flat_map(|g| g.gpus.iter())
            .filter_map(|g| g.power_w.and_then(|p| p.time_weighted_mean))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    out.extend(row(
        "gpu_power",
        "GPU Power (all GPUs, time-weighted)".into(),
        "W",
        power,
    ));
    if let Some(e) = &f.efficiency {
        out.extend(row(
            "gpu_energy",
            "GPU Energy".into(),
            "J",
            Some(e.energy_j),
        ));
        out.extend(row(
            "energy_per_output_token",
            "Energy per Output Token".into(),
            "mJ/token",
            e.energy_per_output_token_mj,
        ));
    }
    if !f.aiperf_differences.is_empty() {
        out.extend(row(
            "aiperf_server_metric_differences",
            "AIPerf server-metric numbers that differ (counter resets)".into(),
            "metrics",
            Some(f.aiperf_differences.len() as f64),
        ));
    }
    out
}

/// Reads `inferbench_server_metrics.json` back.
pub fn read(dir: &Path) -> Result<Option<ServerMetricsFile>, Failure> {
    let path = dir.join(side_files::SERVER_METRICS);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_follow_aiperf_defaults_and_flags() {
        let mut plan = crate::test_plan::plan();
        plan.target = Target::Url {
            url: "http://h:8000".into(),
        };
        let t = targets(&plan, "http://h:8000");
        let urls: Vec<&str> = t.iter().map(|t| t.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "http://h:8000/metrics",
                "http://localhost:9400/metrics",
                "http://localhost:9401/metrics"
            ]
        );
        plan.telemetry.gpu_telemetry_disabled = true;
        plan.telemetry.server_metrics_urls =
            vec!["http://h:8000/metrics".into(), "http://x/m".into()];
        let t = targets(&plan, "http://h:8000");
        // The base URL's /metrics is not scraped twice.
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].origin, TargetOrigin::Flag);
        plan.telemetry.server_metrics_disabled = true;
        assert!(targets(&plan, "http://h:8000").is_empty());
    }

    #[test]
    fn the_simulated_server_brings_its_own_exporter() {
        let plan = crate::test_plan::plan();
        let t = targets(&plan, "http://127.0.0.1:5");
        assert_eq!(t[1].url, "http://127.0.0.1:5/dcgm/metrics");
        assert_eq!(t[1].origin, TargetOrigin::Simulated);
    }

    #[test]
    fn credentials_go_to_the_same_server_and_a_targets_own_only() {
        use inferbench_core::plan::{HeaderValue, Secret};
        let mut plan = crate::test_plan::plan();
        plan.target = Target::Url {
            url: "http://h:8000".into(),
        };
        plan.api_key = Some(Secret::new("KEY1"));
        plan.headers = vec![
            ("X-Plain".into(), HeaderValue::for_header("X-Plain", "v")),
            (
                "X-Api-Token".into(),
                HeaderValue::for_header("X-Api-Token", "TOK2"),
            ),
        ];
        plan.telemetry.gpu_telemetry_disabled = true;
        plan.telemetry.server_metrics_urls = vec![
            "http://other:9/metrics".into(),
            "http://own:7/metrics".into(),
            // The run's origin, port 80 written out or not.
            "http://H:8000/extra".into(),
        ];
        // base64("bob:pw") = Ym9iOnB3
        plan.telemetry.target_authorization =
            vec![("http://own:7/metrics".into(), Secret::new("Basic Ym9iOnB3"))];
        let t = targets(&plan, "http://h:8000");
        let sent = |url: &str| -> Vec<(String, String)> {
            t.iter()
                .find(|t| t.url == url)
                .unwrap_or_else(|| panic!("{url}"))
                .headers
                .iter()
                .map(|h| (h.name().to_string(), h.value().to_string()))
                .collect()
        };
        let run = vec![
            ("Authorization".to_string(), "Bearer KEY1".to_string()),
            ("X-Api-Token".to_string(), "TOK2".to_string()),
        ];
        assert_eq!(sent("http://h:8000/metrics"), run);
        assert_eq!(sent("http://H:8000/extra"), run);
        assert!(sent("http://other:9/metrics").is_empty());
        assert_eq!(
            sent("http://own:7/metrics"),
            [("Authorization".to_string(), "Basic Ym9iOnB3".to_string())]
        );
        // Nothing of it in Debug (the scraper's targets may be printed when debugging).
        let debug = format!("{t:?}");
        assert!(!debug.contains("KEY1") && !debug.contains("TOK2") && !debug.contains("Ym9i"));
    }

    #[test]
    fn origins_make_the_default_port_explicit() {
        assert_eq!(origin("http://H:80/x").as_deref(), Some("http://h:80"));
        assert_eq!(origin("http://h/x"), origin("http://h:80"));
        assert_eq!(origin("https://h/x").as_deref(), Some("https://h:443"));
        assert_eq!(
            origin("http://[::1]:9/m").as_deref(),
            Some("http://[::1]:9")
        );
        assert_eq!(origin("http://[::1]/m").as_deref(), Some("http://[::1]:80"));
        assert_ne!(origin("http://h:8000"), origin("http://h:8001"));
    }
}
