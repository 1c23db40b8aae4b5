//! Metrics of inferbench: pure functions from evidence records to results, under named,
//! versioned definition sets. The same records can be re-scored under any set at any time.
//!
//! The sets are listed once, in [`registry`] (name, releases covered, `--goodput` parser,
//! scorer); [`aiperf::NAME`] (`aiperf-0.13`, AIPerf 0.13.0's definitions) is what a live run
//! writes. Formulas, units and validity rules are documented in `docs/metrics.md` and
//! `docs/definitions/`.

pub mod adapter;
pub mod aiperf;
pub mod column;
pub mod confidence;
pub mod correctness;
pub mod crosswalk;
pub mod genai_perf;
pub mod inference;
pub mod mlperf;
pub mod registry;
pub mod schedule;
pub mod stats;
pub mod sweepline;
mod table;
pub mod vllm_bench;

use inferbench_core::summary::{RecordMetric, Summary};
use inferbench_core::{Evidence, Phase};

pub use registry::{DefinitionSet, Goodput, find, help_text, registry};

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

/// Names of the definition sets this build can compute (the live run's set first), from
/// the [`registry`].
pub fn definition_sets() -> &'static [&'static str] {
    registry::names()
}

/// Computes any definition set over the records of `phase`: [`find`] the set, parse
/// `goodput` (`--goodput` in the set's own syntax) with [`DefinitionSet::parse_goodput`], then
/// [`DefinitionSet::score`]. An entry point that has already parsed `--goodput` scores
/// through the set directly.
pub fn compute_set(
    set: &str,
    evidence: &Evidence,
    phase: Phase,
    count: &dyn Fn(&str) -> u64,
    goodput: Option<&str>,
    confidence_level: f64,
) -> Result<Computed, MetricsError> {
    let s = find(set)?;
    let g = match goodput {
        Some(g) => s.parse_goodput(g)?,
        None => Goodput::None,
    };
    s.score(evidence, phase, count, &g, confidence_level)
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

/// Compute the metrics of `phase` under the definition set named `definitions`, without
/// goodput. The GenAI-Perf sets need the run's tokenizer: use [`compute_set`] for them.
pub fn compute(
    definitions: &str,
    evidence: &Evidence,
    phase: Phase,
) -> Result<Computed, MetricsError> {
    let s = find(definitions)?;
    if s.is_genai_perf() {
        return Err(MetricsError::Invalid(format!(
            "{} counts tokens per response: use compute_set with the run's tokenizer",
            s.name
        )));
    }
    s.score(evidence, phase, &|_| 0, &Goodput::None, 0.95)
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
        match find(definitions) {
            Ok(s) => s.accumulator(header),
            Err(_) => Err(MetricsError::UnknownDefinitions {
                name: definitions.to_string(),
                known: registry::streaming_names(),
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
