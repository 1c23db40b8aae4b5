//! `inferbench qualify`: the profile flags of the run every step repeats, and the ladder's.

use clap::{ArgAction, Args};

use super::ProfileArgs;

#[derive(Args, Debug)]
pub struct QualifyArgs {
    /// Worker counts to run, ascending (default: 1, 2, 4, … up to --workers-max, which
    /// defaults to the CPUs this process may use).
    #[arg(long = "workers-ladder", value_name = "N,N,...", value_delimiter = ',', action = ArgAction::Append)]
    pub workers_ladder: Vec<usize>,
    /// Runs per worker count, interleaved across the ladder (default 3).
    #[arg(long = "repeats", default_value_t = 3)]
    pub repeats: usize,
    /// τ, percent, declared before the runs: a step is flat when the server's output-token
    /// rate changes by less than this (and τ ≥ 2 × the run-to-run CV).
    #[arg(long = "tolerance-pct", default_value_t = 1.0)]
    pub tolerance_pct: f64,
    /// Qualify the larger worker count of the plateau pair (headroom), not the smaller.
    #[arg(long = "prefer-headroom")]
    pub prefer_headroom: bool,
    /// A TOML file of gate thresholds overriding the defaults (`[gates]` keys as in
    /// docs/qualify.md, e.g. `cpu_pressure_warn = 0.3`); printed with the verdict.
    #[arg(long = "thresholds", value_name = "FILE.toml")]
    pub thresholds: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub profile: ProfileArgs,
}
