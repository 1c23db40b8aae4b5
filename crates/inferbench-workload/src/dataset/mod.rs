//! Datasets: synthetic (with AIPerf's extras and multi-turn sessions) or read from a file
//! (AIPerf's custom dataset types, GenAI-Perf's `inputs.json`, ShareGPT and the text public
//! datasets from a local file),
//! all turned into the frozen [`Workload`] through one entry point, [`build_workload`].
//! See `docs/datasets.md`.
//!
//! Every loader produces [`Conv`]ersations of [`TurnSpec`]s; [`assemble`] renders each turn's
//! body with [`build_turn_body`] and counts its input tokens. A file is read and validated
//! whole before anything is returned.

mod agentic;
mod answer_key;
mod baseten;
mod columnar;
mod custom;
mod dag;
mod detect;
mod error;
mod gz;
mod length_shape;
mod media_rows;
mod mooncake;
mod public;
mod row;
mod sagemaker;
mod seq_dist;
mod sharegpt;
mod speed_bench;
pub(crate) mod synth;
mod synthesis;
mod trace_check;
mod tracelab;
mod traces;
mod verbatim;
mod weka;

use std::ops::Range;
use std::path::Path;

use inferbench_core::plan::{EndpointType, RunPlan};
use inferbench_core::workload::{Payload, Workload};
use serde_json::{Map, Value, json};

use crate::corpus::{Corpus, PromptCorpus};
use crate::error::WorkloadError;
use crate::render::{TurnInput, build_turn_body, count_input_tokens, max_output_tokens};
use crate::sampler::SamplingStrategy;
use crate::synthetic::resolve_seed;
use crate::tokenizer::Tokenizer;

pub use answer_key::{KeyQuestion, read_answer_key};
pub use baseten::{BASETEN_BLOCK_SIZE, check_baseten_bytes};
pub use detect::detect;
pub use error::DatasetError;
pub use length_shape::LengthShape;
pub use seq_dist::{RangeRatio, SeqDist, SeqPair};
pub use trace_check::{
    MetricStats, TraceAnalysis, analyze_trace, check_trace_text, validate_mooncake_trace,
};
pub use traces::BAILIAN_BLOCK_SIZE;

/// Purpose labels of the dataset generators added here (see `crate::synthetic::rng_for`).
pub mod purpose {
    /// Turns per synthetic conversation.
    pub const TURNS: &str = "dataset.turns";
    /// Delay before each later synthetic turn.
    pub const TURN_DELAY: &str = "dataset.turn_delay";
    /// `--seq-dist` pair choices (and their stddev draws).
    pub const SEQ_DIST: &str = "dataset.seq_dist";
    /// `--random-range-ratio` input lengths; output lengths use `dataset.osl`.
    pub const RANGE_ISL: &str = "dataset.isl";
    /// Texts of the prefix pool.
    pub const PREFIX_POOL: &str = "dataset.prefix_pool";
    /// Which prefix each prompt gets.
    pub const PREFIX_PICK: &str = "dataset.prefix";
    /// The shared system prompt's text.
    pub const SYSTEM: &str = "dataset.system";
    /// The per-conversation user-context texts.
    pub const USER_CONTEXT: &str = "dataset.user_context";
    /// Rankings: passages per request, query and passage lengths.
    pub const RANKINGS: &str = "dataset.rankings";
    /// `hash_ids` block texts and their tail padding.
    pub const HASH_BLOCKS: &str = "dataset.hash_blocks";
    /// `random_pool` draws.
    pub const RANDOM_POOL: &str = "dataset.random_pool";
    /// ShareGPT order (vLLM shuffles before filtering).
    pub const SHAREGPT: &str = "dataset.sharegpt";
    /// `--synthesis-prefix-root-multiplier`: the prefix tree of each trace row.
    pub const SYNTHESIS: &str = "dataset.synthesis.synthesizer";
}

/// Default `--isl-block-size` for `mooncake_trace`.
pub const DEFAULT_BLOCK_SIZE: u64 = 512;
/// Default `--conversation-num` for `random_pool`.
pub const DEFAULT_POOL_CONVERSATIONS: usize = 100;

