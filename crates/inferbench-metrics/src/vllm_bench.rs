//! The `vllm-bench` definition set: vLLM's `vllm bench serve` (`benchmark_serving`) metrics,
//! computed from records. Definitions, populations and quirks are in
//! `docs/definitions/vllm-bench.md`; in short:
//!
//! - a request succeeds when it has no error and was not cancelled (vLLM: HTTP 200 and the
//!   stream read to its end); only successes enter the distributions;
//! - TTFT: start → first message with a non-empty `choices` (role-only, empty and reasoning
//!   deltas count); E2EL: start → last message before `[DONE]` (the usage-only chunk counts);
//! - ITL: every gap between a `choices` message and the message before it, pooled;
//! - TPOT per request: (E2EL − TTFT) / (output tokens − 1), requests with ≤ 1 token left out
//!   (but TPOT 0 for goodput);
//! - throughputs divide by the benchmark duration: the phase's issuing window;
//! - statistics as numpy: mean, median, population std, linear percentiles; an empty
//!   population reports 0 for all of them, as vLLM's `np.mean(x or 0)` does.

use std::borrow::Cow;

use inferbench_core::summary::{
    ErrorGroup, MetricResult, MetricValue, RecordMetric, RecordMetricValue, Summary,
};
use inferbench_core::{Event, EventKind, Evidence, Phase, Record, Stats};
use serde_json::Value;

use crate::stats::{scaled, stats};
use crate::{Computed, PerRecord};

pub const NAME: &str = "vllm-bench";

const NS_TO_MS: f64 = 1e-6;
const NS_TO_S: f64 = 1e-9;

/// vLLM's `--goodput` SLOs, in ms (`ttft:…`, `tpot:…`, `e2el:…`). A request is good when every
/// given bound holds (value ≤ bound).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Goodput {
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub e2el_ms: Option<f64>,
}

impl Goodput {
    fn is_set(&self) -> bool {
        self.ttft_ms.is_some() || self.tpot_ms.is_some() || self.e2el_ms.is_some()
    }

    /// Parses vLLM's `--goodput` syntax: `ttft:100 tpot:20 e2el:2000` (ms).
    pub fn parse(spec: &str) -> Result<Goodput, String> {
        let mut g = Goodput::default();
        for item in spec.split_whitespace() {
            let (name, value) = item
                .split_once(':')
                .ok_or_else(|| format!("goodput {item:?}: expected name:value"))?;
            let v: f64 = value
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("goodput {item:?}: {value:?} is not a number of ms"))?;
            match name {
                "ttft" => g.ttft_ms = Some(v),
                "tpot" => g.tpot_ms = Some(v),
                "e2el" => g.e2el_ms = Some(v),
                other => {
                    return Err(format!(
                        "goodput: unknown metric {other:?} (valid: ttft, tpot, e2el)"
                    ));
                }
            }
        }
        if !g.is_set() {
            return Err("goodput: no name:value given".into());
        }
        Ok(g)
    }
}

/// (tag, header, unit), in summary order. Tags follow vLLM's result JSON keys
/// (`mean_ttft_ms` is `ttft`'s avg, and so on).
pub const METRICS: &[(&str, &str, &str)] = &[
    ("completed", "Successful requests", "requests"),
    ("failed", "Failed requests", "requests"),
    ("duration", "Benchmark duration", "sec"),
    ("total_input_tokens", "Total input tokens", "tokens"),
    ("total_output_tokens", "Total generated tokens", "tokens"),
    ("request_throughput", "Request throughput", "requests/sec"),
    ("request_goodput", "Request goodput", "requests/sec"),
    ("output_throughput", "Output token throughput", "tokens/sec"),
    (
        "max_output_tokens_per_s",
        "Peak output token throughput",
        "tokens/sec",
    ),
    (
        "max_concurrent_requests",
        "Peak concurrent requests",
        "requests",
    ),
    (
        "total_token_throughput",
        "Total token throughput",
        "tokens/sec",
    ),
    ("ttft", "Time to First Token", "ms"),
    ("tpot", "Time per Output Token (excl. 1st token)", "ms"),
    ("itl", "Inter-token Latency", "ms"),
    ("e2el", "End-to-end Latency", "ms"),
];

