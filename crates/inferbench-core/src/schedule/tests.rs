use super::*;
use proptest::prelude::*;

fn take(s: &mut RateSchedule, n: usize) -> Vec<u64> {
    (0..n).map(|_| s.next_offset_ns()).collect()
}

fn sched(p: ArrivalPattern, rate: f64, ramp: Option<Duration>, seed: u64) -> RateSchedule {
    RateSchedule::new(p, rate, ramp, seed, "profiling").unwrap()
}

/// Mean and coefficient of variation of the gaps (in ns) between consecutive offsets.
fn gap_stats(offsets: &[u64]) -> (f64, f64) {
    let gaps: Vec<f64> = offsets.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt() / mean)
}

fn within(x: f64, expected: f64, rel: f64) -> bool {
    (x / expected - 1.0).abs() <= rel
}

#[test]
fn constant_offsets_are_exactly_k_over_rate() {
    // By hand: 3 req/s → 0, 333_333_333.3, 666_666_666.7, 1 s.
    let mut s = sched(ArrivalPattern::Constant, 3.0, None, 1);
    assert_eq!(
        take(&mut s, 4),
        [0, 333_333_333, 666_666_667, 1_000_000_000]
    );
    for rate in [1.0, 3.0, 7.3, 1000.0, 123_456.789] {
        let mut s = sched(ArrivalPattern::Constant, rate, None, 9);
        for k in 0..20_000u64 {
            assert_eq!(s.next_offset_ns(), (k as f64 * 1e9 / rate).round() as u64);
        }
    }
    // Far into a run the k-th send is still k/rate: no accumulated error.
    let mut s = sched(ArrivalPattern::Constant, 3.0, None, 1);
    let last = s.by_ref().take(3_000_001).last().unwrap();
    assert_eq!(last, 1_000_000_000_000_000);
}

#[test]
fn constant_ignores_the_seed() {
    let a = take(&mut sched(ArrivalPattern::Constant, 50.0, None, 1), 100);
    let b = take(&mut sched(ArrivalPattern::Constant, 50.0, None, 2), 100);
    assert_eq!(a, b);
}

#[test]
fn same_inputs_same_offsets_and_each_input_matters() {
    for p in [
        ArrivalPattern::Poisson,
        ArrivalPattern::Gamma { smoothness: 2.5 },
    ] {
        let base = take(&mut sched(p, 20.0, None, 7), 1000);
        assert_eq!(base, take(&mut sched(p, 20.0, None, 7), 1000));
        assert_ne!(base, take(&mut sched(p, 20.0, None, 8), 1000));
        let warm = RateSchedule::new(p, 20.0, None, 7, "warmup").unwrap();
        assert_ne!(base, take(&mut warm.clone(), 1000));
        // Clones continue identically (the engine may plan ahead from a copy).
        let mut a = sched(p, 20.0, None, 7);
        a.next_offset_ns();
        let mut b = a.clone();
        assert_eq!(take(&mut a, 50), take(&mut b, 50));
    }
}

#[test]
fn the_named_generator_is_arrivals_dot_phase() {
    let rate = 40.0;
    let mut s = sched(ArrivalPattern::Poisson, rate, None, 11);
    let mut rng = ChaCha8Rng::from_seed(derive_seed(11, "arrivals.profiling"));
    let mut t = 0.0;
    assert_eq!(s.next_offset_ns(), 0);
    for _ in 0..100 {
        let x: f64 = Exp1.sample(&mut rng);
        t += x * 1e9 / rate;
        let got = s.next_offset_ns();
        // Same draws, rounded to the nearest ns; the sums differ only in the last bits.
        assert!((got as f64 - t).abs() <= 0.5 + 1e-6, "{got} vs {t}");
    }
}

#[test]
fn poisson_mean_and_cv() {
    let rate = 1000.0;
    let offsets = take(&mut sched(ArrivalPattern::Poisson, rate, None, 42), 200_001);
    let (mean, cv) = gap_stats(&offsets);
    assert!(within(mean, 1e9 / rate, 0.02), "mean {mean}");
    assert!(within(cv, 1.0, 0.03), "cv {cv}");
}

