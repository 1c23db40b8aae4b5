//! Per-metric grading of a run, live or imported (reference ledger-gate.md §5): the run's
//! identity, what its directory holds, and the rules of [`rules`].

pub mod rules;

use inferbench_core::Phase;
use inferbench_core::grade::Grade;
use inferbench_core::identity::Identity;
use inferbench_import::SourceTool;

use crate::Failure;
use crate::offline::Loaded;

/// The run's identity: the manifest's (or, for a manifest written before identity was recorded,
/// rebuilt from its fields), or an import's recovered one.
pub fn identity_of(loaded: &Loaded) -> Identity {
    if let Some(i) = &loaded.imported {
        return i.identity.clone();
    }
    let Some(m) = &loaded.manifest else {
        return Identity::default();
    };
    if let Some(id) = &m.identity {
        return id.clone();
    }
    // An older manifest: its frozen workload is still beside it.
    let workload = loaded.run.workload().unwrap_or_default();
    crate::run_identity::rebuild(m, &workload, &loaded.evidence)
}

/// Whether the records show reasoning text (inline `<think>` or a separate field).
fn reasoning_seen(loaded: &Loaded) -> bool {
    loaded.evidence.records.iter().any(|r| {
        r.events.iter().any(|e| {
            e.reasoning.as_deref().is_some_and(|s| !s.is_empty())
                || e.content.as_deref().is_some_and(|c| c.contains("<think>"))
        })
    })
}

/// Re-scores under the native set and compares with the stored summary: the differences,
/// or why it could not be checked.
fn rescoring(loaded: &Loaded) -> Result<Vec<String>, String> {
    match (&loaded.imported, &loaded.manifest) {
        (Some(i), _) => {
            let Some(original) = &i.original_summary else {
                return Err("the tool's own summary file is not in the artifact".into());
            };
            // With the run's own SLOs, so that its goodput values are compared too.
            let own = inferbench_import::own_goodput(i);
            let computed = crate::offline::score_set(loaded, &i.native_definitions, own.as_deref())
                .map_err(|e| e.message)?;
            let (n, diffs) = crate::offline::compare_with_original(&computed.summary, original);
            if n == 0 {
                return Err("no value of the summary could be compared".into());
            }
            Ok(diffs)
        }
        (None, Some(m)) => {
            let stored = loaded
                .run
                .summary()
                .map_err(|e| e.message)?
                .ok_or_else(|| "the run's summary file is missing".to_string())?;
            let (scores, _) = crate::offline::rescore(&loaded.run, m).map_err(|e| e.message)?;
            Ok(crate::offline::differences(&scores, &stored))
        }
        (None, None) => Err("neither our run nor an import".into()),
    }
}

/// The metric tags to grade: those the set computes from the records, or, for a summary
/// without records, the summary's own.
fn tags(loaded: &Loaded, set: &str, has_records: bool) -> Result<Vec<String>, Failure> {
    if !has_records
        && let Some(o) = loaded
            .imported
            .as_ref()
            .and_then(|i| i.original_summary.as_ref())
            .and_then(|s| s.as_object())
    {
        return Ok(o
            .iter()
            .filter(|(_, v)| v.is_object() || v.is_number())
            .map(|(k, _)| k.clone())
            .collect());
    }
    let computed = crate::offline::score_set(loaded, set, None)?;
    Ok(computed
        .summary
        .metrics
        .iter()
        .map(|m| m.tag.clone())
        .collect())
}

/// Grades every metric of the run under `set` (default: the run's native set).
pub fn grade(loaded: &Loaded, set: Option<&str>) -> Result<Grade, Failure> {
    let set = set.unwrap_or(loaded.native_set()).to_string();
    inferbench_metrics::find(&set).map_err(|e| Failure::input(format!("--definitions: {e}")))?;
    if loaded.streamed {
        return grade_streamed(loaded, &set);
    }
    let id = identity_of(loaded);
    let has_records = loaded
        .evidence
        .records_of(Phase::Profiling)
        .next()
        .is_some();
    let error_counts = match &loaded.imported {
        None => true,
        // AIPerf exports failed requests as records; Perf Analyzer's export drops them
        // unless they are there to see.
        Some(i) => {
            i.tool == SourceTool::Aiperf || loaded.evidence.records.iter().any(|r| r.is_error())
        }
    };
    let ev = rules::Evidence {
        per_request_records: has_records,
        error_counts,
        rescoring: rescoring(loaded),
        reasoning_seen: reasoning_seen(loaded),
        client_resources: client_resources(loaded),
    };
    let tags = tags(loaded, &set, has_records)?;
    let (metrics, flags) = rules::grade_tags(&tags, &id, &ev);
    Ok(Grade::new(&set, metrics, flags))
}

