//! Rendering the frozen workload: every request body, built before the run, and AIPerf's
//! `inputs.json` view of it.

use inferbench_core::plan::{EndpointType, LengthDist, RunPlan};
use inferbench_core::workload::{Payload, Workload};
use serde_json::{Map, Value, json};

use crate::corpus::Corpus;
use crate::error::WorkloadError;
use crate::synthetic::{
    PURPOSE_ISL, PURPOSE_OSL, PromptGenerator, resolve_seed, rng_for,
    sample_positive_normal_integer,
};
use crate::tokenizer::Tokenizer;

/// The workload plus what the manifest needs to reproduce it.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedWorkload {
    pub workload: Workload,
    /// The seed actually used (the plan's, or one drawn from OS entropy).
    pub seed_used: u64,
    pub corpus_sha256: String,
}

/// AIPerf's conversation id of dataset entry `i`.
pub fn session_id(i: usize) -> String {
    format!("session_{i:06}")
}

/// `plan.num_dataset_entries` single-turn payloads, one per conversation `session_NNNNNN`.
/// For each entry the ISL is drawn (`dataset.isl`), then the OSL (`dataset.osl`), then the
/// prompt offset (`dataset`).
pub fn render_workload(
    plan: &RunPlan,
    tok: &Tokenizer,
    corpus: &Corpus,
) -> Result<RenderedWorkload, WorkloadError> {
    let model = plan.models.first().ok_or(WorkloadError::Plan {
        field: "models",
        message: "no model given".into(),
    })?;
    if plan.num_dataset_entries == 0 {
        return Err(WorkloadError::Plan {
            field: "num_dataset_entries",
            message: "must be at least 1".into(),
        });
    }
    check_dist("isl", &plan.isl)?;
    if let Some(osl) = &plan.osl {
        check_dist("osl", osl)?;
    }

    let seed = resolve_seed(plan.random_seed);
    let mut isl_rng = rng_for(seed, PURPOSE_ISL);
    let mut osl_rng = rng_for(seed, PURPOSE_OSL);
    let mut prompts = PromptGenerator::new(tok, corpus, seed)?;

    let mut payloads = Vec::with_capacity(plan.num_dataset_entries);
    for i in 0..plan.num_dataset_entries {
        let isl = sample_positive_normal_integer(&mut isl_rng, plan.isl.mean, plan.isl.stddev);
        let osl = plan
            .osl
            .map(|d| sample_positive_normal_integer(&mut osl_rng, d.mean, d.stddev));
        let prompt = prompts.prompt(isl as usize)?;
        let body = build_body(plan, model, &prompt, osl)?;
        let input_tokens = count_input_tokens(tok, plan.endpoint_type, &body);
        let requested_output_tokens = max_output_tokens(plan.endpoint_type, &body);
        payloads.push(Payload {
            conversation_id: session_id(i),
            turn_index: 0,
            body: Value::Object(body).to_string(),
            input_tokens: Some(input_tokens),
            requested_output_tokens,
            ..Default::default()
        });
    }
    Ok(RenderedWorkload {
        workload: Workload { payloads },
        seed_used: seed,
        corpus_sha256: corpus.sha256().to_string(),
    })
}

fn check_dist(field: &'static str, d: &LengthDist) -> Result<(), WorkloadError> {
    if !(d.mean.is_finite() && d.mean >= 0.0) {
        return Err(WorkloadError::Plan {
            field,
            message: format!("mean must be a finite number >= 0, got {}", d.mean),
        });
    }
    if !(d.stddev.is_finite() && d.stddev >= 0.0) {
        return Err(WorkloadError::Plan {
            field,
            message: format!("stddev must be a finite number >= 0, got {}", d.stddev),
        });
    }
    Ok(())
}

/// What one turn sends, before it becomes a body for the run's endpoint. Datasets (synthetic
/// or loaded from a file) produce these; [`build_turn_body`] turns one into a body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnInput {
    /// The user's texts, in order (a synthetic prompt, a dataset's `text` or `texts`).
    pub texts: Vec<String>,
    /// Explicit chat messages (a trace's `messages`), sent instead of `texts` where the
    /// endpoint takes messages.
    pub messages: Option<Vec<Value>>,
    /// A system prompt (`--shared-system-prompt-length`, `--system-prompt`).
    pub system: Option<String>,
    /// A per-session context message sent before the user's texts
    /// (`--user-context-prompt-length`).
    pub user_context: Option<String>,
    /// Tool definitions sent with the request (a trace's `tools`).
    pub tools: Option<Value>,
    /// Requested output tokens (`--osl`, a dataset's `output_length`).
    pub max_tokens: Option<u64>,
    /// The dataset's per-turn `extra`, merged after `--extra-inputs` (later wins).
    pub extra: Option<Map<String, Value>>,
    /// A verbatim body (`raw_payload`, `inputs_json`, a trace's `payload`): sent as is, with
    /// nothing merged into it.
    pub payload: Option<Value>,
}

