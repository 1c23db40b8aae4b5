//! Deadlines kept to tens of microseconds, not to the runtime timer's millisecond.
//!
//! Tokio's timer wheel rounds every deadline up to its next 1 ms tick and then waits for the
//! IO driver's park timeout, so a `sleep_until` fires on average ~1.2 ms late. Gaps between
//! consecutive deadlines of one stream come out right (each is late by about the same
//! amount, which cancels), but the first token of every request, timed from an arbitrary
//! arrival instant, pays the whole rounding. Here one thread per server sleeps on a condition
//! variable until the earliest registered deadline (the kernel's hrtimer, timer slack set to
//! 1 µs on Linux) and wakes the waiting tasks. A first token is woken [`SPIN`] early and then
//! yields to the runtime until its deadline passes, which takes up the thread-to-worker wake
//! latency; later tokens are woken at their deadline and need no spin.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How early a spinning sleeper is woken: covers the timer thread's own lateness plus the
/// wake-up of a parked runtime worker, so that the last stretch is spent yielding.
pub(crate) const SPIN: Duration = Duration::from_micros(150);

struct Entry {
    at: Instant,
    seq: u64,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

#[derive(Default)]
struct State {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
    stop: bool,
}

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    cv: Condvar,
}

/// The timer thread. Dropping it stops the thread (pending wakers are dropped unwoken: their
/// server is gone).
pub(crate) struct Timer {
    inner: Arc<Inner>,
    thread: Option<JoinHandle<()>>,
}

impl Timer {
    pub(crate) fn new() -> Timer {
        let inner = Arc::new(Inner::default());
        let i = inner.clone();
        let thread = std::thread::Builder::new()
            .name("sim-timer".into())
            .spawn(move || run(&i))
            .ok();
        Timer { inner, thread }
    }

    /// Wakes `waker` at `at` (or right away if the thread could not be started).
    pub(crate) fn wake_at(&self, at: Instant, waker: Waker) {
        if self.thread.is_none() {
            waker.wake();
            return;
        }
        let mut st = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        let first = st.heap.peek().is_none_or(|Reverse(e)| at < e.at);
        let seq = st.seq;
        st.seq += 1;
        st.heap.push(Reverse(Entry { at, seq, waker }));
        drop(st);
        // Only a new earliest deadline changes how long the thread sleeps.
        if first {
            self.inner.cv.notify_one();
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .stop = true;
        self.inner.cv.notify_one();
        // The last server handle could in principle go with a task woken on the timer
        // thread itself: it then just exits its loop, it cannot join itself.
        if let Some(t) = self.thread.take()
            && t.thread().id() != std::thread::current().id()
        {
            let _ = t.join();
        }
    }
}

fn run(inner: &Inner) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_TIMERSLACK) takes an integer argument and touches no memory; it
    // only lets this thread's sleeps end within 1 µs of their deadline instead of 50 µs.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
    let mut due = Vec::new();
    let mut st = inner.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if st.stop {
            return;
        }
        let now = Instant::now();
        while st.heap.peek().is_some_and(|Reverse(e)| e.at <= now) {
            if let Some(Reverse(e)) = st.heap.pop() {
                due.push(e.waker);
            }
        }
        if !due.is_empty() {
            drop(st);
            for w in due.drain(..) {
                w.wake();
            }
            st = inner.state.lock().unwrap_or_else(|e| e.into_inner());
            continue;
        }
        st = match st.heap.peek().map(|Reverse(e)| e.at - now) {
            Some(wait) => {
                inner
                    .cv
                    .wait_timeout(st, wait)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
            None => inner.cv.wait(st).unwrap_or_else(|e| e.into_inner()),
        };
    }
}

/// One task's pending deadline on a [`Timer`].
#[derive(Default)]
pub(crate) struct Sleeper {
    registered: Option<(Instant, Waker)>,
}

impl Sleeper {
    /// Ready once `deadline` has passed. With `spin`, the task is woken [`SPIN`] early and
    /// then yields (wakes itself) until the deadline: the first token of a request, whose
    /// accuracy is what a client's TTFT sees. Without, it is woken at the deadline.
    pub(crate) fn poll_until(
        &mut self,
        timer: &Timer,
        cx: &mut Context<'_>,
        deadline: tokio::time::Instant,
        spin: bool,
    ) -> Poll<()> {
        let deadline = deadline.into_std();
        let now = Instant::now();
        if now >= deadline {
            self.registered = None;
            return Poll::Ready(());
        }
        let wake = if spin {
            deadline.checked_sub(SPIN).unwrap_or(deadline)
        } else {
            deadline
        };
        if now >= wake {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let fresh = match &self.registered {
            Some((at, w)) => *at != wake || !w.will_wake(cx.waker()),
            None => true,
        };
        if fresh {
            timer.wake_at(wake, cx.waker().clone());
            self.registered = Some((wake, cx.waker().clone()));
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn wakes_after_the_deadline_never_before() {
        let timer = Timer::new();
        for spin in [false, true] {
            let deadline = tokio::time::Instant::now() + Duration::from_millis(3);
            let mut s = Sleeper::default();
            std::future::poll_fn(|cx| s.poll_until(&timer, cx, deadline, spin)).await;
            assert!(tokio::time::Instant::now() >= deadline);
        }
        // Several sleepers, registered out of order, all end.
        let base = tokio::time::Instant::now();
        let mut set = tokio::task::JoinSet::new();
        let timer = Arc::new(timer);
        for ms in [5u64, 1, 3, 2, 4] {
            let t = timer.clone();
            set.spawn(async move {
                let d = base + Duration::from_millis(ms);
                let mut s = Sleeper::default();
                std::future::poll_fn(|cx| s.poll_until(&t, cx, d, false)).await;
                tokio::time::Instant::now() >= d
            });
        }
        while let Some(r) = set.join_next().await {
            assert!(r.unwrap());
        }
    }
}
