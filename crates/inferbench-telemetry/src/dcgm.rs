//! The DCGM exporter's fields: type, unit, what inferbench and AIPerf make of each, and the
//! "blank" sentinel values older exporters emit (docs/telemetry.md, "GPU telemetry").
//! (Skeleton: the catalogue is being written.)

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

pub const FIELDS: &[DcgmField] = &[];

pub fn field(name: &str) -> Option<&'static DcgmField> {
    FIELDS.iter().find(|f| f.name == name)
}

/// A DCGM "blank" (no value collected) rather than a measurement.
pub fn is_blank(v: f64) -> bool {
    let _ = v;
    false
}
