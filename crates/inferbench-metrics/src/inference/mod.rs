//! Statistics for comparing a candidate with a baseline (`inferbench compare`), after
//! `docs/compare.md` and the design note's §2: every comparison is an interval of the
//! difference *candidate − baseline* set against a declared margin, never a bare p-value.
//!
//! - [`welch`]: repeated runs per side (the run is the unit), Welch's t, TOST equivalence and
//!   non-inferiority bounds, on log values for ratio metrics;
//! - [`order_stat`]: distribution-free confidence intervals of a quantile from one run;
//! - [`bootstrap`]: a seeded bootstrap of the difference of a percentile or mean between two
//!   runs (the request is the unit);
//! - [`proportions`]: Newcombe's interval of the difference of two proportions, built on
//!   [`crate::confidence::wilson_interval`];
//! - [`multiplicity`]: Holm and Benjamini–Hochberg over a family of p-values;
//! - [`harrell_davis`]: the Harrell–Davis quantile estimator;
//! - [`sample_size`]: how many runs or requests would decide an inconclusive comparison;
//! - [`ks`]: the two-sample Kolmogorov–Smirnov test (AIPerf's distribution convergence).
//!
//! All functions are pure; they return `None` for inputs they cannot answer (too few values,
//! a level outside (0, 1), a non-finite value) rather than panicking.

pub mod bootstrap;
pub mod harrell_davis;
pub mod ks;
pub mod multiplicity;
pub mod order_stat;
pub mod proportions;
pub mod sample_size;
pub mod welch;

#[cfg(test)]
mod tests;

/// A margin around zero on the difference *candidate − baseline*: the difference is
/// practically irrelevant while it lies in `(lower, upper)`. `lower ≤ 0 ≤ upper`; either side
/// may be infinite (a non-inferiority margin has one finite side). Units are those of the
/// difference (log units for a ratio, see [`Margin::relative`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Margin {
    pub lower: f64,
    pub upper: f64,
}

impl Margin {
    /// `(−delta, +delta)`; `delta ≥ 0`.
    pub fn symmetric(delta: f64) -> Margin {
        Margin {
            lower: -delta.abs(),
            upper: delta.abs(),
        }
    }

    /// A relative margin `±delta` (0.03 for ±3 %) on log values: `(ln(1 − δ), ln(1 + δ))`, so
    /// that a ratio candidate/baseline inside `(1 − δ, 1 + δ)` is irrelevant. `None` unless
    /// `0 < δ < 1`.
    pub fn relative(delta: f64) -> Option<Margin> {
        (delta > 0.0 && delta < 1.0).then(|| Margin {
            lower: (1.0 - delta).ln(),
            upper: (1.0 + delta).ln(),
        })
    }
}

/// Where an interval `[low, high]` of the difference lies against a [`Margin`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Entirely inside `(lower, upper)`: equivalent.
    Inside,
    /// Entirely above `upper`: the candidate is larger by more than the margin.
    Above,
    /// Entirely below `lower`: the candidate is smaller by more than the margin.
    Below,
    /// The interval contains a margin boundary: undecided at this confidence.
    Straddles,
}

/// The [`Placement`] of `[low, high]` against `margin`. A bound exactly on a boundary
/// straddles it (the decision needs strict inequality, as TOST does).
pub fn place(low: f64, high: f64, margin: Margin) -> Placement {
    if low > margin.lower && high < margin.upper {
        Placement::Inside
    } else if low > margin.upper {
        Placement::Above
    } else if high < margin.lower {
        Placement::Below
    } else {
        Placement::Straddles
    }
}

/// `Ok` when `0 < level < 1` (NaN fails), else `None`; shared by every function here.
pub(crate) fn level(level: f64) -> Option<f64> {
    crate::confidence::check_confidence_level(level).ok()
}

/// Standard normal quantile.
pub(crate) fn z(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(p)
}
