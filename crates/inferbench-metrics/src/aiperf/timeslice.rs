//! AIPerf's timeslices (`--slice-duration`, reference §1.11, §5.3): the profiling phase cut
//! into windows of a fixed duration, each scored like a phase of its own.
//!
//! AIPerf's rules, reproduced here:
//! - The grid starts at the earliest record start (error records included) and is sized to
//!   reach the latest record start or end: `n = ⌊(max − min) / d⌋ + 1` slices, edges
//!   `min + k·d`, all in float64 as AIPerf's column store holds them.
//! - A record belongs to the slice holding its start (`edgeₖ ≤ start < edgeₖ₊₁`).
//! - A slice with no record is left out.
//! - Each slice's record, aggregate and derived metrics come from its own records, and its
//!   throughputs divide by the slice's window. The last slice's end is clipped to the latest
//!   record end and is marked incomplete.
//! - The sweep-line metrics are the phase's curves (built once, from every record) evaluated
//!   over each slice's window, not curves of the slice's records alone.
//! - The derived latencies (`credit_to_start_latency`, `effective_latency`) are
//!   phase-level only: AIPerf adds them after its timeslices are computed.

use inferbench_core::summary::Summary;
use inferbench_core::{EvidenceHeader, PhaseWindow, Record};

use super::{Accumulator, Slo};
use crate::sweepline::{CompactSweep, SweepCurves, is_sweepline_tag};

/// Metrics AIPerf computes for the phase only, never per slice.
const PHASE_ONLY: [&str; 2] = ["credit_to_start_latency", "effective_latency"];

/// The earliest start and latest start-or-end of a phase's records (pass one).
#[derive(Clone, Copy, Debug)]
pub struct SliceBounds {
    anchor: u64,
    min_start: f64,
    max_ts: f64,
}

impl SliceBounds {
    pub fn new(anchor_unix_ns: u64) -> SliceBounds {
        SliceBounds {
            anchor: anchor_unix_ns,
            min_start: f64::INFINITY,
            max_ts: f64::NEG_INFINITY,
        }
    }

    pub fn push(&mut self, r: &Record) {
        let s = super::wall_f64(self.anchor, r.start_ns);
        let e = super::wall_f64(self.anchor, r.end_ns);
        self.min_start = self.min_start.min(s);
        self.max_ts = self.max_ts.max(s).max(e);
    }

    /// The slice grid for `slice_ns`; None without records or with a zero duration.
    pub fn grid(&self, slice_ns: u64) -> Option<SliceGrid> {
        if !self.min_start.is_finite() || slice_ns == 0 {
            return None;
        }
        let d = slice_ns as f64;
        let n = ((self.max_ts - self.min_start) / d) as usize + 1;
        let edges = (0..=n).map(|k| self.min_start + k as f64 * d).collect();
        Some(SliceGrid {
            edges,
            max_ts: self.max_ts,
        })
    }
}

/// Slice edges (wall-clock ns as f64, ascending) and the clip of the last slice.
#[derive(Clone, Debug, PartialEq)]
pub struct SliceGrid {
    pub edges: Vec<f64>,
    pub max_ts: f64,
}

impl SliceGrid {
    pub fn len(&self) -> usize {
        self.edges.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slice of a start instant: k with `edgeₖ ≤ s < edgeₖ₊₁` (numpy `digitize` − 1),
    /// clamped to the grid.
    pub fn slice_of(&self, s: f64) -> usize {
        let k = self.edges.partition_point(|&e| e <= s);
        k.saturating_sub(1).min(self.len() - 1)
    }

    /// Slice k's window `[start, end]` and whether it is complete (not clipped).
    pub fn window(&self, k: usize) -> (f64, f64, bool) {
        let (a, b) = (self.edges[k], self.edges[k + 1]);
        let complete = b <= self.max_ts;
        (a, if complete { b } else { self.max_ts }, complete)
    }
}

/// One slice's results.
#[derive(Clone, Debug)]
pub struct Timeslice {
    /// Window bounds, wall-clock ns (AIPerf's `int()` of the float64 edges).
    pub start_ns: u64,
    pub end_ns: u64,
    /// False for the clipped last slice.
    pub is_complete: bool,
    pub summary: Summary,
}

/// Folds a phase's records (pass two) into one accumulator per slice and the phase's
/// sweep-line rows.
pub struct TimesliceAccumulator {
    header: EvidenceHeader,
    grid: SliceGrid,
    slos: Vec<Slo>,
    confidence_level: f64,
    slices: Vec<Option<Accumulator>>,
    /// The phase's sweep rows, and their chunk gaps in record order.
    sweep: CompactSweep,
    gaps: Vec<f64>,
}

impl TimesliceAccumulator {
    pub fn new(
        header: &EvidenceHeader,
        grid: SliceGrid,
        slos: Vec<Slo>,
        confidence_level: f64,
    ) -> Self {
        let n = grid.len();
        TimesliceAccumulator {
            header: header.clone(),
            grid,
            slos,
            confidence_level,
            slices: (0..n).map(|_| None).collect(),
            sweep: CompactSweep::default(),
            gaps: Vec::new(),
        }
    }

