//! Schedule evidence (inferbench's own metrics, not AIPerf's): did the client send the load
//! it planned? Computed from every record of a phase, errors included, from the planned and
//! actual send times each record keeps.
//!
//! | tag | population | definition | unit |
//! |---|---|---|---|
//! | `schedule_lag` | per request | `start_ns − planned_ns` | ms |
//! | `target_request_rate` | run | the configured `--request-rate` (rate mode only) | requests/sec |
//! | `scheduled_request_rate` | run | `(n − 1) / (last planned − first planned)` | requests/sec |
//! | `achieved_request_rate` | run | `(n − 1) / (last start − first start)` | requests/sec |
//! | `request_latency_from_planned` | per valid request | last content response − `planned_ns` | ms |
//! | `time_to_first_token_from_planned` | per valid streamed request | first content response − `planned_ns` | ms |
//! | `in_flight_requests` | time-weighted over [first start, last end] | requests between `start_ns` and `end_ns` | requests |
//! | `schedule_kept` | run | 1 when lag p99 ≤ the limit and achieved ≥ the given % of scheduled, else 0 | bool |

use inferbench_core::record::Record;
use inferbench_core::summary::{MetricResult, MetricValue, Stats};

use crate::stats::stats;

const NS_TO_MS: f64 = 1e-6;

/// The rule that decides `schedule_kept`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScheduleRule {
    /// Largest acceptable p99 of `schedule_lag`, ms (default 1).
    pub max_lag_p99_ms: f64,
    /// Smallest acceptable achieved rate, percent of the scheduled rate (default 99).
    pub min_achieved_pct: f64,
}

impl Default for ScheduleRule {
    fn default() -> Self {
        ScheduleRule {
            max_lag_p99_ms: 1.0,
            min_achieved_pct: 99.0,
        }
    }
}

/// The verdict, with the numbers it was decided on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScheduleVerdict {
    pub kept: bool,
    pub lag_p99_ms: f64,
    /// Achieved rate as a percent of the scheduled rate (None with fewer than 2 requests).
    pub achieved_pct: Option<f64>,
    pub rule: ScheduleRule,
}

/// Folds records into the schedule metrics.
#[derive(Default)]
pub struct ScheduleAccumulator {
    lags_ns: Vec<f64>,
    latency_from_planned_ns: Vec<f64>,
    ttft_from_planned_ns: Vec<f64>,
    /// (start, end) of every request, for the in-flight curve.
    spans: Vec<(u64, u64)>,
    planned: Option<(u64, u64)>,
    started: Option<(u64, u64)>,
}

fn widen(r: &mut Option<(u64, u64)>, v: u64) {
    *r = Some(match *r {
        None => (v, v),
        Some((lo, hi)) => (lo.min(v), hi.max(v)),
    });
}

fn rate(n: usize, span: Option<(u64, u64)>) -> Option<f64> {
    let (lo, hi) = span?;
    (n >= 2 && hi > lo).then(|| (n - 1) as f64 / ((hi - lo) as f64 * 1e-9))
}

impl ScheduleAccumulator {
    pub fn push(&mut self, r: &Record) {
        self.lags_ns
            .push(r.start_ns.saturating_sub(r.planned_ns) as f64);
        widen(&mut self.planned, r.planned_ns);
        widen(&mut self.started, r.start_ns);
        self.spans.push((r.start_ns, r.end_ns.max(r.start_ns)));
        if r.error.is_none() {
            let mut text = r.text_events();
            if let Some(first) = text.next() {
                if r.streaming {
                    self.ttft_from_planned_ns
                        .push(first.t_ns.saturating_sub(r.planned_ns) as f64);
                }
                let last = text.last().unwrap_or(first);
                self.latency_from_planned_ns
                    .push(last.t_ns.saturating_sub(r.planned_ns) as f64);
            }
        }
    }

