//! Rendering the frozen workload: every request body, built before the run, and AIPerf's
//! `inputs.json` view of it.

use inferbench_core::plan::{EndpointType, LengthDist, RunPlan};
use inferbench_core::workload::{Payload, Workload};
use serde_json::{Map, Value, json};

pub use inferbench_protocol::body::{input_texts, max_output_tokens};
use inferbench_protocol::text::excerpt;

use crate::corpus::Corpus;
use crate::error::WorkloadError;
use crate::media::MediaRef;
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
    if plan.models.is_empty() {
        return Err(WorkloadError::Plan {
            field: "models",
            message: "no model given".into(),
        });
    }
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
    let mut models = ModelPicker::new(plan, seed);

    let mut payloads = Vec::with_capacity(plan.num_dataset_entries);
    for i in 0..plan.num_dataset_entries {
        let isl = sample_positive_normal_integer(&mut isl_rng, plan.isl.mean, plan.isl.stddev);
        let osl = plan
            .osl
            .map(|d| sample_positive_normal_integer(&mut osl_rng, d.mean, d.stddev));
        let prompt = prompts.prompt(isl as usize)?;
        let body = build_body(plan, models.next(), &prompt, osl)?;
        let input_tokens = count_input_tokens(tok, plan.endpoint_type, &body);
        let requested_output_tokens = max_output_tokens(plan.endpoint_type, &body);
        payloads.push(Payload {
            conversation_id: session_id(i),
            turn_index: 0,
            body: Value::Object(body).to_string(),
            input_tokens: plan.endpoint_type.tokenizes_input().then_some(input_tokens),
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

/// The generator purpose of `--model-selection-strategy random|weighted` (docs/routing.md).
pub const PURPOSE_MODEL_SELECTION: &str = "model-selection";

/// The model of each turn, in workload order, under the plan's strategy: chosen when the
/// workload is frozen, so the bodies (and `workload_sha256`) carry it. With one model it
/// never draws.
pub(crate) struct ModelPicker<'a> {
    selector: inferbench_core::routing_plan::ModelSelector<'a>,
    rng: rand_chacha::ChaCha8Rng,
}

impl<'a> ModelPicker<'a> {
    pub(crate) fn new(plan: &'a RunPlan, seed: u64) -> Self {
        let r = &plan.routing;
        ModelPicker {
            selector: inferbench_core::routing_plan::ModelSelector::new(
                &plan.models,
                r.model_strategy,
                &r.model_weights,
            ),
            rng: rng_for(seed, PURPOSE_MODEL_SELECTION),
        }
    }

    pub(crate) fn next(&mut self) -> &'a str {
        let rng = &mut self.rng;
        let i = self.selector.pick(|| rand::Rng::random::<f64>(&mut *rng));
        self.selector.model(i)
    }
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
    /// The user's texts, in order (a synthetic prompt, a dataset's `text` or `texts`). One
    /// text is sent as a plain string, several as content parts of one message.
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
    /// The rankings query (a dataset text named `query` or `queries`). Without it the first
    /// of `texts` is the query.
    pub query: Option<String>,
    /// The passages to rank (dataset texts named `passages`), after any `texts` left over.
    pub passages: Vec<String>,
    /// The message's role on chat-shaped endpoints (a dataset row's `role`; None: user).
    pub role: Option<String>,
    /// Images (URLs or `data:` URLs), audio clips (`"<format>,<base64>"`) and videos, sent
    /// after the texts on the endpoints that take them (`media::check_media`).
    pub images: Vec<MediaRef>,
    pub audios: Vec<MediaRef>,
    pub videos: Vec<MediaRef>,
}

/// Anthropic requires `max_tokens`; AIPerf 0.13 sends this when the turn sets none.
pub const MESSAGES_DEFAULT_MAX_TOKENS: u64 = 1024;

/// AIPerf's named templates for the `template` endpoint.
pub const NAMED_TEMPLATES: &[(&str, &str)] = &[("nv-embedqa", r#"{"text": {{ texts|tojson }}}"#)];

/// The `--endpoint-template`-style argument as the plan should store it: a named template
/// stays a name, a path to an existing file becomes the file's text, anything else is the
/// template text itself (AIPerf's order).
pub fn load_template_source(arg: &str) -> Result<String, WorkloadError> {
    if NAMED_TEMPLATES.iter().any(|(n, _)| *n == arg) {
        return Ok(arg.to_string());
    }
    let path = std::path::Path::new(arg);
    // Inline templates are JSON-ish text; only something that names a file is read.
    if !arg.contains('{') && path.is_file() {
        return std::fs::read_to_string(path).map_err(|e| WorkloadError::Plan {
            field: "endpoint.template",
            message: format!("cannot read template file {arg}: {e}"),
        });
    }
    Ok(arg.to_string())
}

/// The body as AIPerf builds it for `plan.endpoint_type` (see `docs/endpoints.md`): the base
/// payload, then `--extra-inputs` merged at the top level (later wins; a replaced key keeps its
/// place; for `huggingface_generate` they go into `parameters`), then the turn's `extra`. Chat
/// and completions bodies that stream get `stream_options.include_usage = true` (keeping the
/// author's other `stream_options` keys); Responses bodies only with
/// `--use-server-token-count`. A verbatim payload is returned unchanged.
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
    let endpoint = plan.endpoint_type;
    media::check_media(endpoint, turn)?;
    media::check_reserved(endpoint, plan, turn)?;
    let mut body = Map::new();
    // Where `--extra-inputs` go: the top level, except for TGI's `parameters`.
    let mut extra_into_parameters = false;
    match endpoint {
        EndpointType::Chat | EndpointType::ChatEmbeddings => {
            let mut messages = Vec::new();
            if let Some(sys) = &turn.system {
                messages.push(json!({"role": "system", "content": sys}));
            }
            if let Some(ctx) = &turn.user_context {
                messages.push(json!({"role": "user", "content": ctx}));
            }
            match &turn.messages {
                Some(ms) => messages.extend(ms.iter().cloned()),
                None => messages.push(turn_message(endpoint, turn, "text")?),
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
        EndpointType::Responses => {
            let mut input = Vec::new();
            if let Some(ctx) = &turn.user_context {
                input.push(json!({"type": "message", "role": "user", "content": ctx}));
            }
            match &turn.messages {
                Some(ms) => input.extend(ms.iter().cloned()),
                None => {
                    let mut m = turn_message(endpoint, turn, "input_text")?;
                    if let Value::Object(o) = &mut m {
                        o.insert("type".into(), Value::from("message"));
                    }
                    input.push(m);
                }
            }
            body.insert("input".into(), Value::Array(input));
            body.insert("model".into(), Value::from(model));
            body.insert("stream".into(), Value::Bool(plan.streaming));
            if let Some(sys) = &turn.system {
                body.insert("instructions".into(), Value::from(sys.clone()));
            }
            if let Some(osl) = turn.max_tokens {
                body.insert("max_output_tokens".into(), Value::from(osl));
            }
            if let Some(tools) = &turn.tools {
                body.insert("tools".into(), tools.clone());
            }
        }
        EndpointType::Messages => {
            let mut messages = Vec::new();
            if let Some(ctx) = &turn.user_context {
                messages.push(json!({"role": "user", "content": ctx}));
            }
            match &turn.messages {
                Some(ms) => messages.extend(ms.iter().cloned()),
                None => messages.push(turn_message(endpoint, turn, "text")?),
            }
            body.insert("messages".into(), Value::Array(messages));
            body.insert("model".into(), Value::from(model));
            body.insert(
                "max_tokens".into(),
                Value::from(turn.max_tokens.unwrap_or(MESSAGES_DEFAULT_MAX_TOKENS)),
            );
            body.insert("stream".into(), Value::Bool(plan.streaming));
            if let Some(sys) = &turn.system {
                body.insert("system".into(), Value::from(sys.clone()));
            }
            if let Some(tools) = &turn.tools {
                body.insert("tools".into(), tools.clone());
            }
        }
        EndpointType::Embeddings => {
            body.insert("model".into(), Value::from(model));
            body.insert("input".into(), Value::from(non_empty(&turn.texts)));
        }
        // NIM's API is a superset of OpenAI's: for text inputs its body is the same; with
        // images, text i and image i go as one input.
        EndpointType::NimEmbeddings => {
            body.insert("model".into(), Value::from(model));
            body.insert(
                "input".into(),
                Value::from(media::nim_inputs(&non_empty(&turn.texts), turn)?),
            );
        }
        EndpointType::ImageRetrieval => body = media::image_retrieval(turn)?,
        EndpointType::AudioTranscription => body = media::audio_transcription(model, turn)?,
        EndpointType::ImageGeneration => body = media::image_generation(plan, model, turn)?,
        EndpointType::NimRankings | EndpointType::HfTeiRankings | EndpointType::CohereRankings => {
            let (query, passages) = rankings_inputs(turn)?;
            match endpoint {
                EndpointType::NimRankings => {
                    body.insert("model".into(), Value::from(model));
                    body.insert("query".into(), json!({ "text": query }));
                    let ps: Vec<Value> = passages.iter().map(|p| json!({ "text": p })).collect();
                    body.insert("passages".into(), Value::Array(ps));
                }
                EndpointType::HfTeiRankings => {
                    body.insert("query".into(), Value::from(query));
                    body.insert("texts".into(), Value::from(passages));
                }
                _ => {
                    body.insert("model".into(), Value::from(model));
                    body.insert("query".into(), Value::from(query));
                    body.insert("documents".into(), Value::from(passages));
                }
            }
        }
        EndpointType::HuggingfaceGenerate => {
            body.insert(
                "inputs".into(),
                Value::from(non_empty(&turn.texts).join(" ")),
            );
            let mut parameters = Map::new();
            if let Some(osl) = turn.max_tokens {
                parameters.insert("max_new_tokens".into(), Value::from(osl));
            }
            body.insert("parameters".into(), Value::Object(parameters));
            extra_into_parameters = true;
        }
        EndpointType::Template => {
            body = render_template(plan, model, turn)?;
        }
        EndpointType::Raw => {
            return Err(WorkloadError::Plan {
                field: "payload",
                message: "the raw endpoint sends verbatim payloads; this turn has none".into(),
            });
        }
    }
    let extra_target = if extra_into_parameters {
        match body.get_mut("parameters") {
            Some(Value::Object(p)) => p,
            // Built just above as an object.
            _ => &mut body,
        }
    } else {
        &mut body
    };
    for (k, v) in &plan.extra_inputs {
        extra_target.insert(k.clone(), v.clone());
    }
    if let Some(extra) = &turn.extra {
        for (k, v) in extra {
            body.insert(k.clone(), v.clone());
        }
    }
    let force_usage = match endpoint {
        EndpointType::Chat | EndpointType::ChatEmbeddings | EndpointType::Completions => true,
        EndpointType::Responses => plan.use_server_token_count,
        _ => false,
    };
    if force_usage && body.get("stream") == Some(&Value::Bool(true)) {
        match body.get_mut("stream_options") {
            Some(Value::Object(opts)) => {
                // Chat/completions force it; Responses only fill it in when absent.
                if endpoint != EndpointType::Responses || !opts.contains_key("include_usage") {
                    opts.insert("include_usage".into(), Value::Bool(true));
                }
            }
            _ => {
                body.insert("stream_options".into(), json!({"include_usage": true}));
            }
        }
        // `--per-chunk-usage` (chat only, as AIPerf): cumulative usage on every chunk, unless
        // the author already set `continuous_usage_stats`.
        if matches!(endpoint, EndpointType::Chat | EndpointType::ChatEmbeddings)
            && plan.endpoint.per_chunk_usage
            && let Some(Value::Object(opts)) = body.get_mut("stream_options")
        {
            opts.entry("continuous_usage_stats")
                .or_insert(Value::Bool(true));
        }
    }
    Ok(body)
}

/// The turn's message: a single text as a plain string, otherwise content parts of
/// `part_type` (AIPerf sends a bare string for one text; some servers reject parts then),
/// followed by the turn's media parts (`media::content`). The role is the turn's (default
/// user).
fn turn_message(
    endpoint: EndpointType,
    turn: &TurnInput,
    part_type: &str,
) -> Result<Value, WorkloadError> {
    let texts: Vec<String> = non_empty(&turn.texts)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let content = media::content(endpoint, &texts, turn, part_type)?;
    let role = turn.role.as_deref().unwrap_or("user");
    Ok(json!({"role": role, "content": content}))
}

/// The non-empty texts (AIPerf skips empty contents everywhere but a lone single text).
fn non_empty(texts: &[String]) -> Vec<&str> {
    if texts.len() == 1 {
        return vec![texts[0].as_str()];
    }
    texts
        .iter()
        .filter(|t| !t.is_empty())
        .map(String::as_str)
        .collect()
}

/// The query and passages of a rankings turn: the explicit ones, or the first text as the
/// query and the remaining texts as passages.
fn rankings_inputs(turn: &TurnInput) -> Result<(String, Vec<String>), WorkloadError> {
    let mut passages = Vec::new();
    let query = match &turn.query {
        Some(q) => {
            passages.extend(turn.texts.iter().cloned());
            q.clone()
        }
        None => {
            let (first, rest) = turn.texts.split_first().ok_or(WorkloadError::Plan {
                field: "query",
                message: "a rankings request needs a query (a text named query, or a first text)"
                    .into(),
            })?;
            passages.extend(rest.iter().cloned());
            first.clone()
        }
    };
    passages.extend(turn.passages.iter().cloned());
    Ok((query, passages))
}

/// Renders the `template` endpoint's body: AIPerf's template variables, a minijinja
/// template (Jinja2 syntax), and the result parsed as a JSON object.
fn render_template(
    plan: &RunPlan,
    model: &str,
    turn: &TurnInput,
) -> Result<Map<String, Value>, WorkloadError> {
    let err = |message: String| WorkloadError::Plan {
        field: "endpoint.template",
        message,
    };
    let source = plan
        .endpoint
        .template
        .as_deref()
        .ok_or_else(|| err("the template endpoint needs a template".into()))?;
    let source = NAMED_TEMPLATES
        .iter()
        .find(|(n, _)| *n == source)
        .map_or(source, |(_, t)| t);
    let mut env = minijinja::Environment::new();
    // AIPerf's Jinja2 environment HTML-escapes plain `{{ x }}`; escaping has no place in a
    // JSON body, so none here (use `|tojson` for strings, which both render alike).
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    let tmpl = env
        .template_from_str(source)
        .map_err(|e| err(format!("template does not compile: {e}")))?;
    let texts = non_empty(&turn.texts);
    let (query, passages): (Option<&str>, Vec<&str>) = match &turn.query {
        Some(q) => (
            Some(q.as_str()),
            turn.passages.iter().map(String::as_str).collect(),
        ),
        None => (None, turn.passages.iter().map(String::as_str).collect()),
    };
    let queries: Vec<&str> = query.into_iter().collect();
    let contents =
        |m: &[MediaRef]| -> Vec<String> { m.iter().map(|m| m.content.to_string()).collect() };
    let (images, audios, videos) = (
        contents(&turn.images),
        contents(&turn.audios),
        contents(&turn.videos),
    );
    let ctx = minijinja::context! {
        texts => &texts,
        text => texts.first(),
        images => &images,
        audios => &audios,
        videos => &videos,
        image => images.first(),
        audio => audios.first(),
        video => videos.first(),
        queries => &queries,
        query => query,
        passages => &passages,
        passage => passages.first(),
        model => model,
        max_tokens => turn.max_tokens,
        stream => plan.streaming,
    };
    let rendered = tmpl
        .render(ctx)
        .map_err(|e| err(format!("template does not render: {e}")))?;
    match serde_json::from_str::<Value>(&rendered) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(err(format!(
            "template rendered JSON that is not an object: {}",
            excerpt(&rendered)
        ))),
        Err(e) => Err(err(format!(
            "template did not render valid JSON ({e}): {}",
            excerpt(&rendered)
        ))),
    }
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

/// Client-side ISL as AIPerf counts it: the input texts joined with one space, encoded
/// without special tokens; with `--apply-chat-template`, a chat-shaped body through the
/// model's template instead (`chat_template::count_input`).
pub fn count_input_tokens(
    tok: &Tokenizer,
    endpoint: EndpointType,
    body: &Map<String, Value>,
) -> u64 {
    if let Some(t) = tok.chat_template()
        && let Some(n) = crate::chat_template::count_input(tok, t, body)
    {
        return n;
    }
    tok.count(&input_texts(endpoint, body).join(" ")) as u64
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

mod media;

#[cfg(test)]
mod media_tests;
#[cfg(test)]
pub(crate) mod tests;
