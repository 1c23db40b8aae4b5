//! The `aiperf-0.13` definition set: AIPerf 0.13.0's metrics, computed from records.
//!
//! Formulas, populations and float64 conversion points follow AIPerf's own code paths (see
//! `docs/metrics.md`); they were checked bit for bit against real AIPerf 0.13.0 summaries.
//! Computed: every record metric, the aggregates, the error-adjusted `adj_*` companions, the
//! derived latencies, the time-weighted sweep-line `effective_*` / `active_*` /
//! `tokens_in_flight` metrics and goodput (`--goodput`, with the good fraction's Wilson
//! interval), and the `http_req_*` HTTP trace metrics (`http_trace`).
//!
//! Layout: `table` lists the metrics, `record` computes one record's values, `http_trace`
//! its HTTP phases, `slo` reads `--goodput`; this file folds records into a summary.

pub mod http_trace;
mod pool;
mod record;
mod slo;
mod table;
pub mod timeslice;

use rustc_hash::FxHashMap;

use inferbench_core::summary::{
    ErrorGroup, MetricResult, MetricValue, RecordMetric, RecordMetricValue, Summary,
};
use inferbench_core::{Evidence, EvidenceHeader, Phase, PhaseWindow, Record};

use crate::column::Column;
use crate::stats::{adj_stats, scaled, stats_owned, stats_std_in_order};
use crate::sweepline::{CompactSweep, sweepline_metrics_column};
use crate::{Computed, PerRecord};

use pool::{Pool, slot_of};
use record::{
    Ctx, ErrorKey, USAGE_DIFF_THRESHOLD_PCT, base_values, error_of, record_metric, result, scalar,
    usage_of, values_of, wall_f64,
};
pub use slo::{SLO_METRICS, Slo, parse_slos};
pub use table::METRICS;
use table::{ADJ_METRICS, RECORD_METRICS};

pub const NAME: &str = "aiperf-0.13";

/// AIPerf converts ns to display units by multiplying (`ns × 1e-6`), not dividing; the two
/// differ in the last bit for about a quarter of the values.
const NS_TO_MS: f64 = 1e-6;
const NS_TO_S: f64 = 1e-9;

/// The fold column of the first `http_req_*` metric: they are the table's last fourteen rows
/// (checked at compile time in `http_trace`), in [`http_trace::HTTP_METRICS`] order.
const HTTP_SLOT0: usize = METRICS.len() - http_trace::HTTP_METRICS.len();

/// (header, unit) of a tag of this set.
pub fn describe(tag: &str) -> Option<(&'static str, &'static str)> {
    // Looked up for every metric of every record: a map, not a scan of the table.
    static BY_TAG: std::sync::OnceLock<FxHashMap<&'static str, (&'static str, &'static str)>> =
        std::sync::OnceLock::new();
    BY_TAG
        .get_or_init(|| METRICS.iter().map(|(t, h, u)| (*t, (*h, *u))).collect())
        .get(tag)
        .copied()
}

fn order_of(tag: &str) -> usize {
    METRICS
        .iter()
        .position(|(t, _, _)| *t == tag)
        .unwrap_or(usize::MAX)
}

fn is_ms(tag: &str) -> bool {
    describe(tag).is_some_and(|(_, u)| u == "ms")
}

/// Folds records of one phase, one at a time, into the `aiperf-0.13` metrics. A live run
/// pushes each record as it completes and keeps nothing else of it, so memory grows only by
/// the metric columns (a few hundred bytes a request), never by the records themselves.
pub struct Accumulator {
    ctx: Ctx,
    anchor: u64,
    /// Base-unit values per metric, in record order (the order matters for pairwise sums),
    /// compactly encoded (`Column`: most are integers).
    pooled: Pool,
    errors: Vec<(ErrorKey, u64)>,
    n_valid: u64,
    n_errors: u64,
    min_start: f64,
    max_end: f64,
    osl_mismatches: Option<u64>,
    discrepancies: Option<u64>,
    credit_to_start: Column,
    effective: Column,
    /// (start, first token, end, ISL, OSL, how many chunk gaps) of every record, wall clock,
    /// for the time-weighted sweep-line metrics; the gaps themselves are the pooled
    /// `inter_chunk_latency` values, not a second copy.
    sweep: CompactSweep,
    /// `--goodput` SLOs, in display units, and the count of requests that met them all.
    slos: Vec<Slo>,
    good: u64,
    /// Confidence level of the good-fraction's Wilson interval.
    confidence_level: f64,
}

