//! AIPerf's timeslice files (`--slice-duration`, reference §6):
//! `profile_export_aiperf_timeslices.json` — `{timeslices: [{start_ns, end_ns,
//! [is_complete: false], <tag>: {unit, avg, …}}], input_config}` — and the long-format
//! `profile_export_aiperf_timeslices.csv` — `Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value`.

use inferbench_core::MetricValue;
use inferbench_metrics::aiperf::timeslice::Timeslice;
use serde_json::{Map, Value, json};

use crate::summary_csv::format_2f;
use crate::summary_json::metric_json;

/// The statistics of a CSV row, in AIPerf's order (`count` is not one of them).
const STATS: [&str; 14] = [
    "avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std",
];

/// The two file names for the export prefix: `<p>_timeslices.{json,csv}` after the summary's
/// own stem (`profile_export_aiperf_timeslices.json` for the default prefix).
pub fn timeslice_names(names: &crate::FileNames) -> (String, String) {
    let stem = names
        .summary_json
        .strip_suffix(".json")
        .unwrap_or(&names.summary_json);
    (
        format!("{stem}_timeslices.json"),
        format!("{stem}_timeslices.csv"),
    )
}

/// The JSON document, pretty-printed with a 2-space indent and no final newline, as AIPerf
/// writes it. Slices come in time order (the position is the slice's index).
/// `input_config` is the run's plan as the summary JSON writes it.
pub fn render_timeslices_json(
    slices: &[Timeslice],
    input_config: &Value,
) -> Result<Vec<u8>, serde_json::Error> {
    let list: Vec<Value> = slices
        .iter()
        .map(|s| {
            let mut o = Map::new();
            o.insert("start_ns".into(), json!(s.start_ns));
            o.insert("end_ns".into(), json!(s.end_ns));
            // AIPerf writes the flag only for the clipped (incomplete) slice.
            if !s.is_complete {
                o.insert("is_complete".into(), json!(false));
            }
            for m in &s.summary.metrics {
                o.insert(m.tag.clone(), metric_json(m));
            }
            Value::Object(o)
        })
        .collect();
    let doc = json!({"timeslices": list, "input_config": input_config});
    serde_json::to_vec_pretty(&doc)
}

/// Python `csv` QUOTE_MINIMAL.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The long-format CSV: one row per slice, metric (sorted by tag) and statistic present,
/// values `f"{x:.2f}"`, CRLF line ends.
pub fn render_timeslices_csv(slices: &[Timeslice]) -> String {
    let mut out = String::from("Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value\r\n");
    for (k, s) in slices.iter().enumerate() {
        let mut metrics: Vec<_> = s.summary.metrics.iter().collect();
        metrics.sort_by(|a, b| a.tag.as_bytes().cmp(b.tag.as_bytes()));
        for m in metrics {
            let name = if m.header.is_empty() {
                &m.tag
            } else {
                &m.header
            };
            let mut row = |stat: &str, v: f64| {
                if !v.is_finite() {
                    return;
                }
                out.push_str(&format!(
                    "{k},{},{},{},{},{stat},{}\r\n",
                    s.start_ns,
                    s.end_ns,
                    field(name),
                    field(&m.unit),
                    format_2f(Some(v))
                ));
            };
            match &m.value {
                MetricValue::Scalar { value } => row("avg", *value),
                MetricValue::Distribution { stats } => {
                    for st in STATS {
                        if let Some(v) = stats.get(st) {
                            row(st, v);
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::summary::{MetricResult, Stats, Summary};

    fn slice(start: u64, end: u64, complete: bool, metrics: Vec<MetricResult>) -> Timeslice {
        Timeslice {
            start_ns: start,
            end_ns: end,
            is_complete: complete,
            summary: Summary {
                definitions: "aiperf-0.13".into(),
                metrics,
                error_summary: Vec::new(),
            },
        }
    }

    fn scalar(tag: &str, header: &str, unit: &str, value: f64) -> MetricResult {
        MetricResult {
            tag: tag.into(),
            header: header.into(),
            unit: unit.into(),
            value: MetricValue::Scalar { value },
        }
    }

    #[test]
    fn csv_rows_sorted_by_tag_with_present_stats_only() {
        let latency = MetricResult {
            tag: "request_latency".into(),
            header: "Request Latency".into(),
            unit: "ms".into(),
            value: MetricValue::Distribution {
                stats: Stats {
                    avg: Some(12.345),
                    min: Some(10.0),
                    max: Some(14.0),
                    ..Stats::default()
                },
            },
        };
        let s = vec![
            slice(
                100,
                200,
                true,
                vec![
                    scalar(
                        "request_throughput",
                        "Request Throughput",
                        "requests/sec",
                        2.0,
                    ),
                    latency,
                ],
            ),
            slice(
                200,
                250,
                false,
                vec![scalar("request_count", "Request Count", "requests", 1.0)],
            ),
        ];
        let csv = render_timeslices_csv(&s);
        // 12.345 is 12.34500000000000063… in binary: Python's .2f gives 12.35.
        let want = "Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value\r\n\
            0,100,200,Request Latency,ms,avg,12.35\r\n\
            0,100,200,Request Latency,ms,min,10.00\r\n\
            0,100,200,Request Latency,ms,max,14.00\r\n\
            0,100,200,Request Throughput,requests/sec,avg,2.00\r\n\
            1,200,250,Request Count,requests,avg,1.00\r\n";
        assert_eq!(csv, want);
    }

    #[test]
    fn json_marks_only_the_clipped_slice() {
        let s = vec![
            slice(
                100,
                200,
                true,
                vec![scalar("request_count", "Request Count", "requests", 3.0)],
            ),
            slice(200, 250, false, vec![]),
        ];
        let v: Value =
            serde_json::from_slice(&render_timeslices_json(&s, &json!({"models": []})).unwrap())
                .unwrap();
        let t = v["timeslices"].as_array().unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0]["start_ns"], 100);
        assert!(t[0].get("is_complete").is_none());
        assert_eq!(
            t[0]["request_count"],
            json!({"unit": "requests", "avg": 3.0})
        );
        assert_eq!(t[1]["is_complete"], false);
        assert!(v["input_config"].is_object());
    }

    #[test]
    fn names_follow_the_prefix() {
        let d = crate::file_names("profile_export");
        assert_eq!(
            timeslice_names(&d),
            (
                "profile_export_aiperf_timeslices.json".to_string(),
                "profile_export_aiperf_timeslices.csv".to_string()
            )
        );
        let f = crate::file_names("foo");
        assert_eq!(timeslice_names(&f).1, "foo_timeslices.csv");
    }
}
