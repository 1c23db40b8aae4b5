//! One record's values under `aiperf-0.13`: validity, token counts, latencies, usage.

use inferbench_core::plan::EndpointType;
use inferbench_core::summary::{MetricResult, MetricValue, RecordMetric, RecordMetricValue};
use inferbench_core::{EventKind, EvidenceHeader, Record};
use serde_json::Value;

use super::pool::slot_of;
use super::table::{METRICS, RECORD_METRICS};
use super::{NS_TO_MS, NS_TO_S, describe};

/// `AIPERF_METRICS_USAGE_PCT_DIFF_THRESHOLD`.
pub(super) const USAGE_DIFF_THRESHOLD_PCT: f64 = 10.0;
/// `AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD` and `..._MAX_TOKEN_THRESHOLD`.
const OSL_MISMATCH_PCT: f64 = 5.0;
const OSL_MISMATCH_MAX_TOKENS: f64 = 50.0;

/// Whether the endpoint returns generated tokens (AIPerf's PRODUCES_TOKENS_ONLY flag excludes
/// the others from every output-token metric). An endpoint type core does not know produces
/// tokens, except AIPerf's generic `rankings` (an imported run may name it).
fn produces_tokens(endpoint_type: &str) -> bool {
    EndpointType::parse(endpoint_type).map_or(endpoint_type != "rankings", |e| e.produces_tokens())
}

#[derive(Clone, Copy)]
pub(super) struct Ctx {
    streaming: bool,
    tokens: bool,
    server_tokens: bool,
    per_chunk_usage: bool,
    /// The endpoint sends images (AIPerf's SUPPORTS_IMAGE_ONLY metrics apply).
    images: bool,
    /// The endpoint sends audio (SUPPORTS_AUDIO_ONLY).
    audio: bool,
}

impl Ctx {
    pub(super) fn of(h: &EvidenceHeader) -> Ctx {
        Ctx {
            streaming: h.streaming,
            tokens: produces_tokens(&h.endpoint_type),
            server_tokens: h.use_server_token_count,
            per_chunk_usage: h.per_chunk_usage,
            images: EndpointType::parse(&h.endpoint_type).is_some_and(|e| e.supports_images()),
            audio: EndpointType::parse(&h.endpoint_type).is_some_and(|e| e.supports_audio()),
        }
    }

    pub(super) fn server_tokens(self) -> bool {
        self.server_tokens
    }
}

/// A content response: an event with text; for an endpoint that returns no tokens
/// (embeddings, rankings), every parsed response (its vectors or scores are the content).
fn is_content(e: &inferbench_core::Event, ctx: Ctx) -> bool {
    if ctx.tokens {
        e.has_text()
    } else {
        matches!(e.kind(), EventKind::Data | EventKind::Body)
    }
}

/// Why a record is not valid, grouped into the error summary as AIPerf would.
pub(super) type ErrorKey = (Option<u16>, String, String);

/// A record's error, or the error AIPerf would give an invalid record. AIPerf turns a record
/// without an error but without a content response (or with bad timestamps) into an error
/// record, so that valid + errors = completed.
pub(super) fn error_of(r: &Record, ctx: Ctx) -> Option<ErrorKey> {
    if let Some(e) = &r.error {
        return Some((e.code, e.error_type.clone(), e.message.clone()));
    }
    if r.cancelled {
        return Some((
            None,
            "RequestCancelledError".into(),
            "request was cancelled".into(),
        ));
    }
    if !r.events.iter().any(|e| is_content(e, ctx)) {
        return Some((
            None,
            "InvalidInferenceResultError".into(),
            "no content responses".into(),
        ));
    }
    if r.start_ns >= r.end_ns {
        return Some((
            None,
            "InvalidInferenceResultError".into(),
            "request end is not after its start".into(),
        ));
    }
    None
}

fn json_u64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 9.0e15)
            .map(|f| f as u64)
    })
}

/// The last non-null value of a usage field over the record's events. `paths` lists the
/// field's aliases (chat/completions names, then Responses API names).
fn usage_field(r: &Record, paths: &[&[&str]]) -> Option<u64> {
    r.events.iter().rev().find_map(|e| {
        let u = e.usage.as_ref()?;
        paths.iter().find_map(|path| {
            let mut v = u;
            for key in *path {
                v = v.get(key)?;
            }
            json_u64(v)
        })
    })
}

#[derive(Default)]
pub(super) struct Usage {
    pub(super) prompt: Option<u64>,
    pub(super) completion: Option<u64>,
    pub(super) total: Option<u64>,
    pub(super) reasoning: Option<u64>,
}

