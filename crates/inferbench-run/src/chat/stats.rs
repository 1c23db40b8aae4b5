//! One chat turn's numbers: the turn is made into a [`Record`] and scored by the same
//! `aiperf-0.13` per-record metrics `profile` writes, so TTFT, latency, OSL and ITL here are
//! definitionally `profile`'s; only the usage fields (ISL, cached prompt tokens) are read
//! from the server's usage object, as AIPerf's `chat` reads them.

use inferbench_core::summary::RecordMetricValue;
use inferbench_core::{EvidenceHeader, Record};
use serde_json::Value;

/// The per-turn statistics, in display units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnStats {
    /// Time to first token: the first event with content or reasoning text minus the
    /// request's start, ms.
    pub ttft_ms: Option<f64>,
    /// Request latency: the last event with text minus the start, ms.
    pub latency_ms: Option<f64>,
    /// Output sequence length: client-side tokens of the content plus of the reasoning.
    pub osl: Option<u64>,
    /// Client-side tokens of the reasoning text (part of `osl`).
    pub reasoning_tokens: Option<u64>,
    /// OSL / request latency, tokens/s (`e2e_output_token_throughput`).
    pub tps: Option<f64>,
    /// Inter-token latency: (latency − TTFT) / (OSL − 1), ms (`inter_token_latency`).
    pub itl_ms: Option<f64>,
    /// 1 / ITL, tokens/s (`output_token_throughput_per_user`).
    pub decode_tps: Option<f64>,
    /// The server's prompt token count (usage), the turn's ISL.
    pub isl: Option<u64>,
    /// Prompt tokens the server says it served from its prefix cache (usage).
    pub cached_tokens: Option<u64>,
}

/// The per-record metrics of `record` (one streamed chat turn) under `aiperf-0.13`, with the
/// client's token counts (`record.tokens`), and the usage fields of `usage`.
pub fn turn_stats(record: &Record, usage: Option<&Value>) -> TurnStats {
    let header = EvidenceHeader {
        schema_version: 1,
        tool: "inferbench".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        anchor_unix_ns: 0,
        benchmark_id: String::new(),
        endpoint_type: "chat".into(),
        streaming: true,
        tokenizer: String::new(),
        use_server_token_count: false,
        per_chunk_usage: false,
    };
    let metrics = inferbench_metrics::aiperf::Accumulator::new(&header).push(record);
    let get = |tag: &str| {
        metrics
            .iter()
            .find(|m| m.tag == tag)
            .and_then(|m| match &m.value {
                RecordMetricValue::Int(i) => Some(*i as f64),
                RecordMetricValue::Float(f) => Some(*f),
                RecordMetricValue::List(_) => None,
            })
    };
    let count = |tag: &str| get(tag).map(|v| v as u64);
    TurnStats {
        ttft_ms: get("time_to_first_token"),
        latency_ms: get("request_latency"),
        osl: count("output_sequence_length"),
        reasoning_tokens: count("reasoning_token_count"),
        tps: get("e2e_output_token_throughput"),
        itl_ms: get("inter_token_latency"),
        decode_tps: get("output_token_throughput_per_user"),
        isl: usage.and_then(prompt_tokens),
        cached_tokens: usage.and_then(cached_prompt_tokens),
    }
}

fn int(v: &Value) -> Option<u64> {
    v.as_u64()
}

/// The usage's total prompt tokens, under the names AIPerf 0.13's `Usage.prompt_tokens`
/// reads (the first present wins). Anthropic and Bedrock count only the uncached remainder
/// in their input field: when their cache fields are present they are added back, so the
/// value is always "every token the server took as input".
pub fn prompt_tokens(usage: &Value) -> Option<u64> {
    const NAMES: [&str; 5] = [
        "prompt_tokens",
        "input_tokens",
        "promptTokenCount",
        "inputTokens",
        "input_token_count",
    ];
    const DISJOINT: [&str; 2] = ["input_tokens", "inputTokens"];
    const DISJOINT_CACHE: [&str; 4] = [
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "cacheReadInputTokens",
        "cacheWriteInputTokens",
    ];
    let o = usage.as_object()?;
    let name = NAMES.iter().find(|n| o.contains_key(**n))?;
    let value = int(&o[*name])?;
    if DISJOINT.contains(name) && DISJOINT_CACHE.iter().any(|k| o.contains_key(*k)) {
        let cache: u64 = DISJOINT_CACHE
            .iter()
            .filter_map(|k| o.get(*k).and_then(int))
            .sum();
        return Some(value + cache);
    }
    Some(value)
}

