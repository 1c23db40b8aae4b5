//! AIPerf 0.13's sweep-line (time-weighted) metrics: `effective_*`, `tokens_in_flight` and
//! the `active_*` variants (reference §5.3).
//!
//! Each metric is a step function of wall-clock time built from per-record events and
//! summarized over the profiling window by time-weighted statistics. AIPerf holds every
//! instant as float64, so the curves here convert to f64 at the same points and add in f64:
//! at today's epoch the f64 grid is 256 ns wide and exact integer arithmetic changes about
//! half of the values.

use inferbench_core::summary::{MetricResult, MetricValue, Stats};

use crate::stats::pairwise_sum_by;

/// One record of the phase, error records included.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepRecord {
    /// Request start, wall clock ns (metadata `request_start_ns`).
    pub s: u64,
    /// First-token instant, wall clock ns: `request_start_ns + TTFT` (integer sum). `None`
    /// when the record has no TTFT (errors, non-streaming runs).
    pub g: Option<u64>,
    /// Request end, wall clock ns (metadata `request_end_ns`, as AIPerf's accumulator uses).
    pub e: u64,
    /// Input tokens (ISL); `None` on error records.
    pub i: Option<u64>,
    /// Output tokens (OSL: output + reasoning); `None` on error records.
    pub o: Option<u64>,
    /// Inter-chunk gaps in ns (AIPerf's `inter_chunk_latency`); empty when absent.
    pub icl: Vec<u64>,
}

/// A step function: distinct instants ascending with the value from each instant on (0
/// before the first), as (instant, value) pairs. Empty when built from no events.
///
/// Memory is the point of this layout: a streaming run's decode curve has one instant per
/// chunk, so every copy of it costs tens of bytes per request; the curve is built in place
/// from its events and summarized without materializing cut lists or sorted copies of it.
#[derive(Clone, Debug, Default, PartialEq)]
struct Curve {
    p: Vec<(f64, f64)>,
}

impl Curve {
    fn is_empty(&self) -> bool {
        self.p.is_empty()
    }

    /// Value at `x`: that of the last instant ≤ x, 0 before the first.
    fn at(&self, x: f64) -> f64 {
        match self.p.partition_point(|&(t, _)| t <= x) {
            0 => 0.0,
            k => self.p[k - 1].1,
        }
    }

    /// n(t)/d(t) on the union of both curves' instants, 0 where d(t) ≤ 0.
    fn divide(n: &Curve, d: &Curve) -> Curve {
        if n.is_empty() || d.is_empty() {
            return Curve::default();
        }
        let mut p = Vec::with_capacity(n.p.len() + d.p.len());
        let (mut vn, mut vd) = (0.0, 0.0);
        union_walk(n, d, |x, a, b| {
            vn = a.unwrap_or(vn);
            vd = b.unwrap_or(vd);
            p.push((x, if vd > 0.0 { vn / vd } else { 0.0 }));
        });
        p.shrink_to_fit();
        Curve { p }
    }
}

