//! Hand-computed checks of AIPerf's arithmetic (the parity with real AIPerf files is
//! `tests/aiperf_parity.rs`).

use std::collections::BTreeSet;

use super::csv::{endpoint_display, order_of};
use super::json::iso_local;
use super::series::{Kind, Phase, Series, phase_of};
use super::stats::{Range, Stats, compute};
use super::*;
use crate::scrape::{
    ScrapeLine, ScrapeLog, ScrapesHeader, TargetInfo, TargetKind, TargetOrigin, Trigger,
};
use crate::window::{Window, Windows};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn numpy_percentiles_interpolate_linearly_between_ranks() {
    let p = numpy::percentiles(&[4.0, 1.0, 3.0, 2.0]);
    // virtual index (n−1)·q: 0.03 → 1.03, 1.5 → 2.5, 2.97 → 3.97.
    assert!(close(p[0], 1.03), "{}", p[0]);
    assert!(close(p[4], 2.5));
    assert!(close(p[8], 3.97), "{}", p[8]);
    assert_eq!(numpy::percentiles(&[7.0]), [7.0; 9]);
}

#[test]
fn numpy_std_and_linspace() {
    // Deviations from the mean 5: 9,1,1,1,0,0,4,16 → 32 / 7.
    let s = numpy::std(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0], 1);
    assert!(close(s, (32.0f64 / 7.0).sqrt()));
    assert_eq!(
        numpy::linspace(1.0, 2.0, 5),
        vec![1.0, 1.25, 1.5, 1.75, 2.0]
    );
    assert_eq!(numpy::median_i64(&[4, 1, 3, 2]), 2.5);
}

fn deltas(v: &[(&str, f64)]) -> Vec<(String, f64)> {
    v.iter().map(|(l, c)| (l.to_string(), *c)).collect()
}

#[test]
fn estimator_fallbacks() {
    let b = deltas(&[("1", 2.0), ("+Inf", 2.0)]);
    assert_eq!(estimated_percentiles(&b, &[], 0.0, 2), Some([0.0; 9]));
    assert_eq!(estimated_percentiles(&b, &[], -1.0, 2), None);
    assert_eq!(estimated_percentiles(&b, &[], f64::NAN, 2), None);
    assert_eq!(estimated_percentiles(&b, &[], 1.0, 0), None);
    assert_eq!(
        estimated_percentiles(&deltas(&[("+Inf", 2.0)]), &[], 1.0, 2),
        None
    );
}

#[test]
fn estimator_spreads_a_dominant_bucket_around_the_mean() {
    // 4 observations in (0, 1], sum 2: the mean 0.5 is the midpoint, so they sit at
    // 0.125, 0.375, 0.625, 0.875 and already sum to 2.
    let b = deltas(&[("1", 4.0), ("+Inf", 4.0)]);
    let p = estimated_percentiles(&b, &[], 2.0, 4).unwrap();
    assert!(close(p[0], 0.125 + 0.25 * 0.03));
    assert!(close(p[3], 0.375 - 0.25 * 0.25));
    assert!(close(p[4], 0.5));
}

#[test]
fn estimator_puts_the_inf_bucket_at_the_leftover_mean() {
    // 2 in (0, 1] estimated at their midpoint (sum 1), so the one +Inf observation carries
    // the other 5 of the sum 6: observations 0.25, 0.75, 5.
    let b = deltas(&[("1", 2.0), ("+Inf", 3.0)]);
    let p = estimated_percentiles(&b, &[], 6.0, 3).unwrap();
    assert!(close(p[4], 0.75));
    // virtual index 1.98 between 0.75 and 5.
    assert!(close(p[8], 5.0 - 4.25 * 0.02), "{}", p[8]);
}

fn learned(means: &[f64]) -> Vec<(String, BucketStatistics)> {
    let mut s = BucketStatistics::default();
    for m in means {
        s.observation_count += 1;
        s.weighted_mean_sum += m;
        s.observed_means.push(*m);
    }
    vec![("1".to_string(), s)]
}

