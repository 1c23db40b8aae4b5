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

/// A run to score: an inferbench run directory, or a GenAI-Perf / AIPerf artifact directory
/// imported on the fly.
pub struct Loaded {
    pub evidence: Evidence,
    /// The inferbench run's manifest (None for an imported run).
    pub manifest: Option<Manifest>,
    pub imported: Option<inferbench_import::ImportedRun>,
    pub tokenizer: std::sync::Arc<inferbench_workload::Tokenizer>,
}

impl Loaded {
    /// The set that reproduces the run's own summary.
    pub fn native_set(&self) -> &str {
        match &self.imported {
            Some(i) => &i.native_definitions,
            None => inferbench_metrics::aiperf::NAME,
        }
    }
}

/// Loads `dir`: our evidence file if there is one, else an import. `tokenizer` overrides
/// the run's own (an import has none: the built-in one is used unless given).
pub fn load(dir: &Path, tokenizer: Option<&str>) -> Result<Loaded, Failure> {
    let tok_spec = |name: Option<&str>| -> inferbench_core::plan::TokenizerSpec {
        match name {
            None | Some("builtin") => inferbench_core::plan::TokenizerSpec::Builtin,
            Some(p) => inferbench_core::plan::TokenizerSpec::HuggingFace { path: p.into() },
        }
    };
    let ev_path = dir.join(EVIDENCE_FILE);
    if ev_path.exists() {
        let evidence = inferbench_artifacts::read_evidence(&ev_path)
            .map_err(|e| Failure::input(e.to_string()))?;
        let manifest_path = dir.join(MANIFEST_FILE);
        let manifest: Manifest = serde_json::from_str(
            &std::fs::read_to_string(&manifest_path)
                .map_err(|e| Failure::input(format!("{}: {e}", manifest_path.display())))?,
        )
        .map_err(|e| Failure::input(format!("{}: not a manifest: {e}", manifest_path.display())))?;
        let spec = match tokenizer {
            Some(t) => tok_spec(Some(t)),
            None => manifest.plan.tokenizer.clone(),
        };
        let tok = inferbench_workload::Tokenizer::load(&spec)
            .map_err(|e| Failure::input(format!("--tokenizer: {e}")))?;
        return Ok(Loaded {
            evidence,
            manifest: Some(manifest),
            imported: None,
            tokenizer: std::sync::Arc::new(tok),
        });
    }
    if inferbench_import::detect(dir).is_none() {
        let hint = if dir.join("profile_runs").is_dir() || dir.join("sweep_aggregate").is_dir() {
            " (this is the root of repeated runs or a sweep: give one run's directory, e.g. profile_runs/run_0001 or concurrency_4)"
        } else {
            "; give a run directory written by `inferbench profile`, or a GenAI-Perf or AIPerf artifact directory"
        };
        return Err(Failure::input(format!(
            "{}: no {EVIDENCE_FILE} here, and not a GenAI-Perf or AIPerf artifact directory{hint}",
            dir.display()
        )));
    }
    let tok = inferbench_workload::Tokenizer::load(&tok_spec(tokenizer))
        .map_err(|e| Failure::input(format!("--tokenizer: {e}")))?;
    let count = |t: &str| tok.count(t) as u64;
    let imported =
        inferbench_import::import(dir, &count).map_err(|e| Failure::input(e.to_string()))?;
    if tokenizer.is_none() {
        eprintln!(
            "inferbench: {} was written by {}: texts are tokenized with the built-in o200k_base tokenizer; pass --tokenizer (the run's tokenizer.json) to count as the original run did",
            dir.display(),
            imported.tool.as_str()
        );
    }
    Ok(Loaded {
        evidence: imported.evidence.clone(),
        manifest: None,
        imported: Some(imported),
        tokenizer: std::sync::Arc::new(tok),
    })
}

/// A plain table of any summary: one row per metric, the usual statistics.
pub fn render_table(summary: &Summary) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "Metric", "Unit", "avg", "min", "p50", "p90", "p99", "max", "std",
    ]);
    let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.4}"));
    for m in &summary.metrics {
        match m.stats() {
            Some(s) => t.add_row(vec![
                m.tag.clone(),
                m.unit.clone(),
                f(s.avg),
                f(s.min),
                f(s.p50),
                f(s.p90),
                f(s.p99),
                f(s.max),
                f(s.std),
            ]),
            None => t.add_row(vec![m.tag.clone(), m.unit.clone(), f(m.avg())]),
        };
    }
    format!("inferbench | {}\n{t}\n", summary.definitions)
}