fn describe(tag: &str) -> (&'static str, &'static str) {
    crate::table::describe(METRICS, tag)
}

fn result(tag: &str, value: MetricValue) -> MetricResult {
    crate::table::result(METRICS, tag, value)
}

fn scalar(tag: &str, value: f64) -> MetricResult {
    result(tag, MetricValue::Scalar { value })
}

/// True when a message is one vLLM treats as a token chunk: `data.get("choices")` is a
/// non-empty list. Read from the raw payload when kept; otherwise any parsed choice field
/// (text, even empty, or a finish reason) or the absence of `usage` says so (a decoded data
/// message without choices carries usage).
fn has_choices(e: &Event) -> bool {
    if !matches!(e.kind(), EventKind::Data | EventKind::Body) {
        return false;
    }
    if let Some(raw) = &e.raw
        && let Ok(v) = serde_json::from_str::<Value>(raw)
    {
        return v
            .get("choices")
            .and_then(Value::as_array)
            .is_some_and(|c| !c.is_empty());
    }
    e.content.is_some()
        || e.reasoning.is_some()
        || e.tool.is_some()
        || e.finish_reason.is_some()
        || e.usage.is_none()
}

fn usage_u64(u: &Value, key: &str) -> Option<u64> {
    u.get(key).and_then(Value::as_u64)
}

/// Output tokens of a successful request: client counts (content + tool calls + reasoning,
/// all generated tokens as `usage.completion_tokens` counts them), or the server's
/// `completion_tokens` with `use_server_token_count`.
fn output_tokens(r: &Record, server: bool) -> u64 {
    if server {
        r.last_usage()
            .and_then(|u| usage_u64(u, "completion_tokens"))
            .unwrap_or(0)
    } else {
        r.tokens.output.unwrap_or(0) + r.tokens.reasoning.unwrap_or(0)
    }
}

fn input_tokens(r: &Record, server: bool) -> u64 {
    if server {
        r.last_usage()
            .and_then(|u| usage_u64(u, "prompt_tokens"))
            .unwrap_or(0)
    } else {
        r.tokens.input.unwrap_or(0)
    }
}

/// Per-request values of a successful request (ns, tokens).
struct Request {
    start_ns: u64,
    ttft_ns: u64,
    latency_ns: u64,
    itl_ns: Vec<u64>,
    output: u64,
    input: u64,
}

fn request_of(r: &Record, server: bool) -> Request {
    let mut ttft: Option<u64> = None;
    let mut prev: Option<u64> = None;
    let mut itl = Vec::new();
    for e in &r.events {
        // `[DONE]` is skipped before any timestamp is taken.
        if e.kind() == EventKind::Done {
            continue;
        }
        if has_choices(e) {
            match ttft {
                None => ttft = Some(e.t_ns.saturating_sub(r.start_ns)),
                Some(_) => itl.push(e.t_ns.saturating_sub(prev.unwrap_or(r.start_ns))),
            }
        }
        // Every other message (usage-only, an error object) still moves the clock on.
        prev = Some(e.t_ns);
    }
    Request {
        start_ns: r.start_ns,
        // vLLM leaves TTFT at 0 when no choice ever arrived.
        ttft_ns: ttft.unwrap_or(0),
        latency_ns: prev.unwrap_or(r.end_ns).saturating_sub(r.start_ns),
        itl_ns: itl,
        output: output_tokens(r, server),
        input: input_tokens(r, server),
    }
}

fn tpot_ns(q: &Request) -> Option<f64> {
    (q.output > 1).then(|| q.latency_ns.saturating_sub(q.ttft_ns) as f64 / (q.output - 1) as f64)
}

/// numpy statistics in ms, with vLLM's `x or 0` for an empty population: every statistic 0,
/// count 0.
fn ms_stats(ns: &[f64]) -> Stats {
    if ns.is_empty() {
        let z = Some(0.0);
        return Stats {
            avg: z,
            p1: z,
            p5: z,
            p10: z,
            p25: z,
            p50: z,
            p75: z,
            p90: z,
            p95: z,
            p99: z,
            min: z,
            max: z,
            std: z,
            count: 0,
            sum: z,
        };
    }
    scaled(stats(ns), NS_TO_MS)
}

