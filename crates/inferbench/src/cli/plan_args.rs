//! `inferbench plan`'s flags.

use clap::{Args, Subcommand};

#[derive(Args, Debug)]
pub struct PlanArgs {
    #[command(subcommand)]
    pub command: PlanCommand,
}

#[derive(Subcommand, Debug)]
pub enum PlanCommand {
    /// Run every profile of a traffic-matrix plan, record each run in the ledger and gate
    /// each profile separately.
    Run {
        /// The plan (TOML; docs/plan.md).
        plan: std::path::PathBuf,
    },
    /// Validate a plan without running it.
    Check { plan: std::path::PathBuf },
}
