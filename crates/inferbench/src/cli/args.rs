//! The clap schema of every subcommand but `profile` (see `profile_args.rs`), and the
//! value enums the flags take.

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::ProfileArgs;

/// `--version`: the version, the commit it was built from and the build profile.
pub const VERSION_LINE: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("INFERBENCH_GIT_COMMIT"),
    ", ",
    env!("INFERBENCH_BUILD_PROFILE"),
    " build)"
);

#[derive(Parser, Debug)]
#[command(
    name = "inferbench",
    version = VERSION_LINE,
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
    /// Chat with an endpoint one message at a time (AIPerf's `chat`), printing each reply as
    /// it streams and its TTFT, TPS and ITL (the built-in simulated server with no --url).
    Chat(Box<super::ChatArgs>),
    /// Send one request (or --count N) of the workload and show, event by event, how the
    /// response was read: validate an endpoint adapter before generating load.
    Inspect(Box<InspectArgs>),
    /// Set every legacy metric of a run next to its counterpart under another definition
    /// set, with the evidence that decides whether the mapping holds.
    Crosswalk(CrosswalkArgs),
    /// Keep a ledger of baseline epochs: runs as content-addressed packets, epochs, pinned
    /// baselines, in a hash-chained file that diffs well in git (docs/ledger.md).
    Ledger(LedgerArgs),
    /// Grade every metric of a run (ours, or a GenAI-Perf or AIPerf directory):
    /// reference, comparable, insufficient or unusable, with the field behind each downgrade.
    Grade(GradeArgs),
    /// Compare a candidate with a baseline, metric by metric: an interval of the difference
    /// against a declared margin, a verdict per metric (equivalent, better, worse,
    /// inconclusive), Holm across metrics. Exit 1 when a metric is worse.
    Compare(CompareArgs),
    /// Pass or fail runs against a written gate specification: PASS, FAIL, INCONCLUSIVE
    /// (with the sample size that would decide) or INVALID (a precondition failed).
    Gate(Box<super::GateArgs>),
    /// The traffic matrix as an acceptance plan: regression, service load and trace replay,
    /// each run, recorded and gated separately.
    Plan(super::PlanArgs),
    /// The migration packet from a ledger: what was preserved, validated, conditional, new.
    Bridge(super::BridgeArgs),
    /// Is the client sufficient? The same workload at a ladder of client worker counts,
    /// repeated and interleaved, judged on the server's own output-token counter and the
    /// client's evidence: CLIENT_SUFFICIENT, CLIENT_LIMITED, SERVER_SATURATED or
    /// INCONCLUSIVE (docs/qualify.md).
    Qualify(Box<super::QualifyArgs>),
    /// AIPerf YAML configs: `config validate FILE` (the schema, and whether inferbench runs
    /// it) and `config expand FILE` (the cells its sweep would run).
    Config(super::ConfigArgs),
    /// ISL/OSL and theoretical prefix-cache statistics of a Mooncake trace (AIPerf's
    /// analyze-trace).
    AnalyzeTrace(crate::trace_cmd::AnalyzeTraceArgs),
    /// Check a dataset file: `validate mooncake-trace FILE`.
    Validate(crate::trace_cmd::ValidateArgs),
    /// The SPEED-Bench matrix (AIPerf's speed-bench-report): a row per model, a column per
    /// category, from runs that each ran one category: acceptance length or rate (server
    /// metrics) or output token throughput.
    SpeedBenchReport(crate::speed_bench_cmd::SpeedBenchReportArgs),
    /// Post-run views of a run directory (AIPerf's `analyze`): `analyze swim-lane` (session
    /// lanes and concurrency, PNG and HTML) and `analyze turn-messages` (each turn's input
    /// messages, HTML).
    Analyze(crate::analyze_cmd::AnalyzeArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout, e.g.
    /// `inferbench completions bash > /etc/bash_completion.d/inferbench`.
    Completions(CompletionsArgs),
    /// Print the man page (roff) to stdout, or with --out-dir write one page per command.
    Man(ManArgs),
    /// Merge the shards of a sharded run (`profile --shard-count N`) into one run directory:
    /// offsets applied, every metric recomputed, the window's clock bound stated.
    Merge(super::MergeArgs),
    /// Answer clock-offset exchanges (UDP) for shards' `--time-reference`.
    TimeServer(super::TimeServerArgs),
    /// Kubernetes manifests for a sharded run (`kube render`).
    Kube(super::KubeArgs),
    /// Charts of one or more runs as SVG and PNG: TTFT, ITL and latency over time with rolling
    /// percentiles, latency CDFs, throughput, concurrency and schedule lag (docs/reports.md).
    Plot(PlotArgs),
    /// One self-contained HTML report of one or more runs: identity, console tables, charts,
    /// crosswalk, grade, gate verdicts, and a comparison for several (docs/reports.md).
    Report(ReportArgs),
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Run directories (a run, repeated runs, a sweep, an import, a merged sharded run).
    #[arg(required = true)]
    pub dirs: Vec<std::path::PathBuf>,
    /// The HTML file to write.
    #[arg(long, value_name = "OUT.html")]
    pub html: std::path::PathBuf,
    /// Evaluate this gate specification (TOML; docs/gate.md) on each directory.
    #[arg(long, value_name = "SPEC")]
    pub gate: Option<std::path::PathBuf>,
    /// Tokenizer for imported runs whose files keep texts but no counts (`builtin` or a
    /// path; default: the run's own).
    #[arg(long)]
    pub tokenizer: Option<String>,
}

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// Run directories (several are overlaid).
    #[arg(required = true)]
    pub dirs: Vec<std::path::PathBuf>,
    /// Where the chart files go (default: DIR/plots of the first directory).
    #[arg(long = "out-dir")]
    pub out_dir: Option<std::path::PathBuf>,
    /// Which files to write for each chart: svg, png (1440×800 RGB) or both.
    #[arg(long, value_enum, default_value_t = PlotFormat::Both)]
    pub format: PlotFormat,
    /// An AIPerf plot configuration (its `plot_config.yaml` shape): draw its specifications
    /// instead of inferbench's charts, single-run ones into each RUN/plots and multi-run ones
    /// (over every run given) into the output directory.
    #[arg(long = "config", short = 'c')]
    pub config: Option<std::path::PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum PlotFormat {
    Svg,
    Png,
    Both,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write inferbench.1 and one page per subcommand (inferbench-profile.1, …) here
    /// instead of printing the main page.
    #[arg(long = "out-dir", value_name = "DIR")]
    pub out_dir: Option<std::path::PathBuf>,
}

