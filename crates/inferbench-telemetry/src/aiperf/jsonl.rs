//! `server_metrics_export.jsonl` (`--server-metrics-formats jsonl`): AIPerf 0.13's per-scrape
//! file, one JSON object per server scrape that gave it a record, in the order the scrapes
//! completed.
//!
//! Which scrapes become a line, as in AIPerf: only server targets; failed scrapes and bodies
//! that are empty or not Prometheus text give none; a body byte-identical to the target's
//! previous one (`same_as` in the raw file) is AIPerf's duplicate and is left out; a scrape
//! where nothing survives the filtering gives none. The filtering is the one the JSON export
//! uses (`series.rs`): no `_created`/`_uptime` families, no summaries, no `_created` samples,
//! no non-finite value (a histogram label set with one loses the whole set), a counter
//! `x_total` named `x`. Families ending `_info` are left out of the line (but a scrape with
//! only those still gives one, with empty `metrics`, as AIPerf's check comes first).
//!
//! A line's keys come in the order of AIPerf's `SlimRecord`, absent ones left out (its
//! `exclude_none`); a sample's in the order of its `MetricSample`. Values are floats as
//! Python holds them (`1.0`, never `1`); times are integers, ns.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::expo;
use crate::scrape::{ScrapeLine, ScrapeLog, TargetKind};

use super::Meta;
use super::series::{Kind, Phase, aiperf_family, ok, phase_of};

type Labels = Vec<(String, String)>;

/// One label set of a family: a value (counter, gauge, untyped) or a histogram.
#[derive(Debug, PartialEq)]
pub(crate) enum Body {
    Value(f64),
    Histogram {
        /// `le` as written → cumulative count, in body order.
        buckets: Vec<(String, f64)>,
        sum: Option<f64>,
        count: Option<f64>,
    },
}

#[derive(Debug, PartialEq)]
pub(crate) struct Sample {
    pub(crate) labels: Labels,
    pub(crate) body: Body,
}

/// A list of pairs written as a JSON object, in list order.
struct AsMap<'a, V>(&'a [(String, V)]);

impl<V: Serialize> Serialize for AsMap<'_, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for Sample {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if !self.labels.is_empty() {
            m.serialize_entry("labels", &AsMap(&self.labels))?;
        }
        match &self.body {
            Body::Value(v) => m.serialize_entry("value", v)?,
            Body::Histogram {
                buckets,
                sum,
                count,
            } => {
                m.serialize_entry("buckets", &AsMap(buckets))?;
                if let Some(x) = sum {
                    m.serialize_entry("sum", x)?;
                }
                if let Some(x) = count {
                    m.serialize_entry("count", x)?;
                }
            }
        }
        m.end()
    }
}

/// One line, in `SlimRecord`'s key order.
#[derive(Serialize)]
struct Line<'a> {
    endpoint_url: &'a str,
    timestamp_ns: u64,
    endpoint_latency_ns: u64,
    metrics: AsMap<'a, Vec<Sample>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_sent_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_byte_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    benchmark_phase: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase_index: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    profiling_index: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase_name: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase_kind: Option<&'static str>,
}

/// The file's text, or None when no scrape gives a line (AIPerf removes an empty file).
pub(crate) fn export(log: &ScrapeLog, meta: &Meta<'_>) -> Option<String> {
    // AIPerf numbers phases in run order: warmup (when there is one) is 0.
    let has_warmup = meta.windows.warmup.is_some()
        || log
            .scrapes
            .iter()
            .any(|s| s.phase.as_deref() == Some("warmup"));
    let anchor = log.header.anchor_unix_ns;
    // AIPerf writes a record when its fetch has completed: in order of the end of the read
    // (the raw file's order already, but for a file rewritten in another order).
    let mut scrapes: Vec<&ScrapeLine> = log.scrapes.iter().collect();
    scrapes.sort_by_key(|s| s.end_ns);
    let mut out = String::new();
    for s in scrapes {
        let Some(target) = log
            .header
            .targets
            .iter()
            .find(|t| t.index == s.target && t.kind == TargetKind::Server)
        else {
            continue;
        };
        let Some(families) = record(log, s) else {
            continue;
        };
        let kept: Vec<(String, Vec<Sample>)> = families
            .into_iter()
            .filter(|(name, _)| !name.ends_with("_info"))
            .collect();
        let fb_wall = s.first_byte_ns.map(|fb| anchor + fb);
        let (benchmark_phase, phase_index, profiling_index) = match phase_of(s, meta) {
            Phase::None => (None, None, None),
            Phase::Warmup => (Some("warmup"), Some(0), None),
            Phase::Profiling => (Some("profiling"), Some(u32::from(has_warmup)), Some(0)),
        };
        let line = Line {
            endpoint_url: &target.url,
            timestamp_ns: fb_wall.unwrap_or(s.wall_unix_ns),
            endpoint_latency_ns: s.end_ns.saturating_sub(s.send_ns),
            metrics: AsMap(&kept),
            request_sent_ns: Some(anchor + s.send_ns),
            first_byte_ns: fb_wall,
            benchmark_phase,
            phase_index,
            profiling_index,
            // AIPerf's default phases are named after their kind.
            phase_name: benchmark_phase,
            phase_kind: benchmark_phase,
        };
        // Only finite floats and strings: serializing cannot fail.
        out.push_str(&serde_json::to_string(&line).ok()?);
        out.push('\n');
    }
    (!out.is_empty()).then_some(out)
}

