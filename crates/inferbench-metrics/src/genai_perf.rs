//! GenAI-Perf's metric definitions, per release generation, as definition sets over records.
//!
//! GenAI-Perf scores Perf Analyzer's export, where a request has one timestamp per *response*
//! (one libcurl read callback). Here a response is the group of a record's events that share a
//! frame ([`Event::frame`]): the events completed by one read. Its text is the concatenation of
//! the events' `content` (GenAI-Perf reads only `delta.content` / `message.content` / `text`:
//! reasoning and tool calls are not text to it). Responses with empty text (role-only first
//! delta, `[DONE]`, usage-only and reasoning-only chunks) are dropped with their timestamps.
//!
//! Sets (documented in full in `docs/definitions/genai-perf.md`):
//!
//! * [`SET_0_0_13`] — GenAI-Perf 0.0.13 to 0.0.16: ITL v2 needs ≥ 2 responses and OSL > 1,
//!   `output_token_throughput_per_user`, p1/p5/p10 (written to files from 0.0.15 only).
//! * [`SET_0_0_10`] — 0.0.10 to 0.0.12: ITL v2 with OSL > 1 only, TTST and `request_count`,
//!   `output_token_throughput_per_request`, percentiles p25–p99.
//! * [`SET_0_0_4`] — 0.0.4 to 0.0.9: as 0.0.10 without TTST and `request_count`.
//! * [`SET_0_0_1`] — the ITL-v1 generation (0.0.1 to 0.0.3): pooled chunk-gap ITL, OSL the sum
//!   of per-chunk counts, `num_output_token` / `num_input_token`.
//!
//! Statistics follow numpy as GenAI-Perf calls it: `np.mean` (pairwise; integer lists are
//! cast to float64 in buffers of 8192), `np.percentile` (linear), `np.std` (population, over
//! the values in request order, not sorted); time metrics are computed in ns, then every
//! statistic is multiplied by `1/1e6`.

use inferbench_core::summary::{MetricResult, MetricValue, RecordMetric, RecordMetricValue};
use inferbench_core::{Event, Evidence, Phase, Record, Stats, Summary};

use crate::stats::{pairwise_sum, percentile_linear};
use crate::{Computed, MetricsError, PerRecord};

pub const SET_0_0_13: &str = "genai-perf-0.0.13";
pub const SET_0_0_10: &str = "genai-perf-0.0.10";
pub const SET_0_0_4: &str = "genai-perf-0.0.4";
pub const SET_0_0_1: &str = "genai-perf-0.0.1";

/// One `--goodput key:value` constraint: time metrics in ms (must not be exceeded),
/// throughput metrics in tokens/sec (must be reached).
#[derive(Clone, Debug, PartialEq)]
pub struct GoodputSlo {
    pub metric: String,
    pub value: f64,
}

/// Parses GenAI-Perf's `--goodput`: `metric:value` pairs separated by spaces (no metric is
/// checked here: GenAI-Perf reports an unknown one as it scores).
pub fn parse_goodput(spec: &str) -> Result<Vec<GoodputSlo>, MetricsError> {
    spec.split_whitespace()
        .map(|item| {
            let (m, v) = item.split_once(':').ok_or_else(|| {
                MetricsError::Invalid(format!("--goodput {item:?}: expected metric:value"))
            })?;
            let v: f64 = v.parse().map_err(|_| {
                MetricsError::Invalid(format!("--goodput {item:?}: {v:?} is not a number"))
            })?;
            Ok(GoodputSlo {
                metric: m.to_string(),
                value: v,
            })
        })
        .collect()
}

/// What changes from one generation to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Generation {
    /// 0.0.1–0.0.3: ITL v1.
    V1,
    /// 0.0.4–0.0.9.
    V4,
    /// 0.0.10–0.0.12.
    V10,
    /// 0.0.13–0.0.16.
    V13,
}

impl Generation {
    fn of(set: &str) -> Result<Self, MetricsError> {
        match set {
            SET_0_0_13 => Ok(Generation::V13),
            SET_0_0_10 => Ok(Generation::V10),
            SET_0_0_4 => Ok(Generation::V4),
            SET_0_0_1 => Ok(Generation::V1),
            _ => Err(MetricsError::UnknownDefinitions {
                name: set.to_string(),
                known: crate::registry::genai_perf_names(),
            }),
        }
    }
}

/// One response as GenAI-Perf sees it: the time of the read and the text of its events.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub t_ns: u64,
    pub text: String,
}

