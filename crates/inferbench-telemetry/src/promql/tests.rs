use super::*;

const MIN: i64 = 60_000_000_000;

/// A series in promqltest's `load <step>` notation: items separated by blanks, each a
/// number or `a+bxn` (a, a+b, …, a+n·b), one sample per step from t=0.
fn load(step_ns: i64, spec: &str) -> Vec<Point> {
    let mut values = Vec::new();
    for item in spec.split_whitespace() {
        match item.split_once('x') {
            Some((ab, n)) => {
                let (a, b) = ab.split_once('+').expect("a+bxn");
                let (a, b): (f64, f64) = (a.parse().unwrap(), b.parse().unwrap());
                let n: u32 = n.parse().unwrap();
                values.extend((0..=n).map(|k| a + b * f64::from(k)));
            }
            None => values.push(item.parse().unwrap()),
        }
    }
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| Point {
            t_ns: i as i64 * step_ns,
            v,
        })
        .collect()
}

/// `f(x[range])` at `at`: the range is `(at − range, at]`.
fn at(f: fn(&[Point], i64, i64) -> Option<f64>, series: &[Point], range: i64, at: i64) -> f64 {
    f(series, at - range, at).expect("a result")
}

fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "got {got}, want {want}"
    );
}

#[test]
fn load_notation_helper() {
    let s = load(5 * MIN, "0+10x2 7");
    let v: Vec<f64> = s.iter().map(|p| p.v).collect();
    assert_eq!(v, [0.0, 10.0, 20.0, 7.0]);
    assert_eq!(s[3].t_ns, 15 * MIN);
}

// The golden vectors of promqltest's functions.test (reference §1.3), verbatim.

#[test]
fn golden_increase_0_plus_10x10() {
    close(
        at(increase, &load(5 * MIN, "0+10x10"), 50 * MIN, 50 * MIN),
        100.0,
    );
}

#[test]
fn golden_increase_with_a_reset() {
    let s = load(5 * MIN, "0+18x5 0+18x5");
    close(at(increase, &s, 50 * MIN, 50 * MIN), 160.0);
    close(at(increase, &s, 100 * MIN, 50 * MIN), 162.0);
}

#[test]
fn golden_increase_start_extrapolation_capped() {
    close(
        at(increase, &load(5 * MIN, "10+10x10"), 100 * MIN, 50 * MIN),
        105.0,
    );
}

#[test]
fn golden_increase_zero_floor() {
    close(
        at(increase, &load(5 * MIN, "1+10x10"), 100 * MIN, 50 * MIN),
        101.0,
    );
}

#[test]
fn golden_increase_0_1_2_3_2_3_4() {
    close(
        at(
            increase,
            &load(5 * MIN, "0 1 2 3 2 3 4"),
            30 * MIN,
            30 * MIN,
        ),
        7.0,
    );
}

#[test]
fn golden_rate_with_a_reset() {
    close(
        at(rate, &load(5 * MIN, "0+27x4 0+27x5"), 50 * MIN, 50 * MIN),
        0.08,
    );
}

#[test]
fn golden_rate_0_plus_80x10() {
    close(
        at(rate, &load(5 * MIN, "0+80x10"), 50 * MIN, 50 * MIN),
        0.8 / 3.0,
    );
}

#[test]
fn golden_rate_load_4m_zero_floor_series() {
    let want = [0.5, 0.55, 0.6, 0.6, 0.6, 0.6];
    for (k, want) in want.into_iter().enumerate() {
        let s = load(4 * MIN, &format!("{}+240x10", 60 * k));
        close(at(rate, &s, 20 * MIN, 10 * MIN), want);
    }
}

#[test]
fn golden_irate() {
    close(
        at(irate, &load(5 * MIN, "0+10x10"), 50 * MIN, 50 * MIN),
        10.0 / 300.0,
    );
    close(
        at(irate, &load(5 * MIN, "0+10x5 0+10x5"), 50 * MIN, 30 * MIN),
        0.0,
    );
}

