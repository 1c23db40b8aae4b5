//! Two requests on one connection, every value worked out by hand.

use inferbench_core::record::{ConnectionEvidence, ReportedHttpTrace};
use inferbench_core::summary::{MetricValue, RecordMetricValue};
use inferbench_core::{ErrorKind, Event, EvidenceHeader, Frame, Record, RecordError};

use super::*;
use crate::aiperf::Accumulator;

fn header() -> EvidenceHeader {
    EvidenceHeader {
        schema_version: 1,
        tool: "t".into(),
        tool_version: "0".into(),
        anchor_unix_ns: 0,
        benchmark_id: "b".into(),
        endpoint_type: "chat".into(),
        streaming: true,
        tokenizer: "w".into(),
        use_server_token_count: false,
        per_chunk_usage: false,
    }
}

fn frames(list: &[(u64, u32)]) -> (Vec<Frame>, Vec<Event>) {
    let f = list
        .iter()
        .map(|(t, b)| Frame {
            t_ns: *t,
            bytes: *b,
        })
        .collect();
    let e = list
        .iter()
        .enumerate()
        .map(|(i, (t, _))| Event {
            frame: i as u32,
            t_ns: *t,
            content: Some("x".into()),
            ..Default::default()
        })
        .collect();
    (f, e)
}

