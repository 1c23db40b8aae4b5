//! The HTTP execution of one request: its head and body, the connection, the timeout, the
//! abort and `--request-cancellation-rate`, and the frames read as they arrive.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::HOST;
use inferbench_core::record::{
    ConnectionEvidence, ErrorKind, Event, Frame, PhaseOpt, Record, RecordError, TokenCounts,
};
use tokio::sync::watch;
use tokio::time::sleep_until;

use super::connect;
use super::dispatch::PhaseState;
use super::splitmix64;
use super::stream::{append, on_body, on_message};
use super::tokens::count_tokens;
use crate::clock::Clock;
use crate::h1::{H1Conn, H1Error, head};
use crate::headers::{WireHeader, wire_headers};
use crate::resources::DueGuard;
use crate::sse::{SseMessage, SseParser};
use crate::think::ThinkSplitter;

/// One request to send: which id, payload and session, when it was planned, and the body
/// (the payload's, or with the conversation's history in front).
pub(super) struct Turn {
    pub(super) id: u64,
    pub(super) payload_index: usize,
    pub(super) session_num: u64,
    pub(super) planned_ns: u64,
    pub(super) body: Bytes,
    /// Counts the request as due and not yet written until its body is taken.
    pub(super) due: DueGuard,
    /// Which of the engine's targets it goes to (its session's URL).
    pub(super) url: usize,
}

/// Buffers reused across the requests of one worker.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) msgs: Vec<SseMessage>,
    pub(super) text: String,
}

