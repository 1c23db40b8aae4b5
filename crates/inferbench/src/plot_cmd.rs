//! `inferbench plot DIR...`: the standard charts of one or more runs as SVG and PNG files
//! (docs/reports.md). Several directories are overlaid, one series each, and get a
//! throughput-against-interactivity chart with its Pareto front.

use std::path::{Path, PathBuf};

use inferbench_report::charts::{
    LoadPoint, RunPoints, latency_load_chart, pareto_chart, standard_charts,
};
use inferbench_report::png::render_png;
use inferbench_report::svg::{Chart, render};
use inferbench_run::{Failure, RunDir};

use crate::cli::{PlotArgs, PlotFormat};

/// Every run under the directories, as chart points, with each run's summary JSON.
pub fn load_runs(dirs: &[PathBuf]) -> Result<Vec<(RunPoints, serde_json::Value)>, Failure> {
    let mut out = Vec::new();
    for d in dirs {
        for run in RunDir::open(d)?.runs() {
            let p = run.path.join(&run.names().records_jsonl);
            let text = std::fs::read_to_string(&p).map_err(|e| {
                Failure::input(format!(
                    "{}: {e} (plots need the per-record export: --export-level records or raw)",
                    p.display()
                ))
            })?;
            let mut lines: Vec<serde_json::Value> = Vec::new();
            for (i, l) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                lines.push(serde_json::from_str(l).map_err(|e| {
                    Failure::input(format!("{}: line {}: {e}", p.display(), i + 1))
                })?);
            }
            let label = run.path.file_name().map_or_else(
                || run.path.display().to_string(),
                |n| n.to_string_lossy().into(),
            );
            let summary = run.summary()?.map(|s| s.document).unwrap_or_default();
            out.push((RunPoints::from_lines(&label, &lines), summary));
        }
    }
    Ok(out)
}

/// The standard charts, plus the Pareto chart when there are several runs.
pub fn charts(runs: &[(RunPoints, serde_json::Value)]) -> Vec<(&'static str, Chart)> {
    let points: Vec<RunPoints> = runs.iter().map(|r| r.0.clone()).collect();
    let mut out = standard_charts(&points);
    let cells: Vec<(f64, f64)> = runs
        .iter()
        .filter_map(|(_, s)| {
            Some((
                s["output_token_throughput"]["avg"].as_f64()?,
                s["output_token_throughput_per_user"]["avg"].as_f64()?,
            ))
        })
        .collect();
    if cells.len() >= 2 {
        out.push(("pareto", pareto_chart("runs", &cells)));
    }
    let load: Vec<LoadPoint> = runs
        .iter()
        .filter_map(|(_, s)| LoadPoint::from_summary(s))
        .collect();
    if load.len() >= 2 {
        out.push(("latency_vs_load", latency_load_chart(&load)));
    }
    out
}

/// At most this many server-metric (and as many GPU) charts a run (the families that vary, first seen first).
const MAX_SERVER_CHARTS: usize = 12;

/// Server-metric series over time for each run that kept its raw scrapes
/// (`inferbench_scrapes.jsonl`), one chart per family that varied: `server_<family>`, and
/// the GPU targets' DCGM families as `gpu_<family>` (one series per GPU), with the run's
/// directory name in front when several runs are drawn. Time 0 is the run's first
/// request start, as on the request charts.
pub fn server_chart_files(dirs: &[PathBuf]) -> Result<Vec<(String, Chart)>, Failure> {
    use inferbench_report::server_series::{gpu_series, server_series};
    use inferbench_telemetry::scrape::{SCRAPES_FILE, read_scrapes};
    let mut per_run = Vec::new();
    for d in dirs {
        for run in RunDir::open(d)?.runs() {
            let path = run.path.join(SCRAPES_FILE);
            if !path.exists() {
                continue;
            }
            let log = std::fs::File::open(&path)
                .map_err(|e| e.to_string())
                .and_then(|f| read_scrapes(std::io::BufReader::new(f)))
                .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
            let records = std::fs::read_to_string(run.path.join(&run.names().records_jsonl))
                .unwrap_or_default();
            let Some(t0) = records
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter_map(|l| l["metadata"]["request_start_ns"].as_u64())
                .min()
            else {
                continue;
            };
            let label = run
                .path
                .file_name()
                .map_or_else(|| "run".to_string(), |n| n.to_string_lossy().into_owned());
            let mut files = family_files("server", &server_series(&log, t0));
            files.extend(family_files("gpu", &gpu_series(&log, t0)));
            per_run.push((label, files));
        }
    }
    let several = per_run.len() > 1;
    Ok(per_run
        .into_iter()
        .flat_map(|(label, charts)| {
            charts.into_iter().map(move |(stem, c)| {
                let stem = if several {
                    format!("{}_{stem}", file_safe(&label))
                } else {
                    stem
                };
                (stem, c)
            })
        })
        .collect())
}

