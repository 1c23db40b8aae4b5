//! The frozen workload: every request body, rendered before the run, in order.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One rendered request: one turn of a conversation. A workload lists the turns of each
/// conversation together and in order.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Payload {
    pub conversation_id: String,
    pub turn_index: u32,
    /// The exact body bytes (JSON text) that go on the wire.
    pub body: String,
    /// Client token count of the input texts (None when the tokenizer is not used).
    pub input_tokens: Option<u64>,
    /// `max_completion_tokens` / `max_tokens` in the body.
    pub requested_output_tokens: Option<u64>,
    /// Trace time of the request in ms from the trace's zero (a dataset's `timestamp`):
    /// under a fixed schedule it is sent at that offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_ms: Option<f64>,
    /// Wait before this turn, in ms, counted from the end of the previous turn of the same
    /// conversation (a dataset's `delay`, or a synthetic turn delay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<f64>,
    /// Resend the conversation so far: the earlier turns' messages and the live assistant
    /// replies go before this turn's own messages (multi-turn datasets). False for
    /// single-turn rows that share a session id, and for verbatim payloads.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub history: bool,
    /// Child sessions this turn starts when it ends (agentic datasets: `weka_trace`,
    /// `tracelab`, `dag_jsonl`; docs/load-shapes.md "Child sessions").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<Branch>,
    /// The conversation is a child: only a parent's branch starts it (the sampler and a
    /// fixed schedule start roots only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub child: bool,
    /// The images, audio and video in the body (counts, decoded bytes, audio length), when
    /// it carries any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<crate::media::MediaSent>,
}

/// Children a turn starts when it ends: AIPerf's SPAWN (a fresh context) or FORK (the
/// children start with the parent's conversation so far, replies included).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Branch {
    /// The child conversations' ids, all started together.
    pub children: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fork: bool,
    /// The parent's turn that is not sent before every child of this branch ended (its
    /// join); None: the children run in the background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join_turn: Option<u32>,
    /// Trace time of the spawn (ms, the children's clock): a child whose first turn has a
    /// later `timestamp_ms` starts that much after the spawning turn ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ms: Option<f64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Workload {
    pub payloads: Vec<Payload>,
}

impl Workload {
    /// SHA-256 over the canonical serialization: for each payload in order, its body's byte
    /// length as 8 little-endian bytes, then the bytes. Body bytes are what is sent, so equal
    /// hashes mean byte-identical requests in the same order.
    pub fn sha256(&self) -> String {
        bodies_sha256(self.payloads.iter().map(|p| p.body.as_str()))
    }
}

/// The workload hash of [`Workload::sha256`] over request bodies given in order: an
/// importer hashes the bodies another tool sent with it, so that a replay of the same
/// bodies by inferbench carries the same digest.
pub fn bodies_sha256<'a>(bodies: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = Sha256::new();
    for b in bodies {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b.as_bytes());
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_depends_on_boundaries_and_order() {
        let p = |b: &str| Payload {
            conversation_id: "s".into(),
            turn_index: 0,
            body: b.into(),
            input_tokens: None,
            requested_output_tokens: None,
            ..Default::default()
        };
        let a = Workload {
            payloads: vec![p("ab"), p("c")],
        };
        let b = Workload {
            payloads: vec![p("a"), p("bc")],
        };
        let c = Workload {
            payloads: vec![p("c"), p("ab")],
        };
        assert_ne!(a.sha256(), b.sha256());
        assert_ne!(a.sha256(), c.sha256());
        assert_eq!(a.sha256(), a.clone().sha256());
    }
}