fn client_resources(loaded: &Loaded) -> bool {
    loaded.imported.is_none() && loaded.run.client_resources().ok().flatten().is_some()
}

/// Our run with its records left on disk: one streaming re-score under `aiperf-0.13` gives
/// the differences from the stored summary and, for that set, the tags; the reasoning seen
/// is the identity's measured accounting. Another set reads the records whole.
fn grade_streamed(loaded: &Loaded, set: &str) -> Result<Grade, Failure> {
    let Some(m) = &loaded.manifest else {
        return Err(Failure::input("a streamed run without a manifest"));
    };
    let id = identity_of(loaded);
    let (scores, _) = crate::offline::rescore(&loaded.run, m)?;
    let rescoring = loaded
        .run
        .summary()
        .map_err(|e| e.message)
        .and_then(|s| s.ok_or_else(|| "the run's summary file is missing".to_string()))
        .map(|stored| crate::offline::differences(&scores, &stored));
    let has_records = scores
        .profiling
        .metrics
        .iter()
        .find(|r| r.tag == "request_count")
        .and_then(|r| r.avg())
        .is_some_and(|n| n > 0.0);
    let reasoning_seen = id
        .get("reasoning_accounting")
        .and_then(|p| p.value.as_str())
        .is_some_and(|v| v != "none");
    let ev = rules::Evidence {
        per_request_records: has_records,
        error_counts: true,
        rescoring,
        reasoning_seen,
        client_resources: client_resources(loaded),
    };
    let tags: Vec<String> = if set == loaded.native_set() {
        scores
            .profiling
            .metrics
            .iter()
            .map(|r| r.tag.clone())
            .collect()
    } else {
        tags(loaded, set, has_records)?
    };
    let (metrics, flags) = rules::grade_tags(&tags, &id, &ev);
    Ok(Grade::new(set, metrics, flags))
}

/// The grade as a table: metric, tier, each downgrade's field and reason; then the
/// identity's missing pins and flags.
pub fn render(grade: &Grade, id: &Identity) -> String {
    let mut out = format!(
        "grade under {} (overall: {})\n",
        grade.definition_set,
        grade.overall.as_str()
    );
    let width = grade
        .metrics
        .iter()
        .map(|m| m.metric.len())
        .max()
        .unwrap_or(6)
        .max(6);
    out.push_str(&format!("{:width$}  {:12}  downgrades\n", "metric", "tier"));
    for m in &grade.metrics {
        let first = m.downgrades.first();
        out.push_str(&format!(
            "{:width$}  {:12}  {}\n",
            m.metric,
            m.tier.as_str(),
            first.map_or("-".to_string(), |d| format!(
                "{} ({}): {}",
                d.field,
                d.tier.as_str(),
                d.reason
            ))
        ));
        for d in m.downgrades.iter().skip(1) {
            out.push_str(&format!(
                "{:width$}  {:12}  {} ({}): {}\n",
                "",
                "",
                d.field,
                d.tier.as_str(),
                d.reason
            ));
        }
    }
    if id.missing.is_empty() {
        out.push_str("missing pins: none\n");
    } else {
        out.push_str("missing pins:\n");
        for (name, why) in &id.missing {
            out.push_str(&format!("  {name}: {why}\n"));
        }
    }
    let mut flags: Vec<String> = id
        .flags
        .iter()
        .map(|f| format!("{}: {}", f.name, f.detail))
        .collect();
    for f in &grade.flags {
        if !id.flags.iter().any(|x| &x.name == f) {
            flags.push(match f.as_str() {
                "client_bound_suspect" => format!(
                    "{f}: concurrency of {} or more without client resource evidence: throughput and TTFT may measure the client",
                    rules::HIGH_CONCURRENCY
                ),
                _ => f.clone(),
            });
        }
    }
    if flags.is_empty() {
        out.push_str("flags: none\n");
    } else {
        out.push_str("flags:\n");
        for f in flags {
            out.push_str(&format!("  {f}\n"));
        }
    }
    out
}
