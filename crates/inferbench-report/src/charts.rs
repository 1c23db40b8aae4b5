//! The standard charts of one or more runs, from their per-record export lines
//! (`profile_export.jsonl`, AIPerf's shape: `metadata` with wall-clock ns, `metrics` with
//! `{value, unit}` in display units). Several runs are overlaid, one series each.

use serde_json::Value;

use crate::data;
use crate::svg::{Chart, Series, Style};

/// One run's requests, read from its export lines.
#[derive(Clone, Debug, Default)]
pub struct RunPoints {
    pub label: String,
    /// Per request: start (s since the run's earliest start), and the metrics in ms.
    pub start_s: Vec<f64>,
    pub ttft_ms: Vec<Option<f64>>,
    pub ttfo_ms: Vec<Option<f64>>,
    pub itl_ms: Vec<Option<f64>>,
    /// Every request's gaps between consecutive chunks (`inter_chunk_latency`), ms, pooled
    /// in record order.
    pub chunk_gaps_ms: Vec<f64>,
    pub latency_ms: Vec<Option<f64>>,
    pub osl: Vec<Option<f64>>,
    /// start − credit issued (the schedule's lag), ms.
    pub lag_ms: Vec<Option<f64>>,
    /// End (s since the earliest start): `request_end_ns`.
    pub end_s: Vec<f64>,
}

fn metric(line: &Value, tag: &str) -> Option<f64> {
    line["metrics"][tag]["value"].as_f64()
}

impl RunPoints {
    /// Reads export lines; lines without a `request_start_ns` are skipped.
    pub fn from_lines(label: &str, lines: &[Value]) -> RunPoints {
        let start = |l: &Value| l["metadata"]["request_start_ns"].as_u64();
        let t0 = lines.iter().filter_map(start).min().unwrap_or(0);
        let mut r = RunPoints {
            label: label.to_string(),
            ..RunPoints::default()
        };
        for l in lines {
            let Some(s) = start(l) else { continue };
            let m = &l["metadata"];
            let end = m["request_end_ns"].as_u64().unwrap_or(s);
            r.start_s.push((s - t0) as f64 * 1e-9);
            r.end_s.push(end.saturating_sub(t0) as f64 * 1e-9);
            r.ttft_ms.push(metric(l, "time_to_first_token"));
            r.ttfo_ms.push(metric(l, "time_to_first_output_token"));
            r.itl_ms.push(metric(l, "inter_token_latency"));
            if let Some(gaps) = l["metrics"]["inter_chunk_latency"]["value"].as_array() {
                r.chunk_gaps_ms
                    .extend(gaps.iter().filter_map(Value::as_f64));
            }
            r.latency_ms.push(metric(l, "request_latency"));
            r.osl.push(metric(l, "output_sequence_length"));
            r.lag_ms.push(
                m["credit_issued_ns"]
                    .as_u64()
                    .map(|c| (s as f64 - c as f64) * 1e-6),
            );
        }
        r
    }

    fn points(&self, v: &[Option<f64>]) -> Vec<(f64, f64)> {
        self.start_s
            .iter()
            .zip(v)
            .filter_map(|(&t, v)| v.map(|v| (t, v)))
            .collect()
    }
}

/// The two ITL populations the definition sets use (docs/crosswalk.md), as (name, values
/// in ms): one value per request, (latency − TTFT)/(OSL − 1), which is AIPerf's and
/// GenAI-Perf's `inter_token_latency` and vLLM's TPOT; and every gap between consecutive
/// chunks of every request pooled, which is vLLM's `itl` and AIPerf's `inter_chunk_latency`.
/// A population the run has no value of is left out.
pub fn itl_populations(r: &RunPoints) -> Vec<(&'static str, Vec<f64>)> {
    let per_request: Vec<f64> = r.itl_ms.iter().flatten().copied().collect();
    [
        ("ITL per request (AIPerf ITL, vLLM TPOT)", per_request),
        (
            "chunk gaps pooled (vLLM itl, AIPerf inter_chunk_latency)",
            r.chunk_gaps_ms.clone(),
        ),
    ]
    .into_iter()
    .filter(|p| !p.1.is_empty())
    .collect()
}

/// The rolling window: a tenth of the requests, between 5 and 200.
fn window(n: usize) -> usize {
    (n / 10).clamp(5, 200)
}

