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
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::sync::{mpsc, watch};
use tokio::time::sleep_until;

use crate::clock::Clock;
use crate::decode::{self, DecodeError, Decoded};
use crate::sse::{SseMessage, SseParser};
use crate::transport::{Conn, ReadStamp, Target, TimedBody, connect, error_chain};

/// Counts tokens of response text with the run's tokenizer (the binary wires the workload
/// crate's tokenizer in; the engine does not depend on it).
pub trait TokenCounter: Send + Sync {
    fn count(&self, text: &str) -> u64;
}

/// One request of the frozen workload, ready to send.
#[derive(Clone, Debug)]
pub struct PreparedPayload {
    pub conversation_id: String,
    pub turn_index: u32,
    pub body: Bytes,
    pub input_tokens: Option<u64>,
    pub requested_output_tokens: Option<u64>,
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
    pub concurrency: usize,
    pub warmup_request_count: u64,
    pub request_count: u64,
    /// Keep each event's raw data (for `--export-level raw`).
    pub keep_raw: bool,
    /// Seed for request and correlation ids.
    pub seed: u64,
}

/// What the engine emits, in order, to the evidence writer.
#[derive(Debug)]
pub enum EngineEvent {
    Record(Box<Record>),
    Phase(PhaseWindow),
}

/// Live counters for a progress display.
#[derive(Debug, Default)]
pub struct Progress {
    pub phase: AtomicU64,
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
    pub windows: Vec<PhaseWindow>,
    pub end_ns: u64,
    pub records: u64,
}

pub struct Engine {
    cfg: EngineConfig,
    target: Target,
    /// Idle connections between phases (each worker drives its own while it runs).
    conns: std::sync::Mutex<Vec<Conn>>,
    clock: Clock,
    payloads: Arc<Vec<PreparedPayload>>,
    /// Payload index of every scheduled request, warmup first.
    order: Arc<Vec<usize>>,
    /// None with `--use-server-token-count`: no client-side tokenization at all.
    counter: Option<Arc<dyn TokenCounter>>,
    progress: Arc<Progress>,
    stop: StopSignal,
}

struct Shared {
    engine: Arc<Engine>,
    next: AtomicU64,
    sent_end: AtomicU64,
    requests_end: AtomicU64,
    completed: AtomicU64,
    errors: AtomicU64,
}

impl Engine {
    /// `order` must hold `warmup_request_count + request_count` payload indices.
    pub fn new(
        cfg: EngineConfig,
        clock: Clock,
        payloads: Vec<PreparedPayload>,
        order: Vec<usize>,
        counter: Option<Arc<dyn TokenCounter>>,
        stop: StopSignal,
    ) -> Self {
        assert_eq!(
            order.len() as u64,
            cfg.warmup_request_count + cfg.request_count,
            "one payload index per scheduled request"
        );
        assert!(order.iter().all(|&i| i < payloads.len()));
        let target = Target::from_uri(&cfg.uri);
        Engine {
            cfg,
            target,
            conns: std::sync::Mutex::new(Vec::new()),
            clock,
            payloads: Arc::new(payloads),
            order: Arc::new(order),
            counter,
            progress: Arc::new(Progress::default()),
            stop,
        }
    }

    pub fn progress(&self) -> Arc<Progress> {
        self.progress.clone()
    }

    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Run warmup (if any), then profiling. Records and phase windows go to `sink` as they
    /// happen. Returns when every issued request has its record.
    pub async fn run(self, sink: mpsc::UnboundedSender<EngineEvent>) -> RunOutcome {
        let engine = Arc::new(self);
        let mut windows = Vec::new();
        let warm = engine.cfg.warmup_request_count;
        let total = warm + engine.cfg.request_count;
        let mut records = 0;
        for (phase, range) in [(Phase::Warmup, 0..warm), (Phase::Profiling, warm..total)] {
            if range.is_empty() || engine.stop.level() > 0 {
                continue;
            }
            let w = run_phase(&engine, phase, range, &sink).await;
            records += w.completed;
            let _ = sink.send(EngineEvent::Phase(w));
            windows.push(w);
        }
        let stop_reason = if engine.stop.level() > 0 {
            StopReason::Interrupted
        } else {
            StopReason::Completed
        };
        RunOutcome {
            stop_reason,
            windows,
            end_ns: engine.clock.now_ns(),
            records,
        }
    }
}

