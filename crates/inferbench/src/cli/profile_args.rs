//! `profile`'s flags (shared by `inspect`), with AIPerf's names, aliases and defaults.

use clap::{ArgAction, Args};

use super::{ArrivalArg, EndpointArg, EvidenceCompressionArg, ExportLevelArg, UiArg};

#[derive(Args, Debug)]
pub struct ProfileArgs {
    // ---- Endpoint (AIPerf §1.1)
    /// Model name(s); comma lists allowed. Default with the simulated server: mock-model.
    #[arg(short = 'm', long = "model", visible_alias = "model-names", value_delimiter = ',', action = ArgAction::Append)]
    pub model: Vec<String>,
    /// Server base URL(s); repeat the flag, list several after it, or give a comma list (as
    /// AIPerf takes them). Without it, the built-in simulated server is started on 127.0.0.1.
    #[arg(short = 'u', long = "url", action = ArgAction::Append, num_args = 1.., value_delimiter = ',')]
    pub url: Vec<String>,
    #[arg(
        long = "endpoint-type",
        value_enum,
        ignore_case = true,
        default_value = "chat"
    )]
    pub endpoint_type: EndpointArg,
    /// URL path overriding the endpoint type's default (e.g. /v1/chat/completions).
    #[arg(long = "custom-endpoint", visible_alias = "endpoint")]
    pub custom_endpoint: Option<String>,
    /// Stream responses (SSE), so that TTFT and ITL are measured. Default: on with the
    /// built-in simulated server, off with --url (AIPerf's default). Ignored, with a warning,
    /// by endpoint types that do not stream (embeddings, rankings).
    #[arg(long, conflicts_with = "no_streaming")]
    pub streaming: bool,
    /// Do not stream, also with the built-in simulated server. Not an AIPerf flag.
    #[arg(long = "no-streaming")]
    pub no_streaming: bool,
    /// Sent as `Authorization: Bearer <key>`. Never written to an artifact or a log.
    #[arg(long = "api-key", env = "INFERBENCH_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Extra header, `Name:Value` or a JSON object. Repeatable.
    #[arg(short = 'H', long = "header", action = ArgAction::Append, num_args = 1..)]
    pub header: Vec<String>,
    /// Split `<think>…</think>` in content into reasoning (`think`): for servers that send a
    /// reasoning model's thoughts inline. Not an AIPerf flag.
    #[arg(long = "reasoning-tags", value_parser = super::values::named(["think"]), ignore_case = true)]
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
    /// Ask streamed chat responses for usage on every chunk
    /// (`stream_options.continuous_usage_stats`); ITL then subtracts the first content
    /// chunk's reported token count instead of 1. Needs --use-server-token-count, chat,
    /// and streaming.
    #[arg(long = "per-chunk-usage")]
    pub per_chunk_usage: bool,

    // ---- Tokenizer (§1.2)
    /// `builtin` (tiktoken o200k_base, the default), a tokenizer.json, or a directory holding one.
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Count ISL through the tokenizer directory's chat template, and shorten synthetic
    /// prompts by the template's own tokens (AIPerf's flag; docs/workload.md).
    #[arg(long = "apply-chat-template")]
    pub apply_chat_template: bool,

    // ---- Prompts (§1.4, §1.5)
    /// Input tokens per prompt; a comma list makes a sweep.
    #[arg(long = "synthetic-input-tokens-mean", visible_aliases = ["prompt-input-tokens-mean", "isl"], value_delimiter = ',', default_value = "550")]
    pub isl: Vec<u64>,
    #[arg(long = "synthetic-input-tokens-stddev", visible_aliases = ["prompt-input-tokens-stddev", "isl-stddev"], value_delimiter = ',', default_value = "0")]
    pub isl_stddev: Vec<f64>,
    /// Output tokens requested (max_completion_tokens); a comma list makes a sweep.
    #[arg(long = "output-tokens-mean", visible_aliases = ["prompt-output-tokens-mean", "osl"], value_delimiter = ',')]
    pub osl: Vec<u64>,
    #[arg(long = "output-tokens-stddev", visible_aliases = ["prompt-output-tokens-stddev", "osl-stddev"], value_delimiter = ',', default_value = "0")]
    pub osl_stddev: Vec<f64>,
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
    /// A public dataset read from a local file (no download): `sharegpt`, or a text one
    /// (aimo, spec_bench, spec_al_*, instruct_coder, blazedit_*) exported as JSON Lines; give
    /// the file with --public-dataset-path or --input-file.
    #[arg(long = "public-dataset")]
    pub public_dataset: Option<String>,
    /// The local file of --public-dataset.
    #[arg(long = "public-dataset-path")]
    pub public_dataset_path: Option<String>,
    /// sequential, random or shuffle (default: sequential for files, shuffle for synthetic).
    #[arg(long = "dataset-sampling-strategy", value_parser = super::values::named(["sequential", "random", "shuffle"]), ignore_case = true)]
    pub dataset_sampling_strategy: Option<String>,
    /// Let a sequential dataset start over when a run asks for more requests than it holds.
    #[arg(long = "allow-dataset-wrap")]
    pub allow_dataset_wrap: bool,
    /// Drop a trace's timestamps and delays.
    #[arg(long = "ignore-trace-delays")]
    pub ignore_trace_delays: bool,
    /// weka_trace/tracelab: wait each request's recorded think_time, not the idle gap.
    #[arg(long = "use-think-time-only")]
    pub use_think_time_only: bool,
    /// weka_trace: drop traces whose largest request (input + output tokens) exceeds this.
    #[arg(long = "max-context-length")]
    pub max_context_length: Option<u64>,
    /// Tokens per hash_id block of a mooncake trace (default 512).
    #[arg(
        long = "isl-block-size",
        visible_aliases = ["prompt-input-tokens-block-size", "synthetic-input-tokens-block-size"]
    )]
    pub isl_block_size: Option<u64>,
    /// (ISL, OSL) mixture, e.g. `128,64:60;512,256:40` (percent weights).
    #[arg(long = "seq-dist", visible_alias = "sequence-distribution")]
    pub seq_dist: Option<String>,
    /// Input lengths as a JSON distribution in AIPerf's config shapes, e.g.
    /// `{"mean":1024,"median":904}` (log-normal); replaces --isl (docs/workload.md).
    #[arg(long = "isl-dist", conflicts_with_all = ["isl", "isl_stddev", "seq_dist", "random_range_ratio"])]
    pub isl_dist: Option<String>,
    /// Output lengths as a JSON distribution, as --isl-dist; replaces --osl.
    #[arg(long = "osl-dist", conflicts_with_all = ["osl", "osl_stddev", "seq_dist", "random_range_ratio"])]
    pub osl_dist: Option<String>,
    /// Uniform window around --isl/--osl: a ratio, or `{"input":r,"output":r}`.
    #[arg(long = "random-range-ratio")]
    pub random_range_ratio: Option<String>,
    /// vllm or sglang (how --random-range-ratio makes its window).
    #[arg(long = "random-corpus-style", value_parser = super::values::named(["vllm", "sglang"]), ignore_case = true)]
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
        value_delimiter = ',',
        default_value = "1"
    )]
    pub conversation_turn_mean: Vec<f64>,
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
    #[arg(
        long = "request-count",
        visible_alias = "num-requests",
        value_delimiter = ','
    )]
    pub request_count: Vec<u64>,
    #[arg(long = "warmup-request-count", visible_alias = "num-warmup-requests")]
    pub warmup_request_count: Option<u64>,
    /// Warmup sessions: the warmup starts no new session after this many, and those started
    /// send all their turns (with --warmup-request-count or --warmup-duration too, the first
    /// limit reached ends the warmup's issuing).
    #[arg(long = "num-warmup-sessions")]
    pub num_warmup_sessions: Option<u64>,
    /// Profiling sessions: the profiling phase starts no new session after this many, and
    /// those started send all their turns (AIPerf's YAML `profiling.sessions`, which has no
    /// AIPerf flag; with --request-count or --benchmark-duration the first limit reached
    /// ends the issuing).
    #[arg(long = "num-profiling-sessions")]
    pub num_profiling_sessions: Option<u64>,
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
        ignore_case = true,
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
    #[arg(
        long = "benchmark-duration",
        allow_negative_numbers = true,
        value_delimiter = ','
    )]
    pub benchmark_duration: Vec<f64>,
    /// Seconds in-flight requests may still finish after --benchmark-duration (`inf`: wait).
    #[arg(long = "benchmark-grace-period", default_value = "30")]
    pub benchmark_grace_period: String,
    /// Requests per second of all users together, each user waiting for its previous
    /// request (LMBenchmark-style); needs --num-users.
    #[arg(long = "user-centric-rate", allow_negative_numbers = true)]
    pub user_centric_rate: Option<f64>,
    /// Users of --user-centric-rate.
    #[arg(long = "num-users", value_delimiter = ',')]
    pub num_users: Vec<usize>,
    /// A user-centric warmup: its rate over all users (AIPerf's YAML warmup phase of
    /// `type: user_centric`, which has no AIPerf flag); needs --warmup-num-users.
    #[arg(long = "warmup-user-centric-rate", allow_negative_numbers = true, conflicts_with_all = ["warmup_request_rate", "warmup_concurrency"])]
    pub warmup_user_centric_rate: Option<f64>,
    /// Users of --warmup-user-centric-rate.
    #[arg(long = "warmup-num-users")]
    pub warmup_num_users: Option<usize>,
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
    #[arg(long = "prefill-concurrency", value_delimiter = ',')]
    pub prefill_concurrency: Vec<usize>,
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
        ignore_case = true,
        default_value = "records"
    )]
    pub export_level: ExportLevelArg,
    /// Add AIPerf's `trace_data` (the HTTP phases' instants and chunks) to each
    /// `profile_export.jsonl` line (docs/timing.md, "HTTP phases").
    #[arg(long)]
    pub export_http_trace: bool,
    /// Store the raw evidence as zstd frames, `inferbench_evidence.jsonl.zst` (about a
    /// tenth of the bytes; every command reads it back), or `none`: plain JSON Lines, which
    /// `grep`, `jq` and `tail -f` read as is (the default).
    #[arg(
        long = "evidence-compression",
        value_enum,
        value_name = "none|zstd",
        default_value = "none"
    )]
    pub evidence_compression: EvidenceCompressionArg,
    /// Seconds per timeslice: also write AIPerf's `profile_export_aiperf_timeslices.json`
    /// and `.csv`, every metric per window of this length (docs/reports.md). Off by default.
    #[arg(long = "slice-duration", value_name = "SECONDS")]
    pub slice_duration: Option<f64>,
    #[arg(
        long = "ui-type",
        visible_alias = "ui",
        value_enum,
        ignore_case = true,
        default_value = "dashboard"
    )]
    pub ui: UiArg,

    // ---- Identity (inferbench only; docs/identity.md)
    /// Declare a pin of the run's identity, `KEY=VALUE` (repeatable): image, image_digest,
    /// model_revision, precision, runtime_args, parallelism, gpu_inventory, cache_procedure,
    /// client_placement, profile, … or note.NAME. Recorded in the manifest with its provenance.
    #[arg(long = "declare", value_name = "KEY=VALUE", action = ArgAction::Append)]
    pub declare: Vec<String>,
    /// A TOML file of declarations: a flat table of the same keys, values of any TOML type.
    #[arg(long = "identity", value_name = "FILE.toml")]
    pub identity: Option<String>,

    // ---- The built-in simulated server (inferbench only; used when --url is absent)
    /// Time to first token of the simulated server, ms (default 20; only without --url).
    #[arg(long = "sim-ttft-ms", allow_negative_numbers = true)]
    pub sim_ttft_ms: Option<f64>,
    /// Inter-token latency of the simulated server, ms (default 5; only without --url).
    #[arg(long = "sim-itl-ms", allow_negative_numbers = true)]
    pub sim_itl_ms: Option<f64>,
    /// Percent of requests the simulated server fails with HTTP 500, 0–100 (default 0; only
    /// without --url; as mock-server --error-rate): fault injection for goodput and gates.
    #[arg(long = "sim-error-rate")]
    pub sim_error_rate: Option<f64>,
    /// Fraction of questions the simulated server answers right, 0–1 (only without --url):
    /// it answers the dataset's expected answers (`answer` on its rows, docs/correctness.md),
    /// right with this probability per question, deterministically from the run's seed.
    #[arg(long = "sim-answer-accuracy")]
    pub sim_answer_accuracy: Option<f64>,

    // ---- Server metrics, GPU telemetry, workers, the simulated server's capacity
    #[command(flatten)]
    pub telemetry: super::telemetry_args::TelemetryArgs,

    // ---- HTTPS
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
    // ---- Several URLs and models
    #[command(flatten)]
    pub routing: super::routing_args::RoutingArgs,
    // ---- Connection reuse, resends, the simulated server's faults
    #[command(flatten)]
    pub connection: super::connection_args::ConnectionArgs,
    // ---- Server controls and extra exports
    #[command(flatten)]
    pub controls: super::controls_args::ControlsArgs,
    // ---- A shard of a frozen schedule, its start and clock (docs/scale-out.md)
    #[command(flatten)]
    pub shard: super::shard_args::ShardArgs,
    // ---- The YAML config, sweep shape, seeds, tokenizer and service flags (issue 14)
    #[command(flatten)]
    pub aiperf: super::aiperf_args::AiperfArgs,
    // ---- Synthetic images, audio and video (docs/datasets.md)
    #[command(flatten)]
    pub media: super::media_args::MediaArgs,
    // ---- Trace synthesis and replay controls (docs/datasets.md)
    #[command(flatten)]
    pub replay: super::replay_args::ReplayArgs,
    // ---- Server profiler, log level, stats interval, auto-plot, trace timing, transport
    #[command(flatten)]
    pub service: super::service_args::ServiceArgs,
}
