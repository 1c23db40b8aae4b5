//! The DCGM exporter's fields: type, unit, what inferbench and AIPerf make of each, and the
//! "blank" sentinel values older exporters emit (docs/telemetry.md, "GPU telemetry").
//!
//! Types and units are dcgm-exporter's `etc/default-counters.csv` (reference §3); AIPerf's
//! tags and scales are AIPerf 0.13.0's `gpu_telemetry/constants.py` (`DCGM_TO_FIELD_MAPPING`)
//! and `dcgm_collector.py` (`SCALING_FACTORS`).

use crate::expo::MetricType;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcgmField {
    pub name: &'static str,
    pub kind: MetricType,
    /// The exporter's unit, as documented (`W`, `mJ`, `%`, `MiB`, `MHz`, `C`, `ratio`, `ns`, `B/s`).
    pub unit: &'static str,
    /// AIPerf's tag for it in its GPU telemetry, when AIPerf maps it.
    pub aiperf_tag: Option<&'static str>,
    /// What AIPerf multiplies the value by for that tag (e.g. MiB → GB: 1.048576e-3).
    pub aiperf_scale: f64,
}

const fn f(name: &'static str, kind: MetricType, unit: &'static str) -> DcgmField {
    DcgmField {
        name,
        kind,
        unit,
        aiperf_tag: None,
        aiperf_scale: 1.0,
    }
}

const fn aiperf(
    name: &'static str,
    kind: MetricType,
    unit: &'static str,
    tag: &'static str,
    scale: f64,
) -> DcgmField {
    DcgmField {
        name,
        kind,
        unit,
        aiperf_tag: Some(tag),
        aiperf_scale: scale,
    }
}

use MetricType::{Counter as C, Gauge as G};

/// Every field of reference §3's table. AIPerf maps eleven of them; it does not map the
/// clocks (`SM_CLOCK` included), FB free/reserved, memory temperature or the other DCP
/// fields. It differences energy, XID and power violation against its baseline (XID is a
/// gauge in the CSV: the last XID seen) and summarises the rest.
pub const FIELDS: &[DcgmField] = &[
    aiperf("DCGM_FI_DEV_POWER_USAGE", G, "W", "nvidia_power_usage", 1.0),
    // mJ since boot; AIPerf scales mJ → MJ and reports J.
    aiperf(
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        C,
        "mJ",
        "nvidia_energy_consumption",
        1e-9,
    ),
    aiperf(
        "DCGM_FI_DEV_GPU_UTIL",
        G,
        "%",
        "nvidia_gpu_utilization",
        1.0,
    ),
    aiperf(
        "DCGM_FI_DEV_MEM_COPY_UTIL",
        G,
        "%",
        "nvidia_memory_utilization",
        1.0,
    ),
    // MiB → GB (decimal): 1 MiB = 1.048576e-3 GB.
    aiperf(
        "DCGM_FI_DEV_FB_USED",
        G,
        "MiB",
        "nvidia_memory_used",
        1.048576e-3,
    ),
    f("DCGM_FI_DEV_FB_FREE", G, "MiB"),
    f("DCGM_FI_DEV_FB_RESERVED", G, "MiB"),
    f("DCGM_FI_DEV_SM_CLOCK", G, "MHz"),
    f("DCGM_FI_DEV_MEM_CLOCK", G, "MHz"),
    aiperf("DCGM_FI_DEV_GPU_TEMP", G, "C", "nvidia_temperature", 1.0),
    f("DCGM_FI_DEV_MEMORY_TEMP", G, "C"),
    // The value of the last XID error; any change in a run invalidates it.
    aiperf("DCGM_FI_DEV_XID_ERRORS", G, "xid", "nvidia_xid_errors", 1.0),
    aiperf(
        "DCGM_FI_DEV_ENC_UTIL",
        G,
        "%",
        "nvidia_encoder_utilization",
        1.0,
    ),
    aiperf(
        "DCGM_FI_DEV_DEC_UTIL",
        G,
        "%",
        "nvidia_decoder_utilization",
        1.0,
    ),
    f("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", C, "count"),
    f("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", C, "count"),
    // Throttle time, commented out of the default CSV; AIPerf scales ns → µs.
    aiperf(
        "DCGM_FI_DEV_POWER_VIOLATION",
        C,
        "ns",
        "nvidia_power_violation",
        1e-3,
    ),
    f("DCGM_FI_DEV_THERMAL_VIOLATION", C, "ns"),
    f("DCGM_FI_DEV_SYNC_BOOST_VIOLATION", C, "ns"),
    f("DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", C, "ns"),
    f("DCGM_FI_DEV_LOW_UTIL_VIOLATION", C, "ns"),
    f("DCGM_FI_DEV_RELIABILITY_VIOLATION", C, "ns"),
    f("DCGM_FI_PROF_GR_ENGINE_ACTIVE", G, "ratio"),
    // Commented out of the default CSV; AIPerf's ratio → %.
    aiperf(
        "DCGM_FI_PROF_SM_ACTIVE",
        G,
        "ratio",
        "nvidia_sm_utilization",
        100.0,
    ),
    f("DCGM_FI_PROF_SM_OCCUPANCY", G, "ratio"),
    f("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", G, "ratio"),
    f("DCGM_FI_PROF_DRAM_ACTIVE", G, "ratio"),
    f("DCGM_FI_PROF_PCIE_TX_BYTES", G, "B/s"),
    f("DCGM_FI_PROF_PCIE_RX_BYTES", G, "B/s"),
];

