//! Exact checks against the worked numbers of the design note (§2), hand-worked cases and
//! property tests.

use super::bootstrap::{self, Scale, Spec, Statistic};
use super::harrell_davis::harrell_davis;
use super::multiplicity::{benjamini_hochberg, holm};
use super::order_stat::{min_n_for_upper_bound, quantile_ranks, upper_bound_rank};
use super::proportions::{newcombe, newcombe_p_greater, wilson_lower_bound};
use super::sample_size::{requests_per_arm, requests_per_side, runs_per_side};
use super::welch::{log_values, welch};
use super::{Margin, Placement, place};
use crate::confidence::wilson_interval;
use proptest::prelude::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn wilson_920_of_1000() {
    let (l, u) = wilson_interval(920, 1000, 0.95).unwrap();
    assert!(close(l, 0.90153, 5e-6), "{l}");
    assert!(close(u, 0.93525, 5e-6), "{u}");
    let lb = wilson_lower_bound(920, 1000, 0.95).unwrap();
    assert!(close(lb, 0.90473, 5e-6), "{lb}");
}

#[test]
fn newcombe_905_vs_920() {
    let d = newcombe((905, 1000), (920, 1000), 0.95).unwrap();
    assert!(close(d.difference, -0.015, 1e-12));
    // Reference: [−4.00, +0.99] pp at 95 %, [−3.59, +0.58] pp at 90 % (rounded to 0.01 pp).
    assert!(close(d.low, -0.0400, 5e-5), "{}", d.low);
    assert!(close(d.high, 0.0099, 5e-5), "{}", d.high);
    let d = newcombe((905, 1000), (920, 1000), 0.90).unwrap();
    assert!(close(d.low, -0.0359, 5e-5), "{}", d.low);
    assert!(close(d.high, 0.0058, 5e-5), "{}", d.high);
    // Against −2 pp non-inferiority the 90 % interval straddles: inconclusive.
    let m = Margin {
        lower: -0.02,
        upper: f64::INFINITY,
    };
    assert_eq!(place(d.low, d.high, m), Placement::Straddles);
}

#[test]
fn newcombe_p_value_inverts_the_interval() {
    // The 90 % lower limit −0.0359 is below −0.02: the one-sided p exceeds 0.05; the 95 %
    // two-sided lower limit (−0.0400) lies above −0.045, so p < 0.025 against −0.045.
    let p = newcombe_p_greater((905, 1000), (920, 1000), -0.02).unwrap();
    assert!(p > 0.05 && p < 0.5, "{p}");
    let p = newcombe_p_greater((905, 1000), (920, 1000), -0.045).unwrap();
    assert!(p < 0.025, "{p}");
    assert_eq!(
        newcombe_p_greater((905, 1000), (920, 1000), 0.0).unwrap(),
        1.0
    );
}

#[test]
fn newcombe_sample_size_about_17300() {
    let m = Margin {
        lower: -0.02,
        upper: f64::INFINITY,
    };
    let n = requests_per_arm(0.905, 0.920, m, 0.90).unwrap();
    // Normal approximation: 0.159575·(1.64485/0.005)² = 17 269; the reference says ~17 300.
    assert!((17_000..=17_600).contains(&n), "{n}");
}

const BASE: [f64; 5] = [8410.0, 8395.0, 8452.0, 8388.0, 8431.0];
const CAND: [f64; 5] = [8352.0, 8401.0, 8377.0, 8329.0, 8390.0];

#[test]
fn welch_worked_example() {
    let w = welch(&BASE, &CAND).unwrap();
    assert!(close(w.mean_baseline, 8415.2, 1e-9));
    assert!(close(w.mean_candidate, 8369.8, 1e-9));
    assert!(close(w.difference, -45.4, 1e-9));
    assert!(close(w.se, 17.6, 0.05), "{}", w.se);
    assert!(close(w.df, 7.92, 0.005), "{}", w.df);
    assert!(close(w.p_two_sided, 0.033, 0.0005), "{}", w.p_two_sided);
    // A 95 % interval excludes 0 (significant), consistent with p < 0.05.
    let (_, hi) = w.interval(0.95).unwrap();
    assert!(hi < 0.0);
}

