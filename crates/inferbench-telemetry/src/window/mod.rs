//! Every series of every target over the run's windows: counters by their exact
//! reset-aware increase between the two scrapes that bracket the window (and Prometheus's
//! extrapolated `increase`/`rate` beside it), gauges time-weighted and by sample, histograms
//! by their window increase per bucket with `histogram_quantile` estimates. Rates are
//! computed per series before anything is summed across labels (docs/telemetry.md).
//!
//! The rules, per target: a scrape is usable when it has status 200, no error and a body (its
//! own or, with `same_as`, the earlier one it repeats: parsed once, counted in `duplicates`,
//! and still a sample). Its sample time is `first_byte_ns` (else `end_ns`); a series' own
//! exposition timestamp never moves it. Untyped families are gauges; `_created` families stay
//! as gauges. Without a bracket, counters and histograms are left out (with a warning) and
//! gauges are still summarised.

use serde::{Deserialize, Serialize};

use crate::dcgm;
use crate::expo::{self, Exposition, MetricType};
use crate::quantile::{Bucket, Estimate};
use crate::scrape::{ScrapeLine, ScrapeLog, TargetInfo};

mod collect;
mod interim;
mod series;
mod stats;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_log;

use collect::{Collected, Shape};
use series::{HistTracks, Span};

/// A window on the run's clock: ns since the anchor, `[start_ns, end_ns]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub start_ns: u64,
    pub end_ns: u64,
}

/// The run's phase windows (from its evidence).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Windows {
    pub profiling: Window,
    pub warmup: Option<Window>,
}

/// The analysis of a run's scrapes (the file `inferbench_server_metrics.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub targets: Vec<TargetAnalysis>,
}

/// The scrape that opens or closes the window for a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BracketScrape {
    pub seq: u64,
    /// Its sample time (first byte), ns since the anchor.
    pub t_ns: u64,
}

/// The two scrapes that bracket the profiling window: the last usable one at or before its
/// start and the first usable one at or after its end (or the last one, when the run ended
/// before another came; `closed` says whether the end was bracketed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bracket {
    pub start: BracketScrape,
    pub end: BracketScrape,
    pub closed: bool,
}