pub(super) fn usage_of(r: &Record) -> Usage {
    Usage {
        prompt: usage_field(r, &[&["prompt_tokens"], &["input_tokens"]]),
        completion: usage_field(r, &[&["completion_tokens"], &["output_tokens"]]),
        total: usage_field(r, &[&["total_tokens"]]),
        reasoning: usage_field(
            r,
            &[
                &["completion_tokens_details", "reasoning_tokens"],
                &["output_tokens_details", "reasoning_tokens"],
            ],
        ),
    }
}

/// With `--per-chunk-usage`: the cumulative `completion_tokens` of the first event that has
/// both content and a non-empty usage (the tokens delivered up to the chunk that set TTFT).
/// `None` when no content event carries usage (the server reported only a final total).
fn first_content_chunk_tokens(r: &Record, ctx: Ctx) -> Option<u64> {
    let e = r.events.iter().find(|e| {
        is_content(e, ctx)
            && e.usage
                .as_ref()
                .is_some_and(|u| u.as_object().is_some_and(|o| !o.is_empty()))
    })?;
    let u = e.usage.as_ref()?;
    u.get("completion_tokens")
        .or_else(|| u.get("output_tokens"))
        .and_then(json_u64)
}

/// ITL's divisor: `OSL − first_chunk_tokens`, or `OSL − 1` when the first chunk's count is
/// unknown, zero, or leaves less than one decode token (AIPerf degrades rather than drops).
pub(super) fn decode_tokens(osl: u64, first_chunk_tokens: Option<u64>) -> u64 {
    match first_chunk_tokens {
        Some(f) if f > 0 && f < osl => osl - f,
        _ => osl - 1,
    }
}

/// Per-record values in base units (ns, tokens, tokens/s, %).
#[derive(Default)]
pub(super) struct Values {
    pub(super) latency_ns: Option<u64>,
    pub(super) ttft_ns: Option<u64>,
    pub(super) ttst_ns: Option<u64>,
    pub(super) ttfo_ns: Option<u64>,
    pub(super) itl_ns: Option<f64>,
    pub(super) icl_ns: Vec<u64>,
    pub(super) decode_ns: Option<u64>,
    pub(super) isl: Option<u64>,
    pub(super) output: Option<u64>,
    pub(super) reasoning: Option<u64>,
    pub(super) osl: Option<u64>,
    pub(super) ottpu: Option<f64>,
    pub(super) e2e: Option<f64>,
    pub(super) prefill: Option<f64>,
    pub(super) usage: Usage,
    pub(super) prompt_diff: Option<f64>,
    pub(super) completion_diff: Option<f64>,
    pub(super) reasoning_diff: Option<f64>,
    pub(super) osl_diff: Option<f64>,
    pub(super) osl_mismatch: Option<bool>,
    /// `num_images`, `image_throughput` (images/s), `image_latency` (ms/image).
    pub(super) images: Option<u64>,
    pub(super) image_throughput: Option<f64>,
    pub(super) image_latency: Option<f64>,
    /// `audio_duration` (s) and `rtfx` (audio seconds per second of latency).
    pub(super) audio_duration: Option<f64>,
    pub(super) rtfx: Option<f64>,
}

fn diff_pct(api: Option<u64>, client: Option<u64>) -> Option<f64> {
    let (api, client) = (api?, client?);
    // A zero client count has no relative difference (AIPerf would divide by zero).
    (client > 0).then(|| (api as f64 - client as f64).abs() / client as f64 * 100.0)
}

