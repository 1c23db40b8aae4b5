//! The sampler's own OS thread: a whole sample at start, every `interval` (absolute
//! deadlines), and at stop; between them, the sockets alone at a faster rate.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{Probe, Probes, ResourceSample, SchedStat, procfs};
use crate::clock::Clock;

/// A running sampler; [`Sampler::stop`] ends it and returns its samples.
pub struct Sampler {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<Vec<ResourceSample>>>,
}

impl Sampler {
    /// Samples on its own thread every `interval` (at least 10 ms), and the sockets ten
    /// times as often (at least every 10 ms).
    pub fn start(clock: Clock, interval: Duration, probes: Probes) -> Sampler {
        let interval = interval.max(Duration::from_millis(10));
        Self::start_with(
            clock,
            interval,
            (interval / 10).max(Duration::from_millis(10)),
            probes,
        )
    }

    /// [`Sampler::start`] with the socket rate given (`socket_interval` ≥ `interval`: the
    /// sockets only with the whole samples).
    pub fn start_with(
        clock: Clock,
        interval: Duration,
        socket_interval: Duration,
        probes: Probes,
    ) -> Sampler {
        let interval = interval.max(Duration::from_millis(1));
        let socket_interval = socket_interval.max(Duration::from_millis(1));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("resource-sampler".into())
            .spawn(move || run(clock, interval, socket_interval, &probes, &flag))
            // Without a thread there is no sampling; the run goes on (best effort).
            .ok();
        Sampler { stop, thread }
    }

    /// Takes the last sample and returns them all, ordered by `t_ns` (empty if the thread
    /// could not be started).
    pub fn stop(mut self) -> Vec<ResourceSample> {
        self.signal();
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }

    fn signal(&self) {
        let (lock, cv) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // Dropped without `stop` (an error path): end the thread rather than leave it.
        if self.thread.is_some() {
            self.signal();
        }
    }
}

fn run(
    clock: Clock,
    interval: Duration,
    socket_interval: Duration,
    probes: &Probes,
    stop: &(Mutex<bool>, Condvar),
) -> Vec<ResourceSample> {
    let tid = procfs::current_tid();
    let own = || -> Option<SchedStat> {
        procfs::read_schedstat(&format!("/proc/self/task/{tid}/schedstat"))
    };
    let probe = Probe::new();
    let take = |samples: &mut Vec<ResourceSample>| {
        let mut s = probe.sample_with(clock.now_ns(), probes);
        s.sampler = own();
        samples.push(s);
    };
    let mut samples = Vec::new();
    take(&mut samples);
    let start = Instant::now();
    let (mut k_full, mut k_sock) = (1u32, 1u32);
    let (lock, cv) = stop;
    let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let next_full = start + interval * k_full;
        let next_sock = start + socket_interval * k_sock;
        let deadline = next_full.min(next_sock);
        while !*stopped {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            stopped = cv
                .wait_timeout(stopped, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        if *stopped {
            break;
        }
        // Sample without the stop lock held, so that `stop` never waits for a sample.
        drop(stopped);
        let now = Instant::now();
        if now >= next_full {
            take(&mut samples);
            // A late wake-up skips the deadlines it missed rather than sampling in a burst.
            k_full = (now.duration_since(start).as_nanos() / interval.as_nanos()) as u32 + 1;
        } else {
            probes.sockets.sweep();
        }
        let now = Instant::now();
        k_sock = (now.duration_since(start).as_nanos() / socket_interval.as_nanos()) as u32 + 1;
        stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
    }
    drop(stopped);
    take(&mut samples);
    samples
}
