//! GenAI-Perf's summary files, `profile_export_genai_perf.json` and `.csv`, written from a
//! [`Summary`] computed under a `genai-perf-*` definition set, byte for byte as the named
//! GenAI-Perf release writes them.
//!
//! * JSON: Python's `json.dumps(indent=2)` (ASCII escapes, `repr` floats, no final newline);
//!   metric keys in GenAI-Perf's attribute order; `{unit, avg}` for system metrics, else
//!   `{unit, avg, [p1, p5, p10,] p25 … p99, min, max, std}` (p1–p10 from 0.0.15); the 0.0.8 unit
//!   bug (`requests/sec` on every non-time metric); then `input_config` as given.
//! * CSV: Python's `csv.writer` (CRLF, minimal quoting); values `{:,.2f}`, `N/A` when missing;
//!   the header, rows and row names of the release.
//!
//! `version` is the release (`0.0.16`) or a detected range (`0.0.15-0.0.16`: its first release
//! decides); an unparsable version is taken as the newest (0.0.16).

use std::path::{Path, PathBuf};

use inferbench_core::{MetricResult, MetricValue, Stats, Summary};
use serde_json::Value;

use crate::ArtifactError;
use crate::atomic::AtomicFile;

/// The newest release these shapes follow.
pub const NEWEST: u32 = 16;

/// GenAI-Perf's JSON key order (attribute order of its metrics classes).
const JSON_ORDER: &[&str] = &[
    "request_throughput",
    "request_latency",
    "request_goodput",
    "request_count",
    "time_to_first_token",
    "time_to_second_token",
    "inter_token_latency",
    "output_token_throughput",
    "output_token_throughput_per_user",
    "output_token_throughput_per_request",
    "output_sequence_length",
    "input_sequence_length",
    "num_output_token",
    "num_input_token",
];

const TIME_METRICS: &[&str] = &[
    "request_latency",
    "time_to_first_token",
    "time_to_second_token",
    "inter_token_latency",
];

const STREAMING_ONLY: &[&str] = &[
    "time_to_first_token",
    "time_to_second_token",
    "inter_token_latency",
    "output_token_throughput_per_user",
];

/// The release number `N` of `0.0.N` (the first of a range); `NEWEST` when unparsable.
pub fn release(version: &str) -> u32 {
    version
        .split('-')
        .next()
        .and_then(|v| v.strip_prefix("0.0."))
        .and_then(|n| n.parse().ok())
        .unwrap_or(NEWEST)
}