/// The usage's cached prompt tokens (cache reads), as AIPerf 0.13's
/// `Usage.prompt_cache_read_tokens`: `prompt_tokens_details.cached_tokens` (or
/// `input_tokens_details.cached_tokens`), else the first present of the vendors' top-level
/// names.
pub fn cached_prompt_tokens(usage: &Value) -> Option<u64> {
    const DETAILS: [&str; 2] = ["prompt_tokens_details", "input_tokens_details"];
    const TOP: [&str; 5] = [
        "cache_read_input_tokens",
        "prompt_cache_hit_tokens",
        "cachedContentTokenCount",
        "cacheReadInputTokens",
        "cached_tokens",
    ];
    let o = usage.as_object()?;
    let nested = DETAILS.iter().find_map(|d| {
        o.get(*d)
            .and_then(Value::as_object)
            .and_then(|d| d.get("cached_tokens"))
    });
    match nested {
        Some(v) => int(v),
        None => TOP.iter().find_map(|k| o.get(*k)).and_then(int),
    }
}

/// The stats block printed after a reply, one string per line, in AIPerf's order and units:
/// `TTFT`, `TPS` (with the token count, its reasoning part and the latency in s), `ITL` when
/// defined and above 0 (OSL ≥ 2), `ISL` when the server reported prompt tokens (an
/// inferbench line), `Cache` when it also reported cached ones. A turn with no tokens gives
/// the single line `(no tokens received)`.
pub fn stats_lines(s: &TurnStats) -> Vec<String> {
    let (Some(ttft), Some(latency_ms), Some(osl)) = (s.ttft_ms, s.latency_ms, s.osl) else {
        return vec!["(no tokens received)".into()];
    };
    if osl == 0 {
        return vec!["(no tokens received)".into()];
    }
    let latency_s = latency_ms / 1e3;
    let mut tokens = format!("{osl} tokens");
    if let Some(r) = s.reasoning_tokens.filter(|r| *r > 0) {
        tokens.push_str(&format!(", {r} reasoning"));
    }
    let mut lines = vec![
        format!("TTFT: {ttft:.2} ms"),
        format!(
            "TPS:  {:.2} tokens/s ({tokens} in {latency_s:.2}s)",
            s.tps.unwrap_or(0.0)
        ),
    ];
    if let (Some(itl), Some(decode)) = (s.itl_ms.filter(|i| *i > 0.0), s.decode_tps) {
        lines.push(format!(
            "ITL:  {itl:.2} ms/token (decode {decode:.2} tokens/s)"
        ));
    }
    if let Some(isl) = s.isl {
        lines.push(format!("ISL:  {isl} tokens (server usage)"));
        if let Some(cached) = s.cached_tokens.filter(|_| isl > 0) {
            let pct = 100.0 * cached as f64 / isl as f64;
            lines.push(format!(
                "Cache: {cached}/{isl} prompt tokens cached ({pct:.1}%)"
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::{Event, TokenCounts};
    use serde_json::json;

    const MS: u64 = 1_000_000;

    fn content(t_ms: u64, text: &str) -> Event {
        Event {
            t_ns: t_ms * MS,
            content: Some(text.into()),
            ..Default::default()
        }
    }

    fn reasoning(t_ms: u64, text: &str) -> Event {
        Event {
            t_ns: t_ms * MS,
            reasoning: Some(text.into()),
            ..Default::default()
        }
    }

    fn record(events: Vec<Event>, output: u64, reasoning: Option<u64>, end_ms: u64) -> Record {
        Record {
            streaming: true,
            start_ns: 0,
            end_ns: end_ms * MS,
            events,
            tokens: TokenCounts {
                input: None,
                output: Some(output),
                reasoning,
            },
            ..Default::default()
        }
    }

    #[test]
    fn five_tokens_ten_ms_apart_after_a_50_ms_first_token() {
        // Start 0; one token at 50 ms, then four more at 60, 70, 80, 90 ms; the body ends at
        // 90 ms. TTFT = 50 ms. Latency = last token − start = 90 ms. OSL = 5.
        // TPS (AIPerf: OSL / latency) = 5 / 0.090 s = 55.555… → 55.56 tokens/s.
        // ITL = (90 − 50) / (5 − 1) = 10 ms → decode 1 / 0.010 s = 100 tokens/s.
        // Usage: 12 prompt tokens, 8 of them cached → 8/12 = 66.666…% → 66.7%.
        let r = record(
            vec![
                content(50, " a"),
                content(60, " b"),
                content(70, " c"),
                content(80, " d"),
                content(90, " e"),
            ],
            5,
            None,
            90,
        );
        let usage = json!({"prompt_tokens": 12, "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 8}});
        let s = turn_stats(&r, Some(&usage));
        assert_eq!(s.ttft_ms, Some(50.0));
        assert_eq!(s.latency_ms, Some(90.0));
        assert_eq!(s.osl, Some(5));
        assert_eq!(s.isl, Some(12));
        assert_eq!(s.cached_tokens, Some(8));
        assert!((s.tps.unwrap() - 5.0 / 0.09).abs() < 1e-9);
        assert!((s.itl_ms.unwrap() - 10.0).abs() < 1e-9);
        assert!((s.decode_tps.unwrap() - 100.0).abs() < 1e-6);
        assert_eq!(
            stats_lines(&s),
            [
                "TTFT: 50.00 ms",
                "TPS:  55.56 tokens/s (5 tokens in 0.09s)",
                "ITL:  10.00 ms/token (decode 100.00 tokens/s)",
                "ISL:  12 tokens (server usage)",
                "Cache: 8/12 prompt tokens cached (66.7%)",
            ]
        );
    }

    #[test]
    fn reasoning_tokens_count_in_osl_and_are_named() {
        // Reasoning at 20 ms (2 tokens) and 30 ms, content at 40 and 60 ms; 3 content tokens,
        // 2 reasoning tokens (client counts). TTFT = 20 ms: the first text is reasoning.
        // OSL = 3 + 2 = 5; latency = 60 ms; TPS = 5 / 0.060 = 83.333… → 83.33.
        // ITL = (60 − 20) / (5 − 1) = 10 ms. The end of the body (70 ms) is not the latency.
        let r = record(
            vec![
                reasoning(20, "hm"),
                reasoning(30, ""),
                content(40, " x y"),
                content(60, " z"),
            ],
            3,
            Some(2),
            70,
        );
        let s = turn_stats(&r, None);
        assert_eq!(s.ttft_ms, Some(20.0));
        assert_eq!(s.osl, Some(5));
        assert_eq!(s.reasoning_tokens, Some(2));
        assert_eq!(
            stats_lines(&s),
            [
                "TTFT: 20.00 ms",
                "TPS:  83.33 tokens/s (5 tokens, 2 reasoning in 0.06s)",
                "ITL:  10.00 ms/token (decode 100.00 tokens/s)",
            ]
        );
    }

    #[test]
    fn one_token_has_no_itl_line() {
        // OSL 1: ITL needs at least 2 tokens. TTFT = latency = 40 ms; TPS = 1 / 0.04 = 25.
        let r = record(vec![content(40, "hi")], 1, None, 45);
        let lines = stats_lines(&turn_stats(&r, Some(&json!({"prompt_tokens": 3}))));
        assert_eq!(
            lines,
            [
                "TTFT: 40.00 ms",
                "TPS:  25.00 tokens/s (1 tokens in 0.04s)",
                "ISL:  3 tokens (server usage)",
            ]
        );
    }

    #[test]
    fn a_reply_without_text_has_no_stats() {
        let r = record(vec![content(10, "")], 0, None, 20);
        assert_eq!(stats_lines(&turn_stats(&r, None)), ["(no tokens received)"]);
        let r = record(vec![], 0, None, 20);
        assert_eq!(stats_lines(&turn_stats(&r, None)), ["(no tokens received)"]);
    }

    #[test]
    fn usage_names_of_other_vendors() {
        // Anthropic: 10 uncached input + 30 read + 5 written = 45 prompt tokens, 30 cached.
        let a = json!({"input_tokens": 10, "cache_read_input_tokens": 30,
            "cache_creation_input_tokens": 5});
        assert_eq!(prompt_tokens(&a), Some(45));
        assert_eq!(cached_prompt_tokens(&a), Some(30));
        // DeepSeek: the prompt total is already the total; hits are top level.
        let d = json!({"prompt_tokens": 20, "prompt_cache_hit_tokens": 16});
        assert_eq!(prompt_tokens(&d), Some(20));
        assert_eq!(cached_prompt_tokens(&d), Some(16));
        // Nested details win over a top-level name.
        let o = json!({"prompt_tokens": 9, "cached_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": 4}});
        assert_eq!(cached_prompt_tokens(&o), Some(4));
        assert_eq!(cached_prompt_tokens(&json!({"prompt_tokens": 9})), None);
        assert_eq!(prompt_tokens(&json!({"completion_tokens": 9})), None);
    }

    #[test]
    fn zero_cached_tokens_is_a_zero_percent_line() {
        let s = TurnStats {
            ttft_ms: Some(1.0),
            latency_ms: Some(1000.0),
            osl: Some(2),
            tps: Some(2.0),
            isl: Some(40),
            cached_tokens: Some(0),
            ..Default::default()
        };
        let lines = stats_lines(&s);
        assert_eq!(lines[1], "TPS:  2.00 tokens/s (2 tokens in 1.00s)");
        assert_eq!(lines[2], "ISL:  40 tokens (server usage)");
        assert_eq!(lines[3], "Cache: 0/40 prompt tokens cached (0.0%)");
    }
}
