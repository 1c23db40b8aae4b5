//! The response body: either one buffer or a token stream that yields each SSE event as its
//! own frame at its absolute deadline. The stream is polled directly by the connection task, so
//! there is no per-request task or channel, and no timer at all when both delays are zero.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::Instant;

use crate::api::{self, Req, StreamState};
use crate::metrics::Finish;
use crate::render::{self, Event};
use crate::sched::{Job, finish_of};
use crate::server::Shared;
use crate::stats::duration_ns;

/// The error a cut stream ends with: hyper then drops the connection without the terminating
/// chunk, which is what a crashed or overloaded server looks like to the client.
#[derive(Debug, thiserror::Error)]
#[error("simulated stream cut")]
pub struct StreamCut;

pub(crate) enum SimBody {
    Full(Option<Bytes>),
    Stream(Box<SimStream>),
    /// A fault applied to a body, or the close-after-response notice (faults.rs).
    Fault(Box<crate::faults::FaultBody>),
}

impl SimBody {
    pub(crate) fn full(b: impl Into<Bytes>) -> SimBody {
        SimBody::Full(Some(b.into()))
    }
}

impl Body for SimBody {
    type Data = Bytes;
    type Error = StreamCut;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        match self.get_mut() {
            SimBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            SimBody::Stream(s) => s.poll_next(cx),
            SimBody::Fault(f) => Pin::new(f.as_mut()).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            SimBody::Full(b) => b.as_ref().is_none_or(|b| b.is_empty()),
            SimBody::Stream(s) => matches!(s.phase, Phase::End),
            SimBody::Fault(f) => f.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            SimBody::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            SimBody::Stream(_) => SizeHint::default(),
            SimBody::Fault(f) => f.size_hint(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Role,
    Tokens,
    Usage,
    Done,
    Cut,
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Running,
    Completed,
    Cut,
}

pub(crate) struct SimStream {
    shared: Arc<Shared>,
    req: Req,
    st: StreamState,
    tokens_per_chunk: usize,
    /// Closing events follow the last token (usage chunk, `response.completed`, …).
    epilogue: bool,
    /// The role rides on the first token event (no role-only event was sent).
    role_on_first: bool,
    /// Token events to send before cutting the connection.
    cut_after: Option<usize>,
    /// Admission, deadlines and the metrics of this request (no timer is touched when every
    /// delay is zero).
    job: Job,
    arrival: Instant,
    buf: BytesMut,
    phase: Phase,
    outcome: Outcome,
    events: usize,
    next_token: usize,
    /// Whether hyper has seen `Pending` since the last frame (and so flushed it).
    flushed: bool,
    /// A frame was handed over since the last `Pending` (so hyper has bytes to write).
    unwritten: bool,
    frames: u64,
    writes: u64,
    last_event_at: Option<Instant>,
    ttft_ns: Option<u64>,
    itl_sum_ns: u64,
    itl_max_ns: u64,
}

pub(crate) struct StreamParams {
    pub req: Req,
    pub tokens_per_chunk: usize,
    pub role_first_chunk: bool,
    pub include_usage: bool,
    pub cut: bool,
    pub arrival: Instant,
    pub job: Job,
}

impl SimStream {
    pub(crate) fn new(shared: Arc<Shared>, p: StreamParams) -> SimStream {
        let chat = p.req.shape.endpoint == crate::request::Endpoint::Chat;
        let events = render::event_count(p.tokens_per_chunk, p.req.shape.tokens);
        // One buffer for the whole stream: each event is split off it, so it is allocated once
        // unless the estimate is short.
        let per_event =
            6 + p.req.head.len() + 160 + p.req.id.len() + p.req.shape.reasoning_key.len();
        let text = p.req.shape.tokens * p.req.words(&shared.words).max_len();
        let cap = (events + 3) * per_event + 3 * text;
        let prelude = api::has_prelude(&p.req, p.role_first_chunk);
        SimStream {
            epilogue: api::has_epilogue(&p.req, p.include_usage),
            st: StreamState::default(),
            req: p.req,
            tokens_per_chunk: p.tokens_per_chunk,
            role_on_first: chat && !p.role_first_chunk,
            cut_after: p.cut.then_some(events / 2),
            job: p.job,
            arrival: p.arrival,
            buf: BytesMut::with_capacity(cap),
            phase: if prelude { Phase::Role } else { Phase::Tokens },
            outcome: Outcome::Running,
            events: 0,
            next_token: 0,
            flushed: false,
            unwritten: false,
            frames: 0,
            writes: 0,
            last_event_at: None,
            ttft_ns: None,
            itl_sum_ns: 0,
            itl_max_ns: 0,
            shared,
        }
    }

    fn frame(&mut self) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        let b = self.buf.split().freeze();
        self.hand(b)
    }

    fn hand(&mut self, b: Bytes) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        self.flushed = false;
        self.unwritten = true;
        self.frames += 1;
        Poll::Ready(Some(Ok(Frame::data(b))))
    }

