//! The engine against the simulated server for every endpoint type, streamed and not: each
//! record's events must hold the text, reasoning and usage the simulator sent, and the
//! endpoints that produce no tokens must succeed with no text.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use inferbench_client::EngineConfig;
use inferbench_client::engine::PreparedPayload;
use inferbench_core::plan::EndpointType;
use inferbench_core::record::{EventKind, Record};
use inferbench_sim::{ReasoningField, SimConfig, SimServer};
use serde_json::{Value, json};

/// Requests per run.
const N: u64 = 3;
/// Output tokens asked for; the simulator produces exactly this many.
const OSL: usize = 6;
/// Leading output tokens the simulator sends as reasoning.
const REASONING: usize = 2;

async fn sim(reasoning_field: ReasoningField) -> SimServer {
    let cfg = SimConfig {
        ttft: Duration::ZERO,
        itl: Duration::ZERO,
        reasoning_tokens: REASONING,
        reasoning_field,
        ..SimConfig::default()
    };
    SimServer::start(cfg, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// Runs `N` identical requests of `body` to `path` and returns the records.
async fn run(
    server: &SimServer,
    endpoint: EndpointType,
    path: &str,
    streaming: bool,
    reasoning_tags: bool,
    body: Value,
) -> Vec<Record> {
    let phases = EngineConfig::burst_phases(2, 0, N);
    let cfg = crate::test_config(
        server.local_addr(),
        path,
        endpoint,
        streaming,
        phases,
        reasoning_tags,
    );
    let payload = PreparedPayload {
        conversation_id: "session_000000".into(),
        turn_index: 0,
        body: Bytes::from(body.to_string()),
        ..Default::default()
    };
    crate::run_payload(cfg, payload, N).await
}

/// What one record holds, gathered from its events.
#[derive(Debug, Default)]
struct Seen {
    content: String,
    reasoning: String,
    tool: String,
    /// The last value of each usage field, as the metrics read them.
    usage: serde_json::Map<String, Value>,
}

fn seen(r: &Record) -> Seen {
    assert!(r.error.is_none(), "{:?}", r.error);
    let mut s = Seen::default();
    for e in &r.events {
        assert_ne!(e.kind(), EventKind::Error);
        assert_ne!(e.kind(), EventKind::Other);
        s.content.push_str(e.content.as_deref().unwrap_or(""));
        s.reasoning.push_str(e.reasoning.as_deref().unwrap_or(""));
        s.tool.push_str(e.tool.as_deref().unwrap_or(""));
        if let Some(Value::Object(u)) = &e.usage {
            for (k, v) in u {
                s.usage.insert(k.clone(), v.clone());
            }
        }
    }
    s
}

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Text endpoints: content and reasoning word counts and the usage output count.
fn check_text(recs: &[Record], content: usize, reasoning: usize, usage: Option<(&str, u64)>) {
    for r in recs {
        let s = seen(r);
        assert_eq!(words(&s.content), content, "content {:?}", s.content);
        assert_eq!(
            words(&s.reasoning),
            reasoning,
            "reasoning {:?}",
            s.reasoning
        );
        assert!(!s.content.contains("<think>") && !s.content.contains("</think>"));
        assert_eq!(s.tool, "");
        match usage {
            Some((key, n)) => assert_eq!(s.usage.get(key), Some(&json!(n)), "{:?}", s.usage),
            None => assert!(s.usage.is_empty(), "{:?}", s.usage),
        }
        assert!(r.events.iter().any(|e| e.has_text()));
    }
}

fn chat_body(stream: bool) -> Value {
    json!({"messages":[{"role":"user","content":"hello there"}],"model":"m","stream":stream,
        "max_completion_tokens":OSL,"stream_options":{"include_usage":true}})
}

fn completions_body(stream: bool) -> Value {
    json!({"prompt":"hello there","model":"m","stream":stream,"max_tokens":OSL,
        "stream_options":{"include_usage":true}})
}

fn responses_body(stream: bool) -> Value {
    json!({"input":[{"role":"user","content":"hello there","type":"message"}],"model":"m",
        "stream":stream,"max_output_tokens":OSL})
}

fn messages_body(stream: bool) -> Value {
    json!({"messages":[{"role":"user","content":"hello there"}],"model":"m","max_tokens":OSL,
        "stream":stream})
}

fn tgi_body() -> Value {
    json!({"inputs":"hello there","parameters":{"max_new_tokens":OSL}})
}

const CONTENT: usize = OSL - REASONING;

#[tokio::test(flavor = "current_thread")]
async fn text_endpoints_streamed_and_not() {
    let server = sim(ReasoningField::ReasoningContent).await;
    for stream in [true, false] {
        let recs = run(
            &server,
            EndpointType::Chat,
            "/v1/chat/completions",
            stream,
            false,
            chat_body(stream),
        )
        .await;
        check_text(
            &recs,
            CONTENT,
            REASONING,
            Some(("completion_tokens", OSL as u64)),
        );
        let recs = run(
            &server,
            EndpointType::Completions,
            "/v1/completions",
            stream,
            false,
            completions_body(stream),
        )
        .await;
        // Completions carry no reasoning field: every token is text.
        check_text(&recs, OSL, 0, Some(("completion_tokens", OSL as u64)));
        let recs = run(
            &server,
            EndpointType::Responses,
            "/v1/responses",
            stream,
            false,
            responses_body(stream),
        )
        .await;
        check_text(
            &recs,
            CONTENT,
            REASONING,
            Some(("output_tokens", OSL as u64)),
        );
        for r in &recs {
            let u = &seen(r).usage;
            assert_eq!(
                u["output_tokens_details"]["reasoning_tokens"],
                json!(REASONING)
            );
            assert_eq!(u["input_tokens"], json!(2));
        }
        let recs = run(
            &server,
            EndpointType::Messages,
            "/v1/messages",
            stream,
            false,
            messages_body(stream),
        )
        .await;
        // message_start reports 1 output token; the last value (message_delta) is the total.
        check_text(
            &recs,
            CONTENT,
            REASONING,
            Some(("output_tokens", OSL as u64)),
        );
        for r in &recs {
            assert_eq!(seen(r).usage["input_tokens"], json!(2));
        }
        let path = if stream {
            EndpointType::HuggingfaceGenerate.streaming_path()
        } else {
            EndpointType::HuggingfaceGenerate.default_path()
        };
        let recs = run(
            &server,
            EndpointType::HuggingfaceGenerate,
            path,
            stream,
            false,
            tgi_body(),
        )
        .await;
        // TGI has no reasoning field and sends no usage.
        check_text(&recs, OSL, 0, None);
    }
    let per = server.stats().per_endpoint;
    for name in [
        "chat",
        "completions",
        "responses",
        "messages",
        "huggingface_generate",
    ] {
        assert_eq!(per.get(name), Some(&(2 * N)), "{per:?}");
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn streamed_events_hold_one_token_each() {
    // The token events of a one-token-per-chunk stream: OSL text events, in frame order.
    let server = sim(ReasoningField::ReasoningContent).await;
    for (endpoint, path, body) in [
        (
            EndpointType::Responses,
            "/v1/responses",
            responses_body(true),
        ),
        (EndpointType::Messages, "/v1/messages", messages_body(true)),
        (
            EndpointType::HuggingfaceGenerate,
            "/generate_stream",
            tgi_body(),
        ),
    ] {
        for r in run(&server, endpoint, path, true, false, body).await {
            let text: Vec<_> = r.events.iter().filter(|e| e.has_text()).collect();
            assert_eq!(text.len(), OSL, "{endpoint:?}");
            assert!(text.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
            // Reasoning comes first where the API carries it.
            if endpoint != EndpointType::HuggingfaceGenerate {
                assert!(text[..REASONING].iter().all(|e| e.reasoning.is_some()));
                assert!(text[REASONING..].iter().all(|e| e.content.is_some()));
            }
        }
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn vector_endpoints_succeed_without_text() {
    let server = sim(ReasoningField::ReasoningContent).await;
    let cases = [
        (
            EndpointType::Embeddings,
            json!({"model":"m","input":["a b","c"]}),
        ),
        (
            EndpointType::NimRankings,
            json!({"model":"m","query":{"text":"q"},"passages":[{"text":"p"},{"text":"r"}]}),
        ),
        (
            EndpointType::HfTeiRankings,
            json!({"query":"q","texts":["p","r"]}),
        ),
        (
            EndpointType::CohereRankings,
            json!({"model":"m","query":"q","documents":["p","r"]}),
        ),
    ];
    for (endpoint, body) in cases {
        assert!(!endpoint.produces_tokens());
        let recs = run(
            &server,
            endpoint,
            endpoint.default_path(),
            false,
            false,
            body,
        )
        .await;
        for r in &recs {
            let s = seen(r);
            assert_eq!(
                (s.content.as_str(), s.reasoning.as_str()),
                ("", ""),
                "{endpoint:?}"
            );
            assert!(!r.events.iter().any(|e| e.has_text()));
            assert_eq!(r.events.len(), 1);
            assert_eq!(r.events[0].kind(), EventKind::Body);
            if endpoint == EndpointType::Embeddings {
                assert_eq!(s.usage.get("prompt_tokens"), Some(&json!(3)));
            }
        }
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn raw_and_template_auto_detect() {
    let server = sim(ReasoningField::ReasoningContent).await;
    for stream in [true, false] {
        // Auto-detection reads content only (no reasoning fields, as AIPerf).
        let recs = run(
            &server,
            EndpointType::Raw,
            "/v1/chat/completions",
            stream,
            false,
            chat_body(stream),
        )
        .await;
        check_text(&recs, CONTENT, 0, Some(("completion_tokens", OSL as u64)));
        let recs = run(
            &server,
            EndpointType::Template,
            "/v1/completions",
            stream,
            false,
            completions_body(stream),
        )
        .await;
        check_text(&recs, OSL, 0, Some(("completion_tokens", OSL as u64)));
    }
    let recs = run(
        &server,
        EndpointType::Raw,
        "/v1/embeddings",
        false,
        false,
        json!({"input":"a"}),
    )
    .await;
    for r in &recs {
        assert_eq!(seen(r).content, "");
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn think_tags_become_reasoning_with_the_option() {
    let server = sim(ReasoningField::ThinkTags).await;
    for stream in [true, false] {
        let recs = run(
            &server,
            EndpointType::Chat,
            "/v1/chat/completions",
            stream,
            true,
            chat_body(stream),
        )
        .await;
        check_text(
            &recs,
            CONTENT,
            REASONING,
            Some(("completion_tokens", OSL as u64)),
        );
        let recs = run(
            &server,
            EndpointType::Completions,
            "/v1/completions",
            stream,
            true,
            completions_body(stream),
        )
        .await;
        check_text(
            &recs,
            CONTENT,
            REASONING,
            Some(("completion_tokens", OSL as u64)),
        );
        let recs = run(
            &server,
            EndpointType::Messages,
            "/v1/messages",
            stream,
            true,
            messages_body(stream),
        )
        .await;
        check_text(
            &recs,
            CONTENT,
            REASONING,
            Some(("output_tokens", OSL as u64)),
        );
    }
    // Without the option the tags stay in the content, as in AIPerf.
    let recs = run(
        &server,
        EndpointType::Chat,
        "/v1/chat/completions",
        true,
        false,
        chat_body(true),
    )
    .await;
    for r in &recs {
        let s = seen(r);
        assert!(s.content.starts_with("<think>"), "{:?}", s.content);
        assert_eq!(s.reasoning, "");
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn reasoning_under_the_other_field_name() {
    let server = sim(ReasoningField::Reasoning).await;
    let recs = run(
        &server,
        EndpointType::Chat,
        "/v1/chat/completions",
        true,
        false,
        chat_body(true),
    )
    .await;
    check_text(
        &recs,
        CONTENT,
        REASONING,
        Some(("completion_tokens", OSL as u64)),
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn server_errors_become_error_records() {
    let cfg = SimConfig {
        ttft: Duration::ZERO,
        itl: Duration::ZERO,
        error_rate: 100.0,
        ..SimConfig::default()
    };
    let server = SimServer::start(cfg, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let recs = run(
        &server,
        EndpointType::Messages,
        "/v1/messages",
        true,
        false,
        messages_body(true),
    )
    .await;
    for r in &recs {
        assert_eq!(r.error.as_ref().and_then(|e| e.code), Some(500));
    }
    let _ = Arc::new(());
    server.shutdown().await;
}