/// The responses of a record that GenAI-Perf keeps: events grouped by the frame that completed
/// them (one group = one PA response), text = their `content` joined, empty-text groups dropped.
pub fn kept_responses(r: &Record) -> Vec<Response> {
    let mut out: Vec<Response> = Vec::new();
    let mut current: Option<(u32, Response)> = None;
    for e in &r.events {
        match &mut current {
            Some((frame, resp)) if *frame == e.frame => push_text(&mut resp.text, e),
            _ => {
                if let Some((_, done)) = current.take()
                    && !done.text.is_empty()
                {
                    out.push(done);
                }
                let mut resp = Response {
                    t_ns: e.t_ns,
                    text: String::new(),
                };
                push_text(&mut resp.text, e);
                current = Some((e.frame, resp));
            }
        }
    }
    if let Some((_, done)) = current
        && !done.text.is_empty()
    {
        out.push(done);
    }
    out
}

fn push_text(buf: &mut String, e: &Event) {
    if let Some(c) = &e.content {
        buf.push_str(c);
    }
}

/// Per-request values (ns, tokens) of one kept request.
#[derive(Clone, Debug, Default)]
struct RequestValues {
    start: u64,
    last: u64,
    latency: i64,
    ttft: i64,
    ttst: Option<i64>,
    isl: Option<u64>,
    osl: u64,
    itl: Option<i64>,
    /// v1: every chunk-gap sample of this request.
    itl_v1: Vec<i64>,
    /// 0.0.13: 1 / (ITL / 1e9).
    per_user: Option<f64>,
    /// ≤ 0.0.12: OSL / (latency / 1e9).
    per_request: Option<f64>,
}

fn signed_gap(later: u64, earlier: u64) -> i64 {
    (later as i128 - earlier as i128) as i64
}

/// GenAI-Perf's `!`-prefix trick for a chunk's token count: encode `"!" + text`, drop the first
/// id (so that a leading space is counted as in running text).
fn chunk_tokens(text: &str, count_tokens: &dyn Fn(&str) -> u64) -> u64 {
    count_tokens(&format!("!{text}")).saturating_sub(1)
}

fn request_values(
    g: Generation,
    r: &Record,
    resp: &[Response],
    count_tokens: &dyn Fn(&str) -> u64,
) -> Option<RequestValues> {
    let first = resp.first()?;
    let last = resp.last()?;
    let latency = signed_gap(last.t_ns, r.start_ns);
    let ttft = signed_gap(first.t_ns, r.start_ns);
    let mut v = RequestValues {
        start: r.start_ns,
        last: last.t_ns,
        latency,
        ttft,
        isl: r.tokens.input,
        ..Default::default()
    };
    if g >= Generation::V10 && resp.len() > 1 {
        v.ttst = Some(signed_gap(resp[1].t_ns, first.t_ns));
    }
    if g == Generation::V1 {
        let counts: Vec<u64> = resp
            .iter()
            .map(|x| chunk_tokens(&x.text, count_tokens))
            .collect();
        v.osl = counts.iter().sum();
        for (i, pair) in resp.windows(2).enumerate() {
            let n = counts[i + 1].max(1);
            let gap = signed_gap(pair[1].t_ns, pair[0].t_ns);
            v.itl_v1.push(round_div(gap, n));
        }
    } else {
        let text: String = resp.iter().map(|x| x.text.as_str()).collect();
        v.osl = count_tokens(&text);
        let needs_two = g == Generation::V13;
        if v.osl > 1 && (!needs_two || resp.len() > 1) {
            let itl = round_div(latency - ttft, v.osl - 1);
            v.itl = Some(itl);
            // GenAI-Perf would divide by zero on an ITL of 0 ns; we leave the sample out.
            if g == Generation::V13 && itl != 0 {
                v.per_user = Some(1.0 / (itl as f64 / 1e9));
            }
        }
    }
    if g < Generation::V13 && latency != 0 {
        v.per_request = Some(v.osl as f64 / (latency as f64 / 1e9));
    }
    Some(v)
}

/// Python's `round(a / b)`: a float64 true division, rounded half to even.
fn round_div(a: i64, b: u64) -> i64 {
    (a as f64 / b as f64).round_ties_even() as i64
}

/// `np.mean` of a list of Python ints: numpy casts the int64 array to float64 in buffers of
/// 8192 elements and sums each buffer pairwise into one accumulator.
fn mean_of_ints(v: &[f64]) -> f64 {
    sum_of_ints(v) / v.len() as f64
}