    pub fn push(&mut self, r: &Record) {
        let s = super::wall_f64(self.header.anchor_unix_ns, r.start_ns);
        let k = self.grid.slice_of(s);
        let acc = self.slices[k].get_or_insert_with(|| {
            Accumulator::new(&self.header).with_slos(self.slos.clone(), self.confidence_level)
        });
        acc.push(r);
        // The phase's curves, in record order: the slice keeps no sweep rows of its own.
        // A record that added gaps added them in the column's last batch.
        let last = acc
            .pooled
            .col(super::record::ICL_SLOT)
            .map(|c| c.last_batch())
            .unwrap_or_default();
        acc.sweep
            .move_last_with(&last, &mut self.sweep, &mut self.gaps);
    }

    /// Every non-empty slice, in time order.
    pub fn finish(self) -> Vec<Timeslice> {
        let anchor = self.header.anchor_unix_ns;
        let icl_aware = self.sweep.has_gaps();
        let curves = SweepCurves::build_compact(&self.sweep, &self.gaps, icl_aware);
        let mut out = Vec::new();
        for (k, acc) in self.slices.into_iter().enumerate() {
            let Some(acc) = acc else { continue };
            let (a, b, is_complete) = self.grid.window(k);
            let (start_ns, end_ns) = (a as u64, b as u64);
            let window = PhaseWindow {
                phase: inferbench_core::Phase::Profiling,
                start_ns: start_ns.saturating_sub(anchor),
                sent_end_ns: end_ns.saturating_sub(anchor),
                requests_end_ns: end_ns.saturating_sub(anchor),
                scheduled: 0,
                completed: 0,
                errors: 0,
                cancelled: false,
            };
            let mut summary = acc.finish(Some(window));
            summary
                .metrics
                .retain(|m| !PHASE_ONLY.contains(&m.tag.as_str()) && !is_sweepline_tag(&m.tag));
            if let Some(c) = &curves {
                summary.metrics.extend(c.metrics(a, b));
            }
            summary.metrics.sort_by_key(|m| super::order_of(&m.tag));
            out.push(Timeslice {
                start_ns,
                end_ns,
                is_complete,
                summary,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(min: f64, max: f64) -> SliceBounds {
        SliceBounds {
            anchor: 0,
            min_start: min,
            max_ts: max,
        }
    }

    #[test]
    fn grid_reaches_past_the_last_instant() {
        // Span 2.5 s, slices of 1 s: ⌊2.5⌋ + 1 = 3 slices, edges 10, 11, 12, 13 s.
        let g = bounds(10e9, 12.5e9).grid(1_000_000_000).unwrap();
        assert_eq!(g.edges, vec![10e9, 11e9, 12e9, 13e9]);
        assert_eq!(g.len(), 3);
        // An edge belongs to the slice it opens.
        assert_eq!(g.slice_of(10e9), 0);
        assert_eq!(g.slice_of(11e9 - 1.0), 0);
        assert_eq!(g.slice_of(11e9), 1);
        assert_eq!(g.slice_of(12.5e9), 2);
        // Full slices keep their edges; the last is clipped to 12.5 s and incomplete.
        assert_eq!(g.window(0), (10e9, 11e9, true));
        assert_eq!(g.window(2), (12e9, 12.5e9, false));
    }

    #[test]
    fn an_exact_multiple_still_gets_a_last_slice() {
        // Span exactly 2 s: ⌊2⌋ + 1 = 3 slices; the last starts at the latest instant.
        let g = bounds(0.0, 2e9).grid(1_000_000_000).unwrap();
        assert_eq!(g.len(), 3);
        assert_eq!(g.slice_of(2e9), 2);
        assert_eq!(g.window(1), (1e9, 2e9, true));
        assert_eq!(g.window(2), (2e9, 2e9, false));
    }

    #[test]
    fn no_records_or_zero_duration_gives_no_grid() {
        assert!(SliceBounds::new(0).grid(1).is_none());
        assert!(bounds(0.0, 1.0).grid(0).is_none());
    }
}
