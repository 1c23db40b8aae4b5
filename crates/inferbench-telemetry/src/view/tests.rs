//! Hand-computed views over hand-built window analyses.

use super::*;
use crate::expo::MetricType;
use crate::quantile::Bucket;
use crate::scrape::{TargetInfo, TargetKind, TargetOrigin};
use crate::window::{
    Bracket, BracketScrape, CounterStats, FamilyAnalysis, GaugeStats, HistogramStats,
    SeriesAnalysis, SeriesStats,
};

pub(super) fn target(kind: TargetKind, families: Vec<FamilyAnalysis>) -> TargetAnalysis {
    TargetAnalysis {
        target: TargetInfo {
            index: 3,
            kind,
            origin: TargetOrigin::Flag,
            url: "http://h:9400/metrics".into(),
            interval_ns: 1_000_000_000,
        },
        scrapes: 10,
        failed: 0,
        unparsable: 0,
        duplicates: 4,
        // 20 s between the bracketing scrapes.
        bracket: Some(Bracket {
            start: BracketScrape { seq: 0, t_ns: 0 },
            end: BracketScrape {
                seq: 9,
                t_ns: 20_000_000_000,
            },
            closed: true,
        }),
        families,
        warnings: vec![],
    }
}

pub(super) fn fam(name: &str, kind: MetricType, series: Vec<SeriesAnalysis>) -> FamilyAnalysis {
    FamilyAnalysis {
        name: name.into(),
        kind,
        help: None,
        series,
        total: None,
    }
}

pub(super) fn series(labels: &[(&str, &str)], stats: SeriesStats) -> SeriesAnalysis {
    let mut labels: Vec<(String, String)> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    labels.sort();
    SeriesAnalysis { labels, stats }
}

pub(super) fn counter(increase: f64, resets: u32) -> SeriesStats {
    SeriesStats::Counter(CounterStats {
        increase,
        resets,
        ..CounterStats::default()
    })
}

pub(super) fn gauge(tw: f64, min: f64, max: f64, integral: Option<f64>) -> SeriesStats {
    SeriesStats::Gauge(GaugeStats {
        samples: 2,
        time_weighted_mean: Some(tw),
        min: Some(min),
        max: Some(max),
        change: Some(max - min),
        integral,
        ..GaugeStats::default()
    })
}

const A: [(&str, &str); 3] = [("UUID", "GPU-a"), ("gpu", "0"), ("modelName", "H100")];
const B: [(&str, &str); 3] = [("UUID", "GPU-b"), ("gpu", "1"), ("modelName", "H100")];

fn dcgm(energy_b: bool) -> TargetAnalysis {
    let mut energy = vec![series(&A, counter(5_000_000.0, 0))];
    if energy_b {
        energy.push(series(&B, counter(3_000_000.0, 0)));
    }
    target(
        TargetKind::Gpu,
        vec![
            fam(
                "DCGM_FI_DEV_POWER_USAGE",
                MetricType::Gauge,
                vec![
                    series(&A, gauge(250.0, 200.0, 300.0, Some(4_900.0))),
                    series(&B, gauge(150.0, 100.0, 160.0, Some(2_950.0))),
                ],
            ),
            fam(
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                MetricType::Counter,
                energy,
            ),
            fam(
                "DCGM_FI_DEV_XID_ERRORS",
                MetricType::Gauge,
                vec![
                    series(&A, gauge(0.0, 0.0, 0.0, None)),
                    series(&B, gauge(10.0, 0.0, 43.0, None)),
                ],
            ),
        ],
    )
}

#[test]
fn two_gpus_energy_is_summed_from_their_counters() {
    let v = gpu_view(&dcgm(true)).unwrap();
    assert_eq!(v.gpus.len(), 2);
    let (a, b) = (&v.gpus[0], &v.gpus[1]);
    assert_eq!(
        (a.uuid.as_deref(), a.index.as_deref()),
        (Some("GPU-a"), Some("0"))
    );
    assert_eq!(a.model.as_deref(), Some("H100"));
    // 5e6 mJ and 3e6 mJ.
    assert_eq!((a.energy_j, b.energy_j), (Some(5_000.0), Some(3_000.0)));
    assert_eq!(v.energy_j, Some(8_000.0));
    assert_eq!(v.energy_source, Some(EnergySource::Counter));
    assert_eq!(a.power_w.unwrap().time_weighted_mean, Some(250.0));
    assert_eq!((a.xid_changed, b.xid_changed), (false, true));
    assert_eq!(v.duplicate_fraction, 0.4);
}

