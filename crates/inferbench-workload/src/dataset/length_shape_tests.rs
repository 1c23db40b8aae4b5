use super::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

fn shape(v: Value) -> LengthShape {
    LengthShape::from_value("--isl-dist", &v).unwrap()
}

fn err(v: Value) -> String {
    LengthShape::from_value("--isl-dist", &v).unwrap_err()
}

fn draws(s: &LengthShape, n: usize) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    (0..n).map(|_| s.sample(&mut rng)).collect()
}

#[test]
fn a_log_normal_takes_sigma_and_mu_from_mean_and_median() {
    // mean 1024, median 904: ln(1024/904) = ln 1.132743 = 0.124643, so σ = √0.249286 =
    // 0.499285 and μ = ln 904 = 6.806829 (worked by hand).
    let s = shape(json!({"mean": 1024, "median": 904}));
    let Kind::LogNormal { mu, sigma } = s.kind else {
        panic!("{s:?}")
    };
    assert!((sigma - 0.499285).abs() < 1e-5, "{sigma}");
    assert!((mu - 6.806829).abs() < 1e-5, "{mu}");
}

#[test]
fn log_normal_draws_have_the_median_and_mean_asked_for() {
    let s = shape(json!({"mean": 1024, "median": 904}));
    let mut v = draws(&s, 40_000);
    let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
    v.sort_unstable();
    let median = v[v.len() / 2] as f64;
    // The draws' sd is 1024·√(e^σ² − 1) ≈ 545, so the mean's standard error is ≈ 2.7.
    assert!((mean - 1024.0).abs() < 20.0, "{mean}");
    assert!((median - 904.0).abs() < 15.0, "{median}");
    // Right-skewed: more than half the draws are below the mean.
    let below = v.iter().filter(|&&x| (x as f64) < 1024.0).count();
    assert!(below > 22_000, "{below}");
}

#[test]
fn a_median_equal_to_the_mean_is_that_length_every_time() {
    let s = shape(json!({"mean": 300, "median": 300}));
    assert!(draws(&s, 100).iter().all(|&x| x == 300));
}

#[test]
fn clamps_bound_every_draw() {
    let s = shape(json!({"mean": 100, "median": 50, "min": 40, "max": 120}));
    let v = draws(&s, 5_000);
    assert!(v.iter().all(|&x| (40..=120).contains(&x)));
    // The clamps are reached (a median of 50 puts many draws below 40, and a heavy tail
    // puts some above 120).
    assert!(v.contains(&40) && v.contains(&120));
}

#[test]
fn peaks_are_chosen_by_their_relative_weights() {
    let s = shape(json!({"peaks": [{"value": 10, "weight": 3}, {"value": 20, "weight": 1}]}));
    let v = draws(&s, 20_000);
    assert!(v.iter().all(|&x| x == 10 || x == 20));
    let tens = v.iter().filter(|&&x| x == 10).count() as f64 / 20_000.0;
    assert!((tens - 0.75).abs() < 0.02, "{tens}");
}

#[test]
fn a_peak_may_nest_its_distribution_and_default_its_weight() {
    let s = shape(json!({"peaks": [
        {"distribution": {"mean": 256, "median": 214}},
        {"mean": 2048, "median": 1891}
    ]}));
    let Kind::Mixture(parts) = &s.kind else {
        panic!("{s:?}")
    };
    assert_eq!(parts.len(), 2);
    assert!(parts.iter().all(|(w, _)| (*w - 0.5).abs() < 1e-12));
}

#[test]
fn empirical_points_return_only_their_values() {
    let s = shape(json!({"points": [{"value": 128, "weight": 40}, {"value": 512, "weight": 60}]}));
    let v = draws(&s, 10_000);
    assert!(v.iter().all(|&x| x == 128 || x == 512));
    let small = v.iter().filter(|&&x| x == 128).count() as f64 / 10_000.0;
    assert!((small - 0.4).abs() < 0.02, "{small}");
}

