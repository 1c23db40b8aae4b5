//! How connections are used: `--connection-reuse-strategy`, and the resend of a request whose reused connection died before any response byte.

use serde::{Deserialize, Serialize};

/// `--connection-reuse-strategy` (AIPerf's values; default `pooled`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ReuseStrategy {
    /// Connections are kept and reused across requests (each slot keeps its own).
    #[default]
    Pooled,
    /// A fresh connection for every request, closed after its response.
    Never,
    /// One connection per session: a conversation's turns share it, and it is closed after
    /// the conversation's last turn.
    StickyUserSessions,
}

impl ReuseStrategy {
    pub fn parse(s: &str) -> Option<ReuseStrategy> {
        // AIPerf's enum rule: any case, `-` and `_` alike.
        Some(match crate::py::enum_name(s).as_str() {
            "pooled" => ReuseStrategy::Pooled,
            "never" => ReuseStrategy::Never,
            "sticky_user_sessions" => ReuseStrategy::StickyUserSessions,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ReuseStrategy::Pooled => "pooled",
            ReuseStrategy::Never => "never",
            ReuseStrategy::StickyUserSessions => "sticky-user-sessions",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ConnectionPlan {
    /// `--connection-reuse-strategy`.
    #[serde(default, skip_serializing_if = "is_pooled")]
    pub reuse_strategy: ReuseStrategy,
}

fn is_pooled(s: &ReuseStrategy) -> bool {
    *s == ReuseStrategy::Pooled
}
