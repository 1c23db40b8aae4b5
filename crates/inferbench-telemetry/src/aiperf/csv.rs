//! `server_metrics_export.csv` as AIPerf 0.13's `csv_exporter.py` lays it out: a `#` header
//! block, then one section per type (gauge, counter, histogram, unknown; `_info` gauges in
//! a key/value section last), sections separated by an empty row; label columns ordered by
//! AIPerf's label-family rule; rows sorted by (label pattern, metric, endpoint, labels);
//! floats `%.4f`, integers plain; Python `csv` quoting and CRLF row ends. The header's
//! `aiperf_version` line names inferbench's version instead (a comment no reader parses).

use std::collections::{BTreeMap, BTreeSet};

use super::json::labels_repr;
use super::series::Kind;
use super::stats::{EndpointOut, Results, Stats};
use super::units::infer_unit;

const GAUGE_KEYS: &[&str] = &[
    "avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99",
];
const COUNTER_KEYS: &[&str] = &[
    "total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std",
];
const HISTOGRAM_KEYS: &[&str] = &[
    "count",
    "count_rate",
    "sum",
    "sum_rate",
    "avg",
    "p1_estimate",
    "p5_estimate",
    "p10_estimate",
    "p25_estimate",
    "p50_estimate",
    "p75_estimate",
    "p90_estimate",
    "p95_estimate",
    "p99_estimate",
];

struct Row<'a> {
    kind: Kind,
    endpoint: String,
    name: &'a str,
    description: &'a str,
    unit: Option<&'static str>,
    labels: &'a [(String, String)],
    stats: &'a Stats,
}

impl Row<'_> {
    fn is_info(&self) -> bool {
        self.name.ends_with("_info")
    }
}

/// AIPerf's endpoint display: the URL without scheme and without a trailing `/metrics`.
pub(crate) fn endpoint_display(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (netloc, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let path = path.strip_suffix("/metrics").unwrap_or(path);
    format!("{netloc}{path}")
}

pub(crate) fn export(r: &Results, benchmark_id: &str) -> String {
    let mut out = String::new();
    out.push_str("# AIPerf Server Metrics Export (CSV)\n");
    out.push_str(&format!(
        "# inferbench_version: {}\n",
        env!("CARGO_PKG_VERSION")
    ));
    out.push_str("# schema_version: 1.0\n");
    out.push_str(&format!("# benchmark_id: {benchmark_id}\n"));
    out.push_str("# Note: Same benchmark_id and version appear in JSON and Parquet exports\n");
    out.push_str("#\n");
    let mut by_kind: Vec<(Kind, Vec<Row>)> = Vec::new();
    for row in rows(&r.profiling) {
        let k = row.kind;
        match by_kind.iter_mut().find(|(x, _)| *x == k) {
            Some((_, v)) => v.push(row),
            None => by_kind.push((k, vec![row])),
        }
    }
    let mut info = Vec::new();
    if let Some((_, gauges)) = by_kind.iter_mut().find(|(k, _)| *k == Kind::Gauge) {
        let (i, g): (Vec<Row>, Vec<Row>) =
            std::mem::take(gauges).into_iter().partition(Row::is_info);
        info = i;
        *gauges = g;
    }
    let mut first = true;
    for kind in [Kind::Gauge, Kind::Counter, Kind::Histogram, Kind::Unknown] {
        let Some((_, rows)) = by_kind.iter().find(|(k, _)| *k == kind) else {
            continue;
        };
        if rows.is_empty() {
            continue;
        }
        if !first {
            out.push_str("\r\n");
        }
        section(&mut out, kind, rows);
        first = false;
    }
    if !info.is_empty() {
        if !first {
            out.push_str("\r\n");
        }
        info_section(&mut out, &mut info);
    }
    out
}

fn rows(endpoints: &[EndpointOut]) -> Vec<Row<'_>> {
    let mut out = Vec::new();
    for ep in endpoints {
        let endpoint = endpoint_display(&ep.url);
        for m in &ep.metrics {
            let unit = infer_unit(&m.name, &m.description);
            for s in &m.series {
                out.push(Row {
                    kind: m.kind,
                    endpoint: endpoint.clone(),
                    name: &m.name,
                    description: &m.description,
                    unit,
                    labels: &s.labels,
                    stats: &s.stats,
                });
            }
        }
    }
    out
}

fn section(out: &mut String, kind: Kind, rows: &[Row]) {
    let keys = match kind {
        Kind::Gauge | Kind::Unknown => GAUGE_KEYS,
        Kind::Counter => COUNTER_KEYS,
        Kind::Histogram => HISTOGRAM_KEYS,
    };
    let order = label_order(rows);
    let mut header: Vec<String> = ["Endpoint", "Type", "Metric", "Unit"]
        .map(String::from)
        .to_vec();
    header.extend(keys.iter().map(|k| k.to_string()));
    header.extend(order.iter().cloned());
    header.push("Description".into());
    if kind == Kind::Histogram {
        header.push("buckets".into());
    }
    write_row(out, &header);
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by_cached_key(|r| {
        let pattern: String = order
            .iter()
            .map(|c| {
                if r.labels.iter().any(|(k, _)| k == c) {
                    '1'
                } else {
                    '0'
                }
            })
            .collect();
        (
            pattern,
            r.name.to_string(),
            r.endpoint.clone(),
            labels_repr(r.labels),
        )
    });
    for r in sorted {
        let mut row = vec![
            r.endpoint.clone(),
            kind.as_str().to_string(),
            r.name.to_string(),
            r.unit.unwrap_or("").to_string(),
        ];
        row.extend(keys.iter().map(|k| stat(r.stats, k)));
        for c in &order {
            let v = if r.is_info() {
                ""
            } else {
                r.labels
                    .iter()
                    .find(|(k, _)| k == c)
                    .map_or("", |(_, v)| v.as_str())
            };
            row.push(v.to_string());
        }
        row.push(r.description.to_string());
        if kind == Kind::Histogram {
            let b = match r.stats {
                Stats::Histogram {
                    buckets: Some(b), ..
                } => b
                    .iter()
                    .map(|(l, c)| format!("{l}={c}"))
                    .collect::<Vec<_>>()
                    .join(";"),
                _ => String::new(),
            };
            row.push(b);
        }
        write_row(out, &row);
    }
}