/// The body as AIPerf builds it: the base payload, then `--extra-inputs` merged at the top
/// level (later wins; a replaced key keeps its place), then the turn's `extra`, then, if the
/// result streams, `stream_options.include_usage = true`, keeping the author's other
/// `stream_options` keys. A verbatim payload is returned unchanged.
pub fn build_turn_body(
    plan: &RunPlan,
    model: &str,
    turn: &TurnInput,
) -> Result<Map<String, Value>, WorkloadError> {
    if let Some(p) = &turn.payload {
        return match p {
            Value::Object(m) => Ok(m.clone()),
            _ => Err(WorkloadError::Plan {
                field: "payload",
                message: "a verbatim payload must be a JSON object".into(),
            }),
        };
    }
    let mut body = Map::new();
    match plan.endpoint_type {
        EndpointType::Chat => {
            let mut messages = Vec::new();
            if let Some(sys) = &turn.system {
                messages.push(json!({"role": "system", "content": sys}));
            }
            if let Some(ctx) = &turn.user_context {
                messages.push(json!({"role": "user", "content": ctx}));
            }
            match &turn.messages {
                Some(ms) => messages.extend(ms.iter().cloned()),
                None => {
                    for t in &turn.texts {
                        messages.push(json!({"role": "user", "content": t}));
                    }
                }
            }
            body.insert("messages".into(), Value::Array(messages));
            body.insert("model".into(), Value::from(model));
            body.insert("stream".into(), Value::Bool(plan.streaming));
            if let Some(tools) = &turn.tools {
                body.insert("tools".into(), tools.clone());
            }
            if let Some(osl) = turn.max_tokens {
                let key = if plan.use_legacy_max_tokens {
                    "max_tokens"
                } else {
                    "max_completion_tokens"
                };
                body.insert(key.into(), Value::from(osl));
            }
        }
        EndpointType::Completions => {
            let prompt = if turn.texts.len() == 1 {
                Value::from(turn.texts[0].clone())
            } else {
                Value::from(turn.texts.clone())
            };
            body.insert("prompt".into(), prompt);
            body.insert("model".into(), Value::from(model));
            body.insert("stream".into(), Value::Bool(plan.streaming));
            if let Some(osl) = turn.max_tokens {
                body.insert("max_tokens".into(), Value::from(osl));
            }
        }
        other => {
            return Err(WorkloadError::Plan {
                field: "endpoint_type",
                message: format!("no request builder for endpoint type {}", other.as_str()),
            });
        }
    }
    for (k, v) in &plan.extra_inputs {
        body.insert(k.clone(), v.clone());
    }
    if let Some(extra) = &turn.extra {
        for (k, v) in extra {
            body.insert(k.clone(), v.clone());
        }
    }
    if body.get("stream") == Some(&Value::Bool(true)) {
        match body.get_mut("stream_options") {
            Some(Value::Object(opts)) => {
                opts.insert("include_usage".into(), Value::Bool(true));
            }
            _ => {
                body.insert("stream_options".into(), json!({"include_usage": true}));
            }
        }
    }
    Ok(body)
}

/// The body of a single-text turn (a synthetic prompt): see [`build_turn_body`].
pub fn build_body(
    plan: &RunPlan,
    model: &str,
    prompt: &str,
    osl: Option<u64>,
) -> Result<Map<String, Value>, WorkloadError> {
    build_turn_body(
        plan,
        model,
        &TurnInput {
            texts: vec![prompt.to_string()],
            max_tokens: osl,
            ..Default::default()
        },
    )
}

/// The input texts of a body, in order: chat message contents (strings, or the `text` of
/// content parts), or the completions `prompt` (a string or a list of strings).
pub fn input_texts(endpoint: EndpointType, body: &Map<String, Value>) -> Vec<&str> {
    let mut out = Vec::new();
    match endpoint {
        EndpointType::Chat => {
            for m in body
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match m.get("content") {
                    Some(Value::String(s)) => out.push(s.as_str()),
                    Some(Value::Array(parts)) => {
                        out.extend(parts.iter().filter_map(|p| p.get("text")?.as_str()))
                    }
                    _ => {}
                }
            }
        }
        EndpointType::Completions => match body.get("prompt") {
            Some(Value::String(s)) => out.push(s.as_str()),
            Some(Value::Array(items)) => out.extend(items.iter().filter_map(Value::as_str)),
            _ => {}
        },
        _ => {}
    }
    out
}

/// Client-side ISL as AIPerf counts it: the input texts joined with one space, encoded
/// without special tokens.
pub fn count_input_tokens(
    tok: &Tokenizer,
    endpoint: EndpointType,
    body: &Map<String, Value>,
) -> u64 {
    tok.count(&input_texts(endpoint, body).join(" ")) as u64
}

/// The output limit the body asks for: `max_completion_tokens`, else `max_tokens` (chat), or
/// `max_tokens` (completions).
pub fn max_output_tokens(endpoint: EndpointType, body: &Map<String, Value>) -> Option<u64> {
    let keys: &[&str] = match endpoint {
        EndpointType::Chat => &["max_completion_tokens", "max_tokens"],
        EndpointType::Completions => &["max_tokens"],
        _ => &[],
    };
    keys.iter().find_map(|k| body.get(*k)?.as_u64())
}

/// AIPerf's `inputs.json`: `{"data":[{"session_id":..,"payloads":[body, ..]}, ..]}`, one entry
/// per conversation in order of first appearance, its payloads in workload order.
pub fn inputs_json(workload: &Workload) -> Value {
    let mut sessions: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for p in &workload.payloads {
        // Bodies are our own serialized JSON; a body that is not JSON is kept as a string.
        let body = serde_json::from_str(&p.body).unwrap_or_else(|_| Value::from(p.body.clone()));
        let i = *index.entry(p.conversation_id.as_str()).or_insert_with(|| {
            sessions.push((p.conversation_id.as_str(), Vec::new()));
            sessions.len() - 1
        });
        sessions[i].1.push(body);
    }
    let data: Vec<Value> = sessions
        .into_iter()
        .map(|(id, payloads)| json!({"session_id": id, "payloads": payloads}))
        .collect();
    json!({ "data": data })
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::plan::{
        ArtifactPlan, ExportLevel, LoadPlan, Target, TokenizerSpec, UiKind,
    };

    fn plan(endpoint: EndpointType) -> RunPlan {
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
            },
            ui: UiKind::None,
            cli_command: "inferbench profile".into(),
            goodput: None,
            confidence_level: 0.95,
            dataset: Default::default(),
            endpoint: Default::default(),
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
}
