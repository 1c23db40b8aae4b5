//! `GET /dcgm/metrics`: a DCGM exporter's page for the simulated GPUs, in the exporter's own
//! format (HELP and TYPE from its default counters CSV, labels `gpu`, `UUID`, `pci_bus_id`,
//! `device`, `modelName`, `Hostname` in that order, integer fields as integers and float
//! fields with six decimals, the energy counter in mJ with no `_total`, and the "blank"
//! sentinel for memory temperature, as older exporter builds send it).
//!
//! The GPUs model a tensor-parallel deployment: every GPU carries the whole running batch,
//! so each reads the same values. With `r` requests running and a saturation point `s`
//! (`max_running`, else 8), the load is `f = min(1, r / s)`, and:
//!
//! | Field | Value |
//! |---|---|
//! | `DCGM_FI_DEV_POWER_USAGE` | `min(60 + 25 r, 700)` W ([`power_mw`]) |
//! | `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` | the exact integral of that power since the server started, mJ (floored) |
//! | `DCGM_FI_DEV_GPU_UTIL` | `round(100 f)` % |
//! | `DCGM_FI_DEV_MEM_COPY_UTIL` | `round(60 f)` % |
//! | `DCGM_FI_DEV_FB_USED` / `_FB_FREE` | `16384 + round(57000 × kv usage)` MiB of 81559 |
//! | `DCGM_FI_DEV_GPU_TEMP` | `35 + round(40 f)` °C |
//! | `DCGM_FI_DEV_MEMORY_TEMP` | the blank `9223372036854775794` |
//! | `DCGM_FI_DEV_SM_CLOCK` / `_MEM_CLOCK` | 1980 MHz busy, 345 idle / 2619 MHz |
//! | `DCGM_FI_DEV_XID_ERRORS` | 0 |
//! | `DCGM_FI_PROF_GR_ENGINE_ACTIVE` | `f` (ratio) |

use std::fmt::Write as _;

/// Idle power, per running request, and the cap, mW.
const IDLE_MW: u64 = 60_000;
const PER_REQUEST_MW: u64 = 25_000;
const MAX_MW: u64 = 700_000;
/// Framebuffer, MiB: the card, the weights, and what a full KV cache adds.
const FB_TOTAL: u64 = 81_559;
const FB_WEIGHTS: u64 = 16_384;
const FB_KV: f64 = 57_000.0;
/// Running requests at full load when there is no `max_running`.
const DEFAULT_SATURATION: u64 = 8;
/// DCGM's "blank" int64 value (`DCGM_FT_INT64_BLANK`).
pub const BLANK_INT64: i64 = 9_223_372_036_854_775_794;

/// Instantaneous power of one simulated GPU with `running` requests in the batch, mW.
pub fn power_mw(running: u64) -> u64 {
    IDLE_MW
        .saturating_add(PER_REQUEST_MW.saturating_mul(running))
        .min(MAX_MW)
}

/// The exact integral of [`power_mw`] over a piecewise-constant load, in integer mW·ns.
#[derive(Debug, Default, Clone)]
pub struct EnergyMeter {
    last_ns: u64,
    running: u64,
    acc_mw_ns: u128,
}

impl EnergyMeter {
    /// The load becomes `running` at `at_ns` (ns since start, non-decreasing).
    pub fn set_running(&mut self, at_ns: u64, running: u64) {
        let at = at_ns.max(self.last_ns);
        self.acc_mw_ns += power_mw(self.running) as u128 * (at - self.last_ns) as u128;
        self.last_ns = at;
        self.running = running;
    }

    /// Energy since start at `at_ns`, mJ.
    pub fn energy_mj(&self, at_ns: u64) -> f64 {
        let tail = power_mw(self.running) as u128 * at_ns.saturating_sub(self.last_ns) as u128;
        // mW·ns = 1e-12 J = 1e-9 mJ.
        (self.acc_mw_ns + tail) as f64 / 1e9
    }
}

/// What the page shows, read once per scrape.
pub(crate) struct GpuLoad {
    pub running: u64,
    pub max_running: Option<u32>,
    pub kv_usage: f64,
    pub energy_mj: f64,
}

const FIELDS: &[(&str, &str, &str)] = &[
    (
        "DCGM_FI_DEV_SM_CLOCK",
        "gauge",
        "SM clock frequency (in MHz).",
    ),
    (
        "DCGM_FI_DEV_MEM_CLOCK",
        "gauge",
        "Memory clock frequency (in MHz).",
    ),
    (
        "DCGM_FI_DEV_MEMORY_TEMP",
        "gauge",
        "Memory temperature (in C).",
    ),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    (
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "counter",
        "Total energy consumption since boot (in mJ).",
    ),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    (
        "DCGM_FI_DEV_MEM_COPY_UTIL",
        "gauge",
        "Memory utilization (in %).",
    ),
    (
        "DCGM_FI_DEV_XID_ERRORS",
        "gauge",
        "Value of the last XID error encountered.",
    ),
    (
        "DCGM_FI_DEV_FB_FREE",
        "gauge",
        "Framebuffer memory free (in MiB).",
    ),
    (
        "DCGM_FI_DEV_FB_USED",
        "gauge",
        "Framebuffer memory used (in MiB).",
    ),
    (
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "gauge",
        "Ratio of time the graphics engine is active.",
    ),
];

