//! Properties of the statistics on arbitrary inputs.

use inferbench_metrics::stats::{adj_stats, pairwise_sum, stats};
use proptest::prelude::*;

proptest! {
    #[test]
    fn percentiles_are_monotone_and_within_min_max(
        values in prop::collection::vec(-1e12f64..1e12, 1..400)
    ) {
        let s = stats(&values);
        let min = s.min.unwrap();
        let max = s.max.unwrap();
        let ps = [s.p1, s.p5, s.p10, s.p25, s.p50, s.p75, s.p90, s.p95, s.p99];
        let mut prev = min;
        for p in ps {
            let p = p.unwrap();
            prop_assert!(p >= prev, "{p} < {prev}");
            prop_assert!(p <= max, "{p} > {max}");
            prev = p;
        }
        prop_assert!(s.avg.unwrap() >= min - 1e-3 && s.avg.unwrap() <= max + 1e-3);
        prop_assert!(s.std.unwrap() >= 0.0);
        prop_assert_eq!(s.count, values.len() as u64);
    }

    #[test]
    fn pairwise_sum_is_close_to_the_exact_sum(
        values in prop::collection::vec(0f64..1e6, 0..1000)
    ) {
        // Non-negative terms: the error bound is tiny relative to the sum.
        let naive: f64 = values.iter().sum();
        let pw = pairwise_sum(&values);
        prop_assert!((pw - naive).abs() <= 1e-9 * naive.max(1.0));
    }

    #[test]
    fn adjusted_percentiles_are_samples_or_absent(
        values in prop::collection::vec(0f64..1e9, 0..100),
        errors in 1u64..50,
    ) {
        let s = adj_stats(&values, errors);
        prop_assert_eq!(s.count, values.len() as u64 + errors);
        prop_assert_eq!(s.avg, None);
        prop_assert_eq!(s.max, None);
        for p in [s.p1, s.p5, s.p10, s.p25, s.p50, s.p75, s.p90, s.p95, s.p99].into_iter().flatten() {
            prop_assert!(values.contains(&p));
        }
    }
}