pub(super) fn values_of(r: &Record, ctx: Ctx) -> Values {
    let mut v = Values {
        usage: usage_of(r),
        ..Default::default()
    };
    let times: Vec<u64> = r
        .events
        .iter()
        .filter(|e| is_content(e, ctx))
        .map(|e| e.t_ns)
        .collect();
    let (first, last) = (times[0], times[times.len() - 1]);
    let latency = last.saturating_sub(r.start_ns);
    v.latency_ns = Some(latency);

    let reasoning_seen = r
        .events
        .iter()
        .any(|e| e.reasoning.as_deref().is_some_and(|s| !s.is_empty()));
    if ctx.server_tokens {
        v.isl = v.usage.prompt;
        if ctx.tokens {
            v.reasoning = v.usage.reasoning;
            v.output = v
                .usage
                .completion
                .map(|c| c.saturating_sub(v.reasoning.unwrap_or(0)));
        }
    } else {
        v.isl = r.tokens.input;
        if ctx.tokens {
            v.output = r.tokens.output;
            v.reasoning = r.tokens.reasoning.filter(|_| reasoning_seen);
        }
    }
    v.osl = v.output.map(|o| o + v.reasoning.unwrap_or(0));

    if ctx.streaming && ctx.tokens {
        let ttft = first.saturating_sub(r.start_ns);
        v.ttft_ns = Some(ttft);
        if times.len() >= 2 {
            // Saturating: stamps are monotonic per connection, but an imported file's need
            // not be (a gap that runs backwards counts as 0, never a panic).
            v.ttst_ns = Some(times[1].saturating_sub(times[0]));
            v.icl_ns = times
                .windows(2)
                .map(|w| w[1].saturating_sub(w[0]))
                .collect();
        }
        v.ttfo_ns = r
            .events
            .iter()
            .find(|e| e.has_output_text())
            .map(|e| e.t_ns.saturating_sub(r.start_ns));
        let decode = latency.saturating_sub(ttft);
        v.decode_ns = Some(decode);
        if let Some(osl) = v.osl.filter(|o| *o >= 2) {
            let first = ctx
                .per_chunk_usage
                .then(|| first_content_chunk_tokens(r, ctx))
                .flatten();
            let itl = decode as f64 / decode_tokens(osl, first) as f64;
            v.itl_ns = Some(itl);
            if itl > 0.0 {
                v.ottpu = Some(1.0 / (itl * NS_TO_S));
            }
        }
        if let Some(isl) = v.isl.filter(|_| ttft > 0) {
            v.prefill = Some(isl as f64 / (ttft as f64 * NS_TO_S));
        }
    }
    if let Some(osl) = v.osl.filter(|_| latency > 0) {
        v.e2e = Some(osl as f64 / (latency as f64 * NS_TO_S));
    }
    // Diff metrics compare the client's tokenizer with the server; with server counts there
    // is nothing to compare (AIPerf's USAGE_DIFF_ONLY).
    if !ctx.server_tokens {
        v.prompt_diff = diff_pct(v.usage.prompt, v.isl);
        if ctx.tokens {
            v.completion_diff = diff_pct(v.usage.completion, v.osl);
            v.reasoning_diff = diff_pct(v.usage.reasoning, v.reasoning);
        }
    }
    media_values(r, ctx, latency, &mut v);
    if let (Some(osl), Some(req)) = (v.osl, r.requested_output_tokens.filter(|q| *q > 0)) {
        let (osl, req) = (osl as f64, req as f64);
        v.osl_diff = Some((osl - req) / req * 100.0);
        v.osl_mismatch =
            Some((osl - req).abs() > (req * OSL_MISMATCH_PCT / 100.0).min(OSL_MISMATCH_MAX_TOKENS));
    }
    v
}

/// AIPerf's media metrics, from the media the record says it sent: on an endpoint that
/// sends images, a record with at least one image part has `num_images`, and with a
/// latency above 0 `image_throughput` (images / latency in s) and `image_latency` (latency
/// in ms / images); on one that sends audio, a record whose first clip's length is known and
/// above 0 has `audio_duration`, and with a latency above 0 `rtfx` (its seconds / latency
/// in s).
fn media_values(r: &Record, ctx: Ctx, latency_ns: u64, v: &mut Values) {
    let Some(m) = &r.media else { return };
    if ctx.images && m.images > 0 {
        let n = u64::from(m.images);
        v.images = Some(n);
        if latency_ns > 0 {
            v.image_throughput = Some(n as f64 / (latency_ns as f64 * NS_TO_S));
            v.image_latency = Some(latency_ns as f64 * NS_TO_MS / n as f64);
        }
    }
    if ctx.audio
        && let Some(secs) = m.audio_seconds.filter(|s| *s > 0.0)
    {
        v.audio_duration = Some(secs);
        if latency_ns > 0 {
            v.rtfx = Some(secs / (latency_ns as f64 * NS_TO_S));
        }
    }
}

/// One record metric's base-unit values: one value, or the record's list of chunk gaps.
pub(super) enum Base {
    One(f64),
    List(Vec<f64>),
}

impl Base {
    pub(super) fn as_slice(&self) -> &[f64] {
        match self {
            Base::One(x) => std::slice::from_ref(x),
            Base::List(v) => v,
        }
    }
}

/// The fold columns (positions in the set's table) of the metrics [`base_values`] gives, in
/// its order: the first 27 of [`RECORD_METRICS`], whose last is `error_isl` (an error
/// record's own). Found at compile time.
const BASE_SLOTS: [usize; 27] = {
    assert!(RECORD_METRICS.len() == 28);
    assert!(slot_of(RECORD_METRICS[27]) == slot_of("error_isl"));
    let mut s = [0; 27];
    let mut i = 0;
    while i < s.len() {
        s[i] = slot_of(RECORD_METRICS[i]);
        i += 1;
    }
    s
};