/// The deterministic identity of simulated GPU `n`.
pub fn gpu_uuid(n: u32) -> String {
    format!("GPU-00000000-0000-0000-0000-{n:012x}")
}

pub(crate) fn render(gpus: u32, hostname: &str, load: &GpuLoad) -> String {
    let sat = load
        .max_running
        .map_or(DEFAULT_SATURATION, u64::from)
        .max(1);
    let f = (load.running as f64 / sat as f64).min(1.0);
    let busy = load.running > 0;
    let fb_used = FB_WEIGHTS + (FB_KV * load.kv_usage.clamp(0.0, 1.0)).round() as u64;
    let value = |field: &str| -> String {
        match field {
            "DCGM_FI_DEV_SM_CLOCK" => (if busy { 1980 } else { 345 }).to_string(),
            "DCGM_FI_DEV_MEM_CLOCK" => "2619".into(),
            "DCGM_FI_DEV_MEMORY_TEMP" => BLANK_INT64.to_string(),
            "DCGM_FI_DEV_GPU_TEMP" => (35 + (40.0 * f).round() as u64).to_string(),
            "DCGM_FI_DEV_POWER_USAGE" => {
                format!("{:.6}", power_mw(load.running) as f64 / 1e3)
            }
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" => (load.energy_mj.floor() as u64).to_string(),
            "DCGM_FI_DEV_GPU_UTIL" => ((100.0 * f).round() as u64).to_string(),
            "DCGM_FI_DEV_MEM_COPY_UTIL" => ((60.0 * f).round() as u64).to_string(),
            "DCGM_FI_DEV_FB_FREE" => FB_TOTAL.saturating_sub(fb_used).to_string(),
            "DCGM_FI_DEV_FB_USED" => fb_used.to_string(),
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE" => format!("{f:.6}"),
            _ => "0".into(),
        }
    };
    let mut out = String::with_capacity(4096 * gpus as usize);
    for (name, kind, help) in FIELDS {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        let v = value(name);
        for n in 0..gpus {
            let _ = writeln!(
                out,
                "{name}{{gpu=\"{n}\",UUID=\"{}\",pci_bus_id=\"00000000:{:02X}:00.0\",device=\"nvidia{n}\",modelName=\"inferbench simulated GPU\",Hostname=\"{hostname}\"}} {v}",
                gpu_uuid(n),
                0x18 + n
            );
        }
    }
    out
}

/// The host's name for the `Hostname` label (quotes and backslashes dropped).
pub(crate) fn hostname() -> String {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let h: String = h
        .trim()
        .chars()
        .filter(|c| !matches!(c, '"' | '\\' | '\n'))
        .collect();
    if h.is_empty() {
        "inferbench-sim".into()
    } else {
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_is_the_integral_of_power_over_a_fixed_schedule() {
        // 1 s idle (60 W), 2 s with 2 running (110 W), 1 s with 1 running (85 W):
        // 60 + 220 + 85 = 365 J = 365,000 mJ.
        let mut m = EnergyMeter::default();
        m.set_running(1_000_000_000, 2);
        m.set_running(3_000_000_000, 1);
        assert_eq!(m.energy_mj(4_000_000_000), 365_000.0);
        // Half a millisecond more at 85 W: 42.5 mJ.
        assert_eq!(m.energy_mj(4_000_500_000), 365_042.5);
        // Power is capped: 60 + 25 × 30 = 810 W → 700 W.
        assert_eq!(power_mw(30), 700_000);
        let mut m = EnergyMeter::default();
        m.set_running(0, 30);
        assert_eq!(m.energy_mj(2_000_000_000), 1_400_000.0);
    }

    #[test]
    fn the_page_has_every_field_per_gpu_with_its_labels() {
        let load = GpuLoad {
            running: 4,
            max_running: Some(8),
            kv_usage: 0.5,
            energy_mj: 1234.9,
        };
        let text = render(2, "h1", &load);
        for (name, kind, _) in FIELDS {
            assert!(text.contains(&format!("# TYPE {name} {kind}\n")), "{name}");
        }
        assert!(text.contains(
            "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-00000000-0000-0000-0000-000000000001\",pci_bus_id=\"00000000:19:00.0\",device=\"nvidia1\",modelName=\"inferbench simulated GPU\",Hostname=\"h1\"} 160.000000\n"
        ));
        // 16384 + 28500 MiB used of 81559.
        assert!(text.contains("Hostname=\"h1\"} 44884\n"));
        assert!(text.contains("Hostname=\"h1\"} 36675\n"));
        assert!(text.contains("Hostname=\"h1\"} 9223372036854775794\n"));
        assert!(text.contains("Hostname=\"h1\"} 1234\n"));
        assert!(text.contains("Hostname=\"h1\"} 0.500000\n"));
        assert_eq!(text.matches("DCGM_FI_DEV_GPU_UTIL{").count(), 2);
        assert!(!text.contains("_total"));
    }
}
