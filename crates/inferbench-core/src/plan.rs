//! The validated, serializable run plan. The binary turns raw flags into this; the manifest
//! records it (with secrets redacted); the engine runs it.

use serde::{Deserialize, Serialize};

/// A secret value (API key, sensitive header). It serializes as [`REDACTED`], so it can never
/// reach an artifact or a log through serde, and its `Debug` hides it too.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

pub const REDACTED: &str = "<redacted>";

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }
    /// The real value, for the one place that needs it: building the HTTP request.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(REDACTED)
    }
}

impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(REDACTED)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Secret(String::deserialize(d)?))
    }
}

/// The parts of a header name that make its value a secret (docs/secrets.md): a name that
/// contains any of them, in any case, is sensitive. Broad on purpose: a plain header taken for
/// a secret costs a `<redacted>` in a file; a secret taken for a plain header leaks it.
pub const SENSITIVE_HEADER_PARTS: [&str; 14] = [
    "authorization",
    "auth",
    "token",
    "secret",
    "key",
    "password",
    "passwd",
    "credential",
    "cookie",
    "session",
    "signature",
    "private",
    "bearer",
    "jwt",
];

/// Header names whose values are treated as secrets: those containing any of
/// [`SENSITIVE_HEADER_PARTS`] (`Authorization`, `X-Api-Key`, `Set-Cookie`, `X-Auth-User`,
/// `Password`, `Aws-Signature`, …).
pub fn is_sensitive_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    SENSITIVE_HEADER_PARTS.iter().any(|p| n.contains(p))
}

pub use crate::endpoint_type::EndpointType;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TokenizerSpec {
    /// The embedded tiktoken `o200k_base` vocabulary.
    Builtin,
    /// A Hugging Face `tokenizer.json`, or a directory holding one.
    HuggingFace { path: String },
}

impl TokenizerSpec {
    /// The value of a `--tokenizer` flag: absent or `builtin` is the embedded vocabulary,
    /// anything else a path to a `tokenizer.json` (or a directory holding one).
    pub fn from_flag(flag: Option<&str>) -> TokenizerSpec {
        match flag {
            None | Some("builtin") => TokenizerSpec::Builtin,
            Some(path) => TokenizerSpec::HuggingFace {
                path: path.to_string(),
            },
        }
    }
}

/// AIPerf's run directory name, `<model>-openai-<endpoint>-<load>`: `load` is the stimulus
/// (`concurrency4`, `request_rate10.0`) or `sweep` for a sweep's root. Path separators and
/// `:` in the model name become `_`, so a model such as `org/name:tag` stays one component.
pub fn artifact_dir_name(model: &str, endpoint: EndpointType, load: &str) -> String {
    format!(
        "{}-openai-{}-{load}",
        model.replace(['/', '\\', ':'], "_"),
        endpoint.as_str()
    )
}

/// A normal distribution of token counts (AIPerf's `sample_positive_normal_integer`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct LengthDist {
    pub mean: f64,
    pub stddev: f64,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ExportLevel {
    Summary,
    Records,
    Raw,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum UiKind {
    Dashboard,
    Simple,
    None,
}

/// Where the server is: a URL given by the user, or the built-in simulated server.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    Url {
        url: String,
    },
    /// Started in-process on 127.0.0.1, port 0. The URL is filled in once it listens.
    Simulated {
        ttft_ms: f64,
        itl_ms: f64,
        /// Percent of requests the simulated server fails with HTTP 500 (`--sim-error-rate`).
        #[serde(default, skip_serializing_if = "is_zero")]
        error_rate: f64,
        /// Fraction of answered questions the simulated server gets right, when the workload
        /// carries expected answers (`--sim-answer-accuracy`); None: it answers with filler.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer_accuracy: Option<f64>,
        /// Capacity, faults and exporters of the simulated server (`--sim-max-running`, …).
        #[serde(default, skip_serializing_if = "SimServing::is_default")]
        serving: SimServing,
    },
}

/// How the simulated server serves beyond its pacing: a batched scheduler with a real
/// capacity, a counter-reset fault, and its simulated GPUs (docs/telemetry.md).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct SimServing {
    /// `--sim-max-running`: requests in the running batch at most; later ones wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_running: Option<u32>,
    /// `--sim-decode-tokens-per-s`: output tokens per second the whole batch shares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_tokens_per_s: Option<f64>,
    /// `--sim-prefill-us-per-token`: prefill cost per input token, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_us_per_token: Option<f64>,
    /// `--sim-metrics-reset-after`: the server's counters restart from zero this many
    /// seconds after its first token, as after a process restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_reset_after_s: Option<f64>,
    /// `--sim-gpus`: simulated GPUs behind its DCGM exporter endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    /// `--sim-fault KIND=PERCENT`, in order (docs/faults.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    /// `--sim-coalesce`: let the server gather ready SSE events into one socket write
    /// (default: each event is a write of its own).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub coalesce: bool,
}

