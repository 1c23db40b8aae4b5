//! A seeded bootstrap of the difference of a statistic between two independent samples
//! (design note §2.3): the percentile interval of `θ̂(candidate*) − θ̂(baseline*)` over `B`
//! resamples, each side resampled with replacement on its own.
//!
//! Population: the requests of one run per side, assumed independent (a bursty trace makes
//! the interval too narrow). The interval covers the difference of the two runs' population
//! statistics with about the stated confidence; it says nothing about run-to-run variation.
//!
//! Determinism: one `ChaCha8Rng::seed_from_u64(seed)` draws every resample in a fixed order
//! (baseline then candidate, resample by resample), so a seed reproduces the interval
//! exactly on any platform. A mean draws each side from its own stream of the seed
//! (`set_stream` 1 and 2), so its two sides can resample on two threads.
//!
//! Speed: a percentile is not resampled value by value. With the sample sorted, resample
//! order statistic `j` is `X₍⌈n·U₍ⱼ₎⌉₎` where `U₍ⱼ₎ ~ Beta(j, n − j + 1)` is the `j`-th order
//! statistic of `n` uniforms, and the next one is `U₍ⱼ₊₁₎ = U₍ⱼ₎ + (1 − U₍ⱼ₎)·(1 − V^{1/(n−j)})`
//! (the least of the `n − j` uniforms above it). This is the same distribution as sorting a
//! resample, at O(1) per resample after one sort. A mean resamples indices (O(n) each).

use super::level;
use crate::stats::percentile_linear;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Beta, Distribution};

/// The statistic compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Statistic {
    Mean,
    /// A percentile in `[0, 100]` with numpy's linear interpolation (`p = 99.0` for p99), the
    /// estimator AIPerf prints.
    Percentile(f64),
}

/// The scale of the difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// `θ̂_cand − θ̂_base`, in the values' unit.
    Linear,
    /// `ln θ̂_cand − ln θ̂_base`, a log ratio (for latency and throughput, with a relative
    /// margin); needs every resampled statistic to be positive.
    Log,
}

/// How to bootstrap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    pub statistic: Statistic,
    pub scale: Scale,
    /// `B`, the number of resamples (2 000–10 000).
    pub resamples: usize,
    pub seed: u64,
    /// Two-sided confidence of the percentile interval (0.90 for a TOST-style decision at
    /// α = 0.05).
    pub confidence: f64,
}

/// Result of [`difference`].
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The statistic of each full sample.
    pub baseline: f64,
    pub candidate: f64,
    /// The observed difference on the chosen scale.
    pub estimate: f64,
    /// Percentile interval `[q_{α/2}, q_{1−α/2}]` of the resampled differences.
    pub low: f64,
    pub high: f64,
    /// Standard deviation of the resampled differences (the bootstrap standard error).
    pub se: f64,
    pub confidence: f64,
    /// The resampled differences, sorted ascending (for one-sided p-values:
    /// [`Difference::p_greater`]).
    pub draws: Vec<f64>,
}

impl Difference {
    /// Bootstrap one-sided p-value of H₁: difference > `bound`: the fraction of resampled
    /// differences at or below `bound`, `(#{d* ≤ bound} + 1)/(B + 1)` so it is never 0.
    pub fn p_greater(&self, bound: f64) -> f64 {
        let at_or_below = self.draws.partition_point(|&d| d <= bound);
        (at_or_below as f64 + 1.0) / (self.draws.len() as f64 + 1.0)
    }

    /// Bootstrap one-sided p-value of H₁: difference < `bound`.
    pub fn p_less(&self, bound: f64) -> f64 {
        let at_or_above = self.draws.len() - self.draws.partition_point(|&d| d < bound);
        (at_or_above as f64 + 1.0) / (self.draws.len() as f64 + 1.0)
    }
}

