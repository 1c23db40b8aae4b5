//! The lean sweep (memory per request bounded) against the straightforward one it
//! replaced, kept here as the oracle: bit-for-bit the same statistics on random phases.

use proptest::prelude::*;

use super::{
    CompactSweep, SweepCurves, SweepRecord, sweepline_metrics, sweepline_metrics_column,
    sweepline_metrics_compact,
};
use crate::stats::pairwise_sum;
use inferbench_core::summary::MetricResult;

mod old {
    use super::super::{SPECS, SweepRecord, result};
    use crate::stats::pairwise_sum;
    use inferbench_core::summary::MetricResult;

    /// A step function: distinct instants ascending, and the value from each instant on
    /// (0 before the first). Empty when it was built from no events.
    #[derive(Clone, Debug, Default, PartialEq)]
    struct Curve {
        t: Vec<f64>,
        v: Vec<f64>,
    }

    impl Curve {
        /// Sweep events (t, δ) into a curve, as AIPerf's event sweep does.
        fn from_events(mut ev: Vec<(f64, f64)>) -> Curve {
            if ev.is_empty() {
                return Curve::default();
            }
            // Stable: ties keep list order; at equal t, removals (δ ≤ 0) go before additions.
            ev.sort_by(|a, b| a.0.total_cmp(&b.0).then((a.1 > 0.0).cmp(&(b.1 > 0.0))));
            let mut run = 0.0;
            let vals: Vec<f64> = ev
                .iter()
                .map(|&(_, d)| {
                    run += d;
                    run
                })
                .collect();
            // Snap +r/−r cancellation residue to exact 0, relative to the largest value.
            let m = vals.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let mut c = Curve::default();
            for (&(t, _), &v) in ev.iter().zip(&vals) {
                let v = if m > 0.0 && v.abs() < 1e-9 * m {
                    0.0
                } else {
                    v
                };
                // The last event at an instant gives the value there.
                if c.t.last() == Some(&t) {
                    *c.v.last_mut().unwrap() = v;
                } else {
                    c.t.push(t);
                    c.v.push(v);
                }
            }
            c
        }

        /// Intervals (a, b, w): every (a, +w) in list order, then every (b, −w).
        fn from_intervals(iv: &[(f64, f64, f64)]) -> Curve {
            let mut ev: Vec<(f64, f64)> = iv.iter().map(|&(a, _, w)| (a, w)).collect();
            ev.extend(iv.iter().map(|&(_, b, w)| (b, -w)));
            Curve::from_events(ev)
        }

        fn is_empty(&self) -> bool {
            self.t.is_empty()
        }

        /// Value at `x`: that of the last instant ≤ x, 0 before the first.
        fn at(&self, x: f64) -> f64 {
            match self.t.partition_point(|&t| t <= x) {
                0 => 0.0,
                k => self.v[k - 1],
            }
        }

        /// n(t)/d(t) on the union of both curves' instants, 0 where d(t) ≤ 0.
        fn divide(n: &Curve, d: &Curve) -> Curve {
            if n.is_empty() || d.is_empty() {
                return Curve::default();
            }
            let t = union(&n.t, &d.t);
            let v = t
                .iter()
                .map(|&x| {
                    let den = d.at(x);
                    if den > 0.0 { n.at(x) / den } else { 0.0 }
                })
                .collect();
            Curve { t, v }
        }
    }

    /// Sorted union of two ascending lists, each instant once.
    fn union(a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut u: Vec<f64> = a.iter().chain(b).copied().collect();
        u.sort_by(f64::total_cmp);
        u.dedup();
        u
    }

    /// The window's cut points: W₀, every distinct instant strictly inside, W₁.
    fn cuts(instants: &[f64], w0: f64, w1: f64) -> Vec<f64> {
        let mut c = vec![w0];
        c.extend(instants.iter().copied().filter(|&t| t > w0 && t < w1));
        c.push(w1);
        c
    }

