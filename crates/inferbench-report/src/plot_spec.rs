//! AIPerf's plot specifications (the `plot:` block of an AIPerf 0.13 config, the same layout
//! as its `default_plot_config.yaml`): `visualization.multi_run_defaults` names the charts of
//! a sweep, drawn from `multi_run_plots`; `single_run_defaults` the charts of each run, from
//! `single_run_plots`. The kinds drawn (docs/reports.md, "AIPerf plot specifications"):
//! - `pareto`: one point per run at (x.stat of x.metric, y.stat of y.metric) from its
//!   summary, per group, with the group's Pareto front (a latency or time axis is better
//!   low, any other better high);
//! - `scatter_line`: the same points joined in x order;
//! - `latency_throughput_uncertainty`: the same points (one per run; AIPerf's joint
//!   ellipses across trials are not drawn);
//! - `scatter` (one run): each record's y metric against its `request_number` (start order)
//!   or another metric;
//! - `timeslice` (one run): the timeslice CSV's `stat` of the `y` metric (its display name)
//!   per slice.
//!
//! A chart whose metric no run has (a telemetry-only metric without GPU telemetry) is
//! skipped, and the caller says so, as AIPerf skips it.

use serde_json::Value;

use crate::data::pareto_front;
use crate::svg::{Chart, Series, Style};

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Pareto,
    ScatterLine,
    Uncertainty,
    Scatter,
    Timeslice,
}

/// One axis: a metric tag (or, for a timeslice's y, its display name) and its statistic.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub metric: String,
    pub stat: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlotSpec {
    pub name: String,
    pub kind: Kind,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    /// Keys whose value splits the runs into series (`model`, a swept field).
    pub groups: Vec<String>,
}

/// The charts a config asks for: of a sweep (several runs) and of each run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlotConfig {
    pub multi_run: Vec<PlotSpec>,
    pub single_run: Vec<PlotSpec>,
}

fn axis(at: &str, v: Option<&Value>, stat: Option<&Value>) -> Result<Axis, String> {
    match v {
        Some(Value::String(m)) => Ok(Axis {
            metric: m.clone(),
            stat: stat.and_then(Value::as_str).map(str::to_string),
        }),
        Some(Value::Object(o)) => {
            let metric = o
                .get("metric")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{at}.metric: missing"))?;
            Ok(Axis {
                metric: metric.to_string(),
                stat: o
                    .get("stat")
                    .or(stat)
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })
        }
        Some(other) => Err(format!("{at}: {other}: a metric name or {{metric, stat}}")),
        None => Err(format!("{at}: missing")),
    }
}

fn spec(at: &str, name: &str, v: &Value, multi: bool) -> Result<PlotSpec, String> {
    let Value::Object(o) = v else {
        return Err(format!("{at}: a plot is a table"));
    };
    let ty = o.get("type").and_then(Value::as_str).unwrap_or_default();
    let kind = match (ty, multi) {
        ("pareto", true) => Kind::Pareto,
        ("scatter_line", true) => Kind::ScatterLine,
        ("latency_throughput_uncertainty", true) => Kind::Uncertainty,
        ("scatter", false) => Kind::Scatter,
        ("timeslice", false) => Kind::Timeslice,
        _ => {
            return Err(format!(
                "{at}.type \"{ty}\": not built in inferbench (built: pareto, scatter_line, latency_throughput_uncertainty for a sweep; scatter, timeslice for a run)"
            ));
        }
    };
    let stat = o.get("stat");
    let groups = match o.get("groups") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|g| {
                g.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{at}.groups: {g}: a key name"))
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("{at}.groups: {other}: a list of key names")),
    };
    Ok(PlotSpec {
        name: name.to_string(),
        kind,
        title: o
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or(name)
            .to_string(),
        x: axis(&format!("{at}.x"), o.get("x"), stat)?,
        y: axis(&format!("{at}.y"), o.get("y"), stat)?,
        groups,
    })
}

