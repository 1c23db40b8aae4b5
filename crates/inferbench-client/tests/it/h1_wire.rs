//! The engine's own HTTP/1.1 client against a hand-written server on 127.0.0.1:0 that answers
//! the requests of one connection with the framings real servers use: an interim 100
//! response, chunk extensions and trailers, a chunk split across writes, a Content-Length
//! body, and `Connection: close`, after which the next request must open a new connection.

use std::time::Duration;

use bytes::Bytes;
use inferbench_client::EngineConfig;
use inferbench_client::engine::PreparedPayload;
use inferbench_core::plan::EndpointType;
use inferbench_core::record::{EventKind, Record};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn event(text: &str) -> String {
    format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n"
    )
}

/// Reads one request (head and Content-Length body); false at EOF.
async fn read_request(s: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut tmp = [0u8; 4096];
    loop {
        if let Some(h) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..h]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if buf.len() >= h + 4 + len {
                buf.drain(..h + 4 + len);
                return true;
            }
        }
        let n = s.read(&mut tmp).await.unwrap();
        if n == 0 {
            return false;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
}

async fn write_parts(s: &mut TcpStream, parts: &[Vec<u8>]) {
    for p in parts {
        s.write_all(p).await.unwrap();
        s.flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// First connection: a chunked response (after a 100), then a Content-Length one that says
/// `Connection: close`. Second connection: a chunked response. Returns the address and how
/// many connections were accepted.
async fn server() -> (std::net::SocketAddr, tokio::task::JoinHandle<usize>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let h = tokio::spawn(async move {
        let (a, b) = (event("Hel"), event("lo"));
        let chunked = |ext: &str| {
            let mut v = Vec::new();
            for e in [&a, &b] {
                v.push(format!("{:X}{ext}\r\n{e}\r\n", e.len()).into_bytes());
            }
            v.push(b"6\r\ndata: \r\n".to_vec());
            // A chunk split across two writes: the `[DONE]` event arrives in two pieces.
            v.push(b"8\r\n[DO".to_vec());
            v.push(b"NE]\n\n\r\n0\r\nx-trailer: 1\r\n\r\n".to_vec());
            v
        };
        let (mut s, _) = l.accept().await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut buf = Vec::new();
        assert!(read_request(&mut s, &mut buf).await);
        let mut first = vec![
            b"HTTP/1.1 100 Continue\r\n\r\n".to_vec(),
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                .to_vec(),
        ];
        first.extend(chunked(";name=value"));
        write_parts(&mut s, &first).await;
        assert!(
            read_request(&mut s, &mut buf).await,
            "the connection was reused"
        );
        let body = format!("{a}{b}data: [DONE]\n\n");
        let second = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        write_parts(&mut s, &[second.into_bytes()]).await;
        // Told to close: the client must not send a third request here.
        assert!(
            !read_request(&mut s, &mut buf).await,
            "no request after `close`"
        );
        let (mut s, _) = l.accept().await.unwrap();
        let mut buf = Vec::new();
        assert!(read_request(&mut s, &mut buf).await);
        let mut third = vec![
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                .to_vec(),
        ];
        third.extend(chunked(""));
        write_parts(&mut s, &third).await;
        2
    });
    (addr, h)
}

/// `requests` streamed chat requests at concurrency 1 to the server at `addr`.
fn config(addr: std::net::SocketAddr, requests: u64) -> EngineConfig {
    let phases = EngineConfig::burst_phases(1, 0, requests);
    crate::test_config(
        addr,
        "/v1/chat/completions",
        EndpointType::Chat,
        true,
        phases,
        false,
    )
}

async fn run(addr: std::net::SocketAddr, requests: u64) -> Vec<Record> {
    let cfg = config(addr, requests);
    let payload = PreparedPayload {
        conversation_id: "session_000000".into(),
        body: Bytes::from_static(b"{\"messages\":[],\"model\":\"m\",\"stream\":true}"),
        ..Default::default()
    };
    crate::run_payload(cfg, payload, requests).await
}

fn text(r: &Record) -> String {
    r.events
        .iter()
        .filter_map(|e| e.content.as_deref())
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn framings_interim_responses_and_connection_close() {
    let (addr, accepted) = server().await;
    let recs = run(addr, 3).await;
    assert_eq!(accepted.await.unwrap(), 2);
    assert_eq!(recs.len(), 3);
    for r in &recs {
        assert!(r.error.is_none(), "{:?}", r.error);
        assert_eq!(r.status, Some(200));
        assert_eq!(text(r), "Hello");
        let kinds: Vec<_> = r.events.iter().map(|e| e.kind.0).collect();
        assert_eq!(kinds.last(), Some(&EventKind::Done), "{kinds:?}");
    }
    // Frames: one per chunk even when chunks share a read, a chunk split across writes once
    // per piece read (`[DO`, `NE]…`: 5 ms apart, so two reads unless the client was
    // descheduled that long), and the whole Content-Length body, one write, as one.
    let bytes = |r: &Record| r.frames.iter().map(|f| u64::from(f.bytes)).sum::<u64>();
    assert!(
        (4..=5).contains(&recs[0].frames.len()),
        "{:?}",
        recs[0].frames
    );
    assert_eq!(recs[1].frames.len(), 1);
    assert_eq!(
        bytes(&recs[0]),
        bytes(&recs[1]),
        "the same SSE bytes both ways"
    );
    let conn: Vec<_> = recs
        .iter()
        .map(|r| {
            let c = r.connection.as_ref().unwrap();
            (c.id, c.reused)
        })
        .collect();
    assert_eq!(conn, vec![(0, false), (0, true), (1, false)]);
}

/// A server that answers before it has read the body and closes (a proxy's 413 for a body
/// over its limit): the record carries that answer, as hyper reported it, not the write's
/// broken pipe. The body is far larger than the socket buffers, so the write does fail.
#[tokio::test(flavor = "current_thread")]
async fn an_answer_before_the_body_is_read_is_the_result() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let mut buf = vec![0u8; 64 * 1024];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "the head arrives");
            got.extend_from_slice(&buf[..n]);
        }
        let body = "{\"error\":{\"message\":\"request body too large\"}}";
        let answer = format!(
            "HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(answer.as_bytes()).await.unwrap();
        // Closing with the body unread resets the connection: the client's write fails.
        drop(s);
    });
    let cfg = config(addr, 1);
    let prompt = "x".repeat(64 << 20);
    let payload = PreparedPayload {
        conversation_id: "session_000000".into(),
        body: Bytes::from(format!(
            "{{\"messages\":[{{\"role\":\"user\",\"content\":\"{prompt}\"}}],\"model\":\"m\",\"stream\":true}}"
        )),
        ..Default::default()
    };
    let recs = crate::run_payload(cfg, payload, 1).await;
    server.await.unwrap();
    let r = &recs[0];
    assert_eq!(r.status, Some(413), "{:?}", r.error);
    let e = r.error.as_ref().expect("a 413 is an error record");
    assert_ne!(e.error_type, "TransportError", "{e:?}");
    assert!(e.message.contains("request body too large"), "{e:?}");
    assert_eq!(r.sent_ns, None, "the request never left whole");
}
