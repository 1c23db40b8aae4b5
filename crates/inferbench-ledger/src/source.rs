//! What the ledger takes from a run directory: the loaded run, its identity (with the
//! user's `--declare`s), its grade, and its summary under its native definition set.

use std::path::Path;

use inferbench_core::grade::Grade;
use inferbench_core::identity::Identity;
use inferbench_core::summary::Summary;
use inferbench_run::Failure;
use inferbench_run::grade;
use inferbench_run::offline::Loaded;

/// One run, ready to become a packet.
pub struct Source {
    pub loaded: Loaded,
    pub identity: Identity,
    pub grade: Grade,
    pub summary: Summary,
}

/// The route recorded on a declaration made here.
pub const DECLARE_ROUTE: &str = "--declare";

/// `KEY=VALUE`; the value is a string, as `profile --declare` takes it.
pub fn parse_declare(s: &str) -> Result<(String, serde_json::Value), Failure> {
    let Some((k, v)) = s.split_once('=') else {
        return Err(Failure::input(format!("--declare {s}: expected KEY=VALUE")));
    };
    if k.is_empty() {
        return Err(Failure::input(format!("--declare {s}: the key is empty")));
    }
    Ok((
        k.trim().to_string(),
        serde_json::Value::String(v.to_string()),
    ))
}

/// Loads `dir` (ours or an import), applies the declarations and grades it.
pub fn load(dir: &Path, declares: &[String], tokenizer: Option<&str>) -> Result<Source, Failure> {
    let mut loaded = inferbench_run::offline::load_streamed(dir, tokenizer)?;
    let mut identity = grade::identity_of(&loaded);
    for d in declares {
        let (k, v) = parse_declare(d)?;
        identity
            .declare(&k, v, DECLARE_ROUTE)
            .map_err(|e| Failure::input(e.to_string()))?;
    }
    identity.finish("not recorded by the run or the artifact");
    // The grade reads the identity the run carries: the declarations join it first.
    if let Some(m) = loaded.manifest.as_mut() {
        m.identity = Some(identity.clone());
    }
    if let Some(i) = loaded.imported.as_mut() {
        i.identity = identity.clone();
    }
    let grade = grade::grade(&loaded, None)?;
    let set = loaded.native_set().to_string();
    // Our run's summary folds its evidence a record at a time; an import's is scored whole.
    let summary = match (&loaded.manifest, loaded.streamed) {
        (Some(m), true) => {
            inferbench_run::offline::rescore(&loaded.run, m)?
                .0
                .profiling
        }
        _ => inferbench_run::offline::score_set(&loaded, &set, None)?.summary,
    };
    Ok(Source {
        loaded,
        identity,
        grade,
        summary,
    })
}
