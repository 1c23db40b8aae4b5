//! A session: the turns of one conversation, sent one after another on one slot, with the
//! conversation so far resent before a turn that asks for its history.

use std::sync::Arc;

use bytes::Bytes;
use inferbench_core::record::Record;

use super::PreparedPayload;
use super::dispatch::{Claim, PhaseState};
use super::request::{Scratch, Turn, execute};
use super::tree::{Join, Lineage, Origin, spawn_children};
use crate::resources::DueGuard;

/// The conversation so far, resent before a later turn's own messages: each earlier turn's
/// messages as sent (without the history in front of them), then the assistant's reply
/// (its streamed or returned content). Only bodies with a message list take part: `messages`
/// (chat, Anthropic messages) or `input` (responses).
#[derive(Clone, Default)]
pub(super) struct History {
    pub(super) messages: Vec<serde_json::Value>,
    /// The media of the turns in `messages` (resent with every later turn).
    pub(super) media: inferbench_core::media::MediaSent,
}

impl History {
    const FIELDS: [&'static str; 2] = ["messages", "input"];

    /// The body to send for a turn: with history, the turn's list gets the conversation so
    /// far in front (a system message already in the history is not repeated). Returns the
    /// body and the turn's own messages (to append to the history afterwards).
    fn body_for(&self, p: &PreparedPayload) -> (Bytes, Vec<serde_json::Value>) {
        if !p.history {
            return (p.body.clone(), Vec::new());
        }
        let Ok(serde_json::Value::Object(mut body)) =
            serde_json::from_slice::<serde_json::Value>(&p.body)
        else {
            return (p.body.clone(), Vec::new());
        };
        let Some(field) = Self::FIELDS
            .iter()
            .find(|f| body.get(**f).is_some_and(serde_json::Value::is_array))
        else {
            return (p.body.clone(), Vec::new());
        };
        let own: Vec<serde_json::Value> = match body.get(*field) {
            Some(serde_json::Value::Array(a)) => a.clone(),
            _ => Vec::new(),
        };
        if self.messages.is_empty() {
            return (p.body.clone(), own);
        }
        let mut list = self.messages.clone();
        list.extend(
            own.iter()
                .filter(|m| !(is_system(m) && self.messages.contains(m)))
                .cloned(),
        );
        body.insert((*field).to_string(), serde_json::Value::Array(list));
        (
            Bytes::from(serde_json::Value::Object(body).to_string()),
            own.into_iter()
                .filter(|m| !(is_system(m) && self.messages.contains(m)))
                .collect(),
        )
    }

    fn push_turn(&mut self, own: Vec<serde_json::Value>, rec: &Record) {
        self.messages.extend(own);
        let reply: String = rec
            .events
            .iter()
            .filter_map(|e| e.content.as_deref())
            .collect();
        self.messages
            .push(serde_json::json!({"role": "assistant", "content": reply}));
    }
}

pub(super) fn is_system(m: &serde_json::Value) -> bool {
    m.get("role").and_then(serde_json::Value::as_str) == Some("system")
}

/// Sends the turns of the root session that starts with `first` (see [`run_session_from`]).
pub(super) async fn run_session(
    state: &Arc<PhaseState>,
    first: Claim,
    slot: u32,
    planned_ns: u64,
    due: DueGuard,
    scratch: &mut Scratch,
    conns: &mut super::SlotConns,
) -> bool {
    run_session_from(
        state,
        first,
        slot,
        planned_ns,
        due,
        scratch,
        conns,
        Origin::default(),
    )
    .await
}

/// Sends the turns of the session that starts with `first`, one after another on this
/// slot's connection: turn 0 at `planned_ns`; a later turn after its delay (from the end of
/// the previous turn), and not before its trace time under a fixed schedule. Each turn is
/// one request and one record; a failed turn does not end the session (its reply is what
/// arrived). A turn with branches starts its child sessions when it ends (`tree`); a turn
/// that joins children waits for them, and if it had to wait it goes as soon as the last
/// one ended (AIPerf dispatches a released join at once). Returns false when the writer is
/// gone.
#[allow(
    clippy::too_many_arguments,
    reason = "run_session's arguments plus the origin"
)]
pub(super) async fn run_session_from(
    state: &Arc<PhaseState>,
    first: Claim,
    slot: u32,
    planned_ns: u64,
    due: DueGuard,
    scratch: &mut Scratch,
    conns: &mut super::SlotConns,
    origin: Origin,
) -> bool {
    let phase_start_ns = state.start_ns;
    let engine = &state.engine;
    let Some(&(start, len)) = engine.sessions.get(first.conversation) else {
        return true;
    };
    // AIPerf's round robin ticks once per session: its later turns stay on its URL.
    let url = engine.url_of_session(first.session_num);
    let Origin {
        lineage,
        mut history,
    } = origin;
    let mut joins: Vec<Join> = Vec::new();
    let mut id = first.id;
    let mut planned = planned_ns;
    let mut first_due = Some(due);
    for turn in 0..len {
        let index = start + turn;
        let payload = &engine.payloads[index];
        if turn > 0 {
            // The children this turn joins: if any is still running, wait for them and go.
            let (gate, rest): (Vec<Join>, Vec<Join>) =
                joins.into_iter().partition(|j| j.turn as usize == turn);
            joins = rest;
            let blocked = gate.iter().any(|j| !j.done());
            for j in gate {
                j.wait().await;
            }
            let Some(next) = state.claim_turn() else {
                return true;
            };
            id = next;
            let now = engine.clock.now_ns();
            let mut due = if blocked {
                now
            } else {
                now + payload.delay.map_or(0, |d| d.as_nanos() as u64)
            };
            if let (Some(t), false) = (payload.schedule_ns, blocked) {
                due = due.max(phase_start_ns + t);
            }
            planned = due;
            if due > engine.clock.now_ns() {
                let at = engine.clock.instant_at(due);
                tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
            }
        }
        // A later turn is due once its delay has passed, i.e. now.
        let due = first_due.take().unwrap_or_else(|| engine.queues.due());
        let (body, own) = history.body_for(payload);
        // A body with history is a new buffer; an unchanged one shares the payload's (Bytes
        // clones share it), so comparing the pointers tells them apart without a memcmp.
        let rebuilt = (body.as_ptr() != payload.body.as_ptr() || body.len() != payload.body.len())
            .then(|| body.clone());
        let mut rec = execute(
            state,
            Turn {
                id,
                payload_index: index,
                session_num: first.session_num,
                planned_ns: planned,
                body,
                due,
                url,
            },
            slot,
            scratch,
            &mut conns[url],
        )
        .await;
        super::connect::release(engine.reuse, &mut conns[url], turn + 1 == len);
        if let Some(b) = &rebuilt {
            // The workload's count was of the turn alone; the body sent holds the history.
            rec.tokens.input = None;
            // Its media are the earlier turns' too (AIPerf counts the parts of the body sent).
            if !history.media.is_empty() {
                // The audio length stays the first turn's, as AIPerf reads it.
                let mut m = history.media;
                if let Some(own) = &payload.media {
                    m.add(own);
                }
                rec.media = Some(m);
            }
            if engine.cfg.keep_raw {
                rec.sent_body = Some(String::from_utf8_lossy(b).into_owned());
            }
        }
        if let Some(l) = &lineage {
            rec.agent_depth = l.depth;
            rec.parent_session_num = Some(l.parent_session_num);
            rec.parent_correlation_id = Some(l.parent_correlation_id.clone());
            rec.root_correlation_id = Some(l.root_correlation_id.clone());
        }
        let forks = payload.branches.iter().any(|b| b.fork);
        if payload.history || turn + 1 < len || forks {
            history.push_turn(own, &rec);
            if let Some(m) = &payload.media {
                history.media.add(m);
            }
        }
        // The children start once the turn that names them ended (its record is done). A
        // warmup turn starts none, as in AIPerf (branches run in the profiling phase).
        if !payload.branches.is_empty() && state.phase == inferbench_core::record::Phase::Profiling
        {
            let child_lineage = Lineage {
                depth: lineage.as_ref().map_or(1, |l| l.depth + 1),
                parent_session_num: first.session_num,
                parent_correlation_id: rec.correlation_id.clone(),
                root_correlation_id: lineage.as_ref().map_or_else(
                    || rec.correlation_id.clone(),
                    |l| l.root_correlation_id.clone(),
                ),
            };
            joins.extend(spawn_children(
                state,
                &payload.branches,
                rec.end_ns,
                &child_lineage,
                &history,
            ));
        }
        if !state.finish(rec, rebuilt) {
            return false;
        }
    }
    true
}