/// The dataset kinds `build_workload` can make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DatasetKind {
    Synthetic,
    SingleTurn,
    MultiTurn,
    RandomPool,
    MooncakeTrace,
    RawPayload,
    /// AIPerf's `inputs.json` (`data[].session_id`, `payloads[]`).
    InputsJson,
    /// GenAI-Perf's `inputs.json` (`data[].payload[]`), also read under `inputs_json`.
    GenaiPerfInputs,
    ShareGpt,
    /// A text `--public-dataset` besides ShareGPT (AIMO, Spec-Bench, MT-Bench, InstructCoder,
    /// Blazedit, …), read from a local export.
    PublicText,
    /// Alibaba Bailian's JSONL trace (`chat_id`, `parent_chat_id`, seconds, 16-token blocks).
    BailianTrace,
    /// BurstGPT's CSV (`Timestamp`, `Request tokens`, `Response tokens`).
    BurstGptTrace,
    /// Baseten completion traces: Parquet or Arrow IPC rows with literal prompts.
    BasetenTrace,
    /// NVIDIA SPEED-Bench JSONL (`speed_bench_*` types: a split, or one category of it).
    SpeedBench,
    /// Amazon SageMaker data capture JSONL (literal chat messages at their recorded times).
    SagemakerDataCapture,
    /// WEKA kv-cache-tester agentic traces (a JSON document per trace, subagents as child
    /// sessions).
    WekaTrace,
    /// TraceLab agentic-coding JSONL (gzip allowed), converted to WEKA traces.
    Tracelab,
    /// A conversation per line whose turns `spawns`/`forks` other conversations.
    DagJsonl,
}

impl DatasetKind {
    /// The `--custom-dataset-type` values accepted (AIPerf's names, plus
    /// `genai_perf_inputs`).
    pub const CUSTOM: [DatasetKind; 7] = [
        DatasetKind::SingleTurn,
        DatasetKind::MultiTurn,
        DatasetKind::RandomPool,
        DatasetKind::MooncakeTrace,
        DatasetKind::RawPayload,
        DatasetKind::InputsJson,
        DatasetKind::GenaiPerfInputs,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DatasetKind::Synthetic => "synthetic",
            DatasetKind::SingleTurn => "single_turn",
            DatasetKind::MultiTurn => "multi_turn",
            DatasetKind::RandomPool => "random_pool",
            DatasetKind::MooncakeTrace => "mooncake_trace",
            DatasetKind::RawPayload => "raw_payload",
            DatasetKind::InputsJson => "inputs_json",
            DatasetKind::GenaiPerfInputs => "genai_perf_inputs",
            DatasetKind::ShareGpt => "sharegpt",
            DatasetKind::PublicText => "public_text",
            DatasetKind::BailianTrace => "bailian_trace",
            DatasetKind::BurstGptTrace => "burst_gpt_trace",
            DatasetKind::BasetenTrace => "baseten_trace",
            DatasetKind::SagemakerDataCapture => "sagemaker_data_capture",
            DatasetKind::SpeedBench => "speed_bench",
            DatasetKind::WekaTrace => "weka_trace",
            DatasetKind::Tracelab => "tracelab",
            DatasetKind::DagJsonl => "dag_jsonl",
        }
    }

    /// The trace types AIPerf reads besides `mooncake_trace`, also `--custom-dataset-type`
    /// values.
    pub const TRACES: [DatasetKind; 4] = [
        DatasetKind::BailianTrace,
        DatasetKind::BurstGptTrace,
        DatasetKind::BasetenTrace,
        DatasetKind::SagemakerDataCapture,
    ];

    /// The agentic types: conversations that start child sessions (docs/datasets.md).
    pub const AGENTIC: [DatasetKind; 3] = [
        DatasetKind::WekaTrace,
        DatasetKind::Tracelab,
        DatasetKind::DagJsonl,
    ];

    /// A `--custom-dataset-type` value.
    pub fn parse_custom(s: &str) -> Option<DatasetKind> {
        if speed_bench::category_of(s).is_some() {
            return Some(DatasetKind::SpeedBench);
        }
        DatasetKind::CUSTOM
            .into_iter()
            .chain(DatasetKind::TRACES)
            .chain(DatasetKind::AGENTIC)
            .find(|k| k.as_str() == s)
    }

    /// AIPerf's loader default: shuffle for synthetic data and `random_pool`, sequential for
    /// files and traces.
    pub fn default_sampling(self) -> SamplingStrategy {
        match self {
            DatasetKind::Synthetic | DatasetKind::RandomPool => SamplingStrategy::Shuffle,
            DatasetKind::DagJsonl => SamplingStrategy::Random,
            _ => SamplingStrategy::Sequential,
        }
    }
}

