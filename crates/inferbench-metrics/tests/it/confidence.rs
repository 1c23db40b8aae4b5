//! Repeated-run statistics and the Wilson interval, every expected value worked out by hand
//! in the comments.

use inferbench_core::summary::{MetricResult, MetricValue, Stats, Summary};
use inferbench_metrics::confidence::{
    InvalidConfidenceLevel, RepeatStats, aggregate, check_confidence_level, repeat_stats,
    wilson_interval,
};

// z = Φ⁻¹(0.975), the usual 1.96 to double precision.
const Z975: f64 = 1.959_963_984_540_054;

#[track_caller]
fn assert_near(got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "got {got}, expected {want} ± {tol}"
    );
}

#[test]
fn three_values_at_95() {
    let s = repeat_stats(&[10.0, 12.0, 14.0], 0.95).unwrap();
    assert_eq!(s.n, 3);
    // mean = 36 / 3 = 12
    assert_near(s.mean, 12.0, 1e-12);
    // Σ(x − mean)² = 4 + 0 + 4 = 8; std = √(8 / (3 − 1)) = √4 = 2
    assert_near(s.std, 2.0, 1e-12);
    assert_eq!((s.min, s.max), (10.0, 14.0));
    // cv = 2 / 12 = 1/6
    assert_near(s.cv, 1.0 / 6.0, 1e-12);
    // se = 2 / √3 = 1.154700538…
    assert_near(s.se, 1.154_700_538_379_251_7, 1e-12);
    // With 2 degrees of freedom the t quantile has a closed form:
    // t_p = (2p − 1) / √(2p(1 − p)); p = 0.975: 0.95 / √(2 · 0.975 · 0.025)
    //     = 0.95 / √0.04875 = 0.95 / 0.220794021… = 4.302652729…
    assert_near(s.t_critical, 4.302_652_729_911_275, 1e-9);
    // margin = 4.302652729… · 1.154700538… = 4.968275423…
    assert_near(s.ci_low, 12.0 - 4.968_275_423_687_506, 1e-9);
    assert_near(s.ci_high, 12.0 + 4.968_275_423_687_506, 1e-9);
    assert_eq!(s.confidence_level, 0.95);
}

#[test]
fn t_quantile_with_one_degree_of_freedom() {
    // df = 1 is the Cauchy distribution: t_p = tan(π(p − ½)); at p = 0.975, tan(0.475π)
    // = 12.706204736…, the familiar first row of a t table.
    let s = repeat_stats(&[1.0, 3.0], 0.95).unwrap();
    assert_near(s.t_critical, (0.475 * std::f64::consts::PI).tan(), 1e-8);
    assert_near(s.t_critical, 12.706_204_736, 1e-8);
    // mean 2, std √((1 + 1) / 1) = √2, se = √2 / √2 = 1, interval 2 ∓ 12.706…
    assert_near(s.se, 1.0, 1e-12);
    assert_near(s.ci_low, 2.0 - 12.706_204_736, 1e-8);
}

#[test]
fn t_quantile_approaches_z_for_large_df() {
    // With equal values std = 0, but t_critical still depends on n alone.
    let t = |n: usize| repeat_stats(&vec![1.0; n], 0.95).unwrap().t_critical;
    let (t10, t100, t_large) = (t(10), t(100), t(100_001));
    // Table values: t(0.975, 9) = 2.262157…, t(0.975, 99) = 1.984217…
    assert_near(t10, 2.262_157_162_7, 1e-8);
    assert_near(t100, 1.984_216_951_6, 1e-8);
    // t − z ≈ z(z² + 1) / 4df = 1.96 · 4.84 / 4e5 ≈ 2.4e-5 at df = 1e5.
    assert!(t10 > t100 && t100 > t_large && t_large > Z975);
    assert_near(t_large, Z975, 5e-5);
}

#[test]
fn single_run_is_a_point_estimate() {
    // n = 1: NumPy's ddof=1 std would be NaN; AIPerf reports std = se = cv = 0, the interval
    // collapsed to the value and t_critical NaN, which is what is mirrored.
    let s = repeat_stats(&[5.0], 0.95).unwrap();
    assert_eq!(s.n, 1);
    assert_eq!((s.mean, s.min, s.max), (5.0, 5.0, 5.0));
    assert_eq!((s.std, s.se, s.cv), (0.0, 0.0, 0.0));
    assert_eq!((s.ci_low, s.ci_high), (5.0, 5.0));
    assert!(s.t_critical.is_nan());
    // Exported without t_critical.
    let named = s.named();
    assert_eq!(
        named.iter().find(|(k, _)| *k == "t_critical").unwrap().1,
        None
    );
    assert_eq!(
        named.iter().find(|(k, _)| *k == "mean").unwrap().1,
        Some(5.0)
    );
}