#[test]
fn gamma_cv_follows_smoothness() {
    let rate = 1000.0;
    for (smoothness, cv_expected, tol) in [(4.0, 0.5, 0.03), (0.25, 2.0, 0.05), (1.0, 1.0, 0.03)] {
        let p = ArrivalPattern::Gamma { smoothness };
        let offsets = take(&mut sched(p, rate, None, 42), 200_001);
        let (mean, cv) = gap_stats(&offsets);
        assert!(within(mean, 1e9 / rate, 0.02), "{smoothness}: mean {mean}");
        assert!(within(cv, cv_expected, tol), "{smoothness}: cv {cv}");
    }
}

#[test]
fn leading_gap_puts_the_first_send_one_interval_in() {
    let mut s = sched(ArrivalPattern::Constant, 4.0, None, 1).with_leading_gap();
    assert_eq!(take(&mut s, 3), [250_000_000, 500_000_000, 750_000_000]);
    let mut s = sched(ArrivalPattern::Poisson, 4.0, None, 1).with_leading_gap();
    assert!(s.next_offset_ns() > 0);
}

#[test]
fn ramp_rate_steps_by_hand() {
    // D = 250 ms, target 100/s: start = 100·0.1/0.25 = 40/s; steps of 100 ms at
    // 40 + 60·0 = 40, 40 + 60·0.4 = 64, 40 + 60·0.8 = 88 (a 50 ms last step), then 100.
    let s = sched(
        ArrivalPattern::Poisson,
        100.0,
        Some(Duration::from_millis(250)),
        1,
    );
    let ms = 1_000_000;
    for (t, r) in [
        (0, 40.0),
        (99 * ms, 40.0),
        (100 * ms, 64.0),
        (199 * ms, 64.0),
        (200 * ms, 88.0),
        (249 * ms, 88.0),
        (250 * ms, 100.0),
        (u64::MAX, 100.0),
    ] {
        assert!((s.rate_at(t) - r).abs() < 1e-9, "t={t}: {}", s.rate_at(t));
    }
}