pub fn field(name: &str) -> Option<&'static DcgmField> {
    FIELDS.iter().find(|f| f.name == name)
}

/// DCGM's `DCGM_INT32_BLANK` (0x7ffffff0); +1, +2, +3 are NOT_FOUND, NOT_SUPPORTED,
/// NOT_PERMISSIONED (`dcgm_structs.h`).
const INT32_BLANK: f64 = 2_147_483_632.0;
/// `DCGM_FP64_BLANK`, 2^47, with the same three after it.
const FP64_BLANK: f64 = 140_737_488_355_328.0;
/// `DCGM_INT64_BLANK` is 0x7ffffffffffffff0 ≈ 9.223e18; no field reaches 9.2e18 for real.
const INT64_BLANK_FLOOR: f64 = 9.2e18;

/// A DCGM "blank" (no value collected) rather than a measurement: anything ≥ 9.2e18 (the
/// int64 blanks, e.g. the exporter README's `9223372036854775794`), and exactly one of the
/// four int32 or fp64 blank constants. DCGM itself treats everything at or above the int32 /
/// fp64 base as blank, but without the field's storage type a real reading (an energy
/// counter in mJ passing 2^47) could be lost, so only the exact constants count.
pub fn is_blank(v: f64) -> bool {
    v >= INT64_BLANK_FLOOR
        || [INT32_BLANK, FP64_BLANK]
            .iter()
            .any(|&base| (0..4).any(|k| v == base + f64::from(k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks() {
        for v in [
            9_223_372_036_854_775_794.0,
            9.2e18,
            f64::INFINITY,
            2_147_483_632.0,
            2_147_483_635.0,
            140_737_488_355_328.0,
            140_737_488_355_331.0,
        ] {
            assert!(is_blank(v), "{v}");
        }
        for v in [
            0.0,
            -1.0,
            f64::NAN,
            9.1e18,
            2_147_483_631.0,
            2_147_483_636.0,
            140_737_488_355_332.0,
            17_560_473.0,
            65.0,
        ] {
            assert!(!is_blank(v), "{v}");
        }
    }

    #[test]
    fn aiperf_mapping_and_scales() {
        let mapped: Vec<&str> = FIELDS.iter().filter_map(|f| f.aiperf_tag).collect();
        assert_eq!(mapped.len(), 11);
        let energy = field("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION").unwrap();
        assert_eq!(energy.kind, MetricType::Counter);
        assert_eq!(energy.unit, "mJ");
        // 2.5e9 mJ = 2.5 MJ.
        assert_eq!(2.5e9 * energy.aiperf_scale, 2.5);
        // 81559 MiB (an 80 GB card's framebuffer) = 85.520809984 GB (81559 × 1.048576 = 85520.809984).
        let fb = field("DCGM_FI_DEV_FB_USED").unwrap();
        assert!((81_559.0 * fb.aiperf_scale - 85.520_809_984).abs() < 1e-9);
        let sm = field("DCGM_FI_PROF_SM_ACTIVE").unwrap();
        assert_eq!(
            (sm.aiperf_tag, 0.42 * sm.aiperf_scale),
            (Some("nvidia_sm_utilization"), 42.0)
        );
        let pv = field("DCGM_FI_DEV_POWER_VIOLATION").unwrap();
        assert_eq!((pv.unit, 5_000.0 * pv.aiperf_scale), ("ns", 5.0));
        assert_eq!(field("DCGM_FI_DEV_SM_CLOCK").unwrap().aiperf_tag, None);
        assert!(field("DCGM_FI_DEV_NOPE").is_none());
    }

    #[test]
    fn names_are_unique() {
        for (i, a) in FIELDS.iter().enumerate() {
            assert!(
                FIELDS[i + 1..].iter().all(|b| b.name != a.name),
                "{}",
                a.name
            );
        }
    }
}