#[derive(Args, Debug)]
pub struct GradeArgs {
    /// A run directory (inferbench, or a GenAI-Perf or AIPerf artifact directory).
    pub dir: std::path::PathBuf,
    /// Definition set whose metrics are graded (default: the run's own).
    #[arg(long, long_help = definitions_help())]
    pub definitions: Option<String>,
    /// Also write the grade as JSON to this file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
    /// Tokenizer for imported runs whose files keep texts but no counts (`builtin` or a
    /// path; default: the run's own).
    #[arg(long)]
    pub tokenizer: Option<String>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// BASE CAND: the baseline and the candidate run directories (or use --baseline and
    /// --candidate). A --num-profile-runs directory contributes its N runs.
    #[arg(value_name = "DIR", num_args = 0..=2)]
    pub dirs: Vec<std::path::PathBuf>,
    /// A baseline directory (repeatable, for a set of runs).
    #[arg(long = "baseline", value_name = "DIR")]
    pub baseline: Vec<std::path::PathBuf>,
    /// A candidate directory (repeatable).
    #[arg(long = "candidate", value_name = "DIR")]
    pub candidate: Vec<std::path::PathBuf>,
    /// Score both sides under this definition set (default: the runs' own set).
    #[arg(long)]
    pub definitions: Option<String>,
    /// METRIC[.STAT]=±VALUE, e.g. time_to_first_token.p99=±5%, request_error_rate=±1.5pp,
    /// inter_token_latency.avg=±0.5ms (repeatable). Without any, documented defaults apply.
    #[arg(long = "margin", value_name = "METRIC[.STAT]=±VALUE")]
    pub margin: Vec<String>,
    /// A file of margins, one METRIC[.STAT]=±VALUE per line (# comments).
    #[arg(long = "margins", value_name = "FILE")]
    pub margins: Option<std::path::PathBuf>,
    /// Goodput SLOs in the set's --goodput syntax: adds goodput attainment (a fraction).
    #[arg(long)]
    pub goodput: Option<String>,
    /// Compare even when the runs' contract pins (epochs) differ; the differing pins are shown.
    #[arg(long = "allow-epoch-change")]
    pub allow_epoch_change: bool,
    /// One-sided level of each test; intervals are two-sided 1 − 2α.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Bootstrap resamples for single-run comparisons.
    #[arg(long, default_value_t = 2000)]
    pub resamples: usize,
    /// Write the comparison as JSON (docs/schemas/compare.schema.json).
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,
    /// Write the comparison as Markdown.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<std::path::PathBuf>,
    /// Tokenizer for imported runs whose files keep texts but no counts.
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// Record the comparison in this ledger (a `comparison.record` entry). Sides may then be
    /// run cids (or packet ids); a side given as a directory must be in the ledger.
    #[arg(long, value_name = "DIR")]
    pub ledger: Option<std::path::PathBuf>,
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
    // AIPerf's names match in any case (`ignore_case` on the flag) and with `-` for `_`
    // (these aliases), as AIPerf normalizes its enum and plugin names.
    Chat,
    Completions,
    // Every AIPerf endpoint type; the three not built (image_edit, video_generation,
    // solido_rag) are accepted by name so that the error says why instead of "invalid value".
    Responses,
    Messages,
    Embeddings,
    #[value(alias = "chat-embeddings")]
    ChatEmbeddings,
    #[value(alias = "nim-embeddings")]
    NimEmbeddings,
    #[value(alias = "nim-rankings")]
    NimRankings,
    #[value(alias = "hf-tei-rankings")]
    HfTeiRankings,
    #[value(alias = "cohere-rankings")]
    CohereRankings,
    #[value(alias = "huggingface-generate")]
    HuggingfaceGenerate,
    #[value(alias = "image-generation")]
    ImageGeneration,
    #[value(alias = "image-edit")]
    ImageEdit,
    #[value(alias = "video-generation")]
    VideoGeneration,
    #[value(alias = "audio-transcription")]
    AudioTranscription,
    #[value(alias = "image-retrieval")]
    ImageRetrieval,
    #[value(alias = "solido-rag")]
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
pub enum EvidenceCompressionArg {
    None,
    Zstd,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum UiArg {
    Dashboard,
    Simple,
    None,
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
    /// A fault at a percentage of inference requests, `KIND=PERCENT`, repeatable (kinds:
    /// http-500, http-429, cut-mid-event, malformed-json, no-done, no-usage, slow-head,
    /// stall, reset, trickle, drop; docs/faults.md). No request gets two: after --error-rate's,
    /// each kind takes its percentage from the requests the earlier left (at most 100 in all).
    #[arg(long = "fault")]
    pub fault: Vec<String>,
    /// Close the connection after every inference response, advertising
    /// `Keep-Alive: timeout=5, max=100` and sending no `Connection: close` (llama.cpp's way).
    #[arg(long = "close-after-response")]
    pub close_after_response: bool,
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
    /// Answer the questions of this single_turn/multi_turn JSONL file (each row with an
    /// `answer`, docs/correctness.md) instead of sending filler words.
    #[arg(long = "answer-key", value_name = "FILE")]
    pub answer_key: Option<String>,
    /// Fraction of the key's questions answered right, 0–1 (needs --answer-key; default 1).
    #[arg(long = "answer-accuracy")]
    pub answer_accuracy: Option<f64>,
    /// Requests run at once; later ones wait in a FIFO queue (default: no limit).
    #[arg(long = "max-running", value_name = "N")]
    pub max_running: Option<u32>,
    /// Output tokens per second the whole running batch shares: each stream's gap is
    /// max(--itl-ms, running / this) (default: no limit).
    #[arg(long = "decode-tokens-per-s", value_name = "TOKENS")]
    pub decode_tokens_per_s: Option<f64>,
    /// Prefill cost per input token (usage.prompt_tokens), µs, added to the first token.
    #[arg(
        long = "prefill-us-per-token",
        value_name = "US",
        default_value_t = 0.0
    )]
    pub prefill_us_per_token: f64,
    /// Every /metrics counter and histogram restarts from zero this many seconds after the
    /// first token the server emitted, as after a process restart (a fault for testing reset
    /// handling).
    #[arg(long = "metrics-reset-after", value_name = "SECONDS")]
    pub metrics_reset_after: Option<f64>,
    /// Simulated GPUs on the DCGM exporter page (/dcgm/metrics).
    #[arg(long = "gpus", value_name = "N", default_value_t = 1)]
    pub gpus: u32,
    /// Serve HTTPS with this certificate chain (PEM, leaf first); needs --tls-key.
    #[arg(long = "tls-cert", value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<String>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long = "tls-key", value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<String>,
    /// Require a client certificate signed by a CA of this PEM file (mutual TLS).
    #[arg(long = "tls-client-ca", value_name = "FILE", requires = "tls_cert")]
    pub tls_client_ca: Option<String>,
    /// Let hyper gather ready SSE events into one socket write (default: each event is a
    /// write of its own, as vLLM and llama.cpp flush every token).
    #[arg(long)]
    pub coalesce: bool,
}