#[test]
fn tost_worked_example_on_logs() {
    let w = welch(&log_values(&BASE).unwrap(), &log_values(&CAND).unwrap()).unwrap();
    let t = w.tost(Margin::relative(0.03).unwrap(), 0.05).unwrap();
    assert!(close(t.low.exp(), 0.9907, 5e-5), "{}", t.low.exp());
    assert!(close(t.high.exp(), 0.9985, 5e-5), "{}", t.high.exp());
    assert!(t.equivalent);
    // "p_TOST ≈ 1e-6": the order of magnitude.
    assert!(t.p_tost > 1e-7 && t.p_tost < 1e-5, "{}", t.p_tost);
    // At ±0.5 % the interval is not inside: not equivalent.
    let t = w.tost(Margin::relative(0.005).unwrap(), 0.05).unwrap();
    assert!(!t.equivalent);
    // Non-inferiority at −2 %: the one-sided 95 % lower bound is the 90 % low.
    assert!(close(w.lower_bound(0.95).unwrap(), t.low, 1e-12));
    assert!(w.lower_bound(0.95).unwrap() > (0.98f64).ln());
}

#[test]
fn welch_needs_two_values_and_spread() {
    assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
    assert!(welch(&[1.0, 1.0], &[2.0, 2.0]).is_none());
    assert!(welch(&[1.0, f64::NAN], &[2.0, 3.0]).is_none());
    assert!(log_values(&[1.0, 0.0]).is_none());
}

#[test]
fn order_statistic_rank_table() {
    type Row = [(usize, Option<usize>); 3];
    let table: [(usize, Row); 4] = [
        (100, [(40, Some(61)), (90, Some(100)), (97, None)]),
        (368, [(165, Some(204)), (341, Some(358)), (360, Some(368))]),
        (1000, [(469, Some(532)), (936, Some(964)), (983, Some(997))]),
        (
            5000,
            [(2431, Some(2570)), (4719, Some(4781)), (4936, Some(4964))],
        ),
    ];
    for (n, row) in table {
        for (q, (r, s)) in [0.50, 0.95, 0.99].into_iter().zip(row) {
            let got = quantile_ranks(n, q, 0.95).unwrap();
            assert_eq!(got.lower, Some(r), "n={n} q={q}");
            assert_eq!(got.upper, s, "n={n} q={q}");
        }
    }
}

#[test]
fn order_statistic_minimum_n() {
    assert_eq!(min_n_for_upper_bound(0.99, 0.95, true), Some(368));
    assert_eq!(min_n_for_upper_bound(0.99, 0.95, false), Some(299));
    assert!(quantile_ranks(367, 0.99, 0.95).unwrap().upper.is_none());
    assert_eq!(quantile_ranks(368, 0.99, 0.95).unwrap().upper, Some(368));
    assert!(upper_bound_rank(298, 0.99, 0.95).is_none());
    assert_eq!(upper_bound_rank(299, 0.99, 0.95), Some(299));
    // A low quantile of few values has no lower bound.
    assert_eq!(quantile_ranks(100, 0.01, 0.95).unwrap().lower, None);
}

#[test]
fn holm_and_bh_hand_worked() {
    let p = [0.01, 0.04, 0.03, 0.005];
    // Holm: 0.005·4 = 0.02, 0.01·3 = 0.03 reject; 0.03·2 = 0.06 > 0.05 stops.
    let h = holm(&p, 0.05);
    let adj: Vec<f64> = h.iter().map(|a| a.adjusted).collect();
    let rej: Vec<bool> = h.iter().map(|a| a.rejected).collect();
    for (a, e) in adj.iter().zip([0.03, 0.06, 0.06, 0.02]) {
        assert!(close(*a, e, 1e-12), "{adj:?}");
    }
    assert_eq!(rej, [true, false, false, true]);
    // BH: thresholds 0.0125, 0.025, 0.0375, 0.05: all four pass.
    let b = benjamini_hochberg(&p, 0.05);
    for (a, e) in b.iter().zip([0.02, 0.04, 0.04, 0.02]) {
        assert!(close(a.adjusted, e, 1e-12), "{b:?}");
        assert!(a.rejected);
    }
    // Step-up: 0.045 > 0.0375 and 0.2 > 0.05, so k = 2; Holm rejects only 0.01 (0.02·3 > 0.05).
    let p = [0.01, 0.02, 0.045, 0.2];
    let b: Vec<bool> = benjamini_hochberg(&p, 0.05)
        .iter()
        .map(|a| a.rejected)
        .collect();
    assert_eq!(b, [true, true, false, false]);
    let h: Vec<bool> = holm(&p, 0.05).iter().map(|a| a.rejected).collect();
    assert_eq!(h, [true, false, false, false]);
}