/// The default charts of one side: each name in `defaults` looked up in `plots`.
fn side(
    at: &str,
    vis: &Value,
    defaults: &str,
    plots: &str,
    multi: bool,
) -> Result<Vec<PlotSpec>, String> {
    let names = match vis.get(defaults) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(other) => return Err(format!("{at}.{defaults}: {other}: a list of plot names")),
    };
    let mut out = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let Some(n) = n.as_str() else {
            return Err(format!("{at}.{defaults}[{i}]: {n}: a plot name"));
        };
        let v = vis.get(plots).and_then(|p| p.get(n)).ok_or_else(|| {
            format!("{at}.{defaults}[{i}]: \"{n}\": no such plot in {at}.{plots}")
        })?;
        out.push(spec(&format!("{at}.{plots}.{n}"), n, v, multi)?);
    }
    Ok(out)
}

impl PlotConfig {
    /// Reads the `plot` block (`at` names it in errors). Plots listed but not in a defaults
    /// list are checked too, as AIPerf loads them.
    pub fn parse(at: &str, v: &Value) -> Result<PlotConfig, String> {
        // `at` is a path (`x.yaml: plot`, joined with dots) or a file ("f.yaml: ").
        let join = |k: &str| {
            if at.ends_with(": ") {
                format!("{at}{k}")
            } else {
                format!("{at}.{k}")
            }
        };
        let Value::Object(o) = v else {
            return Err(format!(
                "{}: a table (visualization, settings)",
                at.trim_end_matches(": ")
            ));
        };
        if let Some(k) = o
            .keys()
            .find(|k| !["visualization", "settings"].contains(&k.as_str()))
        {
            return Err(format!(
                "{}: not a part of a plot configuration (visualization, settings)",
                join(k)
            ));
        }
        let vat = join("visualization");
        let vis = o.get("visualization").cloned().unwrap_or(Value::Null);
        for (plots, multi) in [("multi_run_plots", true), ("single_run_plots", false)] {
            if let Some(Value::Object(all)) = vis.get(plots) {
                for (n, p) in all {
                    spec(&format!("{vat}.{plots}.{n}"), n, p, multi)?;
                }
            }
        }
        Ok(PlotConfig {
            multi_run: side(&vat, &vis, "multi_run_defaults", "multi_run_plots", true)?,
            single_run: side(&vat, &vis, "single_run_defaults", "single_run_plots", false)?,
        })
    }
}

/// Whether a lower value of the metric is the better one (latencies and times).
fn lower_is_better(metric: &str) -> bool {
    ["latency", "time_to", "ttft", "itl", "duration"]
        .iter()
        .any(|k| metric.contains(k))
}

/// The value of `key` anywhere in `v` (depth first, first found), as text: a run's group.
fn find_key(v: &Value, key: &str) -> Option<String> {
    match v {
        Value::Object(o) => {
            if let Some(x) = o.get(key) {
                return Some(match x {
                    Value::String(s) => s.clone(),
                    Value::Array(a) if a.len() == 1 => {
                        a[0].as_str().map_or(a[0].to_string(), str::to_string)
                    }
                    other => other.to_string(),
                });
            }
            o.values().find_map(|x| find_key(x, key))
        }
        Value::Array(a) => a.iter().find_map(|x| find_key(x, key)),
        _ => None,
    }
}

/// A run's value of a group key, from its summary's `input_config`: `model` is the first of
/// `models.items[].name` (AIPerf 0.13's layout); another key is the profiling phase's field
/// (`concurrency`, `rate`), else the first field of that name anywhere.
fn group_value(s: &Value, k: &str) -> Option<String> {
    let ic = &s["input_config"];
    if k == "model" {
        return ic["models"]["items"][0]["name"]
            .as_str()
            .map(str::to_string)
            .or_else(|| find_key(s, "model_names"));
    }
    let profiling = ic["phases"]
        .as_array()
        .and_then(|p| p.iter().find(|x| x["kind"] == "profiling"));
    profiling
        .and_then(|p| p.get(k))
        .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
        .or_else(|| find_key(s, k))
}

fn stat_of(summary: &Value, a: &Axis) -> Option<f64> {
    summary[&a.metric][a.stat.as_deref().unwrap_or("avg")].as_f64()
}

fn label(a: &Axis) -> String {
    match &a.stat {
        Some(s) => format!("{} ({s})", a.metric),
        None => a.metric.clone(),
    }
}

