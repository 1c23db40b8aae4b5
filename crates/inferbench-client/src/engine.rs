//! The engine: runs the phases of a plan (warmup, then profiling) in concurrency mode and
//! turns every request it issues into exactly one [`Record`]: success, HTTP error, transport
//! error, timeout or cancellation.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http_body_util::BodyExt;
use inferbench_core::evidence::{PhaseWindow, StopReason};
use inferbench_core::plan::EndpointType;
use inferbench_core::record::{
    ErrorKind, Event, EventKind, EventKindOpt, Frame, Phase, PhaseOpt, Record, RecordError,
    TokenCounts,
};
use inferbench_core::schedule::{ArrivalPattern, ConcurrencyRamp, RateSchedule};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::{mpsc, watch};
use tokio::time::sleep_until;

use crate::clock::Clock;
use crate::decode::{self, DecodeError, Decoded};
use crate::sse::{SseMessage, SseParser};
use crate::think::ThinkSplitter;
use crate::transport::{Conn, Target, TimedBody, connect, error_chain};

/// Counts tokens of response text with the run's tokenizer (the binary wires the workload
/// crate's tokenizer in; the engine does not depend on it).
pub trait TokenCounter: Send + Sync {
    fn count(&self, text: &str) -> u64;
}

/// One request of the frozen workload (one turn of a conversation), ready to send. The
/// turns of a conversation are contiguous and in order; the engine sends a conversation's
/// turns one after another on one slot.
#[derive(Clone, Debug, Default)]
pub struct PreparedPayload {
    pub conversation_id: String,
    pub turn_index: u32,
    pub body: Bytes,
    pub input_tokens: Option<u64>,
    pub requested_output_tokens: Option<u64>,
    /// A later turn waits this long after the previous turn of its conversation ended.
    pub delay: Option<Duration>,
    /// Under a fixed schedule, a later turn with a trace time is not sent before it
    /// (ns from the phase start, after the schedule's offset).
    pub schedule_ns: Option<u64>,
    /// Resend the conversation so far before this turn's own messages (see [`History`]).
    pub history: bool,
}

/// How one phase issues its requests.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadMode {
    /// `--concurrency N` alone: N slots, a new request as soon as one frees (AIPerf's
    /// `concurrency_burst`). The planned send time is the moment the slot freed.
    Burst {
        concurrency: usize,
        /// `--concurrency-ramp-duration`: the slots open one by one from 1 to N over it.
        ramp: Option<Duration>,
    },
    /// `--request-rate`: requests at planned offsets from the phase start, drawn from the
    /// arrival pattern; with `ceiling`, a request also waits for one of that many slots
    /// (its planned time stays the schedule's, so the wait shows as schedule lag).
    Rate {
        pattern: ArrivalPattern,
        rate: f64,
        ramp: Option<Duration>,
        ceiling: Option<usize>,
        /// `--concurrency-ramp-duration` with a ceiling: the ceiling rises from 1 to N.
        ceiling_ramp: Option<Duration>,
    },
    /// A fixed schedule (trace replay): session k starts with conversation
    /// `conversations[k]` at `offsets_ns[k]` from the phase start (non-decreasing); its later
    /// turns follow their delays or trace times (`PreparedPayload::schedule_ns`).
    Fixed {
        offsets_ns: Arc<Vec<u64>>,
        /// Conversation index of each session (empty: the engine's `order`).
        conversations: Arc<Vec<usize>>,
        ceiling: Option<usize>,
    },
    /// `--user-centric-rate Q --num-users U`: U users; user u plans its k-th request at
    /// (u + k·U)/Q s from the phase start (so the users together plan Q per second), and
    /// sends it when it is due and the user's previous request has ended.
    UserCentric { users: usize, rate: f64 },
}

/// One phase: how it issues, and when it stops issuing.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseSpec {
    pub phase: Phase,
    pub mode: LoadMode,
    /// Stop after this many requests (None: no count limit; then `duration` must be set).
    pub request_count: Option<u64>,
    /// Stop issuing this long after the phase started (`--benchmark-duration`).
    pub duration: Option<Duration>,
    /// After `duration`, how long in-flight requests may still finish before they are
    /// cancelled (`--benchmark-grace-period`; None = wait for them all).
    pub grace: Option<Duration>,
    /// `--prefill-concurrency`: at most this many requests waiting for their first token; a
    /// request waits for a place before it starts (its planned time stays, so the wait shows
    /// as schedule lag).
    pub prefill_concurrency: Option<usize>,
    /// `--failed-request-threshold`: (ratio, records needed before it is armed). Once at
    /// least that many records ended, a failed/total ratio above it cancels the run.
    pub failed_request_threshold: Option<(f64, u64)>,
}

/// `--request-cancellation-rate` / `--request-cancellation-delay`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cancellation {
    /// Percent of requests to cancel, 0–100.
    pub rate_pct: f64,
    /// How long after the request was fully sent.
    pub delay: Duration,
}

#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Full request URI: base URL + endpoint path.
    pub uri: hyper::Uri,
    pub endpoint_type: EndpointType,
    pub streaming: bool,
    /// Headers sent with every request, besides the per-request ids (auth included).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub timeout: Duration,
    /// The phases in order (warmup first, if any).
    pub phases: Vec<PhaseSpec>,
    pub cancellation: Option<Cancellation>,
    /// Keep each event's raw data (for `--export-level raw`).
    pub keep_raw: bool,
    /// The run seed: request ids, arrivals and cancellations draw from generators named
    /// after their purpose.
    pub seed: u64,
    /// `--reasoning-tags think`: text between `<think>` and `</think>` in the content is
    /// recorded as reasoning (the tags are dropped; `raw` keeps what was sent).
    pub reasoning_tags: bool,
    /// `raw`/`template`: where the text is in a response (`--extra-inputs response_field`,
    /// a dotted path with indexes; checked by the caller with `decode::Decoder::new`).
    pub response_field: Option<String>,
}