impl SimServing {
    pub fn is_default(&self) -> bool {
        *self == SimServing::default()
    }
}

/// Server metrics and GPU telemetry during the run (docs/telemetry.md).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TelemetryPlan {
    /// `--no-server-metrics`.
    #[serde(default)]
    pub server_metrics_disabled: bool,
    /// `--server-metrics URL...`: scraped besides the base URL's `/metrics`.
    #[serde(default)]
    pub server_metrics_urls: Vec<String>,
    /// `--server-metrics-formats`: AIPerf's export files to write (json, csv, jsonl).
    #[serde(default = "default_server_metrics_formats")]
    pub server_metrics_formats: Vec<String>,
    /// `--server-metrics-interval`, seconds.
    #[serde(default = "default_scrape_interval")]
    pub server_metrics_interval_s: f64,
    /// `--no-gpu-telemetry`.
    #[serde(default)]
    pub gpu_telemetry_disabled: bool,
    /// `--gpu-telemetry URL...`; empty: AIPerf's defaults (DCGM on localhost:9400 and
    /// :9401), dropped quietly when they do not answer.
    #[serde(default)]
    pub gpu_telemetry_urls: Vec<String>,
    /// `--gpu-telemetry-interval`, seconds.
    #[serde(default = "default_scrape_interval")]
    pub gpu_telemetry_interval_s: f64,
    /// Credentials given in a `--server-metrics` or `--gpu-telemetry` URL, as (the target's
    /// URL without them, its `Authorization: Basic …` value). The value serializes as
    /// `<redacted>`; the URLs above never hold credentials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_authorization: Vec<(String, Secret)>,
}

fn default_server_metrics_formats() -> Vec<String> {
    vec!["json".into(), "csv".into()]
}

fn default_scrape_interval() -> f64 {
    1.0
}

