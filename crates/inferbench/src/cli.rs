//! Command-line flags, with AIPerf's names, aliases and defaults, and their validation into a
//! [`RunPlan`].

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use inferbench_core::plan::{
    ArtifactPlan, EndpointType, ExportLevel, HeaderValue, LengthDist, LoadPlan, RunPlan, Secret,
    Target, TokenizerSpec, UiKind,
};

#[derive(Parser, Debug)]
#[command(
    name = "inferbench",
    version,
    about = "Benchmark client for LLM inference servers (AIPerf- and GenAI-Perf-compatible)",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a benchmark (against the built-in simulated server when no --url is given).
    Profile(Box<ProfileArgs>),
    /// Run the simulated OpenAI-compatible server standalone.
    MockServer(MockServerArgs),
    /// Recompute every metric offline from a run directory's stored evidence, or from a
    /// GenAI-Perf or AIPerf artifact directory (imported on the fly).
    Metrics(MetricsArgs),
    /// Send one request (or --count N) of the workload and show, event by event, how the
    /// response was read: validate an endpoint adapter before generating load.
    Inspect(Box<InspectArgs>),
    /// Set every legacy metric of a run next to its counterpart under another definition
    /// set, with the evidence that decides whether the mapping holds.
    Crosswalk(CrosswalkArgs),
}

#[derive(Args, Debug)]
pub struct InspectArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// How many requests to send (one after another).
    #[arg(long, default_value_t = 1)]
    pub count: usize,
    /// Show at most this many events of each response (the summary counts them all).
    #[arg(long = "max-events", default_value_t = 40)]
    pub max_events: usize,
}

#[derive(Args, Debug)]
pub struct CrosswalkArgs {
    /// A run directory (inferbench, or a GenAI-Perf or AIPerf artifact directory).
    pub dir: std::path::PathBuf,
    /// The legacy definition set.
    #[arg(long, default_value = "genai-perf-0.0.13")]
    pub from: String,
    /// The definition set to map onto.
    #[arg(long, default_value = "aiperf-0.13")]
    pub to: String,
    /// Where to write crosswalk.json and crosswalk.md (default: DIR).
    #[arg(long = "output-dir")]
    pub output_dir: Option<std::path::PathBuf>,
    /// Tokenizer for imported runs whose files keep texts but no counts (`builtin` or a
    /// path; default: the run's own).
    #[arg(long)]
    pub tokenizer: Option<String>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum EndpointArg {
    Chat,
    Completions,
    // AIPerf endpoint types that inferbench does not build yet: accepted by name so that the
    // error says so instead of "invalid value".
    Responses,
    Messages,
    Embeddings,
    ChatEmbeddings,
    NimEmbeddings,
    NimRankings,
    HfTeiRankings,
    CohereRankings,
    HuggingfaceGenerate,
    ImageGeneration,
    ImageEdit,
    VideoGeneration,
    AudioTranscription,
    ImageRetrieval,
    SolidoRag,
    Raw,
    Template,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ArrivalArg {
    Constant,
    Poisson,
    Gamma,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportLevelArg {
    Summary,
    Records,
    Raw,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum UiArg {
    Dashboard,
    Simple,
    None,
}

#[derive(Args, Debug)]
pub struct ProfileArgs {
    // ---- Endpoint (AIPerf §1.1)
    /// Model name(s); comma lists allowed. Default with the simulated server: mock-model.
    #[arg(short = 'm', long = "model", visible_alias = "model-names", value_delimiter = ',', action = ArgAction::Append)]
    pub model: Vec<String>,
    /// Server base URL. Without it, the built-in simulated server is started on 127.0.0.1.
    #[arg(short = 'u', long = "url", action = ArgAction::Append)]
    pub url: Vec<String>,
    #[arg(long = "endpoint-type", value_enum, default_value = "chat")]
    pub endpoint_type: EndpointArg,
    /// URL path overriding the endpoint type's default (e.g. /v1/chat/completions).
    #[arg(long = "custom-endpoint", visible_alias = "endpoint")]
    pub custom_endpoint: Option<String>,
    #[arg(long)]
    pub streaming: bool,
    /// Sent as `Authorization: Bearer <key>`. Never written to an artifact or a log.
    #[arg(long = "api-key", env = "INFERBENCH_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Extra header, `Name:Value` or a JSON object. Repeatable.
    #[arg(short = 'H', long = "header", action = ArgAction::Append, num_args = 1..)]
    pub header: Vec<String>,
    /// Split `<think>…</think>` in content into reasoning (`think`): for servers that send a
    /// reasoning model's thoughts inline. Not an AIPerf flag.
    #[arg(long = "reasoning-tags", value_parser = ["think"])]
    pub reasoning_tags: Option<String>,
    /// Extra body fields, `key:value` pairs or a JSON object. Repeatable.
    #[arg(long = "extra-inputs", action = ArgAction::Append, num_args = 1..)]
    pub extra_inputs: Vec<String>,
    #[arg(
        long = "request-timeout-seconds",
        default_value_t = 21600.0,
        allow_negative_numbers = true
    )]
    pub request_timeout_seconds: f64,
    #[arg(long = "use-legacy-max-tokens")]
    pub use_legacy_max_tokens: bool,
    #[arg(long = "use-server-token-count")]
    pub use_server_token_count: bool,

    // ---- Tokenizer (§1.2)
    /// `builtin` (tiktoken o200k_base, the default), a tokenizer.json, or a directory holding one.
    #[arg(long)]
    pub tokenizer: Option<String>,

    // ---- Prompts (§1.4, §1.5)
    /// Input tokens per prompt; a comma list makes a sweep.
    #[arg(long = "synthetic-input-tokens-mean", visible_aliases = ["prompt-input-tokens-mean", "isl"], value_delimiter = ',', default_value = "550")]
    pub isl: Vec<u64>,
    #[arg(long = "synthetic-input-tokens-stddev", visible_aliases = ["prompt-input-tokens-stddev", "isl-stddev"], default_value_t = 0.0)]
    pub isl_stddev: f64,
    /// Output tokens requested (max_completion_tokens); a comma list makes a sweep.
    #[arg(long = "output-tokens-mean", visible_aliases = ["prompt-output-tokens-mean", "osl"], value_delimiter = ',')]
    pub osl: Vec<u64>,
    #[arg(long = "output-tokens-stddev", visible_aliases = ["prompt-output-tokens-stddev", "osl-stddev"], default_value_t = 0.0)]
    pub osl_stddev: f64,
    #[arg(
        long = "num-dataset-entries",
        visible_alias = "num-prompts",
        default_value_t = 100
    )]
    pub num_dataset_entries: usize,
    #[arg(long = "random-seed")]
    pub random_seed: Option<u64>,