    fn pending(&mut self) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        self.flushed = true;
        if std::mem::take(&mut self.unwritten) {
            self.writes += 1;
        }
        Poll::Pending
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, StreamCut>>> {
        // Per-event writes: hyper flushes its buffer when the body is `Pending`, so one
        // self-waking `Pending` after each frame makes every event a write of its own, also
        // when the next one is already due (zero delay), where hyper would gather them.
        if self.unwritten && !self.shared.cfg.serving.coalesce && self.phase != Phase::End {
            cx.waker().wake_by_ref();
            return self.pending();
        }
        loop {
            match self.phase {
                Phase::Role => {
                    self.phase = Phase::Tokens;
                    api::push_prelude(
                        &mut self.buf,
                        &self.req,
                        self.req.words(&self.shared.words),
                        &mut self.st,
                    );
                    return self.frame();
                }
                Phase::Tokens => {
                    if self.cut_after == Some(self.events) {
                        self.phase = Phase::Cut;
                        continue;
                    }
                    let range = render::event_range(
                        self.events,
                        self.tokens_per_chunk,
                        self.req.shape.tokens,
                    );
                    if range.is_empty() {
                        // The last token is out: the request leaves the running batch.
                        self.job.finish(finish_of(self.req.shape.finish));
                        self.phase = if self.epilogue {
                            Phase::Usage
                        } else {
                            Phase::Done
                        };
                        continue;
                    }
                    // It runs once admitted; an event goes out when its last token is due.
                    if self.job.poll_admit(cx).is_pending()
                        || self
                            .job
                            .poll_due(cx, range.end - 1, self.events == 0)
                            .is_pending()
                    {
                        return self.pending();
                    }
                    self.record_event();
                    self.job.emitted(range.len());
                    let ev = Event::Tokens {
                        last: range.end == self.req.shape.tokens,
                        role: self.role_on_first && self.events == 0,
                        range: range.clone(),
                    };
                    api::push_tokens(
                        &mut self.buf,
                        &self.req,
                        self.req.words(&self.shared.words),
                        &ev,
                        &mut self.st,
                    );
                    self.events += 1;
                    self.next_token = range.end;
                    return self.frame();
                }
                Phase::Usage => {
                    self.phase = Phase::Done;
                    api::push_epilogue(
                        &mut self.buf,
                        &self.req,
                        self.req.words(&self.shared.words),
                        &mut self.st,
                    );
                    return self.frame();
                }
                Phase::Done => {
                    self.phase = Phase::End;
                    self.outcome = Outcome::Completed;
                    if !api::ends_with_done(&self.req) {
                        continue;
                    }
                    return self.hand(Bytes::from_static(render::DONE));
                }
                Phase::Cut => {
                    // Cut when the next event would have been due, like a server dying
                    // mid-generation.
                    let next = render::event_range(
                        self.events,
                        self.tokens_per_chunk,
                        self.req.shape.tokens,
                    );
                    if self.job.poll_admit(cx).is_pending()
                        || self
                            .job
                            .poll_due(cx, next.end.max(1) - 1, false)
                            .is_pending()
                    {
                        return self.pending();
                    }
                    self.job.finish(Finish::Abort);
                    // hyper discards its write buffer on a body error, so make it flush the
                    // events already produced first: one `Pending` does that.
                    if !self.flushed {
                        cx.waker().wake_by_ref();
                        return self.pending();
                    }
                    self.phase = Phase::End;
                    self.outcome = Outcome::Cut;
                    return Poll::Ready(Some(Err(StreamCut)));
                }
                Phase::End => return Poll::Ready(None),
            }
        }
    }

    fn record_event(&mut self) {
        let now = Instant::now();
        match self.last_event_at {
            None => self.ttft_ns = Some(duration_ns(now - self.arrival)),
            Some(prev) => {
                let d = duration_ns(now - prev);
                self.itl_sum_ns += d;
                self.itl_max_ns = self.itl_max_ns.max(d);
            }
        }
        self.last_event_at = Some(now);
    }
}

impl Drop for SimStream {
    /// Commits this stream's counters once, whatever way it ended.
    fn drop(&mut self) {
        let c = &self.shared.counters;
        // The body's end flushes what was still unwritten.
        let writes = self.writes + u64::from(self.unwritten);
        c.stream_frames.fetch_add(self.frames, Relaxed);
        c.stream_writes.fetch_add(writes, Relaxed);
        c.token_events.fetch_add(self.events as u64, Relaxed);
        c.tokens.fetch_add(self.next_token as u64, Relaxed);
        if let Some(t) = self.ttft_ns {
            c.ttft.add(1, t, t);
        }
        if self.events > 1 {
            c.itl
                .add(self.events as u64 - 1, self.itl_sum_ns, self.itl_max_ns);
        }
        let counter = match self.outcome {
            Outcome::Completed => &c.completed,
            Outcome::Cut => &c.cuts,
            Outcome::Running => &c.client_disconnects,
        };
        counter.fetch_add(1, Relaxed);
    }
}