/// Bootstrap the difference `candidate − baseline` of `spec.statistic`. Inputs need not be
/// sorted. `None` when a side is empty, holds a non-finite value, `resamples < 2`, the level
/// is outside (0, 1), a percentile is outside [0, 100], or on the log scale a statistic is
/// not positive.
pub fn difference(baseline: &[f64], candidate: &[f64], spec: &Spec) -> Option<Difference> {
    let c = level(spec.confidence)?;
    if baseline.is_empty() || candidate.is_empty() || spec.resamples < 2 {
        return None;
    }
    if baseline.iter().chain(candidate).any(|v| !v.is_finite()) {
        return None;
    }
    let scale = |v: f64| match spec.scale {
        Scale::Linear => Some(v),
        Scale::Log => (v > 0.0).then(|| v.ln()),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut draws = Vec::with_capacity(spec.resamples);
    let (base, cand);
    match spec.statistic {
        Statistic::Percentile(p) => {
            if !(0.0..=100.0).contains(&p) {
                return None;
            }
            let a = Sorted::new(baseline, p)?;
            let b = Sorted::new(candidate, p)?;
            base = a.statistic();
            cand = b.statistic();
            for _ in 0..spec.resamples {
                let x = a.resample(&mut rng);
                let y = b.resample(&mut rng);
                draws.push(scale(y)? - scale(x)?);
            }
        }
        Statistic::Mean => {
            base = mean(baseline);
            cand = mean(candidate);
            // A mean resamples every value (O(n) a resample), so the two independent sides
            // run on two threads when large, each from its own stream of the seed: the draws
            // are the same whether threaded or not.
            let side = |v: &[f64], stream: u64| -> Vec<f64> {
                let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
                rng.set_stream(stream);
                (0..spec.resamples)
                    .map(|_| resampled_mean(v, &mut rng))
                    .collect()
            };
            let (xs, ys) = if baseline.len().min(candidate.len()) >= PARALLEL_FROM {
                std::thread::scope(|s| {
                    let h = s.spawn(|| side(baseline, 1));
                    let ys = side(candidate, 2);
                    let xs = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                    (xs, ys)
                })
            } else {
                (side(baseline, 1), side(candidate, 2))
            };
            for (x, y) in xs.into_iter().zip(ys) {
                draws.push(scale(y)? - scale(x)?);
            }
        }
    }
    let estimate = scale(cand)? - scale(base)?;
    draws.sort_unstable_by(f64::total_cmp);
    let a = 1.0 - c;
    let low = percentile_linear(&draws, 100.0 * a / 2.0);
    let high = percentile_linear(&draws, 100.0 * (1.0 - a / 2.0));
    let m = mean(&draws);
    let se = (draws.iter().map(|d| (d - m).powi(2)).sum::<f64>() / (draws.len() - 1) as f64).sqrt();
    Some(Difference {
        baseline: base,
        candidate: cand,
        estimate,
        low,
        high,
        se,
        confidence: c,
        draws,
    })
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Sides at least this large resample on two threads (below it a thread costs more than it
/// saves).
const PARALLEL_FROM: usize = 10_000;

fn resampled_mean(v: &[f64], rng: &mut ChaCha8Rng) -> f64 {
    let n = v.len();
    // Four running sums: one sum's add latency would otherwise bound the loop.
    let mut s = [0.0f64; 4];
    for i in 0..n {
        s[i & 3] += v[rng.random_range(0..n)];
    }
    ((s[0] + s[1]) + (s[2] + s[3])) / n as f64
}

/// One side of a percentile bootstrap: the sorted sample and the two order statistics numpy's
/// linear interpolation reads.
struct Sorted {
    values: Vec<f64>,
    /// 1-based rank `j` of the lower order statistic, and the weight of the next one.
    j: usize,
    frac: f64,
    p: f64,
    /// `U₍ⱼ₎ ~ Beta(j, n − j + 1)`.
    beta: Beta<f64>,
}

impl Sorted {
    fn new(v: &[f64], p: f64) -> Option<Sorted> {
        let mut values = v.to_vec();
        values.sort_unstable_by(f64::total_cmp);
        let n = values.len();
        // numpy 'linear': h = (n − 1)·p/100, value = x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]).
        let h = (n - 1) as f64 * p / 100.0;
        let j0 = (h.floor() as usize).min(n - 1);
        let beta = Beta::new((j0 + 1) as f64, (n - j0) as f64).ok()?;
        Some(Sorted {
            values,
            j: j0 + 1,
            frac: h - j0 as f64,
            p,
            beta,
        })
    }

    fn statistic(&self) -> f64 {
        percentile_linear(&self.values, self.p)
    }

    /// The percentile of one bootstrap resample, drawn through its order statistics.
    fn resample(&self, rng: &mut ChaCha8Rng) -> f64 {
        let n = self.values.len();
        let at = |u: f64| {
            // Resampled value = X₍⌈n·u⌉₎; u in (0, 1).
            let k = ((n as f64 * u).ceil() as usize).clamp(1, n);
            self.values[k - 1]
        };
        let u = self.beta.sample(rng);
        let x = at(u);
        if self.frac == 0.0 || self.j >= n {
            return x;
        }
        // U₍ⱼ₊₁₎: the least of the n − j uniforms on (u, 1).
        let v: f64 = rng.random();
        let next = u + (1.0 - u) * (1.0 - v.powf(1.0 / (n - self.j) as f64));
        let y = at(next);
        x + self.frac * (y - x)
    }
}

/// A one-sample bootstrap percentile interval of `statistic` over `values` (the gate's bound
/// on one run's mean or percentile): `[q_{α/2}, q_{1−α/2}]` of `resamples` resampled
/// statistics at two-sided `confidence` (each end is then a one-sided bound at
/// `(1 + confidence)/2`). Seeded as [`difference`]: the same seed gives the same interval.
/// `None` for an empty sample, a non-finite value, `resamples < 2` or a level out of range.
pub fn one_sample(
    values: &[f64],
    statistic: Statistic,
    resamples: usize,
    seed: u64,
    confidence: f64,
) -> Option<(f64, f64)> {
    let c = level(confidence)?;
    if values.is_empty() || resamples < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut draws: Vec<f64> = match statistic {
        Statistic::Percentile(p) => {
            if !(0.0..=100.0).contains(&p) {
                return None;
            }
            let s = Sorted::new(values, p)?;
            (0..resamples).map(|_| s.resample(&mut rng)).collect()
        }
        Statistic::Mean => (0..resamples)
            .map(|_| resampled_mean(values, &mut rng))
            .collect(),
    };
    draws.sort_unstable_by(f64::total_cmp);
    let a = 1.0 - c;
    Some((
        percentile_linear(&draws, 100.0 * a / 2.0),
        percentile_linear(&draws, 100.0 * (1.0 - a / 2.0)),
    ))
}
