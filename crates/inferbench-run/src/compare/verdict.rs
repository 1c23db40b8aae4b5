//! From an interval to a verdict, direction-aware, and Holm across the metrics for "did
//! anything regress".

use inferbench_metrics::inference::multiplicity::holm;
use inferbench_metrics::inference::{Margin, Placement};

use super::margins::Direction;
use super::report::{MetricReport, Multiplicity, Verdict};

/// The verdict of an interval placed against the margin: inside is `equivalent`; wholly
/// beyond it on the bad side `worse`, on the good side `better`; a neutral metric beyond it
/// either way is `worse` (a change nobody asked for); crossing a bound is `inconclusive`.
pub fn verdict_of(p: Placement, d: Direction) -> Verdict {
    match (p, d) {
        (Placement::Inside, _) => Verdict::Equivalent,
        (Placement::Straddles, _) => Verdict::Inconclusive,
        (Placement::Above, Direction::HigherIsBetter) => Verdict::Better,
        (Placement::Below, Direction::LowerIsBetter) => Verdict::Better,
        (Placement::Above | Placement::Below, _) => Verdict::Worse,
    }
}

/// The one-sided p-value of "worse by more than the margin": H₁ `d > upper` when lower is
/// better, `d < lower` when higher is better, either (Bonferroni over the two sides) for a
/// neutral metric. `greater(b)` and `less(b)` are the method's p-values of `d > b`, `d < b`.
pub fn p_worse(
    d: Direction,
    m: Margin,
    greater: &dyn Fn(f64) -> f64,
    less: &dyn Fn(f64) -> f64,
) -> f64 {
    match d {
        Direction::LowerIsBetter => greater(m.upper),
        Direction::HigherIsBetter => less(m.lower),
        Direction::Neutral => (2.0 * greater(m.upper).min(less(m.lower))).min(1.0),
    }
}

/// Holm over every metric with a p-value of "worse": a metric whose interval says `worse`
/// stays `worse` only if Holm rejects its hypothesis at `alpha` across the family; else it
/// becomes `inconclusive`, with the reason.
pub fn apply_holm(metrics: &mut [MetricReport], alpha: f64) -> Multiplicity {
    let idx: Vec<usize> = (0..metrics.len())
        .filter(|&i| metrics[i].p_worse.is_some_and(|p| !p.is_nan()))
        .collect();
    let p: Vec<f64> = idx
        .iter()
        .map(|&i| metrics[i].p_worse.unwrap_or(1.0))
        .collect();
    let adj = holm(&p, alpha);
    for (&i, a) in idx.iter().zip(&adj) {
        let m = &mut metrics[i];
        m.p_worse_holm = Some(a.adjusted);
        if m.verdict == Verdict::Worse && !a.rejected {
            m.verdict = Verdict::Inconclusive;
            m.reason = format!(
                "{}, but not worse after Holm across {} metrics (adjusted p = {:.3})",
                m.reason,
                idx.len(),
                a.adjusted
            );
        }
    }
    Multiplicity {
        method: "holm",
        family_size: idx.len(),
        alpha,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::report::*;
    use inferbench_metrics::inference::place;

    fn metric(verdict: Verdict, p: Option<f64>) -> MetricReport {
        let side = SideValue {
            value: None,
            runs: 1,
            n: 0,
            interval: None,
        };
        MetricReport {
            key: "k".into(),
            metric: "k".into(),
            stat: "avg".into(),
            unit: "ms".into(),
            direction: Direction::LowerIsBetter,
            method: Method::Bootstrap,
            scale: Scale::Log,
            margin: MarginReport {
                text: "±5%".into(),
                lower: -0.05,
                upper: 0.05,
                default: false,
            },
            baseline: side.clone(),
            candidate: side,
            difference: None,
            p_worse: p,
            p_worse_holm: None,
            verdict,
            reason: "r".into(),
            needed: None,
        }
    }

    #[test]
    fn hand_made_intervals_give_direction_aware_verdicts() {
        let m = Margin::symmetric(0.05);
        use Direction::*;
        let cases = [
            // (low, high, direction, verdict)
            (-0.01, 0.02, LowerIsBetter, Verdict::Equivalent),
            (0.06, 0.09, LowerIsBetter, Verdict::Worse),
            (0.06, 0.09, HigherIsBetter, Verdict::Better),
            (-0.09, -0.06, LowerIsBetter, Verdict::Better),
            (-0.09, -0.06, HigherIsBetter, Verdict::Worse),
            (-0.09, -0.06, Neutral, Verdict::Worse),
            (0.06, 0.09, Neutral, Verdict::Worse),
            (0.01, 0.07, LowerIsBetter, Verdict::Inconclusive),
            (-0.07, 0.07, HigherIsBetter, Verdict::Inconclusive),
            // A bound on the margin is not inside it.
            (0.0, 0.05, LowerIsBetter, Verdict::Inconclusive),
        ];
        for (lo, hi, d, v) in cases {
            assert_eq!(verdict_of(place(lo, hi, m), d), v, "[{lo}, {hi}] {d:?}");
        }
    }

    #[test]
    fn p_worse_looks_at_the_bad_side() {
        let m = Margin::symmetric(1.0);
        let greater = |b: f64| if b > 0.0 { 0.01 } else { 0.9 };
        let less = |b: f64| if b < 0.0 { 0.2 } else { 0.9 };
        assert_eq!(p_worse(Direction::LowerIsBetter, m, &greater, &less), 0.01);
        assert_eq!(p_worse(Direction::HigherIsBetter, m, &greater, &less), 0.2);
        assert_eq!(p_worse(Direction::Neutral, m, &greater, &less), 0.02);
    }

    #[test]
    fn holm_demotes_a_worse_metric_it_does_not_reject() {
        // Family of three: 0.01·3 = 0.03 ≤ 0.05 rejected; 0.04·2 = 0.08 not.
        let mut ms = vec![
            metric(Verdict::Worse, Some(0.01)),
            metric(Verdict::Worse, Some(0.04)),
            metric(Verdict::Equivalent, Some(0.9)),
            metric(Verdict::Inconclusive, None),
        ];
        let mult = apply_holm(&mut ms, 0.05);
        assert_eq!(mult.family_size, 3);
        assert_eq!(ms[0].verdict, Verdict::Worse);
        assert!((ms[0].p_worse_holm.unwrap() - 0.03).abs() < 1e-12);
        assert_eq!(ms[1].verdict, Verdict::Inconclusive);
        assert!(
            ms[1]
                .reason
                .contains("not worse after Holm across 3 metrics")
        );
        assert!((ms[1].p_worse_holm.unwrap() - 0.08).abs() < 1e-12);
        assert_eq!(ms[2].verdict, Verdict::Equivalent);
        assert_eq!(ms[3].p_worse_holm, None);
    }
}
