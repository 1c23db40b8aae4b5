//! The Harrell–Davis quantile estimator (design note §2.3): a weighted mean of every order
//! statistic, smoother and of lower variance than one or two order statistics for tail
//! quantiles. Population: the values of one sample; the result estimates the population
//! quantile, in the values' unit. Not what AIPerf prints (that is numpy's linear
//! interpolation, [`crate::stats::percentile_linear`]); use it for comparisons only.

use statrs::function::beta::checked_beta_reg;

/// `HD(q) = Σᵢ Wᵢ X₍ᵢ₎`, `Wᵢ = I_{i/n}(a, b) − I_{(i−1)/n}(a, b)`, `a = q(n+1)`,
/// `b = (1−q)(n+1)`, `I` the regularized incomplete beta function. `sorted` ascending;
/// `q` a fraction in (0, 1). `None` for an empty sample or `q` out of range. O(n) beta
/// evaluations.
pub fn harrell_davis(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 || !(q > 0.0 && q < 1.0) {
        return None;
    }
    if n == 1 {
        return Some(sorted[0]);
    }
    let nf = n as f64;
    let a = q * (nf + 1.0);
    let b = (1.0 - q) * (nf + 1.0);
    let mut prev = 0.0;
    let mut sum = 0.0;
    for (i, &x) in sorted.iter().enumerate() {
        let cur = if i + 1 == n {
            1.0
        } else {
            checked_beta_reg(a, b, (i + 1) as f64 / nf).ok()?
        };
        sum += (cur - prev) * x;
        prev = cur;
    }
    Some(sum)
}