/// A: opens connection 0 (connect 1000 → 5000), sends 5000 → 6000 (300 body bytes), reads
/// 100, 50 and 30 bytes at 20000, 30000 and 45000, ends at 46000.
fn first() -> Record {
    let (frames, events) = frames(&[(20_000, 100), (30_000, 50), (45_000, 30)]);
    Record {
        id: 0,
        start_ns: 1_000,
        sent_ns: Some(6_000),
        end_ns: 46_000,
        request_bytes: 300,
        frames,
        events,
        connection: Some(ConnectionEvidence {
            id: 0,
            reused: false,
            connect_start_ns: Some(1_000),
            connect_end_ns: Some(5_000),
            send_start_ns: Some(5_000),
            chunks_sent: Some(1),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// B: reuses connection 0, sends 50000 → 50500 (1024 bytes), one 512-byte read at 60000,
/// ends at 61000.
fn second() -> Record {
    let (frames, events) = frames(&[(60_000, 512)]);
    Record {
        id: 1,
        start_ns: 50_000,
        sent_ns: Some(50_500),
        end_ns: 61_000,
        request_bytes: 1024,
        frames,
        events,
        connection: Some(ConnectionEvidence {
            id: 0,
            reused: true,
            send_start_ns: Some(50_000),
            chunks_sent: Some(1),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn get(v: &HttpValues, tag: &str) -> Option<u64> {
    v[HTTP_METRICS.iter().position(|m| m.0 == tag).unwrap()]
}

#[test]
fn a_new_connection_and_a_reused_one() {
    let a = values(&first()).unwrap();
    let b = values(&second()).unwrap();
    let expect_a = [
        ("http_req_blocked", 0),
        ("http_req_chunks_received", 3),
        ("http_req_chunks_sent", 1),
        ("http_req_connecting", 4_000),
        ("http_req_connection_overhead", 4_000),
        ("http_req_connection_reused", 0),
        ("http_req_data_received", 180),
        ("http_req_data_sent", 300),
        ("http_req_dns_lookup", 0),
        // 46000 − 5000
        ("http_req_duration", 41_000),
        // 45000 − 20000
        ("http_req_receiving", 25_000),
        ("http_req_sending", 1_000),
        // 4000 + 1000 + 14000 + 25000
        ("http_req_total", 44_000),
        // 20000 − 6000
        ("http_req_waiting", 14_000),
    ];
    for (tag, v) in expect_a {
        assert_eq!(get(&a, tag), Some(v), "A {tag}");
    }
    let expect_b = [
        ("http_req_blocked", 0),
        ("http_req_chunks_received", 1),
        ("http_req_chunks_sent", 1),
        ("http_req_connecting", 0),
        ("http_req_connection_overhead", 0),
        ("http_req_connection_reused", 1),
        ("http_req_data_received", 512),
        ("http_req_data_sent", 1024),
        ("http_req_dns_lookup", 0),
        ("http_req_duration", 11_000),
        // One read: no receiving time.
        ("http_req_receiving", 0),
        ("http_req_sending", 500),
        ("http_req_total", 10_000),
        ("http_req_waiting", 9_500),
    ];
    for (tag, v) in expect_b {
        assert_eq!(get(&b, tag), Some(v), "B {tag}");
    }
}

#[test]
fn dns_and_tls_count_when_the_connection_is_new() {
    let mut r = first();
    let c = r.connection.as_mut().unwrap();
    c.dns_start_ns = Some(1_000);
    c.dns_end_ns = Some(1_700);
    c.connect_start_ns = Some(1_700);
    c.connect_end_ns = Some(2_000);
    c.tls_start_ns = Some(2_000);
    c.tls_end_ns = Some(5_000);
    let v = values(&r).unwrap();
    assert_eq!(get(&v, "http_req_dns_lookup"), Some(700));
    // TCP 1700 → 2000 plus TLS to 5000.
    assert_eq!(get(&v, "http_req_connecting"), Some(3_300));
    assert_eq!(get(&v, "http_req_connection_overhead"), Some(4_000));
    // A pool wait of 250 ns adds to the overhead and the total.
    let c = r.connection.as_mut().unwrap();
    c.pool_wait_start_ns = Some(750);
    c.pool_wait_end_ns = Some(1_000);
    let v = values(&r).unwrap();
    assert_eq!(get(&v, "http_req_blocked"), Some(250));
    assert_eq!(get(&v, "http_req_connection_overhead"), Some(4_250));
    assert_eq!(get(&v, "http_req_total"), Some(44_250));
    // A wait that never ended has no value.
    r.connection.as_mut().unwrap().pool_wait_end_ns = None;
    assert_eq!(get(&values(&r).unwrap(), "http_req_blocked"), None);
}

#[test]
fn errors_and_records_without_evidence_have_none() {
    let mut r = first();
    r.error = Some(RecordError {
        kind: ErrorKind::Http,
        code: Some(500),
        error_type: "HTTPError".into(),
        message: "m".into(),
    });
    assert!(values(&r).is_none());
    let mut r = first();
    r.connection = None;
    assert!(values(&r).is_none());
}

#[test]
fn reported_values_are_used_as_they_are() {
    let mut r = first();
    r.connection = Some(ConnectionEvidence {
        reported: Some(ReportedHttpTrace {
            waiting_ns: Some(21_741_688),
            data_sent_bytes: Some(299),
            ..Default::default()
        }),
        ..Default::default()
    });
    let v = values(&r).unwrap();
    assert_eq!(get(&v, "http_req_waiting"), Some(21_741_688));
    assert_eq!(get(&v, "http_req_data_sent"), Some(299));
    assert_eq!(get(&v, "http_req_connecting"), None);
}

#[test]
fn the_set_reports_them_per_record_and_in_the_summary() {
    let mut acc = Accumulator::new(&header());
    let ma = acc.push(&first());
    let mb = acc.push(&second());
    let find = |ms: &[inferbench_core::summary::RecordMetric], tag: &str| {
        ms.iter().find(|m| m.tag == tag).unwrap().clone()
    };
    // Display units: ms (× 1e-6), KB (/ 1024), integers for counts and the flag.
    let w = find(&ma, "http_req_waiting");
    assert_eq!(w.unit, "ms");
    assert_eq!(w.value, RecordMetricValue::Float(14_000.0 * 1e-6));
    let d = find(&ma, "http_req_data_sent");
    assert_eq!(d.unit, "KB");
    assert_eq!(d.value, RecordMetricValue::Float(0.29296875));
    assert_eq!(
        find(&ma, "http_req_connection_reused").value,
        RecordMetricValue::Int(0)
    );
    assert_eq!(
        find(&mb, "http_req_connection_reused").value,
        RecordMetricValue::Int(1)
    );
    assert_eq!(
        find(&mb, "http_req_chunks_received").unit,
        "count",
        "a count"
    );
    let s = acc.finish(None);
    let stats = |tag: &str| match &s.get(tag).unwrap().value {
        MetricValue::Distribution { stats } => stats.clone(),
        v => panic!("{tag}: {v:?}"),
    };
    let reused = stats("http_req_connection_reused");
    assert_eq!(reused.count, 2);
    assert_eq!(reused.avg, Some(0.5));
    // (300 + 1024) / 2 bytes = 662 bytes = 0.646484375 KB.
    assert_eq!(stats("http_req_data_sent").avg, Some(0.646484375));
    // Connecting: 4000 and 0 ns, mean 2000 ns = 0.002 ms; max 0.004 ms.
    let c = stats("http_req_connecting");
    assert_eq!(c.avg, Some(2_000.0 * 1e-6));
    assert_eq!(c.max, Some(4_000.0 * 1e-6));
    assert_eq!(c.min, Some(0.0));
    // Summary headers and units are AIPerf's.
    let m = s.get("http_req_duration").unwrap();
    assert_eq!(
        (m.header.as_str(), m.unit.as_str()),
        ("HTTP Duration (excl. conn)", "ms")
    );
    // All fourteen, in tag order.
    let tags: Vec<&str> = s
        .metrics
        .iter()
        .filter(|m| m.tag.starts_with("http_req_"))
        .map(|m| m.tag.as_str())
        .collect();
    let mut sorted = tags.clone();
    sorted.sort_unstable();
    assert_eq!(tags.len(), 14);
    assert_eq!(tags, sorted);
}
