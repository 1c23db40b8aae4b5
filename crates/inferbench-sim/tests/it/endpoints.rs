//! Every endpoint type the simulator serves, streamed and not: shapes, token text, usage,
//! reasoning modes and the per-endpoint counters. Each request is sent on its own
//! connection (`Connection: close`) and read to the end.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use inferbench_sim::{ReasoningField, SimConfig, SimServer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

const WORDS: [&str; 4] = [" a", " b", " c", " d"];
const LIMIT: Duration = Duration::from_secs(20);

fn cfg() -> SimConfig {
    SimConfig {
        ttft: Duration::ZERO,
        itl: Duration::ZERO,
        model: "sim-model".to_owned(),
        default_output_tokens: 5,
        words: Arc::new(WORDS.iter().map(|w| (*w).to_owned()).collect()),
        ..SimConfig::default()
    }
}

async fn start(cfg: SimConfig) -> SimServer {
    SimServer::start(cfg, "127.0.0.1:0".parse().unwrap())
        .await
        .expect("server starts")
}

struct Resp {
    status: u16,
    content_type: String,
    body: String,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("JSON body")
    }

    /// SSE messages as (event name, data).
    fn events(&self) -> Vec<(Option<String>, String)> {
        let mut out = Vec::new();
        for block in self.body.split("\n\n").filter(|b| !b.is_empty()) {
            let mut event = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = Some(e.to_owned());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push_str(d);
                } else {
                    panic!("unexpected SSE line {line:?}");
                }
            }
            out.push((event, data));
        }
        out
    }

    /// The JSON data of each event (`[DONE]` left out), with its event name checked against
    /// the data's `type` where both are present.
    fn datas(&self) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|(_, d)| d != "[DONE]")
            .map(|(e, d)| {
                let v: Value = serde_json::from_str(&d).expect("JSON event");
                if let (Some(e), Some(t)) = (e, v.get("type").and_then(Value::as_str)) {
                    assert_eq!(e, t);
                }
                v
            })
            .collect()
    }
}

async fn post(addr: SocketAddr, path: &str, body: &Value) -> Resp {
    let body = body.to_string();
    let fut = async {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: sim\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).await.unwrap();
        raw
    };
    let raw = timeout(LIMIT, fut).await.expect("answer in time");
    let text = String::from_utf8(raw).unwrap();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let header = |name: &str| {
        head.lines()
            .find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
            })
            .unwrap_or_default()
    };
    let body = if header("transfer-encoding") == "chunked" {
        let mut body = String::new();
        let mut rest = rest;
        // A cut stream ends without the terminating chunk: stop at whatever arrived.
        while let Some((size, after)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            if size == 0 || after.len() < size + 2 {
                break;
            }
            body.push_str(&after[..size]);
            rest = &after[size + 2..];
        }
        body
    } else {
        rest.to_owned()
    };
    Resp {
        status,
        content_type: header("content-type"),
        body,
    }
}

fn concat(values: impl IntoIterator<Item = Value>) -> String {
    values
        .into_iter()
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn responses_stream_and_body() {
    let server = start(SimConfig {
        reasoning_tokens: 2,
        ..cfg()
    })
    .await;
    let addr = server.local_addr();
    let body = json!({"input":[{"role":"user","content":"one two three","type":"message"}],
        "model":"m","stream":true,"instructions":"be brief","max_output_tokens":4});
    let r = post(addr, "/v1/responses", &body).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.content_type, "text/event-stream");
    let ev = r.datas();
    let types: Vec<&str> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        vec![
            "response.created",
            "response.reasoning_text.delta",
            "response.reasoning_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.completed"
        ]
    );
    // No [DONE] on this API.
    assert!(r.events().iter().all(|(_, d)| d != "[DONE]"));
    let seq: Vec<u64> = ev
        .iter()
        .map(|e| e["sequence_number"].as_u64().unwrap())
        .collect();
    assert_eq!(seq, (0..7).collect::<Vec<u64>>());
    let reasoning = concat(ev[1..3].iter().map(|e| e["delta"].clone()));
    let content = concat(ev[3..5].iter().map(|e| e["delta"].clone()));
    assert_eq!(ev[5]["text"].as_str().unwrap(), content);
    assert_eq!(reasoning.split_whitespace().count(), 2);
    assert_eq!(content.split_whitespace().count(), 2);
    // Prompt words: "one two three" + "be brief".
    assert_eq!(
        ev[6]["response"]["usage"],
        json!({"input_tokens":5,"output_tokens":4,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":9})
    );

    let mut body = body;
    body["stream"] = json!(false);
    let b = post(addr, "/v1/responses", &body).await.json();
    assert_eq!(b["object"], "response");
    assert_eq!(b["output"][0]["type"], "reasoning");
    // Same body bytes but `stream` changed: the text may start elsewhere; lengths hold.
    let text = b["output"][1]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text.split_whitespace().count(), 2);
    assert_eq!(b["usage"]["output_tokens"], 4);
    server.shutdown().await;
}

