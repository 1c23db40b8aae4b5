//! `inferbench gate --spec FILE RUN...`.

use inferbench_run::Failure;

use crate::cli::GateArgs;

pub fn run(a: &GateArgs) -> Result<u8, Failure> {
    let _ = a;
    Err(Failure::run("gate is not built yet"))
}
