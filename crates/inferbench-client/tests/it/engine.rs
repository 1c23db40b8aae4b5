//! The engine against a scripted server on 127.0.0.1:0 that controls exactly how the stream's
//! bytes are split into socket writes, to check the timeline rules: a frame's time is that of
//! the read that completed it, and every event carries the index of the frame it completed in.

use std::time::Duration;

use bytes::Bytes;
use inferbench_client::engine::PreparedPayload;
use inferbench_client::{
    Clock, ConfiguredHeader, Engine, EngineConfig, EngineEvent, StopSignal, request_headers,
};
use inferbench_core::plan::EndpointType;
use inferbench_core::record::{EventKind, Record};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn chunk(text: &str) -> String {
    format!(
        "{{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}]}}"
    )
}

/// Serves one request: the head, then each part as its own write, `gap` apart; then closes.
async fn scripted_server(parts: Vec<String>, gap: Duration) -> std::net::SocketAddr {
    scripted_server_seeing(parts, gap).await.0
}

/// The same, also handing back the request as the server received it.
async fn scripted_server_seeing(
    parts: Vec<String>,
    gap: Duration,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Receiver<String>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let (seen_tx, seen_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        s.set_nodelay(true).unwrap();
        // Read the request head and its Content-Length body.
        let mut buf = Vec::new();
        let mut tmp = [0u8; 4096];
        loop {
            let n = s.read(&mut tmp).await.unwrap();
            buf.extend_from_slice(&tmp[..n]);
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
                    break;
                }
            }
        }
        let _ = seen_tx.send(String::from_utf8_lossy(&buf).to_string());
        s.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
        )
        .await
        .unwrap();
        for p in parts {
            tokio::time::sleep(gap).await;
            s.write_all(p.as_bytes()).await.unwrap();
            s.flush().await.unwrap();
        }
        tokio::time::sleep(gap).await;
        let _ = s.shutdown().await;
    });
    (addr, seen_rx)
}

async fn one_request(addr: std::net::SocketAddr) -> Record {
    one_request_with(addr, Vec::new()).await
}

async fn one_request_with(addr: std::net::SocketAddr, headers: Vec<ConfiguredHeader>) -> Record {
    request_on(addr, headers, false).await
}