fn info_section(out: &mut String, rows: &mut [Row]) {
    write_row(
        out,
        &["Endpoint", "Metric", "Key", "Value", "Description"].map(String::from),
    );
    rows.sort_by(|a, b| (a.name, &a.endpoint).cmp(&(b.name, &b.endpoint)));
    for r in rows.iter() {
        let mut labels: Vec<&(String, String)> = r.labels.iter().collect();
        labels.sort();
        for (k, v) in labels {
            write_row(
                out,
                &[
                    r.endpoint.clone(),
                    r.name.to_string(),
                    k.clone(),
                    v.clone(),
                    r.description.to_string(),
                ],
            );
        }
    }
}

fn float(x: f64) -> String {
    format!("{x:.4}")
}

/// One stat cell: empty when AIPerf has no value for it.
fn stat(s: &Stats, key: &str) -> String {
    match s {
        Stats::Counter { total, rate, .. } => match key {
            "total" => float(*total),
            "rate" => float(*rate),
            _ => String::new(),
        },
        Stats::Gauge(v) => GAUGE_KEYS
            .iter()
            .position(|k| *k == key)
            .map_or(String::new(), |i| float(v[i])),
        Stats::Histogram { count, rest, .. } => {
            if key == "count" {
                return count.to_string();
            }
            let Some(r) = rest else {
                return String::new();
            };
            match key {
                "count_rate" => r.count_rate.map_or(String::new(), float),
                "sum" => float(r.sum),
                "sum_rate" => r.sum_rate.map_or(String::new(), float),
                "avg" => float(r.avg),
                _ => {
                    let p: Option<usize> = key
                        .strip_prefix('p')
                        .and_then(|k| k.strip_suffix("_estimate"))
                        .and_then(|k| k.parse().ok());
                    match (p, r.estimates) {
                        (Some(p), Some(e)) => super::numpy::PERCENTILES
                            .iter()
                            .position(|q| *q as usize == p)
                            .map_or(String::new(), |i| float(e[i])),
                        _ => String::new(),
                    }
                }
            }
        }
    }
}

/// AIPerf's label columns: labels that occur together are joined into families (union-find
/// over each row's sorted labels); families in order of their smallest label; inside each,
/// labels found in one row set only first, then those shared by several, each sorted.
fn label_order(rows: &[Row]) -> Vec<String> {
    let sets: Vec<BTreeSet<&str>> = rows
        .iter()
        .filter(|r| !r.is_info() && !r.labels.is_empty())
        .map(|r| r.labels.iter().map(|(k, _)| k.as_str()).collect())
        .collect();
    order_of(&sets)
}

pub(crate) fn order_of(sets: &[BTreeSet<&str>]) -> Vec<String> {
    let all: BTreeSet<&str> = sets.iter().flatten().copied().collect();
    if all.is_empty() {
        return Vec::new();
    }
    let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
    fn find<'a>(parent: &mut BTreeMap<&'a str, &'a str>, x: &'a str) -> &'a str {
        let p = *parent.entry(x).or_insert(x);
        if p == x { x } else { find(parent, p) }
    }
    for s in sets {
        let labels: Vec<&str> = s.iter().copied().collect();
        for w in labels.windows(2) {
            let rb = find(&mut parent, w[1]);
            let ra = find(&mut parent, w[0]);
            parent.insert(rb, ra);
        }
    }
    let mut families: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for l in &all {
        let root = find(&mut parent, l);
        families.entry(root).or_default().insert(l);
    }
    let shared = |l: &str| sets.iter().filter(|s| s.contains(l)).count() > 1;
    let mut fams: Vec<BTreeSet<&str>> = families.into_values().collect();
    fams.sort_by_key(|f| f.iter().next().copied().unwrap_or(""));
    let mut out = Vec::new();
    for f in fams {
        out.extend(f.iter().filter(|l| !shared(l)).map(|l| l.to_string()));
        out.extend(f.iter().filter(|l| shared(l)).map(|l| l.to_string()));
    }
    out
}

/// One row as Python's `csv.writer` writes it (minimal quoting, `\r\n`).
fn write_row(out: &mut String, cells: &[String]) {
    let cells: Vec<String> = cells
        .iter()
        .map(|c| {
            if c.contains([',', '"', '\r', '\n']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.clone()
            }
        })
        .collect();
    out.push_str(&cells.join(","));
    out.push_str("\r\n");
}
