//! The per-metric engine: one interval of the difference candidate − baseline against the
//! metric's margin, by the method the data allow (reference §2):
//! - a fraction: Wilson per side and Newcombe for the difference, over attempted requests
//!   pooled across a side's runs;
//! - k ≥ 3 runs on each side: Welch + TOST on the per-run statistic (log values for a
//!   relative margin), the run as the unit;
//! - otherwise, a per-request metric: a seeded bootstrap of the statistic's difference over
//!   requests (pooled across a side's runs), with each side's order-statistic interval;
//! - otherwise (a run-level metric with fewer than 3 runs a side): no interval.

use inferbench_metrics::inference::bootstrap::{self, Spec, Statistic};
use inferbench_metrics::inference::order_stat::quantile_interval;
use inferbench_metrics::inference::proportions::{newcombe, newcombe_p_greater, newcombe_p_less};
use inferbench_metrics::inference::sample_size::{
    requests_per_arm, requests_per_side, runs_per_side,
};
use inferbench_metrics::inference::welch::{log_values, welch};
use inferbench_metrics::inference::{Margin, place};

use super::load::RunData;
use super::margins::{GOOD_FRACTION, MarginValue, Resolved, Stat};
use super::report::*;
use super::verdict::{p_worse, verdict_of};

/// Runs per side from which the run is the unit of replication.
pub const MIN_RUNS: usize = 3;

pub struct Settings {
    pub alpha: f64,
    pub resamples: usize,
}

/// Compares one metric.
pub fn evaluate(
    m: &Resolved,
    base: &[RunData],
    cand: &[RunData],
    s: &Settings,
    seed: u64,
) -> MetricReport {
    let conf = 1.0 - 2.0 * s.alpha;
    let (margin, scale) = match &m.entry.value {
        MarginValue::Relative(d) => (
            Margin::relative(*d).expect("0 < δ < 1 by parsing"),
            Scale::Log,
        ),
        MarginValue::Points(p) => (Margin::symmetric(*p), Scale::Fraction),
        MarginValue::Absolute { value, .. } => (Margin::symmetric(*value), Scale::Linear),
    };
    let mut r = MetricReport {
        key: m.entry.key.clone(),
        metric: m.entry.metric.clone(),
        stat: match m.stat {
            Stat::Value => "value".into(),
            Stat::Fraction => "fraction".into(),
            s => s.summary_name().unwrap_or_default(),
        },
        unit: m.unit.clone(),
        direction: m.direction,
        method: Method::None,
        scale,
        margin: MarginReport {
            text: m.entry.text.clone(),
            lower: margin.lower,
            upper: margin.upper,
            default: m.entry.default,
        },
        baseline: side_point(m, base),
        candidate: side_point(m, cand),
        difference: None,
        p_worse: None,
        p_worse_holm: None,
        verdict: Verdict::Inconclusive,
        reason: String::new(),
        needed: None,
    };
    let decided = match m.stat {
        Stat::Fraction => fraction(m, base, cand, margin, conf, &mut r),
        _ if base.len() >= MIN_RUNS && cand.len() >= MIN_RUNS => {
            runs(m, base, cand, margin, scale, conf, s.alpha, &mut r)
        }
        Stat::Mean | Stat::Percentile(_) => {
            requests(m, base, cand, margin, scale, conf, s, seed, &mut r)
        }
        Stat::Value => Err(format!(
            "a run-level metric needs {MIN_RUNS} runs per side for an interval (have {} and {})",
            base.len(),
            cand.len()
        )),
    };
    match decided {
        Ok(()) => {
            let d = r.difference.as_ref().expect("set on success");
            let placement = place(d.low, d.high, margin);
            r.verdict = verdict_of(placement, m.direction);
            r.reason = reason(&r, placement);
        }
        Err(why) => {
            r.verdict = Verdict::Inconclusive;
            r.reason = why;
            if m.stat == Stat::Value {
                r.needed = Some(Needed {
                    value: MIN_RUNS as u64,
                    unit: "runs_per_side",
                });
            }
        }
    }
    if r.verdict != Verdict::Inconclusive {
        r.needed = None;
    }
    r
}