/// vLLM's peak metrics: one-second buckets from the first successful start; each choices
/// message (first token, then each ITL step) adds 1 to its bucket; a request counts as
/// concurrent in every bucket from its start's to its end's. Returns (max chunks in a bucket,
/// max concurrent requests in a bucket).
fn peaks(reqs: &[Request]) -> (f64, f64) {
    let Some(min_start) = reqs.iter().map(|q| q.start_ns).min() else {
        return (0.0, 0.0);
    };
    let max_end = reqs
        .iter()
        .map(|q| q.start_ns + q.latency_ns)
        .max()
        .unwrap_or(min_start);
    let span_s = (max_end - min_start) as f64 * NS_TO_S;
    let n = span_s.ceil() as usize + 1;
    let mut tokens = vec![0u64; n];
    let mut concurrent = vec![0u64; n];
    let bucket = |t_ns: u64| ((t_ns.saturating_sub(min_start)) as f64 * NS_TO_S) as usize;
    for q in reqs {
        let mut t = q.start_ns + q.ttft_ns;
        let mut times = vec![t];
        for g in &q.itl_ns {
            t += g;
            times.push(t);
        }
        for t in times {
            if let Some(b) = tokens.get_mut(bucket(t)) {
                *b += 1;
            }
        }
        let (a, b) = (bucket(q.start_ns), bucket(q.start_ns + q.latency_ns));
        for c in concurrent.iter_mut().take(b + 1).skip(a) {
            *c += 1;
        }
    }
    (
        tokens.iter().copied().max().unwrap_or(0) as f64,
        concurrent.iter().copied().max().unwrap_or(0) as f64,
    )
}

fn record_metric(tag: &'static str, value: RecordMetricValue) -> RecordMetric {
    RecordMetric {
        tag: Cow::Borrowed(tag),
        unit: Cow::Borrowed(describe(tag).1),
        value,
    }
}

/// `vllm-bench` metrics of one phase, without goodput.
pub fn compute(evidence: &Evidence, phase: Phase) -> Computed {
    compute_with_goodput(evidence, phase, &Goodput::default())
}