#[test]
fn constant_ramp_by_hand() {
    // Target 1000/s over D = 1 s in 100 ms steps: start 1000·0.1/1 = 100/s; step s has
    // 100 + 900·s/10 = 100 + 90s req/s. Arrivals in [0, D]: 0.1·Σ_{s=0..9}(100 + 90s)
    // = 0.1·(1000 + 4050) = 505 units of work, so sends at work 0, 1, …, 505 (the last
    // exactly at D): 506 offsets ≤ D (float rounding may put the last just past D).
    let d = Duration::from_secs(1);
    let mut s = sched(ArrivalPattern::Constant, 1000.0, Some(d), 1);
    let offsets = take(&mut s, 2000);
    // First step: 100/s = target × step/D, so 10 ms apart: 0, 10, …, 100 ms.
    for (k, &o) in offsets.iter().take(11).enumerate() {
        assert!(o.abs_diff(k as u64 * 10_000_000) <= 1, "{k}: {o}");
    }
    // Second step at 190/s.
    let gap = offsets[12] - offsets[11];
    assert!(gap.abs_diff((1e9 / 190.0) as u64) <= 1, "{gap}");
    let in_ramp = offsets.iter().filter(|&&o| o <= 1_000_000_000).count();
    assert!((505..=506).contains(&in_ramp), "{in_ramp}");
    // After D: the target rate, 1 ms apart.
    let after: Vec<u64> = offsets
        .iter()
        .copied()
        .filter(|&o| o > 1_000_000_000)
        .collect();
    for w in after.windows(2) {
        assert!((w[1] - w[0]).abs_diff(1_000_000) <= 1, "{w:?}");
    }
    assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn poisson_ramp_counts_follow_the_integral() {
    // Target 100,000/s over 1 s: start 10,000/s, step s at 10,000 + 9,000s.
    // ∫₀^D = 0.1·(10·10,000 + 9,000·45) = 50,500 expected sends; first step 1,000.
    let d = Duration::from_secs(1);
    for p in [
        ArrivalPattern::Poisson,
        ArrivalPattern::Gamma { smoothness: 4.0 },
    ] {
        let mut s = sched(p, 100_000.0, Some(d), 3);
        let offsets = take(&mut s, 200_000);
        let count = |lo: u64, hi: u64| offsets.iter().filter(|&&o| o >= lo && o < hi).count();
        let first_step = count(0, 100_000_000) as f64;
        assert!(within(first_step, 1000.0, 0.10), "{p:?}: {first_step}");
        let last_step = count(900_000_000, 1_000_000_000) as f64;
        assert!(within(last_step, 9_100.0, 0.05), "{p:?}: {last_step}");
        let ramp = count(0, 1_000_000_000) as f64;
        assert!(within(ramp, 50_500.0, 0.02), "{p:?}: {ramp}");
        let after: Vec<u64> = offsets
            .iter()
            .copied()
            .filter(|&o| o >= 1_000_000_000)
            .collect();
        assert!(after.len() > 100_000);
        let (mean, _) = gap_stats(&after);
        assert!(within(mean, 10_000.0, 0.02), "{p:?}: {mean}");
    }
}

#[test]
fn slow_ramp_matches_a_step_by_step_walk() {
    // Target 1/s over 100 s: start 0.001/s, so each send spans many 100 ms steps (the
    // whole-step skip). Reference: walk the steps one by one and invert the cumulative
    // work; Λ(D) = 0.1·(1000·0.001 + 0.999·0.001·1000·999/2) = 50.00005 sends in the ramp.
    let (rate, d_s, u_s) = (1.0, 100.0, 0.1);
    let start = rate * u_s / d_s;
    let reference = |k: f64| {
        let mut cum = 0.0;
        for j in 0..1000 {
            let r = start + (rate - start) * (j as f64 * u_s / d_s);
            if cum + r * u_s >= k {
                return j as f64 * u_s + (k - cum) / r;
            }
            cum += r * u_s;
        }
        d_s + (k - cum) / rate
    };
    let ramp = Some(Duration::from_secs(100));
    let mut s = sched(ArrivalPattern::Constant, rate, ramp, 1);
    assert_eq!(s.next_offset_ns(), 0);
    for k in 1..70 {
        let got = s.next_offset_ns() as f64 / 1e9;
        let want = reference(k as f64);
        assert!((got - want).abs() < 1e-6, "{k}: {got} vs {want}");
        assert_eq!(k <= 50, got < d_s, "{k}: {got}");
    }
}

#[test]
fn ramp_shorter_than_a_step_is_the_target_rate() {
    let d = Duration::from_millis(50);
    let mut s = sched(ArrivalPattern::Constant, 200.0, Some(d), 1);
    assert_eq!(s.rate_at(0), 200.0);
    for k in 0..100u64 {
        let o = s.next_offset_ns();
        assert!(o.abs_diff(k * 5_000_000) <= 1, "{k}: {o}");
    }
}

#[test]
fn invalid_parameters_name_the_flag() {
    for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = RateSchedule::new(ArrivalPattern::Poisson, rate, None, 1, "profiling").unwrap_err();
        assert!(e.to_string().starts_with("--request-rate must be"), "{e}");
        let e = RateSchedule::new(ArrivalPattern::Poisson, rate, None, 1, "warmup").unwrap_err();
        assert!(
            e.to_string().starts_with("--warmup-request-rate must"),
            "{e}"
        );
    }
    for smoothness in [0.0, -2.0, f64::NAN, f64::INFINITY] {
        let p = ArrivalPattern::Gamma { smoothness };
        let e = RateSchedule::new(p, 1.0, None, 1, "profiling").unwrap_err();
        assert!(
            e.to_string().starts_with("--arrival-smoothness must"),
            "{e}"
        );
    }
    let zero = Some(Duration::ZERO);
    let e = RateSchedule::new(ArrivalPattern::Poisson, 1.0, zero, 1, "profiling").unwrap_err();
    assert_eq!(
        e.to_string(),
        "--request-rate-ramp-duration must be greater than 0 seconds"
    );
    let e = RateSchedule::new(ArrivalPattern::Poisson, 1.0, zero, 1, "warmup").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("--warmup-request-rate-ramp-duration")
    );
    assert_eq!(
        ConcurrencyRamp::new(0, Duration::from_secs(1)),
        Err(ScheduleError::Concurrency)
    );
    let e = ConcurrencyRamp::new(4, Duration::ZERO).unwrap_err();
    assert!(e.to_string().starts_with("--concurrency-ramp-duration"));
}