    /// The eight statistics of a set of pieces (value, duration) in time order, with `total` the
    /// weight the mean divides by.
    fn piece_stats(pieces: &[(f64, f64)], total: f64) -> [f64; 8] {
        let xd: Vec<f64> = pieces.iter().map(|&(x, d)| x * d).collect();
        let avg = pairwise_sum(&xd) / total;
        let dev: Vec<f64> = pieces
            .iter()
            .map(|&(x, d)| d * ((x - avg) * (x - avg)))
            .collect();
        let std = (pairwise_sum(&dev) / total).sqrt();
        let min = pieces.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let max = pieces.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
        // Duration-weighted lower quantile: first piece (by value) whose cumulative duration
        // share reaches q; no interpolation.
        let mut sorted = pieces.to_vec();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut acc = 0.0;
        let cum: Vec<f64> = sorted
            .iter()
            .map(|p| {
                acc += p.1;
                acc
            })
            .collect();
        let last = acc;
        let q = |q: f64| {
            let k = cum.iter().position(|&c| c / last >= q);
            sorted[k.unwrap_or(sorted.len() - 1)].0
        };
        [avg, q(0.50), q(0.90), q(0.95), q(0.99), min, max, std]
    }

    /// `compute_time_weighted_stats`: the curve over [W₀, W₁], idle stretches included.
    /// Order of the result: avg, p50, p90, p95, p99, min, max, std.
    fn time_weighted(c: &Curve, w0: f64, w1: f64) -> [f64; 8] {
        let total = w1 - w0;
        if c.is_empty() || total <= 0.0 {
            return [0.0; 8];
        }
        let pieces: Vec<(f64, f64)> = cuts(&c.t, w0, w1)
            .windows(2)
            .filter(|p| p[1] - p[0] > 0.0)
            .map(|p| (c.at(p[0]), p[1] - p[0]))
            .collect();
        if pieces.is_empty() {
            return [0.0; 8];
        }
        piece_stats(&pieces, total)
    }

    /// `compute_active_weighted_stats`: `x` restricted to the time when `mask` is > 0.
    fn active_weighted(x: &Curve, mask: &Curve, w0: f64, w1: f64) -> [f64; 8] {
        if x.is_empty() || mask.is_empty() || w1 - w0 <= 0.0 {
            return [0.0; 8];
        }
        let pieces: Vec<(f64, f64)> = cuts(&union(&x.t, &mask.t), w0, w1)
            .windows(2)
            .filter(|p| p[1] - p[0] > 0.0 && mask.at(p[0]) > 0.0)
            .map(|p| (x.at(p[0]), p[1] - p[0]))
            .collect();
        if pieces.is_empty() {
            return [0.0; 8];
        }
        let durations: Vec<f64> = pieces.iter().map(|p| p.1).collect();
        piece_stats(&pieces, pairwise_sum(&durations))
    }