fn reason(r: &MetricReport, p: inferbench_metrics::inference::Placement) -> String {
    use inferbench_metrics::inference::Placement::*;
    let c = r.difference.as_ref().map_or(0.0, |d| d.confidence) * 100.0;
    match p {
        Inside => format!("{c:.0}% interval inside the margin {}", r.margin.text),
        Above | Below => format!(
            "{c:.0}% interval wholly beyond the margin {}",
            r.margin.text
        ),
        Straddles => format!(
            "{c:.0}% interval crosses a bound of the margin {}",
            r.margin.text
        ),
    }
}

/// Each side's point value: the mean of its runs' summary statistic (the fraction, pooled).
fn side_point(m: &Resolved, runs: &[RunData]) -> SideValue {
    let n = runs.iter().map(|r| r.attempted).sum();
    let value = match m.stat {
        Stat::Fraction => {
            let (x, n) = counts(m, runs);
            (n > 0).then(|| x as f64 / n as f64)
        }
        _ => {
            let v: Option<Vec<f64>> = runs.iter().map(|r| run_stat(m, r)).collect();
            v.filter(|v| !v.is_empty())
                .map(|v| v.iter().sum::<f64>() / v.len() as f64)
        }
    };
    SideValue {
        value,
        runs: runs.len(),
        n,
        interval: None,
    }
}

/// One run's value of the statistic, from its summary.
fn run_stat(m: &Resolved, r: &RunData) -> Option<f64> {
    let metric = r.summary.get(&m.entry.metric)?;
    match m.stat {
        Stat::Value => metric.scalar(),
        Stat::Mean => metric.stats()?.avg,
        Stat::Percentile(_) => match metric.stats()?.get(&m.stat.summary_name()?) {
            Some(v) => Some(v),
            // A percentile the summary does not list: from the kept values.
            None => {
                let mut v = r.values.get(&m.entry.metric)?.clone();
                if v.is_empty() {
                    return None;
                }
                v.sort_unstable_by(f64::total_cmp);
                let Stat::Percentile(p) = m.stat else {
                    return None;
                };
                Some(inferbench_metrics::stats::percentile_linear(&v, p))
            }
        },
        Stat::Fraction => None,
    }
}

/// (successes, attempted) pooled over a side.
fn counts(m: &Resolved, runs: &[RunData]) -> (u64, u64) {
    let n = runs.iter().map(|r| r.attempted).sum();
    let x = if m.entry.metric == GOOD_FRACTION {
        runs.iter().map(|r| r.good.unwrap_or(0)).sum()
    } else {
        runs.iter().map(|r| r.errors).sum()
    };
    (x, n)
}

