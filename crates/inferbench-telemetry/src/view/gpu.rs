//! The GPU view of a DCGM target and energy per token.

use std::collections::BTreeMap;

use super::{ClientWork, Efficiency, EnergySource, GaugeBrief, GpuSummary, GpuView};
use crate::window::{FamilyAnalysis, SeriesAnalysis, SeriesStats, TargetAnalysis};

const POWER: &str = "DCGM_FI_DEV_POWER_USAGE";
const ENERGY: &str = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION";
const XID: &str = "DCGM_FI_DEV_XID_ERRORS";

fn label<'a>(s: &'a SeriesAnalysis, name: &str) -> Option<&'a str> {
    s.labels
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// One GPU's series of every DCGM field, gathered by GPU.
#[derive(Default)]
struct Gpu<'t> {
    first: Option<&'t SeriesAnalysis>,
    fields: BTreeMap<&'t str, Vec<&'t SeriesAnalysis>>,
}

/// A gauge of one GPU: one series as it is; several (MIG instances, a changed label) add their
/// time-weighted means and changes, and their maxes (then an upper bound of the largest sum).
fn brief(series: Option<&Vec<&SeriesAnalysis>>) -> Option<GaugeBrief> {
    let mut out: Option<GaugeBrief> = None;
    for s in series? {
        let SeriesStats::Gauge(g) = &s.stats else {
            continue;
        };
        let acc = out.get_or_insert_default();
        let add = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        acc.time_weighted_mean = add(acc.time_weighted_mean, g.time_weighted_mean);
        acc.max = add(acc.max, g.max);
        acc.change = add(acc.change, g.change);
    }
    out
}

/// The energy counter's exact increase (mJ → J), every series of the GPU summed.
fn counter_energy_j(series: Option<&Vec<&SeriesAnalysis>>) -> Option<f64> {
    let mut out = None;
    for s in series? {
        let mj = match &s.stats {
            SeriesStats::Counter(c) => c.increase,
            // An exporter that declares it a gauge: last − first inside the window.
            SeriesStats::Gauge(g) => match g.change {
                Some(c) => c,
                None => continue,
            },
            _ => continue,
        };
        *out.get_or_insert(0.0) += mj / 1e3;
    }
    out
}

/// Power (W) integrated by the trapezoid rule over the window's samples, J.
fn power_energy_j(series: Option<&Vec<&SeriesAnalysis>>) -> Option<f64> {
    series?
        .iter()
        .filter_map(|s| match &s.stats {
            SeriesStats::Gauge(g) => g.integral,
            _ => None,
        })
        .reduce(|a, b| a + b)
}

fn xid_changed(series: Option<&Vec<&SeriesAnalysis>>) -> bool {
    series.is_some_and(|v| {
        v.iter().any(|s| match &s.stats {
            SeriesStats::Gauge(g) => g.min != g.max,
            _ => false,
        })
    })
}

fn dcgm_families(t: &TargetAnalysis) -> impl Iterator<Item = &FamilyAnalysis> {
    t.families.iter().filter(|f| f.name.starts_with("DCGM_"))
}

