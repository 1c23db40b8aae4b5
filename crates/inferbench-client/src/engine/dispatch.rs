//! Dispatch: the phases, their slots and the issuer, in each load mode (burst, rate,
//! user-centric, fixed schedule), and the scheduler thread that times a rate's requests.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use inferbench_core::evidence::PhaseWindow;
use inferbench_core::record::{Phase, Record};
use inferbench_core::schedule::{ConcurrencyRamp, RateSchedule};
use tokio::sync::{mpsc, watch};

use super::request::Scratch;
use super::session::run_session;
use super::{Engine, EngineEvent, LoadMode, PhaseSpec};
use crate::clock::Clock;
use crate::resources::DueGuard;

/// Assigns request ids (contiguous, in issue order) and their payloads.
pub(super) struct Issuer {
    pub(super) next_id: u64,
    pub(super) next_session: u64,
    /// Gives the conversation index of each new session, in issue order.
    pub(super) order: Box<dyn FnMut() -> usize + Send>,
}

/// A claimed request: its id, its payload, and the session it belongs to.
#[derive(Clone, Copy, Debug)]
pub(super) struct Claim {
    pub(super) id: u64,
    /// Index into `Engine::sessions`.
    pub(super) conversation: usize,
    pub(super) session_num: u64,
}

/// Per-phase state shared by the tasks of the phase.
pub(super) struct PhaseState {
    pub(super) engine: Arc<Engine>,
    pub(super) phase: Phase,
    /// When the phase began (ns from the anchor): fixed-schedule offsets count from it.
    pub(super) start_ns: u64,
    pub(super) limit: Option<u64>,
    pub(super) issued: AtomicU64,
    /// No new request at or after this (ns from the anchor).
    pub(super) issue_until_ns: Option<u64>,
    pub(super) sent_end: AtomicU64,
    pub(super) requests_end: AtomicU64,
    pub(super) completed: AtomicU64,
    pub(super) errors: AtomicU64,
    /// Set when the grace period ran out: in-flight requests of the phase are cancelled.
    pub(super) abort: watch::Sender<bool>,
    /// Places for requests waiting for their first token (`--prefill-concurrency`).
    pub(super) prefill: Option<Arc<tokio::sync::Semaphore>>,
    pub(super) failed_threshold: Option<(f64, u64)>,
    pub(super) sink: mpsc::UnboundedSender<EngineEvent>,
    /// Child sessions started and not yet ended (`tree`): the phase waits for them.
    pub(super) children: watch::Sender<usize>,
    /// `PhaseSpec::session_count`, and the root sessions started so far.
    pub(super) session_limit: Option<u64>,
    pub(super) sessions_started: AtomicU64,
}

impl PhaseState {
    /// The first request of a new session, or None when the phase stops issuing. Ids are
    /// taken only here and in `claim_turn`, so every id is one issued request and ends as
    /// one record.
    pub(super) fn claim(&self) -> Option<Claim> {
        if self.past_issue_end() {
            return None;
        }
        self.claim_planned()
    }

    pub(super) fn past_issue_end(&self) -> bool {
        self.issue_until_ns
            .is_some_and(|t| self.engine.clock.now_ns() >= t)
    }

    /// Like `claim`, for a request whose planned time the caller already checked against
    /// the end of issuing: a late wake-up must not drop a request the plan holds.
    pub(super) fn claim_planned(&self) -> Option<Claim> {
        self.claim_conversation(None)
    }

