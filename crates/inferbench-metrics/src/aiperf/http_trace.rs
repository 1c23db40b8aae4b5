//! AIPerf 0.13's fourteen HTTP trace metrics (`http_req_*`, flags HTTP_TRACE_ONLY and
//! NO_CONSOLE), views over a record's [`ConnectionEvidence`] (docs/timing.md, "HTTP phases").
//!
//! Population: valid records (no error) that carry connection evidence; a value whose
//! instants are missing is left out for that record (AIPerf's NoMetricValue). An import
//! carries AIPerf's own per-record values ([`ConnectionEvidence::reported`]) instead of
//! the instants; they are used as they are. Base units: ns, bytes, counts; statistics are
//! taken in the base unit and converted after (ns × 1e-6 → ms, bytes / 1024 → KB).

use std::borrow::Cow;

use inferbench_core::Record;
use inferbench_core::record::ConnectionEvidence;
use inferbench_core::summary::{RecordMetric, RecordMetricValue};

/// The fourteen metrics: (tag, header, display unit), in tag order (AIPerf's CSV order).
/// They are the last fourteen rows of the set's one table ([`super::table::METRICS`]), taken
/// from there so that a header or unit is written once; the check below fails the build if
/// the table's tail stops being exactly these.
pub const HTTP_METRICS: [(&str, &str, &str); 14] = match super::table::METRICS.last_chunk::<14>() {
    Some(rows) => *rows,
    None => panic!("aiperf::table::METRICS has fewer than 14 rows"),
};

const fn is_http_tag(tag: &str) -> bool {
    super::table::const_starts_with(tag, "http_req_")
}

// Every one of the fourteen is an `http_req_*` row, and the row before them is not one.
const _: () = {
    let m = super::table::METRICS;
    let mut i = 0;
    while i < HTTP_METRICS.len() {
        assert!(is_http_tag(HTTP_METRICS[i].0));
        i += 1;
    }
    assert!(!is_http_tag(m[m.len() - HTTP_METRICS.len() - 1].0));
};

/// One record's values in base units, indexed like [`HTTP_METRICS`].
pub type HttpValues = [Option<u64>; 14];

/// The factor from the base unit to the display unit of a display unit.
pub fn display_factor(unit: &str) -> f64 {
    match unit {
        "ms" => 1e-6,
        // AIPerf's KB is 1024 bytes.
        "KB" => 1.0 / 1024.0,
        _ => 1.0,
    }
}

fn span(start: Option<u64>, end: Option<u64>) -> Option<u64> {
    end?.checked_sub(start?)
}

/// The values measured from the instants of a live record.
fn measured(r: &Record, c: &ConnectionEvidence) -> HttpValues {
    // No wait recorded: the connection was at hand (0); a wait never ended: no value.
    let blocked = match c.pool_wait_start_ns {
        None => Some(0),
        Some(s) => span(Some(s), c.pool_wait_end_ns),
    };
    let dns = if c.reused || c.dns_start_ns.is_none() {
        Some(0)
    } else {
        span(c.dns_start_ns, c.dns_end_ns)
    };
    // TCP connect plus the TLS handshake, when there was one.
    let connecting = if c.reused {
        Some(0)
    } else {
        let end = match (c.connect_end_ns, c.tls_end_ns) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        span(c.connect_start_ns, end)
    };
    let sending = span(c.send_start_ns, r.sent_ns);
    let first = r.frames.first().map(|f| f.t_ns);
    let last = r.frames.last().map(|f| f.t_ns);
    let waiting = span(r.sent_ns, first);
    let receiving = if r.frames.len() == 1 {
        Some(0)
    } else {
        span(first, last)
    };
    let duration = span(c.send_start_ns, Some(r.end_ns));
    let overhead = blocked.unwrap_or(0) + dns.unwrap_or(0) + connecting.unwrap_or(0);
    let total = overhead + sending.unwrap_or(0) + waiting.unwrap_or(0) + receiving.unwrap_or(0);
    let bytes_received: u64 = r.frames.iter().map(|f| u64::from(f.bytes)).sum();
    [
        blocked,
        Some(r.frames.len() as u64),
        c.chunks_sent.map(u64::from),
        connecting,
        Some(overhead),
        Some(u64::from(c.reused)),
        Some(bytes_received),
        Some(if c.chunks_sent == Some(0) {
            0
        } else {
            r.request_bytes
        }),
        dns,
        duration,
        receiving,
        sending,
        Some(total),
        waiting,
    ]
}

/// The record's values in base units: None for an error record or one without connection
/// evidence.
pub fn values(r: &Record) -> Option<HttpValues> {
    if r.error.is_some() {
        return None;
    }
    let c = r.connection.as_ref()?;
    Some(match &c.reported {
        Some(p) => [
            p.blocked_ns,
            p.chunks_received,
            p.chunks_sent,
            p.connecting_ns,
            p.connection_overhead_ns,
            p.connection_reused,
            p.data_received_bytes,
            p.data_sent_bytes,
            p.dns_lookup_ns,
            p.duration_ns,
            p.receiving_ns,
            p.sending_ns,
            p.total_ns,
            p.waiting_ns,
        ],
        None => measured(r, c),
    })
}

/// A per-record value in its display unit, as AIPerf writes it in `profile_export.jsonl`:
/// times and sizes as floats, counts and the reuse flag as integers.
pub fn record_metric(i: usize, base: u64) -> RecordMetric {
    let (tag, _, unit) = HTTP_METRICS[i];
    let value = match unit {
        "count" | "ratio" => RecordMetricValue::Int(base as i64),
        _ => RecordMetricValue::Float(base as f64 * display_factor(unit)),
    };
    RecordMetric {
        tag: Cow::Borrowed(tag),
        unit: Cow::Borrowed(unit),
        value,
    }
}

#[cfg(test)]
#[path = "http_trace_tests.rs"]
mod tests;