/// `vllm-bench` metrics of one phase; `request_goodput` is reported when `goodput` sets a bound.
pub fn compute_with_goodput(evidence: &Evidence, phase: Phase, goodput: &Goodput) -> Computed {
    let server = evidence.header.use_server_token_count;
    let mut reqs: Vec<Request> = Vec::new();
    let mut per_record = Vec::new();
    let mut failed = 0u64;
    let mut errors: Vec<ErrorGroup> = Vec::new();
    for r in evidence.records_of(phase) {
        if r.error.is_some() || r.cancelled {
            failed += 1;
            let (code, ty, msg) = match &r.error {
                Some(e) => (e.code, e.error_type.clone(), e.message.clone()),
                None => (None, "Cancelled".into(), "request was cancelled".into()),
            };
            crate::table::count_error(&mut errors, code, ty, msg);
            per_record.push(PerRecord {
                id: r.id,
                metrics: Vec::new(),
            });
            continue;
        }
        let q = request_of(r, server);
        let mut m = vec![
            record_metric(
                "ttft",
                RecordMetricValue::Float(q.ttft_ns as f64 * NS_TO_MS),
            ),
            record_metric(
                "e2el",
                RecordMetricValue::Float(q.latency_ns as f64 * NS_TO_MS),
            ),
        ];
        if let Some(t) = tpot_ns(&q) {
            m.push(record_metric(
                "tpot",
                RecordMetricValue::Float(t * NS_TO_MS),
            ));
        }
        if !q.itl_ns.is_empty() {
            m.push(record_metric(
                "itl",
                RecordMetricValue::List(q.itl_ns.iter().map(|x| *x as f64 * NS_TO_MS).collect()),
            ));
        }
        m.push(record_metric(
            "total_output_tokens",
            RecordMetricValue::Int(i64::try_from(q.output).unwrap_or(i64::MAX)),
        ));
        per_record.push(PerRecord {
            id: r.id,
            metrics: m,
        });
        reqs.push(q);
    }

    let completed = reqs.len() as u64;
    let ttfts: Vec<f64> = reqs.iter().map(|q| q.ttft_ns as f64).collect();
    let e2els: Vec<f64> = reqs.iter().map(|q| q.latency_ns as f64).collect();
    let tpots: Vec<f64> = reqs.iter().filter_map(tpot_ns).collect();
    let itls: Vec<f64> = reqs
        .iter()
        .flat_map(|q| q.itl_ns.iter().map(|x| *x as f64))
        .collect();
    let total_input: u64 = reqs.iter().map(|q| q.input).sum();
    let total_output: u64 = reqs.iter().map(|q| q.output).sum();

    // Benchmark duration: from the phase's first dispatch to its last completion.
    let duration_s = evidence
        .window(phase)
        .filter(|w| w.requests_end_ns > w.start_ns)
        .map(|w| (w.requests_end_ns - w.start_ns) as f64 * NS_TO_S);

    let mut out = vec![
        scalar("completed", completed as f64),
        scalar("failed", failed as f64),
    ];
    if let Some(d) = duration_s {
        out.push(scalar("duration", d));
    }
    out.push(scalar("total_input_tokens", total_input as f64));
    out.push(scalar("total_output_tokens", total_output as f64));
    if let Some(d) = duration_s {
        out.push(scalar("request_throughput", completed as f64 / d));
        if goodput.is_set() {
            // A request with ≤ 1 output token has TPOT 0 here (vLLM's `all_tpots`).
            let good = reqs
                .iter()
                .filter(|q| {
                    let ok = |bound: Option<f64>, ns: f64| bound.is_none_or(|b| ns * NS_TO_MS <= b);
                    ok(goodput.ttft_ms, q.ttft_ns as f64)
                        && ok(goodput.tpot_ms, tpot_ns(q).unwrap_or(0.0))
                        && ok(goodput.e2el_ms, q.latency_ns as f64)
                })
                .count();
            out.push(scalar("request_goodput", good as f64 / d));
        }
        out.push(scalar("output_throughput", total_output as f64 / d));
    }
    let (peak_tokens, peak_concurrent) = peaks(&reqs);
    out.push(scalar("max_output_tokens_per_s", peak_tokens));
    out.push(scalar("max_concurrent_requests", peak_concurrent));
    if let Some(d) = duration_s {
        out.push(scalar(
            "total_token_throughput",
            (total_input + total_output) as f64 / d,
        ));
    }
    for (tag, values) in [
        ("ttft", &ttfts),
        ("tpot", &tpots),
        ("itl", &itls),
        ("e2el", &e2els),
    ] {
        out.push(result(
            tag,
            MetricValue::Distribution {
                stats: ms_stats(values),
            },
        ));
    }
    errors.sort_by_key(|g| std::cmp::Reverse(g.count));
    Computed {
        summary: Summary {
            definitions: NAME.to_string(),
            metrics: out,
            error_summary: errors,
        },
        per_record,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goodput_parses_vllm_syntax_and_names_bad_items() {
        let g = Goodput::parse("ttft:100 e2el:2000").unwrap();
        assert_eq!(g.ttft_ms, Some(100.0));
        assert_eq!(g.tpot_ms, None);
        assert_eq!(g.e2el_ms, Some(2000.0));
        for bad in ["", "ttft", "itl:5", "ttft:x", "tpot:-1"] {
            assert!(
                Goodput::parse(bad).unwrap_err().starts_with("goodput"),
                "{bad}"
            );
        }
    }

    #[test]
    fn choices_are_read_from_raw_when_kept() {
        let usage_only = Event {
            raw: Some(r#"{"choices":[],"usage":{"completion_tokens":3}}"#.into()),
            usage: Some(serde_json::json!({"completion_tokens": 3})),
            ..Default::default()
        };
        assert!(!has_choices(&usage_only));
        let role = Event {
            raw: Some(r#"{"choices":[{"delta":{"role":"assistant"}}]}"#.into()),
            ..Default::default()
        };
        assert!(has_choices(&role));
        // Without raw: a parsed empty content is a choice; usage alone is not.
        let parsed_role = Event {
            content: Some(String::new()),
            ..Default::default()
        };
        assert!(has_choices(&parsed_role));
        let parsed_usage = Event {
            usage: Some(serde_json::json!({"completion_tokens": 3})),
            ..Default::default()
        };
        assert!(!has_choices(&parsed_usage));
    }
}