#[test]
fn harrell_davis_hand_worked() {
    // n = 2, q = ½: a = b = 1.5, W₁ = I_½(1.5, 1.5) = ½.
    assert!(close(harrell_davis(&[1.0, 3.0], 0.5).unwrap(), 2.0, 1e-12));
    // n = 3, q = ½: I_x(2, 2) = 3x² − 2x³, weights 7/27, 13/27, 7/27.
    let hd = harrell_davis(&[1.0, 2.0, 10.0], 0.5).unwrap();
    assert!(close(hd, 103.0 / 27.0, 1e-12), "{hd}");
    assert!(harrell_davis(&[], 0.5).is_none());
}

#[test]
fn sample_sizes_hand_worked() {
    // v₁ = v₂ = 1, d = 0, ±1, 90 %: ν = 2(n − 1); n = 6: 1.812·√(1/3) = 1.046 > 1,
    // n = 7: 1.782·√(2/7) = 0.953 < 1.
    assert_eq!(
        runs_per_side(1.0, 1.0, 0.0, Margin::symmetric(1.0), 0.90),
        Some(7)
    );
    // se = 1 at n = 100: 1.6449·√(100/m) < 1 ⇔ m > 270.6.
    assert_eq!(
        requests_per_side(1.0, 100, 0.0, Margin::symmetric(1.0), 0.90),
        Some(271)
    );
    // A difference on the boundary never decides.
    assert_eq!(
        requests_per_side(1.0, 100, 1.0, Margin::symmetric(1.0), 0.90),
        None
    );
}

fn spec(statistic: Statistic, scale: Scale, seed: u64) -> Spec {
    Spec {
        statistic,
        scale,
        resamples: 2000,
        seed,
        confidence: 0.90,
    }
}

fn sample(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            10.0 + (x % 10_000) as f64 / 100.0
        })
        .collect()
}

#[test]
fn bootstrap_shift_is_recovered() {
    let a = sample(2000, 7);
    let b: Vec<f64> = a.iter().map(|v| v + 10.0).collect();
    for stat in [
        Statistic::Percentile(50.0),
        Statistic::Percentile(99.0),
        Statistic::Mean,
    ] {
        let d = bootstrap::difference(&a, &b, &spec(stat, Scale::Linear, 1)).unwrap();
        assert!(close(d.estimate, 10.0, 1e-9), "{stat:?} {}", d.estimate);
        assert!(d.low < 10.0 && d.high > 10.0, "{stat:?} {d:?}");
        assert!(
            d.low > 0.0,
            "{stat:?}: a 10-unit shift on a 100-unit spread is resolved"
        );
    }
    // Constant samples: no spread, the interval is the point.
    let c = vec![5.0; 100];
    let e = vec![6.0; 100];
    let d =
        bootstrap::difference(&c, &e, &spec(Statistic::Percentile(95.0), Scale::Log, 3)).unwrap();
    assert!(close(d.low, (1.2f64).ln(), 1e-12) && close(d.high, (1.2f64).ln(), 1e-12));
}

#[test]
fn bootstrap_order_statistics_match_brute_force_resampling() {
    // The standard error of the bootstrap median drawn through Beta order statistics must
    // match resampling values one by one (same distribution, different draws).
    use rand::{Rng, SeedableRng};
    let a = sample(301, 11);
    let fast = bootstrap::difference(
        &a,
        &a,
        &Spec {
            resamples: 20_000,
            ..spec(Statistic::Percentile(90.0), Scale::Linear, 5)
        },
    )
    .unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let mut draws = Vec::new();
    for _ in 0..20_000 {
        let one = |rng: &mut rand_chacha::ChaCha8Rng| {
            let mut r: Vec<f64> = (0..a.len())
                .map(|_| a[rng.random_range(0..a.len())])
                .collect();
            r.sort_unstable_by(f64::total_cmp);
            crate::stats::percentile_linear(&r, 90.0)
        };
        let x = one(&mut rng);
        let y = one(&mut rng);
        draws.push(y - x);
    }
    let m = draws.iter().sum::<f64>() / draws.len() as f64;
    let se = (draws.iter().map(|d| (d - m).powi(2)).sum::<f64>() / (draws.len() - 1) as f64).sqrt();
    assert!(
        (fast.se / se - 1.0).abs() < 0.05,
        "fast {} brute {}",
        fast.se,
        se
    );
}