async fn run_phase(
    engine: &Arc<Engine>,
    phase: Phase,
    range: std::ops::Range<u64>,
    sink: &mpsc::UnboundedSender<EngineEvent>,
) -> PhaseWindow {
    let p = &engine.progress;
    p.phase
        .store(u64::from(phase == Phase::Profiling), Ordering::Relaxed);
    p.phase_total
        .store(range.end - range.start, Ordering::Relaxed);
    p.issued.store(0, Ordering::Relaxed);
    p.completed.store(0, Ordering::Relaxed);
    p.errors.store(0, Ordering::Relaxed);
    let start_ns = engine.clock.now_ns();
    let shared = Arc::new(Shared {
        engine: engine.clone(),
        next: AtomicU64::new(range.start),
        sent_end: AtomicU64::new(start_ns),
        requests_end: AtomicU64::new(start_ns),
        completed: AtomicU64::new(0),
        errors: AtomicU64::new(0),
    });
    let workers = (engine.cfg.concurrency as u64)
        .min(range.end - range.start)
        .max(1);
    let mut handles = Vec::with_capacity(workers as usize);
    for w in 0..workers {
        let shared = shared.clone();
        let sink = sink.clone();
        let end = range.end;
        handles.push(tokio::spawn(async move {
            worker_loop(shared, w as u32, phase, end, sink).await
        }));
    }
    for h in handles {
        // A worker panic would be a bug; the other workers' records are still kept.
        let _ = h.await;
    }
    let completed = shared.completed.load(Ordering::Relaxed);
    PhaseWindow {
        phase,
        start_ns,
        sent_end_ns: shared.sent_end.load(Ordering::Relaxed),
        requests_end_ns: shared.requests_end.load(Ordering::Relaxed),
        scheduled: completed,
        completed,
        errors: shared.errors.load(Ordering::Relaxed),
        cancelled: engine.stop.level() > 0,
    }
}

async fn worker_loop(
    shared: Arc<Shared>,
    worker: u32,
    phase: Phase,
    end: u64,
    sink: mpsc::UnboundedSender<EngineEvent>,
) {
    let engine = &shared.engine;
    let mut rng = ChaCha8Rng::from_seed(inferbench_core::seed::derive_seed(
        engine.cfg.seed,
        &format!("request-ids.worker{worker}"),
    ));
    let mut stop_rx = engine.stop.subscribe();
    let mut scratch = Scratch::default();
    // A connection kept from an earlier phase (warmup), so that profiling starts warm.
    let mut conn = engine.conns.lock().ok().and_then(|mut c| c.pop());
    loop {
        if engine.stop.level() > 0 {
            break;
        }
        let id = shared.next.fetch_add(1, Ordering::Relaxed);
        if id >= end {
            break;
        }
        // Concurrency (burst) mode: the slot just freed, so the request is due now.
        let planned_ns = engine.clock.now_ns();
        engine.progress.issued.fetch_add(1, Ordering::Relaxed);
        let rec = execute(
            engine,
            id,
            phase,
            worker,
            planned_ns,
            &mut rng,
            &mut stop_rx,
            &mut scratch,
            &mut conn,
        )
        .await;
        shared.sent_end.fetch_max(rec.start_ns, Ordering::Relaxed);
        shared.requests_end.fetch_max(rec.end_ns, Ordering::Relaxed);
        shared.completed.fetch_add(1, Ordering::Relaxed);
        engine.progress.completed.fetch_add(1, Ordering::Relaxed);
        if rec.is_error() {
            shared.errors.fetch_add(1, Ordering::Relaxed);
            engine.progress.errors.fetch_add(1, Ordering::Relaxed);
        }
        if sink.send(EngineEvent::Record(Box::new(rec))).is_err() {
            // The writer is gone: nothing can be recorded any more, so stop issuing.
            break;
        }
    }
    if let (Some(c), Ok(mut stash)) = (
        conn.filter(|c| !c.done && !c.sender.is_closed()),
        engine.conns.lock(),
    ) {
        stash.push(c);
    }
}

/// Buffers reused across the requests of one worker.
#[derive(Default)]
struct Scratch {
    msgs: Vec<SseMessage>,
    text: String,
}