    /// The metrics and the verdict. `target_rate`: the configured rate (rate mode).
    pub fn finish(
        self,
        target_rate: Option<f64>,
        rule: ScheduleRule,
    ) -> (Vec<MetricResult>, Option<ScheduleVerdict>) {
        let n = self.lags_ns.len();
        let mut out = Vec::new();
        if n == 0 {
            return (out, None);
        }
        let ms = |vals: &[f64]| {
            let mut s = stats(vals);
            for v in [
                &mut s.avg, &mut s.p1, &mut s.p5, &mut s.p10, &mut s.p25, &mut s.p50, &mut s.p75,
                &mut s.p90, &mut s.p95, &mut s.p99, &mut s.min, &mut s.max, &mut s.std, &mut s.sum,
            ] {
                *v = v.map(|x| x * NS_TO_MS);
            }
            s
        };
        let dist = |tag: &str, header: &str, unit: &str, s: Stats| MetricResult {
            tag: tag.into(),
            header: header.into(),
            unit: unit.into(),
            value: MetricValue::Distribution { stats: s },
        };
        let scalar = |tag: &str, header: &str, unit: &str, v: f64| MetricResult {
            tag: tag.into(),
            header: header.into(),
            unit: unit.into(),
            value: MetricValue::Scalar { value: v },
        };
        let lag = ms(&self.lags_ns);
        let lag_p99 = lag.p99.unwrap_or(0.0);
        out.push(dist("schedule_lag", "Schedule Lag", "ms", lag));
        if let Some(t) = target_rate {
            out.push(scalar(
                "target_request_rate",
                "Target Request Rate",
                "requests/sec",
                t,
            ));
        }
        let scheduled = rate(n, self.planned);
        let achieved = rate(n, self.started);
        if let Some(s) = scheduled {
            out.push(scalar(
                "scheduled_request_rate",
                "Scheduled Request Rate",
                "requests/sec",
                s,
            ));
        }
        if let Some(a) = achieved {
            out.push(scalar(
                "achieved_request_rate",
                "Achieved Request Rate",
                "requests/sec",
                a,
            ));
        }
        if !self.ttft_from_planned_ns.is_empty() {
            out.push(dist(
                "time_to_first_token_from_planned",
                "Time to First Token from Planned Send",
                "ms",
                ms(&self.ttft_from_planned_ns),
            ));
        }
        if !self.latency_from_planned_ns.is_empty() {
            out.push(dist(
                "request_latency_from_planned",
                "Request Latency from Planned Send",
                "ms",
                ms(&self.latency_from_planned_ns),
            ));
        }
        out.push(dist(
            "in_flight_requests",
            "In-Flight Requests",
            "requests",
            in_flight(&self.spans),
        ));
        let achieved_pct = match (scheduled, achieved) {
            (Some(s), Some(a)) if s > 0.0 => Some(a / s * 100.0),
            _ => None,
        };
        let kept = lag_p99 <= rule.max_lag_p99_ms
            && achieved_pct.is_none_or(|p| p >= rule.min_achieved_pct);
        out.push(scalar(
            "schedule_kept",
            "Schedule Kept",
            "bool",
            if kept { 1.0 } else { 0.0 },
        ));
        (
            out,
            Some(ScheduleVerdict {
                kept,
                lag_p99_ms: lag_p99,
                achieved_pct,
                rule,
            }),
        )
    }
}

