//! What the ledger takes from a run directory: the loaded run, its identity (with the
//! user's `--declare`s), its grade, and its summary under its native definition set.

use std::path::Path;

use inferbench_core::grade::Grade;
use inferbench_core::identity::Identity;
use inferbench_core::summary::Summary;
use inferbench_run::Failure;
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

/// `KEY=VALUE`: the value is JSON when it parses as JSON (`8`, `true`, `{"gpu":"H100"}`),
/// else the text itself.
pub fn parse_declare(s: &str) -> Result<(String, serde_json::Value), Failure> {
    let Some((k, v)) = s.split_once('=') else {
        return Err(Failure::input(format!("--declare {s}: expected KEY=VALUE")));
    };
    if k.is_empty() {
        return Err(Failure::input(format!("--declare {s}: the key is empty")));
    }
    let value = serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::String(v.into()));
    Ok((k.to_string(), value))
}

/// Loads `dir` (ours or an import), applies the declarations and grades it.
pub fn load(dir: &Path, declares: &[String], tokenizer: Option<&str>) -> Result<Source, Failure> {
    let mut loaded = inferbench_run::offline::load(dir, tokenizer)?;
    let mut identity = shim::identity_of(&loaded);
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
    let grade = shim::grade(&loaded, &identity, None)?;
    let set = loaded.native_set().to_string();
    let summary = inferbench_run::offline::score_set(&loaded, &set, None)?.summary;
    Ok(Source {
        loaded,
        identity,
        grade,
        summary,
    })
}

/// Stands in for `inferbench_run::grade::{identity_of, grade}` (written in parallel on
/// another branch) until they are merged: the same signatures, the simplest rules.
mod shim {
    use inferbench_core::grade::{Grade, MetricGrade, Tier, pin_downgrade};
    use inferbench_core::identity::{CATALOGUE, Identity, PinClass, Provenance};
    use inferbench_run::Failure;
    use inferbench_run::offline::Loaded;
    use serde_json::json;

    pub fn identity_of(loaded: &Loaded) -> Identity {
        let mut id = loaded
            .manifest
            .as_ref()
            .and_then(|m| m.identity.clone())
            .unwrap_or_default();
        let set = loaded.native_set().to_string();
        match &loaded.imported {
            Some(i) => {
                let file = "profile_export_genai_perf.json".to_string();
                let rec = |key: &str| Provenance::Recovered {
                    file: file.clone(),
                    key: key.into(),
                };
                id.set(
                    "harness",
                    json!(format!("{} {}", i.tool.as_str(), i.version)),
                    rec("(file shapes)"),
                );
                id.set("definition_set", json!(set), rec("(file shapes)"));
            }
            None => {
                if id.get("harness").is_none() {
                    id.set(
                        "harness",
                        json!(format!(
                            "{} {}",
                            inferbench_core::TOOL_NAME,
                            inferbench_core::TOOL_VERSION
                        )),
                        Provenance::Measured,
                    );
                }
                if id.get("definition_set").is_none() {
                    id.set("definition_set", json!(set), Provenance::Measured);
                }
                if let Some(m) = &loaded.manifest {
                    if id.get("random_seed").is_none()
                        && let Some(s) = m.random_seed
                    {
                        id.set("random_seed", json!(s), Provenance::Measured);
                    }
                    if id.get("arrival_policy").is_none() {
                        id.set("arrival_policy", json!(m.arrival), Provenance::Measured);
                    }
                }
            }
        }
        id
    }

    pub fn grade(
        loaded: &Loaded,
        identity: &Identity,
        set: Option<&str>,
    ) -> Result<Grade, Failure> {
        let set = set.unwrap_or(loaded.native_set()).to_string();
        let summary = inferbench_run::offline::score_set(loaded, &set, None)?.summary;
        let metrics = summary
            .metrics
            .iter()
            .map(|m| {
                let downs = CATALOGUE
                    .iter()
                    .filter(|s| s.class == PinClass::Contract)
                    .filter_map(|s| {
                        pin_downgrade(
                            s.name,
                            identity.get(s.name),
                            Tier::Insufficient,
                            "a contract pin",
                        )
                    })
                    .collect();
                MetricGrade::new(&m.tag, downs)
            })
            .collect();
        Ok(Grade::new(&set, metrics, Vec::new()))
    }
}
