//! Endpoint options beyond the type and path: how requests are built and responses read.

use serde::{Deserialize, Serialize};

/// Endpoint options (AIPerf's endpoint flags, and inferbench's own `--reasoning-tags`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct EndpointPlan {
    /// `--reasoning-tags think`: split `<think>…</think>` in content into reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tags: Option<String>,
    /// The `template` endpoint's body: a named template (`nv-embedqa`) or the minijinja template
    /// text itself (a template given as a file is read into this field when the plan is built,
    /// so the manifest holds what was rendered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Where the output sits in a `raw` or `template` response: a dotted field path such as
    /// `output.text` or `data[0].embedding` (AIPerf's `response_field` extra input, a JMESPath
    /// of which this is the plain-path subset). Tried before auto-detection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_field: Option<String>,
    /// `--per-chunk-usage`: streamed chat bodies ask for `stream_options.continuous_usage_stats`
    /// (the server then reports cumulative usage on every chunk). Needs streaming chat and
    /// `--use-server-token-count`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_chunk_usage: bool,
}
