//! The batched scheduler: a running-request limit with a FIFO queue, a prefill cost per input
//! token, a decode budget shared by the running batch, and the bookkeeping `/metrics` and
//! `/dcgm/metrics` read (running, waiting, KV tokens, the energy integral).
//!
//! The model, per request (`Job`):
//! - **Admission.** With `max_running` N, a request runs when one of N slots is free, else
//!   it waits in arrival order (a fair semaphore). It holds its slot until its last token is
//!   emitted (or the stream is cut or dropped). Without a limit it runs on arrival.
//! - **Prefill.** The first token is due `ttft + prefill_us_per_token × prompt_tokens` after
//!   the request started running; `prompt_tokens` is what `usage.prompt_tokens` reports
//!   (the prompt's whitespace word count).
//! - **Decode.** Without a budget token i is due at `start + first + i × itl` (absolute
//!   deadlines, as before). With `decode_tokens_per_s` B the gap before token i+1 is fixed
//!   when token i is due: `max(itl, running / B)`, `running` being the batch size at that
//!   moment (this request included); deadlines still chain from the previous deadline, not
//!   from the emission, so lateness does not accumulate.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::config::Serving;
use crate::dcgm::EnergyMeter;
use crate::metrics::Finish;
use crate::pacing::Sleeper;
use crate::server::Shared;
use crate::stats::duration_ns;

/// Server-wide scheduler state.
pub(crate) struct Scheduler {
    permits: Option<Arc<Semaphore>>,
    running: AtomicU64,
    waiting: AtomicU64,
    kv_tokens: AtomicU64,
    kv_capacity: u64,
    /// Changed under the lock together with `running`, so the integral sees every step.
    energy: Mutex<EnergyMeter>,
    /// The server's start: the energy meter's time zero.
    pub(crate) epoch: Instant,
}

impl Scheduler {
    pub(crate) fn new(s: &Serving) -> Scheduler {
        Scheduler {
            permits: s.max_running.map(|n| Arc::new(Semaphore::new(n as usize))),
            running: AtomicU64::new(0),
            waiting: AtomicU64::new(0),
            kv_tokens: AtomicU64::new(0),
            kv_capacity: s.kv_capacity_tokens,
            energy: Mutex::new(EnergyMeter::default()),
            epoch: Instant::now(),
        }
    }

    pub(crate) fn running(&self) -> u64 {
        self.running.load(Relaxed)
    }

    pub(crate) fn waiting(&self) -> u64 {
        self.waiting.load(Relaxed)
    }

    /// Running requests' input plus generated tokens over the capacity, at most 1.
    pub(crate) fn kv_usage(&self) -> f64 {
        (self.kv_tokens.load(Relaxed) as f64 / self.kv_capacity as f64).min(1.0)
    }

    fn now_ns(&self) -> u64 {
        duration_ns(self.epoch.elapsed())
    }

    fn change_running(&self, up: bool) {
        let mut m = self.energy.lock().unwrap_or_else(|e| e.into_inner());
        let r = if up {
            self.running.fetch_add(1, Relaxed) + 1
        } else {
            self.running.fetch_sub(1, Relaxed) - 1
        };
        m.set_running(self.now_ns(), r);
    }

    /// The running count and the energy since start (mJ), read together.
    pub(crate) fn energy_mj(&self) -> (u64, f64) {
        let m = self.energy.lock().unwrap_or_else(|e| e.into_inner());
        (self.running(), m.energy_mj(self.now_ns()))
    }
}

type Acquire = Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send>>;

enum State {
    Queued(Acquire),
    Running {
        start: Instant,
        _permit: Option<OwnedSemaphorePermit>,
    },
    Done,
}

/// When each token of one request is due.
struct Pacer {
    base: Instant,
    first_ns: u64,
    itl_ns: u64,
    budget: Option<f64>,
    /// Budget mode: the last token whose deadline is fixed, and that deadline (ns from base).
    known: (usize, u64),
}

impl Pacer {
    fn due(&mut self, i: usize, running: u64) -> Instant {
        let Some(b) = self.budget else {
            return self.base + Duration::from_nanos(self.first_ns + self.itl_ns * i as u64);
        };
        while self.known.0 < i {
            let shared = (running as f64 * 1e9 / b).ceil() as u64;
            self.known.1 += self.itl_ns.max(shared);
            self.known.0 += 1;
        }
        self.base + Duration::from_nanos(self.known.1)
    }
}