/// The workload and what the run and the manifest need to know about it.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltWorkload {
    pub workload: Workload,
    /// The seed actually used (the plan's, or one drawn from OS entropy).
    pub seed_used: u64,
    /// SHA-256 of the prompt corpus (recorded even when no prompt was synthesized).
    pub corpus_sha256: String,
    pub kind: DatasetKind,
    /// The first turn carries a trace timestamp: fixed schedule turns on unless
    /// `--no-fixed-schedule` (AIPerf's rule).
    pub has_timestamps: bool,
    /// The dataset's default sampling strategy (before `--dataset-sampling-strategy`).
    pub default_sampling: SamplingStrategy,
    /// The strategy to use: `--dataset-sampling-strategy` if given, else the default.
    pub sampling: SamplingStrategy,
    /// Payload index ranges of each conversation, in workload order: the sampler picks
    /// conversations (`Sampler::new(sampling, conversations.len(), seed_used)`), and all
    /// turns of the picked one are sent in order.
    pub conversations: Vec<Range<usize>>,
    /// Each payload's expected answer (a dataset row's `answer`), in workload order: the
    /// same length as `workload.payloads` (see `docs/correctness.md`).
    pub answers: Vec<Option<inferbench_metrics::correctness::Answer>>,
}

/// One turn as a loader produced it, before it becomes a body.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct TurnSpec {
    /// Texts with their names (`""` when unnamed): rankings read `query` and `passages`.
    pub texts: Vec<NamedText>,
    /// A dataset row's `role` (None: user).
    pub role: Option<String>,
    pub messages: Option<Vec<Value>>,
    pub tools: Option<Value>,
    pub system: Option<String>,
    pub user_context: Option<String>,
    pub max_tokens: Option<u64>,
    pub extra: Option<Map<String, Value>>,
    pub payload: Option<Value>,
    pub timestamp_ms: Option<f64>,
    pub delay_ms: Option<f64>,
    /// For synthetic rankings: the query and passages, already split.
    pub query: Option<String>,
    pub passages: Vec<String>,
    /// Where the turn came from (file, line), for errors found when rendering it.
    pub origin: Option<(String, usize)>,
    /// The expected answer (`answer`), scored against the response.
    pub answer: Option<inferbench_metrics::correctness::Answer>,
    /// The model this turn names (agentic traces map theirs to `--model`s): it takes no
    /// turn of `--model-selection-strategy`.
    pub model: Option<String>,
    /// Child sessions started when this turn ends (`agentic`, `dag`).
    pub branches: Vec<inferbench_core::workload::Branch>,
    /// A row's (or the synthetic turn's) images, audio clips and videos, resolved.
    pub images: Vec<crate::media::MediaRef>,
    pub audios: Vec<crate::media::MediaRef>,
    pub videos: Vec<crate::media::MediaRef>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct NamedText {
    pub name: String,
    pub text: String,
}

impl NamedText {
    pub fn plain(text: impl Into<String>) -> Self {
        NamedText {
            name: String::new(),
            text: text.into(),
        }
    }
}

/// One conversation: its turns in order; `history` as on [`Payload`].
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Conv {
    pub id: String,
    pub history: bool,
    pub turns: Vec<TurnSpec>,
}

