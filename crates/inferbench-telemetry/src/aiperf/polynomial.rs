//! AIPerf 0.13's "polynomial histogram" percentile estimator
//! (`server_metrics/histogram_percentiles.py`), reproduced step for step: it learns a mean
//! for each bucket from the scrape intervals in which only that bucket grew, places
//! synthetic observations inside each bucket (by the learned mean and spread when known),
//! spreads the `+Inf` bucket's share of the sum beyond the largest finite bound, nudges the
//! finite observations toward the exact total sum, and takes numpy percentiles of the result.
//! These are AIPerf's numbers, not Prometheus's `histogram_quantile` (which is
//! `crate::quantile`); label them as such.

use super::numpy;
use super::series::le_value;

/// Above this many observations AIPerf scales every bucket count down proportionally.
const MAX_OBSERVATIONS: f64 = 100_000.0;

/// What AIPerf learned about one bucket from the intervals in which only it grew.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BucketStatistics {
    pub observation_count: i64,
    pub weighted_mean_sum: f64,
    pub observed_means: Vec<f64>,
}

impl BucketStatistics {
    pub fn estimated_mean(&self) -> Option<f64> {
        (self.observation_count != 0)
            .then(|| self.weighted_mean_sum / self.observation_count as f64)
    }

    /// Sample variance (ddof = 1) of the per-interval means, from three intervals up.
    pub fn estimated_variance(&self) -> Option<f64> {
        (self.observed_means.len() >= 3).then(|| numpy::var(&self.observed_means, 1))
    }

    fn record(&mut self, mean: f64, count: i64) {
        self.observation_count += count;
        self.weighted_mean_sum += mean * count as f64;
        self.observed_means.push(mean);
    }
}

/// AIPerf's `accumulate_bucket_statistics`: over consecutive samples from `start`, every
/// interval whose count grew and in which exactly one bucket (non-cumulative) grew teaches
/// that bucket the interval's mean Δsum/Δcount. `les` are the bucket bounds as written, in
/// numeric order; `buckets[i]` the cumulative counts of sample i.
pub fn accumulate_bucket_statistics(
    sums: &[f64],
    counts: &[f64],
    les: &[String],
    buckets: &[Vec<f64>],
    start: usize,
) -> Vec<(String, BucketStatistics)> {
    let mut out: Vec<(String, BucketStatistics)> = Vec::new();
    if sums.len() <= start + 1 {
        return out;
    }
    for i in start..sums.len() - 1 {
        let count_delta = (counts[i + 1] - counts[i]) as i64;
        let sum_delta = sums[i + 1] - sums[i];
        if count_delta <= 0 {
            continue;
        }
        let cum: Vec<f64> = (0..les.len())
            .map(|j| (buckets[i + 1][j] - buckets[i][j]).max(0.0))
            .collect();
        let per: Vec<f64> = (0..les.len())
            .map(|j| if j == 0 { cum[0] } else { cum[j] - cum[j - 1] }.max(0.0))
            .collect();
        let active: Vec<usize> = (0..les.len()).filter(|&j| per[j] > 0.0).collect();
        if let [j] = active[..] {
            let mean = sum_delta / count_delta as f64;
            let le = &les[j];
            match out.iter_mut().find(|(l, _)| l == le) {
                Some((_, s)) => s.record(mean, count_delta),
                None => {
                    let mut s = BucketStatistics::default();
                    s.record(mean, count_delta);
                    out.push((le.clone(), s));
                }
            }
        }
    }
    out
}

/// AIPerf's `compute_estimated_percentiles`: p1…p99 from the window's cumulative bucket
/// deltas (`le` → count, in `le` order), the learned bucket statistics, and the window's
/// exact sum and count. None where AIPerf gives none (no observations, a non-finite or
/// negative sum, no finite bucket); all zeros when the sum is 0.
pub fn estimated_percentiles(
    bucket_deltas: &[(String, f64)],
    stats: &[(String, BucketStatistics)],
    total_sum: f64,
    total_count: i64,
) -> Option<[f64; 9]> {
    if total_count <= 0 || bucket_deltas.is_empty() {
        return None;
    }
    if !total_sum.is_finite() || total_sum < 0.0 {
        return None;
    }
    if total_sum == 0.0 {
        return Some([0.0; 9]);
    }
    let finite: Vec<&(String, f64)> = bucket_deltas.iter().filter(|(l, _)| l != "+Inf").collect();
    if finite.is_empty() {
        return None;
    }
    let max_finite = finite
        .iter()
        .map(|(l, _)| le_value(l))
        .fold(f64::NEG_INFINITY, f64::max);
    let mut per = per_bucket(bucket_deltas);
    let mut total_sum = total_sum;
    let total_obs: f64 = per.iter().map(|(_, c)| c).sum();
    if total_obs > MAX_OBSERVATIONS {
        let ratio = MAX_OBSERVATIONS / total_obs;
        for (_, c) in per.iter_mut() {
            *c *= ratio;
        }
        total_sum *= ratio;
    }
    let raw_inf = per
        .iter()
        .find(|(l, _)| l == "+Inf")
        .map_or(0.0, |(_, c)| *c);
    let inf_count = if raw_inf > 0.0 {
        raw_inf.ceil() as usize
    } else {
        0
    };
    let finite_sum = estimated_finite_sum(&per, stats);
    let inf_obs = inf_observations(total_sum, finite_sum, inf_count, max_finite);
    let inf_sum = if inf_obs.is_empty() {
        0.0
    } else {
        numpy::sum(&inf_obs)
    };
    let mut all = observations_with_sum(&per, total_sum - inf_sum, stats);
    all.extend(inf_obs);
    if all.is_empty() {
        return None;
    }
    Some(numpy::percentiles(&all))
}