#[test]
fn bootstrap_rejects_bad_input() {
    let s = spec(Statistic::Percentile(50.0), Scale::Log, 1);
    assert!(bootstrap::difference(&[], &[1.0], &s).is_none());
    assert!(bootstrap::difference(&[0.0, 0.0], &[1.0], &s).is_none());
    let s = spec(Statistic::Percentile(101.0), Scale::Linear, 1);
    assert!(bootstrap::difference(&[1.0], &[1.0], &s).is_none());
}

proptest! {
    #[test]
    fn wilson_within_unit_interval(n in 1u64..5000, k in 0u64..5000, c in 0.5f64..0.999) {
        let k = k % (n + 1);
        let (l, u) = wilson_interval(k, n, c).unwrap();
        let p = k as f64 / n as f64;
        prop_assert!((0.0..=1.0).contains(&l) && (0.0..=1.0).contains(&u));
        prop_assert!(l <= p + 1e-12 && p <= u + 1e-12);
    }

    #[test]
    fn newcombe_contains_difference(n1 in 1u64..3000, k1 in 0u64..3000, n2 in 1u64..3000,
                                    k2 in 0u64..3000, c in 0.5f64..0.999) {
        let d = newcombe((k1 % (n1 + 1), n1), (k2 % (n2 + 1), n2), c).unwrap();
        prop_assert!(d.low <= d.difference + 1e-12 && d.difference <= d.high + 1e-12);
        prop_assert!(d.low >= -1.0 - 1e-12 && d.high <= 1.0 + 1e-12);
    }

    #[test]
    fn welch_interval_contains_difference(
        a in proptest::collection::vec(1.0f64..1e4, 2..20),
        b in proptest::collection::vec(1.0f64..1e4, 2..20),
        c in 0.5f64..0.999,
    ) {
        if let Some(w) = welch(&a, &b) {
            let (l, h) = w.interval(c).unwrap();
            prop_assert!(l <= w.difference && w.difference <= h);
            prop_assert!((0.0..=1.0).contains(&w.p_two_sided));
        }
    }

    #[test]
    fn bootstrap_deterministic_per_seed(
        a in proptest::collection::vec(1.0f64..1e3, 1..60),
        b in proptest::collection::vec(1.0f64..1e3, 1..60),
        seed in any::<u64>(),
        p in 0.0f64..=100.0,
    ) {
        for stat in [Statistic::Percentile(p), Statistic::Mean] {
            let s = Spec { resamples: 200, ..spec(stat, Scale::Log, seed) };
            let x = bootstrap::difference(&a, &b, &s).unwrap();
            let y = bootstrap::difference(&a, &b, &s).unwrap();
            prop_assert_eq!(&x, &y);
            prop_assert!(x.low <= x.high);
        }
    }

    #[test]
    fn harrell_davis_within_range(mut v in proptest::collection::vec(-1e3f64..1e3, 1..80),
                                  q in 0.01f64..0.99) {
        v.sort_unstable_by(f64::total_cmp);
        let hd = harrell_davis(&v, q).unwrap();
        prop_assert!(hd >= v[0] - 1e-9 && hd <= v[v.len() - 1] + 1e-9);
    }

    #[test]
    fn holm_rejections_within_bh(p in proptest::collection::vec(0.0f64..1.0, 1..30)) {
        let h = holm(&p, 0.05);
        let b = benjamini_hochberg(&p, 0.05);
        for ((x, y), raw) in h.iter().zip(&b).zip(&p) {
            prop_assert!(x.adjusted >= *raw - 1e-15 && y.adjusted >= *raw - 1e-15);
            prop_assert!(!x.rejected || y.rejected);
        }
    }
}

#[test]
fn wilson_bound_of_a_fraction_matches_the_counted_bound() {
    use super::proportions::wilson_bound_of_fraction;
    // 920 of 1 000 (design note §2.4): one-sided 95 % lower 0.90473.
    let lb = wilson_bound_of_fraction(0.92, 1000.0, 0.95, true).unwrap();
    assert!(close(lb, 0.90473, 5e-6), "{lb}");
    assert!(wilson_bound_of_fraction(0.5, 0.0, 0.95, true).is_none());
    assert!(wilson_bound_of_fraction(1.5, 10.0, 0.95, true).is_none());
}