impl Default for TelemetryPlan {
    fn default() -> Self {
        TelemetryPlan {
            server_metrics_disabled: false,
            server_metrics_urls: Vec::new(),
            server_metrics_formats: default_server_metrics_formats(),
            server_metrics_interval_s: default_scrape_interval(),
            gpu_telemetry_disabled: false,
            gpu_telemetry_urls: Vec::new(),
            gpu_telemetry_interval_s: default_scrape_interval(),
            target_authorization: Vec::new(),
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct LoadPlan {
    /// Concurrent slots: burst mode's concurrency, or with a request rate the ceiling (only
    /// when `--concurrency` was given: see `RatePlan::ceiling`).
    pub concurrency: usize,
    /// Requests in the profiling phase (not the stop rule when a duration is set).
    pub request_count: u64,
    /// Requests in the warmup phase (0 = no count-limited warmup).
    pub warmup_request_count: u64,
    /// `--num-warmup-sessions`: the warmup starts no new session after this many; those
    /// started send all their turns (unless the warmup's count or duration stops first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_sessions: Option<u64>,
    /// `--num-profiling-sessions` (AIPerf's YAML `profiling.sessions`): the profiling phase
    /// starts no new session after this many; those started send all their turns. Without
    /// `--request-count` or a duration it is the phase's stop rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiling_sessions: Option<u64>,
    /// `--request-rate` and its arrival process; None = burst mode.
    #[serde(default)]
    pub request_rate: Option<RatePlan>,
    /// `--benchmark-duration`: stop issuing this many seconds after the profiling start.
    #[serde(default)]
    pub benchmark_duration_s: Option<f64>,
    /// `--benchmark-grace-period`: after the duration, how long in-flight requests may
    /// finish (None = as long as they take, AIPerf's `inf`).
    #[serde(default)]
    pub benchmark_grace_period_s: Option<f64>,
    /// `--warmup-concurrency-ramp-duration` (falls back to `concurrency_ramp_s`).
    #[serde(default)]
    pub warmup_concurrency_ramp_s: Option<f64>,
    /// `--warmup-request-rate-ramp-duration` (falls back to the profiling rate ramp).
    #[serde(default)]
    pub warmup_request_rate_ramp_s: Option<f64>,
    /// `--warmup-prefill-concurrency` (falls back to `prefill_concurrency`).
    #[serde(default)]
    pub warmup_prefill_concurrency: Option<usize>,
    /// `--failed-request-threshold`: cancel the run once more than this ratio (0–1) of the
    /// profiling requests failed (armed after max(concurrency, 10) requests).
    #[serde(default)]
    pub failed_request_threshold: Option<f64>,
    /// `--user-centric-rate` and `--num-users`: (requests per second over all users, users).
    #[serde(default)]
    pub user_centric: Option<UserCentricPlan>,
    /// `--warmup-user-centric-rate` and `--warmup-num-users`: a user-centric warmup (AIPerf's
    /// YAML warmup phase of `type: user_centric`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_user_centric: Option<UserCentricPlan>,
    /// `--prefill-concurrency`: at most this many requests waiting for their first token.
    #[serde(default)]
    pub prefill_concurrency: Option<usize>,
    /// `--prefill-concurrency-ramp-duration`: the prefill cap opens from 1 to its target over
    /// this many seconds.
    #[serde(default)]
    pub prefill_concurrency_ramp_s: Option<f64>,
    /// `--warmup-prefill-concurrency-ramp-duration` (falls back to the profiling one).
    #[serde(default)]
    pub warmup_prefill_concurrency_ramp_s: Option<f64>,
    /// `--concurrency-ramp-duration`: slots (or the rate mode's ceiling) open from 1 to N over
    /// this many seconds.
    #[serde(default)]
    pub concurrency_ramp_s: Option<f64>,
    /// `--warmup-duration`: a warmup phase stopped by time instead of count.
    #[serde(default)]
    pub warmup_duration_s: Option<f64>,
    /// `--warmup-concurrency` (falls back to `concurrency`).
    #[serde(default)]
    pub warmup_concurrency: Option<usize>,
    /// `--warmup-request-rate` (falls back to the profiling rate).
    #[serde(default)]
    pub warmup_request_rate: Option<f64>,
    /// `--warmup-arrival-pattern` (falls back to the profiling pattern); it shapes the
    /// warmup's arrivals only when the warmup is rate-paced.
    #[serde(default)]
    pub warmup_arrival: Option<ArrivalKind>,
    /// `--arrival-smoothness` for a gamma warmup (1.0 when not given).
    #[serde(default)]
    pub warmup_arrival_smoothness: Option<f64>,
    /// `--warmup-grace-period`: after `--warmup-duration`, how long in-flight warmup requests
    /// may finish before they are cancelled (None = as long as they take, AIPerf's default).
    #[serde(default)]
    pub warmup_grace_period_s: Option<f64>,
    /// `--request-cancellation-rate` / `--request-cancellation-delay`.
    #[serde(default)]
    pub cancellation: Option<CancellationPlan>,
    /// The rule that decides whether the client kept its schedule.
    #[serde(default)]
    pub schedule_rule: ScheduleRulePlan,
    /// `--request-count` was given (else, for a dataset read from a file, every row is sent
    /// once, as AIPerf does for traces).
    #[serde(default)]
    pub request_count_given: bool,
    /// `--fixed-schedule` and its offsets (trace replay).
    #[serde(default)]
    pub fixed_schedule: FixedSchedulePlan,
}

/// `--fixed-schedule`, `--no-fixed-schedule`, `--fixed-schedule-auto-offset`,
/// `--fixed-schedule-start-offset`, `--fixed-schedule-end-offset`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
pub struct FixedSchedulePlan {
    /// Some(true): `--fixed-schedule`; Some(false): `--no-fixed-schedule`; None: on when the
    /// dataset's first record has a timestamp.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Shift the trace so that its first (kept) timestamp is 0.
    #[serde(default)]
    pub auto_offset: bool,
    /// Keep sessions whose first timestamp is ≥ this (ms, inclusive).
    #[serde(default)]
    pub start_offset_ms: Option<u64>,
    /// Keep sessions whose first timestamp is ≤ this (ms, inclusive).
    #[serde(default)]
    pub end_offset_ms: Option<u64>,
    /// `--concurrency` given with a fixed schedule: at most this many sessions at once (a
    /// session then waits for a slot, and the wait shows as schedule lag).
    #[serde(default)]
    pub ceiling: Option<usize>,
}

/// `--schedule-lag-p99-ms`, `--schedule-min-achieved-pct`, `--fail-on-missed-schedule`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct ScheduleRulePlan {
    pub max_lag_p99_ms: f64,
    pub min_achieved_pct: f64,
    pub fail_on_miss: bool,
}

impl Default for ScheduleRulePlan {
    fn default() -> Self {
        ScheduleRulePlan {
            max_lag_p99_ms: 1.0,
            min_achieved_pct: 99.0,
            fail_on_miss: false,
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalKind {
    Constant,
    Poisson,
    Gamma,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RatePlan {
    /// Requests per second.
    pub rate: f64,
    pub pattern: ArrivalKind,
    /// Gamma shape (`--arrival-smoothness`); 1.0 is Poisson.
    pub smoothness: Option<f64>,
    /// `--request-rate-ramp-duration`, seconds.
    pub ramp_s: Option<f64>,
    /// With `--concurrency`: at most this many requests in flight.
    pub ceiling: Option<usize>,
    /// `--request-rate-series`: the rate's points after the ramp (then `rate` is the first
    /// point's rate, the ramp's target).
    #[serde(default)]
    pub series: Option<crate::rate_series::RateSeries>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct UserCentricPlan {
    /// Requests per second, all users together.
    pub rate: f64,
    pub users: usize,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct CancellationPlan {
    /// Percent of requests cancelled, 0–100.
    pub rate_pct: f64,
    /// Seconds after the request was sent.
    pub delay_s: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ArtifactPlan {
    /// The parent directory (`--artifact-dir`).
    pub dir: String,
    /// The run directory actually used (`<dir>/<model>-openai-<endpoint>-<load>`).
    pub run_dir: String,
    /// `--profile-export-prefix` (default `profile_export`).
    pub prefix: String,
    pub export_level: ExportLevel,
    /// `--export-http-trace`: AIPerf's `trace_data` on each `profile_export.jsonl` line.
    #[serde(default)]
    pub export_http_trace: bool,
    /// `--evidence-compression` (default `none`).
    #[serde(default, skip_serializing_if = "EvidenceCompression::is_none")]
    pub evidence_compression: EvidenceCompression,
    /// `--slice-duration` in seconds: AIPerf's timeslice files (docs/reports.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_duration_s: Option<f64>,
}

/// How the evidence file is stored: plain JSON Lines, or zstd frames
/// (`inferbench_evidence.jsonl.zst`, docs/file-formats.md).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceCompression {
    #[default]
    None,
    Zstd,
}

impl EvidenceCompression {
    pub fn is_none(&self) -> bool {
        *self == EvidenceCompression::None
    }
}

/// Everything a run needs, validated. Serialized into the manifest (secrets redacted).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RunPlan {
    pub models: Vec<String>,
    pub target: Target,
    /// Base URL actually used (for the simulated server, filled in at start).
    pub url: String,
    pub endpoint_type: EndpointType,
    /// URL path (`--custom-endpoint` or the endpoint's default).
    pub endpoint_path: String,
    pub streaming: bool,
    pub api_key: Option<Secret>,
    /// Extra headers in order. Values of sensitive names are secrets.
    pub headers: Vec<(String, HeaderValue)>,
    /// `--extra-inputs`, merged into every body after the base payload.
    pub extra_inputs: serde_json::Map<String, serde_json::Value>,
    pub request_timeout_seconds: f64,
    pub tokenizer: TokenizerSpec,
    /// `--tokenizer-revision`, checked against the tokenizer's cache snapshot (the manifest's
    /// `tokenizer.revision` records the commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer_revision: Option<String>,
    pub use_server_token_count: bool,
    pub use_legacy_max_tokens: bool,
    pub isl: LengthDist,
    pub osl: Option<LengthDist>,
    pub num_dataset_entries: usize,
    pub random_seed: Option<u64>,
    pub load: LoadPlan,
    pub artifacts: ArtifactPlan,
    pub ui: UiKind,
    /// The command line as typed, with secret values replaced.
    pub cli_command: String,
    /// `--goodput "metric:value …"` (display units), as given.
    #[serde(default)]
    pub goodput: Option<String>,
    /// `--confidence-level`: repeated-run intervals and the good fraction's Wilson interval.
    #[serde(default = "default_confidence_level")]
    pub confidence_level: f64,
    /// Dataset options (input file, type, sampling, synthetic extras).
    #[serde(default)]
    pub dataset: crate::dataset_plan::DatasetPlan,
    /// Endpoint options (request building and response reading).
    #[serde(default)]
    pub endpoint: crate::endpoint_plan::EndpointPlan,
    /// Server metrics and GPU telemetry.
    #[serde(default)]
    pub telemetry: TelemetryPlan,
    /// `--workers-max`: the client's worker threads (None: one thread, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers_max: Option<usize>,
    /// HTTPS settings (docs/tls.md).
    #[serde(default)]
    pub tls: crate::tls_plan::TlsPlan,
    /// Several URLs and models.
    #[serde(default)]
    pub routing: crate::routing_plan::RoutingPlan,
    /// Connection reuse and resends.
    #[serde(default)]
    pub connection: crate::connection_plan::ConnectionPlan,
    /// Server controls and extra exports.
    #[serde(default)]
    pub controls: crate::controls_plan::ControlsPlan,
    /// `--shard-index`/`--shard-count` and the shared start (docs/scale-out.md); None for an
    /// unsharded run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::ShardPlan>,
}

fn default_confidence_level() -> f64 {
    0.95
}

/// A header value that is redacted in serialization when its name is sensitive.
///
/// Read back (a manifest's plan), every value is `Plain`: a secret was written as
/// `<redacted>`, and that is all that can come back; a plain value must stay itself, so that
/// rewriting the manifest offline gives the same bytes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum HeaderValue {
    Plain(String),
    Secret(Secret),
}

impl HeaderValue {
    pub fn for_header(name: &str, value: impl Into<String>) -> Self {
        if is_sensitive_header(name) {
            HeaderValue::Secret(Secret::new(value))
        } else {
            HeaderValue::Plain(value.into())
        }
    }
    pub fn expose(&self) -> &str {
        match self {
            HeaderValue::Secret(s) => s.expose(),
            HeaderValue::Plain(s) => s,
        }
    }
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_serialize() {
        let s = Secret::new("sk-very-secret");
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"<redacted>\"");
        assert_eq!(format!("{s:?}"), "<redacted>");
        let h = HeaderValue::for_header("Authorization", "Bearer x");
        assert_eq!(serde_json::to_string(&h).unwrap(), "\"<redacted>\"");
        let h = HeaderValue::for_header("X-Trace", "abc");
        assert_eq!(serde_json::to_string(&h).unwrap(), "\"abc\"");
    }

    #[test]
    fn secret_header_names() {
        for n in [
            "Authorization",
            "authorization",
            "Proxy-Authorization",
            "X-Authorization",
            "X-Api-Key",
            "api-key",
            "Api_Key",
            "Cookie",
            "Set-Cookie",
            "X-Auth-User",
            "X-Auth-Request-Email",
            "Password",
            "X-Passwd",
            "Session",
            "X-Session-Id",
            "X-Amz-Security-Token",
            "X-Client-Secret",
            "X-Goog-Credentials",
            "Credential",
            "X-Hub-Signature",
            "Private-Token",
            "X-Bearer",
            "X-Jwt-Assertion",
        ] {
            assert!(is_sensitive_header(n), "{n} should be secret");
        }
    }

    #[test]
    fn ordinary_header_names_stay_plain() {
        // Every ordinary request header a benchmark sends or a user adds: none may match a
        // part (`Keep-Alive` holds no "key": k-e-e-p).
        for n in [
            "Accept",
            "Accept-Encoding",
            "Accept-Language",
            "Anthropic-Version",
            "Cache-Control",
            "Connection",
            "Content-Encoding",
            "Content-Length",
            "Content-Type",
            "Expect",
            "Host",
            "If-None-Match",
            "Keep-Alive",
            "OpenAI-Organization",
            "OpenAI-Project",
            "Origin",
            "Pragma",
            "Priority",
            "Range",
            "Referer",
            "TE",
            "Traceparent",
            "Transfer-Encoding",
            "Upgrade",
            "User-Agent",
            "Via",
            "X-Correlation-ID",
            "X-Forwarded-For",
            "X-Request-ID",
            "X-Team",
            "X-Trace",
        ] {
            assert!(!is_sensitive_header(n), "{n} should stay plain");
        }
    }

    #[test]
    fn tokenizer_flag() {
        assert_eq!(TokenizerSpec::from_flag(None), TokenizerSpec::Builtin);
        assert_eq!(
            TokenizerSpec::from_flag(Some("builtin")),
            TokenizerSpec::Builtin
        );
        assert_eq!(
            TokenizerSpec::from_flag(Some("/m/tokenizer.json")),
            TokenizerSpec::HuggingFace {
                path: "/m/tokenizer.json".into()
            }
        );
    }

    #[test]
    fn run_directory_names() {
        assert_eq!(
            artifact_dir_name("mock-model", EndpointType::Chat, "concurrency1"),
            "mock-model-openai-chat-concurrency1"
        );
        assert_eq!(
            artifact_dir_name("org/m:v1\\x", EndpointType::NimRankings, "sweep"),
            "org_m_v1_x-openai-nim_rankings-sweep"
        );
    }
}
