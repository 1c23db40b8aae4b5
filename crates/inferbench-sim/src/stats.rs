//! Server-side counters. Streams accumulate locally and commit once when they end, so the hot
//! path touches the shared atomics a few times per request, not per token.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::request::{ENDPOINT_KINDS, Endpoint};

/// Sum, count, mean and maximum of one server-side delay, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimingStats {
    pub count: u64,
    pub sum_ms: f64,
    pub mean_ms: f64,
    pub max_ms: f64,
}

/// A snapshot of the server's counters since start or the last reset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SimStats {
    /// Well-formed inference requests (their arrival numbers drive the fault sequences).
    pub requests: u64,
    /// Requests refused with HTTP 4xx (bad JSON, missing fields, bad lengths).
    pub bad_requests: u64,
    /// Requests answered with the injected HTTP 500.
    pub errors: u64,
    /// Streams deliberately cut.
    pub cuts: u64,
    /// Streams that reached `[DONE]` plus non-streaming answers sent.
    pub completed: u64,
    /// Streams the client closed before they ended.
    pub client_disconnects: u64,
    /// SSE events holding at least one token (the role-only event is not counted).
    pub token_events: u64,
    /// Output tokens produced (reasoning included).
    pub tokens: u64,
    /// Arrival to first token event handed to the connection (streams), or to the whole
    /// response (non-streaming).
    pub ttft: TimingStats,
    /// Between consecutive token events of a stream.
    pub itl: TimingStats,
    /// Configured delays, for comparison.
    pub ttft_cfg_ms: f64,
    pub itl_cfg_ms: f64,
    /// Well-formed inference requests per endpoint type (`chat`, `responses`,
    /// `huggingface_generate`, …); endpoints with none are left out.
    #[serde(default)]
    pub per_endpoint: BTreeMap<String, u64>,
    /// `POST /reset_prefix_cache` (or `/flush_cache`) calls answered: what
    /// `--reset-kv-cache` sends. Not cleared by `/sim/reset`, which is itself a control.
    #[serde(default)]
    pub prefix_cache_resets: u64,
    /// `POST /start_profile` and `POST /stop_profile` calls answered: what
    /// `--server-profiler` sends. Not cleared by `/sim/reset`.
    #[serde(default)]
    pub profiler_starts: u64,
    #[serde(default)]
    pub profiler_stops: u64,
    /// The inference requests received when the last start and the last stop arrived: a
    /// test reads the order of the calls from them.
    #[serde(default)]
    pub requests_at_profiler_start: u64,
    #[serde(default)]
    pub requests_at_profiler_stop: u64,
    /// Data frames of streamed bodies handed to hyper (every SSE event, `[DONE]` included).
    #[serde(default)]
    pub stream_frames: u64,
    /// Flushes of those frames: each time the body returned `Pending` (or ended) with a
    /// frame not yet flushed, hyper wrote what it held. One per frame unless coalescing.
    #[serde(default)]
    pub stream_writes: u64,
}

#[derive(Default)]
pub(crate) struct TimingCounter {
    count: AtomicU64,
    sum_ns: AtomicU64,
    max_ns: AtomicU64,
}

impl TimingCounter {
    pub(crate) fn add(&self, count: u64, sum_ns: u64, max_ns: u64) {
        if count == 0 {
            return;
        }
        self.count.fetch_add(count, Relaxed);
        self.sum_ns.fetch_add(sum_ns, Relaxed);
        self.max_ns.fetch_max(max_ns, Relaxed);
    }

    pub(crate) fn add_one(&self, d: Duration) {
        let ns = duration_ns(d);
        self.add(1, ns, ns);
    }

    fn snapshot(&self) -> TimingStats {
        let count = self.count.load(Relaxed);
        let sum_ms = self.sum_ns.load(Relaxed) as f64 / 1e6;
        TimingStats {
            count,
            sum_ms,
            mean_ms: if count == 0 {
                0.0
            } else {
                sum_ms / count as f64
            },
            max_ms: self.max_ns.load(Relaxed) as f64 / 1e6,
        }
    }

