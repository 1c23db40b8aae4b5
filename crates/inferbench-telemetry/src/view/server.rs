//! The server view: a target's known names by role, each series' own increase summed (D4).

use super::{GaugeBrief, HistBrief, ServerView};
use crate::expo::MetricType;
use crate::names::{self, KnownName, Role, ServerKind, Unit};
use crate::quantile::{self, Bucket};
use crate::window::{FamilyAnalysis, SeriesStats, TargetAnalysis};

/// The family of a role: the first of the server's known names for it (catalogue order) that
/// the target exposes, a counter also under its OpenMetrics family name (without `_total`).
fn find(
    t: &TargetAnalysis,
    server: ServerKind,
    role: Role,
) -> Option<(&FamilyAnalysis, &'static KnownName)> {
    names::KNOWN
        .iter()
        .filter(|k| k.server == server && k.role == role)
        .find_map(|k| {
            let om = (k.kind == MetricType::Counter)
                .then(|| k.name.strip_suffix("_total"))
                .flatten();
            t.family(k.name)
                .or_else(|| om.and_then(|n| t.family(n)))
                .map(|f| (f, k))
        })
}

/// A work count over the bracket: counters by their exact increase, a histogram (TGI's
/// generated tokens) by its `_sum` increase, each series first, then summed. Also the resets
/// seen. None for a gauge (SGLang's retracted requests are a level, not a count).
fn total(f: &FamilyAnalysis) -> Option<(f64, u32)> {
    let mut out: Option<(f64, u32)> = None;
    for s in &f.series {
        let (v, r) = match &s.stats {
            SeriesStats::Counter(c) => (c.increase, c.resets),
            SeriesStats::Histogram(h) => (h.sum, h.resets),
            _ => continue,
        };
        let acc = out.get_or_insert((0.0, 0));
        acc.0 += v;
        acc.1 += r;
    }
    out
}

/// A gauge summed across series: time-weighted means add; max and change from the family's
/// per-scrape total (or the one series).
pub(super) fn gauge_brief(f: &FamilyAnalysis, scale: f64) -> Option<GaugeBrief> {
    let gauges: Vec<_> = f
        .series
        .iter()
        .filter_map(|s| match &s.stats {
            SeriesStats::Gauge(g) => Some(g),
            _ => None,
        })
        .collect();
    let whole = f.total.as_ref().or(match gauges.as_slice() {
        [one] => Some(*one),
        _ => None,
    })?;
    let tw: Option<f64> = gauges
        .iter()
        .filter_map(|g| g.time_weighted_mean)
        .reduce(|a, b| a + b);
    Some(GaugeBrief {
        time_weighted_mean: tw.map(|v| v * scale),
        max: whole.max.map(|v| v * scale),
        change: whole.change.map(|v| v * scale),
    })
}

fn ms_per(unit: Unit) -> f64 {
    match unit {
        Unit::Seconds => 1e3,
        Unit::Microseconds => 1e-3,
        _ => 1.0,
    }
}

/// A latency histogram over every series: bucket increases with the same bound added,
/// Σsum/Σcount exact, estimates from the merged buckets. No estimates when any series' own
/// quantiles were dropped (a bucket fell without a reset).
fn hist_brief(f: &FamilyAnalysis, unit: Unit) -> Option<HistBrief> {
    let scale = ms_per(unit);
    let (mut count, mut sum, mut any, mut broken) = (0.0, 0.0, false, false);
    let mut merged: Vec<Bucket> = Vec::new();
    for s in &f.series {
        let SeriesStats::Histogram(h) = &s.stats else {
            continue;
        };
        any = true;
        count += h.count;
        sum += h.sum;
        broken |= h.count > 0.0 && h.quantiles.is_empty();
        for b in &h.buckets {
            match merged.iter_mut().find(|m| m.le == b.le) {
                Some(m) => m.count += b.count,
                None => merged.push(*b),
            }
        }
    }
    if !any {
        return None;
    }
    let est = |phi: f64| {
        if broken || count <= 0.0 {
            return None;
        }
        let v = quantile::histogram_quantile(phi, &merged).value;
        v.is_finite().then_some(v * scale)
    };
    let top = merged
        .iter()
        .map(|b| b.le)
        .filter(|le| le.is_finite())
        .reduce(f64::max);
    Some(HistBrief {
        count,
        mean_ms: (count > 0.0).then(|| sum / count * scale),
        p50_estimate_ms: est(0.5),
        p90_estimate_ms: est(0.9),
        p99_estimate_ms: est(0.99),
        top_bound_ms: top.map(|v| v * scale),
    })
}

pub(super) fn view(t: &TargetAnalysis) -> Option<ServerView> {
    let server = names::detect(t.families.iter().map(|f| f.name.as_str()))?;
    let seconds = t.bracket.map(|b| b.seconds()).filter(|s| *s > 0.0);
    let mut resets = 0;
    let mut count = |role: Role| {
        let (f, _) = find(t, server, role)?;
        let (v, r) = total(f)?;
        resets += r;
        Some(v)
    };
    let output_tokens = count(Role::OutputTokens);
    let prompt_tokens = count(Role::PromptTokens);
    let preemptions = count(Role::Preemptions);
    let requests_finished = count(Role::RequestsFinished);
    let finished = requests_finished;
    let per_s = |v: Option<f64>| Some(v? / seconds?);
    let gauge = |role: Role| {
        let (f, k) = find(t, server, role)?;
        let scale = if k.unit == Unit::Percent { 0.01 } else { 1.0 };
        gauge_brief(f, scale)
    };
    let mut hist = |role: Role| {
        let (f, k) = find(t, server, role)?;
        resets += f
            .series
            .iter()
            .map(|s| match &s.stats {
                SeriesStats::Histogram(h) => h.resets,
                _ => 0,
            })
            .sum::<u32>();
        if f.kind == MetricType::Counter {
            // Cumulative time (Triton's µs counters): the mean over the requests finished.
            let (time, r) = total(f)?;
            resets += r;
            let n = finished?;
            return Some(HistBrief {
                count: n,
                mean_ms: (n > 0.0).then(|| time / n * ms_per(k.unit)),
                ..HistBrief::default()
            });
        }
        hist_brief(f, k.unit)
    };
    let (ttft, itl, tpot, e2e) = (
        hist(Role::Ttft),
        hist(Role::Itl),
        hist(Role::Tpot),
        hist(Role::E2eLatency),
    );
    Some(ServerView {
        target: t.target.index,
        url: t.target.url.clone(),
        server,
        output_tokens,
        output_tokens_per_s: per_s(output_tokens),
        prompt_tokens,
        prompt_tokens_per_s: per_s(prompt_tokens),
        running: gauge(Role::Running),
        waiting: gauge(Role::Waiting),
        kv_usage: gauge(Role::KvUsage),
        preemptions,
        requests_finished,
        ttft,
        itl,
        tpot,
        e2e,
        resets,
    })
}
