//! AIPerf's per-series statistics over a phase (`export_stats.py`) and its per-endpoint
//! summaries (`accumulator.py`): which samples a phase takes, its reference sample, its
//! clamped deltas, and the endpoint's collection info.

use super::Meta;
use super::numpy;
use super::polynomial;
use super::series::{Endpoint, Kind, Phase, Series};

/// An inclusive `[start, end]` range of wall-clock ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    pub start: i64,
    pub end: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Stats {
    Counter {
        total: f64,
        rate: f64,
        /// `last − reference` before AIPerf clamps it at 0, and whether a drop was seen.
        raw: f64,
        resets: usize,
    },
    /// avg, min, max, std, p1…p99.
    Gauge([f64; 13]),
    Histogram {
        count: i64,
        /// None when the count did not grow (AIPerf then writes only `count`).
        rest: Option<HistRest>,
        /// Bucket deltas, None when a bucket went down (AIPerf omits them).
        buckets: Option<Vec<(String, i64)>>,
        /// The unclamped count delta.
        raw_count: f64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HistRest {
    pub sum: f64,
    pub avg: f64,
    pub count_rate: Option<f64>,
    pub sum_rate: Option<f64>,
    pub estimates: Option<[f64; 9]>,
}

#[derive(Clone, Debug)]
pub(crate) struct SeriesOut {
    pub labels: Vec<(String, String)>,
    pub stats: Stats,
}

#[derive(Clone, Debug)]
pub(crate) struct MetricOut {
    pub name: String,
    pub kind: Kind,
    pub description: String,
    pub series: Vec<SeriesOut>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Info {
    pub total_fetches: usize,
    pub first_fetch_ns: i64,
    pub last_fetch_ns: i64,
    pub avg_fetch_latency_ms: f64,
    pub unique_updates: usize,
    pub first_update_ns: i64,
    pub last_update_ns: i64,
    pub duration_seconds: f64,
    pub avg_update_interval_ms: f64,
    pub median_update_interval_ms: Option<f64>,
}

#[derive(Clone, Debug)]
pub(crate) struct EndpointOut {
    pub url: String,
    pub info: Info,
    pub metrics: Vec<MetricOut>,
}

/// Everything AIPerf's exporters read.
#[derive(Clone, Debug)]
pub(crate) struct Results {
    pub endpoints: Vec<String>,
    pub start_ns: i64,
    pub end_ns: i64,
    pub warmup_range: Option<Range>,
    pub profiling: Vec<EndpointOut>,
    pub warmup: Vec<EndpointOut>,
}

/// AIPerf's results for the run; None when it would write no server-metrics file.
pub(crate) fn results(endpoints: &[Endpoint], meta: &Meta<'_>) -> Option<Results> {
    if endpoints.is_empty() {
        return None;
    }
    let wall = |ns: u64| (meta.anchor_unix_ns + ns) as i64;
    let start_ns = wall(meta.windows.profiling.start_ns);
    let end_ns = wall(meta.windows.profiling.end_ns);
    let mut profiling = phase_summaries(endpoints, Phase::Profiling);
    if profiling.is_empty() {
        profiling = time_summaries(
            endpoints,
            Range {
                start: start_ns,
                end: end_ns,
            },
            true,
        );
    }
    if profiling.is_empty() {
        return None;
    }
    // The warmup window ends at the last warmup-tagged scrape when that came later (the
    // end-of-warmup scrape lands after the phase completed).
    let last_warmup = endpoints
        .iter()
        .flat_map(|e| e.warmup_ts.iter())
        .copied()
        .max();
    let warmup_ctx = meta
        .windows
        .warmup
        .map(|w| (wall(w.start_ns), wall(w.end_ns)));
    let warmup_end = match (warmup_ctx, last_warmup) {
        (Some((_, e)), Some(l)) => Some(e.max(l)),
        (Some((_, e)), None) => Some(e),
        (None, l) => l,
    };
    let mut warmup = Vec::new();
    if let Some((ws, we)) = warmup_ctx.filter(|(s, e)| s < e) {
        warmup = phase_summaries(endpoints, Phase::Warmup);
        if warmup.is_empty() {
            let end = warmup_end.unwrap_or(we);
            warmup = time_summaries(endpoints, Range { start: ws, end }, false);
        }
    }
    let warmup_range = match (warmup_ctx, warmup_end) {
        (Some((s, _)), Some(e)) if s < e => Some(Range { start: s, end: e }),
        _ => None,
    };
    Some(Results {
        endpoints: endpoints.iter().map(|e| e.url.clone()).collect(),
        start_ns,
        end_ns,
        warmup_range,
        profiling,
        warmup,
    })
}

/// Summaries from the samples tagged with `phase` (plus the one before the first of them,
/// the reference), each series over its own first..last tagged sample.
fn phase_summaries(endpoints: &[Endpoint], phase: Phase) -> Vec<EndpointOut> {
    let mut out = Vec::new();
    for ep in endpoints {
        let mut metrics: Vec<MetricOut> = Vec::new();
        for e in &ep.entries {
            let idx: Vec<usize> = (0..e.data.len())
                .filter(|&i| e.data.phase[i] == phase)
                .collect();
            let Some(&first) = idx.first() else {
                continue;
            };
            let mut take = Vec::with_capacity(idx.len() + 1);
            if first > 0 {
                take.push(first - 1);
            }
            take.extend(&idx);
            let sub = subset(&e.data, &take);
            let start = e.data.ts[first];
            let last = e.data.ts[*idx.last().unwrap_or(&first)];
            let range = Range {
                start,
                end: if last > start { last } else { start + 1 },
            };
            if let Some(stats) = compute(e.kind, &sub, range) {
                push(&mut metrics, e, stats);
            }
        }
        if metrics.is_empty() {
            continue;
        }
        out.push(EndpointOut {
            url: ep.url.clone(),
            info: info(ep),
            metrics,
        });
    }
    out
}

/// Summaries over a time range (AIPerf's fallback when no scrape carried the phase).
fn time_summaries(endpoints: &[Endpoint], range: Range, include_final: bool) -> Vec<EndpointOut> {
    let mut out = Vec::new();
    for ep in endpoints {
        let end = if include_final {
            range.end.max(ep.last_update_ns())
        } else {
            range.end
        };
        if range.start >= end {
            continue;
        }
        let r = Range {
            start: range.start,
            end,
        };
        let mut metrics = Vec::new();
        for e in &ep.entries {
            if let Some(stats) = compute(e.kind, &e.data, r) {
                push(&mut metrics, e, stats);
            }
        }
        out.push(EndpointOut {
            url: ep.url.clone(),
            info: info(ep),
            metrics,
        });
    }
    out
}

fn push(metrics: &mut Vec<MetricOut>, e: &super::series::Entry, stats: Stats) {
    let s = SeriesOut {
        labels: e.labels.clone(),
        stats,
    };
    match metrics.iter_mut().find(|m| m.name == e.name) {
        Some(m) => m.series.push(s),
        None => metrics.push(MetricOut {
            name: e.name.clone(),
            kind: e.kind,
            description: e.description.clone(),
            series: vec![s],
        }),
    }
}

fn subset(s: &Series, take: &[usize]) -> Series {
    let pick = |v: &Vec<f64>| {
        if v.is_empty() {
            Vec::new()
        } else {
            take.iter().map(|&i| v[i]).collect()
        }
    };
    Series {
        ts: take.iter().map(|&i| s.ts[i]).collect(),
        phase: take.iter().map(|&i| s.phase[i]).collect(),
        values: pick(&s.values),
        sums: pick(&s.sums),
        counts: pick(&s.counts),
        les: s.les.clone(),
        buckets: if s.buckets.is_empty() {
            Vec::new()
        } else {
            take.iter().map(|&i| s.buckets[i].clone()).collect()
        },
    }
}

/// The last sample before the range start (numpy `searchsorted(..., "left") - 1`).
fn reference(ts: &[i64], r: Range) -> Option<usize> {
    let pos = ts.partition_point(|&t| t < r.start);
    pos.checked_sub(1)
}

/// The samples inside `[start, end]`.
fn inside(ts: &[i64], r: Range) -> std::ops::Range<usize> {
    let a = ts.partition_point(|&t| t < r.start);
    let b = ts.partition_point(|&t| t <= r.end);
    a..b.max(a)
}

pub(crate) fn compute(kind: Kind, s: &Series, r: Range) -> Option<Stats> {
    match kind {
        Kind::Counter => counter(s, r),
        Kind::Gauge | Kind::Unknown => gauge(s, r),
        Kind::Histogram => histogram(s, r),
    }
}

fn counter(s: &Series, r: Range) -> Option<Stats> {
    let w = inside(&s.ts, r);
    if w.is_empty() {
        return None;
    }
    let (ref_v, ref_t) = match reference(&s.ts, r) {
        Some(i) => (s.values[i], s.ts[i]),
        None => (s.values[w.start], s.ts[w.start]),
    };
    let last = w.end - 1;
    let raw = s.values[last] - ref_v;
    let duration = s.ts[last] - ref_t;
    let resets = s.values[w.clone()]
        .windows(2)
        .filter(|p| p[1] < p[0])
        .count();
    let total = raw.max(0.0);
    let secs = if duration > 0 {
        duration as f64 / 1e9
    } else {
        0.0
    };
    let rate = if secs > 0.0 { total / secs } else { 0.0 };
    Some(Stats::Counter {
        total,
        rate,
        raw,
        resets,
    })
}

fn gauge(s: &Series, r: Range) -> Option<Stats> {
    let w = inside(&s.ts, r);
    if w.is_empty() {
        return None;
    }
    let v = &s.values[w];
    let std = if v.len() > 1 { numpy::std(v, 1) } else { 0.0 };
    let p = numpy::percentiles(v);
    let mut out = [0.0; 13];
    out[0] = numpy::mean(v);
    out[1] = numpy::min(v);
    out[2] = numpy::max(v);
    out[3] = std;
    out[4..].copy_from_slice(&p);
    Some(Stats::Gauge(out))
}

fn bucket_deltas(s: &Series, from: usize, to: usize) -> Option<Vec<(String, i64)>> {
    let mut out = Vec::with_capacity(s.les.len());
    for (j, le) in s.les.iter().enumerate() {
        let d = s.buckets[to][j] - s.buckets[from][j];
        if d < 0.0 {
            return None;
        }
        out.push((le.clone(), d as i64));
    }
    Some(out)
}

fn histogram(s: &Series, r: Range) -> Option<Stats> {
    if s.len() == 0 {
        return None;
    }
    let reference = reference(&s.ts, r);
    let end = s.ts.partition_point(|&t| t <= r.end);
    let last = end.checked_sub(1)?;
    let from = reference.unwrap_or(0);
    let raw_sum = s.sums[last] - s.sums[from];
    let raw_count = s.counts[last] - s.counts[from];
    let sum = raw_sum.max(0.0);
    let count = (raw_count as i64).max(0);
    let duration = s.ts[last] - s.ts[from];
    let buckets = bucket_deltas(s, from, last);
    if count == 0 {
        return Some(Stats::Histogram {
            count: 0,
            rest: None,
            buckets,
            raw_count,
        });
    }
    let avg = sum / count as f64;
    let secs = if duration > 0 {
        duration as f64 / 1e9
    } else {
        0.0
    };
    let (count_rate, sum_rate) = if secs > 0.0 {
        (Some(count as f64 / secs), Some(sum / secs))
    } else {
        (None, None)
    };
    let estimates = match &buckets {
        Some(b) if !b.is_empty() => {
            let learned = polynomial::accumulate_bucket_statistics(
                &s.sums, &s.counts, &s.les, &s.buckets, from,
            );
            let deltas: Vec<(String, f64)> =
                b.iter().map(|(l, c)| (l.clone(), *c as f64)).collect();
            polynomial::estimated_percentiles(&deltas, &learned, sum, count)
        }
        _ => None,
    };
    Some(Stats::Histogram {
        count,
        rest: Some(HistRest {
            sum,
            avg,
            count_rate,
            sum_rate,
            estimates,
        }),
        buckets,
        raw_count,
    })
}

/// The endpoint's collection info over every fetch (AIPerf's profiling export).
fn info(ep: &Endpoint) -> Info {
    let mut updates = ep.update_ts.clone();
    updates.sort_unstable();
    let n = updates.len();
    let first_update_ns = updates.first().copied().unwrap_or(0);
    let last_update_ns = updates.last().copied().unwrap_or(0);
    let duration_seconds = if n > 0 {
        (last_update_ns - first_update_ns) as f64 / 1e9
    } else {
        0.0
    };
    let avg_update_interval_ms = if n > 1 {
        duration_seconds * 1000.0 / (n - 1) as f64
    } else {
        0.0
    };
    let median_update_interval_ms = (n > 1).then(|| {
        let gaps: Vec<i64> = updates.windows(2).map(|w| w[1] - w[0]).collect();
        numpy::median_i64(&gaps) / 1e6
    });
    let lat: i64 = ep.fetch_latency.iter().map(|(_, l)| l).sum();
    let avg_fetch_latency_ms = if ep.fetch_latency.is_empty() {
        0.0
    } else {
        lat as f64 / ep.fetch_latency.len() as f64 / 1e6
    };
    Info {
        total_fetches: ep.fetch_ts.len(),
        first_fetch_ns: ep.fetch_ts.iter().copied().min().unwrap_or(0),
        last_fetch_ns: ep.fetch_ts.iter().copied().max().unwrap_or(0),
        avg_fetch_latency_ms,
        unique_updates: n,
        first_update_ns,
        last_update_ns,
        duration_seconds,
        avg_update_interval_ms,
        median_update_interval_ms,
    }
}
