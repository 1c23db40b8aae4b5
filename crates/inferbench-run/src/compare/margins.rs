//! Margins: what difference between candidate and baseline is practically irrelevant, per
//! metric and statistic. Parsed from `--margin METRIC[.STAT]=±VALUE` and from a margins file
//! (`KEY=VALUE` lines, `#` comments); without any, [`default_margins`] apply (starting
//! points, not measured values). Syntax and meaning: `docs/compare.md`.

use inferbench_core::Summary;

/// The error-rate metric: compared as a fraction of attempted requests.
pub const ERROR_RATE: &str = "request_error_rate";
/// The goodput attainment (`--goodput`): good / attempted requests.
pub const GOOD_FRACTION: &str = "good_request_fraction";

/// The statistic of a metric that is compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stat {
    /// The mean of a per-request metric (`.avg`).
    Mean,
    /// A percentile of a per-request metric, in percent (`.p99` → 99).
    Percentile(f64),
    /// A run-level metric's one value (throughput, counts): no statistic named.
    Value,
    /// A fraction of attempted requests (error rate, goodput attainment).
    Fraction,
}

impl Stat {
    /// The name the summary uses (`avg`, `p99`), or None for a value or a fraction.
    pub fn summary_name(self) -> Option<String> {
        match self {
            Stat::Mean => Some("avg".into()),
            Stat::Percentile(p) => Some(format!("p{}", fmt_num(p))),
            Stat::Value | Stat::Fraction => None,
        }
    }
}

/// A margin as written.
#[derive(Clone, Debug, PartialEq)]
pub enum MarginValue {
    /// `±3%`: relative, compared on log values (a ratio candidate/baseline within 1 ± δ). The
    /// field is δ as a fraction (0.03).
    Relative(f64),
    /// `±1.5pp`: percentage points, for fractions. The field is in fraction units (0.015).
    Points(f64),
    /// `±5ms`: absolute, in the metric's unit (which must be `unit`).
    Absolute { value: f64, unit: String },
}

/// One margin, for one metric and statistic.
#[derive(Clone, Debug, PartialEq)]
pub struct MarginEntry {
    /// `metric` or `metric.stat` as written.
    pub key: String,
    pub metric: String,
    /// The statistic as written (`p99`, `avg`), None when none was named.
    pub stat: Option<String>,
    pub value: MarginValue,
    /// The value as written (`±3%`).
    pub text: String,
    /// A built-in starting point rather than a declared margin.
    pub default: bool,
}

/// Parses `METRIC[.STAT]=±VALUE` (`--margin`); `from` names the flag or `FILE:LINE` for the
/// message. Accepted values: `±3%`, `+-3%`, `3%` (relative), `±1.5pp` (points), `±5ms`
/// (absolute, in the metric's unit).
pub fn parse_margin(arg: &str, from: &str) -> Result<MarginEntry, String> {
    let Some((key, value)) = arg.split_once('=') else {
        return Err(format!(
            "{from} '{arg}': expected METRIC[.STAT]=±VALUE, e.g. time_to_first_token.p99=±5%"
        ));
    };
    let key = key.trim();
    let text = value.trim();
    if key.is_empty() {
        return Err(format!("{from} '{arg}': no metric before '='"));
    }
    let (metric, stat) = match key.split_once('.') {
        Some((m, s)) => (m.to_string(), Some(s.to_string())),
        None => (key.to_string(), None),
    };
    if let Some(s) = &stat {
        parse_stat(s).map_err(|e| format!("{from} '{arg}': {e}"))?;
    }
    let value = parse_value(text).map_err(|e| format!("{from} '{arg}': {e}"))?;
    Ok(MarginEntry {
        key: key.to_string(),
        metric,
        stat,
        value,
        text: text.to_string(),
        default: false,
    })
}