    /// `claim_planned` for a given conversation (a fixed schedule's), or the next of `order`.
    pub(super) fn claim_conversation(&self, conversation: Option<usize>) -> Option<Claim> {
        let e = &self.engine;
        if e.stop.level() > 0 {
            return None;
        }
        let mut issuer = e.issuer.lock().ok()?;
        if self
            .limit
            .is_some_and(|l| self.issued.load(Ordering::Relaxed) >= l)
            || self
                .session_limit
                .is_some_and(|l| self.sessions_started.load(Ordering::Relaxed) >= l)
        {
            return None;
        }
        self.sessions_started.fetch_add(1, Ordering::Relaxed);
        self.issued.fetch_add(1, Ordering::Relaxed);
        let id = issuer.next_id;
        issuer.next_id += 1;
        let session_num = issuer.next_session;
        issuer.next_session += 1;
        // The order may run past the end (a wrapping sampler never does; a sequential list
        // of a fixed schedule cannot): clamp rather than panic.
        let conv = conversation
            .unwrap_or_else(|| (issuer.order)())
            .min(e.sessions.len() - 1);
        e.progress.issued.fetch_add(1, Ordering::Relaxed);
        Some(Claim {
            id,
            conversation: conv,
            session_num,
        })
    }

    /// The id of a later turn of a session already running; None when the phase stops
    /// issuing (count reached, duration over, or stop requested).
    pub(super) fn claim_turn(&self) -> Option<u64> {
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
        e.progress.issued.fetch_add(1, Ordering::Relaxed);
        Some(id)
    }

    pub(super) fn finish(&self, rec: Record, sent_body: Option<Bytes>) -> bool {
        let e = &self.engine;
        e.queues.record_sent();
        self.sent_end.fetch_max(rec.start_ns, Ordering::Relaxed);
        self.requests_end.fetch_max(rec.end_ns, Ordering::Relaxed);
        self.completed.fetch_add(1, Ordering::Relaxed);
        e.progress.completed.fetch_add(1, Ordering::Relaxed);
        if rec.is_error() {
            self.errors.fetch_add(1, Ordering::Relaxed);
            e.progress.errors.fetch_add(1, Ordering::Relaxed);
        }
        if let Some((threshold, floor)) = self.failed_threshold {
            let total = self.completed.load(Ordering::Relaxed);
            let failed = self.errors.load(Ordering::Relaxed);
            if total >= floor && failed as f64 / total as f64 > threshold {
                if let Ok(mut reason) = e.abort_reason.lock()
                    && reason.is_none()
                {
                    *reason = Some(format!(
                        "--failed-request-threshold exceeded: {failed} of {total} requests failed ({:.3} > {threshold}); the run was cancelled",
                        failed as f64 / total as f64
                    ));
                }
                // As AIPerf: stop issuing and cancel what is in flight; results stay partial.
                while e.stop.level() < 2 {
                    e.stop.escalate();
                }
            }
        }
        self.sink
            .send(EngineEvent::Record(Box::new(rec), sent_body))
            .is_ok()
    }
}

