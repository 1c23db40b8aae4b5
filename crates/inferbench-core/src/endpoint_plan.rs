//! Endpoint options beyond the type and path: how requests are built and responses read.

use serde::{Deserialize, Serialize};

/// Endpoint options (AIPerf's endpoint flags, and inferbench's own `--reasoning-tags`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct EndpointPlan {
    /// `--reasoning-tags think`: split `<think>…</think>` in content into reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tags: Option<String>,
}