    /// A record's instants and token counts as AIPerf's accumulator holds them (float64).
    struct Row<'a> {
        s: f64,
        g: Option<f64>,
        e: f64,
        i: Option<f64>,
        o: Option<u64>,
        icl: &'a [u64],
    }

    /// The 14 sweep-line metrics of a phase, in AIPerf's export order; none without records.
    ///
    /// `window` is the profiling phase's (`start_ns`, `requests_end_ns`). `icl_aware` selects
    /// ICL-aware decode throughput and tokens in flight: AIPerf uses it for the whole run when
    /// any record has ICL values (every streaming run) under the default list backend.
    pub fn sweepline_metrics(
        records: &[SweepRecord],
        window: (u64, u64),
        icl_aware: bool,
    ) -> Vec<MetricResult> {
        if records.is_empty() {
            return Vec::new();
        }
        let rows: Vec<Row> = records
            .iter()
            .map(|r| Row {
                s: r.s as f64,
                g: r.g.map(|g| g as f64),
                e: r.e as f64,
                i: r.i.map(|i| i as f64),
                o: r.o,
                icl: &r.icl,
            })
            .collect();
        let (w0, w1) = (window.0 as f64, window.1 as f64);

        let conc = Curve::from_intervals(&rows.iter().map(|r| (r.s, r.e, 1.0)).collect::<Vec<_>>());
        let dec_conc = Curve::from_intervals(
            &rows
                .iter()
                .filter_map(|r| r.g.map(|g| (g, r.e, 1.0)))
                .collect::<Vec<_>>(),
        );
        let pre_conc = Curve::from_intervals(
            &rows
                .iter()
                .filter_map(|r| r.g.map(|g| (r.s, g, 1.0)))
                .collect::<Vec<_>>(),
        );
        let prefill: Vec<(f64, f64, f64)> = rows
            .iter()
            .filter_map(|r| match (r.g, r.i) {
                (Some(g), Some(i)) if g - r.s > 0.0 => Some((r.s, g, i / (g - r.s))),
                _ => None,
            })
            .collect();
        let pre_tput = Curve::from_intervals(&prefill);
        // The first token arrives at G, so it is not part of the decode rate.
        let decode_req: Vec<(f64, f64, f64)> = rows
            .iter()
            .filter_map(|r| match (r.g, r.o) {
                (Some(g), Some(o)) if o >= 1 && r.e - g > 0.0 => {
                    Some((g, r.e, (o - 1) as f64 / (r.e - g)))
                }
                _ => None,
            })
            .collect();
        let dec_tput = if icl_aware {
            Curve::from_intervals(&icl_decode_intervals(&rows))
        } else {
            Curve::from_intervals(&decode_req)
        };
        // Total throughput always uses request-level decode, even when DT is ICL-aware.
        let mut total_ev: Vec<(f64, f64)> = prefill.iter().map(|&(a, _, w)| (a, w)).collect();
        total_ev.extend(prefill.iter().map(|&(_, b, w)| (b, -w)));
        total_ev.extend(decode_req.iter().map(|&(a, _, w)| (a, w)));
        total_ev.extend(decode_req.iter().map(|&(_, b, w)| (b, -w)));
        let total_tput = Curve::from_events(total_ev);
        let dec_user = Curve::divide(&dec_tput, &dec_conc);
        let pre_user = Curve::divide(&pre_tput, &pre_conc);
        let tokens = Curve::from_events(if icl_aware {
            icl_tokens_events(&rows)
        } else {
            request_tokens_events(&rows)
        });

        let tw = |c: &Curve| time_weighted(c, w0, w1);
        let aw = |x: &Curve, m: &Curve| active_weighted(x, m, w0, w1);
        let raw = [
            tw(&conc),
            tw(&dec_tput),
            tw(&pre_tput),
            tw(&dec_conc),
            tw(&pre_conc),
            tw(&total_tput),
            tw(&dec_user),
            tw(&pre_user),
            tw(&tokens),
            aw(&dec_tput, &dec_conc),
            aw(&pre_tput, &pre_conc),
            aw(&dec_user, &dec_conc),
            aw(&pre_user, &pre_conc),
            aw(&total_tput, &conc),
        ];
        SPECS.iter().zip(raw).map(|(s, r)| result(s, r)).collect()
    }

    /// ICL-aware decode: one interval per positive gap, ending at G ⊕ cₖ, rate
    /// ((O − 1)/Z)/vₖ with Z the number of positive gaps. Not clamped to E.
    fn icl_decode_intervals(rows: &[Row]) -> Vec<(f64, f64, f64)> {
        let mut iv = Vec::new();
        for r in rows {
            let (Some(g), Some(o)) = (r.g, r.o) else {
                continue;
            };
            let z = r.icl.iter().filter(|&&v| v > 0).count();
            if o < 1 || z == 0 {
                continue;
            }
            let per_gap = (o - 1) as f64 / z as f64;
            let mut c: u64 = 0;
            for &v in r.icl {
                c += v;
                if v > 0 {
                    let end = g + c as f64;
                    iv.push((end - v as f64, end, per_gap / v as f64));
                }
            }
        }
        iv
    }

    /// Records holding input tokens from S to E (`Pset`).
    fn in_pset(r: &Row) -> bool {
        matches!((r.g, r.i), (Some(g), Some(_)) if g > r.s)
    }

    /// Request-level tokens in flight: input from S, all output from G, both out at E.
    fn request_tokens_events(rows: &[Row]) -> Vec<(f64, f64)> {
        let in_dset = |r: &Row| matches!((r.g, r.o), (Some(g), Some(_)) if r.e - g > 0.0);
        let i = |r: &Row| r.i.unwrap_or(0.0);
        let o = |r: &Row| r.o.unwrap_or(0) as f64;
        let mut ev: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| in_pset(r))
            .map(|r| (r.s, i(r)))
            .collect();
        ev.extend(
            rows.iter()
                .filter(|r| in_dset(r))
                .map(|r| (r.g.unwrap(), o(r))),
        );
        ev.extend(exits(rows, in_pset, in_dset, i, o));
        ev
    }

    /// The removal events at E, in AIPerf's order: both sets, input only, output only.
    fn exits(
        rows: &[Row],
        p: impl Fn(&Row) -> bool,
        h: impl Fn(&Row) -> bool,
        i: impl Fn(&Row) -> f64,
        o: impl Fn(&Row) -> f64,
    ) -> Vec<(f64, f64)> {
        let mut ev: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| p(r) && h(r))
            .map(|r| (r.e, -(i(r) + o(r))))
            .collect();
        ev.extend(rows.iter().filter(|r| p(r) && !h(r)).map(|r| (r.e, -i(r))));
        ev.extend(rows.iter().filter(|r| !p(r) && h(r)).map(|r| (r.e, -o(r))));
        ev
    }

    /// ICL-aware tokens in flight: 1 token at G, then (O − 1)/K per chunk at G ⊕ cₖ, every gap
    /// counted (zeros too); a chunk at or after E moves just below E.
    fn icl_tokens_events(rows: &[Row]) -> Vec<(f64, f64)> {
        let in_hset = |r: &Row| r.g.is_some() && r.o.is_some_and(|o| o >= 1) && !r.icl.is_empty();
        let i = |r: &Row| r.i.unwrap_or(0.0);
        let o = |r: &Row| r.o.unwrap_or(0) as f64;
        let mut ev: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| in_hset(r))
            .map(|r| (r.g.unwrap(), 1.0))
            .collect();
        for r in rows.iter().filter(|r| in_hset(r)) {
            let g = r.g.unwrap();
            let per_chunk = (r.o.unwrap() - 1) as f64 / r.icl.len() as f64;
            let mut c: u64 = 0;
            for &v in r.icl {
                c += v;
                let t = g + c as f64;
                let t = if t >= r.e { r.e.next_down() } else { t };
                ev.push((t, per_chunk));
            }
        }
        ev.extend(rows.iter().filter(|r| in_pset(r)).map(|r| (r.s, i(r))));
        ev.extend(exits(rows, in_pset, in_hset, i, o));
        ev
    }
}