/// Walks the sorted union of two curves' instants (each instant once), calling `f` with the
/// instant and the value each curve takes there if it has that instant.
fn union_walk(a: &Curve, b: &Curve, mut f: impl FnMut(f64, Option<f64>, Option<f64>)) {
    let (mut i, mut j) = (0, 0);
    while i < a.p.len() || j < b.p.len() {
        let ta = a.p.get(i).map(|p| p.0);
        let tb = b.p.get(j).map(|p| p.0);
        match (ta, tb) {
            (Some(x), Some(y)) if x == y => {
                f(x, Some(a.p[i].1), Some(b.p[j].1));
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x.total_cmp(&y).is_lt() => {
                f(x, Some(a.p[i].1), None);
                i += 1;
            }
            (Some(_), Some(y)) => {
                f(y, None, Some(b.p[j].1));
                j += 1;
            }
            (Some(x), None) => {
                f(x, Some(a.p[i].1), None);
                i += 1;
            }
            (None, Some(y)) => {
                f(y, None, Some(b.p[j].1));
                j += 1;
            }
            (None, None) => unreachable!("the loop condition"),
        }
    }
}

/// The eight statistics of a set of pieces (value, duration) in time order, with `total` the
/// weight the mean divides by. Sorts `pieces` by value (it is the caller's scratch).
fn piece_stats(pieces: &mut [(f64, f64)], total: f64) -> [f64; 8] {
    let n = pieces.len();
    let avg = pairwise_sum_by(n, &|i| pieces[i].0 * pieces[i].1) / total;
    let std = (pairwise_sum_by(n, &|i| {
        let (x, d) = pieces[i];
        d * ((x - avg) * (x - avg))
    }) / total)
        .sqrt();
    let min = pieces.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let max = pieces.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let out = weighted_quantiles(pieces, &QUANTILES)
        .map(|(_, out)| out)
        .unwrap_or_else(|| quantiles_by_sort(pieces));
    [avg, out[0], out[1], out[2], out[3], min, max, std]
}

const QUANTILES: [f64; 4] = [0.50, 0.90, 0.95, 0.99];

/// Duration-weighted lower quantile: first piece (by value) whose cumulative duration share
/// reaches q; no interpolation. The cumulative sums are those of a left-to-right running sum
/// in value order (the last is the denominator), found in one pass since they never decrease
/// and the q ascend. [`weighted_quantiles`] gives the same without the sort when the sums are
/// exact in any order (whole-ns durations); this is the definition, for any durations.
fn quantiles_by_sort(pieces: &mut [(f64, f64)]) -> [f64; 4] {
    sort_pieces(pieces);
    let last = pieces.iter().fold(0.0, |acc, p| acc + p.1);
    let mut out = [pieces[pieces.len() - 1].0; 4];
    let mut k = 0;
    let mut acc = 0.0;
    for p in pieces.iter() {
        acc += p.1;
        while k < QUANTILES.len() && acc / last >= QUANTILES[k] {
            out[k] = p.0;
            k += 1;
        }
        if k == QUANTILES.len() {
            break;
        }
    }
    out
}

/// The pieces of a curve over [W₀, W₁]: between consecutive cut points (W₀, every distinct
/// instant strictly inside, W₁) of positive width, the value at the piece's start.
fn window_pieces(c: &Curve, w0: f64, w1: f64) -> Vec<(f64, f64)> {
    let first = c.p.partition_point(|&(t, _)| t <= w0);
    // At most one piece an instant after W₀, and the last: one allocation, not a series of
    // reallocations (its unused end is never written, so never resident).
    let mut out = Vec::with_capacity(c.p.len() - first + 1);
    let mut cut = w0;
    let mut value = c.at(w0);
    for &(t, v) in &c.p[first..] {
        if t >= w1 {
            break;
        }
        if t > w0 {
            if t - cut > 0.0 {
                out.push((value, t - cut));
            }
            cut = t;
            value = v;
        }
    }
    if w1 - cut > 0.0 {
        out.push((value, w1 - cut));
    }
    out
}

/// `compute_time_weighted_stats`: the curve over [W₀, W₁], idle stretches included.
/// Order of the result: avg, p50, p90, p95, p99, min, max, std.
fn time_weighted(c: &Curve, w0: f64, w1: f64) -> [f64; 8] {
    let total = w1 - w0;
    if c.is_empty() || total <= 0.0 {
        return [0.0; 8];
    }
    let mut pieces = window_pieces(c, w0, w1);
    if pieces.is_empty() {
        return [0.0; 8];
    }
    piece_stats(&mut pieces, total)
}

/// `compute_active_weighted_stats`: `x` restricted to the time when `mask` is > 0.
fn active_weighted(x: &Curve, mask: &Curve, w0: f64, w1: f64) -> [f64; 8] {
    if x.is_empty() || mask.is_empty() || w1 - w0 <= 0.0 {
        return [0.0; 8];
    }
    // Cut points: W₀, every instant of either curve strictly inside, W₁; a piece is kept
    // when the mask is > 0 at its start.
    let mut pieces = Vec::new();
    let mut cut = w0;
    let (mut vx, mut vm) = (x.at(w0), mask.at(w0));
    let mut close = |t: f64, cut: f64, vx: f64, vm: f64| {
        if t - cut > 0.0 && vm > 0.0 {
            pieces.push((vx, t - cut));
        }
    };
    union_walk(x, mask, |t, a, b| {
        // Instants at or before W₀ are in the values at W₀; those at or after W₁ cut nothing.
        if t > w0 && t < w1 {
            close(t, cut, vx, vm);
            cut = t;
            vx = a.unwrap_or(vx);
            vm = b.unwrap_or(vm);
        }
    });
    close(w1, cut, vx, vm);
    if pieces.is_empty() {
        return [0.0; 8];
    }
    let total = pairwise_sum_by(pieces.len(), &|i| pieces[i].1);
    piece_stats(&mut pieces, total)
}

/// Tag, CSV header and unit of each metric; [`SPECS`] is in AIPerf's export order.
struct Spec {
    tag: &'static str,
    header: &'static str,
    unit: &'static str,
}

const REQ: &str = "requests";
const TPS: &str = "tokens/sec";
const TPU: &str = "tokens/sec/user";

const SPECS: [Spec; 14] = [
    spec("effective_concurrency", "Effective Concurrency", REQ),
    spec(
        "effective_decode_throughput",
        "Effective Decode Throughput",
        TPS,
    ),
    spec(
        "effective_prefill_throughput",
        "Effective Prefill Throughput",
        TPS,
    ),
    spec(
        "effective_decode_concurrency",
        "Effective Decode Concurrency",
        REQ,
    ),
    spec(
        "effective_prefill_concurrency",
        "Effective Prefill Concurrency",
        REQ,
    ),
    spec(
        "effective_total_throughput",
        "Effective Total Throughput",
        TPS,
    ),
    spec(
        "effective_decode_throughput_per_user",
        "Effective Decode Throughput Per User",
        TPU,
    ),
    spec(
        "effective_prefill_throughput_per_user",
        "Effective Prefill Throughput Per User",
        TPU,
    ),
    spec("tokens_in_flight", "Tokens In Flight", "tokens"),
    spec("active_decode_throughput", "Active Decode Throughput", TPS),
    spec(
        "active_prefill_throughput",
        "Active Prefill Throughput",
        TPS,
    ),
    spec(
        "active_decode_throughput_per_user",
        "Active Decode Throughput Per User",
        TPU,
    ),
    spec(
        "active_prefill_throughput_per_user",
        "Active Prefill Throughput Per User",
        TPU,
    ),
    spec("active_total_throughput", "Active Total Throughput", TPS),
];

const fn spec(tag: &'static str, header: &'static str, unit: &'static str) -> Spec {
    Spec { tag, header, unit }
}

fn result(spec: &Spec, raw: [f64; 8]) -> MetricResult {
    // Rates are tokens/ns; each statistic is scaled separately, after it is computed.
    let scale = if spec.unit == REQ || spec.unit == "tokens" {
        1.0
    } else {
        1e9
    };
    let f = |v: f64| Some(v * scale).filter(|v| v.is_finite());
    let [avg, p50, p90, p95, p99, min, max, std] = raw;
    MetricResult {
        tag: spec.tag.to_string(),
        header: spec.header.to_string(),
        unit: spec.unit.to_string(),
        value: MetricValue::Distribution {
            stats: Stats {
                avg: f(avg),
                p50: f(p50),
                p90: f(p90),
                p95: f(p95),
                p99: f(p99),
                min: f(min),
                max: f(max),
                std: f(std),
                ..Stats::default()
            },
        },
    }
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
    metrics_of(records, window, icl_aware)
}

/// [`sweepline_metrics`] over a [`CompactSweep`] and the phase's pooled
/// `inter_chunk_latency` values (base units, record order).
pub fn sweepline_metrics_compact(
    sweep: &CompactSweep,
    pooled_gaps: &[f64],
    window: (u64, u64),
    icl_aware: bool,
) -> Vec<MetricResult> {
    if sweep.is_empty() {
        return Vec::new();
    }
    let rows = PooledRows {
        sweep,
        gaps: pooled_gaps,
    };
    metrics_of(&rows, window, icl_aware)
}

/// [`sweepline_metrics_compact`] with the pooled gaps still in their column: each record's
/// gaps are decoded as the sweep reaches them, never all at once (8 bytes a gap at the end
/// of a long streaming run). The same statistics, bit for bit.
pub fn sweepline_metrics_column(
    sweep: &CompactSweep,
    pooled_gaps: &crate::column::Column,
    window: (u64, u64),
    icl_aware: bool,
) -> Vec<MetricResult> {
    if sweep.is_empty() {
        return Vec::new();
    }
    match ColumnRows::new(sweep, pooled_gaps) {
        Some(rows) => metrics_of(&rows, window, icl_aware),
        None => sweepline_metrics_compact(sweep, &pooled_gaps.to_vec(), window, icl_aware),
    }
}

/// The nine curves of a phase built once and kept, to be evaluated over many windows
/// (AIPerf's timeslices window the phase's curves). A single window needs no kept curves:
/// [`sweepline_metrics`] builds them in stages and uses far less memory.
pub struct SweepCurves {
    conc: Curve,
    dec_conc: Curve,
    pre_conc: Curve,
    pre_tput: Curve,
    dec_tput: Curve,
    total_tput: Curve,
    dec_user: Curve,
    pre_user: Curve,
    tokens: Curve,
}

impl SweepCurves {
    /// None without records (AIPerf then emits none of the 14 metrics).
    pub fn build(records: &[SweepRecord], icl_aware: bool) -> Option<SweepCurves> {
        (!records.is_empty()).then(|| SweepCurves::of(records, icl_aware))
    }

    /// [`SweepCurves::build`] over a [`CompactSweep`] and its pooled gaps.
    pub fn build_compact(
        sweep: &CompactSweep,
        pooled_gaps: &[f64],
        icl_aware: bool,
    ) -> Option<SweepCurves> {
        let rows = PooledRows {
            sweep,
            gaps: pooled_gaps,
        };
        (!sweep.is_empty()).then(|| SweepCurves::of(&rows, icl_aware))
    }

    fn of<R: Rows + ?Sized>(src: &R, icl_aware: bool) -> SweepCurves {
        let w = Walk::new(src);
        let conc = Curve::from_intervals(|p| w.rows(p).map(|r| (r.s, r.e, 1.0)));
        let dec_conc =
            Curve::from_intervals(|p| w.rows(p).filter_map(|r| r.g.map(|g| (g, r.e, 1.0))));
        let pre_conc =
            Curve::from_intervals(|p| w.rows(p).filter_map(|r| r.g.map(|g| (r.s, g, 1.0))));
        let pre_tput = Curve::from_intervals(|p| w.rows(p).filter_map(prefill_iv));
        let dec_tput = if icl_aware {
            Curve::from_intervals(|p| w.rows(p).flat_map(icl_decode_intervals))
        } else {
            Curve::from_intervals(|p| w.rows(p).filter_map(decode_iv))
        };
        let total_tput = total_throughput(&w);
        let dec_user = Curve::divide(&dec_tput, &dec_conc);
        let pre_user = Curve::divide(&pre_tput, &pre_conc);
        let tokens = tokens_curve(&w, icl_aware);
        SweepCurves {
            conc,
            dec_conc,
            pre_conc,
            pre_tput,
            dec_tput,
            total_tput,
            dec_user,
            pre_user,
            tokens,
        }
    }

    /// The 14 metrics over the window [w0, w1] (wall-clock ns as f64), in AIPerf's order.
    pub fn metrics(&self, w0: f64, w1: f64) -> Vec<MetricResult> {
        let c = self;
        let tw = |x: &Curve| time_weighted(x, w0, w1);
        let aw = |x: &Curve, m: &Curve| active_weighted(x, m, w0, w1);
        let raw = [
            tw(&c.conc),
            tw(&c.dec_tput),
            tw(&c.pre_tput),
            tw(&c.dec_conc),
            tw(&c.pre_conc),
            tw(&c.total_tput),
            tw(&c.dec_user),
            tw(&c.pre_user),
            tw(&c.tokens),
            aw(&c.dec_tput, &c.dec_conc),
            aw(&c.pre_tput, &c.pre_conc),
            aw(&c.dec_user, &c.dec_conc),
            aw(&c.pre_user, &c.pre_conc),
            aw(&c.total_tput, &c.conc),
        ];
        SPECS.iter().zip(raw).map(|(s, r)| result(s, r)).collect()
    }
}

/// Whether `tag` is one of the 14 sweep-line metrics.
pub fn is_sweepline_tag(tag: &str) -> bool {
    SPECS.iter().any(|s| s.tag == tag)
}

/// Total throughput: always request-level decode, even when DT is ICL-aware.
fn total_throughput<R: Rows + ?Sized>(w: &Walk<R>) -> Curve {
    Curve::from_source(|p| {
        let pre = w.rows(p).filter_map(prefill_iv);
        let pre_end = w.rows(p).filter_map(prefill_iv);
        let dec = w.rows(p).filter_map(decode_iv);
        let dec_end = w.rows(p).filter_map(decode_iv);
        pre.map(|(a, _, w)| (a, w))
            .chain(pre_end.map(|(_, b, w)| (b, -w)))
            .chain(dec.map(|(a, _, w)| (a, w)))
            .chain(dec_end.map(|(_, b, w)| (b, -w)))
    })
}

fn tokens_curve<R: Rows + ?Sized>(w: &Walk<R>, icl_aware: bool) -> Curve {
    if icl_aware {
        Curve::from_source(|p| icl_tokens_events(w, p))
    } else {
        Curve::from_source(|p| request_tokens_events(w, p))
    }
}

/// Prefill rate intervals: (S, G, I/(G − S)) where G > S.
fn prefill_iv(r: Row) -> Option<(f64, f64, f64)> {
    match (r.g, r.i) {
        (Some(g), Some(i)) if g - r.s > 0.0 => Some((r.s, g, i / (g - r.s))),
        _ => None,
    }
}

/// Request-level decode intervals. The first token arrives at G, so it is not part of the
/// decode rate.
fn decode_iv(r: Row) -> Option<(f64, f64, f64)> {
    match (r.g, r.o) {
        (Some(g), Some(o)) if o >= 1 && r.e - g > 0.0 => Some((g, r.e, (o - 1) as f64 / (r.e - g))),
        _ => None,
    }
}

/// The curves are built, summarized and dropped in stages, so that at most a few are alive
/// at once: the decode curve of a streaming run has an instant per chunk.
fn metrics_of<R: Rows + ?Sized>(src: &R, window: (u64, u64), icl_aware: bool) -> Vec<MetricResult> {
    let (w0, w1) = (window.0 as f64, window.1 as f64);
    let tw = |c: &Curve| time_weighted(c, w0, w1);
    let aw = |x: &Curve, m: &Curve| active_weighted(x, m, w0, w1);
    let mut raw = [[0.0; 8]; 14];
    let w = Walk::new(src);

    // Concurrency, and total throughput (active while any request is in flight).
    let conc = Curve::from_intervals(|p| w.rows(p).map(|r| (r.s, r.e, 1.0)));
    raw[0] = tw(&conc);
    {
        let total_tput = total_throughput(&w);
        raw[5] = tw(&total_tput);
        raw[13] = aw(&total_tput, &conc);
    }
    drop(conc);

    // Prefill.
    {
        let pre_conc =
            Curve::from_intervals(|p| w.rows(p).filter_map(|r| r.g.map(|g| (r.s, g, 1.0))));
        let pre_tput = Curve::from_intervals(|p| w.rows(p).filter_map(prefill_iv));
        raw[2] = tw(&pre_tput);
        raw[4] = tw(&pre_conc);
        raw[10] = aw(&pre_tput, &pre_conc);
        let pre_user = Curve::divide(&pre_tput, &pre_conc);
        drop(pre_tput);
        raw[7] = tw(&pre_user);
        raw[12] = aw(&pre_user, &pre_conc);
    }

    // Decode.
    {
        let dec_conc =
            Curve::from_intervals(|p| w.rows(p).filter_map(|r| r.g.map(|g| (g, r.e, 1.0))));
        let dec_tput = if icl_aware {
            Curve::from_intervals(|p| w.rows(p).flat_map(icl_decode_intervals))
        } else {
            Curve::from_intervals(|p| w.rows(p).filter_map(decode_iv))
        };
        raw[1] = tw(&dec_tput);
        raw[3] = tw(&dec_conc);
        raw[9] = aw(&dec_tput, &dec_conc);
        let dec_user = Curve::divide(&dec_tput, &dec_conc);
        drop(dec_tput);
        raw[6] = tw(&dec_user);
        raw[11] = aw(&dec_user, &dec_conc);
    }

    let tokens = tokens_curve(&w, icl_aware);
    raw[8] = tw(&tokens);
    SPECS.iter().zip(raw).map(|(s, r)| result(s, r)).collect()
}

/// ICL-aware decode: one interval per positive gap, ending at G ⊕ cₖ, rate
/// ((O − 1)/Z)/vₖ with Z the number of positive gaps. Not clamped to E.
fn icl_decode_intervals(r: Row<'_>) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
    let z = r.icl.iter().filter(|&v| v > 0).count();
    let live = match (r.g, r.o) {
        (Some(g), Some(o)) if o >= 1 && z > 0 => Some((g, (o - 1) as f64 / z as f64)),
        _ => None,
    };
    let mut c: u64 = 0;
    r.icl
        .iter()
        .take(if live.is_some() { usize::MAX } else { 0 })
        .filter_map(move |v| {
            let (g, per_gap) = live?;
            c += v;
            (v > 0).then(|| {
                let end = g + c as f64;
                (end - v as f64, end, per_gap / v as f64)
            })
        })
}

/// Records holding input tokens from S to E (`Pset`).
fn in_pset(r: &Row) -> bool {
    matches!((r.g, r.i), (Some(g), Some(_)) if g > r.s)
}

fn in_dset(r: &Row) -> bool {
    matches!((r.g, r.o), (Some(g), Some(_)) if r.e - g > 0.0)
}

fn in_hset(r: &Row) -> bool {
    r.g.is_some() && r.o.is_some_and(|o| o >= 1) && !r.icl.is_empty()
}

fn input_tokens(r: &Row) -> f64 {
    r.i.unwrap_or(0.0)
}

fn output_tokens(r: &Row) -> f64 {
    r.o.unwrap_or(0) as f64
}

/// Request-level tokens in flight: input from S, all output from G, both out at E.
fn request_tokens_events<'a, R: Rows + ?Sized>(
    w: &'a Walk<'a, R>,
    p: Pass,
) -> impl Iterator<Item = (f64, f64)> + 'a {
    let inputs = w.rows(p).filter(in_pset).map(|r| (r.s, input_tokens(&r)));
    let outputs = w
        .rows(p)
        .filter(in_dset)
        .map(|r| (r.g.unwrap(), output_tokens(&r)));
    inputs.chain(outputs).chain(exits(w, p, in_dset))
}