    // ---- Datasets (§1.3–1.5, §3): see docs/datasets.md
    /// A dataset file (or directory): see --custom-dataset-type.
    #[arg(long = "input-file")]
    pub input_file: Option<String>,
    /// single_turn, multi_turn, random_pool, mooncake_trace, raw_payload, inputs_json,
    /// genai_perf_inputs (default: detected from the file).
    #[arg(long = "custom-dataset-type")]
    pub custom_dataset_type: Option<String>,
    /// A public dataset read from a local file (`sharegpt`; no download): give the file with
    /// --public-dataset-path or --input-file.
    #[arg(long = "public-dataset")]
    pub public_dataset: Option<String>,
    /// The local file of --public-dataset.
    #[arg(long = "public-dataset-path")]
    pub public_dataset_path: Option<String>,
    /// sequential, random or shuffle (default: sequential for files, shuffle for synthetic).
    #[arg(long = "dataset-sampling-strategy", value_parser = ["sequential", "random", "shuffle"])]
    pub dataset_sampling_strategy: Option<String>,
    /// Let a sequential dataset start over when a run asks for more requests than it holds.
    #[arg(long = "allow-dataset-wrap")]
    pub allow_dataset_wrap: bool,
    /// Drop a trace's timestamps and delays.
    #[arg(long = "ignore-trace-delays")]
    pub ignore_trace_delays: bool,
    /// Tokens per hash_id block of a mooncake trace (default 512).
    #[arg(
        long = "isl-block-size",
        visible_aliases = ["prompt-input-tokens-block-size", "synthetic-input-tokens-block-size"]
    )]
    pub isl_block_size: Option<u64>,
    /// (ISL, OSL) mixture, e.g. `128,64:60;512,256:40` (percent weights).
    #[arg(long = "seq-dist", visible_alias = "sequence-distribution")]
    pub seq_dist: Option<String>,
    /// Uniform window around --isl/--osl: a ratio, or `{"input":r,"output":r}`.
    #[arg(long = "random-range-ratio")]
    pub random_range_ratio: Option<String>,
    /// vllm or sglang (how --random-range-ratio makes its window).
    #[arg(long = "random-corpus-style", value_parser = ["vllm", "sglang"])]
    pub random_corpus_style: Option<String>,
    /// Prompt corpus (`sonnet`, the bundled text).
    #[arg(long = "prompt-corpus")]
    pub prompt_corpus: Option<String>,
    /// A pool of this many prefixes; one is prepended to each prompt.
    #[arg(
        long = "num-prefix-prompts",
        visible_aliases = ["prompt-prefix-pool-size", "prefix-prompt-pool-size"],
        default_value_t = 0
    )]
    pub num_prefix_prompts: usize,
    #[arg(
        long = "prefix-prompt-length",
        visible_alias = "prompt-prefix-length",
        default_value_t = 0
    )]
    pub prefix_prompt_length: usize,
    /// One system prompt of this many tokens, shared by every session.
    #[arg(long = "shared-system-prompt-length")]
    pub shared_system_prompt_length: Option<usize>,
    /// A per-session user message of this many tokens before the first turn.
    #[arg(long = "user-context-prompt-length")]
    pub user_context_prompt_length: Option<usize>,
    /// A system prompt sent with every request.
    #[arg(long = "system-prompt")]
    pub system_prompt: Option<String>,
    /// A file holding the system prompt.
    #[arg(long = "system-prompt-file")]
    pub system_prompt_file: Option<String>,
    /// Sessions to generate (synthetic multi-turn; random_pool default 100).
    #[arg(
        long = "conversation-num",
        visible_aliases = ["num-conversations", "num-sessions"]
    )]
    pub conversation_num: Option<usize>,
    #[arg(
        long = "conversation-turn-mean",
        visible_alias = "session-turns-mean",
        default_value_t = 1.0
    )]
    pub conversation_turn_mean: f64,
    #[arg(
        long = "conversation-turn-stddev",
        visible_alias = "session-turns-stddev",
        default_value_t = 0.0
    )]
    pub conversation_turn_stddev: f64,
    /// ms before each later turn (after the previous one ended).
    #[arg(
        long = "conversation-turn-delay-mean",
        visible_alias = "session-turn-delay-mean",
        default_value_t = 0.0
    )]
    pub conversation_turn_delay_mean: f64,
    #[arg(
        long = "conversation-turn-delay-stddev",
        visible_alias = "session-turn-delay-stddev",
        default_value_t = 0.0
    )]
    pub conversation_turn_delay_stddev: f64,
    #[arg(
        long = "conversation-turn-delay-ratio",
        visible_alias = "session-delay-ratio",
        default_value_t = 1.0
    )]
    pub conversation_turn_delay_ratio: f64,
    /// Texts per request (embeddings, rankings).
    #[arg(
        short = 'b',
        long = "batch-size",
        visible_aliases = ["prompt-batch-size", "batch-size-text"],
        default_value_t = 1
    )]
    pub batch_size: usize,
    #[arg(long = "rankings-passages-mean", default_value_t = 1.0)]
    pub rankings_passages_mean: f64,
    #[arg(long = "rankings-passages-stddev", default_value_t = 0.0)]
    pub rankings_passages_stddev: f64,
    #[arg(long = "rankings-passages-prompt-token-mean", default_value_t = 550.0)]
    pub rankings_passages_prompt_token_mean: f64,
    #[arg(long = "rankings-passages-prompt-token-stddev", default_value_t = 0.0)]
    pub rankings_passages_prompt_token_stddev: f64,
    #[arg(long = "rankings-query-prompt-token-mean", default_value_t = 550.0)]
    pub rankings_query_prompt_token_mean: f64,
    #[arg(long = "rankings-query-prompt-token-stddev", default_value_t = 0.0)]
    pub rankings_query_prompt_token_stddev: f64,

    // ---- Load (§1.7, §1.9)
    /// Concurrent sessions. Default 1. A comma list makes a sweep.
    #[arg(long, value_delimiter = ',')]
    pub concurrency: Vec<usize>,
    /// Requests in the profiling phase. Default max(10, 2 × concurrency).
    #[arg(long = "request-count", visible_alias = "num-requests")]
    pub request_count: Option<u64>,
    #[arg(long = "warmup-request-count", visible_alias = "num-warmup-requests")]
    pub warmup_request_count: Option<u64>,
    /// Replay the dataset's timestamps (on by itself when the first record has one).
    #[arg(long = "fixed-schedule", conflicts_with = "no_fixed_schedule")]
    pub fixed_schedule: bool,
    /// Do not switch to a fixed schedule when the dataset has timestamps.
    #[arg(long = "no-fixed-schedule")]
    pub no_fixed_schedule: bool,
    /// Shift the trace so that its first kept timestamp is 0.
    #[arg(long = "fixed-schedule-auto-offset")]
    pub fixed_schedule_auto_offset: bool,
    /// Keep only sessions whose first timestamp is at or after this (ms).
    #[arg(long = "fixed-schedule-start-offset")]
    pub fixed_schedule_start_offset: Option<u64>,
    /// Keep only sessions whose first timestamp is at or before this (ms).
    #[arg(long = "fixed-schedule-end-offset")]
    pub fixed_schedule_end_offset: Option<u64>,
    /// Requests per second (AIPerf's rate mode). With --concurrency, that is a ceiling. A
    /// comma list makes a sweep.
    #[arg(
        long = "request-rate",
        allow_negative_numbers = true,
        value_delimiter = ','
    )]
    pub request_rate: Vec<f64>,
    /// Service-level objectives, `metric:value …` in display units (ms, tokens/sec/user): a
    /// request is good when it meets every one; reports goodput and the good fraction.
    #[arg(long)]
    pub goodput: Option<String>,
    /// Repeat the profiling run this many times (1–10) and report confidence intervals.
    #[arg(long = "num-profile-runs", default_value_t = 1)]
    pub num_profile_runs: usize,
    /// Seconds to wait between repeated runs.
    #[arg(long = "profile-run-cooldown-seconds", default_value_t = 0.0)]
    pub profile_run_cooldown_seconds: f64,
    /// Confidence level of the intervals over repeated runs.
    #[arg(long = "confidence-level", default_value_t = 0.95)]
    pub confidence_level: f64,
    /// Warm up only before the first of the repeated runs (AIPerf's default).
    #[arg(long = "profile-run-disable-warmup-after-first", default_value_t = true, action = ArgAction::Set)]
    pub profile_run_disable_warmup_after_first: bool,
    /// Seconds to wait between the cells of a sweep.
    #[arg(long = "parameter-sweep-cooldown-seconds", default_value_t = 0.0)]
    pub parameter_sweep_cooldown_seconds: f64,
    /// Inter-arrival distribution with --request-rate.
    #[arg(
        long = "arrival-pattern",
        visible_alias = "request-rate-mode",
        value_enum,
        default_value = "poisson"
    )]
    pub arrival_pattern: ArrivalArg,
    /// Gamma shape with --arrival-pattern gamma (1.0 = Poisson, < 1 bursty, > 1 smooth).
    #[arg(
        long = "arrival-smoothness",
        visible_alias = "vllm-burstiness",
        allow_negative_numbers = true
    )]
    pub arrival_smoothness: Option<f64>,
    /// Seconds over which the request rate rises to its target.
    #[arg(long = "request-rate-ramp-duration", allow_negative_numbers = true)]
    pub request_rate_ramp_duration: Option<f64>,
    /// Stop issuing after this many seconds (the request count is then not the stop rule).
    #[arg(long = "benchmark-duration", allow_negative_numbers = true)]
    pub benchmark_duration: Option<f64>,
    /// Seconds in-flight requests may still finish after --benchmark-duration (`inf`: wait).
    #[arg(long = "benchmark-grace-period", default_value = "30")]
    pub benchmark_grace_period: String,
    /// Requests per second of all users together, each user waiting for its previous
    /// request (LMBenchmark-style); needs --num-users.
    #[arg(long = "user-centric-rate", allow_negative_numbers = true)]
    pub user_centric_rate: Option<f64>,
    /// Users of --user-centric-rate.
    #[arg(long = "num-users")]
    pub num_users: Option<usize>,
    /// --concurrency-ramp-duration of the warmup phase (default: the profiling one).
    #[arg(
        long = "warmup-concurrency-ramp-duration",
        allow_negative_numbers = true
    )]
    pub warmup_concurrency_ramp_duration: Option<f64>,
    /// --request-rate-ramp-duration of the warmup phase (default: the profiling one).
    #[arg(
        long = "warmup-request-rate-ramp-duration",
        allow_negative_numbers = true
    )]
    pub warmup_request_rate_ramp_duration: Option<f64>,
    /// --prefill-concurrency of the warmup phase (default: the profiling one).
    #[arg(long = "warmup-prefill-concurrency")]
    pub warmup_prefill_concurrency: Option<usize>,
    /// Cancel the run once the failed/total ratio of profiling requests exceeds this (0–1),
    /// after max(concurrency, 10) requests; the exit code is then 1.
    #[arg(long = "failed-request-threshold")]
    pub failed_request_threshold: Option<f64>,
    /// At most this many requests waiting for their first token (streaming).
    #[arg(long = "prefill-concurrency")]
    pub prefill_concurrency: Option<usize>,
    /// Seconds over which the concurrency (or, with --request-rate, the ceiling) rises from 1.
    #[arg(long = "concurrency-ramp-duration", allow_negative_numbers = true)]
    pub concurrency_ramp_duration: Option<f64>,
    /// A warmup phase stopped by time.
    #[arg(long = "warmup-duration", allow_negative_numbers = true)]
    pub warmup_duration: Option<f64>,
    /// Concurrency of the warmup phase (default: --concurrency).
    #[arg(long = "warmup-concurrency")]
    pub warmup_concurrency: Option<usize>,
    /// Request rate of the warmup phase (default: --request-rate).
    #[arg(long = "warmup-request-rate", allow_negative_numbers = true)]
    pub warmup_request_rate: Option<f64>,
    /// Percent (0–100) of requests to cancel after they were sent.
    #[arg(long = "request-cancellation-rate", allow_negative_numbers = true)]
    pub request_cancellation_rate: Option<f64>,
    /// The schedule counts as kept when the p99 of schedule lag (actual − planned send) is at
    /// most this many ms...
    #[arg(long = "schedule-lag-p99-ms", default_value_t = 1.0)]
    pub schedule_lag_p99_ms: f64,
    /// ...and the achieved send rate is at least this percent of the scheduled one.
    #[arg(long = "schedule-min-achieved-pct", default_value_t = 99.0)]
    pub schedule_min_achieved_pct: f64,
    /// Exit non-zero (3) when the schedule was not kept.
    #[arg(long = "fail-on-missed-schedule")]
    pub fail_on_missed_schedule: bool,
    /// Seconds after a request was sent before it is cancelled.
    #[arg(
        long = "request-cancellation-delay",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    pub request_cancellation_delay: f64,

    // ---- Output (§1.11, §1.13)
    /// Parent directory of the run directory (default `artifacts`, which gets a
    /// `<model>-openai-<endpoint>-concurrency<N>` subdirectory; an explicit directory is used
    /// as is, like AIPerf).
    #[arg(long = "output-artifact-dir", visible_alias = "artifact-dir")]
    pub artifact_dir: Option<String>,
    #[arg(long = "profile-export-prefix", visible_alias = "profile-export-file")]
    pub profile_export_prefix: Option<String>,
    #[arg(
        long = "export-level",
        visible_alias = "profile-export-level",
        value_enum,
        default_value = "records"
    )]
    pub export_level: ExportLevelArg,
    #[arg(
        long = "ui-type",
        visible_alias = "ui",
        value_enum,
        default_value = "dashboard"
    )]
    pub ui: UiArg,

    // ---- The built-in simulated server (inferbench only; used when --url is absent)
    /// Time to first token of the simulated server, ms (default 20; only without --url).
    #[arg(long = "sim-ttft-ms", allow_negative_numbers = true)]
    pub sim_ttft_ms: Option<f64>,
    /// Inter-token latency of the simulated server, ms (default 5; only without --url).
    #[arg(long = "sim-itl-ms", allow_negative_numbers = true)]
    pub sim_itl_ms: Option<f64>,
}

