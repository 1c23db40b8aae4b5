//! `inferbench metrics DIR`: recompute every metric from a run directory's evidence, and the
//! shared code that turns evidence into the artifact files (used by `profile` too, so that
//! the live summary and the offline one come from the same function over the same file).

use std::path::Path;

use inferbench_artifacts::{RunArtifacts, file_names};
use inferbench_core::evidence::{EVIDENCE_FILE, Evidence};
use inferbench_core::manifest::{MANIFEST_FILE, Manifest};
use inferbench_core::plan::{REDACTED, RunPlan, is_sensitive_header};
use inferbench_core::record::{Phase, Record};
use inferbench_core::summary::Summary;
use inferbench_core::workload::Workload;
use inferbench_metrics::schedule::{ScheduleAccumulator, ScheduleRule, ScheduleVerdict};

use crate::Failure;
use crate::cli::MetricsArgs;

/// The metrics of one run under `definitions`: profiling, warmup (when there was one), and
/// the per-record values of the profiling records.
pub struct Scored {
    pub profiling: Summary,
    pub warmup: Option<Summary>,
    pub per_record: Vec<(u64, Vec<inferbench_core::summary::RecordMetric>)>,
}

/// The plan's `--goodput` SLOs (none without the flag).
pub fn slos_of(plan: &RunPlan) -> Result<Vec<inferbench_metrics::aiperf::Slo>, Failure> {
    match &plan.goodput {
        Some(g) => inferbench_metrics::aiperf::parse_slos(g).map_err(Failure::input),
        None => Ok(Vec::new()),
    }
}

/// Schedule evidence (inferbench's own metrics) appended to a profiling summary; returns
/// the verdict.
pub fn add_schedule_metrics(
    summary: &mut Summary,
    acc: ScheduleAccumulator,
    plan: &RunPlan,
) -> Option<ScheduleVerdict> {
    let r = plan.load.schedule_rule;
    let (metrics, verdict) = acc.finish(
        plan.load.request_rate.as_ref().map(|r| r.rate),
        ScheduleRule {
            max_lag_p99_ms: r.max_lag_p99_ms,
            min_achieved_pct: r.min_achieved_pct,
        },
    );
    summary.metrics.extend(metrics);
    verdict
}

/// One loud paragraph when the client did not keep its schedule.
pub fn schedule_warning(v: &ScheduleVerdict) -> Option<String> {
    if v.kept {
        return None;
    }
    Some(format!(
        "inferbench: WARNING: the client did not keep its schedule: schedule lag p99 {:.3} ms (limit {} ms), achieved rate {} of scheduled (limit {} %). The load delivered was not the load planned; latencies from the planned send time are in the summary (request_latency_from_planned).",
        v.lag_p99_ms,
        v.rule.max_lag_p99_ms,
        v.achieved_pct
            .map_or("n/a".to_string(), |p| format!("{p:.2} %")),
        v.rule.min_achieved_pct
    ))
}

pub fn score(definitions: &str, evidence: &Evidence, plan: &RunPlan) -> Result<Scored, Failure> {
    let slos = slos_of(plan)?;
    let c = inferbench_metrics::compute_with_slos(
        definitions,
        evidence,
        Phase::Profiling,
        slos.clone(),
        plan.confidence_level,
    )
    .map_err(|e| Failure::input(format!("--definitions: {e}")))?;
    let mut profiling = c.summary;
    let mut acc = ScheduleAccumulator::default();
    for r in evidence.records_of(Phase::Profiling) {
        acc.push(r);
    }
    add_schedule_metrics(&mut profiling, acc, plan);
    let warmup = if evidence.records_of(Phase::Warmup).next().is_some() {
        Some(
            inferbench_metrics::compute_with_slos(
                definitions,
                evidence,
                Phase::Warmup,
                slos,
                plan.confidence_level,
            )
            .map_err(|e| Failure::input(format!("--definitions: {e}")))?
            .summary,
        )
    } else {
        None
    };
    Ok(Scored {
        profiling,
        warmup,
        per_record: c
            .per_record
            .into_iter()
            .map(|p| (p.id, p.metrics))
            .collect(),
    })
}

/// The headers a record was sent with, as the raw export shows them (secrets redacted).
pub fn sent_headers(plan: &RunPlan) -> impl Fn(&Record) -> Vec<(String, String)> + '_ {
    move |r: &Record| {
        let mut h = vec![
            (
                "User-Agent".to_string(),
                format!("inferbench/{}", inferbench_core::TOOL_VERSION),
            ),
            ("X-Request-ID".to_string(), r.request_id.clone()),
            ("X-Correlation-ID".to_string(), r.correlation_id.clone()),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        if r.streaming {
            h.push(("Accept".to_string(), "text/event-stream".to_string()));
        }
        if plan.api_key.is_some() {
            h.push(("Authorization".to_string(), REDACTED.to_string()));
        }
        for (name, value) in &plan.headers {
            let v = if is_sensitive_header(name) {
                REDACTED.to_string()
            } else {
                value.expose().to_string()
            };
            h.push((name.clone(), v));
        }
        h
    }
}

