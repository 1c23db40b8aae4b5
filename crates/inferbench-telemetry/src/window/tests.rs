//! Hand-computed window analyses over bodies built as `Exposition` values.

use super::collect::Collected;
use super::stats::{percentile_linear, time_weighted_mean};
use super::*;
use crate::expo::{Family, Format, Sample};
use crate::scrape::{TargetKind, TargetOrigin};

const S: u64 = 1_000_000_000;

fn labels(l: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = l
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    v.sort();
    v
}

/// (sample name, labels, value).
type Spec<'a> = (&'a str, &'a [(&'a str, &'a str)], f64);

fn family(name: &str, kind: MetricType, samples: &[Spec]) -> Family {
    Family {
        name: name.into(),
        kind,
        help: None,
        unit: None,
        samples: samples
            .iter()
            .map(|(n, l, v)| Sample {
                name: n.to_string(),
                labels: labels(l),
                value: *v,
                timestamp_ms: None,
            })
            .collect(),
    }
}

fn expo(families: Vec<Family>) -> Exposition {
    Exposition {
        format: Format::Text004,
        families,
    }
}

fn info() -> TargetInfo {
    TargetInfo {
        index: 0,
        kind: TargetKind::Server,
        origin: TargetOrigin::Flag,
        url: "http://x/metrics".into(),
        interval_ns: S,
    }
}

fn window(start_ns: u64, end_ns: u64) -> Windows {
    Windows {
        profiling: Window { start_ns, end_ns },
        warmup: None,
    }
}

/// Analyses bodies sampled at the given times.
fn run(bodies: Vec<(u64, Exposition)>, w: Windows) -> TargetAnalysis {
    let mut col = Collected::default();
    for (seq, (t, e)) in bodies.iter().enumerate() {
        col.push(seq as u64, *t, e);
    }
    let tally = Tally {
        scrapes: bodies.len() as u64,
        ..Tally::default()
    };
    summarise(info(), tally, col, &w)
}

fn counter_body(v: f64) -> Exposition {
    let c = family("tok_total", MetricType::Counter, &[("tok_total", &[], v)]);
    expo(vec![c])
}

fn only(t: &TargetAnalysis, name: &str) -> SeriesStats {
    t.family(name).unwrap().series[0].stats.clone()
}

fn counter(t: &TargetAnalysis, name: &str) -> CounterStats {
    match only(t, name) {
        SeriesStats::Counter(c) => c,
        other => panic!("{other:?}"),
    }
}

fn gauge(t: &TargetAnalysis, name: &str) -> GaugeStats {
    match only(t, name) {
        SeriesStats::Gauge(g) => g,
        other => panic!("{other:?}"),
    }
}

