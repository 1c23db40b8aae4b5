//! AIPerf's plot specifications (a config's `plot:` block) drawn over inferbench runs: each
//! run's `single_run_defaults` into `RUN/plots`, and after a sweep its `multi_run_defaults`
//! into `SWEEP/plots` (docs/reports.md). A chart whose metric no run has is skipped with a
//! note, as AIPerf skips its telemetry-only charts.

use std::path::Path;

use inferbench_report::plot_spec::{PlotConfig, multi_run_chart, single_run_chart};
use inferbench_report::png::render_png;
use inferbench_report::svg::{Chart, render};
use inferbench_run::{Failure, RunDir};

use crate::cli::PlotFormat;

fn write_chart(dir: &Path, stem: &str, chart: &Chart, format: PlotFormat) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::run(format!("{}: cannot create: {e}", dir.display())))?;
    if format != PlotFormat::Png {
        crate::plot_cmd::write(dir, &format!("{stem}.svg"), render(chart).as_bytes())?;
    }
    if format != PlotFormat::Svg {
        crate::plot_cmd::write(dir, &format!("{stem}.png"), &render_png(chart))?;
    }
    Ok(())
}

/// The single-run charts of the run in `dir`, SVG and PNG; the notes of the charts skipped.
pub fn draw_single(cfg: &PlotConfig, dir: &Path) -> Result<Vec<String>, Failure> {
    draw_single_as(cfg, dir, PlotFormat::Both)
}

/// [`draw_single`] writing `format`.
pub fn draw_single_as(
    cfg: &PlotConfig,
    dir: &Path,
    format: PlotFormat,
) -> Result<Vec<String>, Failure> {
    let mut notes = Vec::new();
    if cfg.single_run.is_empty() {
        return Ok(notes);
    }
    for run in RunDir::open(dir)?.runs() {
        let records_file = run.path.join(&run.names().records_jsonl);
        // Under `--export-level summary` there is no per-record file: say so, rather than
        // "no values", which reads as if the metric were missing from the run.
        let no_records_file = !records_file.exists();
        let records: Vec<serde_json::Value> = std::fs::read_to_string(&records_file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let (_, ts_csv) = inferbench_artifacts::timeslices::timeslice_names(run.names());
        let ts = std::fs::read_to_string(run.path.join(ts_csv)).ok();
        for spec in &cfg.single_run {
            match single_run_chart(spec, &records, ts.as_deref()) {
                Some(c) => write_chart(&run.path.join("plots"), &spec.name, &c, format)?,
                None => notes.push(format!(
                    "plot {}: skipped for {}: the run has no {} values{}",
                    spec.name,
                    run.path.display(),
                    spec.y.metric,
                    if ts.is_none() && spec.kind == inferbench_report::plot_spec::Kind::Timeslice {
                        " (no timeslice file: give --slice-duration)".to_string()
                    } else if no_records_file
                        && spec.kind != inferbench_report::plot_spec::Kind::Timeslice
                    {
                        format!(
                            " (no {}: --export-level summary writes none)",
                            run.names().records_jsonl
                        )
                    } else {
                        String::new()
                    }
                )),
            }
        }
    }
    Ok(notes)
}

/// The multi-run charts of every run under the sweep directory `dir`, into `dir/plots`.
pub fn draw_multi(cfg: &PlotConfig, dir: &Path) -> Result<Vec<String>, Failure> {
    let summaries = summaries_of(&[dir.to_path_buf()])?;
    draw_multi_into(cfg, &summaries, &dir.join("plots"), PlotFormat::Both)
}

/// The summaries of every run under `dirs` (a run directory, or a sweep's).
pub fn summaries_of(dirs: &[std::path::PathBuf]) -> Result<Vec<serde_json::Value>, Failure> {
    let mut out = Vec::new();
    for d in dirs {
        out.extend(
            RunDir::open(d)?
                .runs()
                .iter()
                .filter_map(|r| r.summary().ok().flatten().map(|s| s.document)),
        );
    }
    Ok(out)
}

/// The multi-run charts of `summaries`, into `out`; the notes of the charts skipped.
pub fn draw_multi_into(
    cfg: &PlotConfig,
    summaries: &[serde_json::Value],
    out: &Path,
    format: PlotFormat,
) -> Result<Vec<String>, Failure> {
    let mut notes = Vec::new();
    for spec in &cfg.multi_run {
        match multi_run_chart(spec, summaries) {
            Some(c) => write_chart(out, &spec.name, &c, format)?,
            None => notes.push(format!(
                "plot {}: skipped: no run has both {} and {}",
                spec.name, spec.x.metric, spec.y.metric
            )),
        }
    }
    Ok(notes)
}