/// Python's `repr(float)` (what `json.dumps` writes): the shortest round-trip digits, fixed
/// notation for decimal exponents -4 to 15, else `1.5e+16` / `1e-05`.
pub fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` gives the same shortest round-trip digits as Python's repr.
    let s = format!("{:e}", x.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let sign = if x < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            let (int, frac) = if digits.len() > int_len {
                (digits[..int_len].to_string(), digits[int_len..].to_string())
            } else {
                (
                    format!("{digits}{}", "0".repeat(int_len - digits.len())),
                    "0".to_string(),
                )
            };
            format!("{sign}{int}.{frac}")
        } else {
            format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
        }
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    }
}

fn python_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                // ensure_ascii: \uXXXX, as a surrogate pair above the BMP.
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `json.dumps(value, indent=2)` at nesting `level`.
fn python_json(v: &Value, level: usize, out: &mut String) {
    let pad = |n: usize| "  ".repeat(n);
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if n.is_f64() {
                out.push_str(&python_float(n.as_f64().unwrap_or(f64::NAN)));
            } else {
                out.push_str(&n.to_string());
            }
        }
        Value::String(s) => python_string(s, out),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('\n');
                out.push_str(&pad(level + 1));
                python_json(item, level + 1, out);
            }
            out.push('\n');
            out.push_str(&pad(level));
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('\n');
                out.push_str(&pad(level + 1));
                python_string(k, out);
                out.push_str(": ");
                python_json(item, level + 1, out);
            }
            out.push('\n');
            out.push_str(&pad(level));
            out.push('}');
        }
    }
}

fn stat_names(release: u32) -> &'static [&'static str] {
    if release >= 15 {
        &[
            "avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std",
        ]
    } else {
        &[
            "avg", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std",
        ]
    }
}

fn json_unit(m: &MetricResult, release: u32) -> &str {
    // 0.0.8's `_add_units` labels every non-time metric `requests/sec`.
    if release == 8 && !TIME_METRICS.contains(&m.tag.as_str()) {
        "requests/sec"
    } else {
        &m.unit
    }
}

fn stat_json(x: Option<f64>) -> String {
    x.map_or_else(|| "null".to_string(), python_float)
}

/// `profile_export_genai_perf.json` as release `version` writes it. `input_config` (e.g. the
/// imported run's original) is written last when given.
pub fn genai_perf_json(summary: &Summary, version: &str, input_config: Option<&Value>) -> String {
    let rel = release(version);
    let mut entries: Vec<String> = Vec::new();
    for key in JSON_ORDER {
        let Some(m) = summary.get(key) else { continue };
        let mut e = String::new();
        python_string(key, &mut e);
        e.push_str(": {\n    \"unit\": ");
        python_string(json_unit(m, rel), &mut e);
        match &m.value {
            MetricValue::Scalar { value } => {
                e.push_str(&format!(",\n    \"avg\": {}", python_float(*value)));
            }
            MetricValue::Distribution { stats } => {
                for name in stat_names(rel) {
                    e.push_str(&format!(
                        ",\n    \"{name}\": {}",
                        stat_json(stats.get(name))
                    ));
                }
            }
        }
        e.push_str("\n  }");
        entries.push(e);
    }
    if let Some(cfg) = input_config {
        let mut e = String::from("\"input_config\": ");
        python_json(cfg, 1, &mut e);
        entries.push(e);
    }
    if entries.is_empty() {
        return "{}".into();
    }
    format!("{{\n  {}\n}}", entries.join(",\n  "))
}

/// Python's `f"{x:,.2f}"`: two decimals, correctly rounded, commas between thousands.
pub fn format_thousands_2f(x: f64) -> String {
    let s = format!("{:.2}", x.abs());
    let (int, frac) = s.split_once('.').unwrap_or((s.as_str(), "00"));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if x.is_sign_negative() && x != 0.0 {
        "-"
    } else {
        ""
    };
    format!("{sign}{grouped}.{frac}")
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_line(fields: &[String]) -> String {
    let mut line = fields
        .iter()
        .map(|f| csv_field(f))
        .collect::<Vec<_>>()
        .join(",");
    line.push_str("\r\n");
    line
}

/// Request-metric rows of the CSV, by release.
fn csv_rows(release: u32) -> &'static [&'static str] {
    if release >= 13 {
        &[
            "time_to_first_token",
            "time_to_second_token",
            "request_latency",
            "inter_token_latency",
            "output_token_throughput_per_user",
            "output_sequence_length",
            "input_sequence_length",
        ]
    } else if release >= 10 {
        &[
            "time_to_first_token",
            "time_to_second_token",
            "request_latency",
            "inter_token_latency",
            "output_sequence_length",
            "input_sequence_length",
        ]
    } else {
        &[
            "time_to_first_token",
            "inter_token_latency",
            "request_latency",
            "output_sequence_length",
            "input_sequence_length",
            "num_output_token",
            "num_input_token",
        ]
    }
}

fn csv_stat(x: Option<f64>, release: u32, thousands: bool) -> String {
    match x {
        // 0.0.9 prints N/A for a value of 0.
        Some(v) if release == 9 && v == 0.0 => "N/A".into(),
        Some(v) if v.is_finite() => {
            if thousands {
                format_thousands_2f(v)
            } else {
                format!("{v:.2}")
            }
        }
        _ => "N/A".into(),
    }
}

/// `profile_export_genai_perf.csv` as release `version` writes it. With `streaming` off the
/// streaming-only rows (TTFT, TTST, ITL, TPS/user) are left out, as GenAI-Perf does.
pub fn genai_perf_csv(summary: &Summary, version: &str, streaming: bool) -> String {
    let rel = release(version);
    let stats: &[&str] = if rel >= 15 {
        &[
            "avg", "min", "max", "p99", "p95", "p90", "p75", "p50", "p25", "p10", "p5", "p1",
        ]
    } else {
        &[
            "avg", "min", "max", "p99", "p95", "p90", "p75", "p50", "p25",
        ]
    };
    let mut out = String::new();
    let mut header = vec!["Metric".to_string()];
    header.extend(stats.iter().map(|s| s.to_string()));
    out.push_str(&csv_line(&header));
    for key in csv_rows(rel) {
        if !streaming && STREAMING_ONLY.contains(key) {
            continue;
        }
        let Some(m) = summary.get(key) else { continue };
        let st: Stats = m.stats().cloned().unwrap_or_default();
        // Up to 0.0.9 the length rows carry no unit.
        let name = if rel < 10 && m.unit == "tokens" {
            m.header.clone()
        } else {
            format!("{} ({})", m.header, m.unit)
        };
        let mut row = vec![name];
        row.extend(stats.iter().map(|s| csv_stat(st.get(s), rel, true)));
        out.push_str(&csv_line(&row));
    }
    out.push_str("\r\n");
    out.push_str(&csv_line(&["Metric".into(), "Value".into()]));
    let thousands = rel >= 10;
    let otp_name = if rel >= 13 {
        "Output Token Throughput (tokens/sec)"
    } else {
        "Output Token Throughput (per sec)"
    };
    let mut system = vec![
        ("output_token_throughput", otp_name),
        ("request_throughput", "Request Throughput (per sec)"),
        ("request_goodput", "Request Goodput (per sec)"),
    ];
    if rel >= 10 {
        system.push(("request_count", "Request Count (count)"));
    }
    for (key, name) in system {
        let Some(m) = summary.get(key) else { continue };
        out.push_str(&csv_line(&[
            name.to_string(),
            csv_stat(m.avg(), rel, thousands),
        ]));
    }
    out
}

/// Writes `profile_export_genai_perf.json` and `.csv` into `dir` (atomically); returns their
/// paths.
pub fn write_genai_perf(
    dir: &Path,
    summary: &Summary,
    version: &str,
    input_config: Option<&Value>,
    streaming: bool,
) -> Result<[PathBuf; 2], ArtifactError> {
    let mut json = AtomicFile::create(dir, "profile_export_genai_perf.json")?;
    json.write_all(genai_perf_json(summary, version, input_config).as_bytes())?;
    let mut csv = AtomicFile::create(dir, "profile_export_genai_perf.csv")?;
    csv.write_all(genai_perf_csv(summary, version, streaming).as_bytes())?;
    Ok([json.commit()?, csv.commit()?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_float_repr() {
        assert_eq!(python_float(60.0), "60.0");
        assert_eq!(python_float(96.158452), "96.158452");
        assert_eq!(python_float(0.0), "0.0");
        assert_eq!(python_float(1e16), "1e+16");
        assert_eq!(python_float(1.5e16), "1.5e+16");
        assert_eq!(python_float(123456789012345.0), "123456789012345.0");
        assert_eq!(python_float(1e-5), "1e-05");
        assert_eq!(python_float(0.0001), "0.0001");
        assert_eq!(python_float(-2.5e-7), "-2.5e-07");
        assert_eq!(python_float(0.1 + 0.2), "0.30000000000000004");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(format_thousands_2f(1050.1), "1,050.10");
        assert_eq!(format_thousands_2f(999.999), "1,000.00");
        assert_eq!(format_thousands_2f(1234567.0), "1,234,567.00");
        assert_eq!(format_thousands_2f(5.0), "5.00");
        assert_eq!(format_thousands_2f(-1234.5), "-1,234.50");
        assert_eq!(csv_field("1,050.10"), "\"1,050.10\"");
    }

    #[test]
    fn python_json_indents_and_escapes() {
        let v = json!({"a": [1, 2.5], "b": {}, "c": [], "d": "é\n", "e": null});
        let mut s = String::new();
        python_json(&v, 0, &mut s);
        assert_eq!(
            s,
            "{\n  \"a\": [\n    1,\n    2.5\n  ],\n  \"b\": {},\n  \"c\": [],\n  \"d\": \"\\u00e9\\n\",\n  \"e\": null\n}"
        );
    }

    #[test]
    fn releases() {
        assert_eq!(release("0.0.15-0.0.16"), 15);
        assert_eq!(release("0.0.8"), 8);
        assert_eq!(release("unknown"), NEWEST);
    }
}