/// A v4 UUID from request `id` and a salt: deterministic per request and run, drawn
/// without a shared generator, so that any task can make it without locking.
pub(super) fn new_uuid(salt: u64, id: u64) -> String {
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

pub(super) enum Interrupt {
    Timeout,
    /// Ctrl-C twice, SIGTERM, or the end of the grace period.
    Abort,
    /// `--request-cancellation-rate` chose this request.
    Cancel,
}

pub(super) async fn execute(
    state: &PhaseState,
    turn: Turn,
    worker: u32,
    scratch: &mut Scratch,
    conn: &mut Option<H1Conn>,
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
        due,
        url,
    } = turn;
    let target = &engine.targets[url];
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
        // Said only when the run has several URLs / models (docs/routing.md).
        url_index: (engine.targets.len() > 1).then_some(url as u32),
        model: engine
            .models
            .get(payload_index)
            .and_then(|m| m.as_deref().map(str::to_string)),
        media: payload.media,
        ..Default::default()
    };
    // Room for one event per token plus role, usage and [DONE], so the vectors rarely grow.
    let expected = payload.requested_output_tokens.unwrap_or(16).min(4096) as usize + 4;
    rec.frames.reserve(expected);
    rec.events = super::spare::events_with_capacity(expected);

    let sent = Arc::new(AtomicU64::new(0));
    // Origin-form target and an explicit Host header, then the request's headers in wire
    // order (the raw export lists them from the same function); a configured `Host`
    // replaces the transport's in place. Head and body go out as one buffer, written
    // straight from the headers' values (a configured one was checked when configured).
    let wire = {
        let headers = wire_headers(&cfg.headers, &request_id, &correlation_id, cfg.streaming);
        let host = headers
            .iter()
            .find(|h| h.wire_name == HOST)
            .map_or(target.host_header.as_bytes(), WireHeader::wire_bytes);
        head::request(
            "POST",
            &target.path_str,
            host,
            headers
                .iter()
                .filter(|h| h.wire_name != HOST)
                .map(|h| (&h.wire_name, h.wire_bytes())),
            &request_body,
        )
    };
    rec.request_id = request_id;
    rec.correlation_id = correlation_id;

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
        due,
    };
    tokio::pin!(cancel);

    // Waits for whichever comes first: the future, the timeout, or an abort (stop level 2).
    // The connection is read inside the future, in this task: no hand-off to a connection
    // task queued behind every other stream's work.
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

    // The slot's connection if it is still alive, or a new one (its set-up is part of this
    // request, as in AIPerf); once more on a fresh one when a reused connection failed
    // before any response byte (docs/faults.md, "The resend"). `start_ns` stays the first
    // attempt's: the user waited for both.
    let mut reconnects = 0u32;
    let resp = loop {
        let reused = connect::keep_if_alive(conn);
        // The HTTP phases (docs/timing.md): reused or opened, and the set-up's span.
        let connect_start = clock.now_ns();
        if conn.is_none() {
            match guarded!(connect::open(engine, target, clock)) {
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
        let c = conn.as_mut().expect("connected above");
        let send_start = clock.now_ns();
        let mut evidence = ConnectionEvidence {
            id: c.id,
            reused,
            reconnects,
            connect_start_ns: (!reused).then_some(connect_start),
            connect_end_ns: (!reused).then_some(send_start),
            send_start_ns: Some(send_start),
            ..Default::default()
        };
        if !reused {
            // The request that opened the connection carries its measured set-up (DNS,
            // TCP, TLS: docs/tls.md), which replaces the span taken around the whole set-up.
            c.setup.apply_to(&mut evidence);
        }
        rec.connection = Some(evidence);
        let read_before = c.stamp.reads();
        let attempt = match guarded!(c.send(&wire)) {
            Ok(Ok(())) => {
                // The bytes are in the kernel's hands: sent (and `cancel`'s delay starts).
                sent.store(clock.now_ns(), Ordering::Relaxed);
                guarded!(c.response())
            }
            // An answer sent before the server stopped reading the body is the result;
            // without one the send's error stands (and may be resent, below).
            Ok(Err(H1Error::Send(e))) => match guarded!(c.early_response()) {
                Ok(Some(r)) => Ok(Ok(r)),
                Ok(None) => Ok(Err(H1Error::Io(e))),
                Err(i) => Err(i),
            },
            Ok(Err(e)) => Ok(Err(e)),
            Err(i) => Err(i),
        };
        match attempt {
            Ok(Ok(r)) => break r,
            Ok(Err(e)) => {
                c.done = true;
                let bytes_arrived = c.stamp.reads() != read_before;
                if matches!(e, H1Error::Io(_)) && connect::resend(reused, bytes_arrived, reconnects)
                {
                    reconnects += 1;
                    if let Some(c) = rec.connection.as_mut() {
                        c.reconnects = reconnects;
                    }
                    *conn = None;
                    continue;
                }
                rec.end_ns = clock.now_ns();
                rec.error = Some(err(
                    ErrorKind::Transport,
                    None,
                    "TransportError",
                    e.to_string(),
                ));
                return rec;
            }
            Err(i) => {
                interrupted(&mut rec, i, clock, cfg.timeout);
                c.done = true;
                return rec;
            }
        }
    };
    let c = conn.as_mut().expect("connected above");

    let start_ns = rec.start_ns;
    // A frame takes the time of the socket read that completed it (`ReadStamp`), never
    // earlier than this request's start.
    let stamp = c.stamp.clone();
    let stamp_now = || {
        stamp
            .get()
            .map_or_else(|| clock.now_ns(), |t| t.max(start_ns))
    };
    rec.ack_ns = Some(stamp_now());
    let s = sent.load(Ordering::Relaxed);
    if let Some(ev) = rec.connection.as_mut() {
        // Head and body leave as one buffer: the body is one frame.
        ev.chunks_sent = Some(u32::from(s > 0 && rec.request_bytes > 0));
    }
    if s > 0 {
        rec.sent_ns = Some(s);
        // Normally done already, in the pass that wrote the body.
        cancel.due.sent();
    }
    let status = resp.status;
    rec.status = Some(status.as_u16());
    let is_sse = status.is_success() && resp.event_stream;
    let mut parser = if is_sse { Some(SseParser::new()) } else { None };
    let mut think = engine.reasoning_tags.then(ThinkSplitter::default);
    let mut stream_decoder = engine.decoder.stream();
    // A response not read to its end leaves the connection unusable for the next request.
    let mut body_complete = false;
    let mut whole = Vec::new();
    loop {
        let frame = match guarded!(c.data()) {
            Ok(f) => f,
            Err(i) => {
                interrupted(&mut rec, i, clock, cfg.timeout);
                break;
            }
        };
        let t = stamp_now();
        match frame.transpose() {
            None => {
                // The body ended with the read that carried its last bytes: the end is that
                // read's time, not the moment this task got to it.
                body_complete = true;
                rec.end_ns = t;
                break;
            }
            Some(Err(e)) => {
                rec.end_ns = t;
                rec.error = Some(err(
                    ErrorKind::Transport,
                    None,
                    "ResponsePayloadError",
                    format!("the response body was cut: {e}"),
                ));
                break;
            }
            Some(Ok(data)) => {
                let frame_idx = rec.frames.len() as u32;
                rec.frames.push(Frame {
                    t_ns: t,
                    bytes: data.len() as u32,
                });
                match parser.as_mut() {
                    Some(p) => {
                        p.push(data, &mut scratch.msgs);
                        let mut stop_reading = false;
                        for m in scratch.msgs.drain(..) {
                            if on_message(
                                &mut stream_decoder,
                                cfg,
                                &mut rec,
                                &m,
                                frame_idx,
                                t,
                                &mut think,
                            ) {
                                stop_reading = true;
                            }
                            p.recycle(m.data);
                        }
                        if prefill_permit.is_some() && rec.events.iter().any(Event::has_text) {
                            // The first token arrived: the place goes to the next request.
                            prefill_permit = None;
                        }
                        if stop_reading {
                            break;
                        }
                    }
                    None => whole.extend_from_slice(data),
                }
            }
        }
    }
    if !body_complete {
        c.done = true;
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
pub(super) async fn wait_for_abort(
    mut stop: watch::Receiver<u8>,
    mut phase: watch::Receiver<bool>,
) {
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
pub(super) struct CancelAfterSent {
    pub(super) delay: Option<Duration>,
    pub(super) sent: Arc<AtomicU64>,
    pub(super) clock: Clock,
    pub(super) sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The request's place among the due-and-unsent: it leaves in the same pass as the
    /// body is taken, since this is polled in every pass that drives the connection.
    pub(super) due: DueGuard,
}

impl std::future::Future for CancelAfterSent {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.sent.load(Ordering::Relaxed) != 0 {
            self.due.sent();
        }
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

pub(super) fn interrupted(rec: &mut Record, i: Interrupt, clock: Clock, timeout: Duration) {
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

pub(super) fn err(kind: ErrorKind, code: Option<u16>, ty: &str, message: String) -> RecordError {
    RecordError {
        kind,
        code,
        error_type: ty.to_string(),
        message,
    }
}
