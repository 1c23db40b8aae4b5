//! One run's sections, each from the library call its command makes.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use inferbench_core::Phase;
use inferbench_metrics::crosswalk::{Crosswalk, crosswalk, facts};
use inferbench_run::compare::{CompareSpec, compare};
use inferbench_run::gate::verdict::VERDICT_SCHEMA;
use inferbench_run::gate::{GateInput, GateSpec, evaluate};
use inferbench_run::offline::{self, Loaded};
use inferbench_run::{Failure, Layout, RunDir};
use inferbench_telemetry::scrape::{SCRAPES_FILE, TargetKind, read_scrapes};
use serde_json::Value;

use super::{ReportSpec, escape, note, pre, table};
use crate::charts::{RunPoints, standard_charts};
use crate::server_series::{MetricSeries, gpu_series, server_charts, server_series};
use crate::svg::render;

/// The sets the crosswalk maps between (the `crosswalk` command's defaults).
const CROSSWALK_FROM: &str = "genai-perf-0.0.13";
const CROSSWALK_TO: &str = "aiperf-0.13";
/// At most this many server-metric (and as many GPU) charts per run (the rest are named).
const MAX_SERVER_CHARTS: usize = 12;

pub(super) struct Section {
    pub html: String,
    /// The run's chart points and summary, for the overlaid charts.
    pub points: Option<(RunPoints, Value)>,
}

fn label_of(run: &RunDir) -> String {
    run.path.file_name().map_or_else(
        || run.path.display().to_string(),
        |n| n.to_string_lossy().into(),
    )
}

pub(super) fn section(run: &RunDir, id: &str, spec: &ReportSpec) -> Result<Section, Failure> {
    let tok = spec.tokenizer.as_deref();
    let loaded = offline::load_streamed(&run.path, tok)?;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<article id=\"{id}\"><h3>Run {}</h3>",
        escape(&run.path.display().to_string())
    );
    for n in &loaded.notes {
        s.push_str(&note(n));
    }
    s.push_str("<h4>Identity</h4>\n");
    s.push_str(&identity(&loaded));
    s.push_str(&manifest(&loaded));
    s.push_str("<h4>Console tables</h4>\n");
    s.push_str(&pre(&console(run, &loaded)?));
    s.push_str("<h4>Charts</h4>\n");
    let points = match request_points(run) {
        Ok((p, summary)) => {
            s.push_str("<div class=\"charts\">");
            for (_, c) in standard_charts(std::slice::from_ref(&p)) {
                s.push_str(&render(&c));
            }
            s.push_str("</div>\n");
            Some((p, summary))
        }
        Err(e) => {
            s.push_str(&note(&e));
            None
        }
    };
    s.push_str(&server_metrics(run, &loaded));
    s.push_str("<h4>Crosswalk</h4>\n");
    match crosswalk_of(&run.path, tok) {
        Ok(c) => s.push_str(&crosswalk_table(&c)),
        Err(e) => s.push_str(&note(&format!("not available: {}", e.message))),
    }
    s.push_str("<h4>Grade</h4>\n");
    match inferbench_run::grade::grade(&loaded, None) {
        Ok(g) => s.push_str(&pre(&inferbench_run::grade::render(
            &g,
            &inferbench_run::grade::identity_of(&loaded),
        ))),
        Err(e) => s.push_str(&note(&format!("not available: {}", e.message))),
    }
    s.push_str(&verdict_files(&run.path));
    s.push_str("</article>\n");
    Ok(Section { html: s, points })
}