#[derive(Args, Debug)]
pub struct MockServerArgs {
    #[arg(short = 'p', long, default_value_t = 8000)]
    pub port: u16,
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    #[arg(long = "ttft-ms", visible_alias = "ttft", default_value_t = 20.0)]
    pub ttft_ms: f64,
    #[arg(long = "itl-ms", visible_alias = "itl", default_value_t = 5.0)]
    pub itl_ms: f64,
    /// All latencies 0 (like AIPerf's mock `--fast`).
    #[arg(short = 'f', long)]
    pub fast: bool,
    /// Tokens per streamed chunk after the first (vLLM stream_interval style).
    #[arg(long = "tokens-per-chunk", default_value_t = 1)]
    pub tokens_per_chunk: usize,
    /// Send a role-only first chunk at request arrival.
    #[arg(long = "role-first-chunk")]
    pub role_first_chunk: bool,
    /// Reasoning tokens sent before the content (out of the max_tokens budget).
    #[arg(long = "reasoning-tokens", default_value_t = 0)]
    pub reasoning_tokens: usize,
    /// Field that carries reasoning: reasoning_content or reasoning.
    #[arg(long = "reasoning-field", default_value = "reasoning_content")]
    pub reasoning_field: String,
    /// Percent of requests answered with HTTP 500.
    #[arg(long = "error-rate", default_value_t = 0.0)]
    pub error_rate: f64,
    /// Percent of streams cut part-way.
    #[arg(long = "cut-rate", default_value_t = 0.0)]
    pub cut_rate: f64,
    /// Output tokens when a request sets no max_tokens.
    #[arg(long = "default-output-tokens", default_value_t = 16)]
    pub default_output_tokens: usize,
    #[arg(long = "model", default_value = "mock-model")]
    pub model: String,
    /// Tokenizer whose single-token words make the output text (`builtin` or a path).
    #[arg(long)]
    pub tokenizer: Option<String>,
    #[arg(long = "random-seed", default_value_t = 0)]
    pub random_seed: u64,
    /// Worker threads of the server's runtime (default: all cores).
    #[arg(long)]
    pub workers: Option<usize>,
}

#[derive(Args, Debug)]
pub struct MetricsArgs {
    /// A run directory written by `inferbench profile`.
    pub dir: std::path::PathBuf,
    /// Definition set to score under (`aiperf-0.13`, `genai-perf-0.0.13`, `genai-perf-0.0.4`,
    /// `genai-perf-0.0.1`, `vllm-bench`, `mlperf-loadgen`).
    /// Default: aiperf-0.13 for an inferbench run, the tool's own set for an imported one.
    #[arg(long)]
    pub definitions: Option<String>,
    /// Rewrite the summary files (JSON, CSV, console) from the recomputed metrics.
    #[arg(long)]
    pub write: bool,
    /// Write the summary in a tool's own file shape: `aiperf` (profile_export_aiperf.json
    /// and .csv) or `genai-perf` (profile_export_genai_perf.json and .csv).
    #[arg(long, value_parser = ["aiperf", "genai-perf", "json"])]
    pub format: Option<String>,
    /// Service-level objectives for goodput, `metric:value …` in display units (overrides
    /// the run's own --goodput).
    #[arg(long)]
    pub goodput: Option<String>,
    /// Tokenizer for imported runs whose files keep texts but no counts (`builtin` or a
    /// path; default: the run's own).
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Where `--format` writes its files (default: DIR).
    #[arg(long = "output-dir")]
    pub output_dir: Option<std::path::PathBuf>,
}