/// Score the evidence under AIPerf 0.13 definitions and write every artifact. Returns the
/// console table.
pub fn write_outputs(
    run_dir: &Path,
    plan: &RunPlan,
    evidence: &Evidence,
    workload: &Workload,
    manifest: &mut Manifest,
) -> Result<String, Failure> {
    let scored = score(inferbench_metrics::definition_sets()[0], evidence, plan)?;
    let names = file_names(&plan.artifacts.prefix);
    let inputs = inferbench_workload::inputs_json(workload);
    let headers = sent_headers(plan);
    let written = inferbench_artifacts::write_run_artifacts(&RunArtifacts {
        dir: run_dir,
        names: &names,
        export_level: plan.artifacts.export_level,
        evidence,
        profiling: &scored.profiling,
        warmup: scored.warmup.as_ref(),
        record_metrics: &scored.per_record,
        plan,
        workload,
        inputs: &inputs,
        headers: &headers,
        manifest,
    })
    .map_err(|e| Failure::run(e.to_string()))?;
    manifest.files = written.files;
    Ok(written.console)
}

pub fn run(a: &MetricsArgs) -> Result<u8, Failure> {
    let dir = &a.dir;
    let ev_path = dir.join(EVIDENCE_FILE);
    if !ev_path.exists() {
        let hint = if dir.join("profile_runs").is_dir() || dir.join("sweep_aggregate").is_dir() {
            " (this is the root of repeated runs or a sweep: give one run's directory, e.g. profile_runs/run_0001 or concurrency_4)"
        } else {
            "; give a run directory written by `inferbench profile`"
        };
        return Err(Failure::input(format!(
            "{}: no {EVIDENCE_FILE} here{hint}",
            dir.display()
        )));
    }
    let evidence =
        inferbench_artifacts::read_evidence(&ev_path).map_err(|e| Failure::input(e.to_string()))?;
    let manifest_path = dir.join(MANIFEST_FILE);
    let manifest: Manifest = serde_json::from_str(
        &std::fs::read_to_string(&manifest_path)
            .map_err(|e| Failure::input(format!("{}: {e}", manifest_path.display())))?,
    )
    .map_err(|e| Failure::input(format!("{}: not a manifest: {e}", manifest_path.display())))?;
    let scored = score(&a.definitions, &evidence, &manifest.plan)?;
    let console = inferbench_artifacts::render_console(&scored.profiling);
    println!("{console}");
    if evidence.is_partial() {
        eprintln!("inferbench: this run is partial (it did not finish normally)");
    }

    let names = file_names(&manifest.plan.artifacts.prefix);
    let summary_path = dir.join(&names.summary_json);
    if a.write {
        let mut m = manifest.clone();
        let plan = manifest.plan.clone();
        let workload = read_workload(dir)?;
        write_outputs(dir, &plan, &evidence, &workload, &mut m)?;
        eprintln!("inferbench: rewrote the summary files in {}", dir.display());
        return Ok(0);
    }
    if a.definitions != inferbench_metrics::definition_sets()[0] || !summary_path.exists() {
        return Ok(0);
    }
    // Compare with the summary the live run wrote.
    let stored: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&summary_path)
            .map_err(|e| Failure::input(format!("{}: {e}", summary_path.display())))?,
    )
    .map_err(|e| Failure::input(format!("{}: {e}", summary_path.display())))?;
    let mut diffs = Vec::new();
    for m in &scored.profiling.metrics {
        let ours = inferbench_artifacts::summary_json::metric_json(m);
        match stored.get(&m.tag) {
            Some(s) if *s == ours => {}
            Some(s) => diffs.push(format!("{}: stored {s}, recomputed {ours}", m.tag)),
            None => diffs.push(format!("{}: not in the stored summary", m.tag)),
        }
    }
    if diffs.is_empty() {
        eprintln!(
            "inferbench: {} metrics recomputed from {EVIDENCE_FILE}: identical to {}",
            scored.profiling.metrics.len(),
            names.summary_json
        );
        Ok(0)
    } else {
        for d in &diffs {
            eprintln!("inferbench: differs: {d}");
        }
        Err(Failure::run(format!(
            "{} of {} recomputed metrics differ from {}",
            diffs.len(),
            scored.profiling.metrics.len(),
            summary_path.display()
        )))
    }
}

/// The frozen workload back from `inputs.json` (only the bodies matter for the raw export).
fn read_workload(dir: &Path) -> Result<Workload, Failure> {
    let p = dir.join("inputs.json");
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&p)
            .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?,
    )
    .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
    let mut payloads = Vec::new();
    for session in v["data"].as_array().into_iter().flatten() {
        let sid = session["session_id"].as_str().unwrap_or_default();
        for (turn, body) in session["payloads"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            payloads.push(inferbench_core::workload::Payload {
                conversation_id: sid.to_string(),
                turn_index: turn as u32,
                body: body.to_string(),
                input_tokens: None,
                requested_output_tokens: None,
                ..Default::default()
            });
        }
    }
    Ok(Workload { payloads })
}
