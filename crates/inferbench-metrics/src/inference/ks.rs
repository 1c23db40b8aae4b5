//! The two-sample Kolmogorov–Smirnov test, two-sided, as SciPy's `ks_2samp` computes it
//! with its default `method="auto"` (what AIPerf 0.13's `--convergence-mode distribution`
//! calls): the statistic D = max |F₁(x) − F₂(x)| over the pooled values, and its p-value
//! P(D ≥ d) under the null hypothesis that both samples come from one continuous
//! distribution, exact when neither sample holds more than [`MAX_EXACT_N`] values. Above,
//! SciPy uses the exact one-sample distribution at n = m·n/(m+n) (`kstwo.sf`); here its
//! limit at √n·D + 1/(6√n) (Stephens' correction), within 0.2 % of it from n = 500 on.
//!
//! The exact p-value counts lattice paths (Hodges 1958): a sample pair is a path from (0, 0)
//! to (m, n) that steps right for a value of the first sample and up for one of the second,
//! in sorted order; all C(m+n, m) paths are equally likely under the null hypothesis, and D
//! is the largest |x/m − y/n| the path visits. P(D < d) is the share of paths that stay
//! strictly inside |x/m − y/n| < d; it is computed as a probability at each point, so no
//! binomial coefficient is ever formed (the recursion Viehmann 2021 describes).

/// SciPy's `MAX_AUTO_N`: above this many values in either sample, the asymptotic p-value.
pub const MAX_EXACT_N: usize = 10_000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KsResult {
    /// D, the largest distance between the two empirical distribution functions.
    pub statistic: f64,
    /// P(D ≥ statistic) under the null hypothesis, in [0, 1].
    pub p_value: f64,
    /// Whether the p-value is the exact one (else the limiting Kolmogorov distribution).
    pub exact: bool,
}

/// The two-sided test of `a` against `b`. None when either sample is empty or holds a
/// non-finite value.
pub fn ks_2samp(a: &[f64], b: &[f64]) -> Option<KsResult> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let (m, n) = (a.len(), b.len());
    let g = gcd(m, n);
    let (mg, ng) = ((m / g) as i128, (n / g) as i128);
    let h = distance_steps(a, b, mg, ng);
    let lcm = (m / g) as f64 * n as f64;
    let d = h as f64 / lcm;
    if m.max(n) <= MAX_EXACT_N {
        let p = if h == 0 {
            1.0
        } else {
            1.0 - inside_share(m, n, mg, ng, h)
        };
        return Some(KsResult {
            statistic: d,
            p_value: p.clamp(0.0, 1.0),
            exact: true,
        });
    }
    // SciPy takes the one-sample distribution at n = round(m·n/(m+n)) (`kstwo`); its limit
    // with the 1/(6√n) correction agrees with it to 0.2 % (relative) from n = 500 on.
    let en = ((m as f64 * n as f64) / (m as f64 + n as f64)).round_ties_even();
    Some(KsResult {
        statistic: d,
        p_value: kolmogorov_sf(en.sqrt() * d + 1.0 / (6.0 * en.sqrt())).clamp(0.0, 1.0),
        exact: false,
    })
}

fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// D in units of 1/lcm(m, n): the largest |x·(n/g) − y·(m/g)| over the pooled values, with
/// x (y) the values of `a` (`b`) at or below it. An integer, so exact (SciPy rounds
/// D·lcm to the same integer).
fn distance_steps(a: &[f64], b: &[f64], mg: i128, ng: i128) -> i128 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut h) = (0usize, 0usize, 0i128);
    while i < a.len() || j < b.len() {
        // The next pooled value; every value equal to it is counted before comparing.
        let v = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.min(*y),
            (Some(x), None) => *x,
            (None, Some(y)) => *y,
            (None, None) => break,
        };
        while i < a.len() && a[i] <= v {
            i += 1;
        }
        while j < b.len() && b[j] <= v {
            j += 1;
        }
        h = h.max((i as i128 * ng - j as i128 * mg).abs());
    }
    h
}