#[tokio::test]
async fn messages_stream_and_body() {
    let server = start(SimConfig {
        reasoning_tokens: 1,
        tokens_per_chunk: 2,
        ..cfg()
    })
    .await;
    let addr = server.local_addr();
    let body = json!({"messages":[{"role":"user","content":"hi there"}],"model":"m",
        "max_tokens":4,"stream":true,"system":"sys"});
    let r = post(addr, "/v1/messages", &body).await;
    let ev = r.datas();
    let kinds: Vec<String> = ev
        .iter()
        .map(|e| {
            let t = e["type"].as_str().unwrap();
            match e["delta"]["type"].as_str() {
                Some(d) if t == "content_block_delta" => d.to_owned(),
                _ => t.to_owned(),
            }
        })
        .collect();
    // Events hold 1, 2, 1 tokens: reasoning, then reasoning + text, then text.
    assert_eq!(
        kinds,
        vec![
            "message_start",
            "content_block_start",
            "thinking_delta",
            "content_block_stop",
            "content_block_start",
            "text_delta",
            "text_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(ev[0]["message"]["usage"]["input_tokens"], 3);
    assert_eq!(ev[1]["content_block"]["type"], "thinking");
    assert_eq!(ev[4]["content_block"]["type"], "text");
    assert_eq!(ev[5]["index"], 1);
    assert_eq!(ev[7]["index"], 1);
    assert_eq!(ev[8]["usage"], json!({"output_tokens":4}));
    assert_eq!(ev[8]["delta"]["stop_reason"], "max_tokens");
    let text = concat([
        ev[5]["delta"]["text"].clone(),
        ev[6]["delta"]["text"].clone(),
    ]);
    assert_eq!(text.split_whitespace().count(), 3);

    let mut body = body;
    body["stream"] = json!(false);
    let b = post(addr, "/v1/messages", &body).await.json();
    assert_eq!(b["type"], "message");
    assert_eq!(b["content"][0]["type"], "thinking");
    assert_eq!(
        b["content"][1]["text"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count(),
        3
    );
    assert_eq!(b["usage"], json!({"input_tokens":3,"output_tokens":4}));
    // max_tokens is required by this API.
    let r = post(addr, "/v1/messages", &json!({"messages":[]})).await;
    assert_eq!(r.status, 400);
    assert!(r.body.contains("max_tokens"), "{}", r.body);
    server.shutdown().await;
}

#[tokio::test]
async fn tgi_generate_and_generate_stream() {
    let server = start(cfg()).await;
    let addr = server.local_addr();
    let body = json!({"inputs":"x y","parameters":{"max_new_tokens":3}});
    let r = post(addr, "/generate_stream", &body).await;
    assert_eq!(r.content_type, "text/event-stream");
    let ev = r.datas();
    assert_eq!(ev.len(), 3);
    assert!(
        ev[..2]
            .iter()
            .all(|e| e["generated_text"].is_null() && e["details"].is_null())
    );
    let text = concat(ev.iter().map(|e| e["token"]["text"].clone()));
    assert_eq!(ev[2]["generated_text"].as_str().unwrap(), text);
    assert_eq!(ev[2]["details"]["finish_reason"], "length");
    assert_eq!(ev[2]["details"]["generated_tokens"], 3);
    let b = post(addr, "/generate", &body).await.json();
    assert_eq!(
        b["generated_text"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count(),
        3
    );
    // Without a limit: the default length.
    let b = post(addr, "/generate", &json!({"inputs":"x"})).await.json();
    assert_eq!(
        b["generated_text"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count(),
        5
    );
    server.shutdown().await;
}

#[tokio::test]
async fn embeddings_and_rankings() {
    let server = start(cfg()).await;
    let addr = server.local_addr();
    let e = post(
        addr,
        "/v1/embeddings",
        &json!({"model":"e","input":["a b","c"]}),
    )
    .await;
    assert_eq!(e.status, 200);
    let e = e.json();
    assert_eq!(e["data"].as_array().unwrap().len(), 2);
    assert_eq!(e["data"][1]["object"], "embedding");
    assert_eq!(e["usage"], json!({"prompt_tokens":3,"total_tokens":3}));
    assert_eq!(e["model"], "e");
    // A streaming flag does not apply to embeddings: still one JSON body.
    let e = post(addr, "/v1/embeddings", &json!({"input":"a","stream":true})).await;
    assert_eq!(e.content_type, "application/json");

    let n = post(
        addr,
        "/v1/ranking",
        &json!({"model":"r","query":{"text":"q"},
        "passages":[{"text":"p1"},{"text":"p2"},{"text":"p3"}]}),
    )
    .await
    .json();
    let idx: Vec<u64> = n["rankings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    let mut sorted = idx.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, vec![0, 1, 2]);
    let t = post(addr, "/rerank", &json!({"query":"q","texts":["a","b"]}))
        .await
        .json();
    assert_eq!(t.as_array().unwrap().len(), 2);
    assert!(t[0]["score"].as_f64().unwrap() >= t[1]["score"].as_f64().unwrap());
    let c = post(
        addr,
        "/v2/rerank",
        &json!({"model":"c","query":"q","documents":["a"]}),
    )
    .await
    .json();
    assert_eq!(c["results"][0]["index"], 0);
    assert!(c["results"][0]["relevance_score"].is_number());
    // Missing fields name the field.
    let r = post(addr, "/v2/rerank", &json!({"query":"q"})).await;
    assert_eq!(r.status, 400);
    assert!(r.body.contains("documents"), "{}", r.body);
    let r = post(addr, "/v1/embeddings", &json!({"input":[]})).await;
    assert_eq!(r.status, 400);

    let s = server.stats();
    let per: Vec<(&str, u64)> = s
        .per_endpoint
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        per,
        vec![
            ("cohere_rankings", 1),
            ("embeddings", 2),
            ("hf_tei_rankings", 1),
            ("nim_rankings", 1)
        ]
    );
    assert_eq!(s.requests, 5);
    assert_eq!(s.bad_requests, 2);
    assert_eq!(s.completed, 5);
    assert_eq!(s.tokens, 0);
    server.shutdown().await;
}

#[tokio::test]
async fn think_tags_mode_on_every_text_endpoint() {
    let server = start(SimConfig {
        reasoning_tokens: 2,
        reasoning_field: ReasoningField::ThinkTags,
        ..cfg()
    })
    .await;
    let addr = server.local_addr();
    let check = |text: &str| {
        let (think, rest) = text
            .strip_prefix("<think>")
            .unwrap()
            .split_once("</think>")
            .unwrap();
        assert_eq!(think.split_whitespace().count(), 2, "{text}");
        assert_eq!(rest.split_whitespace().count(), 2, "{text}");
    };
    let chat = post(
        addr,
        "/v1/chat/completions",
        &json!({"messages":[{"role":"user","content":"x"}],"max_tokens":4}),
    )
    .await
    .json();
    check(chat["choices"][0]["message"]["content"].as_str().unwrap());
    assert!(
        chat["choices"][0]["message"]
            .get("reasoning_content")
            .is_none()
    );
    assert_eq!(
        chat["usage"]["completion_tokens_details"]["reasoning_tokens"],
        2
    );
    let comp = post(
        addr,
        "/v1/completions",
        &json!({"prompt":"x","max_tokens":4,"stream":true}),
    )
    .await;
    check(&concat(
        comp.datas().iter().map(|c| c["choices"][0]["text"].clone()),
    ));
    let resp = post(
        addr,
        "/v1/responses",
        &json!({"input":"x","max_output_tokens":4,"stream":true}),
    )
    .await;
    let ev = resp.datas();
    assert!(
        ev.iter()
            .all(|e| e["type"] != "response.reasoning_text.delta")
    );
    check(&concat(
        ev.iter()
            .filter(|e| e["type"] == "response.output_text.delta")
            .map(|e| e["delta"].clone()),
    ));
    let msg = post(addr, "/v1/messages", &json!({"messages":[],"max_tokens":4}))
        .await
        .json();
    assert_eq!(msg["content"].as_array().unwrap().len(), 1);
    check(msg["content"][0]["text"].as_str().unwrap());
    let tgi = post(
        addr,
        "/generate",
        &json!({"inputs":"x","parameters":{"max_new_tokens":4}}),
    )
    .await
    .json();
    check(tgi["generated_text"].as_str().unwrap());
    let s = server.stats();
    assert_eq!(s.per_endpoint.len(), 5);
    assert_eq!(s.tokens, 20);
    server.shutdown().await;
}

#[tokio::test]
async fn reasoning_field_name_applies_to_chat() {
    let server = start(SimConfig {
        reasoning_tokens: 1,
        reasoning_field: ReasoningField::Reasoning,
        ..cfg()
    })
    .await;
    let b = post(
        server.local_addr(),
        "/v1/chat/completions",
        &json!({"messages":[{"role":"user","content":"x"}],"max_tokens":2}),
    )
    .await
    .json();
    assert!(b["choices"][0]["message"]["reasoning"].is_string());
    assert!(
        b["choices"][0]["message"]
            .get("reasoning_content")
            .is_none()
    );
    assert_eq!(
        ReasoningField::parse("think"),
        Some(ReasoningField::ThinkTags)
    );
    assert_eq!(ReasoningField::parse("nope"), None);
    server.shutdown().await;
}

#[tokio::test]
async fn cut_streams_and_errors_apply_to_new_endpoints() {
    let server = start(SimConfig {
        cut_rate: 100.0,
        ..cfg()
    })
    .await;
    let r = post(
        server.local_addr(),
        "/v1/messages",
        &json!({"messages":[],"max_tokens":4,"stream":true}),
    )
    .await;
    // message_start + block start, then half of the 4 token events; no closing events.
    let ev = r.datas();
    assert_eq!(ev.len(), 4);
    assert!(ev.iter().all(|e| e["type"] != "message_stop"));
    server.shutdown().await;
    let server = start(SimConfig {
        error_rate: 100.0,
        ..cfg()
    })
    .await;
    let r = post(
        server.local_addr(),
        "/rerank",
        &json!({"query":"q","texts":["a"]}),
    )
    .await;
    assert_eq!(r.status, 500);
    assert_eq!(server.stats().errors, 1);
    server.shutdown().await;
}
