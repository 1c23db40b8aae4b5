//! `inferbench bridge report LEDGER`.

use inferbench_run::Failure;

use crate::cli::BridgeArgs;

pub fn run(a: &BridgeArgs) -> Result<u8, Failure> {
    let _ = a;
    Err(Failure::run("bridge is not built yet"))
}