fn learned<'a>(stats: &'a [(String, BucketStatistics)], le: &str) -> Option<&'a BucketStatistics> {
    stats.iter().find(|(l, _)| l == le).map(|(_, s)| s)
}

/// Cumulative → per-bucket counts: finite buckets in numeric order, then `+Inf`.
fn per_bucket(cumulative: &[(String, f64)]) -> Vec<(String, f64)> {
    let mut finite: Vec<&(String, f64)> = cumulative.iter().filter(|(l, _)| l != "+Inf").collect();
    finite.sort_by(|a, b| le_value(&a.0).total_cmp(&le_value(&b.0)));
    let mut out = Vec::new();
    let mut prev = 0.0;
    for (le, c) in finite {
        out.push((le.clone(), c - prev));
        prev = *c;
    }
    if let Some((_, c)) = cumulative.iter().find(|(l, _)| l == "+Inf") {
        out.push(("+Inf".to_string(), c - prev));
    }
    out
}

/// A finite bucket's bounds: the previous finite bound (0 for the first) and its own.
fn bounds(sorted_finite: &[&str], le: &str) -> (f64, f64) {
    let idx = sorted_finite.iter().position(|l| *l == le).unwrap_or(0);
    let lower = if idx == 0 {
        0.0
    } else {
        le_value(sorted_finite[idx - 1])
    };
    (lower, le_value(le))
}

fn sorted_finite(per: &[(String, f64)]) -> Vec<&str> {
    let mut v: Vec<&str> = per
        .iter()
        .filter(|(l, _)| l != "+Inf")
        .map(|(l, _)| l.as_str())
        .collect();
    v.sort_by(|a, b| le_value(a).total_cmp(&le_value(b)));
    v
}

/// Σ count × (learned mean when inside the bucket, else its midpoint) over finite buckets.
fn estimated_finite_sum(per: &[(String, f64)], stats: &[(String, BucketStatistics)]) -> f64 {
    let sorted = sorted_finite(per);
    let mut total = 0.0;
    for (le, count) in per {
        if le == "+Inf" || *count <= 0.0 {
            continue;
        }
        let (lower, upper) = bounds(&sorted, le);
        let mean = match learned(stats, le).and_then(BucketStatistics::estimated_mean) {
            Some(m) if lower < m && m < upper => m,
            _ => (lower + upper) / 2.0,
        };
        total += count * mean;
    }
    total
}

/// The `+Inf` bucket's observations: spread evenly from the largest finite bound up to
/// where their mean matches the sum left over by the finite buckets (at least 1.5× it).
fn inf_observations(total_sum: f64, finite_sum: f64, n: usize, max_finite: f64) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    let left = total_sum - finite_sum;
    let mut avg = if left <= 0.0 {
        max_finite * 1.5
    } else {
        left / n as f64
    };
    if left > 0.0 && avg <= max_finite {
        avg = max_finite * 1.5;
    }
    let mut upper = 2.0 * avg - max_finite;
    if upper <= max_finite {
        upper = max_finite * 2.0;
    }
    if n == 1 {
        return vec![avg];
    }
    numpy::linspace(max_finite, upper, n)
}

fn fractions(n: usize) -> impl Iterator<Item = f64> {
    (0..n).map(move |i| (i as f64 + 0.5) / n as f64)
}

/// Two point masses (the lower bound and one above the mean) with the learned mean and
/// variance, for a bucket whose observations are tightly clustered.
fn f3(n: usize, lower: f64, upper: f64, mean: f64, variance: f64) -> Vec<f64> {
    let x = lower;
    let a = if mean - x > 0.0 {
        mean + variance / (mean - x)
    } else {
        upper
    };
    let a = numpy::clip(a, lower, upper);
    let denom = variance + (mean - x) * (mean - x);
    let p_x = if denom > 0.0 { variance / denom } else { 0.5 };
    let p_x = numpy::clip(p_x, 0.0, 1.0);
    let n_x = (n as f64 * p_x) as usize;
    (0..n).map(|i| if i < n_x { x } else { a }).collect()
}

/// Observations spread ±3σ (capped at the bounds) around the learned mean.
fn variance_aware(n: usize, lower: f64, upper: f64, mean: f64, std: f64) -> Vec<f64> {
    let (to_lower, to_upper) = if std > 0.0 {
        ((mean - lower) / std, (upper - mean) / std)
    } else {
        (3.0, 3.0)
    };
    let (to_lower, to_upper) = (to_lower.min(3.0), to_upper.min(3.0));
    fractions(n)
        .map(|f| {
            let p = if f < 0.5 {
                mean - to_lower * std * (1.0 - 2.0 * f)
            } else {
                mean + to_upper * std * (2.0 * f - 1.0)
            };
            numpy::clip(p, lower, upper)
        })
        .collect()
}

