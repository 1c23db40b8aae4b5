//! `GET /metrics`: vLLM's Prometheus names and types, rendered from live counters on each
//! scrape exactly as Python's `prometheus_client` writes text format 0.0.4 (vLLM, SGLang and
//! TensorRT-LLM all use it), quirks included:
//!
//! - each counter `x` is written as `# TYPE x_total counter`, and every counter and histogram
//!   gets a separate gauge family `x_created` (unix seconds its series started);
//! - labels sorted by name (`engine`, `le`, `model_name`), so `le` is not last;
//! - HELP text with `\\` and `\n` escaped;
//! - numbers as `floatToGoString` writes them (`3.0`, `1.7e+09`-style past six integer digits);
//! - a histogram whose name ends `_total` (`vllm:iteration_tokens_total`);
//! - a NaN-valued gauge (`vllm:gpu_prefix_cache_hit_rate`: hits / queries with no queries).
//!
//! Observation rules follow vLLM: token counters count tokens as they are emitted (a
//! non-streaming answer's when it is sent); TTFT is observed at the first token; ITL once
//! per token after the first (an event carrying k tokens adds k equal shares of its gap);
//! e2e and queue time when the request finishes (a cut or abandoned stream finishes as
//! `abort`).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// vLLM's TTFT buckets, seconds.
pub(crate) const TTFT_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];
/// vLLM's inter-token latency buckets, seconds.
pub(crate) const ITL_BUCKETS: &[f64] = &[
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
    40.0, 80.0,
];
/// vLLM's request latency buckets (e2e, queue, prefill, decode), seconds.
pub(crate) const REQUEST_BUCKETS: &[f64] = &[
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
    480.0, 960.0, 1920.0, 7680.0,
];
/// vLLM's tokens-per-engine-step buckets.
pub(crate) const ITERATION_BUCKETS: &[f64] = &[
    1.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0,
];

/// The content type prometheus_client sends for text format 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A classic histogram on atomics: per-bucket counts (the last is `+Inf`) and the sum in
/// integer units (ns for seconds, 1 for tokens), so concurrent observers never lose updates.
pub(crate) struct Hist {
    bounds: &'static [f64],
    /// `bounds` in units, for the comparison on the hot path.
    bounds_units: Vec<u64>,
    units_per_one: f64,
    counts: Vec<AtomicU64>,
    sum: AtomicU64,
}

impl Hist {
    fn new(bounds: &'static [f64], units_per_one: f64) -> Hist {
        Hist {
            bounds,
            bounds_units: bounds
                .iter()
                .map(|b| (b * units_per_one).round() as u64)
                .collect(),
            units_per_one,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0),
        }
    }

    /// One observation of `v` units (`v <= le` counts in the bucket `le`).
    pub(crate) fn observe(&self, v: u64) {
        let i = self.bounds_units.partition_point(|&b| b < v);
        self.counts[i].fetch_add(1, Relaxed);
        self.sum.fetch_add(v, Relaxed);
    }

    /// Cumulative counts per bound (`+Inf` last, equal to the count) and the sum.
    pub(crate) fn snapshot(&self) -> (Vec<u64>, f64) {
        let mut acc = 0;
        let cum = self
            .counts
            .iter()
            .map(|c| {
                acc += c.load(Relaxed);
                acc
            })
            .collect();
        (cum, self.sum.load(Relaxed) as f64 / self.units_per_one)
    }

    fn reset(&self) {
        for c in &self.counts {
            c.store(0, Relaxed);
        }
        self.sum.store(0, Relaxed);
    }
}

/// Why a request finished, as vLLM's `finished_reason` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finish {
    Stop,
    Length,
    Abort,
}

const FINISH_LABELS: [&str; 3] = ["stop", "length", "abort"];

