//! A gate specification as typed data (`docs/gate.md`; reference `ledger-gate.md` §4.2).
//! [`super::parse`] builds it from TOML, checking every field; the evaluator reads only this.
//!
//! Units: every limit is stored in the metric's display unit (ms for latencies, tokens/sec
//! for token throughputs, requests/sec for request throughputs, a fraction 0–1 for
//! fractions); the parser converts what the file wrote (`2 s`, `90 %`) and refuses a unit
//! of another dimension.

use serde::Serialize;

/// The whole specification.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GateSpec {
    /// The file as given (messages only; never in the verdict).
    #[serde(skip)]
    pub file: String,
    /// `sha256:` of the file's bytes: the verdict and the ledger name the spec by it.
    pub digest: String,
    pub name: String,
    pub version: u64,
    /// An epoch id the runs must belong to (its fingerprint is read from the ledger), or a
    /// fingerprint `sha256:…` written out.
    pub epoch: Option<String>,
    /// Every metric of every rule is read under this set (default `aiperf-0.13`).
    pub definition_set: String,
    /// The traffic profile the runs must carry (`regression`, `service-load`,
    /// `trace-replay`), checked against the identity's `profile` pin.
    pub profile: Option<String>,
    /// One-sided level of every bound: confidence `1 − alpha` (default 0.05).
    pub alpha: f64,
    pub burden: Burden,
    pub on_missing: OnMissing,
    pub multiplicity: MultiplicityMethod,
    pub evidence: EvidenceRequirements,
    pub rules: Vec<Rule>,
}

/// Who must prove what (reference §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Burden {
    /// Acceptance: PASS iff the confidence bound is inside the limit (the default).
    DemonstratePass,
    /// Regression watch: FAIL iff the confidence bound is beyond the limit.
    DemonstrateFail,
}

/// What a rule with no data becomes: never PASS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnMissing {
    Fail,
    Inconclusive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MultiplicityMethod {
    /// Holm over the rules with `compare = "baseline"`.
    Holm,
    None,
}

/// `[gate.evidence]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvidenceRequirements {
    /// Runs per side for run-level rules (reproducibility, baseline comparisons); default 1.
    pub min_runs: u32,
    /// Profiling requests each run must hold (attempted, errors included); default 0.
    pub min_requests_per_run: u64,
    /// Bootstrap resamples (default 2000) and its seed (from the runs' ids: the verdict is
    /// the same for the same runs).
    pub resamples: usize,
}

/// The rule families of seed 000, plus the optional throughput family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Serialization,
    Workload,
    LoadDelivery,
    ClientHeadroom,
    Latency,
    Goodput,
    Correctness,
    Reproducibility,
    Throughput,
}

impl Family {
    pub const ALL: [Family; 9] = [
        Family::Serialization,
        Family::Workload,
        Family::LoadDelivery,
        Family::ClientHeadroom,
        Family::Latency,
        Family::Goodput,
        Family::Correctness,
        Family::Reproducibility,
        Family::Throughput,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Family::Serialization => "serialization",
            Family::Workload => "workload",
            Family::LoadDelivery => "load_delivery",
            Family::ClientHeadroom => "client_headroom",
            Family::Latency => "latency",
            Family::Goodput => "goodput",
            Family::Correctness => "correctness",
            Family::Reproducibility => "reproducibility",
            Family::Throughput => "throughput",
        }
    }

    pub fn parse(s: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// Families 1–4: a rule of these not passing makes the run INVALID.
    pub fn is_precondition(self) -> bool {
        matches!(
            self,
            Family::Serialization
                | Family::Workload
                | Family::LoadDelivery
                | Family::ClientHeadroom
        )
    }
}

/// One `[[rule]]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rule {
    pub id: String,
    /// Line of the `[[rule]]` header in the file (messages, the Markdown packet).
    #[serde(skip)]
    pub line: usize,
    pub body: RuleBody,
}