pub(super) async fn run_phase(
    engine: &Arc<Engine>,
    spec: &PhaseSpec,
    sink: &mpsc::UnboundedSender<EngineEvent>,
) -> PhaseWindow {
    let p = &engine.progress;
    p.phase
        .store(u64::from(spec.phase == Phase::Profiling), Ordering::Relaxed);
    p.phase_total
        .store(spec.request_count.unwrap_or(0), Ordering::Relaxed);
    p.issued.store(0, Ordering::Relaxed);
    p.completed.store(0, Ordering::Relaxed);
    p.errors.store(0, Ordering::Relaxed);
    let start_ns = engine.clock.now_ns();
    let issue_until_ns = spec.duration.map(|d| start_ns + d.as_nanos() as u64);
    let state = Arc::new(PhaseState {
        engine: engine.clone(),
        phase: spec.phase,
        start_ns,
        limit: spec.request_count,
        issued: AtomicU64::new(0),
        issue_until_ns,
        sent_end: AtomicU64::new(start_ns),
        requests_end: AtomicU64::new(start_ns),
        completed: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        abort: watch::channel(false).0,
        prefill: prefill_places(engine, spec, start_ns),
        failed_threshold: spec.failed_request_threshold,
        sink: sink.clone(),
        children: watch::channel(0).0,
        session_limit: spec.session_count,
        sessions_started: AtomicU64::new(0),
    });
    let mut tasks = tokio::task::JoinSet::new();
    match &spec.mode {
        LoadMode::Burst { concurrency, ramp } => {
            let workers = match spec
                .request_count
                .into_iter()
                .chain(spec.session_count)
                .min()
            {
                Some(n) => (*concurrency as u64).min(n).max(1),
                None => *concurrency as u64,
            };
            let ramp = ramp.and_then(|d| ConcurrencyRamp::new(*concurrency, d).ok());
            for i in 0..workers {
                let state = state.clone();
                // With a ramp, slot i opens when the limit reaches i + 1.
                let opens_at = ramp.as_ref().map_or(0, |r| slot_opens_ns(r, i as usize));
                tasks.spawn(async move {
                    if opens_at > 0 {
                        let at = state.engine.clock.instant_at(start_ns + opens_at);
                        tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
                    }
                    slot_loop(state, |_| None).await
                });
            }
        }
        LoadMode::UserCentric { users, rate } => {
            let gap_ns = 1e9 / *rate;
            for u in 0..*users {
                let state = state.clone();
                let users = *users;
                // User u plans its k-th turn at (u + k·U)/Q s.
                tasks.spawn(async move {
                    slot_loop(state, |k| {
                        Some(
                            start_ns
                                + ((u as f64 + k as f64 * users as f64) * gap_ns).round() as u64,
                        )
                    })
                    .await
                });
            }
        }
        LoadMode::Rate {
            pattern,
            rate,
            ramp,
            series,
            ceiling,
            ceiling_ramp,
        } => {
            let label = format!("arrivals.{}", spec.phase.as_str());
            // The plan checked the parameters; a schedule that cannot be made issues nothing.
            if let Ok(schedule) = RateSchedule::new(*pattern, *rate, *ramp, engine.cfg.seed, &label)
            {
                let mut schedule = match series {
                    Some(s) => schedule.with_series(s.clone()),
                    None => schedule,
                };
                let state2 = state.clone();
                let (ceiling, ceiling_ramp) = (*ceiling, *ceiling_ramp);
                let offsets: Offsets = Box::new(move || Some((schedule.next_offset_ns(), None)));
                tasks.spawn(async move {
                    rate_dispatcher(state2, offsets, ceiling, ceiling_ramp, start_ns).await
                });
            }
        }
        LoadMode::Fixed {
            offsets_ns,
            conversations,
            ceiling,
        } => {
            let state2 = state.clone();
            let list = offsets_ns.clone();
            let convs = conversations.clone();
            let mut i = 0;
            let offsets: Offsets = Box::new(move || {
                let o = list.get(i).map(|&o| (o, convs.get(i).copied()));
                i += 1;
                o
            });
            let ceiling = *ceiling;
            tasks.spawn(
                async move { rate_dispatcher(state2, offsets, ceiling, None, start_ns).await },
            );
        }
    }
    // With a duration, issuing ends at `issue_until_ns`; in-flight requests then get the
    // grace period, after which they are cancelled (each still ends as a record).
    let grace_deadline = match (issue_until_ns, spec.grace) {
        (Some(t), Some(g)) => Some(engine.clock.instant_at(t) + g),
        _ => None,
    };
    let mut children = state.children.subscribe();
    let wait_all = async {
        while let Some(r) = tasks.join_next().await {
            // A task panic would be a bug; the other tasks' records are still kept.
            let _ = r;
        }
        // Child sessions outlive the slot that started them (background branches).
        let _ = children.wait_for(|n| *n == 0).await;
    };
    tokio::pin!(wait_all);
    if let Some(deadline) = grace_deadline {
        tokio::select! {
            _ = &mut wait_all => {}
            _ = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)) => {
                let _ = state.abort.send(true);
                wait_all.await;
            }
        }
    } else {
        wait_all.await;
    }
    let completed = state.completed.load(Ordering::Relaxed);
    PhaseWindow {
        phase: spec.phase,
        start_ns,
        sent_end_ns: state.sent_end.load(Ordering::Relaxed),
        requests_end_ns: state.requests_end.load(Ordering::Relaxed),
        scheduled: state.issued.load(Ordering::Relaxed),
        completed,
        errors: state.errors.load(Ordering::Relaxed),
        cancelled: engine.stop.level() > 0,
    }
}

