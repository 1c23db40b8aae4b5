//! `inferbench plan run|check PLAN.toml`.

use inferbench_run::Failure;

use crate::cli::PlanArgs;

pub fn run(a: &PlanArgs) -> Result<u8, Failure> {
    let _ = a;
    Err(Failure::run("plan is not built yet"))
}