/// AIPerf `profile` flags that inferbench accepts by name but has not built yet. Using one
/// is an error that says so, never a silent no-op. (name, takes a value)
pub const UNBUILT_FLAGS: &[(&str, bool)] = &[
    ("prefill-concurrency-ramp-duration", true),
    ("request-rate-series", true),
    ("warmup-prefill-concurrency-ramp-duration", true),
    ("num-warmup-sessions", true),
    ("warmup-arrival-pattern", true),
    ("warmup-grace-period", true),
    ("sweep-type", true),
    ("parameter-sweep-mode", true),
    ("parameter-sweep-same-seed", false),
    ("variant", true),
    ("sweep-variant", true),
    ("set-consistent-seed", true),
    ("vary-seed-per-trial", false),
    ("convergence-metric", true),
    ("convergence-stat", true),
    ("convergence-threshold", true),
    ("convergence-mode", true),
    ("no-sweep-table", false),
    ("apply-chat-template", false),
    ("tokenizer-revision", true),
    ("tokenizer-trust-remote-code", false),
    ("slice-duration", true),
    ("export-outputs-json", false),
    ("export-http-trace", false),
    ("server-metrics", true),
    ("gpu-telemetry", true),
    ("workers-max", true),
    ("record-processors", true),
    ("per-chunk-usage", false),
    ("connection-reuse-strategy", true),
    ("wait-for-model-timeout", true),
    ("reset-kv-cache", false),
    ("session-header", true),
    ("config", true),
];

/// Add the unbuilt flags to the `profile` subcommand, hidden, so that clap accepts them and
/// [`check_unbuilt`] can name them in a clear error.
pub fn command_with_unbuilt() -> clap::Command {
    use clap::CommandFactory;
    let add = |mut c: clap::Command| {
        for (name, takes_value) in UNBUILT_FLAGS {
            // The id is the kebab-case long name: derived ids are snake_case field names, so
            // the two never collide.
            let mut a = clap::Arg::new(*name).long(*name).hide(true);
            a = if *takes_value {
                a.num_args(0..).action(ArgAction::Append)
            } else {
                a.num_args(0..=1).action(ArgAction::Append)
            };
            c = c.arg(a);
        }
        c
    };
    Cli::command()
        .mut_subcommand("profile", add)
        .mut_subcommand("inspect", add)
}

pub fn check_unbuilt(m: &clap::ArgMatches) -> Result<(), String> {
    let sub = match m.subcommand() {
        Some(("profile" | "inspect", sub)) => sub,
        _ => return Ok(()),
    };
    let used: Vec<String> = UNBUILT_FLAGS
        .iter()
        .filter(|(n, _)| sub.contains_id(n))
        .map(|(n, _)| format!("--{n}"))
        .collect();
    if used.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} {} an AIPerf flag that inferbench does not implement yet; remove it (see docs/compatibility.md)",
        used.join(", "),
        if used.len() == 1 { "is" } else { "are" }
    ))
}

/// Parse `--extra-inputs` values: `key:value` (value read as JSON when it parses, e.g.
/// `true`, `16`, `1.5`, else as a string) or a whole JSON object. Later values win.
pub fn parse_extra_inputs(
    items: &[String],
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let mut out = serde_json::Map::new();
    for item in items {
        let t = item.trim();
        if t.starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(t)
                .map_err(|e| format!("--extra-inputs {item:?}: not a JSON object: {e}"))?;
            let obj = v
                .as_object()
                .ok_or_else(|| format!("--extra-inputs {item:?}: not a JSON object"))?;
            for (k, v) in obj {
                out.insert(k.clone(), v.clone());
            }
            continue;
        }
        let (k, v) = t.split_once(':').ok_or_else(|| {
            format!("--extra-inputs {item:?}: expected key:value or a JSON object")
        })?;
        let k = k.trim();
        if k.is_empty() {
            return Err(format!("--extra-inputs {item:?}: empty key"));
        }
        let v = v.trim();
        let value = serde_json::from_str::<serde_json::Value>(v)
            .unwrap_or_else(|_| serde_json::Value::String(v.to_string()));
        out.insert(k.to_string(), value);
    }
    Ok(out)
}

/// Parse `--header` values: `Name:Value` or a JSON object of names to string values.
pub fn parse_headers(items: &[String]) -> Result<Vec<(String, HeaderValue)>, String> {
    let mut out: Vec<(String, HeaderValue)> = Vec::new();
    let mut push = |name: &str, value: &str| -> Result<(), String> {
        let name = name.trim();
        http::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("--header: invalid header name {name:?}"))?;
        http::header::HeaderValue::from_str(value.trim())
            .map_err(|_| format!("--header {name}: invalid header value"))?;
        out.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        out.push((
            name.to_string(),
            HeaderValue::for_header(name, value.trim()),
        ));
        Ok(())
    };
    for item in items {
        let t = item.trim();
        if t.starts_with('{') {
            let v: serde_json::Value =
                serde_json::from_str(t).map_err(|e| format!("--header: not a JSON object: {e}"))?;
            for (k, v) in v
                .as_object()
                .ok_or_else(|| "--header: not a JSON object".to_string())?
            {
                let s = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                push(k, &s)?;
            }
            continue;
        }
        let (k, v) = t
            .split_once(':')
            .ok_or_else(|| "--header: expected Name:Value or a JSON object".to_string())?;
        push(k, v)?;
    }
    Ok(out)
}

/// AIPerf prepends `http://` when the URL has no scheme.
pub fn normalize_url(u: &str) -> Result<String, String> {
    let u = u.trim().trim_end_matches('/');
    let full = if u.contains("://") {
        u.to_string()
    } else {
        format!("http://{u}")
    };
    if full.starts_with("https://") {
        return Err(format!(
            "--url {u}: https is not supported yet by inferbench (plain http only); see docs/compatibility.md"
        ));
    }
    if !full.starts_with("http://") {
        return Err(format!("--url {u}: only http:// URLs are supported"));
    }
    let uri: http::Uri = full
        .parse()
        .map_err(|e| format!("--url {u}: not a valid URL: {e}"))?;
    if uri.host().is_none() {
        return Err(format!("--url {u}: no host"));
    }
    Ok(full)
}

/// The command line as typed, with the values of secret flags replaced.
pub fn redacted_command_line(args: &[String]) -> String {
    let mut out = Vec::with_capacity(args.len());
    let mut redact_next = false;
    let mut header_next = false;
    for a in args {
        if redact_next {
            out.push(inferbench_core::plan::REDACTED.to_string());
            redact_next = false;
            continue;
        }
        if header_next && !a.starts_with('-') {
            out.push(redact_header_arg(a));
            continue;
        }
        header_next = false;
        if a == "--api-key" {
            out.push(a.clone());
            redact_next = true;
        } else if let Some(_v) = a.strip_prefix("--api-key=") {
            out.push(format!("--api-key={}", inferbench_core::plan::REDACTED));
        } else if a == "-H" || a == "--header" {
            out.push(a.clone());
            header_next = true;
        } else {
            out.push(shell_quote(a));
        }
    }
    out.join(" ")
}