/// Who ran what against what: the manifest's identity fields, then every pin.
fn identity(loaded: &Loaded) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row = |k: &str, v: String| rows.push(vec![escape(k), escape(&v)]);
    let m = loaded
        .manifest
        .as_ref()
        .and_then(|m| serde_json::to_value(m).ok())
        .unwrap_or_default();
    let str_at = |p: &str| -> String {
        match m.pointer(p) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(v) => v.to_string(),
        }
    };
    match &loaded.imported {
        Some(i) => row("tool", i.tool.as_str().to_string()),
        None => row(
            "tool",
            format!(
                "{} {} (commit {}, {} build)",
                str_at("/tool/name"),
                str_at("/tool/version"),
                str_at("/tool/commit"),
                str_at("/tool/build_profile")
            ),
        ),
    }
    if loaded.manifest.is_some() {
        row(
            "server",
            format!("{} ({})", str_at("/plan/url"), str_at("/plan/target/kind")),
        );
        let models = m
            .pointer("/plan/models")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        row("model", models);
        row(
            "endpoint",
            format!(
                "{} {} (streaming {})",
                str_at("/plan/endpoint_type"),
                str_at("/plan/endpoint_path"),
                str_at("/plan/streaming")
            ),
        );
        row("workload digest", str_at("/dataset/workload_sha256"));
        row("tokenizer", str_at("/tokenizer/name"));
        row("benchmark id", str_at("/benchmark_id"));
    }
    row("definition set", loaded.native_set().to_string());
    let mut s = table(&["field", "value"], &rows);
    let id = inferbench_run::grade::identity_of(loaded);
    let pins: Vec<Vec<String>> = id
        .pins
        .iter()
        .map(|(k, p)| {
            let prov = serde_json::to_value(&p.provenance)
                .map(|v| v.to_string())
                .unwrap_or_default();
            vec![escape(k), escape(&compact(&p.value)), escape(&prov)]
        })
        .collect();
    let missing: Vec<Vec<String>> = id
        .missing
        .iter()
        .map(|(k, why)| vec![escape(k), escape(why)])
        .collect();
    let _ = writeln!(
        s,
        "<details><summary>Identity pins ({} known, {} missing, {} flags)</summary>{}{}{}</details>",
        pins.len(),
        missing.len(),
        id.flags.len(),
        table(&["pin", "value", "provenance"], &pins),
        table(&["missing pin", "why"], &missing),
        table(
            &["flag", "detail"],
            &id.flags
                .iter()
                .map(|f| vec![escape(&f.name), escape(&f.detail)])
                .collect::<Vec<_>>()
        )
    );
    s
}

fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The whole manifest, flattened to `path = value` rows (secrets are redacted in the file
/// itself: `--api-key` and secret headers are written as `<redacted>`).
fn manifest(loaded: &Loaded) -> String {
    let Some(m) = loaded
        .manifest
        .as_ref()
        .and_then(|m| serde_json::to_value(m).ok())
    else {
        return String::new();
    };
    let mut rows = Vec::new();
    flatten("", &m, &mut rows);
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(k, v)| vec![escape(&k), escape(&v)])
        .collect();
    format!(
        "<details><summary>Manifest ({} fields)</summary>{}</details>\n",
        rows.len(),
        table(&["field", "value"], &rows)
    )
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(o) if !o.is_empty() => {
            for (k, x) in o {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, x, out);
            }
        }
        v => out.push((prefix.to_string(), compact(v))),
    }
}

/// The tables `profile` prints: the summary recomputed from the evidence (ours) or from the
/// tool's files (an import), rendered by the console renderer.
fn console(run: &RunDir, loaded: &Loaded) -> Result<String, Failure> {
    let summary = if run.layout == Layout::Run {
        let m = run.manifest()?;
        offline::rescore(run, &m)?.0.profiling
    } else {
        offline::score_set(loaded, loaded.native_set(), None)?.summary
    };
    Ok(inferbench_artifacts::console::render_console_for_terminal(
        &summary,
    ))
}

/// The run's requests as chart points (its per-record export), with its summary JSON.
fn request_points(run: &RunDir) -> Result<(RunPoints, Value), String> {
    let p = run.path.join(&run.names().records_jsonl);
    let text = std::fs::read_to_string(&p).map_err(|e| {
        format!(
            "no request charts: {}: {e} (they need the per-record export: --export-level records or raw)",
            p.display()
        )
    })?;
    let lines = crate::jsonl::json_lines(&text)
        .collect::<Result<Vec<Value>, _>>()
        .map_err(|(n, e)| format!("no request charts: {}: line {n}: {e}", p.display()))?;
    let summary = run
        .summary()
        .ok()
        .flatten()
        .map(|s| s.document)
        .unwrap_or_default();
    Ok((RunPoints::from_lines(&label_of(run), &lines), summary))
}