/// The fold column of `inter_chunk_latency`, the one list among the record metrics.
pub(super) const ICL_SLOT: usize = slot_of("inter_chunk_latency");

/// The record's metrics as (fold column, base-unit values) pairs, in [`RECORD_METRICS`]
/// order; the column's row of the set's table names the metric. `inter_chunk_latency` is
/// the only list; every other entry has one value. One allocation for the pairs and one for
/// the gaps: this runs for every record, on the writer's thread.
pub(super) fn base_values(v: &Values) -> Vec<(usize, Base)> {
    let one = |x: Option<f64>| x.map(Base::One);
    let int = |x: Option<u64>| x.map(|x| Base::One(x as f64));
    let icl =
        (!v.icl_ns.is_empty()).then(|| Base::List(v.icl_ns.iter().map(|x| *x as f64).collect()));
    // Named as in RECORD_METRICS, whose order gives the columns (checked in debug builds).
    let all: [(&str, Option<Base>); 27] = [
        ("request_latency", int(v.latency_ns)),
        ("time_to_first_token", int(v.ttft_ns)),
        ("time_to_second_token", int(v.ttst_ns)),
        ("time_to_first_output_token", int(v.ttfo_ns)),
        ("inter_token_latency", one(v.itl_ns)),
        ("inter_chunk_latency", icl),
        ("decode_duration", int(v.decode_ns)),
        ("input_sequence_length", int(v.isl)),
        ("output_token_count", int(v.output)),
        ("reasoning_token_count", int(v.reasoning)),
        ("output_sequence_length", int(v.osl)),
        ("output_token_throughput_per_user", one(v.ottpu)),
        ("e2e_output_token_throughput", one(v.e2e)),
        ("prefill_throughput_per_user", one(v.prefill)),
        ("usage_prompt_tokens", int(v.usage.prompt)),
        ("usage_completion_tokens", int(v.usage.completion)),
        ("usage_total_tokens", int(v.usage.total)),
        ("usage_reasoning_tokens", int(v.usage.reasoning)),
        ("usage_prompt_tokens_diff_pct", one(v.prompt_diff)),
        ("usage_completion_tokens_diff_pct", one(v.completion_diff)),
        ("usage_reasoning_tokens_diff_pct", one(v.reasoning_diff)),
        ("osl_mismatch_diff_pct", one(v.osl_diff)),
        ("num_images", int(v.images)),
        ("image_throughput", one(v.image_throughput)),
        ("image_latency", one(v.image_latency)),
        ("audio_duration", one(v.audio_duration)),
        ("rtfx", one(v.rtfx)),
    ];
    let mut out = Vec::with_capacity(all.len());
    for (slot, (tag, x)) in BASE_SLOTS.into_iter().zip(all) {
        debug_assert_eq!(METRICS[slot].0, tag);
        if let Some(x) = x {
            out.push((slot, x));
        }
    }
    out
}

/// A per-record value in display units: ms for times, integers for token counts. `slot` is
/// the metric's row of the set's table (its fold column).
pub(super) fn record_metric(slot: usize, base: &[f64]) -> RecordMetric {
    let (tag, _, unit) = METRICS[slot];
    let value = if slot == ICL_SLOT {
        RecordMetricValue::List(base.iter().map(|x| x * NS_TO_MS).collect())
    } else if unit == "ms" {
        RecordMetricValue::Float(base[0] * NS_TO_MS)
    } else if unit == "tokens" || unit == "images" {
        RecordMetricValue::Int(base[0] as i64)
    } else {
        RecordMetricValue::Float(base[0])
    };
    RecordMetric {
        tag: std::borrow::Cow::Borrowed(tag),
        unit: std::borrow::Cow::Borrowed(unit),
        value,
    }
}

pub(super) fn result(tag: &str, value: MetricValue) -> MetricResult {
    let (header, unit) = describe(tag).unwrap_or(("", ""));
    MetricResult {
        tag: tag.to_string(),
        header: header.to_string(),
        unit: unit.to_string(),
        value,
    }
}

pub(super) fn scalar(tag: &str, value: f64) -> MetricResult {
    result(tag, MetricValue::Scalar { value })
}

/// Wall-clock ns as float64, the way AIPerf's column store holds them: the integer sum is
/// rounded once (to 256 ns at today's epoch). This quantization is part of the definition.
pub(super) fn wall_f64(anchor_unix_ns: u64, t_ns: u64) -> f64 {
    anchor_unix_ns.saturating_add(t_ns) as f64
}