fn redact_header_arg(a: &str) -> String {
    if a.trim_start().starts_with('{') {
        return shell_quote(&format!("{{{}}}", inferbench_core::plan::REDACTED));
    }
    match a.split_once(':') {
        Some((k, _)) if inferbench_core::plan::is_sensitive_header(k.trim()) => {
            shell_quote(&format!("{}:{}", k, inferbench_core::plan::REDACTED))
        }
        _ => shell_quote(a),
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub const DEFAULT_ARTIFACT_DIR: &str = "artifacts";

/// The values of one cell of a sweep (or of the only cell of a plain run).
#[derive(Clone, Debug, PartialEq)]
pub struct CellValues {
    pub concurrency: Option<usize>,
    pub request_rate: Option<f64>,
    pub isl: u64,
    pub osl: Option<u64>,
}

/// One cell: its parameters as (name, value) in flag order (empty for a plain run), its
/// directory name (`concurrency_4`, `concurrency_4_isl_128`, …) and its values.
#[derive(Clone, Debug)]
pub struct Cell {
    pub parameters: Vec<(String, serde_json::Value)>,
    pub dir_name: Option<String>,
    pub values: CellValues,
}

/// The grid of `--concurrency`, `--request-rate`, `--isl` and `--osl` lists (AIPerf's
/// default `grid` sweep): every combination, the first flag outermost. A flag with one value
/// (or none) is not a sweep parameter.
pub fn cells(a: &ProfileArgs) -> Result<Vec<Cell>, String> {
    let opt = |v: &[usize]| -> Vec<Option<usize>> {
        if v.is_empty() {
            vec![None]
        } else {
            v.iter().map(|x| Some(*x)).collect()
        }
    };
    let conc = opt(&a.concurrency);
    let rates: Vec<Option<f64>> = if a.request_rate.is_empty() {
        vec![None]
    } else {
        a.request_rate.iter().map(|x| Some(*x)).collect()
    };
    let isl = if a.isl.is_empty() {
        vec![550]
    } else {
        a.isl.clone()
    };
    let osl: Vec<Option<u64>> = if a.osl.is_empty() {
        vec![None]
    } else {
        a.osl.iter().map(|x| Some(*x)).collect()
    };
    let mut out = Vec::new();
    for c in &conc {
        for r in &rates {
            for i in &isl {
                for o in &osl {
                    let mut parameters: Vec<(String, serde_json::Value)> = Vec::new();
                    if conc.len() > 1 {
                        parameters.push(("concurrency".into(), serde_json::json!(c)));
                    }
                    if rates.len() > 1 {
                        parameters.push(("request_rate".into(), serde_json::json!(r)));
                    }
                    if isl.len() > 1 {
                        parameters.push(("isl".into(), serde_json::json!(i)));
                    }
                    if osl.len() > 1 {
                        parameters.push(("osl".into(), serde_json::json!(o)));
                    }
                    let dir_name = (!parameters.is_empty()).then(|| {
                        parameters
                            .iter()
                            .map(|(k, v)| format!("{k}_{v}"))
                            .collect::<Vec<_>>()
                            .join("_")
                    });
                    out.push(Cell {
                        parameters,
                        dir_name,
                        values: CellValues {
                            concurrency: *c,
                            request_rate: *r,
                            isl: *i,
                            osl: *o,
                        },
                    });
                }
            }
        }
    }
    if out.len() > 1000 {
        return Err(format!("the sweep has {} cells: at most 1000", out.len()));
    }
    Ok(out)
}
pub const SIM_MODEL: &str = "mock-model";

/// Endpoint options: `--reasoning-tags`, and for `raw`/`template` the `payload_template` and
/// `response_field` of `--extra-inputs` (taken out, so that they are not sent in bodies).
fn endpoint_plan(
    a: &ProfileArgs,
    endpoint_type: EndpointType,
    extra_inputs: &mut serde_json::Map<String, serde_json::Value>,
) -> Result<inferbench_core::endpoint_plan::EndpointPlan, String> {
    let mut plan = inferbench_core::endpoint_plan::EndpointPlan {
        reasoning_tags: a.reasoning_tags.clone(),
        ..Default::default()
    };
    if matches!(endpoint_type, EndpointType::Template | EndpointType::Raw) {
        if let Some(v) = extra_inputs.remove("response_field") {
            let Some(path) = v.as_str() else {
                return Err(format!(
                    "--extra-inputs response_field: expected a string path, got {v}"
                ));
            };
            plan.response_field = Some(path.to_string());
        }
        if let Some(v) = extra_inputs.remove("payload_template") {
            let Some(t) = v.as_str() else {
                return Err(format!(
                    "--extra-inputs payload_template: expected a template (a name, a file or the text), got {v}"
                ));
            };
            plan.template = Some(
                inferbench_workload::render::load_template_source(t)
                    .map_err(|e| format!("--extra-inputs payload_template: {e}"))?,
            );
        }
    }
    if endpoint_type == EndpointType::Template && plan.template.is_none() {
        return Err(
            "--endpoint-type template needs --extra-inputs payload_template:<name, file or template text>"
                .into(),
        );
    }
    inferbench_client::decode::Decoder::new(endpoint_type, &plan).map_err(|e| {
        if plan.reasoning_tags.is_some() && plan.response_field.is_none() {
            format!("--reasoning-tags: {e}")
        } else {
            format!("--extra-inputs response_field / --reasoning-tags: {e}")
        }
    })?;
    Ok(plan)
}

/// The dataset flags, checked.
fn dataset_plan(a: &ProfileArgs) -> Result<inferbench_core::dataset_plan::DatasetPlan, String> {
    let mut input_file = a.input_file.clone();
    let mut public_dataset_path = a.public_dataset_path.clone();
    if a.public_dataset.is_some() && public_dataset_path.is_none() {
        // `--public-dataset sharegpt --input-file FILE`: the file is the public dataset's.
        public_dataset_path = input_file.take();
    }
    if a.public_dataset.is_some() && public_dataset_path.is_none() {
        return Err(format!(
            "--public-dataset {}: inferbench does not download datasets; give the local file with --public-dataset-path (or --input-file)",
            a.public_dataset.as_deref().unwrap_or_default()
        ));
    }
    if a.custom_dataset_type.is_some() && input_file.is_none() {
        return Err("--custom-dataset-type needs --input-file".into());
    }
    let finite = |name: &str, v: f64| -> Result<f64, String> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(format!("{name} {v}: must be a number ≥ 0"))
        }
    };
    if a.batch_size == 0 {
        return Err("--batch-size 0: must be ≥ 1".into());
    }
    if a.conversation_turn_mean < 1.0 || !a.conversation_turn_mean.is_finite() {
        return Err(format!(
            "--conversation-turn-mean {}: must be ≥ 1",
            a.conversation_turn_mean
        ));
    }
    if a.conversation_num == Some(0) {
        return Err("--conversation-num 0: must be ≥ 1".into());
    }
    let system_prompt = match (&a.system_prompt, &a.system_prompt_file) {
        (Some(_), Some(_)) => {
            return Err("--system-prompt and --system-prompt-file: give one".into());
        }
        (Some(s), None) => Some(s.clone()),
        (None, Some(f)) => {
            Some(std::fs::read_to_string(f).map_err(|e| format!("--system-prompt-file {f}: {e}"))?)
        }
        (None, None) => None,
    };
    if let Some(s) = &a.seq_dist {
        inferbench_workload::dataset::SeqDist::parse(s).map_err(|e| format!("--seq-dist: {e}"))?;
    }
    if let Some(r) = &a.random_range_ratio {
        inferbench_workload::dataset::RangeRatio::parse(r)
            .map_err(|e| format!("--random-range-ratio: {e}"))?;
    }
    Ok(inferbench_core::dataset_plan::DatasetPlan {
        input_file,
        custom_dataset_type: a.custom_dataset_type.clone(),
        sampling_strategy: a.dataset_sampling_strategy.clone(),
        allow_dataset_wrap: a.allow_dataset_wrap,
        ignore_trace_delays: a.ignore_trace_delays,
        public_dataset: a.public_dataset.clone(),
        public_dataset_path,
        isl_block_size: a.isl_block_size,
        seq_dist: a.seq_dist.clone(),
        random_range_ratio: a.random_range_ratio.clone(),
        random_corpus_style: a.random_corpus_style.clone(),
        prompt_corpus: a.prompt_corpus.clone(),
        num_prefix_prompts: a.num_prefix_prompts,
        prefix_prompt_length: a.prefix_prompt_length,
        shared_system_prompt_length: a.shared_system_prompt_length,
        user_context_prompt_length: a.user_context_prompt_length,
        system_prompt,
        num_conversations: a.conversation_num,
        conversation_turn_mean: a.conversation_turn_mean,
        conversation_turn_stddev: finite("--conversation-turn-stddev", a.conversation_turn_stddev)?,
        turn_delay_mean_ms: finite(
            "--conversation-turn-delay-mean",
            a.conversation_turn_delay_mean,
        )?,
        turn_delay_stddev_ms: finite(
            "--conversation-turn-delay-stddev",
            a.conversation_turn_delay_stddev,
        )?,
        turn_delay_ratio: finite(
            "--conversation-turn-delay-ratio",
            a.conversation_turn_delay_ratio,
        )?,
        batch_size: a.batch_size,
        rankings_passages_mean: finite("--rankings-passages-mean", a.rankings_passages_mean)?,
        rankings_passages_stddev: finite("--rankings-passages-stddev", a.rankings_passages_stddev)?,
        rankings_passages_token_mean: finite(
            "--rankings-passages-prompt-token-mean",
            a.rankings_passages_prompt_token_mean,
        )?,
        rankings_passages_token_stddev: finite(
            "--rankings-passages-prompt-token-stddev",
            a.rankings_passages_prompt_token_stddev,
        )?,
        rankings_query_token_mean: finite(
            "--rankings-query-prompt-token-mean",
            a.rankings_query_prompt_token_mean,
        )?,
        rankings_query_token_stddev: finite(
            "--rankings-query-prompt-token-stddev",
            a.rankings_query_prompt_token_stddev,
        )?,
    })
}