async fn request_on(
    addr: std::net::SocketAddr,
    headers: Vec<ConfiguredHeader>,
    reasoning_tags: bool,
) -> Record {
    let phases = EngineConfig::burst_phases(1, 0, 1);
    let chat = "/v1/chat/completions";
    let cfg = EngineConfig {
        headers,
        keep_raw: true,
        ..crate::test_config(addr, chat, EndpointType::Chat, true, phases, reasoning_tags)
    };
    let payload = PreparedPayload {
        conversation_id: "session_000000".into(),
        turn_index: 0,
        body: Bytes::from_static(b"{\"messages\":[],\"model\":\"m\",\"stream\":true}"),
        input_tokens: Some(1),
        requested_output_tokens: None,
        ..Default::default()
    };
    crate::run_payload(cfg, payload, 1).await.pop().unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn events_keep_the_frame_they_completed_in() {
    let gap = Duration::from_millis(60);
    let parts = vec![
        // Two events in one write: they arrive in one read, so they share a frame.
        format!("data: {}\n\ndata: {}\n\n", chunk("x"), chunk("y")),
        // An event split across two writes completes in the second.
        format!("data: {}", &chunk("z")[..20]),
        format!("{}\n\ndata: [DONE]\n\n", &chunk("z")[20..]),
    ];
    let addr = scripted_server(parts, gap).await;
    let r = one_request(addr).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let texts: Vec<&str> = r
        .events
        .iter()
        .filter_map(|e| e.content.as_deref())
        .collect();
    assert_eq!(texts, ["x", "y", "z"]);
    let (x, y, z) = (&r.events[0], &r.events[1], &r.events[2]);
    assert_eq!(x.frame, y.frame, "coalesced events share their frame");
    assert_eq!(x.t_ns, y.t_ns);
    assert!(
        z.frame > y.frame,
        "a split event completes in a later frame"
    );
    // z completed in the write that came two gaps after x and y's.
    let apart = z.t_ns - y.t_ns;
    assert!(
        apart >= 2 * gap.as_nanos() as u64 - 5_000_000,
        "z came {apart} ns after y"
    );
    assert_eq!(r.events[3].kind(), EventKind::Done);
    assert_eq!(r.events[3].frame, z.frame);
    // Every event's time is its frame's time; frames are in order and after the start.
    for e in &r.events {
        assert_eq!(e.t_ns, r.frames[e.frame as usize].t_ns);
    }
    assert!(r.frames.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
    assert!(r.frames[0].t_ns >= r.start_ns);
    assert!(r.ack_ns.unwrap() >= r.start_ns);
    // Raw data is kept at export level raw.
    assert_eq!(r.events[0].raw.as_deref(), Some(chunk("x").as_str()));
    let bytes: u32 = r.frames.iter().map(|f| f.bytes).sum();
    let sent: usize = [
        format!("data: {}\n\ndata: {}\n\n", chunk("x"), chunk("y")),
        format!("data: {}\n\ndata: [DONE]\n\n", chunk("z")),
    ]
    .iter()
    .map(String::len)
    .sum();
    assert_eq!(bytes as usize, sent, "every body byte is in a frame");
}

#[tokio::test(flavor = "current_thread")]
async fn an_sse_error_event_fails_the_request_with_502() {
    let parts = vec![format!(
        "data: {}\n\nevent: error\ndata: {{\"message\":\"overloaded\"}}\n\n",
        chunk("x")
    )];
    let addr = scripted_server(parts, Duration::from_millis(5)).await;
    let r = one_request(addr).await;
    let e = r.error.expect("an error record");
    assert_eq!(e.code, Some(502));
    assert!(e.message.contains("overloaded"));
    assert_eq!(r.events.len(), 2, "the events before the error are kept");
}

#[tokio::test(flavor = "current_thread")]
async fn a_refused_connection_is_one_error_record() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = one_request(format!("127.0.0.1:{port}").parse().unwrap()).await;
    let e = r.error.expect("an error record");
    assert_eq!(e.kind, inferbench_core::ErrorKind::Transport);
    assert!(e.message.contains("cannot connect"), "{}", e.message);
}

#[tokio::test(flavor = "current_thread")]
async fn the_request_carries_our_headers_and_the_users_replace_ours() {
    let (addr, seen) =
        scripted_server_seeing(vec!["data: [DONE]\n\n".into()], Duration::from_millis(5)).await;
    let headers = vec![
        ConfiguredHeader::new("Authorization", "Bearer sk-test", true).unwrap(),
        ConfiguredHeader::new("User-Agent", "custom-agent", false).unwrap(),
    ];
    let expected = headers.clone();
    let r = one_request_with(addr, headers).await;
    let head = seen.await.unwrap().to_ascii_lowercase();
    assert!(
        head.starts_with("post /v1/chat/completions http/1.1\r\n"),
        "{head}"
    );
    assert!(head.contains(&format!("host: {addr}\r\n")), "{head}");
    assert!(head.contains("authorization: bearer sk-test\r\n"));
    assert!(head.contains("accept: text/event-stream\r\n"));
    assert!(head.contains(&format!("x-request-id: {}\r\n", r.request_id)));
    assert!(head.contains("content-type: application/json\r\n"));
    // Replaced, not duplicated.
    assert_eq!(head.matches("user-agent:").count(), 1);
    assert!(head.contains("user-agent: custom-agent\r\n"));
    // The order on the wire: Host, ours (the user's User-Agent in our place), then theirs;
    // and it is what `request_headers` lists for the raw export.
    let lines: Vec<&str> = head
        .split("\r\n\r\n")
        .next()
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("content-length:"))
        .collect();
    let names: Vec<&str> = lines.iter().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(
        names,
        [
            "host",
            "content-type",
            "user-agent",
            "x-request-id",
            "x-correlation-id",
            "accept",
            "authorization"
        ]
    );
    let listed: Vec<String> =
        request_headers(&expected, &r.request_id, &r.correlation_id, true, false)
            .into_iter()
            .map(|(n, v)| format!("{n}: {v}").to_ascii_lowercase())
            .collect();
    assert_eq!(lines[1..], listed[..]);
    assert!(head.ends_with("{\"messages\":[],\"model\":\"m\",\"stream\":true}"));
    // A stream with no text is not an error of the transport; the metrics decide validity.
    assert!(r.error.is_none());
}

#[tokio::test(flavor = "current_thread")]
async fn a_configured_host_replaces_ours_in_place_and_a_configured_length_is_dropped() {
    let (addr, seen) =
        scripted_server_seeing(vec!["data: [DONE]\n\n".into()], Duration::from_millis(5)).await;
    let headers = vec![
        ConfiguredHeader::new("Host", "model.example.test", false).unwrap(),
        ConfiguredHeader::new("Content-Length", "999", false).unwrap(),
    ];
    let r = one_request_with(addr, headers).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let head = seen.await.unwrap().to_ascii_lowercase();
    // Right after the request line, once; our own address nowhere.
    assert!(
        head.starts_with("post /v1/chat/completions http/1.1\r\nhost: model.example.test\r\n"),
        "{head}"
    );
    assert_eq!(head.matches("host:").count(), 1, "{head}");
    assert!(!head.contains(&addr.to_string()), "{head}");
    // The body's own length, once.
    let body = "{\"messages\":[],\"model\":\"m\",\"stream\":true}";
    assert_eq!(head.matches("content-length:").count(), 1, "{head}");
    assert!(head.contains(&format!("content-length: {}\r\n", body.len())));
}