#[test]
fn estimator_uses_a_learned_spread() {
    // Learned means 0.4, 0.5, 0.6: mean 0.5, std 0.1; 4σ/width = 0.4 → spread ±3σ:
    // 0.5 ∓ 0.3·(1 − 2f) at f = 1/8, 3/8, 5/8, 7/8 → 0.275, 0.425, 0.575, 0.725.
    let b = deltas(&[("1", 4.0), ("+Inf", 4.0)]);
    let p = estimated_percentiles(&b, &learned(&[0.4, 0.5, 0.6]), 2.0, 4).unwrap();
    assert!(close(p[4], 0.5), "{}", p[4]);
    assert!(close(p[3], 0.425 - 0.15 * 0.25), "{}", p[3]);
    assert!(close(p[0], 0.275 + 0.15 * 0.03), "{}", p[0]);
}

#[test]
fn estimator_uses_two_point_masses_for_a_tight_bucket() {
    // Means 0.499, 0.5, 0.501 (σ = 0.001, 4σ/width < 1 %): mass at 0 with weight
    // var/(var + mean²) (none of 4 observations) and the rest at mean + var/mean.
    let means = [0.499, 0.5, 0.501];
    let mean = (0.499 + 0.5 + 0.501) / 3.0;
    let var = numpy::var(&means, 1);
    let b = deltas(&[("1", 4.0), ("+Inf", 4.0)]);
    let p = estimated_percentiles(&b, &learned(&means), 2.0, 4).unwrap();
    assert!(close(p[4], mean + var / mean), "{}", p[4]);
    assert!(close(p[0], p[8]));
}

#[test]
fn bucket_statistics_learn_from_single_bucket_intervals() {
    let les: Vec<String> = ["1", "2", "+Inf"].map(String::from).to_vec();
    let counts = [0.0, 2.0, 3.0, 5.0];
    let sums = [0.0, 1.0, 1.6, 2.6];
    // Interval 1: 2 in bucket 1 (mean 0.5); 2: 1 in bucket 2 (mean 0.6); 3: three buckets.
    let buckets = vec![
        vec![0.0, 0.0, 0.0],
        vec![2.0, 2.0, 2.0],
        vec![2.0, 3.0, 3.0],
        vec![3.0, 4.0, 5.0],
    ];
    let s = accumulate_bucket_statistics(&sums, &counts, &les, &buckets, 0);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].0, "1");
    assert_eq!(s[0].1.estimated_mean(), Some(0.5));
    assert_eq!(s[0].1.observation_count, 2);
    assert_eq!(s[1].0, "2");
    assert!(close(s[1].1.estimated_mean().unwrap(), 0.6));
    assert_eq!(s[1].1.estimated_variance(), None, "fewer than 3 intervals");
    assert!(accumulate_bucket_statistics(&sums, &counts, &les, &buckets, 3).is_empty());
}

fn scalar(ts: &[i64], values: &[f64]) -> Series {
    Series {
        ts: ts.to_vec(),
        phase: vec![Phase::Profiling; ts.len()],
        values: values.to_vec(),
        ..Default::default()
    }
}

#[test]
fn a_counter_total_is_last_minus_reference_clamped() {
    let r = Range {
        start: 2_000_000_000,
        end: 4_000_000_000,
    };
    let s = scalar(
        &[1_000_000_000, 2_000_000_000, 3_000_000_000],
        &[10.0, 15.0, 30.0],
    );
    match compute(Kind::Counter, &s, r) {
        // Reference 10 at t = 1 s: 20 over 2 s.
        Some(Stats::Counter { total, rate, .. }) => assert_eq!((total, rate), (20.0, 10.0)),
        x => panic!("{x:?}"),
    }
    let s = scalar(
        &[1_000_000_000, 2_000_000_000, 3_000_000_000],
        &[10.0, 20.0, 5.0],
    );
    match compute(Kind::Counter, &s, r) {
        Some(Stats::Counter {
            total, raw, resets, ..
        }) => assert_eq!((total, raw, resets), (0.0, -5.0, 1)),
        x => panic!("{x:?}"),
    }
}

