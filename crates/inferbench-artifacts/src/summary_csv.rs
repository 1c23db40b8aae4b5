//! `profile_export_aiperf.csv`: AIPerf's two-section summary CSV, byte for byte.

use std::path::{Path, PathBuf};

use inferbench_core::{MetricResult, MetricValue, Summary};

use crate::Result;
use crate::atomic::write_atomic;

const SECTION1_HEADER: &str = "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std";
const SECTION1_STATS: [&str; 14] = [
    "avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std",
];
/// Written even without GPU telemetry, as AIPerf does (copied from a real 0.13.0 file).
pub const GPU_HEADER: &str = "Endpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std";

/// Python's `f"{x:.2f}"`. Both round the exact binary value correctly (so `0.125` gives
/// `0.12` and `2.675` gives `2.67` in both); non-finite values are empty cells, as in AIPerf.
pub fn format_2f(x: Option<f64>) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x:.2}"),
        _ => String::new(),
    }
}

/// AIPerf's CSV metric name: header + ` (unit)` unless the unit is `count` or `requests`.
pub fn csv_name(m: &MetricResult) -> String {
    if m.unit.is_empty() || m.unit == "count" || m.unit == "requests" {
        m.header.clone()
    } else {
        format!("{} ({})", m.header, m.unit)
    }
}

/// Python `csv` QUOTE_MINIMAL: quote a field holding a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn has_percentile(m: &MetricResult) -> bool {
    match &m.value {
        MetricValue::Distribution { stats } => [
            stats.p1, stats.p5, stats.p10, stats.p25, stats.p50, stats.p75, stats.p90, stats.p95,
            stats.p99,
        ]
        .iter()
        .any(Option::is_some),
        MetricValue::Scalar { .. } => false,
    }
}

/// The CSV text: section 1 (metrics with any percentile), a blank line, section 2
/// (`Metric,Value`, the average), both sorted by metric tag; then two blank lines and the GPU
/// table header. CRLF line ends.
pub fn render_summary_csv(summary: &Summary) -> String {
    let mut sorted: Vec<&MetricResult> = summary.metrics.iter().collect();
    sorted.sort_by(|a, b| a.tag.as_bytes().cmp(b.tag.as_bytes()));
    let (dist, scalars): (Vec<&MetricResult>, Vec<&MetricResult>) =
        sorted.into_iter().partition(|m| has_percentile(m));

    let mut out = String::with_capacity(8 * 1024);
    let mut row = |cells: &[String]| {
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    };
    row(&[SECTION1_HEADER.to_string()]);
    for m in &dist {
        let stats = m.stats().expect("only distributions have percentiles");
        let mut cells = vec![csv_field(&csv_name(m))];
        cells.extend(SECTION1_STATS.iter().map(|s| format_2f(stats.get(s))));
        row(&cells);
    }
    row(&[]);
    row(&["Metric,Value".to_string()]);
    for m in &scalars {
        row(&[csv_field(&csv_name(m)), format_2f(m.avg())]);
    }
    row(&[]);
    row(&[]);
    row(&[GPU_HEADER.to_string()]);
    out
}

/// Write `dir/name` (`profile_export_aiperf.csv`).
pub fn write_summary_csv(dir: &Path, name: &str, summary: &Summary) -> Result<PathBuf> {
    write_atomic(dir, name, render_summary_csv(summary).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_decimals_round_like_python() {
        // Values computed with Python 3: f"{x:.2f}".
        let cases = [
            (0.125, "0.12"),
            (0.375, "0.38"),
            (2.675, "2.67"),
            (1.005, "1.00"),
            (15.625, "15.62"),
            (-0.001, "-0.00"),
            (1251.6155, "1251.62"),
            (1e20, "100000000000000000000.00"),
        ];
        for (x, want) in cases {
            assert_eq!(format_2f(Some(x)), want, "{x}");
        }
        assert_eq!(format_2f(Some(f64::INFINITY)), "");
        assert_eq!(format_2f(None), "");
    }

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(csv_field("Request Latency (ms)"), "Request Latency (ms)");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