/// Parses a margins file: one `METRIC[.STAT]=±VALUE` per line; blank lines and `#` comments
/// are skipped. An error names the file and line.
pub fn parse_margins_file(path: &std::path::Path) -> Result<Vec<MarginEntry>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let from = format!("{}:{}:", path.display(), i + 1);
        out.push(parse_margin(line, &from)?);
    }
    if out.is_empty() {
        return Err(format!("{}: no margins in the file", path.display()));
    }
    Ok(out)
}

/// The built-in starting points (design note §6, *not measured values*): throughput ±3 %,
/// latency ±5 % (mean and p99 of TTFT, ITL and request latency), error rate ±1.5 pp, and
/// goodput attainment ±1.5 pp when `goodput` is set.
pub fn default_margins(goodput: bool) -> Vec<MarginEntry> {
    let mut keys: Vec<(&str, &str)> = vec![
        ("time_to_first_token.avg", "±5%"),
        ("time_to_first_token.p99", "±5%"),
        ("inter_token_latency.avg", "±5%"),
        ("inter_token_latency.p99", "±5%"),
        ("request_latency.avg", "±5%"),
        ("request_latency.p99", "±5%"),
        ("output_token_throughput", "±3%"),
        ("request_throughput", "±3%"),
        (ERROR_RATE, "±1.5pp"),
    ];
    if goodput {
        keys.push((GOOD_FRACTION, "±1.5pp"));
    }
    keys.into_iter()
        .map(|(k, v)| {
            let mut e = parse_margin(&format!("{k}={v}"), "default").expect("valid default");
            e.default = true;
            e
        })
        .collect()
}

/// Which way is better for a metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    LowerIsBetter,
    HigherIsBetter,
    /// Neither (token counts, lengths): a change beyond the margin either way is `worse`.
    Neutral,
}

/// The direction of `tag` with display `unit`: durations and the error rate lower, rates
/// (`…/sec`) and goodput attainment higher, anything else neutral.
pub fn direction(tag: &str, unit: &str) -> Direction {
    if tag == ERROR_RATE {
        Direction::LowerIsBetter
    } else if tag == GOOD_FRACTION || unit.contains("/sec") {
        Direction::HigherIsBetter
    } else if matches!(unit, "ms" | "sec" | "s" | "ns") {
        Direction::LowerIsBetter
    } else {
        Direction::Neutral
    }
}

/// A margin entry checked against a scored summary: the metric exists, the statistic fits
/// it, the unit matches.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub entry: MarginEntry,
    pub stat: Stat,
    pub unit: String,
    pub direction: Direction,
}

