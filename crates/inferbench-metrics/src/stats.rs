//! Distribution statistics, reproducing numpy's float64 arithmetic.
//!
//! AIPerf summarizes with numpy, so matching its numbers to the last bit means matching
//! numpy's order of operations, not just the formulas:
//!
//! * sums use numpy's pairwise summation ([`pairwise_sum`]), and the mean is that sum / n;
//! * linear percentiles use numpy's `_lerp`, which switches formula at t = 0.5;
//! * `nearest` percentiles round the virtual index half to even (`np.around`).
//!
//! Checked against AIPerf 0.13's summaries: for per-record metrics AIPerf takes `sum` and
//! `avg` over the values in record order, but `std` and the percentiles over the sorted
//! array ([`stats`]); its derived latencies take `std` in record order too
//! ([`stats_std_in_order`]). Both reproduce the fixtures bit for bit.

use inferbench_core::Stats;

/// The percentiles every distribution reports, in AIPerf's key order.
pub const PERCENTILES: [f64; 9] = [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0];

/// numpy's pairwise summation (`pairwise_sum_DOUBLE`, block size 128, unrolled by 8).
/// The exact grouping matters: a left-to-right sum differs in the last bits.
pub fn pairwise_sum(v: &[f64]) -> f64 {
    let n = v.len();
    if n < 8 {
        // numpy starts from -0.0 so that a sum of -0.0 values stays -0.0.
        let mut res = -0.0;
        for x in v {
            res += x;
        }
        res
    } else if n <= 128 {
        let mut r = [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]];
        let full = n - n % 8;
        let mut i = 8;
        while i < full {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += v[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for x in &v[full..] {
            res += x;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&v[..n2]) + pairwise_sum(&v[n2..])
    }
}

/// [`pairwise_sum`] of `f(0), …, f(n − 1)` without materializing them: the same grouping,
/// so the same bits.
pub fn pairwise_sum_by(n: usize, f: &impl Fn(usize) -> f64) -> f64 {
    pairwise_range(0, n, f)
}

fn pairwise_range(off: usize, n: usize, f: &impl Fn(usize) -> f64) -> f64 {
    if n < 8 {
        let mut res = -0.0;
        for i in 0..n {
            res += f(off + i);
        }
        res
    } else if n <= 128 {
        let mut r = [0.0; 8];
        for (j, acc) in r.iter_mut().enumerate() {
            *acc = f(off + j);
        }
        let full = n - n % 8;
        let mut i = 8;
        while i < full {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += f(off + i + j);
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for i in full..n {
            res += f(off + i);
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_range(off, n2, f) + pairwise_range(off + n2, n - n2, f)
    }
}

/// `np.mean`: pairwise sum divided by n.
pub fn mean(v: &[f64]) -> f64 {
    pairwise_sum(v) / v.len() as f64
}

/// `np.std` with ddof 0: two passes, each summed pairwise, in the order given.
pub fn std_pop(v: &[f64]) -> f64 {
    let m = mean(v);
    // The squared deviations are summed as they are computed (the indexed pairwise sum is
    // numpy's, bit for bit), never held as a second copy of the values.
    let sq = pairwise_sum_by(v.len(), &|i| {
        let d = v[i] - m;
        d * d
    });
    (sq / v.len() as f64).sqrt()
}

/// numpy's `_lerp(a, b, t)`: `a + (b-a)·t`, computed from `b` when `t ≥ 0.5` so that the
/// result is exact at both ends.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// `np.percentile(sorted, q)` with the default `linear` method. `sorted` must be ascending and
/// non-empty; `q` is in percent.
pub fn percentile_linear(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let quantile = q / 100.0;
    let virtual_index = (n - 1) as f64 * quantile;
    if virtual_index >= (n - 1) as f64 {
        return sorted[n - 1];
    }
    if virtual_index < 0.0 {
        return sorted[0];
    }
    let prev = virtual_index.floor();
    let gamma = virtual_index - prev;
    let i = prev as usize;
    lerp(sorted[i], sorted[i + 1], gamma)
}

/// `np.percentile(sorted, q, method="nearest")`: the element at the virtual index rounded
/// half to even.
pub fn percentile_nearest(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let virtual_index = ((n - 1) as f64 * (q / 100.0)).round_ties_even();
    let i = (virtual_index.max(0.0) as usize).min(n - 1);
    sorted[i]
}

fn sorted_copy(values: &[f64]) -> Vec<f64> {
    let mut s = values.to_vec();
    sort(&mut s);
    s
}

/// Ascending by `total_cmp`. Values equal under it are the same bits, so an unstable sort
/// gives the stable one's result, without its scratch (half the values again).
fn sort(v: &mut [f64]) {
    v.sort_unstable_by(f64::total_cmp);
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn build(sum: f64, n: usize, sorted: &[f64], std: f64, pct: impl Fn(&[f64], f64) -> f64) -> Stats {
    let p: Vec<Option<f64>> = PERCENTILES
        .iter()
        .map(|&q| finite(pct(sorted, q)))
        .collect();
    Stats {
        avg: finite(sum / n as f64),
        p1: p[0],
        p5: p[1],
        p10: p[2],
        p25: p[3],
        p50: p[4],
        p75: p[5],
        p90: p[6],
        p95: p[7],
        p99: p[8],
        min: finite(sorted[0]),
        max: finite(sorted[n - 1]),
        std: finite(std),
        count: n as u64,
        sum: finite(sum),
    }
}

fn empty() -> Stats {
    Stats::default()
}

/// Full statistics as AIPerf computes them for a per-record metric: `sum`/`avg` pairwise over
/// `values` in the order given (record order), `std` (population) and linear percentiles over
/// the sorted values. Non-finite results are `None`; an empty input gives count 0 and no stats.
pub fn stats(values: &[f64]) -> Stats {
    stats_owned(values.to_vec())
}

/// [`stats`] of values the caller gives up: sorted in place once the sum (in the order
/// given) is taken, so that a run's largest column is held once at its end, not twice.
pub fn stats_owned(mut values: Vec<f64>) -> Stats {
    if values.is_empty() {
        return empty();
    }
    let sum = pairwise_sum(&values);
    sort(&mut values);
    let std = std_pop(&values);
    build(sum, values.len(), &values, std, percentile_linear)
}

/// Like [`stats`] but with `std` computed over the values in the order given, as AIPerf does
/// for its derived latencies (`credit_to_start_latency`, `effective_latency`).
pub fn stats_std_in_order(values: &[f64]) -> Stats {
    if values.is_empty() {
        return empty();
    }
    let sum = pairwise_sum(values);
    let sorted = sorted_copy(values);
    let std = std_pop(values);
    build(sum, values.len(), &sorted, std, percentile_linear)
}

/// Error-adjusted companion statistics: the success samples plus one `+inf` per error,
/// percentiles with `method="nearest"`. Every statistic that is not finite (avg, sum, std,
/// max, and each percentile landing on an error) is `None`; `count` is samples + errors.
pub fn adj_stats(values: &[f64], n_errors: u64) -> Stats {
    let mut all = values.to_vec();
    all.extend(std::iter::repeat_n(f64::INFINITY, n_errors as usize));
    if all.is_empty() {
        return empty();
    }
    let sum = pairwise_sum(&all);
    sort(&mut all);
    let std = std_pop(&all);
    build(sum, all.len(), &all, std, percentile_nearest)
}

/// Multiply every statistic by `factor` (unit conversion after computing, as AIPerf does:
/// e.g. stats over ns, then each × 1e-6 for ms). `count` is unchanged.
pub fn scaled(s: Stats, factor: f64) -> Stats {
    let f = |x: Option<f64>| x.map(|v| v * factor).and_then(finite);
    Stats {
        avg: f(s.avg),
        p1: f(s.p1),
        p5: f(s.p5),
        p10: f(s.p10),
        p25: f(s.p25),
        p50: f(s.p50),
        p75: f(s.p75),
        p90: f(s.p90),
        p95: f(s.p95),
        p99: f(s.p99),
        min: f(s.min),
        max: f(s.max),
        std: f(s.std),
        count: s.count,
        sum: f(s.sum),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sums_are_left_to_right() {
        assert_eq!(pairwise_sum(&[]), 0.0);
        assert_eq!(pairwise_sum(&[1.0, 2.0, 3.0]), 6.0);
        // -0.0 start keeps the sign of an all -0.0 input, as numpy does.
        assert!(pairwise_sum(&[-0.0]).is_sign_negative());
    }

    #[test]
    fn pairwise_grouping_differs_from_naive_like_numpy() {
        // 8 terms: numpy's eight accumulators each hold one term, combined as
        // ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)). 1e16 + 1 is a tie at ulp 2 and rounds back to
        // 1e16, so the pairs cancel to 0; left to right would give (1e16+1-1e16)+1 = 1.
        let v = [1e16, 1.0, -1e16, 1.0, 0.0, 0.0, 0.0, 0.0];
        assert_eq!(pairwise_sum(&v), 0.0);
        assert_eq!(v.iter().fold(0.0, |a, b| a + b), 1.0);
        // 9 terms: accumulators r0..r7, then the leftover 9th term added at the end.
        let w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        assert_eq!(pairwise_sum(&w), 45.0);
    }

    #[test]
    fn linear_percentiles_by_hand() {
        let s = [10.0, 20.0, 30.0, 40.0];
        // idx = q/100 * 3
        assert_eq!(percentile_linear(&s, 50.0), 25.0); // 1.5 → 20 + 10*0.5
        assert_eq!(percentile_linear(&s, 25.0), 17.5); // 0.75 → 30 - 10*0.25
        // 3 × 0.99 = 2.9699999999999998 in f64, so t = 0.9699999999999998 and
        // 40 − 10 × (1 − t) = 40 − 0.30000000000000027 = 39.699999999999996 (numpy agrees).
        assert_eq!(
            percentile_linear(&s, 99.0),
            40.0 - 10.0 * (1.0 - (3.0 * 0.99 - 2.0))
        );
        assert!((percentile_linear(&s, 99.0) - 39.7).abs() < 1e-12);
        assert_eq!(percentile_linear(&s, 1.0), 10.3); // 0.03 → 10 + 10*0.03
        assert_eq!(percentile_linear(&[7.0], 90.0), 7.0);
    }

    #[test]
    fn nearest_rounds_half_to_even() {
        let s = [1.0, 2.0, 3.0, 4.0, 5.0];
        // n-1 = 4: q=12.5 → 0.5 → 0 (even); q=37.5 → 1.5 → 2 (even).
        assert_eq!(percentile_nearest(&s, 12.5), 1.0);
        assert_eq!(percentile_nearest(&s, 37.5), 3.0);
        assert_eq!(percentile_nearest(&s, 50.0), 3.0);
    }

    #[test]
    fn stats_by_hand() {
        // values 1,2,3,4: sum 10, avg 2.5, var = (2.25+0.25+0.25+2.25)/4 = 1.25.
        let s = stats(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(s.count, 4);
        assert_eq!(s.sum, Some(10.0));
        assert_eq!(s.avg, Some(2.5));
        assert_eq!(s.min, Some(1.0));
        assert_eq!(s.max, Some(4.0));
        assert_eq!(s.std, Some(1.25f64.sqrt()));
        assert_eq!(s.p50, Some(2.5));
        assert_eq!(stats(&[]).count, 0);
        assert_eq!(stats(&[]).avg, None);
    }

    #[test]
    fn adj_stats_omit_infinite_values() {
        // 3 successes + 1 error: sorted [1,2,3,inf], n-1 = 3.
        let s = adj_stats(&[3.0, 1.0, 2.0], 1);
        assert_eq!(s.count, 4);
        assert_eq!(s.avg, None);
        assert_eq!(s.sum, None);
        assert_eq!(s.max, None);
        assert_eq!(s.std, None);
        assert_eq!(s.min, Some(1.0));
        assert_eq!(s.p50, Some(3.0)); // 1.5 → 2 → 3.0
        assert_eq!(s.p25, Some(2.0)); // 0.75 → 1 → 2.0
        assert_eq!(s.p75, Some(3.0)); // 2.25 → 2 → 3.0
        assert_eq!(s.p90, None); // 2.7 → 3 → inf
    }

    #[test]
    fn scaling_keeps_count() {
        let s = scaled(stats(&[1_000_000.0, 3_000_000.0]), 1e-6);
        assert_eq!(s.avg, Some(2.0));
        assert_eq!(s.count, 2);
    }

    proptest::proptest! {
        /// The lean forms against the copies they replaced: the squared deviations collected
        /// then summed, and a stable sort of a copy.
        #[test]
        fn lean_std_and_sort_are_the_copying_ones_bit_for_bit(
            v in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => -1e12f64..1e12,
                    1 => proptest::sample::select(vec![0.0, -0.0, 1.5, f64::INFINITY]),
                ],
                1..400,
            )
        ) {
            let m = mean(&v);
            let dev: Vec<f64> = v.iter().map(|x| (x - m) * (x - m)).collect();
            let old_std = (pairwise_sum(&dev) / v.len() as f64).sqrt();
            proptest::prop_assert_eq!(std_pop(&v).to_bits(), old_std.to_bits());
            let mut stable = v.clone();
            stable.sort_by(f64::total_cmp);
            let mut lean = v.clone();
            sort(&mut lean);
            let bits = |x: &[f64]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            proptest::prop_assert_eq!(bits(&lean), bits(&stable));
        }
    }
}
