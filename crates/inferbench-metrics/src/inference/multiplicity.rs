//! Multiplicity control over a family of p-values (design note §2.6).
//!
//! Population: one p-value per hypothesis of the family (e.g. one "this metric regressed"
//! test per compared metric). Holm controls the family-wise error rate (the chance of any
//! false rejection is at most α) under any dependence; Benjamini–Hochberg controls the false
//! discovery rate (expected share of false rejections among rejections) for independent or
//! positively dependent tests.

/// One hypothesis after adjustment, in the caller's order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adjusted {
    /// The adjusted p-value (reject iff `adjusted ≤ α`), capped at 1.
    pub adjusted: f64,
    pub rejected: bool,
}

/// Holm's step-down: sort `p₍₁₎ ≤ … ≤ p₍ₘ₎`, reject `H₍ᵢ₎` while `p₍ᵢ₎ ≤ α/(m − i + 1)`, stop
/// at the first failure. Adjusted `p̃₍ᵢ₎ = max_{j≤i} min(1, (m − j + 1)·p₍ⱼ₎)`. A NaN p-value is
/// never rejected and counts in `m`.
pub fn holm(p: &[f64], alpha: f64) -> Vec<Adjusted> {
    let m = p.len();
    let order = ascending(p);
    let mut out = vec![
        Adjusted {
            adjusted: 1.0,
            rejected: false
        };
        m
    ];
    let mut running = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        let v = ((m - rank) as f64 * p[i]).min(1.0);
        running = if v.is_nan() { 1.0 } else { running.max(v) };
        out[i].adjusted = running;
    }
    // Step-down: the adjusted values are monotone in rank, so "while" equals "≤ α".
    for o in &mut out {
        o.rejected = o.adjusted <= alpha;
    }
    out
}

/// Benjamini–Hochberg step-up: the largest `k` with `p₍ₖ₎ ≤ k·α/m`, reject `H₍₁₎ … H₍ₖ₎`.
/// Adjusted `p̃₍ᵢ₎ = min_{j≥i} min(1, m·p₍ⱼ₎/j)`.
pub fn benjamini_hochberg(p: &[f64], alpha: f64) -> Vec<Adjusted> {
    let m = p.len();
    let order = ascending(p);
    let mut out = vec![
        Adjusted {
            adjusted: 1.0,
            rejected: false
        };
        m
    ];
    let mut running = 1.0_f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        let v = (m as f64 * p[i] / (rank + 1) as f64).min(1.0);
        if !v.is_nan() {
            running = running.min(v);
        }
        out[i].adjusted = if v.is_nan() { 1.0 } else { running };
    }
    for o in &mut out {
        o.rejected = o.adjusted <= alpha;
    }
    out
}

/// Indices of `p` by ascending value, NaN last, ties in input order.
fn ascending(p: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |x: f64| if x.is_nan() { f64::INFINITY } else { x };
        key(p[a]).total_cmp(&key(p[b]))
    });
    order
}
