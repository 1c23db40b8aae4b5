//! The client's own queues as evidence (telemetry.md §4.5, §5.2): requests whose planned send
//! time has passed but which are not written yet, and records waiting for the writer thread.
//! A queue that grows through a run means the client did not keep up with its own plan.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// Counters the engine and the writer keep; the sampler reads them. All relaxed atomics: a
/// sample is a snapshot, not a synchronisation point.
#[derive(Debug, Default)]
pub struct InternalQueues {
    /// Requests due (planned time passed) and not yet written to their connection.
    planned_not_sent: AtomicU64,
    /// The highest `planned_not_sent` since the sampler last took it.
    planned_not_sent_peak: AtomicU64,
    /// Records the engine handed to the writer.
    records_sent: AtomicU64,
    /// Records the writer has written (the evidence line and the sink).
    records_written: AtomicU64,
    /// Socket reads that returned bytes (every connection's, TLS under its layer).
    reads: AtomicU64,
    /// Of those, the reads timed by the kernel's receive stamp (`crate::rx_stamp`).
    reads_kernel_stamped: AtomicU64,
    /// Kernel-stamped reads whose lag (read time − arrival) passed 100 µs, and 1 ms.
    read_lag_over_100us: AtomicU64,
    read_lag_over_1ms: AtomicU64,
    /// The longest read lag since the sampler last took it.
    read_lag_max_ns: AtomicU64,
}

/// One reading of the queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSample {
    /// Requests due and not yet written, now.
    pub planned_not_sent: u64,
    /// The highest value of `planned_not_sent` since the previous sample.
    pub planned_not_sent_max: u64,
    pub records_sent: u64,
    pub records_written: u64,
    /// `records_sent − records_written`: records waiting for the writer thread.
    pub writer_backlog: u64,
    /// Socket reads that returned bytes, since the run started (cumulative; absent in files
    /// written before the kernel stamps).
    #[serde(default)]
    pub reads: u64,
    /// Of `reads`, those timed by the kernel's receive stamp (cumulative).
    #[serde(default)]
    pub reads_kernel_stamped: u64,
    /// Kernel-stamped reads whose lag passed 100 µs, and 1 ms (cumulative).
    #[serde(default)]
    pub read_lag_over_100us: u64,
    #[serde(default)]
    pub read_lag_over_1ms: u64,
    /// The longest read lag since the previous sample, ns.
    #[serde(default)]
    pub read_lag_max_ns: u64,
}

impl InternalQueues {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A request became due: counted until the guard is marked sent or dropped.
    pub fn due(self: &Arc<Self>) -> DueGuard {
        let now = self.planned_not_sent.fetch_add(1, Ordering::Relaxed) + 1;
        self.planned_not_sent_peak.fetch_max(now, Ordering::Relaxed);
        DueGuard(Some(self.clone()))
    }

    pub fn record_sent(&self) {
        self.records_sent.fetch_add(1, Ordering::Relaxed);
    }

    /// Called by the writer after it wrote a record.
    pub fn record_written(&self) {
        self.records_written.fetch_add(1, Ordering::Relaxed);
    }

    /// A socket read returned bytes; `lag` is how long after the kernel's arrival stamp it
    /// was read, None when the read had no believable stamp.
    #[inline]
    pub fn read(&self, lag: Option<u64>) {
        self.reads.fetch_add(1, Ordering::Relaxed);
        if let Some(lag) = lag {
            self.reads_kernel_stamped.fetch_add(1, Ordering::Relaxed);
            if lag > 100_000 {
                self.read_lag_over_100us.fetch_add(1, Ordering::Relaxed);
                if lag > 1_000_000 {
                    self.read_lag_over_1ms.fetch_add(1, Ordering::Relaxed);
                }
            }
            if lag > self.read_lag_max_ns.load(Ordering::Relaxed) {
                self.read_lag_max_ns.fetch_max(lag, Ordering::Relaxed);
            }
        }
    }

    /// The current values; resets the peak to the current depth.
    pub fn sample(&self) -> QueueSample {
        let now = self.planned_not_sent.load(Ordering::Relaxed);
        let peak = self.planned_not_sent_peak.swap(now, Ordering::Relaxed);
        // Written before sent would be a torn read of two counters: clamp, never underflow.
        let written = self.records_written.load(Ordering::Relaxed);
        let sent = self.records_sent.load(Ordering::Relaxed).max(written);
        QueueSample {
            planned_not_sent: now,
            planned_not_sent_max: peak.max(now),
            records_sent: sent,
            records_written: written,
            writer_backlog: sent - written,
            reads: self.reads.load(Ordering::Relaxed),
            reads_kernel_stamped: self.reads_kernel_stamped.load(Ordering::Relaxed),
            read_lag_over_100us: self.read_lag_over_100us.load(Ordering::Relaxed),
            read_lag_over_1ms: self.read_lag_over_1ms.load(Ordering::Relaxed),
            read_lag_max_ns: self.read_lag_max_ns.swap(0, Ordering::Relaxed),
        }
    }
}

/// One due request in `planned_not_sent`; leaves it on [`DueGuard::sent`] or when dropped
/// (a request that ended before it was written is no longer waiting either).
#[derive(Debug)]
pub struct DueGuard(Option<Arc<InternalQueues>>);

impl DueGuard {
    /// A guard that counts nothing (tests, callers without queues).
    pub fn none() -> Self {
        DueGuard(None)
    }

    pub fn sent(&mut self) {
        if let Some(q) = self.0.take() {
            q.planned_not_sent.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for DueGuard {
    fn drop(&mut self) {
        self.sent();
    }
}
