//! `inferbench metrics DIR`: recompute every metric of a run from its evidence (ours) or its
//! files (GenAI-Perf, AIPerf), under any definition set; `--write` rebuilds our run's files
//! through the run library's record sink, `--format` writes a tool's own file shapes.

use std::path::Path;

use inferbench_artifacts::summary_json::{AiperfSummaryInfo, RunConfig};
use inferbench_core::evidence::EVIDENCE_FILE;
use inferbench_core::summary::Summary;
use inferbench_run::offline::{self, Loaded};
use inferbench_run::{Failure, Layout, RunDir};

use crate::cli::MetricsArgs;

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

pub fn run(a: &MetricsArgs) -> Result<u8, Failure> {
    let dir = &a.dir;
    let run = RunDir::single(dir)?;
    if let Some(s) = a.slice_duration
        && !(s.is_finite() && s > 0.0)
    {
        return Err(Failure::input(format!(
            "--slice-duration: must be a positive number of seconds, got {s}"
        )));
    }
    if a.slice_duration.is_some() {
        run.writable("--slice-duration")?;
    }
    if a.write || (a.format.is_some() && a.output_dir.is_none()) {
        run.writable(if a.write {
            "--write"
        } else {
            "--format without --output-dir"
        })?;
    }
    // Our own runs under AIPerf's set: the streaming path (schedule evidence, --write), with
    // --goodput replacing the run's own SLOs.
    let native = inferbench_metrics::aiperf::NAME;
    if run.layout == Layout::Run && a.definitions.as_deref().is_none_or(|s| s == native) {
        let mut m = run.manifest()?;
        if a.goodput.is_some() {
            m.plan.goodput = a.goodput.clone();
        }
        if a.slice_duration.is_some() {
            m.plan.artifacts.slice_duration_s = a.slice_duration;
        }
        return run_native(a, &run, &m);
    }
    if a.slice_duration.is_some() {
        return Err(Failure::input(
            "--slice-duration: needs an inferbench run directory scored under aiperf-0.13 (its evidence file)",
        ));
    }
    let loaded = offline::load(dir, a.tokenizer.as_deref())?;
    for n in &loaded.notes {
        eprintln!("inferbench: {n}");
    }
    // Default: the run's own set (an import's is known once it is read).
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
    // An import's own SLOs (its input config) apply unless --goodput replaces them.
    let own = loaded
        .imported
        .as_ref()
        .and_then(inferbench_import::own_goodput);
    match (&a.goodput, &own) {
        (Some(g), Some(o)) => {
            eprintln!("inferbench: --goodput {g:?} replaces the run's own SLOs {o:?}")
        }
        (None, Some(o)) => eprintln!("inferbench: goodput with the run's own SLOs {o:?}"),
        _ => {}
    }
    let goodput = a.goodput.clone().or(own).or_else(|| {
        loaded
            .manifest
            .as_ref()
            .and_then(|m| m.plan.goodput.clone())
    });
    let summary = offline::score_set(&loaded, &set, goodput.as_deref())?.summary;
    if set == inferbench_metrics::aiperf::NAME {
        println!(
            "{}",
            inferbench_artifacts::console::render_console_for_terminal(&summary)
        );
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
        let cmp = offline::compare_counted(&summary, orig);
        for d in &cmp.diffs {
            eprintln!("inferbench: differs: {d}");
        }
        eprintln!("inferbench: {}", cmp.describe(&set));
        if !cmp.diffs.is_empty() {
            eprintln!(
                "inferbench: pass --tokenizer with the run's tokenizer if token counts differ"
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
/// Writes a report to a path given by a flag (its directory created), atomically, and says so
/// on stderr.
pub fn write_report(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| Failure::input(format!("{}: not a file name", path.display())))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", dir.display())))?;
    let p = write_file(dir, &name.to_string_lossy(), bytes)?;
    eprintln!("inferbench: wrote {}", p.display());
    Ok(())
}

pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<std::path::PathBuf, Failure> {
    let mut f = inferbench_artifacts::AtomicFile::create(dir, name)?;
    f.write_all(bytes)?;
    Ok(f.commit()?)
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
            let entry = inferbench_metrics::find(set).map_err(|e| Failure::input(e.to_string()))?;
            if !entry.is_genai_perf() {
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
                _ => (entry.file_release.unwrap_or_default().to_string(), None),
            };
            let paths = inferbench_artifacts::genai_perf_export::write_genai_perf(
                out,
                summary,
                &version,
                input_config.as_ref(),
                loaded.evidence.header.streaming,
            )?;
            for p in paths {
                eprintln!("inferbench: wrote {}", p.display());
            }
        }
        "aiperf" => {
            if set != inferbench_metrics::aiperf::NAME {
                return Err(Failure::input(format!(
                    "--format aiperf writes AIPerf's summary files; score with --definitions aiperf-0.13, not {set}"
                )));
            }
            // The one shape of profile_export_aiperf.json, as a live run writes it; an
            // imported run carries its own input_config, when it had one.
            let original = loaded
                .imported
                .as_ref()
                .and_then(|i| i.original_summary.as_ref());
            let config = match &loaded.manifest {
                Some(m) => RunConfig::Plan(&m.plan),
                None => RunConfig::Imported(original.and_then(|s| s.get("input_config"))),
            };
            let ev = &loaded.evidence;
            let window = ev.window(inferbench_core::Phase::Profiling);
            let anchor = ev.header.anchor_unix_ns;
            let info = AiperfSummaryInfo {
                benchmark_id: &ev.header.benchmark_id,
                config,
                start_unix_ns: window.map(|w| anchor + w.start_ns),
                end_unix_ns: window.map(|w| anchor + w.requests_end_ns),
                was_cancelled: ev.is_partial(),
                is_complete: !ev.is_partial(),
            };
            let p = inferbench_artifacts::summary_json::write_aiperf_summary(
                out,
                "profile_export_aiperf.json",
                summary,
                None,
                &info,
            )?;
            eprintln!("inferbench: wrote {}", p.display());
            let p = inferbench_artifacts::summary_csv::write_summary_csv(
                out,
                "profile_export_aiperf.csv",
                summary,
            )?;
            eprintln!("inferbench: wrote {}", p.display());
        }
        "json" => {
            // inferbench's own flat shape, for any set: the set's name and every metric.
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
            let p = write_file(out, "inferbench_summary.json", &bytes)?;
            eprintln!("inferbench: wrote {}", p.display());
        }
        other => return Err(Failure::input(format!("--format {other}: unknown"))),
    }
    Ok(())
}

fn run_native(
    a: &MetricsArgs,
    run: &RunDir,
    manifest: &inferbench_core::manifest::Manifest,
) -> Result<u8, Failure> {
    let (scores, partial) = offline::rescore(run, manifest)?;
    if partial {
        eprintln!("inferbench: this run is partial (it did not finish normally)");
    }
    println!(
        "{}",
        inferbench_artifacts::render_console(&scores.profiling)
    );
    let dir = &run.path;
    if a.write || a.slice_duration.is_some() {
        offline::rewrite(run, manifest)?;
        eprintln!("inferbench: rewrote the summary files in {}", dir.display());
        return Ok(0);
    }
    if let Some(format) = &a.format {
        let out = a.output_dir.clone().unwrap_or_else(|| dir.to_path_buf());
        if format == "aiperf" && out == *dir {
            return Err(Failure::input(
                "--format aiperf on an inferbench run: its AIPerf files are already there (use --write to rebuild them, or --output-dir)",
            ));
        }
        let loaded = offline::load(dir, None)?;
        write_format(
            format,
            &out,
            &scores.profiling,
            inferbench_metrics::aiperf::NAME,
            &loaded,
        )?;
        return Ok(0);
    }
    let Some(stored) = run.summary()? else {
        return Ok(0);
    };
    if a.goodput.is_some() {
        eprintln!(
            "inferbench: scored with this --goodput, so not compared with the stored summary (use --write to rewrite it)"
        );
        return Ok(0);
    }
    // Compare with the summary the live run wrote.
    let diffs = offline::differences(&scores, &stored);
    let names = run.names();
    if diffs.is_empty() {
        eprintln!(
            "inferbench: {} metrics recomputed from {EVIDENCE_FILE}: identical to {}",
            scores.profiling.metrics.len(),
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
            scores.profiling.metrics.len(),
            dir.join(&names.summary_json).display()
        )))
    }
}