/// One slot: for k = 0, 1, …, wait until `plan(k)` (None: due at once), issue the phase's
/// next request on this slot's connection, and wait for its end. Burst mode plans nothing
/// (the request is due the moment the slot frees); a user-centric user plans its turns.
pub(super) async fn slot_loop(state: Arc<PhaseState>, mut plan: impl FnMut(u64) -> Option<u64>) {
    let engine = state.engine.clone();
    let (slot, mut conns) = engine.take_conn();
    let mut scratch = Scratch::default();
    for k in 0u64.. {
        let scheduled = plan(k);
        if let Some(p) = scheduled {
            if state.issue_until_ns.is_some_and(|t| p >= t) {
                break;
            }
            let at = engine.clock.instant_at(p);
            tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
        }
        let claimed = match scheduled {
            Some(_) => state.claim_planned(),
            None => state.claim(),
        };
        let Some(claim) = claimed else {
            break;
        };
        let planned_ns = scheduled.unwrap_or_else(|| engine.clock.now_ns());
        // Due now: the slot freed (burst), or its planned time passed (user-centric).
        let due = engine.queues.due();
        if !run_session(
            &state,
            claim,
            slot,
            planned_ns,
            due,
            &mut scratch,
            &mut conns,
        )
        .await
        {
            // The writer is gone: nothing can be recorded any more, so stop issuing.
            break;
        }
    }
    engine.put_conn(slot, conns);
}

/// Rate mode: a thread sleeps until each planned send time (absolute deadlines, with the
/// kernel's timer slack lowered for it) and hands the request to the runtime, which sends
/// it on a free connection (after a free slot, with a ceiling).
/// The planned offsets (ns from the phase start) of a rate or fixed schedule, each with the
/// conversation it must start (None: the next of the engine's order); None ends it.
pub(super) type Offsets = Box<dyn FnMut() -> Option<(u64, Option<usize>)> + Send>;

