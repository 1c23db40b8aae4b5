//! Tests of the request bodies and of what is read back from them.

use super::*;
use inferbench_core::plan::{ArtifactPlan, ExportLevel, LoadPlan, Target, TokenizerSpec, UiKind};

pub(super) fn plan(endpoint: EndpointType) -> RunPlan {
    let mut extra = Map::new();
    extra.insert("ignore_eos".into(), Value::Bool(true));
    extra.insert("min_tokens".into(), Value::from(16));
    RunPlan {
        models: vec!["mock-model".into()],
        target: Target::Url {
            url: "http://127.0.0.1:1".into(),
        },
        url: "http://127.0.0.1:1".into(),
        endpoint_type: endpoint,
        endpoint_path: endpoint.default_path().into(),
        streaming: true,
        api_key: None,
        headers: vec![],
        extra_inputs: extra,
        request_timeout_seconds: 600.0,
        tokenizer: TokenizerSpec::Builtin,
        tokenizer_revision: None,
        use_server_token_count: false,
        use_legacy_max_tokens: false,
        isl: LengthDist {
            mean: 32.0,
            stddev: 0.0,
        },
        osl: Some(LengthDist {
            mean: 16.0,
            stddev: 0.0,
        }),
        num_dataset_entries: 5,
        random_seed: Some(1),
        load: LoadPlan {
            concurrency: 4,
            request_count: 60,
            warmup_request_count: 0,
            ..Default::default()
        },
        artifacts: ArtifactPlan {
            dir: "a".into(),
            run_dir: "a/b".into(),
            prefix: "profile_export".into(),
            export_level: ExportLevel::Records,
            export_http_trace: false,
            evidence_compression: Default::default(),
            slice_duration_s: None,
        },
        ui: UiKind::None,
        cli_command: "inferbench profile".into(),
        goodput: None,
        confidence_level: 0.95,
        dataset: Default::default(),
        endpoint: Default::default(),
        telemetry: Default::default(),
        workers_max: None,
        tls: Default::default(),
        routing: Default::default(),
        connection: Default::default(),
        controls: Default::default(),
        shard: None,
    }
}

