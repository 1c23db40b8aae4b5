//! Multi-turn sessions in the engine: a conversation's turns go one after another on one
//! slot, a later turn waits its delay after the previous turn ended, the conversation so far
//! (with the live assistant replies) is resent before a later turn, and under a fixed
//! schedule a session starts at its trace time. A small keep-alive server on 127.0.0.1:0
//! records every body it receives and answers `reply-<n>` for the n-th request.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use inferbench_client::engine::{LoadMode, PhaseSpec, PreparedPayload};
use inferbench_client::{Clock, Engine, EngineConfig, EngineEvent, StopSignal};
use inferbench_core::plan::EndpointType;
use inferbench_core::record::{Phase, Record};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Seen = Arc<Mutex<Vec<Value>>>;

async fn recording_server() -> (std::net::SocketAddr, Seen) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let seen2 = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else {
                return;
            };
            s.set_nodelay(true).unwrap();
            let seen = seen2.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut tmp = [0u8; 8192];
                loop {
                    // One request: head, then its Content-Length body.
                    let (head_end, len) = loop {
                        let text = String::from_utf8_lossy(&buf).to_string();
                        if let Some(h) = text.find("\r\n\r\n") {
                            let len: usize = text[..h]
                                .lines()
                                .find_map(|l| {
                                    l.to_ascii_lowercase()
                                        .strip_prefix("content-length:")
                                        .map(|v| v.trim().parse().unwrap())
                                })
                                .unwrap_or(0);
                            if buf.len() >= h + 4 + len {
                                break (h + 4, len);
                            }
                        }
                        let n = match s.read(&mut tmp).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        buf.extend_from_slice(&tmp[..n]);
                    };
                    let body: Value =
                        serde_json::from_slice(&buf[head_end..head_end + len]).unwrap();
                    buf.drain(..head_end + len);
                    let n = {
                        let mut v = seen.lock().unwrap();
                        v.push(body);
                        v.len() - 1
                    };
                    let reply = json!({
                        "object": "chat.completion",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": format!("reply-{n}")}}],
                    })
                    .to_string();
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
                        reply.len()
                    );
                    if s.write_all(resp.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, seen)
}

fn turn(conv: &str, i: u32, text: &str, delay_ms: Option<u64>, history: bool) -> PreparedPayload {
    let body = json!({
        "messages": [{"role": "user", "content": text}],
        "model": "m",
        "stream": false,
    });
    PreparedPayload {
        conversation_id: conv.into(),
        turn_index: i,
        body: Bytes::from(body.to_string()),
        delay: delay_ms.map(Duration::from_millis),
        history,
        ..Default::default()
    }
}

fn config(addr: std::net::SocketAddr, mode: LoadMode, count: Option<u64>) -> EngineConfig {
    let phases = vec![PhaseSpec::new(Phase::Profiling, mode, count)];
    let chat = "/v1/chat/completions";
    EngineConfig {
        seed: 7,
        ..crate::test_config(addr, chat, EndpointType::Chat, false, phases, false)
    }
}

/// The records, by id, each with the body it was sent with when that was not its payload's.
async fn run_bodies(engine: Engine) -> Vec<(Record, Option<Bytes>)> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    engine.run(tx).await;
    let mut recs = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let EngineEvent::Record(r, body) = ev {
            recs.push((*r, body));
        }
    }
    recs.sort_by_key(|(r, _)| r.id);
    recs
}

