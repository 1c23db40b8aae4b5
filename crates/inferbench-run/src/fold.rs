//! The fold: every record of a run, one at a time, into the metric accumulators (profiling,
//! warmup), the schedule evidence and the phase windows. A live run and a replay of its
//! evidence file go through this same code, so their summaries agree by construction.

use inferbench_core::evidence::DerivedWindow;
use inferbench_core::summary::RecordMetric;
use inferbench_core::{EvidenceHeader, Phase, PhaseWindow, Record, RunPlan, Summary};
use inferbench_metrics::Accumulator;
use inferbench_metrics::aiperf::Slo;
use inferbench_metrics::schedule::{ScheduleAccumulator, ScheduleRule, ScheduleVerdict};

use crate::Failure;

/// What a run's records fold into.
pub struct Fold {
    profiling: Accumulator,
    warmup: Accumulator,
    schedule: ScheduleAccumulator,
    phases: Vec<PhaseWindow>,
    derived_profiling: DerivedWindow,
    derived_warmup: DerivedWindow,
}

/// A run's results under `aiperf-0.13`, with inferbench's schedule evidence.
#[derive(Clone, Debug)]
pub struct Scores {
    /// Profiling-phase summary, schedule metrics included.
    pub profiling: Summary,
    /// Warmup-phase summary, when the run had warmup records.
    pub warmup: Option<Summary>,
    pub schedule: Option<ScheduleVerdict>,
    /// The profiling window (the throughput denominator).
    pub profiling_window: Option<PhaseWindow>,
    /// The warmup window, when the run had one.
    pub warmup_window: Option<PhaseWindow>,
}

impl Fold {
    pub fn new(header: &EvidenceHeader, slos: &[Slo], confidence: f64) -> Result<Fold, Failure> {
        let set = inferbench_metrics::aiperf::NAME;
        let acc = || {
            Accumulator::new(set, header)
                .map(|a| a.with_slos(slos.to_vec(), confidence))
                .map_err(|e| Failure::run(e.to_string()))
        };
        Ok(Fold {
            profiling: acc()?,
            warmup: acc()?,
            schedule: ScheduleAccumulator::default(),
            phases: Vec::new(),
            derived_profiling: DerivedWindow::default(),
            derived_warmup: DerivedWindow::default(),
        })
    }

    /// Folds one record in; a profiling record's per-record metrics come back (for
    /// `profile_export.jsonl`), a warmup record gives None.
    pub fn push(&mut self, r: &Record) -> Option<Vec<RecordMetric>> {
        if r.phase() == Phase::Warmup {
            self.derived_warmup.push(r);
            self.warmup.push(r);
            return None;
        }
        self.derived_profiling.push(r);
        self.schedule.push(r);
        Some(self.profiling.push(r))
    }

    /// A phase's window, as the engine reported it.
    pub fn phase(&mut self, w: PhaseWindow) {
        self.phases.push(w);
    }

    /// The window as reported, or derived from the records when the run was killed first.
    pub fn window(&self, phase: Phase) -> Option<PhaseWindow> {
        if let Some(w) = self.phases.iter().find(|w| w.phase == phase) {
            return Some(*w);
        }
        match phase {
            Phase::Warmup => self.derived_warmup.window(phase),
            Phase::Profiling => self.derived_profiling.window(phase),
        }
    }

    pub fn finish(self, plan: &RunPlan) -> Scores {
        let profiling_window = self.window(Phase::Profiling);
        let warmup_window = self.window(Phase::Warmup);
        let mut profiling = self.profiling.finish(profiling_window);
        let rule = plan.load.schedule_rule;
        let (metrics, schedule) = self.schedule.finish(
            plan.load.request_rate.as_ref().map(|r| r.rate),
            ScheduleRule {
                max_lag_p99_ms: rule.max_lag_p99_ms,
                min_achieved_pct: rule.min_achieved_pct,
            },
        );
        profiling.metrics.extend(metrics);
        let warmup = (self.derived_warmup.records() > 0).then(|| self.warmup.finish(warmup_window));
        Scores {
            profiling,
            warmup,
            schedule,
            profiling_window,
            warmup_window,
        }
    }
}