/// Gives every conversation its own id. A loader names a conversation without one
/// `session_NNNNNN` after its position, which can be an id the file itself uses: two
/// conversations would then merge into one session (the engine groups turns by id, and so
/// does `inputs.json`). The first conversation keeps the id; a later one with the same id
/// gets the next `session_NNNNNN` that nobody uses.
fn unique_ids(convs: &mut [Conv]) {
    let mut used: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut taken: std::collections::HashSet<String> = convs.iter().map(|c| c.id.clone()).collect();
    let mut next = 0usize;
    for c in convs.iter_mut() {
        if used.insert(c.id.clone()) {
            continue;
        }
        let id = loop {
            let candidate = session_id(next);
            next += 1;
            if !taken.contains(&candidate) {
                break candidate;
            }
        };
        taken.insert(id.clone());
        used.insert(id.clone());
        c.id = id;
    }
}

/// Builds the run's workload from `plan`: a custom dataset from `--input-file`, ShareGPT from
/// a local file, or synthetic prompts (the default). The same seed, plan, tokenizer and
/// corpus give byte-identical bodies; without a synthetic extra the bodies equal those of
/// `render::render_workload`.
///
/// `sonnet` is the corpus of `--prompt-corpus sonnet` (the default; the binary passes
/// `Corpus::shakespeare()`). `--prompt-corpus coding` uses `Corpus::coding()` and `random`
/// a `Corpus::random` drawn for `tok` and the run seed; the corpus used is the one whose
/// hash `corpus_sha256` records, and it feeds synthetic prompts and `mooncake_trace`
/// prompts alike.
pub fn build_workload(
    plan: &RunPlan,
    tok: &Tokenizer,
    sonnet: &Corpus,
) -> Result<BuiltWorkload, WorkloadError> {
    if plan.models.is_empty() {
        return Err(WorkloadError::Plan {
            field: "models",
            message: "no model given".into(),
        });
    }
    let ds = &plan.dataset;
    let sampling_override = match &ds.sampling_strategy {
        None => None,
        Some(s) => Some(
            SamplingStrategy::parse(s).ok_or_else(|| WorkloadError::Plan {
                field: "dataset.sampling_strategy",
                message: format!("unknown strategy {s:?} (sequential, random, shuffle)"),
            })?,
        ),
    };
    let seed = resolve_seed(plan.random_seed);
    let mut prompt_corpus = PromptCorpus::from_plan(ds)?;
    // AIPerf's agentic loaders default to the coding corpus.
    if ds.prompt_corpus.is_none() && ds.public_dataset.is_none() && agentic_trace(ds) {
        prompt_corpus = PromptCorpus::Coding;
    }
    let corpus = prompt_corpus.resolve(tok, sonnet, seed)?;
    let corpus: &Corpus = &corpus;

    if ds.input_file.is_none() {
        synthesis::check_baseten_knobs(ds, None)?;
    }
    let (kind, mut convs) = if let Some(public) = &ds.public_dataset {
        if ds.input_file.is_some() {
            return Err(plan_err(
                "dataset.public_dataset",
                "--public-dataset and --input-file cannot be used together",
            ));
        }
        let shape = if public == "sharegpt" {
            None
        } else {
            Some(public::lookup(public).map_err(|m| plan_err("dataset.public_dataset", m))?)
        };
        let path = ds.public_dataset_path.as_deref().ok_or_else(|| {
            plan_err(
                "dataset.public_dataset_path",
                format!(
                    "{public} is read from a local file: give its path (inferbench never downloads)"
                ),
            )
        })?;
        match shape {
            None => (
                DatasetKind::ShareGpt,
                sharegpt::load(Path::new(path), plan, tok, seed)?,
            ),
            Some(shape) => (
                DatasetKind::PublicText,
                public::load(public, shape, Path::new(path))?,
            ),
        }
    } else if let Some(input) = &ds.input_file {
        let path = Path::new(input);
        let kind = match &ds.custom_dataset_type {
            Some(t) => DatasetKind::parse_custom(t).ok_or_else(|| {
                let known: Vec<&str> = DatasetKind::CUSTOM
                    .iter()
                    .chain(DatasetKind::TRACES.iter())
                    .chain(DatasetKind::AGENTIC.iter())
                    .map(|k| k.as_str())
                    .chain(std::iter::once("speed_bench_* (see docs/datasets.md)"))
                    .collect();
                plan_err(
                    "dataset.custom_dataset_type",
                    format!(
                        "{t:?} is not supported (supported: {}; {})",
                        known.join(", "),
                        UNBUILT_TYPES
                    ),
                )
            })?,
            None => detect(path)?,
        };
        check_agentic_flags(ds, kind)?;
        synthesis::check_flags(ds, kind)?;
        let mut convs = match kind {
            DatasetKind::SingleTurn => custom::load_single_turn(path, plan, seed)?,
            DatasetKind::MultiTurn => custom::load_multi_turn(path, plan, seed)?,
            DatasetKind::RandomPool => custom::load_random_pool(path, plan, seed)?,
            DatasetKind::MooncakeTrace => mooncake::load(path, plan, tok, corpus, seed)?,
            DatasetKind::RawPayload => verbatim::load_raw_payload(path)?,
            DatasetKind::InputsJson | DatasetKind::GenaiPerfInputs => {
                verbatim::load_inputs_json(path, kind)?
            }
            DatasetKind::BailianTrace => traces::load_bailian(path, plan, tok, corpus, seed)?,
            DatasetKind::BurstGptTrace => traces::load_burst_gpt(path, plan, tok, corpus, seed)?,
            DatasetKind::BasetenTrace => baseten::load(path, plan, seed)?,
            DatasetKind::SagemakerDataCapture => sagemaker::load(path, plan, seed)?,
            DatasetKind::SpeedBench => {
                let t = ds.custom_dataset_type.as_deref().unwrap_or_default();
                speed_bench::load(path, t)?
            }
            DatasetKind::WekaTrace | DatasetKind::Tracelab => {
                let opts = agentic::Options {
                    block_size: (kind == DatasetKind::Tracelab)
                        .then(|| ds.isl_block_size.unwrap_or(AGENTIC_BLOCK_SIZE)),
                    think_time_only: ds.use_think_time_only,
                    max_context_length: ds.max_context_length,
                };
                let traces = match opts.block_size {
                    Some(0) => {
                        return Err(plan_err("dataset.isl_block_size", "must be at least 1"));
                    }
                    Some(b) => tracelab::read(path, b)?,
                    None => weka::read(path)?,
                };
                agentic::conversations(traces, plan, &opts, tok, corpus, seed)?
            }
            DatasetKind::DagJsonl => dag::load(path)?,
            DatasetKind::Synthetic | DatasetKind::ShareGpt | DatasetKind::PublicText => {
                unreachable_kind(kind)?
            }
        };
        synthesis::cap_delays(&mut convs, ds.replay.inter_turn_delay_cap_seconds);
        (kind, convs)
    } else {
        (
            DatasetKind::Synthetic,
            synth::generate(plan, tok, corpus, seed)?,
        )
    };

    if kind != DatasetKind::Synthetic {
        if ds.ignore_trace_delays {
            for t in convs.iter_mut().flat_map(|c| c.turns.iter_mut()) {
                t.timestamp_ms = None;
                t.delay_ms = None;
            }
        }
        synth::apply_prompt_options_to_files(plan, &mut convs)?;
    }

    unique_ids(&mut convs);
    // In workload order: assemble emits every turn of every conversation, in order.
    let answers = convs
        .iter()
        .flat_map(|c| c.turns.iter().map(|t| t.answer.clone()))
        .collect();
    // Consumed: a conversation's media (synthetic images and clips, each its own text) is
    // freed once its bodies hold it, not kept beside them.
    let (workload, conversations) = assemble(plan, seed, tok, convs)?;
    if workload.payloads.is_empty() {
        return Err(WorkloadError::EmptyDataset);
    }
    let default_sampling = kind.default_sampling();
    Ok(BuiltWorkload {
        // AIPerf turns a fixed schedule on when the file's first record has a `timestamp`
        // (or, TraceLab, timed events): never for a WEKA document, whose `t` is seconds from
        // each conversation's start.
        has_timestamps: workload.payloads[0].timestamp_ms.is_some()
            && kind != DatasetKind::WekaTrace,
        workload,
        seed_used: seed,
        corpus_sha256: corpus.sha256().to_string(),
        kind,
        default_sampling,
        sampling: sampling_override.unwrap_or(default_sampling),
        conversations,
        answers,
    })
}

