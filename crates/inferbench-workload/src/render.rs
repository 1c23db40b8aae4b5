//! Rendering the frozen workload: every request body, built before the run, and AIPerf's
//! `inputs.json` view of it.

use std::borrow::Cow;

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
    let mut body = Map::new();
    // Where `--extra-inputs` go: the top level, except for TGI's `parameters`.
    let mut extra_into_parameters = false;
    match endpoint {
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
                None => messages.push(user_message(&turn.texts, "text")),
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
                    let mut m = user_message(&turn.texts, "input_text");
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
                None => messages.push(user_message(&turn.texts, "text")),
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
        EndpointType::Chat | EndpointType::Completions => true,
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
    }
    Ok(body)
}

/// One user message: a single text as a plain string, otherwise content parts of
/// `part_type` (AIPerf sends a bare string for one text; some servers reject parts then).
fn user_message(texts: &[String], part_type: &str) -> Value {
    let texts = non_empty(texts);
    let content = match texts.as_slice() {
        [] => Value::from(""),
        [one] => Value::from(*one),
        many => Value::Array(
            many.iter()
                .map(|t| json!({"type": part_type, "text": t}))
                .collect(),
        ),
    };
    json!({"role": "user", "content": content})
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
    let empty: Vec<&str> = Vec::new();
    let ctx = minijinja::context! {
        texts => &texts,
        text => texts.first(),
        images => &empty,
        audios => &empty,
        videos => &empty,
        image => Option::<&str>::None,
        audio => Option::<&str>::None,
        video => Option::<&str>::None,
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

fn excerpt(s: &str) -> String {
    match s.char_indices().nth(100) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
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

/// The input texts of a body, in order, as AIPerf extracts them for ISL:
///
/// - a Responses `instructions` or Messages `system` first (a string, or text blocks);
/// - then a `messages` or `input` list of items (entries with a `role` or a `type`): each
///   item's `content` (a string, or the `text` of parts typed `text`, `input_text` or
///   `output_text`), replayed `tool_calls` (`function.name`, `function.arguments`),
///   Responses `function_call` (`name`, `arguments`) and `function_call_output` (`output`),
///   Anthropic `tool_use` (`name`, `input` as JSON) and `tool_result` blocks; then the
///   top-level `tools` (`name`, `description`, `parameters`/`input_schema` as JSON, at the
///   top of the tool or under `function`);
/// - otherwise the first flat shape found: `prompt` or `input` (a string or strings), a
///   rankings `query` (string or `{text}`) followed by `passages`/`documents`/`texts`
///   (strings or `{text}`), or TGI's `inputs`.
///
/// Token-id prompts (lists of integers) contribute nothing.
pub fn input_texts(endpoint: EndpointType, body: &Map<String, Value>) -> Vec<Cow<'_, str>> {
    let mut out: Vec<Cow<'_, str>> = Vec::new();
    let prefix_key = match endpoint {
        EndpointType::Responses => Some("instructions"),
        EndpointType::Messages => Some("system"),
        _ => None,
    };
    if let Some(key) = prefix_key {
        match body.get(key) {
            Some(Value::String(s)) if !s.is_empty() => out.push(Cow::Borrowed(s)),
            Some(Value::Array(parts)) => {
                for p in parts {
                    match p {
                        Value::String(s) if !s.is_empty() => out.push(Cow::Borrowed(s)),
                        Value::Object(_) => {
                            if let Some(t) = p.get("text").and_then(Value::as_str)
                                && !t.is_empty()
                            {
                                out.push(Cow::Borrowed(t));
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let mut found_items = false;
    for key in ["messages", "input"] {
        let Some(Value::Array(items)) = body.get(key) else {
            continue;
        };
        let is_items = items
            .iter()
            .any(|i| i.get("role").is_some() || i.get("type").is_some());
        if !is_items {
            continue;
        }
        found_items = true;
        for item in items.iter().filter(|i| i.is_object()) {
            walk_item(item, &mut out);
        }
    }
    if let Some(Value::Array(tools)) = body.get("tools") {
        for tool in tools {
            for source in [tool.get("function"), Some(tool)].into_iter().flatten() {
                push_strs(source, &["name", "description"], &mut out);
                for k in ["parameters", "input_schema"] {
                    if let Some(v @ Value::Object(_)) = source.get(k) {
                        out.push(Cow::Owned(v.to_string()));
                    }
                }
            }
        }
    }
    if found_items {
        return out;
    }
    for key in ["prompt", "input"] {
        match body.get(key) {
            Some(Value::String(s)) => {
                out.push(Cow::Borrowed(s));
                return out;
            }
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
                out.extend(items.iter().filter_map(Value::as_str).map(Cow::Borrowed));
                return out;
            }
            Some(Value::Array(items)) if !items.is_empty() => return out,
            _ => {}
        }
    }
    let query = match body.get("query") {
        Some(Value::Object(q)) => q.get("text").and_then(Value::as_str),
        Some(q) => q.as_str(),
        None => None,
    };
    let passages = ["passages", "documents", "texts"]
        .iter()
        .find_map(|k| body.get(*k)?.as_array());
    if let (Some(q), Some(ps)) = (query, passages) {
        out.push(Cow::Borrowed(q));
        for p in ps {
            if let Some(t) = p.as_str().or_else(|| p.get("text")?.as_str()) {
                out.push(Cow::Borrowed(t));
            }
        }
        return out;
    }
    if let Some(Value::String(s)) = body.get("inputs") {
        out.push(Cow::Borrowed(s));
    }
    out
}

fn walk_item<'a>(item: &'a Value, out: &mut Vec<Cow<'a, str>>) {
    match item.get("content") {
        Some(Value::String(s)) => out.push(Cow::Borrowed(s)),
        Some(Value::Array(parts)) => {
            for part in parts {
                match part.get("type").and_then(Value::as_str) {
                    Some("text" | "input_text" | "output_text") => {
                        if let Some(t) = part.get("text").and_then(Value::as_str) {
                            out.push(Cow::Borrowed(t));
                        }
                    }
                    Some("tool_use") => {
                        push_strs(part, &["name"], out);
                        if let Some(v @ Value::Object(_)) = part.get("input") {
                            out.push(Cow::Owned(v.to_string()));
                        }
                    }
                    Some("tool_result") => match part.get("content") {
                        Some(Value::String(s)) if !s.is_empty() => out.push(Cow::Borrowed(s)),
                        Some(Value::Array(subs)) => {
                            for sub in subs {
                                if sub.get("type").and_then(Value::as_str) == Some("text") {
                                    push_strs(sub, &["text"], out);
                                }
                            }
                        }
                        _ => {}
                    },
                    _ => {}
                }
            }
        }
        _ => {}
    }
    if let Some(Value::Array(calls)) = item.get("tool_calls") {
        for call in calls {
            if let Some(f) = call.get("function") {
                push_strs(f, &["name", "arguments"], out);
            }
        }
    }
    match item.get("type").and_then(Value::as_str) {
        Some("function_call") => push_strs(item, &["name", "arguments"], out),
        Some("function_call_output") => push_strs(item, &["output"], out),
        _ => {}
    }
}

/// Pushes each non-empty string field of `v` named in `keys`, in that order.
fn push_strs<'a>(v: &'a Value, keys: &[&str], out: &mut Vec<Cow<'a, str>>) {
    for k in keys {
        if let Some(s) = v.get(*k).and_then(Value::as_str)
            && !s.is_empty()
        {
            out.push(Cow::Borrowed(s));
        }
    }
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

/// The output limit the body asks for: chat `max_completion_tokens` else `max_tokens`;
/// completions and messages `max_tokens`; responses `max_output_tokens`; TGI
/// `parameters.max_new_tokens`; `template` and `raw` the first of those present; nothing for
/// embeddings and rankings.
pub fn max_output_tokens(endpoint: EndpointType, body: &Map<String, Value>) -> Option<u64> {
    let tgi = || body.get("parameters")?.get("max_new_tokens")?.as_u64();
    let keys: &[&str] = match endpoint {
        EndpointType::Chat => &["max_completion_tokens", "max_tokens"],
        EndpointType::Completions | EndpointType::Messages => &["max_tokens"],
        EndpointType::Responses => &["max_output_tokens"],
        EndpointType::HuggingfaceGenerate => return tgi(),
        EndpointType::Template | EndpointType::Raw => {
            return ["max_completion_tokens", "max_tokens", "max_output_tokens"]
                .iter()
                .find_map(|k| body.get(*k)?.as_u64())
                .or_else(tgi);
        }
        EndpointType::Embeddings
        | EndpointType::NimRankings
        | EndpointType::HfTeiRankings
        | EndpointType::CohereRankings => &[],
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
        let dir = std::env::temp_dir().join(format!("ib-tmpl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.jinja");
        std::fs::write(&f, r#"{"x": {{ texts|tojson }}}"#).unwrap();
        assert_eq!(
            load_template_source(f.to_str().unwrap()).unwrap(),
            r#"{"x": {{ texts|tojson }}}"#
        );
        std::fs::remove_dir_all(&dir).unwrap();
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
    fn input_texts_walk_replayed_tools_and_responses_items() {
        let b = json!({
            "instructions": [{"type":"input_text","text":"sys"}],
            "input": [
                {"type":"message","role":"user","content":[{"type":"input_text","text":"q"},{"type":"input_image","image_url":"u"}]},
                {"type":"function_call","name":"f","arguments":"{}"},
                {"type":"function_call_output","output":"42"},
                {"role":"assistant","content":[{"type":"output_text","text":"a"}]}
            ],
            "tools": [{"type":"function","name":"f","description":"d","parameters":{"k":1}}]
        });
        assert_eq!(
            input_texts(EndpointType::Responses, b.as_object().unwrap()),
            vec!["sys", "q", "f", "{}", "42", "a", "f", "d", r#"{"k":1}"#]
        );
        let chat = json!({"messages":[
            {"role":"assistant","content":null,"tool_calls":[{"function":{"name":"g","arguments":"[1]"}}]},
            {"role":"tool","content":"ok"}
        ],"tools":[{"type":"function","function":{"name":"g","parameters":{}}}]});
        assert_eq!(
            input_texts(EndpointType::Chat, chat.as_object().unwrap()),
            vec!["g", "[1]", "ok", "g", "{}"]
        );
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