#[derive(Args, Debug)]
pub struct MetricsArgs {
    /// A run directory written by `inferbench profile`.
    pub dir: std::path::PathBuf,
    /// Definition set to score under (the list: `--help`). Default: aiperf-0.13 for an
    /// inferbench run, the tool's own set for an imported one.
    #[arg(long, long_help = definitions_help())]
    pub definitions: Option<String>,
    /// Rewrite the summary files (JSON, CSV, console) from the recomputed metrics.
    #[arg(long)]
    pub write: bool,
    /// Write the summary in a tool's own file shape: `aiperf` (profile_export_aiperf.json
    /// and .csv), `genai-perf` (profile_export_genai_perf.json and .csv), or `json`
    /// (inferbench_summary.json: any definition set's metrics, per-metric shape).
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
    /// Write AIPerf's timeslice files, SECONDS per slice, from the evidence (implies
    /// `--write`: the manifest then lists them).
    #[arg(long = "slice-duration", value_name = "SECONDS")]
    pub slice_duration: Option<f64>,
}

/// `--definitions`'s long help, from the one registry of definition sets.
fn definitions_help() -> String {
    format!(
        "Definition set to score under. Default: aiperf-0.13 for an inferbench run, the tool's own set for an imported one.\n\n{}",
        inferbench_metrics::help_text()
    )
}

