//! Metrics of inferbench: pure functions from evidence records to results, under named,
//! versioned definition sets. The same records can be re-scored under any set at any time.
//!
//! Sets: [`aiperf::NAME`] (`aiperf-0.13`), AIPerf 0.13.0's definitions. Formulas, units and
//! validity rules are documented in `docs/metrics.md`.

pub mod adapter;
pub mod aiperf;
pub mod confidence;
pub mod crosswalk;
pub mod genai_perf;
pub mod mlperf;
pub mod schedule;
pub mod stats;
pub mod sweepline;
mod table;
pub mod vllm_bench;

use inferbench_core::summary::{RecordMetric, Summary};
use inferbench_core::{Evidence, Phase};

/// Per-request metric values of one record (display units), for `profile_export.jsonl`.
#[derive(Clone, Debug, PartialEq)]
pub struct PerRecord {
    /// [`inferbench_core::Record::id`].
    pub id: u64,
    /// Empty when no metric applies (e.g. an error record without a client ISL).
    pub metrics: Vec<RecordMetric>,
}

/// Everything one definition set computes for one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Computed {
    pub summary: Summary,
    /// One entry per record of the phase, in evidence order.
    pub per_record: Vec<PerRecord>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetricsError {
    UnknownDefinitions {
        name: String,
        known: &'static [&'static str],
    },
    /// A setting of the set is invalid (e.g. a `--goodput` it cannot read).
    Invalid(String),
}

impl std::fmt::Display for MetricsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetricsError::UnknownDefinitions { name, known } => write!(
                f,
                "unknown metric definitions '{name}' (known: {})",
                known.join(", ")
            ),
            MetricsError::Invalid(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for MetricsError {}

/// Sets that the streaming [`Accumulator`] (a live run) computes.
const SETS: &[&str] = &[aiperf::NAME];

/// Every definition set, AIPerf's first (what a live run writes).
pub const ALL_SETS: &[&str] = &[
    aiperf::NAME,
    genai_perf::SET_0_0_13,
    genai_perf::SET_0_0_10,
    genai_perf::SET_0_0_4,
    genai_perf::SET_0_0_1,
    vllm_bench::NAME,
    mlperf::NAME,
];

/// Names of the definition sets this build can compute (the live run's set first).
pub fn definition_sets() -> &'static [&'static str] {
    ALL_SETS
}

/// Computes any definition set over the records of `phase`. `count` is the run's tokenizer
/// (the GenAI-Perf sets count tokens per response, as Perf Analyzer's data lets them);
/// `goodput` is `--goodput` in the set's own syntax (AIPerf and GenAI-Perf:
/// `metric:value …` in display units; vLLM: `ttft:ms tpot:ms e2el:ms`); `confidence_level`
/// is the good fraction's Wilson interval (AIPerf's set).
pub fn compute_set(
    set: &str,
    evidence: &Evidence,
    phase: Phase,
    count: &dyn Fn(&str) -> u64,
    goodput: Option<&str>,
    confidence_level: f64,
) -> Result<Computed, MetricsError> {
    match set {
        aiperf::NAME => {
            let slos = match goodput {
                Some(g) => aiperf::parse_slos(g).map_err(MetricsError::Invalid)?,
                None => Vec::new(),
            };
            compute_with_slos(set, evidence, phase, slos, confidence_level)
        }
        s if genai_perf::SETS.contains(&s) => {
            let slos = match goodput {
                Some(g) => parse_pairs(g)?
                    .into_iter()
                    .map(|(metric, value)| genai_perf::GoodputSlo { metric, value })
                    .collect(),
                None => Vec::new(),
            };
            genai_perf::compute_with_goodput(s, evidence, phase, count, &slos)
        }
        vllm_bench::NAME => {
            let g = match goodput {
                Some(g) => vllm_bench::Goodput::parse(g).map_err(MetricsError::Invalid)?,
                None => vllm_bench::Goodput::default(),
            };
            Ok(vllm_bench::compute_with_goodput(evidence, phase, &g))
        }
        mlperf::NAME => {
            if goodput.is_some() {
                return Err(MetricsError::Invalid(
                    "--goodput: mlperf-loadgen has no goodput (its verdicts are the latency targets)"
                        .into(),
                ));
            }
            Ok(mlperf::compute(evidence, phase))
        }
        _ => Err(MetricsError::UnknownDefinitions {
            name: set.to_string(),
            known: ALL_SETS,
        }),
    }
}