/// The AIPerf dataset types not built, and why (docs/datasets.md).
const UNBUILT_TYPES: &str = "not built: every image, audio or video field";

/// Tokens per block of a TraceLab trace without `--isl-block-size` (AIPerf's default for its
/// agentic loaders).
pub const AGENTIC_BLOCK_SIZE: u64 = 64;

/// The input is a WEKA or TraceLab trace (named, or detected).
fn agentic_trace(ds: &inferbench_core::dataset_plan::DatasetPlan) -> bool {
    let Some(input) = &ds.input_file else {
        return false;
    };
    let kind = match &ds.custom_dataset_type {
        Some(t) => DatasetKind::parse_custom(t),
        None => detect(Path::new(input)).ok(),
    };
    matches!(kind, Some(DatasetKind::WekaTrace | DatasetKind::Tracelab))
}

/// The agentic flags apply where AIPerf reads them, and are refused elsewhere: a flag is
/// never accepted and ignored.
fn check_agentic_flags(
    ds: &inferbench_core::dataset_plan::DatasetPlan,
    kind: DatasetKind,
) -> Result<(), WorkloadError> {
    if ds.max_context_length.is_some() && kind != DatasetKind::WekaTrace {
        return Err(plan_err(
            "dataset.max_context_length",
            format!(
                "--max-context-length filters weka_trace traces only, not {}",
                kind.as_str()
            ),
        ));
    }
    if ds.use_think_time_only {
        if !matches!(kind, DatasetKind::WekaTrace | DatasetKind::Tracelab) {
            return Err(plan_err(
                "dataset.use_think_time_only",
                format!(
                    "--use-think-time-only applies to weka_trace and tracelab, not {}",
                    kind.as_str()
                ),
            ));
        }
        if ds.ignore_trace_delays {
            return Err(plan_err(
                "dataset.use_think_time_only",
                "--use-think-time-only and --ignore-trace-delays cannot be used together",
            ));
        }
    }
    if ds.isl_block_size.is_some() && kind == DatasetKind::WekaTrace {
        return Err(plan_err(
            "dataset.isl_block_size",
            "--isl-block-size does not apply to weka_trace: each trace names its own block_size",
        ));
    }
    Ok(())
}