impl Accumulator {
    pub fn new(h: &EvidenceHeader) -> Self {
        Accumulator {
            ctx: Ctx::of(h),
            anchor: h.anchor_unix_ns,
            pooled: Pool::default(),
            errors: Vec::new(),
            n_valid: 0,
            n_errors: 0,
            min_start: f64::INFINITY,
            max_end: f64::NEG_INFINITY,
            osl_mismatches: None,
            discrepancies: None,
            credit_to_start: Column::new(),
            effective: Column::new(),
            sweep: CompactSweep::default(),
            slos: Vec::new(),
            good: 0,
            confidence_level: 0.95,
        }
    }

    /// Count requests meeting every SLO (`--goodput`); the fraction's Wilson interval is at
    /// `confidence_level`.
    pub fn with_slos(mut self, slos: Vec<Slo>, confidence_level: f64) -> Self {
        self.slos = slos;
        self.confidence_level = confidence_level;
        self
    }

    /// Fold one record in; returns its per-record metrics (display units).
    pub fn push(&mut self, r: &Record) -> Vec<RecordMetric> {
        let (ctx, anchor) = (self.ctx, self.anchor);
        // Derived latencies include every record, errors too. AIPerf divides by 1e6 here
        // (its derived-latency code), unlike the record metrics' × 1e-6.
        let planned = wall_f64(anchor, r.planned_ns);
        self.credit_to_start
            .push((wall_f64(anchor, r.start_ns) - planned).max(0.0) / 1e6);
        self.effective
            .push((wall_f64(anchor, r.end_ns) - planned).max(0.0) / 1e6);

        // Room for the 27 record metrics, the 15 HTTP ones and the goodput flag.
        let mut metrics = Vec::with_capacity(43);
        if let Some(key) = error_of(r, ctx) {
            self.n_errors += 1;
            match self.errors.iter_mut().find(|(k, _)| *k == key) {
                Some((_, c)) => *c += 1,
                None => self.errors.push((key, 1)),
            }
            let isl = if ctx.server_tokens() {
                usage_of(r).prompt
            } else {
                r.tokens.input
            };
            if let Some(isl) = isl {
                const ERROR_ISL: usize = slot_of("error_isl");
                let base = [isl as f64];
                self.pooled.at(ERROR_ISL).push(base[0]);
                metrics.push(record_metric(ERROR_ISL, &base));
            }
            // An error record counts only in the concurrency curve.
            self.sweep.push(
                anchor.saturating_add(r.start_ns),
                None,
                anchor.saturating_add(r.end_ns),
                None,
                None,
                0,
            );
        } else {
            self.n_valid += 1;
            let v = values_of(r, ctx);
            let latency = v.latency_ns.unwrap_or(0);
            self.min_start = self.min_start.min(wall_f64(anchor, r.start_ns));
            self.max_end = self
                .max_end
                .max(wall_f64(anchor, r.start_ns.saturating_add(latency)));
            if let Some(m) = v.osl_mismatch {
                *self.osl_mismatches.get_or_insert(0) += m as u64;
            }
            let diffs = [v.prompt_diff, v.completion_diff, v.reasoning_diff];
            if diffs.iter().any(Option::is_some) {
                let over = diffs
                    .iter()
                    .flatten()
                    .any(|d| *d > USAGE_DIFF_THRESHOLD_PCT);
                *self.discrepancies.get_or_insert(0) += over as u64;
            }
            for (slot, base) in base_values(&v) {
                let base = base.as_slice();
                metrics.push(record_metric(slot, base));
                self.pooled.at(slot).extend(base.iter().copied());
            }
            if let Some(h) = http_trace::values(r) {
                for (i, x) in h.iter().enumerate() {
                    if let Some(x) = *x {
                        metrics.push(http_trace::record_metric(i, x));
                        self.pooled.at(HTTP_SLOT0 + i).push(x as f64);
                    }
                }
            }
            if !self.slos.is_empty() {
                // Good only if every SLO holds; a metric the request lacks fails it.
                let good = self.slos.iter().all(|slo| {
                    metrics
                        .iter()
                        .find(|m| m.tag == slo.tag)
                        .and_then(|m| match m.value {
                            RecordMetricValue::Int(i) => Some(i as f64),
                            RecordMetricValue::Float(f) => Some(f),
                            RecordMetricValue::List(_) => None,
                        })
                        .is_some_and(|v| {
                            if slo.larger_is_better {
                                v >= slo.bound
                            } else {
                                v <= slo.bound
                            }
                        })
                });
                self.good += u64::from(good);
                metrics.push(RecordMetric {
                    tag: std::borrow::Cow::Borrowed("good_request_count"),
                    unit: std::borrow::Cow::Borrowed("requests"),
                    value: RecordMetricValue::Int(i64::from(good)),
                });
            }
            let s = anchor.saturating_add(r.start_ns);
            self.sweep.push(
                s,
                v.ttft_ns.map(|t| s + t),
                // AIPerf's curves end at the record's end, not at the last content response.
                anchor.saturating_add(r.end_ns),
                v.isl,
                v.osl,
                // `base_values` pooled exactly these gaps for this record, in order.
                v.icl_ns.len(),
            );
        }
        metrics
    }