fn fraction(
    m: &Resolved,
    base: &[RunData],
    cand: &[RunData],
    margin: Margin,
    conf: f64,
    r: &mut MetricReport,
) -> Result<(), String> {
    let b = counts(m, base);
    let c = counts(m, cand);
    let d = newcombe(c, b, conf).ok_or("no attempted requests on a side")?;
    for (side, (x, n)) in [(&mut r.baseline, b), (&mut r.candidate, c)] {
        let w = inferbench_metrics::confidence::wilson_interval(x, n, conf);
        side.interval = w.map(|(l, h)| Bounds {
            low: Some(l),
            high: Some(h),
            confidence: conf,
            method: "wilson",
        });
    }
    r.method = Method::Newcombe;
    r.difference = Some(diff_report(
        d.difference,
        d.low,
        d.high,
        conf,
        Scale::Fraction,
    ));
    let greater = |bound: f64| newcombe_p_greater(c, b, bound).unwrap_or(f64::NAN);
    let less = |bound: f64| newcombe_p_less(c, b, bound).unwrap_or(f64::NAN);
    r.p_worse = Some(p_worse(m.direction, margin, &greater, &less));
    r.needed = requests_per_arm(d.p_candidate, d.p_baseline, margin, conf).map(|v| Needed {
        value: v,
        unit: "requests_per_arm",
    });
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn runs(
    m: &Resolved,
    base: &[RunData],
    cand: &[RunData],
    margin: Margin,
    scale: Scale,
    conf: f64,
    alpha: f64,
    r: &mut MetricReport,
) -> Result<(), String> {
    let per_run = |runs: &[RunData]| -> Result<Vec<f64>, String> {
        let v: Option<Vec<f64>> = runs.iter().map(|x| run_stat(m, x)).collect();
        let v = v.ok_or_else(|| format!("{} is missing from a run's summary", m.entry.key))?;
        match scale {
            Scale::Log => log_values(&v).ok_or_else(|| {
                format!(
                    "{} is not positive in every run: a relative margin needs positive values",
                    m.entry.key
                )
            }),
            _ => Ok(v),
        }
    };
    let x = per_run(base)?;
    let y = per_run(cand)?;
    let w = welch(&x, &y).ok_or("no spread across runs on either side: no interval")?;
    let t = w.tost(margin, alpha).ok_or("no interval")?;
    r.method = Method::WelchTost;
    r.difference = Some(DiffReport {
        df: Some(w.df),
        ..diff_report(w.difference, t.low, t.high, conf, scale)
    });
    r.p_worse = Some(p_worse(m.direction, margin, &|b| w.p_greater(b), &|b| {
        w.p_less(b)
    }));
    r.needed =
        runs_per_side(w.var_baseline, w.var_candidate, w.difference, margin, conf).map(|v| {
            Needed {
                value: v,
                unit: "runs_per_side",
            }
        });
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn requests(
    m: &Resolved,
    base: &[RunData],
    cand: &[RunData],
    margin: Margin,
    scale: Scale,
    conf: f64,
    s: &Settings,
    seed: u64,
    r: &mut MetricReport,
) -> Result<(), String> {
    let pooled = |runs: &[RunData]| -> Vec<f64> {
        let mut out = Vec::new();
        for x in runs {
            if let Some(v) = x.values.get(&m.entry.metric) {
                out.extend_from_slice(v);
            }
        }
        out
    };
    let x = pooled(base);
    let y = pooled(cand);
    if x.is_empty() || y.is_empty() {
        return Err(format!(
            "{} has no per-request values on a side (a metric with several values per request, such as inter_chunk_latency, cannot be compared per request)",
            m.entry.metric
        ));
    }
    let statistic = match m.stat {
        Stat::Mean => Statistic::Mean,
        Stat::Percentile(p) => Statistic::Percentile(p),
        _ => unreachable!("per-request statistics only"),
    };
    let spec = Spec {
        statistic,
        scale: match scale {
            Scale::Log => bootstrap::Scale::Log,
            _ => bootstrap::Scale::Linear,
        },
        resamples: s.resamples,
        seed,
        confidence: conf,
    };
    let d = bootstrap::difference(&x, &y, &spec).ok_or_else(|| {
        format!(
            "{}: no bootstrap interval (a relative margin needs positive values)",
            m.entry.key
        )
    })?;
    // Each side's own statistic and, for a percentile, its order-statistic interval.
    for (side, v, value) in [
        (&mut r.baseline, &x, d.baseline),
        (&mut r.candidate, &y, d.candidate),
    ] {
        side.value = Some(value);
        side.n = v.len() as u64;
        if let Stat::Percentile(p) = m.stat {
            let mut sorted = v.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            side.interval = quantile_interval(&sorted, p / 100.0, conf).map(|(l, h)| Bounds {
                low: l,
                high: h,
                confidence: conf,
                method: "order_statistic",
            });
        }
    }
    r.method = Method::Bootstrap;
    r.difference = Some(DiffReport {
        seed: Some(seed.to_string()),
        ..diff_report(d.estimate, d.low, d.high, conf, scale)
    });
    r.p_worse = Some(p_worse(m.direction, margin, &|b| d.p_greater(b), &|b| {
        d.p_less(b)
    }));
    let n = x.len().min(y.len()) as u64;
    r.needed = requests_per_side(d.se, n, d.estimate, margin, conf).map(|v| Needed {
        value: v,
        unit: "requests_per_side",
    });
    Ok(())
}

/// The difference's interval; on the log scale with its ratio candidate/baseline.
fn diff_report(estimate: f64, low: f64, high: f64, confidence: f64, scale: Scale) -> DiffReport {
    DiffReport {
        estimate,
        low,
        high,
        confidence,
        ratio: (scale == Scale::Log).then(|| [estimate.exp(), low.exp(), high.exp()]),
        df: None,
        seed: None,
    }
}
