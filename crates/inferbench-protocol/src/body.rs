//! What a request body says, read back from its JSON: the input texts AIPerf counts for ISL,
//! and the output limit it asks for. Used when the workload is frozen and when an imported
//! run is re-read.

use std::borrow::Cow;

use inferbench_core::plan::EndpointType;
use serde_json::{Map, Value};

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

/// The output limit the body asks for: chat `max_completion_tokens` else `max_tokens`;
/// completions and messages `max_tokens`; responses `max_output_tokens`; TGI
/// `parameters.max_new_tokens`; `template` and `raw` the first of those present; nothing for
/// embeddings and rankings.
pub fn max_output_tokens(endpoint: EndpointType, body: &Map<String, Value>) -> Option<u64> {
    let tgi = || body.get("parameters")?.get("max_new_tokens")?.as_u64();
    let keys: &[&str] = match endpoint {
        EndpointType::Chat | EndpointType::ChatEmbeddings => {
            &["max_completion_tokens", "max_tokens"]
        }
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
        | EndpointType::NimEmbeddings
        | EndpointType::ImageRetrieval
        | EndpointType::AudioTranscription
        | EndpointType::ImageGeneration
        | EndpointType::NimRankings
        | EndpointType::HfTeiRankings
        | EndpointType::CohereRankings => &[],
    };
    keys.iter().find_map(|k| body.get(*k)?.as_u64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn max_output_tokens_reads_the_endpoints_field() {
        let b = |s: &str| serde_json::from_str::<Map<String, Value>>(s).unwrap();
        let chat = b(r#"{"max_tokens":5,"max_completion_tokens":7}"#);
        assert_eq!(max_output_tokens(EndpointType::Chat, &chat), Some(7));
        assert_eq!(max_output_tokens(EndpointType::Completions, &chat), Some(5));
        let resp = b(r#"{"max_tokens":5,"max_output_tokens":3}"#);
        assert_eq!(max_output_tokens(EndpointType::Responses, &resp), Some(3));
        let tgi = b(r#"{"parameters":{"max_new_tokens":9}}"#);
        assert_eq!(
            max_output_tokens(EndpointType::HuggingfaceGenerate, &tgi),
            Some(9)
        );
        assert_eq!(max_output_tokens(EndpointType::Embeddings, &chat), None);
    }
}
