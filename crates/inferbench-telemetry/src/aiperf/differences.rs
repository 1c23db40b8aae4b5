//! Where AIPerf's summary and the reset-correct analysis disagree: a counter whose clamped
//! `last − reference` under-counts a restart, a histogram whose count does, and a histogram
//! whose buckets AIPerf dropped because one went down.

use crate::scrape::ScrapeLog;
use crate::window::{Analysis, SeriesStats};

use super::Difference;
use super::stats::{Results, Stats};

/// Relative tolerance below which two numbers are the same (float noise in rates).
const SAME: f64 = 1e-9;

fn differ(a: f64, b: f64) -> bool {
    (a - b).abs() > SAME * a.abs().max(b.abs()).max(1.0)
}

pub(crate) fn find(r: &Results, analysis: &Analysis, log: &ScrapeLog) -> Vec<Difference> {
    let _ = log;
    let mut out = Vec::new();
    for ep in &r.profiling {
        let Some(target) = analysis.targets.iter().find(|t| t.target.url == ep.url) else {
            continue;
        };
        for m in &ep.metrics {
            // The analysis names a counter family as declared (`x_total`); AIPerf strips it.
            let family = target
                .family(&m.name)
                .or_else(|| target.family(&format!("{}_total", m.name)));
            let Some(family) = family else {
                continue;
            };
            for s in &m.series {
                let Some(exact) = family.series.iter().find(|x| x.labels == s.labels) else {
                    continue;
                };
                let push = |out: &mut Vec<Difference>, aiperf: f64, exact: f64, reason: String| {
                    out.push(Difference {
                        url: ep.url.clone(),
                        metric: m.name.clone(),
                        labels: s.labels.clone(),
                        aiperf,
                        exact,
                        reason,
                    })
                };
                match (&s.stats, &exact.stats) {
                    (Stats::Counter { total, raw, .. }, SeriesStats::Counter(c))
                        if differ(*total, c.increase) =>
                    {
                        let why = if c.resets > 0 || *raw < 0.0 {
                            format!(
                                "counter restarted {} time(s) in the window: AIPerf takes last − reference ({raw}) and clamps it at 0; the reset-aware increase adds each pre-reset value back",
                                c.resets.max(1)
                            )
                        } else {
                            "AIPerf's reference is the last scrape before the first one tagged with the phase; the exact increase is between the scrapes that bracket the window".to_string()
                        };
                        push(&mut out, *total, c.increase, why);
                    }
                    (Stats::Histogram { count, buckets, .. }, SeriesStats::Histogram(h)) => {
                        if differ(*count as f64, h.count) {
                            let why = if h.resets > 0 {
                                format!(
                                    "histogram restarted {} time(s) in the window: AIPerf's count is last − reference clamped at 0; the reset-aware count adds each pre-reset value back",
                                    h.resets
                                )
                            } else {
                                "AIPerf's reference is the last scrape before the first one tagged with the phase; the exact count is between the scrapes that bracket the window".to_string()
                            };
                            push(&mut out, *count as f64, h.count, why);
                        }
                        if buckets.is_none() {
                            // The numbers compared: buckets kept by AIPerf (none) and by the
                            // reset-aware analysis.
                            push(
                                &mut out,
                                0.0,
                                h.buckets.len() as f64,
                                "a bucket went down (a restart): AIPerf omits the buckets and its percentile estimates; the reset-aware bucket increases are kept".to_string(),
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    out
}