/// Checks every entry against `summary` (the first baseline run, scored under `set`).
/// `goodput` says whether `--goodput` was given.
pub fn resolve(
    entries: &[MarginEntry],
    summary: &Summary,
    set: &str,
    goodput: bool,
) -> Result<Vec<Resolved>, String> {
    let mut out: Vec<Resolved> = Vec::new();
    for e in entries {
        if out.iter().any(|r| r.entry.key == e.key) {
            return Err(format!("margin for '{}' given twice", e.key));
        }
        let fraction = e.metric == ERROR_RATE || e.metric == GOOD_FRACTION;
        if fraction {
            if e.stat.is_some() {
                return Err(format!(
                    "margin '{}': {} is a fraction of attempted requests and has no statistic; write {}=±1.5pp",
                    e.key, e.metric, e.metric
                ));
            }
            if e.metric == GOOD_FRACTION && !goodput {
                return Err(format!(
                    "margin '{}': {GOOD_FRACTION} needs --goodput (the SLOs that make a request good)",
                    e.key
                ));
            }
            if !matches!(e.value, MarginValue::Points(_)) {
                return Err(format!(
                    "margin '{}={}': {} is a fraction: give its margin in percentage points, e.g. ±1.5pp",
                    e.key, e.text, e.metric
                ));
            }
            out.push(Resolved {
                entry: e.clone(),
                stat: Stat::Fraction,
                unit: "fraction".into(),
                direction: direction(&e.metric, ""),
            });
            continue;
        }
        let Some(m) = summary.get(&e.metric) else {
            let mut known: Vec<&str> = summary.metrics.iter().map(|m| m.tag.as_str()).collect();
            for extra in [ERROR_RATE, GOOD_FRACTION] {
                if !known.contains(&extra) {
                    known.push(extra);
                }
            }
            return Err(format!(
                "margin '{}': unknown metric '{}' under {set} (known: {})",
                e.key,
                e.metric,
                known.join(", ")
            ));
        };
        let per_request = m.stats().is_some();
        let stat = match (&e.stat, per_request) {
            (Some(s), true) => {
                let s = parse_stat(s).map_err(|x| format!("margin '{}': {x}", e.key))?;
                if s == Stat::Value {
                    return Err(format!(
                        "margin '{}': {} is per request: name avg or a percentile, e.g. {}.p99",
                        e.key, e.metric, e.metric
                    ));
                }
                s
            }
            (None, true) => {
                return Err(format!(
                    "margin '{}': {} is per request: name a statistic, e.g. {}.p99 or {}.avg",
                    e.key, e.metric, e.metric, e.metric
                ));
            }
            (Some(s), false) if s != "value" => {
                return Err(format!(
                    "margin '{}': {} is one value per run and has no statistic '{s}'; write {}=…",
                    e.key, e.metric, e.metric
                ));
            }
            _ => Stat::Value,
        };
        match &e.value {
            MarginValue::Points(_) => {
                return Err(format!(
                    "margin '{}={}': pp is for fractions ({ERROR_RATE}, {GOOD_FRACTION}); use % or {}",
                    e.key, e.text, m.unit
                ));
            }
            MarginValue::Absolute { unit, .. } if *unit != m.unit => {
                return Err(format!(
                    "margin '{}={}': {} is in {}, not {unit}",
                    e.key, e.text, e.metric, m.unit
                ));
            }
            _ => {}
        }
        out.push(Resolved {
            entry: e.clone(),
            stat,
            unit: m.unit.clone(),
            direction: direction(&m.tag, &m.unit),
        });
    }
    Ok(out)
}

/// `avg`/`mean`, `pNN` (0 < NN < 100, decimals allowed), or `value`.
fn parse_stat(s: &str) -> Result<Stat, String> {
    match s {
        "avg" | "mean" => return Ok(Stat::Mean),
        "value" => return Ok(Stat::Value),
        _ => {}
    }
    if let Some(p) = s.strip_prefix('p').and_then(|n| n.parse::<f64>().ok())
        && p > 0.0
        && p < 100.0
    {
        return Ok(Stat::Percentile(p));
    }
    Err(format!(
        "unknown statistic '{s}' (avg, a percentile such as p50, p95, p99, p99.9, or value for a run-level metric)"
    ))
}

fn parse_value(text: &str) -> Result<MarginValue, String> {
    let body = text
        .strip_prefix('±')
        .or_else(|| text.strip_prefix("+/-"))
        .or_else(|| text.strip_prefix("+-"))
        .unwrap_or(text)
        .trim();
    let split = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (num, unit) = body.split_at(split);
    let unit = unit.trim();
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a margin (e.g. ±3%, ±1.5pp, ±5ms)"))?;
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!("margin '{text}' must be positive"));
    }
    match unit {
        "" => Err(format!(
            "margin '{text}' has no unit: write % (relative), pp (for a fraction) or the metric's unit, e.g. ±{num}% or ±{num}ms"
        )),
        "%" if v < 100.0 => Ok(MarginValue::Relative(v / 100.0)),
        "%" => Err(format!("a relative margin '{text}' must be below 100%")),
        "pp" if v < 100.0 => Ok(MarginValue::Points(v / 100.0)),
        "pp" => Err(format!("margin '{text}' must be below 100pp")),
        u => Ok(MarginValue::Absolute {
            value: v,
            unit: u.to_string(),
        }),
    }
}

/// A number without trailing zeros (`99`, `99.9`).
pub(crate) fn fmt_num(v: f64) -> String {
    let s = format!("{v}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
#[path = "margins_tests.rs"]
mod tests;
