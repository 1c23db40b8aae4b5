//! `inferbench crosswalk DIR` (being built).

use crate::Failure;
use crate::cli::CrosswalkArgs;

pub fn run(a: &CrosswalkArgs) -> Result<u8, Failure> {
    Err(Failure::input(format!(
        "crosswalk {}: not built yet",
        a.dir.display()
    )))
}
