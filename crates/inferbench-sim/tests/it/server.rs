//! End-to-end tests against a server bound on 127.0.0.1:0, with a tiny raw HTTP/1.1 client so
//! that chunk arrival times and connection cuts are observed directly.

use std::time::Duration;

use inferbench_sim::{ReasoningField, SimConfig, SimServer, SimStats, serve_until};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::common;

use common::*;

const CHAT16: &str = r#"{"model":"sim-model","messages":[{"role":"user","content":"one two three"}],"stream":true,"max_completion_tokens":16,"ignore_eos":true,"min_tokens":16,"stream_options":{"include_usage":true}}"#;

#[tokio::test]
async fn chat_stream_with_role_event_and_reasoning() {
    timeout(LIMIT, async {
        for (field, key) in [
            (ReasoningField::ReasoningContent, "reasoning_content"),
            (ReasoningField::Reasoning, "reasoning"),
        ] {
            let server = start(SimConfig {
                role_first_chunk: true,
                reasoning_tokens: 8,
                reasoning_field: field,
                ..cfg()
            })
            .await;
            let r = call(server.local_addr(), "POST", "/v1/chat/completions", CHAT16).await;
            assert_eq!(r.status, 200);
            assert_eq!(r.header("content-type"), Some("text/event-stream"));
            assert!(r.complete && r.done());
            let chunks = r.chunks();
            // role + 8 reasoning + 8 content + usage
            assert_eq!(chunks.len(), 18);
            assert_eq!(
                chunks[0]["choices"][0]["delta"],
                serde_json::json!({"role":"assistant","content":""})
            );
            let mut tokens = Vec::new();
            for c in &chunks[1..9] {
                let d = &c["choices"][0]["delta"];
                assert!(
                    d.get("content").is_none(),
                    "reasoning event has no content: {d}"
                );
                assert!(d.get("role").is_none());
                tokens.push(delta_text(c, key).unwrap());
                assert_eq!(c["choices"][0]["finish_reason"], Value::Null);
            }
            for c in &chunks[9..17] {
                assert!(c["choices"][0]["delta"].get(key).is_none());
                tokens.push(delta_text(c, "content").unwrap());
            }
            assert_cycles(&tokens);
            assert_eq!(chunks[16]["choices"][0]["finish_reason"], "length");
            assert_eq!(chunks[15]["choices"][0]["finish_reason"], Value::Null);
            for c in &chunks {
                assert_eq!(c["object"], "chat.completion.chunk");
                assert_eq!(c["model"], "sim-model");
                assert_eq!(c["id"], chunks[0]["id"]);
            }
            assert_eq!(
                chunks[17]["usage"],
                serde_json::json!({"prompt_tokens":3,"completion_tokens":16,"total_tokens":19,
                    "completion_tokens_details":{"reasoning_tokens":8}})
            );
            assert_eq!(chunks[17]["choices"], serde_json::json!([]));
            let s = stats_when(&server, |s| s.completed == 1).await;
            assert_eq!(
                (s.requests, s.completed, s.token_events, s.tokens),
                (1, 1, 16, 16)
            );
            assert_eq!((s.ttft.count, s.itl.count), (1, 15));
            server.shutdown().await;
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn role_rides_on_first_token_without_role_event() {
    timeout(LIMIT, async {
        let server = start(cfg()).await;
        let r = call(server.local_addr(), "POST", "/v1/chat/completions", CHAT16).await;
        let chunks = r.chunks();
        assert_eq!(chunks.len(), 17);
        let d = &chunks[0]["choices"][0]["delta"];
        assert_eq!(d["role"], "assistant");
        assert!(WORDS.contains(&d["content"].as_str().unwrap()));
        assert!(chunks[1]["choices"][0]["delta"].get("role").is_none());
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn three_tokens_per_chunk() {
    timeout(LIMIT, async {
        let server = start(SimConfig {
            tokens_per_chunk: 3,
            role_first_chunk: true,
            ..cfg()
        })
        .await;
        let r = call(server.local_addr(), "POST", "/v1/chat/completions", CHAT16).await;
        let chunks = r.chunks();
        let content: Vec<String> = chunks[1..chunks.len() - 1]
            .iter()
            .map(|c| delta_text(c, "content").unwrap())
            .collect();
        let sizes: Vec<usize> = content.iter().map(|t| split_tokens(t).len()).collect();
        assert_eq!(sizes, vec![1, 3, 3, 3, 3, 3]);
        let all: Vec<String> = content.iter().flat_map(|t| split_tokens(t)).collect();
        assert_cycles(&all);
        assert_eq!(chunks[6]["choices"][0]["finish_reason"], "length");
        let s = stats_when(&server, |s| s.completed == 1).await;
        assert_eq!((s.token_events, s.tokens, s.itl.count), (6, 16, 5));
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn usage_only_when_requested() {
    timeout(LIMIT, async {
        let server = start(cfg()).await;
        let body = r#"{"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":4}"#;
        let r = call(server.local_addr(), "POST", "/v1/chat/completions", body).await;
        assert!(r.done());
        let chunks = r.chunks();
        assert_eq!(chunks.len(), 4);
        assert!(chunks.iter().all(|c| c.get("usage").is_none()));
        assert_eq!(chunks[3]["choices"][0]["finish_reason"], "length");
        // No model in the request: the configured one is reported.
        assert_eq!(chunks[0]["model"], "sim-model");
        let body = r#"{"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":4,"stream_options":{"include_usage":false}}"#;
        let r = call(server.local_addr(), "POST", "/v1/chat/completions", body).await;
        assert_eq!(r.chunks().len(), 4);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn completions_stream_and_default_length() {
    timeout(LIMIT, async {
        let server = start(SimConfig {
            reasoning_tokens: 2, // chat only
            ..cfg()
        })
        .await;
        let body = r#"{"model":"other","prompt":["a b c d"],"stream":true,"stream_options":{"include_usage":true}}"#;
        let r = call(server.local_addr(), "POST", "/v1/completions", body).await;
        assert!(r.complete && r.done());
        let chunks = r.chunks();
        // default_output_tokens = 5, one per event, then usage.
        assert_eq!(chunks.len(), 6);
        let tokens: Vec<String> = chunks[..5]
            .iter()
            .map(|c| c["choices"][0]["text"].as_str().unwrap().to_owned())
            .collect();
        assert_cycles(&tokens);
        for c in &chunks[..5] {
            assert_eq!(c["object"], "text_completion");
            assert_eq!(c["model"], "other");
            assert_eq!(c["choices"][0]["logprobs"], Value::Null);
        }
        assert_eq!(chunks[4]["choices"][0]["finish_reason"], "stop");
        assert_eq!(
            chunks[5]["usage"],
            serde_json::json!({"prompt_tokens":4,"completion_tokens":5,"total_tokens":9})
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn non_streaming_bodies() {
    timeout(LIMIT, async {
        let server = start(SimConfig {
            reasoning_tokens: 3,
            ..cfg()
        })
        .await;
        let addr = server.local_addr();
        let body = r#"{"model":"m","messages":[{"role":"user","content":"x y"}],"max_tokens":7}"#;
        let r = call(addr, "POST", "/v1/chat/completions", body).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("application/json"));
        let v = r.json();
        assert_eq!(v["object"], "chat.completion");
        assert_eq!(v["model"], "m");
        let choice = &v["choices"][0];
        assert_eq!(choice["index"], 0);
        assert_eq!(choice["finish_reason"], "length");
        assert_eq!(choice["message"]["role"], "assistant");
        let reasoning = split_tokens(choice["message"]["reasoning_content"].as_str().unwrap());
        let content = split_tokens(choice["message"]["content"].as_str().unwrap());
        assert_eq!((reasoning.len(), content.len()), (3, 4));
        assert_cycles(&[reasoning, content].concat());
        assert_eq!(
            v["usage"],
            serde_json::json!({"prompt_tokens":2,"completion_tokens":7,"total_tokens":9,
                "completion_tokens_details":{"reasoning_tokens":3}})
        );

        let body = r#"{"prompt":"p q r","max_tokens":2,"stream":false}"#;
        let v = call(addr, "POST", "/v1/completions", body).await.json();
        assert_eq!(v["object"], "text_completion");
        assert_eq!(v["model"], "sim-model");
        assert_eq!(
            split_tokens(v["choices"][0]["text"].as_str().unwrap()).len(),
            2
        );
        assert_eq!(v["choices"][0]["finish_reason"], "length");
        assert_eq!(v["usage"]["total_tokens"], 5);
        assert!(v["usage"].get("completion_tokens_details").is_none());

        let s = stats_when(&server, |s| s.completed == 2).await;
        assert_eq!(
            (s.requests, s.completed, s.tokens, s.ttft.count),
            (2, 2, 9, 2)
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn same_body_same_text() {
    timeout(LIMIT, async {
        let server = start(cfg()).await;
        let mut firsts = std::collections::BTreeSet::new();
        for i in 0..16 {
            let body = format!(
                r#"{{"messages":[{{"role":"user","content":"prompt {i}"}}],"max_tokens":3}}"#
            );
            let a = call(server.local_addr(), "POST", "/v1/chat/completions", &body)
                .await
                .json();
            let b = call(server.local_addr(), "POST", "/v1/chat/completions", &body)
                .await
                .json();
            assert_eq!(a["choices"], b["choices"]);
            firsts.insert(
                a["choices"][0]["message"]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        // The start offset depends on the body: 16 bodies do not all start at one word.
        assert!(firsts.len() > 1);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn injected_errors_follow_arrival_order() {
    timeout(LIMIT, async {
        // Seed 0, rate 50: requests 2, 4, 6, ... fail.
        let server = start(SimConfig {
            error_rate: 50.0,
            ..cfg()
        })
        .await;
        let mut c = Client::connect(server.local_addr()).await;
        let mut statuses = Vec::new();
        for _ in 0..6 {
            let r = c.call("POST", "/v1/chat/completions", CHAT16).await;
            if r.status == 500 {
                assert_eq!(
                    r.json(),
                    serde_json::json!({"error":{"message":"simulated failure","type":"server_error","code":500}})
                );
            } else {
                assert!(r.done());
            }
            statuses.push(r.status);
        }
        assert_eq!(statuses, vec![200, 500, 200, 500, 200, 500]);
        let s = stats_when(&server, |s| s.completed == 3).await;
        assert_eq!((s.requests, s.errors, s.completed), (6, 3, 3));

        // Reset restarts the sequence.
        let r = c.call("POST", "/sim/reset", "").await;
        assert_eq!(r.status, 200);
        assert_eq!(server.stats().requests, 0);
        assert_eq!(c.call("POST", "/v1/chat/completions", CHAT16).await.status, 200);
        assert_eq!(c.call("POST", "/v1/chat/completions", CHAT16).await.status, 500);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn cut_streams_drop_the_connection_after_half_the_events() {
    timeout(LIMIT, async {
        for (ttft, itl) in [(0, 0), (5, 2)] {
            let server = start(SimConfig {
                cut_rate: 100.0,
                role_first_chunk: true,
                ttft: Duration::from_millis(ttft),
                itl: Duration::from_millis(itl),
                ..cfg()
            })
            .await;
            let r = call(server.local_addr(), "POST", "/v1/chat/completions", CHAT16).await;
            assert_eq!(r.status, 200);
            assert!(!r.complete, "no terminating chunk");
            assert!(!r.done(), "no [DONE]");
            let chunks = r.chunks();
            // Role event, then 8 of the 16 token events.
            assert_eq!(chunks.len(), 9);
            assert!(
                chunks
                    .iter()
                    .all(|c| c["choices"][0]["finish_reason"].is_null())
            );
            let s = stats_when(&server, |s| s.cuts == 1).await;
            assert_eq!((s.cuts, s.completed, s.token_events), (1, 0, 8));

            // Non-streaming requests are never cut.
            let body = r#"{"messages":[{"role":"user","content":"x"}],"max_tokens":2}"#;
            let r = call(server.local_addr(), "POST", "/v1/chat/completions", body).await;
            assert_eq!(r.status, 200);
            assert!(r.complete);
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn events_follow_absolute_deadlines() {
    timeout(LIMIT, async {
        let server = start(SimConfig {
            ttft: Duration::from_millis(30),
            itl: Duration::from_millis(10),
            role_first_chunk: true,
            ..cfg()
        })
        .await;
        let mut c = Client::connect(server.local_addr()).await;
        let body = r#"{"messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":5}"#;
        let sent = c.send("POST", "/v1/chat/completions", body).await;
        let r = c.response().await;
        assert!(r.done());
        // role + 5 tokens + [DONE]
        assert_eq!(r.events.len(), 7);
        let ms: Vec<f64> = r
            .events
            .iter()
            .map(|(t, _)| (*t - sent).as_secs_f64() * 1e3)
            .collect();
        // The role event is sent at arrival, before the first token.
        assert!(ms[0] <= ms[1]);
        for i in 0..5 {
            let due = 30.0 + 10.0 * i as f64;
            assert!(
                ms[i + 1] >= due,
                "token {i} at {:.1} ms, due {due} ms",
                ms[i + 1]
            );
            assert!(ms[i + 1] < due + 500.0, "token {i} at {:.1} ms", ms[i + 1]);
        }
        let s = stats_when(&server, |s| s.completed == 1).await;
        assert_eq!((s.ttft.count, s.itl.count), (1, 4));
        assert!(
            s.ttft.mean_ms >= 30.0 && s.ttft.mean_ms < 530.0,
            "{:?}",
            s.ttft
        );
        assert!(s.itl.mean_ms > 0.0 && s.itl.mean_ms < 510.0, "{:?}", s.itl);
        // Token 4 is due at 70 ms, so the first-to-last spread is at least 40 ms minus the
        // lateness of token 0; together with TTFT it reaches 70 ms.
        assert!(s.ttft.sum_ms + s.itl.sum_ms >= 70.0, "{s:?}");
        assert_eq!((s.ttft_cfg_ms, s.itl_cfg_ms), (30.0, 10.0));

        // Non-streaming: the whole body when the last token is due (30 + 4 x 10 ms).
        let body = r#"{"messages":[{"role":"user","content":"x"}],"max_tokens":5}"#;
        let sent = c.send("POST", "/v1/chat/completions", body).await;
        let r = c.response().await;
        let ms = sent.elapsed().as_secs_f64() * 1e3;
        assert_eq!(r.status, 200);
        assert!((70.0..570.0).contains(&ms), "{ms} ms");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn routes_and_request_errors() {
    timeout(LIMIT, async {
        let server = start(cfg()).await;
        let addr = server.local_addr();
        let mut c = Client::connect(addr).await;

        let r = c.call("GET", "/v1/models", "").await;
        assert_eq!(r.status, 200);
        assert_eq!(
            r.json(),
            serde_json::json!({"object":"list","data":[{"id":"sim-model","object":"model","created":0,"owned_by":"inferbench"}]})
        );
        assert_eq!(c.call("GET", "/health", "").await.status, 200);

        let r = c.call("GET", "/nope", "").await;
        assert_eq!(r.status, 404);
        assert!(r.json()["error"]["message"].as_str().unwrap().contains("/nope"));
        let r = c.call("GET", "/v1/chat/completions", "").await;
        assert_eq!(r.status, 405);

        for (path, body, needle) in [
            ("/v1/chat/completions", "{not json", "invalid JSON"),
            ("/v1/chat/completions", r#"{"prompt":"x"}"#, "messages"),
            ("/v1/completions", r#"{"messages":[]}"#, "prompt"),
            ("/v1/chat/completions", r#"{"messages":"x"}"#, "array of messages"),
            ("/v1/completions", r#"{"prompt":"x","max_tokens":0}"#, "at least 1"),
        ] {
            let r = c.call("POST", path, body).await;
            assert_eq!(r.status, 400, "{body}");
            let v = r.json();
            assert_eq!(v["error"]["type"], "invalid_request_error");
            assert_eq!(v["error"]["code"], 400);
            let msg = v["error"]["message"].as_str().unwrap();
            assert!(msg.contains(needle), "{msg}");
        }

        // The same keep-alive connection still serves after errors.
        let r = c.call("POST", "/v1/chat/completions", CHAT16).await;
        assert!(r.done());

        let r = c.call("GET", "/sim/stats", "").await;
        let st: SimStats = serde_json::from_slice(&r.body).unwrap();
        assert_eq!((st.requests, st.bad_requests, st.completed), (1, 5, 1));
        assert_eq!((st.token_events, st.ttft.count), (16, 1));
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_streams() {
    timeout(LIMIT, async {
        let server = start(SimConfig {
            ttft: Duration::from_millis(1),
            itl: Duration::from_micros(200),
            ..cfg()
        })
        .await;
        let addr = server.local_addr();
        let mut tasks = Vec::new();
        for _ in 0..16 {
            tasks.push(tokio::spawn(async move {
                let mut c = Client::connect(addr).await;
                for _ in 0..25 {
                    let r = c.call("POST", "/v1/chat/completions", CHAT16).await;
                    assert!(r.done());
                    assert_eq!(r.chunks().len(), 17);
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let s = stats_when(&server, |s| s.completed == 400).await;
        assert_eq!((s.requests, s.completed, s.token_events), (400, 400, 6400));
        assert_eq!((s.ttft.count, s.itl.count), (400, 6000));
        assert!(s.ttft.mean_ms >= 1.0);
        server.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn shutdown_and_serve_until() {
    timeout(LIMIT, async {
        let server = start(cfg()).await;
        let addr = server.local_addr();
        assert_eq!(call(addr, "GET", "/health", "").await.status, 200);
        server.shutdown().await;
        assert!(TcpStream::connect(addr).await.is_err());

        // serve_until on a free port chosen up front.
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = probe.local_addr().unwrap();
        drop(probe);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let run = tokio::spawn(serve_until(cfg(), addr, async {
            let _ = rx.await;
        }));
        let mut r = None;
        for _ in 0..200 {
            if let Ok(s) = TcpStream::connect(addr).await {
                drop(s);
                r = Some(call(addr, "POST", "/v1/chat/completions", CHAT16).await);
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(r.expect("server came up").done());
        tx.send(()).unwrap();
        let stats = run.await.unwrap().unwrap();
        assert_eq!((stats.requests, stats.completed), (1, 1));

        let bad = SimServer::start(
            SimConfig {
                tokens_per_chunk: 0,
                ..cfg()
            },
            "127.0.0.1:0".parse().unwrap(),
        )
        .await;
        let err = bad.err().expect("refused");
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("tokens_per_chunk"));
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn reasoning_can_take_the_whole_budget() {
    timeout(LIMIT, async {
        let server = start(SimConfig {
            reasoning_tokens: 8,
            ..cfg()
        })
        .await;
        let body = r#"{"messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":3,"stream_options":{"include_usage":true}}"#;
        let r = call(server.local_addr(), "POST", "/v1/chat/completions", body).await;
        let chunks = r.chunks();
        assert_eq!(chunks.len(), 4);
        for c in &chunks[..3] {
            assert!(c["choices"][0]["delta"].get("content").is_none());
            assert!(delta_text(c, "reasoning_content").is_some());
        }
        assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
        assert_eq!(chunks[2]["choices"][0]["finish_reason"], "length");
        assert_eq!(chunks[3]["usage"]["completion_tokens_details"]["reasoning_tokens"], 3);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn client_disconnect_is_counted() {
    timeout(LIMIT, async {
        let server = start(SimConfig {
            ttft: Duration::from_millis(1),
            itl: Duration::from_millis(20),
            ..cfg()
        })
        .await;
        let mut c = Client::connect(server.local_addr()).await;
        c.send("POST", "/v1/chat/completions", CHAT16).await;
        // Wait for the head and some of the first event, then hang up mid-stream.
        assert!(c.fill().await);
        drop(c);
        let s = stats_when(&server, |s| s.client_disconnects == 1).await;
        assert_eq!((s.client_disconnects, s.completed, s.cuts), (1, 0, 0));
        assert!(s.token_events < 16);
    })
    .await
    .unwrap();
}