/// The share of the C(m+n, m) lattice paths from (0, 0) to (m, n) that keep
/// |x·ng − y·mg| < h at every point. Row by row over x, `row[y]` holds the share of the
/// paths to (x, y) that stayed inside: (x·share(x−1, y) + y·share(x, y−1)) / (x + y), since
/// x/(x+y) of the paths to (x, y) arrive from the left and y/(x+y) from below. Only the
/// band of y inside the lines is visited.
fn inside_share(m: usize, n: usize, mg: i128, ng: i128, h: i128) -> f64 {
    let band = |x: i128| -> Option<(usize, usize)> {
        // x·ng − h < y·mg < x·ng + h.
        let lo = (x * ng - h).div_euclid(mg) + 1;
        let hi = (x * ng + h - 1).div_euclid(mg);
        let (lo, hi) = (lo.max(0), hi.min(n as i128));
        (lo <= hi).then_some((lo as usize, hi as usize))
    };
    let mut row = vec![0.0f64; n + 1];
    let Some((lo0, hi0)) = band(0) else {
        return 0.0;
    };
    // Column x = 0: every path to (0, y) is the straight one; inside while y is in the band.
    for v in row.iter_mut().take(hi0 + 1).skip(lo0) {
        *v = 1.0;
    }
    let mut prev = (lo0, hi0);
    for x in 1..=m {
        let Some((lo, hi)) = band(x as i128) else {
            return 0.0;
        };
        let xf = x as f64;
        for y in lo..=hi {
            let left = if (prev.0..=prev.1).contains(&y) {
                row[y]
            } else {
                0.0
            };
            let below = if y > lo { row[y - 1] } else { 0.0 };
            let yf = y as f64;
            row[y] = (xf * left + yf * below) / (xf + yf);
        }
        prev = (lo, hi);
    }
    if (prev.0..=prev.1).contains(&n) {
        row[n]
    } else {
        0.0
    }
}