async fn run(engine: Engine) -> Vec<Record> {
    run_bodies(engine)
        .await
        .into_iter()
        .map(|(r, _)| r)
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn a_session_sends_its_turns_in_order_with_delays_and_history() {
    let (addr, seen) = recording_server().await;
    let payloads = vec![
        turn("a", 0, "a0", None, true),
        turn("a", 1, "a1", Some(40), true),
        turn("a", 2, "a2", Some(20), true),
        turn("b", 0, "b0", None, true),
        turn("b", 1, "b1", Some(10), true),
    ];
    // One slot, conversations in the order a, b: five requests.
    let mut next = 0;
    let order = Box::new(move || {
        let c = next % 2;
        next += 1;
        c
    });
    let engine = Engine::new(
        config(
            addr,
            LoadMode::Burst {
                concurrency: 1,
                ramp: None,
            },
            Some(5),
        ),
        Clock::start(),
        payloads,
        order,
        None,
        StopSignal::new(),
    );
    assert_eq!(engine.conversations(), 2);
    let with_bodies = run_bodies(engine).await;
    let recs: Vec<Record> = with_bodies.iter().map(|(r, _)| r.clone()).collect();
    assert_eq!(recs.len(), 5, "one record per request");
    let ids: Vec<(&str, u32)> = recs
        .iter()
        .map(|r| (r.conversation_id.as_str(), r.turn_index))
        .collect();
    assert_eq!(ids, [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1)]);
    // A session's turns share a session number and a correlation id; sessions differ.
    assert!(
        recs[..3]
            .iter()
            .all(|r| r.session_num == recs[0].session_num)
    );
    assert!(
        recs[..3]
            .iter()
            .all(|r| r.correlation_id == recs[0].correlation_id)
    );
    assert_ne!(recs[0].correlation_id, recs[3].correlation_id);
    assert_ne!(recs[0].session_num, recs[3].session_num);
    // A later turn is planned its delay after the previous turn ended, and not sent earlier.
    for (k, delay_ms) in [(1usize, 40u64), (2, 20), (4, 10)] {
        let prev_end = recs[k - 1].end_ns;
        assert!(recs[k].planned_ns >= prev_end + delay_ms * 1_000_000);
        assert!(recs[k].start_ns >= recs[k].planned_ns);
    }
    // The history: earlier user turns and the live replies, then the turn's own message.
    let bodies = seen.lock().unwrap().clone();
    let contents = |b: &Value| -> Vec<String> {
        b["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                format!(
                    "{}:{}",
                    m["role"].as_str().unwrap(),
                    m["content"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(contents(&bodies[0]), ["user:a0"]);
    assert_eq!(
        contents(&bodies[1]),
        ["user:a0", "assistant:reply-0", "user:a1"]
    );
    assert_eq!(
        contents(&bodies[2]),
        [
            "user:a0",
            "assistant:reply-0",
            "user:a1",
            "assistant:reply-1",
            "user:a2"
        ]
    );
    assert_eq!(
        contents(&bodies[3]),
        ["user:b0"],
        "a new session starts afresh"
    );
    assert_eq!(
        contents(&bodies[4]),
        ["user:b0", "assistant:reply-3", "user:b1"]
    );
    // The record's request size is the body actually sent (with the history).
    let sent_len = serde_json::to_string(&bodies[2]).unwrap().len() as u64;
    assert_eq!(recs[2].request_bytes, sent_len);
    // A turn with history comes with the body it was sent with (its input tokens are left
    // to the receiver to count); a first turn went out as its payload.
    let b2 = with_bodies[2].1.as_ref().expect("the body with history");
    assert_eq!(serde_json::from_slice::<Value>(b2).unwrap(), bodies[2]);
    assert_eq!(recs[2].tokens.input, None);
    assert!(with_bodies[0].1.is_none());
    assert!(with_bodies[3].1.is_none());
}

#[tokio::test(flavor = "current_thread")]
async fn rows_that_share_a_session_without_history_are_sent_alone() {
    let (addr, seen) = recording_server().await;
    let payloads = vec![
        turn("s", 0, "x", None, false),
        turn("s", 1, "y", None, false),
    ];
    let engine = Engine::new(
        config(
            addr,
            LoadMode::Burst {
                concurrency: 1,
                ramp: None,
            },
            Some(2),
        ),
        Clock::start(),
        payloads,
        Box::new(|| 0),
        None,
        StopSignal::new(),
    );
    let recs = run(engine).await;
    assert_eq!(recs.len(), 2);
    let bodies = seen.lock().unwrap().clone();
    assert_eq!(bodies[1]["messages"].as_array().unwrap().len(), 1);
    assert_eq!(bodies[1]["messages"][0]["content"], "y");
}

#[tokio::test(flavor = "current_thread")]
async fn the_request_count_stops_a_session_between_turns() {
    let (addr, _seen) = recording_server().await;
    let payloads = vec![
        turn("a", 0, "a0", None, true),
        turn("a", 1, "a1", None, true),
        turn("a", 2, "a2", None, true),
    ];
    let engine = Engine::new(
        config(
            addr,
            LoadMode::Burst {
                concurrency: 1,
                ramp: None,
            },
            Some(2),
        ),
        Clock::start(),
        payloads,
        Box::new(|| 0),
        None,
        StopSignal::new(),
    );
    let recs = run(engine).await;
    assert_eq!(recs.len(), 2, "the count counts requests, not sessions");
    assert_eq!(recs[1].turn_index, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_fixed_schedule_starts_each_session_at_its_trace_time() {
    let (addr, seen) = recording_server().await;
    // Conversation 0: one turn. Conversation 1: two turns, the second at trace time 120 ms
    // (later than its delay would make it). Sessions start at 50 ms and 0 ms.
    let mut second = turn("late", 1, "l1", Some(1), true);
    second.schedule_ns = Some(120_000_000);
    let payloads = vec![
        turn("single", 0, "s0", None, false),
        turn("late", 0, "l0", None, true),
        second,
    ];
    let mode = LoadMode::Fixed {
        offsets_ns: Arc::new(vec![0, 50_000_000]),
        conversations: Arc::new(vec![1, 0]),
        ceiling: None,
    };
    let engine = Engine::new(
        config(addr, mode, None),
        Clock::start(),
        payloads,
        Box::new(|| unreachable!("a fixed schedule names its conversations")),
        None,
        StopSignal::new(),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = engine.run(tx).await;
    let start = outcome.windows[0].start_ns;
    let mut recs = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let EngineEvent::Record(r, _) = ev {
            recs.push(*r);
        }
    }
    assert_eq!(recs.len(), 3);
    let find = |c: &str, t: u32| {
        recs.iter()
            .find(|r| r.conversation_id == c && r.turn_index == t)
            .unwrap()
    };
    assert_eq!(find("late", 0).planned_ns - start, 0);
    assert_eq!(find("single", 0).planned_ns - start, 50_000_000);
    // Not before its trace time, nor before its delay after the previous turn ended.
    let after_delay = find("late", 0).end_ns + 1_000_000;
    assert_eq!(
        find("late", 1).planned_ns,
        (start + 120_000_000).max(after_delay)
    );
    assert_eq!(seen.lock().unwrap().len(), 3);
}