impl Bracket {
    pub fn seconds(&self) -> f64 {
        self.end.t_ns.saturating_sub(self.start.t_ns) as f64 / 1e9
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetAnalysis {
    pub target: TargetInfo,
    pub scrapes: u64,
    /// Scrapes with no usable body (transport error, HTTP status, timeout).
    pub failed: u64,
    /// Bodies that were not Prometheus text (each with its parse error in `warnings`, once).
    pub unparsable: u64,
    /// Bodies identical to the scrape before (a DCGM exporter refreshing slower than we
    /// scrape shows many).
    pub duplicates: u64,
    /// None when fewer than two usable scrapes cover the window.
    pub bracket: Option<Bracket>,
    pub families: Vec<FamilyAnalysis>,
    pub warnings: Vec<String>,
}

impl TargetAnalysis {
    pub fn family(&self, name: &str) -> Option<&FamilyAnalysis> {
        self.families.iter().find(|f| f.name == name)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FamilyAnalysis {
    pub name: String,
    pub kind: MetricType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    pub series: Vec<SeriesAnalysis>,
    /// Gauge families of more than one series: the series summed at each scrape (they align:
    /// one scrape gives every series), so `max` is the largest total at any one time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<GaugeStats>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesAnalysis {
    /// Sorted by name; a histogram's series has no `le`.
    pub labels: Vec<(String, String)>,
    pub stats: SeriesStats,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesStats {
    Counter(CounterStats),
    Gauge(GaugeStats),
    Histogram(HistogramStats),
    /// Summaries (quantiles over an unknown window, never differenced), gauge histograms,
    /// info and state sets: kept by name, not summarised.
    Other {
        samples: u64,
    },
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterStats {
    /// Exact reset-aware increase between the bracketing scrapes.
    pub increase: f64,
    /// `increase` / the bracket's duration, per second.
    pub rate_per_s: f64,
    /// Drops inside the bracket (each a restart from zero).
    pub resets: u32,
    /// A `_created` companion changed inside the bracket (a restart the value alone may hide).
    pub created_changed: bool,
    /// Prometheus's `increase(x[W])` evaluated at the window's end over the scrapes inside it.
    pub prom_increase: Option<f64>,
    /// Prometheus's `rate(x[W])`.
    pub prom_rate_per_s: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GaugeStats {
    /// Samples inside the window (at or after its start, at or before its end).
    pub samples: u64,
    /// Non-finite samples left out of every statistic.
    pub non_finite: u64,
    /// Σ v_i·(t_{i+1}−t_i) / Σ(t_{i+1}−t_i) over the window, each sample holding until the next.
    pub time_weighted_mean: Option<f64>,
    pub mean: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Sample standard deviation (ddof = 1).
    pub std: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    /// Last minus first sample in the window (a queue that grows shows here).
    pub change: Option<f64>,
    /// ∫ v dt over the window's samples by the trapezoid rule, value·seconds (power in W
    /// gives J); None with fewer than two samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integral: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramStats {
    /// The window increase of each cumulative bucket (same reset rule as counters).
    pub buckets: Vec<Bucket>,
    pub count: f64,
    pub sum: f64,
    /// sum / count: the exact server-side mean over the observations in the window.
    pub mean: Option<f64>,
    pub resets: u32,
    /// `histogram_quantile` estimates at 0.5, 0.9, 0.95, 0.99 (empty when count is 0).
    pub quantiles: Vec<(f64, Estimate)>,
}

/// Analyses every target of the log over the windows, in the header's order.
pub fn analyze(log: &ScrapeLog, windows: &Windows) -> Analysis {
    let targets = log
        .header
        .targets
        .iter()
        .map(|info| {
            let (col, tally) = collect_target(log, info.index);
            summarise(info.clone(), tally, col, windows)
        })
        .collect();
    Analysis { targets }
}

/// Scrape counts of one target.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    pub scrapes: u64,
    pub failed: u64,
    pub unparsable: u64,
    pub duplicates: u64,
}

/// Parses each usable body of one target once and gathers its series.
fn collect_target(log: &ScrapeLog, target: u32) -> (Collected, Tally) {
    let mut col = Collected::default();
    let mut tally = Tally::default();
    // The last parsed body, by the seq that carried it: what `same_as` scrapes repeat.
    let mut last: Option<(u64, Result<Exposition, String>)> = None;
    let mut parse_warned = false;
    for s in log.of_target(target) {
        tally.scrapes += 1;
        if s.error.is_some() || s.status != Some(200) {
            tally.failed += 1;
            continue;
        }
        let carrier = match (&s.body, s.same_as) {
            (Some(_), _) => s.seq,
            (None, Some(seq)) => {
                tally.duplicates += 1;
                seq
            }
            (None, None) => {
                tally.failed += 1;
                continue;
            }
        };
        if last.as_ref().is_none_or(|l| l.0 != carrier) {
            let Some(body) = log.body_of(s) else {
                tally.failed += 1;
                col.warnings
                    .push(format!("scrape {}: same_as {carrier} names no body", s.seq));
                continue;
            };
            let parsed =
                expo::parse(body, content_type(log, s, carrier)).map_err(|e| e.to_string());
            last = Some((carrier, parsed));
        }
        match &last.as_ref().expect("set above").1 {
            Ok(expo) => col.push(s.seq, s.first_byte_ns.unwrap_or(s.end_ns), expo),
            Err(e) => {
                tally.unparsable += 1;
                if !parse_warned {
                    parse_warned = true;
                    col.warnings.push(format!(
                        "scrape {}: the body is not Prometheus text: {e}",
                        s.seq
                    ));
                }
            }
        }
    }
    (col, tally)
}

/// The content type of the scrape that carried the body.
fn content_type<'a>(log: &'a ScrapeLog, s: &'a ScrapeLine, carrier: u64) -> Option<&'a str> {
    if s.seq == carrier {
        return s.content_type.as_deref();
    }
    log.of_target(s.target)
        .find(|o| o.seq == carrier)
        .and_then(|o| o.content_type.as_deref())
}

/// The bracket of the profiling window over the usable scrapes `(seq, t_ns)`, with a
/// warning when its start had to be the first scrape after the window's start.
fn bracket(usable: &[(u64, u64)], w: Window) -> Result<(Bracket, Span, Option<String>), String> {
    if usable.len() < 2 {
        return Err(format!(
            "{} usable scrape(s): counters and histograms need two that bracket the window",
            usable.len()
        ));
    }
    let mut note = None;
    let a = match usable.iter().rposition(|u| u.1 <= w.start_ns) {
        Some(a) => a,
        None => {
            note = Some(format!(
                "no usable scrape at or before the window's start: the bracket opens {} ms after it",
                (usable[0].1 - w.start_ns) as f64 / 1e6
            ));
            0
        }
    };
    let (b, closed) = match usable.iter().position(|u| u.1 >= w.end_ns) {
        Some(b) => (b, true),
        None => (usable.len() - 1, false),
    };
    if b <= a {
        return Err(
            "no usable scrape after the window's start: counters and histograms need two".into(),
        );
    }
    let at = |i: usize| BracketScrape {
        seq: usable[i].0,
        t_ns: usable[i].1,
    };
    let br = Bracket {
        start: at(a),
        end: at(b),
        closed,
    };
    Ok((br, Span { a, b }, note))
}

/// The companion `_created` family name of a counter or histogram family.
fn created_family(name: &str, shape: Shape) -> String {
    let base = match shape {
        Shape::Counter => name.strip_suffix("_total").unwrap_or(name),
        _ => name,
    };
    format!("{base}_created")
}

/// One target's analysis from its gathered series.
pub(crate) fn summarise(
    target: TargetInfo,
    tally: Tally,
    mut col: Collected,
    windows: &Windows,
) -> TargetAnalysis {
    let w = windows.profiling;
    let mut warnings = std::mem::take(&mut col.warnings);
    let br = match bracket(&col.usable, w) {
        Ok((b, span, note)) => {
            warnings.extend(note);
            Some((b, span))
        }
        Err(e) => {
            warnings.push(e);
            None
        }
    };
    let mut families = Vec::new();
    for (name, fam) in &col.families {
        let shape = collect::shape(fam.kind);
        let companion = col.families.get(&created_family(name, shape));
        let companion_of = |labels: &collect::Labels| {
            companion
                .and_then(|c| c.series.get(labels))
                .map(|s| &s.values)
        };
        let mut series = Vec::new();
        // Gauge values summed across series, by usable-scrape index.
        let mut totals = std::collections::BTreeMap::new();
        for (labels, d) in &fam.series {
            let stats = match shape {
                Shape::Gauge => {
                    let blanks = name.starts_with("DCGM_");
                    let mut kept = Vec::new();
                    let mut excluded = 0;
                    for &(i, v) in &d.values {
                        let t = col.t(i);
                        if t < w.start_ns || t > w.end_ns {
                            continue;
                        }
                        if !v.is_finite() || (blanks && dcgm::is_blank(v)) {
                            excluded += 1;
                        } else {
                            kept.push((t, v));
                            *totals.entry(i).or_insert(0.0) += v;
                        }
                    }
                    SeriesStats::Gauge(stats::gauge_stats(&kept, excluded, w.end_ns))
                }
                Shape::Counter => {
                    let Some((b, span)) = br else { continue };
                    let mut created = vec![&d.created];
                    created.extend(companion_of(labels));
                    let t = |i| col.t(i);
                    SeriesStats::Counter(series::counter_stats(
                        t,
                        &d.values,
                        &created,
                        span,
                        b.seconds(),
                        w,
                    ))
                }
                Shape::Histogram => {
                    let Some((_, span)) = br else { continue };
                    let mut created = vec![&d.created];
                    created.extend(companion_of(labels));
                    let tracks = HistTracks {
                        buckets: &d.buckets,
                        count: &d.count,
                        sum: &d.sum,
                        created,
                    };
                    let (h, note) = series::histogram_stats(&tracks, span);
                    if let Some(n) = note {
                        warnings.push(format!("{name}{}: {n}", render_labels(labels)));
                    }
                    SeriesStats::Histogram(h)
                }
                Shape::Other => SeriesStats::Other {
                    samples: d.other_samples,
                },
            };
            series.push(SeriesAnalysis {
                labels: labels.clone(),
                stats,
            });
        }
        let total = (shape == Shape::Gauge && series.len() > 1).then(|| {
            let summed: Vec<(u64, f64)> = totals.iter().map(|(&i, &v)| (col.t(i), v)).collect();
            stats::gauge_stats(&summed, 0, w.end_ns)
        });
        if !series.is_empty() {
            families.push(FamilyAnalysis {
                name: name.clone(),
                kind: fam.kind,
                help: fam.help.clone(),
                series,
                total,
            });
        }
    }
    let mut seen = std::collections::HashSet::new();
    warnings.retain(|x| seen.insert(x.clone()));
    TargetAnalysis {
        target,
        scrapes: tally.scrapes,
        failed: tally.failed,
        unparsable: tally.unparsable,
        duplicates: tally.duplicates,
        bracket: br.map(|x| x.0),
        families,
        warnings,
    }
}

/// `{k="v",...}` for warnings (empty without labels).
fn render_labels(labels: &[(String, String)]) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{{{}}}", inner.join(","))
}