/// The families AIPerf would keep from one scrape, in body order; None when it makes no
/// record of it (failed, duplicate, empty, unparsable, nothing kept).
fn record(log: &ScrapeLog, s: &ScrapeLine) -> Option<Vec<(String, Vec<Sample>)>> {
    if !ok(s) || s.same_as.is_some() {
        return None;
    }
    let body = log.body_of(s)?;
    if body.trim().is_empty() {
        return None;
    }
    let parsed = expo::parse(body, s.content_type.as_deref()).ok()?;
    let mut families: Vec<(String, Vec<Sample>)> = Vec::new();
    for f in &parsed.families {
        let Some((name, kind)) = aiperf_family(f) else {
            continue;
        };
        let samples = if kind == Kind::Histogram {
            histogram_samples(f)
        } else {
            value_samples(f)
        };
        if samples.is_empty() {
            continue;
        }
        // A second family of the same name replaces the first where it stood (a dict).
        match families.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = samples,
            None => families.push((name, samples)),
        }
    }
    (!families.is_empty()).then_some(families)
}

fn sorted(labels: impl Iterator<Item = (String, String)>) -> Labels {
    let mut l: Labels = labels.collect();
    l.sort();
    l
}

/// Counter, gauge, untyped: one value per label set (the last one wins, where the first
/// stood), `_created` samples and non-finite values left out.
fn value_samples(f: &expo::Family) -> Vec<Sample> {
    let mut out: Vec<Sample> = Vec::new();
    for s in &f.samples {
        if s.name.ends_with("_created") || !s.value.is_finite() {
            continue;
        }
        let labels = sorted(s.labels.iter().cloned());
        match out.iter_mut().find(|x| x.labels == labels) {
            Some(x) => x.body = Body::Value(s.value),
            None => out.push(Sample {
                labels,
                body: Body::Value(s.value),
            }),
        }
    }
    out
}

/// Histogram: per label set without `le`, its buckets, sum and count; a label set with any
/// non-finite sample is left out whole.
fn histogram_samples(f: &expo::Family) -> Vec<Sample> {
    let mut out: Vec<Sample> = Vec::new();
    let mut tainted: Vec<Labels> = Vec::new();
    for s in &f.samples {
        let labels = sorted(s.labels.iter().filter(|(k, _)| k != "le").cloned());
        if !s.value.is_finite() {
            tainted.push(labels);
            continue;
        }
        let part = if s.name.ends_with("_bucket") {
            0
        } else if s.name.ends_with("_sum") {
            1
        } else if s.name.ends_with("_count") {
            2
        } else {
            continue;
        };
        let i = match out.iter().position(|x| x.labels == labels) {
            Some(i) => i,
            None => {
                out.push(Sample {
                    labels,
                    body: Body::Histogram {
                        buckets: Vec::new(),
                        sum: None,
                        count: None,
                    },
                });
                out.len() - 1
            }
        };
        let Body::Histogram {
            buckets,
            sum,
            count,
        } = &mut out[i].body
        else {
            continue;
        };
        match part {
            0 => {
                let le = s
                    .labels
                    .iter()
                    .find(|(k, _)| k == "le")
                    .map_or_else(|| "+Inf".to_string(), |(_, v)| v.clone());
                match buckets.iter_mut().find(|(l, _)| *l == le) {
                    Some(b) => b.1 = s.value,
                    None => buckets.push((le, s.value)),
                }
            }
            1 => *sum = Some(s.value),
            _ => *count = Some(s.value),
        }
    }
    out.retain(|x| !tainted.contains(&x.labels));
    out
}