    fn reset(&self) {
        self.count.store(0, Relaxed);
        self.sum_ns.store(0, Relaxed);
        self.max_ns.store(0, Relaxed);
    }
}

pub(crate) fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) requests: AtomicU64,
    pub(crate) bad_requests: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) cuts: AtomicU64,
    pub(crate) completed: AtomicU64,
    pub(crate) client_disconnects: AtomicU64,
    pub(crate) token_events: AtomicU64,
    pub(crate) tokens: AtomicU64,
    pub(crate) ttft: TimingCounter,
    pub(crate) itl: TimingCounter,
    pub(crate) per_endpoint: [AtomicU64; ENDPOINT_KINDS],
    pub(crate) prefix_cache_resets: AtomicU64,
    pub(crate) profiler_starts: AtomicU64,
    pub(crate) profiler_stops: AtomicU64,
    pub(crate) requests_at_profiler_start: AtomicU64,
    pub(crate) requests_at_profiler_stop: AtomicU64,
    pub(crate) stream_frames: AtomicU64,
    pub(crate) stream_writes: AtomicU64,
}

impl Counters {
    pub(crate) fn snapshot(&self, ttft_cfg: Duration, itl_cfg: Duration) -> SimStats {
        SimStats {
            requests: self.requests.load(Relaxed),
            bad_requests: self.bad_requests.load(Relaxed),
            errors: self.errors.load(Relaxed),
            cuts: self.cuts.load(Relaxed),
            completed: self.completed.load(Relaxed),
            client_disconnects: self.client_disconnects.load(Relaxed),
            token_events: self.token_events.load(Relaxed),
            tokens: self.tokens.load(Relaxed),
            ttft: self.ttft.snapshot(),
            itl: self.itl.snapshot(),
            ttft_cfg_ms: ttft_cfg.as_secs_f64() * 1e3,
            itl_cfg_ms: itl_cfg.as_secs_f64() * 1e3,
            per_endpoint: self
                .per_endpoint
                .iter()
                .enumerate()
                .map(|(i, c)| (Endpoint::name_of(i).to_owned(), c.load(Relaxed)))
                .filter(|(_, n)| *n > 0)
                .collect(),
            prefix_cache_resets: self.prefix_cache_resets.load(Relaxed),
            profiler_starts: self.profiler_starts.load(Relaxed),
            profiler_stops: self.profiler_stops.load(Relaxed),
            requests_at_profiler_start: self.requests_at_profiler_start.load(Relaxed),
            requests_at_profiler_stop: self.requests_at_profiler_stop.load(Relaxed),
            stream_frames: self.stream_frames.load(Relaxed),
            stream_writes: self.stream_writes.load(Relaxed),
        }
    }

    /// Zeroes everything, including the arrival number, so fault sequences restart.
    pub(crate) fn reset(&self) {
        for c in [
            &self.requests,
            &self.bad_requests,
            &self.errors,
            &self.cuts,
            &self.completed,
            &self.client_disconnects,
            &self.token_events,
            &self.tokens,
            &self.stream_frames,
            &self.stream_writes,
        ]
        .into_iter()
        .chain(self.per_endpoint.iter())
        {
            c.store(0, Relaxed);
        }
        self.ttft.reset();
        self.itl.reset();
    }
}

pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_mean_and_max() {
        let t = TimingCounter::default();
        t.add_one(Duration::from_millis(2));
        t.add(2, 8_000_000, 5_000_000);
        let s = t.snapshot();
        assert_eq!(s.count, 3);
        assert_eq!(s.sum_ms, 10.0);
        assert!((s.mean_ms - 10.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.max_ms, 5.0);
        t.reset();
        assert_eq!(t.snapshot(), TimingStats::default());
    }
}
