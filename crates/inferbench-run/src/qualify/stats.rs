//! The arithmetic of the plateau rule (docs/qualify.md, "Definitions"): per-step mean, sample
//! standard deviation and CV of the server's output tokens/s over the repeats, the step
//! delta on the means, the pooled CV of the two steps a delta compares, and the equivalence
//! interval of the difference of the two step means (Welch).

use inferbench_metrics::inference::{Margin, Placement, place, welch};
use serde::{Deserialize, Serialize};

use super::GateStatus;

/// The two-sided level of the equivalence interval.
pub const EQUIVALENCE_CONFIDENCE: f64 = 0.95;

/// One worker count: its runs' server output tokens/s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepStat {
    pub workers: usize,
    pub runs: usize,
    /// Server output tokens/s of each run, in repeat order.
    pub values: Vec<f64>,
    pub mean: f64,
    /// Sample standard deviation (n − 1); None with one run.
    pub sd: Option<f64>,
    /// 100·sd/mean; None with one run.
    pub cv_pct: Option<f64>,
}

/// The 95 % Welch interval of `mean_k − mean_{k−1}` against `±τ·R_{k−1}/100`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Equivalence {
    /// PASS: inside the margin; FAIL: not inside; NOT_MEASURED: fewer than 2 runs a side.
    pub status: GateStatus,
    pub confidence: f64,
    /// The interval, tokens/s.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Welch–Satterthwaite degrees of freedom (None for a zero-variance point interval).
    pub df: Option<f64>,
    /// τ·R_{k−1}/100, tokens/s.
    pub margin: f64,
}

/// One step of the ladder, `w_{k−1} → w_k`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepDelta {
    pub from_workers: usize,
    pub to_workers: usize,
    /// δ_k = 100·(R_k − R_{k−1})/R_{k−1} on the step means.
    pub delta_pct: f64,
    /// The degrees-of-freedom-weighted root mean square of the two steps' CVs.
    pub cv_pooled_pct: Option<f64>,
    /// PASS when τ ≥ 2·CV_pooled; FAIL when not; NOT_MEASURED with one run at a step.
    pub noise: GateStatus,
    pub equivalence: Equivalence,
    /// |δ_k| < τ.
    pub within_tolerance: bool,
    /// Within τ and the noise condition PASS.
    pub flat: bool,
}

/// Mean, sample sd and CV of one step's values (non-empty, finite, positive mean).
pub fn step_stat(workers: usize, values: Vec<f64>) -> StepStat {
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let sd = (n >= 2).then(|| {
        let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
        (ss / (n - 1) as f64).sqrt()
    });
    StepStat {
        workers,
        runs: n,
        values,
        mean,
        sd,
        cv_pct: sd.map(|s| 100.0 * s / mean),
    }
}

/// δ = 100·(next − prev)/prev.
pub fn delta_pct(prev: f64, next: f64) -> f64 {
    100.0 * (next - prev) / prev
}

/// `√(Σ(nᵢ−1)·CVᵢ² / Σ(nᵢ−1))` over the two steps: the pooled *relative* variance. Pooling
/// relative rather than absolute variances because the step means differ (by up to δ), and
/// only the two steps a delta compares, because that is the noise of that delta. None
/// unless both steps have at least 2 runs.
pub fn pooled_cv_pct(a: &StepStat, b: &StepStat) -> Option<f64> {
    let (ca, cb) = (a.cv_pct?, b.cv_pct?);
    let (da, db) = ((a.runs - 1) as f64, (b.runs - 1) as f64);
    Some(((da * ca * ca + db * cb * cb) / (da + db)).sqrt())
}

/// The equivalence check of `b` (w_k) against `a` (w_{k−1}) at tolerance τ percent.
pub fn equivalence(a: &StepStat, b: &StepStat, tau_pct: f64) -> Equivalence {
    let margin = tau_pct * a.mean / 100.0;
    let mut out = Equivalence {
        status: GateStatus::NotMeasured,
        confidence: EQUIVALENCE_CONFIDENCE,
        low: None,
        high: None,
        df: None,
        margin,
    };
    if a.runs < 2 || b.runs < 2 {
        return out;
    }
    let (low, high) = match welch::welch(&a.values, &b.values) {
        Some(w) => match w.interval(EQUIVALENCE_CONFIDENCE) {
            Some(iv) => {
                out.df = Some(w.df);
                iv
            }
            None => return out,
        },
        // Both steps without spread: the difference is known exactly, a point interval.
        None if a.sd == Some(0.0) && b.sd == Some(0.0) => {
            let d = b.mean - a.mean;
            (d, d)
        }
        None => return out,
    };
    out.low = Some(low);
    out.high = Some(high);
    out.status = match place(low, high, Margin::symmetric(margin)) {
        Placement::Inside => GateStatus::Pass,
        _ => GateStatus::Fail,
    };
    out
}

/// The step `a → b` under tolerance τ percent.
pub fn step_delta(a: &StepStat, b: &StepStat, tau_pct: f64) -> StepDelta {
    let delta = delta_pct(a.mean, b.mean);
    let cv = pooled_cv_pct(a, b);
    let noise = match cv {
        None => GateStatus::NotMeasured,
        Some(c) if tau_pct >= 2.0 * c => GateStatus::Pass,
        Some(_) => GateStatus::Fail,
    };
    let within = delta.abs() < tau_pct;
    StepDelta {
        from_workers: a.workers,
        to_workers: b.workers,
        delta_pct: delta,
        cv_pooled_pct: cv,
        noise,
        equivalence: equivalence(a, b, tau_pct),
        within_tolerance: within,
        flat: within && noise == GateStatus::Pass,
    }
}
