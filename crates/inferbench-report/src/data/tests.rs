//! Every expected value below is worked out by hand in the comments.

use super::*;

#[test]
fn bucket_edges_cover_the_span_and_one_past() {
    // Span 0 … 2.5 with width 1: ⌊2.5⌋ + 1 = 3 buckets, edges 0, 1, 2, 3.
    assert_eq!(bucket_edges(0.0, 2.5, 1.0), vec![0.0, 1.0, 2.0, 3.0]);
    // An exact multiple still gets a last bucket holding the end: 0 … 2 → 0, 1, 2, 3.
    assert_eq!(bucket_edges(0.0, 2.0, 1.0), vec![0.0, 1.0, 2.0, 3.0]);
    assert!(bucket_edges(0.0, 1.0, 0.0).is_empty());
    assert!(bucket_edges(2.0, 1.0, 1.0).is_empty());
}

#[test]
fn an_edge_belongs_to_the_bucket_it_opens() {
    let e = [0.0, 1.0, 2.0, 3.0];
    assert_eq!(bucket_of(&e, 0.0), Some(0));
    assert_eq!(bucket_of(&e, 0.999), Some(0));
    assert_eq!(bucket_of(&e, 1.0), Some(1));
    assert_eq!(bucket_of(&e, 2.5), Some(2));
    assert_eq!(bucket_of(&e, 3.0), None);
    assert_eq!(bucket_of(&e, -0.1), None);
    // 0.2, 0.7 in bucket 0; 1.0 in 1; none in 2.
    assert_eq!(bucket_counts(&e, &[0.2, 0.7, 1.0]), vec![2, 1, 0]);
}

#[test]
fn bucket_rate_divides_by_the_width_at_the_middle() {
    // Width 0.5: edges 0, 0.5, 1. Tokens 10 at 0.1 and 20 at 0.4 → 30 / 0.5 = 60 per unit;
    // 5 at 0.9 → 10 per unit.
    let e = bucket_edges(0.0, 0.9, 0.5);
    assert_eq!(e, vec![0.0, 0.5, 1.0]);
    let r = bucket_rate(&e, &[0.1, 0.4, 0.9], Some(&[10.0, 20.0, 5.0]));
    assert_eq!(r, vec![(0.25, 60.0), (0.75, 10.0)]);
    // Unweighted: 2 requests / 0.5 = 4, then 1 / 0.5 = 2.
    let r = bucket_rate(&e, &[0.1, 0.4, 0.9], None);
    assert_eq!(r, vec![(0.25, 4.0), (0.75, 2.0)]);
}

#[test]
fn percentile_interpolates_linearly() {
    let v = [10.0, 20.0, 30.0, 40.0];
    // p50: idx 0.5·3 = 1.5 → 20 + 0.5·10 = 25. p90: idx 2.7 → 30 + 0.7·10 = 37.
    assert_eq!(percentile_sorted(&v, 50.0), Some(25.0));
    assert!((percentile_sorted(&v, 90.0).unwrap() - 37.0).abs() < 1e-12);
    assert_eq!(percentile_sorted(&v, 0.0), Some(10.0));
    assert_eq!(percentile_sorted(&v, 100.0), Some(40.0));
    assert_eq!(percentile_sorted(&[], 50.0), None);
}

#[test]
fn rolling_percentile_over_the_last_points() {
    // Given out of order; by x: (1,5) (2,1) (3,9) (4,3) (5,7).
    let p = [(3.0, 9.0), (1.0, 5.0), (2.0, 1.0), (5.0, 7.0), (4.0, 3.0)];
    // Median of 3: {5,1,9} → 5 at x=3; {1,9,3} → 3 at x=4; {9,3,7} → 7 at x=5.
    assert_eq!(
        rolling_percentile(&p, 3, 50.0),
        vec![(3.0, 5.0), (4.0, 3.0), (5.0, 7.0)]
    );
    // Max of 2 (p100): {5,1} → 5; {1,9} → 9; {9,3} → 9; {3,7} → 7.
    assert_eq!(
        rolling_percentile(&p, 2, 100.0),
        vec![(2.0, 5.0), (3.0, 9.0), (4.0, 9.0), (5.0, 7.0)]
    );
    assert!(rolling_percentile(&p, 6, 50.0).is_empty());
    assert!(rolling_percentile(&p, 0, 50.0).is_empty());
}

#[test]
fn cdf_steps_by_one_over_n() {
    // Sorted 1, 2, 2, 4 → 1/4, 2/4, 3/4, 4/4; NaN dropped.
    assert_eq!(
        cdf(&[2.0, 4.0, f64::NAN, 1.0, 2.0]),
        vec![(1.0, 0.25), (2.0, 0.5), (2.0, 0.75), (4.0, 1.0)]
    );
    assert!(cdf(&[]).is_empty());
}

#[test]
fn pareto_front_keeps_the_undominated() {
    // (tokens/s, tokens/s/user): (100, 50) (200, 40) (150, 30) (300, 10) (250, 10).
    // (150,30) is beaten by (200,40); (250,10) by (300,10).
    let p = [
        (100.0, 50.0),
        (200.0, 40.0),
        (150.0, 30.0),
        (300.0, 10.0),
        (250.0, 10.0),
    ];
    assert_eq!(
        pareto_front(&p),
        vec![(100.0, 50.0), (200.0, 40.0), (300.0, 10.0)]
    );
    // A duplicate appears once.
    assert_eq!(pareto_front(&[(1.0, 1.0), (1.0, 1.0)]), vec![(1.0, 1.0)]);
}

#[test]
fn lag_is_sent_minus_planned_in_planned_order() {
    let v = lag_over_time(&[(2.0, 2.5), (0.0, 0.1), (1.0, 1.0)]);
    assert_eq!(v.len(), 3);
    assert_eq!(v[0], (0.0, 0.1));
    assert_eq!(v[1], (1.0, 0.0));
    assert_eq!(v[2], (2.0, 0.5));
}

#[test]
fn in_flight_counts_ends_before_starts() {
    // [0,2] [1,3] [2,4]: 1 from 0, 2 from 1, at 2 one ends and one starts → 2, at 3 → 1,
    // at 4 → 0.
    assert_eq!(
        in_flight(&[(0.0, 2.0), (1.0, 3.0), (2.0, 4.0)]),
        vec![(0.0, 1.0), (1.0, 2.0), (2.0, 2.0), (3.0, 1.0), (4.0, 0.0)]
    );
}