#[test]
fn a_normal_and_a_fixed_length_read_as_their_flags_would() {
    assert!(draws(&shape(json!(64)), 10).iter().all(|&x| x == 64));
    assert!(
        draws(&shape(json!({"value": 64})), 10)
            .iter()
            .all(|&x| x == 64)
    );
    let s = shape(json!({"mean": 128, "stddev": 20, "type": "normal"}));
    assert_eq!(
        s.kind,
        Kind::Normal {
            mean: 128.0,
            stddev: 20.0
        }
    );
}

#[test]
fn bad_distributions_name_the_field() {
    assert!(
        err(json!({"mean": 100, "median": 200}))
            .starts_with("--isl-dist.median: 200 is above the mean 100")
    );
    assert!(err(json!({"median": 200})).starts_with("--isl-dist.mean: missing"));
    assert!(err(json!({"mean": 10, "sd": 2})).starts_with("--isl-dist.sd: not a field"));
    assert!(
        err(json!({"mean": 10, "stddev": 2, "median": 9}))
            .starts_with("--isl-dist.stddev: cannot be given with median")
    );
    assert!(
        err(json!({"peaks": [{"value": 1}]}))
            .starts_with("--isl-dist.peaks: a list of two or more")
    );
    assert!(
        err(json!({"peaks": [{"value": 1}, {"mean": 5, "median": "x"}]}))
            .starts_with("--isl-dist.peaks[1].median: \"x\": not a number")
    );
    assert!(
        err(json!({"mean": 10, "type": "lognormal"}))
            .starts_with("--isl-dist.type: \"lognormal\" does not match")
    );
    assert!(
        err(json!({"value": 10, "min": 5, "max": 4}))
            .starts_with("--isl-dist.min: 5 is above max 4")
    );
    assert!(
        err(json!({"value": -3}))
            .starts_with("--isl-dist.value: -3: a length is a finite number ≥ 0")
    );
    assert!(
        err(json!("abc")).starts_with("--isl-dist: a length distribution is a number or an object")
    );
    assert!(
        LengthShape::parse("--osl-dist", "{mean")
            .unwrap_err()
            .starts_with("--osl-dist: not JSON")
    );
}

#[test]
fn needs_general_finds_medians_clamps_and_nested_mixtures() {
    assert!(!LengthShape::needs_general(&json!(5)));
    // Top-level points are a mixture of fixed values: --seq-dist says that.
    assert!(!LengthShape::needs_general(
        &json!({"points": [{"value": 3}, {"value": 4}]})
    ));
    assert!(!LengthShape::needs_general(
        &json!({"mean": 5, "stddev": 1})
    ));
    assert!(!LengthShape::needs_general(
        &json!({"peaks": [{"mean": 5}, {"mean": 9, "stddev": 2}]})
    ));
    assert!(LengthShape::needs_general(&json!({"mean": 5, "median": 4})));
    assert!(LengthShape::needs_general(&json!({"mean": 5, "max": 4})));
    assert!(LengthShape::needs_general(
        &json!({"peaks": [{"mean": 5}, {"mean": 9, "median": 8}]})
    ));
    assert!(LengthShape::needs_general(
        &json!({"peaks": [{"mean": 5}, {"distribution": {"points": [{"value": 3}]}}]})
    ));
}

proptest::proptest! {
    // Any text: an error or a shape, never a panic.
    #[test]
    fn any_text_parses_or_errs(t in ".{0,80}") {
        let _ = LengthShape::parse("--isl-dist", &t);
    }

    // Any valid log-normal with clamps: every draw is a whole token within the clamps.
    #[test]
    fn log_normal_draws_stay_in_their_clamps(
        median in 1.0f64..5000.0,
        ratio in 1.0f64..4.0,
        lo in 1u32..50,
        span in 0u32..5000,
        seed in 0u64..1000,
    ) {
        let s = shape(json!({
            "mean": median * ratio, "median": median,
            "min": lo, "max": lo + span,
        }));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..50 {
            let x = s.sample(&mut rng);
            proptest::prop_assert!(x >= u64::from(lo) && x <= u64::from(lo + span), "{x}");
        }
    }
}
