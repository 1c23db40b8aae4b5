use super::*;

const INF: f64 = f64::INFINITY;

fn b(pairs: &[(f64, f64)]) -> Vec<Bucket> {
    pairs
        .iter()
        .map(|&(le, count)| Bucket { le, count })
        .collect()
}

fn q(phi: f64, pairs: &[(f64, f64)]) -> Estimate {
    histogram_quantile(phi, &b(pairs))
}

fn close(got: f64, want: f64) {
    assert!((got - want).abs() <= 1e-9, "got {got}, want {want}");
}

const TTFT: [(f64, f64); 4] = [(0.001, 0.0), (0.005, 4.0), (0.01, 8.0), (INF, 10.0)];

#[test]
fn phi_outside_zero_one() {
    assert!(q(f64::NAN, &TTFT).value.is_nan());
    assert_eq!(q(-0.01, &TTFT).value, f64::NEG_INFINITY);
    assert_eq!(q(1.01, &TTFT).value, INF);
}

#[test]
fn missing_inf_bucket_is_nan() {
    let e = q(0.5, &[(1.0, 1.0), (2.0, 2.0)]);
    assert!(e.value.is_nan());
    assert!(q(0.5, &[]).value.is_nan());
}

#[test]
fn linear_interpolation_inside_the_bucket() {
    // rank 5 falls in (0.005, 0.01]: 0.005 + 0.005 × (5 − 4)/(8 − 4).
    let e = q(0.5, &TTFT);
    close(e.value, 0.00625);
    assert!(!e.forced_monotonic);
    // The first bucket interpolates from 0: rank 2 of 4 in (0, 2].
    close(q(0.25, &[(2.0, 4.0), (4.0, 8.0), (INF, 8.0)]).value, 1.0);
    // φ = 1 with every observation finite lands on the top of its bucket.
    close(q(1.0, &[(1.0, 1.0), (2.0, 2.0), (INF, 2.0)]).value, 2.0);
}

#[test]
fn bucket_order_does_not_matter() {
    let mut shuffled = TTFT;
    shuffled.reverse();
    close(q(0.5, &shuffled).value, 0.00625);
}

#[test]
fn equal_bounds_are_merged() {
    // (1, 2) + (1, 3) = (1, 5); rank 2.5 of 10: 2.5/5 of (0, 1]. Keeping either one alone
    // would give 2.5/2 → clamp or 2.5/3.
    let e = q(0.25, &[(1.0, 2.0), (INF, 4.0), (1.0, 3.0), (INF, 6.0)]);
    close(e.value, 0.5);
}

#[test]
fn float_noise_is_ignored_silently() {
    // 10 + 1e-11 is noise next to 10 (relative 5e-13): with it ignored, rank 10 + 5e-12
    // passes (1, 2] and lands at the bottom of (2, 3]; without the fix it would be 1.5.
    let pairs = [(1.0, 10.0), (2.0, 10.0 + 1e-11), (3.0, 20.0), (INF, 20.0)];
    let e = q((10.0 + 5e-12) / 20.0, &pairs);
    close(e.value, 2.0);
    assert!(!e.forced_monotonic);
    // A noise-sized drop is not flagged either.
    let e = q(0.5, &[(1.0, 10.0), (2.0, 10.0 - 5e-12), (INF, 20.0)]);
    assert!(!e.forced_monotonic);
}

#[test]
fn non_monotonic_counts_are_forced_and_flagged() {
    // (2, 3) is raised to 5: rank 6 lands in (2, 4] as 2 + 2 × (6 − 5)/(10 − 5) = 2.4
    // (unforced it would be 2 + 2 × 3/7).
    let e = q(0.6, &[(1.0, 5.0), (2.0, 3.0), (4.0, 10.0), (INF, 10.0)]);
    close(e.value, 2.4);
    assert!(e.forced_monotonic);
}

#[test]
fn fewer_than_two_buckets_or_no_observations_is_nan() {
    assert!(q(0.5, &[(INF, 5.0)]).value.is_nan());
    assert!(q(0.5, &[(1.0, 0.0), (INF, 0.0)]).value.is_nan());
    // Two +Inf buckets merge into one.
    assert!(q(0.5, &[(INF, 2.0), (INF, 3.0)]).value.is_nan());
}

#[test]
fn the_tail_clamps_to_the_highest_finite_bound() {
    // rank 5 is past le=2's count of 2: the +Inf bucket, reported as 2.
    close(q(0.5, &[(1.0, 1.0), (2.0, 2.0), (INF, 10.0)]).value, 2.0);
}

#[test]
fn first_bucket_at_or_below_zero_returns_its_bound() {
    close(q(0.2, &[(-1.0, 5.0), (1.0, 8.0), (INF, 10.0)]).value, -1.0);
    close(q(0.2, &[(0.0, 5.0), (1.0, 10.0), (INF, 10.0)]).value, 0.0);
    // Past the first bucket the negative bound is the interpolation's start.
    close(
        q(0.65, &[(-1.0, 5.0), (1.0, 8.0), (INF, 10.0)]).value,
        -1.0 + 2.0 * (1.5 / 3.0),
    );
}
