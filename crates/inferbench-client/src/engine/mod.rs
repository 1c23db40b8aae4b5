//! The engine: runs the phases of a plan (warmup, then profiling) in concurrency mode and
//! turns every request it issues into exactly one [`Record`]: success, HTTP error, transport
//! error, timeout or cancellation.
//!
//! The parts, by job: `dispatch` (phases, slots, the burst, rate, user-centric and fixed
//! modes, the issuer), `session` (a conversation's turns and the history resent before
//! them), `request` (the HTTP execution of one request: head, body, timeout, cancellation),
//! `stream` (SSE messages and bodies into events and the record's error) and `tokens`
//! (client-side token counts).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use inferbench_core::connection_plan::ReuseStrategy;
use inferbench_core::evidence::{PhaseWindow, StopReason};
use inferbench_core::plan::EndpointType;
use inferbench_core::rate_series::RateSeries;
use inferbench_core::record::{Phase, Record};
use inferbench_core::schedule::ArrivalPattern;
use tokio::sync::{mpsc, watch};

use crate::clock::Clock;
use crate::decode;
use crate::h1::H1Conn;
use crate::headers::ConfiguredHeader;
use crate::resources::{InternalQueues, Probes, SocketRegistry, WorkerThreads};
use crate::transport::Target;

mod connect;
mod dispatch;
mod request;
mod session;
mod spare;
mod stream;
mod tokens;
mod tree;

pub use spare::recycle;
pub use tokens::count_tokens;

use dispatch::{Issuer, run_phase};

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
    /// Child sessions this turn starts when it ends (agentic datasets; `tree`).
    pub branches: Vec<ChildBranch>,
    /// The media in the body (counts and sizes), copied onto the record.
    pub media: Option<inferbench_core::media::MediaSent>,
}

/// Children a turn starts when it ends (AIPerf's SPAWN and FORK branches): each child
/// session runs beside its parent on a connection of its own, takes no concurrency slot,
/// and counts toward the request count (docs/load-shapes.md "Child sessions").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChildBranch {
    /// Each child's conversation index (as `order` gives) and how long after the spawning
    /// turn ended its first turn is due (the trace's recorded offset, else zero).
    pub children: Vec<(usize, Duration)>,
    /// The children start with the parent's conversation so far (FORK).
    pub fork: bool,
    /// The parent's turn that waits until every child ended; None: the children run in
    /// the background (the phase still waits for them).
    pub join_turn: Option<u32>,
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
        /// `--request-rate-series`: after the ramp the rate follows these points.
        series: Option<Arc<RateSeries>>,
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
    /// Stop after this many requests (None: no count limit; then `duration` or
    /// `session_count` must be set).
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
    /// `--prefill-concurrency-ramp-duration`: the prefill places open from 1 to
    /// `prefill_concurrency` over it, as the concurrency ramp opens slots.
    pub prefill_ramp: Option<Duration>,
    /// `--failed-request-threshold`: (ratio, records needed before it is armed). Once at
    /// least that many records ended, a failed/total ratio above it cancels the run.
    pub failed_request_threshold: Option<(f64, u64)>,
    /// Start no more than this many root sessions (AIPerf's session-count stop condition:
    /// `--num-warmup-sessions`, an agentic trace's one pass). Their later turns and child
    /// sessions still run unless another limit stops them. None: no session limit.
    pub session_count: Option<u64>,
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
    /// Headers sent with every request, besides the engine's own (auth included), in order
    /// (see [`crate::headers::configured_headers`]).
    pub headers: Vec<ConfiguredHeader>,
    pub timeout: Duration,
    /// The phases in order (warmup first, if any).
    pub phases: Vec<PhaseSpec>,
    pub cancellation: Option<Cancellation>,
    /// Keep each event's raw data (for `--export-level raw`).
    pub keep_raw: bool,
    /// The run seed: request ids, arrivals and cancellations draw from generators named
    /// after their purpose.
    pub seed: u64,
    /// Reads responses of the endpoint, built (and its options checked) once by the caller
    /// with `decode::Decoder::new`: `--extra-inputs response_field` for `raw`/`template`, and
    /// `--reasoning-tags think` (text between `<think>` and `</think>` in the content is
    /// recorded as reasoning; the tags are dropped, `raw` keeps what was sent).
    pub decoder: decode::Decoder,
}