#[derive(Args, Debug)]
pub struct LedgerArgs {
    /// The ledger directory (holds ledger.jsonl, packets/, epochs/).
    #[arg(long, default_value = "ledger", global = true)]
    pub ledger: std::path::PathBuf,
    /// Who writes the entry (default: $USER).
    #[arg(long, global = true)]
    pub by: Option<String>,
    #[command(subcommand)]
    pub command: LedgerCommand,
}

#[derive(Subcommand, Debug)]
pub enum LedgerCommand {
    /// Create DIR/ledger.jsonl (with a first ledger.init entry), packets/ and epochs/.
    Init {
        /// The ledger directory (default: --ledger).
        dir: Option<std::path::PathBuf>,
    },
    /// Add a run of ours (or each run of a --num-profile-runs directory) as a packet and a
    /// run.record entry.
    Add {
        run: std::path::PathBuf,
        /// Declare an identity pin the run cannot show, KEY=VALUE (repeatable).
        #[arg(long = "declare", value_name = "KEY=VALUE")]
        declare: Vec<String>,
    },
    /// Import a GenAI-Perf or AIPerf artifact directory (its files kept byte for byte) as a
    /// packet and a run.import entry.
    Import {
        dir: std::path::PathBuf,
        /// Declare an identity pin the artifact cannot show, KEY=VALUE (repeatable).
        #[arg(long = "declare", value_name = "KEY=VALUE")]
        declare: Vec<String>,
        /// Tokenizer for texts without counts (`builtin` or a path).
        #[arg(long)]
        tokenizer: Option<String>,
    },
    /// Epochs: `epoch declare`.
    Epoch {
        #[command(subcommand)]
        command: LedgerEpochCommand,
    },
    /// Baselines: `baseline pin`.
    Baseline {
        #[command(subcommand)]
        command: LedgerBaselineCommand,
    },
    /// The seed's decision for a candidate run against the pinned baseline, with the pins
    /// that decided.
    Decide {
        run_cid: String,
        /// The epoch whose baseline to decide against (default: the run's own, by fingerprint).
        #[arg(long)]
        against: Option<String>,
    },
    /// The head, the epochs, the pinned baselines and the runs with their tiers.
    Show,
    /// One line per entry.
    Log,
    /// Recompute every content id, hash, the chain and every packet; exit 1 on a problem.
    Verify,
    /// After a git merge of two branches that both appended: keep both sides' entries and
    /// re-link the chain.
    Merge,
}

#[derive(Subcommand, Debug)]
pub enum LedgerEpochCommand {
    /// Declare an epoch from a run's pins; the decision against --parent is computed.
    Declare {
        #[arg(long)]
        name: String,
        /// The run (its cid) whose pins define the epoch.
        #[arg(long = "from", value_name = "RUN_CID")]
        from: String,
        #[arg(long)]
        parent: Option<String>,
        #[arg(long)]
        reason: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum LedgerBaselineCommand {
    /// Pin runs of an epoch as its baseline (they must carry its fingerprint and a grade
    /// that can gate).
    Pin {
        #[arg(long)]
        epoch: String,
        #[arg(value_name = "RUN_CID", required = true)]
        runs: Vec<String>,
        #[arg(long)]
        purpose: Option<String>,
        /// Pin runs graded `comparable` too (recorded in the entry).
        #[arg(long = "allow-comparable")]
        allow_comparable: bool,
    },
}
