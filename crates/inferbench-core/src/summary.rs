//! Metric results: what a definition set computes from records, and what exporters write.

use serde::{Deserialize, Serialize};

/// Full statistics of a distribution metric. A statistic that is not finite (e.g. in the
/// error-adjusted `adj_*` companions, where errors count as +inf) is `None` and is left out of
/// exports, as AIPerf does.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Stats {
    pub avg: Option<f64>,
    pub p1: Option<f64>,
    pub p5: Option<f64>,
    pub p10: Option<f64>,
    pub p25: Option<f64>,
    pub p50: Option<f64>,
    pub p75: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub std: Option<f64>,
    pub count: u64,
    pub sum: Option<f64>,
}

impl Stats {
    /// (name, value) for every statistic, in AIPerf's JSON key order (count excluded).
    pub fn named(&self) -> [(&'static str, Option<f64>); 14] {
        [
            ("avg", self.avg),
            ("p1", self.p1),
            ("p5", self.p5),
            ("p10", self.p10),
            ("p25", self.p25),
            ("p50", self.p50),
            ("p75", self.p75),
            ("p90", self.p90),
            ("p95", self.p95),
            ("p99", self.p99),
            ("min", self.min),
            ("max", self.max),
            ("std", self.std),
            ("sum", self.sum),
        ]
    }

    pub fn get(&self, name: &str) -> Option<f64> {
        if name == "count" {
            return Some(self.count as f64);
        }
        self.named()
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| *v)
    }
}

// A summary holds a few dozen of these; boxing the large variant buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MetricValue {
    /// A run-level value (counts, throughputs, durations): exported as `{unit, avg}`.
    Scalar { value: f64 },
    /// A distribution over a population (per request, or per chunk gap, pooled).
    Distribution { stats: Stats },
}

/// One computed metric, already in its display unit.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MetricResult {
    /// Machine name, e.g. `time_to_first_token`.
    pub tag: String,
    /// Human name, e.g. `Time to First Token`.
    pub header: String,
    /// Display unit, e.g. `ms`, `tokens/sec`, `requests`.
    pub unit: String,
    pub value: MetricValue,
}

impl MetricResult {
    pub fn scalar(&self) -> Option<f64> {
        match &self.value {
            MetricValue::Scalar { value } => Some(*value),
            MetricValue::Distribution { .. } => None,
        }
    }
    pub fn stats(&self) -> Option<&Stats> {
        match &self.value {
            MetricValue::Distribution { stats } => Some(stats),
            MetricValue::Scalar { .. } => None,
        }
    }
    /// The average: the scalar itself, or a distribution's mean.
    pub fn avg(&self) -> Option<f64> {
        match &self.value {
            MetricValue::Scalar { value } => Some(*value),
            MetricValue::Distribution { stats } => stats.avg,
        }
    }
}

/// One request's per-record metric values (display units), for `profile_export.jsonl`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RecordMetric {
    /// Borrowed from the definition set's table when computed (no allocation per value);
    /// owned when read back from a file.
    pub tag: std::borrow::Cow<'static, str>,
    pub unit: std::borrow::Cow<'static, str>,
    pub value: RecordMetricValue,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum RecordMetricValue {
    Int(i64),
    Float(f64),
    List(Vec<f64>),
}

/// Errors grouped as AIPerf's `error_summary`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ErrorGroup {
    pub code: Option<u16>,
    pub error_type: String,
    pub message: String,
    pub count: u64,
}

/// The results of one phase under one definition set.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Summary {
    /// Definition set, e.g. `aiperf-0.13`.
    pub definitions: String,
    pub metrics: Vec<MetricResult>,
    pub error_summary: Vec<ErrorGroup>,
}

impl Summary {
    pub fn get(&self, tag: &str) -> Option<&MetricResult> {
        self.metrics.iter().find(|m| m.tag == tag)
    }
}
