//! AIPerf's GPU telemetry files (being written).

use crate::scrape::ScrapeLog;

use super::{GpuTelemetryExport, Meta};

pub(crate) fn export(log: &ScrapeLog, meta: &Meta<'_>) -> Option<GpuTelemetryExport> {
    let _ = (log, meta);
    None
}