fn over_time(runs: &[RunPoints], title: &str, pick: fn(&RunPoints) -> &[Option<f64>]) -> Chart {
    let mut series = Vec::new();
    for r in runs {
        let p = r.points(pick(r));
        let w = window(p.len());
        let p90 = data::rolling_percentile(&p, w, 90.0);
        let p50 = data::rolling_percentile(&p, w, 50.0);
        series.push(Series::new(
            format!("{} per request", r.label),
            p,
            Style::Points,
        ));
        series.push(Series::new(
            format!("{} rolling p50 ({w})", r.label),
            p50,
            Style::Line,
        ));
        series.push(Series::new(
            format!("{} rolling p90 ({w})", r.label),
            p90,
            Style::Line,
        ));
    }
    Chart {
        title: title.into(),
        x_label: "request start (s since the first)".into(),
        y_label: "ms".into(),
        series,
    }
}

/// Every chart of the runs, as (file stem, chart).
pub fn standard_charts(runs: &[RunPoints]) -> Vec<(&'static str, Chart)> {
    let mut out = vec![
        (
            "ttft_over_time",
            over_time(runs, "Time to first token over time", |r| {
                r.ttft_ms.as_slice()
            }),
        ),
        (
            "itl_over_time",
            over_time(runs, "Inter-token latency over time", |r| {
                r.itl_ms.as_slice()
            }),
        ),
        (
            "latency_over_time",
            over_time(runs, "Request latency over time", |r| {
                r.latency_ms.as_slice()
            }),
        ),
    ];
    let mut cdf = Vec::new();
    for r in runs {
        for (name, v) in [
            ("TTFT", &r.ttft_ms),
            ("TTFO", &r.ttfo_ms),
            ("request latency", &r.latency_ms),
        ] {
            let vals: Vec<f64> = v.iter().flatten().copied().collect();
            if !vals.is_empty() {
                cdf.push(Series::new(
                    format!("{} {name}", r.label),
                    data::cdf(&vals),
                    Style::Step,
                ));
            }
        }
    }
    out.push((
        "latency_cdf",
        Chart {
            title: "Latency CDFs: TTFT (reasoning counts) against TTFO (output only)".into(),
            x_label: "ms".into(),
            y_label: "fraction of requests ≤ x".into(),
            series: cdf,
        },
    ));
    let mut itl = Vec::new();
    for r in runs {
        for (name, vals) in itl_populations(r) {
            itl.push(Series::new(
                format!("{} {name}", r.label),
                data::cdf(&vals),
                Style::Step,
            ));
        }
    }
    out.push((
        "itl_cdf",
        Chart {
            title: "ITL CDFs: per-request average against pooled chunk gaps".into(),
            x_label: "ms".into(),
            y_label: "fraction of values ≤ x".into(),
            series: itl,
        },
    ));
    let mut tput = Vec::new();
    let mut conc = Vec::new();
    let mut lag = Vec::new();
    for r in runs {
        let last = r.end_s.iter().copied().fold(0.0, f64::max);
        // About 20 buckets over the run, at least 10 ms each.
        let width = (last / 20.0).max(0.01);
        let edges = data::bucket_edges(0.0, last, width);
        let (ends, tokens): (Vec<f64>, Vec<f64>) = r
            .end_s
            .iter()
            .zip(&r.osl)
            .filter_map(|(&e, o)| o.map(|o| (e, o)))
            .unzip();
        tput.push(Series::new(
            format!("{} output tokens/s", r.label),
            data::bucket_rate(&edges, &ends, Some(&tokens)),
            Style::Line,
        ));
        let iv: Vec<(f64, f64)> = r.start_s.iter().copied().zip(r.end_s.clone()).collect();
        conc.push(Series::new(
            format!("{} requests in flight", r.label),
            data::in_flight(&iv),
            Style::Step,
        ));
        lag.push(Series::new(
            format!("{} start − credit issued", r.label),
            r.points(&r.lag_ms),
            Style::Points,
        ));
    }
    out.push((
        "throughput_over_time",
        Chart {
            title: "Output token throughput over time (by completion)".into(),
            x_label: "s since the first request start".into(),
            y_label: "tokens/s".into(),
            series: tput,
        },
    ));
    out.push((
        "concurrency_over_time",
        Chart {
            title: "Requests in flight".into(),
            x_label: "s since the first request start".into(),
            y_label: "requests".into(),
            series: conc,
        },
    ));
    out.push((
        "schedule_lag_over_time",
        Chart {
            title: "Schedule lag: request start minus credit issued".into(),
            x_label: "request start (s since the first)".into(),
            y_label: "ms".into(),
            series: lag,
        },
    ));
    out
}