/// A sweep chart from each run's summary (`profile_export_aiperf.json`, which carries its
/// `input_config` for the groups). None when no run has both metrics.
pub fn multi_run_chart(spec: &PlotSpec, summaries: &[Value]) -> Option<Chart> {
    let mut groups: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for s in summaries {
        let (Some(x), Some(y)) = (stat_of(s, &spec.x), stat_of(s, &spec.y)) else {
            continue;
        };
        let g = spec
            .groups
            .iter()
            .map(|k| group_value(s, k).unwrap_or_else(|| "-".into()))
            .collect::<Vec<_>>()
            .join(", ");
        match groups.iter_mut().find(|(n, _)| *n == g) {
            Some((_, p)) => p.push((x, y)),
            None => groups.push((g, vec![(x, y)])),
        }
    }
    if groups.is_empty() {
        return None;
    }
    let mut series = Vec::new();
    for (g, mut pts) in groups {
        let name = if g.is_empty() { "runs".to_string() } else { g };
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        match spec.kind {
            Kind::ScatterLine => series.push(Series::new(name, pts, Style::Line)),
            Kind::Pareto => {
                let flip = |p: &[(f64, f64)], fx: bool, fy: bool| -> Vec<(f64, f64)> {
                    p.iter()
                        .map(|&(x, y)| (if fx { -x } else { x }, if fy { -y } else { y }))
                        .collect()
                };
                let (fx, fy) = (
                    lower_is_better(&spec.x.metric),
                    lower_is_better(&spec.y.metric),
                );
                let mut front = flip(&pareto_front(&flip(&pts, fx, fy)), fx, fy);
                front.sort_by(|a, b| a.0.total_cmp(&b.0));
                series.push(Series::new(name.clone(), pts, Style::Points));
                series.push(Series::new(
                    format!("{name}: Pareto front"),
                    front,
                    Style::Line,
                ));
            }
            _ => series.push(Series::new(name, pts, Style::Points)),
        }
    }
    Some(Chart {
        title: spec.title.clone(),
        x_label: label(&spec.x),
        y_label: label(&spec.y),
        series,
    })
}

/// A run's chart from its records (`profile_export.jsonl` lines) and its timeslice CSV
/// text. None when the run has no value of the metric.
pub fn single_run_chart(
    spec: &PlotSpec,
    records: &[Value],
    timeslice_csv: Option<&str>,
) -> Option<Chart> {
    let pts: Vec<(f64, f64)> = match spec.kind {
        Kind::Scatter => {
            let mut recs: Vec<&Value> = records.iter().collect();
            recs.sort_by_key(|r| {
                r["metadata"]["request_start_ns"]
                    .as_u64()
                    .unwrap_or(u64::MAX)
            });
            let value = |r: &Value, m: &str| r["metrics"][m]["value"].as_f64();
            recs.iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    let x = if spec.x.metric == "request_number" {
                        Some(i as f64)
                    } else {
                        value(r, &spec.x.metric)
                    }?;
                    Some((x, value(r, &spec.y.metric)?))
                })
                .collect()
        }
        Kind::Timeslice => timeslice_points(
            timeslice_csv?,
            &spec.y.metric,
            spec.y.stat.as_deref().unwrap_or("avg"),
        ),
        _ => return None,
    };
    if pts.is_empty() {
        return None;
    }
    let style = if spec.kind == Kind::Timeslice {
        Style::Line
    } else {
        Style::Points
    };
    Some(Chart {
        title: spec.title.clone(),
        x_label: spec.x.metric.clone(),
        y_label: label(&spec.y),
        series: vec![Series::new(spec.y.metric.clone(), pts, style)],
    })
}

/// (slice index, value) of the `Metric` (display name) and `Stat` rows of AIPerf's
/// timeslice CSV, `Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value`.
pub fn timeslice_points(csv: &str, metric: &str, stat: &str) -> Vec<(f64, f64)> {
    csv.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            if f.len() < 7 || f[3] != metric || f[5] != stat {
                return None;
            }
            Some((f[0].parse().ok()?, f[6].parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
#[path = "plot_spec_tests.rs"]
mod tests;
