//! The scrapes as AIPerf stores them: per endpoint, per (family, labels) a time series of
//! values (or of histogram sum/count/buckets), each sample tagged with its phase, after
//! AIPerf's filtering (no `_created`/`_uptime` families, no `_created` samples, no
//! summaries, no non-finite samples; a counter family named `x_total` is stored as `x`, as
//! `prometheus_client`'s parser names it).

use std::collections::HashMap;

use crate::expo::{self, MetricType};
use crate::scrape::{ScrapeLine, ScrapeLog, TargetKind, Trigger};

use super::Meta;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    None,
    Warmup,
    Profiling,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Counter,
    Gauge,
    Histogram,
    Unknown,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
            Kind::Unknown => "unknown",
        }
    }
}

/// One (family, labels) series. For a histogram, `values` is unused and `hist` holds the
/// sums, counts and one row of cumulative bucket counts per sample.
#[derive(Clone, Debug, Default)]
pub(crate) struct Series {
    pub ts: Vec<i64>,
    pub phase: Vec<Phase>,
    pub values: Vec<f64>,
    pub sums: Vec<f64>,
    pub counts: Vec<f64>,
    /// Bucket bounds as written (`le`), sorted numerically, fixed by the first sample.
    pub les: Vec<String>,
    pub buckets: Vec<Vec<f64>>,
}

impl Series {
    pub(crate) fn len(&self) -> usize {
        self.ts.len()
    }

    /// Inserts after every sample at or before `t` (scrapes may complete out of order).
    fn slot(&self, t: i64) -> usize {
        self.ts.partition_point(|&x| x <= t)
    }

    fn push_value(&mut self, t: i64, phase: Phase, v: f64) {
        let i = self.slot(t);
        self.ts.insert(i, t);
        self.phase.insert(i, phase);
        self.values.insert(i, v);
    }

    fn push_hist(&mut self, t: i64, phase: Phase, h: &Hist) {
        if self.les.is_empty() && self.ts.is_empty() {
            let mut les: Vec<String> = h.buckets.iter().map(|(le, _)| le.clone()).collect();
            les.sort_by(|a, b| le_value(a).total_cmp(&le_value(b)));
            self.les = les;
        }
        // A bucket missing from a later sample counts 0; one not in the first is ignored.
        let row = self
            .les
            .iter()
            .map(|le| {
                h.buckets
                    .iter()
                    .find(|(l, _)| l == le)
                    .map_or(0.0, |(_, v)| *v)
            })
            .collect();
        let i = self.slot(t);
        self.ts.insert(i, t);
        self.phase.insert(i, phase);
        self.sums.insert(i, h.sum.unwrap_or(0.0));
        self.counts.insert(i, h.count.unwrap_or(0.0));
        self.buckets.insert(i, row);
    }
}

pub(crate) fn le_value(le: &str) -> f64 {
    if le == "+Inf" {
        f64::INFINITY
    } else {
        le.parse().unwrap_or(f64::NAN)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub kind: Kind,
    pub description: String,
    pub data: Series,
}

/// One scraped endpoint, in the order AIPerf first saw it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Endpoint {
    pub url: String,
    /// In first-seen order of (name, labels).
    pub entries: Vec<Entry>,
    pub fetch_ts: Vec<i64>,
    /// (timestamp, request latency) of each fetch.
    pub fetch_latency: Vec<(i64, i64)>,
    /// Timestamps of the fetches whose body differed from the one before.
    pub update_ts: Vec<i64>,
    /// Timestamps of every fetch tagged warmup.
    pub warmup_ts: Vec<i64>,
    index: HashMap<(String, Vec<(String, String)>), usize>,
}

impl Endpoint {
    pub(crate) fn last_update_ns(&self) -> i64 {
        self.update_ts.iter().copied().max().unwrap_or(0)
    }
}

#[derive(Default)]
struct Hist {
    buckets: Vec<(String, f64)>,
    sum: Option<f64>,
    count: Option<f64>,
}

/// The phase AIPerf would have tagged this scrape with (module docs).
pub(crate) fn phase_of(s: &ScrapeLine, meta: &Meta<'_>) -> Phase {
    match s.phase.as_deref() {
        Some("profiling") => return Phase::Profiling,
        Some("warmup") => return Phase::Warmup,
        _ => {}
    }
    if s.trigger == Some(Trigger::End) || s.send_ns >= meta.windows.profiling.start_ns {
        return Phase::Profiling;
    }
    match meta.windows.warmup {
        Some(w) if s.send_ns >= w.start_ns && s.send_ns <= w.end_ns => Phase::Warmup,
        _ => Phase::None,
    }
}