#[test]
fn left_open_range_excludes_the_start_sample() {
    // With t=0 included the 50m increase of `0+18x5 0+18x5` would be 162 (see above); the
    // range (0, 50m] has 10 samples.
    let s = load(5 * MIN, "0+18x5 0+18x5");
    assert_eq!(in_range(&s, 0, 50 * MIN).len(), 10);
    assert_eq!(in_range(&s, -1, 50 * MIN).len(), 11);
}

#[test]
fn misaligned_scrapes_extrapolate_to_the_edges() {
    // §1.3: a 5 m window scraped every 60 s, samples at 30, 90, …, 270 s: Δ=40 over S=240 s,
    // both gaps (30 s) under 1.1 × 60 s, so 40 × 300/240 = 50.
    let s: Vec<Point> = (0..5)
        .map(|i| Point {
            t_ns: (30 + 60 * i) * 1_000_000_000,
            v: 100.0 + 10.0 * i as f64,
        })
        .collect();
    close(increase(&s, 0, 300_000_000_000).unwrap(), 50.0);
    close(rate(&s, 0, 300_000_000_000).unwrap(), 50.0 / 300.0);
    // The window opened 37 s earlier: a 67 s start gap (≥ 1.1 × 60 s) is capped at
    // avg/2 = 30 s, so 40 × (240+30+30)/240 = 50 again.
    close(
        increase(&s, -37_000_000_000, 300_000_000_000).unwrap(),
        50.0,
    );
    // A 65 s start gap is kept: 40 × (240+65+30)/240.
    close(
        increase(&s, -35_000_000_000, 300_000_000_000).unwrap(),
        40.0 * 335.0 / 240.0,
    );
}

#[test]
fn delta_has_no_reset_correction_and_no_zero_floor() {
    let s = load(5 * MIN, "0 1 2 3 2 3 4");
    // (0, 30m]: 1..4 over 25 m, Δ=3, start gap 5 m kept: 3 × 30/25.
    close(at(delta, &s, 30 * MIN, 30 * MIN), 3.0 * 30.0 / 25.0);
    // Gauges may fall: 10 → 4 over S=10 m, start gap 5 m kept: −6 × 15/10.
    let g = load(5 * MIN, "10 7 4");
    close(at(delta, &g, 15 * MIN, 10 * MIN), -6.0 * 15.0 / 10.0);
    // increase on the same 1+10x10 series with the zero floor is 101; delta keeps the
    // avg/2 start: 100 × 52.5/50 = 105.
    close(
        at(delta, &load(5 * MIN, "1+10x10"), 100 * MIN, 50 * MIN),
        105.0,
    );
}

#[test]
fn idelta_is_the_last_step_even_when_it_falls() {
    let s = load(5 * MIN, "0+10x5 0+10x5");
    close(at(idelta, &s, 50 * MIN, 30 * MIN), -50.0);
    close(at(idelta, &s, 50 * MIN, 50 * MIN), 10.0);
    // irate of the same reset: the last value over the step.
    let r = load(5 * MIN, "5 8 3");
    close(at(irate, &r, 50 * MIN, 10 * MIN), 3.0 / 300.0);
}

#[test]
fn fewer_than_two_samples_or_equal_times_give_nothing() {
    let s = load(5 * MIN, "1 2");
    assert_eq!(increase(&s, 0, 10 * MIN), None); // only t=5m in (0, 10m]
    assert_eq!(rate(&[], 0, MIN), None);
    assert_eq!(irate(&s[..1], -MIN, MIN), None);
    let same = [Point { t_ns: 5, v: 1.0 }, Point { t_ns: 5, v: 2.0 }];
    assert_eq!(irate(&same, 0, 10), None);
    assert_eq!(idelta(&same, 0, 10), None);
}

#[test]
fn exact_increase_sums_rises_and_restarts() {
    let s = load(MIN, "3 5 9 2 4 4 1");
    // 2 + 4 + 2 (restart) + 2 + 0 + 1 (restart) = 11, two drops.
    assert_eq!(
        exact_increase(&s),
        ExactIncrease {
            increase: 11.0,
            resets: 2
        }
    );
    assert_eq!(exact_increase(&s[..1]), ExactIncrease::default());
}
