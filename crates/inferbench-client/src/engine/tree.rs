//! Child sessions (AIPerf's DAG branches): when a turn with branches ends, each child
//! conversation starts as a session of its own, beside its parent, after its recorded
//! offset. A child takes no concurrency slot (AIPerf: `agent_depth > 0` never acquires a
//! session slot) but a connection of its own, a session number and correlation id of its
//! own (so the next URL of the round robin), and each of its requests is claimed like any
//! other: it counts toward `--request-count`, stops at the end of `--benchmark-duration`
//! or on Ctrl-C, and ends as one record that names its parent and its tree's root. The
//! parent's joining turn is not sent before every child of the branch ended; the phase
//! does not end before every child did.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::watch;

use super::ChildBranch;
use super::dispatch::{Claim, PhaseState};
use super::request::Scratch;
use super::session::{History, run_session_from};

/// Where a child session comes from: its depth, its parent and its tree's root.
#[derive(Clone, Debug)]
pub(super) struct Lineage {
    pub(super) depth: u32,
    pub(super) parent_session_num: u64,
    pub(super) parent_correlation_id: String,
    pub(super) root_correlation_id: String,
}

/// How a session starts: a root, or a child with its lineage and (a fork) the parent's
/// conversation so far.
#[derive(Default)]
pub(super) struct Origin {
    pub(super) lineage: Option<Lineage>,
    pub(super) history: History,
}

/// A branch's children still running: the parent's joining turn waits for zero.
pub(super) struct Join {
    pub(super) turn: u32,
    left: watch::Receiver<usize>,
}

impl Join {
    pub(super) fn done(&self) -> bool {
        *self.left.borrow() == 0
    }

    /// Waits until every child of the branch ended (children always end: their claims
    /// are refused once the phase stops issuing, and their requests end as records).
    pub(super) async fn wait(mut self) {
        let _ = self.left.wait_for(|n| *n == 0).await;
    }
}

/// Counts one child down when it ends, however it ends (and the phase's live children).
struct ChildGuard {
    state: Arc<PhaseState>,
    left: Arc<watch::Sender<usize>>,
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.left.send_modify(|n| *n = n.saturating_sub(1));
        self.state
            .children
            .send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl PhaseState {
    /// The first request of a child session: an id and a session number, or None when the
    /// phase stops issuing (count reached, duration over, stop asked). The session count
    /// (roots) does not apply, as in AIPerf.
    pub(super) fn claim_child(&self, conversation: usize) -> Option<Claim> {
        let e = &self.engine;
        if e.stop.level() > 0 || self.past_issue_end() {
            return None;
        }
        let mut issuer = e.issuer.lock().ok()?;
        if self
            .limit
            .is_some_and(|l| self.issued.load(Ordering::Relaxed) >= l)
        {
            return None;
        }
        self.issued.fetch_add(1, Ordering::Relaxed);
        let id = issuer.next_id;
        issuer.next_id += 1;
        let session_num = issuer.next_session;
        issuer.next_session += 1;
        e.progress.issued.fetch_add(1, Ordering::Relaxed);
        Some(Claim {
            id,
            conversation: conversation.min(e.sessions.len().saturating_sub(1)),
            session_num,
        })
    }

    /// Sleeps until `at` (ns from the anchor); false if the phase stopped issuing first
    /// (stop asked, duration over, grace ran out), so that a sleeping child does not hold
    /// the phase open.
    async fn sleep_unless_stopped(&self, at: u64) -> bool {
        let clock = self.engine.clock;
        let mut stop = self.engine.stop.subscribe();
        let mut abort = self.abort.subscribe();
        let until = |t: u64| tokio::time::Instant::from_std(clock.instant_at(t));
        let end = self.issue_until_ns.map_or(at, |e| e.min(at));
        tokio::select! {
            _ = tokio::time::sleep_until(until(end)) => !self.past_issue_end() && self.engine.stop.level() == 0,
            _ = stop.wait_for(|l| *l > 0) => false,
            _ = abort.wait_for(|a| *a) => false,
        }
    }
}

/// Starts the children of `branches` (the turn that names them just ended at `ended_ns`),
/// each in a task of its own. Returns the joins the parent must wait for.
pub(super) fn spawn_children(
    state: &Arc<PhaseState>,
    branches: &[ChildBranch],
    ended_ns: u64,
    lineage: &Lineage,
    history: &History,
) -> Vec<Join> {
    let mut joins = Vec::new();
    for b in branches {
        let (tx, rx) = watch::channel(b.children.len());
        let left = Arc::new(tx);
        for &(conversation, offset) in &b.children {
            state.children.send_modify(|n| *n += 1);
            let guard = ChildGuard {
                state: state.clone(),
                left: left.clone(),
            };
            let origin = Origin {
                lineage: Some(lineage.clone()),
                history: if b.fork {
                    history.clone()
                } else {
                    History::default()
                },
            };
            let state = state.clone();
            tokio::spawn(run_child(
                state,
                conversation,
                ended_ns,
                offset,
                origin,
                guard,
            ));
        }
        if let Some(turn) = b.join_turn {
            joins.push(Join { turn, left: rx });
        }
    }
    joins
}

async fn run_child(
    state: Arc<PhaseState>,
    conversation: usize,
    ended_ns: u64,
    offset: Duration,
    origin: Origin,
    _guard: ChildGuard,
) {
    let planned = ended_ns.saturating_add(offset.as_nanos().min(u64::MAX as u128) as u64);
    if !offset.is_zero() && !state.sleep_unless_stopped(planned).await {
        return;
    }
    let Some(claim) = state.claim_child(conversation) else {
        return;
    };
    let engine = state.engine.clone();
    let due = engine.queues.due();
    let (slot, mut conns) = engine.take_conn();
    let mut scratch = Scratch::default();
    run_session_from(
        &state,
        claim,
        slot,
        planned.max(ended_ns),
        due,
        &mut scratch,
        &mut conns,
        origin,
    )
    .await;
    engine.put_conn(slot, conns);
}