#[test]
fn extreme_parameters_stay_ordered() {
    for (p, rate) in [
        (ArrivalPattern::Poisson, 1e-300),
        (ArrivalPattern::Constant, 1e-300),
        (ArrivalPattern::Poisson, 1e300),
        (ArrivalPattern::Constant, 1e300),
        (ArrivalPattern::Gamma { smoothness: 1e-9 }, 10.0),
        (ArrivalPattern::Gamma { smoothness: 1e9 }, 10.0),
        (ArrivalPattern::Gamma { smoothness: 1e-300 }, 10.0),
    ] {
        for ramp in [None, Some(Duration::from_secs(5)), Some(Duration::MAX)] {
            let offsets = take(&mut sched(p, rate, ramp, 5), 200);
            assert_eq!(offsets[0], 0);
            assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "{p:?} {rate}");
        }
    }
    // A rate this low pushes the second send past the clock: clamped, not wrapped, and
    // with room left for the caller to add the phase start.
    let mut s = sched(ArrivalPattern::Constant, 1e-300, None, 1);
    assert_eq!(take(&mut s, 2), [0, MAX_OFFSET_NS]);
    assert!(MAX_OFFSET_NS.checked_add(MAX_OFFSET_NS).is_some());
    // 1e-299 req/s is a finite gap of 1e308 ns: clamped too.
    let mut s = sched(ArrivalPattern::Poisson, 1e-299, None, 1);
    assert_eq!(take(&mut s, 3), [0, MAX_OFFSET_NS, MAX_OFFSET_NS]);
}

#[test]
fn concurrency_ramp_by_hand() {
    // N = 8 over 7 s: one more slot each second; limit v from D·(v−1)/(N−1) = (v−1) s.
    let s = 1_000_000_000;
    let r = ConcurrencyRamp::new(8, Duration::from_secs(7)).unwrap();
    assert_eq!(r.limit_at(0), 1);
    assert_eq!(r.limit_at(s - 1), 1);
    assert_eq!(r.limit_at(s), 2);
    assert_eq!(r.limit_at(6 * s + s / 2), 7);
    assert_eq!(r.limit_at(7 * s - 1), 7);
    assert_eq!(r.limit_at(7 * s), 8);
    assert_eq!(r.limit_at(u64::MAX), 8);
    assert_eq!(r.next_increase_ns(0), Some(s));
    assert_eq!(r.next_increase_ns(s), Some(2 * s));
    assert_eq!(r.next_increase_ns(7 * s - 1), Some(7 * s));
    assert_eq!(r.next_increase_ns(7 * s), None);
    // N = 3 over 1 s: 2 at 0.5 s, 3 at 1 s.
    let r = ConcurrencyRamp::new(3, Duration::from_secs(1)).unwrap();
    assert_eq!(r.limit_at(s / 2 - 1), 1);
    assert_eq!(r.limit_at(s / 2), 2);
    assert_eq!(r.limit_at(s - 1), 2);
    assert_eq!(r.limit_at(s), 3);
    // N = 1: nothing to ramp.
    let r = ConcurrencyRamp::new(1, Duration::from_secs(1)).unwrap();
    assert_eq!(r.limit_at(0), 1);
    assert_eq!(r.next_increase_ns(0), None);
}

#[test]
fn concurrency_ramp_is_monotone_and_next_increase_is_exact() {
    let r = ConcurrencyRamp::new(37, Duration::from_millis(1234)).unwrap();
    let mut prev = r.limit_at(0);
    assert_eq!(prev, 1);
    let mut t = 0;
    while let Some(next) = r.next_increase_ns(t) {
        assert!(next > t);
        assert_eq!(r.limit_at(next - 1), prev);
        assert_eq!(r.limit_at(next), prev + 1);
        prev += 1;
        t = next;
    }
    assert_eq!(prev, 37);
    assert_eq!(t, 1_234_000_000);
    for t in (0..1_300_000_000u64).step_by(977_777) {
        assert!(r.limit_at(t) <= r.limit_at(t + 977_777));
    }
}

fn pattern() -> impl Strategy<Value = ArrivalPattern> {
    prop_oneof![
        Just(ArrivalPattern::Constant),
        Just(ArrivalPattern::Poisson),
        (-3.0f64..3.0).prop_map(|e| ArrivalPattern::Gamma {
            smoothness: 10f64.powf(e)
        }),
    ]
}

proptest! {
    #[test]
    fn offsets_never_decrease(
        p in pattern(),
        log_rate in -4.0f64..8.0,
        ramp_ns in proptest::option::of(1u64..100_000_000_000),
        seed in any::<u64>(),
        label in "[a-z]{0,8}",
        leading_gap in any::<bool>(),
    ) {
        let ramp = ramp_ns.map(Duration::from_nanos);
        let mut s = RateSchedule::new(p, 10f64.powf(log_rate), ramp, seed, &label).unwrap();
        if leading_gap {
            s = s.with_leading_gap();
        }
        let mut prev = 0;
        for _ in 0..500 {
            let o = s.next_offset_ns();
            prop_assert!(o >= prev, "{o} < {prev}");
            prev = o;
        }
    }
}