/// The engine's counters and histograms (the gauges are read from the scheduler).
pub(crate) struct Registry {
    pub(crate) prompt_tokens: AtomicU64,
    pub(crate) generation_tokens: AtomicU64,
    pub(crate) success: [AtomicU64; 3],
    pub(crate) preemptions: AtomicU64,
    pub(crate) iteration_tokens: Hist,
    pub(crate) ttft: Hist,
    pub(crate) itl: Hist,
    pub(crate) e2e: Hist,
    pub(crate) queue: Hist,
    /// Unix seconds the series started, as f64 bits.
    created: AtomicU64,
    /// Restarts so far (the reset fault).
    pub(crate) restarts: AtomicU64,
}

/// Nanoseconds per second: seconds histograms count in ns.
const NS: f64 = 1e9;

impl Registry {
    pub(crate) fn new(created_unix_s: f64) -> Registry {
        Registry {
            prompt_tokens: AtomicU64::new(0),
            generation_tokens: AtomicU64::new(0),
            success: Default::default(),
            preemptions: AtomicU64::new(0),
            iteration_tokens: Hist::new(ITERATION_BUCKETS, 1.0),
            ttft: Hist::new(TTFT_BUCKETS, NS),
            itl: Hist::new(ITL_BUCKETS, NS),
            e2e: Hist::new(REQUEST_BUCKETS, NS),
            queue: Hist::new(REQUEST_BUCKETS, NS),
            created: AtomicU64::new(created_unix_s.to_bits()),
            restarts: AtomicU64::new(0),
        }
    }

    pub(crate) fn finished(&self, f: Finish) {
        self.success[f as usize].fetch_add(1, Relaxed);
    }

    pub(crate) fn created(&self) -> f64 {
        f64::from_bits(self.created.load(Relaxed))
    }

    /// The counter-reset fault: everything from zero and a new start time, as a restarted
    /// process would show.
    pub(crate) fn restart(&self, now_unix_s: f64) {
        for c in [
            &self.prompt_tokens,
            &self.generation_tokens,
            &self.preemptions,
        ]
        .into_iter()
        .chain(self.success.iter())
        {
            c.store(0, Relaxed);
        }
        for h in [
            &self.iteration_tokens,
            &self.ttft,
            &self.itl,
            &self.e2e,
            &self.queue,
        ] {
            h.reset();
        }
        // A restart within the same float second still has to show a new start.
        let old = self.created();
        let new = if now_unix_s > old {
            now_unix_s
        } else {
            old + 1e-3
        };
        self.created.store(new.to_bits(), Relaxed);
        self.restarts.fetch_add(1, Relaxed);
    }
}

/// The gauges, read from the scheduler at scrape time.
pub(crate) struct Gauges {
    pub running: u64,
    pub waiting: u64,
    pub kv_usage: f64,
}