#[test]
fn a_histogram_with_a_bucket_going_down_loses_its_buckets() {
    let s = Series {
        ts: vec![1, 2, 3],
        phase: vec![Phase::Profiling; 3],
        sums: vec![1.0, 2.0, 9.0],
        counts: vec![5.0, 6.0, 8.0],
        les: vec!["1".into(), "+Inf".into()],
        buckets: vec![vec![5.0, 5.0], vec![6.0, 6.0], vec![2.0, 8.0]],
        ..Default::default()
    };
    match compute(Kind::Histogram, &s, Range { start: 2, end: 3 }) {
        Some(Stats::Histogram {
            count,
            rest: Some(r),
            buckets,
            ..
        }) => {
            // Reference is the sample at t = 1: 3 observations, sum 8.
            assert_eq!(count, 3);
            assert_eq!(r.sum, 8.0);
            assert_eq!(buckets, None);
            assert_eq!(r.estimates, None);
        }
        x => panic!("{x:?}"),
    }
}

#[test]
fn units_follow_the_description_then_the_suffix() {
    let u = |n: &str, d: &str| infer_unit(n, d);
    assert_eq!(
        u("vllm:e2e_request_latency_seconds", "Histogram of latency."),
        Some("seconds")
    );
    assert_eq!(
        u(
            "vllm:kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage."
        ),
        Some("ratio")
    );
    assert_eq!(u("x", "Utilization (0-100)"), Some("percent"));
    assert_eq!(
        u("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."),
        Some("megabytes")
    );
    assert_eq!(
        u("x", "Time spent (in parsecs) waiting in seconds"),
        Some("seconds")
    );
    assert_eq!(u("vllm:num_requests_running", ""), Some("requests"));
    assert_eq!(
        u("io_bytes_total", ""),
        Some("bytes"),
        "longest suffix first"
    );
    assert_eq!(u("vllm:generation_tokens", ""), Some("tokens"));
    assert_eq!(u("foo_total", ""), Some("count"));
    assert_eq!(u("foo", ""), None);
}

#[test]
fn label_columns_group_co_occurring_labels_and_put_shared_ones_last() {
    let sets: Vec<BTreeSet<&str>> = vec![
        ["a", "b"].into_iter().collect(),
        ["b", "c"].into_iter().collect(),
        ["d"].into_iter().collect(),
    ];
    assert_eq!(order_of(&sets), ["a", "c", "b", "d"]);
    assert!(order_of(&[]).is_empty());
}

#[test]
fn times_and_endpoints_as_aiperf_writes_them() {
    assert_eq!(iso_local(0), "1970-01-01T00:00:00");
    // 2000-03-01T00:00:00Z is 951868800 s; one day earlier is the leap day.
    assert_eq!(
        iso_local(951_782_400_500_000_000),
        "2000-02-29T00:00:00.500000"
    );
    assert_eq!(
        endpoint_display("http://127.0.0.1:8000/metrics"),
        "127.0.0.1:8000"
    );
    assert_eq!(endpoint_display("https://h:9400/api/metrics"), "h:9400/api");
}

fn windows() -> Windows {
    Windows {
        profiling: Window {
            start_ns: 2_000_000_000,
            end_ns: 4_000_000_000,
        },
        warmup: Some(Window {
            start_ns: 1_000_000_000,
            end_ns: 1_500_000_000,
        }),
    }
}

fn meta<'a>(w: &'a Windows, cfg: &'a serde_json::Value) -> Meta<'a> {
    Meta {
        benchmark_id: "b1",
        anchor_unix_ns: 0,
        input_config: cfg,
        windows: w,
    }
}

#[test]
fn the_phase_of_a_scrape() {
    let w = windows();
    let cfg = serde_json::json!({});
    let m = meta(&w, &cfg);
    let at = |send_ns, trigger, phase: Option<&str>| ScrapeLine {
        send_ns,
        trigger,
        phase: phase.map(String::from),
        ..Default::default()
    };
    assert_eq!(
        phase_of(&at(1_200_000_000, Some(Trigger::Interval), None), &m),
        Phase::Warmup
    );
    assert_eq!(
        phase_of(&at(1_700_000_000, Some(Trigger::Interval), None), &m),
        Phase::None
    );
    assert_eq!(
        phase_of(&at(5_000_000_000, Some(Trigger::Interval), None), &m),
        Phase::Profiling
    );
    assert_eq!(
        phase_of(&at(0, Some(Trigger::End), None), &m),
        Phase::Profiling
    );
    // An explicit tag wins (AIPerf tags by the phase active when the scrape arrived).
    let tagged = at(2_100_000_000, Some(Trigger::PhaseEnd), Some("warmup"));
    assert_eq!(phase_of(&tagged, &m), Phase::Warmup);
}