fn bits(m: &[MetricResult]) -> Vec<(String, Vec<Option<u64>>)> {
    m.iter()
        .map(|r| {
            let s = r.stats().expect("a distribution");
            let v = [s.avg, s.p50, s.p90, s.p95, s.p99, s.min, s.max, s.std];
            (
                r.tag.clone(),
                v.iter().map(|x| x.map(f64::to_bits)).collect(),
            )
        })
        .collect()
}

/// A phase of `n` records starting near today's epoch (where the f64 grid is 256 ns), some
/// errors, some without a first token, gaps with zeros, some ending before their last chunk.
fn phase() -> impl Strategy<Value = (Vec<SweepRecord>, (u64, u64))> {
    let rec = (
        0u64..2_000_000_000,
        0u64..300_000_000,
        proptest::option::weighted(0.9, 1u64..200),
        proptest::option::weighted(0.9, 0u64..40),
        proptest::collection::vec(prop_oneof![3 => 0u64..20_000_000, 1 => Just(0u64)], 0..12),
        any::<bool>(),
        // A record whose end comes before its last chunk (an imported artifact can hold
        // one): its chunks then reach past E.
        proptest::bool::weighted(0.2),
    );
    (
        proptest::collection::vec(rec, 1..40),
        0u64..500_000_000,
        1_000_000_000u64..3_000_000_000,
    )
        .prop_map(|(rs, w0, w1)| {
            const EPOCH: u64 = 1_764_000_000_000_000_000;
            let records = rs
                .into_iter()
                .map(|(s, ttft, i, o, icl, err, cut)| {
                    let s = EPOCH + s;
                    let span: u64 = icl.iter().sum();
                    if err {
                        return SweepRecord {
                            s,
                            g: None,
                            e: s + ttft + span,
                            i: None,
                            o: None,
                            icl: Vec::new(),
                        };
                    }
                    SweepRecord {
                        s,
                        g: Some(s + ttft),
                        e: if cut {
                            s + ttft + span / 2
                        } else {
                            s + ttft + span + 1_000
                        },
                        i,
                        o,
                        icl,
                    }
                })
                .collect();
            (records, (EPOCH + w0, EPOCH + w1))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn lean_sweep_matches_the_straightforward_one((records, window) in phase(), aware in any::<bool>()) {
        let want = bits(&old::sweepline_metrics(&records, window, aware));
        prop_assert_eq!(bits(&sweepline_metrics(&records, window, aware)), want.clone());
        // The compact form, with the gaps pooled as the accumulator pools them.
        let mut compact = CompactSweep::default();
        let mut pooled = Vec::new();
        for r in &records {
            pooled.extend(r.icl.iter().map(|&v| v as f64));
            compact.push(r.s, r.g, r.e, r.i, r.o, r.icl.len());
        }
        prop_assert_eq!(bits(&sweepline_metrics_compact(&compact, &pooled, window, aware)), want.clone());
        // The same gaps left in their column's encoding; and a column that does not hold
        // them all falls back to the decoded path (same result: the gaps are clamped alike).
        let column: crate::column::Column = pooled.iter().copied().collect();
        prop_assert_eq!(bits(&sweepline_metrics_column(&compact, &column, window, aware)), want.clone());
        // Kept curves (timeslices), from the list and from the compact form moved row by row.
        let kept = SweepCurves::build(&records, aware).expect("records");
        prop_assert_eq!(bits(&kept.metrics(window.0 as f64, window.1 as f64)), want.clone());
        let (mut moved, mut moved_gaps) = (CompactSweep::default(), Vec::new());
        let mut src = compact.clone();
        let mut rows = Vec::new();
        while !src.is_empty() {
            let mut one = CompactSweep::default();
            let mut g = Vec::new();
            src.move_last(&pooled, &mut one, &mut g);
            rows.push((one, g));
        }
        for (mut one, g) in rows.into_iter().rev() {
            one.move_last(&g, &mut moved, &mut moved_gaps);
        }
        prop_assert_eq!(&moved_gaps, &pooled);
        let kept = SweepCurves::build_compact(&moved, &moved_gaps, aware).expect("records");
        prop_assert_eq!(bits(&kept.metrics(window.0 as f64, window.1 as f64)), want);
    }

    #[test]
    fn indexed_pairwise_sum_is_numpys(v in proptest::collection::vec(-1e12f64..1e12, 0..700)) {
        let by = crate::stats::pairwise_sum_by(v.len(), &|i| v[i]);
        prop_assert_eq!(by.to_bits(), pairwise_sum(&v).to_bits());
    }
}