/// The limiting Kolmogorov distribution's survival function Q(λ) = P(K > λ):
/// 2 Σ (−1)^(k−1) e^(−2k²λ²) for λ ≥ 1, and 1 − (√(2π)/λ) Σ e^(−(2k−1)²π²/(8λ²)) below
/// (the two forms converge fast on their sides).
pub fn kolmogorov_sf(lambda: f64) -> f64 {
    if lambda <= 0.0 {
        return 1.0;
    }
    if lambda < 1.0 {
        let c = -std::f64::consts::PI.powi(2) / (8.0 * lambda * lambda);
        let s: f64 = (1..=20)
            .map(|k| (((2 * k - 1) as f64).powi(2) * c).exp())
            .sum();
        return 1.0 - (2.0 * std::f64::consts::PI).sqrt() / lambda * s;
    }
    let s: f64 = (1..=100)
        .map(|k| {
            let sign = if k % 2 == 1 { 1.0 } else { -1.0 };
            sign * (-2.0 * (k * k) as f64 * lambda * lambda).exp()
        })
        .sum();
    2.0 * s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn separated_samples_of_two_and_two() {
        // {1,2} against {3,4}: D = 1. Of the C(4,2) = 6 orderings only 1122 and 2211 reach
        // |x/2 − y/2| = 1, so P(D ≥ 1) = 2/6.
        let r = ks_2samp(&[1.0, 2.0], &[3.0, 4.0]).unwrap();
        assert_eq!(r.statistic, 1.0);
        assert!(close(r.p_value, 2.0 / 6.0, 1e-15), "{r:?}");
        assert!(r.exact);
    }

    #[test]
    fn interleaved_samples_of_three_and_three() {
        // {1,3,5} against {2,4,6}: F1 − F2 at 1..6 is 1/3, 0, 1/3, 0, 1/3, 0: D = 1/3. Every
        // path of 3 right and 3 up steps visits |x − y| ≥ 1 (its first step), so
        // P(D ≥ 1/3) = 1.
        let r = ks_2samp(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]).unwrap();
        assert!(close(r.statistic, 1.0 / 3.0, 1e-15));
        assert!(close(r.p_value, 1.0, 1e-15), "{r:?}");
        // {1,2,4} against {3,5,6}: the steps R R U R U U reach x − y = 2: D = 2/3. The
        // paths that never reach |x − y| = 2 are back at x = y after every second step, so
        // each pair of steps is RU or UR: 2³ = 8 of the C(6,3) = 20 paths. P = 12/20.
        let r = ks_2samp(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0]).unwrap();
        assert!(close(r.statistic, 2.0 / 3.0, 1e-15));
        assert!(close(r.p_value, 12.0 / 20.0, 1e-14), "{r:?}");
    }

    #[test]
    fn unequal_sizes_count_the_band_of_the_scaled_lines() {
        // a = {1, 2} (m = 2), b = {3} (n = 1): D = |2/2 − 0| = 1. Orderings of RRU: RRU
        // reaches x/2 − y = 1, RUR reaches 1/2 at most, URR reaches |0 − 1| = 1. P = 2/3.
        let r = ks_2samp(&[1.0, 2.0], &[3.0]).unwrap();
        assert_eq!(r.statistic, 1.0);
        assert!(close(r.p_value, 2.0 / 3.0, 1e-15), "{r:?}");
        // a = {1, 3}, b = {2}: x/2 − y over the path R U R: 1/2, −1/2+… = 1/2 − 1 = −1/2,
        // then 0: D = 1/2, and every path reaches 1/2 (its first step), so P = 1.
        let r = ks_2samp(&[1.0, 3.0], &[2.0]).unwrap();
        assert_eq!(r.statistic, 0.5);
        assert!(close(r.p_value, 1.0, 1e-15), "{r:?}");
    }

    #[test]
    fn ties_count_every_equal_value_before_comparing() {
        // Identical samples: F1 = F2 everywhere, D = 0, p = 1.
        let r = ks_2samp(&[5.0, 5.0, 7.0], &[5.0, 7.0, 5.0]).unwrap();
        assert_eq!(r.statistic, 0.0);
        assert_eq!(r.p_value, 1.0);
    }

    #[test]
    fn bad_input_is_none() {
        assert!(ks_2samp(&[], &[1.0]).is_none());
        assert!(ks_2samp(&[1.0, f64::NAN], &[1.0]).is_none());
    }

    #[test]
    fn the_limit_distribution_at_known_points() {
        // Q(λ) of the Kolmogorov distribution: Q(1.3581) ≈ 0.05 and Q(1.6276) ≈ 0.01 (the
        // tables' critical values); both series forms agree where they meet.
        assert!(close(kolmogorov_sf(1.358_098_6), 0.05, 1e-6));
        assert!(close(kolmogorov_sf(1.627_61), 0.01, 1e-5));
        let below = {
            let l: f64 = 0.999_999_9;
            kolmogorov_sf(l)
        };
        assert!(close(below, kolmogorov_sf(1.0), 1e-6));
        assert_eq!(kolmogorov_sf(0.0), 1.0);
    }

    /// The exact p-value by brute force: every order of m A-steps and n B-steps (a bit mask
    /// of m + n bits with m ones), its largest |x·n − y·m|, and the share of orders that
    /// reach the observed one.
    fn brute_force(m: usize, n: usize, observed: i128) -> f64 {
        let (mut hit, mut all) = (0u64, 0u64);
        for mask in 0u32..(1 << (m + n)) {
            if mask.count_ones() as usize != m {
                continue;
            }
            all += 1;
            let (mut x, mut y, mut best) = (0i128, 0i128, 0i128);
            for bit in 0..m + n {
                if mask >> bit & 1 == 1 {
                    x += 1;
                } else {
                    y += 1;
                }
                best = best.max((x * n as i128 - y * m as i128).abs());
            }
            if best >= observed {
                hit += 1;
            }
        }
        hit as f64 / all as f64
    }

    proptest::proptest! {
        /// Distinct values in any interleaving: the band recursion equals the enumeration.
        #[test]
        fn the_exact_p_value_counts_every_order(
            order in proptest::collection::vec(proptest::bool::ANY, 2..12)
        ) {
            let a: Vec<f64> = order.iter().enumerate().filter(|(_, b)| **b).map(|(i, _)| i as f64).collect();
            let b: Vec<f64> = order.iter().enumerate().filter(|(_, b)| !**b).map(|(i, _)| i as f64).collect();
            proptest::prop_assume!(!a.is_empty() && !b.is_empty());
            let (m, n) = (a.len(), b.len());
            let r = ks_2samp(&a, &b).unwrap();
            // D·m·n is the largest |x·n − y·m| along this very order.
            let observed = (r.statistic * (m * n) as f64).round() as i128;
            let want = brute_force(m, n, observed);
            proptest::prop_assert!((r.p_value - want).abs() < 1e-12, "{r:?} vs {want}");
        }
    }

    #[test]
    fn above_ten_thousand_values_the_p_value_is_asymptotic() {
        // 0 … 10000 against the same shifted by 150.5: F1 − F2 is largest (151/10001) at
        // 150, 151, …; en = 10001²/20002 = 5000.5, rounded half to even: 5000.
        let a: Vec<f64> = (0..10_001).map(f64::from).collect();
        let b: Vec<f64> = a.iter().map(|v| v + 150.5).collect();
        let r = ks_2samp(&a, &b).unwrap();
        assert!(!r.exact);
        assert!(close(r.statistic, 151.0 / 10_001.0, 1e-15));
        let n: f64 = 5000.0;
        let want = kolmogorov_sf(n.sqrt() * 151.0 / 10_001.0 + 1.0 / (6.0 * n.sqrt()));
        assert!(close(r.p_value, want, 1e-15));
        // SciPy 1.17's ks_2samp gives 0.2023785 here (its kstwo.sf at n = 5000): within
        // 0.01 % of ours.
        assert!(close(r.p_value, 0.202_378_5, 2e-5), "{r:?}");
    }
}