impl EngineConfig {
    /// A count-limited burst run (warmup, then profiling): the simplest plan.
    pub fn burst_phases(concurrency: usize, warmup: u64, count: u64) -> Vec<PhaseSpec> {
        let mut v = Vec::new();
        if warmup > 0 {
            v.push(PhaseSpec {
                phase: Phase::Warmup,
                mode: LoadMode::Burst {
                    concurrency,
                    ramp: None,
                },
                request_count: Some(warmup),
                duration: None,
                grace: None,
                prefill_concurrency: None,
                failed_request_threshold: None,
            });
        }
        v.push(PhaseSpec {
            phase: Phase::Profiling,
            mode: LoadMode::Burst {
                concurrency,
                ramp: None,
            },
            request_count: Some(count),
            duration: None,
            grace: None,
            prefill_concurrency: None,
            failed_request_threshold: None,
        });
        v
    }
}

/// What the engine emits, in order, to the evidence writer.
#[derive(Debug)]
pub enum EngineEvent {
    /// A finished request, and the body it was sent with when that is not its payload's
    /// (a turn with the conversation's history in front): its input tokens are then left
    /// for the receiver to count (`tokens.input` is None), off the client's thread.
    Record(Box<Record>, Option<Bytes>),
    Phase(PhaseWindow),
}

/// Live counters for a progress display.
#[derive(Debug, Default)]
pub struct Progress {
    pub phase: AtomicU64,
    /// Requests the phase will issue (0 when it stops on a duration).
    pub phase_total: AtomicU64,
    pub issued: AtomicU64,
    pub completed: AtomicU64,
    pub errors: AtomicU64,
}

impl Progress {
    pub fn phase(&self) -> Phase {
        if self.phase.load(Ordering::Relaxed) == 0 {
            Phase::Warmup
        } else {
            Phase::Profiling
        }
    }
}

/// Stop levels: 0 run, 1 stop issuing (in-flight requests finish or time out), 2 abort
/// in-flight requests (they become cancelled records).
#[derive(Clone, Debug)]
pub struct StopSignal {
    tx: Arc<watch::Sender<u8>>,
}

impl Default for StopSignal {
    fn default() -> Self {
        Self::new()
    }
}

impl StopSignal {
    pub fn new() -> Self {
        StopSignal {
            tx: Arc::new(watch::channel(0).0),
        }
    }
    /// First call: stop issuing. Second call: abort in-flight requests.
    pub fn escalate(&self) -> u8 {
        let mut level = 0;
        self.tx.send_modify(|l| {
            *l = (*l + 1).min(2);
            level = *l;
        });
        level
    }
    pub fn level(&self) -> u8 {
        *self.tx.borrow()
    }
    fn subscribe(&self) -> watch::Receiver<u8> {
        self.tx.subscribe()
    }
}

#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub stop_reason: StopReason,
    /// Set when the engine cancelled the run itself (`--failed-request-threshold`).
    pub abort_reason: Option<String>,
    pub windows: Vec<PhaseWindow>,
    pub end_ns: u64,
    pub records: u64,
}

/// Assigns request ids (contiguous, in issue order) and their payloads.
struct Issuer {
    next_id: u64,
    next_session: u64,
    /// Gives the conversation index of each new session, in issue order.
    order: Box<dyn FnMut() -> usize + Send>,
}

/// A claimed request: its id, its payload, and the session it belongs to.
#[derive(Clone, Copy, Debug)]
struct Claim {
    id: u64,
    /// Index into `Engine::sessions`.
    conversation: usize,
    session_num: u64,
}

pub struct Engine {
    cfg: EngineConfig,
    target: Target,
    /// Idle connections, each with the slot number it is recorded under (`Record::worker`).
    /// A request takes one (or a fresh slot) and gives it back when done; they carry over
    /// from warmup into profiling.
    pool: std::sync::Mutex<Vec<(u32, Option<Conn>)>>,
    next_slot: std::sync::atomic::AtomicU32,
    issuer: std::sync::Mutex<Issuer>,
    clock: Clock,
    payloads: Arc<Vec<PreparedPayload>>,
    /// Each conversation as (first payload index, number of turns), in workload order.
    sessions: Vec<(usize, usize)>,
    /// None: no client-side tokenization in the engine (the caller counts, or uses usage).
    counter: Option<Arc<dyn TokenCounter>>,
    progress: Arc<Progress>,
    stop: StopSignal,
    /// Seed of the cancellation choice (from the "cancellation" generator).
    cancel_seed: u64,
    /// Why the engine cancelled the run itself (`--failed-request-threshold`).
    abort_reason: std::sync::Mutex<Option<String>>,
    /// Reads responses of the endpoint (the `<think>` split is the engine's own, per request).
    decoder: decode::Decoder,
}