/// Time-weighted statistics of the number of requests in flight over [first start, last
/// end]: avg (∫ n(t) dt / T), min and max of the step curve, and its duration-weighted p50
/// and p99 (the smallest level held for at least that share of the time).
fn in_flight(spans: &[(u64, u64)]) -> Stats {
    let mut events: Vec<(u64, i64)> = Vec::with_capacity(spans.len() * 2);
    for &(s, e) in spans {
        events.push((s, 1));
        events.push((e, -1));
    }
    // Ends before starts at the same instant: a request that ends as another starts does
    // not count as overlap.
    events.sort_unstable();
    let (Some(first), Some(last)) = (events.first(), events.last()) else {
        return Stats::default();
    };
    let (t0, t1) = (first.0, last.0);
    let total = (t1 - t0) as f64;
    let mut level: i64 = 0;
    let mut prev = t0;
    let mut pieces: Vec<(i64, u64)> = Vec::new();
    for &(t, d) in &events {
        if t > prev {
            pieces.push((level, t - prev));
            prev = t;
        }
        level += d;
    }
    let mut s = Stats {
        count: spans.len() as u64,
        ..Default::default()
    };
    if pieces.is_empty() || total <= 0.0 {
        return s;
    }
    let avg = pieces
        .iter()
        .map(|&(l, d)| l as f64 * d as f64)
        .sum::<f64>()
        / total;
    s.avg = Some(avg);
    s.min = pieces.iter().map(|p| p.0).min().map(|v| v as f64);
    s.max = pieces.iter().map(|p| p.0).max().map(|v| v as f64);
    let var = pieces
        .iter()
        .map(|&(l, d)| (l as f64 - avg).powi(2) * d as f64)
        .sum::<f64>()
        / total;
    s.std = Some(var.sqrt());
    let mut sorted = pieces.clone();
    sorted.sort_unstable();
    let quantile = |q: f64| {
        let mut acc = 0u64;
        for &(l, d) in &sorted {
            acc += d;
            if acc as f64 >= q * total {
                return Some(l as f64);
            }
        }
        sorted.last().map(|p| p.0 as f64)
    };
    s.p50 = quantile(0.5);
    s.p90 = quantile(0.9);
    s.p95 = quantile(0.95);
    s.p99 = quantile(0.99);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_core::record::Event;

    fn rec(planned: u64, start: u64, first: u64, last: u64, end: u64) -> Record {
        Record {
            planned_ns: planned,
            start_ns: start,
            end_ns: end,
            streaming: true,
            events: vec![
                Event {
                    t_ns: first,
                    content: Some("a".into()),
                    ..Default::default()
                },
                Event {
                    t_ns: last,
                    content: Some("b".into()),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn lag_rates_and_latency_from_planned_by_hand() {
        let mut a = ScheduleAccumulator::default();
        // Planned every 100 ms; sent 0.1, 0.3 and 0.5 ms late.
        a.push(&rec(0, 100_000, 10_000_000, 20_000_000, 20_000_000));
        a.push(&rec(
            100_000_000,
            100_300_000,
            110_000_000,
            130_000_000,
            130_000_000,
        ));
        a.push(&rec(
            200_000_000,
            200_500_000,
            210_000_000,
            240_000_000,
            240_000_000,
        ));
        let (m, v) = a.finish(Some(10.0), ScheduleRule::default());
        let get = |t: &str| m.iter().find(|x| x.tag == t).unwrap();
        let lag = get("schedule_lag").stats().unwrap();
        // lags 0.1, 0.3, 0.5 ms: mean 0.3; linear p99 = 0.3 + 0.98·0.2 = 0.496
        assert!((lag.avg.unwrap() - 0.3).abs() < 1e-12);
        assert!((lag.p99.unwrap() - 0.496).abs() < 1e-12);
        // scheduled: 2 gaps over 200 ms = 10/s; achieved: 2 over 200.4 ms
        assert_eq!(get("scheduled_request_rate").scalar(), Some(10.0));
        let achieved = get("achieved_request_rate").scalar().unwrap();
        assert!((achieved - 2.0 / 0.2004).abs() < 1e-9);
        assert_eq!(get("target_request_rate").scalar(), Some(10.0));
        // latency from planned: 20, 30, 40 ms; TTFT from planned: 10, 10, 10 ms
        let lat = get("request_latency_from_planned").stats().unwrap();
        assert!((lat.avg.unwrap() - 30.0).abs() < 1e-12);
        let ttft = get("time_to_first_token_from_planned").stats().unwrap();
        assert!((ttft.max.unwrap() - 10.0).abs() < 1e-12);
        let v = v.unwrap();
        // p99 0.496 ms ≤ 1 ms, achieved 99.8 % ≥ 99 %
        assert!(v.kept);
        assert_eq!(get("schedule_kept").scalar(), Some(1.0));
    }

    #[test]
    fn a_late_client_is_caught() {
        let mut a = ScheduleAccumulator::default();
        // Planned 10 ms apart, all sent 5 ms late except the first.
        a.push(&rec(0, 0, 1, 2, 3));
        for k in 1..10u64 {
            let p = k * 10_000_000;
            a.push(&rec(
                p,
                p + 5_000_000,
                p + 6_000_000,
                p + 7_000_000,
                p + 7_000_000,
            ));
        }
        let (_, v) = a.finish(None, ScheduleRule::default());
        let v = v.unwrap();
        assert!(!v.kept);
        assert!(v.lag_p99_ms > 4.9);
    }

    #[test]
    fn in_flight_is_time_weighted() {
        // [0,10) one request, [10,20) two, [20,30) one: avg = (10+20+10)/30 = 4/3
        let s = in_flight(&[(0, 20), (10, 30)]);
        assert!((s.avg.unwrap() - 4.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.max, Some(2.0));
        assert_eq!(s.min, Some(1.0));
        // level 1 holds 20 of 30 units: p50 = 1; p99 needs the level-2 piece
        assert_eq!(s.p50, Some(1.0));
        assert_eq!(s.p99, Some(2.0));
        // back to back does not overlap
        let s = in_flight(&[(0, 10), (10, 20)]);
        assert_eq!(s.max, Some(1.0));
    }
}