/// The removal events at E, in AIPerf's order: both sets, input only, output only. `h` is
/// the output set (`in_dset` or `in_hset`); the input set is always `in_pset`.
fn exits<'a, R: Rows + ?Sized>(
    w: &'a Walk<'a, R>,
    pass: Pass,
    h: fn(&Row) -> bool,
) -> impl Iterator<Item = (f64, f64)> + 'a {
    let (p, i, o) = (in_pset, input_tokens, output_tokens);
    let both = w
        .rows(pass)
        .filter(move |r| p(r) && h(r))
        .map(move |r| (r.e, -(i(&r) + o(&r))));
    let only_in = w
        .rows(pass)
        .filter(move |r| p(r) && !h(r))
        .map(move |r| (r.e, -i(&r)));
    let only_out = w
        .rows(pass)
        .filter(move |r| !p(r) && h(r))
        .map(move |r| (r.e, -o(&r)));
    both.chain(only_in).chain(only_out)
}

/// ICL-aware tokens in flight: 1 token at G, then (O − 1)/K per chunk at G ⊕ cₖ, every gap
/// counted (zeros too); a chunk at or after E moves just below E.
fn icl_tokens_events<'a, R: Rows + ?Sized>(
    w: &'a Walk<'a, R>,
    p: Pass,
) -> impl Iterator<Item = (f64, f64)> + 'a {
    let firsts = w.rows(p).filter(in_hset).map(|r| (r.g.unwrap(), 1.0));
    let chunks = w.rows(p).filter(in_hset).flat_map(|r| {
        let g = r.g.unwrap();
        let e = r.e;
        let per_chunk = (r.o.unwrap() - 1) as f64 / r.icl.len() as f64;
        let mut c: u64 = 0;
        r.icl.iter().map(move |v| {
            c += v;
            let t = g + c as f64;
            let t = if t >= e { e.next_down() } else { t };
            (t, per_chunk)
        })
    });
    let inputs = w.rows(p).filter(in_pset).map(|r| (r.s, input_tokens(&r)));
    firsts
        .chain(chunks)
        .chain(inputs)
        .chain(exits(w, p, in_hset))
}

mod build;
mod quantile;
mod radix;
mod rows;
mod walk;

use quantile::weighted_quantiles;
use radix::sort_pieces;

use build::Pass;
pub use rows::CompactSweep;
use rows::{ColumnRows, PooledRows, Row, Rows};
use walk::Walk;

#[cfg(test)]
mod reference_tests;