fn new_uuid(rng: &mut ChaCha8Rng) -> String {
    let bytes: [u8; 16] = rng.random();
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

enum Interrupt {
    Timeout,
    Abort,
}

#[allow(clippy::too_many_arguments)]
async fn execute(
    engine: &Engine,
    id: u64,
    phase: Phase,
    worker: u32,
    planned_ns: u64,
    rng: &mut ChaCha8Rng,
    stop_rx: &mut watch::Receiver<u8>,
    scratch: &mut Scratch,
    conn: &mut Option<Conn>,
) -> Record {
    let cfg = &engine.cfg;
    let clock = engine.clock;
    let payload_index = engine.order[id as usize];
    let payload = &engine.payloads[payload_index];
    let request_id = new_uuid(rng);
    let correlation_id = new_uuid(rng);
    let mut rec = Record {
        id,
        phase: PhaseOpt(phase),
        conversation_id: payload.conversation_id.clone(),
        session_num: id,
        turn_index: payload.turn_index,
        payload_index: payload_index as u64,
        worker,
        streaming: cfg.streaming,
        planned_ns,
        request_bytes: payload.body.len() as u64,
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
    let req = match builder.body(TimedBody::new(payload.body.clone(), clock, sent.clone())) {
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

    rec.start_ns = clock.now_ns();
    let deadline = tokio::time::Instant::from_std(clock.instant_at(rec.start_ns)) + cfg.timeout;

    // One timer and one abort waiter per request, reused across every await below:
    // registering them per body frame costs a timer-wheel insert and a lock each time.
    let timeout = sleep_until(deadline);
    tokio::pin!(timeout);
    let abort = wait_for_abort(stop_rx.clone());
    tokio::pin!(abort);

    // Waits for whichever comes first: the future, the timeout, or an abort (stop level 2).
    macro_rules! guarded {
        ($fut:expr) => {{
            tokio::select! {
                biased;
                r = $fut => Ok(r),
                _ = &mut timeout => Err(Interrupt::Timeout),
                _ = &mut abort => Err(Interrupt::Abort),
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
                }
            }
        }};
    }

    let resp = match driven!(sender.ready()) {
        Ok(Ok(())) => driven!(sender.send_request(req)),
        Ok(Err(e)) => Ok(Err(e)),
        Err(i) => Err(i),
    };
    let read_stamp = Some(stamp.clone());
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
    let stamp_now = || {
        read_stamp
            .as_ref()
            .and_then(ReadStamp::get)
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
                            if on_message(cfg, &mut rec, m, frame_idx, t) {
                                stop_reading = true;
                            }
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
    if rec.end_ns == 0 {
        rec.end_ns = clock.now_ns();
    }
    if rec.error.is_none() && parser.is_none() {
        on_body(cfg, &mut rec, &whole, status);
    }
    if let Some(counter) = &engine.counter {
        count_tokens(counter.as_ref(), &mut rec, &mut scratch.text);
    }
    rec
}

/// Resolves when the stop level reaches 2 (abort in-flight requests); never otherwise.
async fn wait_for_abort(mut rx: watch::Receiver<u8>) {
    loop {
        if *rx.borrow_and_update() >= 2 {
            return;
        }
        if rx.changed().await.is_err() {
            // The signal is gone: nobody can abort any more.
            std::future::pending::<()>().await;
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
                None,
                "RequestCancelled",
                "cancelled by the user (second Ctrl-C) before the response ended".into(),
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

fn fill_event(ev: &mut Event, d: Decoded) {
    ev.content = d.content;
    ev.reasoning = d.reasoning;
    ev.tool = d.tool;
    ev.usage = d.usage;
    ev.finish_reason = d.finish_reason;
}

/// Handle one SSE message. Returns true when reading should stop (the response is invalid).
fn on_message(cfg: &EngineConfig, rec: &mut Record, m: SseMessage, frame: u32, t: u64) -> bool {
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
    let decoded = match cfg.endpoint_type {
        EndpointType::Chat => decode::decode_chat_chunk(&m.data),
        EndpointType::Completions => decode::decode_completions_chunk(&m.data),
    };
    match decoded {
        Ok(d) => {
            let error = d.error.clone();
            fill_event(&mut ev, d);
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
fn on_body(cfg: &EngineConfig, rec: &mut Record, body: &[u8], status: http::StatusCode) {
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
    let decoded = match cfg.endpoint_type {
        EndpointType::Chat => decode::decode_chat_body(&text),
        EndpointType::Completions => decode::decode_completions_body(&text),
    };
    match decoded {
        Ok(d) => {
            let error = d.error.clone();
            fill_event(&mut ev, d);
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