/// One chart per family that varied (`server_charts`), named `<prefix>_<family>`.
fn family_files(
    prefix: &str,
    series: &[inferbench_report::server_series::MetricSeries],
) -> Vec<(String, Chart)> {
    let (charts, flat) = inferbench_report::server_series::server_charts(series, MAX_SERVER_CHARTS);
    let mut drawn: Vec<&str> = Vec::new();
    for m in series {
        if !flat.iter().any(|f| f == &m.family) && !drawn.contains(&m.family.as_str()) {
            drawn.push(&m.family);
        }
    }
    drawn
        .iter()
        .map(|f| format!("{prefix}_{}", file_safe(f)))
        .zip(charts)
        .collect()
}

/// A metric family or directory name as a file name: letters, digits, `_`, `-` and `.`
/// kept, anything else `_`.
pub(crate) fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub fn run(a: &PlotArgs) -> Result<u8, Failure> {
    let out_dir = a.out_dir.clone().unwrap_or_else(|| a.dirs[0].join("plots"));
    if let Some(path) = &a.config {
        return run_specs(a, path, &out_dir);
    }
    let runs = load_runs(&a.dirs)?;
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", out_dir.display())))?;
    let standard = charts(&runs)
        .into_iter()
        .map(|(stem, c)| (stem.to_string(), c));
    for (stem, chart) in standard.chain(server_chart_files(&a.dirs)?) {
        if a.format != PlotFormat::Png {
            write(&out_dir, &format!("{stem}.svg"), render(&chart).as_bytes())?;
        }
        if a.format != PlotFormat::Svg {
            write(&out_dir, &format!("{stem}.png"), &render_png(&chart))?;
        }
    }
    eprintln!("inferbench: plots written to {}", out_dir.display());
    Ok(0)
}

/// `--config FILE`: AIPerf's plot specifications over the runs given (`aiperf plot
/// --config`): single-run charts into each RUN/plots, multi-run charts over every run into
/// `out_dir` when there are several runs. A chart no run can draw is named in a note.
fn run_specs(a: &PlotArgs, path: &Path, out_dir: &Path) -> Result<u8, Failure> {
    let cfg = crate::aiperf_config::read_plot_file(path)
        .map_err(|e| Failure::input(format!("--config: {e}")))?;
    let mut notes = Vec::new();
    for d in &a.dirs {
        notes.extend(crate::plot_specs::draw_single_as(&cfg, d, a.format)?);
    }
    let summaries = crate::plot_specs::summaries_of(&a.dirs)?;
    if summaries.len() > 1 && !cfg.multi_run.is_empty() {
        notes.extend(crate::plot_specs::draw_multi_into(
            &cfg, &summaries, out_dir, a.format,
        )?);
    } else if !cfg.multi_run.is_empty() {
        notes.push(format!(
            "the multi-run charts ({}) need two runs or more: {} given",
            cfg.multi_run
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            summaries.len()
        ));
    }
    for n in &notes {
        eprintln!("inferbench: note: {n}");
    }
    eprintln!(
        "inferbench: single-run charts in each run's plots/{}",
        if summaries.len() > 1 && !cfg.multi_run.is_empty() {
            format!(", multi-run charts in {}", out_dir.display())
        } else {
            String::new()
        }
    );
    Ok(0)
}

pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Failure> {
    let mut f = inferbench_artifacts::AtomicFile::create(dir, name)
        .map_err(|e| Failure::run(e.to_string()))?;
    f.write_all(bytes)
        .map_err(|e| Failure::run(e.to_string()))?;
    f.commit().map_err(|e| Failure::run(e.to_string()))?;
    Ok(())
}
