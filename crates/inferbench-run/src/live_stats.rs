//! Live figures for the progress display: TTFT, ITL and schedule-lag percentiles of the
//! records finished so far. The evidence writer thread adds each finished record (it sees
//! every one already, off the client's threads); the progress thread reads a snapshot.
//! Fixed-size log-bucketed histograms of atomics: no lock, no allocation per record, and
//! a reader never blocks the writer.
//!
//! These are display figures (about 6% relative error, the half-width of a bucket); the
//! summary, computed from the evidence, is the result.

use std::sync::atomic::{AtomicU64, Ordering};

use inferbench_core::record::{Phase, Record};

/// Sub-buckets per power of two: 8, so a bucket spans 1/8 of its octave.
const SUB: u64 = 8;
/// Values below `SUB` have a bucket each; then 8 per octave up to 2⁶⁴.
pub const BUCKETS: usize = (SUB + (64 - 3) * SUB) as usize;

/// A histogram of u64 values (ns) in log-spaced buckets: exact below 8, then 8 buckets per
/// power of two, so every bucket's width is at most 1/8 of its lower edge.
pub struct LogHistogram {
    counts: [AtomicU64; BUCKETS],
    total: AtomicU64,
}

impl std::fmt::Debug for LogHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogHistogram")
            .field("count", &self.count())
            .finish()
    }
}

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram {
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
            total: AtomicU64::new(0),
        }
    }
}

/// The bucket holding `v`.
pub fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() as u64; // ⌊log₂ v⌋ ≥ 3
    let m = (v >> (e - 3)) & (SUB - 1);
    (SUB + (e - 3) * SUB + m) as usize
}

/// The bucket's values: `[lower, upper)` (the last bucket's upper edge saturates at u64::MAX).
pub fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, i + 1);
    }
    let e = (i - SUB) / SUB + 3;
    let m = (i - SUB) % SUB;
    let lo = (SUB + m) << (e - 3);
    let hi = ((SUB + m + 1) as u128) << (e - 3);
    (lo, hi.min(u64::MAX as u128) as u64)
}

impl LogHistogram {
    pub fn add(&self, v: u64) {
        self.counts[bucket_of(v)].fetch_add(1, Ordering::Relaxed);
        self.total.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// The `q` quantile (0 < q ≤ 1) by nearest rank: the bucket holding the ⌈q·n⌉-th
    /// smallest value, reported as that bucket's midpoint (its exact value below 8).
    /// None when empty.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let counts: Vec<u64> = self
            .counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        // The sum of what was read, not `total`: the writer may add between the loads.
        let n: u64 = counts.iter().sum();
        if n == 0 {
            return None;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (i, c) in counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bucket_range(i);
                return Some(if hi - lo == 1 {
                    lo as f64
                } else {
                    (lo as f64 + hi as f64) / 2.0
                });
            }
        }
        None
    }
}

/// The live histograms of one run's profiling-phase records.
#[derive(Debug, Default)]
pub struct LiveStats {
    /// First text event − request start, ns: valid records with a text event.
    pub ttft: LogHistogram,
    /// (last − first text event) / (output tokens − 1), ns, per request: valid records with
    /// at least 2 output tokens (output + reasoning tokens, or text events where the tokens
    /// are not counted).
    pub itl: LogHistogram,
    /// `start_ns − planned_ns` (request start − credit issued), ns: every record.
    pub lag: LogHistogram,
}

impl LiveStats {
    /// Adds one finished record (the writer thread calls this; warmup records are skipped).
    pub fn observe(&self, r: &Record) {
        if r.phase() != Phase::Profiling {
            return;
        }
        self.lag.add(r.start_ns.saturating_sub(r.planned_ns));
        if r.is_error() {
            return;
        }
        let mut text = r.text_events();
        let Some(first) = text.next() else {
            return;
        };
        self.ttft.add(first.t_ns.saturating_sub(r.start_ns));
        let (events, last) = text.fold((1u64, first.t_ns), |(n, _), e| (n + 1, e.t_ns));
        let tokens = match (r.tokens.output, r.tokens.reasoning) {
            (None, None) => events,
            (o, re) => o.unwrap_or(0) + re.unwrap_or(0),
        };
        if tokens >= 2 {
            self.itl.add(last.saturating_sub(first.t_ns) / (tokens - 1));
        }
    }

    pub fn snapshot(&self) -> LiveSnapshot {
        let ms = |h: &LogHistogram, q: f64| h.quantile(q).map(|v| v / 1e6);
        LiveSnapshot {
            ttft_p50_ms: ms(&self.ttft, 0.5),
            ttft_p99_ms: ms(&self.ttft, 0.99),
            itl_p50_ms: ms(&self.itl, 0.5),
            itl_p99_ms: ms(&self.itl, 0.99),
            lag_p99_ms: ms(&self.lag, 0.99),
        }
    }
}

/// What the display shows besides the counts; None where nothing is in yet.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LiveSnapshot {
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p99_ms: Option<f64>,
    pub itl_p50_ms: Option<f64>,
    pub itl_p99_ms: Option<f64>,
    pub lag_p99_ms: Option<f64>,
}

fn ms(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

impl LiveSnapshot {
    /// The latency part of a progress line, e.g.
    /// `TTFT p50 12.3 p99 40.1 ms · ITL p50 1.05 p99 2.10 ms · lag p99 0.06 ms`.
    pub fn latency_text(&self) -> String {
        format!(
            "TTFT p50 {} p99 {} ms · ITL p50 {} p99 {} ms · lag p99 {} ms",
            ms(self.ttft_p50_ms),
            ms(self.ttft_p99_ms),
            ms(self.itl_p50_ms),
            ms(self.itl_p99_ms),
            ms(self.lag_p99_ms)
        )
    }
}

/// One `--ui simple` line. `planned` 0 means the phase has no planned count (a run bounded
/// by `--benchmark-duration`): only what is done is shown.
pub fn progress_line(
    phase: &str,
    done: u64,
    planned: u64,
    errors: u64,
    s: &LiveSnapshot,
) -> String {
    let of = if planned > 0 {
        format!("/{planned}")
    } else {
        String::new()
    };
    format!(
        "inferbench: {phase}: {done}{of} requests done, {errors} errors · {}",
        s.latency_text()
    )
}

#[cfg(test)]
#[path = "live_stats_tests.rs"]
mod tests;
