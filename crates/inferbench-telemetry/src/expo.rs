//! The Prometheus text exposition format (0.0.4), and OpenMetrics 1.0 when a target sends
//! it anyway, with the quirks real targets emit (docs/telemetry.md, "Parsing").
//! (Skeleton: the parser is being written.)

use serde::{Deserialize, Serialize};

/// A family's declared type. No TYPE line means `Untyped`; the type is trusted as declared,
/// never inferred from a name's suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricType {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
    /// OpenMetrics only.
    GaugeHistogram,
    Info,
    StateSet,
    Unknown,
}

/// Which text format a body was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Text004,
    OpenMetrics,
}

/// One sample line. `name` is the sample's own name (`x_bucket`, `x_sum`, `x_count` for a
/// histogram `x`); `labels` are sorted by label name, values unescaped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
    /// The line's own timestamp, ms since the epoch (OpenMetrics seconds are converted).
    pub timestamp_ms: Option<i64>,
}

/// One metric family: its metadata and its samples in body order (a repeated
/// (name, labels) keeps the last).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Family {
    pub name: String,
    pub kind: MetricType,
    pub help: Option<String>,
    /// OpenMetrics `# UNIT`.
    pub unit: Option<String>,
    pub samples: Vec<Sample>,
}

/// A parsed body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exposition {
    pub format: Format,
    pub families: Vec<Family>,
}

impl Exposition {
    pub fn family(&self, name: &str) -> Option<&Family> {
        self.families.iter().find(|f| f.name == name)
    }
}

/// Why a body is not Prometheus text: the 1-based line and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses a body. `content_type` is the response's header when known (it selects
/// OpenMetrics; absent or anything else means 0.0.4, with OpenMetrics still recognised by
/// its `# EOF`).
pub fn parse(text: &str, content_type: Option<&str>) -> Result<Exposition, ParseError> {
    let _ = (text, content_type);
    Err(ParseError {
        line: 0,
        message: "the exposition parser is not written yet".into(),
    })
}