fn sum_of_ints(v: &[f64]) -> f64 {
    let mut acc = -0.0;
    for chunk in v.chunks(8192) {
        acc += pairwise_sum(chunk);
    }
    acc
}

/// `np.std` (ddof 0) in the order given; the mean as [`mean_of_ints`] for integer data.
fn std_in_order(v: &[f64], ints: bool) -> f64 {
    let m = if ints {
        mean_of_ints(v)
    } else {
        pairwise_sum(v) / v.len() as f64
    };
    let dev: Vec<f64> = v.iter().map(|x| (x - m) * (x - m)).collect();
    (pairwise_sum(&dev) / v.len() as f64).sqrt()
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// GenAI-Perf's `Statistics` for one list: avg, linear percentiles, min, max, population std,
/// all on the raw values, then multiplied by `scale`. p1/p5/p10 only when `low_percentiles`.
fn gp_stats(values: &[f64], ints: bool, low_percentiles: bool, scale: f64) -> Stats {
    let n = values.len();
    let sum = if ints {
        sum_of_ints(values)
    } else {
        pairwise_sum(values)
    };
    let avg = sum / n as f64;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let p = |q: f64| finite(percentile_linear(&sorted, q) * scale);
    let low = |q: f64| if low_percentiles { p(q) } else { None };
    Stats {
        avg: finite(avg * scale),
        p1: low(1.0),
        p5: low(5.0),
        p10: low(10.0),
        p25: p(25.0),
        p50: p(50.0),
        p75: p(75.0),
        p90: p(90.0),
        p95: p(95.0),
        p99: p(99.0),
        min: finite(sorted[0] * scale),
        max: finite(sorted[n - 1] * scale),
        std: finite(std_in_order(values, ints) * scale),
        count: n as u64,
        sum: finite(sum * scale),
    }
}

/// GenAI-Perf's CSV/console title of a JSON key: `str.replace("_", " ").title()`.
pub fn title(key: &str) -> String {
    key.split('_')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn scalar(tag: &str, unit: &str, value: f64) -> MetricResult {
    MetricResult {
        tag: tag.to_string(),
        header: title(tag),
        unit: unit.to_string(),
        value: MetricValue::Scalar { value },
    }
}

fn dist(tag: &str, unit: &str, stats: Stats) -> MetricResult {
    MetricResult {
        tag: tag.to_string(),
        header: title(tag),
        unit: unit.to_string(),
        value: MetricValue::Distribution { stats },
    }
}

const NS_TO_MS: f64 = 1.0 / 1e6;

/// Compute `set` over the records of `phase`. `count_tokens` counts tokens of a text as
/// GenAI-Perf's tokenizer wrapper does (`add_special_tokens=False`); ISL is taken from the
/// records' `tokens.input`.
pub fn compute(
    set: &str,
    evidence: &Evidence,
    phase: Phase,
    count_tokens: &dyn Fn(&str) -> u64,
) -> Result<Computed, MetricsError> {
    compute_with_goodput(set, evidence, phase, count_tokens, &[])
}

/// [`compute`] with `--goodput` constraints (`request_goodput`).
pub fn compute_with_goodput(
    set: &str,
    evidence: &Evidence,
    phase: Phase,
    count_tokens: &dyn Fn(&str) -> u64,
    slos: &[GoodputSlo],
) -> Result<Computed, MetricsError> {
    let g = Generation::of(set)?;
    let mut exported = 0u64;
    let mut kept: Vec<RequestValues> = Vec::new();
    let mut per_record = Vec::new();
    for r in evidence.records_of(phase) {
        // PA aborts the run at the first failed request, so GenAI-Perf never scores one: an
        // error (or cancelled) record is left out of every metric, numerator included.
        if r.error.is_some() || r.cancelled {
            per_record.push(PerRecord {
                id: r.id,
                metrics: Vec::new(),
            });
            continue;
        }
        exported += 1;
        let resp = kept_responses(r);
        let values = request_values(g, r, &resp, count_tokens);
        per_record.push(PerRecord {
            id: r.id,
            metrics: values
                .as_ref()
                .map(|v| record_metrics(g, v))
                .unwrap_or_default(),
        });
        if let Some(v) = values {
            kept.push(v);
        }
    }
    Ok(Computed {
        summary: summarize(g, set, exported, &kept, slos),
        per_record,
    })
}

fn record_metrics(g: Generation, v: &RequestValues) -> Vec<RecordMetric> {
    let ms = |tag: &'static str, ns: i64| RecordMetric {
        tag: tag.into(),
        unit: "ms".into(),
        value: RecordMetricValue::Float(ns as f64 * NS_TO_MS),
    };
    let mut out = vec![
        ms("request_latency", v.latency),
        ms("time_to_first_token", v.ttft),
    ];
    if let Some(t) = v.ttst {
        out.push(ms("time_to_second_token", t));
    }
    if let Some(t) = v.itl {
        out.push(ms("inter_token_latency", t));
    }
    if g == Generation::V1 && !v.itl_v1.is_empty() {
        out.push(RecordMetric {
            tag: "inter_token_latency".into(),
            unit: "ms".into(),
            value: RecordMetricValue::List(v.itl_v1.iter().map(|&x| x as f64 * NS_TO_MS).collect()),
        });
    }
    let (osl_tag, isl_tag) = length_tags(g);
    out.push(RecordMetric {
        tag: osl_tag.into(),
        unit: "tokens".into(),
        value: RecordMetricValue::Int(v.osl as i64),
    });
    if let Some(isl) = v.isl {
        out.push(RecordMetric {
            tag: isl_tag.into(),
            unit: "tokens".into(),
            value: RecordMetricValue::Int(isl as i64),
        });
    }
    out
}

fn length_tags(g: Generation) -> (&'static str, &'static str) {
    if g == Generation::V1 {
        ("num_output_token", "num_input_token")
    } else {
        ("output_sequence_length", "input_sequence_length")
    }
}

/// Keys GenAI-Perf accepts in `--goodput`, and whether each is a throughput ("≥") metric.
fn slo_kind(g: Generation, key: &str) -> Option<bool> {
    match key {
        "time_to_first_token" | "inter_token_latency" | "request_latency" => Some(false),
        "time_to_second_token" if g >= Generation::V10 => Some(false),
        "output_token_throughput_per_user" if g == Generation::V13 => Some(true),
        "output_token_throughput_per_request" if g < Generation::V13 => Some(true),
        _ => None,
    }
}

fn metric_list(g: Generation, kept: &[RequestValues], key: &str) -> Vec<f64> {
    let ns = |f: fn(&RequestValues) -> Option<i64>| -> Vec<f64> {
        kept.iter().filter_map(f).map(|x| x as f64).collect()
    };
    match key {
        "time_to_first_token" => ns(|v| Some(v.ttft)),
        "request_latency" => ns(|v| Some(v.latency)),
        "time_to_second_token" => ns(|v| v.ttst),
        "inter_token_latency" if g == Generation::V1 => kept
            .iter()
            .flat_map(|v| v.itl_v1.iter().map(|&x| x as f64))
            .collect(),
        "inter_token_latency" => ns(|v| v.itl),
        "output_token_throughput_per_user" => kept.iter().filter_map(|v| v.per_user).collect(),
        "output_token_throughput_per_request" => {
            kept.iter().filter_map(|v| v.per_request).collect()
        }
        _ => Vec::new(),
    }
}

/// Good requests, with GenAI-Perf's positional pairing: each constraint's list holds only the
/// requests that have that metric, and the lists are zipped by position (truncated to the
/// shortest), not matched by request. `None` when a key is unknown (GenAI-Perf reports -1).
fn good_count(g: Generation, kept: &[RequestValues], slos: &[GoodputSlo]) -> Option<u64> {
    let mut time = Vec::new();
    let mut thr = Vec::new();
    for s in slos {
        let is_thr = slo_kind(g, &s.metric)?;
        let list = metric_list(g, kept, &s.metric);
        if is_thr {
            thr.push((list, s.value));
        } else {
            // SLO in ms, values in ns.
            time.push((list, s.value * 1e6));
        }
    }
    let len = |group: &[(Vec<f64>, f64)]| group.iter().map(|(l, _)| l.len()).min();
    let ok_at = |i: usize| {
        time.iter().all(|(l, t)| l.get(i).is_some_and(|x| *x <= *t))
            && thr.iter().all(|(l, t)| l.get(i).is_some_and(|x| *x >= *t))
    };
    let n = if g == Generation::V13 {
        // One zip over every constraint's list.
        len(&time).into_iter().chain(len(&thr)).min().unwrap_or(0)
    } else {
        // Up to 0.0.12 time and throughput lists are zipped apart; requests are counted over
        // the throughput tuples when a throughput SLO is given, else over the time tuples.
        if thr.is_empty() {
            len(&time).unwrap_or(0)
        } else {
            len(&thr).unwrap_or(0)
        }
    };
    Some((0..n).filter(|&i| ok_at(i)).count() as u64)
}

fn summarize(
    g: Generation,
    set: &str,
    exported: u64,
    kept: &[RequestValues],
    slos: &[GoodputSlo],
) -> Summary {
    let low = g == Generation::V13;
    let mut metrics = Vec::new();
    let duration_s = match (
        kept.iter().map(|v| v.start).min(),
        kept.iter().map(|v| v.last).max(),
    ) {
        (Some(lo), Some(hi)) => Some(signed_gap(hi, lo) as f64 / 1e9),
        _ => None,
    };
    let time_dist = |tag: &str, vals: Vec<f64>| -> Option<MetricResult> {
        (!vals.is_empty()).then(|| dist(tag, "ms", gp_stats(&vals, true, low, NS_TO_MS)))
    };
    let ints = |f: fn(&RequestValues) -> Option<i64>| -> Vec<f64> {
        kept.iter().filter_map(f).map(|x| x as f64).collect()
    };
    let osl_total: u64 = kept.iter().map(|v| v.osl).sum();

    if let Some(d) = duration_s {
        metrics.push(scalar(
            "request_throughput",
            "requests/sec",
            exported as f64 / d,
        ));
    }
    metrics.extend(time_dist("request_latency", ints(|v| Some(v.latency))));
    if !slos.is_empty()
        && let Some(d) = duration_s
    {
        let value = match good_count(g, kept, slos) {
            Some(n) => n as f64 / d,
            None => -1.0,
        };
        metrics.push(scalar("request_goodput", "requests/sec", value));
    }
    if g >= Generation::V10 && !kept.is_empty() {
        metrics.push(scalar("request_count", "count", kept.len() as f64));
    }
    metrics.extend(time_dist("time_to_first_token", ints(|v| Some(v.ttft))));
    if g >= Generation::V10 {
        metrics.extend(time_dist("time_to_second_token", ints(|v| v.ttst)));
    }
    // GenAI-Perf drops ITL when its values sum to 0.
    let itl = metric_list(g, kept, "inter_token_latency");
    if itl.iter().sum::<f64>() != 0.0 {
        metrics.extend(time_dist("inter_token_latency", itl));
    }
    if let Some(d) = duration_s {
        metrics.push(scalar(
            "output_token_throughput",
            "tokens/sec",
            osl_total as f64 / d,
        ));
    }
    let (tag, list) = if g == Generation::V13 {
        (
            "output_token_throughput_per_user",
            metric_list(g, kept, "output_token_throughput_per_user"),
        )
    } else {
        (
            "output_token_throughput_per_request",
            metric_list(g, kept, "output_token_throughput_per_request"),
        )
    };
    if !list.is_empty() {
        let unit = if g == Generation::V13 {
            "tokens/sec/user"
        } else {
            "tokens/sec"
        };
        metrics.push(dist(tag, unit, gp_stats(&list, false, low, 1.0)));
    }
    let (osl_tag, isl_tag) = length_tags(g);
    let osl: Vec<f64> = kept.iter().map(|v| v.osl as f64).collect();
    if !osl.is_empty() {
        metrics.push(dist(osl_tag, "tokens", gp_stats(&osl, true, low, 1.0)));
    }
    let isl: Vec<f64> = kept
        .iter()
        .filter_map(|v| v.isl)
        .map(|x| x as f64)
        .collect();
    if !isl.is_empty() {
        metrics.push(dist(isl_tag, "tokens", gp_stats(&isl, true, low, 1.0)));
    }
    Summary {
        definitions: set.to_string(),
        metrics,
        error_summary: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_follow_python_title_case() {
        assert_eq!(title("time_to_first_token"), "Time To First Token");
        assert_eq!(
            title("output_token_throughput_per_user"),
            "Output Token Throughput Per User"
        );
    }

    #[test]
    fn round_div_is_half_to_even() {
        assert_eq!(round_div(5, 2), 2);
        assert_eq!(round_div(7, 2), 4);
        assert_eq!(round_div(-5, 2), -2);
        assert_eq!(round_div(10, 3), 3);
    }

    #[test]
    fn integer_means_sum_in_buffers() {
        // Below one buffer the buffered mean is the plain pairwise mean.
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        assert_eq!(mean_of_ints(&v), 50.5);
        let big: Vec<f64> = (0..20000).map(|x| x as f64).collect();
        assert_eq!(mean_of_ints(&big), 9999.5);
    }

    #[test]
    fn unknown_set_is_an_error_listing_the_sets() {
        assert!(Generation::of("genai-perf-9").is_err());
        assert_eq!(Generation::of(SET_0_0_10), Ok(Generation::V10));
    }
}
