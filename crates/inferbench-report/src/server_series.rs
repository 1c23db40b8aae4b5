//! Server-metric series over time, from the raw scrape file (`inferbench_scrapes.jsonl`,
//! docs/telemetry.md): each gauge as sampled, each counter as its per-second rate between
//! consecutive scrapes. Histograms and summaries are left out (their window statistics are
//! in `inferbench_server_metrics.json`; a bucket count over time is not a readable line).
//! The GPU targets' DCGM pages give GPU series the same way ([`gpu_series`]), keyed by GPU.

use inferbench_telemetry::expo::{MetricType, parse};
use inferbench_telemetry::scrape::{ScrapeLog, TargetKind};

use crate::svg::{Chart, Series, Style};

/// One (family, label set) series of one server target.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricSeries {
    pub family: String,
    /// `gauge` or `counter` (its points are then rates per second).
    pub kind: &'static str,
    /// The target's index in the scrape file's header.
    pub target: u32,
    /// `name="value"` pairs joined by commas, sorted by name (empty when unlabelled).
    pub labels: String,
    /// (seconds since `t0`, value): the scrape's sample time (its first byte).
    pub points: Vec<(f64, f64)>,
}

/// A counter's per-second rate between consecutive samples, placed at the later sample.
/// A drop is a counter reset (the server restarted): that interval has no rate. Samples at
/// the same instant, or non-finite values, give no rate either.
pub fn counter_rates(samples: &[(f64, f64)]) -> Vec<(f64, f64)> {
    samples
        .windows(2)
        .filter_map(|w| {
            let ((t0, v0), (t1, v1)) = (w[0], w[1]);
            let (dt, dv) = (t1 - t0, v1 - v0);
            (dt > 0.0 && dv >= 0.0 && dv.is_finite()).then_some((t1, dv / dt))
        })
        .collect()
}

/// Every gauge and counter series of the server targets (not GPU targets), in the order
/// first seen. `t0_unix_ns` is the time origin (the run's first request start, so that the
/// series line up with the request charts). Failed scrapes and bodies that do not parse are
/// skipped; NaN samples (a ratio of 0 over 0) are left out.
pub fn server_series(log: &ScrapeLog, t0_unix_ns: u64) -> Vec<MetricSeries> {
    kind_series(log, t0_unix_ns, TargetKind::Server, |_| true)
}

/// Every gauge and counter series of the GPU (DCGM) targets, as [`server_series`] does for
/// servers. A DCGM sample's labels name the GPU several ways (`gpu`, `UUID`, `device`,
/// `modelName`, `Hostname`, `pci_bus_id`...); only `gpu` and `UUID` are kept, so that one
/// GPU is one series (and a line's name stays short).
pub fn gpu_series(log: &ScrapeLog, t0_unix_ns: u64) -> Vec<MetricSeries> {
    kind_series(log, t0_unix_ns, TargetKind::Gpu, |k| {
        k == "gpu" || k == "UUID"
    })
}

fn kind_series(
    log: &ScrapeLog,
    t0_unix_ns: u64,
    kind_of_target: TargetKind,
    keep_label: impl Fn(&str) -> bool,
) -> Vec<MetricSeries> {
    let targets: Vec<u32> = log
        .header
        .targets
        .iter()
        .filter(|t| t.kind == kind_of_target)
        .map(|t| t.index)
        .collect();
    let mut out: Vec<MetricSeries> = Vec::new();
    for s in log.scrapes.iter().filter(|s| targets.contains(&s.target)) {
        if s.error.is_some() || s.first_byte_ns.is_none() {
            continue;
        }
        let Some(body) = log.body_of(s) else { continue };
        let Ok(expo) = parse(body, s.content_type.as_deref()) else {
            continue;
        };
        let t = (s.wall_unix_ns as f64 - t0_unix_ns as f64) * 1e-9;
        for f in &expo.families {
            let kind = match f.kind {
                MetricType::Gauge => "gauge",
                MetricType::Counter => "counter",
                _ => continue,
            };
            for sample in f.samples.iter().filter(|x| !x.value.is_nan()) {
                let labels = sample
                    .labels
                    .iter()
                    .filter(|(k, _)| keep_label(k))
                    .map(|(k, v)| format!("{k}=\"{v}\""))
                    .collect::<Vec<_>>()
                    .join(",");
                let found = out
                    .iter_mut()
                    .find(|m| m.target == s.target && m.family == f.name && m.labels == labels);
                match found {
                    Some(m) => m.points.push((t, sample.value)),
                    None => out.push(MetricSeries {
                        family: f.name.clone(),
                        kind,
                        target: s.target,
                        labels,
                        points: vec![(t, sample.value)],
                    }),
                }
            }
        }
    }
    for m in out.iter_mut().filter(|m| m.kind == "counter") {
        m.points = counter_rates(&m.points);
    }
    out
}

/// Whether a series shows something: at least two points and not one constant value.
pub fn varies(points: &[(f64, f64)]) -> bool {
    points.len() >= 2 && points.iter().any(|p| p.1 != points[0].1)
}

/// One chart per family with a varying series (at most `max`, in the order first seen),
/// every label set of the family a series; and the families left out because flat.
pub fn server_charts(series: &[MetricSeries], max: usize) -> (Vec<Chart>, Vec<String>) {
    let mut families: Vec<(&str, &'static str)> = Vec::new();
    for m in series {
        if !families.iter().any(|f| f.0 == m.family) {
            families.push((&m.family, m.kind));
        }
    }
    let several_targets = series.iter().any(|m| m.target != series[0].target);
    let (mut charts, mut flat) = (Vec::new(), Vec::new());
    for (family, kind) in families {
        let of: Vec<&MetricSeries> = series.iter().filter(|m| m.family == family).collect();
        if !of.iter().any(|m| varies(&m.points)) || charts.len() >= max {
            flat.push(family.to_string());
            continue;
        }
        let lines = of
            .iter()
            .map(|m| {
                let mut name = if m.labels.is_empty() {
                    family.to_string()
                } else {
                    format!("{{{}}}", m.labels)
                };
                if several_targets {
                    name = format!("target {} {name}", m.target);
                }
                Series::new(name, m.points.clone(), Style::Line)
            })
            .collect();
        charts.push(Chart {
            title: if kind == "counter" {
                format!("{family} (rate)")
            } else {
                family.to_string()
            },
            x_label: "scrape time (s since the first request start)".into(),
            y_label: if kind == "counter" {
                "per second".into()
            } else {
                "value".into()
            },
            series: lines,
        });
    }
    (charts, flat)
}

#[cfg(test)]
mod tests;
