//! The media routes: chat bodies with multi-MB media parts, chat_embeddings at
//! `/v1/embeddings`, image retrieval, the multipart transcription upload and image
//! generation (body and stream).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use inferbench_sim::{SimConfig, SimServer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

fn cfg() -> SimConfig {
    SimConfig {
        ttft: Duration::ZERO,
        itl: Duration::ZERO,
        model: "sim-model".to_owned(),
        default_output_tokens: 5,
        words: Arc::new([" a", " b", " c"].iter().map(|w| (*w).to_owned()).collect()),
        ..SimConfig::default()
    }
}

/// POSTs `body` with `content_type` on its own connection; (status, content type, body).
async fn post(
    addr: SocketAddr,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> (u16, String, String) {
    let fut = async {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: sim\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).await.unwrap();
        s.write_all(body).await.unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).await.unwrap();
        raw
    };
    let raw = timeout(Duration::from_secs(30), fut)
        .await
        .expect("answer in time");
    let text = String::from_utf8(raw).unwrap();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let ct = head
        .lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("content-type")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_default();
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        let mut body = String::new();
        let mut rest = rest;
        while let Some((size, after)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            if size == 0 {
                break;
            }
            body.push_str(&after[..size]);
            rest = &after[size + 2..];
        }
        body
    } else {
        rest.to_owned()
    };
    (status, ct, body)
}

async fn post_json(addr: SocketAddr, path: &str, body: &Value) -> (u16, String, Value) {
    let (s, ct, b) = post(addr, path, "application/json", body.to_string().as_bytes()).await;
    (s, ct, serde_json::from_str(&b).unwrap_or(Value::String(b)))
}

#[tokio::test]
async fn chat_with_an_eight_megabyte_image_is_answered() {
    let server = SimServer::start(cfg(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let big = format!("data:image/png;base64,{}", "A".repeat(8 << 20));
    let body = json!({"model": "m", "max_completion_tokens": 3, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "one two"},
        {"type": "image_url", "image_url": {"url": big}},
        {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
    ]}]});
    let (status, _, v) = post_json(server.local_addr(), "/v1/chat/completions", &body).await;
    assert_eq!(status, 200, "{v}");
    // The media parts count no prompt words; the two text words do.
    assert_eq!(v["usage"]["prompt_tokens"], 2);
    assert_eq!(v["usage"]["completion_tokens"], 3);
    server.shutdown().await;
}

#[tokio::test]
async fn chat_embeddings_retrieval_and_generation() {
    let server = SimServer::start(cfg(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr();
    let (s, _, v) = post_json(
        addr,
        "/v1/embeddings",
        &json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}]}),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(v["data"].as_array().unwrap().len(), 1);
    assert_eq!(v["data"][0]["object"], "embedding");

    let (s, _, v) = post_json(
        addr,
        "/v1/infer",
        &json!({"input": [{"type": "image_url", "url": "a"}, {"type": "image_url", "url": "b"}]}),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(v["data"].as_array().unwrap().len(), 2);
    let (s, _, _) = post_json(addr, "/v1/infer", &json!({"input": []})).await;
    assert_eq!(s, 400);

    let (s, _, v) = post_json(
        addr,
        "/v1/images/generations",
        &json!({"prompt": "a fox", "model": "m", "n": 2, "response_format": "b64_json"}),
    )
    .await;
    assert_eq!(s, 200);
    let data = v["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert!(
        data[0]["b64_json"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo")
    );
    let (_, _, v) = post_json(
        addr,
        "/v1/images/generations",
        &json!({"prompt": "a fox", "response_format": "url"}),
    )
    .await;
    assert!(
        v["data"][0]["url"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    let (s, ct, body) = post(
        addr,
        "/v1/images/generations",
        "application/json",
        br#"{"prompt":"a fox","stream":true}"#,
    )
    .await;
    assert_eq!((s, ct.as_str()), (200, "text/event-stream"));
    assert!(
        body.starts_with("event: image_generation.completed\ndata: {"),
        "{body}"
    );
    let (s, _, v) = post_json(addr, "/v1/images/generations", &json!({"model": "m"})).await;
    assert_eq!(s, 400);
    assert!(v.to_string().contains("prompt"));
    server.shutdown().await;
}

#[tokio::test]
async fn transcription_reads_the_multipart_upload() {
    let server = SimServer::start(cfg(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr();
    let form = b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"audio.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFF\x00\x01\r\n--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper\r\n--XyZ--\r\n";
    let (s, _, body) = post(
        addr,
        "/v1/audio/transcriptions",
        "multipart/form-data; boundary=XyZ",
        form,
    )
    .await;
    assert_eq!(s, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let words = v["text"].as_str().unwrap().split_whitespace().count();
    assert_eq!(words, 12);
    // JSON instead of a form, and a form without the file: 400 naming the problem.
    let (s, _, body) = post(addr, "/v1/audio/transcriptions", "application/json", b"{}").await;
    assert_eq!(s, 400);
    assert!(body.contains("multipart/form-data"), "{body}");
    let no_file =
        b"--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nw\r\n--XyZ--\r\n";
    let (s, _, body) = post(
        addr,
        "/v1/audio/transcriptions",
        "multipart/form-data; boundary=XyZ",
        no_file,
    )
    .await;
    assert_eq!(s, 400);
    assert!(body.contains("`file`"), "{body}");
    server.shutdown().await;
}