fn series(points: &[(f64, f64)]) -> Arc<RateSeries> {
    let pts = points
        .iter()
        .map(|&(time_s, qps)| crate::rate_series::RatePoint { time_s, qps })
        .collect();
    Arc::new(RateSeries::new(pts).unwrap())
}

#[test]
fn constant_arrivals_follow_a_rate_series_step_by_step() {
    // 10 → 20 req/s over 1 s: step k (0.1 s long, from 0.1·k s) runs at 10 + k req/s and
    // holds 1 + 0.1·k gaps of work. Gap 1 fills step 0 exactly (0.1 s); gap 2 is 1/11 s into
    // step 1 (0.190909… s); gap 3 uses the 0.1 left of step 1 and 0.9/12 s of step 2
    // (0.275 s); gap 4 uses 0.3 of step 2 and 0.7/13 s of step 3 (0.353846… s).
    let mut s = sched(ArrivalPattern::Constant, 10.0, None, 1)
        .with_series(series(&[(0.0, 10.0), (1.0, 20.0)]));
    assert_eq!(
        take(&mut s, 5),
        vec![0, 100_000_000, 190_909_091, 275_000_000, 353_846_154]
    );
}

#[test]
fn after_the_series_the_last_rate_holds() {
    // One 0.1 s step at 10 req/s, then 20 req/s: a gap every 50 ms.
    let mut s = sched(ArrivalPattern::Constant, 10.0, None, 1)
        .with_series(series(&[(0.0, 10.0), (0.1, 20.0)]));
    assert_eq!(
        take(&mut s, 5),
        vec![0, 100_000_000, 150_000_000, 200_000_000, 250_000_000]
    );
    // A last point between two steps: the step that starts before it still runs a whole
    // 0.1 s at its interpolated rate (AIPerf's controller ticks every 0.1 s).
    let s = sched(ArrivalPattern::Constant, 10.0, None, 1)
        .with_series(series(&[(0.0, 10.0), (0.25, 20.0)]));
    let at = |ms: u64| s.rate_at(ms * 1_000_000);
    assert_eq!((at(0), at(150), at(299), at(300)), (10.0, 14.0, 18.0, 20.0));
}

#[test]
fn a_rate_series_starts_when_the_ramp_ends() {
    // Ramp to 10 req/s over 0.2 s: start rate 10·0.1/0.2 = 5, so step 0 runs at 5 and
    // step 1 at 5 + 5·0.5 = 7.5. The series (10 → 20 over 1 s) then starts at 0.2 s.
    // Gap 1: 0.5 in step 0, then 0.5/7.5 s into step 1 (0.1666… s). Gap 2: the 0.25 left
    // of step 1, then 0.75/10 s into the series' first step (0.275 s).
    let mut s = sched(
        ArrivalPattern::Constant,
        10.0,
        Some(Duration::from_millis(200)),
        1,
    )
    .with_series(series(&[(0.0, 10.0), (1.0, 20.0)]));
    let at = |s: &RateSchedule, ms: u64| s.rate_at(ms * 1_000_000);
    assert_eq!(
        [
            at(&s, 0),
            at(&s, 150),
            at(&s, 250),
            at(&s, 350),
            at(&s, 1250)
        ],
        [5.0, 7.5, 10.0, 11.0, 20.0]
    );
    assert_eq!(take(&mut s, 3), vec![0, 166_666_667, 275_000_000]);
}

proptest! {
    /// Any pattern over any small series: the offsets never go back.
    #[test]
    fn series_offsets_never_decrease(
        qs in proptest::collection::vec(0.5f64..200.0, 2..5),
        seed in 0u64..1000,
        poisson in proptest::bool::ANY,
    ) {
        let pts: Vec<(f64, f64)> = qs.iter().enumerate().map(|(i, &q)| (i as f64 * 0.37, q)).collect();
        let p = if poisson { ArrivalPattern::Poisson } else { ArrivalPattern::Constant };
        let mut s = sched(p, qs[0], None, seed).with_series(series(&pts));
        let v = take(&mut s, 200);
        prop_assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }
}