fn log(kind: TargetKind, bodies: &[(u64, &str)]) -> ScrapeLog {
    ScrapeLog {
        header: ScrapesHeader {
            schema_version: 1,
            anchor_unix_ns: 0,
            targets: vec![TargetInfo {
                index: 0,
                kind,
                origin: TargetOrigin::Flag,
                url: "http://127.0.0.1:9/metrics".into(),
                interval_ns: 1_000_000_000,
            }],
        },
        scrapes: bodies
            .iter()
            .enumerate()
            .map(|(i, (t, b))| ScrapeLine {
                seq: i as u64,
                trigger: Some(Trigger::Interval),
                send_ns: *t,
                first_byte_ns: Some(*t),
                end_ns: *t + 1_000_000,
                wall_unix_ns: *t,
                status: Some(200),
                body: Some(b.to_string()),
                ..Default::default()
            })
            .collect(),
        end: None,
    }
}

const C: &str = "# HELP foo_total Things done.\n# TYPE foo_total counter\nfoo_total{a=\"x\"} ";

#[test]
fn a_small_run_exported_as_aiperf_would() {
    let w = windows();
    let cfg = serde_json::json!({"k": 1});
    let bodies = [
        (1_800_000_000, format!("{C}10\n# TYPE g gauge\ng 1\n")),
        (2_000_000_000, format!("{C}15\n# TYPE g gauge\ng 2\n")),
        (3_800_000_000, format!("{C}30\n# TYPE g gauge\ng 3\n")),
    ];
    let b: Vec<(u64, &str)> = bodies.iter().map(|(t, s)| (*t, s.as_str())).collect();
    let l = log(TargetKind::Server, &b);
    let e =
        server_metrics_export(&l, &crate::window::Analysis::default(), &meta(&w, &cfg)).unwrap();
    let j = &e.json;
    let keys: Vec<&str> = j.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "schema_version",
            "inferbench_version",
            "benchmark_id",
            "summary",
            "metrics_phase",
            "metrics",
            "input_config"
        ]
    );
    let foo = &j["metrics"]["foo"];
    assert_eq!(foo["type"], "counter");
    // The unit comes from the stored name, which has lost its `_total`: none here.
    assert!(foo.get("unit").is_none());
    let s = &foo["series"][0];
    assert_eq!(s["labels"], serde_json::json!({"a": "x"}));
    // Reference 10 (the scrape before the first profiling one) → 20 over 2 s.
    assert_eq!(s["stats"], serde_json::json!({"total": 20.0, "rate": 10.0}));
    // The gauge takes the two profiling samples: 2 and 3.
    assert_eq!(j["metrics"]["g"]["series"][0]["stats"]["avg"], 2.5);
    assert_eq!(j["metrics"]["g"]["type"], "gauge");
    assert_eq!(j["summary"]["start_time"], "1970-01-01T00:00:02");
    let info = &j["summary"]["endpoint_info"]["http://127.0.0.1:9/metrics"];
    assert_eq!(info["total_fetches"], 3);
    assert_eq!(info["avg_fetch_latency_ms"], 1.0);
    assert_eq!(info["median_update_interval_ms"], 1000.0);
    assert_eq!(j["input_config"], cfg);
    let lines: Vec<&str> = e.csv.split("\r\n").collect();
    assert!(e.csv.starts_with("# AIPerf Server Metrics Export (CSV)\n"));
    assert!(lines.contains(&"127.0.0.1:9,counter,foo,,20.0000,10.0000,,,,,x,Things done."));
    assert!(lines.contains(
        &"Endpoint,Type,Metric,Unit,total,rate,rate_avg,rate_min,rate_max,rate_std,a,Description"
    ));
}