impl Rule {
    pub fn family(&self) -> Family {
        match &self.body {
            RuleBody::Serialization(_) => Family::Serialization,
            RuleBody::Workload(_) => Family::Workload,
            RuleBody::LoadDelivery(_) => Family::LoadDelivery,
            RuleBody::ClientHeadroom(_) => Family::ClientHeadroom,
            RuleBody::Latency(_) => Family::Latency,
            RuleBody::Goodput(_) => Family::Goodput,
            RuleBody::Correctness(_) => Family::Correctness,
            RuleBody::Reproducibility(_) => Family::Reproducibility,
            RuleBody::Throughput(_) => Family::Throughput,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum RuleBody {
    Serialization(SerializationRule),
    Workload(WorkloadRule),
    LoadDelivery(LoadDeliveryRule),
    ClientHeadroom(ClientHeadroomRule),
    Latency(LatencyRule),
    Goodput(GoodputRule),
    Correctness(CorrectnessRule),
    Reproducibility(ReproducibilityRule),
    Throughput(ThroughputRule),
}

/// Family 1: the rendered requests and parsed responses match the agreed contract.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SerializationRule {
    /// The frozen workload's digest (`sha256:…`) the run must carry (identity `workload_digest`).
    pub frozen_workload: Option<String>,
    /// The chat template's digest the run must carry (identity `chat_template_digest`).
    pub chat_template: Option<String>,
    /// Representative request/response pairs quoted in the verdict (default 4).
    pub inspect_sample: usize,
    pub require: Vec<Requirement>,
}

/// What the responses must show, checked over every profiling record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Requirement {
    /// Every request was sent with `stream: true` and answered as SSE.
    Streaming,
    /// Reasoning text, when present, arrived in its own field, never inside the content.
    ReasoningSeparated,
    /// Every completed stream carried a `usage` object in its last data event.
    UsageInFinalChunk,
    /// No event was left unparsed (SSE data that is not JSON, unknown shapes).
    NoUnparsedEvents,
    /// The first data event of every stream carried only the role (no text).
    RoleOnlyFirstChunk,
    /// Every completed response ended with `[DONE]` (streaming) or a whole body.
    Terminated,
}

impl Requirement {
    pub const ALL: [Requirement; 6] = [
        Requirement::Streaming,
        Requirement::ReasoningSeparated,
        Requirement::UsageInFinalChunk,
        Requirement::NoUnparsedEvents,
        Requirement::RoleOnlyFirstChunk,
        Requirement::Terminated,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Requirement::Streaming => "streaming",
            Requirement::ReasoningSeparated => "reasoning_separated",
            Requirement::UsageInFinalChunk => "usage_in_final_chunk",
            Requirement::NoUnparsedEvents => "no_unparsed_events",
            Requirement::RoleOnlyFirstChunk => "role_only_first_chunk",
            Requirement::Terminated => "terminated",
        }
    }

    pub fn parse(s: &str) -> Option<Requirement> {
        Requirement::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// Family 2: achieved input and output lengths against the frozen specification.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadRule {
    /// `server_usage` or `tokenizer` (or `tokenizer:sha256:…`): the counts must come from
    /// it, for every record (mixed sources fail).
    pub token_source: Option<String>,
    pub isl: Option<LengthSpec>,
    pub osl: Option<LengthSpec>,
    /// Generation controls the frozen bodies must carry (read from the identity's
    /// `generation_controls` pin).
    pub ignore_eos: Option<bool>,
    pub min_tokens: Option<u64>,
}

/// A length distribution's specification, in tokens.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LengthSpec {
    /// The specified mean (tokens).
    pub mean: f64,
    /// At least this fraction of completed requests has exactly `mean` tokens (a stddev-0
    /// workload), when given.
    pub exact_fraction_min: Option<f64>,
    /// The achieved mean over the specified mean must lie in `[lo, hi]` (MLPerf's 0.9–1.1),
    /// when given.
    pub mean_band: Option<(f64, f64)>,
}

/// Family 3: the target arrivals were dispatched, without unapproved throttling.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoadDeliveryRule {
    pub arrival: Option<ArrivalSpec>,
    /// Achieved request rate over the target (rate mode) or over the scheduled rate.
    pub achieved_rate_band: Option<(f64, f64)>,
    /// p99 of `start − planned` over every profiling record, ms.
    pub send_lag_p99_ms_max: Option<f64>,
    /// Records sent over records scheduled in the profiling phase.
    pub dispatched_fraction_min: Option<f64>,
    /// Forbid: in a rate-driven run, a request that waited for the concurrency ceiling
    /// fails the rule.
    pub unapproved_throttle: Throttle,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArrivalSpec {
    /// `rate`, `concurrency` or `fixed_schedule`.
    pub mode: String,
    pub rate_rps: Option<f64>,
    pub concurrency: Option<u64>,
    /// `poisson`, `constant`, `gamma`.
    pub process: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Throttle {
    Forbid,
    Allow,
}

/// Family 4: the client was not the bottleneck.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClientHeadroomRule {
    /// Worker levels a qualification must have run (needs the qualification result; until
    /// one exists this check is INCONCLUSIVE with the gap named).
    pub worker_levels_min: Option<u32>,
    pub plateau_tolerance: Option<f64>,
    /// Largest `some avg10` CPU pressure of the client's cgroup or host, percent.
    pub client_cpu_pressure_some_avg10_max: Option<f64>,
    /// Largest client CPU utilisation (process CPU time over wall time, percent of one core).
    pub client_cpu_utilization_max: Option<f64>,
    /// Forbid: a schedule lag that grows over the run (backlog) fails.
    pub backlog_growth: Throttle,
    /// `qualification = "path/qualification.json"` (relative to the spec): the decided
    /// client-saturation qualification the candidate runs are judged against.
    pub qualification: Option<QualificationRef>,
}

/// A `qualification.json` named by a client-headroom rule, read when the spec is parsed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QualificationRef {
    /// As the spec wrote it.
    pub path: String,
    /// `sha256:` of the file's bytes (named in the check, so the verdict says which one).
    pub digest: String,
    #[serde(skip)]
    pub decided: Box<crate::qualify::Qualification>,
}