fn unreachable_kind(kind: DatasetKind) -> Result<Vec<Conv>, WorkloadError> {
    // parse_custom never yields these; kept as an error rather than a panic.
    Err(plan_err(
        "dataset.custom_dataset_type",
        format!("{} is not a custom dataset type", kind.as_str()),
    ))
}

pub(crate) fn plan_err(field: &'static str, message: impl Into<String>) -> WorkloadError {
    WorkloadError::Plan {
        field,
        message: message.into(),
    }
}

/// ADAPTER between dataset turns and the request builder's [`TurnInput`]: for the rankings
/// endpoints, texts named `query`/`queries` become the query and texts named `passage(s)` the
/// passages (elsewhere every text is a text); a
/// non-user `role` becomes explicit messages on the endpoints that take messages (the
/// builder always writes `user`).
fn to_turn_input(endpoint: EndpointType, t: &TurnSpec) -> TurnInput {
    let mut texts = Vec::new();
    let mut query = t.query.clone();
    let mut passages = Vec::new();
    let rankings = matches!(
        endpoint,
        EndpointType::NimRankings | EndpointType::HfTeiRankings | EndpointType::CohereRankings
    );
    for nt in &t.texts {
        match nt.name.as_str() {
            "query" | "queries" if rankings && query.is_none() => query = Some(nt.text.clone()),
            "passage" | "passages" if rankings => passages.push(nt.text.clone()),
            _ => texts.push(nt.text.clone()),
        }
    }
    passages.extend(t.passages.iter().cloned());
    let mut messages = t.messages.clone();
    let media = !(t.images.is_empty() && t.audios.is_empty() && t.videos.is_empty());
    // With media the builder writes the role itself (`TurnInput::role`), parts and all.
    if messages.is_none()
        && !media
        && let Some(role) = t.role.as_deref().filter(|r| *r != "user")
        && matches!(endpoint, EndpointType::Chat | EndpointType::Messages)
    {
        let content = if texts.len() == 1 {
            Value::from(texts[0].clone())
        } else {
            Value::Array(
                texts
                    .iter()
                    .map(|x| json!({"type": "text", "text": x}))
                    .collect(),
            )
        };
        messages = Some(vec![json!({"role": role, "content": content})]);
    }
    TurnInput {
        texts,
        messages,
        system: t.system.clone(),
        user_context: t.user_context.clone(),
        tools: t.tools.clone(),
        max_tokens: t.max_tokens,
        extra: t.extra.clone(),
        payload: t.payload.clone(),
        query,
        passages,
        role: t
            .role
            .clone()
            .filter(|_| media && matches!(endpoint, EndpointType::Chat | EndpointType::Messages)),
        images: t.images.clone(),
        audios: t.audios.clone(),
        videos: t.videos.clone(),
    }
}