#[test]
fn gpu_telemetry_lines_and_summary() {
    let w = windows();
    let cfg = serde_json::json!({});
    let body = |power: f64, energy: f64| {
        format!(
            "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\nDCGM_FI_DEV_POWER_USAGE{{gpu=\"0\",UUID=\"GPU-a\",modelName=\"H100\",Hostname=\"n1\"}} {power}\n\
             # TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu=\"0\",UUID=\"GPU-a\",modelName=\"H100\",Hostname=\"n1\"}} {energy}\n\
             # TYPE DCGM_FI_DEV_FB_USED gauge\nDCGM_FI_DEV_FB_USED{{gpu=\"0\",UUID=\"GPU-a\",modelName=\"H100\",Hostname=\"n1\"}} 1000\n"
        )
    };
    let (b0, b1, b2) = (body(50.0, 1e9), body(100.0, 1.2e9), body(200.0, 1.5e9));
    // The repeated body is a duplicate AIPerf drops.
    let l = log(
        TargetKind::Gpu,
        &[
            (1_000_000_000, &b0),
            (2_000_000_000, &b1),
            (2_500_000_000, &b1),
            (3_000_000_000, &b2),
        ],
    );
    let g = gpu_telemetry_export(&l, &crate::window::Analysis::default(), &meta(&w, &cfg)).unwrap();
    let lines: Vec<serde_json::Value> = g
        .jsonl
        .lines()
        .map(|s| serde_json::from_str(s).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[1]["timestamp_ns"], 2_001_000_000i64,
        "stamped at the scrape's end"
    );
    assert_eq!(lines[1]["telemetry_data"]["nvidia_power_usage"], 100.0);
    // MiB → GB and mJ → MJ.
    assert!(close(
        lines[1]["telemetry_data"]["nvidia_memory_used"]
            .as_f64()
            .unwrap(),
        1.048576
    ));
    assert!(close(
        lines[1]["telemetry_data"]["nvidia_energy_consumption"]
            .as_f64()
            .unwrap(),
        1.2
    ));
    let gpu = &g.telemetry_results["endpoints"]["127.0.0.1:9"]["gpus"]["gpu_0"];
    assert_eq!(gpu["gpu_uuid"], "GPU-a");
    assert_eq!(gpu["hostname"], "n1");
    let p = &gpu["metrics"]["nvidia_power_usage"];
    assert_eq!(
        (p["avg"].as_f64(), p["min"].as_f64(), p["max"].as_f64()),
        (Some(150.0), Some(100.0), Some(200.0))
    );
    assert!(close(p["std"].as_f64().unwrap(), 5000f64.sqrt()));
    assert_eq!(
        (p["count"].as_u64(), p["sum"].as_f64(), p["unit"].as_str()),
        (Some(2), Some(300.0), Some("W"))
    );
    // Energy: last 1.5 MJ minus the reference 1.0 MJ (the sample before the window).
    let e = &gpu["metrics"]["nvidia_energy_consumption"];
    assert!(close(e["avg"].as_f64().unwrap(), 0.5));
    assert_eq!(e.as_object().unwrap().len(), 2, "{e}");
}

#[test]
fn dropped_buckets_are_a_difference() {
    let w = windows();
    let cfg = serde_json::json!({});
    let h = |b1: u32, inf: u32, sum: f64| {
        format!(
            "# TYPE lat_seconds histogram\nlat_seconds_bucket{{le=\"1\"}} {b1}\nlat_seconds_bucket{{le=\"+Inf\"}} {inf}\nlat_seconds_count {inf}\nlat_seconds_sum {sum}\n"
        )
    };
    // After the restart the first bucket (6 → 1) is below the reference's 5.
    let bodies = [
        (1_800_000_000, h(5, 5, 2.0)),
        (2_000_000_000, h(6, 6, 2.5)),
        (3_800_000_000, h(1, 8, 20.0)),
    ];
    let b: Vec<(u64, &str)> = bodies.iter().map(|(t, s)| (*t, s.as_str())).collect();
    let l = log(TargetKind::Server, &b);
    let analysis = crate::window::analyze(&l, &w);
    let e = server_metrics_export(&l, &analysis, &meta(&w, &cfg)).unwrap();
    let s = &e.json["metrics"]["lat_seconds"]["series"][0];
    assert!(s.get("buckets").is_none(), "AIPerf omits them: {s}");
    assert!(s["stats"].get("p50_estimate").is_none());
    assert_eq!(s["stats"]["count"], 3, "8 − 5");
    let d = e
        .differences
        .iter()
        .find(|d| d.reason.starts_with("a bucket went down"))
        .expect("flagged");
    assert_eq!(
        (d.metric.as_str(), d.aiperf, d.exact),
        ("lat_seconds", 0.0, 2.0)
    );
}