/// Per-phase state shared by the tasks of the phase.
struct PhaseState {
    engine: Arc<Engine>,
    phase: Phase,
    /// When the phase began (ns from the anchor): fixed-schedule offsets count from it.
    start_ns: u64,
    limit: Option<u64>,
    issued: AtomicU64,
    /// No new request at or after this (ns from the anchor).
    issue_until_ns: Option<u64>,
    sent_end: AtomicU64,
    requests_end: AtomicU64,
    completed: AtomicU64,
    errors: AtomicU64,
    /// Set when the grace period ran out: in-flight requests of the phase are cancelled.
    abort: watch::Sender<bool>,
    /// Places for requests waiting for their first token (`--prefill-concurrency`).
    prefill: Option<Arc<tokio::sync::Semaphore>>,
    failed_threshold: Option<(f64, u64)>,
    sink: mpsc::UnboundedSender<EngineEvent>,
}

impl PhaseState {
    /// The first request of a new session, or None when the phase stops issuing. Ids are
    /// taken only here and in `claim_turn`, so every id is one issued request and ends as
    /// one record.
    fn claim(&self) -> Option<Claim> {
        if self.past_issue_end() {
            return None;
        }
        self.claim_planned()
    }

    fn past_issue_end(&self) -> bool {
        self.issue_until_ns
            .is_some_and(|t| self.engine.clock.now_ns() >= t)
    }

    /// Like `claim`, for a request whose planned time the caller already checked against
    /// the end of issuing: a late wake-up must not drop a request the plan holds.
    fn claim_planned(&self) -> Option<Claim> {
        self.claim_conversation(None)
    }