#[test]
fn without_every_counter_every_gpu_integrates_power() {
    let v = gpu_view(&dcgm(false)).unwrap();
    assert_eq!(v.energy_source, Some(EnergySource::PowerIntegral));
    assert_eq!(v.gpus[0].energy_j, Some(4_900.0));
    assert_eq!(v.energy_j, Some(7_850.0));
}

#[test]
fn a_server_target_has_no_gpu_view() {
    let t = target(
        TargetKind::Server,
        vec![fam(
            "vllm:x",
            MetricType::Counter,
            vec![series(&[], counter(1.0, 0))],
        )],
    );
    assert!(gpu_view(&t).is_none());
}

fn work() -> ClientWork {
    ClientWork {
        duration_s: 100.0,
        output_tokens: 40_000.0,
        input_tokens: 60_000.0,
        requests: 200.0,
        output_tokens_per_s: 400.0,
        server_output_tokens: Some(32_000.0),
    }
}

#[test]
fn energy_per_token_by_the_reference_steps() {
    let v = gpu_view(&dcgm(true)).unwrap();
    // The same GPUs seen by a second exporter (9400 and 9401) count once.
    let e = efficiency(&[v.clone(), v], &work()).unwrap();
    assert_eq!(e.gpus, vec!["GPU-a".to_string(), "GPU-b".to_string()]);
    assert_eq!(e.energy_j, 8_000.0);
    // P̄ = 8000 J / 100 s.
    assert_eq!(e.mean_power_w, 80.0);
    // 8000 J × 1000 / 40 000 tokens; / 100 000 tokens.
    assert_eq!(e.energy_per_output_token_mj, Some(200.0));
    assert_eq!(e.energy_per_total_token_mj, Some(80.0));
    assert_eq!(e.output_tokens_per_joule, Some(5.0));
    assert_eq!(e.energy_per_request_j, Some(40.0));
    // 400 tok/s / 80 W.
    assert_eq!(e.output_tps_per_watt, Some(5.0));
    // 8000 J × 1000 / 32 000 server tokens.
    assert_eq!(e.energy_per_server_output_token_mj, Some(250.0));
}

#[test]
fn no_energy_is_no_efficiency_and_zero_counts_give_none() {
    let t = target(
        TargetKind::Gpu,
        vec![fam(
            "DCGM_FI_DEV_GPU_UTIL",
            MetricType::Gauge,
            vec![series(&A, gauge(50.0, 0.0, 100.0, Some(1.0)))],
        )],
    );
    let v = gpu_view(&t).unwrap();
    assert_eq!((v.energy_j, v.energy_source), (None, None));
    assert!(efficiency(&[v], &work()).is_none());
    let w = ClientWork {
        server_output_tokens: None,
        ..ClientWork::default()
    };
    let e = efficiency(&[gpu_view(&dcgm(true)).unwrap()], &w).unwrap();
    assert_eq!(e.mean_power_w, 0.0);
    assert_eq!(
        (
            e.energy_per_output_token_mj,
            e.output_tps_per_watt,
            e.energy_per_request_j
        ),
        (None, None, None)
    );
    assert_eq!(e.energy_per_server_output_token_mj, None);
}

/// A histogram series' window increases (buckets by bound) with its own quantiles marked
/// present (the window analysis leaves them empty only when a bucket fell).
pub(super) fn hist(buckets: &[(f64, f64)], sum: f64) -> SeriesStats {
    let count = buckets.last().unwrap().1;
    SeriesStats::Histogram(HistogramStats {
        buckets: buckets
            .iter()
            .map(|&(le, count)| Bucket { le, count })
            .collect(),
        count,
        sum,
        mean: Some(sum / count),
        resets: 0,
        quantiles: vec![(
            0.5,
            crate::quantile::Estimate {
                value: 0.0,
                forced_monotonic: false,
            },
        )],
    })
}