/// Renders every turn: body, input tokens, output limit, schedule fields. Returns the
/// workload and each conversation's payload range.
fn assemble(
    plan: &RunPlan,
    seed: u64,
    tok: &Tokenizer,
    convs: Vec<Conv>,
) -> Result<(Workload, Vec<Range<usize>>), WorkloadError> {
    let endpoint = plan.endpoint_type;
    // A conversation some branch names is a child; the others are roots (AIPerf's rule).
    let children: std::collections::HashSet<String> = convs
        .iter()
        .flat_map(|c| c.turns.iter().flat_map(|t| t.branches.iter()))
        .flat_map(|b| b.children.iter().cloned())
        .collect();
    let mut payloads = Vec::with_capacity(convs.iter().map(|c| c.turns.len()).sum());
    let mut ranges = Vec::with_capacity(convs.len());
    let mut models = crate::render::ModelPicker::new(plan, seed);
    for conv in convs {
        let start = payloads.len();
        for (i, t) in conv.turns.iter().enumerate() {
            if endpoint == EndpointType::Raw && t.payload.is_none() {
                return Err(origin_err(
                    t,
                    "the raw endpoint sends verbatim payloads only: this dataset row has none",
                ));
            }
            let input = to_turn_input(endpoint, t);
            // As AIPerf: a turn that names its model (a verbatim payload) keeps it, and
            // takes no turn of the selection.
            let model = if let Some(m) = &t.model {
                m
            } else if t.payload.is_some() {
                &plan.models[0]
            } else {
                models.next()
            };
            let body = build_turn_body(plan, model, &input).map_err(|e| match (&t.origin, e) {
                (Some(_), WorkloadError::Plan { message, .. }) => origin_err(t, &message),
                (_, e) => e,
            })?;
            let input_tokens = endpoint
                .tokenizes_input()
                .then(|| count_input_tokens(tok, endpoint, &body));
            let mut media = inferbench_protocol::media::media_sent(endpoint, &body);
            if media.audios > 0 {
                media.audio_seconds = input.audios.first().and_then(|a| a.seconds);
            }
            let requested_output_tokens =
                max_output_tokens(endpoint, &body).or(if t.payload.is_some() {
                    None
                } else {
                    t.max_tokens
                });
            payloads.push(Payload {
                conversation_id: conv.id.clone(),
                turn_index: u32::try_from(i).unwrap_or(u32::MAX),
                body: Value::Object(body).to_string(),
                input_tokens,
                requested_output_tokens,
                timestamp_ms: t.timestamp_ms,
                delay_ms: t.delay_ms,
                history: conv.history,
                branches: t.branches.clone(),
                child: children.contains(&conv.id),
                media: (!media.is_empty()).then_some(media),
            });
        }
        if payloads.len() > start {
            ranges.push(start..payloads.len());
        }
    }
    Ok((Workload { payloads }, ranges))
}

fn origin_err(t: &TurnSpec, message: &str) -> WorkloadError {
    match &t.origin {
        Some((file, line)) => DatasetError::line(file, *line, message).into(),
        None => plan_err("dataset", message),
    }
}

/// AIPerf's conversation id for the `i`-th generated conversation.
pub(crate) fn session_id(i: usize) -> String {
    crate::render::session_id(i)
}