/// One inference request's life in the scheduler and the metrics. Dropped unfinished (a
/// client that went away), it finishes as `abort`.
pub(crate) struct Job {
    shared: Arc<Shared>,
    arrival: Instant,
    prompt: u64,
    state: State,
    timed: bool,
    pacer: Pacer,
    sleeper: Sleeper,
    generated: u64,
    last_at: Option<Instant>,
}

impl Job {
    /// A request that arrived at `arrival` with `prompt` input tokens; it runs at once when a
    /// slot is free. `timed`: false when every delay is zero (nothing is ever awaited).
    pub(crate) fn new(shared: Arc<Shared>, arrival: Instant, prompt: u64, timed: bool) -> Job {
        let sv = &shared.cfg.serving;
        let prefill = (sv.prefill_us_per_token * 1e3 * prompt as f64).round() as u64;
        let first_ns = duration_ns(shared.cfg.ttft).saturating_add(prefill);
        let pacer = Pacer {
            base: arrival,
            first_ns,
            itl_ns: duration_ns(shared.cfg.itl),
            budget: sv.decode_tokens_per_s,
            known: (0, first_ns),
        };
        let permits = shared.sched.permits.clone();
        let mut job = Job {
            arrival,
            prompt,
            state: State::Done,
            timed,
            pacer,
            sleeper: Sleeper::default(),
            generated: 0,
            last_at: None,
            shared,
        };
        match permits {
            None => job.begin(arrival, None),
            Some(sem) => match sem.clone().try_acquire_owned() {
                Ok(p) => job.begin(arrival, Some(p)),
                Err(_) => {
                    job.shared.sched.waiting.fetch_add(1, Relaxed);
                    job.state = State::Queued(Box::pin(sem.acquire_owned()));
                }
            },
        }
        job
    }

    fn begin(&mut self, start: Instant, permit: Option<OwnedSemaphorePermit>) {
        let s = &self.shared.sched;
        s.change_running(true);
        s.kv_tokens.fetch_add(self.prompt, Relaxed);
        self.shared
            .registry
            .prompt_tokens
            .fetch_add(self.prompt, Relaxed);
        self.pacer.base = start;
        self.state = State::Running {
            start,
            _permit: permit,
        };
    }

    /// Ready once the request is running.
    pub(crate) fn poll_admit(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let State::Queued(acquire) = &mut self.state else {
            return Poll::Ready(());
        };
        let permit = match acquire.as_mut().poll(cx) {
            Poll::Pending => return Poll::Pending,
            // The semaphore is never closed; a request goes ahead without a slot if it were.
            Poll::Ready(p) => p.ok(),
        };
        self.shared.sched.waiting.fetch_sub(1, Relaxed);
        self.begin(Instant::now(), permit);
        Poll::Ready(())
    }

    pub(crate) async fn admitted(&mut self) {
        std::future::poll_fn(|cx| self.poll_admit(cx)).await
    }

    /// Ready once output token `i` is due (call with increasing `i`). `spin`: keep this
    /// deadline to microseconds (a first token, see `pacing`).
    pub(crate) fn poll_due(&mut self, cx: &mut Context<'_>, i: usize, spin: bool) -> Poll<()> {
        if !self.timed {
            return Poll::Ready(());
        }
        let deadline = self.pacer.due(i, self.shared.sched.running());
        self.sleeper
            .poll_until(&self.shared.timer, cx, deadline, spin)
    }

    pub(crate) async fn due(&mut self, i: usize, spin: bool) {
        std::future::poll_fn(|cx| self.poll_due(cx, i, spin)).await
    }

    /// Whether the deadlines depend on the batch (each must then be awaited in turn).
    pub(crate) fn shares_budget(&self) -> bool {
        self.timed && self.pacer.budget.is_some()
    }

    /// `n` tokens left in one event, now.
    pub(crate) fn emitted(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let now = Instant::now();
        let reg = &self.shared.registry;
        reg.generation_tokens.fetch_add(n as u64, Relaxed);
        self.shared.sched.kv_tokens.fetch_add(n as u64, Relaxed);
        self.generated += n as u64;
        match self.last_at {
            None => {
                reg.ttft.observe(duration_ns(now - self.arrival));
                reg.iteration_tokens.observe(self.prompt + n as u64);
                // A first event holds one token; any others share the rest of the gap.
                self.share_itl(n - 1, now, now);
            }
            Some(prev) => {
                self.share_itl(n, prev, now);
                reg.iteration_tokens.observe(n as u64);
            }
        }
        self.last_at = Some(now);
    }

