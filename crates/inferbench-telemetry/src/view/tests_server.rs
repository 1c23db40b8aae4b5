//! Hand-computed server views (known names from `names`).

use super::tests::{counter, fam, gauge, hist, series, target};
use super::*;
use crate::expo::MetricType;
use crate::scrape::TargetKind;
use crate::window::{GaugeStats, SeriesStats};

const INF: f64 = f64::INFINITY;

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

fn vllm() -> TargetAnalysis {
    let e0 = [("engine", "0")];
    let e1 = [("engine", "1")];
    let mut running = fam(
        "vllm:num_requests_running",
        MetricType::Gauge,
        vec![
            series(&e0, gauge(3.0, 0.0, 6.0, None)),
            series(&e1, gauge(5.0, 2.0, 7.0, None)),
        ],
    );
    // The per-scrape total peaked at 9, below the sum of the maxes (13).
    running.total = Some(GaugeStats {
        max: Some(9.0),
        change: Some(1.0),
        ..GaugeStats::default()
    });
    target(
        TargetKind::Server,
        vec![
            fam(
                "vllm:generation_tokens_total",
                MetricType::Counter,
                vec![
                    series(&e0, counter(1000.0, 1)),
                    series(&e1, counter(600.0, 0)),
                ],
            ),
            running,
            fam(
                "vllm:kv_cache_usage_perc",
                MetricType::Gauge,
                vec![series(&e0, gauge(0.25, 0.1, 0.4, None))],
            ),
            fam(
                "vllm:time_to_first_token_seconds",
                MetricType::Histogram,
                vec![
                    series(&e0, hist(&[(0.1, 2.0), (0.5, 4.0), (INF, 5.0)], 1.5)),
                    series(&e1, hist(&[(0.1, 0.0), (0.5, 3.0), (INF, 5.0)], 2.5)),
                ],
            ),
        ],
    )
}

#[test]
fn vllm_counts_are_summed_after_each_series_increase() {
    let v = server_view(&vllm()).unwrap();
    assert_eq!(v.server, crate::names::ServerKind::Vllm);
    // 1000 + 600 tokens over the 20 s bracket.
    assert_eq!(v.output_tokens, Some(1600.0));
    assert_eq!(v.output_tokens_per_s, Some(80.0));
    assert_eq!(v.prompt_tokens, None);
    assert_eq!(v.resets, 1);
    let r = v.running.unwrap();
    assert_eq!(
        (r.time_weighted_mean, r.max, r.change),
        (Some(8.0), Some(9.0), Some(1.0))
    );
    assert_eq!(v.kv_usage.unwrap().max, Some(0.4));
}

#[test]
fn a_two_series_histogram_merges_its_buckets() {
    let h = server_view(&vllm()).unwrap().ttft.unwrap();
    // Merged increases 0.1 s: 2, 0.5 s: 7, +Inf: 10; Σsum 4 s over 10.
    assert_eq!(h.count, 10.0);
    assert!(close(h.mean_ms, 400.0));
    // p50: rank 5 in (0.1, 0.5] holding 2..7 → 0.1 + 0.4·3/5 = 0.34 s.
    assert!(close(h.p50_estimate_ms, 340.0), "{h:?}");
    // p90 and p99 fall in +Inf: clamped to the top finite bound.
    assert!(close(h.p90_estimate_ms, 500.0));
    assert!(close(h.p99_estimate_ms, 500.0));
    assert!(close(h.top_bound_ms, 500.0));
}

#[test]
fn a_series_whose_quantiles_were_dropped_drops_the_estimates() {
    let mut t = vllm();
    let f = t
        .families
        .iter_mut()
        .find(|f| f.name == "vllm:time_to_first_token_seconds")
        .unwrap();
    if let SeriesStats::Histogram(h) = &mut f.series[1].stats {
        h.quantiles.clear();
    }
    let h = server_view(&t).unwrap().ttft.unwrap();
    assert!(close(h.mean_ms, 400.0));
    assert_eq!((h.p50_estimate_ms, h.p99_estimate_ms), (None, None));
}

#[test]
fn an_openmetrics_counter_family_is_found_without_total() {
    let t = target(
        TargetKind::Server,
        vec![
            fam(
                "vllm:generation_tokens",
                MetricType::Counter,
                vec![series(&[], counter(40.0, 0))],
            ),
            fam(
                "vllm:num_requests_waiting",
                MetricType::Gauge,
                vec![series(&[], gauge(1.0, 0.0, 2.0, None))],
            ),
        ],
    );
    let v = server_view(&t).unwrap();
    assert_eq!(
        (v.output_tokens, v.output_tokens_per_s),
        (Some(40.0), Some(2.0))
    );
    assert_eq!(v.waiting.unwrap().time_weighted_mean, Some(1.0));
}

#[test]
fn tgi_output_tokens_are_its_histogram_sum() {
    let t = target(
        TargetKind::Server,
        vec![
            fam(
                "tgi_request_generated_tokens",
                MetricType::Histogram,
                vec![series(&[], hist(&[(100.0, 10.0), (INF, 20.0)], 5000.0))],
            ),
            fam(
                "tgi_queue_size",
                MetricType::Gauge,
                vec![series(&[], gauge(2.0, 0.0, 4.0, None))],
            ),
        ],
    );
    let v = server_view(&t).unwrap();
    assert_eq!(v.server, crate::names::ServerKind::Tgi);
    assert_eq!(
        (v.output_tokens, v.output_tokens_per_s),
        (Some(5000.0), Some(250.0))
    );
}

#[test]
fn triton_latency_is_cumulative_time_over_requests() {
    let t = target(
        TargetKind::Server,
        vec![
            fam(
                "nv_inference_request_success",
                MetricType::Counter,
                vec![series(&[], counter(50.0, 0))],
            ),
            fam(
                "nv_inference_request_duration_us",
                MetricType::Counter,
                vec![series(&[], counter(2_500_000.0, 0))],
            ),
        ],
    );
    let v = server_view(&t).unwrap();
    let e = v.e2e.unwrap();
    // 2.5e6 µs over 50 requests = 50 ms.
    assert_eq!(
        (e.count, e.mean_ms, e.p50_estimate_ms),
        (50.0, Some(50.0), None)
    );
}

#[test]
fn no_known_names_no_server_view() {
    let t = target(
        TargetKind::Gpu,
        vec![fam(
            "DCGM_FI_DEV_GPU_UTIL",
            MetricType::Gauge,
            vec![series(&[], gauge(1.0, 0.0, 2.0, None))],
        )],
    );
    assert!(server_view(&t).is_none());
}
