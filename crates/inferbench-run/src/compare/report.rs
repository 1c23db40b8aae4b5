//! The result of a comparison, as data: what the console table, the Markdown and the JSON
//! (`docs/schemas/compare.schema.json`) are rendered from.

use serde::Serialize;

use super::margins::Direction;

/// The JSON document's `schema` value.
pub const SCHEMA: &str = "inferbench.compare/1";

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub definition_set: String,
    /// The one-sided level α of each test; intervals are two-sided `1 − 2α`.
    pub alpha: f64,
    pub confidence: f64,
    /// Bootstrap resamples `B` (single-run comparisons).
    pub resamples: usize,
    /// `declared` (from --margin / --margins) or `default` (starting points, not measured).
    pub margins: &'static str,
    pub baseline: Vec<RunRef>,
    pub candidate: Vec<RunRef>,
    pub epoch: EpochCheck,
    pub metrics: Vec<MetricReport>,
    pub multiplicity: Multiplicity,
    /// Keys of the metrics judged `worse` after Holm.
    pub worse: Vec<String>,
    /// 0: nothing worse; 1: a metric is worse (`inferbench_run::exit`).
    pub exit_code: u8,
    pub notes: Vec<String>,
}

/// One run of a side.
#[derive(Clone, Debug, Serialize)]
pub struct RunRef {
    pub path: String,
    pub id: String,
    pub native_set: String,
    /// Profiling requests attempted (errors included) and failed.
    pub attempted: u64,
    pub errors: u64,
    /// The epoch fingerprint of the run's identity, when it records one.
    pub fingerprint: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct EpochCheck {
    /// Whether both sides record an identity (without one the epoch cannot be checked).
    pub checked: bool,
    /// Whether every run's contract pins agree (None when not checked).
    #[serde(rename = "match")]
    pub matched: Option<bool>,
    /// Contract pins that differ (shown when `--allow-epoch-change` let a comparison across
    /// epochs go ahead).
    pub changed: Vec<PinDiff>,
    pub note: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct PinDiff {
    pub name: String,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Equivalent,
    Better,
    Worse,
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Equivalent => "equivalent",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// How a metric's interval was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// k ≥ 3 runs per side: Welch + TOST, the run as the unit.
    WelchTost,
    /// Fewer runs: seeded bootstrap over requests (pooled when a side has several runs).
    Bootstrap,
    /// A fraction: Wilson per side, Newcombe for the difference.
    Newcombe,
    /// No interval could be computed (see the reason).
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// The difference is `ln(candidate / baseline)` (a relative margin).
    Log,
    /// The difference is `candidate − baseline` in the metric's unit.
    Linear,
    /// The difference of two fractions (0.01 = 1 pp).
    Fraction,
}

#[derive(Clone, Debug, Serialize)]
pub struct MarginReport {
    pub text: String,
    /// On the difference's scale.
    pub lower: f64,
    pub upper: f64,
    pub default: bool,
}

/// An interval; a missing bound is `null` (an order-statistic bound may not exist).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Bounds {
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub confidence: f64,
    pub method: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct SideValue {
    /// The statistic (mean of the per-run values with several runs, the fraction for a
    /// fraction), in the metric's unit.
    pub value: Option<f64>,
    pub runs: usize,
    /// Requests behind the value (attempted, for a fraction).
    pub n: u64,
    pub interval: Option<Bounds>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DiffReport {
    /// On the report's scale.
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
    /// For the log scale: `exp` of the three, the ratio candidate/baseline.
    pub ratio: Option<[f64; 3]>,
    /// Welch–Satterthwaite degrees of freedom (Welch only).
    pub df: Option<f64>,
    /// The bootstrap seed (bootstrap only), derived from the runs' ids and the metric; a
    /// decimal string, since a u64 does not survive a JSON double.
    pub seed: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Needed {
    pub value: u64,
    /// `runs_per_side`, `requests_per_side` or `requests_per_arm`.
    pub unit: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct MetricReport {
    pub key: String,
    pub metric: String,
    /// `avg`, `p99`, `value` or `fraction`.
    pub stat: String,
    pub unit: String,
    pub direction: Direction,
    pub method: Method,
    pub scale: Scale,
    pub margin: MarginReport,
    pub baseline: SideValue,
    pub candidate: SideValue,
    pub difference: Option<DiffReport>,
    /// One-sided p-value of "worse by more than the margin", before and after Holm.
    pub p_worse: Option<f64>,
    pub p_worse_holm: Option<f64>,
    pub verdict: Verdict,
    pub reason: String,
    /// For an inconclusive verdict: the size that would decide it, if the difference and
    /// spread stayed as observed.
    pub needed: Option<Needed>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Multiplicity {
    pub method: &'static str,
    /// Metrics with a test of "worse" in the family.
    pub family_size: usize,
    pub alpha: f64,
}
