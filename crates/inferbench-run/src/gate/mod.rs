//! `inferbench gate`: pass or fail runs against a written specification (reference
//! `ledger-gate.md` §4; user guide `docs/gate.md`).
//!
//! - [`spec`]: the specification as typed data; [`parse`]: TOML → [`spec::GateSpec`], every
//!   field checked, errors naming the file, line and field;
//! - [`evaluate()`]: the runs' observations, each rule family, the overall verdict;
//! - [`verdict`]: the verdict document (deterministic JSON); [`render`]: the console lines
//!   and the Markdown acceptance packet.

pub mod evaluate;
pub mod observe;
pub mod parse;
pub mod render;
pub mod rules;
pub mod spec;
pub mod verdict;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_headroom;

use std::path::PathBuf;

use crate::Failure;
pub use parse::{parse_file, parse_str};
pub use spec::GateSpec;
pub use verdict::{Outcome, Overall, Verdict};

/// What to judge.
#[derive(Clone, Debug, Default)]
pub struct GateInput {
    /// Candidate directories: a run, a `--num-profile-runs` root (its N runs), an import,
    /// or a ledger packet directory.
    pub candidate: Vec<PathBuf>,
    /// Baseline directories, for `compare = "baseline"` rules and the correctness reference.
    pub baseline: Vec<PathBuf>,
    /// Id to report per candidate / baseline run, in order after expansion, to override the
    /// default: `sha256:` of the run's evidence (a packet's recorded evidence digest, an
    /// import's files). The commands leave it empty so that ids do not depend on how a run
    /// was named.
    pub candidate_ids: Vec<String>,
    pub baseline_ids: Vec<String>,
    /// The fingerprint the spec's `epoch` resolves to (the CLI reads it from the ledger); a
    /// spec epoch that is itself a `sha256:` fingerprint needs none.
    pub epoch_fingerprint: Option<String>,
    /// Tokenizer for imported runs (as `metrics --tokenizer`).
    pub tokenizer: Option<String>,
}

/// Judges the candidate runs against `spec`. Bad input (a missing directory, a sweep root)
/// is a [`Failure::input`]; a missing metric is a rule outcome (`on_missing`), never an error.
pub fn evaluate(spec: &GateSpec, input: &GateInput) -> Result<Verdict, Failure> {
    evaluate::evaluate(spec, input)
}
