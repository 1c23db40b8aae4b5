//! Every series of every target over the run's windows: counters by their exact
//! reset-aware increase between the two scrapes that bracket the window (and Prometheus's
//! extrapolated `increase`/`rate` beside it), gauges time-weighted and by sample, histograms
//! by their window increase per bucket with `histogram_quantile` estimates. Rates are
//! computed per series before anything is summed across labels (docs/telemetry.md).
//! (Skeleton: being written.)

use serde::{Deserialize, Serialize};

use crate::expo::MetricType;
use crate::quantile::{Bucket, Estimate};
use crate::scrape::{ScrapeLog, TargetInfo};

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

/// Analyses every target of the log over the windows.
pub fn analyze(log: &ScrapeLog, windows: &Windows) -> Analysis {
    let _ = (log, windows);
    Analysis::default()
}
