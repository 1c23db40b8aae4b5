//! `inferbench bridge`'s flags.

use clap::{Args, Subcommand};

#[derive(Args, Debug)]
pub struct BridgeArgs {
    #[command(subcommand)]
    pub command: BridgeCommand,
}

#[derive(Subcommand, Debug)]
pub enum BridgeCommand {
    /// The migration packet: what was preserved, which mappings were validated, where
    /// comparison stays conditional, what needed a new epoch.
    Report {
        /// The ledger directory.
        ledger: std::path::PathBuf,
    },
}