pub(super) async fn rate_dispatcher(
    state: Arc<PhaseState>,
    mut offsets: Offsets,
    ceiling: Option<usize>,
    ceiling_ramp: Option<Duration>,
    start_ns: u64,
) {
    let engine = state.engine.clone();
    let (tx, mut rx) = mpsc::unbounded_channel::<(Claim, u64, DueGuard)>();
    let thread_state = state.clone();
    let scheduler = std::thread::Builder::new()
        .name("scheduler".into())
        .spawn(move || {
            lower_timer_slack();
            let clock = thread_state.engine.clock;
            while let Some((offset, conversation)) = offsets() {
                let planned = start_ns + offset;
                if thread_state.issue_until_ns.is_some_and(|t| planned >= t) {
                    break;
                }
                if !sleep_until_ns(&thread_state, clock, planned) {
                    break;
                }
                let Some(claim) = thread_state.claim_conversation(conversation) else {
                    break;
                };
                // Due from here until written: the hand-off, a ceiling's wait and the
                // connection all count as the client's backlog.
                let due = thread_state.engine.queues.due();
                if tx.send((claim, planned, due)).is_err() {
                    break;
                }
            }
        });
    if scheduler.is_err() {
        return;
    }
    // A ramped ceiling starts with one slot; a task adds the others as the limit rises.
    let ceiling_ramp = match (ceiling, ceiling_ramp) {
        (Some(c), Some(d)) => ConcurrencyRamp::new(c, d).ok(),
        _ => None,
    };
    let slots = ceiling.map(|c| {
        Arc::new(tokio::sync::Semaphore::new(if ceiling_ramp.is_some() {
            1
        } else {
            c
        }))
    });
    if let (Some(r), Some(sem)) = (ceiling_ramp, slots.clone()) {
        open_as_ramped(sem, r, engine.clock, start_ns);
    }
    let mut tasks = tokio::task::JoinSet::new();
    while let Some((claim, planned_ns, due)) = rx.recv().await {
        let permit = match &slots {
            Some(s) => s.clone().acquire_owned().await.ok(),
            None => None,
        };
        let state = state.clone();
        tasks.spawn(async move {
            let engine = state.engine.clone();
            let (slot, mut conns) = engine.take_conn();
            let mut scratch = Scratch::default();
            // A session holds its connection and its slot under the ceiling across its
            // turns and their delays.
            run_session(
                &state,
                claim,
                slot,
                planned_ns,
                due,
                &mut scratch,
                &mut conns,
            )
            .await;
            engine.put_conn(slot, conns);
            drop(permit);
        });
        // Reap finished tasks as we go, so the set stays small on long runs.
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
}

/// When slot `i` (0-based) of a ramp opens: the first time the limit reaches `i + 1`.
pub(super) fn slot_opens_ns(r: &ConcurrencyRamp, i: usize) -> u64 {
    let mut t = 0;
    while r.limit_at(t) < i + 1 {
        match r.next_increase_ns(t) {
            Some(n) if n > t => t = n,
            _ => break,
        }
    }
    t
}

/// Sleep the calling thread until `target` (ns from the anchor). Returns false if the run
/// was stopped meanwhile. Sleeps in slices of at most 50 ms so that a stop is noticed.
pub(super) fn sleep_until_ns(state: &PhaseState, clock: Clock, target: u64) -> bool {
    loop {
        if state.engine.stop.level() > 0 {
            return false;
        }
        let now = clock.now_ns();
        if now >= target {
            return true;
        }
        let rem = Duration::from_nanos(target - now).min(Duration::from_millis(50));
        std::thread::sleep(rem);
    }
}

/// The default 50 µs timer slack would make every sleep that much late: ask for 1 ns on the
/// scheduler thread (Linux; elsewhere a no-op).
pub(super) fn lower_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// `sem` holds one permit; add the others as the ramp's limit rises (a task that ends when
/// the target is reached).
fn open_as_ramped(
    sem: Arc<tokio::sync::Semaphore>,
    r: ConcurrencyRamp,
    clock: Clock,
    start_ns: u64,
) {
    tokio::spawn(async move {
        let mut opened = 1;
        while let Some(t) = r.next_increase_ns(clock.now_ns().saturating_sub(start_ns)) {
            let at = clock.instant_at(start_ns + t);
            tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
            let limit = r.limit_at(clock.now_ns().saturating_sub(start_ns));
            if limit > opened {
                sem.add_permits(limit - opened);
                opened = limit;
            }
        }
    });
}

/// The phase's `--prefill-concurrency` places; with a prefill ramp they start at one and
/// open as `--concurrency-ramp-duration` opens slots (AIPerf ramps both the same way).
fn prefill_places(
    engine: &Arc<Engine>,
    spec: &PhaseSpec,
    start_ns: u64,
) -> Option<Arc<tokio::sync::Semaphore>> {
    let n = spec.prefill_concurrency?;
    // The plan checked the duration; an invalid one leaves the cap unramped.
    let ramp = spec
        .prefill_ramp
        .and_then(|d| ConcurrencyRamp::new(n, d).ok());
    let sem = Arc::new(tokio::sync::Semaphore::new(if ramp.is_some() {
        1
    } else {
        n
    }));
    if let Some(r) = ramp {
        open_as_ramped(sem.clone(), r, engine.clock, start_ns);
    }
    Some(sem)
}