/// Tokens/s against tokens/s/user for the cells of a sweep, with the Pareto front.
pub fn pareto_chart(label: &str, cells: &[(f64, f64)]) -> Chart {
    Chart {
        title: "Throughput against interactivity".into(),
        x_label: "output tokens/s/user".into(),
        y_label: "output tokens/s".into(),
        series: vec![
            Series::new(
                format!("{label} cells"),
                cells.iter().map(|&(t, u)| (u, t)).collect(),
                Style::Points,
            ),
            Series::new(
                "Pareto front",
                data::pareto_front(&cells.iter().map(|&(t, u)| (u, t)).collect::<Vec<_>>()),
                Style::Line,
            ),
        ],
    }
}

/// One run of a sweep (or of several runs) on the latency-against-load chart: its achieved
/// request throughput (requests/s, the summary's `request_throughput` avg) and its summary's
/// request-latency p50 and p99 and TTFT p99 (ms).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadPoint {
    pub requests_per_s: f64,
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    pub ttft_p99_ms: Option<f64>,
}

impl LoadPoint {
    /// From an AIPerf-shaped summary (`profile_export_aiperf.json`); None without the
    /// throughput or the latency statistics.
    pub fn from_summary(s: &Value) -> Option<LoadPoint> {
        Some(LoadPoint {
            requests_per_s: s["request_throughput"]["avg"].as_f64()?,
            latency_p50_ms: s["request_latency"]["p50"].as_f64()?,
            latency_p99_ms: s["request_latency"]["p99"].as_f64()?,
            ttft_p99_ms: s["time_to_first_token"]["p99"].as_f64(),
        })
    }
}

