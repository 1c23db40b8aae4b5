//! `--export-http-trace`: AIPerf's `trace_data` object on each `profile_export.jsonl` line,
//! built from the record's evidence (docs/timing.md, "HTTP phases"). Instants are wall-clock
//! ns (anchor + offset), as AIPerf exports them; a phase that did not happen is left out.
//! Not written: the request and response headers and the socket addresses, which the
//! evidence does not keep.

use inferbench_core::Record;
use serde_json::{Map, Value, json};

/// `trace_type`: ours, not aiohttp's (a reader keying on it sees which client measured).
pub const TRACE_TYPE: &str = "inferbench";

/// The record's `trace_data`, or None when it has no connection evidence (an import, an
/// older run, or a request that failed before it had a connection).
pub fn trace_data(anchor_unix_ns: u64, r: &Record) -> Option<Value> {
    let c = r.connection.as_ref()?;
    if c.reported.is_some() {
        return None;
    }
    let wall = |t: u64| anchor_unix_ns.saturating_add(t);
    let mut m = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            m.insert(k.to_string(), v);
        }
    };
    let span = |a: Option<u64>, b: Option<u64>| Some(json!(b?.checked_sub(a?)?));
    put("trace_type", Some(json!(TRACE_TYPE)));
    put(
        "request_send_start_ns",
        c.send_start_ns.map(|t| json!(wall(t))),
    );
    let chunks_sent = c.chunks_sent.unwrap_or(0);
    put(
        "request_chunks",
        Some(match r.sent_ns {
            Some(t) if chunks_sent > 0 => json!([[wall(t), r.request_bytes]]),
            _ => json!([]),
        }),
    );
    put("response_status_code", r.status.map(|s| json!(s)));
    put(
        "response_receive_start_ns",
        r.frames.first().map(|f| json!(wall(f.t_ns))),
    );
    put(
        "response_headers_received_ns",
        r.ack_ns.map(|t| json!(wall(t))),
    );
    put(
        "response_chunks",
        Some(Value::Array(
            r.frames
                .iter()
                .map(|f| json!([wall(f.t_ns), f.bytes]))
                .collect(),
        )),
    );
    put("response_receive_end_ns", Some(json!(wall(r.end_ns))));
    put("request_send_end_ns", r.sent_ns.map(|t| json!(wall(t))));
    let first = r.frames.first().map(|f| f.t_ns);
    let last = r.frames.last().map(|f| f.t_ns);
    put("sending_ns", span(c.send_start_ns, r.sent_ns));
    put("waiting_ns", span(r.sent_ns, first));
    put(
        "receiving_ns",
        if r.frames.len() == 1 {
            Some(json!(0))
        } else {
            span(first, last)
        },
    );
    put("duration_ns", span(c.send_start_ns, Some(r.end_ns)));
    put(
        "connection_pool_wait_start_ns",
        c.pool_wait_start_ns.map(|t| json!(wall(t))),
    );
    put(
        "connection_pool_wait_end_ns",
        c.pool_wait_end_ns.map(|t| json!(wall(t))),
    );
    put("blocked_ns", span(c.pool_wait_start_ns, c.pool_wait_end_ns));
    if c.reused {
        put(
            "connection_reused_ns",
            c.send_start_ns.map(|t| json!(wall(t))),
        );
    } else {
        let end = match (c.connect_end_ns, c.tls_end_ns) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        put(
            "dns_lookup_start_ns",
            c.dns_start_ns.map(|t| json!(wall(t))),
        );
        put("dns_lookup_end_ns", c.dns_end_ns.map(|t| json!(wall(t))));
        put("dns_lookup_ns", span(c.dns_start_ns, c.dns_end_ns));
        put(
            "tcp_connect_start_ns",
            c.connect_start_ns.map(|t| json!(wall(t))),
        );
        put("tcp_connect_end_ns", end.map(|t| json!(wall(t))));
        put("connecting_ns", span(c.connect_start_ns, end));
    }
    Some(Value::Object(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::Frame;
    use inferbench_core::record::ConnectionEvidence;

    #[test]
    fn a_new_connection_and_a_reused_one() {
        let mut r = Record {
            sent_ns: Some(6_000),
            ack_ns: Some(19_000),
            end_ns: 46_000,
            status: Some(200),
            request_bytes: 300,
            frames: vec![
                Frame {
                    t_ns: 20_000,
                    bytes: 100,
                },
                Frame {
                    t_ns: 45_000,
                    bytes: 30,
                },
            ],
            connection: Some(ConnectionEvidence {
                connect_start_ns: Some(1_000),
                connect_end_ns: Some(5_000),
                send_start_ns: Some(5_000),
                chunks_sent: Some(1),
                ..Default::default()
            }),
            ..Default::default()
        };
        let t = trace_data(1_000_000, &r).unwrap();
        assert_eq!(t["trace_type"], "inferbench");
        assert_eq!(t["request_send_start_ns"], 1_005_000);
        assert_eq!(t["request_chunks"], json!([[1_006_000, 300]]));
        assert_eq!(
            t["response_chunks"],
            json!([[1_020_000, 100], [1_045_000, 30]])
        );
        assert_eq!(t["sending_ns"], 1_000);
        assert_eq!(t["waiting_ns"], 14_000);
        assert_eq!(t["receiving_ns"], 25_000);
        assert_eq!(t["duration_ns"], 41_000);
        assert_eq!(t["connecting_ns"], 4_000);
        assert!(t.get("connection_reused_ns").is_none());
        assert!(t.get("blocked_ns").is_none());
        let c = r.connection.as_mut().unwrap();
        c.reused = true;
        c.connect_start_ns = None;
        c.connect_end_ns = None;
        let t = trace_data(1_000_000, &r).unwrap();
        assert_eq!(t["connection_reused_ns"], 1_005_000);
        assert!(t.get("connecting_ns").is_none());
        r.connection = None;
        assert!(trace_data(0, &r).is_none());
    }
}