/// `metric:value` pairs separated by spaces (GenAI-Perf's `--goodput` syntax).
fn parse_pairs(spec: &str) -> Result<Vec<(String, f64)>, MetricsError> {
    spec.split_whitespace()
        .map(|item| {
            let (m, v) = item.split_once(':').ok_or_else(|| {
                MetricsError::Invalid(format!("--goodput {item:?}: expected metric:value"))
            })?;
            let v: f64 = v.parse().map_err(|_| {
                MetricsError::Invalid(format!("--goodput {item:?}: {v:?} is not a number"))
            })?;
            Ok((m.to_string(), v))
        })
        .collect()
}

/// `compute` with goodput SLOs (`--goodput`) and the Wilson interval's confidence level.
pub fn compute_with_slos(
    definitions: &str,
    evidence: &Evidence,
    phase: Phase,
    slos: Vec<aiperf::Slo>,
    confidence_level: f64,
) -> Result<Computed, MetricsError> {
    let mut acc =
        Accumulator::new(definitions, &evidence.header)?.with_slos(slos, confidence_level);
    let per_record = evidence
        .records_of(phase)
        .map(|r| PerRecord {
            id: r.id,
            metrics: acc.push(r),
        })
        .collect();
    Ok(Computed {
        summary: acc.finish(evidence.window(phase)),
        per_record,
    })
}

/// Compute the metrics of `phase` under the definition set named `definitions`.
pub fn compute(
    definitions: &str,
    evidence: &Evidence,
    phase: Phase,
) -> Result<Computed, MetricsError> {
    match definitions {
        aiperf::NAME => Ok(aiperf::compute(evidence, phase)),
        vllm_bench::NAME => Ok(vllm_bench::compute(evidence, phase)),
        mlperf::NAME => Ok(mlperf::compute(evidence, phase)),
        s if genai_perf::SETS.contains(&s) => Err(MetricsError::Invalid(format!(
            "{s} counts tokens per response: use compute_set with the run's tokenizer"
        ))),
        _ => Err(MetricsError::UnknownDefinitions {
            name: definitions.to_string(),
            known: ALL_SETS,
        }),
    }
}

/// Folds records one at a time into a definition set's results: what a live run uses, so
/// that it keeps no record in memory after writing it. `compute` is the same fold over a
/// whole evidence file.
pub enum Accumulator {
    Aiperf(Box<aiperf::Accumulator>),
}

impl Accumulator {
    pub fn new(
        definitions: &str,
        header: &inferbench_core::EvidenceHeader,
    ) -> Result<Self, MetricsError> {
        match definitions {
            aiperf::NAME => Ok(Accumulator::Aiperf(Box::new(aiperf::Accumulator::new(
                header,
            )))),
            _ => Err(MetricsError::UnknownDefinitions {
                name: definitions.to_string(),
                known: SETS,
            }),
        }
    }

    /// Count goodput against these SLOs (`--goodput`), the good fraction's Wilson interval at
    /// `confidence_level`.
    pub fn with_slos(self, slos: Vec<aiperf::Slo>, confidence_level: f64) -> Self {
        match self {
            Accumulator::Aiperf(a) => {
                Accumulator::Aiperf(Box::new(a.with_slos(slos, confidence_level)))
            }
        }
    }

    /// Fold one record in; returns its per-record metrics.
    pub fn push(&mut self, r: &inferbench_core::Record) -> Vec<RecordMetric> {
        match self {
            Accumulator::Aiperf(a) => a.push(r),
        }
    }

    /// The results, given the phase's window (the throughput denominator).
    pub fn finish(self, window: Option<inferbench_core::PhaseWindow>) -> Summary {
        match self {
            Accumulator::Aiperf(a) => a.finish(window),
        }
    }
}