    /// A whole non-streaming answer of `n` tokens, sent now: the first token counts as
    /// produced when it was due, the rest share the time since.
    pub(crate) fn emitted_all(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let now = Instant::now();
        let first = if self.timed {
            self.pacer.due(0, 0).min(now)
        } else {
            now
        };
        let reg = &self.shared.registry;
        reg.generation_tokens.fetch_add(n as u64, Relaxed);
        self.shared.sched.kv_tokens.fetch_add(n as u64, Relaxed);
        self.generated += n as u64;
        reg.ttft.observe(duration_ns(first - self.arrival));
        reg.iteration_tokens.observe(self.prompt + 1);
        for _ in 1..n {
            reg.iteration_tokens.observe(1);
        }
        self.share_itl(n - 1, first, now);
        self.last_at = Some(now);
    }

    fn share_itl(&self, n: usize, from: Instant, to: Instant) {
        if n == 0 {
            return;
        }
        let per = duration_ns(to.saturating_duration_since(from)) / n as u64;
        for _ in 0..n {
            self.shared.registry.itl.observe(per);
        }
    }

    /// The request is over (its last token emitted, or cut): frees its slot and records
    /// e2e and queue time. Later calls do nothing.
    pub(crate) fn finish(&mut self, f: Finish) {
        let state = std::mem::replace(&mut self.state, State::Done);
        let reg = &self.shared.registry;
        let s = &self.shared.sched;
        match state {
            State::Done => return,
            State::Queued(_) => {
                s.waiting.fetch_sub(1, Relaxed);
            }
            State::Running { start, _permit } => {
                let now = Instant::now();
                s.kv_tokens.fetch_sub(self.prompt + self.generated, Relaxed);
                s.change_running(false);
                drop(_permit);
                reg.e2e.observe(duration_ns(now - self.arrival));
                reg.queue.observe(duration_ns(start - self.arrival));
            }
        }
        reg.finished(f);
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.finish(Finish::Abort);
    }
}

/// vLLM's `finished_reason` of a response's finish reason.
pub(crate) fn finish_of(reason: &str) -> Finish {
    match reason {
        "length" => Finish::Length,
        _ => Finish::Stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pacer(budget: Option<f64>) -> Pacer {
        Pacer {
            base: Instant::now(),
            first_ns: 20_000_000,
            itl_ns: 5_000_000,
            budget,
            known: (0, 20_000_000),
        }
    }

    #[test]
    fn deadlines_without_a_budget_are_absolute_from_the_start() {
        let mut p = pacer(None);
        let ms = |p: &mut Pacer, i, r| (p.due(i, r) - p.base).as_secs_f64() * 1e3;
        assert_eq!(ms(&mut p, 0, 9), 20.0);
        assert_eq!(ms(&mut p, 7, 9), 55.0);
        assert_eq!(ms(&mut p, 3, 1), 35.0);
    }

    #[test]
    fn a_shared_budget_fixes_each_gap_from_the_batch_at_the_time() {
        // 100 tokens/s shared: with 4 running a gap is 40 ms; with 2, 20 ms; with 1, 10 ms;
        // never below the 5 ms ITL (with 200 tokens/s and 1 running it would be 5 ms).
        let mut p = pacer(Some(100.0));
        let ms = |p: &mut Pacer, i, r| (p.due(i, r) - p.base).as_secs_f64() * 1e3;
        assert_eq!(ms(&mut p, 0, 4), 20.0);
        assert_eq!(ms(&mut p, 1, 4), 60.0);
        // Asking again for a fixed deadline does not move it, whatever the batch now.
        assert_eq!(ms(&mut p, 1, 1), 60.0);
        assert_eq!(ms(&mut p, 3, 2), 100.0);
        assert_eq!(ms(&mut p, 4, 1), 110.0);
        let mut p = pacer(Some(200.0));
        assert_eq!(ms(&mut p, 2, 1), 30.0);
    }
}