impl PhaseSpec {
    /// A phase with no limit but its request count (None: none) and no prefill limit or
    /// failure threshold.
    pub fn new(phase: Phase, mode: LoadMode, request_count: Option<u64>) -> PhaseSpec {
        PhaseSpec {
            phase,
            mode,
            request_count,
            duration: None,
            grace: None,
            prefill_concurrency: None,
            prefill_ramp: None,
            failed_request_threshold: None,
            session_count: None,
        }
    }
}

impl EngineConfig {
    /// A count-limited burst run (warmup, then profiling): the simplest plan.
    pub fn burst_phases(concurrency: usize, warmup: u64, count: u64) -> Vec<PhaseSpec> {
        let burst = LoadMode::Burst {
            concurrency,
            ramp: None,
        };
        let mut v = Vec::new();
        if warmup > 0 {
            v.push(PhaseSpec::new(Phase::Warmup, burst.clone(), Some(warmup)));
        }
        v.push(PhaseSpec::new(Phase::Profiling, burst, Some(count)));
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

pub struct Engine {
    cfg: EngineConfig,
    target: Target,
    /// Every URL's target in the plan's order (`targets[0]` is `target`): session k of the
    /// run goes to `targets[k mod N]` (AIPerf's round robin, docs/routing.md).
    targets: Vec<Target>,
    /// Each payload's model, when the run names several (`Record::model`); empty otherwise.
    models: Vec<Option<Arc<str>>>,
    /// Idle slots, each with the slot number it is recorded under (`Record::worker`) and its
    /// connection to each target (one per (slot, URL)). A request takes one (or a fresh
    /// slot) and gives it back when done; they carry over from warmup into profiling.
    pool: std::sync::Mutex<Vec<(u32, SlotConns)>>,
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
    /// `--reasoning-tags think`: split `<think>` out of the content of each response.
    reasoning_tags: bool,
    /// Called right before a phase's first request (`true`) and right after its last record
    /// (`false`), with nothing in flight: the run takes its bracketing scrapes there.
    phase_hook: Option<PhaseHook>,
    /// Awaited before a phase starts (`true`) and after it ends (`false`), after the hook
    /// (see [`Engine::set_phase_gate`]).
    phase_gate: Option<PhaseGate>,
    /// Requests due and not yet written, and records handed to the writer (evidence).
    queues: Arc<InternalQueues>,
    /// Every open connection's fd, for the sampler's socket readings.
    sockets: SocketRegistry,
    /// `--connection-reuse-strategy` (see [`Engine::set_reuse_strategy`]).
    reuse: ReuseStrategy,
    /// The next connection's number (`ConnectionEvidence::id`).
    next_conn_id: AtomicU64,
}

/// A slot's connections, one per target (index = URL index).
pub(super) type SlotConns = Vec<Option<H1Conn>>;

/// See [`Engine::set_phase_hook`].
pub type PhaseHook = Arc<dyn Fn(Phase, bool) + Send + Sync>;

/// See [`Engine::set_phase_gate`].
pub type PhaseGate = Arc<
    dyn Fn(
            Phase,
            bool,
        )
            -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send>>
        + Send
        + Sync,
>;

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
        // Kernel receive stamps on before the first connection (docs/timing.md).
        crate::rx_stamp::warm();
        let cancel_seed = u64::from_le_bytes(
            inferbench_core::seed::derive_seed(cfg.seed, "cancellation")[..8]
                .try_into()
                .expect("8 bytes"),
        );
        // The engine splits `<think>` itself, per event, so that an event that was all
        // reasoning keeps no content and a tag held back at the end joins the last event.
        let reasoning_tags = cfg.decoder.splits_think();
        let decoder = cfg.decoder.without_think();
        Engine {
            decoder,
            reasoning_tags,
            cfg,
            targets: vec![target.clone()],
            models: Vec::new(),
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
            phase_hook: None,
            phase_gate: None,
            queues: InternalQueues::new(),
            sockets: SocketRegistry::new(),
            reuse: ReuseStrategy::Pooled,
            next_conn_id: AtomicU64::new(0),
        }
    }