/// The endpoints of every target of `kind`, as AIPerf stores their scrapes.
pub(crate) fn build(log: &ScrapeLog, meta: &Meta<'_>, kind: TargetKind) -> Vec<Endpoint> {
    let mut out = Vec::new();
    for target in log.header.targets.iter().filter(|t| t.kind == kind) {
        let mut ep = Endpoint {
            url: target.url.clone(),
            ..Default::default()
        };
        let mut last_body: Option<&str> = None;
        for s in log.of_target(target.index) {
            let Some(body) = log.body_of(s).filter(|_| ok(s)) else {
                continue;
            };
            // AIPerf compares each response with the one before it, whether or not that one
            // gave a record.
            let duplicate = last_body == Some(body);
            last_body = Some(body);
            if body.trim().is_empty() {
                continue;
            }
            let Ok(parsed) = expo::parse(body, s.content_type.as_deref()) else {
                continue;
            };
            let t = s.wall_unix_ns as i64;
            let phase = phase_of(s, meta);
            if !add_record(&mut ep, &parsed, t, phase) {
                continue;
            }
            ep.fetch_ts.push(t);
            ep.fetch_latency
                .push((t, s.end_ns.saturating_sub(s.send_ns) as i64));
            if !duplicate {
                ep.update_ts.push(t);
            }
            if phase == Phase::Warmup {
                ep.warmup_ts.push(t);
            }
        }
        if !ep.fetch_ts.is_empty() {
            out.push(ep);
        }
    }
    out
}

/// The name `prometheus_client` gives a family, and whether AIPerf keeps it.
pub(crate) fn aiperf_family(f: &expo::Family) -> Option<(String, Kind)> {
    let n = &f.name;
    if n.ends_with("_created") || n.ends_with("_uptime") || n.contains("_uptime_") {
        return None;
    }
    let kind = match f.kind {
        MetricType::Counter => Kind::Counter,
        MetricType::Gauge => Kind::Gauge,
        MetricType::Histogram => Kind::Histogram,
        MetricType::Untyped | MetricType::Unknown => Kind::Unknown,
        _ => return None,
    };
    let name = match (kind, n.strip_suffix("_total")) {
        (Kind::Counter, Some(base)) => base.to_string(),
        _ => n.clone(),
    };
    if name.ends_with("_created") || name.ends_with("_uptime") || name.contains("_uptime_") {
        return None;
    }
    Some((name, kind))
}

/// Adds one scrape's samples; false when nothing of it was kept (AIPerf makes no record).
fn add_record(ep: &mut Endpoint, e: &expo::Exposition, t: i64, phase: Phase) -> bool {
    let mut kept = false;
    for f in &e.families {
        let Some((name, kind)) = aiperf_family(f) else {
            continue;
        };
        let description = f.help.clone().unwrap_or_default();
        if kind == Kind::Histogram {
            let mut hists: Vec<(Vec<(String, String)>, Hist)> = Vec::new();
            let mut tainted: Vec<Vec<(String, String)>> = Vec::new();
            for s in &f.samples {
                let base: Vec<(String, String)> = s
                    .labels
                    .iter()
                    .filter(|(k, _)| k != "le")
                    .cloned()
                    .collect();
                if !s.value.is_finite() {
                    tainted.push(base);
                    continue;
                }
                let i = match hists.iter().position(|(l, _)| *l == base) {
                    Some(i) => i,
                    None => {
                        hists.push((base, Hist::default()));
                        hists.len() - 1
                    }
                };
                let h = &mut hists[i].1;
                if s.name.ends_with("_bucket") {
                    let le = s
                        .labels
                        .iter()
                        .find(|(k, _)| k == "le")
                        .map_or("+Inf".to_string(), |(_, v)| v.clone());
                    match h.buckets.iter_mut().find(|(l, _)| *l == le) {
                        Some(b) => b.1 = s.value,
                        None => h.buckets.push((le, s.value)),
                    }
                } else if s.name.ends_with("_sum") {
                    h.sum = Some(s.value);
                } else if s.name.ends_with("_count") {
                    h.count = Some(s.value);
                }
            }
            for (labels, h) in hists {
                let valid = !h.buckets.is_empty() || h.sum.is_some() || h.count.is_some();
                if tainted.contains(&labels) || !valid {
                    continue;
                }
                entry(ep, &name, &labels, kind, &description).push_hist(t, phase, &h);
                kept = true;
            }
        } else {
            let mut values: Vec<(Vec<(String, String)>, f64)> = Vec::new();
            for s in &f.samples {
                if s.name.ends_with("_created") || !s.value.is_finite() {
                    continue;
                }
                match values.iter_mut().find(|(l, _)| *l == s.labels) {
                    Some(v) => v.1 = s.value,
                    None => values.push((s.labels.clone(), s.value)),
                }
            }
            for (labels, v) in values {
                entry(ep, &name, &labels, kind, &description).push_value(t, phase, v);
                kept = true;
            }
        }
    }
    kept
}

fn entry<'a>(
    ep: &'a mut Endpoint,
    name: &str,
    labels: &[(String, String)],
    kind: Kind,
    description: &str,
) -> &'a mut Series {
    let key = (name.to_string(), labels.to_vec());
    let i = match ep.index.get(&key) {
        Some(&i) => i,
        None => {
            ep.index.insert(key, ep.entries.len());
            ep.entries.push(Entry {
                name: name.to_string(),
                labels: labels.to_vec(),
                kind,
                description: description.to_string(),
                data: Series::default(),
            });
            ep.entries.len() - 1
        }
    };
    &mut ep.entries[i].data
}

/// A scrape that answered with a body (AIPerf raises on an HTTP error status).
pub(crate) fn ok(s: &crate::scrape::ScrapeLine) -> bool {
    s.error.is_none() && matches!(s.status, Some(200..=299))
}
