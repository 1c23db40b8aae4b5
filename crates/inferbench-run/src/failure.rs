//! How a command ends: one exit-code table for every entry point, and the one-line failure
//! the binary prints.

/// Every exit code inferbench uses, with what it means (the README's table is this one).
pub mod exit {
    /// Done: every run finished (and, for `metrics`, every value reproduced).
    pub const OK: u8 = 0;
    /// The run could not be done or did not hold: server unreachable, I/O error, every request
    /// failed, `--failed-request-threshold` reached, a recomputed value differs.
    pub const FAILED: u8 = 1;
    /// Bad input: a flag, a file, a dataset, a tokenizer. Nothing was sent.
    pub const INPUT: u8 = 2;
    /// `--fail-on-missed-schedule`: the client did not keep its schedule.
    pub const MISSED_SCHEDULE: u8 = 3;
    /// `gate`: a precondition rule (serialization, workload, load delivery, client headroom)
    /// did not pass: the run is not valid evidence, no performance verdict is issued.
    pub const GATE_INVALID: u8 = 4;
    /// `gate`: no rule failed, but at least one could not be decided (an interval straddles
    /// the limit, too few samples, no data).
    pub const GATE_INCONCLUSIVE: u8 = 5;
    /// A shard (`--shard-count`) reached `--start-at` later than `--start-tolerance`: it ran
    /// nothing, and `merge` refuses its set (docs/scale-out.md).
    pub const LATE_START: u8 = 6;
    /// Stopped by Ctrl-C or SIGTERM; the artifacts are written and marked partial.
    pub const INTERRUPTED: u8 = 130;

    /// `(code, meaning)` for every code, in order: what `--help` and the README list.
    pub const TABLE: &[(u8, &str)] = &[
        (OK, "success"),
        (
            FAILED,
            "the run failed: server unreachable, I/O error, every request failed, the failed-request threshold reached, or a recomputed value differs; gate: FAIL; qualify: CLIENT_LIMITED",
        ),
        (
            INPUT,
            "bad input: a flag, file, dataset or tokenizer (nothing was sent)",
        ),
        (
            MISSED_SCHEDULE,
            "--fail-on-missed-schedule: the client did not keep its schedule",
        ),
        (
            GATE_INVALID,
            "gate: INVALID, a precondition (serialization, workload, load delivery, client headroom) did not pass",
        ),
        (
            GATE_INCONCLUSIVE,
            "gate: INCONCLUSIVE, no rule failed but one could not be decided (too few samples, no data, an interval across the limit); qualify: INCONCLUSIVE",
        ),
        (
            LATE_START,
            "a shard reached --start-at later than --start-tolerance: it ran nothing (merge refuses the set)",
        ),
        (
            INTERRUPTED,
            "interrupted (Ctrl-C, SIGTERM): artifacts written and marked partial",
        ),
    ];
}

/// A failure to report: one line, and the exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    /// Bad input (flags, files): exit 2.
    pub fn input(message: impl Into<String>) -> Self {
        Failure {
            code: exit::INPUT,
            message: message.into(),
        }
    }

    /// The run could not be done (server unreachable, I/O): exit 1.
    pub fn run(message: impl Into<String>) -> Self {
        Failure {
            code: exit::FAILED,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// An artifact error is a run failure (the message names the file).
impl From<inferbench_artifacts::ArtifactError> for Failure {
    fn from(e: inferbench_artifacts::ArtifactError) -> Self {
        Failure::run(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_each_code_once_in_order() {
        let codes: Vec<u8> = exit::TABLE.iter().map(|(c, _)| *c).collect();
        assert_eq!(codes, vec![0, 1, 2, 3, 4, 5, 6, 130]);
    }

    #[test]
    fn input_and_run_failures_have_their_codes() {
        assert_eq!(Failure::input("x").code, 2);
        assert_eq!(Failure::run("x").code, 1);
    }

    #[test]
    fn the_readme_lists_every_code_and_no_other() {
        let readme = include_str!("../../../README.md");
        let section = readme
            .split("## Exit codes")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("README has an Exit codes section");
        let listed: Vec<u8> = section
            .lines()
            .filter_map(|l| l.strip_prefix("| ")?.split(" |").next()?.parse().ok())
            .collect();
        let codes: Vec<u8> = exit::TABLE.iter().map(|(c, _)| *c).collect();
        assert_eq!(listed, codes);
    }
}
