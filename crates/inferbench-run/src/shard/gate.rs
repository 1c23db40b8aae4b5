//! A shard's start and its clock evidence, in the live run: the clock measured before the
//! start, `--start-at` turned into a monotonic deadline once, the late rule, the wait, and
//! the evidence (start lag, the clock again at the end) for the manifest.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use inferbench_client::Clock;
use inferbench_core::RunPlan;
use inferbench_core::evidence::PhaseWindow;
use inferbench_core::manifest::Manifest;
use inferbench_core::record::Phase;
use inferbench_core::shard::{ClockEvidence, ShardEvidence, ShardPlan, StartEvidence, start};

use super::Setup;
use super::clock::{WallClock, kernel_clock, measure};
use crate::{Failure, Prepared, exit};

/// The run's clock: the anchor's wall reading carries the hidden test offset, as every wall
/// reading of this process does.
pub fn run_clock(plan: &RunPlan) -> Clock {
    let c = Clock::start();
    match &plan.shard {
        Some(s) if s.test_clock_offset_ns != 0 => c.with_wall_offset_ns(s.test_clock_offset_ns),
        _ => c,
    }
}

/// How long a shard retries an unanswered time reference before it fails.
const REFERENCE_WAIT: Duration = Duration::from_secs(30);

/// A shard, measured and due to start.
pub struct Gate {
    setup: Arc<Setup>,
    plan: ShardPlan,
    wall: WallClock,
    clock_start: ClockEvidence,
    /// θ used for T0 (0 without a reference).
    offset_ns: i64,
    deadline: Option<Instant>,
}

/// The clock now: the kernel's estimate and, with a reference, the exchange.
fn clock_evidence(plan: &ShardPlan, wall: &WallClock) -> ClockEvidence {
    let (reference, reference_error) = match &plan.time_reference {
        Some(r) => match measure(r, plan.clock_samples.max(1), wall) {
            Ok(e) => (Some(e), None),
            Err(e) => (None, Some(e)),
        },
        None => (None, None),
    };
    ClockEvidence {
        taken_at_unix_ns: wall.now_ns(),
        kernel: kernel_clock(),
        reference,
        reference_error,
    }
}

/// Measures the clock and turns `--start-at` into a deadline. A shard already late is
/// refused here (exit 6), its manifest marked `late` so that `merge` names it; a time
/// reference that does not answer is a run failure (no offset, no merge bound).
pub fn open(
    p: &Prepared,
    run_dir: &Path,
    manifest: &mut Manifest,
) -> Result<Option<Gate>, Failure> {
    let (Some(setup), Some(plan)) = (&p.shard, &p.plan.shard) else {
        return Ok(None);
    };
    let wall = WallClock {
        offset_ns: plan.test_clock_offset_ns,
    };
    // The reference may come up after this shard (pods start in any order): retry a while.
    let give_up = Instant::now() + REFERENCE_WAIT;
    let mut clock_start = clock_evidence(plan, &wall);
    while clock_start.reference_error.is_some() && Instant::now() < give_up {
        std::thread::sleep(Duration::from_secs(1));
        clock_start = clock_evidence(plan, &wall);
    }
    if let Some(e) = &clock_start.reference_error {
        return Err(Failure::run(e.clone()));
    }
    let offset_ns = clock_start.reference.as_ref().map_or(0, |r| r.offset_ns);
    let mut gate = Gate {
        setup: setup.clone(),
        plan: plan.clone(),
        wall,
        clock_start,
        offset_ns,
        deadline: None,
    };
    if let Some(t0) = plan.start_at_unix_ns {
        let wait = start::wait_ns(t0, wall.now_ns(), offset_ns);
        let lag = start::lag_ns(wall.now_ns(), offset_ns, t0);
        if start::is_late(lag, plan.start_tolerance_ns) {
            manifest.shard = Some(gate.evidence(Some(lag), None, true));
            inferbench_artifacts::write_manifest(run_dir, manifest)?;
            return Err(late_failure(lag, plan.start_tolerance_ns));
        }
        gate.deadline =
            Some(Instant::now() + Duration::from_nanos(wait.clamp(0, u64::MAX as i128) as u64));
    }
    Ok(Some(gate))
}

fn late_failure(lag_ns: i64, tolerance_ns: u64) -> Failure {
    Failure {
        code: exit::LATE_START,
        message: format!(
            "--start-at: this shard is {:.3} ms late (tolerance {:.3} ms): it runs nothing, and `inferbench merge` refuses its set",
            lag_ns as f64 / 1e6,
            tolerance_ns as f64 / 1e6
        ),
    }
}

impl Gate {
    /// Sleeps until T0 (on the monotonic clock); returns at once without `--start-at`.
    pub async fn wait(&self) {
        if let Some(d) = self.deadline {
            tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await;
        }
    }

    fn evidence(
        &self,
        lag: Option<i64>,
        clock_end: Option<ClockEvidence>,
        late: bool,
    ) -> ShardEvidence {
        let s = &self.setup;
        ShardEvidence {
            index: s.index,
            count: s.count,
            schedule_sha256: s.schedule_sha256.clone(),
            total_sessions: s.total_sessions,
            sessions: s.sessions,
            requests: s.requests,
            concurrency: s.concurrency,
            start: self
                .plan
                .start_at_unix_ns
                .zip(lag)
                .map(|(t0, lag)| StartEvidence {
                    start_at_unix_ns: t0,
                    tolerance_ns: self.plan.start_tolerance_ns,
                    reference_clock: self.clock_start.reference.is_some(),
                    start_lag_ns: lag,
                }),
            clock_start: self.clock_start.clone(),
            clock_end,
            late,
        }
    }

    /// After the engine: the clock measured again, the start lag from the profiling phase's
    /// start, into the manifest. A start that turned out late is the run's failure (exit 6).
    pub fn finish(
        self,
        manifest: &mut Manifest,
        windows: &[PhaseWindow],
        clock: Clock,
    ) -> Option<Failure> {
        let clock_end = clock_evidence(&self.plan, &self.wall);
        let lag = self.plan.start_at_unix_ns.and_then(|t0| {
            let w = windows.iter().find(|w| w.phase == Phase::Profiling)?;
            Some(start::lag_ns(
                clock.anchor_unix_ns() + w.start_ns,
                self.offset_ns,
                t0,
            ))
        });
        let late = lag.is_some_and(|l| start::is_late(l, self.plan.start_tolerance_ns));
        manifest.shard = Some(self.evidence(lag, Some(clock_end), late));
        late.then(|| late_failure(lag.unwrap_or(0), self.plan.start_tolerance_ns))
    }
}
