//! AIPerf 0.13's GPU energy-efficiency metrics (`metrics/energy_efficiency_analyzer.py`),
//! which its summary JSON carries beside the client's own metrics: fleet power (Σ per-GPU
//! mean power over the profiling window), energy (Σ per-GPU clamped DCGM counter deltas
//! over the window extended by 666 ms; else mean power × duration), and the ratios with
//! the client's totals. NVIDIA (DCGM) only, as the scrapes are.

use serde::{Deserialize, Serialize};

use crate::scrape::ScrapeLog;

use super::Meta;
use super::gpu::{self, FINAL_SCRAPE_GRACE_NS};

/// The client-side numbers AIPerf divides by: each the `avg` of the summary metric named
/// in the comment; None where the run has none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientTotals {
    /// `total_osl`, tokens.
    pub total_osl: Option<f64>,
    /// `total_isl`, tokens.
    pub total_isl: Option<f64>,
    /// `request_count`.
    pub request_count: Option<f64>,
    /// The profiling phase's concurrency, when it ran at a fixed concurrency.
    pub concurrency: Option<u64>,
    /// `request_latency` average, ms.
    pub request_latency_ms: Option<f64>,
    /// `request_throughput`, requests/s.
    pub request_throughput: Option<f64>,
    /// `output_token_throughput`, tokens/s.
    pub output_token_throughput: Option<f64>,
    /// `goodput`, good requests/s.
    pub goodput: Option<f64>,
}

/// One of AIPerf's energy metrics: its summary tag, header, unit and value (`avg`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnergyMetric {
    pub tag: String,
    pub header: String,
    pub unit: String,
    pub value: f64,
}

fn m(tag: &str, header: &str, unit: &str, value: f64) -> EnergyMetric {
    EnergyMetric {
        tag: format!("nvidia_{tag}"),
        header: header.to_string(),
        unit: unit.to_string(),
        value,
    }
}

/// AIPerf's energy metrics for the run, in its order; empty when no GPU reported power or
/// energy.
pub fn energy_efficiency(
    log: &ScrapeLog,
    meta: &Meta<'_>,
    client: &ClientTotals,
) -> Vec<EnergyMetric> {
    let gpus = gpu::collect(log, meta);
    let start = (meta.anchor_unix_ns + meta.windows.profiling.start_ns) as i64;
    let end = (meta.anchor_unix_ns + meta.windows.profiling.end_ns) as i64;
    let duration_s = if end > start {
        (end - start) as f64 / 1e9
    } else {
        0.0
    };
    let all = || gpus.sources.iter().flat_map(|(_, g)| g.iter());
    let (mut power_w, mut power_n) = (0.0, 0);
    for g in all() {
        if let Some(avg) = g
            .result("nvidia_power_usage", start, end)
            .and_then(|v| v["avg"].as_f64())
        {
            power_w += avg;
            power_n += 1;
        }
    }
    let (mut energy_j, mut energy_n) = (0.0, 0);
    let grace_end = end + FINAL_SCRAPE_GRACE_NS as i64;
    for g in all() {
        if let Some(mj) = g
            .result("nvidia_energy_consumption", start, grace_end)
            .and_then(|v| v["avg"].as_f64())
        {
            energy_j += mj * 1e6;
            energy_n += 1;
        }
    }
    let (energy, avg_power) = if energy_n > 0 && energy_j > 0.0 {
        let avg = if duration_s > 0.0 {
            energy_j / duration_s
        } else {
            0.0
        };
        (energy_j, avg)
    } else if power_n > 0 && power_w > 0.0 && duration_s > 0.0 {
        (power_w * duration_s, power_w)
    } else {
        (0.0, 0.0)
    };
    let mut out = Vec::new();
    if power_n > 0 {
        out.push(m("total_gpu_power", "Total GPU Power", "W", power_w));
    }
    if energy <= 0.0 {
        return out;
    }
    if avg_power > 0.0 {
        out.push(m("average_gpu_power", "Average GPU Power", "W", avg_power));
    }
    out.push(m("total_gpu_energy", "Total GPU Energy", "J", energy));
    // Python's truthiness: a zero total counts as absent.
    let some = |x: Option<f64>| x.filter(|v| *v != 0.0);
    if let Some(osl) = some(client.total_osl) {
        out.push(m(
            "output_tokens_per_joule",
            "Output Tokens per Joule",
            "tokens/J",
            osl / energy,
        ));
        out.push(m(
            "energy_per_output_token",
            "Energy per Output Token",
            "mJ/token",
            energy * 1000.0 / osl,
        ));
    }
    let total_tokens = client.total_isl.unwrap_or(0.0) + some(client.total_osl).unwrap_or(0.0);
    if total_tokens > 0.0 {
        out.push(m(
            "energy_per_total_token",
            "Energy per Total Token",
            "mJ/token",
            energy * 1000.0 / total_tokens,
        ));
    }
    let per_request = some(client.request_count).map(|n| energy / n);
    if let Some(e) = per_request {
        out.push(m(
            "energy_per_request",
            "Energy per Request",
            "joules/request",
            e,
        ));
    }
    if let Some(c) = client.concurrency.filter(|c| *c > 0) {
        out.push(m(
            "energy_per_user",
            "Energy per User",
            "joules/user",
            energy / c as f64,
        ));
    }
    if let (Some(e), Some(lat)) = (per_request, some(client.request_latency_ms)) {
        out.push(m(
            "energy_delay_product",
            "Energy Delay Product",
            "J*s",
            e * (lat / 1000.0),
        ));
    }
    if avg_power > 0.0 {
        if let Some(t) = client.request_throughput {
            out.push(m(
                "performance_per_watt",
                "Performance per Watt",
                "requests/sec/W",
                t / avg_power,
            ));
        }
        if let Some(t) = client.output_token_throughput {
            out.push(m(
                "output_tps_per_watt",
                "Output Tokens per Second per Watt",
                "tokens/sec/W",
                t / avg_power,
            ));
        }
        if let Some(g) = client.goodput {
            out.push(m(
                "goodput_per_watt",
                "Goodput per Watt",
                "good-req/s/W",
                g / avg_power,
            ));
        }
    }
    out
}