/// Validate profile flags into a plan.
pub fn build_plan(a: &ProfileArgs, argv: &[String], cell: &CellValues) -> Result<RunPlan, String> {
    let endpoint_type = match a.endpoint_type {
        EndpointArg::Chat => EndpointType::Chat,
        EndpointArg::Completions => EndpointType::Completions,
        EndpointArg::Responses => EndpointType::Responses,
        EndpointArg::Messages => EndpointType::Messages,
        EndpointArg::Embeddings => EndpointType::Embeddings,
        EndpointArg::NimRankings => EndpointType::NimRankings,
        EndpointArg::HfTeiRankings => EndpointType::HfTeiRankings,
        EndpointArg::CohereRankings => EndpointType::CohereRankings,
        EndpointArg::HuggingfaceGenerate => EndpointType::HuggingfaceGenerate,
        EndpointArg::Template => EndpointType::Template,
        EndpointArg::Raw => EndpointType::Raw,
        other => {
            let name = other
                .to_possible_value()
                .map(|v| v.get_name().to_string())
                .unwrap_or_default();
            return Err(format!(
                "--endpoint-type {name}: not implemented in inferbench (multimodal and media endpoints are out of scope); see docs/endpoints.md"
            ));
        }
    };
    if a.url.len() > 1 {
        return Err("--url given more than once: multi-URL load balancing is not implemented yet in inferbench".into());
    }
    let target = match a.url.first() {
        Some(u) => {
            if a.sim_ttft_ms.is_some() || a.sim_itl_ms.is_some() {
                return Err(
                    "--sim-ttft-ms/--sim-itl-ms set the built-in simulated server, which is not used with --url".into(),
                );
            }
            Target::Url {
                url: normalize_url(u)?,
            }
        }
        None => {
            let ttft_ms = a.sim_ttft_ms.unwrap_or(20.0);
            let itl_ms = a.sim_itl_ms.unwrap_or(5.0);
            for (name, v) in [("--sim-ttft-ms", ttft_ms), ("--sim-itl-ms", itl_ms)] {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(format!("{name} {v}: must be a number ≥ 0"));
                }
            }
            Target::Simulated { ttft_ms, itl_ms }
        }
    };
    let mut models: Vec<String> = a
        .model
        .iter()
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .collect();
    if models.is_empty() {
        match target {
            Target::Simulated { .. } => models.push(SIM_MODEL.to_string()),
            Target::Url { .. } => {
                return Err("--model (-m) is required with --url".into());
            }
        }
    }
    if models.len() > 1 {
        return Err("several --model names: multi-model selection is not implemented yet in inferbench; give one".into());
    }
    let url = match &target {
        Target::Url { url } => url.clone(),
        Target::Simulated { .. } => String::new(),
    };
    let endpoint_path = match &a.custom_endpoint {
        Some(p) => {
            let p = p.trim();
            if p.is_empty() {
                return Err("--custom-endpoint: empty path".into());
            }
            if p.starts_with('/') {
                p.to_string()
            } else {
                format!("/{p}")
            }
        }
        // TGI streams on its own path; raw and template have none (the URL is the endpoint).
        None if a.streaming => endpoint_type.streaming_path().to_string(),
        None => endpoint_type.default_path().to_string(),
    };
    let mut extra_inputs = parse_extra_inputs(&a.extra_inputs)?;
    let endpoint = endpoint_plan(a, endpoint_type, &mut extra_inputs)?;
    if !(a.request_timeout_seconds.is_finite() && a.request_timeout_seconds > 0.0) {
        return Err(format!(
            "--request-timeout-seconds {}: must be a number > 0",
            a.request_timeout_seconds
        ));
    }
    if cell.isl == 0 {
        return Err("--synthetic-input-tokens-mean 0: must be ≥ 1".into());
    }
    for (name, v) in [
        ("--synthetic-input-tokens-stddev", a.isl_stddev),
        ("--output-tokens-stddev", a.osl_stddev),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("{name} {v}: must be a number ≥ 0"));
        }
    }
    if cell.osl == Some(0) {
        return Err("--output-tokens-mean 0: must be ≥ 1".into());
    }
    if a.num_dataset_entries == 0 {
        return Err("--num-dataset-entries 0: must be ≥ 1".into());
    }
    let concurrency = cell.concurrency.unwrap_or(1);
    if concurrency == 0 {
        return Err("--concurrency 0: must be ≥ 1".into());
    }
    if concurrency > 100_000 {
        return Err(format!("--concurrency {concurrency}: at most 100000"));
    }
    let request_count = a
        .request_count
        .unwrap_or_else(|| (concurrency as u64 * 2).max(10));
    if request_count == 0 {
        return Err("--request-count 0: must be ≥ 1".into());
    }
    let positive = |name: &str, v: Option<f64>| -> Result<Option<f64>, String> {
        match v {
            Some(x) if !(x.is_finite() && x > 0.0) => {
                Err(format!("{name} {x}: must be a number > 0"))
            }
            other => Ok(other),
        }
    };
    let rate = positive("--request-rate", cell.request_rate)?;
    let smoothness = positive("--arrival-smoothness", a.arrival_smoothness)?;
    let ramp_s = positive("--request-rate-ramp-duration", a.request_rate_ramp_duration)?;
    let duration = positive("--benchmark-duration", a.benchmark_duration)?;
    let warmup_duration = positive("--warmup-duration", a.warmup_duration)?;
    let concurrency_ramp = positive("--concurrency-ramp-duration", a.concurrency_ramp_duration)?;
    if concurrency_ramp.is_some() && rate.is_some() && cell.concurrency.is_none() {
        return Err(
            "--concurrency-ramp-duration with --request-rate needs --concurrency (the ceiling that ramps)"
                .into(),
        );
    }
    let warmup_rate = positive("--warmup-request-rate", a.warmup_request_rate)?;
    if smoothness.is_some() && a.arrival_pattern != ArrivalArg::Gamma {
        return Err("--arrival-smoothness applies to --arrival-pattern gamma".into());
    }
    if rate.is_none() {
        for (flag, given) in [
            ("--request-rate-ramp-duration", ramp_s.is_some()),
            ("--arrival-smoothness", smoothness.is_some()),
        ] {
            if given {
                return Err(format!("{flag} needs --request-rate"));
            }
        }
    }
    let user_centric = match (
        positive("--user-centric-rate", a.user_centric_rate)?,
        a.num_users,
    ) {
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => {
            return Err("--user-centric-rate and --num-users go together".into());
        }
        (Some(_), Some(0)) => return Err("--num-users 0: must be ≥ 1".into()),
        (Some(q), Some(u)) => {
            if rate.is_some() {
                return Err("--user-centric-rate and --request-rate exclude each other".into());
            }
            Some(inferbench_core::plan::UserCentricPlan { rate: q, users: u })
        }
    };
    let warmup_conc_ramp = positive(
        "--warmup-concurrency-ramp-duration",
        a.warmup_concurrency_ramp_duration,
    )?;
    let warmup_rate_ramp = positive(
        "--warmup-request-rate-ramp-duration",
        a.warmup_request_rate_ramp_duration,
    )?;
    if a.warmup_prefill_concurrency == Some(0) {
        return Err("--warmup-prefill-concurrency 0: must be ≥ 1".into());
    }
    if let Some(t) = a.failed_request_threshold
        && !(0.0..=1.0).contains(&t)
    {
        return Err(format!(
            "--failed-request-threshold {t}: must be a ratio in [0, 1]"
        ));
    }
    if a.prefill_concurrency == Some(0) {
        return Err("--prefill-concurrency 0: must be ≥ 1".into());
    }
    if a.warmup_concurrency == Some(0) {
        return Err("--warmup-concurrency 0: must be ≥ 1".into());
    }
    let grace = match a.benchmark_grace_period.trim() {
        "inf" | "infinity" | "Infinity" => None,
        g => match g.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Some(x),
            _ => {
                return Err(format!(
                    "--benchmark-grace-period {g:?}: expected seconds ≥ 0 or inf"
                ));
            }
        },
    };
    let cancellation = match a.request_cancellation_rate {
        None => None,
        Some(r) if (0.0..=100.0).contains(&r) => {
            let d = a.request_cancellation_delay;
            if !(d.is_finite() && d >= 0.0) {
                return Err(format!(
                    "--request-cancellation-delay {d}: must be seconds ≥ 0"
                ));
            }
            Some(inferbench_core::plan::CancellationPlan {
                rate_pct: r,
                delay_s: d,
            })
        }
        Some(r) => {
            return Err(format!(
                "--request-cancellation-rate {r}: must be a percentage in [0, 100]"
            ));
        }
    };
    for (name, v) in [
        ("--schedule-lag-p99-ms", a.schedule_lag_p99_ms),
        ("--schedule-min-achieved-pct", a.schedule_min_achieved_pct),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("{name} {v}: must be a number ≥ 0"));
        }
    }
    let request_rate = rate.map(|rate| inferbench_core::plan::RatePlan {
        rate,
        pattern: match a.arrival_pattern {
            ArrivalArg::Constant => inferbench_core::plan::ArrivalKind::Constant,
            ArrivalArg::Poisson => inferbench_core::plan::ArrivalKind::Poisson,
            ArrivalArg::Gamma => inferbench_core::plan::ArrivalKind::Gamma,
        },
        smoothness,
        ramp_s,
        ceiling: cell.concurrency,
    });
    let tokenizer = match a.tokenizer.as_deref() {
        None | Some("builtin") => TokenizerSpec::Builtin,
        Some(p) => TokenizerSpec::HuggingFace {
            path: p.to_string(),
        },
    };
    let model_for_dir = models[0].replace(['/', '\\', ':'], "_");
    let explicit_dir = a.artifact_dir.is_some();
    let dir = a
        .artifact_dir
        .clone()
        .unwrap_or_else(|| DEFAULT_ARTIFACT_DIR.to_string());
    let run_dir = if explicit_dir {
        dir.clone()
    } else {
        let load = match rate {
            Some(r) => format!("request_rate{r:?}"),
            None => format!("concurrency{concurrency}"),
        };
        format!(
            "{dir}/{model_for_dir}-openai-{}-{load}",
            endpoint_type.as_str()
        )
    };
    let prefix = a
        .profile_export_prefix
        .clone()
        .unwrap_or_else(|| "profile_export".into());
    if prefix.is_empty() || prefix.contains('/') || prefix.contains('\\') {
        return Err(format!(
            "--profile-export-prefix {prefix:?}: must be a plain file name prefix"
        ));
    }
    Ok(RunPlan {
        models,
        target,
        url,
        endpoint_type,
        endpoint_path,
        streaming: a.streaming && endpoint_type.supports_streaming(),
        api_key: a.api_key.as_ref().map(Secret::new),
        headers: parse_headers(&a.header)?,
        extra_inputs,
        request_timeout_seconds: a.request_timeout_seconds,
        tokenizer,
        use_server_token_count: a.use_server_token_count,
        use_legacy_max_tokens: a.use_legacy_max_tokens,
        isl: LengthDist {
            mean: cell.isl as f64,
            stddev: a.isl_stddev,
        },
        osl: cell.osl.map(|m| LengthDist {
            mean: m as f64,
            stddev: a.osl_stddev,
        }),
        num_dataset_entries: a.num_dataset_entries,
        random_seed: a.random_seed,
        load: LoadPlan {
            concurrency,
            request_count,
            warmup_request_count: a.warmup_request_count.unwrap_or(0),
            request_count_given: a.request_count.is_some(),
            fixed_schedule: inferbench_core::plan::FixedSchedulePlan {
                enabled: if a.fixed_schedule {
                    Some(true)
                } else if a.no_fixed_schedule {
                    Some(false)
                } else {
                    None
                },
                auto_offset: a.fixed_schedule_auto_offset,
                start_offset_ms: a.fixed_schedule_start_offset,
                end_offset_ms: a.fixed_schedule_end_offset,
                ceiling: (!a.concurrency.is_empty()).then_some(concurrency),
            },
            request_rate,
            benchmark_duration_s: duration,
            benchmark_grace_period_s: grace,
            warmup_duration_s: warmup_duration,
            concurrency_ramp_s: concurrency_ramp,
            prefill_concurrency: a.prefill_concurrency,
            warmup_concurrency_ramp_s: warmup_conc_ramp,
            warmup_request_rate_ramp_s: warmup_rate_ramp,
            warmup_prefill_concurrency: a.warmup_prefill_concurrency,
            failed_request_threshold: a.failed_request_threshold,
            user_centric,
            warmup_concurrency: a.warmup_concurrency,
            warmup_request_rate: warmup_rate,
            cancellation,
            schedule_rule: inferbench_core::plan::ScheduleRulePlan {
                max_lag_p99_ms: a.schedule_lag_p99_ms,
                min_achieved_pct: a.schedule_min_achieved_pct,
                fail_on_miss: a.fail_on_missed_schedule,
            },
        },
        artifacts: ArtifactPlan {
            dir,
            run_dir,
            prefix,
            export_level: match a.export_level {
                ExportLevelArg::Summary => ExportLevel::Summary,
                ExportLevelArg::Records => ExportLevel::Records,
                ExportLevelArg::Raw => ExportLevel::Raw,
            },
        },
        ui: match a.ui {
            UiArg::Dashboard => UiKind::Dashboard,
            UiArg::Simple => UiKind::Simple,
            UiArg::None => UiKind::None,
        },
        cli_command: redacted_command_line(argv),
        goodput: match &a.goodput {
            Some(g) => {
                inferbench_metrics::aiperf::parse_slos(g)?;
                Some(g.clone())
            }
            None => None,
        },
        confidence_level: a.confidence_level,
        dataset: dataset_plan(a)?,
        endpoint,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use clap::FromArgMatches;

    pub(crate) fn parse(args: &[&str]) -> Result<RunPlan, String> {
        let argv: Vec<String> = std::iter::once("inferbench")
            .chain(args.iter().copied())
            .map(String::from)
            .collect();
        let m = command_with_unbuilt()
            .try_get_matches_from(&argv)
            .map_err(|e| e.to_string())?;
        check_unbuilt(&m)?;
        let cli = Cli::from_arg_matches(&m).map_err(|e| e.to_string())?;
        match cli.command {
            Command::Profile(p) => build_plan(&p, &argv, &cells(&p)?[0].values),
            _ => Err("not profile".into()),
        }
    }

    #[test]
    fn aiperf_defaults() {
        let p = parse(&["profile"]).unwrap();
        assert_eq!(p.models, vec!["mock-model"]);
        assert_eq!(p.isl.mean, 550.0);
        assert_eq!(p.osl, None);
        assert_eq!(p.num_dataset_entries, 100);
        assert_eq!(p.load.concurrency, 1);
        assert_eq!(p.load.request_count, 10);
        assert_eq!(p.request_timeout_seconds, 21600.0);
        assert_eq!(p.artifacts.export_level, ExportLevel::Records);
        assert_eq!(
            p.artifacts.run_dir,
            "artifacts/mock-model-openai-chat-concurrency1"
        );
        assert!(!p.streaming);
    }

    #[test]
    fn aliases_match_aiperf() {
        let p = parse(&[
            "profile",
            "-m",
            "m1",
            "-u",
            "127.0.0.1:9",
            "--isl",
            "32",
            "--osl",
            "16",
            "--num-prompts",
            "7",
            "--num-requests",
            "40",
            "--concurrency",
            "8",
            "--artifact-dir",
            "out",
            "--profile-export-file",
            "foo",
            "--ui",
            "none",
            "--endpoint",
            "v2/x",
            "--num-warmup-requests",
            "3",
        ])
        .unwrap();
        assert_eq!(p.url, "http://127.0.0.1:9");
        assert_eq!(p.isl.mean, 32.0);
        assert_eq!(p.osl.unwrap().mean, 16.0);
        assert_eq!(p.num_dataset_entries, 7);
        assert_eq!(p.load.request_count, 40);
        assert_eq!(p.load.warmup_request_count, 3);
        assert_eq!(p.artifacts.run_dir, "out");
        assert_eq!(p.artifacts.prefix, "foo");
        assert_eq!(p.endpoint_path, "/v2/x");
        assert_eq!(p.ui, UiKind::None);
        // request count default is max(10, 2 × concurrency)
        let p = parse(&["profile", "--concurrency", "64"]).unwrap();
        assert_eq!(p.load.request_count, 128);
    }

    #[test]
    fn comma_lists_make_a_grid_sweep() {
        let argv: Vec<String> = [
            "inferbench",
            "profile",
            "--concurrency",
            "1,4",
            "--isl",
            "32,64,128",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let m = command_with_unbuilt().try_get_matches_from(&argv).unwrap();
        let Command::Profile(p) = Cli::from_arg_matches(&m).unwrap().command else {
            panic!("profile")
        };
        let c = cells(&p).unwrap();
        // 2 × 3 cells, concurrency outermost; only the swept flags name the cell.
        let names: Vec<String> = c.iter().map(|c| c.dir_name.clone().unwrap()).collect();
        assert_eq!(
            names,
            [
                "concurrency_1_isl_32",
                "concurrency_1_isl_64",
                "concurrency_1_isl_128",
                "concurrency_4_isl_32",
                "concurrency_4_isl_64",
                "concurrency_4_isl_128"
            ]
        );
        assert_eq!(c[4].values.concurrency, Some(4));
        assert_eq!(c[4].values.isl, 64);
        let plan = build_plan(&p, &argv, &c[4].values).unwrap();
        assert_eq!(plan.load.concurrency, 4);
        assert_eq!(plan.isl.mean, 64.0);
        // A plain run is one unnamed cell.
        let argv: Vec<String> = ["inferbench", "profile"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let m = command_with_unbuilt().try_get_matches_from(&argv).unwrap();
        let Command::Profile(p) = Cli::from_arg_matches(&m).unwrap().command else {
            panic!("profile")
        };
        let c = cells(&p).unwrap();
        assert_eq!(c.len(), 1);
        assert!(c[0].dir_name.is_none() && c[0].parameters.is_empty());
        assert_eq!(c[0].values.isl, 550);
    }

    #[test]
    fn extra_inputs_typed_and_json_merged_later_wins() {
        let m = parse_extra_inputs(&[
            "ignore_eos:true".into(),
            "min_tokens:16".into(),
            "temperature:0.5".into(),
            "stop:END".into(),
            r#"{"min_tokens": 8, "nvext": {"a": 1}}"#.into(),
        ])
        .unwrap();
        assert_eq!(m["ignore_eos"], serde_json::json!(true));
        assert_eq!(m["min_tokens"], serde_json::json!(8));
        assert_eq!(m["temperature"], serde_json::json!(0.5));
        assert_eq!(m["stop"], serde_json::json!("END"));
        assert_eq!(m["nvext"], serde_json::json!({"a": 1}));
        assert!(parse_extra_inputs(&["nocolon".into()]).is_err());
        assert!(parse_extra_inputs(&["{bad".into()]).is_err());
    }

    #[test]
    fn unbuilt_flags_are_errors_that_say_so() {
        let e = parse(&["profile", "--server-metrics", "http://x/metrics"]).unwrap_err();
        assert!(
            e.contains("--server-metrics") && e.contains("not implement"),
            "{e}"
        );
        let e = parse(&["profile", "--request-rate-series", "[]"]).unwrap_err();
        assert!(e.contains("--request-rate-series"), "{e}");
        let e = parse(&["profile", "--endpoint-type", "image_generation"]).unwrap_err();
        assert!(
            e.contains("image_generation") && e.contains("not implemented"),
            "{e}"
        );
    }

    #[test]
    fn invalid_values_name_the_flag() {
        for (args, flag) in [
            (vec!["profile", "--concurrency", "0"], "--concurrency"),
            (vec!["profile", "--request-count", "0"], "--request-count"),
            (
                vec!["profile", "--request-timeout-seconds", "-1"],
                "--request-timeout-seconds",
            ),
            (vec!["profile", "-u", "https://x", "-m", "m"], "https"),
            (vec!["profile", "-u", "127.0.0.1:1"], "--model"),
            (
                vec!["profile", "--isl", "0"],
                "--synthetic-input-tokens-mean",
            ),
            (
                vec![
                    "profile",
                    "-u",
                    "127.0.0.1:1",
                    "-m",
                    "m",
                    "--sim-ttft-ms",
                    "5",
                ],
                "--sim-ttft-ms",
            ),
            (vec!["profile", "--sim-itl-ms", "-1"], "--sim-itl-ms"),
        ] {
            let e = parse(&args).unwrap_err();
            assert!(e.contains(flag), "{args:?}: {e}");
        }
        let e = parse(&["profile", "--concurrency", "abc"]).unwrap_err();
        assert!(e.contains("--concurrency"), "{e}");
    }

    #[test]
    fn secrets_are_redacted_from_the_command_line_and_plan() {
        let argv: Vec<String> = [
            "inferbench",
            "profile",
            "--api-key",
            "sk-123",
            "-H",
            "Authorization:Bearer zzz",
            "-H",
            "X-Trace:1",
            "--api-key=sk-456",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let line = redacted_command_line(&argv);
        assert!(
            !line.contains("sk-123") && !line.contains("zzz") && !line.contains("sk-456"),
            "{line}"
        );
        assert!(line.contains("X-Trace:1"));
        let p = parse(&[
            "profile",
            "--api-key",
            "sk-123",
            "-H",
            "Authorization:Bearer zzz",
        ])
        .unwrap();
        let json = serde_json::to_string(&p).unwrap();
        assert!(!json.contains("sk-123") && !json.contains("zzz"), "{json}");
        assert_eq!(p.api_key.as_ref().unwrap().expose(), "sk-123");
    }
}