/// Renders the whole exposition for `model` (engine `0`).
pub(crate) fn render(reg: &Registry, g: &Gauges, model: &str) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let labels = format!("engine=\"0\",model_name=\"{}\"", escape_label(model));
    let created = go_float(reg.created());
    for (name, help, v) in [
        (
            "vllm:num_requests_running",
            "Number of requests in model execution batches.",
            g.running as f64,
        ),
        (
            "vllm:num_requests_waiting",
            "Number of requests waiting to be processed.",
            g.waiting as f64,
        ),
        (
            "vllm:kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage.",
            g.kv_usage,
        ),
        (
            "vllm:gpu_prefix_cache_hit_rate",
            "GPU prefix cache block hit rate (hits \\ queries).\nNaN: the simulated server has no prefix cache, so 0 hits over 0 queries.",
            f64::NAN,
        ),
    ] {
        family(&mut out, name, "gauge", help);
        sample(&mut out, name, &labels, v);
    }
    for (name, help, v) in [
        (
            "vllm:num_preemptions",
            "Cumulative number of preemption from the engine.",
            &reg.preemptions,
        ),
        (
            "vllm:prompt_tokens",
            "Number of prefill tokens processed.",
            &reg.prompt_tokens,
        ),
        (
            "vllm:generation_tokens",
            "Number of generation tokens processed.",
            &reg.generation_tokens,
        ),
    ] {
        let total = format!("{name}_total");
        family(&mut out, &total, "counter", help);
        sample(&mut out, &total, &labels, v.load(Relaxed) as f64);
        created_family(
            &mut out,
            name,
            help,
            std::slice::from_ref(&labels),
            &created,
        );
    }
    let name = "vllm:request_success";
    let help = "Count of successfully processed requests.";
    let total = format!("{name}_total");
    family(&mut out, &total, "counter", help);
    let mut children = Vec::new();
    for (i, reason) in FINISH_LABELS.iter().enumerate() {
        let l = format!(
            "engine=\"0\",finished_reason=\"{reason}\",model_name=\"{}\"",
            escape_label(model)
        );
        sample(&mut out, &total, &l, reg.success[i].load(Relaxed) as f64);
        children.push(l);
    }
    created_family(&mut out, name, help, &children, &created);
    for (name, help, h) in [
        (
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.\nSimulated server: one observation per token event, its tokens (plus the prompt on the first).",
            &reg.iteration_tokens,
        ),
        (
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            &reg.ttft,
        ),
        (
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            &reg.itl,
        ),
        (
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            &reg.e2e,
        ),
        (
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            &reg.queue,
        ),
    ] {
        family(&mut out, name, "histogram", help);
        let (cum, sum) = h.snapshot();
        let bucket = format!("{name}_bucket");
        for (i, c) in cum.iter().enumerate() {
            let le = h
                .bounds
                .get(i)
                .map_or_else(|| "+Inf".to_owned(), |b| go_float(*b));
            let l = format!(
                "engine=\"0\",le=\"{le}\",model_name=\"{}\"",
                escape_label(model)
            );
            sample(&mut out, &bucket, &l, *c as f64);
        }
        let count = cum.last().copied().unwrap_or(0);
        sample(&mut out, &format!("{name}_count"), &labels, count as f64);
        sample(&mut out, &format!("{name}_sum"), &labels, sum);
        created_family(
            &mut out,
            name,
            help,
            std::slice::from_ref(&labels),
            &created,
        );
    }
    out
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {}", escape_help(help));
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn sample(out: &mut String, name: &str, labels: &str, v: f64) {
    let _ = writeln!(out, "{name}{{{labels}}} {}", go_float(v));
}

fn created_family(out: &mut String, name: &str, help: &str, children: &[String], created: &str) {
    let c = format!("{name}_created");
    family(out, &c, "gauge", help);
    for l in children {
        let _ = writeln!(out, "{c}{{{l}}} {created}");
    }
}

/// HELP text: backslash and newline escaped (quotes are not).
pub(crate) fn escape_help(s: &str) -> String {
    s.replace('\\', r"\\").replace('\n', r"\n")
}

/// A label value: backslash, newline and double quote escaped.
pub(crate) fn escape_label(s: &str) -> String {
    s.replace('\\', r"\\")
        .replace('\n', r"\n")
        .replace('"', "\\\"")
}

/// A number as prometheus_client's `floatToGoString` writes it: Python's `repr`, except that a
/// positive number with more than six digits before the point switches to an exponent
/// (`1733000000.5` → `1.7330000005e+09`), and `+Inf`, `-Inf`, `NaN`.
pub(crate) fn go_float(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let s = py_repr(d);
    if d > 0.0
        && let Some(dot) = s.find('.')
        && dot > 6
    {
        let mantissa = format!("{}.{}{}", &s[..1], &s[1..dot], &s[dot + 1..]);
        let mantissa = mantissa.trim_end_matches(['0', '.']);
        return format!("{mantissa}e+0{}", dot - 1);
    }
    s
}

/// Python's `repr(float)`: the shortest round-trip digits, positional for exponents in
/// [-4, 16) (with `.0` on whole numbers), else `d.ddde±XX`.
fn py_repr(d: f64) -> String {
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sign = if d < 0.0 { "-" } else { "" };
    let sci = format!("{:e}", d.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    if !(-4..16).contains(&exp) {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let es = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{m}e{es}{:02}", exp.abs());
    }
    if exp < 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let e = exp as usize;
    if digits.len() <= e + 1 {
        format!("{sign}{digits}{}.0", "0".repeat(e + 1 - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..e + 1], &digits[e + 1..])
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