fn builtin() -> Tokenizer {
    Tokenizer::builtin().unwrap()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

/// Key order of the first payload of an AIPerf fixture, or the order read off it by hand
/// when the shared fixtures are not there.
fn fixture_keys(scenario: &str, fallback: &[&str]) -> Vec<String> {
    let path = format!(
        "{}/../../../shared/fixtures/{scenario}/aiperf/inputs.json",
        env!("CARGO_MANIFEST_DIR")
    );
    match std::fs::read_to_string(path) {
        Ok(t) => {
            let v: Value = serde_json::from_str(&t).unwrap();
            let first = &v["data"][0];
            assert_eq!(keys(first), vec!["session_id", "payloads"]);
            keys(&first["payloads"][0])
                .into_iter()
                .map(String::from)
                .collect()
        }
        Err(_) => fallback.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn chat_body_matches_aiperf_key_order_and_values() {
    let p = plan(EndpointType::Chat);
    let r = render_workload(&p, &builtin(), Corpus::shakespeare()).unwrap();
    assert_eq!(r.seed_used, 1);
    assert_eq!(r.corpus_sha256, Corpus::shakespeare().sha256());
    assert_eq!(r.workload.payloads.len(), 5);
    let body: Value = serde_json::from_str(&r.workload.payloads[0].body).unwrap();
    let want = fixture_keys(
        "S1-chat-stream",
        &[
            "messages",
            "model",
            "stream",
            "max_completion_tokens",
            "ignore_eos",
            "min_tokens",
            "stream_options",
        ],
    );
    assert_eq!(keys(&body), want);
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_completion_tokens"], 16);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["messages"][0]["role"], "user");
    let content = body["messages"][0]["content"].as_str().unwrap();
    assert_eq!(builtin().count(content), 32);
    // Compact serialization: no spaces between tokens of the JSON itself.
    assert!(
        r.workload.payloads[0]
            .body
            .starts_with("{\"messages\":[{\"role\":\"user\",\"content\":")
    );
    for (i, pl) in r.workload.payloads.iter().enumerate() {
        assert_eq!(pl.conversation_id, format!("session_00000{i}"));
        assert_eq!(pl.turn_index, 0);
        assert_eq!(pl.input_tokens, Some(32));
        assert_eq!(pl.requested_output_tokens, Some(16));
    }
}

#[test]
fn completions_body_matches_aiperf_key_order() {
    let p = plan(EndpointType::Completions);
    let f = crate::tokenizer::tests::fixture();
    let r = render_workload(&p, &f, Corpus::shakespeare()).unwrap();
    let body: Value = serde_json::from_str(&r.workload.payloads[0].body).unwrap();
    let want = fixture_keys(
        "S4-completions-stream",
        &[
            "prompt",
            "model",
            "stream",
            "max_tokens",
            "ignore_eos",
            "min_tokens",
            "stream_options",
        ],
    );
    assert_eq!(keys(&body), want);
    assert_eq!(f.count(body["prompt"].as_str().unwrap()), 32);
    assert_eq!(r.workload.payloads[0].input_tokens, Some(32));
}

#[test]
fn legacy_max_tokens_no_osl_and_no_stream() {
    let mut p = plan(EndpointType::Chat);
    p.use_legacy_max_tokens = true;
    let b = build_body(&p, "m", "hi", Some(7)).unwrap();
    assert_eq!(b["max_tokens"], 7);
    assert!(!b.contains_key("max_completion_tokens"));
    p.osl = None;
    p.streaming = false;
    p.extra_inputs.clear();
    let b = build_body(&p, "m", "hi", None).unwrap();
    assert_eq!(
        Value::Object(b).to_string(),
        r#"{"messages":[{"role":"user","content":"hi"}],"model":"m","stream":false}"#
    );
}

#[test]
fn per_chunk_usage_asks_chat_streams_for_continuous_usage_and_keeps_the_authors_value() {
    let mut p = plan(EndpointType::Chat);
    p.extra_inputs.clear();
    p.endpoint.per_chunk_usage = true;
    let b = build_body(&p, "m", "x", None).unwrap();
    assert_eq!(
        b["stream_options"],
        json!({"include_usage": true, "continuous_usage_stats": true})
    );
    // The author's explicit value stays (AIPerf fills the key in only when absent).
    p.extra_inputs.insert(
        "stream_options".into(),
        json!({"continuous_usage_stats": false}),
    );
    let b = build_body(&p, "m", "x", None).unwrap();
    assert_eq!(
        b["stream_options"],
        json!({"continuous_usage_stats": false, "include_usage": true})
    );
    // Completions streams get include_usage only; chat without the flag likewise.
    let mut c = plan(EndpointType::Completions);
    c.endpoint.per_chunk_usage = true;
    c.extra_inputs.clear();
    let b = build_body(&c, "m", "x", None).unwrap();
    assert_eq!(b["stream_options"], json!({"include_usage": true}));
    let mut q = plan(EndpointType::Chat);
    q.extra_inputs.clear();
    let b = build_body(&q, "m", "x", None).unwrap();
    assert_eq!(b["stream_options"], json!({"include_usage": true}));
}

#[test]
fn extra_inputs_override_in_place_and_keep_author_stream_options() {
    let mut p = plan(EndpointType::Completions);
    p.streaming = false;
    p.extra_inputs.clear();
    p.extra_inputs.insert("stream".into(), Value::Bool(true));
    p.extra_inputs.insert(
        "stream_options".into(),
        json!({"continuous_usage_stats": true}),
    );
    p.extra_inputs.insert("max_tokens".into(), Value::from(99));
    let b = build_body(&p, "m", "x", Some(5)).unwrap();
    assert_eq!(
        Value::Object(b.clone()).to_string(),
        r#"{"prompt":"x","model":"m","stream":true,"max_tokens":99,"stream_options":{"continuous_usage_stats":true,"include_usage":true}}"#
    );
    assert_eq!(max_output_tokens(EndpointType::Completions, &b), Some(99));
    // Streaming turned off by an extra input: no stream_options added.
    let mut p = plan(EndpointType::Chat);
    p.extra_inputs.insert("stream".into(), Value::Bool(false));
    let b = build_body(&p, "m", "x", None).unwrap();
    assert!(!b.contains_key("stream_options"));
}

#[test]
fn isl_joins_texts_with_a_space() {
    let tok = builtin();
    let body = json!({"messages": [
        {"role": "system", "content": "hello"},
        {"role": "user", "content": [{"type": "text", "text": "world"}]}
    ]});
    let b = body.as_object().unwrap();
    assert_eq!(input_texts(EndpointType::Chat, b), vec!["hello", "world"]);
    // "hello world" is two o200k tokens (ranks 24912 and 2375).
    assert_eq!(count_input_tokens(&tok, EndpointType::Chat, b), 2);
    let body = json!({"prompt": ["a", "b"]});
    assert_eq!(
        input_texts(EndpointType::Completions, body.as_object().unwrap()),
        vec!["a", "b"]
    );
}

#[test]
fn deterministic_for_a_seed_and_recorded_without_one() {
    let tok = builtin();
    let p = plan(EndpointType::Chat);
    let a = render_workload(&p, &tok, Corpus::shakespeare()).unwrap();
    let b = render_workload(&p, &tok, Corpus::shakespeare()).unwrap();
    assert_eq!(a.workload.sha256(), b.workload.sha256());
    let mut q = p.clone();
    q.random_seed = Some(2);
    let c = render_workload(&q, &tok, Corpus::shakespeare()).unwrap();
    assert_ne!(a.workload.sha256(), c.workload.sha256());
    q.random_seed = None;
    let d = render_workload(&q, &tok, Corpus::shakespeare()).unwrap();
    q.random_seed = Some(d.seed_used);
    let e = render_workload(&q, &tok, Corpus::shakespeare()).unwrap();
    assert_eq!(d.workload, e.workload);
}

#[test]
fn varying_lengths_follow_the_draws() {
    let tok = builtin();
    let mut p = plan(EndpointType::Chat);
    p.isl = LengthDist {
        mean: 50.0,
        stddev: 10.0,
    };
    p.osl = Some(LengthDist {
        mean: 20.0,
        stddev: 5.0,
    });
    p.num_dataset_entries = 20;
    let r = render_workload(&p, &tok, Corpus::shakespeare()).unwrap();
    let mut isl_rng = rng_for(1, PURPOSE_ISL);
    let mut osl_rng = rng_for(1, PURPOSE_OSL);
    for pl in &r.workload.payloads {
        let isl = sample_positive_normal_integer(&mut isl_rng, 50.0, 10.0);
        let osl = sample_positive_normal_integer(&mut osl_rng, 20.0, 5.0);
        assert_eq!(pl.input_tokens, Some(isl));
        assert_eq!(pl.requested_output_tokens, Some(osl));
    }
    let distinct: std::collections::HashSet<_> =
        r.workload.payloads.iter().map(|p| p.input_tokens).collect();
    assert!(distinct.len() > 3);
}

#[test]
fn plan_errors_name_the_field() {
    let tok = builtin();
    let mut p = plan(EndpointType::Chat);
    p.models.clear();
    let e = render_workload(&p, &tok, Corpus::shakespeare()).unwrap_err();
    assert!(e.to_string().starts_with("plan.models"), "{e}");
    let mut p = plan(EndpointType::Chat);
    p.isl.stddev = -1.0;
    let e = render_workload(&p, &tok, Corpus::shakespeare()).unwrap_err();
    assert!(e.to_string().starts_with("plan.isl: stddev"), "{e}");
}

fn body_of(p: &RunPlan, turn: &TurnInput) -> String {
    Value::Object(build_turn_body(p, "m", turn).unwrap()).to_string()
}

fn texts(ts: &[&str]) -> TurnInput {
    TurnInput {
        texts: ts.iter().map(|t| t.to_string()).collect(),
        ..Default::default()
    }
}

#[test]
fn chat_sends_several_texts_as_parts_of_one_message() {
    let mut p = plan(EndpointType::Chat);
    p.extra_inputs.clear();
    p.streaming = false;
    assert_eq!(
        body_of(&p, &texts(&["a", "", "b"])),
        r#"{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"model":"m","stream":false}"#
    );
}

#[test]
fn responses_body() {
    let mut p = plan(EndpointType::Responses);
    let turn = TurnInput {
        texts: vec!["hi".into()],
        system: Some("sys".into()),
        user_context: Some("ctx".into()),
        max_tokens: Some(7),
        ..Default::default()
    };
    assert_eq!(
        body_of(&p, &turn),
        r#"{"input":[{"type":"message","role":"user","content":"ctx"},{"role":"user","content":"hi","type":"message"}],"model":"m","stream":true,"instructions":"sys","max_output_tokens":7,"ignore_eos":true,"min_tokens":16}"#
    );
    // include_usage only with --use-server-token-count, and an author's value is kept.
    p.use_server_token_count = true;
    let b = build_turn_body(&p, "m", &texts(&["x", "y"])).unwrap();
    assert_eq!(b["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        b["input"][0]["content"],
        json!([{"type":"input_text","text":"x"},{"type":"input_text","text":"y"}])
    );
    p.extra_inputs
        .insert("stream_options".into(), json!({"include_usage": false}));
    let b = build_turn_body(&p, "m", &texts(&["x"])).unwrap();
    assert_eq!(b["stream_options"], json!({"include_usage": false}));
    assert_eq!(input_texts(EndpointType::Responses, &b), vec!["x"]);
}

#[test]
fn messages_body_defaults_max_tokens() {
    let mut p = plan(EndpointType::Messages);
    p.extra_inputs.clear();
    let turn = TurnInput {
        texts: vec!["hi".into()],
        system: Some("sys".into()),
        tools: Some(json!([{"name":"t","input_schema":{"type":"object"}}])),
        ..Default::default()
    };
    assert_eq!(
        body_of(&p, &turn),
        r#"{"messages":[{"role":"user","content":"hi"}],"model":"m","max_tokens":1024,"stream":true,"system":"sys","tools":[{"name":"t","input_schema":{"type":"object"}}]}"#
    );
    let b = build_turn_body(&p, "m", &turn).unwrap();
    assert_eq!(max_output_tokens(EndpointType::Messages, &b), Some(1024));
    // System first, then the messages, then the tool's name and schema.
    assert_eq!(
        input_texts(EndpointType::Messages, &b),
        vec!["sys", "hi", "t", r#"{"type":"object"}"#]
    );
}

#[test]
fn embeddings_and_rankings_bodies() {
    let mut p = plan(EndpointType::Embeddings);
    p.extra_inputs.clear();
    p.extra_inputs
        .insert("encoding_format".into(), Value::from("float"));
    // No stream key and no stream_options even when streaming was asked for.
    assert_eq!(
        body_of(&p, &texts(&["a", "b"])),
        r#"{"model":"m","input":["a","b"],"encoding_format":"float"}"#
    );
    // NIM embeddings with text inputs: the same body as OpenAI's (AIPerf's NIM endpoint only
    // differs when images are given).
    p.endpoint_type = EndpointType::NimEmbeddings;
    assert_eq!(
        body_of(&p, &texts(&["a", "", "b"])),
        r#"{"model":"m","input":["a","b"],"encoding_format":"float"}"#
    );
    p.endpoint_type = EndpointType::Embeddings;
    let turn = TurnInput {
        query: Some("q".into()),
        passages: vec!["p1".into(), "p2".into()],
        ..Default::default()
    };
    p.extra_inputs.clear();
    p.endpoint_type = EndpointType::NimRankings;
    assert_eq!(
        body_of(&p, &turn),
        r#"{"model":"m","query":{"text":"q"},"passages":[{"text":"p1"},{"text":"p2"}]}"#
    );
    p.endpoint_type = EndpointType::HfTeiRankings;
    assert_eq!(body_of(&p, &turn), r#"{"query":"q","texts":["p1","p2"]}"#);
    p.endpoint_type = EndpointType::CohereRankings;
    assert_eq!(
        body_of(&p, &turn),
        r#"{"model":"m","query":"q","documents":["p1","p2"]}"#
    );
    // Without a named query: the first text is the query, the rest are passages.
    assert_eq!(
        body_of(&p, &texts(&["q", "x"])),
        r#"{"model":"m","query":"q","documents":["x"]}"#
    );
    let e = build_turn_body(&p, "m", &TurnInput::default()).unwrap_err();
    assert!(e.to_string().starts_with("plan.query"), "{e}");
    assert_eq!(
        max_output_tokens(EndpointType::CohereRankings, &Map::new()),
        None
    );
}

#[test]
fn rankings_and_embeddings_input_texts() {
    let nim = json!({"model":"m","query":{"text":"q"},"passages":[{"text":"a"},{"text":"b"}]});
    let tei = json!({"query":"q","texts":["a","b"]});
    let cohere = json!({"model":"m","query":"q","documents":["a","b"]});
    for (e, b) in [
        (EndpointType::NimRankings, nim),
        (EndpointType::HfTeiRankings, tei),
        (EndpointType::CohereRankings, cohere),
    ] {
        assert_eq!(input_texts(e, b.as_object().unwrap()), vec!["q", "a", "b"]);
    }
    let emb = json!({"model":"m","input":["x y","z"]});
    let b = emb.as_object().unwrap();
    assert_eq!(input_texts(EndpointType::Embeddings, b), vec!["x y", "z"]);
    // "x y z" is three o200k tokens.
    assert_eq!(
        count_input_tokens(&builtin(), EndpointType::Embeddings, b),
        3
    );
    // Token-id inputs contribute no text.
    let ids = json!({"input":[1,2,3]});
    assert!(input_texts(EndpointType::Embeddings, ids.as_object().unwrap()).is_empty());
}

#[test]
fn tgi_body_puts_extra_inputs_in_parameters() {
    let p = plan(EndpointType::HuggingfaceGenerate);
    let mut extra = Map::new();
    extra.insert("details".into(), Value::Bool(true));
    let turn = TurnInput {
        texts: vec!["a".into(), "b".into()],
        max_tokens: Some(5),
        extra: Some(extra),
        ..Default::default()
    };
    let s = body_of(&p, &turn);
    assert_eq!(
        s,
        r#"{"inputs":"a b","parameters":{"max_new_tokens":5,"ignore_eos":true,"min_tokens":16},"details":true}"#
    );
    let b: Map<String, Value> = serde_json::from_str(&s).unwrap();
    assert_eq!(
        max_output_tokens(EndpointType::HuggingfaceGenerate, &b),
        Some(5)
    );
    assert_eq!(
        input_texts(EndpointType::HuggingfaceGenerate, &b),
        vec!["a b"]
    );
}

#[test]
fn template_bodies() {
    let mut p = plan(EndpointType::Template);
    p.endpoint.template = Some("nv-embedqa".into());
    assert_eq!(
        body_of(&p, &texts(&["a", "b<&>'"])),
        r#"{"text":["a","b<&>'"],"ignore_eos":true,"min_tokens":16}"#
    );
    p.extra_inputs.clear();
    p.endpoint.template = Some(
        r#"{"prompt": {{ text|tojson }}, "model": "{{ model }}", "n": {{ max_tokens }}, "s": {{ stream|tojson }}, "q": {{ query|tojson }}, "k": {{ passages|length }}}"#
            .into(),
    );
    let turn = TurnInput {
        texts: vec!["say \"hi\"".into()],
        max_tokens: Some(3),
        query: Some("qq".into()),
        passages: vec!["x".into(), "y".into()],
        ..Default::default()
    };
    assert_eq!(
        body_of(&p, &turn),
        r#"{"prompt":"say \"hi\"","model":"m","n":3,"s":true,"q":"qq","k":2}"#
    );
    p.endpoint.template = Some("{{ text }}".into());
    let e = build_turn_body(&p, "m", &texts(&["not json"])).unwrap_err();
    assert!(e.to_string().contains("valid JSON"), "{e}");
    p.endpoint.template = Some("{% if %}".into());
    let e = build_turn_body(&p, "m", &texts(&["x"])).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("plan.endpoint.template: template does not compile"),
        "{e}"
    );
    p.endpoint.template = None;
    assert!(build_turn_body(&p, "m", &texts(&["x"])).is_err());
}

#[test]
fn template_sources() {
    assert_eq!(load_template_source("nv-embedqa").unwrap(), "nv-embedqa");
    assert_eq!(load_template_source(r#"{"a": 1}"#).unwrap(), r#"{"a": 1}"#);
    let dir = tempfile::Builder::new()
        .prefix("ib-tmpl-")
        .tempdir()
        .unwrap();
    let f = dir.path().join("t.jinja");
    std::fs::write(&f, r#"{"x": {{ texts|tojson }}}"#).unwrap();
    assert_eq!(
        load_template_source(f.to_str().unwrap()).unwrap(),
        r#"{"x": {{ texts|tojson }}}"#
    );
}

#[test]
fn raw_needs_a_payload_and_sends_it_verbatim() {
    let p = plan(EndpointType::Raw);
    assert!(build_turn_body(&p, "m", &texts(&["x"])).is_err());
    let turn = TurnInput {
        payload: Some(json!({"z": 1, "a": [2]})),
        ..Default::default()
    };
    assert_eq!(body_of(&p, &turn), r#"{"z":1,"a":[2]}"#);
    let b: Map<String, Value> =
        serde_json::from_str(r#"{"max_tokens":4,"parameters":{"max_new_tokens":9}}"#).unwrap();
    assert_eq!(max_output_tokens(EndpointType::Raw, &b), Some(4));
    let b: Map<String, Value> =
        serde_json::from_str(r#"{"parameters":{"max_new_tokens":9}}"#).unwrap();
    assert_eq!(max_output_tokens(EndpointType::Template, &b), Some(9));
}

#[test]
fn inputs_json_groups_by_session_in_order() {
    let p = |id: &str, body: &str| Payload {
        conversation_id: id.into(),
        turn_index: 0,
        body: body.into(),
        input_tokens: None,
        requested_output_tokens: None,
        ..Default::default()
    };
    let w = Workload {
        payloads: vec![
            p("session_000001", r#"{"z":1,"a":2}"#),
            p("session_000000", r#"{"n":0}"#),
            p("session_000001", r#"{"n":3}"#),
        ],
    };
    assert_eq!(
        inputs_json(&w).to_string(),
        r#"{"data":[{"session_id":"session_000001","payloads":[{"z":1,"a":2},{"n":3}]},{"session_id":"session_000000","payloads":[{"n":0}]}]}"#
    );
}