    /// What the resource sampler reads of this engine (its queues and connections), with
    /// the worker threads of the runtime the calling thread drives.
    pub fn probes(&self) -> Probes {
        Probes {
            workers: WorkerThreads::current_or_this_thread(),
            sockets: self.sockets.clone(),
            queues: self.queues.clone(),
        }
    }

    /// Sends the run's sessions over several URLs in turn (full request URIs, in the plan's
    /// order; the first should be the config's `uri`). Records then carry `url_index`.
    pub fn set_targets(&mut self, uris: &[hyper::Uri]) {
        if !uris.is_empty() {
            self.targets = uris.iter().map(Target::from_uri).collect();
            self.target = self.targets[0].clone();
        }
    }

    /// The model each payload names (by payload index), for `Record::model` when the run
    /// has several; ignored unless there is one per payload.
    pub fn set_models(&mut self, models: Vec<Option<Arc<str>>>) {
        if models.len() == self.payloads.len() {
            self.models = models;
        }
    }

    /// The URL index of the session that is `session_num`-th in issue order.
    fn url_of_session(&self, session_num: u64) -> usize {
        (session_num % self.targets.len() as u64) as usize
    }

    /// `--connection-reuse-strategy`: `pooled` (the default) keeps each slot's connection,
    /// `never` closes it after every request, `sticky-user-sessions` after a conversation's
    /// last turn.
    pub fn set_reuse_strategy(&mut self, strategy: ReuseStrategy) {
        self.reuse = strategy;
    }

    /// A function called at each phase's edges (see the field): it may block briefly.
    pub fn set_phase_hook(&mut self, hook: PhaseHook) {
        self.phase_hook = Some(hook);
    }

    /// An async step at each phase's edges, with nothing in flight (the server profiler's
    /// start and stop requests). An error before a phase cancels the run there, with that
    /// reason (no request of the phase is sent); an error after one is the gate's own to
    /// report.
    pub fn set_phase_gate(&mut self, gate: PhaseGate) {
        self.phase_gate = Some(gate);
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

    fn take_conn(&self) -> (u32, SlotConns) {
        self.pool
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_else(|| {
                let slot = self.next_slot.fetch_add(1, Ordering::Relaxed);
                (slot, (0..self.targets.len()).map(|_| None).collect())
            })
    }

    fn put_conn(&self, slot: u32, conns: SlotConns) {
        let conns = conns.into_iter().map(|c| c.filter(|c| !c.done)).collect();
        if let Ok(mut p) = self.pool.lock() {
            p.push((slot, conns));
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
            if let Some(h) = &engine.phase_hook {
                h(spec.phase, true);
            }
            if let Some(g) = &engine.phase_gate
                && let Err(e) = g(spec.phase, true).await
            {
                if let Ok(mut r) = engine.abort_reason.lock() {
                    r.get_or_insert(e);
                }
                if let Some(h) = &engine.phase_hook {
                    h(spec.phase, false);
                }
                break;
            }
            let w = run_phase(&engine, &spec, &sink).await;
            if let Some(h) = &engine.phase_hook {
                h(spec.phase, false);
            }
            if let Some(g) = &engine.phase_gate {
                let _ = g(spec.phase, false).await;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_signal_escalates_to_two() {
        let s = StopSignal::new();
        assert_eq!(s.level(), 0);
        assert_eq!(s.escalate(), 1);
        assert_eq!(s.escalate(), 2);
        assert_eq!(s.escalate(), 2);
    }
}
