//! `inferbench grade DIR [--definitions SET] [--json FILE]`: every metric's tier with the
//! field behind each downgrade, then the identity's missing pins and flags. Grading is
//! information: the exit code is 0 whatever the tiers.

use inferbench_run::Failure;
use inferbench_run::grade::{grade, identity_of, render};
use inferbench_run::offline::load_streamed;

use crate::cli::GradeArgs;

pub fn run(a: &GradeArgs) -> Result<u8, Failure> {
    let loaded = load_streamed(&a.dir, a.tokenizer.as_deref())?;
    for n in &loaded.notes {
        eprintln!("inferbench: {n}");
    }
    let g = grade(&loaded, a.definitions.as_deref())?;
    print!("{}", render(&g, &identity_of(&loaded)));
    if let Some(path) = &a.json {
        let bytes = serde_json::to_vec_pretty(&g).map_err(|e| Failure::run(e.to_string()))?;
        std::fs::write(path, bytes)
            .map_err(|e| Failure::run(format!("--json {}: cannot write: {e}", path.display())))?;
        eprintln!("inferbench: wrote {}", path.display());
    }
    Ok(0)
}