#[test]
fn zero_mean_gives_infinite_cv_left_out_of_exports() {
    // mean (−1 + 1) / 2 = 0, std √2: AIPerf's cv is +∞ for a zero mean.
    let s = repeat_stats(&[-1.0, 1.0], 0.95).unwrap();
    assert_eq!(s.mean, 0.0);
    assert_eq!(s.cv, f64::INFINITY);
    assert_eq!(s.named()[4], ("cv", None));
    assert_eq!(s.named()[1].0, "std");
    assert_near(s.named()[1].1.unwrap(), std::f64::consts::SQRT_2, 1e-12);
}

#[test]
fn identical_values_have_a_zero_width_interval() {
    let s = repeat_stats(&[7.0, 7.0, 7.0, 7.0], 0.9).unwrap();
    assert_eq!((s.std, s.se, s.cv), (0.0, 0.0, 0.0));
    assert_eq!((s.ci_low, s.ci_high), (7.0, 7.0));
    assert!(s.t_critical.is_finite());
}

#[test]
fn large_offset_does_not_cancel() {
    // 1e9 + {0, 1, 2}: std 1 exactly; a one-pass Σx² − n·mean² would lose it to rounding.
    let s = repeat_stats(&[1e9, 1e9 + 1.0, 1e9 + 2.0], 0.95).unwrap();
    assert_near(s.std, 1.0, 1e-9);
}

#[test]
fn repeat_stats_rejects_bad_input() {
    assert_eq!(repeat_stats(&[], 0.95), None);
    assert_eq!(repeat_stats(&[1.0, f64::NAN], 0.95), None);
    assert_eq!(repeat_stats(&[1.0, f64::INFINITY], 0.95), None);
    for level in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
        assert_eq!(repeat_stats(&[1.0, 2.0], level), None, "level {level}");
        assert_eq!(wilson_interval(1, 2, level), None, "level {level}");
        assert!(check_confidence_level(level).is_err(), "level {level}");
    }
    assert_eq!(check_confidence_level(0.99), Ok(0.99));
    assert_eq!(
        InvalidConfidenceLevel(1.5).to_string(),
        "invalid confidence level 1.5: it must be between 0 and 1, exclusive (e.g. 0.95)"
    );
}

#[test]
fn wilson_textbook_case() {
    // k = 920, n = 1000, p = 0.92, z = 1.959964, z² = 3.841459:
    //   z²/n = 0.0038415, so the denominator 1 + z²/n = 1.0038415
    //   centre p + z²/2n = 0.92 + 0.0019207 = 0.9219207
    //   p(1 − p)/n = 0.0736 / 1000 = 0.0000736; z²/4n² = 0.00000096
    //   half-width z · √(0.0000745604) = 1.959964 · 0.0086348 = 0.0169240
    //   low  = (0.9219207 − 0.0169240) / 1.0038415 = 0.9049967 / 1.0038415 = 0.90153
    //   high = (0.9219207 + 0.0169240) / 1.0038415 = 0.9388447 / 1.0038415 = 0.93525
    let (low, high) = wilson_interval(920, 1000, 0.95).unwrap();
    assert_near(low, 0.9015, 1e-4);
    assert_near(high, 0.9353, 1e-4);
    // Tighter, against the same arithmetic in full precision.
    assert_near(low, 0.901_533_560_970_497_6, 1e-12);
    assert_near(high, 0.935_251_961_901_636_2, 1e-12);
}

#[test]
fn wilson_at_the_edges() {
    // k = 0: p = 0, so the half-width z·√(z²/4n²) = z²/2n equals the centre's offset: the low
    // bound is 0 and the high bound (z²/n) / (1 + z²/n) = z² / (n + z²)
    // = 3.841459 / 13.841459 = 0.27753.
    let (low, high) = wilson_interval(0, 10, 0.95).unwrap();
    assert_eq!(low, 0.0);
    assert_near(high, 0.2775, 1e-4);
    assert_near(high, Z975 * Z975 / (10.0 + Z975 * Z975), 1e-12);
    // k = n mirrors it: low = n / (n + z²) = 10 / 13.841459 = 0.72247, high = 1.
    let (low, high) = wilson_interval(10, 10, 0.95).unwrap();
    assert_near(low, 0.7225, 1e-4);
    assert_near(low, 10.0 / (10.0 + Z975 * Z975), 1e-12);
    assert_eq!(high, 1.0);
}

#[test]
fn wilson_is_symmetric_and_rejects_bad_counts() {
    // Swapping successes and failures mirrors the interval about ½.
    let (l1, h1) = wilson_interval(3, 17, 0.9).unwrap();
    let (l2, h2) = wilson_interval(14, 17, 0.9).unwrap();
    assert_near(l1, 1.0 - h2, 1e-12);
    assert_near(h1, 1.0 - l2, 1e-12);
    // A wider level gives a wider interval around the same counts.
    let (l3, h3) = wilson_interval(3, 17, 0.99).unwrap();
    assert!(l3 < l1 && h3 > h1);
    assert_eq!(wilson_interval(0, 0, 0.95), None);
    assert_eq!(wilson_interval(11, 10, 0.95), None);
}