/// Server-metric series over time (from the raw scrapes) and AIPerf's per-series
/// statistics (`server_metrics_export.json`), where the run has them.
fn server_metrics(run: &RunDir, loaded: &Loaded) -> String {
    let scrapes = run.path.join(SCRAPES_FILE);
    let export = run
        .path
        .join(inferbench_run::side_files::AIPERF_SERVER_METRICS_JSON);
    if !scrapes.exists() && !export.exists() {
        return String::new();
    }
    let mut s = String::from("<h4>Server metrics</h4>\n");
    if scrapes.exists() {
        let log = std::fs::File::open(&scrapes)
            .map_err(|e| e.to_string())
            .and_then(|f| read_scrapes(std::io::BufReader::new(f)));
        match log {
            Ok(log) => {
                // The time origin of the request charts: the first request start (else the
                // run's clock anchor).
                let t0 = first_start_unix_ns(run).unwrap_or(loaded.evidence.header.anchor_unix_ns);
                if log
                    .header
                    .targets
                    .iter()
                    .any(|t| t.kind == TargetKind::Server)
                {
                    s.push_str(&family_charts(&server_series(&log, t0), "server"));
                }
                if log.header.targets.iter().any(|t| t.kind == TargetKind::Gpu) {
                    s.push_str("<h4>GPU telemetry</h4>\n");
                    s.push_str(&family_charts(&gpu_series(&log, t0), "GPU"));
                }
            }
            Err(e) => s.push_str(&note(&format!("{}: {e}", scrapes.display()))),
        }
    }
    if export.exists() {
        s.push_str(&export_table(&export));
    }
    s
}

/// The charts of the families that varied, and a note naming those left out.
fn family_charts(series: &[MetricSeries], what: &str) -> String {
    let mut s = String::new();
    let (charts, flat) = server_charts(series, MAX_SERVER_CHARTS);
    if charts.is_empty() {
        s.push_str(&note(&format!(
            "no {what} gauge or counter varied during the run"
        )));
    } else {
        s.push_str("<div class=\"charts\">");
        for c in &charts {
            s.push_str(&render(c));
        }
        s.push_str("</div>\n");
    }
    if !flat.is_empty() {
        s.push_str(&note(&format!(
            "not drawn (constant, a single rate point, or past the first {MAX_SERVER_CHARTS}): {}",
            flat.join(", ")
        )));
    }
    s
}

fn first_start_unix_ns(run: &RunDir) -> Option<u64> {
    let text = std::fs::read_to_string(run.path.join(&run.names().records_jsonl)).ok()?;
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|l| l["metadata"]["request_start_ns"].as_u64())
        .min()
}

/// AIPerf's server-metrics export as a table: one row per family and label set, with the
/// statistics the file holds for it.
fn export_table(path: &Path) -> String {
    let doc: Value = match std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => return note(&format!("{}: {e}", path.display())),
    };
    let mut rows = Vec::new();
    if let Some(metrics) = doc["metrics"].as_object() {
        for (name, m) in metrics {
            for series in m["series"].as_array().into_iter().flatten() {
                let labels = series["labels"]
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .map(|(k, v)| format!("{k}={}", compact(v)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                let stats = series["stats"]
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .map(|(k, v)| format!("{k} {}", compact(v)))
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                    .unwrap_or_default();
                rows.push(vec![
                    escape(name),
                    escape(&compact(&m["type"])),
                    escape(&compact(&m["unit"])),
                    escape(&labels),
                    escape(&stats),
                ]);
            }
        }
    }
    format!(
        "<details><summary>{} ({} series)</summary>{}</details>\n",
        escape(&path.file_name().unwrap_or_default().to_string_lossy()),
        rows.len(),
        table(&["metric", "type", "unit", "labels", "statistics"], &rows)
    )
}

/// The run scored under both sets, as `crosswalk DIR` does.
fn crosswalk_of(dir: &Path, tok: Option<&str>) -> Result<Crosswalk, Failure> {
    let loaded = offline::load(dir, tok)?;
    let score = |set: &str| offline::score_set(&loaded, set, None).map(|c| c.summary);
    let (from, to) = (score(CROSSWALK_FROM)?, score(CROSSWALK_TO)?);
    let t = loaded.tokenizer.clone();
    let count = move |s: &str| t.count(s) as u64;
    let fx = facts(&loaded.evidence, &count);
    // Successful requests with no text: GenAI-Perf skips them (as the command counts them).
    let skipped = loaded
        .evidence
        .records_of(Phase::Profiling)
        .filter(|r| !r.is_error() && !r.events.iter().any(|e| e.has_text()))
        .count() as u64;
    crosswalk(CROSSWALK_FROM, &from, CROSSWALK_TO, &to, fx, skipped).map_err(Failure::input)
}

fn crosswalk_table(c: &Crosswalk) -> String {
    let f = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.4}"));
    let rows: Vec<Vec<String>> = c
        .mappings
        .iter()
        .map(|m| {
            let yes = if m.comparable { "yes" } else { "NO" };
            vec![
                escape(&m.from_metric),
                escape(&m.to_metric),
                escape(&m.stat),
                escape(&m.unit),
                f(m.from_value),
                f(m.to_value),
                f(m.difference),
                m.difference_pct
                    .map_or("–".to_string(), |p| format!("{p:+.2}")),
                format!("<span class=\"{yes}\">{yes}</span>"),
                escape(&m.reasons.join("; ")),
            ]
        })
        .collect();
    format!(
        "{}<p>{}</p>\n",
        table(
            &[
                &c.from,
                &c.to,
                "stat",
                "unit",
                "from",
                "to",
                "diff",
                "diff %",
                "comparable",
                "why not"
            ],
            &rows
        ),
        escape(&c.facts.sentence())
    )
}