/// Compares a computed summary with a tool's own summary JSON (`{tag: {unit, avg, p50, …}}`,
/// or a bare number): (values compared, differences).
pub fn compare_with_original(
    summary: &Summary,
    original: &serde_json::Value,
) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut diffs = Vec::new();
    let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    for m in &summary.metrics {
        let Some(o) = original.get(&m.tag) else {
            continue;
        };
        let pairs: Vec<(String, Option<f64>, Option<f64>)> = match (m.stats(), o) {
            (Some(s), serde_json::Value::Object(obj)) => obj
                .iter()
                .filter(|(k, v)| *k != "unit" && v.is_number())
                .map(|(k, v)| (k.clone(), s.get(k), v.as_f64()))
                .collect(),
            (None, serde_json::Value::Object(obj)) => vec![(
                "avg".into(),
                m.avg(),
                obj.get("avg").and_then(serde_json::Value::as_f64),
            )],
            (_, v) if v.is_number() => vec![("value".into(), m.avg(), v.as_f64())],
            _ => continue,
        };
        for (stat, ours, theirs) in pairs {
            let Some(theirs) = theirs else { continue };
            n += 1;
            match ours {
                Some(x) if close(x, theirs) => {}
                Some(x) => diffs.push(format!(
                    "{}.{stat}: original {theirs}, recomputed {x}",
                    m.tag
                )),
                None => diffs.push(format!(
                    "{}.{stat}: original {theirs}, not recomputed",
                    m.tag
                )),
            }
        }
    }
    (n, diffs)
}

pub fn run(a: &MetricsArgs) -> Result<u8, Failure> {
    let dir = &a.dir;
    let loaded = load(dir, a.tokenizer.as_deref())?;
    let set = a
        .definitions
        .clone()
        .unwrap_or_else(|| loaded.native_set().to_string());
    if let Some(i) = &loaded.imported {
        eprintln!(
            "inferbench: imported {} {} from {} ({} records); its own definitions: {}",
            i.tool.as_str(),
            i.version,
            i.dir.display(),
            i.evidence.records.len(),
            i.native_definitions
        );
        for l in &i.losses {
            eprintln!("inferbench: not recoverable from these files: {l}");
        }
    }
    if loaded.evidence.is_partial() && loaded.imported.is_none() {
        eprintln!("inferbench: this run is partial (it did not finish normally)");
    }

    // Our own runs under AIPerf's set: the full path (schedule evidence, --write), with
    // --goodput replacing the run's own SLOs.
    if let (Some(manifest), inferbench_metrics::aiperf::NAME) = (&loaded.manifest, set.as_str()) {
        let mut m = manifest.clone();
        if a.goodput.is_some() {
            m.plan.goodput = a.goodput.clone();
        }
        return run_native(a, dir, &loaded.evidence, &m);
    }
    let goodput = a.goodput.clone().or_else(|| {
        loaded
            .manifest
            .as_ref()
            .and_then(|m| m.plan.goodput.clone())
    });
    let confidence = loaded
        .manifest
        .as_ref()
        .map_or(0.95, |m| m.plan.confidence_level);
    let tok = loaded.tokenizer.clone();
    let count = move |t: &str| tok.count(t) as u64;
    let computed = inferbench_metrics::compute_set(
        &set,
        &loaded.evidence,
        inferbench_core::Phase::Profiling,
        &count,
        goodput.as_deref(),
        confidence,
    )
    .map_err(|e| Failure::input(format!("--definitions: {e}")))?;
    let summary = computed.summary;
    if set == inferbench_metrics::aiperf::NAME {
        println!("{}", inferbench_artifacts::render_console(&summary));
    } else {
        println!("{}", render_table(&summary));
    }
    if a.write {
        return Err(Failure::input(
            "--write rewrites an inferbench run's own files under aiperf-0.13; use --format to write another set's files",
        ));
    }
    let mut code = 0;
    if let Some(i) = &loaded.imported
        && set == i.native_definitions
        && let Some(orig) = &i.original_summary
    {
        let (n, diffs) = compare_with_original(&summary, orig);
        if diffs.is_empty() {
            eprintln!("inferbench: all {n} values of the original summary reproduced under {set}");
        } else {
            for d in &diffs {
                eprintln!("inferbench: differs: {d}");
            }
            eprintln!(
                "inferbench: {} of {n} values of the original summary differ (pass --tokenizer with the run's tokenizer if token counts differ)",
                diffs.len()
            );
            code = 1;
        }
    }
    if let Some(format) = &a.format {
        let out = a.output_dir.clone().unwrap_or_else(|| dir.clone());
        write_format(format, &out, &summary, &set, &loaded)?;
    }
    Ok(code)
}

/// Writes `dir/name` atomically (a reader never sees half a file).
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<std::path::PathBuf, Failure> {
    let mut f = inferbench_artifacts::AtomicFile::create(dir, name)
        .map_err(|e| Failure::run(e.to_string()))?;
    f.write_all(bytes)
        .map_err(|e| Failure::run(e.to_string()))?;
    f.commit().map_err(|e| Failure::run(e.to_string()))
}