pub(super) fn view(t: &TargetAnalysis) -> Option<GpuView> {
    // Group by the `UUID` label, else the `gpu` index.
    let mut by_gpu: BTreeMap<String, Gpu> = BTreeMap::new();
    for f in dcgm_families(t) {
        for s in &f.series {
            let key = match (label(s, "UUID"), label(s, "gpu")) {
                (Some(u), _) => format!("uuid:{u}"),
                (None, Some(g)) => format!("gpu:{g}"),
                (None, None) => "unlabelled".to_string(),
            };
            let g = by_gpu.entry(key).or_default();
            g.first.get_or_insert(s);
            g.fields.entry(f.name.as_str()).or_default().push(s);
        }
    }
    if by_gpu.is_empty() {
        return None;
    }
    let use_counter = by_gpu
        .values()
        .all(|g| counter_energy_j(g.fields.get(ENERGY)).is_some());
    let mut gpus: Vec<GpuSummary> = by_gpu
        .values()
        .map(|g| {
            let s = g.first.expect("a gpu has a series");
            let f = |name: &str| brief(g.fields.get(name));
            let energy = if use_counter {
                counter_energy_j(g.fields.get(ENERGY))
            } else {
                power_energy_j(g.fields.get(POWER))
            };
            GpuSummary {
                uuid: label(s, "UUID").map(String::from),
                index: label(s, "gpu").map(String::from),
                model: label(s, "modelName").map(String::from),
                hostname: label(s, "Hostname")
                    .or(label(s, "hostname"))
                    .map(String::from),
                power_w: f(POWER),
                energy_j: energy,
                util_pct: f("DCGM_FI_DEV_GPU_UTIL"),
                mem_copy_util_pct: f("DCGM_FI_DEV_MEM_COPY_UTIL"),
                fb_used_mib: f("DCGM_FI_DEV_FB_USED"),
                temp_c: f("DCGM_FI_DEV_GPU_TEMP"),
                sm_clock_mhz: f("DCGM_FI_DEV_SM_CLOCK"),
                mem_clock_mhz: f("DCGM_FI_DEV_MEM_CLOCK"),
                xid_changed: xid_changed(g.fields.get(XID)),
            }
        })
        .collect();
    // GPUs by their index on the host (numerically), then UUID.
    gpus.sort_by_key(|g| {
        let i = g.index.as_deref().and_then(|i| i.parse::<u64>().ok());
        (i.is_none(), i, g.uuid.clone())
    });
    let energy_j = gpus.iter().filter_map(|g| g.energy_j).reduce(|a, b| a + b);
    let energy_source = energy_j.map(|_| {
        if use_counter {
            EnergySource::Counter
        } else {
            EnergySource::PowerIntegral
        }
    });
    let duplicate_fraction = if t.scrapes > 0 {
        t.duplicates as f64 / t.scrapes as f64
    } else {
        0.0
    };
    Some(GpuView {
        target: t.target.index,
        url: t.target.url.clone(),
        gpus,
        energy_j,
        energy_source,
        duplicate_fraction,
    })
}

/// §3 "Energy per token" steps 1–5: energy summed over every GPU that has it (a GPU seen by
/// two exporters, by UUID, once), mean power over the client's duration, and the per-token,
/// per-request and per-watt figures, with the server-token variant.
pub(super) fn efficiency(views: &[GpuView], work: &ClientWork) -> Option<Efficiency> {
    let mut seen: Vec<String> = Vec::new();
    let mut energy: Option<f64> = None;
    for v in views {
        for g in &v.gpus {
            let Some(e) = g.energy_j else { continue };
            let id = match (&g.uuid, &g.index) {
                (Some(u), _) => u.clone(),
                (None, Some(i)) => format!("target {} gpu {i}", v.target),
                (None, None) => format!("target {}", v.target),
            };
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            *energy.get_or_insert(0.0) += e;
        }
    }
    let e = energy?;
    let per = |num: f64, den: f64| (den > 0.0).then(|| num / den);
    let mean_power_w = per(e, work.duration_s).unwrap_or(0.0);
    Some(Efficiency {
        energy_j: e,
        mean_power_w,
        energy_per_output_token_mj: per(e * 1e3, work.output_tokens),
        energy_per_total_token_mj: per(e * 1e3, work.output_tokens + work.input_tokens),
        output_tokens_per_joule: per(work.output_tokens, e),
        energy_per_request_j: per(e, work.requests),
        output_tps_per_watt: per(work.output_tokens_per_s, mean_power_w),
        energy_per_server_output_token_mj: work.server_output_tokens.and_then(|n| per(e * 1e3, n)),
        gpus: seen,
    })
}