    /// `claim_planned` for a given conversation (a fixed schedule's), or the next of `order`.
    fn claim_conversation(&self, conversation: Option<usize>) -> Option<Claim> {
        let e = &self.engine;
        if e.stop.level() > 0 {
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
    fn claim_turn(&self) -> Option<u64> {
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

    fn finish(&self, rec: Record, sent_body: Option<Bytes>) -> bool {
        let e = &self.engine;
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

impl Engine {
    /// `order` gives the conversation index (0-based, in workload order) of each new
    /// session, in issue order; with single-turn workloads that is the payload index.
    pub fn new(
        cfg: EngineConfig,
        clock: Clock,
        payloads: Vec<PreparedPayload>,
        order: Box<dyn FnMut() -> usize + Send>,
        counter: Option<Arc<dyn TokenCounter>>,
        stop: StopSignal,
    ) -> Self {
        assert!(!payloads.is_empty(), "a workload has at least one payload");
        let mut sessions: Vec<(usize, usize)> = Vec::new();
        for (i, p) in payloads.iter().enumerate() {
            match sessions.last_mut() {
                Some((first, len)) if payloads[*first].conversation_id == p.conversation_id => {
                    *len += 1
                }
                _ => sessions.push((i, 1)),
            }
        }
        let target = Target::from_uri(&cfg.uri);
        let cancel_seed = u64::from_le_bytes(
            inferbench_core::seed::derive_seed(cfg.seed, "cancellation")[..8]
                .try_into()
                .expect("8 bytes"),
        );
        let decoder = decode::Decoder::new(
            cfg.endpoint_type,
            &inferbench_core::endpoint_plan::EndpointPlan {
                response_field: cfg.response_field.clone(),
                ..Default::default()
            },
        )
        // The caller checked the field path; an invalid one reads as no path.
        .unwrap_or_else(|_| decode::Decoder::plain(cfg.endpoint_type));
        Engine {
            decoder,
            cfg,
            target,
            pool: std::sync::Mutex::new(Vec::new()),
            next_slot: std::sync::atomic::AtomicU32::new(0),
            issuer: std::sync::Mutex::new(Issuer {
                next_id: 0,
                next_session: 0,
                order,
            }),
            clock,
            payloads: Arc::new(payloads),
            sessions,
            counter,
            progress: Arc::new(Progress::default()),
            stop,
            cancel_seed,
            abort_reason: std::sync::Mutex::new(None),
        }
    }

    pub fn progress(&self) -> Arc<Progress> {
        self.progress.clone()
    }

    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Number of conversations in the workload (what `order` indexes).
    pub fn conversations(&self) -> usize {
        self.sessions.len()
    }

    fn take_conn(&self) -> (u32, Option<Conn>) {
        self.pool
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_else(|| (self.next_slot.fetch_add(1, Ordering::Relaxed), None))
    }

    fn put_conn(&self, slot: u32, conn: Option<Conn>) {
        let conn = conn.filter(|c| !c.done && !c.sender.is_closed());
        if let Ok(mut p) = self.pool.lock() {
            p.push((slot, conn));
        }
    }

    /// Whether request `id` is one of those `--request-cancellation-rate` cancels: a
    /// deterministic draw from the run seed and the id, so the choice does not depend on
    /// timing or on which task ran it.
    fn cancels(&self, id: u64) -> Option<Duration> {
        let c = self.cfg.cancellation?;
        let u = splitmix64(self.cancel_seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 11;
        let x = u as f64 / (1u64 << 53) as f64;
        (x * 100.0 < c.rate_pct).then_some(c.delay)
    }

    /// Run the phases in order. Records and phase windows go to `sink` as they happen.
    /// Returns when every issued request has its record.
    pub async fn run(self, sink: mpsc::UnboundedSender<EngineEvent>) -> RunOutcome {
        let engine = Arc::new(self);
        let mut windows = Vec::new();
        let mut records = 0;
        for spec in engine.cfg.phases.clone() {
            if engine.stop.level() > 0 {
                break;
            }
            let w = run_phase(&engine, &spec, &sink).await;
            records += w.completed;
            let _ = sink.send(EngineEvent::Phase(w));
            windows.push(w);
        }
        let abort_reason = engine.abort_reason.lock().ok().and_then(|r| r.clone());
        let stop_reason = if abort_reason.is_some() {
            StopReason::Failed
        } else if engine.stop.level() > 0 {
            StopReason::Interrupted
        } else {
            StopReason::Completed
        };
        RunOutcome {
            stop_reason,
            abort_reason,
            windows,
            end_ns: engine.clock.now_ns(),
            records,
        }
    }
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

async fn run_phase(
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
        prefill: spec
            .prefill_concurrency
            .map(|n| Arc::new(tokio::sync::Semaphore::new(n))),
        failed_threshold: spec.failed_request_threshold,
        sink: sink.clone(),
    });
    let mut tasks = tokio::task::JoinSet::new();
    match &spec.mode {
        LoadMode::Burst { concurrency, ramp } => {
            let workers = match spec.request_count {
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
            ceiling,
            ceiling_ramp,
        } => {
            let label = format!("arrivals.{}", spec.phase.as_str());
            // The plan checked the parameters; a schedule that cannot be made issues nothing.
            if let Ok(mut schedule) =
                RateSchedule::new(*pattern, *rate, *ramp, engine.cfg.seed, &label)
            {
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
    let wait_all = async {
        while let Some(r) = tasks.join_next().await {
            // A task panic would be a bug; the other tasks' records are still kept.
            let _ = r;
        }
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
async fn slot_loop(state: Arc<PhaseState>, mut plan: impl FnMut(u64) -> Option<u64>) {
    let engine = state.engine.clone();
    let (slot, mut conn) = engine.take_conn();
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
        if !run_session(&state, claim, slot, planned_ns, &mut scratch, &mut conn).await {
            // The writer is gone: nothing can be recorded any more, so stop issuing.
            break;
        }
    }
    engine.put_conn(slot, conn);
}

/// The conversation so far, resent before a later turn's own messages: each earlier turn's
/// messages as sent (without the history in front of them), then the assistant's reply
/// (its streamed or returned content). Only bodies with a message list take part: `messages`
/// (chat, Anthropic messages) or `input` (responses).
#[derive(Default)]
struct History {
    messages: Vec<serde_json::Value>,
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

fn is_system(m: &serde_json::Value) -> bool {
    m.get("role").and_then(serde_json::Value::as_str) == Some("system")
}

/// Sends the turns of the session that starts with `first`, one after another on this
/// slot's connection: turn 0 at `planned_ns`; a later turn after its delay (from the end of
/// the previous turn), and not before its trace time under a fixed schedule. Each turn is
/// one request and one record; a failed turn does not end the session (its reply is what
/// arrived). Returns false when the writer is gone.
async fn run_session(
    state: &Arc<PhaseState>,
    first: Claim,
    slot: u32,
    planned_ns: u64,
    scratch: &mut Scratch,
    conn: &mut Option<Conn>,
) -> bool {
    let phase_start_ns = state.start_ns;
    let engine = &state.engine;
    let Some(&(start, len)) = engine.sessions.get(first.conversation) else {
        return true;
    };
    let mut history = History::default();
    let mut id = first.id;
    let mut planned = planned_ns;
    for turn in 0..len {
        let index = start + turn;
        let payload = &engine.payloads[index];
        if turn > 0 {
            let Some(next) = state.claim_turn() else {
                return true;
            };
            id = next;
            let mut due = engine.clock.now_ns() + payload.delay.map_or(0, |d| d.as_nanos() as u64);
            if let Some(t) = payload.schedule_ns {
                due = due.max(phase_start_ns + t);
            }
            planned = due;
            if due > engine.clock.now_ns() {
                let at = engine.clock.instant_at(due);
                tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
            }
        }
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
            },
            slot,
            scratch,
            conn,
        )
        .await;
        if let Some(b) = &rebuilt {
            // The workload's count was of the turn alone; the body sent holds the history.
            rec.tokens.input = None;
            if engine.cfg.keep_raw {
                rec.sent_body = Some(String::from_utf8_lossy(b).into_owned());
            }
        }
        if payload.history || turn + 1 < len {
            history.push_turn(own, &rec);
        }
        if !state.finish(rec, rebuilt) {
            return false;
        }
    }
    true
}

/// One request to send: which id, payload and session, when it was planned, and the body
/// (the payload's, or with the conversation's history in front).
struct Turn {
    id: u64,
    payload_index: usize,
    session_num: u64,
    planned_ns: u64,
    body: Bytes,
}

/// Rate mode: a thread sleeps until each planned send time (absolute deadlines, with the
/// kernel's timer slack lowered for it) and hands the request to the runtime, which sends
/// it on a free connection (after a free slot, with a ceiling).
/// The planned offsets (ns from the phase start) of a rate or fixed schedule, each with the
/// conversation it must start (None: the next of the engine's order); None ends it.
type Offsets = Box<dyn FnMut() -> Option<(u64, Option<usize>)> + Send>;

async fn rate_dispatcher(
    state: Arc<PhaseState>,
    mut offsets: Offsets,
    ceiling: Option<usize>,
    ceiling_ramp: Option<Duration>,
    start_ns: u64,
) {
    let engine = state.engine.clone();
    let (tx, mut rx) = mpsc::unbounded_channel::<(Claim, u64)>();
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
                if tx.send((claim, planned)).is_err() {
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
        let clock = engine.clock;
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
    let mut tasks = tokio::task::JoinSet::new();
    while let Some((claim, planned_ns)) = rx.recv().await {
        let permit = match &slots {
            Some(s) => s.clone().acquire_owned().await.ok(),
            None => None,
        };
        let state = state.clone();
        tasks.spawn(async move {
            let engine = state.engine.clone();
            let (slot, mut conn) = engine.take_conn();
            let mut scratch = Scratch::default();
            // A session holds its connection and its slot under the ceiling across its
            // turns and their delays.
            run_session(&state, claim, slot, planned_ns, &mut scratch, &mut conn).await;
            engine.put_conn(slot, conn);
            drop(permit);
        });
        // Reap finished tasks as we go, so the set stays small on long runs.
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
}

/// When slot `i` (0-based) of a ramp opens: the first time the limit reaches `i + 1`.
fn slot_opens_ns(r: &ConcurrencyRamp, i: usize) -> u64 {
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
fn sleep_until_ns(state: &PhaseState, clock: Clock, target: u64) -> bool {
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
fn lower_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Buffers reused across the requests of one worker.
#[derive(Default)]
struct Scratch {
    msgs: Vec<SseMessage>,
    text: String,
}

/// A v4 UUID from request `id` and a salt: deterministic per request and run, drawn
/// without a shared generator, so that any task can make it without locking.
fn new_uuid(salt: u64, id: u64) -> String {
    let a = splitmix64(salt ^ id.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    let b = splitmix64(a ^ salt.rotate_left(17));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_le_bytes());
    bytes[8..].copy_from_slice(&b.to_le_bytes());
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

enum Interrupt {
    Timeout,
    /// Ctrl-C twice, SIGTERM, or the end of the grace period.
    Abort,
    /// `--request-cancellation-rate` chose this request.
    Cancel,
}

async fn execute(
    state: &PhaseState,
    turn: Turn,
    worker: u32,
    scratch: &mut Scratch,
    conn: &mut Option<Conn>,
) -> Record {
    let engine = &*state.engine;
    let phase = state.phase;
    let cfg = &engine.cfg;
    let clock = engine.clock;
    let Turn {
        id,
        payload_index,
        session_num,
        planned_ns,
        body: request_body,
    } = turn;
    let payload = &engine.payloads[payload_index];
    let salt = engine.cancel_seed ^ clock.anchor_unix_ns();
    let request_id = new_uuid(salt, 2 * id);
    // One correlation id per session (all its turns carry it).
    let correlation_id = new_uuid(salt, 2 * session_num + 1);
    let mut rec = Record {
        id,
        phase: PhaseOpt(phase),
        conversation_id: payload.conversation_id.clone(),
        session_num,
        turn_index: payload.turn_index,
        payload_index: payload_index as u64,
        worker,
        streaming: cfg.streaming,
        planned_ns,
        request_bytes: request_body.len() as u64,
        requested_output_tokens: payload.requested_output_tokens,
        tokens: TokenCounts {
            input: payload.input_tokens,
            ..Default::default()
        },
        ..Default::default()
    };
    // Room for one event per token plus role, usage and [DONE], so the vectors rarely grow.
    let expected = payload.requested_output_tokens.unwrap_or(16).min(4096) as usize + 4;
    rec.frames.reserve(expected);
    rec.events.reserve(expected);

    let sent = Arc::new(AtomicU64::new(0));
    // Our own HTTP/1.1 connection: origin-form target and an explicit Host header.
    let mut builder = hyper::Request::post(engine.target.path.clone())
        .header(http::header::HOST, engine.target.host_header.clone())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(
            http::header::USER_AGENT,
            concat!("inferbench/", env!("CARGO_PKG_VERSION")),
        )
        .header("X-Request-ID", request_id.as_str())
        .header("X-Correlation-ID", correlation_id.as_str());
    if cfg.streaming {
        builder = builder.header(http::header::ACCEPT, "text/event-stream");
    }
    rec.request_id = request_id;
    rec.correlation_id = correlation_id;
    let req = match builder.body(TimedBody::new(request_body, clock, sent.clone())) {
        Ok(mut r) => {
            // The user's headers (and the API key) replace ours of the same name.
            for (k, v) in &cfg.headers {
                r.headers_mut().insert(k.clone(), v.clone());
            }
            r
        }
        Err(e) => {
            let now = clock.now_ns();
            rec.start_ns = now;
            rec.end_ns = now;
            rec.error = Some(err(
                ErrorKind::Protocol,
                None,
                "RequestBuildError",
                e.to_string(),
            ));
            return rec;
        }
    };

    // A place among the requests waiting for their first token, before the request starts.
    let mut prefill_permit = match &state.prefill {
        Some(sem) => sem.clone().acquire_owned().await.ok(),
        None => None,
    };
    rec.start_ns = clock.now_ns();
    let deadline = tokio::time::Instant::from_std(clock.instant_at(rec.start_ns)) + cfg.timeout;

    // One timer and one abort waiter per request, reused across every await below:
    // registering them per body frame costs a timer-wheel insert and a lock each time.
    let timeout = sleep_until(deadline);
    tokio::pin!(timeout);
    let abort = wait_for_abort(engine.stop.subscribe(), state.abort.subscribe());
    tokio::pin!(abort);
    // `--request-cancellation-rate`: this request is aborted `delay` after it was sent.
    let cancel = CancelAfterSent {
        delay: engine.cancels(id),
        sent: sent.clone(),
        clock,
        sleep: None,
    };
    tokio::pin!(cancel);

    // Waits for whichever comes first: the future, the timeout, or an abort (stop level 2).
    macro_rules! guarded {
        ($fut:expr) => {{
            tokio::select! {
                biased;
                r = $fut => Ok(r),
                _ = &mut timeout => Err(Interrupt::Timeout),
                _ = &mut abort => Err(Interrupt::Abort),
                _ = &mut cancel => Err(Interrupt::Cancel),
            }
        }};
    }

    // A live connection, or a new one (its set-up is part of this request, as in AIPerf).
    if conn
        .as_ref()
        .is_some_and(|c| c.done || c.sender.is_closed())
    {
        *conn = None;
    }
    if conn.is_none() {
        match guarded!(connect(&engine.target, clock)) {
            Ok(Ok(c)) => *conn = Some(c),
            Ok(Err(e)) => {
                rec.end_ns = clock.now_ns();
                rec.error = Some(err(ErrorKind::Transport, None, "ConnectionError", e));
                return rec;
            }
            Err(i) => {
                interrupted(&mut rec, i, clock, cfg.timeout);
                return rec;
            }
        }
    }
    let Conn {
        sender,
        io,
        stamp,
        done,
    } = conn.as_mut().expect("connected above");

    // Like `guarded!`, while driving this worker's connection in the same task: reads and
    // writes then happen the moment this task runs, with no hand-off to a connection task
    // queued behind every other stream's work (that hand-off was the largest delay a busy
    // client added between "start" and the bytes leaving). The connection is polled first,
    // so that what it reads is seen by the future in the same pass.
    macro_rules! driven {
        ($fut:expr) => {{
            let fut = $fut;
            tokio::pin!(fut);
            loop {
                tokio::select! {
                    biased;
                    _ = io.as_mut(), if !*done => {
                        // The connection ended (closed or failed); the future sees it next.
                        *done = true;
                    }
                    r = &mut fut => break Ok(r),
                    _ = &mut timeout => break Err(Interrupt::Timeout),
                    _ = &mut abort => break Err(Interrupt::Abort),
                    _ = &mut cancel => break Err(Interrupt::Cancel),
                }
            }
        }};
    }

    let resp = match driven!(sender.ready()) {
        Ok(Ok(())) => driven!(sender.send_request(req)),
        Ok(Err(e)) => Ok(Err(e)),
        Err(i) => Err(i),
    };
    let resp = match resp {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            rec.end_ns = clock.now_ns();
            rec.error = Some(err(
                ErrorKind::Transport,
                None,
                "TransportError",
                error_chain(&e),
            ));
            *done = true;
            return rec;
        }
        Err(i) => {
            interrupted(&mut rec, i, clock, cfg.timeout);
            *done = true;
            return rec;
        }
    };
    let start_ns = rec.start_ns;
    // A frame takes the time of the socket read that completed it (`ReadStamp`), never
    // earlier than this request's start.
    let stamp = stamp.clone();
    let stamp_now = || {
        stamp
            .get()
            .map_or_else(|| clock.now_ns(), |t| t.max(start_ns))
    };
    rec.ack_ns = Some(stamp_now());
    let s = sent.load(Ordering::Relaxed);
    if s > 0 {
        rec.sent_ns = Some(s);
    }
    let status = resp.status();
    rec.status = Some(status.as_u16());
    let is_sse = status.is_success()
        && resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let mut body = resp.into_body();
    let mut parser = if is_sse { Some(SseParser::new()) } else { None };
    let mut think = cfg.reasoning_tags.then(ThinkSplitter::default);
    let mut stream_decoder = engine.decoder.stream();
    // A response not read to its end leaves the connection unusable for the next request.
    let mut body_complete = false;
    let mut whole = Vec::new();
    loop {
        let frame = match driven!(body.frame()) {
            Ok(f) => f,
            Err(i) => {
                interrupted(&mut rec, i, clock, cfg.timeout);
                break;
            }
        };
        let t = stamp_now();
        match frame {
            None => {
                body_complete = true;
                break;
            }
            Some(Err(e)) => {
                rec.end_ns = t;
                rec.error = Some(err(
                    ErrorKind::Transport,
                    None,
                    "ResponsePayloadError",
                    format!("the response body was cut: {}", error_chain(&e)),
                ));
                break;
            }
            Some(Ok(f)) => {
                let Ok(data) = f.into_data() else { continue };
                let frame_idx = rec.frames.len() as u32;
                rec.frames.push(Frame {
                    t_ns: t,
                    bytes: data.len() as u32,
                });
                match parser.as_mut() {
                    Some(p) => {
                        p.push(&data, &mut scratch.msgs);
                        let mut stop_reading = false;
                        for m in scratch.msgs.drain(..) {
                            if on_message(
                                &mut stream_decoder,
                                cfg,
                                &mut rec,
                                m,
                                frame_idx,
                                t,
                                &mut think,
                            ) {
                                stop_reading = true;
                            }
                        }
                        if prefill_permit.is_some() && rec.events.iter().any(Event::has_text) {
                            // The first token arrived: the place goes to the next request.
                            prefill_permit = None;
                        }
                        if stop_reading {
                            break;
                        }
                    }
                    None => whole.extend_from_slice(&data),
                }
            }
        }
    }
    if !body_complete {
        *done = true;
    }
    // A stream that ended cleanly but in the middle of an event lost that event: say so.
    if let (true, None, Some(p)) = (body_complete, &rec.error, parser.as_mut())
        && let Some(left) = p.finish()
        && (left.has_data || left.partial_line)
    {
        rec.error = Some(err(
            ErrorKind::Protocol,
            None,
            "IncompleteSSEEvent",
            format!(
                "the stream ended inside an SSE event ({} bytes after the last complete event)",
                left.bytes
            ),
        ));
    }
    if rec.end_ns == 0 {
        rec.end_ns = clock.now_ns();
    }
    if rec.error.is_none() && parser.is_none() {
        on_body(&engine.decoder, cfg, &mut rec, &whole, status, &mut think);
    }
    if let Some(sp) = think.as_mut() {
        // A partial tag held back at the end was text after all.
        let (c, r) = sp.finish();
        if let Some(ev) = rec.events.iter_mut().rev().find(|e| e.has_text()) {
            append(&mut ev.content, &c);
            append(&mut ev.reasoning, &r);
        }
    }
    if let Some(counter) = &engine.counter {
        count_tokens(counter.as_ref(), &mut rec, &mut scratch.text);
    }
    rec
}

/// Resolves when the stop level reaches 2 (abort in-flight requests) or the phase's grace
/// period ran out; never otherwise.
async fn wait_for_abort(mut stop: watch::Receiver<u8>, mut phase: watch::Receiver<bool>) {
    let mut stop_open = true;
    let mut phase_open = true;
    loop {
        if *stop.borrow_and_update() >= 2 || *phase.borrow_and_update() {
            return;
        }
        // A closed channel can never fire again: stop waiting on it.
        tokio::select! {
            r = stop.changed(), if stop_open => stop_open = r.is_ok(),
            r = phase.changed(), if phase_open => phase_open = r.is_ok(),
            else => std::future::pending::<()>().await,
        }
    }
}

/// Fires `delay` after the request body was handed to the connection (never, without a
/// delay). It is polled right after the connection in the same pass, so it sees the write
/// as soon as it happened.
struct CancelAfterSent {
    delay: Option<Duration>,
    sent: Arc<AtomicU64>,
    clock: Clock,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl std::future::Future for CancelAfterSent {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(delay) = self.delay else {
            return Poll::Pending;
        };
        if self.sleep.is_none() {
            let sent = self.sent.load(Ordering::Relaxed);
            if sent == 0 {
                return Poll::Pending;
            }
            let at = tokio::time::Instant::from_std(self.clock.instant_at(sent)) + delay;
            self.sleep = Some(Box::pin(tokio::time::sleep_until(at)));
        }
        match self.sleep.as_mut() {
            Some(s) => s.as_mut().poll(cx),
            None => Poll::Pending,
        }
    }
}

fn interrupted(rec: &mut Record, i: Interrupt, clock: Clock, timeout: Duration) {
    let now = clock.now_ns();
    rec.end_ns = now;
    match i {
        Interrupt::Timeout => {
            rec.error = Some(err(
                ErrorKind::Timeout,
                None,
                "RequestTimeout",
                format!(
                    "no complete response within --request-timeout-seconds {}",
                    timeout.as_secs_f64()
                ),
            ))
        }
        Interrupt::Abort => {
            rec.cancelled = true;
            rec.cancel_ns = Some(now);
            rec.error = Some(err(
                ErrorKind::Cancelled,
                Some(499),
                "RequestCancelled",
                "cancelled before the response ended (stop requested, or the grace period ran out)"
                    .into(),
            ));
        }
        Interrupt::Cancel => {
            rec.cancelled = true;
            rec.cancel_ns = Some(now);
            rec.error = Some(err(
                ErrorKind::Cancelled,
                Some(499),
                "RequestCancelled",
                "cancelled by --request-cancellation-rate".into(),
            ));
        }
    }
}

fn err(kind: ErrorKind, code: Option<u16>, ty: &str, message: String) -> RecordError {
    RecordError {
        kind,
        code,
        error_type: ty.to_string(),
        message,
    }
}

fn append(field: &mut Option<String>, text: &str) {
    if !text.is_empty() {
        field.get_or_insert_with(String::new).push_str(text);
    }
}

fn fill_event(ev: &mut Event, d: Decoded, think: &mut Option<ThinkSplitter>) {
    ev.content = d.content;
    ev.reasoning = d.reasoning;
    if let Some(sp) = think.as_mut()
        && let Some(c) = ev.content.take()
    {
        let (content, reasoning) = sp.push(&c);
        // An empty piece stays as sent (`Some("")`); a piece that was all reasoning leaves
        // no content behind.
        ev.content = (!content.is_empty() || c.is_empty()).then_some(content);
        append(&mut ev.reasoning, &reasoning);
    }
    ev.tool = d.tool;
    ev.usage = d.usage;
    ev.finish_reason = d.finish_reason;
}

/// Handle one SSE message. Returns true when reading should stop (the response is invalid).
fn on_message(
    decoder: &mut decode::StreamDecoder<'_>,
    cfg: &EngineConfig,
    rec: &mut Record,
    m: SseMessage,
    frame: u32,
    t: u64,
    think: &mut Option<ThinkSplitter>,
) -> bool {
    let mut ev = Event {
        frame,
        t_ns: t,
        ..Default::default()
    };
    if cfg.keep_raw {
        ev.raw = Some(m.data.clone());
    }
    if m.event.as_deref() == Some("error") {
        ev.kind = EventKindOpt(EventKind::Error);
        rec.events.push(ev);
        // AIPerf reports an SSE error event as code 502.
        rec.error = Some(err(
            ErrorKind::Protocol,
            Some(502),
            "SSEErrorEvent",
            excerpt(&m.data),
        ));
        return true;
    }
    if decode::is_done(&m.data) {
        ev.kind = EventKindOpt(EventKind::Done);
        rec.events.push(ev);
        return false;
    }
    let decoded = decoder.message(m.event.as_deref(), &m.data);
    match decoded {
        Ok(d) => {
            let error = d.error.clone();
            fill_event(&mut ev, d, think);
            if let Some(msg) = error {
                ev.kind = EventKindOpt(EventKind::Error);
                rec.events.push(ev);
                rec.error = Some(err(ErrorKind::Protocol, None, "StreamError", msg));
                return true;
            }
            rec.events.push(ev);
            false
        }
        Err(e) => {
            ev.kind = EventKindOpt(EventKind::Other);
            if ev.raw.is_none() {
                ev.raw = Some(excerpt(&m.data));
            }
            rec.events.push(ev);
            rec.error = Some(decode_error(e));
            true
        }
    }
}

fn decode_error(e: DecodeError) -> RecordError {
    err(ErrorKind::Protocol, None, "InvalidResponse", e.to_string())
}

/// A non-streamed body (or an error body): one `Body` event at the last frame's time.
fn on_body(
    decoder: &decode::Decoder,
    cfg: &EngineConfig,
    rec: &mut Record,
    body: &[u8],
    status: http::StatusCode,
    think: &mut Option<ThinkSplitter>,
) {
    let (frame, t) = match rec.frames.last() {
        Some(f) => (rec.frames.len() as u32 - 1, f.t_ns),
        None => (0, rec.ack_ns.unwrap_or(rec.end_ns)),
    };
    let text = String::from_utf8_lossy(body);
    if !status.is_success() {
        rec.error = Some(err(
            ErrorKind::Http,
            Some(status.as_u16()),
            "HTTPError",
            http_error_message(status, &text),
        ));
        if !text.is_empty() {
            rec.events.push(Event {
                frame,
                t_ns: t,
                kind: EventKindOpt(EventKind::Error),
                raw: Some(excerpt(&text)),
                ..Default::default()
            });
        }
        return;
    }
    let mut ev = Event {
        frame,
        t_ns: t,
        kind: EventKindOpt(EventKind::Body),
        ..Default::default()
    };
    if cfg.keep_raw {
        ev.raw = Some(text.to_string());
    }
    let decoded = decoder.body(&text);
    match decoded {
        Ok(d) => {
            let error = d.error.clone();
            fill_event(&mut ev, d, think);
            rec.events.push(ev);
            if let Some(msg) = error {
                rec.error = Some(err(ErrorKind::Protocol, None, "ResponseError", msg));
            }
        }
        Err(e) => {
            if ev.raw.is_none() {
                ev.raw = Some(excerpt(&text));
            }
            ev.kind = EventKindOpt(EventKind::Other);
            rec.events.push(ev);
            rec.error = Some(decode_error(e));
        }
    }
}

/// `HTTP 500: <error.message>` when the body is an OpenAI-style error, else an excerpt.
fn http_error_message(status: http::StatusCode, body: &str) -> String {
    let msg = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            let e = v.get("error")?;
            Some(
                e.get("message")
                    .and_then(|m| m.as_str())
                    .map(str::to_string)
                    .unwrap_or_else(|| e.to_string()),
            )
        })
        .unwrap_or_else(|| excerpt(body));
    format!("HTTP {}: {}", status.as_u16(), msg)
}

fn excerpt(s: &str) -> String {
    const MAX: usize = 300;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Client-side counts as AIPerf makes them: all output texts (content and tool calls)
/// concatenated with no separator and encoded once; the same for reasoning. Only for a
/// record without error. Public so that a caller can count off the client's thread (the
/// binary does it on the evidence writer's thread, keeping tokenization out of the loop
/// that stamps frames and issues requests).
pub fn count_tokens(counter: &dyn TokenCounter, rec: &mut Record, buf: &mut String) {
    if rec.error.is_some() {
        return;
    }
    buf.clear();
    let mut any_reasoning = false;
    for e in &rec.events {
        if let Some(c) = &e.content {
            buf.push_str(c);
        }
        if let Some(t) = &e.tool {
            buf.push_str(t);
        }
        any_reasoning |= e.reasoning.as_deref().is_some_and(|r| !r.is_empty());
    }
    rec.tokens.output = Some(counter.count(buf));
    if any_reasoning {
        buf.clear();
        for e in &rec.events {
            if let Some(r) = &e.reasoning {
                buf.push_str(r);
            }
        }
        rec.tokens.reasoning = Some(counter.count(buf));
    } else {
        rec.tokens.reasoning = Some(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Words;
    impl TokenCounter for Words {
        fn count(&self, text: &str) -> u64 {
            text.split_whitespace().count() as u64
        }
    }

    #[test]
    fn counts_output_and_reasoning_separately() {
        let mut rec = Record {
            events: vec![
                Event {
                    reasoning: Some(" a b".into()),
                    ..Default::default()
                },
                Event {
                    content: Some(" c".into()),
                    ..Default::default()
                },
                Event {
                    tool: Some(" f".into()),
                    content: Some(" d".into()),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let mut buf = String::new();
        count_tokens(&Words, &mut rec, &mut buf);
        assert_eq!(rec.tokens.output, Some(3));
        assert_eq!(rec.tokens.reasoning, Some(2));
    }

    #[test]
    fn http_error_message_prefers_the_openai_error_message() {
        let m = http_error_message(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            r#"{"error":{"message":"boom","type":"server_error"}}"#,
        );
        assert_eq!(m, "HTTP 500: boom");
        let m = http_error_message(http::StatusCode::NOT_FOUND, "nope");
        assert_eq!(m, "HTTP 404: nope");
    }

    #[test]
    fn stop_signal_escalates_to_two() {
        let s = StopSignal::new();
        assert_eq!(s.level(), 0);
        assert_eq!(s.escalate(), 1);
        assert_eq!(s.escalate(), 2);
        assert_eq!(s.escalate(), 2);
    }
}
