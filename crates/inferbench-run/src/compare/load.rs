//! The two sides of a comparison: each directory expanded into its runs, each run scored
//! under one definition set, keeping only what the comparison reads (the summary, the
//! per-request values of the compared metrics, and the request counts).

use std::collections::BTreeMap;
use std::path::PathBuf;

use inferbench_core::identity::Identity;
use inferbench_core::summary::{RecordMetric, RecordMetricValue};
use inferbench_core::{EvidenceLine, Phase, Summary};

use crate::fold::Fold;
use crate::offline;
use crate::{Failure, Layout, RunDir};

/// One run of a side, scored.
#[derive(Clone, Debug)]
pub struct RunData {
    pub path: PathBuf,
    /// The evidence header's `benchmark_id` (for the bootstrap seed and the report).
    pub id: String,
    /// The set that reproduces the run's own numbers.
    pub native_set: String,
    pub identity: Option<Identity>,
    pub summary: Summary,
    /// Per-request values (display units) of the compared per-request metrics, in evidence
    /// order; a request without the metric (an error) contributes nothing.
    pub values: BTreeMap<String, Vec<f64>>,
    /// Profiling requests attempted (errors included): the fractions' denominator.
    pub attempted: u64,
    pub errors: u64,
    /// Good requests under `--goodput` (None without it).
    pub good: Option<u64>,
}

/// A directory before scoring: our run (scored streaming) or an import (loaded whole).
pub struct Pending {
    pub path: PathBuf,
    pub native_set: String,
    pub source: Source,
}

pub enum Source {
    Ours(Box<RunDir>),
    Imported(Box<offline::Loaded>),
}

/// Expands `dirs` (one side, named `side` in messages) into runs: a run directory is one
/// run, a `--num-profile-runs` directory its N runs, an import one run; a sweep is refused.
pub fn expand(
    side: &str,
    dirs: &[PathBuf],
    tokenizer: Option<&str>,
) -> Result<Vec<Pending>, Failure> {
    let mut out = Vec::new();
    for d in dirs {
        let rd = RunDir::open(d).map_err(|f| Failure::input(format!("{side}: {}", f.message)))?;
        if let Layout::Sweep { .. } = rd.layout {
            return Err(Failure::input(format!(
                "{side}: {} is a sweep: compare one cell's directory",
                d.display()
            )));
        }
        let runs = rd.runs();
        if runs.is_empty() {
            return Err(Failure::input(format!(
                "{side}: {} holds no runs",
                d.display()
            )));
        }
        for r in runs {
            out.push(match r.layout {
                Layout::Run => Pending {
                    path: r.path.clone(),
                    native_set: inferbench_metrics::aiperf::NAME.to_string(),
                    source: Source::Ours(Box::new(r)),
                },
                _ => {
                    let loaded = offline::load(&r.path, tokenizer)
                        .map_err(|f| Failure::input(format!("{side}: {}", f.message)))?;
                    Pending {
                        path: r.path.clone(),
                        native_set: loaded.native_set().to_string(),
                        source: Source::Imported(Box::new(loaded)),
                    }
                }
            });
        }
    }
    Ok(out)
}

/// Scores one run under `set`, keeping the per-request values of `tags`.
pub fn score(
    p: Pending,
    set: &str,
    goodput: Option<&str>,
    tags: &[String],
    tokenizer: Option<&str>,
) -> Result<RunData, Failure> {
    let mut values: BTreeMap<String, Vec<f64>> =
        tags.iter().map(|t| (t.clone(), Vec::new())).collect();
    let (summary, attempted, errors, id, identity) = match p.source {
        Source::Ours(run) if set == inferbench_metrics::aiperf::NAME => {
            // Streamed: no record is kept once folded.
            let manifest = run.manifest()?;
            let slos = match goodput {
                Some(g) => inferbench_metrics::find(set)
                    .and_then(|s| s.parse_goodput(g))
                    .and_then(|g| g.aiperf_slos())
                    .map_err(|e| Failure::input(format!("--goodput: {e}")))?,
                None => Vec::new(),
            };
            let mut lines = run.evidence()?;
            let id = lines.header().benchmark_id.clone();
            let mut fold = Fold::new(lines.header(), &slos, manifest.plan.confidence_level)?;
            let (mut attempted, mut errors) = (0u64, 0u64);
            for line in &mut lines {
                match line.map_err(|e| Failure::input(e.to_string()))? {
                    EvidenceLine::Record(r) => {
                        if r.phase() == Phase::Profiling {
                            attempted += 1;
                            errors += u64::from(r.is_error());
                        }
                        if let Some(m) = fold.push(&r) {
                            keep(&mut values, &m);
                        }
                    }
                    EvidenceLine::Phase(w) => fold.phase(w),
                    _ => {}
                }
            }
            let scores = fold.finish(&manifest.plan);
            (scores.profiling, attempted, errors, id, manifest.identity)
        }
        Source::Ours(run) => {
            let loaded = offline::load(&run.path, tokenizer)?;
            score_loaded(&loaded, set, goodput, &mut values)?
        }
        Source::Imported(loaded) => score_loaded(&loaded, set, goodput, &mut values)?,
    };
    let good = goodput.and_then(|_| {
        summary
            .get("good_request_count")
            .and_then(|m| m.scalar())
            .map(|g| g as u64)
    });
    if goodput.is_some() && good.is_none() {
        return Err(Failure::input(format!(
            "--goodput: {} scored under {set} reports no good request count",
            p.path.display()
        )));
    }
    Ok(RunData {
        path: p.path,
        id,
        native_set: p.native_set,
        identity,
        summary,
        values,
        attempted,
        errors,
        good,
    })
}

type Scored = (Summary, u64, u64, String, Option<Identity>);

fn score_loaded(
    loaded: &offline::Loaded,
    set: &str,
    goodput: Option<&str>,
    values: &mut BTreeMap<String, Vec<f64>>,
) -> Result<Scored, Failure> {
    let computed = offline::score_set(loaded, set, goodput)?;
    for r in &computed.per_record {
        keep(values, &r.metrics);
    }
    let recs = loaded.evidence.records_of(Phase::Profiling);
    let (mut attempted, mut errors) = (0u64, 0u64);
    for r in recs {
        attempted += 1;
        errors += u64::from(r.is_error());
    }
    Ok((
        computed.summary,
        attempted,
        errors,
        loaded.evidence.header.benchmark_id.clone(),
        // An import's recovered identity, or ours (rebuilt for an older manifest).
        Some(crate::grade::identity_of(loaded)),
    ))
}

/// Appends the per-request values of the kept tags (a list-valued metric is not kept).
fn keep(values: &mut BTreeMap<String, Vec<f64>>, metrics: &[RecordMetric]) {
    for m in metrics {
        if let Some(v) = values.get_mut(m.tag.as_ref()) {
            match m.value {
                RecordMetricValue::Int(i) => v.push(i as f64),
                RecordMetricValue::Float(f) => v.push(f),
                RecordMetricValue::List(_) => {}
            }
        }
    }
}
