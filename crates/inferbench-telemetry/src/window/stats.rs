//! Gauge statistics over a window's samples: time-weighted and by sample.

use super::GaugeStats;

/// numpy's default `percentile` (linear interpolation between order statistics):
/// rank `q·(n−1)` into the sorted values. `sorted` must be ascending and non-empty.
pub(crate) fn percentile_linear(sorted: &[f64], q: f64) -> f64 {
    let rank = q * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

/// Σ v_i·(t_{i+1}−t_i) / Σ(t_{i+1}−t_i) where each sample holds until the next and the last
/// holds until `end_ns`. The span starts at the first sample (what the gauge was before it is
/// not in the window's samples). All samples at one instant (no span): their plain mean.
pub(crate) fn time_weighted_mean(samples: &[(u64, f64)], end_ns: u64) -> Option<f64> {
    let (mut num, mut den) = (0.0, 0.0);
    for (i, &(t, v)) in samples.iter().enumerate() {
        let next = samples.get(i + 1).map_or(end_ns, |s| s.0);
        let dt = next.saturating_sub(t) as f64;
        num += v * dt;
        den += dt;
    }
    if samples.is_empty() {
        None
    } else if den > 0.0 {
        Some(num / den)
    } else {
        Some(samples.iter().map(|s| s.1).sum::<f64>() / samples.len() as f64)
    }
}

/// The statistics of a gauge's samples `(t_ns, v)` in time order, all inside the window
/// ending at `end_ns`; `excluded` counts the non-finite and blank ones left out before.
pub(crate) fn gauge_stats(samples: &[(u64, f64)], excluded: u64, end_ns: u64) -> GaugeStats {
    let n = samples.len();
    let mut out = GaugeStats {
        samples: n as u64 + excluded,
        non_finite: excluded,
        ..GaugeStats::default()
    };
    if n == 0 {
        return out;
    }
    let mut sorted: Vec<f64> = samples.iter().map(|s| s.1).collect();
    sorted.sort_by(f64::total_cmp);
    let mean = sorted.iter().sum::<f64>() / n as f64;
    out.time_weighted_mean = time_weighted_mean(samples, end_ns);
    out.mean = Some(mean);
    out.min = sorted.first().copied();
    out.max = sorted.last().copied();
    out.std = (n > 1).then(|| {
        let ss: f64 = sorted.iter().map(|v| (v - mean) * (v - mean)).sum();
        (ss / (n - 1) as f64).sqrt()
    });
    out.p50 = Some(percentile_linear(&sorted, 0.5));
    out.p90 = Some(percentile_linear(&sorted, 0.9));
    out.p99 = Some(percentile_linear(&sorted, 0.99));
    out.change = Some(samples[n - 1].1 - samples[0].1);
    out.integral = (n > 1).then(|| {
        samples
            .windows(2)
            .map(|w| (w[0].1 + w[1].1) / 2.0 * w[1].0.saturating_sub(w[0].0) as f64 / 1e9)
            .sum()
    });
    out
}
