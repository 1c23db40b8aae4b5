//! Adapter checks (`inferbench inspect`): one record read event by event, with the marks a
//! user needs to trust an endpoint before generating load on it (which event is the first
//! token, the first output token, the last content), client token counts next to the
//! server's usage, and warnings about the response shapes that make tools disagree.

use inferbench_core::record::{EventKind, Record};
use serde::Serialize;
use serde_json::Value;

/// One event of the response, as `inspect` shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EventRow {
    pub index: usize,
    /// Arrival time from the request start, in ms.
    pub t_ms: f64,
    pub frame: u32,
    pub kind: &'static str,
    pub content: Option<String>,
    pub reasoning: Option<String>,
    pub tool: Option<String>,
    pub usage: Option<Value>,
    /// Client tokens of this event's output text (content + tool) and of its reasoning.
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
    /// `first token`, `first output token`, `last content`.
    pub marks: Vec<&'static str>,
    /// The raw payload, when it was kept.
    pub raw: Option<String>,
}

/// Token counts from the server's `usage` (the last non-empty one).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ServerUsage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inspection {
    pub rows: Vec<EventRow>,
    pub client_input_tokens: Option<u64>,
    pub client_output_tokens: u64,
    pub client_reasoning_tokens: u64,
    pub server: Option<ServerUsage>,
    pub requested_output_tokens: Option<u64>,
    /// Things a user must see before trusting a run or a crosswalk.
    pub warnings: Vec<String>,
    /// Neutral observations (e.g. reasoning arrived in a separate field).
    pub notes: Vec<String>,
}

/// Fields of a chat delta/message that the decoders read or that carry no text; any other
/// field holding a string may be reasoning under a name no tool reads.
const KNOWN_CHAT_FIELDS: &[&str] = &[
    "role",
    "content",
    "reasoning_content",
    "reasoning",
    "tool_calls",
    "function_call",
    "refusal",
    "audio",
    "annotations",
    "name",
];