#[test]
fn wilson_trials_to_decide_by_hand() {
    use super::proportions::{wilson_bound_of_fraction, wilson_trials_to_decide};
    // p = 1: the lower bound is n / (n + z²), z = 1.644854 → z² = 2.705543; ≥ 0.9 needs
    // n ≥ 9 z² = 24.35 → 25.
    assert_eq!(wilson_trials_to_decide(1.0, 0.9, 0.95), Some(25));
    // p = 0: the upper bound is z² / (n + z²) < 0.1 needs n > 9 z² → 25.
    assert_eq!(wilson_trials_to_decide(0.0, 0.1, 0.95), Some(25));
    // The n is the first that decides.
    let n = wilson_trials_to_decide(0.905, 0.90, 0.95).unwrap();
    assert!(wilson_bound_of_fraction(0.905, n as f64, 0.95, true).unwrap() >= 0.90);
    assert!(wilson_bound_of_fraction(0.905, (n - 1) as f64, 0.95, true).unwrap() < 0.90);
    assert_eq!(wilson_trials_to_decide(0.9, 0.9, 0.95), None);
}

#[test]
fn one_sample_bootstrap_is_seeded_and_covers() {
    let v: Vec<f64> = (1..=100).map(f64::from).collect();
    let a = bootstrap::one_sample(&v, Statistic::Mean, 2000, 7, 0.95).unwrap();
    let b = bootstrap::one_sample(&v, Statistic::Mean, 2000, 7, 0.95).unwrap();
    assert_eq!(a, b);
    // Mean 50.5, standard error 29.01/10 = 2.90: the 95 % interval is about ±5.7.
    assert!(
        a.0 > 44.0 && a.0 < 50.5 && a.1 > 50.5 && a.1 < 57.0,
        "{a:?}"
    );
    let c = bootstrap::one_sample(&[3.0; 10], Statistic::Percentile(99.0), 100, 1, 0.9);
    assert_eq!(c, Some((3.0, 3.0)));
    assert!(bootstrap::one_sample(&[], Statistic::Mean, 100, 1, 0.9).is_none());
}

#[test]
fn requests_to_decide_by_hand() {
    use super::order_stat::{Side, lower_bound_rank, requests_to_decide};
    // All values under the limit: the upper p99 bound exists, and is under it, from n = 299
    // (0.99^299 = 0.0495 ≤ 0.05; 0.99^298 = 0.0500 > 0.05).
    assert_eq!(
        requests_to_decide(0.99, 0.95, 1.0, Side::Upper, 1 << 20),
        Some(299)
    );
    // All values above: the lower p50 bound X₍ᵣ₎ exists once 0.5^n ≤ 0.05, n = 5 (r = 1).
    assert_eq!(lower_bound_rank(5, 0.5, 0.95), Some(1));
    assert_eq!(lower_bound_rank(4, 0.5, 0.95), None);
    assert_eq!(
        requests_to_decide(0.5, 0.95, 1.0, Side::Lower, 1 << 20),
        Some(5)
    );
    // 99.5 % under the limit: the n found decides (s/n ≤ 0.995), the one before does not.
    let n = requests_to_decide(0.99, 0.95, 0.995, Side::Upper, 1 << 24).unwrap();
    let s = upper_bound_rank(n, 0.99, 0.95).unwrap();
    assert!(s as f64 <= 0.995 * n as f64, "{n} {s}");
    // Exactly at the quantile: no size decides.
    assert_eq!(
        requests_to_decide(0.99, 0.95, 0.99, Side::Upper, 1 << 16),
        None
    );
}

#[test]
fn mean_bounds_by_hand() {
    // 10, 12, 14: mean 12, s = 2, s/√3 = 1.1547; t_{0.95, 2} = 2.919986 → ±3.3717.
    let (l, u) = super::welch::mean_bounds(&[10.0, 12.0, 14.0], 0.95).unwrap();
    assert!(close(l, 12.0 - 3.371708, 1e-5), "{l}");
    assert!(close(u, 12.0 + 3.371708, 1e-5), "{u}");
    assert!(super::welch::mean_bounds(&[1.0], 0.95).is_none());
}