/// Gate verdict files saved in the run directory (`gate --json FILE`): any `*verdict*.json`
/// whose `schema` is the verdict schema.
fn verdict_files(dir: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return String::new();
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.contains("verdict") && n.ends_with(".json")
            })
        })
        .collect();
    names.sort();
    let mut s = String::new();
    for p in names {
        let Some(v) = std::fs::read_to_string(&p)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .filter(|v| v["schema"] == VERDICT_SCHEMA)
        else {
            continue;
        };
        let overall = compact(&v["verdict"]);
        let rows: Vec<Vec<String>> = v["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                let o = compact(&r["verdict"]);
                vec![
                    escape(&compact(&r["id"])),
                    format!("<span class=\"{0}\">{0}</span>", escape(&o)),
                    escape(&compact(&r["reason"])),
                ]
            })
            .collect();
        let _ = write!(
            s,
            "<h4>Gate verdict {file}</h4><p>Gate {gate} under {set}: <span class=\"{o}\">{o}</span> (exit code {code})</p>\n{t}",
            file = escape(&p.file_name().unwrap_or_default().to_string_lossy()),
            gate = escape(&compact(&v["gate"]["name"])),
            set = escape(&compact(&v["definition_set"])),
            o = escape(&overall),
            code = escape(&compact(&v["exit_code"])),
            t = table(&["rule", "outcome", "reason"], &rows)
        );
    }
    s
}

/// `--gate SPEC`: the gate evaluated on the directory, as `gate --spec SPEC DIR` prints it.
pub(super) fn gate_evaluated(
    dir: &Path,
    spec_path: &Path,
    spec: &GateSpec,
    tokenizer: Option<String>,
) -> String {
    let input = GateInput {
        candidate: vec![dir.to_path_buf()],
        tokenizer,
        ..GateInput::default()
    };
    let title = format!(
        "<h3>Gate {}</h3>\n",
        escape(&spec_path.display().to_string())
    );
    match evaluate(spec, &input) {
        Ok(v) => format!(
            "{title}<p>Verdict: <span class=\"{0}\">{0}</span> (exit code {1})</p>\n{2}",
            escape(
                &serde_json::to_value(v.verdict)
                    .map(|x| compact(&x))
                    .unwrap_or_default()
            ),
            v.exit_code,
            pre(&v.console())
        ),
        Err(e) => format!("{title}{}", note(&format!("not evaluated: {}", e.message))),
    }
}

/// Several directories: each compared with the first, as `compare FIRST DIR` prints it.
pub(super) fn comparison(dirs: &[PathBuf], tokenizer: Option<String>) -> String {
    let mut s = String::from("<section id=\"comparison\"><h2>Comparison</h2>\n");
    for d in &dirs[1..] {
        let _ = writeln!(
            s,
            "<h3>{} → {}</h3>",
            escape(&dirs[0].display().to_string()),
            escape(&d.display().to_string())
        );
        let r = compare(&CompareSpec {
            baseline: vec![dirs[0].clone()],
            candidate: vec![d.clone()],
            tokenizer: tokenizer.clone(),
            ..CompareSpec::default()
        });
        match r {
            Ok(r) => s.push_str(&pre(&r.console())),
            Err(e) => s.push_str(&note(&format!("not compared: {}", e.message))),
        }
    }
    s.push_str("</section>\n");
    s
}
