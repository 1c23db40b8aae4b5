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
        /// Write the report as JSON (docs/schemas/bridge-report.schema.json).
        #[arg(long, value_name = "FILE")]
        json: Option<std::path::PathBuf>,
        /// Write the report as Markdown (without --json or --markdown it goes to stdout).
        #[arg(long, value_name = "FILE")]
        markdown: Option<std::path::PathBuf>,
        /// Append a `bridge.record` entry with the report's digest and counts.
        #[arg(long)]
        record: bool,
        /// Who writes the `bridge.record` entry (default `$USER`, else `unknown`).
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
}