/// Half uniform (shifted to the mean), half variance-aware.
fn blended(n: usize, lower: f64, upper: f64, mean: f64, std: f64) -> Vec<f64> {
    let width = upper - lower;
    let shift = mean - (lower + upper) / 2.0;
    let var = variance_aware(n, lower, upper, mean, std);
    fractions(n)
        .zip(var)
        .map(|(f, v)| {
            let u = numpy::clip(lower + width * f + shift, lower, upper);
            numpy::clip((1.0 - 0.5) * u + 0.5 * v, lower, upper)
        })
        .collect()
}

/// The finite buckets' synthetic observations, then shifted (at most 40 % of a bucket's
/// width) so that their sum approaches `target_sum`.
fn observations_with_sum(
    per: &[(String, f64)],
    target_sum: f64,
    stats: &[(String, BucketStatistics)],
) -> Vec<f64> {
    let sorted = sorted_finite(per);
    let count_of = |le: &str| per.iter().find(|(l, _)| l == le).map_or(0.0, |(_, c)| *c);
    let mut counts: Vec<(&str, f64)> = per
        .iter()
        .filter(|(l, _)| l != "+Inf")
        .map(|(l, c)| (l.as_str(), *c))
        .collect();
    let mut target_sum = target_sum;
    let mut total: f64 = counts.iter().map(|(_, c)| c).sum();
    if total > MAX_OBSERVATIONS {
        let ratio = MAX_OBSERVATIONS / total;
        for (_, c) in counts.iter_mut() {
            *c *= ratio;
        }
        target_sum *= ratio;
        total = counts.iter().map(|(_, c)| c).sum();
    }
    let get = |le: &str| {
        counts
            .iter()
            .find(|(l, _)| *l == le)
            .map_or(count_of(le), |(_, c)| *c)
    };
    let avg = if total > 0.0 { target_sum / total } else { 0.0 };
    let mut dominant = None;
    if total > 0.0 {
        let max_count = counts
            .iter()
            .map(|(_, c)| *c)
            .fold(f64::NEG_INFINITY, f64::max);
        if max_count / total >= 0.95 {
            dominant = counts
                .iter()
                .find(|(_, c)| *c == max_count)
                .map(|(l, _)| *l);
        }
    }
    let ints: Vec<(&str, usize)> = sorted
        .iter()
        .map(|l| (*l, get(l).max(0.0) as usize))
        .collect();
    let total_obs: usize = ints.iter().map(|(_, c)| c).sum();
    if total_obs == 0 {
        return Vec::new();
    }
    let mut obs: Vec<f64> = Vec::with_capacity(total_obs);
    let mut ranges: Vec<(usize, usize, f64, f64)> = Vec::new();
    for (le, n) in ints {
        if n == 0 {
            continue;
        }
        let (lower, upper) = bounds(&sorted, le);
        let width = upper - lower;
        let mid = (lower + upper) / 2.0;
        let start = obs.len();
        let s = learned(stats, le);
        let learned_mean = s
            .and_then(BucketStatistics::estimated_mean)
            .filter(|m| lower < *m && *m < upper);
        let learned_var = s.and_then(BucketStatistics::estimated_variance);
        match (learned_mean, learned_var) {
            (Some(m), Some(v)) if v > 0.0 => {
                let std = v.sqrt();
                let spread = (4.0 * std) / width;
                let offset = (m - mid).abs() / width;
                if spread < 0.01 {
                    obs.extend(f3(n, lower, upper, m, v));
                } else if spread < 0.2 && offset < 0.3 {
                    obs.extend(blended(n, lower, upper, m, std));
                } else {
                    obs.extend(variance_aware(n, lower, upper, m, std));
                }
            }
            _ => {
                let mut center = learned_mean.unwrap_or(mid);
                if dominant == Some(le) && lower < avg && avg < upper {
                    center = avg;
                }
                let shift = center - mid;
                obs.extend(
                    fractions(n).map(|f| numpy::clip(lower + width * f + shift, lower, upper)),
                );
            }
        }
        ranges.push((start, n, lower, upper));
    }
    let generated = numpy::sum(&obs);
    if generated <= 0.0 || target_sum <= 0.0 {
        return obs;
    }
    let gap = target_sum - generated;
    if gap.abs() / target_sum < 0.001 {
        return obs;
    }
    for (start, n, lower, upper) in ranges {
        let slice = &mut obs[start..start + n];
        let weight = numpy::sum(slice) / generated;
        let per_obs = gap * weight / n as f64;
        let max_shift = (upper - lower) * 0.4;
        let shift = numpy::clip(per_obs, -max_shift, max_shift);
        for x in slice.iter_mut() {
            *x = numpy::clip(*x + shift, lower, upper);
        }
    }
    obs
}