/// Latency against load: each run's request-latency p50 and p99 (and TTFT p99 where the
/// runs have it) at its achieved request throughput, joined in throughput order, so a
/// sweep's knee shows where latency starts to climb.
pub fn latency_load_chart(points: &[LoadPoint]) -> Chart {
    let mut p = points.to_vec();
    p.sort_by(|a, b| a.requests_per_s.total_cmp(&b.requests_per_s));
    let line = |f: &dyn Fn(&LoadPoint) -> Option<f64>| -> Vec<(f64, f64)> {
        p.iter()
            .filter_map(|x| Some((x.requests_per_s, f(x)?)))
            .collect()
    };
    let mut series = vec![
        Series::new(
            "request latency p50",
            line(&|x| Some(x.latency_p50_ms)),
            Style::Line,
        ),
        Series::new(
            "request latency p99",
            line(&|x| Some(x.latency_p99_ms)),
            Style::Line,
        ),
    ];
    let ttft = line(&|x| x.ttft_p99_ms);
    if ttft.len() == p.len() {
        series.push(Series::new("TTFT p99", ttft, Style::Line));
    }
    Chart {
        title: "Latency against load".into(),
        x_label: "requests/s (achieved)".into(),
        y_label: "ms".into(),
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn latency_against_load_is_in_throughput_order() {
        let s = |rps: f64, p50: f64, p99: f64| {
            json!({"request_throughput": {"avg": rps},
                   "request_latency": {"p50": p50, "p99": p99},
                   "time_to_first_token": {"p99": p99 / 2.0}})
        };
        let pts: Vec<LoadPoint> = [s(20.0, 15.0, 40.0), s(5.0, 10.0, 12.0)]
            .iter()
            .map(|v| LoadPoint::from_summary(v).unwrap())
            .collect();
        let c = latency_load_chart(&pts);
        assert_eq!(c.series[0].points, vec![(5.0, 10.0), (20.0, 15.0)]);
        assert_eq!(c.series[1].points, vec![(5.0, 12.0), (20.0, 40.0)]);
        assert_eq!(c.series[2].points, vec![(5.0, 6.0), (20.0, 20.0)]);
        // A summary without a throughput is left out.
        assert_eq!(
            LoadPoint::from_summary(&json!({"request_latency": {}})),
            None
        );
        // Without TTFT on every run, no TTFT line.
        let mut no_ttft = pts.clone();
        no_ttft[0].ttft_p99_ms = None;
        assert_eq!(latency_load_chart(&no_ttft).series.len(), 2);
    }

    fn line(start: u64, end: u64, credit: u64, ttft: f64, osl: f64) -> Value {
        json!({"metadata": {"request_start_ns": start, "request_end_ns": end,
                            "credit_issued_ns": credit},
               "metrics": {"time_to_first_token": {"value": ttft, "unit": "ms"},
                           "request_latency": {"value": ttft * 2.0, "unit": "ms"},
                           "output_sequence_length": {"value": osl, "unit": "tokens"}}})
    }

    #[test]
    fn points_are_relative_to_the_earliest_start() {
        // Starts at 2 s and 1 s (wall): relative 1 s and 0 s; credit 0.5 ms before → lag.
        let r = RunPoints::from_lines(
            "a",
            &[
                line(2_000_000_000, 2_500_000_000, 1_999_500_000, 10.0, 4.0),
                line(1_000_000_000, 1_200_000_000, 1_000_000_000, 20.0, 2.0),
            ],
        );
        assert_eq!(r.start_s, vec![1.0, 0.0]);
        assert_eq!(r.end_s, vec![1.5, 0.2]);
        assert_eq!(r.ttft_ms, vec![Some(10.0), Some(20.0)]);
        assert!((r.lag_ms[0].unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(r.lag_ms[1], Some(0.0));
        assert_eq!(r.itl_ms, vec![None, None]);
        let charts = standard_charts(&[r]);
        let names: Vec<&str> = charts.iter().map(|c| c.0).collect();
        assert_eq!(
            names,
            [
                "ttft_over_time",
                "itl_over_time",
                "latency_over_time",
                "latency_cdf",
                "itl_cdf",
                "throughput_over_time",
                "concurrency_over_time",
                "schedule_lag_over_time"
            ]
        );
        // The CDF has TTFT and latency (no TTFO in these lines).
        assert_eq!(charts[3].1.series.len(), 2);
        // No ITL and no chunk gaps in these lines: an ITL CDF without series.
        assert!(charts[4].1.series.is_empty());
    }

    #[test]
    fn itl_populations_by_hand() {
        // Request a: latency 30 ms, TTFT 10 ms, 3 tokens: ITL (30 − 10)/2 = 10 ms, chunk gaps
        // 8 and 12. Request b: one token, no ITL, no gaps. Request c: ITL 5, gaps 5, 5.
        let mk = |itl: Option<f64>, gaps: &[f64]| {
            let mut l = line(1_000_000_000, 1_100_000_000, 1_000_000_000, 10.0, 3.0);
            if let Some(v) = itl {
                l["metrics"]["inter_token_latency"] = serde_json::json!({"value": v, "unit": "ms"});
            }
            if !gaps.is_empty() {
                l["metrics"]["inter_chunk_latency"] =
                    serde_json::json!({"value": gaps, "unit": "ms"});
            }
            l
        };
        let r = RunPoints::from_lines(
            "a",
            &[
                mk(Some(10.0), &[8.0, 12.0]),
                mk(None, &[]),
                mk(Some(5.0), &[5.0, 5.0]),
            ],
        );
        let p = itl_populations(&r);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].1, vec![10.0, 5.0]);
        assert_eq!(p[1].1, vec![8.0, 12.0, 5.0, 5.0]);
        let charts = standard_charts(&[r]);
        let itl = &charts.iter().find(|c| c.0 == "itl_cdf").unwrap().1;
        // Per request: 5 → 1/2, 10 → 2/2. Pooled: 5, 5 → 2/4, 8 → 3/4, 12 → 4/4 (the
        // per-request mean of the gaps is 10 and 5 either way: the populations differ).
        assert_eq!(itl.series.len(), 2);
        assert_eq!(itl.series[0].points.last(), Some(&(10.0, 1.0)));
        assert!(itl.series[1].points.contains(&(8.0, 0.75)));
        assert!(itl.series[1].points.contains(&(12.0, 1.0)));
    }

    #[test]
    fn pareto_chart_puts_interactivity_on_x() {
        let c = pareto_chart("sweep", &[(100.0, 50.0), (80.0, 40.0), (200.0, 10.0)]);
        // (tokens/s, per user) → (per user, tokens/s): (50,100) (40,80) (10,200);
        // (40,80) is beaten by (50,100).
        assert_eq!(c.series[1].points, vec![(10.0, 200.0), (50.0, 100.0)]);
    }
}