fn hist(t: &TargetAnalysis, name: &str) -> HistogramStats {
    match only(t, name) {
        SeriesStats::Histogram(h) => h,
        other => panic!("{other:?}"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn a_three_scrape_counter_with_a_reset() {
    // 10 → 25 → 5 (restart): 15 before the drop, then 5 from zero.
    let t = run(
        vec![
            (0, counter_body(10.0)),
            (S, counter_body(25.0)),
            (2 * S, counter_body(5.0)),
        ],
        window(S / 2, 19 * S / 10),
    );
    let b = t.bracket.unwrap();
    assert_eq!((b.start.seq, b.end.seq, b.closed), (0, 2, true));
    assert_eq!(b.seconds(), 2.0);
    let c = counter(&t, "tok_total");
    assert_eq!(c.increase, 20.0);
    assert_eq!(c.resets, 1);
    assert_eq!(c.rate_per_s, 10.0);
    assert!(!c.created_changed);
}

#[test]
fn the_bracket_is_the_last_scrape_before_and_the_first_after() {
    // Scrapes at 0,1,2,3,4 s; window [1.5 s, 2.5 s] → bracket 1 s .. 3 s: 30 − 10 = 20 over 2 s.
    let bodies = (0..5)
        .map(|i| (i * S, counter_body(i as f64 * 10.0)))
        .collect();
    let t = run(bodies, window(3 * S / 2, 5 * S / 2));
    let b = t.bracket.unwrap();
    assert_eq!((b.start.t_ns, b.end.t_ns, b.closed), (S, 3 * S, true));
    let c = counter(&t, "tok_total");
    assert_eq!((c.increase, c.rate_per_s), (20.0, 10.0));
}

#[test]
fn a_run_that_ended_before_another_scrape_is_not_closed() {
    let t = run(
        vec![(0, counter_body(1.0)), (S, counter_body(4.0))],
        window(S / 2, 3 * S),
    );
    let b = t.bracket.unwrap();
    assert_eq!((b.end.seq, b.closed), (1, false));
    assert_eq!(counter(&t, "tok_total").increase, 3.0);
}

#[test]
fn one_scrape_has_no_bracket_and_no_counters_but_keeps_gauges() {
    let g = family("q", MetricType::Gauge, &[("q", &[], 3.0)]);
    let mut e = counter_body(1.0);
    e.families.push(g);
    let t = run(vec![(S, e)], window(0, 2 * S));
    assert!(t.bracket.is_none());
    assert!(t.family("tok_total").is_none());
    assert_eq!(gauge(&t, "q").mean, Some(3.0));
    assert!(
        t.warnings.iter().any(|w| w.contains("1 usable scrape")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn a_created_companion_that_changed_is_a_restart_even_without_a_drop() {
    // prometheus_client 0.0.4: `tok_created` is its own gauge family.
    let body = |v: f64, created: f64| {
        let mut e = counter_body(v);
        e.families.push(family(
            "tok_created",
            MetricType::Gauge,
            &[("tok_created", &[], created)],
        ));
        e
    };
    // 10 → 12 (same start) → 14 (restarted): 2, then 14 from zero.
    let t = run(
        vec![
            (0, body(10.0, 100.0)),
            (S, body(12.0, 100.0)),
            (2 * S, body(14.0, 200.0)),
        ],
        window(0, 2 * S),
    );
    let c = counter(&t, "tok_total");
    assert_eq!((c.increase, c.resets, c.created_changed), (16.0, 1, true));
    // The companion stays in the analysis as a gauge.
    assert_eq!(gauge(&t, "tok_created").change, Some(100.0));
}

#[test]
fn an_openmetrics_created_sample_counts_too() {
    let body = |v: f64, created: f64| {
        expo(vec![family(
            "tok",
            MetricType::Counter,
            &[
                ("tok_total", &[("a", "1")], v),
                ("tok_created", &[("a", "1")], created),
            ],
        )])
    };
    let t = run(vec![(0, body(3.0, 7.0)), (S, body(5.0, 9.0))], window(0, S));
    let c = counter(&t, "tok");
    assert_eq!((c.increase, c.resets, c.created_changed), (5.0, 1, true));
    assert_eq!(
        t.family("tok").unwrap().series[0].labels,
        labels(&[("a", "1")])
    );
}

#[test]
fn percentile_is_numpy_linear() {
    let v = [1.0, 2.0, 3.0, 4.0];
    assert_eq!(percentile_linear(&v, 0.0), 1.0);
    assert_eq!(percentile_linear(&v, 0.5), 2.5);
    // rank 0.9·3 = 2.7 → 3 + 0.7·(4 − 3)
    assert!(close(percentile_linear(&v, 0.9), 3.7));
    assert_eq!(percentile_linear(&v, 1.0), 4.0);
    assert_eq!(percentile_linear(&[5.0], 0.99), 5.0);
}

#[test]
fn the_last_sample_holds_until_the_window_end() {
    // 1 for 3 s, 4 for 2 s: (3 + 8) / 5.
    assert_eq!(
        time_weighted_mean(&[(S, 1.0), (4 * S, 4.0)], 6 * S),
        Some(2.2)
    );
    assert_eq!(time_weighted_mean(&[], 6 * S), None);
    // One sample at the window's end: no span, its value.
    assert_eq!(time_weighted_mean(&[(6 * S, 7.0)], 6 * S), Some(7.0));
}

#[test]
fn a_gauge_time_weighted_and_by_sample() {
    let body = |v: f64| expo(vec![family("q", MetricType::Gauge, &[("q", &[], v)])]);
    // Before the window (100) is left out; a NaN inside is counted and left out.
    let t = run(
        vec![
            (0, body(100.0)),
            (S, body(1.0)),
            (2 * S, body(f64::NAN)),
            (4 * S, body(4.0)),
            (5 * S, body(10.0)),
        ],
        window(S, 5 * S),
    );
    let g = gauge(&t, "q");
    assert_eq!((g.samples, g.non_finite), (4, 1));
    // 1 holds 3 s (the NaN is not a sample), 4 holds 1 s, 10 holds 0 s: 7 / 4.
    assert_eq!(g.time_weighted_mean, Some(1.75));
    assert_eq!(g.mean, Some(5.0));
    assert_eq!((g.min, g.max), (Some(1.0), Some(10.0)));
    // deviations −4, −1, 5: (16 + 1 + 25) / 2 = 21.
    assert!(close(g.std.unwrap(), 21f64.sqrt()));
    assert_eq!(g.p50, Some(4.0));
    assert!(close(g.p90.unwrap(), 8.8));
    assert!(close(g.p99.unwrap(), 9.88));
    assert_eq!(g.change, Some(9.0));
    // Trapezoids over 1→4 (3 s) and 4→10 (1 s): 7.5 + 7.
    assert_eq!(g.integral, Some(14.5));
    assert!(t.family("q").unwrap().total.is_none());
}

#[test]
fn a_gauge_of_two_series_is_also_summed_per_scrape() {
    let body = |a: f64, b: f64| {
        expo(vec![family(
            "run",
            MetricType::Gauge,
            &[
                ("run", &[("engine", "0")], a),
                ("run", &[("engine", "1")], b),
            ],
        )])
    };
    // Totals 5, 9, 4: the largest total (9) is below the sum of the maxes (8 + 6).
    let t = run(
        vec![
            (0, body(1.0, 4.0)),
            (S, body(8.0, 1.0)),
            (2 * S, body(-2.0, 6.0)),
        ],
        window(0, 2 * S),
    );
    let total = t.family("run").unwrap().total.clone().unwrap();
    assert_eq!(total.max, Some(9.0));
    assert_eq!(total.change, Some(-1.0));
    // 5 for 1 s, 9 for 1 s, 4 for 0 s.
    assert_eq!(total.time_weighted_mean, Some(7.0));
}

/// DCGM's blank for a float field (2^47).
const DCGM_FP64_BLANK: f64 = 140_737_488_355_328.0;

#[test]
fn untyped_families_are_gauges_and_dcgm_blanks_are_left_out() {
    let body = |v: f64, p: f64| {
        expo(vec![
            family("u", MetricType::Untyped, &[("u", &[], v)]),
            family(
                "DCGM_FI_DEV_POWER_USAGE",
                MetricType::Gauge,
                &[("DCGM_FI_DEV_POWER_USAGE", &[], p)],
            ),
        ])
    };
    let t = run(
        vec![(0, body(2.0, 300.0)), (S, body(4.0, DCGM_FP64_BLANK))],
        window(0, S),
    );
    assert_eq!(gauge(&t, "u").mean, Some(3.0));
    assert_eq!(t.family("u").unwrap().kind, MetricType::Untyped);
    let p = gauge(&t, "DCGM_FI_DEV_POWER_USAGE");
    if crate::dcgm::is_blank(DCGM_FP64_BLANK) {
        assert_eq!((p.non_finite, p.max), (1, Some(300.0)));
    }
}

fn hist_body(b: [f64; 3], count: f64, sum: f64) -> Exposition {
    let l = |le: &'static str| -> [(&'static str, &'static str); 2] { [("m", "x"), ("le", le)] };
    let (l1, l2, l3) = (l("0.1"), l("0.5"), l("+Inf"));
    expo(vec![family(
        "lat_seconds",
        MetricType::Histogram,
        &[
            ("lat_seconds_bucket", &l1, b[0]),
            ("lat_seconds_bucket", &l2, b[1]),
            ("lat_seconds_bucket", &l3, b[2]),
            ("lat_seconds_count", &[("m", "x")], count),
            ("lat_seconds_sum", &[("m", "x")], sum),
        ],
    )])
}

#[test]
fn a_histogram_by_its_bucket_increases() {
    let t = run(
        vec![
            (0, hist_body([1.0, 2.0, 3.0], 3.0, 0.6)),
            (S, hist_body([3.0, 6.0, 8.0], 8.0, 2.1)),
        ],
        window(0, S),
    );
    let h = hist(&t, "lat_seconds");
    assert_eq!(
        t.family("lat_seconds").unwrap().series[0].labels,
        labels(&[("m", "x")])
    );
    let inc: Vec<(f64, f64)> = h.buckets.iter().map(|b| (b.le, b.count)).collect();
    assert_eq!(inc, vec![(0.1, 2.0), (0.5, 4.0), (f64::INFINITY, 5.0)]);
    assert_eq!(h.count, 5.0);
    assert!(close(h.sum, 1.5));
    assert!(close(h.mean.unwrap(), 0.3));
    // p50: rank 2.5 in (0.1, 0.5] holding counts 2..4 → 0.1 + 0.4·0.5/2 = 0.2.
    // p90, p95, p99: ranks 4.5, 4.75, 4.95 fall in +Inf → the top finite bound 0.5.
    let q: Vec<f64> = h.quantiles.iter().map(|q| q.0).collect();
    assert_eq!(q, vec![0.5, 0.9, 0.95, 0.99]);
    assert!(close(h.quantiles[0].1.value, 0.2));
    assert_eq!(h.quantiles[1].1.value, 0.5);
    assert_eq!(h.quantiles[3].1.value, 0.5);
}

#[test]
fn a_histogram_reset_uses_the_post_restart_values() {
    let t = run(
        vec![
            (0, hist_body([5.0, 9.0, 10.0], 10.0, 4.0)),
            (S, hist_body([1.0, 1.0, 2.0], 2.0, 0.5)),
        ],
        window(0, S),
    );
    let h = hist(&t, "lat_seconds");
    assert_eq!((h.count, h.sum, h.resets), (2.0, 0.5, 1));
    assert_eq!(h.buckets[0].count, 1.0);
    assert_eq!(h.quantiles.len(), 4);
}

#[test]
fn a_bucket_that_falls_without_a_reset_drops_the_quantiles() {
    let t = run(
        vec![
            (0, hist_body([5.0, 9.0, 10.0], 10.0, 4.0)),
            (S, hist_body([4.0, 11.0, 12.0], 12.0, 5.0)),
        ],
        window(0, S),
    );
    let h = hist(&t, "lat_seconds");
    assert_eq!((h.count, h.resets), (2.0, 0));
    assert!(h.quantiles.is_empty());
    assert!(
        t.warnings
            .iter()
            .any(|w| w.contains("lat_seconds{m=\"x\"}") && w.contains("quantiles")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn summaries_are_kept_by_name_and_output_is_sorted() {
    let body = expo(vec![
        family(
            "zz",
            MetricType::Gauge,
            &[("zz", &[("b", "2")], 1.0), ("zz", &[("b", "1")], 1.0)],
        ),
        family(
            "s",
            MetricType::Summary,
            &[
                ("s", &[("quantile", "0.5")], 1.0),
                ("s", &[("quantile", "0.9")], 2.0),
                ("s_count", &[], 3.0),
            ],
        ),
    ]);
    let t = run(vec![(0, body.clone()), (S, body)], window(0, S));
    let names: Vec<&str> = t.families.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["s", "zz"]);
    assert_eq!(only(&t, "s"), SeriesStats::Other { samples: 6 });
    let zz = t.family("zz").unwrap();
    assert_eq!(zz.series[0].labels, labels(&[("b", "1")]));
}