    /// The phase's results. `window` is the phase's issuing window (the throughput
    /// denominator); without one, no throughput is reported.
    pub fn finish(self, window: Option<PhaseWindow>) -> Summary {
        let Accumulator {
            pooled,
            mut errors,
            n_valid,
            n_errors,
            min_start,
            max_end,
            osl_mismatches,
            discrepancies,
            credit_to_start,
            effective,
            sweep,
            anchor,
            slos,
            good,
            confidence_level,
            ..
        } = self;
        let mut out: Vec<MetricResult> = Vec::new();
        for tag in RECORD_METRICS {
            if let Some(vals) = pooled.get(tag) {
                let s = stats_owned(vals.to_vec());
                let s = if is_ms(tag) { scaled(s, NS_TO_MS) } else { s };
                out.push(result(tag, MetricValue::Distribution { stats: s }));
            }
        }
        for (tag, _, unit) in http_trace::HTTP_METRICS {
            if let Some(vals) = pooled.get(tag) {
                let s = scaled(stats_owned(vals.to_vec()), http_trace::display_factor(unit));
                out.push(result(tag, MetricValue::Distribution { stats: s }));
            }
        }

        let total = |tag: &str| -> Option<f64> { pooled.get(tag).map(|v| v.iter().sum()) };
        let completed = n_valid + n_errors;
        out.push(scalar("request_count", n_valid as f64));
        out.push(scalar("completed_request_count", completed as f64));
        if completed > 0 {
            out.push(scalar(
                "request_error_rate",
                n_errors as f64 * 100.0 / completed as f64,
            ));
        }
        if !slos.is_empty() {
            out.push(scalar("good_request_count", good as f64));
            // Errors stay in the denominator: a failed request is not a good one.
            out.push(scalar(
                "good_request_fraction",
                if completed > 0 {
                    good as f64 / completed as f64
                } else {
                    0.0
                },
            ));
            if let Some((lo, hi)) =
                crate::confidence::wilson_interval(good, completed, confidence_level)
            {
                out.push(scalar("good_request_fraction_ci_low", lo));
                out.push(scalar("good_request_fraction_ci_high", hi));
            }
        }
        if n_errors > 0 {
            out.push(scalar("error_request_count", n_errors as f64));
            // No context-overflow flag exists in the records yet, so none is counted.
            out.push(scalar("context_overflow_count", 0.0));
        }
        if n_valid > 0 {
            out.push(scalar(
                "benchmark_duration",
                (max_end - min_start) * NS_TO_S,
            ));
        }
        let total_osl = total("output_sequence_length");
        let total_isl = total("input_sequence_length");
        for (tag, src) in [
            ("total_output_tokens", "output_token_count"),
            ("total_reasoning_tokens", "reasoning_token_count"),
            ("total_isl", "input_sequence_length"),
            ("total_osl", "output_sequence_length"),
            ("total_error_isl", "error_isl"),
            ("total_usage_prompt_tokens", "usage_prompt_tokens"),
            ("total_usage_completion_tokens", "usage_completion_tokens"),
            ("total_usage_total_tokens", "usage_total_tokens"),
            ("total_usage_reasoning_tokens", "usage_reasoning_tokens"),
        ] {
            if let Some(t) = total(src) {
                out.push(scalar(tag, t));
            }
        }
        if let Some(n) = osl_mismatches {
            out.push(scalar("osl_mismatch_count", n as f64));
        }
        if let Some(n) = discrepancies {
            out.push(scalar("usage_discrepancy_count", n as f64));
        }

        // Throughputs divide by the phase's issuing window, not by benchmark_duration.
        if let Some(w) = window.filter(|w| w.requests_end_ns > w.start_ns) {
            let secs = (w.requests_end_ns - w.start_ns) as f64 * NS_TO_S;
            out.push(scalar("request_throughput", n_valid as f64 / secs));
            if !slos.is_empty() {
                out.push(scalar("goodput", good as f64 / secs));
            }
            if let Some(osl) = total_osl {
                out.push(scalar("output_token_throughput", osl / secs));
            }
            if let Some(isl) = total_isl {
                out.push(scalar("input_token_throughput", isl / secs));
            }
            if let (Some(isl), Some(osl)) = (total_isl, total_osl) {
                out.push(scalar("total_token_throughput", (isl + osl) / secs));
            }
        }

        if n_errors > 0 {
            for tag in ADJ_METRICS {
                if let Some(vals) = pooled.get(tag) {
                    let s = scaled(adj_stats(&vals.to_vec(), n_errors), NS_TO_MS);
                    let adj = format!("adj_{tag}");
                    out.push(result(&adj, MetricValue::Distribution { stats: s }));
                }
            }
        }

        // The columns are done with, but for the gaps the sweep reads: free them before it
        // builds its curves, the largest allocation of the run's end.
        let mut pooled = pooled;
        pooled.keep_only("inter_chunk_latency");

        if !credit_to_start.is_empty() {
            out.push(result(
                "credit_to_start_latency",
                MetricValue::Distribution {
                    stats: stats_std_in_order(&credit_to_start.to_vec()),
                },
            ));
            out.push(result(
                "effective_latency",
                MetricValue::Distribution {
                    stats: stats_std_in_order(&effective.to_vec()),
                },
            ));
        }

        // Time-weighted metrics over the phase window; ICL-aware whenever any record has
        // chunk gaps (AIPerf's default list backend), for the whole run.
        if let Some(w) = window {
            let icl_aware = sweep.has_gaps();
            let gaps = pooled.take("inter_chunk_latency");
            out.extend(sweepline_metrics_column(
                &sweep,
                &gaps,
                (anchor + w.start_ns, anchor + w.requests_end_ns),
                icl_aware,
            ));
        }

        out.sort_by_key(|m| order_of(&m.tag));

        // Most frequent first; ties keep first-seen order (stable sort).
        errors.sort_by_key(|e| std::cmp::Reverse(e.1));
        let error_summary = errors
            .into_iter()
            .map(|((code, error_type, message), count)| ErrorGroup {
                code,
                error_type,
                message,
                count,
            })
            .collect();

        Summary {
            definitions: NAME.to_string(),
            metrics: out,
            error_summary,
        }
    }
}

/// Compute the `aiperf-0.13` metrics of one phase.
pub fn compute(evidence: &Evidence, phase: Phase) -> Computed {
    let mut acc = Accumulator::new(&evidence.header);
    let per_record = evidence
        .records_of(phase)
        .map(|r| PerRecord {
            id: r.id,
            metrics: acc.push(r),
        })
        .collect();
    Computed {
        summary: acc.finish(evidence.window(phase)),
        per_record,
    }
}