#[tokio::test(flavor = "current_thread")]
async fn a_fixed_schedule_plans_each_request_at_its_offset() {
    use inferbench_client::engine::{LoadMode, PhaseSpec};
    use inferbench_core::record::Phase;
    let cfg = inferbench_sim::SimConfig {
        ttft: Duration::ZERO,
        itl: Duration::ZERO,
        ..Default::default()
    };
    let server = inferbench_sim::SimServer::start(cfg, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    // Offsets as a trace gives them (two at the same instant), in ms: 0, 30, 30, 100.
    let offsets: Vec<u64> = [0u64, 30, 30, 100]
        .iter()
        .map(|ms| ms * 1_000_000)
        .collect();
    let fixed = LoadMode::Fixed {
        offsets_ns: std::sync::Arc::new(offsets.clone()),
        conversations: std::sync::Arc::new(Vec::new()),
        ceiling: None,
    };
    let phases = vec![PhaseSpec::new(Phase::Profiling, fixed, None)];
    let (addr, chat) = (server.local_addr(), "/v1/chat/completions");
    let cfg = crate::test_config(addr, chat, EndpointType::Chat, true, phases, false);
    let payload = PreparedPayload {
        conversation_id: "session_000000".into(),
        turn_index: 0,
        body: Bytes::from_static(
            b"{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"model\":\"m\",\"stream\":true,\"max_tokens\":2}",
        ),
        input_tokens: Some(1),
        requested_output_tokens: Some(2),
        ..Default::default()
    };
    let engine = Engine::new(
        cfg,
        Clock::start(),
        vec![payload],
        Box::new(|| 0),
        None,
        StopSignal::new(),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = engine.run(tx).await;
    server.shutdown().await;
    assert_eq!(outcome.records, 4, "one record per scheduled request");
    let start = outcome.windows[0].start_ns;
    let mut recs = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let EngineEvent::Record(r, _) = ev {
            recs.push(*r);
        }
    }
    recs.sort_by_key(|r| r.id);
    let planned: Vec<u64> = recs.iter().map(|r| r.planned_ns - start).collect();
    assert_eq!(planned, offsets);
    for r in &recs {
        assert!(r.start_ns >= r.planned_ns);
        assert!(r.error.is_none(), "{:?}", r.error);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_stream_that_ends_inside_an_event_is_an_error() {
    // The last event has no blank line after it: the server closed the stream early.
    let parts = vec![format!("data: {}\n\ndata: {}", chunk("x"), chunk("y"))];
    let addr = scripted_server(parts, Duration::from_millis(5)).await;
    let r = one_request(addr).await;
    let e = r.error.expect("an error record");
    assert_eq!(e.error_type, "IncompleteSSEEvent");
    assert_eq!(r.events.len(), 1, "the complete event is kept");
}

#[tokio::test(flavor = "current_thread")]
async fn reasoning_tags_split_think_text_across_chunks() {
    // The tags are cut across events: `<thi` + `nk>`, `</th` + `ink>`.
    let parts = vec![
        format!("data: {}\n\n", chunk("<thi")),
        format!("data: {}\n\n", chunk("nk>plan a</th")),
        format!("data: {}\n\n", chunk("ink>answer")),
        "data: [DONE]\n\n".to_string(),
    ];
    let addr = scripted_server(parts.clone(), Duration::from_millis(2)).await;
    let r = request_on(addr, Vec::new(), true).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let content: String = r
        .events
        .iter()
        .filter_map(|e| e.content.as_deref())
        .collect();
    let reasoning: String = r
        .events
        .iter()
        .filter_map(|e| e.reasoning.as_deref())
        .collect();
    assert_eq!(content, "answer");
    assert_eq!(reasoning, "plan a");
    // The first event held back a possible tag: it carries no text; the reasoning starts in
    // the second, the answer in the third.
    assert!(!r.events[0].has_text());
    assert_eq!(r.events[1].reasoning.as_deref(), Some("plan a"));
    assert_eq!(r.events[2].content.as_deref(), Some("answer"));
    // Without the flag the tags are content.
    let addr = scripted_server(parts, Duration::from_millis(2)).await;
    let r = request_on(addr, Vec::new(), false).await;
    let content: String = r
        .events
        .iter()
        .filter_map(|e| e.content.as_deref())
        .collect();
    assert_eq!(content, "<think>plan a</think>answer");
}