/// A comparison operator of a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Op {
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = ">")]
    Gt,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Le => "<=",
            Op::Lt => "<",
            Op::Ge => ">=",
            Op::Gt => ">",
        }
    }

    /// True for `<=` and `<`: the limit is a ceiling.
    pub fn is_upper(self) -> bool {
        matches!(self, Op::Le | Op::Lt)
    }

    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Op::Le => value <= limit,
            Op::Lt => value < limit,
            Op::Ge => value >= limit,
            Op::Gt => value > limit,
        }
    }
}

/// The statistic a latency or throughput rule bounds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatSpec {
    /// A percentile, 0 < q < 100 (`p99` → 99.0).
    Percentile(f64),
    Mean,
    Max,
}

impl StatSpec {
    /// `p99`, `p99.9`, `avg`, `max`.
    pub fn label(self) -> String {
        match self {
            StatSpec::Percentile(q) => format!("p{q}"),
            StatSpec::Mean => "avg".into(),
            StatSpec::Max => "max".into(),
        }
    }
}

/// How a bound is established.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundMethod {
    /// Distribution-free one-sided confidence bound from order statistics (percentiles).
    OrderStatistic,
    /// Seeded percentile bootstrap (means, percentiles).
    Bootstrap,
    /// The point estimate against the limit (k6 parity): no uncertainty, stated as such.
    Point,
}

/// Where latencies are measured from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimingOrigin {
    /// From the request's actual start (the definition set's own metric).
    Sent,
    /// From the schedule's planned send time (coordinated-omission safe):
    /// `time_to_first_token_from_planned`, `request_latency_from_planned`.
    PlannedSend,
}

/// Family 5: an absolute SLO on one statistic of one per-request metric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyRule {
    /// A per-request metric tag of the definition set (`time_to_first_token`, …).
    pub metric: String,
    /// `per_request` (the only population latency rules take today; named so it is written).
    pub population: String,
    pub timing_origin: TimingOrigin,
    pub stat: StatSpec,
    pub op: Op,
    /// In the metric's display unit (ms), converted from `unit`.
    pub limit: f64,
    /// The unit the file wrote (kept for the verdict).
    pub unit: String,
    pub method: BoundMethod,
    /// Errored requests count as +∞ latency when true (default false: they are in goodput).
    pub include_errors: bool,
    /// Samples below which the rule is INCONCLUSIVE whatever the bound says (default: the
    /// smallest n for which the order-statistic bound exists).
    pub min_samples: Option<u64>,
}

/// Family 6: joint per-request SLOs, error-inclusive attainment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GoodputRule {
    /// Per-request metric tag → limit in its display unit (a request is good when every
    /// metric is ≤ its limit; for a throughput-per-user metric, ≥).
    pub slo: Vec<(String, f64)>,
    pub denominator: Denominator,
    /// Smallest acceptable attainment fraction (0–1).
    pub min_fraction: f64,
    pub bound: FractionBound,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Denominator {
    /// Every profiling request attempted: errors and interrupted streams count as not good.
    Attempted,
    /// Completed requests only (shown, never the default).
    Completed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FractionBound {
    /// One-sided Wilson bound at confidence 1 − alpha.
    WilsonLower,
    Point,
}

/// Family 7: expected answers, scored during the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CorrectnessRule {
    /// The expected-answer set's digest the run must carry.
    pub answers: Option<String>,
    /// Absolute minimum accuracy (0–1), tested with the Wilson lower bound.
    pub min_score: Option<f64>,
    /// Minimum accuracy relative to the reference score (the baseline runs' accuracy, or
    /// `reference_score`), MLPerf-style 0.99.
    pub min_score_relative: Option<f64>,
    pub reference_score: Option<f64>,
    /// Largest fraction of empty or degenerate (one token repeated) outputs.
    pub degenerate_output_max: Option<f64>,
}

/// Family 8: repeated runs equivalent within declared margins (through `compare`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReproducibilityRule {
    pub compare: CompareWith,
    /// `compare` margins, `METRIC[.STAT]` → `±VALUE` as `compare --margin` reads them.
    pub margins: Vec<(String, String)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareWith {
    /// The candidate's own runs: the first half against the second (or run 1 against the
    /// rest when fewer than four).
    #[serde(rename = "self")]
    SelfRuns,
    /// The baseline runs (`--baseline`, or the epoch's pinned baseline in the ledger).
    Baseline,
}

/// Optional family: throughput, absolute or non-inferior to the baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThroughputRule {
    /// A run-level metric tag (`output_token_throughput`, `request_throughput`).
    pub metric: String,
    pub compare: Option<CompareWith>,
    /// Relative non-inferiority margin, e.g. -0.02 for "no worse than 2 %".
    pub non_inferiority: Option<f64>,
    /// Absolute floor in the metric's display unit.
    pub min: Option<f64>,
    pub unit: Option<String>,
}