fn scalar(tag: &str, value: f64) -> MetricResult {
    MetricResult {
        tag: tag.into(),
        header: format!("Header of {tag}"),
        unit: "requests/sec".into(),
        value: MetricValue::Scalar { value },
    }
}

fn dist(tag: &str, avg: f64, p50: f64, p99: Option<f64>) -> MetricResult {
    MetricResult {
        tag: tag.into(),
        header: format!("Header of {tag}"),
        unit: "ms".into(),
        value: MetricValue::Distribution {
            stats: Stats {
                avg: Some(avg),
                p50: Some(p50),
                p99,
                count: 100,
                ..Stats::default()
            },
        },
    }
}

fn run(metrics: Vec<MetricResult>) -> Summary {
    Summary {
        definitions: "aiperf-0.13".into(),
        metrics,
        error_summary: Vec::new(),
    }
}

#[test]
fn aggregate_three_runs() {
    let runs = [
        run(vec![
            dist("request_latency", 10.0, 9.0, Some(20.0)),
            scalar("request_throughput", 4.0),
            scalar("only_here", 1.0),
        ]),
        // Another metric order and an extra metric: the first run's order rules.
        run(vec![
            scalar("request_throughput", 6.0),
            scalar("extra", 3.0),
            dist("request_latency", 12.0, 11.0, None),
        ]),
        run(vec![
            dist("request_latency", 14.0, 13.0, Some(f64::NAN)),
            scalar("request_throughput", 8.0),
        ]),
    ];
    let out = aggregate(&runs, 0.95).unwrap();
    let keys: Vec<_> = out
        .iter()
        .map(|e| (e.tag.as_str(), e.stat.as_str()))
        .collect();
    // p99 is absent in run 2 (and NaN in run 3), min/max/std/… in every run, so only avg and
    // p50 of the distribution; `only_here` is missing from runs 2 and 3; `extra` is not in
    // the first run; count is never aggregated.
    assert_eq!(
        keys,
        [
            ("request_latency", "avg"),
            ("request_latency", "p50"),
            ("request_throughput", "value"),
        ]
    );

    // avg over runs: 10, 12, 14 — the hand-worked case above.
    let avg = &out[0];
    assert_eq!(
        (avg.header.as_str(), avg.unit.as_str()),
        ("Header of request_latency", "ms")
    );
    assert_eq!(avg.stats, repeat_stats(&[10.0, 12.0, 14.0], 0.95).unwrap());
    assert_near(avg.stats.mean, 12.0, 1e-12);
    assert_near(avg.stats.ci_high, 16.968_275_423_687_506, 1e-9);
    // p50: 9, 11, 13 — mean 11, std 2.
    assert_near(out[1].stats.mean, 11.0, 1e-12);
    assert_near(out[1].stats.std, 2.0, 1e-12);
    // Throughput 4, 6, 8: mean 6, std √((4 + 0 + 4) / 2) = 2, cv = 1/3.
    let thr = &out[2];
    assert_eq!(thr.unit, "requests/sec");
    assert_eq!(thr.stats.n, 3);
    assert_near(thr.stats.mean, 6.0, 1e-12);
    assert_near(thr.stats.cv, 1.0 / 3.0, 1e-12);
    assert_eq!((thr.stats.min, thr.stats.max), (4.0, 8.0));
}

#[test]
fn aggregate_skips_a_metric_whose_kind_changes() {
    let runs = [
        run(vec![scalar("x", 1.0)]),
        run(vec![dist("x", 1.0, 1.0, None)]),
    ];
    assert_eq!(aggregate(&runs, 0.95).unwrap(), Vec::new());
}

#[test]
fn aggregate_edge_cases() {
    assert_eq!(aggregate(&[], 0.95).unwrap(), Vec::new());
    let one = [run(vec![scalar("request_throughput", 4.0)])];
    let out = aggregate(&one, 0.95).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].stats.n, 1);
    assert_eq!((out[0].stats.ci_low, out[0].stats.ci_high), (4.0, 4.0));
    assert_eq!(aggregate(&one, 1.0), Err(InvalidConfidenceLevel(1.0)));
}

#[test]
fn named_order_matches_aiperf_keys() {
    let s: RepeatStats = repeat_stats(&[1.0, 2.0, 3.0], 0.95).unwrap();
    let names: Vec<_> = s.named().iter().map(|(k, _)| *k).collect();
    assert_eq!(
        names,
        [
            "mean",
            "std",
            "min",
            "max",
            "cv",
            "se",
            "ci_low",
            "ci_high",
            "t_critical"
        ]
    );
    assert!(s.named().iter().all(|(_, v)| v.is_some()));
}
