//! The unit AIPerf 0.13 shows for a server metric (`server_metrics/units.py`): a 0–1 or
//! 0–100 range in the HELP text first, then a unit named in it ("(in MiB)", "in seconds"),
//! then the name's suffix (longest first), then `num_requests_` anywhere in the name.

use std::sync::OnceLock;

use regex::Regex;

/// Name suffix → unit display name. AIPerf tries the longest suffix first.
const SUFFIXES: &[(&str, &str)] = &[
    ("_seconds", "seconds"),
    ("_seconds_total", "seconds"),
    ("_milliseconds", "milliseconds"),
    ("_ms", "milliseconds"),
    ("_ms_total", "milliseconds"),
    ("_nanoseconds", "nanoseconds"),
    ("_ns", "nanoseconds"),
    ("_ns_total", "nanoseconds"),
    ("_bytes", "bytes"),
    ("_kilobytes", "kilobytes"),
    ("_megabytes", "megabytes"),
    ("_gigabytes", "gigabytes"),
    ("_bytes_total", "bytes"),
    ("_total", "count"),
    ("_count", "count"),
    ("_tokens", "tokens"),
    ("_tokens_total", "tokens"),
    ("_requests", "requests"),
    ("_requests_total", "requests"),
    ("request_success", "requests"),
    ("_errors", "errors"),
    ("_errors_total", "errors"),
    ("_error_count", "errors"),
    ("_error_count_total", "errors"),
    ("_reqs", "requests"),
    ("_blocks", "blocks"),
    ("_blocks_total", "blocks"),
    ("_block_count", "blocks"),
    ("_gb_s", "gb/s"),
    ("_ratio", "ratio"),
    ("_percent", "percent"),
    ("_perc", "percent"),
    ("_celsius", "celsius"),
    ("_joules", "joule"),
    ("_watts", "watt"),
];

/// "(in X)" unit tags.
const TAGS: &[(&str, &str)] = &[
    ("MiB", "megabytes"),
    ("GiB", "gigabytes"),
    ("KiB", "kilobytes"),
    ("B", "bytes"),
    ("MB", "megabytes"),
    ("GB", "gigabytes"),
    ("KB", "kilobytes"),
    ("TB", "terabytes"),
    ("C", "celsius"),
    ("°C", "celsius"),
    ("F", "fahrenheit"),
    ("°F", "fahrenheit"),
    ("K", "kelvin"),
    ("Hz", "hertz"),
    ("MHz", "megahertz"),
    ("GHz", "gigahertz"),
    ("W", "watt"),
    ("mW", "milliwatt"),
    ("J", "joule"),
    ("mJ", "millijoule"),
    ("MJ", "megajoule"),
    ("s", "seconds"),
    ("sec", "seconds"),
    ("ms", "milliseconds"),
    ("ns", "nanoseconds"),
    ("us", "microseconds"),
    ("µs", "microseconds"),
    ("GB/s", "gb/s"),
    ("MB/s", "mb/s"),
    ("%", "percent"),
    ("percent", "percent"),
];

struct Patterns {
    ratio: Regex,
    percent: Regex,
    parenthetical: Regex,
    described: Vec<(Regex, &'static str)>,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = |s: &str| Regex::new(s).expect("a fixed pattern");
        let pre = r"(?:\bin\s+|\()";
        let post = r"(?:\b|\))";
        let described = [
            (r"seconds?", "seconds"),
            (r"(?:milliseconds?|ms)", "milliseconds"),
            (r"(?:nanoseconds?|ns)", "nanoseconds"),
            (r"bytes?", "bytes"),
            (r"GB/s", "gb/s"),
            (r"MB/s", "mb/s"),
            (r"tokens?/s(?:ec(?:ond)?)?", "tokens/s"),
            (r"requests?/s(?:ec(?:ond)?)?", "requests/s"),
        ]
        .iter()
        .map(|(body, unit)| (re(&format!("(?i){pre}{body}{post}")), *unit))
        .chain(std::iter::once((re(r"(?i)\bin\s+tokens?\b"), "tokens")))
        .collect();
        Patterns {
            ratio: re(concat!(
                r"(?i)\(0(?:\.0)?\s*(?:[-–—]+|to)\s*1(?:\.0)?\)",
                r"|\b0(?:\.0)?\s*(?:[-–—]+|to)\s*1(?:\.0)?\b",
                r"|\brange\s+0(?:\.0)?\s*(?:[-–—]+|to)\s*1(?:\.0)?\b",
                r"|(?:\b|\()1(?:\.0)?\s*(?:means|is|equals?|==?)\s*100\s*(?:%|percent)",
            )),
            percent: re(concat!(
                r"(?i)\(0(?:\.0)?\s*(?:[-–—]+|to)\s*100(?:\.0)?\)",
                r"|\brange\s+0\s*(?:[-–—]+|to)\s*100\b",
                r"|\b0\s*(?:[-–—]+|to)\s*100\s*%",
            )),
            parenthetical: re(r"\(in\s+([^\s)]+)\)"),
            described,
        }
    })
}

/// The unit's display name AIPerf writes for a metric, or None.
pub fn infer_unit(name: &str, description: &str) -> Option<&'static str> {
    let p = patterns();
    if !description.is_empty() {
        if p.ratio.is_match(description) {
            return Some("ratio");
        }
        if p.percent.is_match(description) {
            return Some("percent");
        }
        if let Some(c) = p.parenthetical.captures(description) {
            // A tag AIPerf does not know falls through to the phrases below.
            let tag = c[1].trim();
            if let Some((_, u)) = TAGS.iter().find(|(t, _)| *t == tag) {
                return Some(u);
            }
        }
        if let Some((_, u)) = p.described.iter().find(|(r, _)| r.is_match(description)) {
            return Some(u);
        }
    }
    let lower = name.to_lowercase();
    let mut suffixes: Vec<&(&str, &str)> = SUFFIXES.iter().collect();
    // Longest first; equal lengths keep the table's order (Python's stable sort).
    suffixes.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    if let Some((_, u)) = suffixes.iter().find(|(s, _)| lower.ends_with(s)) {
        return Some(u);
    }
    lower.contains("num_requests_").then_some("requests")
}
