//! The run manifest: what was held fixed, so that a run can be reproduced and compared.

use serde::{Deserialize, Serialize};

use crate::evidence::StopReason;
use crate::plan::RunPlan;

pub const MANIFEST_FILE: &str = "inferbench_manifest.json";
pub const MANIFEST_SCHEMA_VERSION: u32 = 1;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ToolIdentity {
    pub name: String,
    pub version: String,
    /// SHA-256 of the running executable, when it could be read.
    pub binary_sha256: Option<String>,
    /// The git commit the binary was built from ("unknown" without a checkout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The cargo profile it was built with (`debug`, `release`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_profile: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HostIdentity {
    pub hostname: String,
    pub os: String,
    pub kernel: Option<String>,
    pub arch: String,
    pub cpus: usize,
    pub memory_bytes: Option<u64>,
    /// Set on a merged run (`inferbench merge`): it ran on this many hosts, and the fields
    /// above are shard 0's; every shard's host is in `merge.shards[].host`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_hosts: Option<u32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TokenizerIdentity {
    /// `builtin:o200k_base` or the path given.
    pub name: String,
    /// SHA-256 of the vocabulary file (tokenizer.json, or the embedded BPE ranks).
    pub sha256: String,
    /// `--apply-chat-template`: the template ISL was counted through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template: Option<ChatTemplateIdentity>,
    /// `--tokenizer-revision`: the revision asked for and the commit the local files are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<TokenizerRevision>,
}

/// A tokenizer revision checked against a Hugging Face cache snapshot (never fetched).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TokenizerRevision {
    /// As given: a branch, a tag or a commit hash.
    pub requested: String,
    /// The commit of the snapshot the tokenizer's files are in.
    pub commit: String,
}

/// The chat template a run applied to its ISL counts, frozen: its file and hash, what it
/// renders around one user message (the control tokens the server sees), and the token
/// costs synthetic prompts were shortened by.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ChatTemplateIdentity {
    /// The file it was read from.
    pub source: String,
    /// SHA-256 (hex) of the template text.
    pub sha256: String,
    /// The template applied to one user message `PROMPT` with the generation prompt.
    pub rendered_probe: String,
    /// SHA-256 (hex) of `rendered_probe`.
    pub rendered_probe_sha256: String,
    /// Tokens the template adds once per request (the generation prompt).
    pub per_request_fixed_tokens: u64,
    /// Tokens the template adds per message (role header and end of turn).
    pub per_message_wrap_tokens: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct DatasetIdentity {
    /// `synthetic`, or the dataset type.
    pub kind: String,
    pub entries: usize,
    /// SHA-256 over the canonical serialization of the frozen request bodies (see
    /// `docs/evidence.md`): equal hashes mean byte-identical requests in the same order.
    pub workload_sha256: String,
    /// SHA-256 of the prompt corpus the synthetic prompts were cut from.
    pub corpus_sha256: Option<String>,
    /// `sha256:` of the run's frozen expected answers (`expected_answers.jsonl`), when its
    /// dataset carries any (docs/correctness.md). Not an identity pin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers_sha256: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ServerIdentity {
    /// `GET /v1/models` as the server answered it (None when it could not be read).
    pub models_response: Option<serde_json::Value>,
    /// `simulated` for the built-in server.
    pub kind: String,
    /// `--reset-kv-cache`: the reset POSTed before this run, and the server's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_reset: Option<crate::controls_plan::KvCacheReset>,
    /// `--reset-kv-cache` with several origins (several `--url`): every origin's reset, in
    /// the URLs' order (`kv_cache_reset` is the first). Empty, and not written, otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kv_cache_resets: Vec<crate::controls_plan::KvCacheReset>,
    /// `--server-profiler`: the start and stop requests around the profiling phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_profiler: Option<crate::controls_plan::ServerProfilerRecord>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Manifest {
    pub schema_version: u32,
    pub benchmark_id: String,
    pub tool: ToolIdentity,
    pub host: HostIdentity,
    /// The resolved plan (secrets redacted by construction).
    pub plan: RunPlan,
    pub tokenizer: TokenizerIdentity,
    pub dataset: DatasetIdentity,
    pub random_seed: Option<u64>,
    /// e.g. `concurrency 4 (burst)`.
    pub arrival: String,
    pub warmup: String,
    pub stop_rule: String,
    pub stop_reason: StopReason,
    pub partial: bool,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub anchor_unix_ns: u64,
    pub server: ServerIdentity,
    /// Files written, relative to the run directory.
    pub files: Vec<String>,
    /// The pins the run's numbers depend on, measured or declared (docs/baselines.md).
    /// Absent in manifests written before identity was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<crate::identity::Identity>,
    /// A shard of a sharded run: its part, the schedule's digest, its start and clock
    /// evidence (docs/scale-out.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::ShardEvidence>,
    /// A run made by `inferbench merge` from shards: the window's clock bound and each
    /// shard's offset and start lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<crate::shard::MergeEvidence>,
}