/// `--format`: the summary in a tool's own file shape.
fn write_format(
    format: &str,
    out: &Path,
    summary: &Summary,
    set: &str,
    loaded: &Loaded,
) -> Result<(), Failure> {
    std::fs::create_dir_all(out)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", out.display())))?;
    match format {
        "genai-perf" => {
            if !set.starts_with("genai-perf-") {
                return Err(Failure::input(format!(
                    "--format genai-perf writes a GenAI-Perf set's summary; score with --definitions genai-perf-0.0.13 (or another genai-perf set), not {set}"
                )));
            }
            let (version, input_config) = match &loaded.imported {
                Some(i) if i.tool == inferbench_import::SourceTool::GenaiPerf => (
                    i.version.clone(),
                    i.original_summary
                        .as_ref()
                        .and_then(|s| s.get("input_config"))
                        .cloned(),
                ),
                // Our own run: the newest release the set covers.
                _ => (genai_perf_release(set).to_string(), None),
            };
            let paths = inferbench_artifacts::genai_perf_export::write_genai_perf(
                out,
                summary,
                &version,
                input_config.as_ref(),
                loaded.evidence.header.streaming,
            )
            .map_err(|e| Failure::run(e.to_string()))?;
            for p in paths {
                eprintln!("inferbench: wrote {}", p.display());
            }
        }
        "aiperf" | "json" => {
            if format == "aiperf" && set != inferbench_metrics::aiperf::NAME {
                return Err(Failure::input(format!(
                    "--format aiperf writes AIPerf's summary files; score with --definitions aiperf-0.13, not {set}"
                )));
            }
            let name = if format == "aiperf" {
                "profile_export_aiperf.json"
            } else {
                "inferbench_summary.json"
            };
            let mut o = serde_json::Map::new();
            o.insert("definitions".into(), serde_json::json!(set));
            for m in &summary.metrics {
                o.insert(
                    m.tag.clone(),
                    inferbench_artifacts::summary_json::metric_json(m),
                );
            }
            o.insert(
                "error_summary".into(),
                serde_json::to_value(&summary.error_summary).unwrap_or_default(),
            );
            let bytes = serde_json::to_vec_pretty(&serde_json::Value::Object(o))
                .map_err(|e| Failure::run(e.to_string()))?;
            let p = write_file(out, name, &bytes)?;
            eprintln!("inferbench: wrote {}", p.display());
            if format == "aiperf" {
                let p = inferbench_artifacts::summary_csv::write_summary_csv(
                    out,
                    "profile_export_aiperf.csv",
                    summary,
                )
                .map_err(|e| Failure::run(e.to_string()))?;
                eprintln!("inferbench: wrote {}", p.display());
            }
        }
        other => return Err(Failure::input(format!("--format {other}: unknown"))),
    }
    Ok(())
}

/// The newest GenAI-Perf release a set stands for (its file shapes differ by release).
fn genai_perf_release(set: &str) -> &'static str {
    match set {
        "genai-perf-0.0.13" => "0.0.16",
        "genai-perf-0.0.10" => "0.0.12",
        "genai-perf-0.0.4" => "0.0.9",
        _ => "0.0.3",
    }
}

fn run_native(
    a: &MetricsArgs,
    dir: &Path,
    evidence: &Evidence,
    manifest: &Manifest,
) -> Result<u8, Failure> {
    let definitions = inferbench_metrics::aiperf::NAME;
    let scored = score(definitions, evidence, &manifest.plan)?;
    let console = inferbench_artifacts::render_console(&scored.profiling);
    println!("{console}");

    let names = file_names(&manifest.plan.artifacts.prefix);
    let summary_path = dir.join(&names.summary_json);
    if a.write {
        let mut m = manifest.clone();
        let plan = manifest.plan.clone();
        let workload = read_workload(dir)?;
        write_outputs(dir, &plan, evidence, &workload, &mut m)?;
        eprintln!("inferbench: rewrote the summary files in {}", dir.display());
        return Ok(0);
    }
    if let Some(format) = &a.format {
        let out = a.output_dir.clone().unwrap_or_else(|| dir.to_path_buf());
        if format == "aiperf" && out == dir {
            return Err(Failure::input(
                "--format aiperf on an inferbench run: its AIPerf files are already there (use --write to rebuild them, or --output-dir)",
            ));
        }
        let tok = inferbench_workload::Tokenizer::load(&manifest.plan.tokenizer)
            .map_err(|e| Failure::input(format!("--tokenizer: {e}")))?;
        let loaded = Loaded {
            evidence: evidence.clone(),
            manifest: Some(manifest.clone()),
            imported: None,
            tokenizer: std::sync::Arc::new(tok),
        };
        write_format(format, &out, &scored.profiling, definitions, &loaded)?;
        return Ok(0);
    }
    if !summary_path.exists() {
        return Ok(0);
    }
    if a.goodput.is_some() {
        eprintln!(
            "inferbench: scored with this --goodput, so not compared with the stored summary (use --write to rewrite it)"
        );
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