/// Reads `rec` event by event. `count` is the run's tokenizer; `reasoning_tags` says whether
/// `<think>` splitting was on (then tags in content are not a warning).
pub fn inspect(rec: &Record, count: &dyn Fn(&str) -> u64, reasoning_tags: bool) -> Inspection {
    let mut rows = Vec::with_capacity(rec.events.len());
    let first_token = rec.events.iter().position(|e| e.has_text());
    let first_output = rec.events.iter().position(|e| e.has_output_text());
    let last_content = rec.events.iter().rposition(|e| e.has_output_text());
    let mut out_text = String::new();
    let mut reasoning_text = String::new();
    for (i, e) in rec.events.iter().enumerate() {
        let out: String = [e.content.as_deref(), e.tool.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        out_text.push_str(&out);
        if let Some(r) = &e.reasoning {
            reasoning_text.push_str(r);
        }
        let mut marks = Vec::new();
        if Some(i) == first_token {
            marks.push("first token");
        }
        if Some(i) == first_output {
            marks.push("first output token");
        }
        if Some(i) == last_content {
            marks.push("last content");
        }
        rows.push(EventRow {
            index: i,
            t_ms: e.t_ns.saturating_sub(rec.start_ns) as f64 / 1e6,
            frame: e.frame,
            kind: e.kind().as_str(),
            content: e.content.clone(),
            reasoning: e.reasoning.clone(),
            tool: e.tool.clone(),
            usage: e.usage.clone(),
            output_tokens: if out.is_empty() { 0 } else { count(&out) },
            reasoning_tokens: e.reasoning.as_deref().map_or(0, count),
            marks,
            raw: e.raw.clone(),
        });
    }
    let client_output_tokens = if out_text.is_empty() {
        0
    } else {
        count(&out_text)
    };
    let client_reasoning_tokens = if reasoning_text.is_empty() {
        0
    } else {
        count(&reasoning_text)
    };
    let server = rec.last_usage().map(|u| ServerUsage {
        prompt_tokens: u.get("prompt_tokens").and_then(Value::as_u64),
        completion_tokens: u.get("completion_tokens").and_then(Value::as_u64),
        reasoning_tokens: u
            .pointer("/completion_tokens_details/reasoning_tokens")
            .and_then(Value::as_u64),
    });

    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    if let Some(e) = &rec.error {
        warnings.push(format!(
            "the request failed ({} {}): {}",
            e.error_type,
            e.code.map_or(String::new(), |c| c.to_string()),
            e.message
        ));
    }
    if !reasoning_tags && (out_text.contains("<think>") || out_text.contains("</think>")) {
        warnings.push(
            "the content holds <think>…</think>: reasoning is embedded in the output text, so every tool counts it as output (TTFT is the first reasoning token, OSL includes it). Use --reasoning-tags think to split it, and do not crosswalk TTFT/OSL against a run that separated reasoning."
                .into(),
        );
    }
    if client_reasoning_tokens > 0 {
        notes.push(format!(
            "reasoning arrived in a separate field ({client_reasoning_tokens} tokens): AIPerf's TTFT counts the first reasoning token and its OSL includes reasoning; compare with time_to_first_output_token and output_token_count for a content-only view."
        ));
    }
    if rec.streaming && server.is_none() && rec.error.is_none() {
        warnings.push(
            "no usage in the stream: server token counts are unavailable (--use-server-token-count cannot work), and client counts cannot be checked against the server's. Ask for stream_options.include_usage (inferbench sets it; a proxy may drop it)."
                .into(),
        );
    }
    let text_events: Vec<&EventRow> = rows.iter().filter(|r| r.output_tokens > 0).collect();
    let multi = text_events.iter().filter(|r| r.output_tokens > 1).count();
    if rec.streaming && multi > 0 && text_events.len() > 1 {
        let max = text_events
            .iter()
            .map(|r| r.output_tokens)
            .max()
            .unwrap_or(0);
        warnings.push(format!(
            "{multi} of {} content events carry more than one token (up to {max}): chunk-gap ITL is not per-token ITL here; AIPerf normalizes ITL by tokens, GenAI-Perf 0.0.1's ITL divides by the tokens of the later response, vLLM's pooled ITL does not. Compare ITL only under one definition.",
            text_events.len()
        ));
    }
    if let Some(want) = rec.requested_output_tokens {
        let got = server
            .and_then(|s| s.completion_tokens)
            .unwrap_or(client_output_tokens + client_reasoning_tokens);
        if got < want && rec.error.is_none() {
            warnings.push(format!(
                "the output is shorter than requested ({got} of {want} tokens): OSL, throughput and ITL then depend on when the model stops. For a fixed OSL add --extra-inputs min_tokens:{want} --extra-inputs ignore_eos:true (if the server supports them)."
            ));
        }
    }
    if let Some(first) = rec.events.iter().find(|e| e.kind() == EventKind::Data)
        && !first.has_text()
        && first.usage.is_none()
        && rec.events.iter().any(|e| e.has_text())
    {
        warnings.push(
            "the first event carries no text (a role-only chunk): AIPerf and GenAI-Perf skip it, so TTFT is the first event with text; a tool that timed the first chunk would report an earlier TTFT."
                .into(),
        );
    }
    if let Some(field) = unexpected_text_field(rec) {
        warnings.push(format!(
            "the response carries text under '{field}', a field inferbench (and AIPerf) do not read: reasoning under an unexpected name is neither counted nor timed"
        ));
    }
    if let (Some(s), true) = (server, rec.error.is_none()) {
        if let Some(c) = s.completion_tokens {
            let client_total = client_output_tokens + client_reasoning_tokens;
            if c != client_total {
                warnings.push(format!(
                    "client and server token counts disagree: the server's usage says {c} completion tokens, the run's tokenizer counts {client_total} (output {client_output_tokens} + reasoning {client_reasoning_tokens}). Check --tokenizer, or use --use-server-token-count."
                ));
            }
        }
        if let (Some(p), Some(ci)) = (s.prompt_tokens, rec.tokens.input)
            && p != ci
        {
            notes.push(format!(
                "prompt tokens: the server counts {p}, the client {ci} (the server may apply a chat template, special tokens or another tokenizer)"
            ));
        }
    }
    Inspection {
        rows,
        client_input_tokens: rec.tokens.input,
        client_output_tokens,
        client_reasoning_tokens,
        server,
        requested_output_tokens: rec.requested_output_tokens,
        warnings,
        notes,
    }
}

/// A string field of `choices[0].delta`/`message` that no decoder reads (from raw events).
fn unexpected_text_field(rec: &Record) -> Option<String> {
    for e in &rec.events {
        let Some(raw) = &e.raw else { continue };
        let Ok(v) = serde_json::from_str::<Value>(raw) else {
            continue;
        };
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
            continue;
        };
        for part in ["delta", "message"] {
            if let Some(Value::Object(m)) = choice.get(part) {
                for (k, val) in m {
                    if !KNOWN_CHAT_FIELDS.contains(&k.as_str())
                        && val.as_str().is_some_and(|s| !s.is_empty())
                    {
                        return Some(format!("choices[0].{part}.{k}"));
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::record::{Event, EventKindOpt};

    fn words(s: &str) -> u64 {
        s.split_whitespace().count() as u64
    }

    fn ev(t_ms: u64, content: Option<&str>, reasoning: Option<&str>) -> Event {
        Event {
            t_ns: t_ms * 1_000_000,
            content: content.map(String::from),
            reasoning: reasoning.map(String::from),
            ..Default::default()
        }
    }

    #[test]
    fn marks_and_warnings_on_a_role_first_reasoning_stream_without_usage() {
        let rec = Record {
            streaming: true,
            start_ns: 0,
            requested_output_tokens: Some(5),
            events: vec![
                ev(10, Some(""), None),
                ev(20, None, Some("hm ")),
                ev(30, Some("a b "), None),
                ev(40, Some("c"), None),
                Event {
                    t_ns: 41_000_000,
                    kind: EventKindOpt(EventKind::Done),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let i = inspect(&rec, &words, false);
        assert_eq!(i.rows[1].marks, ["first token"]);
        assert_eq!(i.rows[2].marks, ["first output token"]);
        assert_eq!(i.rows[3].marks, ["last content"]);
        assert_eq!(i.rows[2].t_ms, 30.0);
        // "a b " + "c" = "a b c": 3 words; reasoning "hm": 1.
        assert_eq!(i.client_output_tokens, 3);
        assert_eq!(i.client_reasoning_tokens, 1);
        let all = i.warnings.join("\n");
        assert!(all.contains("no usage in the stream"), "{all}");
        assert!(all.contains("role-only"), "{all}");
        assert!(all.contains("more than one token"), "{all}");
        assert!(all.contains("shorter than requested (4 of 5"), "{all}");
        assert!(i.notes.join(" ").contains("separate field"));
    }

    #[test]
    fn think_tags_unknown_fields_and_count_mismatch() {
        let rec = Record {
            streaming: true,
            events: vec![
                Event {
                    content: Some("<think>x</think> y".into()),
                    raw: Some(
                        r#"{"choices":[{"delta":{"content":"<think>x</think> y","thinking":"z"}}]}"#
                            .into(),
                    ),
                    ..Default::default()
                },
                Event {
                    usage: Some(serde_json::json!({"prompt_tokens": 3, "completion_tokens": 9})),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let i = inspect(&rec, &words, false);
        let all = i.warnings.join("\n");
        assert!(all.contains("<think>"), "{all}");
        assert!(all.contains("choices[0].delta.thinking"), "{all}");
        assert!(all.contains("server's usage says 9"), "{all}");
        // With splitting on, tags in content are not reported.
        let i = inspect(&rec, &words, true);
        assert!(!i.warnings.join("\n").contains("holds <think>"));
    }
}
